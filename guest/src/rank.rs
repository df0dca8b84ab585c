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

use crate::codec::{Raw, decode, encode, from_raw};
use crate::model::{ExplainTerm, Explanation};
use crate::text::{Analyzer, JOINED, Term, analyze};
use std::cmp::Ordering;
use std::collections::HashSet;

mod draft;
pub use draft::{Draft, DraftScore, WithDraft};

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

/// Document numbers of postings, each with a flag in its top bit: the term occurs in a field
/// that describes the skill ([`DESCRIBING_FIELDS`]). 16 bits each when every document number
/// fits in 15 bits, else 32.
#[derive(Debug)]
enum DocIds {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl Default for DocIds {
    fn default() -> Self {
        Self::Narrow(Vec::new())
    }
}

/// A packed document number of [`DocIds`].
trait DocId: Copy {
    fn doc(self) -> usize;
    fn describes(self) -> bool;
}

impl DocId for u16 {
    #[inline]
    fn doc(self) -> usize {
        usize::from(self & 0x7fff)
    }
    #[inline]
    fn describes(self) -> bool {
        self & 0x8000 != 0
    }
}

impl DocId for u32 {
    #[inline]
    fn doc(self) -> usize {
        (self & 0x7fff_ffff) as usize
    }
    #[inline]
    fn describes(self) -> bool {
        self & 0x8000_0000 != 0
    }
}

impl DocIds {
    /// `len` zeroed numbers, narrow when `n_docs` allows.
    fn zeroed(n_docs: usize, len: usize) -> Self {
        if n_docs <= 0x8000 {
            Self::Narrow(vec![0; len])
        } else {
            Self::Wide(vec![0; len])
        }
    }

    fn set(&mut self, i: usize, doc: usize, describes: bool) {
        match self {
            Self::Narrow(v) => v[i] = doc as u16 | if describes { 0x8000 } else { 0 },
            Self::Wide(v) => v[i] = doc as u32 | if describes { 0x8000_0000 } else { 0 },
        }
    }

    /// (document, describes) of posting `i`.
    fn get(&self, i: usize) -> (usize, bool) {
        match self {
            Self::Narrow(v) => (v[i].doc(), v[i].describes()),
            Self::Wide(v) => (v[i].doc(), v[i].describes()),
        }
    }

    /// Position of `doc` among postings `range` (sorted by document).
    fn find(&self, range: std::ops::Range<usize>, doc: usize) -> Option<usize> {
        fn find<T: DocId>(v: &[T], start: usize, doc: usize) -> Option<usize> {
            v.binary_search_by_key(&doc, |d| d.doc())
                .ok()
                .map(|i| start + i)
        }
        match self {
            Self::Narrow(v) => find(&v[range.clone()], range.start, doc),
            Self::Wide(v) => find(&v[range.clone()], range.start, doc),
        }
    }

    /// `f(document, describes, sat)` for postings `range`.
    #[inline]
    fn each(&self, range: std::ops::Range<usize>, sat: &[f32], f: impl FnMut(usize, bool, f32)) {
        #[inline]
        fn each<T: DocId>(v: &[T], sat: &[f32], mut f: impl FnMut(usize, bool, f32)) {
            for (&d, &s) in v.iter().zip(sat) {
                f(d.doc(), d.describes(), s);
            }
        }
        match self {
            Self::Narrow(v) => each(&v[range.clone()], &sat[range], f),
            Self::Wide(v) => each(&v[range.clone()], &sat[range], f),
        }
    }
}

/// Packing of matched word counts: `describing * DESCRIBING_WORD + others`.
const DESCRIBING_WORD: u32 = 1 << 16;

/// Fields that describe what a skill is for (name, keywords, description, hints, path), as
/// opposed to its body text: the evidence factor counts request words matched there.
const DESCRIBING_FIELDS: [bool; NUM_FIELDS] = [true, true, true, true, false, false, true];

/// One alternative of a query slot: a vocabulary term and its factor.
#[derive(Debug, Clone)]
struct Alt {
    term: u32,
    factor: f64,
    kind: &'static str,
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
/// `offsets[t]..offsets[t + 1]` of `docs` (document number and flag, [`DocIds`]) and `sat`
/// (saturated BM25F frequency), by document; their per-field frequencies, needed only by
/// `explain`, are packed in `tf_bytes` (see [`encode_tf`]) from `tf_offsets[t]`.
#[derive(Debug, Default)]
pub struct SearchIndex {
    params: Params,
    n_docs: usize,
    /// The vocabulary, sorted, concatenated: term `t` ends at `term_ends[t]`.
    terms: String,
    term_ends: Vec<u32>,
    /// Typo candidates (terms of at least 2 documents) by byte length.
    typo_by_len: Vec<Vec<u32>>,
    offsets: Vec<u32>,
    docs: DocIds,
    /// `tf~ / (k1 + tf~)` per posting.
    sat: Vec<f32>,
    tf_offsets: Vec<u32>,
    tf_bytes: Vec<u8>,
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
}

/// Separates the name's terms from the description's in [`SearchIndex::seq`].
const SEQ_BREAK: u32 = u32::MAX;

/// Whether terms `a` and `b` occur at most `window` terms apart in `seq` (not across a
/// [`SEQ_BREAK`]); `Some(0)` when found before the break (the name), `Some(2)` after it (the
/// description).
fn pair_field(seq: &[u32], a: u32, b: u32, window: usize) -> Option<usize> {
    let mut field = 0;
    for (i, &x) in seq.iter().enumerate() {
        if x == SEQ_BREAK {
            field = 2;
            continue;
        }
        if x != a && x != b {
            continue;
        }
        let other = if x == a { b } else { a };
        for &y in seq[i + 1..].iter().take(window) {
            if y == SEQ_BREAK {
                break;
            }
            if y == other {
                return Some(field);
            }
        }
    }
    None
}

/// Order-free key of two term numbers.
fn pair_key(a: u32, b: u32) -> u64 {
    (u64::from(a.min(b)) << 32) | u64::from(a.max(b))
}

/// Calls `f` with every pair of distinct terms of `seq` at most `window` positions apart.
fn for_each_pair(seq: &[u32], window: usize, mut f: impl FnMut(u32, u32)) {
    for (i, &a) in seq.iter().enumerate() {
        for &b in seq.iter().skip(i + 1).take(window) {
            if a != b {
                f(a, b);
            }
        }
    }
}

/// The pieces of the text of each field of `doc`, as indexed (the pieces of a field are
/// analysed as if joined by whitespace).
fn field_pieces(
    doc: &SearchDoc,
    body_bytes: usize,
    mut f: impl FnMut(usize, &mut dyn Iterator<Item = &str>),
) {
    let last = doc.skill_path.rsplit('/').next().unwrap_or("");
    let extra = (!last.is_empty() && !last.eq_ignore_ascii_case(&doc.name)).then_some(last);
    f(0, &mut std::iter::once(doc.name.as_str()).chain(extra));
    f(1, &mut doc.keywords.iter().map(String::as_str));
    f(2, &mut std::iter::once(doc.description.as_str()));
    f(3, &mut std::iter::once(doc.hints.as_str()));
    f(4, &mut std::iter::once(doc.headings.as_str()));
    f(
        5,
        &mut std::iter::once(truncate_utf8(&doc.body_prefix, body_bytes)),
    );
    let segs = doc.skill_path.split('/').count();
    f(
        6,
        &mut doc.skill_path.split('/').take(segs.saturating_sub(1)),
    );
}

/// Append `v` as a LEB128 varint.
fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Read a LEB128 varint at `*pos`.
fn get_varint(bytes: &[u8], pos: &mut usize) -> u32 {
    let mut v = 0u32;
    let mut shift = 0;
    loop {
        let b = bytes[*pos];
        *pos += 1;
        v |= u32::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// Append per-field frequencies, packed into at most 22 bytes: a frequency of 1 to 15 in a
/// single field (the usual case) is one byte `0x80 | field << 4 | tf`; otherwise a byte with
/// one bit per non-zero field (below `0x80`), then each non-zero frequency as a varint.
fn encode_tf(out: &mut Vec<u8>, tf: &[u16; NUM_FIELDS]) {
    encode_lanes(out, &lanes_of(tf));
}

/// Per-field frequencies as 16-bit lanes: field `f` in `lanes[f / 4]`, bits `16 * (f % 4)`
/// up (the eighth lane is always zero). Counting in place and finding the non-zero fields
/// take a few word operations instead of a loop over the fields.
type Lanes = [u64; 2];

/// The lanes of `tf`.
fn lanes_of(tf: &[u16; NUM_FIELDS]) -> Lanes {
    let mut lanes = [0u64; 2];
    for (f, &t) in tf.iter().enumerate() {
        lanes[f / 4] |= u64::from(t) << (16 * (f % 4));
    }
    lanes
}

/// Frequency of field `f` in `lanes`.
#[inline]
fn lane(lanes: &Lanes, f: usize) -> u16 {
    (lanes[f / 4] >> (16 * (f % 4))) as u16
}

/// One more occurrence in field `f` (saturating at `u16::MAX`, as `u16::saturating_add`).
#[inline]
fn lane_add(lanes: &mut Lanes, f: usize) {
    let shift = 16 * (f % 4);
    let w = &mut lanes[f / 4];
    if (*w >> shift) & 0xffff != 0xffff {
        *w += 1 << shift;
    }
}

/// [`encode_tf`] of the frequencies in `lanes`.
#[inline]
fn encode_lanes(out: &mut Vec<u8>, lanes: &Lanes) {
    let mask = nonzero_lanes(lanes);
    if mask.is_power_of_two() {
        let field = mask.trailing_zeros() as usize;
        let t = lane(lanes, field);
        if t <= 15 {
            out.push(0x80 | (field as u8) << 4 | t as u8);
            return;
        }
    }
    out.push(mask as u8);
    for f in 0..NUM_FIELDS {
        if mask & 1 << f != 0 {
            put_varint(out, u32::from(lane(lanes, f)));
        }
    }
}

/// One bit per non-zero frequency of `tf` (bit `f` for field `f`).
#[cfg(test)]
fn nonzero_fields(tf: &[u16; NUM_FIELDS]) -> u32 {
    nonzero_lanes(&lanes_of(tf))
}

/// One bit per non-zero lane of `lanes` (bit `f` for field `f`), without a branch per
/// field: a lane's top bit set when the lane is not zero, the four top bits of a word
/// gathered by one multiply (the shifted copies land on distinct bits, so no sum carries).
#[inline]
fn nonzero_lanes(lanes: &Lanes) -> u32 {
    const LOW: u64 = 0x7fff_7fff_7fff_7fff;
    const GATHER: u64 = 1 << 45 | 1 << 30 | 1 << 15 | 1;
    let mask = |x: u64| {
        let top = (((x & LOW) + LOW) | x) & !LOW;
        ((top >> 15).wrapping_mul(GATHER) >> 45 & 0xf) as u32
    };
    mask(lanes[0]) | mask(lanes[1]) << 4
}

/// The inverse of [`encode_tf`].
fn decode_tf(bytes: &[u8], pos: &mut usize) -> [u16; NUM_FIELDS] {
    let first = bytes[*pos];
    *pos += 1;
    let mut tf = [0u16; NUM_FIELDS];
    if first & 0x80 != 0 {
        tf[usize::from(first >> 4 & 7)] = u16::from(first & 15);
        return tf;
    }
    for (f, t) in tf.iter_mut().enumerate() {
        if first & (1 << f) != 0 {
            *t = u16::try_from(get_varint(bytes, pos)).unwrap_or(u16::MAX);
        }
    }
    tf
}

/// Length of the [`encode_tf`] bytes at the start of `bytes` (read without decoding them).
#[inline]
fn packed_tf_len(bytes: &[u8]) -> usize {
    let first = bytes[0];
    if first & 0x80 != 0 {
        return 1;
    }
    let mut len = 1;
    for _ in 0..first.count_ones() {
        while bytes[len] & 0x80 != 0 {
            len += 1;
        }
        len += 1;
    }
    len
}

/// Sort term numbers (distinct or not) in increasing order: an LSD radix sort by bytes (as
/// many passes as the largest number needs) for long lists, `scratch` as the second buffer;
/// a comparison sort for short ones.
fn sort_ids(ids: &mut Vec<u32>, scratch: &mut Vec<u32>) {
    if ids.len() < 64 {
        ids.sort_unstable();
        return;
    }
    let max = ids.iter().copied().max().unwrap_or(0);
    let passes = (32 - max.leading_zeros()).div_ceil(8);
    scratch.clear();
    scratch.resize(ids.len(), 0);
    for pass in 0..passes {
        let shift = pass * 8;
        let mut count = [0u32; 257];
        for &id in ids.iter() {
            count[((id >> shift) & 0xff) as usize + 1] += 1;
        }
        for d in 1..257 {
            count[d] += count[d - 1];
        }
        for &id in ids.iter() {
            let d = ((id >> shift) & 0xff) as usize;
            scratch[count[d] as usize] = id;
            count[d] += 1;
        }
        std::mem::swap(ids, scratch);
    }
}

/// The analysed text of one document, waiting for [`Builder::build`]: its field lengths and
/// its terms (numbered by the builder's analyser) with their per-field frequencies, packed
/// (per term, by increasing number: the varint gap from the previous number, then
/// [`encode_tf`]).
#[derive(Debug, Clone, Default)]
pub struct Analysed {
    lens: [u32; NUM_FIELDS],
    terms: Box<[u8]>,
    /// The terms of the name, [`SEQ_BREAK`], those of the description (for pairs).
    seq: Box<[u32]>,
}

impl Analysed {
    /// Every (term, its per-field frequencies as [`encode_tf`] packed them).
    #[inline]
    fn for_each_raw(&self, mut f: impl FnMut(u32, &[u8])) {
        let (mut pos, mut id) = (0, 0u32);
        while pos < self.terms.len() {
            id += get_varint(&self.terms, &mut pos);
            let len = packed_tf_len(&self.terms[pos..]);
            f(id, &self.terms[pos..pos + len]);
            pos += len;
        }
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.terms.len() + self.seq.len() * 4
    }
}

/// Builds a [`SearchIndex`]: [`Builder::analyse`] each document as it arrives (only the
/// compact [`Analysed`] form needs to be kept, not its text), then [`Builder::build`] with the
/// documents in their final order.
#[derive(Debug, Default)]
pub struct Builder {
    params: Params,
    analyzer: Analyzer,
    /// Per term: its index in `tfs` while a document is analysed (`u32::MAX`: absent).
    slot: Vec<u32>,
    /// The document's terms, in order of appearance, and their per-field frequencies.
    ids: Vec<u32>,
    tfs: Vec<Lanes>,
    scratch: Vec<u8>,
    sort_scratch: Vec<u32>,
    /// The document's name terms and description terms, in order.
    name_seq: Vec<u32>,
    desc_seq: Vec<u32>,
    /// The terms of the field being analysed ([`Analyzer::run_pieces_terms`]).
    terms: Vec<u32>,
}

impl Builder {
    pub fn new(params: Params) -> Self {
        Self {
            params,
            ..Self::default()
        }
    }

    /// Analyse one document.
    pub fn analyse(&mut self, doc: &SearchDoc) -> Analysed {
        let mut lens = [0u32; NUM_FIELDS];
        let Self {
            params,
            analyzer,
            slot,
            ids,
            tfs,
            scratch,
            sort_scratch,
            name_seq,
            desc_seq,
            terms,
        } = self;
        name_seq.clear();
        desc_seq.clear();
        field_pieces(doc, params.body_bytes, |f, pieces| {
            let len = &mut lens[f];
            let seq = match f {
                0 => Some(&mut *name_seq),
                2 => Some(&mut *desc_seq),
                _ => None,
            };
            terms.clear();
            analyzer.run_pieces_terms(pieces, terms);
            if slot.len() < analyzer.terms_len() {
                slot.resize(analyzer.terms_len(), u32::MAX);
            }
            for &x in terms.iter() {
                *len += u32::from(x & JOINED == 0);
                let term = x & !JOINED;
                let s = &mut slot[term as usize];
                if *s == u32::MAX {
                    *s = tfs.len() as u32;
                    ids.push(term);
                    tfs.push([0; 2]);
                }
                lane_add(&mut tfs[*s as usize], f);
            }
            if let Some(seq) = seq {
                // (a word's entry is its term: no flag)
                seq.extend(terms.iter().copied().filter(|&x| x & JOINED == 0));
            }
        });
        sort_ids(ids, sort_scratch);
        scratch.clear();
        let mut prev = 0;
        for &term in ids.iter() {
            let s = std::mem::replace(&mut slot[term as usize], u32::MAX);
            put_varint(scratch, term - prev);
            prev = term;
            encode_lanes(scratch, &tfs[s as usize]);
        }
        ids.clear();
        tfs.clear();
        let seq = name_seq
            .iter()
            .copied()
            .chain(std::iter::once(SEQ_BREAK))
            .chain(desc_seq.iter().copied())
            .collect();
        Analysed {
            lens,
            terms: Box::from(scratch.as_slice()),
            seq,
        }
    }

    /// The index over `docs` (document `i` is `docs[i]`, with skill path `paths[i]` and
    /// priority `priority[i]`). Terms no document has are left out.
    pub fn build(self, docs: Vec<Analysed>, paths: Vec<String>, priority: Vec<i32>) -> SearchIndex {
        let Self {
            params, analyzer, ..
        } = self;
        let n_docs = docs.len();
        let n_terms = analyzer.terms_len();
        // Pass 1: per term, its document frequency and its packed frequency bytes (side by
        // side: one memory access per posting).
        let mut counts = vec![[0u32; 2]; n_terms];
        for d in &docs {
            d.for_each_raw(|t, tf| {
                let c = &mut counts[t as usize];
                c[0] += 1;
                c[1] += tf.len() as u32;
            });
        }
        // The vocabulary in sorted order (compared by their first 8 bytes first).
        let mut keyed: Vec<(u64, u32)> = (0..n_terms as u32)
            .filter(|&t| counts[t as usize][0] > 0)
            .map(|t| (prefix_key(analyzer.term(t)), t))
            .collect();
        keyed.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| analyzer.term(a.1).cmp(analyzer.term(b.1)))
        });
        let order: Vec<u32> = keyed.into_iter().map(|k| k.1).collect();
        let mut remap = vec![u32::MAX; n_terms];
        let mut terms = String::with_capacity(order.iter().map(|&t| analyzer.term(t).len()).sum());
        let mut term_ends = Vec::with_capacity(order.len());
        let mut typo_by_len: Vec<Vec<u32>> = Vec::new();
        let mut offsets = Vec::with_capacity(order.len() + 1);
        let mut tf_offsets = Vec::with_capacity(order.len() + 1);
        let (mut at, mut tf_at) = (0u32, 0u32);
        for (new, &old) in order.iter().enumerate() {
            let new = new as u32;
            remap[old as usize] = new;
            let text = analyzer.term(old);
            terms.push_str(text);
            term_ends.push(terms.len() as u32);
            let [df, tf_len] = counts[old as usize];
            // from now on, the term's cursors (by its old number: no remapping per posting)
            counts[old as usize] = [at, tf_at];
            if df >= 2 {
                if typo_by_len.len() <= text.len() {
                    typo_by_len.resize(text.len() + 1, Vec::new());
                }
                typo_by_len[text.len()].push(new);
            }
            offsets.push(at);
            tf_offsets.push(tf_at);
            at += df;
            tf_at += tf_len;
        }
        offsets.push(at);
        tf_offsets.push(tf_at);
        drop((analyzer, order));
        let mut cursors = counts;
        // Field length normalisation.
        let mut avg = [0.0; NUM_FIELDS];
        for d in &docs {
            for (a, x) in avg.iter_mut().zip(&d.lens) {
                *a += f64::from(*x);
            }
        }
        for a in &mut avg {
            *a = if n_docs == 0 {
                1.0
            } else {
                (*a / n_docs as f64).max(1.0)
            };
        }
        // Pass 2: postings, document by document (so each list is sorted by document).
        let mut post_docs = DocIds::zeroed(n_docs, at as usize);
        let mut sat = vec![0f32; at as usize];
        let mut tf_bytes = vec![0u8; tf_at as usize];
        let mut lens = Vec::with_capacity(n_docs);
        let mut seq = Vec::with_capacity(docs.iter().map(|d| d.seq.len()).sum());
        let mut seq_ends = Vec::with_capacity(n_docs);
        for (d, doc) in docs.into_iter().enumerate() {
            seq.extend(doc.seq.iter().map(|&t| {
                if t == SEQ_BREAK {
                    SEQ_BREAK
                } else {
                    remap[t as usize]
                }
            }));
            seq_ends.push(seq.len() as u32);
            let norm = field_norm(&params, &doc.lens, &avg);
            doc.for_each_raw(|old, packed| {
                // the next posting of the term and the place of its packed frequencies
                let c = &mut cursors[old as usize];
                let (i, at) = (c[0] as usize, c[1] as usize);
                c[0] += 1;
                c[1] += packed.len() as u32;
                let (describes, ptf) = match *packed {
                    // one field, 1 to 15 (the usual case): no need to decode
                    [byte] if byte & 0x80 != 0 => {
                        let f = usize::from(byte >> 4 & 7);
                        (DESCRIBING_FIELDS[f], pseudo_tf_one(norm[f], byte & 15))
                    }
                    _ => {
                        let tf = decode_tf(packed, &mut 0);
                        let describes = tf.iter().zip(DESCRIBING_FIELDS).any(|(&t, m)| m && t > 0);
                        (describes, pseudo_tf(&norm, &tf))
                    }
                };
                post_docs.set(i, d, describes);
                sat[i] = (ptf / (params.k1 + ptf)) as f32;
                // the packed bytes are those `encode_tf` gives for `tf`: copied as they are
                if let [byte] = packed {
                    tf_bytes[at] = *byte;
                } else {
                    tf_bytes[at..at + packed.len()].copy_from_slice(packed);
                }
            });
            lens.push(doc.lens);
        }
        SearchIndex {
            params,
            n_docs,
            terms,
            term_ends,
            typo_by_len,
            offsets,
            docs: post_docs,
            sat,
            tf_offsets,
            tf_bytes,
            lens,
            avg,
            priority,
            paths,
            seq,
            seq_ends,
        }
    }
}

/// [`SearchIndex::finalise`] for a request of ceiling `max` and `q_words` word slots.
fn finalise_with(
    params: &Params,
    max: f64,
    q_words: usize,
    raw: f64,
    pair: f64,
    words: u32,
) -> (f64, f64, f64, f64) {
    let describing = words / DESCRIBING_WORD;
    let all = describing + words % DESCRIBING_WORD;
    let share = if max > 0.0 {
        ((raw + pair) / max).max(0.0)
    } else {
        0.0
    };
    let coverage = share.min(1.0);
    let evidence = if q_words >= 2 && (all <= 1 || describing == 0) {
        params.single_word_factor
    } else {
        1.0
    };
    (coverage * evidence, coverage, evidence, share * evidence)
}

/// The first 8 bytes of `s`, big-endian, zero-padded: comparing keys orders strings as
/// comparing the strings does, except that equal keys need the full comparison.
fn prefix_key(s: &str) -> u64 {
    let mut k = [0u8; 8];
    let n = s.len().min(8);
    k[..n].copy_from_slice(&s.as_bytes()[..n]);
    u64::from_be_bytes(k)
}

/// Per field: `w_f / (1 - b_f + b_f * len_f / avglen_f)`.
fn field_norm(
    params: &Params,
    lens: &[u32; NUM_FIELDS],
    avg: &[f64; NUM_FIELDS],
) -> [f64; NUM_FIELDS] {
    let mut n = [0.0; NUM_FIELDS];
    for f in 0..NUM_FIELDS {
        let b = params.b[f];
        n[f] = params.weight[f] / (1.0 - b + b * f64::from(lens[f]) / avg[f]);
    }
    n
}

/// The longest prefix of `s` of at most `max` bytes ending on a character boundary.
pub fn truncate_utf8(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `ln(1 + (N - df + 0.5) / (df + 0.5))`: positive even for a term every document has.
pub fn idf_of(n_docs: usize, df: usize) -> f64 {
    let n = n_docs as f64;
    let df = df as f64;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// tf~ of a posting, given its document's field norms.
fn pseudo_tf(norm: &[f64; NUM_FIELDS], tf: &[u16; NUM_FIELDS]) -> f64 {
    norm.iter()
        .zip(tf)
        .filter(|(_, tf)| **tf != 0)
        .map(|(n, tf)| f64::from(*tf) * n)
        .sum()
}

/// [`pseudo_tf`] when the only non-zero frequency is `tf`, in a field of norm `norm` (the
/// same sum of one term, so the same bits).
#[inline]
fn pseudo_tf_one(norm: f64, tf: u8) -> f64 {
    std::iter::once(f64::from(tf) * norm).sum()
}

/// Whether `a` and `b` are at most one edit apart (insertion, deletion, substitution or
/// transposition of adjacent characters).
pub fn within_one_edit(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        one_edit(a.as_bytes(), b.as_bytes())
    } else {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        one_edit(&a, &b)
    }
}

fn one_edit<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    let (la, lb) = (a.len(), b.len());
    if la.abs_diff(lb) > 1 {
        return false;
    }
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if prefix == la && prefix == lb {
        return true;
    }
    let (ra, rb) = (&a[prefix..], &b[prefix..]);
    if la == lb {
        // substitution or transposition
        ra[1..] == rb[1..]
            || (ra.len() >= 2 && ra[0] == rb[1] && ra[1] == rb[0] && ra[2..] == rb[2..])
    } else if la > lb {
        ra[1..] == *rb
    } else {
        *ra == rb[1..]
    }
}

impl SearchIndex {
    pub fn build(docs: &[SearchDoc]) -> Self {
        Self::build_with(docs, Params::default())
    }

    /// Build with explicit parameters (for evaluation and tests).
    pub fn build_with(docs: &[SearchDoc], params: Params) -> Self {
        let mut builder = Builder::new(params);
        let analysed = docs.iter().map(|d| builder.analyse(d)).collect();
        builder.build(
            analysed,
            docs.iter().map(|d| d.skill_path.clone()).collect(),
            docs.iter().map(|d| d.priority).collect(),
        )
    }

    /// Take the index apart into its documents' [`Analysed`] forms, numbered by `builder`
    /// (to build again with more documents).
    pub fn into_analysed(mut self, builder: &mut Builder) -> Vec<Analysed> {
        let all_lens = std::mem::take(&mut self.lens);
        let mut per_doc: Vec<Vec<(u32, [u16; NUM_FIELDS])>> = vec![Vec::new(); self.n_docs];
        for t in 0..self.term_ends.len() {
            let id = builder.analyzer.intern_term(self.term(t as u32));
            let mut pos = self.tf_offsets[t] as usize;
            for i in self.range(t as u32) {
                let tf = decode_tf(&self.tf_bytes, &mut pos);
                per_doc[self.docs.get(i).0].push((id, tf));
            }
        }
        per_doc
            .into_iter()
            .zip(all_lens)
            .enumerate()
            .map(|(d, (mut entries, lens))| {
                entries.sort_unstable_by_key(|e| e.0);
                let mut out = Vec::new();
                let mut prev = 0;
                for (term, tf) in entries {
                    put_varint(&mut out, term - prev);
                    prev = term;
                    encode_tf(&mut out, &tf);
                }
                let start = if d == 0 { 0 } else { self.seq_ends[d - 1] };
                let seq = self.seq[start as usize..self.seq_ends[d] as usize]
                    .iter()
                    .map(|&t| {
                        if t == SEQ_BREAK {
                            SEQ_BREAK
                        } else {
                            builder.analyzer.intern_term(self.term(t))
                        }
                    })
                    .collect();
                Analysed {
                    lens,
                    terms: out.into_boxed_slice(),
                    seq,
                }
            })
            .collect()
    }

    /// Number of sections [`SearchIndex::encode_part`] writes.
    pub const PARTS: u32 = 8;

    /// Part `k` (below [`SearchIndex::PARTS`]) of the index, for a snapshot: each part is a
    /// few fields, the large arrays as raw little-endian bytes.
    pub fn encode_part(&self, k: u32) -> Vec<u8> {
        match k {
            0 => encode(&(
                &self.params,
                self.n_docs as u64,
                self.avg,
                &self.typo_by_len,
            )),
            1 => encode(&(&self.terms, Raw(&self.term_ends))),
            2 => encode(&Raw(&self.offsets)),
            3 => match &self.docs {
                DocIds::Narrow(v) => encode(&(false, Raw(v))),
                DocIds::Wide(v) => encode(&(true, Raw(v))),
            },
            4 => encode(&Raw(&self.sat)),
            5 => encode(&(Raw(&self.tf_offsets), Raw(&self.tf_bytes))),
            6 => encode(&(Raw(&self.lens), Raw(&self.priority), &self.paths)),
            _ => encode(&(Raw(&self.seq), Raw(&self.seq_ends))),
        }
    }

    /// Read part `k` of [`SearchIndex::encode_part`] into `self` (parts in any order; check
    /// the whole with [`SearchIndex::check`]).
    pub fn decode_part(&mut self, k: u32, bytes: &[u8]) -> Result<(), String> {
        match k {
            0 => {
                let (params, n_docs, avg, typo): (Params, u64, _, _) = decode(bytes)?;
                self.params = params;
                self.n_docs = usize::try_from(n_docs).map_err(|e| e.to_string())?;
                self.avg = avg;
                self.typo_by_len = typo;
            }
            1 => {
                let (terms, ends): (String, &[u8]) = decode(bytes)?;
                self.terms = terms;
                self.term_ends = from_raw(ends)?;
            }
            2 => self.offsets = from_raw(decode(bytes)?)?,
            3 => {
                let (wide, ids): (bool, &[u8]) = decode(bytes)?;
                self.docs = if wide {
                    DocIds::Wide(from_raw(ids)?)
                } else {
                    DocIds::Narrow(from_raw(ids)?)
                };
            }
            4 => self.sat = from_raw(decode(bytes)?)?,
            5 => {
                let (offsets, tf): (&[u8], &[u8]) = decode(bytes)?;
                self.tf_offsets = from_raw(offsets)?;
                self.tf_bytes = tf.to_vec();
            }
            6 => {
                let (lens, priority, paths): (&[u8], &[u8], Vec<String>) = decode(bytes)?;
                self.lens = from_raw(lens)?;
                self.priority = from_raw(priority)?;
                self.paths = paths;
            }
            7 => {
                let (seq, ends): (&[u8], &[u8]) = decode(bytes)?;
                self.seq = from_raw(seq)?;
                self.seq_ends = from_raw(ends)?;
            }
            _ => return Err(format!("no search index part {k}")),
        }
        Ok(())
    }

    /// Whether the parts fit together (lengths and offsets in range), so that queries cannot
    /// index out of bounds.
    pub fn check(&self) -> Result<(), String> {
        let n = self.n_docs;
        let postings = match &self.docs {
            DocIds::Narrow(v) => v.len(),
            DocIds::Wide(v) => v.len(),
        };
        let n_terms = self.term_ends.len();
        let ascending = |v: &[u32], end: usize| {
            v.windows(2).all(|w| w[0] <= w[1]) && v.last().is_none_or(|&l| l as usize <= end)
        };
        let fail = |what: &str| Err(format!("search index: {what}"));
        if self.lens.len() != n || self.priority.len() != n || self.paths.len() != n {
            return fail("per-document arrays disagree with the number of documents");
        }
        if self.seq_ends.len() != n || !ascending(&self.seq_ends, self.seq.len()) {
            return fail("term sequences out of range");
        }
        if !ascending(&self.term_ends, self.terms.len())
            || !self
                .term_ends
                .iter()
                .all(|&e| self.terms.is_char_boundary(e as usize))
        {
            return fail("vocabulary out of range");
        }
        if self.offsets.len() != n_terms + 1
            || self.offsets.first() != Some(&0)
            || !ascending(&self.offsets, postings)
            || self.offsets.last().map(|&l| l as usize) != Some(postings)
            || self.sat.len() != postings
        {
            return fail("postings out of range");
        }
        if self.tf_offsets.len() != n_terms + 1 || !ascending(&self.tf_offsets, self.tf_bytes.len())
        {
            return fail("frequencies out of range");
        }
        // The largest document number (a loop the compiler vectorises).
        let max_doc = match &self.docs {
            DocIds::Narrow(v) => v.iter().map(|&d| usize::from(d & 0x7fff)).max(),
            DocIds::Wide(v) => v.iter().map(|&d| (d & 0x7fff_ffff) as usize).max(),
        };
        let docs_ok = max_doc.is_none_or(|m| m < n);
        let seq_ok = self
            .seq
            .iter()
            .all(|&t| t == SEQ_BREAK || (t as usize) < n_terms);
        let typo_ok = self
            .typo_by_len
            .iter()
            .flatten()
            .all(|&t| (t as usize) < n_terms);
        if !docs_ok || !seq_ok || !typo_ok {
            return fail("a document or term number out of range");
        }
        Ok(())
    }

    /// Text of term `t`.
    fn term(&self, t: u32) -> &str {
        let i = t as usize;
        let start = if i == 0 {
            0
        } else {
            self.term_ends[i - 1] as usize
        };
        &self.terms[start..self.term_ends[i] as usize]
    }

    /// Number of term `text`, if indexed.
    fn term_id(&self, text: &str) -> Option<u32> {
        let n = self.term_ends.len() as u32;
        let mut lo = 0u32;
        let mut hi = n;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.term(mid).cmp(text) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The first term not less than `text`.
    fn term_lower_bound(&self, text: &str) -> u32 {
        let mut lo = 0u32;
        let mut hi = self.term_ends.len() as u32;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.term(mid) < text {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Postings range of term `t`.
    fn range(&self, t: u32) -> std::ops::Range<usize> {
        self.offsets[t as usize] as usize..self.offsets[t as usize + 1] as usize
    }

    /// Position of `doc` in term `t`'s postings.
    fn find_posting(&self, t: u32, doc: usize) -> Option<usize> {
        self.docs.find(self.range(t), doc)
    }

    /// Per-field frequencies of posting `i` of term `t`.
    fn posting_tf(&self, t: u32, i: usize) -> [u16; NUM_FIELDS] {
        let mut pos = self.tf_offsets[t as usize] as usize;
        for _ in self.offsets[t as usize] as usize..i {
            decode_tf(&self.tf_bytes, &mut pos);
        }
        decode_tf(&self.tf_bytes, &mut pos)
    }

    /// idf of term `t`.
    fn idf(&self, t: u32) -> f64 {
        idf_of(self.n_docs, self.range(t).len())
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn len(&self) -> usize {
        self.n_docs
    }

    pub fn is_empty(&self) -> bool {
        self.n_docs == 0
    }

    /// Number of distinct terms indexed.
    pub fn vocabulary_len(&self) -> usize {
        self.term_ends.len()
    }

    /// idf of a term unknown to the catalogue.
    fn unseen_idf(&self) -> f64 {
        idf_of(self.n_docs, 0)
    }

    /// The request's slots (one per distinct analysed term).
    fn slots(&self, terms: &[Term]) -> Vec<Slot> {
        let p = &self.params;
        let mut seen = HashSet::new();
        let mut slots = Vec::new();
        for t in terms {
            if !seen.insert(t.term.clone()) {
                continue;
            }
            let mut alts = Vec::new();
            let known = self.term_id(&t.term);
            if let Some(id) = known {
                alts.push(Alt {
                    term: id,
                    factor: 1.0,
                    kind: "exact",
                });
            }
            let n = t.term.chars().count();
            if n >= p.prefix_min_len && p.prefix_factor > 0.0 {
                // vocabulary terms the request term is a prefix of
                let start = self.term_lower_bound(&t.term);
                for id in start..self.term_ends.len() as u32 {
                    if !self.term(id).starts_with(t.term.as_str()) {
                        break;
                    }
                    if Some(id) != known {
                        alts.push(Alt {
                            term: id,
                            factor: p.prefix_factor,
                            kind: "prefix",
                        });
                    }
                }
                // vocabulary terms that are a prefix of the request term
                for (cut, _) in t.term.char_indices().skip(p.prefix_min_len) {
                    if let Some(id) = self.term_id(&t.term[..cut]) {
                        alts.push(Alt {
                            term: id,
                            factor: p.prefix_factor,
                            kind: "prefix",
                        });
                    }
                }
            }
            if known.is_none() && n >= p.typo_min_len && p.typo_factor > 0.0 {
                let l = t.term.len();
                for len in l.saturating_sub(2)..=l + 2 {
                    for &id in self.typo_by_len.get(len).map_or(&[][..], |v| v.as_slice()) {
                        if within_one_edit(self.term(id), &t.term) {
                            alts.push(Alt {
                                term: id,
                                factor: p.typo_factor,
                                kind: "typo",
                            });
                        }
                    }
                }
            }
            slots.push(Slot {
                surface: t.surface.clone(),
                weight: if t.joined { p.joined_weight } else { 1.0 },
                idf: known.map_or_else(|| self.unseen_idf(), |id| self.idf(id)),
                word: !t.joined,
                known: known.is_some(),
                alts,
            });
        }
        slots
    }

    /// The request's pairs: known word terms at most `pair_window` words apart, once each.
    fn pairs(&self, terms: &[Term]) -> Vec<Pair> {
        let p = &self.params;
        if p.pair_weight <= 0.0 {
            return Vec::new();
        }
        let words: Vec<(u32, &str)> = terms
            .iter()
            .filter(|t| !t.joined)
            .filter_map(|t| Some((self.term_id(&t.term)?, t.surface.as_str())))
            .collect();
        let ids: Vec<u32> = words.iter().map(|w| w.0).collect();
        let surface = |id: u32| words.iter().find(|w| w.0 == id).map_or("", |w| w.1);
        let mut seen = HashSet::new();
        let mut pairs = Vec::new();
        for_each_pair(&ids, p.pair_window, |a, b| {
            if seen.insert((a.min(b), a.max(b))) {
                pairs.push(Pair {
                    weight: p.pair_weight * 0.5 * (self.idf(a) + self.idf(b)),
                    terms: [a, b],
                    surface: format!("{} {}", surface(a), surface(b)),
                });
            }
        });
        pairs
    }

    /// Analyse a request once: its slots, its pairs and the ceiling of its raw score.
    fn prepare(&self, query: &str) -> Query {
        let terms = analyze(query);
        let slots = self.slots(&terms);
        let pairs = self.pairs(&terms);
        let max = slots.iter().map(|s| s.weight * s.idf).sum();
        let words = slots.iter().filter(|s| s.word).count();
        Query {
            slots,
            pairs,
            max,
            words,
        }
    }

    /// Where `doc` says the two terms of `pair` close together: `Some(0)` in its name,
    /// `Some(2)` in its description.
    fn pair_in(&self, pair: &Pair, doc: usize) -> Option<usize> {
        let start = if doc == 0 { 0 } else { self.seq_ends[doc - 1] };
        let seq = &self.seq[start as usize..self.seq_ends[doc] as usize];
        pair_field(seq, pair.terms[0], pair.terms[1], self.params.pair_window)
    }

    /// The request's pairs as (order-free key of their two terms, index in `q.pairs`), sorted.
    fn pair_keys(q: &Query) -> Vec<(u64, usize)> {
        let mut keys: Vec<(u64, usize)> = q
            .pairs
            .iter()
            .enumerate()
            .map(|(i, p)| (pair_key(p.terms[0], p.terms[1]), i))
            .collect();
        keys.sort_unstable();
        keys
    }

    /// The pair bonus of document `d` (see the module docs): the weights of the request pairs
    /// (`keys`, from [`Self::pair_keys`]) its name or description holds, each once. `mask` has
    /// the bit of every term of a request pair set; `hits` and `held` are scratch space.
    fn doc_pairs(
        &self,
        q: &Query,
        keys: &[(u64, usize)],
        mask: &[u64],
        d: usize,
        scratch: &mut (Vec<(usize, u32)>, Vec<usize>),
    ) -> f64 {
        let (hits, held) = scratch;
        let start = if d == 0 { 0 } else { self.seq_ends[d - 1] };
        let seq = &self.seq[start as usize..self.seq_ends[d] as usize];
        held.clear();
        for field in seq.split(|&t| t == SEQ_BREAK) {
            hits.clear();
            hits.extend(
                field
                    .iter()
                    .enumerate()
                    .filter(|&(_, &t)| mask[t as usize / 64] >> (t % 64) & 1 == 1)
                    .map(|(i, &t)| (i, t)),
            );
            for (j, &(i, a)) in hits.iter().enumerate() {
                for &(k, b) in &hits[j + 1..] {
                    if k - i > self.params.pair_window {
                        break;
                    }
                    if a == b {
                        continue;
                    }
                    let key = pair_key(a, b);
                    let at = keys.partition_point(|x| x.0 < key);
                    held.extend(keys[at..].iter().take_while(|x| x.0 == key).map(|x| x.1));
                }
            }
        }
        held.sort_unstable();
        held.dedup();
        held.iter().map(|&i| q.pairs[i].weight).sum()
    }

    /// The idf an alternative scores with: its own, but never more than the request term's
    /// (a prefix or typo expansion to a rare word must not outweigh the word itself).
    fn alt_idf(&self, slot: &Slot, alt: &Alt) -> f64 {
        self.idf(alt.term).min(slot.idf)
    }

    /// Raw scores (before normalisation) and matched word counts of every document.
    fn raw_scores(&self, q: &Query) -> (Vec<f64>, Vec<u32>) {
        let mut total = vec![0.0f64; self.n_docs];
        let mut words = vec![0u32; self.n_docs];
        let mut best = vec![0.0f64; self.n_docs];
        let mut describes = vec![false; self.n_docs];
        let mut touched: Vec<u32> = Vec::new();
        for slot in &q.slots {
            for alt in &slot.alts {
                let idf = alt.factor * self.alt_idf(slot, alt);
                self.docs
                    .each(self.range(alt.term), &self.sat, |d, m, sat| {
                        let c = idf * f64::from(sat);
                        if best[d] == 0.0 {
                            touched.push(d as u32);
                        }
                        if c > best[d] {
                            best[d] = c;
                        }
                        describes[d] |= m;
                    });
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
        }
        (total, words)
    }

    /// Score of a document: `(score, coverage, evidence factor, sort key)`. `raw` is the sum of
    /// its slot scores, `pair` that of the pairs it holds, `words` counts the request words it
    /// matched, plus [`DESCRIBING_WORD`] - 1 for each matched in a describing field.
    ///
    /// Coverage is `(raw + pair) / max`, capped at 1; the sort key is the same value uncapped
    /// (times the evidence factor), so that the rare skills past the cap keep their order.
    fn finalise(&self, q: &Query, raw: f64, pair: f64, words: u32) -> (f64, f64, f64, f64) {
        finalise_with(&self.params, q.max, q.words, raw, pair, words)
    }

    /// Whether `doc` holds vocabulary term `term`.
    fn has_term(&self, term: u32, doc: usize) -> bool {
        self.find_posting(term, doc).is_some()
    }

    /// Best first, scores normalised to 0..=1, at most `limit`.
    ///
    /// Ties are broken by priority (higher first), then skill path. Documents matching no
    /// request term are not returned. `matched` lists the request words (as written) the skill
    /// matched, directly or through an expansion.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Scored> {
        let q = self.prepare(query);
        if q.slots.is_empty() || limit == 0 {
            return Vec::new();
        }
        let (raw, words) = self.raw_scores(&q);
        let mut out: Vec<Scored> = Vec::new();
        let mut key = vec![0.0f64; self.n_docs];
        for (d, (&r, &w)) in raw.iter().zip(&words).enumerate() {
            if r > 0.0 {
                let (score, _, _, k) = self.finalise(&q, r, 0.0, w);
                key[d] = k;
                out.push(Scored {
                    doc: d,
                    score,
                    matched: Vec::new(),
                });
            }
        }
        if !q.pairs.is_empty() && q.max > 0.0 {
            // A skill gains at most `bound` from pairs: only those that could then reach the
            // `limit` best are looked at (exact: the others stay below them).
            let bound: f64 = q.pairs.iter().map(|p| p.weight).sum::<f64>() / q.max;
            let threshold = if out.len() > limit {
                let mut keys: Vec<f64> = out.iter().map(|s| key[s.doc]).collect();
                let (_, kth, _) = keys.select_nth_unstable_by(limit - 1, |a, b| {
                    b.partial_cmp(a).unwrap_or(Ordering::Equal)
                });
                *kth
            } else {
                f64::NEG_INFINITY
            };
            let keys = Self::pair_keys(&q);
            let mut mask = vec![0u64; self.term_ends.len().div_ceil(64)];
            for t in q.pairs.iter().flat_map(|p| p.terms) {
                mask[t as usize / 64] |= 1 << (t % 64);
            }
            let mut scratch = (Vec::new(), Vec::new());
            for s in &mut out {
                let d = s.doc;
                if words[d] / DESCRIBING_WORD < 2 || key[d] + bound < threshold {
                    continue;
                }
                let pair = self.doc_pairs(&q, &keys, &mask, d, &mut scratch);
                if pair > 0.0 {
                    let (score, _, _, k) = self.finalise(&q, raw[d], pair, words[d]);
                    s.score = score;
                    key[d] = k;
                }
            }
        }
        let cmp = |a: &Scored, b: &Scored| {
            key[b.doc]
                .partial_cmp(&key[a.doc])
                .unwrap_or(Ordering::Equal)
                .then_with(|| self.priority[b.doc].cmp(&self.priority[a.doc]))
                .then_with(|| self.paths[a.doc].cmp(&self.paths[b.doc]))
        };
        if out.len() > limit {
            out.select_nth_unstable_by(limit - 1, cmp);
            out.truncate(limit);
        }
        out.sort_by(cmp);
        for s in &mut out {
            s.matched = q
                .slots
                .iter()
                .filter(|slot| slot.alts.iter().any(|a| self.has_term(a.term, s.doc)))
                .map(|slot| slot.surface.clone())
                .collect();
        }
        out
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
        let mut terms = Vec::new();
        let mut notes = Vec::new();
        if doc >= self.n_docs {
            notes.push("no such document".to_string());
            return Explanation {
                skill_path: path,
                score: 0.0,
                terms,
                notes,
            };
        }
        let q = self.prepare(query);
        let mut raw = 0.0;
        let mut words = 0u32;
        let mut lines: Vec<(usize, String, f64)> = Vec::new();
        for slot in &q.slots {
            let mut best: Option<(f64, &Alt, usize)> = None;
            for alt in &slot.alts {
                if let Some(i) = self.find_posting(alt.term, doc) {
                    let c = alt.factor * self.alt_idf(slot, alt) * f64::from(self.sat[i]);
                    if best.as_ref().is_none_or(|(b, _, _)| c > *b) {
                        best = Some((c, alt, i));
                    }
                }
            }
            let Some((c, alt, i)) = best else { continue };
            let p_tf = self.posting_tf(alt.term, i);
            let c = c * slot.weight;
            raw += c;
            let describing = slot.alts.iter().any(|a| {
                self.find_posting(a.term, doc)
                    .is_some_and(|i| self.docs.get(i).1)
            });
            if slot.word {
                words += if describing { DESCRIBING_WORD } else { 1 };
            }
            let norm = field_norm(&self.params, &self.lens[doc], &self.avg);
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
        let mut pair_raw = 0.0;
        if raw > 0.0 {
            for pair in &q.pairs {
                if let Some(f) = self.pair_in(pair, doc) {
                    pair_raw += pair.weight;
                    lines.push((f, format!("{} (pair)", pair.surface), pair.weight));
                }
            }
        }
        let (score, coverage, evidence, _) = self.finalise(&q, raw, pair_raw, words);
        let total = raw + pair_raw;
        let scale = if total > 0.0 { score / total } else { 0.0 };
        for (f, term, c) in lines {
            terms.push(ExplainTerm {
                field: FIELD_NAMES[f].to_string(),
                term,
                contribution: c * scale,
            });
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(path: &str, name: &str, desc: &str, body: &str) -> SearchDoc {
        SearchDoc {
            skill_path: path.into(),
            name: name.into(),
            description: desc.into(),
            body_prefix: body.into(),
            ..Default::default()
        }
    }

    fn corpus() -> Vec<SearchDoc> {
        vec![
            doc(
                "db/postgres-migrations",
                "postgres-migrations",
                "Write safe PostgreSQL schema migrations with zero downtime and rollbacks.",
                "# Migrations\nAdd columns, backfill, and lock-free index creation.",
            ),
            doc(
                "k8s/network-policies",
                "k8s-network-policies",
                "Kubernetes NetworkPolicy patterns: default deny, namespace isolation.",
                "# Policies\nBlock traffic between namespaces.",
            ),
            doc(
                "js/react-components",
                "react-components",
                "Build React components in TypeScript with hooks and tests.",
                "# Components\nUse function components.",
            ),
            doc(
                "docs/pdf-extract",
                "pdf-extract",
                "Extract text and tables from PDF documents.",
                "# PDF\nUse pdfplumber for tables.",
            ),
            doc(
                "git/pr-review",
                "pr-review",
                "Review pull requests and leave actionable comments.",
                "# Review\nRead the diff first.",
            ),
        ]
    }

    fn top(index: &SearchIndex, q: &str) -> Option<String> {
        index
            .search(q, 1)
            .first()
            .map(|s| index.paths[s.doc].clone())
    }

    #[test]
    fn idf_formula() {
        assert!((idf_of(10, 1) - (1.0f64 + 9.5 / 1.5).ln()).abs() < 1e-12);
        assert!((idf_of(10, 0) - (1.0f64 + 10.5 / 0.5).ln()).abs() < 1e-12);
        // rarer terms weigh more; a term in every document still weighs a little
        assert!(idf_of(100, 1) > idf_of(100, 50));
        assert!(idf_of(100, 100) > 0.0);
    }

    #[test]
    fn finds_the_obvious_skill() {
        let index = SearchIndex::build(&corpus());
        assert_eq!(
            top(&index, "postgres schema migration").as_deref(),
            Some("db/postgres-migrations")
        );
        assert_eq!(
            top(&index, "kubernetes default deny").as_deref(),
            Some("k8s/network-policies")
        );
        // abbreviation table: k8s <-> kubernetes, pull request -> pr
        assert_eq!(
            top(&index, "k8s namespace isolation").as_deref(),
            Some("k8s/network-policies")
        );
        assert_eq!(
            top(&index, "review my pull request").as_deref(),
            Some("git/pr-review")
        );
        assert_eq!(
            top(&index, "extract tables from a pdf").as_deref(),
            Some("docs/pdf-extract")
        );
    }

    #[test]
    fn prefix_and_typo_alternatives() {
        let index = SearchIndex::build(&corpus());
        // the stem "compon" (components) is a prefix of "componentri"
        assert_eq!(
            top(&index, "componentry").as_deref(),
            Some("js/react-components")
        );
        // one typo in a word the catalogue knows (typo candidates are terms of 2+ skills)
        let mut docs = corpus();
        docs.push(doc("iac/terraform", "terraform", "Terraform modules", ""));
        docs.push(doc("iac/plan", "plan", "Review a terraform plan", ""));
        let index = SearchIndex::build(&docs);
        assert_eq!(
            top(&index, "terrafrom modules").as_deref(),
            Some("iac/terraform")
        );
        let e = index.explain("terrafrom", 5);
        assert!(e.terms.iter().any(|t| t.term.contains("typo")), "{e:?}");
    }

    #[test]
    fn scores_are_normalised_and_sorted() {
        let index = SearchIndex::build(&corpus());
        for q in [
            "postgres",
            "react hooks typescript components tests",
            "zero downtime schema migrations with rollbacks",
            "weather",
            "pdf",
        ] {
            let hits = index.search(q, 10);
            for w in hits.windows(2) {
                assert!(w[0].score >= w[1].score);
            }
            for h in &hits {
                assert!(h.score > 0.0 && h.score <= 1.0, "{q}: {}", h.score);
            }
        }
        // a request made only of the skill's own distinctive words scores high
        let hits = index.search("pdf tables extract", 1);
        assert!(hits[0].score > 0.5, "{}", hits[0].score);
    }

    #[test]
    fn off_topic_requests_score_low() {
        let index = SearchIndex::build(&corpus());
        for q in [
            "what's the weather in Paris tomorrow",
            "tell me a joke about cats",
        ] {
            let best = index.search(q, 1).first().map_or(0.0, |s| s.score);
            assert!(best < 0.2, "{q}: {best}");
        }
    }

    #[test]
    fn evidence_factor_cuts_single_word_and_body_only_matches() {
        let index = SearchIndex::build(&corpus());
        // "postgres" alone: one word, no halving
        let one = index.search("postgres", 1)[0].score;
        let e = index.explain("postgres", 0);
        assert!(!e.notes.iter().any(|n| n.contains("x 0.4")), "{e:?}");
        assert!(one > 0.2);
        // "postgres" plus an unknown word: only one of two words matched -> halved
        let e = index.explain("postgres zzzunknownword", 0);
        assert!(e.notes.iter().any(|n| n.contains("x 0.4")), "{e:?}");
        // body-only evidence ("lock-free" and "backfill" appear only in the body) -> halved
        let e = index.explain("backfill lock-free", 0);
        assert!(e.score > 0.0);
        assert!(e.notes.iter().any(|n| n.contains("x 0.4")), "{e:?}");
        // two words in the description: full score
        let e = index.explain("zero downtime", 0);
        assert!(!e.notes.iter().any(|n| n.contains("x 0.4")), "{e:?}");
    }

    #[test]
    fn empty_and_stop_word_queries() {
        let index = SearchIndex::build(&corpus());
        assert!(index.search("", 10).is_empty());
        assert!(index.search("the of and le la", 10).is_empty());
        assert!(index.search("postgres", 0).is_empty());
        let empty = SearchIndex::build(&[]);
        assert!(empty.is_empty());
        assert!(empty.search("postgres", 10).is_empty());
    }

    #[test]
    fn explain_sums_to_the_search_score() {
        let index = SearchIndex::build(&corpus());
        for q in [
            "postgres schema migration",
            "k8s default deny",
            "review pull requests",
            "weather",
        ] {
            for s in index.search(q, 5) {
                let e = index.explain(q, s.doc);
                assert!((e.score - s.score).abs() < 1e-9, "{q}");
                let sum: f64 = e.terms.iter().map(|t| t.contribution).sum();
                assert!((sum - e.score).abs() < 1e-9, "{q}: {sum} vs {}", e.score);
                assert!(
                    e.terms
                        .iter()
                        .all(|t| FIELD_NAMES.contains(&t.field.as_str()))
                );
                assert_eq!(e.skill_path, index.paths[s.doc]);
            }
        }
        let e = index.explain("postgres", 99);
        assert_eq!(e.score, 0.0);
        let e = index.explain("weather", 0);
        assert_eq!(e.score, 0.0);
        assert!(e.terms.is_empty());
    }

    #[test]
    fn explain_reports_fields() {
        let index = SearchIndex::build(&corpus());
        let e = index.explain("postgres lock-free", 0);
        let fields: Vec<&str> = e.terms.iter().map(|t| t.field.as_str()).collect();
        assert!(fields.contains(&"name"), "{fields:?}");
        assert!(fields.contains(&"description"), "{fields:?}");
        assert!(fields.contains(&"body"), "{fields:?}");
    }

    #[test]
    fn deterministic() {
        let docs = corpus();
        let a = SearchIndex::build(&docs);
        let b = SearchIndex::build(&docs);
        for q in [
            "postgres",
            "react components",
            "review",
            "tables pdf documents",
        ] {
            assert_eq!(a.search(q, 10), b.search(q, 10));
            assert_eq!(a.search(q, 10), a.search(q, 10));
        }
    }

    #[test]
    fn ties_break_by_priority_then_path() {
        let mut docs = vec![
            doc("b", "alpha", "same words here", ""),
            doc("a", "alpha", "same words here", ""),
            doc("c", "alpha", "same words here", ""),
        ];
        docs[2].priority = 5;
        let index = SearchIndex::build(&docs);
        let order: Vec<&str> = index
            .search("same words", 10)
            .iter()
            .map(|s| index.paths[s.doc].as_str())
            .collect();
        assert_eq!(order, vec!["c", "a", "b"]);
    }

    #[test]
    fn pairs_favour_words_said_together() {
        // both skills hold "schema" and "review"; only one says them together
        let docs = vec![
            doc(
                "a/apart",
                "apart",
                "Review pull requests for style; also covers the database schema of services.",
                "",
            ),
            doc(
                "b/together",
                "together",
                "Schema review for services and their database, with pull requests for style.",
                "",
            ),
        ];
        let index = SearchIndex::build(&docs);
        assert_eq!(top(&index, "review schema").as_deref(), Some("b/together"));
        let e = index.explain("review schema", 1);
        assert!(e.terms.iter().any(|t| t.term.contains("(pair)")), "{e:?}");
        let sum: f64 = e.terms.iter().map(|t| t.contribution).sum();
        assert!((sum - e.score).abs() < 1e-9);
        // without pairs the two tie on the words alone (or nearly)
        let flat = SearchIndex::build_with(
            &docs,
            Params {
                pair_weight: 0.0,
                ..Params::default()
            },
        );
        let e = flat.explain("review schema", 1);
        assert!(!e.terms.iter().any(|t| t.term.contains("(pair)")), "{e:?}");
        // a skill holding no pair scores as without proximity
        let a = index.search("review schema", 2);
        let b = flat.search("review schema", 2);
        let apart = |v: &[Scored]| v.iter().find(|s| s.doc == 0).map(|s| s.score);
        assert_eq!(apart(&a), apart(&b));
    }

    #[test]
    fn matched_lists_request_words() {
        let index = SearchIndex::build(&corpus());
        let hits = index.search("Postgres weather migrations", 1);
        assert_eq!(hits[0].matched, vec!["postgres", "migrations"]);
    }

    #[test]
    fn body_is_bounded() {
        let long = format!("{} needle", "filler ".repeat(2000));
        let docs = vec![doc("a", "a", "x", &long), doc("b", "b", "y", "needle")];
        let index = SearchIndex::build(&docs);
        let paths: Vec<&str> = index
            .search("needle", 10)
            .iter()
            .map(|s| index.paths[s.doc].as_str())
            .collect();
        assert_eq!(paths, vec!["b"]);
    }

    #[test]
    fn one_edit() {
        assert!(within_one_edit("kubernetes", "kubernets"));
        assert!(within_one_edit("kubernetes", "kubrenetes"));
        assert!(within_one_edit("kubernetes", "kubernetez"));
        assert!(within_one_edit("kubernetes", "kubernetess"));
        assert!(within_one_edit("same", "same"));
        assert!(!within_one_edit("kubernetes", "kubrenetez"));
        assert!(!within_one_edit("abc", "abcde"));
        assert!(within_one_edit("café", "cafe"));
    }

    /// The packing `encode_tf` must keep (the former array-returning encoder).
    fn pack_tf_reference(tf: &[u16; NUM_FIELDS]) -> Vec<u8> {
        let mut out = vec![0u8];
        let mut fields = tf.iter().enumerate().filter(|(_, t)| **t != 0);
        if let (Some((f, &t)), None) = (fields.next(), fields.next())
            && t <= 15
        {
            out[0] = 0x80 | (f as u8) << 4 | t as u8;
            return out;
        }
        for (f, &t) in tf.iter().enumerate() {
            if t != 0 {
                out[0] |= 1 << f;
                put_varint(&mut out, u32::from(t));
            }
        }
        out
    }

    #[test]
    fn encode_tf_matches_the_reference_packing() {
        let values = [0u16, 1, 2, 15, 16, 127, 128, 300, 16_383, 16_384, u16::MAX];
        let mut x = 99u64;
        for _ in 0..20_000 {
            let mut tf = [0u16; NUM_FIELDS];
            for t in &mut tf {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // mostly zeros, as in real postings
                *t = if x.is_multiple_of(3) {
                    values[(x >> 8) as usize % values.len()]
                } else {
                    0
                };
            }
            let mut v = vec![0xaa];
            encode_tf(&mut v, &tf);
            assert_eq!(v[1..], pack_tf_reference(&tf)[..], "{tf:?}");
            assert_eq!(packed_tf_len(&v[1..]), v.len() - 1);
            assert_eq!(decode_tf(&v, &mut 1), tf);
        }
        for f in 0..NUM_FIELDS {
            for t in [1u16, 15, 16] {
                let mut tf = [0; NUM_FIELDS];
                tf[f] = t;
                let mut v = Vec::new();
                encode_tf(&mut v, &tf);
                assert_eq!(v, pack_tf_reference(&tf), "{tf:?}");
            }
        }
    }

    #[test]
    fn nonzero_fields_matches_a_loop() {
        let naive = |tf: &[u16; NUM_FIELDS]| {
            let mut m = 0u32;
            for (f, &t) in tf.iter().enumerate() {
                if t != 0 {
                    m |= 1 << f;
                }
            }
            m
        };
        let values = [0u16, 1, 2, 0x7fff, 0x8000, 0x8001, 0xff00, 0x00ff, u16::MAX];
        // every mask with values at the lane edges
        for m in 0..1u32 << NUM_FIELDS {
            for &v in &values[1..] {
                let mut tf = [0u16; NUM_FIELDS];
                for (f, t) in tf.iter_mut().enumerate() {
                    if m & 1 << f != 0 {
                        *t = v;
                    }
                }
                assert_eq!(nonzero_fields(&tf), m, "{tf:?}");
            }
        }
        let mut x = 7u64;
        for _ in 0..100_000 {
            let mut tf = [0u16; NUM_FIELDS];
            for t in &mut tf {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *t = match x % 4 {
                    0 => x as u16 >> (x >> 20 & 15),
                    1 => values[(x >> 8) as usize % values.len()],
                    _ => 0,
                };
            }
            assert_eq!(nonzero_fields(&tf), naive(&tf), "{tf:?}");
        }
    }

    #[test]
    fn lanes_count_like_saturating_u16s() {
        let mut x = 21u64;
        for round in 0..2000 {
            let mut tf = [0u16; NUM_FIELDS];
            // some fields start near the top, so that saturation is reached
            if round % 3 == 0 {
                for t in &mut tf {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    *t = if x.is_multiple_of(2) {
                        u16::MAX - (x >> 8) as u16 % 4
                    } else {
                        0
                    };
                }
            }
            let mut lanes = lanes_of(&tf);
            for _ in 0..(round % 50) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let f = (x >> 5) as usize % NUM_FIELDS;
                tf[f] = tf[f].saturating_add(1);
                lane_add(&mut lanes, f);
                assert_eq!(lanes, lanes_of(&tf), "{tf:?}");
            }
            for (f, &t) in tf.iter().enumerate() {
                assert_eq!(lane(&lanes, f), t);
            }
            assert_eq!(lanes[1] >> 48, 0);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            encode_lanes(&mut a, &lanes);
            encode_tf(&mut b, &tf);
            assert_eq!(a, b);
            assert_eq!(a, pack_tf_reference(&tf));
        }
    }

    #[test]
    fn pseudo_tf_of_one_field_has_the_same_bits() {
        let mut x = 5u64;
        let norms = [
            0.0,
            -0.0,
            1.0,
            1e-300,
            3.7,
            f64::MAX,
            0.1 + 0.2,
            f64::MIN_POSITIVE,
        ];
        for i in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut norm = [0.0; NUM_FIELDS];
            for (k, n) in norm.iter_mut().enumerate() {
                *n = if i < 64 {
                    norms[(i + k) % norms.len()]
                } else {
                    f64::from_bits(x.rotate_left(k as u32 * 9) >> 2)
                };
            }
            let f = (x >> 40) as usize % NUM_FIELDS;
            let t = (x >> 50) as u8 % 15 + 1;
            let mut tf = [0u16; NUM_FIELDS];
            tf[f] = u16::from(t);
            assert_eq!(
                pseudo_tf_one(norm[f], t).to_bits(),
                pseudo_tf(&norm, &tf).to_bits(),
                "{norm:?} {tf:?}"
            );
        }
    }

    #[test]
    fn packed_frequencies_round_trip() {
        let cases = [
            [0; NUM_FIELDS],
            [1, 0, 0, 0, 0, 0, 0],
            [0, 0, 0, 0, 0, 0, 1],
            [0, 0, 15, 0, 0, 0, 0],
            [0, 0, 16, 0, 0, 0, 0],
            [2, 3, 0, 0, 0, 0, 0],
            [127, 128, 300, 16_383, 16_384, 40_000, u16::MAX],
        ];
        for tf in cases {
            let mut v = Vec::new();
            encode_tf(&mut v, &tf);
            assert_eq!(packed_tf_len(&v), v.len());
            // followed by more bytes (the next term's), the length is the same
            let mut w = v.clone();
            w.extend_from_slice(&[0x81, 0xff, 0x7f, 3]);
            assert_eq!(packed_tf_len(&w), v.len());
            let mut pos = 0;
            assert_eq!(decode_tf(&v, &mut pos), tf);
            assert_eq!(pos, v.len());
        }
        for n in [0u32, 1, 127, 128, 300, 1 << 21, u32::MAX] {
            let mut v = Vec::new();
            put_varint(&mut v, n);
            let mut pos = 0;
            assert_eq!(get_varint(&v, &mut pos), n);
        }
    }

    #[test]
    fn analysed_forms_survive_taking_an_index_apart() {
        let docs = corpus();
        let a = SearchIndex::build(&docs);
        let mut builder = Builder::new(Params::default());
        let again = a.into_analysed(&mut builder);
        let b = builder.build(
            again,
            docs.iter().map(|d| d.skill_path.clone()).collect(),
            docs.iter().map(|d| d.priority).collect(),
        );
        let a = SearchIndex::build(&docs);
        for q in [
            "postgres",
            "review pull requests",
            "k8s deny",
            "componentry",
        ] {
            assert_eq!(a.search(q, 10), b.search(q, 10));
            for d in 0..docs.len() {
                assert_eq!(a.explain(q, d), b.explain(q, d));
            }
        }
        assert_eq!(a.vocabulary_len(), b.vocabulary_len());
    }

    #[test]
    fn ids_sort_like_sort_unstable() {
        let mut scratch = Vec::new();
        let mut x = 12345u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % m) as u32
        };
        let mut cases: Vec<Vec<u32>> = vec![
            vec![],
            vec![7],
            (0..200).rev().collect(),
            (0..200).collect(),
            vec![5; 100],
            vec![u32::MAX, 0, 1 << 31, 255, 256, 65_535, 65_536, 1 << 24],
        ];
        for (len, m) in [(63, 1000), (64, 1000), (65, 10), (300, 300), (1000, 40_000)] {
            cases.push((0..len).map(|_| next(m)).collect());
        }
        cases.push((0..500).map(|_| next(u64::from(u32::MAX))).collect());
        let mut wide: Vec<u32> = (0..100).map(|_| next(1 << 30)).collect();
        wide.extend([u32::MAX, 0, u32::MAX - 1]);
        cases.push(wide);
        for ids in cases {
            let mut want = ids.clone();
            want.sort_unstable();
            let mut got = ids.clone();
            sort_ids(&mut got, &mut scratch);
            assert_eq!(got, want);
        }
    }

    #[test]
    fn prefix_keys_order_like_strings() {
        let mut words = vec![
            "",
            "a",
            "ab",
            "abc",
            "abcdefgh",
            "abcdefgha",
            "abcdefghb",
            "abcdefgi",
            "b",
            "ba",
            "zzzzzzzzzzzz",
            "zzzzzzzz",
            "café",
            "cafe",
            "caff",
            "日本",
            "2fa",
            "a2",
            "é",
        ];
        words.sort_unstable_by(|a, b| prefix_key(a).cmp(&prefix_key(b)).then_with(|| a.cmp(b)));
        let mut plain = words.clone();
        plain.sort_unstable();
        assert_eq!(words, plain);
        for w in &plain {
            for v in &plain {
                if prefix_key(w) < prefix_key(v) {
                    assert!(w < v, "{w} {v}");
                }
            }
        }
    }

    #[test]
    fn utf8_truncation() {
        assert_eq!(truncate_utf8("héllo", 2), "h");
        assert_eq!(truncate_utf8("héllo", 3), "hé");
        assert_eq!(truncate_utf8("abc", 10), "abc");
    }
}
