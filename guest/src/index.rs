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
//!   Skills), and hierarchical `*.md` files outside them (spec 4.1-4.2), except those inside
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
//! - **Inheritance** walks the whole parent chain (spec 6.1) when the skill itself has
//!   `inherit: true`; ancestors' own `inherit` flags do not cut the chain.
//! - **A declared asset that does not exist** keeps `size: None` (with a warning at index
//!   time); [`Index::locate_asset`] still returns its location, so that the host reports it
//!   as "declared but missing" (spec 8.3) after checking the disk.
//! - **Manifests** ([`Index::manifest`]): for an Agent Skills folder, `SKILL.md` first (always
//!   under that relative name, even for a `skill.md` variant) then every file of the folder,
//!   sorted, relative to the folder, nested skills' files excluded; for a hierarchical skill,
//!   its `.md` file (relative name: the file name) then the files of its resource folder,
//!   relative to that folder.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::OnceLock;

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
    roots: Vec<RootData>,
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
}

impl Index {
    pub fn new(config: EngineConfig) -> Self {
        Self {
            config,
            policy: walk_policy(),
            roots: Vec::new(),
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

    /// Register a root; returns the files (relative paths) the host must read.
    ///
    /// Refused (`InvalidArgument`, the index unchanged) after `finish`, during a restore, and
    /// for a listing with an entry that is not a clean relative path or a path listed twice.
    pub fn add_root(&mut self, name: &str, listing: Vec<Entry>) -> Result<Vec<String>, Error> {
        self.check_building("add-root")?;
        let root = u32::try_from(self.roots.len()).unwrap_or(u32::MAX);
        let d = discover::discover(listing, &self.policy)
            .map_err(|why| Error::InvalidArgument(format!("add-root `{name}`: {why}")))?;
        for (path, notes) in d.notes {
            self.report(root, &path).notes.extend(notes);
        }
        let mut to_read = Vec::with_capacity(d.to_read.len());
        for (path, role) in d.to_read {
            self.report(root, &path);
            self.pending.insert((root, path.clone()), role);
            to_read.push(path);
        }
        self.roots.push(RootData {
            name: name.to_owned(),
            listing: d.listing,
        });
        Ok(to_read)
    }

    /// Parse a batch of files of root `root`.
    ///
    /// Refused as a whole (`InvalidArgument` naming the culprits, nothing parsed) after
    /// `finish`, during a restore, for a root never added, and when a file of the batch was
    /// not asked for by `add_root`, was already supplied, or appears twice in the batch.
    pub fn add_files(&mut self, root: u32, files: Vec<FileData>) -> Result<(), Error> {
        self.check_building("add-files")?;
        if root as usize >= self.roots.len() {
            return Err(Error::InvalidArgument(format!(
                "add-files: no root {root}: {} root(s) were added (ids count from 0 in add-root order)",
                self.roots.len()
            )));
        }
        let mut seen: HashSet<&str> = HashSet::with_capacity(files.len());
        let mut refused: Vec<String> = Vec::new();
        for f in &files {
            let wanted = self.pending.contains_key(&(root, f.path.clone()));
            if !seen.insert(f.path.as_str()) {
                refused.push(format!("`{}` (twice in this batch)", f.path));
            } else if !wanted {
                refused.push(format!("`{}`", f.path));
            }
        }
        if !refused.is_empty() {
            const SHOWN: usize = 5;
            let more = refused.len().saturating_sub(SHOWN);
            refused.truncate(SHOWN);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            return Err(Error::InvalidArgument(format!(
                "add-files for root {root} (`{}`): not asked for by add-root, or already supplied: {}{more}; nothing of this batch was added",
                self.roots[root as usize].name,
                refused.join(", ")
            )));
        }
        for f in files {
            let Some(role) = self.pending.remove(&(root, f.path.clone())) else {
                unreachable!("checked above");
            };
            let mut notes = Vec::new();
            let parsed = self.parse_file(root, &f.path, &role, &f.bytes, &mut notes);
            let report = self.report(root, &f.path);
            report.notes.extend(notes);
            if let Some((mut doc, meta)) = parsed {
                report.skill_path = Some(doc.skill_path.clone());
                let analysed = self
                    .builder
                    .get_or_insert_with(|| rank::Builder::new(Params::default()))
                    .analyse(&doc);
                // Analysed: the text only ranking reads is not kept.
                doc.hints = String::new();
                doc.headings = String::new();
                doc.body_prefix = String::new();
                self.parsed.push((doc, meta, analysed));
            }
        }
        Ok(())
    }

    /// Parse one skill file; `None` when it is not a (valid) skill, with the reasons in `notes`.
    fn parse_file(
        &self,
        root: u32,
        path: &str,
        role: &Role,
        bytes: &[u8],
        notes: &mut Vec<Note>,
    ) -> Option<(SearchDoc, Meta)> {
        let agent = matches!(role, Role::Agent { .. });
        // Findings that make a file "not a skill" are errors for a SKILL.md, warnings for
        // other Markdown (which may legitimately be something else).
        let fatal = if agent {
            Severity::Error
        } else {
            Severity::Warning
        };
        let max = self.policy.max_skill_file_bytes;
        if bytes.len() as u64 > max {
            notes.push(Note::new(
                None,
                Severity::Warning,
                format!(
                    "the file is {} bytes, over the limit of {max} bytes: skipped",
                    bytes.len()
                ),
            ));
            return None;
        }
        let text = frontmatter::decode(bytes, notes);
        let block = match frontmatter::split(&text) {
            Split::None { .. } => {
                if agent {
                    notes.push(Note::new(
                        Some(1),
                        Severity::Error,
                        "no frontmatter: a SKILL.md must start with a `---` fenced YAML block holding at least `description`; the skill is skipped",
                    ));
                }
                return None;
            }
            Split::Unclosed { open_line } => {
                notes.push(Note::new(
                    Some(open_line),
                    fatal,
                    format!(
                        "the frontmatter opened on line {open_line} is never closed by a `---` line; the file is skipped"
                    ),
                ));
                return None;
            }
            Split::Found(block) => block,
        };
        if block.leading_blank_lines > 0 {
            notes.push(Note::new(
                Some(1),
                Severity::Warning,
                format!(
                    "{} blank line(s) before the opening `---`: accepted, but other tools may not see the frontmatter",
                    block.leading_blank_lines
                ),
            ));
        }
        let map = match frontmatter::parse(&block, notes) {
            Ok(map) => map,
            Err(mut e) => {
                e.severity = fatal;
                e.message.push_str("; the file is skipped");
                notes.push(e);
                return None;
            }
        };
        let fm_line = |key: &str| frontmatter::key_line(&block, key).or(Some(block.open_line));

        // Skill path and shape.
        let skill_path = match role {
            Role::Agent { folder } if folder.is_empty() => {
                root_skill_path(&self.roots[root as usize].name, &map)
            }
            Role::Agent { folder } => folder.clone(),
            Role::Hierarchical => paths::skill_path_of_md(path),
        };
        let category = !agent && {
            let stem = paths::file_name(&skill_path);
            stem == "_root" || stem == "_index"
        };

        // description (required).
        let description = match frontmatter::get(&map, "description") {
            None => Err("no `description`".to_owned()),
            Some(v) => match frontmatter::scalar_string(v) {
                None => Err(format!(
                    "`description` must be text, found a {}",
                    frontmatter::kind_name(v)
                )),
                Some(s) if s.trim().is_empty() => Err("`description` is empty".to_owned()),
                Some(s) => Ok(s.trim().to_owned()),
            },
        };
        let description = match description {
            Ok(d) => d,
            Err(why) => {
                let message = if agent {
                    format!(
                        "{why} in the frontmatter: a skill needs a description; the skill is skipped"
                    )
                } else {
                    format!(
                        "{why} in the frontmatter: not a skill (a hierarchical skill needs `description` and `keywords`)"
                    )
                };
                notes.push(Note::new(fm_line("description"), fatal, message));
                return None;
            }
        };
        if agent && description.chars().count() > DESCRIPTION_MAX_CHARS {
            notes.push(Note::new(
                fm_line("description"),
                Severity::Warning,
                format!(
                    "`description` is {} characters; the Agent Skills format allows at most {DESCRIPTION_MAX_CHARS} and some clients reject longer ones",
                    description.chars().count()
                ),
            ));
        }

        // keywords (required for hierarchical non-category skills).
        let keywords = frontmatter::get(&map, "keywords")
            .or_else(|| metadata(&map).and_then(|m| frontmatter::get(m, "keywords")))
            .map(frontmatter::string_list)
            .unwrap_or_default();
        if !agent && !category && keywords.is_empty() {
            notes.push(Note::new(
                fm_line("keywords"),
                Severity::Warning,
                "no `keywords` (a non-empty list) in the frontmatter: not a skill (a hierarchical skill needs `description` and `keywords`; only `_root.md` and `_index.md` may omit `keywords`)",
            ));
            return None;
        }

        // name.
        let given_name = frontmatter::get(&map, "name").and_then(|v| {
            let s = frontmatter::scalar_string(v);
            if s.is_none() {
                notes.push(Note::new(
                    fm_line("name"),
                    Severity::Warning,
                    format!(
                        "`name` must be text, found a {}; the default name is used",
                        frontmatter::kind_name(v)
                    ),
                ));
            }
            s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
        });
        let explicit_name = given_name.is_some();
        let name = match (role, given_name) {
            (_, Some(n)) => n,
            (Role::Agent { .. }, None) => {
                let n = paths::file_name(&skill_path).to_owned();
                notes.push(Note::new(
                    Some(block.open_line),
                    Severity::Warning,
                    format!("no `name` in the frontmatter: the folder name `{n}` is used"),
                ));
                n
            }
            (Role::Hierarchical, None) => default_hierarchical_name(&skill_path),
        };
        if let Role::Agent { folder } = role {
            let folder_name = (!folder.is_empty()).then(|| paths::file_name(folder));
            for problem in name_problems(&name, folder_name) {
                notes.push(Note::new(fm_line("name"), Severity::Warning, problem));
            }
        }

        // inherit, priority.
        let inherit = match frontmatter::get(&map, "inherit") {
            None => true,
            Some(v) => match frontmatter::boolean(v) {
                Some(b) => b,
                None => {
                    notes.push(Note::new(
                        fm_line("inherit"),
                        Severity::Warning,
                        "`inherit` should be `true` or `false`; `true` is used",
                    ));
                    true
                }
            },
        };
        let priority = match frontmatter::get(&map, "priority") {
            None => 0,
            Some(v) => frontmatter::integer(v).unwrap_or_else(|| {
                notes.push(Note::new(
                    fm_line("priority"),
                    Severity::Warning,
                    "`priority` should be a whole number; 0 is used",
                ));
                0
            }),
        };

        // Resource folder, assets and scripts.
        let listing = &self.roots[root as usize].listing;
        let resource_dir = match role {
            Role::Agent { folder } => Some(folder.clone()),
            Role::Hierarchical => {
                let dir = paths::resource_dir_of_md(path);
                listing.is_dir(dir).then(|| dir.to_owned())
            }
        };
        let (assets, scripts) = self.own_assets(
            listing,
            role,
            path,
            resource_dir.as_deref(),
            &map,
            &block,
            notes,
        );

        let body = block.body;
        let doc = SearchDoc {
            skill_path,
            name,
            description,
            keywords,
            hints: hints(&map),
            headings: frontmatter::headings(body, HEADINGS_MAX_BYTES),
            body_prefix: frontmatter::prefix(frontmatter::trim_body(body), BODY_PREFIX_BYTES)
                .to_owned(),
            priority,
        };
        let meta = Meta {
            shape: if agent {
                SkillShape::AgentSkill
            } else {
                SkillShape::Hierarchical
            },
            root,
            file: path.to_owned(),
            resource_dir,
            inherit,
            explicit_name,
            parent: None,
            frontmatter_json: {
                // kept for the index's life: no growth slack
                let mut json = frontmatter::to_json(&map);
                json.shrink_to_fit();
                json
            },
            assets,
            scripts,
        };
        Some((doc, meta))
    }

    /// Spec 7.1 for one skill (see [`crate::assets`]).
    #[allow(clippy::too_many_arguments)]
    fn own_assets(
        &self,
        listing: &Listing,
        role: &Role,
        path: &str,
        resource_dir: Option<&str>,
        map: &Mapping,
        block: &Block<'_>,
        notes: &mut Vec<Note>,
    ) -> (Vec<AssetInfo>, Vec<AssetInfo>) {
        let assets_v = frontmatter::get(map, "assets");
        let scripts_v = frontmatter::get(map, "scripts");
        let Some(dir) = resource_dir else {
            let declared = [("assets", assets_v), ("scripts", scripts_v)];
            for (key, v) in declared {
                if let Some(Value::Sequence(items)) = v
                    && !items.is_empty()
                {
                    notes.push(Note::new(
                        frontmatter::key_line(block, key),
                        Severity::Warning,
                        format!(
                            "{} {key} declared, but the resource folder `{}/` does not exist; they are ignored",
                            items.len(),
                            paths::resource_dir_of_md(path)
                        ),
                    ));
                }
            }
            return (Vec::new(), Vec::new());
        };
        let size_of = |f: &str| listing.size(&paths::join(dir, f));
        let assets = assets::declared_assets(
            assets_v,
            &DeclContext {
                line: frontmatter::key_line(block, "assets"),
                size_of: &size_of,
            },
            notes,
        );
        let scripts = assets::declared_scripts(
            scripts_v,
            &DeclContext {
                line: frontmatter::key_line(block, "scripts"),
                size_of: &size_of,
            },
            notes,
        );
        match role {
            Role::Agent { folder } => {
                assets::folder_assets(&listing.folder_files(folder, path), assets, scripts)
            }
            Role::Hierarchical => (assets, scripts),
        }
    }

    /// Resolve parents, shadowing and search structures. Once: a second `finish`, or one
    /// during a restore, is `InvalidArgument`.
    pub fn finish(&mut self) -> Result<(), Error> {
        self.check_building("finish")?;
        for ((root, path), _) in std::mem::take(&mut self.pending) {
            self.report(root, &path).notes.push(Note::new(
                None,
                Severity::Warning,
                "add-root asked for this file but its bytes were never supplied; skipped",
            ));
        }
        let builder = self
            .builder
            .take()
            .unwrap_or_else(|| rank::Builder::new(Params::default()));
        let all = std::mem::take(&mut self.parsed);
        // Spec 4.1: a hierarchical file inside the resource folder of a (kept) hierarchical
        // skill of the same root is one of its resources, not a skill. Shallowest first, so
        // that a folder's owner is decided before the files inside it.
        // (Root and depth computed once per file; a total order: (root, file) is unique.)
        let mut order: Vec<(u32, usize, usize)> = all
            .iter()
            .enumerate()
            .map(|(i, (_, m, _))| (m.root, paths::depth(&m.file), i))
            .collect();
        order.sort_unstable_by(|a, b| {
            (a.0, a.1)
                .cmp(&(b.0, b.1))
                .then_with(|| bytes::cmp_str(&all[a.2].1.file, &all[b.2].1.file))
                .then(a.2.cmp(&b.2))
        });
        let mut slots: Vec<Option<_>> = all.into_iter().map(Some).collect();
        let all: Vec<_> = order
            .iter()
            .filter_map(|&(_, _, i)| slots[i].take())
            .collect();
        let mut resource_dirs: HashSet<(u32, String)> = HashSet::new();
        let mut kept = Vec::with_capacity(all.len());
        for (doc, meta, analysed) in all {
            if meta.shape == SkillShape::Hierarchical {
                let owner = paths::ancestors(&meta.file)
                    .find(|a| {
                        !a.is_empty() && resource_dirs.contains(&(meta.root, (*a).to_owned()))
                    })
                    .map(str::to_owned);
                if let Some(dir) = owner {
                    let report = self.report(meta.root, &meta.file);
                    report.skill_path = None;
                    report.notes.push(Note::new(
                        None,
                        Severity::Info,
                        format!(
                            "inside the resource folder `{dir}/` of the skill `{dir}`: a resource of that skill, not a skill"
                        ),
                    ));
                    continue;
                }
                if let Some(dir) = &meta.resource_dir {
                    resource_dirs.insert((meta.root, dir.clone()));
                }
            }
            kept.push((doc, meta, analysed));
        }
        let mut all = kept;
        // Shadowing: per skill path, the latest root wins; within a root, an Agent Skills
        // folder wins, then the first file in byte order.
        all.sort_by(|(da, ma, _), (db, mb, _)| {
            bytes::cmp_str(&da.skill_path, &db.skill_path)
                .then(mb.root.cmp(&ma.root))
                .then(
                    (ma.shape != SkillShape::AgentSkill).cmp(&(mb.shape != SkillShape::AgentSkill)),
                )
                .then_with(|| bytes::cmp_str(&ma.file, &mb.file))
        });
        let mut docs: Vec<SearchDoc> = Vec::with_capacity(all.len());
        let mut metas: Vec<Meta> = Vec::with_capacity(all.len());
        let mut analysed: Vec<Analysed> = Vec::with_capacity(all.len());
        for (doc, meta, a) in all {
            if let Some(winner) = docs
                .last()
                .filter(|w| bytes::eq_str(&w.skill_path, &doc.skill_path))
            {
                let w = metas.last().expect("parallel vectors");
                let (wroot, wfile, p) = (w.root, w.file.clone(), winner.skill_path.clone());
                if w.root != meta.root {
                    let wname = self.roots[wroot as usize].name.clone();
                    let lname = self.roots[meta.root as usize].name.clone();
                    self.report(meta.root, &meta.file).notes.push(Note::new(
                        None,
                        Severity::Warning,
                        format!(
                            "shadowed by root {wroot} (`{wname}`) file `{wfile}`, which defines the same skill path `{p}` and takes precedence"
                        ),
                    ));
                    self.report(wroot, &wfile).notes.push(Note::new(
                        None,
                        Severity::Info,
                        format!(
                            "shadows root {} (`{lname}`) file `{}`, which defines the same skill path `{p}`",
                            meta.root, meta.file
                        ),
                    ));
                } else {
                    self.report(meta.root, &meta.file).notes.push(Note::new(
                        None,
                        Severity::Warning,
                        format!("duplicate skill path `{p}`: `{wfile}` defines it too and is used"),
                    ));
                }
                continue;
            }
            docs.push(doc);
            metas.push(meta);
            analysed.push(a);
        }
        // Parents (spec 4.4, missing intermediates walked over).
        for i in 0..docs.len() {
            let parent = paths::resolve_parent(&docs[i].skill_path, |p| {
                docs.binary_search_by(|d| bytes::cmp_str(&d.skill_path, p))
                    .is_ok()
            });
            metas[i].parent = parent.and_then(|p| {
                docs.binary_search_by(|d| bytes::cmp_str(&d.skill_path, &p))
                    .ok()
            });
        }
        // Duplicate names (Agent Skills names, and names given explicitly).
        let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, (d, m)) in docs.iter().zip(&metas).enumerate() {
            if m.shape == SkillShape::AgentSkill || m.explicit_name {
                by_name.entry(d.name.to_lowercase()).or_default().push(i);
            }
        }
        for (name, group) in by_name.into_iter().filter(|(_, g)| g.len() > 1) {
            for &i in &group {
                let others: Vec<String> = group
                    .iter()
                    .filter(|&&j| j != i)
                    .map(|&j| format!("`{}`", docs[j].skill_path))
                    .collect();
                let (root, file) = (metas[i].root, metas[i].file.clone());
                self.report(root, &file).notes.push(Note::new(
                    None,
                    Severity::Warning,
                    format!(
                        "the name `{name}` is also used by {}; asking for this name is ambiguous, use the skill path",
                        others.join(", ")
                    ),
                ));
            }
        }
        // The Skills extension's names (see `crate::extension`): renamed and left-out skills.
        let map = ExtensionMap::new(docs.iter().map(|d| d.skill_path.as_str()));
        for (i, m) in metas.iter().enumerate() {
            let note = match (map.ext_path(i), map.kinds[i]) {
                (Ok(ext), Some(Kind::Derived)) => Note::new(
                    None,
                    Severity::Info,
                    format!(
                        "the Skills extension lists it as `skill://{ext}/SKILL.md` (name `{}`): its last path segment is not a valid skill name; the tools serve it as `{}`",
                        extension::name_of(ext),
                        docs[i].skill_path
                    ),
                ),
                (Err(why), _) => Note::new(
                    None,
                    Severity::Warning,
                    format!(
                        "left out of the Skills extension (`skills/list`, `skill://` resources): {why}; the tools still serve it as `{}`",
                        docs[i].skill_path
                    ),
                ),
                _ => continue,
            };
            let (root, file) = (m.root, m.file.clone());
            self.report(root, &file).notes.push(note);
        }
        self.extension = OnceLock::from(map);
        self.search_index = Some(builder.build(
            analysed,
            docs.iter().map(|d| d.skill_path.clone()).collect(),
            docs.iter().map(|d| d.priority).collect(),
        ));
        self.docs = docs;
        self.metas = metas;
        self.finished = true;
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

    /// One skill by skill path (also accepted with a trailing `/`, `.md` or `/SKILL.md`), else
    /// by unique name (case-insensitive), else `NotFound` with suggestions.
    pub fn get(&self, path_or_name: &str) -> Result<SkillInfo, Error> {
        self.ready()?;
        let q = path_or_name.trim();
        if q.is_empty() {
            return Err(Error::InvalidArgument(
                "give a skill path or name (the argument is empty)".into(),
            ));
        }
        let variants = [
            Some(q),
            q.strip_suffix('/'),
            q.strip_suffix("/SKILL.md"),
            q.strip_suffix(".md"),
        ];
        if let Some(i) = variants
            .into_iter()
            .flatten()
            .find_map(|p| self.position(p))
        {
            return Ok(self.info(i));
        }
        // The path the Skills extension lists it under (`api` for `api/_index`).
        if let Some(i) = [q, q.trim_end_matches('/')]
            .into_iter()
            .chain(q.strip_suffix("/SKILL.md"))
            .find_map(|p| self.extension_map().skill_at(p))
        {
            return Ok(self.info(i));
        }
        let lower = q.to_lowercase();
        let named: Vec<usize> = (0..self.docs.len())
            .filter(|&i| self.docs[i].name.to_lowercase() == lower)
            .collect();
        match named.as_slice() {
            [i] => Ok(self.info(*i)),
            [] => Err(self.not_found(q)),
            many => Err(Error::NotFound(format!(
                "`{}` is the name of several skills: {}; ask by skill path",
                crate::paths::echo(q),
                many.iter()
                    .map(|&i| self.docs[i].skill_path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Closest skill paths to a mistyped path or name, best first (deterministic). Each skill
    /// is compared (case-insensitively) by its path, name and last path segment, and ranked by
    /// its best comparison: equal; then within a small edit distance (at most a third of the
    /// query's length, at least 2); then containing the query; then contained in the query
    /// (3+ characters both); ties by closeness, then skill path.
    pub fn suggest(&self, path_or_name: &str, limit: u32) -> Vec<String> {
        // Edit distances cost the product of the lengths: no suggestions for absurd input.
        if path_or_name.len() > 1024 {
            return Vec::new();
        }
        let q = path_or_name.trim().trim_end_matches('/').to_lowercase();
        if q.is_empty() || limit == 0 {
            return Vec::new();
        }
        let qlen = q.chars().count();
        let max_distance = (qlen / 3).max(2);
        let mut ranked: Vec<(u8, usize, &str)> = Vec::new();
        for d in &self.docs {
            let path = d.skill_path.to_lowercase();
            let name = d.name.to_lowercase();
            let last = paths::file_name(&path).to_owned();
            let best = [path.as_str(), name.as_str(), last.as_str()]
                .into_iter()
                .filter_map(|c| {
                    let clen = c.chars().count();
                    if c == q {
                        return Some((0, 0));
                    }
                    let dist = levenshtein(&q, c);
                    if dist <= max_distance {
                        Some((1, dist))
                    } else if qlen >= 3 && c.contains(q.as_str()) {
                        Some((2, clen - qlen))
                    } else if clen >= 3 && q.contains(c) {
                        Some((3, qlen - clen))
                    } else {
                        None
                    }
                })
                .min();
            if let Some((class, closeness)) = best {
                ranked.push((class, closeness, &d.skill_path));
            }
        }
        ranked.sort();
        ranked
            .into_iter()
            .take(limit as usize)
            .map(|(_, _, p)| p.to_owned())
            .collect()
    }

    /// Ranked results, best first, with the configured algorithm (not filtered by
    /// `min_score`: that is `route`'s job).
    pub fn search(&self, query: &str, limit: u32) -> Result<Vec<SearchHit>, Error> {
        self.ready()?;
        check_query(query)?;
        let limit = (limit as usize).min(self.docs.len());
        let scored = match self.config.algorithm {
            Algorithm::Ranked => self
                .search_index
                .as_ref()
                .map(|s| s.search(query, limit))
                .unwrap_or_default(),
            Algorithm::Keywords => keyword::search(&self.docs, query, limit),
        };
        Ok(scored
            .into_iter()
            .filter(|s| s.doc < self.docs.len())
            .map(|s| {
                let d = &self.docs[s.doc];
                SearchHit {
                    skill_path: d.skill_path.clone(),
                    name: d.name.clone(),
                    description: d.description.clone(),
                    score: s.score,
                    matched: s.matched,
                }
            })
            .collect())
    }

    /// Per-field, per-term account of one skill's score for a query.
    pub fn explain(&self, query: &str, skill_path: &str) -> Result<Explanation, Error> {
        let i = self.find(skill_path)?;
        check_query(query)?;
        match self.config.algorithm {
            Algorithm::Ranked => {
                let mut e = self
                    .search_index
                    .as_ref()
                    .map(|s| s.explain(query, i))
                    .ok_or(Error::NotReady)?;
                e.skill_path = skill_path.to_owned();
                Ok(e)
            }
            Algorithm::Keywords => {
                let d = &self.docs[i];
                let hit = keyword::search(std::slice::from_ref(d), query, 1).pop();
                let (score, matched) = hit.map_or((0.0, Vec::new()), |h| (h.score, h.matched));
                let bonus = f64::from(d.priority) * 0.001;
                let per = if matched.is_empty() {
                    0.0
                } else {
                    (score - bonus) / matched.len() as f64
                };
                let terms = matched
                    .iter()
                    .map(|m| ExplainTerm {
                        field: "keywords".into(),
                        term: m.clone(),
                        contribution: per,
                    })
                    .collect();
                let mut notes = vec![format!(
                    "keyword matching (spec 5.2) over {}",
                    if d.keywords.is_empty() {
                        "keywords derived from the name and description (the skill declares none)"
                    } else {
                        "the skill's keywords"
                    }
                )];
                if score > 0.0 && d.priority != 0 {
                    notes.push(format!("priority {} adds {bonus}", d.priority));
                }
                Ok(Explanation {
                    skill_path: skill_path.to_owned(),
                    score,
                    terms,
                    notes,
                })
            }
        }
    }

    /// Route a free-text request (spec 5.3): search, then decide.
    pub fn route(&self, context: &str) -> Result<RouteOutcome, Error> {
        let limit = ROUTE_CANDIDATES.max(self.config.max_results as usize) as u32;
        let hits = self.search(context, limit)?;
        Ok(route::decide(&self.config, hits))
    }

    /// The chain of skill `i` for inheritance: root first, `i` last (just `i` when it does
    /// not inherit).
    fn chain(&self, i: usize) -> Vec<usize> {
        let mut chain = vec![i];
        if self.metas[i].inherit {
            chain.extend(self.ancestors(i));
        }
        chain.reverse();
        chain
    }

    fn read_text(&self, files: &dyn Files, i: usize) -> Result<String, Error> {
        let m = &self.metas[i];
        let bytes = files.read(m.root, &m.file).map_err(|e| {
            Error::ReadFailed(format!(
                "cannot read `{}` of root {} (`{}`): {e}",
                m.file, m.root, self.roots[m.root as usize].name
            ))
        })?;
        Ok(frontmatter::decode(&bytes, &mut Vec::new()))
    }

    /// Content with inheritance applied (spec 6, format in [`crate::resolve`]), and own and
    /// inherited assets and scripts (spec 7.3).
    pub fn resolve(&self, files: &dyn Files, skill_path: &str) -> Result<ResolvedSkill, Error> {
        let i = self.find(skill_path)?;
        let chain = self.chain(i);
        let texts: Vec<String> = chain
            .iter()
            .map(|&j| self.read_text(files, j))
            .collect::<Result<_, _>>()?;
        let content = if self.metas[i].inherit {
            let sections: Vec<Section<'_>> = chain
                .iter()
                .zip(&texts)
                .map(|(&j, text)| Section {
                    skill_path: &self.docs[j].skill_path,
                    file: &self.metas[j].file,
                    body: frontmatter::body_of(text),
                })
                .collect();
            resolve::aggregate(&sections)
        } else {
            frontmatter::trim_body(frontmatter::body_of(&texts[0])).to_owned()
        };
        let from = |j: usize| (j != i).then(|| self.docs[j].skill_path.as_str());
        let (inherited_assets, inherited_scripts) = if self.metas[i].inherit {
            (
                assets::inherit(
                    chain
                        .iter()
                        .map(|&j| (from(j), self.metas[j].assets.as_slice())),
                ),
                assets::inherit(
                    chain
                        .iter()
                        .map(|&j| (from(j), self.metas[j].scripts.as_slice())),
                ),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(ResolvedSkill {
            skill_path: self.docs[i].skill_path.clone(),
            content,
            assets: self.metas[i].assets.clone(),
            scripts: self.metas[i].scripts.clone(),
            inherited_assets,
            inherited_scripts,
        })
    }

    /// Spec 7.5: which file an asset or script request refers to. The skill must exist, the
    /// file argument must be a clean relative path; then the skill's own assets and scripts,
    /// then (with `inherit: true`) each ancestor's, nearest first.
    pub fn locate_asset(&self, skill_path: &str, file: &str) -> Result<AssetLocation, Error> {
        let i = self.find(skill_path)?;
        paths::validate_relative(file).map_err(Error::InvalidPath)?;
        let mut looked = vec![i];
        if self.metas[i].inherit {
            looked.extend(self.ancestors(i));
        }
        for &j in &looked {
            let m = &self.metas[j];
            if let Some(a) = m.assets.iter().chain(&m.scripts).find(|a| a.file == file) {
                let mut asset = a.clone();
                asset.from = (j != i).then(|| self.docs[j].skill_path.clone());
                let dir = m.resource_dir.as_deref().unwrap_or_default();
                return Ok(AssetLocation {
                    asset,
                    root: m.root,
                    path: paths::join(dir, file),
                });
            }
        }
        let names: Vec<&str> = looked
            .iter()
            .map(|&j| self.docs[j].skill_path.as_str())
            .collect();
        Err(Error::NotFound(format!(
            "no asset or script `{}` in skill `{skill_path}` (looked in: {})",
            crate::paths::echo(file),
            names.join(", ")
        )))
    }

    /// The skill tree (spec 8.2), flattened, node 0 the root of the returned subtree.
    ///
    /// Nodes are folders of skill paths. A folder node carries the skill at its own path, or
    /// else its category skill `<folder>/_index` (which then does not appear as a separate
    /// `_index` child); the root node (name `""`, or `_root` when it carries it) carries
    /// `_root`. Folders without a skill are plain nodes (path = folder path). Children are
    /// sorted by name. `path` selects a subtree by folder path (`ui`) or skill path
    /// (`api/_index`, `_root`); anything else is `NotFound`.
    pub fn tree(&self, path: Option<&str>) -> Result<Vec<TreeNode>, Error> {
        self.ready()?;
        struct Node {
            name: String,
            folder: String,
            skill: Option<usize>,
            children: BTreeMap<String, usize>,
        }
        let mut nodes = vec![Node {
            name: String::new(),
            folder: String::new(),
            skill: None,
            children: BTreeMap::new(),
        }];
        let mut by_folder: HashMap<String, usize> = HashMap::from([(String::new(), 0)]);
        fn ensure(
            nodes: &mut Vec<Node>,
            by_folder: &mut HashMap<String, usize>,
            folder: &str,
        ) -> usize {
            if let Some(&n) = by_folder.get(folder) {
                return n;
            }
            let parent = ensure(nodes, by_folder, paths::parent_dir(folder));
            let name = paths::file_name(folder).to_owned();
            let n = nodes.len();
            nodes.push(Node {
                name: name.clone(),
                folder: folder.to_owned(),
                skill: None,
                children: BTreeMap::new(),
            });
            nodes[parent].children.insert(name, n);
            by_folder.insert(folder.to_owned(), n);
            n
        }
        let is_category = |p: &str| p == "_root" || p.ends_with("/_index");
        for (i, d) in self.docs.iter().enumerate() {
            if !is_category(&d.skill_path) {
                let n = ensure(&mut nodes, &mut by_folder, &d.skill_path);
                nodes[n].skill = Some(i);
            }
        }
        let mut by_skill: HashMap<usize, usize> = HashMap::new();
        for (i, d) in self.docs.iter().enumerate() {
            if !is_category(&d.skill_path) {
                continue;
            }
            let folder = if d.skill_path == "_root" {
                ""
            } else {
                paths::parent_dir(&d.skill_path)
            };
            let n = ensure(&mut nodes, &mut by_folder, folder);
            if nodes[n].skill.is_none() {
                nodes[n].skill = Some(i);
                if n == 0 {
                    nodes[0].name = "_root".into();
                }
            } else {
                // The folder already carries a skill of its own path: a literal child.
                let c = nodes.len();
                nodes.push(Node {
                    name: paths::file_name(&d.skill_path).to_owned(),
                    folder: d.skill_path.clone(),
                    skill: Some(i),
                    children: BTreeMap::new(),
                });
                let name = nodes[c].name.clone();
                nodes[n].children.insert(name, c);
                by_skill.insert(i, c);
            }
        }
        for (n, node) in nodes.iter().enumerate() {
            if let Some(i) = node.skill {
                by_skill.entry(i).or_insert(n);
            }
        }
        let start = match path.map(|p| p.trim().trim_end_matches('/')) {
            None | Some("") => 0,
            Some(p) => self
                .position(p)
                .and_then(|i| by_skill.get(&i).copied())
                .or_else(|| by_folder.get(p).copied())
                .ok_or_else(|| self.not_found(p))?,
        };
        // Flatten in pre-order from `start`.
        let mut out: Vec<TreeNode> = Vec::new();
        let mut stack = vec![(start, None::<usize>)];
        while let Some((n, parent)) = stack.pop() {
            let idx = out.len();
            let node = &nodes[n];
            out.push(TreeNode {
                name: node.name.clone(),
                path: node
                    .skill
                    .map_or_else(|| node.folder.clone(), |i| self.docs[i].skill_path.clone()),
                skill: node.skill.map(|i| self.info(i)),
                children: Vec::new(),
            });
            if let Some(p) = parent {
                out[p].children.push(u32::try_from(idx).unwrap_or(u32::MAX));
            }
            for &c in node.children.values().rev() {
                stack.push((c, Some(idx)));
            }
        }
        Ok(out)
    }

    /// Every file of a skill (see the module docs for the layout).
    pub fn manifest(&self, skill_path: &str) -> Result<Vec<ManifestFile>, Error> {
        let i = self.find(skill_path)?;
        let m = &self.metas[i];
        let listing = &self.roots[m.root as usize].listing;
        let mut out = Vec::new();
        let size = listing.size(&m.file).unwrap_or(0);
        match m.shape {
            SkillShape::AgentSkill => {
                let folder = m.resource_dir.as_deref().unwrap_or_default();
                out.push(ManifestFile {
                    relative: "SKILL.md".into(),
                    root: m.root,
                    path: m.file.clone(),
                    size,
                });
                for (rel, size) in listing.folder_files(folder, &m.file) {
                    out.push(ManifestFile {
                        path: paths::join(folder, &rel),
                        relative: rel,
                        root: m.root,
                        size,
                    });
                }
            }
            SkillShape::Hierarchical => {
                out.push(ManifestFile {
                    relative: paths::file_name(&m.file).to_owned(),
                    root: m.root,
                    path: m.file.clone(),
                    size,
                });
                if let Some(dir) = m.resource_dir.as_deref() {
                    for (p, size) in listing.unowned_files_under(dir) {
                        out.push(ManifestFile {
                            relative: paths::strip_dir(p, dir).to_owned(),
                            root: m.root,
                            path: p.to_owned(),
                            size,
                        });
                    }
                }
            }
        }
        Ok(out)
    }

    /// Where the Skills extension lists each skill (see [`crate::extension`]).
    pub fn extension_map(&self) -> &ExtensionMap {
        self.extension
            .get_or_init(|| ExtensionMap::new(self.docs.iter().map(|d| d.skill_path.as_str())))
    }

    /// Every skill the Skills extension lists, sorted by ext path (empty before `finish`).
    pub fn extension_skills(&self) -> Vec<ExtensionSkill> {
        self.extension_map()
            .listed
            .iter()
            .map(|(ext, i)| ExtensionSkill {
                skill_path: self.docs[*i].skill_path.clone(),
                ext_path: ext.clone(),
            })
            .collect()
    }

    /// The `SKILL.md` the Skills extension serves for a skill, with its frontmatter (see
    /// [`crate::extension`]). For an Agent Skills folder: the file itself when its frontmatter
    /// already says the extension's name (and a description), else the file with those lines
    /// set; for a hierarchical skill: its frontmatter with the name set, and the resolved
    /// content as body. A skill the extension leaves out is `invalid-argument` saying why.
    pub fn extension_skill_md(
        &self,
        files: &dyn Files,
        skill_path: &str,
    ) -> Result<ServedSkillMd, Error> {
        let i = self.find(skill_path)?;
        let ext_path = self.extension_map().ext_path(i).map_err(|why| {
            Error::InvalidArgument(format!(
                "the skill `{skill_path}` is not served by the Skills extension: {why}"
            ))
        })?;
        let name = extension::name_of(ext_path);
        let m = &self.metas[i];
        let bytes = files.read(m.root, &m.file).map_err(|e| {
            Error::ReadFailed(format!("cannot read `{}` of root {}: {e}", m.file, m.root))
        })?;
        let mut notes = Vec::new();
        let text = frontmatter::decode(&bytes, &mut notes);
        let Split::Found(block) = frontmatter::split(&text) else {
            return Err(Error::Other(format!(
                "`{}` has no frontmatter any more (changed since it was indexed?)",
                m.file
            )));
        };
        let clean = frontmatter::clean_yaml(&block, &mut notes);
        let (yaml, map, changed) =
            extension::fix_frontmatter(&clean, name, &self.docs[i].description)
                .map_err(|why| Error::Other(format!("`{}`: {why}", m.file)))?;
        let frontmatter_json = frontmatter::to_json(&map);
        let bytes = match m.shape {
            // Served as written when a reader that is not ours finds the same frontmatter.
            SkillShape::AgentSkill
                if !changed
                    && notes.is_empty()
                    && block.leading_blank_lines == 0
                    && matches!(clean, std::borrow::Cow::Borrowed(_)) =>
            {
                bytes
            }
            SkillShape::AgentSkill => format!("---\n{yaml}---\n{}", block.body).into_bytes(),
            SkillShape::Hierarchical => {
                let resolved = self.resolve(files, skill_path)?;
                let mut out = format!("---\n{yaml}---\n\n{}", resolved.content);
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                out.into_bytes()
            }
        };
        Ok(ServedSkillMd {
            ext_path: ext_path.to_owned(),
            name: name.to_owned(),
            bytes,
            frontmatter_json,
        })
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

/// The `metadata` mapping of a frontmatter, if it is one.
fn metadata(map: &Mapping) -> Option<&Mapping> {
    match frontmatter::get(map, "metadata") {
        Some(Value::Mapping(m)) => Some(m),
        _ => None,
    }
}

/// Routing hints: the [`HINT_KEYS`] fields (top level, then inside `metadata`), one per line,
/// at most [`HINTS_MAX_BYTES`].
fn hints(map: &Mapping) -> String {
    let mut out = String::new();
    let sources = std::iter::once(map).chain(metadata(map));
    for m in sources {
        for key in HINT_KEYS {
            if let Some(v) = frontmatter::get(m, key) {
                let items = frontmatter::string_list(v);
                if items.is_empty() {
                    continue;
                }
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&items.join(", "));
            }
        }
    }
    frontmatter::prefix(&out, HINTS_MAX_BYTES).to_owned()
}

/// The skill path of a root-level `SKILL.md` (see the module docs).
fn root_skill_path(root_name: &str, map: &Mapping) -> String {
    let from_root = root_name
        .split(['/', '\\'])
        .map(str::trim)
        .rfind(|s| !s.is_empty() && *s != "." && *s != "..");
    if let Some(s) = from_root {
        return s.to_owned();
    }
    frontmatter::get(map, "name")
        .and_then(frontmatter::scalar_string)
        .map(|s| resolve::agent_name(&s))
        .unwrap_or_else(|| "skill".into())
}

/// The default name of a hierarchical skill: its last path segment; `_index` -> its folder's
/// name (`_index` at the top level).
fn default_hierarchical_name(skill_path: &str) -> String {
    let last = paths::file_name(skill_path);
    if last == "_index" {
        let folder = paths::parent_dir(skill_path);
        if !folder.is_empty() {
            return paths::file_name(folder).to_owned();
        }
    }
    last.to_owned()
}

/// Agent Skills `name` rules, as messages (empty when the name is valid).
fn name_problems(name: &str, folder: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let len = name.chars().count();
    if len > 64 {
        out.push(format!(
            "`name` is {len} characters; the Agent Skills format allows at most 64"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        out.push(format!(
            "`name` `{name}` should use only lowercase letters a-z, digits and `-` (Agent Skills format)"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        out.push(format!("`name` `{name}` should not start or end with `-`"));
    }
    if name.contains("--") {
        out.push(format!("`name` `{name}` should not contain `--`"));
    }
    if let Some(folder) = folder
        && folder != name
    {
        out.push(format!(
            "`name` `{name}` differs from its folder name `{folder}`; the Agent Skills format expects them equal"
        ));
    }
    out
}

/// Levenshtein distance over characters.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// How hosts must walk a root.
pub fn walk_policy() -> WalkPolicy {
    WalkPolicy {
        skip_dir_names: vec![".git".into(), "node_modules".into()],
        max_depth: 32,
        max_entries: 200_000,
        max_skill_file_bytes: 4 * 1024 * 1024,
    }
}

/// Longest query (or routing context) read, in bytes: a few sentences fit many times over.
pub const MAX_QUERY_BYTES: usize = 8 * 1024;
/// Most words (whitespace-separated) in a query or routing context.
pub const MAX_QUERY_WORDS: usize = 512;

/// Refuse an empty query, or one longer than [`MAX_QUERY_BYTES`] or [`MAX_QUERY_WORDS`], before
/// any work (the message gives sizes, never the query back).
pub fn check_query(query: &str) -> Result<(), Error> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(Error::InvalidArgument(format!(
            "the query is {} bytes long; at most {MAX_QUERY_BYTES} bytes and {MAX_QUERY_WORDS} words are allowed: give a sentence or two about the task",
            query.len()
        )));
    }
    let words = query.split_whitespace().take(MAX_QUERY_WORDS + 1).count();
    if words == 0 {
        return Err(Error::InvalidArgument("the query is empty".into()));
    }
    if words > MAX_QUERY_WORDS {
        return Err(Error::InvalidArgument(format!(
            "the query has more than {MAX_QUERY_WORDS} words; at most {MAX_QUERY_WORDS} words and {MAX_QUERY_BYTES} bytes are allowed: give a sentence or two about the task"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;

mod snapshot;

pub mod editor;
