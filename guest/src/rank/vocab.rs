//! The sorted vocabulary: a request term's number and the terms that are a prefix of it, by
//! their bytes ([`SearchIndex::term_table`]); the terms it is a prefix of, beside it or, for a
//! text the vocabulary lacks, by one descent of the vocabulary read as a trie; and its typo
//! candidates from a one-edit (Damerau-Levenshtein) automaton run over that trie.
//!
//! The terms are sorted by bytes, so the terms sharing a prefix are a range, and the range of
//! those that go on with byte `c` is found within it by two bisections that read that one byte
//! of each term probed (the bytes before it are shared): a trie's walk without a trie in
//! memory. Characters are UTF-8 in byte order, so a character's terms are a range too.

use super::*;
use std::ops::Range;

/// The longest request term (characters) whose typo candidates come from the automaton (its
/// states are bits of a `u64`); a longer one falls back to the scan of
/// [`Statistics::each_typo_candidate`].
const AUTOMATON_MAX_CHARS: usize = 60;

/// No pending transposition.
const NO_SWAP: usize = usize::MAX;

/// Entries of [`SearchIndex::prefix2`] for one first byte: a term of that one byte, then each
/// second byte.
const ROW: usize = 257;

/// The key of a term's first two bytes in [`SearchIndex::prefix2`] (keys grow with the terms'
/// order).
#[inline]
fn key2(t: &[u8]) -> usize {
    match t {
        [] => 0,
        [a] => usize::from(*a) * ROW,
        [a, b, ..] => usize::from(*a) * ROW + 1 + usize::from(*b),
    }
}

/// The hash of a term's bytes in [`SearchIndex::term_table`].
#[inline]
fn term_hash(text: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(text.as_bytes());
    h.finish()
}

impl SearchIndex {
    /// Derive what a request's preparation reads beyond the stored arrays (after a build or a
    /// restore, from [`SearchIndex::with_derived`]): [`SearchIndex::prefix2`] and
    /// [`SearchIndex::idf_by_df`].
    pub(super) fn derive_lookups(&mut self) {
        self.prefix2 = self.prefix2_table();
        self.term_table = self.term_table_of();
        self.idf_by_df = (0..=self.n_docs)
            .map(|df| idf_of(self.n_docs, df))
            .collect();
        self.known = self.known_table();
    }

    /// The collection's known words as the table a request's analysis reads (`None` when
    /// there are none): a hash of word numbers over the index's own word list and
    /// vocabulary, which it shares (no copy of either's text).
    fn known_table(&self) -> Option<std::sync::Arc<crate::text::KnownWords>> {
        let known = crate::text::KnownWords::new(self.vocab.clone(), self.words.clone());
        (!known.is_empty()).then(|| std::sync::Arc::new(known))
    }

    /// The collection's lowercase words and the number of each one's term (`None`: the
    /// analysis drops the word), as the build found them.
    pub(super) fn known_entries(&self) -> impl Iterator<Item = (&str, Option<u32>)> {
        self.words.entries()
    }

    /// [`SearchIndex::term_table`]: every term's number, by the hash of its bytes.
    fn term_table_of(&self) -> hashbrown::HashTable<u32> {
        let n = self.vocab.ends.len() as u32;
        let mut table = hashbrown::HashTable::with_capacity(n as usize);
        for t in 0..n {
            table.insert_unique(term_hash(self.term(t)), t, |&u| term_hash(self.term(u)));
        }
        table
    }

    /// The number of term `text` from [`SearchIndex::term_table`].
    #[inline]
    pub(super) fn find_term(&self, text: &str) -> Option<u32> {
        self.term_table
            .find(term_hash(text), |&t| {
                crate::bytes::eq_str(self.term(t), text)
            })
            .copied()
    }

    /// [`SearchIndex::prefix2`]: entry `j` is the first term whose [`key2`] is at least `j`
    /// (`256 * 257 + 1` entries, 257 KiB).
    pub(super) fn prefix2_table(&self) -> Vec<u32> {
        let n = self.vocab.ends.len() as u32;
        let mut table = Vec::with_capacity(256 * ROW + 1);
        for t in 0..n {
            let key = key2(self.term(t).as_bytes());
            while table.len() <= key {
                table.push(t);
            }
        }
        table.resize(256 * ROW + 1, n);
        table
    }

    /// The terms of `r` (a node of the vocabulary's trie: the terms sharing their first `k`
    /// bytes, `k` at most 1) whose byte `k` is `c`, from [`SearchIndex::prefix2`].
    #[inline]
    fn narrow_by_table(&self, r: &Range<u32>, k: usize, c: u8) -> Option<Range<u32>> {
        let t = &self.prefix2;
        if t.len() != 256 * ROW + 1 || r.is_empty() {
            return None;
        }
        let c = usize::from(c);
        let (a, b) = match k {
            0 => (t[c * ROW], t[(c + 1) * ROW]),
            1 => {
                let first = usize::try_from(self.key_at(r.start, 0)).ok()?;
                let j = first * ROW + 1 + c;
                (t[j], t[j + 1])
            }
            _ => return None,
        };
        // (within `r`, whatever it is)
        let (a, b) = (a.max(r.start), b.min(r.end));
        Some(if a < b { a..b } else { a..a })
    }

    /// Byte range of term `i` in `vocab.text`.
    #[inline(always)]
    fn span(&self, i: u32) -> (usize, usize) {
        let i = i as usize;
        let start = if i == 0 {
            0
        } else {
            self.vocab.ends[i - 1] as usize
        };
        (start, self.vocab.ends[i] as usize)
    }

    /// Byte length of term `i`.
    #[inline(always)]
    pub(super) fn term_len(&self, i: u32) -> usize {
        let (s, e) = self.span(i);
        e - s
    }

    /// Byte `k` of term `i`, or -1 past its end (a term ending there sorts first).
    #[inline(always)]
    fn key_at(&self, i: u32, k: usize) -> i32 {
        let (s, e) = self.span(i);
        if s + k < e {
            i32::from(self.vocab.text.as_bytes()[s + k])
        } else {
            -1
        }
    }

    /// The terms of `r` (sharing their first `k` bytes) whose byte `k` is `c`.
    #[inline]
    pub(super) fn narrow(&self, r: Range<u32>, k: usize, c: u8) -> Range<u32> {
        if k < 2
            && let Some(found) = self.narrow_by_table(&r, k, c)
        {
            return found;
        }
        let c = i32::from(c);
        let (mut lo, mut hi) = (r.start, r.end);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.key_at(mid, k) < c {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == r.end || self.key_at(lo, k) != c {
            return lo..lo;
        }
        lo..self.run_end(lo, r.end, |i| self.key_at(i, k) == c)
    }

    /// The first `i` in `a..end` where `same(i)` is false, knowing `same(a)` is true and
    /// `same` is true then false: galloping (the run is often short), then bisecting.
    #[inline]
    fn run_end(&self, a: u32, end: u32, same: impl Fn(u32) -> bool) -> u32 {
        let mut lo = a; // same(lo)
        let mut step = 1u32;
        let mut hi = loop {
            let probe = lo.saturating_add(step);
            if probe >= end {
                break end;
            }
            if !same(probe) {
                break probe;
            }
            lo = probe;
            step = step.saturating_mul(2);
        };
        // same(lo), !same(hi) (or hi == end)
        lo += 1;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if same(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// [`Statistics::lookup`]: the term by its bytes ([`SearchIndex::term_id`]); the terms it
    /// is a prefix of follow it, or, for a text the vocabulary lacks, are found by one descent
    /// of the vocabulary; those that are a prefix of it are found by their bytes.
    pub(super) fn descend_lookup(
        &self,
        text: &str,
        min_chars: Option<usize>,
        mut f: impl FnMut(u32),
    ) -> Option<u32> {
        let exact = self.term_id(text);
        let Some(min) = min_chars else {
            return exact;
        };
        // (and how many of its bytes some term starts with: no longer prefix is a term)
        let (extensions, reach) = match exact {
            Some(id) => {
                let end = self.run_end(id, self.vocab.ends.len() as u32, |t| {
                    crate::bytes::starts_with(self.term(t), text)
                });
                (id + 1..end, text.len())
            }
            None => {
                let mut r = 0..self.vocab.ends.len() as u32;
                let mut reach = text.len();
                for (k, &c) in text.as_bytes().iter().enumerate() {
                    r = self.narrow(r, k, c);
                    if r.is_empty() {
                        reach = k;
                        break;
                    }
                }
                (r, reach)
            }
        };
        extensions.for_each(&mut f);
        // (the prefixes of at least `min` characters, shortest first)
        for (cut, _) in text
            .char_indices()
            .skip(min)
            .take_while(|&(cut, _)| cut <= reach)
        {
            if let Some(t) = self.term_id(&text[..cut]) {
                f(t);
            }
        }
        exact
    }

    /// The typo candidates of `text` (see [`Statistics::each_typo_near`]): the terms at most one
    /// edit from it (insertion, deletion, substitution or transposition of adjacent
    /// characters) that two skills have, `lens` bytes long, by length then number (the order
    /// of `typo_by_len`). `None` when `text` is too long for the automaton.
    pub(super) fn typo_automaton(
        &self,
        text: &str,
        lens: &std::ops::RangeInclusive<usize>,
    ) -> Option<Vec<u32>> {
        let mut q = [0 as char; AUTOMATON_MAX_CHARS];
        let mut at = [text.len(); AUTOMATON_MAX_CHARS + 1];
        let mut m = 0;
        for (i, c) in text.char_indices() {
            if m == AUTOMATON_MAX_CHARS {
                return None;
            }
            q[m] = c;
            at[m] = i;
            m += 1;
        }
        let mut walk = Walk {
            ix: self,
            text,
            q: &q[..m],
            at: &at[..=m],
            lens,
            out: Vec::new(),
        };
        if self.vocab.ends.is_empty() {
            return Some(Vec::new());
        }
        walk.node(
            0..self.vocab.ends.len() as u32,
            0,
            State {
                exact: true,
                d: 0,
                ones: 0,
                swap: NO_SWAP,
            },
        );
        let mut out = walk.out;
        out.sort_unstable_by_key(|&t| (self.term_len(t), t));
        Some(out)
    }
}

/// A run of the one-edit automaton of request term `q` over the vocabulary (depth first, each
/// node of the vocabulary's trie at most once).
///
/// The automaton's states after reading a term's first characters: "no edit yet" (the
/// characters read are `q[..d]`: only along `q`'s own path), "one edit, at `i`" (the rest
/// must be `q[i..]`; a set of them, as bits), and "transposed at `i`" (read `q[i + 1]` where
/// `q[i]` was due: `q[i]` must come next, then `q[i + 2..]`).
struct Walk<'a> {
    ix: &'a SearchIndex,
    text: &'a str,
    q: &'a [char],
    /// The byte offset in `text` of each character of `q`, and `text`'s length.
    at: &'a [usize],
    lens: &'a std::ops::RangeInclusive<usize>,
    out: Vec<u32>,
}

/// A node of at most this many terms is not walked: each of its terms is checked.
const FEW: u32 = 3;

/// The automaton's state at a node (see [`Walk`]).
#[derive(Clone, Copy)]
struct State {
    /// No edit yet: the node is `q[..d]`.
    exact: bool,
    d: usize,
    /// One edit: bit `i` when `q[i..]` may follow.
    ones: u64,
    /// A pending transposition at `i` ([`NO_SWAP`]: none).
    swap: usize,
}

impl Walk<'_> {
    /// The state after reading character `x` in state `s`.
    #[inline]
    fn step(&self, s: State, x: char) -> State {
        let (q, m) = (self.q, self.q.len());
        let mut next = State {
            exact: false,
            d: s.d + 1,
            ones: 0,
            swap: NO_SWAP,
        };
        let mut bits = s.ones & !(1 << m);
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if q[i] == x {
                next.ones |= 1 << (i + 1);
            }
        }
        if s.swap != NO_SWAP && q[s.swap] == x {
            next.ones |= 1 << (s.swap + 2);
        }
        if s.exact {
            let d = s.d;
            next.exact = d < m && x == q[d];
            // one edit here: `x` inserted (`q[d..]` due), substituted for `q[d]` (`q[d + 1..]`
            // due), or `q[d]` deleted and `x` is `q[d + 1]` (or `q[d]` and `q[d + 1]` swapped)
            next.ones |= 1 << d;
            if d < m && x != q[d] {
                next.ones |= 1 << (d + 1);
            }
            if d + 1 < m && x == q[d + 1] {
                next.ones |= 1 << (d + 2);
                if q[d] != q[d + 1] {
                    next.swap = d;
                }
            }
        }
        next
    }

    /// Each term of `r` that is a candidate one edit from `q` (the automaton's answer, by
    /// the rule itself).
    #[inline(never)]
    fn check(&mut self, r: Range<u32>) {
        for t in r {
            if self.lens.contains(&self.ix.term_len(t))
                && self.ix.range(t).len() >= 2
                && within_one_edit(self.ix.term(t), self.text)
            {
                self.out.push(t);
            }
        }
    }

    /// Node `r` (the terms sharing their first `k` bytes) in state `s`, past the edit (not
    /// `exact`): what follows is fixed, `q[i..]` for each `i` of `s.ones` and `q[s.swap]`
    /// then `q[s.swap + 2..]` for a pending transposition, so each is looked up directly
    /// ([`Walk::follow`]) instead of walked node by node. These strings differ (by length, or
    /// in their first character: a transposition is pending only where `q[i] != q[i + 1]`),
    /// so each term is found at most once, as by the walk.
    #[inline(never)]
    fn rests(&mut self, r: Range<u32>, k: usize, s: State) {
        let bytes = self.text.as_bytes();
        let mut bits = s.ones;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            self.follow(r.clone(), k, &bytes[self.at[i]..], &[]);
        }
        if s.swap != NO_SWAP {
            let i = s.swap;
            self.follow(
                r,
                k,
                &bytes[self.at[i]..self.at[i + 1]],
                &bytes[self.at[i + 2]..],
            );
        }
    }

    /// The term of node `r` (the terms sharing their first `k` bytes) followed by the bytes
    /// `a` then `b`, if a typo candidate: of a length in `lens`, in two skills or more.
    #[inline]
    fn follow(&mut self, mut r: Range<u32>, mut k: usize, a: &[u8], b: &[u8]) {
        let ix = self.ix;
        let len = k + a.len() + b.len();
        if !self.lens.contains(&len) {
            return;
        }
        for &c in a.iter().chain(b) {
            r = ix.narrow(r, k, c);
            if r.is_empty() {
                return;
            }
            k += 1;
        }
        if ix.term_len(r.start) == len && ix.range(r.start).len() >= 2 {
            self.out.push(r.start);
        }
    }

    /// Node `r` (the terms sharing their first `k` bytes) in state `s`, on `q`'s own path
    /// (`exact`): every child is stepped into, those past the edit by [`Walk::rests`].
    fn node(&mut self, r: Range<u32>, k: usize, s: State) {
        debug_assert!(s.exact);
        let m = self.q.len();
        let ix = self.ix;
        if r.len() <= FEW as usize {
            self.check(r);
            return;
        }
        // its own term: `q` (no edit), `q` without its last character, or one edit done
        if (s.d + 1 >= m || s.ones >> m & 1 == 1)
            && self.lens.contains(&k)
            && ix.term_len(r.start) == k
            && ix.range(r.start).len() >= 2
        {
            self.out.push(r.start);
        }
        if k >= *self.lens.end() {
            return;
        }
        // every child character
        let bytes = ix.vocab.text.as_bytes();
        let mut a = r.start;
        if ix.term_len(a) == k {
            a += 1;
        }
        while a < r.end {
            let (start, _) = ix.span(a);
            // (`k` bytes down the trie: a character boundary of every term of the node)
            let Some(x) = ix
                .vocab
                .text
                .get(start + k..)
                .and_then(|t| t.chars().next())
            else {
                break;
            };
            let w = x.len_utf8();
            let x_bytes = &bytes[start + k..start + k + w];
            let lead = x_bytes[0];
            let end = if w == 1 {
                match ix.narrow_by_table(&r, k, lead) {
                    Some(child) => child.end,
                    None => ix.run_end(a, r.end, |i| ix.key_at(i, k) == i32::from(lead)),
                }
            } else {
                ix.run_end(a, r.end, |i| {
                    let (s, e) = ix.span(i);
                    e >= s + k + w && &bytes[s + k..s + k + w] == x_bytes
                })
            };
            if end - a <= FEW && self.text.as_bytes().get(k..k + w) != Some(x_bytes) {
                // off `q`'s path: a few terms, checked
                self.check(a..end);
                a = end;
                continue;
            }
            let next = self.step(s, x);
            let child = a..end;
            a = end;
            if next.exact {
                self.node(child, k + w, next);
            } else {
                self.rests(child, k + w, next);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small pseudo-random generator (deterministic).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % n as u64) as usize
        }
    }

    /// Words over a small alphabet (so that many are one edit apart), non-ASCII letters
    /// included.
    fn words(rng: &mut Lcg, n: usize) -> Vec<String> {
        const ALPHABET: [&str; 9] = ["a", "b", "c", "d", "e", "é", "ß", "日", "s"];
        (0..n)
            .map(|_| {
                let len = 1 + rng.next(8);
                (0..len)
                    .map(|_| ALPHABET[rng.next(ALPHABET.len())])
                    .collect()
            })
            .collect()
    }

    fn index(rng: &mut Lcg) -> SearchIndex {
        // each word in one or two skills (typo candidates need two)
        let vocab = words(rng, 1500);
        let docs: Vec<SearchDoc> = (0..300)
            .map(|d| SearchDoc {
                skill_path: format!("s{d}"),
                name: format!("n{d}"),
                body_prefix: (0..12)
                    .map(|_| vocab[rng.next(vocab.len())].as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                ..Default::default()
            })
            .collect();
        SearchIndex::build(&docs)
    }

    /// The candidates the scan gives: every term of two skills, `lens` bytes long, one edit
    /// from `text`, by length then number.
    fn scanned(ix: &SearchIndex, text: &str, lens: std::ops::RangeInclusive<usize>) -> Vec<u32> {
        let mut out = Vec::new();
        ix.each_typo_candidate(lens, |t| {
            let (a, b): (Vec<char>, Vec<char>) =
                (ix.term(t).chars().collect(), text.chars().collect());
            if one_edit(&a, &b) {
                out.push(t);
            }
        });
        out
    }

    #[test]
    fn the_automaton_finds_what_the_scan_finds() {
        let mut rng = Lcg(7);
        let ix = index(&mut rng);
        assert!(ix.vocabulary_len() > 200, "{}", ix.vocabulary_len());
        let mut queries = words(&mut rng, 3000);
        // terms of the vocabulary, with one edit or none
        for t in 0..ix.vocabulary_len() as u32 {
            let term = ix.term(t).to_string();
            let mut chars: Vec<char> = term.chars().collect();
            queries.push(term.clone());
            if chars.len() >= 2 {
                chars.swap(0, 1);
                queries.push(chars.iter().collect());
                chars.pop();
                queries.push(chars.iter().collect());
            }
        }
        let mut found = 0;
        for q in &queries {
            let l = q.len();
            for lens in [l.saturating_sub(2)..=l + 2, 0..=64, l..=l] {
                let want = scanned(&ix, q, lens.clone());
                let got = ix.typo_automaton(q, &lens).expect("short");
                assert_eq!(got, want, "{q:?} {lens:?}");
                found += got.len();
            }
        }
        assert!(found > 1000, "{found}");
        // too long for the automaton: the scan's way
        let long = "a".repeat(AUTOMATON_MAX_CHARS + 1);
        assert!(ix.typo_automaton(&long, &(0..=100)).is_none());
    }

    #[test]
    fn within_one_edit_is_one_edit_over_characters() {
        let mut rng = Lcg(3);
        let mut ws = words(&mut rng, 300);
        // and a variant of each, one or two edits away
        for w in ws.clone() {
            let mut c: Vec<char> = w.chars().collect();
            let i = rng.next(c.len());
            match rng.next(4) {
                0 => {
                    c.remove(i);
                }
                1 => c.insert(i, 'é'),
                2 => c[i] = '日',
                _ if c.len() >= 2 => c.swap(0, 1),
                _ => c.push('s'),
            }
            if rng.next(3) == 0 {
                c.push('a');
            }
            ws.push(c.into_iter().collect());
        }
        let mut near = 0;
        for a in &ws {
            for b in &ws {
                let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
                let want = one_edit(&ca, &cb);
                assert_eq!(within_one_edit(a, b), want, "{a:?} {b:?}");
                near += usize::from(want);
            }
        }
        assert!(near > 1000, "{near}");
    }

    #[test]
    fn one_descent_finds_the_term_its_extensions_and_prefixes() {
        let mut rng = Lcg(11);
        let ix = index(&mut rng);
        assert_eq!(
            ix.term_table.len(),
            ix.vocabulary_len(),
            "every term in the table"
        );
        let mut queries = words(&mut rng, 3000);
        queries.extend((0..ix.vocabulary_len() as u32).map(|t| ix.term(t).to_string()));
        queries.push("ab".repeat(30));
        // (the oracle finds a term by bisection, not through the table the lookup reads)
        let term_id = |s: &str| {
            let t = ix.term_lower_bound(s);
            ((t as usize) < ix.vocabulary_len() && ix.term(t) == s).then_some(t)
        };
        let mut expanded = 0;
        for q in &queries {
            for min in [None, Some(0), Some(1), Some(2), Some(4)] {
                let mut want = Vec::new();
                let want_id = {
                    let id = term_id(q);
                    if let Some(min) = min {
                        ix.each_extension(q, |t| want.push(t));
                        for (cut, _) in q.char_indices().skip(min) {
                            want.extend(term_id(&q[..cut]));
                        }
                    }
                    id
                };
                let mut got = Vec::new();
                let got_id = ix.lookup(q, min, |t| got.push(t));
                assert_eq!((got_id, &got), (want_id, &want), "{q:?} {min:?}");
                expanded += got.len();
            }
        }
        assert!(expanded > 1000, "{expanded}");
    }
}
