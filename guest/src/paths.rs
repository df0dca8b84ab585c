//! Path rules: validation of relative file arguments, and the spec's path arithmetic
//! (skill path derivation 4.3, parent derivation 4.4, resource directories 4.5).
//!
//! Every path here is relative to a skill root, `/`-separated, with no leading `/`. The root
//! folder itself is the empty string `""`.

use crate::bytes;
use crate::model::Error;

/// Check a relative file argument (an asset or script name, a listing entry).
///
/// Rejected, each with its own message: the empty string, NUL characters, backslashes,
/// absolute paths (`/x`), drive letters (`C:`), empty segments (`a//b`, a trailing `/`),
/// `.` segments and `..` segments. Nothing is "fixed": a path is either accepted verbatim or
/// rejected, so that what the engine checks is exactly what the host opens.
pub fn validate_relative(path: &str) -> Result<&str, String> {
    if is_clean_relative(path.as_bytes()) {
        return Ok(path);
    }
    check_relative(path)
}

/// Longest piece of a caller's input repeated in a message, in bytes.
pub const MAX_ECHO_BYTES: usize = 200;

/// `s` as messages repeat it: whole when short, else its first [`MAX_ECHO_BYTES`] bytes (on a
/// character boundary) and how long it was.
pub fn echo(s: &str) -> std::borrow::Cow<'_, str> {
    if s.len() <= MAX_ECHO_BYTES {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut end = MAX_ECHO_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!("{}… ({} bytes)", &s[..end], s.len()))
}

/// [`validate_relative`] rule by rule (each rejection with its own message).
fn check_relative(path: &str) -> Result<&str, String> {
    // Messages repeat the path, cut to a few lines' length.
    let shown = echo(path);
    if path.is_empty() {
        return Err("the path is empty".into());
    }
    if path.contains('\0') {
        return Err(format!(
            "`{}` contains a NUL character",
            shown.escape_debug()
        ));
    }
    if path.contains('\\') {
        return Err(format!(
            "`{shown}` contains a backslash; separate folders with `/`"
        ));
    }
    if path.starts_with('/') {
        return Err(format!(
            "`{shown}` is absolute (starts with `/`); give a path relative to the skill folder"
        ));
    }
    let b = path.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Err(format!(
            "`{shown}` starts with a drive letter; give a path relative to the skill folder"
        ));
    }
    if path.ends_with('/') {
        return Err(format!(
            "`{shown}` ends with `/`; name a file, not a folder"
        ));
    }
    for segment in path.split('/') {
        match segment {
            "" => {
                return Err(format!(
                    "`{shown}` contains an empty segment (`//`); remove the doubled `/`"
                ));
            }
            "." => {
                return Err(format!("`{shown}` contains a `.` segment; remove the `./`"));
            }
            ".." => {
                return Err(format!(
                    "`{shown}` contains a `..` segment (path traversal is not allowed)"
                ));
            }
            _ => {}
        }
    }
    Ok(path)
}

/// Whether [`validate_relative`] accepts `b` (its fast path: one pass, 8 bytes at a time).
fn is_clean_relative(b: &[u8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    // The high bit of every zero byte of `x` (exact).
    fn zeros(x: u64) -> u64 {
        !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7)
    }
    if b.is_empty()
        || b[0] == b'/'
        || b[b.len() - 1] == b'/'
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
    {
        return false;
    }
    // No NUL, no backslash.
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().unwrap_or_default());
        if zeros(w) | zeros(w ^ (LO * u64::from(b'\\'))) != 0 {
            return false;
        }
    }
    if chunks.remainder().iter().any(|&c| c == 0 || c == b'\\') {
        return false;
    }
    // No empty, `.` or `..` segment.
    let mut start = 0;
    loop {
        let end = bytes::memchr(b'/', &b[start..]).map_or(b.len(), |i| start + i);
        if matches!(&b[start..end], b"" | b"." | b"..") {
            return false;
        }
        if end == b.len() {
            return true;
        }
        start = end + 1;
    }
}

/// [`validate_relative`] with the engine's error type (the WIT `validate-relative-path`).
pub fn validate_relative_path(path: &str) -> Result<String, Error> {
    validate_relative(path)
        .map(str::to_owned)
        .map_err(Error::InvalidPath)
}

/// The folder holding `path` (`""` for a top-level entry).
pub fn parent_dir(path: &str) -> &str {
    bytes::rfind(path, b'/').map_or("", |i| &path[..i])
}

/// The last segment of `path`.
pub fn file_name(path: &str) -> &str {
    bytes::rfind(path, b'/').map_or(path, |i| &path[i + 1..])
}

/// `dir/rel`, or `rel` when `dir` is the root (`""`).
pub fn join(dir: &str, rel: &str) -> String {
    if dir.is_empty() {
        rel.to_owned()
    } else if rel.is_empty() {
        dir.to_owned()
    } else {
        format!("{dir}/{rel}")
    }
}

/// Whether `path` lies strictly inside folder `dir` (every path is inside the root `""`).
pub fn is_inside(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || (path.len() > dir.len() && path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/')
}

/// `path` relative to folder `dir` (which must contain it, see [`is_inside`]).
pub fn strip_dir<'a>(path: &'a str, dir: &str) -> &'a str {
    if dir.is_empty() {
        path
    } else {
        &path[dir.len() + 1..]
    }
}

/// The folders containing `path`, innermost first, ending with the root `""`.
pub fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut next = Some(parent_dir(path));
    std::iter::from_fn(move || {
        let current = next?;
        next = if current.is_empty() {
            None
        } else {
            Some(parent_dir(current))
        };
        Some(current)
    })
}

/// Number of segments of `path`.
pub fn depth(path: &str) -> usize {
    if path.is_empty() {
        0
    } else {
        path.split('/').count()
    }
}

/// Lowercased extension of the last segment (`a/b.TSX.template` -> `template`), if any.
/// A leading dot (`.env`) is a hidden-file marker, not an extension.
pub fn extension(path: &str) -> Option<String> {
    let name = file_name(path);
    let dot = name.rfind('.')?;
    if dot == 0 || dot + 1 == name.len() {
        return None;
    }
    Some(name[dot + 1..].to_ascii_lowercase())
}

/// Spec 4.3: the skill path of a hierarchical `.md` file: remove the `.md` extension and
/// normalise separators to `/`.
pub fn skill_path_of_md(file: &str) -> String {
    file.strip_suffix(".md").unwrap_or(file).replace('\\', "/")
}

/// Spec 4.4 `deriveParentPath`: `_root` has no parent; `<dir>/_index` -> `<parent dir>/_index`
/// (or `_root` at the top); `<dir>/<name>` -> `<dir>/_index` (or `_root` at the top).
pub fn derive_parent(skill_path: &str) -> Option<String> {
    if skill_path == "_root" {
        return None;
    }
    let (dir, last) = match skill_path.rfind('/') {
        Some(i) => (&skill_path[..i], &skill_path[i + 1..]),
        None => ("", skill_path),
    };
    let base = if last == "_index" {
        parent_dir(dir)
    } else {
        dir
    };
    if last == "_index" && dir.is_empty() {
        // A top-level `_index` (no parent directory): `_root`.
        return Some("_root".into());
    }
    if base.is_empty() {
        Some("_root".into())
    } else {
        Some(format!("{base}/_index"))
    }
}

/// Spec 4.4 with missing intermediates: walk [`derive_parent`] up until `exists` accepts a
/// path or the chain ends.
pub fn resolve_parent(skill_path: &str, exists: impl Fn(&str) -> bool) -> Option<String> {
    let mut candidate = derive_parent(skill_path);
    while let Some(p) = candidate {
        if p != skill_path && exists(&p) {
            return Some(p);
        }
        candidate = derive_parent(&p);
    }
    None
}

/// Spec 4.5: the expected resource directory of a hierarchical skill file
/// (`ui/react/auth.md` -> `ui/react/auth`, `_root.md` -> `_root`).
pub fn resource_dir_of_md(file: &str) -> &str {
    file.strip_suffix(".md").unwrap_or(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_path_accepts_exactly_what_the_rules_accept() {
        let alphabet = ["a", "b", "/", ".", "\\", "\0", ":", "C", "é", "..", "-"];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut accepted = 0;
        for _ in 0..200_000 {
            let n = (next() % 40) as usize;
            let p: String = (0..n)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let fast = is_clean_relative(p.as_bytes());
            assert_eq!(fast, check_relative(&p).is_ok(), "{p:?}");
            assert_eq!(validate_relative(&p), check_relative(&p), "{p:?}");
            accepted += usize::from(fast);
        }
        assert!(accepted > 1000, "{accepted}");
        for p in [
            "a",
            "a/b.md",
            "abcdefgh/ijklmnop/q",
            "C",
            "C/d:",
            ".a/..b/...",
            "é/ü.md",
        ] {
            assert!(is_clean_relative(p.as_bytes()), "{p}");
        }
        for p in [
            "",
            "/a",
            "a/",
            "a//b",
            "./a",
            "a/./b",
            "a/..",
            "C:x",
            "abcdefgh\\i",
            "abcdefghijk\0",
        ] {
            assert!(!is_clean_relative(p.as_bytes()), "{p}");
        }
    }

    #[test]
    fn accepts_plain_relative_paths() {
        for p in [
            "a",
            "assets/x.tsx",
            "scripts/run.sh",
            ".hidden/file",
            "a..b/c",
            "...",
        ] {
            assert_eq!(validate_relative(p), Ok(p), "{p}");
        }
        assert_eq!(validate_relative_path("a/b.md"), Ok("a/b.md".to_string()));
    }

    #[test]
    fn rejects_each_bad_shape_with_a_distinct_message() {
        let cases = [
            ("", "empty"),
            ("a\0b", "NUL"),
            ("a\\b", "backslash"),
            ("..\\x", "backslash"),
            ("/etc/passwd", "absolute"),
            ("//server/share", "absolute"),
            ("C:/x", "drive letter"),
            ("c:x", "drive letter"),
            ("a//b", "empty segment"),
            ("a/", "ends with `/`"),
            ("./a", "`.` segment"),
            ("a/./b", "`.` segment"),
            ("../a", "`..` segment"),
            ("a/../../b", "`..` segment"),
            ("..", "`..` segment"),
        ];
        for (path, needle) in cases {
            let err = validate_relative(path).unwrap_err();
            assert!(err.contains(needle), "{path:?}: {err}");
        }
        assert!(matches!(
            validate_relative_path("../x"),
            Err(Error::InvalidPath(m)) if m.contains("traversal")
        ));
    }

    #[test]
    fn spec_4_3_skill_path_derivation_table() {
        let table = [
            ("_root.md", "_root"),
            ("ui/_index.md", "ui/_index"),
            ("ui/react/_index.md", "ui/react/_index"),
            ("ui/react/auth.md", "ui/react/auth"),
            ("no-inherit.md", "no-inherit"),
            ("ui\\react\\auth.md", "ui/react/auth"),
        ];
        for (file, skill) in table {
            assert_eq!(skill_path_of_md(file), skill);
        }
    }

    #[test]
    fn spec_4_4_derived_parent_table() {
        let table = [
            ("_root", None),
            ("ui/_index", Some("_root")),
            ("ui/react/_index", Some("ui/_index")),
            ("ui/react/auth", Some("ui/react/_index")),
            ("no-inherit", Some("_root")),
            ("_index", Some("_root")),
            ("a/b/c/_index", Some("a/b/_index")),
        ];
        for (skill, parent) in table {
            assert_eq!(derive_parent(skill).as_deref(), parent, "{skill}");
        }
    }

    #[test]
    fn spec_4_4_missing_intermediates_walk_up() {
        let existing = ["_root", "ui/_index"];
        let exists = |p: &str| existing.contains(&p);
        // ui/react/_index is missing: ui/react/auth resolves to ui/_index.
        assert_eq!(
            resolve_parent("ui/react/auth", exists).as_deref(),
            Some("ui/_index")
        );
        assert_eq!(
            resolve_parent("ui/react/_index", exists).as_deref(),
            Some("ui/_index")
        );
        assert_eq!(resolve_parent("a/b/c/d", exists).as_deref(), Some("_root"));
        assert_eq!(resolve_parent("_root", exists), None);
        // No _root at all: the chain ends with no parent.
        assert_eq!(resolve_parent("x/y", |_| false), None);
    }

    #[test]
    fn spec_4_5_resource_dir_table() {
        assert_eq!(resource_dir_of_md("ui/react/auth.md"), "ui/react/auth");
        assert_eq!(resource_dir_of_md("ui/_index.md"), "ui/_index");
        assert_eq!(resource_dir_of_md("_root.md"), "_root");
    }

    #[test]
    fn path_helpers() {
        assert_eq!(parent_dir("a/b/c.md"), "a/b");
        assert_eq!(parent_dir("c.md"), "");
        assert_eq!(file_name("a/b/c.md"), "c.md");
        assert_eq!(join("", "x"), "x");
        assert_eq!(join("a", "x"), "a/x");
        assert!(is_inside("a/b", "a"));
        assert!(!is_inside("ab/c", "a"));
        assert!(!is_inside("a", "a"));
        assert!(is_inside("a", ""));
        assert_eq!(strip_dir("a/b/c", "a"), "b/c");
        assert_eq!(ancestors("a/b/c").collect::<Vec<_>>(), vec!["a/b", "a", ""]);
        assert_eq!(ancestors("c").collect::<Vec<_>>(), vec![""]);
        assert_eq!(extension("x/Logo.PNG").as_deref(), Some("png"));
        assert_eq!(extension("a.tsx.template").as_deref(), Some("template"));
        assert_eq!(extension(".env"), None);
        assert_eq!(extension("Makefile"), None);
        assert_eq!(depth(""), 0);
        assert_eq!(depth("a/b"), 2);
    }
}
