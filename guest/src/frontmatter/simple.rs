//! The hand-written parser behind [`super::parse_simple`].

use serde_yaml::{Mapping, Value};

pub(super) fn parse(yaml: &str) -> Option<Mapping> {
    let body = yaml.strip_suffix('\n')?;
    if !safe_bytes(yaml.as_bytes()) {
        return None;
    }
    let mut p = Parser {
        lines: body.split('\n').collect(),
        i: 0,
    };
    let m = p.mapping(0)?;
    if p.peek().is_some() {
        return None;
    }
    Some(m)
}

/// No byte or character the parser does not handle: tabs, `\r`, other controls, and
/// the characters YAML treats as line breaks or skips (U+0085, U+2028, U+2029, U+FEFF),
/// and U+FFFE/U+FFFF.
fn safe_bytes(b: &[u8]) -> bool {
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            if (c < 0x20 && c != b'\n') || c == 0x7F {
                return false;
            }
        } else if c == 0xC2 {
            if b[i + 1] < 0xA0 {
                return false;
            }
        } else if c == 0xE2 {
            if b[i + 1] == 0x80 && matches!(b[i + 2], 0xA8 | 0xA9) {
                return false;
            }
        } else if c == 0xEF
            && ((b[i + 1] == 0xBB && b[i + 2] == 0xBF)
                || (b[i + 1] == 0xBF && matches!(b[i + 2], 0xBE | 0xBF)))
        {
            return false;
        }
        i += 1;
    }
    true
}

/// Words a plain scalar may not be, in any case: YAML 1.1 or 1.2 nulls, booleans and
/// special floats (some are strings for `serde_yaml`, but that is not worth being sure of).
const SPECIAL: &[&str] = &[
    "null", "true", "false", "yes", "no", "on", "off", "y", "n", "nan", "inf", "infinity",
];

fn special_word(s: &str) -> bool {
    s.len() <= 8 && SPECIAL.iter().any(|w| s.eq_ignore_ascii_case(w))
}

/// Whether a plain scalar starting with `c` is surely a string and surely a plain scalar
/// (no YAML indicator, digit, sign, dot, space or `=`; `<<` is refused by [`plain_ok`]).
fn plain_start(c: u8) -> bool {
    !(c.is_ascii_digit()
        || c.is_ascii_whitespace()
        || matches!(
            c,
            b'-' | b'.'
                | b'+'
                | b'~'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b','
                | b'!'
                | b'&'
                | b'*'
                | b'|'
                | b'>'
                | b'@'
                | b'`'
                | b'%'
                | b'#'
                | b'\''
                | b'"'
                | b'?'
                | b':'
                | b'='
        ))
}

/// A one-line plain scalar in block context, already trimmed: surely a string.
fn plain_ok(s: &str) -> bool {
    !s.is_empty()
        && plain_start(s.as_bytes()[0])
        && !special_word(s)
        && !s.starts_with("<<")
        && !s.ends_with(':')
        && !s.contains(": ")
        && !s.contains(" #")
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b == b' ')
}

fn is_dash(t: &str) -> bool {
    t == "-" || t.starts_with("- ")
}

struct Parser<'a> {
    lines: Vec<&'a str>,
    i: usize,
}

impl<'a> Parser<'a> {
    /// Skip blank and comment lines; the indentation and text of the next line, if any.
    fn peek(&mut self) -> Option<(usize, &'a str)> {
        while let Some(&line) = self.lines.get(self.i) {
            let t = line.trim_start_matches(' ');
            if t.is_empty() || t.starts_with('#') {
                self.i += 1;
                continue;
            }
            return Some((line.len() - t.len(), t));
        }
        None
    }

    /// A block mapping whose keys are at column `n`.
    fn mapping(&mut self, n: usize) -> Option<Mapping> {
        self.mapping_from(n, None)
    }

    /// A block mapping whose keys are at column `n`; its first entry is `first` when it
    /// starts on a list item's line (the current line).
    fn mapping_from(&mut self, n: usize, first: Option<&'a str>) -> Option<Mapping> {
        let mut m = Mapping::new();
        if let Some(t) = first {
            self.entry(&mut m, n, t)?;
        }
        while let Some((ind, t)) = self.peek() {
            if ind < n {
                break;
            }
            if ind > n {
                return None;
            }
            self.entry(&mut m, n, t)?;
        }
        (!m.is_empty()).then_some(m)
    }

    /// The entry whose key is at column `n` of the current line, `t` from the key on.
    fn entry(&mut self, m: &mut Mapping, n: usize, t: &'a str) -> Option<()> {
        let (key, after) = split_key(t)?;
        self.i += 1;
        let value = self.value(n, after)?;
        let key = Value::String(key.to_owned());
        if m.contains_key(&key) {
            return None;
        }
        m.insert(key, value);
        Some(())
    }

    /// The value of a key at column `n`; `after` is the rest of the key line after `:`.
    fn value(&mut self, n: usize, after: &'a str) -> Option<Value> {
        let v = after.trim_matches(' ');
        let Some(&first) = v.as_bytes().first() else {
            return Some(match self.peek() {
                Some((ind, t)) if ind > n && is_dash(t) => self.sequence(ind, false)?,
                Some((ind, _)) if ind > n => Value::Mapping(self.mapping(ind)?),
                Some((ind, t)) if ind == n && is_dash(t) => self.sequence(n, true)?,
                _ => Value::Null,
            });
        };
        match first {
            b'\'' | b'"' => quoted_alone(v).map(Value::String),
            b'[' => flow_list(v),
            b'|' | b'>' => self.block_scalar(n, v).map(Value::String),
            _ => self.plain(n, v).map(Value::String),
        }
    }

    /// A plain scalar starting with `first` (trimmed) on a key line at column `n`, and
    /// its continuation lines (more indented than `n`), folded.
    fn plain(&mut self, n: usize, first: &str) -> Option<String> {
        if !plain_ok(first) {
            return None;
        }
        let mut out = first.to_owned();
        let mut blank = 0;
        let mut j = self.i;
        while let Some(&line) = self.lines.get(j) {
            let t = line.trim_start_matches(' ');
            if t.is_empty() {
                blank += 1;
                j += 1;
                continue;
            }
            if line.len() - t.len() <= n {
                break;
            }
            let t = t.trim_end_matches(' ');
            if !plain_ok(t) {
                return None;
            }
            if blank == 0 {
                out.push(' ');
            } else {
                for _ in 0..blank {
                    out.push('\n');
                }
            }
            out.push_str(t);
            blank = 0;
            j += 1;
            self.i = j;
        }
        Some(out)
    }

    /// A block list whose `-` are at column `m`; `compact`: at the column of its key
    /// (then a line at `m` that is not an item ends it). Items are one-line scalars or
    /// mappings (`- key: value`, more keys below at the column of the first).
    fn sequence(&mut self, m: usize, compact: bool) -> Option<Value> {
        let mut items = Vec::new();
        while let Some((ind, t)) = self.peek() {
            if ind < m {
                break;
            }
            if ind > m {
                return None;
            }
            if !is_dash(t) {
                if compact {
                    break;
                }
                return None;
            }
            let item = t[1..].trim_start_matches(' ');
            if split_key(item).is_some() {
                // A mapping item: its keys are at the column of the first one.
                let column = ind + (t.len() - item.len());
                items.push(Value::Mapping(self.mapping_from(column, Some(item))?));
                continue;
            }
            let item = item.trim_end_matches(' ');
            let first = *item.as_bytes().first()?;
            self.i += 1;
            items.push(Value::String(match first {
                b'\'' | b'"' => quoted_alone(item)?,
                _ if plain_ok(item) => item.to_owned(),
                _ => return None,
            }));
        }
        Some(Value::Sequence(items))
    }

    /// A block scalar whose header (`|`, `>`, with `-` or `+`) is `header`, for a key at
    /// column `n`: its lines follow.
    fn block_scalar(&mut self, n: usize, header: &str) -> Option<String> {
        let h = header.as_bytes();
        let literal = h[0] == b'|';
        let chomp = match h.get(1) {
            None => b' ',
            Some(&c @ (b'-' | b'+')) if h.len() == 2 => c,
            _ => return None,
        };
        // Leading blank lines, then the first content line sets the indentation.
        let mut j = self.i;
        let mut leading_max = 0;
        while let Some(&line) = self.lines.get(j) {
            if !is_blank(line) {
                break;
            }
            leading_max = leading_max.max(line.len());
            j += 1;
        }
        let c = indent_of(self.lines.get(j)?);
        if c <= n || leading_max > c {
            return None;
        }
        let mut out = String::new();
        for _ in self.i..j {
            out.push('\n');
        }
        let mut first = true;
        let mut blank = 0;
        while let Some(&line) = self.lines.get(j) {
            if is_blank(line) {
                if line.len() > c {
                    return None;
                }
                blank += 1;
                j += 1;
                continue;
            }
            let ind = indent_of(line);
            if ind < c {
                break;
            }
            if !literal && ind > c {
                return None;
            }
            if !first {
                if literal {
                    for _ in 0..=blank {
                        out.push('\n');
                    }
                } else if blank == 0 {
                    out.push(' ');
                } else {
                    for _ in 0..blank {
                        out.push('\n');
                    }
                }
            }
            out.push_str(&line[c..]);
            first = false;
            blank = 0;
            j += 1;
        }
        match chomp {
            b'-' => {}
            b'+' => {
                for _ in 0..=blank {
                    out.push('\n');
                }
            }
            _ => out.push('\n'),
        }
        self.i = j;
        Some(out)
    }
}

/// A key line's key (a plain word) and the text after its `:`.
fn split_key(t: &str) -> Option<(&str, &str)> {
    let b = t.as_bytes();
    if !b
        .first()
        .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_')
    {
        return None;
    }
    let k = b
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'/')))?;
    if b[k] != b':' || !matches!(b.get(k + 1), None | Some(b' ')) || k > 128 {
        return None;
    }
    let key = &t[..k];
    if special_word(key) {
        return None;
    }
    Some((key, &t[k + 1..]))
}

/// A quoted scalar that is all of `v` (trailing spaces allowed).
fn quoted_alone(v: &str) -> Option<String> {
    let (s, rest) = quoted(v)?;
    rest.trim_start_matches(' ').is_empty().then_some(s)
}

/// A single- or double-quoted scalar at the start of `v`, closed on this line: its value
/// and the text after the closing quote.
fn quoted(v: &str) -> Option<(String, &str)> {
    let b = v.as_bytes();
    let mut out = String::new();
    if b[0] == b'\'' {
        let mut start = 1;
        loop {
            let q = start + v[start..].find('\'')?;
            out.push_str(&v[start..q]);
            if b.get(q + 1) == Some(&b'\'') {
                out.push('\'');
                start = q + 2;
            } else {
                return Some((out, &v[q + 1..]));
            }
        }
    }
    let mut start = 1;
    loop {
        let q = start + v[start..].find(['"', '\\'])?;
        out.push_str(&v[start..q]);
        if b[q] == b'"' {
            return Some((out, &v[q + 1..]));
        }
        let e = *b.get(q + 1)?;
        start = q + 2;
        let c = match e {
            b'0' => '\0',
            b'a' => '\u{7}',
            b'b' => '\u{8}',
            b't' => '\t',
            b'n' => '\n',
            b'v' => '\u{B}',
            b'f' => '\u{C}',
            b'r' => '\r',
            b'e' => '\u{1B}',
            b' ' => ' ',
            b'"' => '"',
            b'/' => '/',
            b'\\' => '\\',
            b'N' => '\u{85}',
            b'_' => '\u{A0}',
            b'L' => '\u{2028}',
            b'P' => '\u{2029}',
            b'x' | b'u' | b'U' => {
                let len = match e {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = v.get(start..start + len)?;
                if !hex.bytes().all(|h| h.is_ascii_hexdigit()) {
                    return None;
                }
                start += len;
                char::from_u32(u32::from_str_radix(hex, 16).ok()?)?
            }
            _ => return None,
        };
        out.push(c);
    }
}

/// A flow list on one line (`[a, 'b c', "d"]`, `[]`) of scalar items that are surely
/// strings, nothing after it.
fn flow_list(v: &str) -> Option<Value> {
    let mut items = Vec::new();
    let mut rest = v[1..].trim_start_matches(' ');
    if let Some(r) = rest.strip_prefix(']') {
        return r
            .trim_start_matches(' ')
            .is_empty()
            .then_some(Value::Sequence(items));
    }
    loop {
        let item;
        let first = *rest.as_bytes().first()?;
        if first == b'\'' || first == b'"' {
            let (s, r) = quoted(rest)?;
            item = s;
            rest = r.trim_start_matches(' ');
        } else {
            let end = rest.find([',', ']'])?;
            let s = rest[..end].trim_end_matches(' ');
            if !plain_ok(s) || s.contains(['[', '{', '}', '#', ':', '\'', '"']) {
                return None;
            }
            item = s.to_owned();
            rest = &rest[end..];
        }
        items.push(Value::String(item));
        if let Some(r) = rest.strip_prefix(',') {
            rest = r.trim_start_matches(' ');
            if rest.starts_with(']') {
                return None;
            }
        } else {
            let r = rest.strip_prefix(']')?;
            return r
                .trim_start_matches(' ')
                .is_empty()
                .then_some(Value::Sequence(items));
        }
    }
}
