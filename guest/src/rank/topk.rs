//! Top-k retrieval: the `limit` best skills of a request, without the collection-sized work
//! of [`rank`] (arrays of every document zeroed per query, every matching skill sorted and
//! its pairs looked at).
//!
//! The postings of the request's alternatives are read window by window ([`WINDOW`]
//! documents), slot by slot in the request's order, into a per-window accumulator: the same
//! sums, to the bit, as [`raw_scores`]. Within a slot, the alternatives other than its longest
//! keep their best per skill first ([`read_others`]; in a collection of many windows, those
//! waiting for a later window are kept in a heap by their next document and not looked at);
//! the longest is read last and adds the slot's share (its own posting or that best,
//! whichever is larger) at once. A term in at least half the skills has a dense row
//! ([`DenseRows`]): its window is added in one vector pass ([`add_dense`]) instead of posting by
//! posting. Each slot keeps the window's skills it matched, and those it matched in a
//! describing field, as bit sets: a window's touched skills, their matched-word counts and
//! their [`Class`] (what bounds their key: pairs, the evidence factor) come from counting
//! over those sets 64 skills at a time.
//!
//! A skill whose raw score is below its class's cut ([`raw_cut`] of `theta`, the `limit`-th
//! key without pairs so far, a lower bound of the final `limit`-th key) cannot be among the
//! best: the cuts are tested 64 skills at a time while their scores are taken from the window
//! ([`take_at_least`]), so most skills touched are never looked at one by one. The others are
//! finalised ([`finalise`]) in document order and their keys kept among the `limit` best; a
//! skill that may hold pairs (two request words matched in describing fields) is kept as a
//! candidate while its key plus the pairs' room can reach `theta`: the room of one pair when it
//! matched exactly two words there (a pair is held in a name or a description, so it can hold
//! only the pair of those two), of all pairs when more. At the end, the candidates
//! get their pairs as [`score_all`] gives them, unless their key plus what their own pairs can
//! add (the pairs whose two words they matched) cannot reach the final `limit`-th key or the
//! `limit`-th kept, and the best `limit` are kept in [`order`]; the request words each matched
//! are known from the slots that touched it. MaxScore's split of the slots into essential and
//! non-essential ones was built, measured and removed: on these collections it never skipped
//! reading a posting and cost more than it saved (docs/performance.md).
//!
//! The answers are those of [`rank`] and [`matched`]: the same skills, order and scores (a
//! bound drops a skill only when below `theta` by a relative margin, so a sum added in
//! another order never drops one that could tie; `top_k_is_the_exhaustive_ranking` checks it
//! bit for bit). Scratch space is sized by the window, not by the collection, and kept between
//! requests.

use super::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;

/// Documents per window (a power of two).
pub(super) const WINDOW: usize = 1024;

/// Largest `limit` served by top-k retrieval; a larger one is ranked exhaustively (pruning
/// gains little when most matching skills are returned).
const MAX_LIMIT: usize = 256;

/// A bound below `theta` by more than this relative margin drops a skill: a key plus a bound
/// is not summed as the key with pairs is, and differs from it by a few ulps, far less.
const MARGIN: f64 = 1e-9;

/// Whether a skill whose key is at most `bound` could still be among the best (`theta`:
/// the `limit`-th key without pairs so far).
#[inline]
fn reaches(bound: f64, theta: f64) -> bool {
    bound * (1.0 + MARGIN) >= theta
}

/// Words of a window's bit sets (one bit a document).
pub(super) const BITS: usize = WINDOW / 64;

/// A set of a window's documents, one bit each: setting one is a store without a branch, and
/// its members come out in document order.
type Bits = [u64; BITS];

#[inline]
fn set_bit(bits: &mut Bits, l: usize) {
    bits[(l >> 6) & (BITS - 1)] |= 1 << (l & 63);
}

/// The per-window arrays and sets of [`SearchIndex::top_k`], allocated once per thread and
/// handed back clean (arrays all zero, sets and lists empty) after each request.
struct Scratch {
    // (fixed sizes, indexed below `WINDOW`: no bounds checks in the loops)
    total: Box<[f64; WINDOW]>,
    best: Box<[f64; WINDOW]>,
    /// Per slot, the window's skills it matched, and those it matched in a describing field.
    present: Vec<Bits>,
    describing: Vec<Bits>,
    /// The skills a slot's other alternatives touched, before its main one is read, and those
    /// they touched in a describing field.
    in_slot: Bits,
    in_slot_describing: Bits,
    candidates: Vec<Candidate>,
}

impl Scratch {
    fn new() -> Box<Self> {
        Box::new(Self {
            total: Box::new([0.0; WINDOW]),
            best: Box::new([0.0; WINDOW]),
            present: Vec::new(),
            describing: Vec::new(),
            in_slot: [0; BITS],
            in_slot_describing: [0; BITS],
            candidates: Vec::with_capacity(WINDOW),
        })
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Option<Box<Scratch>>> = const { std::cell::RefCell::new(None) };
}

/// A skill scored without pairs, waiting for them.
struct Candidate {
    doc: usize,
    raw: f64,
    words: u32,
    mask: u64,
    /// The slots it matched in describing fields (where a pair is held).
    described: u64,
    key: f64,
    score: f64,
    /// What its pairs can add to its key at most, by its class (`0.0`: it holds none).
    bound: f64,
}

/// The `limit` best sort keys (without pairs) seen, best first.
struct Keys {
    limit: usize,
    best: Vec<f64>,
    seen: usize,
    /// [`Keys::theta`], kept up to date.
    theta: f64,
    /// The raw score below which a skill cannot reach `theta` ([`raw_cut`] of `theta`, kept
    /// up to date), by its [`Class`].
    cut: [f64; 4],
    /// What the cuts are taken from: the pairs' room of a skill of three or more words in
    /// describing fields (all pairs) and of one of two (one pair), the request's ceiling and
    /// the evidence factor of a skill of one matched word or none in a describing field
    /// ([`finalise`]).
    room: f64,
    room_one: f64,
    max: f64,
    single: f64,
}

/// What bounds a skill's key, by the request words it matched ([`finalise`], [`with_pairs`]):
/// three or more in describing fields (it may hold any pairs: the cut with their room);
/// exactly two (it may hold the pair of those two words only, besides the pairs of words
/// that are not slots of their own: the cut with the room of one pair); else two or more
/// with one in a describing field (an evidence factor of 1); else the single word's factor.
/// (An index into [`Keys::cut`].) A pair is held in a name or a description, both
/// describing fields: its two words are among those the skill matched there.
#[derive(Clone, Copy, PartialEq)]
enum Class {
    Full = 0,
    Paired = 1,
    Single = 2,
    OnePair = 3,
}

/// The raw score below which a skill's key, at most `(raw / max + room) * evidence_max`, fails
/// [`reaches`] for `theta`, on the safe side: a raw score below it fails the exact test too
/// (a slack of 1e-12 of the numbers involved, far above the few ulps that rounding moves them),
/// so it only spares skills the exact test would drop. `-inf` (nothing spared) when `theta` is
/// not positive or the room alone reaches it.
fn raw_cut(theta: f64, room: f64, max: f64, evidence_max: f64) -> f64 {
    // (NaN is never a theta: keys are finite)
    if theta <= 0.0 {
        return f64::NEG_INFINITY;
    }
    let share = theta / (evidence_max * (1.0 + MARGIN));
    let rest = share - room - (share.abs() + room.abs()) * 1e-12;
    if rest > 0.0 {
        rest * max * (1.0 - 1e-12)
    } else {
        f64::NEG_INFINITY
    }
}

impl Keys {
    /// The `limit`-th key so far (none until more than `limit` were seen, as in
    /// [`score_all`]).
    #[inline]
    fn theta(&self) -> f64 {
        self.theta
    }

    #[inline]
    fn add(&mut self, key: f64) {
        self.seen += 1;
        if self.best.len() == self.limit {
            if self.best[self.limit - 1] < key {
                let at = self.best.partition_point(|&k| k >= key);
                self.best.pop();
                self.best.insert(at, key);
            }
        } else {
            let at = self.best.partition_point(|&k| k >= key);
            self.best.insert(at, key);
        }
        if self.seen > self.limit && self.theta != self.best[self.limit - 1] {
            self.set_theta(self.best[self.limit - 1]);
        }
    }

    /// `theta` and the cuts taken from it.
    fn set_theta(&mut self, theta: f64) {
        self.theta = theta;
        self.cut = [
            raw_cut(theta, 0.0, self.max, 1.0),
            raw_cut(theta, self.room, self.max, 1.0),
            raw_cut(theta, 0.0, self.max, self.single),
            raw_cut(theta, self.room_one, self.max, 1.0),
        ];
    }
}

/// Whether kept skill `h` (document, key, ...) comes before document `doc` of key `key` in
/// [`order`], whose ties (broken by priority and path) are looked at only for equal keys.
#[inline(always)]
fn kept_before(s: &SearchIndex, h: &(usize, f64, f64, u64), doc: usize, key: f64) -> bool {
    h.1 > key || h.1 == key && order(s, (h.0, h.1), (doc, key)) == Ordering::Less
}

/// `bits[k] |= row[k]` for the words of `row` (a dense row's set over a window; one `or` a
/// word, no bounds checks).
#[inline(always)]
fn or_into(bits: &mut Bits, row: &[u64]) {
    for (b, &r) in bits.iter_mut().zip(row) {
        *b |= r;
    }
}

/// `bits[k] = other[k] | row[k]` for the words of `row` (as [`or_into`]).
#[inline(always)]
fn or_of(bits: &mut Bits, other: &Bits, row: &[u64]) {
    for ((b, &o), &r) in bits.iter_mut().zip(other).zip(row) {
        *b = o | r;
    }
}

/// `bits |= flag << (l % 64)` at `l`'s word: a store without a branch.
#[inline]
fn put_bit(bits: &mut Bits, l: usize, flag: bool) {
    bits[(l >> 6) & (BITS - 1)] |= u64::from(flag) << (l & 63);
}

/// A slot's other alternatives with postings left, by their next document: (document,
/// alternative), the least first.
type Waiting = BinaryHeap<Reverse<(usize, usize)>>;

/// The postings in the window `start..end` of the alternatives of `slot` other than its
/// main one (`cursor`: the slot's cursors; `waiting`: those with postings left by their next
/// document, when kept): the best value per skill, and the skills touched, in a describing
/// field or not. Whether there were any. (Not inlined: called once a slot and window, it
/// keeps top-k's loop small.)
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn read_others(
    docs: &DocIds,
    slot: &Slot,
    main: usize,
    (cursor, rows): (&mut [Cursor], &[Option<DenseRow>]),
    waiting: Option<&mut Waiting>,
    (start, end): (usize, usize),
    best: &mut [f64; WINDOW],
    (in_slot, in_slot_describing): (&mut Bits, &mut Bits),
) -> bool {
    let mut read = |c: &mut Cursor, row: &Option<DenseRow>, idf: f64| {
        if let Some(row) = row {
            // A dense row: the window in one pass, its sets word by word; the cursor moved
            // past it.
            let len = end.min(row.values.len()) - start;
            let (values, best) = (&row.values[start..start + len], &mut best[..len]);
            // (a select, not a conditional store: the loop is vectorised)
            for (b, &v) in best.iter_mut().zip(values) {
                let c = idf * f64::from(v);
                *b = if c > *b { c } else { *b };
            }
            let words = start / 64..(start + len).div_ceil(64);
            or_into(in_slot, &row.present[words.clone()]);
            or_into(in_slot_describing, &row.describing[words]);
            docs.skip_below(c, end);
            return;
        }
        docs.read_below(c, end, |d, m, sat| {
            // (below `WINDOW`: `d` is in the window)
            let l = (d - start) & (WINDOW - 1);
            let c = idf * f64::from(sat);
            if c > best[l] {
                best[l] = c;
            }
            set_bit(in_slot, l);
            put_bit(in_slot_describing, l, m);
        });
    };
    let mut others = false;
    if let Some(waiting) = waiting {
        while let Some(mut next) = waiting.peek_mut() {
            let Reverse((doc, j)) = *next;
            if doc >= end {
                break;
            }
            let c = &mut cursor[j];
            read(c, &rows[j], slot.alts[j].idf);
            others = true;
            if c.next == usize::MAX {
                PeekMut::pop(next);
            } else {
                *next = Reverse((c.next, j));
            }
        }
    } else {
        for (j, ((alt, c), row)) in slot.alts.iter().zip(cursor).zip(rows).enumerate() {
            if j != main && c.next < end {
                read(c, row, alt.idf);
                others = true;
            }
        }
    }
    others
}

/// `$body` with `$scale` the multiplication by `$weight`, or the identity when it is 1 (a
/// word's weight: `1 * x` is `x` to the bit, one multiplication fewer a value), each compiled
/// on its own.
macro_rules! with_scale {
    ($weight:expr, $scale:ident => $body:expr) => {
        if $weight == 1.0 {
            let $scale = |x: f64| x;
            $body
        } else {
            let weight = $weight;
            let $scale = move |x: f64| weight * x;
            $body
        }
    };
}

/// Adds a slot (weight `weight`) whose main alternative (factor `idf`) has no dense row to
/// the window's raw scores, posting by posting from cursor `c` to the window's `end`, as
/// [`add_slot`] sums it: with `best` (the best value of the slot's other alternatives per
/// skill, cleared as it is read), the larger of the two; the skills it matched put in `pres`,
/// and those it matched in a describing field in `desc`. (Not inlined: on its own, the
/// compiled loop keeps its arrays and factors in registers.)
#[inline(never)]
fn add_sparse(
    docs: &DocIds,
    c: &mut Cursor,
    (start, end): (usize, usize),
    (weight, idf): (f64, f64),
    total: &mut [f64; WINDOW],
    best: Option<&mut [f64; WINDOW]>,
    (pres, desc): (&mut Bits, &mut Bits),
) {
    with_scale!(weight, scale => match best {
        Some(best) => docs.read_below(c, end, |d, m, sat| {
            let l = (d - start) & (WINDOW - 1);
            // (`max` and `or`: the same value whatever the order of alternatives)
            let mut c = idf * f64::from(sat);
            if best[l] > c {
                c = best[l];
            }
            total[l] += scale(c);
            best[l] = 0.0;
            set_bit(pres, l);
            put_bit(desc, l, m);
        }),
        None => docs.read_below(c, end, |d, m, sat| {
            let l = (d - start) & (WINDOW - 1);
            total[l] += scale(idf * f64::from(sat));
            set_bit(pres, l);
            put_bit(desc, l, m);
        }),
    })
}

/// Adds a slot (weight `weight`) whose main alternative (factor `idf`) has a dense row (`row`,
/// the window's part of it) to the window's raw scores in one pass, as [`add_slot`] sums it:
/// with `best` (the best value of the slot's other alternatives per skill), the
/// larger of the two, `best` left zero for the next slot (in the same pass, not a second one);
/// an absent term adds `+0.0`, which changes no sum. (Not inlined: on its
/// own, the compiled loop keeps its factors in registers; sixteen documents an iteration,
/// eight vector operations each: half the interruption checks of eight, 1% fewer instructions
/// a search on the generated 50,000.)
#[inline(never)]
fn add_dense(weight: f64, idf: f64, row: &[f32], total: &mut [f64], best: Option<&mut [f64]>) {
    with_scale!(weight, scale => {
        let n = row.len();
        let total = &mut total[..n];
        let (row16, row_rest) = row.split_at(n & !15);
        let (total16, total_rest) = total.split_at_mut(n & !15);
        match best {
            None => {
                for (t, r) in total16.chunks_exact_mut(16).zip(row16.chunks_exact(16)) {
                    for j in 0..16 {
                        t[j] += scale(idf * f64::from(r[j]));
                    }
                }
                for (t, &r) in total_rest.iter_mut().zip(row_rest) {
                    *t += scale(idf * f64::from(r));
                }
            }
            Some(best) => {
                let best = &mut best[..n];
                let (best16, best_rest) = best.split_at_mut(n & !15);
                // (each of the others' values read once and cleared for the next slot)
                let one = |t: &mut f64, r: f32, b: &mut f64| {
                    let mut c = idf * f64::from(r);
                    if *b > c {
                        c = *b;
                    }
                    *b = 0.0;
                    *t += scale(c);
                };
                for ((t, r), b) in total16
                    .chunks_exact_mut(16)
                    .zip(row16.chunks_exact(16))
                    .zip(best16.chunks_exact_mut(16))
                {
                    for j in 0..16 {
                        one(&mut t[j], r[j], &mut b[j]);
                    }
                }
                for ((t, &r), b) in total_rest.iter_mut().zip(row_rest).zip(best_rest) {
                    one(t, r, b);
                }
            }
        }
    })
}

/// Of 64 raw scores (a word of a window's documents), those at least `cut[c]`, a bit each,
/// for each `c` that is `needed` (`0` for the others); the scores are moved to `out`, leaving
/// zeros.
#[inline(never)]
fn take_at_least(
    total: &mut [f64; 64],
    cut: [f64; 4],
    needed: [bool; 4],
    out: &mut [f64; 64],
) -> [u64; 4] {
    // (one loop that reads and clears: not a `memcpy` and a `memset`, which are calls out of
    // the compiled WebAssembly, each costing more than the 64 values themselves)
    for (o, t) in out.iter_mut().zip(total.iter_mut()) {
        *o = std::mem::take(t);
    }
    let mut g = [0u64; 4];
    // First against the lowest of the cuts needed: when none reaches it (most windows of a
    // large collection, once `theta` has grown), one pass instead of one a class.
    let (mut lowest, mut classes) = (f64::INFINITY, 0);
    for (&cut, &needed) in cut.iter().zip(&needed) {
        if needed {
            classes += 1;
            if cut < lowest {
                lowest = cut;
            }
        }
    }
    if classes > 1 && at_least(out, lowest) == 0 {
        return g;
    }
    for ((g, cut), needed) in g.iter_mut().zip(cut).zip(needed) {
        if needed {
            *g = at_least(out, cut);
        }
    }
    g
}

/// Of 64 raw scores, those at least `cut`, a bit each.
#[inline(always)]
fn at_least(total: &[f64; 64], cut: f64) -> u64 {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::{f64x2, f64x2_ge, f64x2_splat, i64x2_bitmask};
        let c = f64x2_splat(cut);
        let mut g = 0u64;
        // (eight scores an iteration: an eighth of the loop's interruption checks)
        for (i, t) in total.chunks_exact(8).enumerate() {
            let mut b = 0u8;
            for j in 0..4 {
                b |= i64x2_bitmask(f64x2_ge(f64x2(t[2 * j], t[2 * j + 1]), c)) << (2 * j);
            }
            g |= u64::from(b) << (8 * i);
        }
        g
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        let mut g = 0u64;
        for (j, &t) in total.iter().enumerate() {
            g |= u64::from(t >= cut) << j;
        }
        g
    }
}

impl SearchIndex {
    /// Derive what queries need beyond the stored arrays (after a build or a restore): the
    /// typo candidates' character signatures, the vocabulary's look-up tables and the dense
    /// rows' sets.
    pub(crate) fn with_derived(mut self) -> Self {
        self.typo_sig = self
            .typo_by_len
            .iter()
            .map(|ids| ids.iter().map(|&t| char_signature(self.term(t))).collect())
            .collect();
        self.derive_lookups();
        self.derive_dense();
        self
    }

    /// The documents matching `q`, best first ([`order`]), at most `limit`, with the request
    /// words each matched when `with_words`: the answer of [`rank`] and [`matched`] (see the
    /// module docs).
    pub(super) fn top_k(&self, q: &Query, limit: usize, with_words: bool) -> Vec<Scored> {
        if q.slots.is_empty() || limit == 0 {
            return Vec::new();
        }
        if limit > MAX_LIMIT || q.max <= 0.0 {
            return rank(self, q, limit)
                .into_iter()
                .map(|(doc, score)| Scored {
                    doc,
                    score,
                    matched: if with_words {
                        matched(self, q, doc)
                    } else {
                        Vec::new()
                    },
                })
                .collect();
        }
        // The pairs' bound over all pairs (as `score_all` sums it), and each pair's weight
        // over the ceiling with the bits of its two slots: a skill holds a pair only if it
        // matched both of its words (pairs are exact terms), so its pairs' bound is the sum
        // over those whose two slots it matched (all pairs when a slot is past the 64th).
        let pair_bound = if q.pairs.is_empty() {
            0.0
        } else {
            q.pairs.iter().map(|p| p.weight).sum::<f64>() / q.max
        };
        let slot_of = |t: u32| {
            q.slots
                .iter()
                .position(|s| {
                    s.alts
                        .first()
                        .is_some_and(|a| a.kind == "exact" && a.term == t)
                })
                .map_or(0, slot_bit)
        };
        let pair_slots: Vec<(f64, u64)> = q
            .pairs
            .iter()
            .map(|p| {
                let bits = slot_of(p.terms[0]) | slot_of(p.terms[1]);
                (
                    p.weight / q.max,
                    if bits.count_ones() == 2 { bits } else { 0 },
                )
            })
            .collect();
        // The room of one pair: the largest pair of two word slots, plus the others (a pair
        // whose word is not the first alternative of a word slot of its own, or past the
        // 64th).
        let room_one = {
            let is_word_pair = |bits: u64| {
                bits != 0
                    && q.slots
                        .iter()
                        .enumerate()
                        .all(|(i, s)| s.word || slot_bit(i) & bits == 0)
            };
            let (mut largest, mut others) = (0.0f64, 0.0f64);
            for &(w, bits) in &pair_slots {
                if is_word_pair(bits) {
                    largest = largest.max(w);
                } else {
                    others += w;
                }
            }
            largest + others
        };
        let pairs_bound = |mask: u64| -> f64 {
            pair_slots
                .iter()
                .filter(|&&(_, bits)| mask & bits == bits)
                .map(|p| p.0)
                .sum()
        };
        // What the pairs of a skill matching the slots of `mask` in describing fields can add
        // (a pair is held in a name or a description), told without looking at each pair: a
        // pair of two word slots needs both in `mask`, so there are at
        // most half the pair ends of its `k` slots (at most those of the `k` slots with the
        // most pairs), and they weigh at most as many of the heaviest pairs; the others
        // (`bits` 0) always count. Used when it is below the room of its class, before a
        // candidate is kept (past 64 slots a mask is not whole: the class's room).
        let (heaviest, busiest, others_room) = {
            let mut weights: Vec<f64> = pair_slots
                .iter()
                .filter(|p| p.1 != 0)
                .map(|p| p.0)
                .collect();
            weights.sort_unstable_by(|a, b| b.total_cmp(a));
            let mut heaviest = Vec::with_capacity(weights.len() + 1);
            heaviest.push(0.0f64);
            for w in weights {
                heaviest.push(heaviest[heaviest.len() - 1] + w);
            }
            let mut ends = vec![0usize; q.slots.len().min(64)];
            for &(_, bits) in &pair_slots {
                let mut b = bits;
                while b != 0 {
                    ends[b.trailing_zeros() as usize] += 1;
                    b &= b - 1;
                }
            }
            ends.sort_unstable_by(|a, b| b.cmp(a));
            let mut busiest = Vec::with_capacity(ends.len() + 1);
            busiest.push(0usize);
            for e in ends {
                busiest.push(busiest[busiest.len() - 1] + e);
            }
            let others: f64 = pair_slots.iter().filter(|p| p.1 == 0).map(|p| p.0).sum();
            (heaviest, busiest, others)
        };
        // (of a skill matching `n` slots in describing fields, at most all pairs' room: by
        // `n` up to the number of slots, once a request, not a `min` of two floats a skill,
        // which in WebAssembly is a call)
        let held_rooms: Vec<f64> = (0..busiest.len())
            .map(|k| {
                let pairs = (busiest[k] / 2).min(heaviest.len() - 1);
                pair_bound.min(others_room + heaviest[pairs])
            })
            .collect();
        let held_room = |n: usize| held_rooms[n.min(held_rooms.len() - 1)];
        let whole_masks = q.slots.len() <= 64;
        // The pairs' room of a skill of three words or more in describing fields, when it is
        // taken from the number of slots it matched there ([`held_room`]; `whole_masks`) and
        // pairs have any: those numbers are counted for a window's skills as their classes are.
        let count_held = whole_masks && !q.pairs.is_empty();
        let params = &self.params;
        // The evidence factor's largest value: a key is at most the share times this.
        let evidence_max = params.single_word_factor.max(1.0);
        // Per slot, the alternative with the most postings: read last in each window, it adds
        // the slot's share at once (with the best of the others for the same skill: a term has
        // one posting per skill); the others first keep their best per skill.
        let main_alt: Vec<usize> = q
            .slots
            .iter()
            .map(|slot| {
                (0..slot.alts.len())
                    .max_by_key(|&j| {
                        let r = self.range(slot.alts[j].term);
                        (r.end - r.start, std::cmp::Reverse(j))
                    })
                    .unwrap_or(0)
            })
            .collect();
        // Per alternative (slot by slot), its dense row, if it has one: its values for a window
        // added in one pass ([`add_dense`]), the skills it matched taken from the row's sets.
        let rows: Vec<Option<DenseRow>> = q
            .slots
            .iter()
            .flat_map(|slot| slot.alts.iter().map(|a| self.dense.row(a.term)))
            .collect();
        // A cursor per alternative (slot by slot): the first posting not yet read, the end of
        // its postings and the document of that first posting (none: `usize::MAX`), so that a
        // window it has nothing in costs one comparison.
        let mut cursor: Vec<Cursor> = Vec::new();
        let mut first_alt: Vec<usize> = Vec::with_capacity(q.slots.len() + 1);
        for slot in &q.slots {
            first_alt.push(cursor.len());
            cursor.extend(
                slot.alts
                    .iter()
                    .map(|a| self.docs.cursor(self.range(a.term), self.sats(a.term))),
            );
        }
        first_alt.push(cursor.len());
        // Per slot, in a collection of many windows, its other alternatives with postings left,
        // by their next document: a window reads those below its end and passes over the rest
        // without looking at them (a typo or a prefix can have hundreds of rare ones). (In a
        // few windows, looking at each is cheaper than keeping the heap.)
        let many_windows = self.n_docs > 4 * WINDOW;
        let mut waiting: Vec<Option<Waiting>> = q
            .slots
            .iter()
            .enumerate()
            .map(|(i, slot)| {
                many_windows.then(|| {
                    (0..slot.alts.len())
                        .filter(|&j| {
                            j != main_alt[i] && cursor[first_alt[i] + j].next != usize::MAX
                        })
                        .map(|j| Reverse((cursor[first_alt[i] + j].next, j)))
                        .collect()
                })
            })
            .collect();
        // Per-window scratch, kept between requests (zeroed once).
        let mut scratch = SCRATCH
            .with(|c| c.borrow_mut().take())
            .unwrap_or_else(Scratch::new);
        let Scratch {
            total,
            best,
            present,
            describing,
            in_slot,
            in_slot_describing,
            candidates,
        } = &mut *scratch;
        present.resize(q.slots.len(), [0; BITS]);
        describing.resize(q.slots.len(), [0; BITS]);
        let mut keys = Keys {
            limit,
            best: Vec::with_capacity(limit + 1),
            seen: 0,
            theta: f64::NEG_INFINITY,
            cut: [f64::NEG_INFINITY; 4],
            room: pair_bound,
            room_one,
            max: q.max,
            single: if q.words >= 2 {
                params.single_word_factor
            } else {
                1.0
            },
        };
        // The matched words and slots of 64 skills, read from the slots' sets only for those
        // that pass the cut (left zero).
        let mut words = [0u32; 64];
        let mut masks = [0u64; 64];
        // (and those it matched in a describing field, where the words of its pairs are)
        let mut described = [0u64; 64];
        // (and their raw scores, taken from the window's)
        let mut raw = [0.0f64; 64];
        let mut start = 0;
        while start < self.n_docs {
            let end = start.saturating_add(WINDOW);
            let len = end.min(self.n_docs) - start;
            // The window's postings, slot by slot in the request's order: each slot's share
            // added to the raw scores, and the skills it matched (in a describing field or
            // not) put in its sets.
            for (i, slot) in q.slots.iter().enumerate() {
                let (pres, desc) = (&mut present[i], &mut describing[i]);
                let main = main_alt[i];
                let others = read_others(
                    &self.docs,
                    slot,
                    main,
                    (
                        &mut cursor[first_alt[i]..first_alt[i + 1]],
                        &rows[first_alt[i]..first_alt[i + 1]],
                    ),
                    waiting[i].as_mut(),
                    (start, end),
                    best,
                    (in_slot, in_slot_describing),
                );
                let Some(alt) = slot.alts.get(main) else {
                    continue;
                };
                let (idf, weight) = (alt.idf, slot.weight);
                if let Some(row) = &rows[first_alt[i] + main] {
                    add_dense(
                        weight,
                        idf,
                        &row.values[start..][..len],
                        &mut total[..],
                        others.then_some(&mut best[..len]),
                    );
                    let words = start / 64..(start + len).div_ceil(64);
                    or_of(pres, in_slot, &row.present[words.clone()]);
                    or_of(desc, in_slot_describing, &row.describing[words]);
                } else {
                    let c = &mut cursor[first_alt[i] + main];
                    if c.next < end {
                        add_sparse(
                            &self.docs,
                            c,
                            (start, end),
                            (weight, idf),
                            total,
                            others.then_some(&mut **best),
                            (pres, desc),
                        );
                    }
                    if others {
                        // The skills only another alternative touched.
                        for k in 0..BITS {
                            let mut rest = in_slot[k] & !pres[k];
                            while rest != 0 {
                                let l = k << 6 | rest.trailing_zeros() as usize;
                                total[l] += weight * best[l];
                                best[l] = 0.0;
                                rest &= rest - 1;
                            }
                            pres[k] |= in_slot[k];
                            desc[k] |= in_slot_describing[k];
                        }
                    }
                }
                if others {
                    *in_slot = [0; BITS];
                    *in_slot_describing = [0; BITS];
                }
            }
            // The window's skills, in document order, 64 at a time: those any slot matched,
            // and their [`Class`]es, from counts to three of the request words they matched, in
            // describing fields and in all (over the slots' sets, a bit a skill).
            let (mut touched_w, mut one_w, mut two_w) = ([0u64; BITS], [0u64; BITS], [0u64; BITS]);
            let mut three_w = [0u64; BITS];
            let (mut any_one_w, mut any_two_w) = ([0u64; BITS], [0u64; BITS]);
            // (and, with `count_held`, the number of slots each matched in a describing
            // field, bit `j` of it in `held_w[j]`: at most 64, seven bits)
            let mut held_w = [[0u64; BITS]; 7];
            for (i, slot) in q.slots.iter().enumerate() {
                let (p, d) = (&present[i], &describing[i]);
                // (a slot that matched nothing here adds nothing)
                if p.iter().fold(0, |a, &w| a | w) == 0 {
                    continue;
                }
                for k in 0..BITS {
                    touched_w[k] |= p[k];
                }
                if slot.word {
                    for k in 0..BITS {
                        three_w[k] |= two_w[k] & d[k];
                        two_w[k] |= one_w[k] & d[k];
                        one_w[k] |= d[k];
                        any_two_w[k] |= any_one_w[k] & p[k];
                        any_one_w[k] |= p[k];
                    }
                }
                if count_held {
                    for k in 0..BITS {
                        // (a binary counter's carry, bit plane by bit plane)
                        let mut carry = p[k] & d[k];
                        for plane in held_w.iter_mut() {
                            if carry == 0 {
                                break;
                            }
                            let c = plane[k];
                            plane[k] = c ^ carry;
                            carry &= c;
                        }
                    }
                }
            }
            for k in 0..len.div_ceil(64) {
                let (touched, one, two) = (touched_w[k], one_w[k], two_w[k]);
                let any_two = any_two_w[k];
                let (paired, one_pair) = (three_w[k], two & !three_w[k]);
                let full = !two & if q.words >= 2 { any_two & one } else { !0 };
                let class = |b: usize| {
                    if paired >> b & 1 != 0 {
                        Class::Paired
                    } else if one_pair >> b & 1 != 0 {
                        Class::OnePair
                    } else if full >> b & 1 != 0 {
                        Class::Full
                    } else {
                        Class::Single
                    }
                };
                if touched == 0 {
                    continue;
                }
                // Most are far below `theta`: told by one comparison with their class's cut
                // as it is now (it only grows: a skill below it is below the cut of any later
                // moment), 64 at a time.
                let at = k << 6;
                let single = !(two | full);
                let g = take_at_least(
                    (&mut total[at..at + 64]).try_into().expect("64 scores"),
                    keys.cut,
                    [full, paired, single, one_pair].map(|c| c & touched != 0),
                    &mut raw,
                );
                let mut pass = touched
                    & (full & g[Class::Full as usize]
                        | paired & g[Class::Paired as usize]
                        | single & g[Class::Single as usize]
                        | one_pair & g[Class::OnePair as usize]);
                keys.seen += (touched & !pass).count_ones() as usize;
                // Of those of three words or more in describing fields, those that cannot reach
                // `theta` with the room of the pairs their describing slots can hold: the test
                // below, with the `theta` of now (it only grows), before their words and slots
                // are read.
                if count_held {
                    let theta = keys.theta();
                    let mut m = pass & paired;
                    while m != 0 {
                        let b = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let n = held_w
                            .iter()
                            .enumerate()
                            .fold(0, |n, (j, plane)| n | ((plane[k] >> b & 1) as usize) << j);
                        let pairs_room = held_room(n);
                        if !reaches((raw[b] / q.max + pairs_room) * evidence_max, theta) {
                            pass &= !(1 << b);
                            keys.seen += 1;
                        }
                    }
                }
                if pass == 0 {
                    continue;
                }
                // The matched words and slots of the others, from the slots' sets.
                for (i, slot) in q.slots.iter().enumerate() {
                    let mut m = present[i][k] & pass;
                    while m != 0 {
                        let b = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let describes = describing[i][k] >> b & 1;
                        words[b] += slot_words(slot, describes != 0);
                        masks[b] |= slot_bit(i);
                        described[b] |= slot_bit(i) * describes;
                    }
                }
                // Then each in document order, with the cut and `theta` of the moment.
                while pass != 0 {
                    let b = pass.trailing_zeros() as usize;
                    pass &= pass - 1;
                    let l = k << 6 | b;
                    let raw = raw[b];
                    let w = std::mem::take(&mut words[b]);
                    let mask = std::mem::take(&mut masks[b]);
                    let in_describing = std::mem::take(&mut described[b]);
                    let class = class(b);
                    if raw < keys.cut[class as usize] {
                        keys.seen += 1;
                        continue;
                    }
                    let theta = keys.theta();
                    let pairs_room = match class {
                        Class::Paired if whole_masks => {
                            held_room(in_describing.count_ones() as usize)
                        }
                        Class::Paired => pair_bound,
                        Class::OnePair => room_one,
                        _ => 0.0,
                    };
                    // Its key is at most its share times the largest evidence factor, plus
                    // the pairs: below `theta`, it changes neither the best keys nor the
                    // answer.
                    if !reaches((raw / q.max + pairs_room) * evidence_max, theta) {
                        keys.seen += 1;
                        continue;
                    }
                    let (score, _, _, key) = finalise(params, q, raw, 0.0, w);
                    keys.add(key);
                    // (what its pairs can add at most, `pairs_bound`, is taken only for the
                    // skills still near the end's `theta`, below)
                    let bound = pairs_room;
                    if reaches(key + bound, theta) {
                        candidates.push(Candidate {
                            doc: start + l,
                            raw,
                            words: w,
                            mask,
                            described: in_describing,
                            key,
                            score,
                            bound,
                        });
                    }
                }
            }
            for i in 0..q.slots.len() {
                present[i] = [0; BITS];
                describing[i] = [0; BITS];
            }
            start = end;
        }
        // Pairs, as `score_all` adds them, then the best `limit` in `order`.
        let threshold = keys.theta();
        let mut pairs = PairScorer::new(q);
        let mut top: Vec<(usize, f64, f64, u64)> = Vec::with_capacity(limit + 1);
        // What a candidate's own pairs can add: those whose two slots it matched in describing
        // fields (a pair is held in a name or a description), at most its class's room.
        // (a candidate whose key plus its class's room cannot reach `threshold` is not
        // among them: the `limit` skills whose keys made `threshold` are candidates with keys
        // at least that, so the `limit` kept are at least that when it comes; left out before
        // its own pairs' room is summed and the rest sorted, in the same order)
        candidates.retain(|c| reaches(c.key + c.bound, threshold));
        let bound = |c: &Candidate| {
            if c.bound == 0.0 || q.slots.len() > 64 {
                c.bound
            } else {
                pairs_bound(c.described).min(c.bound)
            }
        };
        // (the likeliest first, by their key plus what their own pairs can add: the `limit`
        // kept fill with high keys early, and the rest are told by one comparison that they
        // cannot reach the last kept; the answer is the best `limit` in [`order`], whatever
        // order they come in)
        let mut bounded: Vec<(f64, usize)> = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| (c.key + bound(c), i))
            .collect();
        bounded.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for &(most, i) in &bounded {
            let c = &candidates[i];
            // (a skill whose key with all its pairs cannot reach the `limit`-th kept, with its
            // pairs, cannot be among the best: its pairs are not looked at; nor can any after
            // it)
            if top.len() == limit && !reaches(most, top[limit - 1].1) {
                break;
            }
            let (mut key, mut score) = (c.key, c.score);
            if !q.pairs.is_empty()
                && reaches(c.key + c.bound, threshold)
                && reaches(c.key + bound(c), threshold)
                && let Some((s, k)) = with_pairs(self, q, &mut pairs, c.raw, c.words, c.doc)
            {
                (score, key) = (s, k);
            }
            // ([`order`]: by key, then ties broken by priority and path, only looked at for
            // equal keys; after the last kept, a tie of the last kept's key, often a copy of
            // one skill, is told by one comparison)
            if top.len() == limit && kept_before(self, &top[limit - 1], c.doc, key) {
                continue;
            }
            // (before the last kept when all are kept, as just tested: `at < limit`)
            let at = top.partition_point(|h| kept_before(self, h, c.doc, key));
            if top.len() == limit {
                top.pop();
            }
            top.insert(at, (c.doc, key, score, c.mask));
        }
        // Every per-window array is back to zero and every list empty (a request that
        // panicked never returns its scratch).
        candidates.clear();
        SCRATCH.with(|c| *c.borrow_mut() = Some(scratch));
        top.into_iter()
            .map(|(doc, _, score, mask)| Scored {
                doc,
                score,
                matched: if with_words {
                    matched_of(self, q, doc, mask)
                } else {
                    Vec::new()
                },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raw score below [`raw_cut`] fails the exact test, and the cut is not far below the
    /// exact one (so it spares most of what the exact test drops), over a sweep of thetas,
    /// rooms, ceilings and evidence factors, including a room close to theta.
    #[test]
    fn raw_cut_is_on_the_safe_side_of_reaches() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut unit = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut spared = 0;
        for i in 0..200_000 {
            let theta = unit() * 2.0;
            let max = 0.1 + unit() * 400.0;
            let evidence_max = if i % 2 == 0 { 1.0 } else { 1.0 + unit() };
            let room = match i % 3 {
                0 => 0.0,
                // (nearly all of theta: the subtraction cancels)
                1 => theta / evidence_max * (1.0 - unit() * 1e-9),
                _ => unit() * theta,
            };
            let cut = raw_cut(theta, room, max, evidence_max);
            if cut == f64::NEG_INFINITY {
                continue;
            }
            spared += 1;
            let below = cut.next_down();
            assert!(
                !reaches((below / max + room) * evidence_max, theta),
                "theta {theta} room {room} max {max} evidence {evidence_max}: {below} reaches"
            );
            // the exact cut, found by bisection, is at most a hair above (the slack: 1e-12
            // of the numbers involved)
            let (mut lo, mut hi) = (cut, max * 4.0);
            for _ in 0..200 {
                let mid = (lo + hi) / 2.0;
                if reaches((mid / max + room) * evidence_max, theta) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let slack = (theta / evidence_max + room) * max * 1e-11;
            assert!(lo - cut <= slack, "cut {cut}, exact {lo}");
        }
        assert!(spared > 100_000, "{spared}");
    }
}
