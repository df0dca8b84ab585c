//! Queries on the finished index: lookup by path or name, suggestions, search, explain
//! and routing.

use super::*;

impl Index {
    /// One skill by skill path (also accepted with a trailing `/`, `.md` or `/SKILL.md`), else
    /// by unique name (case-insensitive), else `NotFound` with suggestions.
    pub fn get(&self, path_or_name: &str) -> Result<SkillInfo, Error> {
        self.ready()?;
        let q = path_or_name.trim();
        if q.is_empty() {
            return Err(Error::InvalidArgument(
                "give a skill path or name (the argument is empty)".into(),
            ));
        }
        let variants = [
            Some(q),
            q.strip_suffix('/'),
            q.strip_suffix("/SKILL.md"),
            q.strip_suffix(".md"),
        ];
        if let Some(i) = variants
            .into_iter()
            .flatten()
            .find_map(|p| self.position(p))
        {
            return Ok(self.info(i));
        }
        // The path the Skills extension lists it under (`api` for `api/_index`).
        if let Some(i) = [q, q.trim_end_matches('/')]
            .into_iter()
            .chain(q.strip_suffix("/SKILL.md"))
            .find_map(|p| self.extension_map().skill_at(p))
        {
            return Ok(self.info(i));
        }
        let lower = q.to_lowercase();
        let named: Vec<usize> = (0..self.docs.len())
            .filter(|&i| self.docs[i].name.to_lowercase() == lower)
            .collect();
        match named.as_slice() {
            [i] => Ok(self.info(*i)),
            [] => Err(self.not_found(q)),
            many => Err(Error::NotFound(format!(
                "`{}` is the name of several skills: {}; ask by skill path",
                crate::paths::echo(q),
                many.iter()
                    .map(|&i| self.docs[i].skill_path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Closest skill paths to a mistyped path or name, best first (deterministic). Each skill
    /// is compared (case-insensitively) by its path, name and last path segment, and ranked by
    /// its best comparison: equal; then within a small edit distance (at most a third of the
    /// query's length, at least 2); then containing the query; then contained in the query
    /// (3+ characters both); ties by closeness, then skill path.
    pub fn suggest(&self, path_or_name: &str, limit: u32) -> Vec<String> {
        // Edit distances cost the product of the lengths: no suggestions for absurd input.
        if path_or_name.len() > 1024 {
            return Vec::new();
        }
        let q = path_or_name.trim().trim_end_matches('/').to_lowercase();
        if q.is_empty() || limit == 0 {
            return Vec::new();
        }
        let qlen = q.chars().count();
        let max_distance = (qlen / 3).max(2);
        let mut ranked: Vec<(u8, usize, &str)> = Vec::new();
        for d in &self.docs {
            let path = d.skill_path.to_lowercase();
            let name = d.name.to_lowercase();
            let last = paths::file_name(&path).to_owned();
            let best = [path.as_str(), name.as_str(), last.as_str()]
                .into_iter()
                .filter_map(|c| {
                    let clen = c.chars().count();
                    if c == q {
                        return Some((0, 0));
                    }
                    let dist = levenshtein(&q, c);
                    if dist <= max_distance {
                        Some((1, dist))
                    } else if qlen >= 3 && c.contains(q.as_str()) {
                        Some((2, clen - qlen))
                    } else if clen >= 3 && q.contains(c) {
                        Some((3, qlen - clen))
                    } else {
                        None
                    }
                })
                .min();
            if let Some((class, closeness)) = best {
                ranked.push((class, closeness, &d.skill_path));
            }
        }
        ranked.sort();
        ranked
            .into_iter()
            .take(limit as usize)
            .map(|(_, _, p)| p.to_owned())
            .collect()
    }

    /// Ranked results, best first, with the configured algorithm (not filtered by
    /// `min_score`: that is `route`'s job).
    pub fn search(&self, query: &str, limit: u32) -> Result<Vec<SearchHit>, Error> {
        self.search_with(query, limit, true)
    }

    /// [`Index::search`] without the words each hit matched (`matched` is empty): a list of
    /// results that does not show them (`search_skills`, `search --batch`) is spared finding
    /// them, a seventh of a search through the component.
    pub fn search_brief(&self, query: &str, limit: u32) -> Result<Vec<SearchHit>, Error> {
        self.search_with(query, limit, false)
    }

    /// The search behind [`Index::search`]: skills by their number (`docs` order), best first,
    /// with the configured algorithm.
    pub(super) fn scored(
        &self,
        query: &str,
        limit: u32,
        words: bool,
    ) -> Result<Vec<rank::Scored>, Error> {
        self.ready()?;
        check_query(query)?;
        let limit = (limit as usize).min(self.docs.len());
        let mut scored = match self.config.algorithm {
            Algorithm::Ranked => self
                .search_index
                .as_ref()
                .map(|s| s.search_with(query, limit, words))
                .unwrap_or_default(),
            Algorithm::Keywords => keyword::search(&self.docs, query, limit),
        };
        if !words {
            // (the keyword algorithm finds them as it matches)
            scored.iter_mut().for_each(|s| s.matched.clear());
        }
        Ok(scored)
    }

    fn search_with(&self, query: &str, limit: u32, words: bool) -> Result<Vec<SearchHit>, Error> {
        let scored = self.scored(query, limit, words)?;
        Ok(scored
            .into_iter()
            .filter(|s| s.doc < self.docs.len())
            .map(|s| self.hit(s))
            .collect())
    }

    /// The hit of a scored skill.
    pub(super) fn hit(&self, s: rank::Scored) -> SearchHit {
        let d = &self.docs[s.doc];
        SearchHit {
            skill_path: d.skill_path.clone(),
            name: d.name.clone(),
            description: d.description.clone(),
            score: s.score,
            matched: s.matched,
            version: self.metas[s.doc].version.clone(),
        }
    }

    /// Per-field, per-term account of one skill's score for a query.
    pub fn explain(&self, query: &str, skill_path: &str) -> Result<Explanation, Error> {
        let i = self.find(skill_path)?;
        check_query(query)?;
        match self.config.algorithm {
            Algorithm::Ranked => {
                let mut e = self
                    .search_index
                    .as_ref()
                    .map(|s| s.explain(query, i))
                    .ok_or(Error::NotReady)?;
                e.skill_path = skill_path.to_owned();
                Ok(e)
            }
            Algorithm::Keywords => {
                let d = &self.docs[i];
                let hit = keyword::search(std::slice::from_ref(d), query, 1).pop();
                let (score, matched) = hit.map_or((0.0, Vec::new()), |h| (h.score, h.matched));
                let bonus = f64::from(d.priority) * 0.001;
                let per = if matched.is_empty() {
                    0.0
                } else {
                    (score - bonus) / matched.len() as f64
                };
                let terms = matched
                    .iter()
                    .map(|m| ExplainTerm {
                        field: "keywords".into(),
                        term: m.clone(),
                        contribution: per,
                    })
                    .collect();
                let mut notes = vec![format!(
                    "keyword matching over {}",
                    if d.keywords.is_empty() {
                        "keywords derived from the name and description (the skill declares none)"
                    } else {
                        "the skill's keywords"
                    }
                )];
                if score > 0.0 && d.priority != 0 {
                    notes.push(format!("priority {} adds {bonus}", d.priority));
                }
                Ok(Explanation {
                    skill_path: skill_path.to_owned(),
                    score,
                    terms,
                    notes,
                })
            }
        }
    }

    /// Route a free-text request: search, then decide.
    pub fn route(&self, context: &str) -> Result<RouteOutcome, Error> {
        let hits = self.route_hits(context, true)?;
        Ok(route::decide(&self.config, hits))
    }

    /// The hits routing decides on: the best `ROUTE_CANDIDATES` (or `max_results`, if more),
    /// with the words each matched when `words` (the same hits, order and scores without).
    pub(super) fn route_hits(&self, context: &str, words: bool) -> Result<Vec<SearchHit>, Error> {
        Ok(self
            .route_scored(context, words)?
            .into_iter()
            .map(|s| self.hit(s))
            .collect())
    }

    /// [`Index::route_hits`] as skill numbers and scores.
    pub(super) fn route_scored(
        &self,
        context: &str,
        words: bool,
    ) -> Result<Vec<rank::Scored>, Error> {
        let limit = ROUTE_CANDIDATES.max(self.config.max_results as usize) as u32;
        let mut scored = self.scored(context, limit, words)?;
        scored.retain(|s| s.doc < self.docs.len());
        Ok(scored)
    }
}

/// Levenshtein distance over characters.
pub(super) fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Longest query (or routing context) read, in bytes: a few sentences fit many times over.
pub const MAX_QUERY_BYTES: usize = 8 * 1024;
/// Most words (whitespace-separated) in a query or routing context.
pub const MAX_QUERY_WORDS: usize = 512;

/// Refuse an empty query, or one longer than [`MAX_QUERY_BYTES`] or [`MAX_QUERY_WORDS`], before
/// any work (the message gives sizes, never the query back).
pub fn check_query(query: &str) -> Result<(), Error> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(Error::InvalidArgument(format!(
            "the query is {} bytes long; at most {MAX_QUERY_BYTES} bytes and {MAX_QUERY_WORDS} words are allowed: give a sentence or two about the task",
            query.len()
        )));
    }
    let words = query.split_whitespace().take(MAX_QUERY_WORDS + 1).count();
    if words == 0 {
        return Err(Error::InvalidArgument("the query is empty".into()));
    }
    if words > MAX_QUERY_WORDS {
        return Err(Error::InvalidArgument(format!(
            "the query has more than {MAX_QUERY_WORDS} words; at most {MAX_QUERY_WORDS} words and {MAX_QUERY_BYTES} bytes are allowed: give a sentence or two about the task"
        )));
    }
    Ok(())
}
