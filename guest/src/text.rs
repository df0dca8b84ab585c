//! Tokenisation shared by both matchers (spec 5.1): Unicode-aware, EN + FR stop words.
//!
//! Two analysers live here:
//! - [`tokenize`]: the functional spec's tokenizer (section 5.1), used by the `keywords`
//!   algorithm exactly as specified;
//! - [`analyze`]: the ranker's analyser (identifier splitting, compounds, Snowball stemming),
//!   used by [`crate::rank`] on both the catalogue and the query.

use hashbrown::{HashTable, hash_table};
use rust_stemmers::{Algorithm, Stemmer};
use std::borrow::Cow;
use std::collections::HashSet;
use std::hash::Hasher;
use std::sync::OnceLock;

/// English stop words (a classic IR list: articles, pronouns, auxiliaries, prepositions,
/// conjunctions), a superset of the spec's examples and of the original matcher's list.
pub const EN_STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "may",
    "me",
    "might",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "onto",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "also",
];

/// French stop words (articles, pronouns, common prepositions and auxiliaries; elided forms
/// such as `l'` and `qu'` split off by the tokenizer are included as `l`, `qu`, ...).
pub const FR_STOP_WORDS: &[&str] = &[
    "au", "aux", "avec", "ce", "ces", "cet", "cette", "dans", "de", "des", "du", "elle", "elles",
    "en", "et", "eux", "il", "ils", "je", "la", "le", "les", "leur", "leurs", "lui", "ma", "mais",
    "me", "mes", "moi", "mon", "même", "ne", "ni", "nos", "notre", "nous", "on", "ou", "où", "par",
    "pas", "pour", "qu", "que", "qui", "quoi", "sa", "se", "ses", "son", "sur", "ta", "te", "tes",
    "toi", "ton", "tu", "un", "une", "vos", "votre", "vous", "y", "c", "d", "j", "l", "m", "n",
    "s", "t", "à", "est", "sont", "été", "être", "avoir", "ai", "as", "a", "ont", "était", "suis",
    "es", "sommes", "êtes", "dont", "donc", "car", "si", "comme", "plus", "moins", "très", "aussi",
    "tout", "tous", "toute", "toutes",
];

fn stop_words() -> &'static HashSet<&'static str> {
    static SET: OnceLock<HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| EN_STOP_WORDS.iter().chain(FR_STOP_WORDS).copied().collect())
}

/// Whether `word` (lowercase) is an English or French stop word.
pub fn is_stop_word(word: &str) -> bool {
    stop_words().contains(word)
}

/// Spec 5.1: lowercase, drop punctuation but keep hyphens, split on whitespace, drop EN+FR stop
/// words, deduplicate (first occurrence order).
///
/// Details the spec leaves open, decided here:
/// - "punctuation" is any character that is not a Unicode letter or digit, not whitespace, not
///   `-` and not `_` (the original matcher used the regex class `[^\w\s-]`; `_` is a word
///   character there). It is replaced by a space, so `node.js` gives `node` and `js`.
/// - letters are Unicode letters: `é`, `ß`, CJK all survive (`authentification` and `clé` are
///   tokens);
/// - a token made only of hyphens (or `_`) is dropped.
pub fn tokenize(context: &str) -> Vec<String> {
    let lowered = context.to_lowercase();
    let cleaned: String = lowered
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' || c.is_whitespace() {
                c
            } else {
                ' '
            }
        })
        .collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for word in cleaned.split_whitespace() {
        if !word.chars().any(char::is_alphanumeric) || is_stop_word(word) {
            continue;
        }
        if seen.insert(word) {
            out.push(word.to_string());
        }
    }
    out
}

/// Words the ranker ignores on top of [`EN_STOP_WORDS`]/[`FR_STOP_WORDS`]: request filler that
/// says nothing about which skill is wanted ("I need help to ...", "please", "want").
/// General English, not tuned to any query.
pub const RANK_STOP_WORDS_EXTRA: &[&str] = &[
    "please",
    "want",
    "wants",
    "need",
    "needs",
    "help",
    "like",
    "let",
    "lets",
    "get",
    "got",
    "make",
    "me",
    "im",
    "ive",
    "id",
    "dont",
    "doesnt",
    "isnt",
    "cant",
    "wont",
    "etc",
    "eg",
    "ie",
    "via",
    "using",
    "use",
    "one",
    "two",
    "some",
    "any",
    "every",
    "thing",
    "things",
    "something",
    "way",
    "want",
    "trying",
    "try",
    "able",
    "sure",
    "really",
    "kind",
    "bit",
    "lot",
    "lots",
    "going",
    "gonna",
    "wanna",
];

/// French stop words the ranker keeps as words: they are also English or technical terms
/// (`ai`, `car`, `plus`, `es`, `des`, `du`, `c`, `sa`, ...).
pub const RANK_KEEP_WORDS: &[&str] = &[
    "ai", "car", "plus", "es", "des", "du", "c", "sa", "ta", "ma", "te", "se", "ont", "as",
    "moins", "même", "dont", "suis", "sommes", "êtes", "moi", "toi", "lui", "eux",
];

fn rank_stop_words() -> &'static HashSet<&'static str> {
    static SET: OnceLock<HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| {
        stop_words()
            .iter()
            .copied()
            .chain(RANK_STOP_WORDS_EXTRA.iter().copied())
            .filter(|w| !RANK_KEEP_WORDS.contains(w) || EN_STOP_WORDS.contains(w))
            .collect()
    })
}

/// Whether the ranker ignores `word` (lowercase, unstemmed).
pub fn is_rank_stop_word(word: &str) -> bool {
    rank_stop_words().contains(word)
}

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
fn split_chunk(chunk: &str, buf: &mut String, ranges: &mut Vec<(usize, usize)>) {
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
fn split_ascii_chunk(chunk: &str, buf: &mut String, ranges: &mut Vec<(usize, usize)>) {
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
                    && b[pos + 1].is_ascii_lowercase());
            if boundary {
                push(part, pos);
                part = pos;
            }
        }
        push(part, end);
        i = end;
    }
}

/// Split a run of letters/digits at lower->upper case changes and at the end of an acronym
/// (`XMLHttpRequest` -> `XML`, `Http`, `Request`), calling `part` for each. Digits stay with
/// their neighbours (`k8s`, `fp16`, `s3`).
fn split_camel(piece: &str, mut part: impl FnMut(&str)) {
    let mut start = 0;
    let mut prev: Option<char> = None;
    let mut it = piece.char_indices().peekable();
    while let Some((pos, c)) = it.next() {
        if let Some(p) = prev {
            let next = it.peek().map(|x| x.1);
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase));
            if boundary {
                part(&piece[start..pos]);
                start = pos;
            }
        }
        prev = Some(c);
    }
    part(&piece[start..]);
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

/// One term produced by [`analyze`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The stemmed term.
    pub term: String,
    /// The word as written (lowercased), for display.
    pub surface: String,
    /// Position of the word in the text (compound joins share their first part's position).
    pub position: u32,
    /// Whether the term is a join of a compound's parts (`pre-training` -> `pretraining`) or a
    /// phrase abbreviation, rather than a word of the text.
    pub joined: bool,
}

/// A phrase (its stemmed words) and its abbreviation.
type Phrase = (&'static [&'static str], &'static str);

/// Phrases of [`crate::synonyms::PHRASES`] grouped by their last word.
fn phrase_groups() -> &'static [(&'static str, Vec<Phrase>)] {
    static GROUPS: OnceLock<Vec<(&'static str, Vec<Phrase>)>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let mut groups: Vec<(&'static str, Vec<Phrase>)> = Vec::new();
        for (words, abbr) in crate::synonyms::PHRASES {
            if let Some(last) = words.last() {
                match groups.iter_mut().find(|(l, _)| l == last) {
                    Some((_, g)) => g.push((*words, *abbr)),
                    None => groups.push((*last, vec![(*words, *abbr)])),
                }
            }
        }
        groups
    })
}

/// The hash of a string in [`Interner`] tables.
fn hash_str(s: &str) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    h.write(s.as_bytes());
    h.finish()
}

/// Distinct strings numbered in order of first appearance, stored once (one buffer, end
/// offsets, a hash table of ids).
#[derive(Default, Clone)]
pub struct Interner {
    text: String,
    ends: Vec<u32>,
    table: HashTable<u32>,
}

impl std::fmt::Debug for Interner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interner")
            .field("len", &self.len())
            .field("bytes", &self.text.len())
            .finish()
    }
}

/// String `id` of an interner's buffer and end offsets.
#[inline]
fn slice<'a>(text: &'a str, ends: &[u32], id: u32) -> &'a str {
    let i = id as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &text[start..ends[i] as usize]
}

impl Interner {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// String number `id`.
    #[inline]
    pub fn get(&self, id: u32) -> &str {
        slice(&self.text, &self.ends, id)
    }

    /// The number of `s`, if interned.
    pub fn find(&self, s: &str) -> Option<u32> {
        self.table
            .find(hash_str(s), |&id| self.get(id) == s)
            .copied()
    }

    /// The number of `s`, and whether it is new.
    pub fn intern(&mut self, s: &str) -> (u32, bool) {
        let Self { text, ends, table } = self;
        match table.entry(
            hash_str(s),
            |&id| slice(text, ends, id) == s,
            |&id| hash_str(slice(text, ends, id)),
        ) {
            hash_table::Entry::Occupied(e) => (*e.get(), false),
            hash_table::Entry::Vacant(v) => {
                let id = u32::try_from(ends.len()).expect("fewer than 2^32 strings");
                text.push_str(s);
                ends.push(u32::try_from(text.len()).expect("less than 4 GiB of text"));
                v.insert(id);
                (id, true)
            }
        }
    }
}

/// No term (a dropped word) / no phrase group.
const NONE: u32 = u32::MAX;

/// The ranker's analyser: identifier splitting, compounds, abbreviations, stop words, stemming.
///
/// - words are split as in [`split_identifiers`];
/// - a compound of 2 or 3 parts (`fine-tune`, `pre_training`, `DataFrame`) also yields the join
///   of its parts (`finetune`, `pretraining`, `dataframe`), so spelling variants meet;
/// - stop words (EN + FR + request filler, [`is_rank_stop_word`]) and bare numbers are dropped
///   (except inside a join);
/// - an alias of [`crate::synonyms::ALIASES`] is replaced by its canonical word (`k8s` ->
///   `kubernetes`), and a phrase of [`crate::synonyms::PHRASES`] also yields its abbreviation
///   (`pull requests` -> `pr`), marked `joined` like compound joins;
/// - every word is stemmed ([`stem`]).
///
/// Terms are numbered (in order of first appearance, [`Analyzer::term`] gives their text), and
/// the analyser memoises each distinct lowercase word's term number, so analysing a whole
/// catalogue stems each distinct word once and costs one hash lookup per word. Duplicates are
/// kept (term frequencies matter to the ranker).
#[derive(Debug, Default)]
pub struct Analyzer {
    /// Lowercase words seen.
    words: Interner,
    /// Per word: its term (`NONE`: dropped).
    word_term: Vec<u32>,
    /// Terms.
    terms: Interner,
    /// Per term: the index of its group in [`phrase_groups`] (`NONE`: ends no phrase).
    term_phrases: Vec<u32>,
    buf: String,
    ranges: Vec<(usize, usize)>,
    /// The last (at most 4) word terms of the current text.
    recent: Vec<u32>,
    joined: String,
}

impl Analyzer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of distinct terms produced so far.
    pub fn terms_len(&self) -> usize {
        self.terms.len()
    }

    /// The text of term `id`.
    pub fn term(&self, id: u32) -> &str {
        self.terms.get(id)
    }

    /// The number of term `term` (added if new).
    pub fn intern_term(&mut self, term: &str) -> u32 {
        let (id, new) = self.terms.intern(term);
        if new {
            let group = phrase_groups().iter().position(|(last, _)| *last == term);
            self.term_phrases
                .push(group.map_or(NONE, |g| u32::try_from(g).unwrap_or(NONE)));
        }
        id
    }

    fn word_term(&mut self, word: &str) -> u32 {
        if let Some(w) = self.words.find(word) {
            return self.word_term[w as usize];
        }
        let term = if word.bytes().all(|b| b.is_ascii_digit()) || is_rank_stop_word(word) {
            NONE
        } else {
            let canon = crate::synonyms::canonical(word).unwrap_or(word);
            self.intern_term(&stem(canon))
        };
        self.words.intern(word);
        self.word_term.push(term);
        term
    }

    /// Analyse `text`, calling `emit(term, surface, position, joined)` for every term.
    pub fn run(&mut self, text: &str, emit: impl FnMut(u32, &str, u32, bool)) {
        self.run_pieces([text], emit);
    }

    /// [`Analyzer::run`] over the pieces joined by whitespace (without joining them).
    pub fn run_pieces<'a>(
        &mut self,
        pieces: impl IntoIterator<Item = &'a str>,
        mut emit: impl FnMut(u32, &str, u32, bool),
    ) {
        let mut position = 0u32;
        self.recent.clear();
        let mut buf = std::mem::take(&mut self.buf);
        let mut ranges = std::mem::take(&mut self.ranges);
        let mut joined = std::mem::take(&mut self.joined);
        for piece in pieces {
            for_each_chunk(piece, |chunk, classes| {
                let src = if classes & HIGH == 0 {
                    // ASCII: parts are found on the chunk; lowercase it only if needed.
                    ascii_parts(chunk.as_bytes(), classes, &mut ranges);
                    if classes & UPPER == 0 {
                        chunk
                    } else {
                        buf.clear();
                        buf.push_str(chunk);
                        buf.make_ascii_lowercase();
                        buf.as_str()
                    }
                } else {
                    split_chunk(chunk, &mut buf, &mut ranges);
                    buf.as_str()
                };
                self.chunk(src, &ranges, &mut joined, &mut position, &mut emit);
            });
        }
        self.buf = buf;
        self.ranges = ranges;
        self.joined = joined;
    }

    /// The terms of one chunk: its parts (`ranges` of `src`, lowercase), then the join of
    /// its parts when there are 2 or 3.
    fn chunk(
        &mut self,
        src: &str,
        ranges: &[(usize, usize)],
        joined: &mut String,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) {
        if ranges.is_empty() {
            return;
        }
        let first_pos = *position;
        for &(a, b) in ranges {
            let part = &src[a..b];
            let term = self.word_term(part);
            if term != NONE {
                emit(term, part, *position, false);
                let group = self.term_phrases[term as usize];
                if group != NONE {
                    for (words, abbr) in &phrase_groups()[group as usize].1 {
                        let n = words.len() - 1;
                        if self.recent.len() >= n
                            && self.recent[self.recent.len() - n..]
                                .iter()
                                .zip(words.iter())
                                .all(|(&x, y)| self.terms.get(x) == *y)
                        {
                            let id = self.intern_term(abbr);
                            emit(id, abbr, *position, true);
                        }
                    }
                }
                if self.recent.len() >= 4 {
                    self.recent.remove(0);
                }
                self.recent.push(term);
            }
            *position += 1;
        }
        if (2..=3).contains(&ranges.len()) {
            joined.clear();
            for &(a, b) in ranges {
                joined.push_str(&src[a..b]);
            }
            if joined.chars().count() <= 24 {
                let term = self.word_term(joined);
                if term != NONE {
                    emit(term, joined, first_pos, true);
                }
            }
        }
    }
}

/// Byte classes of [`CLASSES`].
const ALNUM: u8 = 1;
const UPPER: u8 = 2;
const LOWER: u8 = 4;
const SPACE: u8 = 8;
/// Not ASCII.
const HIGH: u8 = 16;

/// The class bits of each byte (ASCII letters, digits and whitespace as `char` sees them).
static CLASSES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b >= 0x80 {
            HIGH
        } else if b.is_ascii_uppercase() {
            ALNUM | UPPER
        } else if b.is_ascii_lowercase() {
            ALNUM | LOWER
        } else if b.is_ascii_digit() {
            ALNUM
        } else if matches!(b, 9..=13 | 32) {
            // `char::is_whitespace` on ASCII (vertical tab included)
            SPACE
        } else {
            0
        };
        i += 1;
    }
    t
};

/// `text.split_whitespace()`, calling `f(chunk, classes)` with the union of the chunk's byte
/// classes (its whitespace is found byte by byte; non-ASCII characters are decoded).
fn for_each_chunk<'a>(text: &'a str, mut f: impl FnMut(&'a str, u8)) {
    let b = text.as_bytes();
    let mut i = 0;
    let mut start = 0;
    let mut classes = 0u8;
    let mut in_chunk = false;
    while i < b.len() {
        let c = CLASSES[b[i] as usize];
        let (space, len) = if c & HIGH == 0 {
            (c & SPACE != 0, 1)
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            (ch.is_whitespace(), ch.len_utf8())
        };
        if space {
            if in_chunk {
                f(&text[start..i], classes);
                in_chunk = false;
            }
        } else {
            if !in_chunk {
                in_chunk = true;
                start = i;
                classes = 0;
            }
            classes |= c;
        }
        i += len;
    }
    if in_chunk {
        f(&text[start..], classes);
    }
}

/// The parts of an ASCII chunk (as [`split_chunk`] finds them) as byte ranges of the chunk;
/// `classes` is the union of its byte classes.
fn ascii_parts(b: &[u8], classes: u8, ranges: &mut Vec<(usize, usize)>) {
    ranges.clear();
    let class = |i: usize| CLASSES[b[i] as usize];
    let mut i = 0;
    while i < b.len() {
        if class(i) & ALNUM == 0 {
            i += 1;
            continue;
        }
        let mut part = i;
        let mut end = i + 1;
        if classes & UPPER == 0 {
            while end < b.len() && class(end) & ALNUM != 0 {
                end += 1;
            }
        } else {
            while end < b.len() && class(end) & ALNUM != 0 {
                let (p, c) = (class(end - 1), class(end));
                let boundary = (p & LOWER != 0 && c & UPPER != 0)
                    || (p & UPPER != 0
                        && c & UPPER != 0
                        && end + 1 < b.len()
                        && class(end + 1) & LOWER != 0);
                if boundary {
                    ranges.push((part, end));
                    part = end;
                }
                end += 1;
            }
        }
        ranges.push((part, end));
        i = end;
    }
}

/// [`Analyzer::run`] collected into a list (one-off use).
pub fn analyze(text: &str) -> Vec<Term> {
    let mut analyzer = Analyzer::new();
    let mut out = Vec::new();
    analyzer.run(text, |term, surface, position, joined| {
        out.push((term, surface.to_string(), position, joined));
    });
    out.into_iter()
        .map(|(term, surface, position, joined)| Term {
            term: analyzer.term(term).to_string(),
            surface,
            position,
            joined,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example() {
        assert_eq!(
            tokenize("Create a React component for the authentication"),
            vec!["create", "react", "component", "authentication"]
        );
    }

    #[test]
    fn keeps_hyphens_drops_punctuation_and_dedupes() {
        assert_eq!(
            tokenize("Set-up: React, react; node.js (front-end)!"),
            vec!["set-up", "react", "node", "js", "front-end"]
        );
        assert!(tokenize("-- - !!").is_empty());
    }

    #[test]
    fn french_stop_words_and_accents() {
        assert_eq!(
            tokenize("Créer un composant pour l'authentification de la clé"),
            vec!["créer", "composant", "authentification", "clé"]
        );
    }

    #[test]
    fn unicode_letters_survive() {
        assert_eq!(tokenize("Größe 日本語"), vec!["größe", "日本語"]);
    }

    #[test]
    fn empty_input() {
        assert!(tokenize("").is_empty());
        assert!(tokenize("the a of le la").is_empty());
    }

    #[test]
    fn identifiers_split() {
        assert_eq!(
            split_identifiers("getUserName snake_case kebab-case HTTPServer k8s"),
            vec![
                vec!["get", "user", "name"],
                vec!["snake", "case"],
                vec!["kebab", "case"],
                vec!["http", "server"],
                vec!["k8s"],
            ]
        );
    }

    /// The char-by-char rules the byte paths must follow.
    fn parts_by_chars(chunk: &str) -> Vec<String> {
        let mut out = Vec::new();
        for piece in chunk.split(|c: char| !c.is_alphanumeric()) {
            if !piece.is_empty() {
                split_camel(piece, |p| out.push(p.to_lowercase()));
            }
        }
        out
    }

    #[test]
    fn byte_paths_match_the_char_rules() {
        let texts = [
            "getUserName snake_case kebab-case HTTPServer k8s XMLHttpRequest",
            "ABC aBC AbC abC A1B2c3 fp16 S3Bucket iOS macOS URLs JSONParser x",
            "--a--b__c..d//e (f) [g]{h} 'i' \"j\" 10.5.3 v2.0-beta1 a.b.c.d",
            "tab\there\nnew\rline\x0bvt\x0cff end",
            "café naïve Größe 日本語 ÉCOLE éCole x\u{a0}y x\u{2003}y x\u{3000}y — → ✓",
            "  leading and trailing  ",
            "",
        ];
        for text in texts {
            let mut chunks = Vec::new();
            for_each_chunk(text, |c, _| chunks.push(c));
            let expected: Vec<&str> = text.split_whitespace().collect();
            assert_eq!(chunks, expected, "{text:?}");
            for_each_chunk(text, |chunk, classes| {
                let want = parts_by_chars(chunk);
                if classes & HIGH == 0 {
                    let mut ranges = Vec::new();
                    ascii_parts(chunk.as_bytes(), classes, &mut ranges);
                    let got: Vec<String> = ranges
                        .iter()
                        .map(|&(a, b)| chunk[a..b].to_ascii_lowercase())
                        .collect();
                    assert_eq!(got, want, "{chunk:?}");
                }
                let (mut buf, mut ranges) = (String::new(), Vec::new());
                split_chunk(chunk, &mut buf, &mut ranges);
                let got: Vec<&str> = ranges.iter().map(|&(a, b)| &buf[a..b]).collect();
                assert_eq!(got, want, "{chunk:?}");
            });
        }
    }

    #[test]
    fn stemming() {
        assert_eq!(stem("migrations"), "migrat");
        assert_eq!(stem("migrating"), "migrat");
        assert_eq!(stem("k8s"), "k8s");
        assert_eq!(stem("fp16"), "fp16");
        assert_eq!(stem("css"), "css");
    }

    #[test]
    fn analyze_joins_compounds_and_stems() {
        let terms: Vec<String> = analyze("Pre-training the models")
            .into_iter()
            .map(|t| t.term)
            .collect();
        assert_eq!(terms, vec!["pre", "train", "pretrain", "model"]);
        let t = analyze("I need help with fine-tuning");
        let terms: Vec<&str> = t.iter().map(|t| t.term.as_str()).collect();
        assert_eq!(terms, vec!["fine", "tune", "finetun"]);
        assert!(t[2].joined);
    }

    #[test]
    fn analyze_aliases_phrases_numbers() {
        let terms: Vec<String> = analyze("Deploy to k8s, review 2 pull requests")
            .into_iter()
            .map(|t| t.term)
            .collect();
        assert_eq!(
            terms,
            vec!["deploy", "kubernet", "review", "pull", "request", "pr"]
        );
        let t = analyze("end-to-end");
        let terms: Vec<&str> = t.iter().map(|t| t.term.as_str()).collect();
        assert_eq!(terms, vec!["end", "end", "e2e", "endtoend"]);
    }
}
