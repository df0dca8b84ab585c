//! A collection's known words: each lowercase word the collection's analysis met and the
//! number of its term, looked up by a request's analysis instead of stemming the word again.
//!
//! The table holds no text of its own: the words and the terms' text are the index's arrays
//! ([`WordList`], [`Vocab`], shared through an [`Arc`]), and the table is a hash of word
//! numbers over them (8 bytes a slot).

use super::*;
use std::sync::Arc;

/// A vocabulary: terms concatenated, term `t` ending at `ends[t]` (ascending, on character
/// boundaries: checked by whoever makes it from untrusted bytes).
#[derive(Debug, Default, Clone)]
pub struct Vocab {
    pub text: String,
    pub ends: Vec<u32>,
}

impl Vocab {
    /// Number of terms.
    #[inline]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The text of term `t`.
    #[inline]
    pub fn get(&self, t: u32) -> &str {
        slice(&self.text, &self.ends, t)
    }
}

/// [`WordList::terms`] of a word the analysis drops (a stop word, a number).
pub const DROPPED: u32 = u32::MAX;

/// A collection's lowercase words, concatenated (word `i` ends at `ends[i]`), and the number
/// of each one's term in the collection's [`Vocab`] ([`DROPPED`]: dropped).
#[derive(Debug, Default, Clone)]
pub struct WordList {
    pub text: Vec<u8>,
    pub ends: Vec<u32>,
    pub terms: Vec<u32>,
}

impl WordList {
    /// Number of words.
    #[inline]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The bytes of word `i` (empty for a range the checks would refuse).
    #[inline]
    pub fn word(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        self.text
            .get(start..self.ends[i] as usize)
            .unwrap_or_default()
    }

    /// Every word and the number of its term (`None`: dropped), in order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, Option<u32>)> {
        (0..self.len()).map(|i| {
            // (checked when restored: ends ascending, on character boundaries)
            let word = std::str::from_utf8(self.word(i)).unwrap_or_default();
            let term = self.terms[i];
            (word, (term != DROPPED).then_some(term))
        })
    }
}

/// A free slot of [`KnownWords`].
const FREE_SLOT: (u32, u32) = (0, u32::MAX);

/// Words whose terms are known ahead: a collection's lowercase words, each with its term (or
/// dropped), as the collection's analysis found them. An analyser given these
/// ([`Analyzer::set_known`]) takes a word's term from here instead of stemming it again: the
/// same text, since it is what the same rules gave for the same word. A request's words are
/// mostly the collection's, so its analysis then stems only the others.
///
/// An open-addressing table with linear probing (at most 3/4 full, homes as in
/// [`WordCache`]): a slot holds the low 32 bits of a word's hash and its number in the word
/// list; the words and the terms' text are read from the collection's arrays.
#[derive(Debug, Default, Clone)]
pub struct KnownWords {
    vocab: Arc<Vocab>,
    words: Arc<WordList>,
    /// A power of two of slots (none without words).
    slots: Vec<(u32, u32)>,
    /// Words held (a word listed twice is held once, with its first term).
    len: usize,
}

impl KnownWords {
    /// The table of `words`, whose term numbers are those of `vocab`.
    pub fn new(vocab: Arc<Vocab>, words: Arc<WordList>) -> Self {
        let n = words.len();
        let mut slots = Vec::new();
        let mut len = 0;
        if n > 0 {
            let mut size = 64usize;
            while n.saturating_mul(4) > size.saturating_mul(3) {
                size *= 2;
            }
            slots = vec![FREE_SLOT; size];
            let mask = size - 1;
            for i in 0..n {
                let word = words.word(i);
                let hash = word_hash(word);
                let mut j = WordCache::home(hash, mask);
                loop {
                    let (h, k) = slots[j];
                    if k == FREE_SLOT.1 {
                        slots[j] = (hash as u32, i as u32);
                        len += 1;
                        break;
                    }
                    if h == hash as u32 && words.word(k as usize) == word {
                        break;
                    }
                    j = (j + 1) & mask;
                }
            }
        }
        Self {
            vocab,
            words,
            slots,
            len,
        }
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The term of `word` (hash `hash`, [`word_hash`]): `Some(None)` when it is dropped,
    /// `None` when the word is not known.
    #[inline]
    pub(super) fn term(&self, hash: u64, word: &str) -> Option<Option<&str>> {
        let slots = &self.slots[..];
        if slots.is_empty() {
            return None;
        }
        let mask = slots.len() - 1;
        let mut j = WordCache::home(hash, mask);
        loop {
            let (h, k) = slots[j];
            if k == FREE_SLOT.1 {
                return None;
            }
            if h == hash as u32 && self.words.word(k as usize) == word.as_bytes() {
                let t = self.words.terms[k as usize];
                if t == DROPPED {
                    return Some(None);
                }
                // (a number past the vocabulary, refused by the checks: stemmed again)
                return ((t as usize) < self.vocab.len()).then(|| Some(self.vocab.get(t)));
            }
            j = (j + 1) & mask;
        }
    }
}
