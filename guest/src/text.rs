//! Tokenisation shared by both matchers (spec 5.1): Unicode-aware, EN + FR stop words.
//!
//! Two analysers live here:
//! - [`tokenize`]: the functional spec's tokenizer (section 5.1), used by the `keywords`
//!   algorithm exactly as specified;
//! - [`analyze`]: the ranker's analyser (identifier splitting, compounds, Snowball stemming),
//!   used by [`crate::rank`] on both the catalogue and the query.

use rust_stemmers::{Algorithm, Stemmer};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
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
    for piece in chunk.split(|c: char| !c.is_alphanumeric()) {
        if piece.is_empty() {
            continue;
        }
        for part in split_camel(piece) {
            let start = buf.len();
            if part.is_ascii() {
                buf.extend(part.bytes().map(|b| b.to_ascii_lowercase() as char));
            } else {
                buf.push_str(&part.to_lowercase());
            }
            ranges.push((start, buf.len()));
        }
    }
}

/// Split a run of letters/digits at lower->upper case changes and at the end of an acronym
/// (`XMLHttpRequest` -> `XML`, `Http`, `Request`). Digits stay with their neighbours (`k8s`,
/// `fp16`, `s3`).
fn split_camel(piece: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut prev: Option<char> = None;
    let mut it = piece.char_indices().peekable();
    let mut cuts = Vec::new();
    while let Some((pos, c)) = it.next() {
        if let Some(p) = prev {
            let next = it.peek().map(|x| x.1);
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase));
            if boundary {
                cuts.push(&piece[start..pos]);
                start = pos;
            }
        }
        prev = Some(c);
    }
    cuts.push(&piece[start..]);
    cuts.into_iter()
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

/// Phrases of [`crate::synonyms::PHRASES`] by their last word.
fn phrases_by_last() -> &'static HashMap<&'static str, Vec<Phrase>> {
    static MAP: OnceLock<HashMap<&'static str, Vec<Phrase>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut m: HashMap<&'static str, Vec<Phrase>> = HashMap::new();
        for (words, abbr) in crate::synonyms::PHRASES {
            if let Some(last) = words.last() {
                m.entry(*last).or_default().push((*words, *abbr));
            }
        }
        m
    })
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
/// An `Analyzer` memoises word decisions, so analysing a whole catalogue stems each distinct
/// word once. Duplicates are kept (term frequencies matter to the ranker).
#[derive(Debug, Default)]
pub struct Analyzer {
    /// lowercase word -> its term (`None`: dropped).
    memo: HashMap<String, Option<Rc<str>>>,
    buf: String,
    ranges: Vec<(usize, usize)>,
    recent: Vec<Rc<str>>,
    joined: String,
}

impl Analyzer {
    pub fn new() -> Self {
        Self::default()
    }

    fn word_term(&mut self, word: &str) -> Option<Rc<str>> {
        if let Some(t) = self.memo.get(word) {
            return t.clone();
        }
        let term = if word.chars().all(|c| c.is_ascii_digit()) || is_rank_stop_word(word) {
            None
        } else {
            let canon = crate::synonyms::canonical(word).unwrap_or(word);
            Some(Rc::from(stem(canon).as_ref()))
        };
        self.memo.insert(word.to_string(), term.clone());
        term
    }

    /// Analyse `text`, calling `emit(term, surface, position, joined)` for every term.
    pub fn run(&mut self, text: &str, mut emit: impl FnMut(&str, &str, u32, bool)) {
        let mut position = 0u32;
        self.recent.clear();
        let mut buf = std::mem::take(&mut self.buf);
        let mut ranges = std::mem::take(&mut self.ranges);
        for chunk in text.split_whitespace() {
            split_chunk(chunk, &mut buf, &mut ranges);
            if ranges.is_empty() {
                continue;
            }
            let first_pos = position;
            for &(a, b) in &ranges {
                let part = &buf[a..b];
                if let Some(term) = self.word_term(part) {
                    emit(&term, part, position, false);
                    if let Some(candidates) = phrases_by_last().get(term.as_ref()) {
                        for (words, abbr) in candidates {
                            let n = words.len() - 1;
                            if self.recent.len() >= n
                                && self.recent[self.recent.len() - n..]
                                    .iter()
                                    .zip(words.iter())
                                    .all(|(x, y)| x.as_ref() == *y)
                            {
                                emit(abbr, abbr, position, true);
                            }
                        }
                    }
                    if self.recent.len() >= 4 {
                        self.recent.remove(0);
                    }
                    self.recent.push(term);
                }
                position += 1;
            }
            if (2..=3).contains(&ranges.len()) {
                let (a, b) = (ranges[0].0, ranges[ranges.len() - 1].1);
                // parts are contiguous in `buf`
                self.joined.clear();
                self.joined.push_str(&buf[a..b]);
                if self.joined.chars().count() <= 24 {
                    let joined = std::mem::take(&mut self.joined);
                    if let Some(term) = self.word_term(&joined) {
                        emit(&term, &joined, first_pos, true);
                    }
                    self.joined = joined;
                }
            }
        }
        self.buf = buf;
        self.ranges = ranges;
    }
}

/// [`Analyzer::run`] collected into a list (one-off use).
pub fn analyze(text: &str) -> Vec<Term> {
    let mut out = Vec::new();
    Analyzer::new().run(text, |term, surface, position, joined| {
        out.push(Term {
            term: term.to_string(),
            surface: surface.to_string(),
            position,
            joined,
        });
    });
    out
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
