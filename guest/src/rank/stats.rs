//! The collection statistics the scorer reads, behind one trait.
//!
//! The scorer (`score.rs`) reads a collection only through [`Statistics`], as tantivy's
//! BM25 weight reads a `Bm25StatisticsProvider`: the number of skills, each term's document
//! frequency, the vocabulary (for prefix and typo alternatives), the postings with their
//! saturated frequencies, and what pairs and the ordering need of each skill. Three
//! providers:
//!
//! - [`SearchIndex`] (here): everything precomputed at build time, the saturated frequency of
//!   each posting included (the field weights, `b` and the mean field lengths are folded into
//!   it), so a search reads flat arrays;
//! - [`super::WithDraft`]: the index with a draft skill added (or replacing the skill of its
//!   path), its statistics derived from the index's on the fly;
//! - `OneDoc` (`explain.rs`): the index seen through the one skill an explanation is about.
//!
//! So a search, a draft's ranking and an explanation are the same code.

use super::*;

/// What the scorer reads of a collection.
///
/// Terms are numbered below [`Statistics::term_bound`], documents below
/// [`Statistics::doc_bound`] (a number a provider never gives a posting is simply not a
/// document of the collection).
pub trait Statistics {
    /// The ranking parameters.
    fn params(&self) -> &Params;
    /// Number of skills in the collection (`N` of the idf).
    fn n_docs(&self) -> usize;
    /// Documents are numbered below this.
    fn doc_bound(&self) -> usize;
    /// Terms are numbered below this.
    fn term_bound(&self) -> usize;
    /// Text of term `t`.
    fn term(&self, t: u32) -> &str;
    /// Number of term `text`, if some skill of the collection has it.
    fn term_id(&self, text: &str) -> Option<u32>;
    /// Number of skills that have term `t`.
    fn df(&self, t: u32) -> usize;
    /// `f(t)` for every term of the collection that `text` is a strict prefix of, in
    /// vocabulary order.
    fn each_extension(&self, text: &str, f: impl FnMut(u32));
    /// The number of request term `text`, if some skill has it; and, when `prefix_min` is
    /// given, `f(t)` for its prefix alternatives: first every term `text` is a strict prefix
    /// of ([`Statistics::each_extension`], in vocabulary order), then every term that is a
    /// strict prefix of `text` of at least `prefix_min` characters, shortest first.
    fn lookup(&self, text: &str, prefix_min: Option<usize>, mut f: impl FnMut(u32)) -> Option<u32> {
        let exact = self.term_id(text);
        if let Some(min) = prefix_min {
            self.each_extension(text, &mut f);
            for (cut, _) in text.char_indices().skip(min) {
                if let Some(id) = self.term_id(&text[..cut]) {
                    f(id);
                }
            }
        }
        exact
    }
    /// The collection's words whose terms are known ([`crate::text::KnownWords`]): a
    /// request's words found there are not stemmed again (`None`: every word is).
    fn known_words(&self) -> Option<&std::sync::Arc<crate::text::KnownWords>> {
        None
    }
    /// `f(t)` for every typo candidate: a term at least two skills have, `lens` bytes long.
    fn each_typo_candidate(&self, lens: std::ops::RangeInclusive<usize>, f: impl FnMut(u32));
    /// [`Statistics::each_typo_candidate`] for the candidates that may be one edit from
    /// `text`: a provider may leave out some it knows are not (the caller still checks each
    /// with [`within_one_edit`]).
    fn each_typo_near(
        &self,
        text: &str,
        lens: std::ops::RangeInclusive<usize>,
        f: impl FnMut(u32),
    ) {
        let _ = text;
        self.each_typo_candidate(lens, f);
    }
    /// `f(doc, describes, sat)` for every skill that has term `t`: whether it has it in a
    /// field that describes it (name, keywords, description, hints, path), and its saturated
    /// frequency `tf~ / (k1 + tf~)` (see the module docs of [`super`]).
    fn each_posting(&self, t: u32, f: impl FnMut(usize, bool, f32));
    /// Whether document `doc` has term `t`.
    fn has_term(&self, t: u32, doc: usize) -> bool;
    /// The terms of `doc`'s name, a break (`u32::MAX`), those of its description (for pairs).
    fn seq(&self, doc: usize) -> &[u32];
    fn priority(&self, doc: usize) -> i32;
    fn path(&self, doc: usize) -> &str;

    /// `idf(t)` in this collection.
    #[inline]
    fn idf(&self, t: u32) -> f64 {
        idf_of(self.n_docs(), self.df(t))
    }

    /// idf of a term no skill of the collection has.
    fn unseen_idf(&self) -> f64 {
        idf_of(self.n_docs(), 0)
    }
}

impl Statistics for SearchIndex {
    #[inline]
    fn params(&self) -> &Params {
        &self.params
    }

    fn known_words(&self) -> Option<&std::sync::Arc<crate::text::KnownWords>> {
        self.known.as_ref()
    }

    #[inline]
    fn n_docs(&self) -> usize {
        self.n_docs
    }

    #[inline]
    fn doc_bound(&self) -> usize {
        self.n_docs
    }

    #[inline]
    fn term_bound(&self) -> usize {
        self.vocab.ends.len()
    }

    #[inline]
    fn term(&self, t: u32) -> &str {
        SearchIndex::term(self, t)
    }

    #[inline]
    fn term_id(&self, text: &str) -> Option<u32> {
        SearchIndex::term_id(self, text)
    }

    #[inline]
    fn df(&self, t: u32) -> usize {
        self.range(t).len()
    }

    /// From the table derived at build or restore (the same values, without a logarithm).
    #[inline]
    fn idf(&self, t: u32) -> f64 {
        let df = self.range(t).len();
        match self.idf_by_df.get(df) {
            Some(&idf) => idf,
            None => idf_of(self.n_docs, df),
        }
    }

    fn each_extension(&self, text: &str, mut f: impl FnMut(u32)) {
        let start = self.term_lower_bound(text);
        for id in start..self.vocab.ends.len() as u32 {
            let term = SearchIndex::term(self, id);
            if !term.starts_with(text) {
                break;
            }
            if term != text {
                f(id);
            }
        }
    }

    /// One descent of the vocabulary read as a trie (`vocab.rs`).
    #[inline]
    fn lookup(&self, text: &str, prefix_min: Option<usize>, f: impl FnMut(u32)) -> Option<u32> {
        self.descend_lookup(text, prefix_min, f)
    }

    fn each_typo_candidate(&self, lens: std::ops::RangeInclusive<usize>, mut f: impl FnMut(u32)) {
        for len in lens {
            for &id in self.typo_by_len.get(len).map_or(&[][..], |v| v.as_slice()) {
                f(id);
            }
        }
    }

    /// The candidates whose character signature ([`char_signature`]) differs from `text`'s in
    /// at most two bits: one edit removes at most one character and adds at most one, so two
    /// words one edit apart differ in at most two bits. In fact exactly the candidates one edit
    /// from `text`, in the scan's order, from a one-edit automaton run over the vocabulary
    /// (`vocab.rs`): the scan reads every candidate of a close length, so it grows with the
    /// vocabulary, the automaton only the trie's branches one edit away (docs/performance.md,
    /// "Preparing a request"). The scan is for a term too long for the automaton.
    fn each_typo_near(
        &self,
        text: &str,
        lens: std::ops::RangeInclusive<usize>,
        mut f: impl FnMut(u32),
    ) {
        if let Some(found) = self.typo_automaton(text, &lens) {
            found.into_iter().for_each(f);
            return;
        }
        let sig = char_signature(text);
        for len in lens {
            let ids = self.typo_by_len.get(len).map_or(&[][..], |v| v.as_slice());
            let sigs = self.typo_sig.get(len).map_or(&[][..], |v| v.as_slice());
            for (&id, &other) in ids.iter().zip(sigs) {
                if (sig ^ other).count_ones() <= 2 {
                    f(id);
                }
            }
        }
    }

    #[inline]
    fn each_posting(&self, t: u32, f: impl FnMut(usize, bool, f32)) {
        self.docs.each(self.range(t), self.sats(t), f);
    }

    #[inline]
    fn has_term(&self, t: u32, doc: usize) -> bool {
        self.find_posting(t, doc).is_some()
    }

    #[inline]
    fn seq(&self, doc: usize) -> &[u32] {
        let start = if doc == 0 { 0 } else { self.seq_ends[doc - 1] };
        &self.seq[start as usize..self.seq_ends[doc] as usize]
    }

    #[inline]
    fn priority(&self, doc: usize) -> i32 {
        self.priority[doc]
    }

    #[inline]
    fn path(&self, doc: usize) -> &str {
        &self.paths[doc]
    }
}
