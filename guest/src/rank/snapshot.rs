//! The index as snapshot sections (for the index cache), and their consistency check.

use super::*;

impl SearchIndex {
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
}
