//! Per-field, per-term explanation of one skill's score.
//!
//! The score explained is the scorer's own: [`raw_scores`], [`PairScorer`] and [`finalise`],
//! run over [`OneDoc`], the index seen through the one skill explained (the collection's
//! statistics unchanged, only that skill's postings), so the arithmetic is a search's and the
//! cost a few lookups. What is added here is the account of it: which alternative of each
//! request term the skill matched, and how its share splits across the fields.

use super::*;

/// The index seen through one of its documents, numbered 0: `N`, document frequencies and the
/// vocabulary are the whole index's; the postings are that document's only.
struct OneDoc<'a> {
    index: &'a SearchIndex,
    doc: usize,
}

impl Statistics for OneDoc<'_> {
    fn params(&self) -> &Params {
        &self.index.params
    }

    fn n_docs(&self) -> usize {
        self.index.n_docs
    }

    fn doc_bound(&self) -> usize {
        1
    }

    fn term_bound(&self) -> usize {
        Statistics::term_bound(self.index)
    }

    fn term(&self, t: u32) -> &str {
        self.index.term(t)
    }

    fn term_id(&self, text: &str) -> Option<u32> {
        self.index.term_id(text)
    }

    fn df(&self, t: u32) -> usize {
        Statistics::df(self.index, t)
    }

    fn each_extension(&self, text: &str, f: impl FnMut(u32)) {
        self.index.each_extension(text, f);
    }

    fn lookup(&self, text: &str, prefix_min: Option<usize>, f: impl FnMut(u32)) -> Option<u32> {
        self.index.lookup(text, prefix_min, f)
    }

    fn each_typo_candidate(&self, lens: std::ops::RangeInclusive<usize>, f: impl FnMut(u32)) {
        self.index.each_typo_candidate(lens, f);
    }

    fn each_typo_near(
        &self,
        text: &str,
        lens: std::ops::RangeInclusive<usize>,
        f: impl FnMut(u32),
    ) {
        self.index.each_typo_near(text, lens, f);
    }

    fn each_posting(&self, t: u32, mut f: impl FnMut(usize, bool, f32)) {
        if let Some(i) = self.index.find_posting(t, self.doc) {
            f(
                0,
                self.index.docs.get(i).1,
                self.index.sat_of(t, i, self.doc),
            );
        }
    }

    fn has_term(&self, t: u32, _doc: usize) -> bool {
        self.index.has_term(t, self.doc)
    }

    fn seq(&self, _doc: usize) -> &[u32] {
        Statistics::seq(self.index, self.doc)
    }

    fn priority(&self, _doc: usize) -> i32 {
        self.index.priority[self.doc]
    }

    fn path(&self, _doc: usize) -> &str {
        &self.index.paths[self.doc]
    }
}

/// A request prepared once to explain several skills' scores for it
/// ([`SearchIndex::explain_terms`]).
pub struct Prepared(Query);

/// What [`SearchIndex::explain`] reports before its notes.
struct Account {
    score: f64,
    raw: f64,
    pair_raw: f64,
    coverage: f64,
    evidence: f64,
    terms: Vec<ExplainTerm>,
}

impl SearchIndex {
    /// `query` prepared for [`SearchIndex::explain_terms`].
    pub fn prepare_request(&self, query: &str) -> Prepared {
        Prepared(prepare(self, query))
    }

    /// The lines of [`SearchIndex::explain`] (without its notes) of `doc` for a prepared
    /// request: the same, without preparing the request again for each skill explained.
    pub fn explain_terms(&self, request: &Prepared, doc: usize) -> Vec<ExplainTerm> {
        if doc >= self.n_docs {
            return Vec::new();
        }
        self.account(&request.0, doc).terms
    }

    /// Per-field, per-term contributions of `doc` to `query`.
    ///
    /// Each line is one request term's share of the final score in one field: its BM25F
    /// contribution split across fields in proportion to their weighted frequencies, divided by
    /// the ceiling and multiplied by the evidence factor. The lines sum to `score`. A term
    /// matched through an expansion reads `word ~term (prefix|typo)`; a pair of request words
    /// found close together reads `word word (pair)`, in the field where they were found.
    pub fn explain(&self, query: &str, doc: usize) -> Explanation {
        let path = self.paths.get(doc).cloned().unwrap_or_default();
        let mut notes = Vec::new();
        if doc >= self.n_docs {
            notes.push("no such document".to_string());
            return Explanation {
                skill_path: path,
                score: 0.0,
                terms: Vec::new(),
                notes,
            };
        }
        let q = prepare(self, query);
        let Account {
            score,
            raw,
            pair_raw,
            coverage,
            evidence,
            terms,
        } = self.account(&q, doc);
        notes.push(format!(
            "coverage = (raw {raw:.4} + pairs {pair_raw:.4}) / ceiling {:.4} = {coverage:.4} \
             (ceiling: every request term present and saturated; capped at 1)",
            q.max
        ));
        if evidence < 1.0 {
            notes.push(format!(
                "only one of the request's {} words matched, or none in name, keywords, \
                 description, hints or path: score = coverage x {evidence}",
                q.words
            ));
        }
        notes.push(format!("score = {score:.4}"));
        let unknown: Vec<&str> = q
            .slots
            .iter()
            .filter(|s| !s.known && s.word)
            .map(|s| s.surface.as_str())
            .collect();
        if !unknown.is_empty() {
            notes.push(format!(
                "words no skill uses (they count in the ceiling with idf {:.3}): {}",
                self.unseen_idf(),
                unknown.join(", ")
            ));
        }
        Explanation {
            skill_path: path,
            score,
            terms,
            notes,
        }
    }

    /// The score of `doc` (below `n_docs`) for `q`, as a search computes it, and its lines.
    fn account(&self, q: &Query, doc: usize) -> Account {
        let mut terms = Vec::new();
        let one = OneDoc { index: self, doc };
        let (raw, words) = raw_scores(&one, q);
        let (raw, words) = (raw[0], words[0]);
        let pair_raw = if raw > 0.0 && !q.pairs.is_empty() && q.max > 0.0 {
            PairScorer::new(q).score(&one, q, 0)
        } else {
            0.0
        };
        let (score, coverage, evidence, _) = finalise(&self.params, q, raw, pair_raw, words);
        // Its account: each slot's best alternative, split across the fields it is in.
        let norm = field_norm(&self.params, &self.lens[doc], &self.avg);
        let mut lines: Vec<(usize, String, f64)> = Vec::new();
        for slot in &q.slots {
            let mut best: Option<(f64, &Alt, usize)> = None;
            for alt in &slot.alts {
                if let Some(i) = self.find_posting(alt.term, doc) {
                    let c = alt.idf * f64::from(self.sat_of(alt.term, i, doc));
                    if best.as_ref().is_none_or(|(b, _, _)| c > *b) {
                        best = Some((c, alt, i));
                    }
                }
            }
            let Some((c, alt, i)) = best else { continue };
            let p_tf = self.posting_tf(alt.term, i);
            let c = c * slot.weight;
            let tf = pseudo_tf(&norm, &p_tf);
            let label = if alt.kind == "exact" {
                slot.surface.clone()
            } else {
                format!("{} ~{} ({})", slot.surface, self.term(alt.term), alt.kind)
            };
            for (f, (&t, n)) in p_tf.iter().zip(&norm).enumerate() {
                if t != 0 && tf > 0.0 {
                    lines.push((f, label.clone(), c * f64::from(t) * n / tf));
                }
            }
        }
        if pair_raw > 0.0 {
            let seq = Statistics::seq(self, doc);
            for pair in &q.pairs {
                if let Some(f) =
                    pair_field(seq, pair.terms[0], pair.terms[1], self.params.pair_window)
                {
                    lines.push((f, format!("{} (pair)", pair.surface), pair.weight));
                }
            }
        }
        let total = raw + pair_raw;
        let scale = if total > 0.0 { score / total } else { 0.0 };
        for (f, term, c) in lines {
            terms.push(ExplainTerm {
                field: FIELD_NAMES[f].to_string(),
                term,
                contribution: c * scale,
            });
        }
        Account {
            score,
            raw,
            pair_raw,
            coverage,
            evidence,
            terms,
        }
    }
}
