//! The Markdown body: its headings (outside fenced code) and bounded prefixes.

use super::*;

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
pub(super) fn heading_text(trimmed: &str) -> Option<&str> {
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
pub(super) fn push_heading(out: &mut String, text: &str, max_bytes: usize) -> bool {
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
pub(super) fn line_end(text: &str, p: usize) -> (usize, usize) {
    match bytes::find(&text[p..], b'\n') {
        Some(i) if i > 0 && text.as_bytes()[p + i - 1] == b'\r' => (p + i - 1, p + i + 1),
        Some(i) => (p + i, p + i + 1),
        None => (text.len(), text.len()),
    }
}

/// The first `#`, `` ` `` or `~` of `b` at or after `from`, 8 bytes at a time.
pub(super) fn find_markup(b: &[u8], from: usize) -> Option<usize> {
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
pub(super) fn headings_reference(body: &str, max_bytes: usize) -> String {
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
