//! Proximity: pairs of request words said close together in a name or description.

use super::*;

/// Whether terms `a` and `b` occur at most `window` terms apart in `seq` (not across a
/// [`SEQ_BREAK`]); `Some(0)` when found before the break (the name), `Some(2)` after it (the
/// description).
pub(super) fn pair_field(seq: &[u32], a: u32, b: u32, window: usize) -> Option<usize> {
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
pub(super) fn pair_key(a: u32, b: u32) -> u64 {
    (u64::from(a.min(b)) << 32) | u64::from(a.max(b))
}

/// Calls `f` with every pair of distinct terms of `seq` at most `window` positions apart.
pub(super) fn for_each_pair(seq: &[u32], window: usize, mut f: impl FnMut(u32, u32)) {
    for (i, &a) in seq.iter().enumerate() {
        for &b in seq.iter().skip(i + 1).take(window) {
            if a != b {
                f(a, b);
            }
        }
    }
}

impl SearchIndex {
    /// The request's pairs: known word terms at most `pair_window` words apart, once each.
    pub(super) fn pairs(&self, terms: &[Term]) -> Vec<Pair> {
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

    /// Where `doc` says the two terms of `pair` close together: `Some(0)` in its name,
    /// `Some(2)` in its description.
    pub(super) fn pair_in(&self, pair: &Pair, doc: usize) -> Option<usize> {
        let start = if doc == 0 { 0 } else { self.seq_ends[doc - 1] };
        let seq = &self.seq[start as usize..self.seq_ends[doc] as usize];
        pair_field(seq, pair.terms[0], pair.terms[1], self.params.pair_window)
    }

    /// The request's pairs as (order-free key of their two terms, index in `q.pairs`), sorted.
    pub(super) fn pair_keys(q: &Query) -> Vec<(u64, usize)> {
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
    pub(super) fn doc_pairs(
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
}
