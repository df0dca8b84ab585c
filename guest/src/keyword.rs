//! The functional spec's keyword matching (seed 004, section 5.2), exactly.

/// Score one skill's keywords against query tokens: (score, matched keywords).
pub fn score(_tokens: &[String], _keywords: &[String], _priority: i32) -> (f64, Vec<String>) {
    todo!("keyword: score")
}
