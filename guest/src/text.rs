//! Tokenisation shared by both matchers (spec 5.1): Unicode-aware, EN + FR stop words.

/// Spec 5.1: lowercase, drop punctuation but keep hyphens, split on whitespace, drop EN+FR stop
/// words, deduplicate (first occurrence order).
pub fn tokenize(_context: &str) -> Vec<String> {
    todo!("text: tokenize")
}
