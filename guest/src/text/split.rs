//! Raw words for the ranker: identifier splitting (kebab, snake, camel and Pascal case, an
//! acronym's plural kept as one word) and Snowball stemming.

use super::*;

/// Split `text` into raw words for the ranker: runs of letters and digits; every other
/// character (space, punctuation, `-`, `_`, `.`, `/`) separates words. Returns the pieces of
/// each compound (`kebab-case`, `snake_case`, `path/like`) grouped so compounds can be joined.
///
/// Each returned group is one whitespace-delimited chunk split into its parts; camelCase and
/// PascalCase parts are split too (`getUserName` -> `get`, `user`, `name`; `HTTPServer` ->
/// `http`, `server`). Everything is lowercased.
pub fn split_identifiers(text: &str) -> Vec<Vec<String>> {
    let mut groups = Vec::new();
    let mut buf = String::new();
    let mut ranges = Vec::new();
    for chunk in text.split_whitespace() {
        split_chunk(chunk, &mut buf, &mut ranges);
        if !ranges.is_empty() {
            groups.push(
                ranges
                    .iter()
                    .map(|r: &(usize, usize)| buf[r.0..r.1].to_string())
                    .collect(),
            );
        }
    }
    groups
}

/// Split one whitespace-free chunk into lowercase parts, written to `buf` (cleared) as
/// `ranges`.
pub(super) fn split_chunk(chunk: &str, buf: &mut String, ranges: &mut Vec<(usize, usize)>) {
    buf.clear();
    ranges.clear();
    if chunk.is_ascii() {
        split_ascii_chunk(chunk, buf, ranges);
        return;
    }
    for piece in chunk.split(|c: char| !c.is_alphanumeric()) {
        if piece.is_empty() {
            continue;
        }
        split_camel(piece, |part| {
            let start = buf.len();
            if part.is_ascii() {
                buf.extend(part.bytes().map(|b| b.to_ascii_lowercase() as char));
            } else {
                buf.push_str(&part.to_lowercase());
            }
            ranges.push((start, buf.len()));
        });
    }
}

/// [`split_chunk`] of an ASCII chunk, byte by byte (on ASCII, `char::is_alphanumeric`,
/// `is_lowercase` and `is_uppercase` are their `is_ascii_*` forms, so the rules are the same).
pub(super) fn split_ascii_chunk(chunk: &str, buf: &mut String, ranges: &mut Vec<(usize, usize)>) {
    let b = chunk.as_bytes();
    let mut push = |from: usize, to: usize| {
        let start = buf.len();
        buf.push_str(&chunk[from..to]);
        buf[start..].make_ascii_lowercase();
        ranges.push((start, buf.len()));
    };
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i + 1;
        while end < b.len() && b[end].is_ascii_alphanumeric() {
            end += 1;
        }
        let mut part = start;
        for pos in start + 1..end {
            let (p, c) = (b[pos - 1], b[pos]);
            let boundary = (p.is_ascii_lowercase() && c.is_ascii_uppercase())
                || (p.is_ascii_uppercase()
                    && c.is_ascii_uppercase()
                    && pos + 1 < end
                    && b[pos + 1].is_ascii_lowercase()
                    && !(pos + 2 == end && b[pos + 1] == b's'));
            if boundary {
                push(part, pos);
                part = pos;
            }
        }
        push(part, ascii_acronym_end(b, part, end));
        i = end;
    }
}

/// Split a run of letters/digits at lower->upper case changes and at the end of an acronym
/// (`XMLHttpRequest` -> `XML`, `Http`, `Request`), calling `part` for each. Digits stay with
/// their neighbours (`k8s`, `fp16`, `s3`).
pub(super) fn split_camel(piece: &str, mut part: impl FnMut(&str)) {
    let mut start = 0;
    let mut prev: Option<char> = None;
    let mut it = piece.char_indices().peekable();
    while let Some((pos, c)) = it.next() {
        if let Some(p) = prev {
            let next = it.peek().map(|x| x.1);
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase()
                    && c.is_uppercase()
                    && next.is_some_and(char::is_lowercase)
                    && &piece[pos + c.len_utf8()..] != "s");
            if boundary {
                part(&piece[start..pos]);
                start = pos;
            }
        }
        prev = Some(c);
    }
    part(acronym_plural(&piece[start..]));
}

/// The last part of a run without the plural `s` of an acronym: `APIs` -> `API`, `LLMs` ->
/// `LLM` (two or more capitals, then `s`); any other part as it is. The capital before that
/// `s` does not start a part of its own either (`LLMs` is not `LL`, `Ms`).
pub(super) fn acronym_plural(part: &str) -> &str {
    match part.strip_suffix('s') {
        Some(acronym)
            if acronym.chars().nth(1).is_some() && acronym.chars().all(char::is_uppercase) =>
        {
            acronym
        }
        _ => part,
    }
}

/// Whether a run of letters and digits ends at byte `k` of `text` (a char boundary).
pub(super) fn run_ends_at(text: &str, k: usize) -> bool {
    !text[k..].chars().next().is_some_and(char::is_alphanumeric)
}

/// [`acronym_plural`] of the ASCII part `b[a..e]`: where it ends.
pub(super) fn ascii_acronym_end(b: &[u8], a: usize, e: usize) -> usize {
    if e - a >= 3 && b[e - 1] == b's' && b[a..e - 1].iter().all(u8::is_ascii_uppercase) {
        e - 1
    } else {
        e
    }
}

/// English Snowball stem of a lowercase word (words with digits, and very short words, are kept
/// as they are).
pub fn stem(word: &str) -> Cow<'_, str> {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    if word.chars().count() <= 3 || word.chars().any(|c| c.is_ascii_digit()) {
        return Cow::Borrowed(word);
    }
    let stemmer = STEMMER.get_or_init(|| Stemmer::create(Algorithm::English));
    stemmer.stem(word)
}
