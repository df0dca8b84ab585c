//! Tokenisation shared by both matchers (spec 5.1): Unicode-aware, EN + FR stop words.
//!
//! Two analysers live here:
//! - [`tokenize`]: the functional spec's tokenizer (section 5.1), used by the `keywords`
//!   algorithm exactly as specified;
//! - [`analyze`]: the ranker's analyser (identifier splitting, compounds, Snowball stemming),
//!   used by [`crate::rank`] on both the catalogue and the query.

use rust_stemmers::{Algorithm, Stemmer};
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::OnceLock;

/// English stop words (a classic IR list: articles, pronouns, auxiliaries, prepositions,
/// conjunctions). Words that carry meaning in a technical request (`up`, `down`, `out`, `off`,
/// `new`, `first`, `not` ...) are deliberately absent from [`RANK_STOP_WORDS_EXTRA`] but the spec
/// list keeps `not` as the original matcher did.
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

fn rank_stop_words() -> &'static HashSet<&'static str> {
    static SET: OnceLock<HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| {
        stop_words()
            .iter()
            .copied()
            .chain(RANK_STOP_WORDS_EXTRA.iter().copied())
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
    for chunk in text.split_whitespace() {
        let mut parts: Vec<String> = Vec::new();
        for piece in chunk.split(|c: char| !c.is_alphanumeric()) {
            if piece.is_empty() {
                continue;
            }
            for p in split_camel(piece) {
                parts.push(p.to_lowercase());
            }
        }
        if !parts.is_empty() {
            groups.push(parts);
        }
    }
    groups
}

/// Split a run of letters/digits at lower->upper case changes and at the end of an acronym
/// (`XMLHttpRequest` -> `XML`, `Http`, `Request`). Digits stay with their neighbours (`k8s`,
/// `fp16`, `s3`).
fn split_camel(piece: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = piece.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (pos, c) = chars[i];
        let prev = chars[i - 1].1;
        let next = chars.get(i + 1).map(|x| x.1);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase()));
        if boundary {
            out.push(&piece[start..pos]);
            start = pos;
        }
    }
    out.push(&piece[start..]);
    out
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
    /// Whether the term is a join of a compound's parts (`pre-training` -> `pretraining`),
    /// rather than a word of the text.
    pub joined: bool,
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
/// Duplicates are kept (term frequencies matter to the ranker).
pub fn analyze(text: &str) -> Vec<Term> {
    let mut out = Vec::new();
    let mut position = 0u32;
    // stems of the recent kept words, for phrase detection
    let mut recent: Vec<String> = Vec::new();
    for group in split_identifiers(text) {
        let first_pos = position;
        for part in &group {
            let number = part.chars().all(|c| c.is_ascii_digit());
            if !number && !is_rank_stop_word(part) {
                let canon = crate::synonyms::canonical(part).unwrap_or(part);
                let term = stem(canon).into_owned();
                recent.push(term.clone());
                if recent.len() > 4 {
                    recent.remove(0);
                }
                out.push(Term {
                    term,
                    surface: part.clone(),
                    position,
                    joined: false,
                });
                for (words, abbr) in crate::synonyms::PHRASES {
                    if recent.len() >= words.len()
                        && recent[recent.len() - words.len()..]
                            .iter()
                            .zip(words.iter())
                            .all(|(a, b)| a == b)
                    {
                        out.push(Term {
                            term: (*abbr).to_string(),
                            surface: (*abbr).to_string(),
                            position,
                            joined: true,
                        });
                    }
                }
            }
            position += 1;
        }
        if (2..=3).contains(&group.len()) {
            let joined: String = group.concat();
            if joined.chars().count() <= 24 {
                out.push(Term {
                    term: stem(&joined).into_owned(),
                    surface: joined.clone(),
                    position: first_pos,
                    joined: true,
                });
            }
        }
    }
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
