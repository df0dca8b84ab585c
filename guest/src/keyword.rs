//! The functional spec's keyword matching (seed 004, section 5.2), exactly.

use crate::rank::{Scored, SearchDoc};

/// Score one skill's keywords against query tokens: (score, matched keywords).
pub fn score(_tokens: &[String], _keywords: &[String], _priority: i32) -> (f64, Vec<String>) {
    todo!("keyword: score")
}

/// Keyword matching over all documents, best first (ties by priority, then skill path).
pub fn search(_docs: &[SearchDoc], _query: &str, _limit: usize) -> Vec<Scored> {
    todo!("keyword: search")
}
