//! The default ranking: fielded BM25 over a skill's text (issue 6).
//!
//! Built once per index from [`SearchDoc`]s; a query never re-tokenises the catalogue.

/// The searchable text of one skill, extracted at index time (bodies are not kept).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchDoc {
    /// Skill path (its segments are searchable too).
    pub skill_path: String,
    pub name: String,
    pub description: String,
    /// Frontmatter `keywords` (and aliases), if any.
    pub keywords: Vec<String>,
    /// `when_to_use`, `tags` and similar routing hints from the frontmatter, joined.
    pub hints: String,
    /// Markdown headings of the body, joined by newlines.
    pub headings: String,
    /// The first part of the body (bounded, see `BODY_PREFIX_BYTES`).
    pub body_prefix: String,
    pub priority: i32,
}

/// How much of a body is indexed.
pub const BODY_PREFIX_BYTES: usize = 2048;

/// One scored document: its index in the build order, a score, and the matched terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub doc: usize,
    pub score: f64,
    pub matched: Vec<String>,
}

/// The search structure over all documents.
#[derive(Debug, Default)]
pub struct SearchIndex {}

impl SearchIndex {
    pub fn build(_docs: &[SearchDoc]) -> Self {
        todo!("rank: build")
    }

    /// Best first, scores normalised to 0..=1, at most `limit`.
    pub fn search(&self, _query: &str, _limit: usize) -> Vec<Scored> {
        todo!("rank: search")
    }

    /// Per-field, per-term contributions of `doc` to `query`.
    pub fn explain(&self, _query: &str, _doc: usize) -> crate::model::Explanation {
        todo!("rank: explain")
    }
}
