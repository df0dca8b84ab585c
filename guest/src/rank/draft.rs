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
//! - the vocabulary is the index's and the draft's (a word only the draft uses is known; prefix
//!   and typo alternatives come from both);
//! - a skill's saturated frequencies are recomputed from its per-field frequencies with
//!   `avglen'`, and the draft's come from the same [`Builder::analyse`] the index uses.
//!
//! [`WithDraft`] gives these statistics through [`Statistics`], the draft being one more
//! document, so the request is prepared and every skill scored and ordered by the very code of
//! [`SearchIndex::search`]. The draft's score and rank are those a rebuilt index would give
//! (tested against a real rebuild in `index::editor`'s tests), at the cost of a few searches.

use std::collections::HashMap;
use std::ops::RangeInclusive;

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

/// The collection's statistics with a draft in it (see the module docs): the index's
/// documents keep their numbers, the draft is document `index.len()`; the index's terms keep
/// theirs, a term only the draft has is numbered from `index.vocabulary_len()` up.
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
    draft_sat: Vec<f32>,
    /// Per draft term (in the draft's order), its number in the collection.
    ids: Vec<u32>,
    /// (number in the collection, draft term) of every draft term, by number.
    by_id: Vec<(u32, u32)>,
    /// The draft's name and description terms, by their numbers in the collection.
    seq: Vec<u32>,
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
            .map(|tf| saturate(&self.params, &draft_norm, tf))
            .collect();
        let mut next = self.vocab.ends.len() as u32;
        let ids: Vec<u32> = draft
            .terms
            .iter()
            .map(|t| {
                self.term_id(t).unwrap_or_else(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        let mut by_id: Vec<(u32, u32)> = ids
            .iter()
            .enumerate()
            .map(|(k, &i)| (i, k as u32))
            .collect();
        by_id.sort_unstable();
        let seq = draft
            .seq
            .iter()
            .map(|&t| if t == SEQ_BREAK { t } else { ids[t as usize] })
            .collect();
        WithDraft {
            index: self,
            draft,
            replaces,
            n_docs,
            norms,
            draft_sat,
            ids,
            by_id,
            seq,
        }
    }
}

/// `tf~ / (k1 + tf~)` as the index stores it.
fn saturate(params: &Params, norm: &[f64; NUM_FIELDS], tf: &[u16; NUM_FIELDS]) -> f32 {
    let ptf = pseudo_tf(norm, tf);
    (ptf / (params.k1 + ptf)) as f32
}

impl WithDraft<'_> {
    /// The draft's document number.
    fn draft_doc(&self) -> usize {
        self.index.n_docs
    }

    /// The draft's own number of collection term `t`, if the draft has it.
    fn in_draft(&self, t: u32) -> Option<u32> {
        let at = self.by_id.partition_point(|x| x.0 < t);
        self.by_id.get(at).filter(|x| x.0 == t).map(|x| x.1)
    }

    /// Whether index term `t` is held by the document the draft replaces.
    fn replaced_has(&self, t: u32) -> bool {
        self.replaces
            .is_some_and(|old| self.index.find_posting(t, old).is_some())
    }

    /// Whether collection term `t` is an index term.
    fn indexed(&self, t: u32) -> bool {
        (t as usize) < self.index.vocab.ends.len()
    }

    /// The draft's document number among the hits of [`WithDraft::search`] (one past the
    /// index's documents).
    pub fn draft_number(&self) -> usize {
        self.draft_doc()
    }

    /// The `limit` best skills for `query` in the collection with the draft, best first, as
    /// `search` of the rebuilt index lists them: (document, score), the draft being
    /// [`WithDraft::draft_number`] and the document it replaces absent.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(usize, f64)> {
        let q = prepare(self, query);
        let (scored, key) = score_all(self, &q, limit);
        best(self, scored, &key, limit)
    }

    /// How the draft fares on `query` (see [`DraftScore`]); `limit` bounds `above`.
    pub fn score(&self, query: &str, limit: usize) -> DraftScore {
        let q = prepare(self, query);
        // Every matching skill, scored as a search scores them; only the order among those
        // listed is needed, and where the draft falls.
        let (mut scored, key) = score_all(self, &q, usize::MAX);
        let draft = self.draft_doc();
        let matching = scored.len();
        let Some(at) = scored.iter().position(|r| r.0 == draft) else {
            return DraftScore {
                score: 0.0,
                rank: None,
                matching,
                matched: Vec::new(),
                above: best(self, scored, &key, limit),
            };
        };
        let (_, score) = scored.swap_remove(at);
        scored.retain(|x| order(self, (x.0, key[x.0]), (draft, key[draft])) == Ordering::Less);
        let rank = scored.len() + 1;
        DraftScore {
            score,
            rank: Some(rank),
            matching,
            matched: matched(self, &q, draft),
            above: best(self, scored, &key, limit),
        }
    }
}

impl Statistics for WithDraft<'_> {
    fn params(&self) -> &Params {
        &self.index.params
    }

    fn known_words(&self) -> Option<&std::sync::Arc<crate::text::KnownWords>> {
        self.index.known.as_ref()
    }

    fn n_docs(&self) -> usize {
        self.n_docs
    }

    fn doc_bound(&self) -> usize {
        self.index.n_docs + 1
    }

    fn term_bound(&self) -> usize {
        self.index.vocab.ends.len() + self.draft.terms.len()
    }

    fn term(&self, t: u32) -> &str {
        if self.indexed(t) {
            self.index.term(t)
        } else {
            let k = self.in_draft(t).expect("a term of the draft");
            &self.draft.terms[k as usize]
        }
    }

    fn term_id(&self, text: &str) -> Option<u32> {
        let t = match self.index.term_id(text) {
            Some(t) => t,
            None => self.ids[self.draft.find(text)? as usize],
        };
        (self.df(t) > 0).then_some(t)
    }

    fn df(&self, t: u32) -> usize {
        let mut df = usize::from(self.in_draft(t).is_some());
        if self.indexed(t) {
            df += self.index.range(t).len() - usize::from(self.replaced_has(t));
        }
        df
    }

    fn each_extension(&self, text: &str, mut f: impl FnMut(u32)) {
        // the index's terms, then those only the draft has
        self.index.each_extension(text, |t| {
            if self.df(t) > 0 {
                f(t);
            }
        });
        let start = self.draft.terms.partition_point(|x| x.as_str() < text);
        for (k, term) in self.draft.terms.iter().enumerate().skip(start) {
            if !term.starts_with(text) {
                break;
            }
            let t = self.ids[k];
            if term != text && !self.indexed(t) {
                f(t);
            }
        }
    }

    fn each_typo_candidate(&self, lens: RangeInclusive<usize>, mut f: impl FnMut(u32)) {
        // the index's candidates still in two skills, then the draft's terms in two skills
        // that were not candidates of the index
        self.index.each_typo_candidate(lens.clone(), |t| {
            if self.df(t) >= 2 {
                f(t);
            }
        });
        for (k, term) in self.draft.terms.iter().enumerate() {
            let t = self.ids[k];
            let candidate = self.indexed(t) && self.index.range(t).len() >= 2;
            if lens.contains(&term.len()) && !candidate && self.df(t) >= 2 {
                f(t);
            }
        }
    }

    fn each_posting(&self, t: u32, mut f: impl FnMut(usize, bool, f32)) {
        let ix = self.index;
        if self.indexed(t) {
            let mut pos = ix.tf_offsets[t as usize] as usize;
            for i in ix.range(t) {
                let (d, m) = ix.docs.get(i);
                let byte = ix.tf_bytes[pos];
                // one field, 1 to 15 (the usual case; as `Builder::build` reads it)
                let ptf = if byte & 0x80 != 0 {
                    pos += 1;
                    let field = usize::from(byte >> 4 & 7);
                    pseudo_tf_one(self.norms[d][field], byte & 15)
                } else {
                    pseudo_tf(&self.norms[d], &decode_tf(&ix.tf_bytes, &mut pos))
                };
                if Some(d) != self.replaces {
                    f(d, m, (ptf / (ix.params.k1 + ptf)) as f32);
                }
            }
        }
        if let Some(k) = self.in_draft(t) {
            f(
                self.draft_doc(),
                self.draft.describes(k),
                self.draft_sat[k as usize],
            );
        }
    }

    fn has_term(&self, t: u32, doc: usize) -> bool {
        if doc == self.draft_doc() {
            self.in_draft(t).is_some()
        } else {
            Some(doc) != self.replaces && self.indexed(t) && self.index.has_term(t, doc)
        }
    }

    fn seq(&self, doc: usize) -> &[u32] {
        if doc == self.draft_doc() {
            &self.seq
        } else {
            self.index.seq(doc)
        }
    }

    fn priority(&self, doc: usize) -> i32 {
        if doc == self.draft_doc() {
            self.draft.priority
        } else {
            self.index.priority[doc]
        }
    }

    fn path(&self, doc: usize) -> &str {
        if doc == self.draft_doc() {
            &self.draft.skill_path
        } else {
            &self.index.paths[doc]
        }
    }
}
