//! The default ranking: fielded BM25 (BM25F) over a skill's text (issue 6).
//!
//! Built once per index from [`SearchDoc`]s; a query never re-tokenises the catalogue: term
//! statistics and each posting's saturated frequency are precomputed.
//!
//! # Algorithm
//! Every field of a skill is analysed with [`crate::text::Analyzer`] (identifier splitting,
//! compound joins, the abbreviation table of [`crate::synonyms`], stop words, English Snowball
//! stemming). For a request term `t` and a skill `d`:
//!
//! ```text
//! tf~(t, d) = sum over fields f of  w_f * tf_f(t, d) / (1 - b_f + b_f * len_f(d) / avglen_f)
//! idf(t)    = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//! s(t, d)   = idf(t) * tf~ / (k1 + tf~)
//! ```
//!
//! Fields: `name` (the name and the skill's folder name), `keywords`, `description`, `hints`
//! (`when_to_use`, `tags`...), `headings`, `body` (the first [`BODY_PREFIX_BYTES`]) and `path`
//! (the skill path's folders). Weights in [`Params::default`].
//!
//! Each request term forms a *slot* whose alternatives are the term itself and, at a reduced
//! factor, vocabulary terms it is a prefix of or that are a prefix of it (`postgres` ->
//! `postgresql`, at least [`Params::prefix_min_len`] characters) and, for a term the catalogue
//! does not know, terms one edit away (typos). An alternative never scores with more idf than
//! the request term itself. A slot scores its best alternative, so expansions never add up.
//! The join of a compound (`fine-tune` -> `finetune`) and a phrase abbreviation
//! (`pull request` -> `pr`) form slots of weight [`Params::joined_weight`].
//!
//! # Proximity (word pairs)
//! Two request words at most [`Params::pair_window`] words apart (`"publish python package"`:
//! `publish`+`python`, `publish`+`package`, `python`+`package`; stop words are skipped and do
//! not count as distance) form a *pair*. A skill whose name or description holds the two terms
//! as close together (in either order, in the same field) earns the pair's weight:
//!
//! ```text
//! pair(a, b) = pair_weight * (idf(a) + idf(b)) / 2       (Params::pair_weight)
//! ```
//!
//! Pairs are exact terms only (no prefix or typo alternatives). They separate near-ties between
//! sibling skills: of two skills using the same words, the one whose name or description says
//! them together is the more specific. The pairs of every skill's name and description are
//! kept at build time as the sequence of terms of each skill's name and description.
//!
//! # Normalisation (what `min_score` and `ambiguity_threshold` mean)
//! `raw(d) = sum over slots of weight * s(best alternative, d)`. Its ceiling for the request is
//! `max = sum over slots of weight * idf(slot term)`: every term present and saturated. A term
//! no skill uses counts in `max` with the idf of a term seen nowhere, so a request about
//! something no skill covers cannot score high. `pairs(d)` is the sum of the pairs `d` holds: a
//! bonus on top of the terms, so a skill holding no pair scores exactly as without proximity
//! (pairs need both of their words matched, hence they never lift a skill that does not
//! already account for part of the request).
//!
//! ```text
//! coverage(d) = min(1, (raw(d) + pairs(d)) / max) in 0..=1
//! score(d)    = coverage(d) * evidence(d)         in 0..=1
//! evidence(d) = single_word_factor (0.4) when the request has two or more words and the skill
//!               matches only one of them, or matches none in the fields that describe it
//!               (name, keywords, description, hints, path: only in headings or body), else 1
//! ```
//!
//! So the score is "the share of the request's information the skill accounts for", cut to
//! 0.4 of it when that rests on a single word of a longer request or on body text alone (off-topic
//! requests typically hit one word, or words of some body: "weather", "cats"). Skills are ordered
//! by the uncapped value, so the rare ones past the cap keep their order. With the defaults
//! `min_score: 0.2` drops skills that account for
//! less than a fifth of the request, and `ambiguity_threshold: 0.1` calls a request ambiguous
//! when the runner-up accounts for almost as much of it as the best skill.
//!
//! # One scorer
//! All of the above is written once, in `rank/score.rs`, over the [`Statistics`] of a
//! collection (`rank/stats.rs`): the index gives them from its precomputed arrays,
//! [`WithDraft`] from the index with a draft skill in it (`rank/draft.rs`). A search, a
//! draft's ranking and an explanation (`rank/explain.rs`) run the same code.

use crate::codec::{decode, encode};
use crate::model::{ExplainTerm, Explanation};
use crate::text::{Analyzer, JOINED, TermList, with_terms};
use std::cmp::Ordering;

mod build;
mod draft;
mod explain;
mod pairs;
mod postings;
mod score;
mod snapshot;
mod stats;
#[cfg(test)]
mod tests;
mod topk;
mod vocab;

use build::*;
pub use build::{Analysed, Builder};
pub use draft::{Draft, DraftScore, WithDraft};
pub use explain::Prepared;
use pairs::*;
use postings::*;
use score::*;
pub use score::{idf_of, truncate_utf8, within_one_edit};
pub use snapshot::{CHUNK_BYTES, PartsReader};
pub use stats::Statistics;

/// The searchable text of one skill, extracted at index time (bodies are not kept).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SearchDoc {
    /// Skill path (its segments are searchable too).
    pub skill_path: String,
    pub name: String,
    pub description: String,
    /// Frontmatter `keywords` (and aliases), if any.
    pub keywords: Vec<String>,
    /// `when_to_use`, `tags` and similar routing hints from the frontmatter, joined.
    pub hints: String,
    /// Markdown headings of the body, joined by newlines.
    pub headings: String,
    /// The first part of the body (bounded, see `BODY_PREFIX_BYTES`).
    pub body_prefix: String,
    pub priority: i32,
}

/// How much of a body is indexed (measured: 2 KiB beats 1, 4 and 8 KiB on the dev set).
pub const BODY_PREFIX_BYTES: usize = 2048;

/// One scored document: its index in the build order, a score, and the matched terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub doc: usize,
    pub score: f64,
    pub matched: Vec<String>,
}

/// Number of indexed fields.
pub const NUM_FIELDS: usize = 7;

/// Field names, in index order (as shown by `explain`).
pub const FIELD_NAMES: [&str; NUM_FIELDS] = [
    "name",
    "keywords",
    "description",
    "hints",
    "headings",
    "body",
    "path",
];

/// Ranking parameters. [`Params::default`] is the tuned default (tuned on the even half of the
/// dev set, checked on the odd half).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Params {
    /// BM25 term-frequency saturation.
    pub k1: f64,
    /// Field weights `w_f` (order of [`FIELD_NAMES`]).
    pub weight: [f64; NUM_FIELDS],
    /// Field length normalisation `b_f`.
    pub b: [f64; NUM_FIELDS],
    /// Weight of a slot made from a compound join or a phrase abbreviation.
    pub joined_weight: f64,
    /// Factor of a prefix alternative (`postgres` -> `postgresql`).
    pub prefix_factor: f64,
    /// Factor of a typo alternative (one edit away; request terms the catalogue lacks only).
    pub typo_factor: f64,
    /// Shortest request term (characters) expanded by prefix.
    pub prefix_min_len: usize,
    /// Shortest unknown request term (characters) given typo alternatives.
    pub typo_min_len: usize,
    /// Score factor of a skill matching a single word of a request of two or more words, or
    /// matching none of its words in name, keywords, description, hints or path.
    pub single_word_factor: f64,
    /// Bytes of body text indexed (the rest is ignored even when given).
    pub body_bytes: usize,
    /// Weight of a pair of request words found close together in a skill's name or
    /// description, relative to the mean idf of its two terms (0 disables pairs).
    pub pair_weight: f64,
    /// Largest distance, in words, between the two terms of a pair (1: adjacent only); the
    /// same on the request and on the skill's side.
    pub pair_window: usize,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            k1: 1.2,
            weight: [3.0, 3.0, 3.0, 1.0, 0.5, 0.5, 1.0],
            b: [0.2, 0.75, 0.9, 0.2, 0.4, 0.9, 0.75],
            joined_weight: 0.5,
            prefix_factor: 0.3,
            typo_factor: 0.6,
            prefix_min_len: 4,
            typo_min_len: 5,
            single_word_factor: 0.4,
            body_bytes: BODY_PREFIX_BYTES,
            pair_weight: 0.1,
            pair_window: 2,
        }
    }
}

/// Packing of matched word counts: `describing * DESCRIBING_WORD + others`.
const DESCRIBING_WORD: u32 = 1 << 16;

/// Fields that describe what a skill is for (name, keywords, description, hints, path), as
/// opposed to its body text: the evidence factor counts request words matched there.
const DESCRIBING_FIELDS: [bool; NUM_FIELDS] = [true, true, true, true, false, false, true];

/// One alternative of a query slot: a vocabulary term and what it scores with.
#[derive(Debug, Clone)]
struct Alt {
    term: u32,
    kind: &'static str,
    /// What it scores with: its factor (1, or that of a prefix or typo alternative) times
    /// `min(idf(term), idf(request term))`.
    idf: f64,
}

/// One request term and its alternatives.
#[derive(Debug, Clone)]
struct Slot {
    /// How it was written.
    surface: String,
    weight: f64,
    /// idf of the term itself (that of an unseen term when the catalogue lacks it).
    idf: f64,
    /// Whether the term is a word of the request (not a join or an abbreviation).
    word: bool,
    known: bool,
    alts: Vec<Alt>,
}

/// A pair of request words close together (see the module docs).
#[derive(Debug, Clone)]
struct Pair {
    /// `pair_weight * (idf(a) + idf(b)) / 2`.
    weight: f64,
    /// Numbers of the two terms.
    terms: [u32; 2],
    /// How they were written.
    surface: String,
}

/// A prepared query.
#[derive(Debug, Clone)]
struct Query {
    slots: Vec<Slot>,
    pairs: Vec<Pair>,
    /// Ceiling of the slots' raw score (every slot present and saturated); pairs come on top.
    max: f64,
    /// Number of word slots.
    words: usize,
}

/// The search structure over all documents.
///
/// Layout (a few flat arrays, so that the engine's memory holds about 10 bytes per posting):
/// terms are numbered in sorted order; the postings of term `t` are
/// `offsets[t]..offsets[t + 1]` of `docs` (document number and flag, [`DocIds`]), by
/// document; their `sat` (saturated BM25F frequency) is in `sat`, or, for a term in at least
/// half the documents, in its dense row of one value per document (`dense`); their per-field
/// frequencies, needed only by `explain`, are packed in `tf_bytes` (see [`encode_tf`]) from
/// `tf_offsets[t]`.
#[derive(Debug, Default)]
pub struct SearchIndex {
    params: Params,
    n_docs: usize,
    /// The vocabulary, sorted, concatenated (term `t` ends at `vocab.ends[t]`); shared with
    /// [`SearchIndex::known`].
    vocab: std::sync::Arc<crate::text::Vocab>,
    /// Typo candidates (terms of at least 2 documents) by byte length.
    typo_by_len: Vec<Vec<u32>>,
    /// Their character signatures ([`char_signature`]), derived (not in snapshots).
    typo_sig: Vec<Vec<u64>>,
    /// Where the terms of each first two bytes start, derived (not in snapshots): the first
    /// two steps of a descent of the vocabulary (`vocab.rs`).
    prefix2: Vec<u32>,
    /// Every term's number, found by its bytes, derived (not in snapshots): a request term
    /// the vocabulary has is looked up without a descent (`vocab.rs`).
    term_table: hashbrown::HashTable<u32>,
    /// `idf_of(n_docs, df)` for every `df` up to `n_docs`, derived (not in snapshots): a
    /// request's alternatives read their idf here instead of taking a logarithm each.
    idf_by_df: Vec<f64>,
    offsets: Vec<u32>,
    docs: DocIds,
    /// `tf~ / (k1 + tf~)` per posting.
    sat: Vec<f32>,
    /// The postings of the terms in at least half the documents, one value per document,
    /// derived (not in snapshots): [`DenseRows`].
    dense: DenseRows,
    tf_offsets: Vec<u32>,
    tf_bytes: Vec<u8>,
    /// Where in `tf_bytes` every [`TF_SKIP`]-th posting (of all terms, in order) starts,
    /// derived on the first `explain` that needs it (not in snapshots, not built by a
    /// server that never explains): a posting's frequencies are found without decoding
    /// those of the term's postings before it one by one ([`SearchIndex::posting_tf`]).
    tf_skips: std::sync::OnceLock<Vec<u32>>,
    /// Per document, per field: number of words.
    lens: Vec<[u32; NUM_FIELDS]>,
    /// Mean field lengths (at least 1).
    avg: [f64; NUM_FIELDS],
    priority: Vec<i32>,
    paths: Vec<String>,
    /// Per document, the terms of its name, [`SEQ_BREAK`], then those of its description, in
    /// order (for pairs): document `d`'s are `seq[seq_ends[d - 1]..seq_ends[d]]`.
    seq: Vec<u32>,
    seq_ends: Vec<u32>,
    /// The collection's lowercase words and the number of each one's term
    /// ([`KNOWN_DROPPED`]: dropped); shared with [`SearchIndex::known`].
    words: std::sync::Arc<crate::text::WordList>,
    /// A table of those words, over `words` and `vocab`, derived (not in snapshots): a
    /// request's words found there are not stemmed again ([`crate::text::KnownWords`]).
    known: Option<std::sync::Arc<crate::text::KnownWords>>,
}

/// Postings between two entries of [`SearchIndex::tf_skips`].
const TF_SKIP: usize = 64;

/// [`crate::text::WordList::terms`] of a word the analysis drops (a stop word, a number).
const KNOWN_DROPPED: u32 = crate::text::DROPPED;

/// Separates the name's terms from the description's in [`SearchIndex::seq`].
const SEQ_BREAK: u32 = u32::MAX;
