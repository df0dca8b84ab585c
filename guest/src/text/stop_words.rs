//! Stop words: the English and French lists both matchers drop, and the ranker's own filler
//! words on top of them.

use super::*;

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

pub(super) fn stop_words() -> &'static FxHashSet<&'static str> {
    static SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| EN_STOP_WORDS.iter().chain(FR_STOP_WORDS).copied().collect())
}

/// Whether `word` (lowercase) is an English or French stop word.
pub fn is_stop_word(word: &str) -> bool {
    stop_words().contains(word)
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

pub(super) fn rank_stop_words() -> &'static FxHashSet<&'static str> {
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
