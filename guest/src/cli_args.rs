//! The command-line arguments of the verbs that `skills-mcp` and the stock-WASI command
//! `skills-engine-cli` (`cli-wasm/`) both have, defined once: `search`, `get`, `validate` and
//! `--algorithm`. Each binary keeps its own command, global flags and verbs beside them (the
//! server's `serve`, `list`, `asset`, `run`...), so that a flag both accept is spelled, parsed
//! and explained alike. Pure definitions (clap derive); behind the `cli` feature.

use clap::{Args, ValueEnum};

use crate::model::Algorithm;

/// The `matching.algorithm` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AlgorithmArg {
    /// Fielded BM25 with stemming; scores normalised to 0..1 (the default).
    Ranked,
    /// Keyword matching: a skill scores the fraction of its keywords that the request's words
    /// match.
    Keywords,
}

impl From<AlgorithmArg> for Algorithm {
    fn from(a: AlgorithmArg) -> Self {
        match a {
            AlgorithmArg::Ranked => Algorithm::Ranked,
            AlgorithmArg::Keywords => Algorithm::Keywords,
        }
    }
}

/// `search`: rank skills against a query.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The query (omit with --batch).
    #[arg(required_unless_present = "batch", conflicts_with = "batch")]
    pub query: Option<String>,
    /// Most results.
    #[arg(long, short = 'n', default_value_t = 10)]
    pub limit: u32,
    /// Print JSON: {"query":..,"results":[{"skill_path","name","score","description"},..]}.
    #[arg(long)]
    pub json: bool,
    /// Show why each result scores what it does.
    #[arg(long)]
    pub explain: bool,
    /// Read one query per line on stdin; write one JSON line per query.
    #[arg(long)]
    pub batch: bool,
}

/// `get`: route a free-text request to a skill, or print one skill.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// A free-text description of the task.
    #[arg(required_unless_present = "path", conflicts_with = "path")]
    pub context: Option<String>,
    /// Print this skill instead of routing a request.
    #[arg(long, value_name = "SKILL_PATH")]
    pub path: Option<String>,
}

/// `validate`: check every file of the roots.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Roots to check (default: the configured roots). Named apart from the global `--root`,
    /// whose values clap would otherwise merge with these.
    #[arg(id = VALIDATE_ROOTS, value_name = "ROOT")]
    pub roots: Vec<std::path::PathBuf>,
    /// Print only files with findings (and the summary).
    #[arg(long, short)]
    pub quiet: bool,
}

/// The id of `validate`'s roots, for a command that explains them in its own words
/// (`Command::mut_arg`).
pub const VALIDATE_ROOTS: &str = "check_roots";
