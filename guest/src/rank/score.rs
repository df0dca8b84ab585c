//! Scoring a request: slots and their alternatives, BM25F, normalisation and ordering.

use super::*;

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
pub(super) fn pseudo_tf(norm: &[f64; NUM_FIELDS], tf: &[u16; NUM_FIELDS]) -> f64 {
    norm.iter()
        .zip(tf)
        .filter(|(_, tf)| **tf != 0)
        .map(|(n, tf)| f64::from(*tf) * n)
        .sum()
}

/// [`pseudo_tf`] when the only non-zero frequency is `tf`, in a field of norm `norm` (the
/// same sum of one term, so the same bits).
#[inline]
pub(super) fn pseudo_tf_one(norm: f64, tf: u8) -> f64 {
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

pub(super) fn one_edit<T: PartialEq>(a: &[T], b: &[T]) -> bool {
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
    /// Text of term `t`.
    pub(super) fn term(&self, t: u32) -> &str {
        let i = t as usize;
        let start = if i == 0 {
            0
        } else {
            self.term_ends[i - 1] as usize
        };
        &self.terms[start..self.term_ends[i] as usize]
    }

    /// Number of term `text`, if indexed.
    pub(super) fn term_id(&self, text: &str) -> Option<u32> {
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
    pub(super) fn term_lower_bound(&self, text: &str) -> u32 {
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
    pub(super) fn range(&self, t: u32) -> std::ops::Range<usize> {
        self.offsets[t as usize] as usize..self.offsets[t as usize + 1] as usize
    }

    /// Position of `doc` in term `t`'s postings.
    pub(super) fn find_posting(&self, t: u32, doc: usize) -> Option<usize> {
        self.docs.find(self.range(t), doc)
    }

    /// Per-field frequencies of posting `i` of term `t`.
    pub(super) fn posting_tf(&self, t: u32, i: usize) -> [u16; NUM_FIELDS] {
        let mut pos = self.tf_offsets[t as usize] as usize;
        for _ in self.offsets[t as usize] as usize..i {
            decode_tf(&self.tf_bytes, &mut pos);
        }
        decode_tf(&self.tf_bytes, &mut pos)
    }

    /// idf of term `t`.
    pub(super) fn idf(&self, t: u32) -> f64 {
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
    pub(super) fn unseen_idf(&self) -> f64 {
        idf_of(self.n_docs, 0)
    }

    /// The request's slots (one per distinct analysed term).
    pub(super) fn slots(&self, terms: &[Term]) -> Vec<Slot> {
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

    /// Analyse a request once: its slots, its pairs and the ceiling of its raw score.
    pub(super) fn prepare(&self, query: &str) -> Query {
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

    /// The idf an alternative scores with: its own, but never more than the request term's
    /// (a prefix or typo expansion to a rare word must not outweigh the word itself).
    pub(super) fn alt_idf(&self, slot: &Slot, alt: &Alt) -> f64 {
        self.idf(alt.term).min(slot.idf)
    }

    /// Raw scores (before normalisation) and matched word counts of every document.
    pub(super) fn raw_scores(&self, q: &Query) -> (Vec<f64>, Vec<u32>) {
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
    pub(super) fn finalise(
        &self,
        q: &Query,
        raw: f64,
        pair: f64,
        words: u32,
    ) -> (f64, f64, f64, f64) {
        finalise_with(&self.params, q.max, q.words, raw, pair, words)
    }

    /// Whether `doc` holds vocabulary term `term`.
    pub(super) fn has_term(&self, term: u32, doc: usize) -> bool {
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
}
