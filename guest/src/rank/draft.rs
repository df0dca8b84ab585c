//! Scoring a draft skill against a finished index as if it had been added to it (issue 14).
//!
//! A skill editor asks, on every keystroke, where the skill being written would rank for a few
//! requests and which skills would beat it. Building the collection again for that costs far
//! more than a keystroke allows; this module gives the same answer from the finished index:
//!
//! - the statistics of the collection *with* the draft are derived from the index: the number of
//!   skills `N' = N + 1` (or `N` when the draft replaces the skill of the same path), every
//!   term's document frequency `df' = df + [draft has it] - [replaced skill has it]`, and the mean
//!   field lengths `avglen'` over the collection with the draft;
//! - the request is prepared against that vocabulary (a word only the draft uses is known; prefix
//!   and typo alternatives come from both), exactly as [`SearchIndex::search`] prepares it;
//! - every skill holding one of the request's terms is scored with those statistics (its
//!   saturated frequencies recomputed from its per-field frequencies with `avglen'`), and so is
//!   the draft, analysed by the same [`Builder::analyse`] the index uses.
//!
//! So the draft's score and rank are those a rebuilt index would give (tested against a real
//! rebuild in `index::editor`'s tests), at the cost of a few searches.

use std::collections::HashMap;

use super::*;

/// A draft skill, analysed as the index analyses a skill.
#[derive(Debug)]
pub struct Draft {
    skill_path: String,
    priority: i32,
    lens: [u32; NUM_FIELDS],
    /// The draft's terms, sorted, and their per-field frequencies (same order).
    terms: Vec<String>,
    tfs: Vec<[u16; NUM_FIELDS]>,
    /// Name terms, [`SEQ_BREAK`], description terms, as numbers into `terms` (for pairs).
    seq: Vec<u32>,
}

impl Draft {
    /// Analyse `doc` with the parameters of `index`.
    pub fn new(doc: &SearchDoc, index: &SearchIndex) -> Self {
        let mut builder = Builder::new(index.params.clone());
        let analysed = builder.analyse(doc);
        let mut raw: Vec<(String, [u16; NUM_FIELDS], u32)> = Vec::new();
        analysed.for_each_raw(|id, packed| {
            let tf = decode_tf(packed, &mut 0);
            raw.push((builder.analyzer.term(id).to_owned(), tf, id));
        });
        raw.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let local: HashMap<u32, u32> = raw
            .iter()
            .enumerate()
            .map(|(i, r)| (r.2, i as u32))
            .collect();
        let seq = analysed
            .seq
            .iter()
            .map(|t| {
                if *t == SEQ_BREAK {
                    SEQ_BREAK
                } else {
                    local.get(t).copied().unwrap_or(SEQ_BREAK)
                }
            })
            .collect();
        Self {
            skill_path: doc.skill_path.clone(),
            priority: doc.priority,
            lens: analysed.lens,
            terms: raw.iter().map(|r| r.0.clone()).collect(),
            tfs: raw.iter().map(|r| r.1).collect(),
            seq,
        }
    }

    fn find(&self, text: &str) -> Option<u32> {
        self.terms
            .binary_search_by(|t| t.as_str().cmp(text))
            .ok()
            .map(|i| i as u32)
    }

    /// Whether term `t` occurs in a field that describes the skill.
    fn describes(&self, t: u32) -> bool {
        self.tfs[t as usize]
            .iter()
            .zip(DESCRIBING_FIELDS)
            .any(|(&n, m)| m && n > 0)
    }

    /// Number of distinct terms.
    pub fn vocabulary_len(&self) -> usize {
        self.terms.len()
    }
}

/// The collection's statistics with a draft in it (see the module docs).
#[derive(Debug)]
pub struct WithDraft<'a> {
    index: &'a SearchIndex,
    draft: &'a Draft,
    /// The index document the draft replaces (same skill path), if any.
    replaces: Option<usize>,
    n_docs: usize,
    /// Per index document, `w_f / (1 - b_f + b_f * len_f / avglen'_f)`.
    norms: Vec<[f64; NUM_FIELDS]>,
    /// The draft's saturated frequency per draft term.
    draft_sat: Vec<f64>,
}

/// A term of the collection with the draft: its number in the index and/or in the draft.
#[derive(Debug, Clone, Copy, PartialEq)]
struct DTerm {
    index: Option<u32>,
    draft: Option<u32>,
}

#[derive(Debug, Clone)]
struct DAlt {
    term: DTerm,
    factor: f64,
    /// idf' of the alternative itself.
    idf: f64,
}

#[derive(Debug, Clone)]
struct DSlot {
    surface: String,
    weight: f64,
    idf: f64,
    word: bool,
    alts: Vec<DAlt>,
}

#[derive(Debug, Clone)]
struct DPair {
    weight: f64,
    terms: [DTerm; 2],
}

/// How the draft fares on one request.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftScore {
    /// The draft's score, as `search` would give it in the collection with the draft.
    pub score: f64,
    /// 1-based rank of the draft among the skills matching the request; `None` when the draft
    /// matches no term of the request (`search` would not list it).
    pub rank: Option<usize>,
    /// Skills matching the request, the draft included.
    pub matching: usize,
    /// Request words the draft matched (as written).
    pub matched: Vec<String>,
    /// The index documents that rank above the draft, best first, with their scores (at most
    /// the `limit` given); all skills listed by `search` before it when it has no rank.
    pub above: Vec<(usize, f64)>,
}

impl SearchIndex {
    /// The statistics of this collection with `draft` added, or replacing document `replaces`.
    pub fn with_draft<'a>(&'a self, draft: &'a Draft, replaces: Option<usize>) -> WithDraft<'a> {
        let replaces = replaces.filter(|&d| d < self.n_docs);
        let n_docs = self.n_docs + 1 - usize::from(replaces.is_some());
        let mut sum = [0.0f64; NUM_FIELDS];
        for (d, lens) in self.lens.iter().enumerate() {
            if Some(d) != replaces {
                for (s, &l) in sum.iter_mut().zip(lens) {
                    *s += f64::from(l);
                }
            }
        }
        for (s, &l) in sum.iter_mut().zip(&draft.lens) {
            *s += f64::from(l);
        }
        let mut avg = [1.0; NUM_FIELDS];
        for (a, s) in avg.iter_mut().zip(sum) {
            *a = (s / n_docs as f64).max(1.0);
        }
        let norms = self
            .lens
            .iter()
            .map(|l| field_norm(&self.params, l, &avg))
            .collect();
        let draft_norm = field_norm(&self.params, &draft.lens, &avg);
        let draft_sat = draft
            .tfs
            .iter()
            .map(|tf| f64::from(saturate(&self.params, &draft_norm, tf)))
            .collect();
        WithDraft {
            index: self,
            draft,
            replaces,
            n_docs,
            norms,
            draft_sat,
        }
    }
}

/// `tf~ / (k1 + tf~)` as the index stores it.
fn saturate(params: &Params, norm: &[f64; NUM_FIELDS], tf: &[u16; NUM_FIELDS]) -> f32 {
    let ptf = pseudo_tf(norm, tf);
    (ptf / (params.k1 + ptf)) as f32
}

impl WithDraft<'_> {
    /// `df'` of a term.
    fn df(&self, t: DTerm) -> usize {
        let mut df = t.index.map_or(0, |i| self.index.range(i).len());
        if let (Some(i), Some(old)) = (t.index, self.replaces)
            && self.index.find_posting(i, old).is_some()
        {
            df -= 1;
        }
        df + usize::from(t.draft.is_some())
    }

    fn idf(&self, t: DTerm) -> f64 {
        idf_of(self.n_docs, self.df(t))
    }

    /// The term `text` in the collection with the draft, if some skill there has it.
    fn lookup(&self, text: &str) -> Option<DTerm> {
        let t = DTerm {
            index: self.index.term_id(text),
            draft: self.draft.find(text),
        };
        (self.df(t) > 0).then_some(t)
    }

    /// A number for `t`, unique in the collection with the draft.
    fn key(&self, t: DTerm) -> u64 {
        match (t.index, t.draft) {
            (Some(i), _) => u64::from(i),
            (_, Some(d)) => self.index.term_ends.len() as u64 + u64::from(d),
            (None, None) => u64::MAX,
        }
    }

    fn alt(&self, term: DTerm, factor: f64) -> DAlt {
        DAlt {
            term,
            factor,
            idf: self.idf(term),
        }
    }

    /// [`SearchIndex::slots`] over the collection with the draft.
    fn slots(&self, terms: &[Term]) -> Vec<DSlot> {
        let p = &self.index.params;
        let mut seen = HashSet::new();
        let mut slots = Vec::new();
        for t in terms {
            if !seen.insert(t.term.clone()) {
                continue;
            }
            let mut alts = Vec::new();
            let known = self.lookup(&t.term);
            if let Some(k) = known {
                alts.push(self.alt(k, 1.0));
            }
            let n = t.term.chars().count();
            if n >= p.prefix_min_len && p.prefix_factor > 0.0 {
                // terms the request term is a prefix of: the index's, then the draft's own
                let start = self.index.term_lower_bound(&t.term);
                for id in start..self.index.term_ends.len() as u32 {
                    let text = self.index.term(id);
                    if !text.starts_with(t.term.as_str()) {
                        break;
                    }
                    if text != t.term
                        && let Some(x) = self.lookup(text)
                    {
                        alts.push(self.alt(x, p.prefix_factor));
                    }
                }
                let start = self
                    .draft
                    .terms
                    .partition_point(|x| x.as_str() < t.term.as_str());
                for (d, text) in self.draft.terms.iter().enumerate().skip(start) {
                    if !text.starts_with(t.term.as_str()) {
                        break;
                    }
                    if *text != t.term && self.index.term_id(text).is_none() {
                        let x = DTerm {
                            index: None,
                            draft: Some(d as u32),
                        };
                        alts.push(self.alt(x, p.prefix_factor));
                    }
                }
                // terms that are a prefix of the request term
                for (cut, _) in t.term.char_indices().skip(p.prefix_min_len) {
                    if let Some(x) = self.lookup(&t.term[..cut]) {
                        alts.push(self.alt(x, p.prefix_factor));
                    }
                }
            }
            if known.is_none() && n >= p.typo_min_len && p.typo_factor > 0.0 {
                // typo candidates: terms of at least 2 skills of the collection with the draft
                let l = t.term.len();
                let lens = l.saturating_sub(2)..=l + 2;
                for len in lens.clone() {
                    let ids = self.index.typo_by_len.get(len).map_or(&[][..], |v| v);
                    for &id in ids {
                        let text = self.index.term(id);
                        if within_one_edit(text, &t.term)
                            && let Some(x) = self.lookup(text)
                            && self.df(x) >= 2
                        {
                            alts.push(self.alt(x, p.typo_factor));
                        }
                    }
                }
                // terms of one skill of the index that the draft has too
                for (d, text) in self.draft.terms.iter().enumerate() {
                    if !lens.contains(&text.len()) || !within_one_edit(text, &t.term) {
                        continue;
                    }
                    let x = DTerm {
                        index: self.index.term_id(text),
                        draft: Some(d as u32),
                    };
                    let in_typo_list = x.index.is_some_and(|i| self.index.range(i).len() >= 2);
                    if !in_typo_list && self.df(x) >= 2 {
                        alts.push(self.alt(x, p.typo_factor));
                    }
                }
            }
            slots.push(DSlot {
                surface: t.surface.clone(),
                weight: if t.joined { p.joined_weight } else { 1.0 },
                idf: known.map_or_else(|| idf_of(self.n_docs, 0), |k| self.idf(k)),
                word: !t.joined,
                alts,
            });
        }
        slots
    }

    /// [`SearchIndex::pairs`] over the collection with the draft.
    fn pairs(&self, terms: &[Term]) -> Vec<DPair> {
        let p = &self.index.params;
        if p.pair_weight <= 0.0 {
            return Vec::new();
        }
        let words: Vec<DTerm> = terms
            .iter()
            .filter(|t| !t.joined)
            .filter_map(|t| self.lookup(&t.term))
            .collect();
        let mut seen = HashSet::new();
        let mut pairs = Vec::new();
        for (i, &a) in words.iter().enumerate() {
            for &b in words.iter().skip(i + 1).take(p.pair_window) {
                let (ka, kb) = (self.key(a), self.key(b));
                if ka != kb && seen.insert((ka.min(kb), ka.max(kb))) {
                    pairs.push(DPair {
                        weight: p.pair_weight * 0.5 * (self.idf(a) + self.idf(b)),
                        terms: [a, b],
                    });
                }
            }
        }
        pairs
    }

    /// How the draft fares on `query` (see [`DraftScore`]); `limit` bounds `above`.
    pub fn score(&self, query: &str, limit: usize) -> DraftScore {
        let ix = self.index;
        let params = &ix.params;
        let terms = analyze(query);
        let slots = self.slots(&terms);
        let pairs = self.pairs(&terms);
        let max: f64 = slots.iter().map(|s| s.weight * s.idf).sum();
        let q_words = slots.iter().filter(|s| s.word).count();
        let fin =
            |raw: f64, pair: f64, words: u32| finalise_with(params, max, q_words, raw, pair, words);

        // The index's skills (raw scores as `SearchIndex::raw_scores`, with the new statistics).
        let n = ix.n_docs;
        let mut total = vec![0.0f64; n];
        let mut words = vec![0u32; n];
        let mut best = vec![0.0f64; n];
        let mut describes = vec![false; n];
        let mut touched: Vec<u32> = Vec::new();
        // The draft.
        let (mut d_total, mut d_words) = (0.0f64, 0u32);
        let mut matched = Vec::new();
        for slot in &slots {
            let (mut d_best, mut d_describes) = (0.0f64, false);
            for alt in &slot.alts {
                let idf = alt.factor * alt.idf.min(slot.idf);
                if let Some(t) = alt.term.index {
                    let mut pos = ix.tf_offsets[t as usize] as usize;
                    for i in ix.range(t) {
                        let (d, m) = ix.docs.get(i);
                        let byte = ix.tf_bytes[pos];
                        // one field, 1 to 15 (the usual case; as `Builder::build` reads it)
                        let ptf = if byte & 0x80 != 0 {
                            pos += 1;
                            let f = usize::from(byte >> 4 & 7);
                            pseudo_tf_one(self.norms[d][f], byte & 15)
                        } else {
                            pseudo_tf(&self.norms[d], &decode_tf(&ix.tf_bytes, &mut pos))
                        };
                        if Some(d) == self.replaces {
                            continue;
                        }
                        let sat = (ptf / (params.k1 + ptf)) as f32;
                        let c = idf * f64::from(sat);
                        if best[d] == 0.0 {
                            touched.push(d as u32);
                        }
                        if c > best[d] {
                            best[d] = c;
                        }
                        describes[d] |= m;
                    }
                }
                if let Some(t) = alt.term.draft {
                    let c = idf * self.draft_sat[t as usize];
                    if c > d_best {
                        d_best = c;
                    }
                    d_describes |= self.draft.describes(t);
                }
            }
            for &d in &touched {
                let d = d as usize;
                total[d] += slot.weight * best[d];
                if slot.word {
                    words[d] += if describes[d] { DESCRIBING_WORD } else { 1 };
                }
                best[d] = 0.0;
                describes[d] = false;
            }
            touched.clear();
            if d_best > 0.0 {
                d_total += slot.weight * d_best;
                if slot.word {
                    d_words += if d_describes { DESCRIBING_WORD } else { 1 };
                }
                matched.push(slot.surface.clone());
            }
        }
        let with_pairs = !pairs.is_empty() && max > 0.0;
        // (score, sort key) of every matching skill of the index.
        let mut scored: Vec<(usize, f64, f64)> = Vec::new();
        for d in 0..n {
            if total[d] <= 0.0 {
                continue;
            }
            let mut pair = 0.0;
            if with_pairs && words[d] / DESCRIBING_WORD >= 2 {
                let start = if d == 0 { 0 } else { ix.seq_ends[d - 1] };
                let seq = &ix.seq[start as usize..ix.seq_ends[d] as usize];
                for p in &pairs {
                    if let [Some(a), Some(b)] = p.terms.map(|t| t.index)
                        && pair_field(seq, a, b, params.pair_window).is_some()
                    {
                        pair += p.weight;
                    }
                }
            }
            let (score, _, _, key) = fin(total[d], pair, words[d]);
            scored.push((d, score, key));
        }
        let beats = |a: &(usize, f64, f64), b: &(usize, f64, f64)| {
            b.2.partial_cmp(&a.2)
                .unwrap_or(Ordering::Equal)
                .then_with(|| ix.priority[b.0].cmp(&ix.priority[a.0]))
                .then_with(|| ix.paths[a.0].cmp(&ix.paths[b.0]))
        };
        scored.sort_by(beats);
        if d_total <= 0.0 {
            scored.truncate(limit);
            return DraftScore {
                score: 0.0,
                rank: None,
                matching: scored.len(),
                matched,
                above: scored.into_iter().map(|s| (s.0, s.1)).collect(),
            };
        }
        let mut d_pair = 0.0;
        if with_pairs && d_words / DESCRIBING_WORD >= 2 {
            for p in &pairs {
                if let [Some(a), Some(b)] = p.terms.map(|t| t.draft)
                    && pair_field(&self.draft.seq, a, b, params.pair_window).is_some()
                {
                    d_pair += p.weight;
                }
            }
        }
        let (d_score, _, _, d_key) = fin(d_total, d_pair, d_words);
        let above = scored.partition_point(|s| {
            s.2.partial_cmp(&d_key)
                .unwrap_or(Ordering::Equal)
                .then_with(|| ix.priority[s.0].cmp(&self.draft.priority))
                .then_with(|| self.draft.skill_path.as_str().cmp(ix.paths[s.0].as_str()))
                == Ordering::Greater
        });
        let matching = scored.len() + 1;
        scored.truncate(above.min(limit));
        DraftScore {
            score: d_score,
            rank: Some(above + 1),
            matching,
            matched,
            above: scored.into_iter().map(|s| (s.0, s.1)).collect(),
        }
    }
}
