//! Log values that cannot forge log lines.
//!
//! File names, skill paths, frontmatter values and error texts that quote them are written by
//! others (skill authors, git repositories). Printed raw, a newline in a file name starts a
//! forged log line and an ESC sequence rewrites the operator's terminal. [`Escaped`] is the one
//! helper every log line uses for such values: a `Display` wrapper, independent of the log
//! macro (the `tracing` macros), that writes control characters as visible
//! escapes (`\n`, `\r`, `\t`, `\x1b`, `\u{85}`), as well as the Unicode line separators and the
//! bidirectional overrides that can make a line read differently from what it holds. Anything
//! else, including non-ASCII text, is written as is.

use std::fmt;

/// `value`, with every control character escaped (see the module docs).
pub struct Escaped<T>(pub T);

impl<T: AsRef<str>> fmt::Display for Escaped<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_escaped(f, self.0.as_ref())
    }
}

/// A path, lossily decoded, with control characters escaped.
pub struct EscapedPath<'a>(pub &'a std::path::Path);

impl fmt::Display for EscapedPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_escaped(f, &self.0.to_string_lossy())
    }
}

/// Whether `c` must not reach a log line raw.
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with control characters escaped, as an owned string.
pub fn escape(s: &str) -> String {
    Escaped(s).to_string()
}

fn write_escaped(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    let mut rest = s;
    while let Some((i, c)) = rest.char_indices().find(|&(_, c)| needs_escape(c)) {
        f.write_str(&rest[..i])?;
        match c {
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x80 => write!(f, "\\x{:02x}", c as u32)?,
            c => write!(f, "\\u{{{:x}}}", c as u32)?,
        }
        rest = &rest[i + c.len_utf8()..];
    }
    f.write_str(rest)
}
