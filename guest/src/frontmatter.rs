//! Frontmatter: split a Markdown file into its YAML frontmatter and body, parse the YAML
//! into a generic value, and read typed fields leniently.
//!
//! Real files are messy (see `docs/real-skills.md`); this module tolerates:
//! - a UTF-8 byte order mark, CRLF, lone CR and mixed line endings (all normalised to `\n`);
//!   invalid UTF-8 is decoded lossily, with a warning;
//! - blank lines before the opening `---` (accepted, with a warning);
//! - fences with trailing spaces; the frontmatter ends at the FIRST line that is `---` alone
//!   (trailing whitespace allowed, no indentation), so a `---` horizontal rule in the body is
//!   body, and an indented `---` inside a block scalar is YAML;
//! - control characters YAML forbids (C0 except tab/newline, DEL, C1 except NEL): replaced by
//!   U+FFFD, with a located warning, so the skill stays usable.
//!
//! The YAML is kept verbatim as a generic [`serde_yaml::Value`] and converted to a JSON object
//! (key order kept; non-string keys stringified; numbers, booleans and dates as YAML gives
//! them, i.e. `2024-01-01` stays a string). Typed fields are read leniently: a string or a
//! list where a list is expected, numbers where strings are expected, `null` as absent.

use serde_yaml::{Mapping, Value};

use crate::bytes;
use crate::model::Severity;

/// A finding while reading a file: line (1-based, in the file) when known.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Note {
    pub line: Option<u32>,
    pub severity: Severity,
    pub message: String,
}

impl Note {
    pub fn new(line: Option<u32>, severity: Severity, message: impl Into<String>) -> Self {
        Self {
            line,
            severity,
            message: message.into(),
        }
    }
}

/// Decode file bytes: drop a UTF-8 BOM, decode (lossily, with a note), normalise line endings
/// (`\r\n` and lone `\r` become `\n`).
pub fn decode(bytes: &[u8], notes: &mut Vec<Note>) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(e) => {
            let line = line_of_offset(bytes, e.valid_up_to());
            notes.push(Note::new(
                Some(line),
                Severity::Warning,
                format!(
                    "the file is not valid UTF-8 (first bad byte at offset {}); invalid bytes were replaced by U+FFFD",
                    e.valid_up_to()
                ),
            ));
            String::from_utf8_lossy(bytes)
        }
    };
    if bytes::contains(text.as_bytes(), b'\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text.into_owned()
    }
}

fn line_of_offset(bytes: &[u8], offset: usize) -> u32 {
    let n = bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    u32::try_from(n + 1).unwrap_or(u32::MAX)
}

/// A file split at its frontmatter fences (text already [`decode`]d).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Split<'a> {
    /// The file does not start (after blank lines) with a `---` fence: all body.
    None { body: &'a str },
    /// An opening fence at `open_line` is never closed.
    Unclosed { open_line: u32 },
    /// A frontmatter block.
    Found(Block<'a>),
}

/// The parts of a file with frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block<'a> {
    /// The YAML between the fences (no fences).
    pub yaml: &'a str,
    /// 1-based line of the opening fence: YAML line `n` is file line `open_line + n`.
    pub open_line: u32,
    /// Blank lines stood before the opening fence.
    pub leading_blank_lines: u32,
    /// Everything after the closing fence line.
    pub body: &'a str,
    /// 1-based file line where the body starts.
    pub body_line: u32,
}

fn is_fence(line: &str) -> bool {
    line.trim_end() == "---"
}

/// Split decoded text at its frontmatter fences (see the module docs).
pub fn split(text: &str) -> Split<'_> {
    let mut pos = 0usize;
    let mut line_no = 0u32;
    let mut blank = 0u32;
    // Find the opening fence: the first non-blank line.
    let yaml_start;
    let open_line;
    loop {
        if pos >= text.len() {
            return Split::None { body: text };
        }
        let end = bytes::find(&text[pos..], b'\n').map_or(text.len(), |i| pos + i);
        let line = &text[pos..end];
        line_no += 1;
        let next = (end + 1).min(text.len());
        if line.trim().is_empty() {
            blank += 1;
            pos = next;
            continue;
        }
        if is_fence(line) {
            yaml_start = next;
            open_line = line_no;
            break;
        }
        return Split::None { body: text };
    }
    // Find the closing fence.
    let mut pos = yaml_start;
    while pos < text.len() {
        let end = bytes::find(&text[pos..], b'\n').map_or(text.len(), |i| pos + i);
        let line = &text[pos..end];
        line_no += 1;
        if is_fence(line) {
            let body_start = (end + 1).min(text.len());
            return Split::Found(Block {
                yaml: &text[yaml_start..pos],
                open_line,
                leading_blank_lines: blank,
                body: &text[body_start..],
                body_line: line_no + 1,
            });
        }
        pos = end + 1;
    }
    Split::Unclosed { open_line }
}

/// The body of decoded text: after the frontmatter if there is one, else all of it (an
/// unclosed frontmatter yields an empty body).
pub fn body_of(text: &str) -> &str {
    match split(text) {
        Split::None { body } => body,
        Split::Unclosed { .. } => "",
        Split::Found(b) => b.body,
    }
}

/// Whether YAML accepts `c` (YAML 1.2 printable set; `\r` is gone after [`decode`]).
fn yaml_printable(c: char) -> bool {
    match c {
        '\t' | '\n' | '\r' | '\u{85}' => true,
        '\u{FFFE}' | '\u{FFFF}' => false,
        c => !c.is_control(),
    }
}

/// Whether every character of `s` is one YAML accepts (as [`yaml_printable`]), checked on
/// the bytes: ASCII controls other than tab and newline (and `\r`), DEL, the C1 controls
/// other than NEL (`C2 80..9F`) and U+FFFE/U+FFFF (`EF BF BE/BF`) are refused.
fn all_printable(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            if (c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r')) || c == 0x7F {
                return false;
            }
        } else if c == 0xC2 {
            let d = b[i + 1];
            if (0x80..=0x9F).contains(&d) && d != 0x85 {
                return false;
            }
        } else if c == 0xEF && b[i + 1] == 0xBF && matches!(b[i + 2], 0xBE | 0xBF) {
            return false;
        }
        i += 1;
    }
    true
}

/// The frontmatter YAML of `block` as YAML will read it: characters YAML does not allow
/// are replaced by U+FFFD, each line holding one gets a located warning.
#[doc(hidden)]
pub fn clean_yaml<'a>(block: &Block<'a>, notes: &mut Vec<Note>) -> std::borrow::Cow<'a, str> {
    if all_printable(block.yaml) {
        return std::borrow::Cow::Borrowed(block.yaml);
    }
    for (i, line) in block.yaml.lines().enumerate() {
        if let Some(c) = line.chars().find(|&c| !yaml_printable(c)) {
            notes.push(Note::new(
                Some(block.open_line + 1 + i as u32),
                Severity::Warning,
                format!(
                    "the frontmatter contains a control character (U+{:04X}) that YAML does not allow; it was replaced by U+FFFD",
                    c as u32
                ),
            ));
        }
    }
    std::borrow::Cow::Owned(
        block
            .yaml
            .chars()
            .map(|c| if yaml_printable(c) { c } else { '\u{FFFD}' })
            .collect::<String>(),
    )
}

/// Parse the frontmatter YAML of `block` into a mapping. An empty frontmatter is an empty
/// mapping. Errors are located in the file (fence offset + YAML line) and say what is wrong.
///
/// Common simple frontmatter is read by [`parse_simple`]; anything it is not sure about goes
/// to `serde_yaml`, which also gives every error. The values of `metadata` that YAML reads
/// as numbers or booleans keep the text they were written as (`version: 1.10` is `"1.10"`;
/// see `metadata.rs`).
pub fn parse(block: &Block<'_>, notes: &mut Vec<Note>) -> Result<Mapping, Note> {
    let yaml = clean_yaml(block, notes);
    // Absurd nesting costs YAML parsers quadratic time: refused after one linear pass.
    if let Err(deep) = crate::nesting::check(&yaml, crate::nesting::MAX_DEPTH) {
        return Err(Note::new(
            Some(block.open_line + deep.line),
            Severity::Error,
            format!(
                "the frontmatter nests deeper than {} levels (flow brackets `[`/`{{` and indentation); it was refused before parsing: flatten it",
                deep.limit
            ),
        ));
    }
    let mut map = parse_yaml(block, &yaml)?;
    metadata::keep_text(&yaml, &mut map);
    Ok(map)
}

/// [`parse`]'s YAML reading: [`parse_simple`], else `serde_yaml`.
fn parse_yaml(block: &Block<'_>, yaml: &str) -> Result<Mapping, Note> {
    if let Some(m) = parse_simple(yaml) {
        return Ok(m);
    }
    match serde_yaml::from_str::<Value>(yaml) {
        Ok(Value::Mapping(m)) => Ok(m),
        Ok(Value::Null) => Ok(Mapping::new()),
        Ok(Value::Tagged(t)) if matches!(t.value, Value::Mapping(_)) => match t.value {
            Value::Mapping(m) => Ok(m),
            _ => unreachable!(),
        },
        Ok(other) => Err(Note::new(
            Some(block.open_line + 1),
            Severity::Error,
            format!(
                "the frontmatter is a YAML {}, not a mapping of `key: value` fields",
                kind_name(&other)
            ),
        )),
        Err(e) => {
            let line = e
                .location()
                .map(|l| block.open_line + u32::try_from(l.line()).unwrap_or(0));
            Err(Note::new(
                line.or(Some(block.open_line)),
                Severity::Error,
                format!(
                    "invalid YAML in the frontmatter: {} (quote values that contain `: ` or start with a special character)",
                    relocate(&e.to_string(), block.open_line)
                ),
            ))
        }
    }
}

/// The fast path of [`parse`]: `yaml` read by a small parser for the simple YAML that real
/// frontmatter mostly is, giving exactly the mapping `serde_yaml` would give, or `None` when
/// it is not sure (then `serde_yaml` decides, errors included).
///
/// Accepted: a top-level block mapping at column 0 whose keys are plain words
/// (`[A-Za-z_][A-Za-z0-9_./-]*`, not `null`/`true`/... in any case), unique; values are
///
/// - plain scalars that are obviously strings (the first character is a letter or another
///   character with no YAML meaning, the scalar is not `null`/`true`/`yes`/... in any case,
///   holds no `: `, ` #` and does not end with `:`), possibly wrapped over more-indented
///   lines (folded as YAML does);
/// - single- and double-quoted scalars on one line (`''` and backslash escapes);
/// - literal and folded block scalars (`|`, `>`, with `-` or `+`; no explicit indentation,
///   no more-indented lines in folded ones);
/// - nothing (`null`), a nested mapping of the same kind (more indented), a block list
///   (more indented, or at the key's column) of one-line scalar items or of mappings of the
///   same kind (`- key: value`), a one-line flow list of scalar items (`[a, 'b']`, `[]`).
///
/// Whole-line comments and blank lines are skipped between entries. Refused (`None`): tabs,
/// carriage returns, NEL/LS/PS/BOM characters, anchors, aliases, tags, `?` keys, flow
/// mappings, document markers, directives, comments after values, numbers, booleans,
/// dates, unusual indentation and anything else.
pub fn parse_simple(yaml: &str) -> Option<Mapping> {
    simple::parse(yaml)
}

mod fields;
mod json;
mod markdown;
mod metadata;
mod simple;
#[cfg(test)]
mod tests;

pub use fields::*;
pub use json::*;
pub use markdown::*;

#[cfg(test)]
#[path = "../tests/support/yaml_eq.rs"]
mod yaml_eq;

/// Rewrite `line N` in a YAML error message as the file line `N + offset`.
fn relocate(message: &str, offset: u32) -> String {
    let mut out = String::with_capacity(message.len() + 8);
    let mut rest = message;
    while let Some(i) = rest.find("line ") {
        out.push_str(&rest[..i + 5]);
        rest = &rest[i + 5..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            let n: u64 = rest[..digits].parse().unwrap_or(0);
            out.push_str(&(n + u64::from(offset)).to_string());
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// A short name for a YAML value's kind, for messages.
pub fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Sequence(_) => "list",
        Value::Mapping(_) => "mapping",
        Value::Tagged(_) => "tagged value",
    }
}
