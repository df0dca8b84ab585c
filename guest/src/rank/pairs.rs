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

/// The request's pairs in collection `s`: known word terms at most `pair_window` words apart,
/// once each.
/// `ids[i]` is the number of `terms[i]`, if indexed.
pub(super) fn pairs<S: Statistics>(s: &S, terms: &TermList, ids: &[Option<u32>]) -> Vec<Pair> {
    let p = s.params();
    if p.pair_weight <= 0.0 {
        return Vec::new();
    }
    let words: Vec<(u32, &str)> = (0..terms.len())
        .zip(ids)
        .filter(|&(i, _)| !terms.joined(i))
        .filter_map(|(i, &id)| Some((id?, terms.surface(i))))
        .collect();
    let ids: Vec<u32> = words.iter().map(|w| w.0).collect();
    let surface = |id: u32| words.iter().find(|w| w.0 == id).map_or("", |w| w.1);
    // (the pairs seen, by their order-free keys: a scan for a short request, a hash set past
    // that)
    let mut keys: Vec<u64> = Vec::new();
    let mut table: Option<rustc_hash::FxHashSet<u64>> = None;
    let mut pairs = Vec::new();
    for_each_pair(&ids, p.pair_window, |a, b| {
        let key = pair_key(a, b);
        let new = match &mut table {
            Some(table) => table.insert(key),
            None if keys.contains(&key) => false,
            None => {
                keys.push(key);
                if keys.len() > 32 {
                    table = Some(keys.iter().copied().collect());
                }
                true
            }
        };
        if new {
            let (x, y) = (surface(a), surface(b));
            let mut text = String::with_capacity(x.len() + 1 + y.len());
            text.push_str(x);
            text.push(' ');
            text.push_str(y);
            pairs.push(Pair {
                weight: p.pair_weight * 0.5 * (s.idf(a) + s.idf(b)),
                terms: [a, b],
                surface: text,
            });
        }
    });
    pairs
}

/// The pair bonus of documents for one request (see the module docs of [`super`]).
pub(super) struct PairScorer {
    /// The request's pairs as (order-free key of their two terms, index in `q.pairs`), sorted.
    keys: Vec<(u64, usize)>,
    /// Bit `t % 1024` set for every term `t` of a request pair: a filter (a term of the
    /// same bit that is in no pair finds no key below), the same size whatever the vocabulary.
    mask: [u64; 16],
    /// Scratch space.
    hits: Vec<(usize, u32)>,
    held: Vec<usize>,
}

impl PairScorer {
    pub(super) fn new(q: &Query) -> Self {
        let mut keys: Vec<(u64, usize)> = q
            .pairs
            .iter()
            .enumerate()
            .map(|(i, p)| (pair_key(p.terms[0], p.terms[1]), i))
            .collect();
        keys.sort_unstable();
        let mut mask = [0u64; 16];
        for t in q.pairs.iter().flat_map(|p| p.terms) {
            mask[(t as usize / 64) % 16] |= 1 << (t % 64);
        }
        Self {
            keys,
            mask,
            hits: Vec::new(),
            held: Vec::new(),
        }
    }

    /// The pair bonus of document `d`: the weights of the request pairs its name or
    /// description holds, each once.
    pub(super) fn score<S: Statistics>(&mut self, s: &S, q: &Query, d: usize) -> f64 {
        let Self {
            keys,
            mask,
            hits,
            held,
        } = self;
        let window = s.params().pair_window;
        held.clear();
        for field in s.seq(d).split(|&t| t == SEQ_BREAK) {
            hits.clear();
            hits.extend(
                field
                    .iter()
                    .enumerate()
                    .filter(|&(_, &t)| mask[(t as usize / 64) % 16] >> (t % 64) & 1 == 1)
                    .map(|(i, &t)| (i, t)),
            );
            for (j, &(i, a)) in hits.iter().enumerate() {
                for &(k, b) in &hits[j + 1..] {
                    if k - i > window {
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
        // (from +0: no pair held is a bonus of 0, never -0)
        held.iter().fold(0.0, |sum, &i| sum + q.pairs[i].weight)
    }
}
