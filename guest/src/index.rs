//! The skill index: built from root listings and file bytes, then queried.
//!
//! Build protocol (mirrors the WIT `index` resource): `new`, then per root `add_root` (which
//! says which files to read) and `add_files`, then `finish`. Bodies are not kept; queries
//! that need them read through a [`Files`] implementation.
//!
//! What is kept per skill: its [`SearchDoc`] (path, name, description, keywords, priority), its
//! verbatim frontmatter as JSON, and its own assets and scripts (resolved against the listing
//! at `add_files` time). The searchable text (those fields plus routing hints, headings and a
//! bounded body prefix) is analysed by [`rank::Builder`] as each file arrives and only its
//! compact [`rank::Analysed`] form waits for `finish`, which builds the search structures from
//! it. Per root: a compact listing ([`discover::Listing`]) for sizes, folder existence and
//! manifests.
//!
//! Decisions the spec leaves open, made here:
//! - **Which `.md` files are skills** ([`crate::discover`]): every `SKILL.md` folder (Agent
//!   Skills), and hierarchical `*.md` files outside them, except those inside
//!   the resource folder of a valid hierarchical skill (`a/b/x.md` when `a/b.md` is a skill),
//!   which are that skill's resources (an info finding says so).
//! - **Validation.** An Agent Skills `SKILL.md` needs a non-empty `description` (else an
//!   error, skill skipped); `name` defaults to the folder name, and name-rule violations
//!   (1-64 chars of `a-z0-9-`, no leading/trailing/double `-`, equal to the folder name) are
//!   warnings. A hierarchical file needs `description` and a non-empty `keywords` list (spec
//!   4.2; else a warning, skipped), **except the category nodes `_root.md` and `_index.md`,
//!   which need only `description`**, so that a category without keywords still passes its
//!   content down. An `.md` file with no frontmatter at all is plain Markdown: not a skill,
//!   no finding.
//! - **A root-level `SKILL.md`** (the root is one skill folder) gets as skill path the last
//!   `/`-segment of the root's `name` given to `add_root` (falling back to the frontmatter
//!   `name`, then `skill`). Its resource folder is the root (`""`).
//! - **Several roots**: root ids follow `add_root` order; for the same skill path a later
//!   root wins, and both files get a finding (warning on the shadowed one, info on the
//!   winner). Within one root an Agent Skills folder wins over a hierarchical file.
//! - **Inheritance** walks the whole parent chain when the skill itself has
//!   `inherit: true`; ancestors' own `inherit` flags do not cut the chain.
//! - **A declared asset that does not exist** keeps `size: None` (with a warning at index
//!   time); [`Index::locate_asset`] still returns its location, so that the host reports it
//!   as "declared but missing" after checking the disk.
//! - **Manifests** ([`Index::manifest`]): for an Agent Skills folder, `SKILL.md` first (always
//!   under that relative name, even for a `skill.md` variant) then every file of the folder,
//!   sorted, relative to the folder, nested skills' files excluded; for a hierarchical skill,
//!   its `.md` file (relative name: the file name) then the files of its resource folder,
//!   relative to that folder.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use serde_yaml::{Mapping, Value};

use crate::assets::{self, DeclContext};
use crate::bytes;
use crate::discover::{self, Listing, Role};
use crate::extension::{self, ExtensionMap, Kind};
use crate::frontmatter::{self, Block, Note, Split};
use crate::keyword;
use crate::model::*;
use crate::paths;
use crate::rank::{self, Analysed, BODY_PREFIX_BYTES, Params, SearchDoc, SearchIndex};
use crate::resolve::{self, Section};
use crate::route;

/// Most bytes of headings kept per skill for ranking.
pub const HEADINGS_MAX_BYTES: usize = 4096;

/// Most bytes of routing hints kept per skill for ranking.
pub const HINTS_MAX_BYTES: usize = 2048;

/// Agent Skills limit on `description` length (characters).
pub const DESCRIPTION_MAX_CHARS: usize = 1024;

/// How many hits `route` considers before deciding.
const ROUTE_CANDIDATES: usize = 50;

/// Frontmatter fields read as routing hints (top level, and inside a `metadata` mapping).
const HINT_KEYS: &[&str] = &[
    "when_to_use",
    "when-to-use",
    "whenToUse",
    "when",
    "tags",
    "triggers",
    "trigger",
    "category",
    "categories",
    "argument-hint",
    "aliases",
    "use_cases",
    "use-cases",
];

/// One root: its name and compact listing.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct RootData {
    name: String,
    listing: Listing,
}

/// What the index keeps about a skill besides its [`SearchDoc`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Meta {
    shape: SkillShape,
    root: u32,
    file: String,
    resource_dir: Option<String>,
    inherit: bool,
    /// Name given in the frontmatter (not defaulted).
    explicit_name: bool,
    /// Index of the resolved parent in the finished index.
    parent: Option<usize>,
    frontmatter_json: String,
    /// `metadata.version`, as written.
    version: Option<String>,
    assets: Vec<AssetInfo>,
    scripts: Vec<AssetInfo>,
}

impl Default for Index {
    fn default() -> Self {
        Self::new(EngineConfig::default())
    }
}

/// Findings about one examined file.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Report {
    skill_path: Option<String>,
    /// How the file was read (kept so that views can read it again, see `view`).
    role: Option<Role>,
    notes: Vec<Note>,
}

impl Report {
    /// The findings as located diagnostics of file `path` of root `root`.
    fn diagnostics<'a>(
        &'a self,
        root: u32,
        path: &'a str,
    ) -> impl Iterator<Item = Diagnostic> + 'a {
        self.notes.iter().map(move |n| Diagnostic {
            root,
            path: path.to_string(),
            line: n.line,
            severity: n.severity,
            message: n.message.clone(),
        })
    }
}

/// A skill index (see the module docs for the build protocol and rules).
#[derive(Debug)]
pub struct Index {
    config: EngineConfig,
    policy: WalkPolicy,
    /// (Shared with the index's views; only ever changed while building, when unshared.)
    roots: Arc<Vec<RootData>>,
    /// Files `add_root` asked for and `add_files` has not delivered yet.
    pending: HashMap<(u32, String), Role>,
    /// Parsed skills, before `finish`, with their analysed search text.
    parsed: Vec<(SearchDoc, Meta, Analysed)>,
    /// Analyses search text as files arrive (until `finish`).
    builder: Option<rank::Builder>,
    /// Every examined file, by (root, path).
    /// (The path key orders as a `String`, compared 8 bytes at a time.)
    reports: BTreeMap<(u32, bytes::Key), Report>,
    /// Finished skills, sorted by skill path; `docs[i]` and `metas[i]` are one skill.
    docs: Vec<SearchDoc>,
    metas: Vec<Meta>,
    search_index: Option<SearchIndex>,
    finished: bool,
    /// A snapshot being restored (see `snapshot`).
    restoring: Option<Box<snapshot::Restoring>>,
    /// Where the Skills extension lists each skill (made on first use after `finish`).
    extension: OnceLock<ExtensionMap>,
    /// The operator's access rules and the cached views (see `view`); `None` in a view.
    access: Option<Mutex<view::Access>>,
}

impl Index {
    pub fn new(config: EngineConfig) -> Self {
        Self {
            config,
            policy: walk_policy(),
            roots: Arc::new(Vec::new()),
            pending: HashMap::new(),
            parsed: Vec::new(),
            builder: None,
            reports: BTreeMap::new(),
            docs: Vec::new(),
            metas: Vec::new(),
            search_index: None,
            finished: false,
            restoring: None,
            extension: OnceLock::new(),
            access: Some(Mutex::default()),
        }
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    fn report(&mut self, root: u32, path: &str) -> &mut Report {
        self.reports
            .entry((root, bytes::Key(path.to_owned())))
            .or_default()
    }

    /// Whether the build calls (`add_root`, `add_files`, `finish`) may still be made: not once
    /// the index is finished (built or restored) nor while a snapshot is being restored.
    /// `call` names the refused call in the error.
    pub fn check_building(&self, call: &str) -> Result<(), Error> {
        if self.finished {
            return Err(Error::InvalidArgument(format!(
                "{call}: the index is finished (`finish` was called or a snapshot restored); build a new index to change what it holds"
            )));
        }
        if self.restoring.is_some() {
            return Err(Error::InvalidArgument(format!(
                "{call}: a snapshot is being restored into this index; only `restore-section` may follow"
            )));
        }
        Ok(())
    }

    /// `NotReady` until the index is finished (built or restored): queries need it.
    pub fn ready(&self) -> Result<(), Error> {
        if self.finished {
            Ok(())
        } else {
            Err(Error::NotReady)
        }
    }

    fn position(&self, skill_path: &str) -> Option<usize> {
        self.docs
            .binary_search_by(|d| bytes::cmp_str(&d.skill_path, skill_path))
            .ok()
    }

    /// The index of a skill by exact skill path, or `NotFound` with suggestions.
    fn find(&self, skill_path: &str) -> Result<usize, Error> {
        self.ready()?;
        self.position(skill_path)
            .ok_or_else(|| self.not_found(skill_path))
    }

    fn not_found(&self, what: &str) -> Error {
        let suggestions = self.suggest(what, 3);
        let what = crate::paths::echo(what);
        if suggestions.is_empty() {
            Error::NotFound(format!("no skill `{what}`"))
        } else {
            Error::NotFound(format!(
                "no skill `{what}`; did you mean: {}",
                suggestions.join(", ")
            ))
        }
    }

    fn info(&self, i: usize) -> SkillInfo {
        let (d, m) = (&self.docs[i], &self.metas[i]);
        SkillInfo {
            skill_path: d.skill_path.clone(),
            name: d.name.clone(),
            description: d.description.clone(),
            shape: m.shape,
            root: m.root,
            file: m.file.clone(),
            resource_dir: m.resource_dir.clone(),
            keywords: d.keywords.clone(),
            priority: d.priority,
            inherit: m.inherit,
            parent: m.parent.map(|p| self.docs[p].skill_path.clone()),
            asset_count: u32::try_from(m.assets.len()).unwrap_or(u32::MAX),
            script_count: u32::try_from(m.scripts.len()).unwrap_or(u32::MAX),
            frontmatter_json: m.frontmatter_json.clone(),
            version: m.version.clone(),
        }
    }

    /// Ancestors of skill `i`, nearest first.
    fn ancestors(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let mut next = self.metas[i].parent;
        std::iter::from_fn(move || {
            let current = next?;
            next = self.metas[current].parent;
            Some(current)
        })
    }

    /// Number of skills (0 before `finish`).
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every skill, sorted by skill path (empty before `finish`).
    pub fn skills(&self) -> Vec<SkillInfo> {
        (0..self.docs.len()).map(|i| self.info(i)).collect()
    }

    /// Skill `i` in skill-path order as (skill path, name, description); see [`crate::views`].
    pub fn summary(&self, i: usize) -> Option<(&str, &str, &str)> {
        self.docs
            .get(i)
            .map(|d| (&*d.skill_path, &*d.name, &*d.description))
    }

    /// Every examined file with its findings, sorted by root and path.
    pub fn reports(&self) -> Vec<FileReport> {
        self.reports
            .iter()
            .map(|((root, bytes::Key(path)), r)| FileReport {
                root: *root,
                path: path.clone(),
                skill_path: r.skill_path.clone(),
                worst: r.notes.iter().map(|n| n.severity).max(),
                diagnostics: r.diagnostics(*root, path).collect(),
            })
            .collect()
    }

    /// Every finding of [`Self::reports`], in its order, without copying the files that have
    /// none.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.reports
            .iter()
            .flat_map(|((root, bytes::Key(path)), r)| r.diagnostics(*root, path))
            .collect()
    }
}

pub mod audit;
mod build;
mod content;
pub mod editor;
mod evals;
mod query;
mod snapshot;
#[cfg(test)]
mod tests;
mod view;
pub use audit::{
    AuditCompetitor, AuditFinding, AuditFindingKind, AuditParams, AuditSkill, SkillRequests,
};
pub use view::{HiddenSkill, VIEW_CACHE, VIEW_CACHE_SKILLS_FACTOR};
#[cfg(test)]
mod view_tests;

/// The walk policy lives in [`crate::walk`]; the index reads it from there.
pub use crate::walk::walk_policy;
pub use query::{MAX_QUERY_BYTES, MAX_QUERY_WORDS, check_query};
