//! Byte-string primitives 8 bytes at a time, in safe Rust.
//!
//! Built for `wasm32`, `str::cmp`/`==` end in wasi-libc's `memcmp` (a byte loop) and
//! `core`'s `memchr`/`memrchr` work on 4-byte words: on the paths and texts of an index build
//! (long shared prefixes, whole files scanned) that is a large share of the component's time.
//! These functions read `u64` words instead (one `i64.load` each in wasm). Their results are
//! exactly those of the standard library (property tests below).

use std::cmp::Ordering;

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;
const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;

#[inline(always)]
fn word(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_le_bytes(w)
}

/// The high bit of every byte of `x` that is zero, and no other bit (exact, no false
/// positives: the bytes do not borrow from each other).
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7)
}

/// Index of the first differing byte of two little-endian words that differ.
#[inline(always)]
fn first_diff(x: u64, y: u64) -> usize {
    ((x ^ y).trailing_zeros() / 8) as usize
}

/// Bytewise (lexicographic) order, as `<[u8]>::cmp` and `str::cmp`: [`cmp_words`] in wasm,
/// the standard comparison elsewhere (a native `memcmp` is vectorised and faster still).
#[inline]
pub fn cmp(a: &[u8], b: &[u8]) -> Ordering {
    if cfg!(target_arch = "wasm32") {
        cmp_words(a, b)
    } else {
        a.cmp(b)
    }
}

/// Bytewise order 8 bytes at a time (see [`cmp`]).
#[inline]
pub fn cmp_words(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    let (a8, b8) = (&a[..n], &b[..n]);
    if n >= 8 {
        let mut i = 0;
        while i + 8 <= n {
            let (x, y) = (word(&a8[i..]), word(&b8[i..]));
            if x != y {
                let j = i + first_diff(x, y);
                return a8[j].cmp(&b8[j]);
            }
            i += 8;
        }
        if i < n {
            // The last 8 bytes, overlapping bytes already known equal.
            let (x, y) = (word(&a8[n - 8..]), word(&b8[n - 8..]));
            if x != y {
                let j = n - 8 + first_diff(x, y);
                return a8[j].cmp(&b8[j]);
            }
        }
    } else {
        for i in 0..n {
            if a8[i] != b8[i] {
                return a8[i].cmp(&b8[i]);
            }
        }
    }
    a.len().cmp(&b.len())
}

/// [`cmp`] on strings (the order of `str::cmp`).
#[inline]
pub fn cmp_str(a: &str, b: &str) -> Ordering {
    cmp(a.as_bytes(), b.as_bytes())
}

/// Whether `a == b`.
#[inline]
pub fn eq(a: &[u8], b: &[u8]) -> bool {
    if cfg!(target_arch = "wasm32") {
        a.len() == b.len() && cmp_words(a, b) == Ordering::Equal
    } else {
        a == b
    }
}

/// Whether `a == b` on strings.
#[inline]
pub fn eq_str(a: &str, b: &str) -> bool {
    eq(a.as_bytes(), b.as_bytes())
}

/// Whether `s` starts with `prefix`.
#[inline]
pub fn starts_with(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && eq(&s.as_bytes()[..prefix.len()], prefix.as_bytes())
}

/// Non-zero when `x` has a zero byte (exact as a test; the bits set do not locate it).
#[inline(always)]
fn has_zero(x: u64) -> u64 {
    x.wrapping_sub(LO) & !x & HI
}

/// The first index of `needle` in `hay`, as `hay.iter().position(|&b| b == needle)`.
#[inline]
pub fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    let rep = LO * u64::from(needle);
    let mut i = 0;
    // 32 bytes per step while nothing is found, then the word holding the hit.
    while i + 32 <= hay.len() {
        let (a, b) = (word(&hay[i..]) ^ rep, word(&hay[i + 8..]) ^ rep);
        let (c, d) = (word(&hay[i + 16..]) ^ rep, word(&hay[i + 24..]) ^ rep);
        if (has_zero(a) | has_zero(b) | has_zero(c) | has_zero(d)) != 0 {
            break;
        }
        i += 32;
    }
    while i + 8 <= hay.len() {
        let z = zero_bytes(word(&hay[i..]) ^ rep);
        if z != 0 {
            return Some(i + (z.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    (i..hay.len()).find(|&j| hay[j] == needle)
}

/// The last index of `needle` in `hay`, as `hay.iter().rposition(|&b| b == needle)`.
#[inline]
pub fn memrchr(needle: u8, hay: &[u8]) -> Option<usize> {
    let rep = LO * u64::from(needle);
    let mut end = hay.len();
    while end >= 8 {
        let z = zero_bytes(word(&hay[end - 8..]) ^ rep);
        if z != 0 {
            return Some(end - 1 - (z.leading_zeros() / 8) as usize);
        }
        end -= 8;
    }
    (0..end).rev().find(|&j| hay[j] == needle)
}

/// The first index of ASCII character `c` in `s` (as `s.find(c)`).
#[inline]
pub fn find(s: &str, c: u8) -> Option<usize> {
    debug_assert!(c.is_ascii());
    memchr(c, s.as_bytes())
}

/// The last index of ASCII character `c` in `s` (as `s.rfind(c)`).
#[inline]
pub fn rfind(s: &str, c: u8) -> Option<usize> {
    debug_assert!(c.is_ascii());
    memrchr(c, s.as_bytes())
}

/// Whether byte `c` occurs in `s`.
#[inline]
pub fn contains(s: &[u8], c: u8) -> bool {
    memchr(c, s).is_some()
}

/// The lines of `s`, exactly as [`str::lines`] (split at `\n`, a `\r` before the `\n`
/// removed, no empty last line), found 8 bytes at a time.
pub fn lines(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let r = rest?;
        match find(r, b'\n') {
            Some(i) => {
                rest = Some(&r[i + 1..]);
                let line = &r[..i];
                Some(line.strip_suffix('\r').unwrap_or(line))
            }
            None => {
                rest = None;
                (!r.is_empty()).then_some(r)
            }
        }
    })
}

/// A string that orders, compares and hashes as its bytes ([`cmp`]): a map key with the
/// order of `String` and a cheaper comparison in wasm.
#[derive(Debug, Clone, Default)]
pub struct Key(pub String);

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        eq_str(&self.0, &other.0)
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_str(&self.0, &other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        /// Bytes of every value, or from a small alphabet (more equal bytes and hits).
        fn bytes(&mut self, len: usize) -> Vec<u8> {
            let small = self.next().is_multiple_of(2);
            (0..len)
                .map(|_| {
                    if small {
                        [0u8, b'/', b'a', 0x7F, 0x80, 0xFF][self.below(6)]
                    } else {
                        self.next() as u8
                    }
                })
                .collect()
        }
    }

    /// Pairs of byte strings of lengths 0..40, often sharing a prefix.
    fn pairs(seed: u64, n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut r = Rng(seed);
        (0..n)
            .map(|_| {
                let len = r.below(40);
                let a = r.bytes(len);
                let b = match r.below(4) {
                    0 => {
                        let len = r.below(40);
                        r.bytes(len)
                    }
                    1 => a.clone(),
                    _ => {
                        // A shared prefix, then anything.
                        let k = r.below(a.len() + 1);
                        let mut b = a[..k].to_vec();
                        let len = r.below(40 - k);
                        let tail = r.bytes(len);
                        b.extend(tail);
                        if r.below(3) == 0 && k < a.len() {
                            // Differ in exactly one byte.
                            b = a.clone();
                            b[k] ^= 1 << r.below(8);
                        }
                        b
                    }
                };
                (a, b)
            })
            .collect()
    }

    #[test]
    fn cmp_and_eq_match_std() {
        for (a, b) in pairs(0x9E37_79B9_7F4A_7C15, 200_000) {
            assert_eq!(cmp_words(&a, &b), a.cmp(&b), "{a:?} {b:?}");
            assert_eq!(cmp_words(&b, &a), b.cmp(&a), "{b:?} {a:?}");
            assert_eq!(cmp(&a, &b), a.cmp(&b), "{a:?} {b:?}");
            assert_eq!(cmp(&b, &a), b.cmp(&a), "{b:?} {a:?}");
            assert_eq!(eq(&a, &b), a == b, "{a:?} {b:?}");
            if let (Ok(x), Ok(y)) = (std::str::from_utf8(&a), std::str::from_utf8(&b)) {
                assert_eq!(cmp_str(x, y), x.cmp(y));
                assert_eq!(eq_str(x, y), x == y);
                assert_eq!(starts_with(x, y), x.starts_with(y));
                assert_eq!(Key(x.into()).cmp(&Key(y.into())), x.cmp(y));
            }
        }
    }

    #[test]
    fn cmp_edge_cases() {
        // (`cmp` is `cmp_words` in wasm only: the cases are checked on `cmp_words`.)
        let cmp = cmp_words;
        assert_eq!(cmp(b"", b""), Ordering::Equal);
        assert_eq!(cmp(b"", b"a"), Ordering::Less);
        assert_eq!(cmp(b"abcdefgh", b"abcdefgh"), Ordering::Equal);
        assert_eq!(cmp(b"abcdefgh", b"abcdefghi"), Ordering::Less);
        assert_eq!(cmp(b"abcdefghij", b"abcdefghiJ"), Ordering::Greater);
        // A high byte is larger than any ASCII byte (unsigned order).
        assert_eq!(cmp(b"abcdefgh\x80", b"abcdefgh\x7F"), Ordering::Greater);
        assert_eq!(cmp(b"\xFFbcdefgh", b"abcdefgh"), Ordering::Greater);
        // The first difference decides, not a later larger one.
        assert_eq!(cmp(b"a/b-zzzzzzzzz", b"a/b/aaaaaaaaa"), Ordering::Less);
        assert!(starts_with("skills/a/SKILL.md", "skills/a/"));
        assert!(!starts_with("skills/a", "skills/a/"));
        assert!(starts_with("x", ""));
    }

    #[test]
    fn memchr_and_memrchr_match_std() {
        let mut r = Rng(0xD1B5_4A32_D192_ED03);
        for _ in 0..200_000 {
            let len = r.below(41);
            let hay = r.bytes(len);
            let needle = match r.below(3) {
                0 if !hay.is_empty() => hay[r.below(hay.len())],
                1 => [0u8, b'/', b'\n', 0x80, 0xFF][r.below(5)],
                _ => r.next() as u8,
            };
            assert_eq!(
                memchr(needle, &hay),
                hay.iter().position(|&b| b == needle),
                "{needle} {hay:?}"
            );
            assert_eq!(
                memrchr(needle, &hay),
                hay.iter().rposition(|&b| b == needle),
                "{needle} {hay:?}"
            );
            assert_eq!(contains(&hay, needle), hay.contains(&needle));
            if let Ok(s) = std::str::from_utf8(&hay)
                && needle.is_ascii()
            {
                assert_eq!(find(s, needle), s.find(needle as char));
                assert_eq!(rfind(s, needle), s.rfind(needle as char));
            }
        }
    }

    #[test]
    fn lines_match_std() {
        let mut r = Rng(0x2545_F491_4F6C_DD1D);
        for _ in 0..100_000 {
            let n = r.below(40);
            let s: String = (0..n)
                .map(|_| ['a', '\n', '\r', ' ', 'é', '#'][r.below(6)])
                .collect();
            assert_eq!(
                lines(&s).collect::<Vec<_>>(),
                s.lines().collect::<Vec<_>>(),
                "{s:?}"
            );
        }
        for s in ["", "\n", "a", "a\n", "a\r\n", "a\r", "\r\n\r\n", "a\n\nb\r"] {
            assert_eq!(lines(s).collect::<Vec<_>>(), s.lines().collect::<Vec<_>>());
        }
    }

    #[test]
    fn memchr_on_long_haystacks_matches_std() {
        let mut r = Rng(0x1234_5678_9ABC_DEF1);
        for _ in 0..50_000 {
            let n = r.below(140);
            // Mostly one byte value, the needle at 0..3 random places.
            let fill = r.next() as u8;
            let needle = r.next() as u8;
            let mut hay = vec![fill; n];
            for _ in 0..r.below(4) {
                if n > 0 {
                    let k = r.below(n);
                    hay[k] = needle;
                }
            }
            assert_eq!(memchr(needle, &hay), hay.iter().position(|&b| b == needle));
            assert_eq!(
                memrchr(needle, &hay),
                hay.iter().rposition(|&b| b == needle)
            );
            assert_eq!(contains(&hay, needle), hay.contains(&needle));
        }
    }

    #[test]
    fn memchr_edge_cases() {
        assert_eq!(memchr(b'a', b""), None);
        assert_eq!(memrchr(b'a', b""), None);
        // Bytes next to the needle's value, which a borrow-based test could confuse.
        let hay = [0x01u8, 0x00, 0x01, 0x01, 0x00, 0x01, 0x01, 0x01, 0x00, 0x01];
        assert_eq!(memchr(0, &hay), Some(1));
        assert_eq!(memrchr(0, &hay), Some(8));
        assert_eq!(memchr(1, &hay), Some(0));
        assert_eq!(memrchr(1, &hay), Some(9));
        let long = b"0123456789abcdef/ghijklmnopqrstuvwxyz/x";
        assert_eq!(memchr(b'/', long), Some(16));
        assert_eq!(memrchr(b'/', long), Some(37));
        assert_eq!(memrchr(b'0', long), Some(0));
        assert_eq!(memchr(b'x', long), Some(34));
    }
}
