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

use crate::model::Severity;

/// A finding while reading a file: line (1-based, in the file) when known.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    if text.contains('\r') {
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
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
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
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
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

/// Parse the frontmatter YAML of `block` into a mapping. An empty frontmatter is an empty
/// mapping. Errors are located in the file (fence offset + YAML line) and say what is wrong.
pub fn parse(block: &Block<'_>, notes: &mut Vec<Note>) -> Result<Mapping, Note> {
    let cleaned;
    let yaml = if block.yaml.chars().all(yaml_printable) {
        block.yaml
    } else {
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
        cleaned = block
            .yaml
            .chars()
            .map(|c| if yaml_printable(c) { c } else { '\u{FFFD}' })
            .collect::<String>();
        &cleaned
    };
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
    block.yaml.lines().enumerate().find_map(|(i, line)| {
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
pub fn headings(body: &str, max_bytes: usize) -> String {
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
        let hashes = trimmed.bytes().take_while(|&b| b == b'#').count();
        if !(1..=6).contains(&hashes) {
            continue;
        }
        let rest = &trimmed[hashes..];
        if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
            continue;
        }
        let text = rest.trim().trim_end_matches('#').trim_end();
        if text.is_empty() {
            continue;
        }
        let extra = text.len() + usize::from(!out.is_empty());
        if out.len() + extra > max_bytes {
            break;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(text);
    }
    out
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

    #[test]
    fn prefix_and_trim() {
        assert_eq!(prefix("héllo", 2), "h");
        assert_eq!(prefix("héllo", 3), "hé");
        assert_eq!(prefix("ab", 10), "ab");
        assert_eq!(trim_body("\n\n  code\nx  \n\n"), "  code\nx");
        assert_eq!(trim_body("\n \n"), "");
    }
}
