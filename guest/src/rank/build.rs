//! Building the index: analysing documents and laying out the vocabulary and postings.

use super::*;

/// The pieces of the text of each field of `doc`, as indexed (the pieces of a field are
/// analysed as if joined by whitespace).
pub(super) fn field_pieces(
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

/// The analysed text of one document, waiting for [`Builder::build`]: its field lengths and
/// its terms (numbered by the builder's analyser) with their per-field frequencies, packed
/// (per term, by increasing number: the varint gap from the previous number, then
/// [`encode_tf`]).
#[derive(Debug, Clone, Default)]
pub struct Analysed {
    pub(super) lens: [u32; NUM_FIELDS],
    terms: Box<[u8]>,
    /// The terms of the name, [`SEQ_BREAK`], those of the description (for pairs).
    pub(super) seq: Box<[u32]>,
}

impl Analysed {
    /// Every (term, its per-field frequencies as [`encode_tf`] packed them).
    #[inline]
    pub(super) fn for_each_raw(&self, mut f: impl FnMut(u32, &[u8])) {
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
#[derive(Debug, Default, Clone)]
pub struct Builder {
    params: Params,
    pub(super) analyzer: Analyzer,
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
        let mut counts = vec![[0u32; 3]; n_terms];
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
        // Where each term's `sat`s go: the next of [`SearchIndex::sat`], or (top bit set) its
        // dense row ([`DenseRows`]).
        let (mut sparse_at, mut rows) = (0u32, 0u32);
        for (new, &old) in order.iter().enumerate() {
            let new = new as u32;
            remap[old as usize] = new;
            let text = analyzer.term(old);
            terms.push_str(text);
            term_ends.push(terms.len() as u32);
            let [df, tf_len, _] = counts[old as usize];
            let dest = if is_dense(df as usize, n_docs) {
                rows += 1;
                DENSE | (rows - 1)
            } else {
                sparse_at += df;
                sparse_at - df
            };
            // from now on, the term's cursors (by its old number: no remapping per posting)
            counts[old as usize] = [at, tf_at, dest];
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
        // The words analysed and their terms (those of a term no document kept are left out:
        // a request stems them again).
        // (counted first, so that the lists are made at their final size)
        let known_term = |old: Option<u32>| match old.map(|t| remap[t as usize]) {
            None => Some(KNOWN_DROPPED),
            Some(u32::MAX) => None,
            Some(new) => Some(new),
        };
        let (n_words, word_bytes) = analyzer
            .words()
            .filter(|&(_, old)| known_term(old).is_some())
            .fold((0, 0), |(n, b), (w, _)| (n + 1, b + w.len()));
        let mut words = crate::text::WordList {
            text: Vec::with_capacity(word_bytes),
            ends: Vec::with_capacity(n_words),
            terms: Vec::with_capacity(n_words),
        };
        for (word, old) in analyzer.words() {
            if let Some(term) = known_term(old) {
                words.text.extend_from_slice(word.as_bytes());
                words.ends.push(words.text.len() as u32);
                words.terms.push(term);
            }
        }
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
        let mut sat = vec![0f32; sparse_at as usize];
        let mut values = vec![0f32; rows as usize * n_docs];
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
                let (i, at, dest) = (c[0] as usize, c[1] as usize, c[2]);
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
                let s = (ptf / (params.k1 + ptf)) as f32;
                if dest & DENSE == 0 {
                    sat[dest as usize] = s;
                    c[2] += 1;
                } else {
                    values[(dest & !DENSE) as usize * n_docs + d] = s;
                }
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
            vocab: std::sync::Arc::new(crate::text::Vocab {
                text: terms,
                ends: term_ends,
            }),
            typo_by_len,
            typo_sig: Vec::new(),
            prefix2: Vec::new(),
            term_table: Default::default(),
            idf_by_df: Vec::new(),
            offsets,
            docs: post_docs,
            sat,
            dense: DenseRows::of_values(values),
            tf_offsets,
            tf_bytes,
            tf_skips: Default::default(),
            lens,
            avg,
            priority,
            paths,
            seq,
            seq_ends,
            words: std::sync::Arc::new(words),
            known: None,
        }
        .with_derived()
    }
}

/// The first 8 bytes of `s`, big-endian, zero-padded: comparing keys orders strings as
/// comparing the strings does, except that equal keys need the full comparison.
pub(super) fn prefix_key(s: &str) -> u64 {
    let mut k = [0u8; 8];
    let n = s.len().min(8);
    k[..n].copy_from_slice(&s.as_bytes()[..n]);
    u64::from_be_bytes(k)
}

/// Per field: `w_f / (1 - b_f + b_f * len_f / avglen_f)`.
pub(super) fn field_norm(
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
        // (the words already analysed are not stemmed again)
        for (word, term) in self.known_entries() {
            builder
                .analyzer
                .remember_word(word, term.map(|t| self.term(t)));
        }
        let mut per_doc: Vec<Vec<(u32, [u16; NUM_FIELDS])>> = vec![Vec::new(); self.n_docs];
        for t in 0..self.vocab.ends.len() {
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
}
