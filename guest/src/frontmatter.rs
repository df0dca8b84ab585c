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
/// to `serde_yaml`, which also gives every error.
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
    if let Some(m) = parse_simple(&yaml) {
        return Ok(m);
    }
    match serde_yaml::from_str::<Value>(&yaml) {
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

mod simple;

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

/// The frontmatter as a JSON object string, key order kept (see the module docs).
pub fn to_json(map: &Mapping) -> String {
    let mut out = String::new();
    write_mapping(map, &mut out);
    out
}

fn write_json_str(s: &str, out: &mut String) {
    out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()));
}

fn write_value(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_json_str(s, out),
        Value::Sequence(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Mapping(m) => write_mapping(m, out),
        Value::Tagged(t) => write_value(&t.value, out),
    }
}

fn write_number(n: &serde_yaml::Number, out: &mut String) {
    if let Some(i) = n.as_i64() {
        out.push_str(&i.to_string());
    } else if let Some(u) = n.as_u64() {
        out.push_str(&u.to_string());
    } else if let Some(f) = n.as_f64() {
        match serde_json::Number::from_f64(f) {
            Some(j) => out.push_str(&j.to_string()),
            // NaN and infinities have no JSON form: keep YAML's spelling as a string.
            None => write_json_str(&n.to_string(), out),
        }
    } else {
        write_json_str(&n.to_string(), out);
    }
}

fn write_mapping(m: &Mapping, out: &mut String) {
    // Later duplicates (after key stringification) win, at the first key's position.
    let mut entries: Vec<(String, &Value)> = Vec::with_capacity(m.len());
    for (k, v) in m {
        let key = key_string(k);
        match entries.iter_mut().find(|(existing, _)| *existing == key) {
            Some(slot) => slot.1 = v,
            None => entries.push((key, v)),
        }
    }
    out.push('{');
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_str(k, out);
        out.push(':');
        write_value(v, out);
    }
    out.push('}');
}

/// A mapping key as a JSON object key: strings as-is, scalars in their YAML spelling,
/// anything else as its JSON text.
pub fn key_string(k: &Value) -> String {
    match k {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Tagged(t) => key_string(&t.value),
        other => {
            let mut s = String::new();
            write_value(other, &mut s);
            s
        }
    }
}

/// Look up a string key in a frontmatter mapping; `null` counts as absent.
pub fn get<'a>(map: &'a Mapping, key: &str) -> Option<&'a Value> {
    match map.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Tagged(t)) => Some(&t.value),
        Some(v) => Some(v),
    }
}

/// A scalar as a string: strings as-is, numbers and booleans in their YAML spelling; `null`,
/// lists and mappings give `None`.
pub fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Tagged(t) => scalar_string(&t.value),
        _ => None,
    }
}

/// A list of strings, leniently: a YAML list (scalar items kept, trimmed, empty ones and
/// nested lists/mappings dropped), or a single string split on commas, or a single scalar.
pub fn string_list(v: &Value) -> Vec<String> {
    match v {
        Value::Sequence(items) => items
            .iter()
            .filter_map(scalar_string)
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
        Value::String(s) => s
            .split(',')
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
            .collect(),
        Value::Tagged(t) => string_list(&t.value),
        other => scalar_string(other)
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .into_iter()
            .collect(),
    }
}

/// A boolean, leniently: YAML booleans, and the strings `true`/`false`/`yes`/`no`
/// (any case). Anything else: `None`.
pub fn boolean(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Some(true),
            "false" | "no" | "off" => Some(false),
            _ => None,
        },
        Value::Tagged(t) => boolean(&t.value),
        _ => None,
    }
}

/// An integer, leniently: integers, floats (truncated toward zero, saturating) and numeric
/// strings. Anything else: `None`.
pub fn integer(v: &Value) -> Option<i32> {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(i.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
            } else if n.as_u64().is_some() {
                Some(i32::MAX)
            } else {
                n.as_f64().filter(|f| f.is_finite()).map(|f| f as i32)
            }
        }
        Value::String(s) => {
            let s = s.trim();
            s.parse::<i64>()
                .ok()
                .map(|i| i.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
                .or_else(|| {
                    s.parse::<f64>()
                        .ok()
                        .filter(|f| f.is_finite())
                        .map(|f| f as i32)
                })
        }
        Value::Tagged(t) => integer(&t.value),
        _ => None,
    }
}

/// The file line of top-level key `key` in the frontmatter of `block`, if it can be found
/// (a line starting with `key:` or a quoted `"key":`).
pub fn key_line(block: &Block<'_>, key: &str) -> Option<u32> {
    bytes::lines(block.yaml).enumerate().find_map(|(i, line)| {
        let rest = line
            .strip_prefix(key)
            .or_else(|| {
                line.strip_prefix('"')
                    .and_then(|l| l.strip_prefix(key))
                    .and_then(|l| l.strip_prefix('"'))
            })
            .or_else(|| {
                line.strip_prefix('\'')
                    .and_then(|l| l.strip_prefix(key))
                    .and_then(|l| l.strip_prefix('\''))
            })?;
        rest.trim_start()
            .starts_with(':')
            .then(|| block.open_line + 1 + i as u32)
    })
}

/// The Markdown ATX headings of `body` (outside fenced code blocks), heading text only, one
/// per line, at most `max_bytes` in total (cut on a line boundary).
///
/// Lines are those of [`str::lines`]; a line indented by 4 or more spaces is neither a fence
/// nor a heading; a run of 3 or more `` ` `` or `~` opens a fence, closed by a run of the same
/// character at least as long with nothing else but whitespace.
///
/// Only lines whose first non-space byte is `#`, `` ` `` or `~` matter: the body is scanned
/// for those bytes (8 at a time), and a hit counts when only up to 3 spaces stand between it
/// and the start of its line.
pub fn headings(body: &str, max_bytes: usize) -> String {
    let b = body.as_bytes();
    let mut out = String::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut pos = 0;
    while let Some(p) = find_markup(b, pos) {
        pos = p + 1;
        let mut s = p;
        while s > 0 && p - s < 3 && b[s - 1] == b' ' {
            s -= 1;
        }
        if s > 0 && b[s - 1] != b'\n' {
            // Not the first non-space byte of its line, or indented 4 or more.
            continue;
        }
        let first = b[p];
        if first != b'#' {
            let run = b[p..].iter().take_while(|&&x| x == first).count();
            pos = p + run;
            if run < 3 {
                continue;
            }
            match fence {
                None => fence = Some((first, run)),
                Some((open, len)) if open == first && run >= len => {
                    let (end, next) = line_end(body, p);
                    if body[p + run..end].trim().is_empty() {
                        fence = None;
                    }
                    pos = next;
                }
                Some(_) => {}
            }
            continue;
        }
        if fence.is_some() {
            continue;
        }
        let (end, next) = line_end(body, p);
        pos = next;
        let Some(text) = heading_text(&body[p..end]) else {
            continue;
        };
        if !push_heading(&mut out, text, max_bytes) {
            break;
        }
    }
    out
}

/// The text of an ATX heading line that starts (after at most 3 spaces) with `#`: 1 to 6
/// `#`, then a space, a tab or nothing, closing `#`s dropped; `None` when it is not one or
/// is empty.
fn heading_text(trimmed: &str) -> Option<&str> {
    let hashes = trimmed.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &trimmed[hashes..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let text = rest.trim().trim_end_matches('#').trim_end();
    (!text.is_empty()).then_some(text)
}

/// Append `text` as one more line of `out` unless that would exceed `max_bytes` (false).
fn push_heading(out: &mut String, text: &str, max_bytes: usize) -> bool {
    let extra = text.len() + usize::from(!out.is_empty());
    if out.len() + extra > max_bytes {
        return false;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(text);
    true
}

/// The end of the line holding byte `p` of `text` (as [`str::lines`]: without its `\n`, nor
/// a `\r` before the `\n`), and the start of the next line.
fn line_end(text: &str, p: usize) -> (usize, usize) {
    match bytes::find(&text[p..], b'\n') {
        Some(i) if i > 0 && text.as_bytes()[p + i - 1] == b'\r' => (p + i - 1, p + i + 1),
        Some(i) => (p + i, p + i + 1),
        None => (text.len(), text.len()),
    }
}

/// The first `#`, `` ` `` or `~` of `b` at or after `from`, 8 bytes at a time.
fn find_markup(b: &[u8], from: usize) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    // Bytes of `x` that are zero get their high bit set; the lowest one set is always a
    // true zero (only bits above a true zero can be false positives).
    fn zeros(x: u64) -> u64 {
        x.wrapping_sub(LO) & !x & HI
    }
    let mut i = from;
    while let Some(chunk) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let z = zeros(w ^ (LO * u64::from(b'#')))
            | zeros(w ^ (LO * u64::from(b'`')))
            | zeros(w ^ (LO * u64::from(b'~')));
        if z != 0 {
            return Some(i + (z.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    (i..b.len()).find(|&j| matches!(b[j], b'#' | b'`' | b'~'))
}

/// The first `max_bytes` of `text`, cut on a character boundary.
pub fn prefix(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Strip the blank lines before the first line with text, and all trailing whitespace.
/// (Leading indentation of the first line is kept: it may be Markdown.)
pub fn trim_body(body: &str) -> &str {
    let mut start = 0;
    for line in body.split_inclusive('\n') {
        if line.trim().is_empty() {
            start += line.len();
        } else {
            break;
        }
    }
    body[start..].trim_end()
}

#[cfg(test)]
/// The first implementation of [`headings`] (line by line), the oracle of its tests: the
/// Markdown ATX headings of `body` (outside fenced code blocks), heading text only, one
/// per line, at most `max_bytes` in total (cut on a line boundary).
fn headings_reference(body: &str, max_bytes: usize) -> String {
    let mut out = String::new();
    let mut fence: Option<(char, usize)> = None;
    for line in body.lines() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let trimmed = line.trim_start_matches(' ');
        if indent <= 3 {
            let fence_char = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
            if let Some(c) = fence_char {
                let run = trimmed.chars().take_while(|&x| x == c).count();
                if run >= 3 {
                    match fence {
                        None => {
                            fence = Some((c, run));
                            continue;
                        }
                        Some((open, len))
                            if open == c
                                && run >= len
                                && trimmed[run * c.len_utf8()..].trim().is_empty() =>
                        {
                            fence = None;
                            continue;
                        }
                        Some(_) => {}
                    }
                }
            }
        }
        if fence.is_some() || indent > 3 {
            continue;
        }
        let Some(text) = heading_text(trimmed) else {
            continue;
        };
        if !push_heading(&mut out, text, max_bytes) {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Block<'_> {
        match split(text) {
            Split::Found(b) => b,
            other => panic!("expected frontmatter, got {other:?}"),
        }
    }

    fn parse_ok(text: &str) -> Mapping {
        let mut notes = Vec::new();
        parse(&found(text), &mut notes).expect("valid yaml")
    }

    #[test]
    fn bom_and_crlf_are_normalised() {
        let mut notes = Vec::new();
        let text = decode(
            b"\xEF\xBB\xBF---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n",
            &mut notes,
        );
        assert!(notes.is_empty());
        assert_eq!(text, "---\nname: x\ndescription: d\n---\nbody\n");
        let b = found(&text);
        assert_eq!(b.yaml, "name: x\ndescription: d\n");
        assert_eq!(b.body, "body\n");
        assert_eq!(b.open_line, 1);
        assert_eq!(b.body_line, 5);
    }

    #[test]
    fn mixed_line_endings() {
        let mut notes = Vec::new();
        let text = decode(
            b"---\nname: x\r\ndescription: d\r---\r\nA\nB\r\n",
            &mut notes,
        );
        assert_eq!(text, "---\nname: x\ndescription: d\n---\nA\nB\n");
        let m = parse_ok(&text);
        assert_eq!(
            get(&m, "description").and_then(scalar_string).as_deref(),
            Some("d")
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_with_a_located_warning() {
        let mut notes = Vec::new();
        let text = decode(b"---\ndescription: d\n---\nbad \xFF here\n", &mut notes);
        assert!(text.contains("bad \u{FFFD} here"));
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].line, Some(4));
        assert_eq!(notes[0].severity, Severity::Warning);
    }

    #[test]
    fn leading_blank_line_is_accepted_and_counted() {
        let b = found("\n  \n---\ndescription: d\n---\nbody");
        assert_eq!(b.leading_blank_lines, 2);
        assert_eq!(b.open_line, 3);
        assert_eq!(b.body, "body");
    }

    #[test]
    fn horizontal_rule_in_body_is_body() {
        let b = found("---\ndescription: d\n---\nintro\n\n---\n\nmore\n---\n");
        assert_eq!(b.yaml, "description: d\n");
        assert_eq!(b.body, "intro\n\n---\n\nmore\n---\n");
    }

    #[test]
    fn fence_with_trailing_spaces() {
        let b = found("---  \ndescription: d\n--- \t\nbody");
        assert_eq!(b.yaml, "description: d\n");
        assert_eq!(b.body, "body");
    }

    #[test]
    fn indented_fence_inside_block_scalar_is_yaml() {
        let text = "---\ndescription: |\n  first\n  ---\n  after\nname: x\n---\nbody\n";
        let b = found(text);
        assert_eq!(b.body, "body\n");
        let m = parse_ok(text);
        assert_eq!(
            get(&m, "description").and_then(scalar_string).as_deref(),
            Some("first\n---\nafter\n")
        );
    }

    #[test]
    fn block_scalars_and_wrapped_plain_descriptions() {
        let m = parse_ok(
            "---\na: |-\n  one\n  two\nb: >\n  folded\n  text\nc: >-\n  x\n  y\nd: plain text\n  wrapped over\n  three lines\n---\n",
        );
        let s = |k| get(&m, k).and_then(scalar_string).unwrap();
        assert_eq!(s("a"), "one\ntwo");
        assert_eq!(s("b"), "folded text\n");
        assert_eq!(s("c"), "x y");
        assert_eq!(s("d"), "plain text wrapped over three lines");
    }

    #[test]
    fn numbers_dates_nulls_in_json_and_typed_reads() {
        let m = parse_ok(
            "---\nversion: 2.0\ncount: 3\ndate: 2024-01-15\nnothing: null\ntilde: ~\nflag: yes\n1: one\ntrue: t\nlist: [a, 2, null]\nmeta:\n  k: v\n---\n",
        );
        assert_eq!(
            to_json(&m),
            r#"{"version":2.0,"count":3,"date":"2024-01-15","nothing":null,"tilde":null,"flag":"yes","1":"one","true":"t","list":["a",2,null],"meta":{"k":"v"}}"#
        );
        assert_eq!(
            get(&m, "version").and_then(scalar_string).as_deref(),
            Some("2.0")
        );
        assert_eq!(
            get(&m, "count").and_then(scalar_string).as_deref(),
            Some("3")
        );
        assert!(get(&m, "nothing").is_none());
        assert!(get(&m, "absent").is_none());
        assert_eq!(string_list(get(&m, "list").unwrap()), vec!["a", "2"]);
        assert_eq!(boolean(get(&m, "flag").unwrap()), Some(true));
        // The JSON is valid.
        let v: serde_json::Value = serde_json::from_str(&to_json(&m)).unwrap();
        assert_eq!(v["version"], serde_json::json!(2.0));
    }

    #[test]
    fn lenient_lists_and_integers() {
        let m = parse_ok(
            "---\nk1: [react, ' hooks ', '']\nk2: \"react, hooks\"\nk3: single\nk4: 42\np1: 5\np2: '7'\np3: 2.9\np4: high\n---\n",
        );
        assert_eq!(string_list(get(&m, "k1").unwrap()), vec!["react", "hooks"]);
        assert_eq!(string_list(get(&m, "k2").unwrap()), vec!["react", "hooks"]);
        assert_eq!(string_list(get(&m, "k3").unwrap()), vec!["single"]);
        assert_eq!(string_list(get(&m, "k4").unwrap()), vec!["42"]);
        assert_eq!(integer(get(&m, "p1").unwrap()), Some(5));
        assert_eq!(integer(get(&m, "p2").unwrap()), Some(7));
        assert_eq!(integer(get(&m, "p3").unwrap()), Some(2));
        assert_eq!(integer(get(&m, "p4").unwrap()), None);
    }

    #[test]
    fn invalid_yaml_is_located_in_the_file() {
        // Blank line first: fence on line 2, the bad `: ` on YAML line 2 = file line 4.
        let text = "\n---\nname: x\ndescription: Use this: when things break\n---\nbody";
        let mut notes = Vec::new();
        let err = parse(&found(text), &mut notes).unwrap_err();
        assert_eq!(err.line, Some(4));
        assert_eq!(err.severity, Severity::Error);
        assert!(
            err.message.starts_with("invalid YAML in the frontmatter: "),
            "{}",
            err.message
        );
        assert!(err.message.contains("line 4"), "{}", err.message);
    }

    #[test]
    fn absurd_nesting_is_refused_fast_and_located() {
        // 80 KB of `[` kept serde_yaml busy for the engine's whole deadline (quadratic).
        let text = format!(
            "\n---\nname: x\ndescription: {}\n---\nbody",
            "[".repeat(80 * 1024)
        );
        let started = std::time::Instant::now();
        let err = parse(&found(&text), &mut Vec::new()).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_millis(500));
        assert_eq!(err.line, Some(4));
        assert_eq!(err.severity, Severity::Error);
        assert!(
            err.message.contains("deeper than 64 levels"),
            "{}",
            err.message
        );
        // Deep block nesting too.
        let mut yaml = String::new();
        for i in 0..200 {
            yaml.push_str(&format!("{}k{i}:\n", " ".repeat(i)));
        }
        let text = format!("---\n{yaml}---\n");
        let err = parse(&found(&text), &mut Vec::new()).unwrap_err();
        assert_eq!(err.line, Some(66));
    }

    #[test]
    fn non_mapping_frontmatter_is_an_error() {
        let mut notes = Vec::new();
        let err = parse(&found("---\n- a\n- b\n---\n"), &mut notes).unwrap_err();
        assert!(
            err.message.contains("list, not a mapping"),
            "{}",
            err.message
        );
        assert!(
            parse(&found("---\n---\nbody"), &mut notes)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn no_frontmatter_and_unclosed() {
        assert_eq!(
            split("# Title\n---\n"),
            Split::None {
                body: "# Title\n---\n"
            }
        );
        assert_eq!(split(""), Split::None { body: "" });
        assert_eq!(
            split("----\nx\n----\n"),
            Split::None {
                body: "----\nx\n----\n"
            }
        );
        assert_eq!(split("---\nname: x\n"), Split::Unclosed { open_line: 1 });
        assert_eq!(body_of("---\na: 1\n---\nB"), "B");
        assert_eq!(body_of("plain"), "plain");
    }

    #[test]
    fn control_characters_are_replaced_with_a_warning() {
        let text = "---\nname: x\ndescription: smart\u{92}quote\n---\n";
        let mut notes = Vec::new();
        let m = parse(&found(text), &mut notes).unwrap();
        assert_eq!(
            get(&m, "description").and_then(scalar_string).as_deref(),
            Some("smart\u{FFFD}quote")
        );
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].line, Some(3));
        // Emoji, CJK and zero-width joiners are fine.
        let mut notes = Vec::new();
        let m = parse(
            &found("---\ndescription: 👩\u{200D}💻 日本語\n---\n"),
            &mut notes,
        )
        .unwrap();
        assert!(notes.is_empty());
        assert_eq!(
            get(&m, "description").and_then(scalar_string).as_deref(),
            Some("👩\u{200D}💻 日本語")
        );
    }

    #[test]
    fn key_lines() {
        let b = found("\n---\nname: x\n\"description\": d\n---\n");
        assert_eq!(key_line(&b, "name"), Some(3));
        assert_eq!(key_line(&b, "description"), Some(4));
        assert_eq!(key_line(&b, "keywords"), None);
    }

    #[test]
    fn headings_outside_code() {
        let body = "# Title\ntext\n## Sub ##\n```\n# not a heading\n```\n#nospace\n    # indented code\n~~~~\n# no\n~~~~\n### Three\n";
        assert_eq!(headings(body, 1000), "Title\nSub\nThree");
        assert_eq!(headings(body, 9), "Title\nSub");
    }

    use super::yaml_eq::same;

    /// The fast path accepts `yaml` and gives what serde_yaml gives.
    fn simple_ok(yaml: &str) -> Mapping {
        let fast = parse_simple(yaml).unwrap_or_else(|| panic!("refused: {yaml:?}"));
        let slow = serde_yaml::from_str::<Value>(yaml).expect("serde_yaml reads it");
        let fast = Value::Mapping(fast);
        assert!(same(&fast, &slow), "{yaml:?}\nfast {fast:?}\nslow {slow:?}");
        match fast {
            Value::Mapping(m) => m,
            _ => unreachable!(),
        }
    }

    fn s(v: &str) -> Value {
        Value::String(v.into())
    }

    fn map(entries: &[(&str, Value)]) -> Value {
        Value::Mapping(
            entries
                .iter()
                .map(|(k, v)| (s(k), v.clone()))
                .collect::<Mapping>(),
        )
    }

    fn seq(items: &[&str]) -> Value {
        Value::Sequence(items.iter().map(|i| s(i)).collect())
    }

    #[test]
    fn simple_flat_plain_scalars_keep_order() {
        let m = simple_ok(
            "name: pdf-tools\ndescription: Use when no, \"quoted\" words, a:b, C# and 50% ok\nallowed_tools: Read, Write\nhint: <feature|bug> <name>\nz.key/x-y: é unicode 👩‍💻  inner  spaces   \n",
        );
        assert_eq!(
            Value::Mapping(m),
            map(&[
                ("name", s("pdf-tools")),
                (
                    "description",
                    s("Use when no, \"quoted\" words, a:b, C# and 50% ok")
                ),
                ("allowed_tools", s("Read, Write")),
                ("hint", s("<feature|bug> <name>")),
                ("z.key/x-y", s("é unicode 👩‍💻  inner  spaces")),
            ])
        );
        let keys: Vec<_> = simple_ok("b: x\na: why\nc: z\n")
            .keys()
            .map(|k| k.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(keys, ["b", "a", "c"]);
    }

    #[test]
    fn simple_wrapped_plain_scalars_fold() {
        let m = simple_ok(
            "description: first line\n  second   \n     third\n\n  after blank\n\n\n  two blanks\nname: x\n",
        );
        assert_eq!(
            m.get("description"),
            Some(&s("first line second third\nafter blank\n\ntwo blanks"))
        );
        assert_eq!(m.get("name"), Some(&s("x")));
        let m = simple_ok("meta:\n  d: one\n   two\n  e: f\n");
        assert_eq!(
            Value::Mapping(m),
            map(&[("meta", map(&[("d", s("one two")), ("e", s("f"))]))])
        );
    }

    #[test]
    fn simple_quoted_scalars() {
        let m = simple_ok(concat!(
            "a: 'it''s: #1, [x] & *y'\n",
            "b: \"tab\\there \\\"q\\\" \\\\ \\/ \\n \\x41\\u00e9\\U0001F600 \\_ \\0 \\e \\N \\L \\P \\a \\b \\v \\f \\r \\ \"\n",
            "c: ''\n",
            "d: \"\"\n",
            "e: '  padded  '   \n",
            "f: \"null\"\n",
            "g: '123'\n",
        ));
        assert_eq!(m.get("a"), Some(&s("it's: #1, [x] & *y")));
        assert_eq!(
            m.get("b"),
            Some(&s(
                "tab\there \"q\" \\ / \n Aé😀 \u{A0} \0 \u{1B} \u{85} \u{2028} \u{2029} \u{7} \u{8} \u{B} \u{C} \r  "
            ))
        );
        assert_eq!(m.get("c"), Some(&s("")));
        assert_eq!(m.get("d"), Some(&s("")));
        assert_eq!(m.get("e"), Some(&s("  padded  ")));
        assert_eq!(m.get("f"), Some(&s("null")));
        assert_eq!(m.get("g"), Some(&s("123")));
    }

    #[test]
    fn simple_block_scalars() {
        let m = simple_ok(concat!(
            "lit: |\n  one\n    indented\n\n  two  \n\n\n",
            "strip: |-\n  a\n  b\n\n",
            "keep: |+\n  a\n\n\n",
            "fold: >\n  folded\n  text\n\n  para\n\n\n  two\n",
            "fold_strip: >-\n  x\n  y\n",
            "fold_keep: >+\n  x\n  y\n\n",
            "lead: |\n\n  after blank\n",
            "deep: |\n      six\n      spaces\n",
            "hash: |\n  # not a comment\n  ---\n",
            "last: >\n  end\n",
        ));
        let g = |k: &str| m.get(k).and_then(Value::as_str).unwrap().to_owned();
        assert_eq!(g("lit"), "one\n  indented\n\ntwo  \n");
        assert_eq!(g("strip"), "a\nb");
        assert_eq!(g("keep"), "a\n\n\n");
        assert_eq!(g("fold"), "folded text\npara\n\ntwo\n");
        assert_eq!(g("fold_strip"), "x y");
        assert_eq!(g("fold_keep"), "x y\n\n");
        assert_eq!(g("lead"), "\nafter blank\n");
        assert_eq!(g("deep"), "six\nspaces\n");
        assert_eq!(g("hash"), "# not a comment\n---\n");
        assert_eq!(g("last"), "end\n");
    }

    #[test]
    fn simple_nesting_lists_nulls_and_comments() {
        let m = simple_ok(concat!(
            "# leading comment\n",
            "\n",
            "name: x\n",
            "metadata:\n",
            "  author: 'someone'\n",
            "    # indented comment (after a plain scalar: refused)\n",
            "# column-0 comment inside\n",
            "  nested:\n",
            "    deeper: value\n",
            "    tags: [a, 'b, c', \"d\"]\n",
            "  empty:\n",
            "tags:\n",
            "  - one\n",
            "  -   'two'\n",
            "  - \"three\"\n",
            "compact:\n",
            "- p\n",
            "- q r\n",
            "none:\n",
            "flow: []\n",
            "flow2: [ spaced item ,x ]\n",
            "last:\n",
        ));
        assert_eq!(
            Value::Mapping(m),
            map(&[
                ("name", s("x")),
                (
                    "metadata",
                    map(&[
                        ("author", s("someone")),
                        (
                            "nested",
                            map(&[("deeper", s("value")), ("tags", seq(&["a", "b, c", "d"]))])
                        ),
                        ("empty", Value::Null),
                    ])
                ),
                ("tags", seq(&["one", "two", "three"])),
                ("compact", seq(&["p", "q r"])),
                ("none", Value::Null),
                ("flow", seq(&[])),
                ("flow2", seq(&["spaced item", "x"])),
                ("last", Value::Null),
            ])
        );
    }

    #[test]
    fn simple_lists_of_mappings() {
        let m = simple_ok(concat!(
            "assets:\n",
            "  - file: assets/a.json\n",
            "    description: wrapped\n",
            "      over two lines\n",
            "    type: schema\n",
            "  -   file: b\n",
            "      args:\n",
            "        - name: message\n",
            "          required:\n",
            "scripts:\n",
            "- file: c\n",
            "  exec: |\n",
            "    run\n",
            "- key:value\n",
            "- http://x.y\n",
        ));
        assert_eq!(
            Value::Mapping(m),
            map(&[
                (
                    "assets",
                    Value::Sequence(vec![
                        map(&[
                            ("file", s("assets/a.json")),
                            ("description", s("wrapped over two lines")),
                            ("type", s("schema")),
                        ]),
                        map(&[
                            ("file", s("b")),
                            (
                                "args",
                                Value::Sequence(vec![map(&[
                                    ("name", s("message")),
                                    ("required", Value::Null),
                                ])])
                            ),
                        ]),
                    ])
                ),
                (
                    "scripts",
                    Value::Sequence(vec![
                        map(&[("file", s("c")), ("exec", s("run\n"))]),
                        s("key:value"),
                        s("http://x.y"),
                    ])
                ),
            ])
        );
    }

    #[test]
    fn simple_refuses_what_it_is_not_sure_of() {
        let refused = [
            "",
            "\n",
            "# only a comment\n",
            "name: x",                     // no final newline
            "  name: x\n",                 // indented top level
            "name: x\nname: y\n",          // duplicate key
            "a: &anchor x\nb: *anchor\n",  // anchor
            "a: x\nb: *x\n",               // alias
            "a: !tag x\n",                 // tag
            "? a\n: b\n",                  // complex key
            "'quoted key': x\n",           // quoted key
            "a key: x\n",                  // key with a space
            "1: one\n",                    // numeric key
            "true: t\n",                   // boolean key
            "Null: t\n",                   // null key
            "key:value\n",                 // no space after the colon
            "a: 1\n",                      // number
            "a: 2.0\n",                    // float
            "a: 2024-01-15\n",             // date-like
            "a: -x\n",                     // dash
            "a: .inf\n",                   // dot
            "a: +1\n",                     // plus
            "a: ~\n",                      // null
            "a: null\n",                   // null
            "a: NULL\n",                   // null
            "a: true\n",                   // boolean
            "a: False\n",                  // boolean
            "a: yes\n",                    // YAML 1.1 boolean
            "a: Off\n",                    // YAML 1.1 boolean
            "a: nan\n",                    // special float word
            "a: {k: v}\n",                 // flow mapping
            "a: @x\n",                     // reserved
            "a: `x`\n",                    // reserved
            "a: %x\n",                     // directive-like
            "a: x # comment\n",            // trailing comment
            "a: 'x' # comment\n",          // trailing comment after a quoted scalar
            "a: x: y\n",                   // nested colon
            "a: ends with:\n",             // trailing colon
            "a: x\n  b: y\n",              // continuation that is a mapping
            "a: x\n  - y\n",               // continuation starting with an indicator
            "a: x\n  # comment\n  more\n", // comment inside a plain scalar
            "a: x\n  # comment\nb: y\n",   // comment more indented after a plain scalar
            "a:\tx\n",                     // tab
            "a: x\r\n",                    // carriage return
            "a: x\u{85}y\n",               // NEL
            "a: x\u{2028}y\n",             // line separator
            "a: \u{FEFF}x\n",              // BOM
            "a: 'multi\n  line'\n",        // multi-line quoted
            "a: \"multi\n  line\"\n",      // multi-line quoted
            "a: \"esc \\q\"\n",            // unknown escape
            "a: \"\\ud800\"\n",            // surrogate escape
            "a: \"cont \\\n  x\"\n",       // escaped line break
            "a: 'x' y\n",                  // text after a quoted scalar
            "a: |2\n  x\n",                // explicit indentation
            "a: | # c\n  x\n",             // comment after a header
            "a: |\nb: x\n",                // empty block scalar
            "a: |\n",                      // empty block scalar at the end
            "a: |\n    \n  x\n",           // leading blank line more indented
            "a: |\n  x\n     \n  y\n",     // blank line more indented than content
            "a: >\n  x\n    more\n",       // more-indented line in a folded scalar
            "a: |\n  x\n y\n",             // odd dedent after a block scalar
            "a: [x, [y]]\n",               // nested flow list
            "a: [x, y\n  ]\n",             // multi-line flow list
            "a: [x, y,]\n",                // trailing comma
            "a: [x, ]\n",                  // trailing comma
            "a: [x, 1]\n",                 // number item
            "a: [x] y\n",                  // text after a flow list
            "a: [x #y]\n",                 // comment-like item
            "a: [k: v]\n",                 // flow pair
            "a:\n  - 1\n",                 // number item
            "a:\n  -\n",                   // empty item
            "a:\n  - k: v\n     j: w\n",   // mapping item with keys out of line
            "a:\n  - k: v\n   j: w\n",     // mapping item with keys out of line
            "a:\n  - k: v\n    k: w\n",    // duplicate key in a mapping item
            "a:\n  - 'k': v\n",            // quoted key in a mapping item
            "a:\n  - - x\n",               // nested list
            "a:\n  - x\n    y\n",          // multi-line item
            "a:\n  - x\n  b: y\n",         // mapping after a non-compact list
            "a:\n  b: x\n c: y\n",         // odd dedent
            "a:\n  b: x\n    c: y\n",      // odd indent
            "a:\n  plain text\n",          // scalar on the next line
            "- a\n- b\n",                  // top-level list
            "a: x\n--- y\n",               // document marker
            "a: x\n...\n",                 // document end
            "%YAML 1.2\na: x\n",           // directive
            "<<: *base\n",                 // merge key
            "a: <<\n",                     // merge-like value
            "a: << x\n",                   // merge-like value
        ];
        for yaml in refused {
            assert!(parse_simple(yaml).is_none(), "accepted {yaml:?}");
        }
    }

    /// What `parse` gives does not depend on the fast path: its result is what serde_yaml
    /// gives (control characters cleaned first, with notes), and errors still come from it.
    #[test]
    fn parse_with_fast_path_matches_serde_yaml() {
        let text = "---\nname: x\ndescription: smart\u{92}quote\ntags: [a, b]\n---\n";
        let mut notes = Vec::new();
        let m = parse(&found(text), &mut notes).unwrap();
        assert_eq!(notes.len(), 1);
        assert_eq!(m.get("description"), Some(&s("smart\u{FFFD}quote")));
        assert!(parse_simple("name: x\ndescription: smart\u{92}quote\n").is_none());
        let text = "---\nname: x\nname: y\n---\n";
        let err = parse(&found(text), &mut Vec::new()).unwrap_err();
        assert!(
            err.message.contains("duplicate entry with key \"name\""),
            "{}",
            err.message
        );
    }

    #[test]
    fn all_printable_matches_yaml_printable_on_every_char() {
        let mut buf = [0u8; 4];
        for cp in 0..=0x10FFFFu32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let one = c.encode_utf8(&mut buf);
            assert_eq!(all_printable(one), yaml_printable(c), "U+{cp:04X}");
        }
        assert!(all_printable("ok é 👩‍💻\t\n"));
        assert!(!all_printable("ok \u{9F} é"));
    }

    /// A small deterministic random generator (xorshift).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn one_in(&mut self, n: u64) -> bool {
            self.next().is_multiple_of(n)
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[(self.next() % items.len() as u64) as usize]
        }
    }

    /// Random documents built from the constructs of real frontmatter, near misses included:
    /// whenever the fast path accepts one, serde_yaml must give the same value.
    #[test]
    fn simple_agrees_with_serde_yaml_on_random_documents() {
        let keys = [
            "name",
            "description",
            "a",
            "b",
            "tags",
            "meta",
            "x_y",
            "k-1",
            "c",
            "d",
            "e",
            "f",
            "g",
            "h",
            "i",
            "j",
            "k",
            "l",
            "m",
            "o",
            "p",
            "q",
            "r",
            "s",
            "t",
            "u",
            "v",
            "w",
            "Yes",
        ];
        let scalars = [
            "plain",
            "two words",
            "plain",
            "with: colon",
            "a:b",
            "C# x",
            "x #y",
            "é ü",
            "yes",
            "no",
            "Null",
            "1.0",
            "0x1F",
            "-x",
            "x -",
            "'q'",
            "'it''s'",
            "\"d\\\"q\"",
            "\"\\u00e9\\t\"",
            "\"\\ud83d\"",
            "[a, b]",
            "[]",
            "[a,b ]",
            "['x, y', z]",
            "[a, 1]",
            "[ a , 'b' ]",
            "{a: b}",
            "&a x",
            "*a",
            "!t x",
            "x  ",
            "~",
            "true",
            "ends:",
            "100%",
            "a\"b",
            "a'b",
            "<x>",
            "@x",
            "`x`",
            "'a' 'b'",
            "'' ",
            "\"\"",
            "|",
            "|-",
            "|+",
            ">",
            ">-",
            ">+",
            "|2",
            "| #c",
            "",
            "",
            "",
        ];
        let good = [
            "plain",
            "two words",
            "'q'",
            "\"d\\\"q\"",
            "[a, b]",
            "|",
            "|-",
            ">",
            "",
            "",
        ];
        let texts = [
            "more",
            "more text",
            "x",
            "é",
            "# hash",
            "---",
            "- dash",
            "k: v",
            "'q'",
            "[x]",
            "a  b",
            "ends:",
            "~",
            "x #c",
            "tail  ",
            "no",
        ];
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut accepted, mut total) = (0, 0);
        // Constructs the accepted documents must cover.
        type Feature = fn(&str) -> bool;
        let features: [(&str, Feature); 8] = [
            ("mapping item", |d| d.contains("- k:") || d.contains("- j:")),
            ("literal", |d| d.contains(": |\n")),
            ("folded", |d| d.contains(": >\n")),
            ("strip", |d| d.contains(": |-\n")),
            ("nested", |d| d.contains(":\n  ") && d.contains("\n  e")),
            ("flow", |d| d.contains("[a, b]")),
            ("wrapped", |d| d.contains("plain\n  ")),
            ("comment", |d| d.contains("# c\n")),
        ];
        let mut covered = [0usize; 8];
        for _ in 0..200_000 {
            let mut doc = String::new();
            // Indentation of the current mapping, and of its parent's keys.
            let mut levels = vec![0usize];
            for _ in 0..1 + rng.next() % 6 {
                if rng.one_in(8) {
                    doc.push_str(rng.pick(&["\n", "  \n", "# c\n", "  # c\n", "- x\n", " \n"]));
                }
                if levels.len() > 1 && rng.one_in(3) {
                    levels.pop();
                }
                let ind = *levels.last().unwrap() + usize::from(rng.one_in(40));
                let pad = " ".repeat(ind);
                let key = rng.pick(&keys);
                let value = if rng.one_in(4) {
                    rng.pick(&scalars)
                } else {
                    rng.pick(&good)
                };
                doc.push_str(&pad);
                doc.push_str(key);
                doc.push(':');
                if !value.is_empty() {
                    doc.push_str(rng.pick(&[" ", " ", "  "]));
                    doc.push_str(value);
                }
                doc.push('\n');
                let step = *rng
                    .pick(&["2", "2", "4", "1", "3"])
                    .as_bytes()
                    .first()
                    .unwrap() as usize
                    - b'0' as usize;
                let child = " ".repeat(ind + step);
                let wraps = value.starts_with(['|', '>']) || value.starts_with(char::is_alphabetic);
                let roll = rng.next() % if wraps { 4 } else { 12 };
                match (value, roll) {
                    ("", 0) => levels.push(ind + step),
                    ("", 1 | 2) => {
                        // A list, indented or compact.
                        let at = if rng.one_in(2) { &child } else { &pad };
                        for _ in 0..1 + rng.next() % 3 {
                            doc.push_str(at);
                            let dash = rng.pick(&["- ", "- ", "-  ", "-"]);
                            doc.push_str(dash);
                            if rng.one_in(2) {
                                // A mapping item, maybe with more keys or wrapped lines.
                                doc.push_str(rng.pick(&["k: ", "k:", "j: "]));
                                doc.push_str(rng.pick(&good));
                                doc.push('\n');
                                for _ in 0..rng.next() % 3 {
                                    doc.push_str(at);
                                    if rng.one_in(4) {
                                        doc.push_str(rng.pick(&["", " ", "   ", "    "]));
                                    } else {
                                        doc.push_str(&" ".repeat(dash.len()));
                                    }
                                    doc.push_str(
                                        rng.pick(&["j: x", "l: 'y'", "m: [a]", "text", "- z"]),
                                    );
                                    doc.push('\n');
                                }
                                continue;
                            }
                            doc.push_str(rng.pick(&scalars));
                            doc.push('\n');
                        }
                    }
                    (_, 0 | 1) => {
                        // Continuation or content lines.
                        for _ in 0..1 + rng.next() % 4 {
                            match rng.next() % 6 {
                                0 => doc.push_str(rng.pick(&["", "  ", "      ", " "])),
                                1 => {
                                    doc.push_str(&child);
                                    doc.push_str("  ");
                                    doc.push_str(rng.pick(&texts));
                                }
                                2 if rng.one_in(3) => {
                                    doc.push_str(rng.pick(&["", " ", "   "]));
                                    doc.push_str(rng.pick(&texts));
                                }
                                _ => {
                                    doc.push_str(&child);
                                    if rng.one_in(3) {
                                        doc.push_str(rng.pick(&texts));
                                    } else {
                                        doc.push_str(rng.pick(&["text", "more words", "end  "]));
                                    }
                                }
                            }
                            doc.push('\n');
                        }
                    }
                    _ => {}
                }
            }
            total += 1;
            if let Some(fast) = parse_simple(&doc) {
                accepted += 1;
                for (i, (_, f)) in features.iter().enumerate() {
                    covered[i] += usize::from(f(&doc));
                }
                let slow = serde_yaml::from_str::<Value>(&doc)
                    .unwrap_or_else(|e| panic!("{doc:?}: fast path accepted, serde_yaml: {e}"));
                let fast = Value::Mapping(fast);
                assert!(same(&fast, &slow), "{doc:?}\nfast {fast:?}\nslow {slow:?}");
            }
        }
        // The generator must exercise the fast path, not only its refusals.
        assert!(accepted * 10 > total, "{accepted} of {total} accepted");
        for ((name, _), n) in features.iter().zip(covered) {
            assert!(n > 100, "{name}: {n} accepted documents");
        }
        eprintln!("{accepted} of {total} random documents accepted, covering {covered:?}");
    }

    #[test]
    fn headings_match_the_reference() {
        let cases = [
            "# Title\ntext\n## Sub ##\n```\n# not a heading\n```\n#nospace\n    # indented code\n~~~~\n# no\n~~~~\n### Three\n",
            "```\n# in\n``\n# still in\n````\n# out\n",
            "````\n# in\n```\n# still in\n`````\n# out\n",
            "~~~\n# in\n```\n# in\n~~~ \n# out\n",
            "~~~\n# in\n~~~ x\n# still in\n~~~\n# out\n",
            "```rust\n# in\n```\n# out\n",
            "   ```\n# in\n   ```\n# out\n    ```\n# not fence\n",
            "# CRLF\r\n## Two\r\n```\r\n# in\r\n```\r\n### Three ###\r\n",
            "# lone CR\r",
            "# é unicode ü #\n##\u{3000}ideographic space\u{3000}\n#\u{3000}x\n",
            "####### seven\n###### six\n#\tTab\n# trailing #s ###\n# C#\n# #\n#\n",
            " # one\n  # two\n   # three\n    # four\n\t# tab\n",
            "",
            "\n\n\n",
            "no headings at all\njust text",
            "# last line without newline",
            "``\n# two backticks are not a fence\n",
            "```\nunclosed\n# in\n",
            "~~~~~~\n~~~\n# in\n~~~~~~~~\n# out\n",
            "# a\n# bb\n# ccc\n# dddd\n# eeeee\n",
        ];
        for body in cases {
            for max in [0, 1, 3, 4, 6, 9, 12, 100, usize::MAX] {
                assert_eq!(
                    headings(body, max),
                    headings_reference(body, max),
                    "{body:?} max {max}"
                );
            }
        }
        // Random bodies from tricky lines.
        let lines = [
            "# h",
            "## h2 ##",
            "```",
            "````",
            "~~~",
            "~~~~",
            "``` x",
            "   ```",
            "    ```",
            " # h",
            "    # h",
            "text",
            "",
            "#x",
            "####### h",
            "#\th",
            "# é",
            "\r",
            "# h\r",
            "~~~ ",
            "``",
        ];
        let mut rng = Rng(12345);
        for _ in 0..5_000 {
            let mut body = String::new();
            for _ in 0..rng.next() % 12 {
                body.push_str(rng.pick(&lines));
                body.push_str(rng.pick(&["\n", "\n", "\r\n"]));
            }
            if rng.one_in(2) {
                body.push_str(rng.pick(&lines));
            }
            let max = (rng.next() % 40) as usize;
            assert_eq!(
                headings(&body, max),
                headings_reference(&body, max),
                "{body:?}"
            );
        }
    }

    #[test]
    fn find_markup_finds_the_first_hit() {
        let text = "abcdefgh#ijklmnop`qr~~~\u{e9}#";
        let b = text.as_bytes();
        for from in 0..=b.len() {
            let want = (from..b.len()).find(|&j| matches!(b[j], b'#' | b'`' | b'~'));
            assert_eq!(find_markup(b, from), want, "from {from}");
        }
        // A hit after a byte equal to a searched byte plus one (no borrow false positives).
        let b = b"$$$$$$$$\x22#\x24`\x7F~\x01\x00";
        for from in 0..b.len() {
            let want = (from..b.len()).find(|&j| matches!(b[j], b'#' | b'`' | b'~'));
            assert_eq!(find_markup(b, from), want, "from {from}");
        }
        assert_eq!(find_markup(b"", 0), None);
        assert_eq!(find_markup(b"plain text without any", 0), None);
    }

    /// Every Markdown file of the corpus gives the same headings as the reference.
    #[test]
    #[ignore = "reads the corpus outside the repository; run with --ignored"]
    fn headings_match_the_reference_on_the_corpus() {
        let mut stack = vec![std::path::PathBuf::from("/work/shared/corpora/combined")];
        let mut n = 0;
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "md") {
                    let text = decode(&std::fs::read(&p).unwrap(), &mut Vec::new());
                    let body = body_of(&text);
                    for max in [4096, 200, usize::MAX] {
                        assert_eq!(headings(body, max), headings_reference(body, max), "{p:?}");
                    }
                    n += 1;
                }
            }
        }
        eprintln!("{n} files");
    }

    #[test]
    fn prefix_and_trim() {
        assert_eq!(prefix("héllo", 2), "h");
        assert_eq!(prefix("héllo", 3), "hé");
        assert_eq!(prefix("ab", 10), "ab");
        assert_eq!(trim_body("\n\n  code\nx  \n\n"), "  code\nx");
        assert_eq!(trim_body("\n \n"), "");
    }
}
