//! Tokenisation shared by both matchers (spec 5.1): Unicode-aware, EN + FR stop words.
//!
//! Two analysers live here:
//! - [`tokenize`]: the functional spec's tokenizer (section 5.1), used by the `keywords`
//!   algorithm exactly as specified;
//! - [`analyze`]: the ranker's analyser (identifier splitting, compounds, Snowball stemming),
//!   used by [`crate::rank`] on both the catalogue and the query.

use hashbrown::{HashTable, hash_table};
use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::{FxHashMap, FxHashSet};
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

fn stop_words() -> &'static FxHashSet<&'static str> {
    static SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
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

fn rank_stop_words() -> &'static FxHashSet<&'static str> {
    static SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
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
fn split_camel(piece: &str, mut part: impl FnMut(&str)) {
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
fn acronym_plural(part: &str) -> &str {
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
fn run_ends_at(text: &str, k: usize) -> bool {
    !text[k..].chars().next().is_some_and(char::is_alphanumeric)
}

/// [`acronym_plural`] of the ASCII part `b[a..e]`: where it ends.
fn ascii_acronym_end(b: &[u8], a: usize, e: usize) -> usize {
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

/// Per last word of a phrase, the index of its group in [`phrase_groups`].
fn phrase_group_index() -> &'static FxHashMap<&'static str, u32> {
    static INDEX: OnceLock<FxHashMap<&'static str, u32>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index = FxHashMap::default();
        for (g, (last, _)) in phrase_groups().iter().enumerate() {
            index.entry(*last).or_insert(g as u32);
        }
        index
    })
}

/// [`crate::synonyms::canonical`] through a hash table (the first entry of an alias wins, as
/// in the table's linear search).
fn canonical(word: &str) -> Option<&'static str> {
    static INDEX: OnceLock<FxHashMap<&'static str, &'static str>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            let mut index = FxHashMap::default();
            for (alias, canon) in crate::synonyms::ALIASES {
                index.entry(*alias).or_insert(*canon);
            }
            index
        })
        .get(word)
        .copied()
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
                let id = u32::try_from(ends.len())
                    .ok()
                    .filter(|&id| id < JOINED)
                    .expect("fewer than 2^31 strings");
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

/// The flag of a join in [`Analyzer::run_pieces_terms`] (term numbers stay below it).
pub const JOINED: u32 = 1 << 31;

/// The hash of a word in [`WordCache`]: [`word_hash_folded`] without folding.
#[inline]
fn word_hash(b: &[u8]) -> u64 {
    word_hash_folded::<false>(b)
}

/// Every byte with `0x20` set when `FOLD` (on ASCII letters and digits, that is lowercasing:
/// digits have the bit already).
#[inline(always)]
const fn fold_mask<const FOLD: bool>() -> u64 {
    if FOLD { 0x2020_2020_2020_2020 } else { 0 }
}

/// The hash of a word: its length, its 8-byte blocks and its last 0 to 8 bytes (read as at
/// most two overlapping 4-byte loads), each folded in with an odd multiply, then a final
/// xor-shift-multiply mix (a bijection, so two words of the same length and first blocks
/// differing in their tail never share a hash). A few instructions for a short word, and no
/// byte-by-byte loop.
///
/// With `FOLD`, every byte is read with `0x20` set: for a word of ASCII letters and digits,
/// the hash of its lowercase form, without making that form.
#[inline(always)]
fn word_hash_folded<const FOLD: bool>(b: &[u8]) -> u64 {
    const K0: u64 = 0x9e37_79b9_7f4a_7c15;
    const K1: u64 = 0xa076_1d64_78bd_642f;
    #[inline(always)]
    fn le32(b: &[u8]) -> u64 {
        u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    let m = fold_mask::<FOLD>();
    let mut h = (b.len() as u64).wrapping_mul(K0);
    let mut rest = b;
    while rest.len() > 8 {
        let (block, tail) = rest.split_at(8);
        h = (h ^ ((le32(block) | le32(&block[4..]) << 32) | m))
            .wrapping_mul(K1)
            .rotate_left(29);
        rest = tail;
    }
    let n = rest.len();
    let v = if n >= 4 {
        (le32(rest) | le32(&rest[n - 4..]) << 32) | m
    } else if n > 0 {
        (u64::from(rest[0]) | u64::from(rest[n / 2]) << 8 | u64::from(rest[n - 1]) << 16)
            | (m & 0x20_2020)
    } else {
        0
    };
    h = (h ^ v).wrapping_mul(K1);
    h ^= h >> 32;
    h = h.wrapping_mul(K0);
    h ^ (h >> 29)
}

/// A slot of [`WordCache`]: a word (a range of its text), the low 32 bits of its hash, its
/// term. `len == EMPTY`: a free slot.
#[derive(Debug, Clone, Copy)]
struct Slot {
    hash: u32,
    start: u32,
    len: u32,
    term: u32,
}

/// [`Slot::len`] of a free slot.
const EMPTY: u32 = u32::MAX;

const FREE: Slot = Slot {
    hash: 0,
    start: 0,
    len: EMPTY,
    term: NONE,
};

/// Lowercase words seen, each with its term (`NONE`: dropped), so that a word seen before
/// costs one hash lookup (no lowercasing, stop word test, alias lookup or stemming again).
///
/// An open-addressing table with linear probing (at most 3/4 full): a slot's home is given
/// by the high half of the word's hash, and a probe compares the stored low half, then the
/// length, before the bytes (one 16-byte slot read per probe, neighbours in the same cache
/// line, no control bytes).
#[derive(Default, Clone)]
struct WordCache {
    /// The words, concatenated.
    text: Vec<u8>,
    /// A power of two of slots (or none).
    slots: Vec<Slot>,
    /// Words held.
    len: usize,
}

impl std::fmt::Debug for WordCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordCache")
            .field("len", &self.len)
            .field("bytes", &self.text.len())
            .finish()
    }
}

impl WordCache {
    /// The home slot of a hash in a table of `mask + 1` slots.
    #[inline(always)]
    fn home(hash: u64, mask: usize) -> usize {
        (hash >> 32) as usize & mask
    }

    /// The term of `word` (whose [`word_hash_folded::<FOLD>`] is `hash`), if seen; with
    /// `FOLD`, `word` (ASCII letters and digits) is compared in lowercase.
    #[inline(always)]
    fn find<const FOLD: bool>(&self, hash: u64, word: &[u8]) -> Option<u32> {
        let slots = &self.slots[..];
        if slots.is_empty() {
            return None;
        }
        let mask = slots.len() - 1;
        let mut i = Self::home(hash, mask);
        loop {
            let s = slots[i];
            if s.hash == hash as u32 && s.len as usize == word.len() {
                let start = s.start as usize;
                if let Some(stored) = self.text.get(start..start + word.len())
                    && same_bytes_folded::<FOLD>(stored, word)
                {
                    return Some(s.term);
                }
            } else if s.len == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Record `word` (lowercase, not seen yet, hash `hash`) and its term.
    fn insert(&mut self, hash: u64, word: &[u8], term: u32) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let start = self.text.len();
        u32::try_from(start + word.len()).expect("less than 4 GiB of words");
        self.text.extend_from_slice(word);
        self.place(
            Slot {
                hash: hash as u32,
                start: start as u32,
                len: word.len() as u32,
                term,
            },
            hash,
        );
        self.len += 1;
    }

    /// Put `slot` (of hash `hash`) in the first free slot from its home.
    fn place(&mut self, slot: Slot, hash: u64) {
        let mask = self.slots.len() - 1;
        let mut i = Self::home(hash, mask);
        while self.slots[i].len != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    /// Twice the slots (at least 64), every word placed again (its hash made again from
    /// its text).
    #[cold]
    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(64);
        let old = std::mem::replace(&mut self.slots, vec![FREE; n]);
        for s in old {
            if s.len != EMPTY {
                let hash = word_hash(&self.text[s.start as usize..(s.start + s.len) as usize]);
                self.place(s, hash);
            }
        }
    }
}

/// The last (at most 4) word terms of the current text, oldest first.
#[derive(Debug, Default, Clone, Copy)]
struct Recent {
    terms: [u32; 4],
    len: usize,
}

impl Recent {
    fn clear(&mut self) {
        self.len = 0;
    }

    #[inline]
    fn push(&mut self, term: u32) {
        if self.len == self.terms.len() {
            self.terms.copy_within(1.., 0);
            self.terms[self.len - 1] = term;
        } else {
            self.terms[self.len] = term;
            self.len += 1;
        }
    }

    fn as_slice(&self) -> &[u32] {
        &self.terms[..self.len]
    }
}

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
///
/// The text is read in one pass over its bytes: ASCII chunks (the usual case) are split with a
/// byte-class table as the bytes go by and looked up in place (lowercased first only when they
/// hold capitals); a chunk holding a non-ASCII character other than whitespace is split
/// character by character ([`split_chunk`]).
#[derive(Debug, Default)]
pub struct Analyzer {
    /// Lowercase words seen, and their terms.
    words: WordCache,
    /// Terms.
    terms: Interner,
    /// Per term: the index of its group in [`phrase_groups`] (`NONE`: ends no phrase).
    term_phrases: Vec<u32>,
    /// Scratch: a lowercased part, the lowercased parts of non-ASCII runs of the current
    /// chunk, a join.
    buf: String,
    ubuf: String,
    joined: String,
    recent: Recent,
}

/// The chunk being read (see [`Analyzer::piece`]).
#[derive(Debug, Clone, Copy)]
struct Chunk {
    /// Position of its first part.
    first_pos: u32,
    /// Number of parts so far.
    parts: usize,
    /// Its first parts (for the join): a range of the text (ASCII, not lowercased yet), or
    /// of `Analyzer::ubuf` (flag set).
    first: [(usize, usize, bool); 3],
    /// Characters in its first parts.
    chars: usize,
}

impl Chunk {
    fn at(position: u32) -> Self {
        Self {
            first_pos: position,
            parts: 0,
            first: [(0, 0, false); 3],
            chars: 0,
        }
    }
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
            let group = phrase_group_index().get(term).copied();
            self.term_phrases.push(group.unwrap_or(NONE));
        }
        id
    }

    /// The term of a lowercase word (`NONE`: dropped).
    #[inline(always)]
    fn word_term(&mut self, word: &str) -> u32 {
        let hash = word_hash(word.as_bytes());
        match self.words.find::<false>(hash, word.as_bytes()) {
            Some(term) => term,
            None => self.new_word(hash, word),
        }
    }

    /// [`Analyzer::word_term`] of the lowercase form of `word`, made of ASCII letters and
    /// digits (in any case): looked up without lowercasing it first.
    #[inline(always)]
    fn ascii_word_term(&mut self, word: &str) -> u32 {
        let hash = word_hash_folded::<true>(word.as_bytes());
        match self.words.find::<true>(hash, word.as_bytes()) {
            Some(term) => term,
            None => self.new_ascii_word(hash, word),
        }
    }

    /// [`Analyzer::new_word`] of the lowercase form of `word` (ASCII letters and digits).
    #[inline(never)]
    fn new_ascii_word(&mut self, hash: u64, word: &str) -> u32 {
        let mut lower = std::mem::take(&mut self.buf);
        lower.clear();
        lower.push_str(word);
        lower.make_ascii_lowercase();
        let term = self.new_word(hash, &lower);
        self.buf = lower;
        term
    }

    /// [`Analyzer::word_term`] of a word not seen yet.
    #[inline(never)]
    fn new_word(&mut self, hash: u64, word: &str) -> u32 {
        let term = if word.bytes().all(|b| b.is_ascii_digit()) || is_rank_stop_word(word) {
            NONE
        } else {
            let canon = canonical(word).unwrap_or(word);
            self.intern_term(&stem(canon))
        };
        self.words.insert(hash, word.as_bytes(), term);
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
        emit: impl FnMut(u32, &str, u32, bool),
    ) {
        self.run_inner::<true>(pieces, emit);
    }

    /// [`Analyzer::run_pieces`] for callers that only want the terms: every term appended
    /// to `out`, with [`JOINED`] set when it is a join (the same terms in the same order).
    pub fn run_pieces_terms<'a>(
        &mut self,
        pieces: impl IntoIterator<Item = &'a str>,
        out: &mut Vec<u32>,
    ) {
        self.run_inner::<false>(pieces, |term, _, _, joined| {
            out.push(term | if joined { JOINED } else { 0 });
        });
    }

    /// [`Analyzer::run_pieces`]; without `SURFACE`, the surface given to `emit` for a part
    /// of ASCII letters and digits is the part as written (not lowercased).
    #[inline(always)]
    fn run_inner<'a, const SURFACE: bool>(
        &mut self,
        pieces: impl IntoIterator<Item = &'a str>,
        mut emit: impl FnMut(u32, &str, u32, bool),
    ) {
        let mut position = 0u32;
        self.recent.clear();
        for piece in pieces {
            self.piece::<SURFACE>(piece, &mut position, &mut emit);
        }
    }

    /// The terms of one piece, in one pass over its bytes.
    ///
    /// The text is a sequence of whitespace-delimited chunks (as `split_whitespace` finds
    /// them), each a sequence of runs of letters and digits (`char::is_alphanumeric`)
    /// separated by other characters, each run split into parts at case changes
    /// ([`split_camel`]). A part is emitted as soon as it ends: runs are independent, and a
    /// case change found on ASCII characters is one by the Unicode rules too, so that only
    /// the part being read when a non-ASCII letter or digit turns up is read again
    /// character by character ([`Analyzer::unicode_run`]). The join of a chunk's parts is
    /// emitted at its end.
    fn piece<const SURFACE: bool>(
        &mut self,
        text: &str,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) {
        let b = text.as_bytes();
        let n = b.len();
        let mut chunk = Chunk::at(*position);
        let mut i = 0;
        while i < n {
            let c = CLASSES[b[i] as usize];
            if c & ALNUM != 0 {
                i = self.ascii_run::<SURFACE>(text, i, &mut chunk, position, emit);
            } else if c & HIGH == 0 {
                if c & SPACE != 0 {
                    self.end_chunk(text, &mut chunk, position, emit);
                }
                i += 1;
            } else {
                let ch = text[i..].chars().next().unwrap_or(' ');
                if ch.is_whitespace() {
                    self.end_chunk(text, &mut chunk, position, emit);
                    i += ch.len_utf8();
                } else if ch.is_alphanumeric() {
                    i = self.unicode_run(text, i, &mut chunk, position, emit);
                } else {
                    i += ch.len_utf8();
                }
            }
        }
        self.end_chunk(text, &mut chunk, position, emit);
    }

    /// The parts of the run of ASCII letters and digits at `text[i]`; returns where the run
    /// ends. When it goes on with a non-ASCII letter or digit, the part being read and the
    /// rest of the run are read by [`Analyzer::unicode_run`].
    #[inline(always)]
    fn ascii_run<const SURFACE: bool>(
        &mut self,
        text: &str,
        i: usize,
        chunk: &mut Chunk,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) -> usize {
        let b = text.as_bytes();
        let n = b.len();
        let class = |i: usize| CLASSES[b[i] as usize];
        let mut part = i;
        let mut upper = class(i) & UPPER != 0;
        let mut j = i + 1;
        loop {
            j = lower_run_end(b, j);
            if j >= n {
                break;
            }
            let c = class(j);
            if c & UPPER != 0 {
                // lower -> upper, or the last capital of an acronym before a lowercase
                // letter (`XMLHttp` -> `XML`, `Http`)
                let p = class(j - 1);
                if p & LOWER != 0
                    || (p & UPPER != 0
                        && j + 1 < n
                        && class(j + 1) & LOWER != 0
                        && !(b[j + 1] == b's' && run_ends_at(text, j + 2)))
                {
                    self.ascii_part::<SURFACE>(text, part, j, upper, chunk, position, emit);
                    part = j;
                }
                upper = true;
                j += 1;
            } else {
                if c & HIGH != 0 && text[j..].chars().next().is_some_and(char::is_alphanumeric) {
                    return self.unicode_run(text, part, chunk, position, emit);
                }
                break;
            }
        }
        let end = ascii_acronym_end(b, part, j);
        self.ascii_part::<SURFACE>(text, part, end, upper, chunk, position, emit);
        j
    }

    /// The parts of the run of letters and digits (Unicode) starting at `text[i]` (a part
    /// boundary), split by [`split_camel`]; returns where the run ends.
    #[inline(never)]
    fn unicode_run(
        &mut self,
        text: &str,
        i: usize,
        chunk: &mut Chunk,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) -> usize {
        let end = text[i..]
            .char_indices()
            .find(|(_, c)| !c.is_alphanumeric())
            .map_or(text.len(), |(k, _)| i + k);
        // Lowercase parts go to `ubuf`, where they stay until the chunk's join is made.
        let mut ubuf = std::mem::take(&mut self.ubuf);
        split_camel(&text[i..end], |part| {
            let start = ubuf.len();
            if part.is_ascii() {
                ubuf.push_str(part);
                ubuf[start..].make_ascii_lowercase();
            } else {
                ubuf.push_str(&part.to_lowercase());
            }
            let word = &ubuf[start..];
            let chars = word.chars().count();
            let term = self.word_term(word);
            self.part(
                term,
                word,
                chunk,
                (start, ubuf.len(), true),
                chars,
                position,
                emit,
            );
        });
        self.ubuf = ubuf;
        end
    }

    /// Part `text[a..b]` of a run of ASCII letters and digits (`upper`: it holds capitals).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn ascii_part<const SURFACE: bool>(
        &mut self,
        text: &str,
        a: usize,
        b: usize,
        upper: bool,
        chunk: &mut Chunk,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) {
        if SURFACE && upper {
            let mut lower = std::mem::take(&mut self.buf);
            lower.clear();
            lower.push_str(&text[a..b]);
            lower.make_ascii_lowercase();
            let term = self.word_term(&lower);
            self.part(term, &lower, chunk, (a, b, false), b - a, position, emit);
            self.buf = lower;
        } else {
            // the part as written: lowercase already, or looked up folded (no surface wanted)
            let word = &text[a..b];
            let term = self.ascii_word_term(word);
            self.part(term, word, chunk, (a, b, false), b - a, position, emit);
        }
    }

    /// One part of the current chunk: `word` (`chars` characters; lowercase unless the
    /// caller wants no surface), whose term is `term`, found at `at` (a range of the text, or
    /// of `ubuf` when its flag is set).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn part(
        &mut self,
        term: u32,
        word: &str,
        chunk: &mut Chunk,
        at: (usize, usize, bool),
        chars: usize,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) {
        if term != NONE {
            emit(term, word, *position, false);
            let group = self.term_phrases[term as usize];
            if group != NONE {
                self.phrases(group, *position, emit);
            }
            self.recent.push(term);
        }
        *position += 1;
        if chunk.parts < chunk.first.len() {
            chunk.first[chunk.parts] = at;
            chunk.chars += chars;
        }
        chunk.parts += 1;
    }

    /// The end of a chunk: the join of its parts when there are 2 or 3 (of at most 24
    /// characters); then a new chunk starts.
    #[inline(always)]
    fn end_chunk(
        &mut self,
        text: &str,
        chunk: &mut Chunk,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) {
        if chunk.parts == 0 {
            return;
        }
        if chunk.parts >= 2 {
            self.join(text, chunk, emit);
        }
        if !self.ubuf.is_empty() {
            self.ubuf.clear();
        }
        // (`first` is only read up to `parts`)
        chunk.parts = 0;
        chunk.chars = 0;
        chunk.first_pos = *position;
    }

    /// The join of the parts of `chunk` when there are 2 or 3, of at most 24 characters.
    #[inline(never)]
    fn join(&mut self, text: &str, chunk: &Chunk, emit: &mut impl FnMut(u32, &str, u32, bool)) {
        if chunk.parts > 3 || chunk.chars > 24 {
            return;
        }
        let mut joined = std::mem::take(&mut self.joined);
        joined.clear();
        for &(a, b, in_ubuf) in &chunk.first[..chunk.parts] {
            if in_ubuf {
                joined.push_str(&self.ubuf[a..b]);
            } else {
                let start = joined.len();
                joined.push_str(&text[a..b]);
                joined[start..].make_ascii_lowercase();
            }
        }
        let term = self.word_term(&joined);
        if term != NONE {
            emit(term, &joined, chunk.first_pos, true);
        }
        self.joined = joined;
    }

    /// The abbreviations of the phrases of group `group` that the recent terms end (the
    /// group's last word is the term just emitted at `position`).
    fn phrases(&mut self, group: u32, position: u32, emit: &mut impl FnMut(u32, &str, u32, bool)) {
        let recent = self.recent;
        let recent = recent.as_slice();
        for (words, abbr) in &phrase_groups()[group as usize].1 {
            let n = words.len() - 1;
            if recent.len() >= n
                && recent[recent.len() - n..]
                    .iter()
                    .zip(words.iter())
                    .all(|(&x, y)| self.terms.get(x) == *y)
            {
                let id = self.intern_term(abbr);
                emit(id, abbr, position, true);
            }
        }
    }
}

/// Whether `a` and `b` (of the same length) are equal: [`same_bytes_folded`] without folding.
#[cfg(test)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    same_bytes_folded::<false>(a, b)
}

/// Whether `a` and `b` (of the same length) are equal, every byte of `b` read with `0x20` set
/// when `FOLD` ([`fold_mask`]): words of at most 16 bytes are compared with at most four
/// overlapping loads instead of a call to `memcmp`.
#[inline(always)]
fn same_bytes_folded<const FOLD: bool>(a: &[u8], b: &[u8]) -> bool {
    #[inline(always)]
    fn le64(b: &[u8]) -> u64 {
        u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
    #[inline(always)]
    fn le32(b: &[u8]) -> u32 {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    let m = fold_mask::<FOLD>();
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        if n > 16 {
            if !FOLD {
                return a == b;
            }
            let mut k = 0;
            while k + 8 < n {
                if le64(&a[k..]) != le64(&b[k..]) | m {
                    return false;
                }
                k += 8;
            }
        }
        le64(a) == le64(b) | m && le64(&a[n - 8..]) == le64(&b[n - 8..]) | m
    } else if n >= 4 {
        let m = m as u32;
        le32(a) == le32(b) | m && le32(&a[n - 4..]) == le32(&b[n - 4..]) | m
    } else {
        let m = m as u8;
        n == 0 || (a[0] == b[0] | m && a[n / 2] == b[n / 2] | m && a[n - 1] == b[n - 1] | m)
    }
}

/// The end of the stretch of ASCII lowercase letters and digits of `b` at `j`: the first
/// index at or after `j` holding another byte (or `b.len()`). Eight bytes at a time (SWAR),
/// then byte by byte near the end of `b`.
#[inline(always)]
fn lower_run_end(b: &[u8], mut j: usize) -> usize {
    const L: u64 = 0x0101_0101_0101_0101;
    const H: u64 = 0x8080_8080_8080_8080;
    while let Some(block) = b[j..].first_chunk::<8>() {
        let x = u64::from_le_bytes(*block);
        // Per byte (high bit cleared, so that no sum carries into the next byte): whether
        // it is at least `a` and not past `z`, or at least `0` and not past `9`.
        let y = x & !H;
        let lower = y.wrapping_add(L * (0x80 - 0x61)) & !y.wrapping_add(L * (0x80 - 0x7b));
        let digit = y.wrapping_add(L * (0x80 - 0x30)) & !y.wrapping_add(L * (0x80 - 0x3a));
        let other = !((lower | digit) & !x) & H;
        if other != 0 {
            return j + (other.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while j < b.len() && CLASSES[b[j] as usize] & (LOWER | DIGIT) != 0 {
        j += 1;
    }
    j
}

/// Byte classes of [`CLASSES`].
const ALNUM: u8 = 1;
const UPPER: u8 = 2;
const LOWER: u8 = 4;
const SPACE: u8 = 8;
/// Not ASCII.
const HIGH: u8 = 16;
const DIGIT: u8 = 32;

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
            ALNUM | DIGIT
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

    #[test]
    fn acronym_plurals_keep_the_acronym() {
        let parts = |chunk: &str| {
            let (mut buf, mut ranges) = (String::new(), Vec::new());
            split_chunk(chunk, &mut buf, &mut ranges);
            let got: Vec<String> = ranges.iter().map(|&(a, b)| buf[a..b].to_string()).collect();
            assert_eq!(got, parts_by_chars(chunk), "{chunk:?}");
            got
        };
        assert_eq!(parts("LLMs"), ["llm"]);
        assert_eq!(parts("APIs"), ["api"]);
        assert_eq!(parts("PRs"), ["pr"]);
        assert_eq!(parts("myAPIs"), ["my", "api"]);
        assert_eq!(parts("ÉTATs"), ["état"]);
        // not a plural acronym: one capital, a digit, or the `s` is not last in the run
        assert_eq!(parts("Is"), ["is"]);
        assert_eq!(parts("K8s"), ["k8s"]);
        assert_eq!(parts("LLMsUsed"), ["ll", "ms", "used"]);
        assert_eq!(parts("XMLHttp"), ["xml", "http"]);
        let mut analyzer = Analyzer::new();
        let terms: Vec<String> = analysed(&mut analyzer, &["Review open PRs with LLMs"])
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert!(terms.contains(&"pr".to_string()), "{terms:?}");
        assert!(terms.contains(&"llm".to_string()), "{terms:?}");
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

    /// Texts with the shapes the analyser must get right.
    const TRICKY: &[&str] = &[
        "getUserName snake_case kebab-case HTTPServer k8s XMLHttpRequest",
        "LLMs APIs PRs IDs myAPIs GPUsX HTTPs Is ABs K8s ÉTATs APIsé XMLs2 LLMsUsed",
        "ABC aBC AbC abC A1B2c3 fp16 S3Bucket iOS macOS URLs JSONParser x",
        "--a--b__c..d//e (f) [g]{h} 'i' \"j\" 10.5.3 v2.0-beta1 a.b.c.d",
        "tab\there\nnew\rline\x0bvt\x0cff end",
        "café naïve Größe 日本語 ÉCOLE éCole x\u{a0}y x\u{2003}y x\u{3000}y — → ✓",
        "a\u{85}b\u{2028}c\u{1680}d \u{a0}\u{a0} Café-Bar caféBar ǅemal İstanbul ﬁle",
        "  leading and trailing  ",
        "",
        " ",
        "Pull Requests, pull-request, the pull of requests; machine learning end-to-end",
        "large language models: LLM, a large-language-model, natural language processing",
        "abcdefghijkl-mnopqrstuvwx abcdefghijkl-mnopqrstuvwxy ABCDEFGHIJKL-MNOPQRSTUVWX",
        "ééééééééééé-éééééééééééé ééééééééééé-éééééééééééé-é",
        "2024 10 007 v1 1v 2fa K8S Postgres postgres POSTGRES psql",
        "supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis",
        "the The THE and of le la les I'm l'authentification qu'il",
        "a-b-c-d a_b_c a/b x.y.z.w -_-_- ___ ... 1-2-3",
        // a non-ASCII letter or digit within or after an ASCII run (it is read again)
        "ABé xABé getUserNaméX ABCé fooé é éAB aé-b e\u{301}x ABǅ aǅb AǄb ABⓐ ABⅫc x² ABC²",
        "aBC²d ١٢٣ ab١٢ foo—bar ABC—def HTTPé—x café's naïveTéST ÀB ǅ Ǆ ǆ İ ß ẞ",
        "XMLHttpRéquest-ÉTÉ-été über_Größe ÀÉÎ-ÕÜ-y",
    ];

    /// The analyser's rules written plainly (character by character, no memoisation): for
    /// each whitespace chunk of each piece, its parts, then its join.
    fn reference(pieces: &[&str]) -> Vec<(String, String, u32, bool)> {
        fn term(w: &str) -> Option<String> {
            if w.bytes().all(|b| b.is_ascii_digit()) || is_rank_stop_word(w) {
                None
            } else {
                Some(stem(crate::synonyms::canonical(w).unwrap_or(w)).into_owned())
            }
        }
        let mut out = Vec::new();
        let mut position = 0;
        let mut recent: Vec<String> = Vec::new();
        for chunk in pieces.iter().flat_map(|p| p.split_whitespace()) {
            let parts = parts_by_chars(chunk);
            let first = position;
            for part in &parts {
                if let Some(t) = term(part) {
                    out.push((t.clone(), part.clone(), position, false));
                    for (words, abbr) in crate::synonyms::PHRASES {
                        let n = words.len() - 1;
                        if words[n] == t
                            && recent.len() >= n
                            && recent[recent.len() - n..] == words[..n]
                        {
                            out.push((abbr.to_string(), abbr.to_string(), position, true));
                        }
                    }
                    if recent.len() >= 4 {
                        recent.remove(0);
                    }
                    recent.push(t);
                }
                position += 1;
            }
            if (2..=3).contains(&parts.len()) {
                let joined = parts.concat();
                if joined.chars().count() <= 24
                    && let Some(t) = term(&joined)
                {
                    out.push((t, joined, first, true));
                }
            }
        }
        out
    }

    /// The analyser's output on `pieces` (term texts), checking on the way that terms are
    /// numbered in order of first appearance.
    fn analysed(analyzer: &mut Analyzer, pieces: &[&str]) -> Vec<(String, String, u32, bool)> {
        let mut out = Vec::new();
        let mut ids = Vec::new();
        analyzer.run_pieces(pieces.iter().copied(), |term, surface, position, joined| {
            ids.push(term);
            out.push((String::new(), surface.to_string(), position, joined));
        });
        for (o, &id) in out.iter_mut().zip(&ids) {
            o.0 = analyzer.term(id).to_string();
        }
        out
    }

    /// A deterministic jumble of letters, digits, separators, non-ASCII letters and Unicode
    /// whitespace, and of words from the phrase and alias tables.
    fn jumble(seed: u64, len: usize) -> String {
        const BITS: &[&str] = &[
            "a",
            "s",
            "AB",
            "b",
            "z",
            "Q",
            "X",
            "e",
            "1",
            "9",
            "0",
            "-",
            "_",
            " ",
            " ",
            " ",
            "\t",
            "\n",
            ".",
            "/",
            "é",
            "É",
            "ß",
            "日",
            "\u{a0}",
            "\u{2003}",
            "ǅ",
            "İ",
            "ﬁ",
            "pull",
            "request",
            "Requests",
            "end",
            "machine",
            "learning",
            "k8s",
            "the",
            "Postgres",
            "XMLHttp",
            "2024",
            "language",
            "model",
            "large",
            "tHe",
            "DataFrame",
            "ÉCOLE",
            "—",
            "²",
            "Ⅻ",
            "\u{301}",
            "ⓐ",
            "١",
        ];
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut s = String::new();
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s.push_str(BITS[(x % BITS.len() as u64) as usize]);
        }
        s
    }

    #[test]
    fn split_chunk_matches_the_char_rules() {
        for text in TRICKY {
            for chunk in text.split_whitespace() {
                let (mut buf, mut ranges) = (String::new(), Vec::new());
                split_chunk(chunk, &mut buf, &mut ranges);
                let got: Vec<&str> = ranges.iter().map(|&(a, b)| &buf[a..b]).collect();
                assert_eq!(got, parts_by_chars(chunk), "{chunk:?}");
            }
        }
    }

    #[test]
    fn analyzer_matches_the_reference() {
        // one analyser throughout, so that words come back from its cache
        let mut analyzer = Analyzer::new();
        for _ in 0..2 {
            for text in TRICKY {
                assert_eq!(
                    analysed(&mut analyzer, &[text]),
                    reference(&[text]),
                    "{text:?}"
                );
            }
            for seed in 0..3000 {
                let text = jumble(seed, 1 + seed as usize % 60);
                assert_eq!(
                    analysed(&mut analyzer, &[&text]),
                    reference(&[&text]),
                    "{text:?}"
                );
            }
        }
        // pieces: analysed as if joined by whitespace (positions and phrases run on)
        let pieces = ["Pull", "requests", "", "getUser-Name", "  end", "to-end x"];
        assert_eq!(analysed(&mut analyzer, &pieces), reference(&pieces));
        assert_eq!(
            analysed(&mut analyzer, &pieces),
            analysed(&mut analyzer, &[&pieces.join(" ")])
        );
        let pieces = [jumble(7, 40), jumble(8, 3), String::new(), jumble(9, 50)];
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(analysed(&mut analyzer, &pieces), reference(&pieces));
    }

    #[test]
    fn terms_are_numbered_in_order_of_first_appearance() {
        let mut analyzer = Analyzer::new();
        let mut ids = Vec::new();
        analyzer.run(
            "Deploy to k8s: deploy, DEPLOY, pull requests and pull-requests",
            |term, _, _, _| ids.push(term),
        );
        let mut next = 0;
        for &id in &ids {
            assert!(id <= next, "{ids:?}");
            if id == next {
                next += 1;
            }
        }
        assert_eq!(next as usize, analyzer.terms_len());
        let texts: Vec<&str> = (0..next).map(|t| analyzer.term(t)).collect();
        assert_eq!(
            texts,
            vec!["deploy", "kubernet", "pull", "request", "pr", "pullrequest"]
        );
    }

    #[test]
    fn word_cache_edge_cases() {
        let long = "x".repeat(1000);
        let mut longer = long.clone();
        longer.push('y');
        let words: Vec<&[u8]> = vec![
            b"",
            b"a",
            b"ab",
            b"abc",
            b"abcd",
            b"abcde",
            b"abcdefg",
            b"abcdefgh",
            b"abcdefghi",
            b"abcdefghijklmnop",
            b"abcdefghijklmnopq",
            b"abcdefghijklmnoq",
            "café".as_bytes(),
            "日本語".as_bytes(),
            long.as_bytes(),
            longer.as_bytes(),
        ];
        let mut cache = WordCache::default();
        for (i, w) in words.iter().enumerate() {
            assert_eq!(cache.find::<false>(word_hash(w), w), None, "{w:?}");
            cache.insert(word_hash(w), w, i as u32);
        }
        for (i, w) in words.iter().enumerate() {
            assert_eq!(
                cache.find::<false>(word_hash(w), w),
                Some(i as u32),
                "{w:?}"
            );
        }
        assert_eq!(
            cache.find::<false>(word_hash(b"abcdefghz"), b"abcdefghz"),
            None
        );
        // many words: the table grows (rehashing with `word_hash`) and finds them all
        let many: Vec<String> = (0..20_000).map(|i| format!("w{i}")).collect();
        for (i, w) in many.iter().enumerate() {
            cache.insert(word_hash(w.as_bytes()), w.as_bytes(), 100 + i as u32);
        }
        for (i, w) in many.iter().enumerate() {
            assert_eq!(
                cache.find::<false>(word_hash(w.as_bytes()), w.as_bytes()),
                Some(100 + i as u32)
            );
        }
        assert_eq!(cache.find::<false>(word_hash(b"ab"), b"ab"), Some(2));
    }

    /// A deterministic word of ASCII letters (both cases) and digits, of `len` bytes.
    fn ascii_word(x: &mut u64, len: usize) -> Vec<u8> {
        const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        (0..len)
            .map(|_| {
                *x ^= *x << 13;
                *x ^= *x >> 7;
                *x ^= *x << 17;
                // mostly lowercase, as in real text
                let k = (*x >> 11) as usize;
                if k.is_multiple_of(4) {
                    ALNUM[k / 4 % ALNUM.len()]
                } else {
                    ALNUM[k / 4 % 26]
                }
            })
            .collect()
    }

    #[test]
    fn folded_hash_and_compare_are_those_of_the_lowercase_word() {
        let mut x = 11u64;
        for i in 0..60_000 {
            let w = ascii_word(&mut x, i % 41);
            let lower = w.to_ascii_lowercase();
            assert_eq!(word_hash_folded::<true>(&w), word_hash(&lower), "{w:?}");
            assert!(same_bytes_folded::<true>(&lower, &w), "{w:?}");
            assert!(same_bytes_folded::<false>(&lower, &lower));
            // any other stored word of that length differs
            let other = ascii_word(&mut x, w.len()).to_ascii_lowercase();
            assert_eq!(same_bytes_folded::<true>(&other, &w), other == lower);
            for k in 0..w.len() {
                let mut v = lower.clone();
                v[k] = if v[k] == b'z' { b'0' } else { v[k] + 1 };
                assert!(!same_bytes_folded::<true>(&v, &w), "{w:?} at {k}");
            }
        }
        // the reference rule on arbitrary bytes: equal to `b` with `0x20` set in every byte
        for i in 0..20_000u64 {
            let mut y = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let n = (i % 37) as usize;
            let b: Vec<u8> = (0..n)
                .map(|_| {
                    y ^= y << 13;
                    y ^= y >> 7;
                    y ^= y << 17;
                    y as u8
                })
                .collect();
            let mut a: Vec<u8> = b.iter().map(|c| c | 0x20).collect();
            assert!(same_bytes_folded::<true>(&a, &b));
            if n > 0 {
                let k = (y >> 20) as usize % n;
                a[k] ^= 1 << ((y >> 40) % 8);
                assert_eq!(
                    same_bytes_folded::<true>(&a, &b),
                    a.iter().zip(&b).all(|(p, q)| *p == q | 0x20)
                );
            }
        }
    }

    #[test]
    fn folded_lookup_finds_lowercase_words() {
        let mut cache = WordCache::default();
        let mut x = 3u64;
        let words: Vec<Vec<u8>> = (0..5000).map(|i| ascii_word(&mut x, 1 + i % 30)).collect();
        for (i, w) in words.iter().enumerate() {
            let lower = w.to_ascii_lowercase();
            if cache.find::<false>(word_hash(&lower), &lower).is_none() {
                cache.insert(word_hash(&lower), &lower, i as u32);
            }
        }
        for w in &words {
            let lower = w.to_ascii_lowercase();
            let want = cache.find::<false>(word_hash(&lower), &lower);
            assert!(want.is_some());
            assert_eq!(cache.find::<true>(word_hash_folded::<true>(w), w), want);
        }
        for _ in 0..5000 {
            let w = ascii_word(&mut x, 12);
            let lower = w.to_ascii_lowercase();
            assert_eq!(
                cache.find::<true>(word_hash_folded::<true>(&w), &w),
                cache.find::<false>(word_hash(&lower), &lower)
            );
        }
    }

    #[test]
    fn terms_only_run_gives_the_same_terms() {
        let mut a = Analyzer::new();
        let mut b = Analyzer::new();
        let mut texts: Vec<String> = TRICKY.iter().map(|t| t.to_string()).collect();
        texts.extend((0..3000).map(|seed| jumble(seed, 1 + seed as usize % 60)));
        for _ in 0..2 {
            for t in &texts {
                let mut full = Vec::new();
                a.run_pieces([t.as_str(), "x Y", t.as_str()], |term, _, _, joined| {
                    full.push((term, joined))
                });
                let mut terms = vec![7];
                b.run_pieces_terms([t.as_str(), "x Y", t.as_str()], &mut terms);
                assert_eq!(terms[0], 7, "appended");
                let full: Vec<(String, bool)> = full
                    .into_iter()
                    .map(|(t, j)| (a.term(t).to_string(), j))
                    .collect();
                let terms: Vec<(String, bool)> = terms[1..]
                    .iter()
                    .map(|&x| (b.term(x & !JOINED).to_string(), x & JOINED != 0))
                    .collect();
                assert_eq!(full, terms, "{t:?}");
            }
        }
        // same numbering too, when both analysers saw the same texts
        assert_eq!(a.terms_len(), b.terms_len());
        for t in 0..a.terms_len() as u32 {
            assert_eq!(a.term(t), b.term(t));
        }
    }

    #[test]
    fn word_hash_spreads_short_words() {
        // every word of 0 to 3 letters: no two share a hash, nor the low 16 bits too often
        let mut words = vec![Vec::new()];
        let mut level = vec![Vec::new()];
        for _ in 0..3 {
            level = level
                .iter()
                .flat_map(|w: &Vec<u8>| {
                    (b'a'..=b'z').map(move |c| {
                        let mut w = w.clone();
                        w.push(c);
                        w
                    })
                })
                .collect();
            words.extend(level.iter().cloned());
        }
        let hashes: HashSet<u64> = words.iter().map(|w| word_hash(w)).collect();
        assert_eq!(hashes.len(), words.len());
        let low: HashSet<u64> = hashes.iter().map(|h| h & 0xffff).collect();
        assert!(
            low.len() > words.len() * 3 / 4,
            "{} of {}",
            low.len(),
            words.len()
        );
        assert_eq!(word_hash(b"same words"), word_hash(b"same words"));
    }

    #[test]
    fn lower_run_end_matches_the_byte_rule() {
        let naive = |b: &[u8], mut j: usize| {
            while j < b.len() && (b[j].is_ascii_lowercase() || b[j].is_ascii_digit()) {
                j += 1;
            }
            j
        };
        let mut texts: Vec<Vec<u8>> = TRICKY.iter().map(|t| t.as_bytes().to_vec()).collect();
        texts.push(b"abcdefghijklmnopqrstuvwxyz0123456789abcdefgh".to_vec());
        texts.push(b"`{/:@[az09AZ".to_vec());
        texts.push((0..=255u8).collect());
        texts.push((0..=255u8).rev().collect());
        texts.push(b"".to_vec());
        for seed in 0..200 {
            texts.push(jumble(seed, 20).into_bytes());
        }
        for t in &texts {
            for j in 0..=t.len() {
                assert_eq!(lower_run_end(t, j), naive(t, j), "{t:?} at {j}");
            }
        }
        // every byte value right after a run of 8+ members
        for x in 0..=255u8 {
            let mut t = b"abcdefgh12".to_vec();
            t.push(x);
            t.extend_from_slice(b"zzzzzzzz");
            assert_eq!(lower_run_end(&t, 0), naive(&t, 0), "{x}");
            assert_eq!(lower_run_end(&t, 3), naive(&t, 3), "{x}");
        }
    }

    #[test]
    fn same_bytes_compares_every_byte() {
        let words: Vec<Vec<u8>> = (0..=40)
            .map(|n| (0..n).map(|i| b'a' + (i % 26) as u8).collect())
            .collect();
        for w in &words {
            assert!(same_bytes(w, w));
            // a change at any position is seen
            for k in 0..w.len() {
                let mut v = w.clone();
                v[k] ^= 0x20;
                assert!(!same_bytes(w, &v), "{w:?} at {k}");
            }
            for v in &words {
                if v.len() != w.len() {
                    assert!(!same_bytes(w, v));
                }
            }
        }
        assert!(same_bytes(b"", b""));
        assert!(!same_bytes("é".as_bytes(), "è".as_bytes()));
    }

    #[test]
    fn hashed_tables_agree_with_the_lists() {
        for (alias, _) in crate::synonyms::ALIASES {
            assert_eq!(canonical(alias), crate::synonyms::canonical(alias));
        }
        for w in ["kubernetes", "", "k8", "k8ss", "K8s", "postgres", "db"] {
            assert_eq!(canonical(w), crate::synonyms::canonical(w), "{w}");
        }
        for (g, (last, _)) in phrase_groups().iter().enumerate() {
            assert_eq!(phrase_group_index().get(last), Some(&(g as u32)));
        }
        assert_eq!(phrase_group_index().len(), phrase_groups().len());
        assert!(is_rank_stop_word("the") && is_rank_stop_word("please"));
        assert!(!is_rank_stop_word("ai") && !is_rank_stop_word("postgres"));
        assert!(is_stop_word("le") && !is_stop_word("react"));
    }

    #[test]
    fn recent_keeps_the_last_four() {
        let mut r = Recent::default();
        assert!(r.as_slice().is_empty());
        for t in 1..=3 {
            r.push(t);
        }
        assert_eq!(r.as_slice(), &[1, 2, 3]);
        r.push(4);
        r.push(5);
        r.push(6);
        assert_eq!(r.as_slice(), &[3, 4, 5, 6]);
        r.clear();
        r.push(9);
        assert_eq!(r.as_slice(), &[9]);
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
