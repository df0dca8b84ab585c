//! The index as snapshot sections (for the index cache), and their consistency check.
//!
//! Parts: 0 holds the few fields and every large array's length, 1 the documents' paths, then
//! each large array follows as raw little-endian chunks of at most [`CHUNK_BYTES`] bytes, one
//! part per chunk. No part is large, so neither the engine nor its host ever holds a whole
//! array twice (bytes and decoded values) while saving or restoring; the restore reserves each
//! array once at its final size and appends the chunks to it.

use super::*;
use crate::codec::{Pod, extend_raw, put_raw};

/// Most bytes of one raw chunk part (tiny in unit tests, so that their indexes span several).
pub const CHUNK_BYTES: usize = if cfg!(test) { 64 } else { 1 << 20 };

/// Number of large arrays, in part order (see [`SearchIndex::array_lens`]).
const ARRAYS: usize = 14;

/// Sizes in bytes of one element of each large array (the document numbers' depend on their
/// width).
fn elem_sizes(wide: bool) -> [usize; ARRAYS] {
    [
        u32::SIZE,                                // term_ends
        u32::SIZE,                                // offsets
        if wide { u32::SIZE } else { u16::SIZE }, // docs
        f32::SIZE,                                // sat
        u32::SIZE,                                // tf_offsets
        u8::SIZE,                                 // tf_bytes
        <[u32; NUM_FIELDS]>::SIZE,                // lens
        i32::SIZE,                                // priority
        u32::SIZE,                                // seq
        u32::SIZE,                                // seq_ends
        f32::SIZE,                                // dense rows' sat
        u8::SIZE,                                 // known_text
        u32::SIZE,                                // known_ends
        u32::SIZE,                                // known_terms
    ]
}

/// Elements of an array of `size`-byte elements in one chunk.
fn per_chunk(size: usize) -> usize {
    (CHUNK_BYTES / size).max(1)
}

/// Where raw part `k` (counted from the first raw part) lies: the array and its elements.
fn locate(
    lens: &[usize; ARRAYS],
    sizes: &[usize; ARRAYS],
    mut k: usize,
) -> Option<(usize, std::ops::Range<usize>)> {
    for a in 0..ARRAYS {
        let per = per_chunk(sizes[a]);
        let chunks = lens[a].div_ceil(per);
        if k < chunks {
            let start = k * per;
            return Some((a, start..(start + per).min(lens[a])));
        }
        k -= chunks;
    }
    None
}

/// Number of parts of an index whose arrays have `lens` elements.
fn part_count(lens: &[usize; ARRAYS], sizes: &[usize; ARRAYS]) -> u32 {
    let raw: usize = (0..ARRAYS)
        .map(|a| lens[a].div_ceil(per_chunk(sizes[a])))
        .sum();
    u32::try_from(2 + raw).unwrap_or(u32::MAX)
}

/// A restore of a search index under way (parts in order, from 0).
#[derive(Debug, Default)]
pub struct PartsReader {
    index: SearchIndex,
    /// The index's vocabulary and known words as they are read (shared once complete).
    vocab: crate::text::Vocab,
    words: crate::text::WordList,
    /// From part 0: each array's length and element size, and the number of parts.
    layout: Option<([usize; ARRAYS], [usize; ARRAYS], u32)>,
    next: u32,
}

impl PartsReader {
    /// Read the next part, `k` (parts come in order).
    pub fn part(&mut self, k: u32, bytes: &[u8]) -> Result<(), String> {
        if k != self.next {
            return Err(format!(
                "search index part {k} where {} was expected",
                self.next
            ));
        }
        let (ix, vocab, words) = (&mut self.index, &mut self.vocab, &mut self.words);
        match (k, &self.layout) {
            (0, _) => {
                #[allow(clippy::type_complexity)]
                let (params, n_docs, avg, typo, terms, wide, lens): (
                    Params,
                    u64,
                    _,
                    _,
                    String,
                    bool,
                    [u64; ARRAYS],
                ) = decode(bytes)?;
                let lens = lens.map(|l| usize::try_from(l).unwrap_or(usize::MAX));
                let sizes = elem_sizes(wide);
                let total = (0..ARRAYS)
                    .try_fold(0usize, |t, a| t.checked_add(lens[a].checked_mul(sizes[a])?));
                // (a garbled length must not make the restore reserve the whole memory)
                if total.is_none_or(|t| t > u32::MAX as usize / 2) {
                    return Err("search index: implausible array lengths".into());
                }
                ix.params = params;
                ix.n_docs = usize::try_from(n_docs).map_err(|e| e.to_string())?;
                ix.avg = avg;
                ix.typo_by_len = typo;
                vocab.text = terms;
                vocab.ends = Vec::with_capacity(lens[0]);
                ix.offsets = Vec::with_capacity(lens[1]);
                ix.docs = if wide {
                    DocIds::Wide(Vec::with_capacity(lens[2]))
                } else {
                    DocIds::Narrow(Vec::with_capacity(lens[2]))
                };
                ix.sat = Vec::with_capacity(lens[3]);
                ix.tf_offsets = Vec::with_capacity(lens[4]);
                ix.tf_bytes = Vec::with_capacity(lens[5]);
                ix.lens = Vec::with_capacity(lens[6]);
                ix.priority = Vec::with_capacity(lens[7]);
                ix.seq = Vec::with_capacity(lens[8]);
                ix.seq_ends = Vec::with_capacity(lens[9]);
                ix.dense.values = Vec::with_capacity(lens[10]);
                words.text = Vec::with_capacity(lens[11]);
                words.ends = Vec::with_capacity(lens[12]);
                words.terms = Vec::with_capacity(lens[13]);
                self.layout = Some((lens, sizes, part_count(&lens, &sizes)));
            }
            (_, None) => return Err("search index part 0 must come first".into()),
            (1, Some(_)) => ix.paths = decode(bytes)?,
            (k, Some((lens, sizes, _))) => {
                let (a, range) = locate(lens, sizes, k as usize - 2)
                    .ok_or_else(|| format!("no search index part {k}"))?;
                if bytes.len() != range.len() * sizes[a] {
                    return Err(format!(
                        "search index part {k}: {} bytes where {} were expected",
                        bytes.len(),
                        range.len() * sizes[a]
                    ));
                }
                match a {
                    0 => extend_raw(&mut vocab.ends, bytes),
                    1 => extend_raw(&mut ix.offsets, bytes),
                    2 => match &mut ix.docs {
                        DocIds::Narrow(v) => extend_raw(v, bytes),
                        DocIds::Wide(v) => extend_raw(v, bytes),
                    },
                    3 => extend_raw(&mut ix.sat, bytes),
                    4 => extend_raw(&mut ix.tf_offsets, bytes),
                    5 => extend_raw(&mut ix.tf_bytes, bytes),
                    6 => extend_raw(&mut ix.lens, bytes),
                    7 => extend_raw(&mut ix.priority, bytes),
                    8 => extend_raw(&mut ix.seq, bytes),
                    9 => extend_raw(&mut ix.seq_ends, bytes),
                    10 => extend_raw(&mut ix.dense.values, bytes),
                    11 => extend_raw(&mut words.text, bytes),
                    12 => extend_raw(&mut words.ends, bytes),
                    _ => extend_raw(&mut words.terms, bytes),
                }
            }
        }
        self.next += 1;
        Ok(())
    }

    /// The number of parts part 0 announced (`None` before part 0).
    pub fn parts(&self) -> Option<u32> {
        self.layout.as_ref().map(|l| l.2)
    }

    /// Whether every announced part was read.
    pub fn complete(&self) -> bool {
        self.parts() == Some(self.next)
    }

    /// The index read (check it with [`SearchIndex::check`]).
    pub fn finish(self) -> SearchIndex {
        SearchIndex {
            vocab: std::sync::Arc::new(self.vocab),
            words: std::sync::Arc::new(self.words),
            ..self.index
        }
    }
}

impl SearchIndex {
    /// The large arrays' lengths, in part order.
    fn array_lens(&self) -> [usize; ARRAYS] {
        let docs = match &self.docs {
            DocIds::Narrow(v) => v.len(),
            DocIds::Wide(v) => v.len(),
        };
        [
            self.vocab.ends.len(),
            self.offsets.len(),
            docs,
            self.sat.len(),
            self.tf_offsets.len(),
            self.tf_bytes.len(),
            self.lens.len(),
            self.priority.len(),
            self.seq.len(),
            self.seq_ends.len(),
            self.dense.values.len(),
            self.words.text.len(),
            self.words.ends.len(),
            self.words.terms.len(),
        ]
    }

    fn wide(&self) -> bool {
        matches!(self.docs, DocIds::Wide(_))
    }

    /// Number of parts [`SearchIndex::encode_part`] writes.
    pub fn parts(&self) -> u32 {
        part_count(&self.array_lens(), &elem_sizes(self.wide()))
    }

    /// Part `k` (below [`SearchIndex::parts`]) of the index, for a snapshot: read back in
    /// order with a [`PartsReader`].
    pub fn encode_part(&self, k: u32) -> Vec<u8> {
        let lens = self.array_lens();
        match k {
            0 => encode(&(
                &self.params,
                self.n_docs as u64,
                self.avg,
                &self.typo_by_len,
                &self.vocab.text,
                self.wide(),
                lens.map(|l| l as u64),
            )),
            1 => encode(&self.paths),
            k => {
                let Some((a, r)) = locate(&lens, &elem_sizes(self.wide()), k as usize - 2) else {
                    return Vec::new();
                };
                match a {
                    0 => put_raw(&self.vocab.ends[r]),
                    1 => put_raw(&self.offsets[r]),
                    2 => match &self.docs {
                        DocIds::Narrow(v) => put_raw(&v[r]),
                        DocIds::Wide(v) => put_raw(&v[r]),
                    },
                    3 => put_raw(&self.sat[r]),
                    4 => put_raw(&self.tf_offsets[r]),
                    5 => put_raw(&self.tf_bytes[r]),
                    6 => put_raw(&self.lens[r]),
                    7 => put_raw(&self.priority[r]),
                    8 => put_raw(&self.seq[r]),
                    9 => put_raw(&self.seq_ends[r]),
                    10 => put_raw(&self.dense.values[r]),
                    11 => put_raw(&self.words.text[r]),
                    12 => put_raw(&self.words.ends[r]),
                    _ => put_raw(&self.words.terms[r]),
                }
            }
        }
    }

    /// Whether the parts fit together (lengths and offsets in range), so that queries cannot
    /// index out of bounds.
    pub fn check(&self) -> Result<(), String> {
        let n = self.n_docs;
        let postings = match &self.docs {
            DocIds::Narrow(v) => v.len(),
            DocIds::Wide(v) => v.len(),
        };
        let (vocab, words) = (&self.vocab, &self.words);
        let n_terms = vocab.ends.len();
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
        if !ascending(&vocab.ends, vocab.text.len())
            || !vocab
                .ends
                .iter()
                .all(|&e| vocab.text.is_char_boundary(e as usize))
        {
            return fail("vocabulary out of range");
        }
        if self.offsets.len() != n_terms + 1
            || self.offsets.first() != Some(&0)
            || !ascending(&self.offsets, postings)
            || self.offsets.last().map(|&l| l as usize) != Some(postings)
        {
            return fail("postings out of range");
        }
        let (sparse, rows) = self.sparse_and_rows();
        if self.sat.len() != sparse || Some(self.dense.values.len()) != rows.checked_mul(n) {
            return fail("postings' sats out of range");
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
        let known_ok = words.terms.len() == words.ends.len()
            && ascending(&words.ends, words.text.len())
            && std::str::from_utf8(&words.text).is_ok_and(|text| {
                words
                    .ends
                    .iter()
                    .all(|&e| text.is_char_boundary(e as usize))
            })
            && words
                .terms
                .iter()
                .all(|&t| t == KNOWN_DROPPED || (t as usize) < n_terms);
        if !known_ok {
            return fail("known words out of range");
        }
        if !docs_ok || !seq_ok || !typo_ok {
            return fail("a document or term number out of range");
        }
        Ok(())
    }
}
