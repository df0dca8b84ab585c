//! Plain Rust mirrors of the WIT records in `wit/engine.wit`.
//!
//! The logic modules speak only these types, so they build and test natively; `bindings`
//! converts them to and from the generated types at the component boundary.

/// What a listing entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Directory,
    Symlink,
}

/// One entry of a root's listing (path relative to the root, `/`-separated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    pub kind: EntryKind,
    pub size: u64,
}

/// How a host must walk a root (the numbers and names of [`crate::walk`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkPolicy {
    pub skip_dir_names: Vec<String>,
    pub max_depth: u32,
    pub max_entries: u32,
    pub max_skill_file_bytes: u64,
    pub max_batch_bytes: u64,
    pub max_batch_files: u32,
}

/// What a folder entry is, as the host's file system says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildKind {
    File,
    Directory,
    Symlink,
    /// Anything else (a FIFO, a socket, a device), described in words (`a FIFO (named pipe)`).
    Special(String),
}

/// One entry of a folder, as the host read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderChild {
    pub name: String,
    pub kind: ChildKind,
    pub size: u64,
}

/// What a walk does with one folder (see [`crate::walk::folder_step`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderStep {
    pub entries: Vec<Entry>,
    pub enter: Vec<String>,
    pub findings: Vec<FileReport>,
    pub stop: bool,
    pub too_deep: bool,
}

/// The bytes of one file the engine asked for.
#[derive(Debug, Clone)]
pub struct FileData {
    pub path: String,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    #[default]
    Ranked,
    Keywords,
}

/// Matching settings (the `matching` section of the configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    pub algorithm: Algorithm,
    pub min_score: f64,
    pub ambiguity_threshold: f64,
    pub max_results: u32,
}

impl EngineConfig {
    /// The default matching settings: the one place they are written. The host's `matching`
    /// section, its engine configuration and `skills-mcp example-config` all read them here.
    pub const DEFAULT: Self = Self {
        algorithm: Algorithm::Ranked,
        min_score: 0.2,
        ambiguity_threshold: 0.1,
        max_results: 3,
    };
}

impl Default for EngineConfig {
    /// [`EngineConfig::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

/// A located finding about one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub root: u32,
    pub path: String,
    pub line: Option<u32>,
    pub severity: Severity,
    pub message: String,
}

/// One examined file and its findings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    pub root: u32,
    pub path: String,
    pub skill_path: Option<String>,
    pub worst: Option<Severity>,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SkillShape {
    AgentSkill,
    Hierarchical,
}

/// What the index knows about a skill without reading its body.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillInfo {
    pub skill_path: String,
    pub name: String,
    pub description: String,
    pub shape: SkillShape,
    pub root: u32,
    pub file: String,
    pub resource_dir: Option<String>,
    pub keywords: Vec<String>,
    pub priority: i32,
    pub inherit: bool,
    pub parent: Option<String>,
    pub asset_count: u32,
    pub script_count: u32,
    pub frontmatter_json: String,
    /// `metadata.version`, as written (see `frontmatter::version`).
    pub version: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub skill_path: String,
    pub name: String,
    pub description: String,
    pub score: f64,
    pub matched: Vec<String>,
    /// `metadata.version`, as written (see `frontmatter::version`).
    pub version: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExplainTerm {
    pub field: String,
    pub term: String,
    pub contribution: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    pub skill_path: String,
    pub score: f64,
    pub terms: Vec<ExplainTerm>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RouteOutcome {
    NoMatch,
    Ambiguous(Vec<SearchHit>),
    Matched(SearchHit),
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScriptArg {
    pub name: String,
    pub description: String,
    pub required: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Execution {
    Claude,
    Server,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScriptInfo {
    pub execution: Execution,
    pub args: Vec<ScriptArg>,
}

/// An asset or script of a skill, resolved.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AssetInfo {
    pub file: String,
    pub description: String,
    pub asset_type: String,
    pub is_binary: bool,
    pub mime_type: String,
    pub size: Option<u64>,
    pub from: Option<String>,
    pub script: Option<ScriptInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedSkill {
    pub skill_path: String,
    pub content: String,
    pub assets: Vec<AssetInfo>,
    pub scripts: Vec<AssetInfo>,
    pub inherited_assets: Vec<AssetInfo>,
    pub inherited_scripts: Vec<AssetInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetLocation {
    pub asset: AssetInfo,
    pub root: u32,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TreeNode {
    pub name: String,
    pub path: String,
    pub skill: Option<SkillInfo>,
    pub children: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFile {
    pub relative: String,
    pub root: u32,
    pub path: String,
    pub size: u64,
}

/// A skill as the Skills extension lists it (see [`crate::extension`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionSkill {
    /// The engine's skill path (what the tools accept).
    pub skill_path: String,
    /// Its path in the extension: `skill://<ext-path>/SKILL.md`; the last segment is its name.
    pub ext_path: String,
    /// Its `name` there ([`crate::extension::served_name`]).
    pub name: String,
}

/// The `SKILL.md` the Skills extension serves for a skill, and its frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedSkillMd {
    pub ext_path: String,
    /// The `name` (the last segment of `ext_path`).
    pub name: String,
    pub bytes: Vec<u8>,
    /// The frontmatter of `bytes`, parsed, as a JSON object.
    pub frontmatter_json: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeError {
    pub path: String,
    pub size: u64,
    pub limit: u64,
}

/// Every failure the engine reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    NotFound(String),
    InvalidPath(String),
    InvalidArgument(String),
    TooLarge(SizeError),
    ReadFailed(String),
    NotReady,
    Other(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NotFound(m) => write!(f, "not found: {m}"),
            Error::InvalidPath(m) => write!(f, "invalid path: {m}"),
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::TooLarge(e) => write!(
                f,
                "{} is {} bytes, over the limit of {} bytes",
                e.path, e.size, e.limit
            ),
            Error::ReadFailed(m) => write!(f, "read failed: {m}"),
            Error::NotReady => write!(f, "the index is not finished"),
            Error::Other(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

/// Reads files on the engine's behalf after indexing (the imported `files.read`).
pub trait Files {
    fn read(&self, root: u32, path: &str) -> Result<Vec<u8>, String>;
}
