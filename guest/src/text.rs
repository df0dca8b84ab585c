//! Text analysis shared by both matchers: Unicode-aware, English and French stop words.
//!
//! Two analysers live here:
//! - [`tokenize`]: the keyword matcher's tokenizer (lowercase, punctuation dropped, stop words
//!   removed), used by the `keywords` algorithm;
//! - [`analyze`]: the ranker's analyser (identifier splitting, compounds, Snowball stemming),
//!   used by [`crate::rank`] on both the catalogue and the query.
//!
//! Rooms: [`stop_words`] (the lists), [`split`] (words out of identifiers, stemming),
//! [`analyzer`] (the one-pass analyser and its byte-level helpers).

use hashbrown::{HashTable, hash_table};
use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::collections::HashSet;
use std::hash::Hasher;
use std::sync::OnceLock;

mod analyzer;
mod known;
mod split;
mod stop_words;
#[cfg(test)]
mod tests;

pub use analyzer::*;
pub use known::*;
pub use split::*;
pub use stop_words::*;

/// The keyword matcher's tokenizer: lowercase, drop punctuation but keep hyphens, split on whitespace, drop EN+FR stop
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
