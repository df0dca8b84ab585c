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
    /// Bit `t % 1024` set for every term `t` of a request pair, and for [`SEQ_BREAK`]: a
    /// filter (a term of the same bit that is in no pair finds no key below), the same size
    /// whatever the vocabulary.
    mask: [u64; 16],
    /// Scratch space: the positions in a document's sequence of the terms that pass `mask`
    /// (and the terms), and the pairs held when there are more than 64.
    hits: Vec<(usize, u32)>,
    held: Vec<usize>,
}

/// Whether term `t` passes a [`PairScorer`]'s filter.
#[inline(always)]
fn in_mask(mask: &[u64; 16], t: u32) -> bool {
    mask[(t as usize >> 6) & 15] >> (t & 63) & 1 != 0
}

/// The positions in `seq` of the terms that pass `mask` ([`in_mask`]), with the terms, into
/// `hits` (cleared first); the number of them that are not [`SEQ_BREAK`].
///
/// Eight terms at a time, their tests or'ed into one bit set: one branch and one loop test
/// per eight (in the component, a loop's back edge also reads the epoch), the positions taken
/// only from a set that is not empty (most are). Its own function: in the scorer's body the
/// loop's values were kept on the stack.
#[inline(never)]
fn scan(seq: &[u32], mask: &[u64; 16], hits: &mut Vec<(usize, u32)>) -> usize {
    hits.clear();
    let mut terms = 0;
    let bit = |t: u32| u32::from(in_mask(mask, t));
    let mut chunks = seq.chunks_exact(8);
    let mut base = 0;
    for c in &mut chunks {
        let set = bit(c[0])
            | bit(c[1]) << 1
            | bit(c[2]) << 2
            | bit(c[3]) << 3
            | bit(c[4]) << 4
            | bit(c[5]) << 5
            | bit(c[6]) << 6
            | bit(c[7]) << 7;
        if set != 0 {
            terms += push_hits(c, set, base, hits);
        }
        base += 8;
    }
    let rest = chunks.remainder();
    let set = rest
        .iter()
        .enumerate()
        .fold(0, |set, (i, &t)| set | bit(t) << i);
    if set != 0 {
        terms += push_hits(rest, set, base, hits);
    }
    terms
}

/// The terms of `chunk` (from position `base`) whose bits are in `set`, into `hits`; the
/// number of them that are not [`SEQ_BREAK`].
#[inline(never)]
fn push_hits(chunk: &[u32], mut set: u32, base: usize, hits: &mut Vec<(usize, u32)>) -> usize {
    let mut terms = 0;
    while set != 0 {
        let i = set.trailing_zeros() as usize;
        set &= set - 1;
        hits.push((base + i, chunk[i]));
        terms += usize::from(chunk[i] != SEQ_BREAK);
    }
    terms
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
        for t in q.pairs.iter().flat_map(|p| p.terms).chain([SEQ_BREAK]) {
            mask[(t as usize >> 6) & 15] |= 1 << (t & 63);
        }
        Self {
            keys,
            mask,
            hits: Vec::new(),
            held: Vec::new(),
        }
    }

    /// The pair bonus of document `d`: the weights of the request pairs its name or
    /// description holds, each once (summed in the order of `q.pairs`).
    ///
    /// One pass over the document's sequence keeps the positions of the terms that pass the
    /// filter (most documents have one or none: the bonus is then 0 at once); the field break
    /// passes it too, and no window goes past it.
    pub(super) fn score<S: Statistics>(&mut self, s: &S, q: &Query, d: usize) -> f64 {
        let Self {
            keys,
            mask,
            hits,
            held,
        } = self;
        let window = s.params().pair_window;
        if scan(s.seq(d), mask, hits) < 2 {
            return 0.0;
        }
        // (the pairs held: bit `i` for `q.pairs[i]`, or a list past 64 pairs)
        let few = q.pairs.len() <= 64;
        let mut bits = 0u64;
        held.clear();
        for (j, &(i, a)) in hits.iter().enumerate() {
            if a == SEQ_BREAK {
                continue;
            }
            for &(k, b) in &hits[j + 1..] {
                if k - i > window || b == SEQ_BREAK {
                    break;
                }
                if a == b {
                    continue;
                }
                let key = pair_key(a, b);
                let at = keys.partition_point(|x| x.0 < key);
                for x in keys[at..].iter().take_while(|x| x.0 == key) {
                    if few {
                        bits |= 1 << x.1;
                    } else {
                        held.push(x.1);
                    }
                }
            }
        }
        // (from +0: no pair held is a bonus of 0, never -0)
        let mut sum = 0.0;
        if few {
            while bits != 0 {
                sum += q.pairs[bits.trailing_zeros() as usize].weight;
                bits &= bits - 1;
            }
        } else {
            held.sort_unstable();
            held.dedup();
            for &i in held.iter() {
                sum += q.pairs[i].weight;
            }
        }
        sum
    }
}
