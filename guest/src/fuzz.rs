//! Bounded random testing (the fuzzing habit): the frontmatter parser, the nesting bound and
//! path validation get thousands of generated hostile inputs on every `cargo test`; the index
//! snapshot restore gets damaged snapshots (in `index/tests.rs`). Each property says what must
//! hold for every input, not what one input gives.
//!
//! - `FUZZ_SEED=N` changes the seed (default fixed, so CI is repeatable), `FUZZ_CASES=N` the
//!   number of cases per target (default 3,000: a few seconds in release mode).
//! - A failing case prints its seed and input; keep it in `guest/fuzz-regressions/<target>/`
//!   (one file per input), where [`regressions`] replays it on every run.

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A small, fast, seedable generator (xorshift64*).
pub(crate) struct Rng(u64);

impl Rng {
    pub fn new(salt: u64) -> Self {
        Self((seed() ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

pub(crate) fn seed() -> u64 {
    std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5ECB_2026)
}

pub(crate) fn cases() -> usize {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_000)
}

/// The committed regression inputs of `target`.
pub(crate) fn regressions(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz-regressions")
        .join(target);
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "{}: no regression inputs", dir.display());
    out
}

/// YAML-ish fragments: structure, quotes, escapes, odd characters.
const PIECES: &[&str] = &[
    "name: x\n",
    "description: ",
    "a",
    "key",
    ": ",
    ":",
    "-",
    "- ",
    "  ",
    "    ",
    "\n",
    "\t",
    "[",
    "]",
    "{",
    "}",
    ",",
    "'",
    "''",
    "\"",
    "\\\"",
    "\\",
    "#",
    " # c",
    "|",
    ">-",
    "|+",
    "&a ",
    "*a",
    "!!str ",
    "? ",
    "---",
    "...",
    "%YAML 1.2",
    "é",
    "\u{FEFF}",
    "\u{0}",
    "\u{7}",
    "\r",
    "\r\n",
    "\u{85}",
    "\u{2028}",
    "true",
    "null",
    "~",
    "0x1F",
    "1e400",
    "-.inf",
    "<<: *a",
    "k: v\n",
    "  k: v\n",
    "- - - ",
    "[[[[[[[[",
    "]]]]]]]]",
    "{a: [b, {c: d}]}",
];

/// A random frontmatter YAML text.
pub(crate) fn yaml_doc(rng: &mut Rng) -> String {
    let mut s = String::new();
    let n = 1 + rng.below(40);
    for _ in 0..n {
        match rng.below(20) {
            // Now and then a long run of one piece (deep nesting, long lines).
            0 => {
                let piece = *rng.pick(PIECES);
                let times = 1 + rng.below(300);
                s.push_str(&piece.repeat(times));
            }
            _ => s.push_str(rng.pick::<&str>(PIECES)),
        }
    }
    s
}

/// Parse `yaml` as a SKILL.md frontmatter: what must hold for any text.
pub(crate) fn check_frontmatter(yaml: &str) {
    use crate::frontmatter::{Split, parse, split};
    let text = format!("---\n{yaml}\n---\nbody\n");
    // Lines as YAML counts them (it also breaks at CR, NEL, LS and PS).
    let lines = 2 + text
        .chars()
        .filter(|c| matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'))
        .count() as u32;
    let mut notes = Vec::new();
    let Split::Found(block) = split(&text) else {
        // A `---` line inside the YAML closes the block early: still found.
        panic!("a fenced block is always found")
    };
    let started = Instant::now();
    let result = parse(&block, &mut notes);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "parse took {:?}",
        started.elapsed()
    );
    for note in notes.iter().chain(result.as_ref().err()) {
        // Every note is located in the file.
        assert!(
            note.line.is_none_or(|l| l >= 1 && l <= lines + 1),
            "line {:?} of {lines}: {}",
            note.line,
            note.message
        );
    }
    // The nesting bound agrees with itself and is cheap.
    let a = crate::nesting::check(yaml, crate::nesting::MAX_DEPTH);
    let b = crate::nesting::check(yaml, crate::nesting::MAX_DEPTH);
    assert_eq!(a, b);
    if let Err(deep) = a {
        assert!(deep.line >= 1 && deep.line as usize <= yaml.split('\n').count());
        assert!(crate::nesting::check(yaml, usize::MAX).is_ok());
    }
}

/// A random relative path argument.
pub(crate) fn path_arg(rng: &mut Rng) -> String {
    const SEGMENTS: &[&str] = &[
        "a",
        "b.md",
        "SKILL.md",
        ".",
        "..",
        "",
        "...",
        ".hidden",
        "a b",
        "é",
        "C:",
        "c:x",
        "~",
        "%2e%2e",
        "\\",
        "\0",
        "/",
        "//",
        "x\u{202E}y",
        "\n",
        "CON",
        "a:b",
    ];
    let n = 1 + rng.below(6);
    let mut s = String::new();
    if rng.below(8) == 0 {
        s.push('/');
    }
    for i in 0..n {
        if i > 0 {
            s.push('/');
        }
        s.push_str(rng.pick::<&str>(SEGMENTS));
    }
    if rng.below(10) == 0 {
        s.push('/');
    }
    s
}

/// Validate `path`: what must hold for any input.
pub(crate) fn check_path(path: &str) {
    match crate::paths::validate_relative_path(path) {
        Ok(p) => {
            assert_eq!(p, path, "accepted paths are verbatim");
            assert!(!p.is_empty() && !p.starts_with('/') && !p.ends_with('/'));
            assert!(!p.contains('\\') && !p.contains('\0'));
            assert!(
                p.split('/').all(|s| !s.is_empty() && s != "." && s != ".."),
                "{p:?}"
            );
            let b = p.as_bytes();
            assert!(!(b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'));
        }
        Err(e) => {
            let m = e.to_string();
            assert!(!m.is_empty());
            assert!(
                m.len() <= path.len().min(crate::paths::MAX_ECHO_BYTES) * 6 + 200,
                "bounded message: {m}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzz_frontmatter_parser_and_nesting_bound() {
        let mut rng = Rng::new(1);
        for case in 0..cases() {
            let doc = yaml_doc(&mut rng);
            let run = std::panic::catch_unwind(|| check_frontmatter(&doc));
            if run.is_err() {
                panic!(
                    "case {case} (FUZZ_SEED={}): keep this input in guest/fuzz-regressions/frontmatter/:\n{doc:?}",
                    seed()
                );
            }
        }
    }

    #[test]
    fn fuzz_path_validation() {
        let mut rng = Rng::new(2);
        for case in 0..cases() * 3 {
            let path = path_arg(&mut rng);
            let run = std::panic::catch_unwind(|| check_path(&path));
            if run.is_err() {
                panic!(
                    "case {case} (FUZZ_SEED={}): keep this input in guest/fuzz-regressions/paths/:\n{path:?}",
                    seed()
                );
            }
        }
    }

    #[test]
    fn frontmatter_regressions_replay() {
        for (path, bytes) in regressions("frontmatter") {
            let text = String::from_utf8_lossy(&bytes);
            eprintln!("{}", path.display());
            check_frontmatter(&text);
        }
    }

    #[test]
    fn path_regressions_replay() {
        for (path, bytes) in regressions("paths") {
            eprintln!("{}", path.display());
            // One path argument per line (a file may hold several).
            for line in String::from_utf8_lossy(&bytes).split('\n') {
                check_path(line);
            }
        }
    }
}
