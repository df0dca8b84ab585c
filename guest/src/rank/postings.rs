//! Postings storage: packed document numbers, varints and per-field term frequencies.

use super::*;

/// Document numbers of postings, each with a flag in its top bit: the term occurs in a field
/// that describes the skill ([`DESCRIBING_FIELDS`]). 16 bits each when every document number
/// fits in 15 bits, else 32.
#[derive(Debug)]
pub(super) enum DocIds {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl Default for DocIds {
    fn default() -> Self {
        Self::Narrow(Vec::new())
    }
}

/// A packed document number of [`DocIds`].
pub(super) trait DocId: Copy {
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
    pub(super) fn zeroed(n_docs: usize, len: usize) -> Self {
        if n_docs <= 0x8000 {
            Self::Narrow(vec![0; len])
        } else {
            Self::Wide(vec![0; len])
        }
    }

    pub(super) fn set(&mut self, i: usize, doc: usize, describes: bool) {
        match self {
            Self::Narrow(v) => v[i] = doc as u16 | if describes { 0x8000 } else { 0 },
            Self::Wide(v) => v[i] = doc as u32 | if describes { 0x8000_0000 } else { 0 },
        }
    }

    /// (document, describes) of posting `i`.
    pub(super) fn get(&self, i: usize) -> (usize, bool) {
        match self {
            Self::Narrow(v) => (v[i].doc(), v[i].describes()),
            Self::Wide(v) => (v[i].doc(), v[i].describes()),
        }
    }

    /// Position of `doc` among postings `range` (sorted by document).
    pub(super) fn find(&self, range: std::ops::Range<usize>, doc: usize) -> Option<usize> {
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

    /// `f(document, describes, sat)` for postings `range`, their `sat`s in `sats`.
    #[inline]
    pub(super) fn each(
        &self,
        range: std::ops::Range<usize>,
        sats: Sats<'_>,
        f: impl FnMut(usize, bool, f32),
    ) {
        match (self, sats) {
            (Self::Narrow(v), Sats::Each(s)) => each_of(&v[range], s, f),
            (Self::Wide(v), Sats::Each(s)) => each_of(&v[range], s, f),
            (Self::Narrow(v), Sats::ByDoc(row)) => each_by_doc(&v[range], row, f),
            (Self::Wide(v), Sats::ByDoc(row)) => each_by_doc(&v[range], row, f),
        }
    }
}

/// Where a term's `sat`s are: one per posting, in order (`Each`), or its dense row's, one per
/// document (`ByDoc`, [`DenseRows`]).
#[derive(Clone, Copy)]
pub(super) enum Sats<'a> {
    Each(&'a [f32]),
    ByDoc(&'a [f32]),
}

impl SearchIndex {
    /// Term `t`'s `sat`s.
    #[inline]
    pub(super) fn sats(&self, t: u32) -> Sats<'_> {
        match self.dense.row(t) {
            Some(row) => Sats::ByDoc(row.values),
            None => {
                let start = self.dense.sat_start[t as usize] as usize;
                Sats::Each(&self.sat[start..start + self.range(t).len()])
            }
        }
    }

    /// The `sat` of posting `i` (of term `t`, document `doc`).
    pub(super) fn sat_of(&self, t: u32, i: usize, doc: usize) -> f32 {
        match self.sats(t) {
            Sats::Each(s) => s[i - self.range(t).start],
            Sats::ByDoc(row) => row[doc],
        }
    }
}

/// A reader's place in one term's postings: the next posting to read (`at`), the end of the
/// term's postings, and the document of the posting at `at` (`usize::MAX` past the end), so
/// that a reader with nothing below a bound skips it with one comparison.
pub(super) struct Cursor<'a> {
    pub(super) at: usize,
    pub(super) end: usize,
    pub(super) next: usize,
    /// The first of the term's postings, and its `sat`s.
    start: usize,
    sats: Sats<'a>,
}

impl DocIds {
    /// The document of the first posting of `range` (`usize::MAX` when it is empty).
    #[inline]
    fn doc_at(&self, range: std::ops::Range<usize>) -> usize {
        if range.is_empty() {
            usize::MAX
        } else {
            self.get(range.start).0
        }
    }

    /// A cursor at the first of the postings `range`, their `sat`s in `sats`.
    pub(super) fn cursor<'a>(&self, range: std::ops::Range<usize>, sats: Sats<'a>) -> Cursor<'a> {
        Cursor {
            next: self.doc_at(range.clone()),
            at: range.start,
            end: range.end,
            start: range.start,
            sats,
        }
    }

    /// `f(document, describes, sat)` for the postings at cursor `c` whose document is below
    /// `end` (postings are sorted by document); `c` moves past them.
    #[inline]
    pub(super) fn read_below(&self, c: &mut Cursor, end: usize, f: impl FnMut(usize, bool, f32)) {
        /// How many of `v` are below `end`.
        #[inline]
        fn each<T: DocId>(
            v: &[T],
            sats: Sats<'_>,
            end: usize,
            f: impl FnMut(usize, bool, f32),
        ) -> usize {
            // The count below `end` first, so that the loop over them has no exit of its own.
            let n = below(v, end);
            match sats {
                Sats::Each(s) => each_of(&v[..n], &s[..n], f),
                Sats::ByDoc(row) => each_by_doc(&v[..n], row, f),
            }
            n
        }
        let range = c.at..c.end;
        let sats = match c.sats {
            Sats::Each(s) => Sats::Each(&s[c.at - c.start..]),
            by_doc => by_doc,
        };
        c.at += match self {
            Self::Narrow(v) => each(&v[range], sats, end, f),
            Self::Wide(v) => each(&v[range], sats, end, f),
        };
        c.next = self.doc_at(c.at..c.end);
    }

    /// Moves cursor `c` past its postings whose document is below `end`, reading none (a term
    /// whose values are read from its dense row).
    pub(super) fn skip_below(&self, c: &mut Cursor, end: usize) {
        let range = c.at..c.end;
        c.at += match self {
            Self::Narrow(v) => below(&v[range], end),
            Self::Wide(v) => below(&v[range], end),
        };
        c.next = self.doc_at(c.at..c.end);
    }
}

/// How many of `v` (sorted by document) are below `end`: all of them when the last is, as for
/// most of a rare term's; else by galloping, then bisecting.
#[inline]
fn below<T: DocId>(v: &[T], end: usize) -> usize {
    if v.last().is_some_and(|d| d.doc() < end) {
        return v.len();
    }
    let mut hi = 1;
    while hi < v.len() && v[hi - 1].doc() < end {
        hi *= 2;
    }
    let lo = hi / 2;
    let hi = hi.min(v.len());
    lo + v[lo..hi].partition_point(|d| d.doc() < end)
}

/// `f(document, describes, sat)` for each of `v` with its `sat`, eight at a time: an eighth of
/// the loop's back-edges, each one an interruption check in the compiled WebAssembly (measured
/// through the component: four at a time 16-21% fewer instructions a search than one, eight
/// 2% fewer again on the generated 10,000).
#[inline]
fn each_of<T: DocId>(v: &[T], sat: &[f32], mut f: impl FnMut(usize, bool, f32)) {
    let n = v.len().min(sat.len());
    let (v8, vr) = v[..n].split_at(n & !7);
    let (s8, sr) = sat[..n].split_at(n & !7);
    for (d, s) in v8.chunks_exact(8).zip(s8.chunks_exact(8)) {
        f(d[0].doc(), d[0].describes(), s[0]);
        f(d[1].doc(), d[1].describes(), s[1]);
        f(d[2].doc(), d[2].describes(), s[2]);
        f(d[3].doc(), d[3].describes(), s[3]);
        f(d[4].doc(), d[4].describes(), s[4]);
        f(d[5].doc(), d[5].describes(), s[5]);
        f(d[6].doc(), d[6].describes(), s[6]);
        f(d[7].doc(), d[7].describes(), s[7]);
    }
    for (&d, &s) in vr.iter().zip(sr) {
        f(d.doc(), d.describes(), s);
    }
}

/// The postings of the terms in at least half the documents ([`is_dense`]), as rows of one
/// `sat` per document (`0.0` where the term is absent) with a set of the documents that have
/// the term and one of those that have it in a describing field. Top-k retrieval adds such a
/// term to a window of documents in one pass, without a branch or an index per posting. Their
/// `sat`s are only here (not in [`SearchIndex::sat`]): a row costs about as much memory as
/// the `sat`s and document numbers of a term in half the documents.
#[derive(Debug, Default)]
pub(super) struct DenseRows {
    /// The rows' `sat`s, row after row (stored in snapshots; the rest is derived).
    pub(super) values: Vec<f32>,
    /// Per term, its row's number (`u32::MAX`: none).
    row_of: Vec<u32>,
    /// Per term without a row, where its `sat`s start in [`SearchIndex::sat`].
    sat_start: Vec<u32>,
    /// Per row, `words` words of bits each.
    present: Vec<u64>,
    describing: Vec<u64>,
    n_docs: usize,
    words: usize,
}

/// Whether a term of `df` documents out of `n` has a dense row ([`DenseRows`]).
pub(super) fn is_dense(df: usize, n: usize) -> bool {
    n > 0 && df * 2 >= n
}

/// A term's row of [`DenseRows`]: document `d`'s `sat` is `values[d]`, its bits are bit
/// `d % 64` of word `d / 64`.
#[derive(Clone, Copy)]
pub(super) struct DenseRow<'a> {
    pub(super) values: &'a [f32],
    pub(super) present: &'a [u64],
    pub(super) describing: &'a [u64],
}

/// In a build's cursors, a term's `sat`s go to its dense row (the low bits: its number).
pub(super) const DENSE: u32 = 1 << 31;

impl DenseRows {
    /// Rows of `values` (the rest derived by [`SearchIndex::with_derived`]).
    pub(super) fn of_values(values: Vec<f32>) -> Self {
        Self {
            values,
            ..Self::default()
        }
    }

    /// Term `t`'s row, if it has one.
    #[inline]
    pub(super) fn row(&self, t: u32) -> Option<DenseRow<'_>> {
        let r = *self.row_of.get(t as usize)? as usize;
        (r != u32::MAX as usize).then(|| DenseRow {
            values: &self.values[r * self.n_docs..][..self.n_docs],
            present: &self.present[r * self.words..][..self.words],
            describing: &self.describing[r * self.words..][..self.words],
        })
    }
}

impl SearchIndex {
    /// The number of postings without a dense row (the length of [`SearchIndex::sat`]) and
    /// the number of dense rows, from the offsets.
    pub(super) fn sparse_and_rows(&self) -> (usize, usize) {
        let (mut sparse, mut rows) = (0, 0);
        for t in 0..self.vocab.ends.len() as u32 {
            let df = self.range(t).len();
            if is_dense(df, self.n_docs) {
                rows += 1;
            } else {
                sparse += df;
            }
        }
        (sparse, rows)
    }

    /// Derive the rest of [`SearchIndex::dense`] (after a build or a restore, from
    /// [`SearchIndex::with_derived`]): which term has which row, where the others' `sat`s
    /// start, and the rows' sets.
    pub(super) fn derive_dense(&mut self) {
        let n = self.n_docs;
        let n_terms = self.vocab.ends.len() as u32;
        let (_, rows) = self.sparse_and_rows();
        // (whole windows of bits: a window's words are read without a check)
        let words = n.div_ceil(topk::WINDOW) * topk::BITS;
        let mut d = DenseRows {
            values: std::mem::take(&mut self.dense.values),
            row_of: vec![u32::MAX; n_terms as usize],
            sat_start: vec![0; n_terms as usize],
            present: vec![0; rows * words],
            describing: vec![0; rows * words],
            n_docs: n,
            words,
        };
        let (mut row, mut at) = (0, 0);
        for t in 0..n_terms {
            let r = self.range(t);
            d.sat_start[t as usize] = at as u32;
            if !is_dense(r.len(), n) {
                at += r.len();
                continue;
            }
            d.row_of[t as usize] = row as u32;
            let present = &mut d.present[row * words..];
            let describing = &mut d.describing[row * words..];
            for i in r {
                let (doc, m) = self.docs.get(i);
                present[doc / 64] |= 1 << (doc % 64);
                describing[doc / 64] |= u64::from(m) << (doc % 64);
            }
            row += 1;
        }
        self.dense = d;
    }
}

/// `f(document, describes, sat)` for each of `v`, its `sat` read from `row` by document.
#[inline]
fn each_by_doc<T: DocId>(v: &[T], row: &[f32], mut f: impl FnMut(usize, bool, f32)) {
    for &d in v {
        f(d.doc(), d.describes(), row[d.doc()]);
    }
}

/// Append `v` as a LEB128 varint.
pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Read a LEB128 varint at `*pos`.
pub(super) fn get_varint(bytes: &[u8], pos: &mut usize) -> u32 {
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
pub(super) fn encode_tf(out: &mut Vec<u8>, tf: &[u16; NUM_FIELDS]) {
    encode_lanes(out, &lanes_of(tf));
}

/// Per-field frequencies as 16-bit lanes: field `f` in `lanes[f / 4]`, bits `16 * (f % 4)`
/// up (the eighth lane is always zero). Counting in place and finding the non-zero fields
/// take a few word operations instead of a loop over the fields.
pub(super) type Lanes = [u64; 2];

/// The lanes of `tf`.
pub(super) fn lanes_of(tf: &[u16; NUM_FIELDS]) -> Lanes {
    let mut lanes = [0u64; 2];
    for (f, &t) in tf.iter().enumerate() {
        lanes[f / 4] |= u64::from(t) << (16 * (f % 4));
    }
    lanes
}

/// Frequency of field `f` in `lanes`.
#[inline]
pub(super) fn lane(lanes: &Lanes, f: usize) -> u16 {
    (lanes[f / 4] >> (16 * (f % 4))) as u16
}

/// One more occurrence in field `f` (saturating at `u16::MAX`, as `u16::saturating_add`).
#[inline]
pub(super) fn lane_add(lanes: &mut Lanes, f: usize) {
    let shift = 16 * (f % 4);
    let w = &mut lanes[f / 4];
    if (*w >> shift) & 0xffff != 0xffff {
        *w += 1 << shift;
    }
}

/// [`encode_tf`] of the frequencies in `lanes`.
#[inline]
pub(super) fn encode_lanes(out: &mut Vec<u8>, lanes: &Lanes) {
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
pub(super) fn nonzero_fields(tf: &[u16; NUM_FIELDS]) -> u32 {
    nonzero_lanes(&lanes_of(tf))
}

/// One bit per non-zero lane of `lanes` (bit `f` for field `f`), without a branch per
/// field: a lane's top bit set when the lane is not zero, the four top bits of a word
/// gathered by one multiply (the shifted copies land on distinct bits, so no sum carries).
#[inline]
pub(super) fn nonzero_lanes(lanes: &Lanes) -> u32 {
    pub(super) const LOW: u64 = 0x7fff_7fff_7fff_7fff;
    pub(super) const GATHER: u64 = 1 << 45 | 1 << 30 | 1 << 15 | 1;
    let mask = |x: u64| {
        let top = (((x & LOW) + LOW) | x) & !LOW;
        ((top >> 15).wrapping_mul(GATHER) >> 45 & 0xf) as u32
    };
    mask(lanes[0]) | mask(lanes[1]) << 4
}

/// The inverse of [`encode_tf`].
pub(super) fn decode_tf(bytes: &[u8], pos: &mut usize) -> [u16; NUM_FIELDS] {
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
pub(super) fn packed_tf_len(bytes: &[u8]) -> usize {
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

/// [`packed_tf_len`] of bytes that may end before the packed frequencies do (`None` then).
pub(super) fn checked_tf_len(bytes: &[u8]) -> Option<usize> {
    let first = *bytes.first()?;
    if first & 0x80 != 0 {
        return Some(1);
    }
    let mut len = 1;
    for _ in 0..first.count_ones() {
        while *bytes.get(len)? & 0x80 != 0 {
            len += 1;
        }
        len += 1;
    }
    (len <= bytes.len()).then_some(len)
}

/// Sort term numbers (distinct or not) in increasing order: an LSD radix sort by bytes (as
/// many passes as the largest number needs) for long lists, `scratch` as the second buffer;
/// a comparison sort for short ones.
pub(super) fn sort_ids(ids: &mut Vec<u32>, scratch: &mut Vec<u32>) {
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
