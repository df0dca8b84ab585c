//! The component boundary: generated WIT bindings and conversions to `crate::model`.
//!
//! This is the only module that names a generated type. It exports the `engine` interface of
//! `wit/engine.wit` by delegating to [`crate::Index`], [`crate::walk`] and
//! [`crate::validate_relative_path`], and implements [`crate::model::Files`] over the imported
//! `files.read`. Everything here is a conversion; no rule about skills lives here.

// The glue that `generate!` and `export!` expand to defines the canonical-ABI entry points,
// which are `unsafe` by nature; no hand-written code in this module uses `unsafe`.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::sync::Arc;

use crate::model as m;

wit_bindgen::generate!({
    path: "../wit",
    world: "skills-engine",
});

use exports::skills_mcp::engine::engine as x;
use skills_mcp::engine::types as t;

/// The exported component.
struct Component;

export!(Component);

impl x::Guest for Component {
    type Index = IndexResource;

    fn get_walk_policy() -> t::WalkPolicy {
        let p = crate::walk_policy();
        t::WalkPolicy {
            skip_dir_names: p.skip_dir_names,
            max_depth: p.max_depth,
            max_entries: p.max_entries,
            max_skill_file_bytes: p.max_skill_file_bytes,
            max_batch_bytes: p.max_batch_bytes,
            max_batch_files: p.max_batch_files,
        }
    }

    fn walk_folder(
        root: u32,
        path: String,
        depth: u32,
        listed: u32,
        children: Vec<t::FolderChild>,
    ) -> t::FolderStep {
        let children = children
            .into_iter()
            .map(|c| m::FolderChild {
                name: c.name,
                kind: match c.kind {
                    t::ChildKind::File => m::ChildKind::File,
                    t::ChildKind::Directory => m::ChildKind::Directory,
                    t::ChildKind::Symlink => m::ChildKind::Symlink,
                    t::ChildKind::Special(what) => m::ChildKind::Special(what),
                },
                size: c.size,
            })
            .collect();
        let step = crate::walk::folder_step_of(
            root,
            &path,
            depth,
            listed,
            children,
            &crate::walk_policy(),
        );
        t::FolderStep {
            entries: step
                .entries
                .into_iter()
                .map(|e| t::Entry {
                    path: e.path,
                    kind: match e.kind {
                        m::EntryKind::File => t::EntryKind::File,
                        m::EntryKind::Directory => t::EntryKind::Directory,
                        m::EntryKind::Symlink => t::EntryKind::Symlink,
                    },
                    size: e.size,
                })
                .collect(),
            enter: step.enter,
            findings: step.findings.into_iter().map(report).collect(),
            stop: step.stop,
            too_deep: step.too_deep,
        }
    }

    fn validate_relative_path(path: String) -> Result<String, t::Error> {
        crate::validate_relative_path(&path).map_err(error)
    }

    fn shorten(text: String, limit: u32) -> String {
        crate::tiers::shorten(&text, limit as usize)
    }

    fn check_skill(
        config: t::EngineConfig,
        path: String,
        bytes: Vec<u8>,
        listing: Vec<t::Entry>,
    ) -> Result<x::SkillCheck, t::Error> {
        editor::check_skill(config, path, bytes, listing)
    }

    fn parse_eval_queries(bytes: Vec<u8>) -> Result<Vec<x::EvalQuery>, Vec<x::EvalProblem>> {
        evals::parse(&bytes)
    }
}

/// The `index` resource: a [`crate::Index`] behind a `RefCell` (resource methods take `&self`;
/// a component instance is single-threaded).
///
/// No `RefCell` borrow is ever held across a call of an import (`files.read`): a host whose
/// import unwinds instead of returning (a JavaScript `read` that throws) skips the guest's
/// destructors, and a borrow left behind would make every later call panic. Queries clone the
/// `Arc` out of the cell and release the borrow before running; at worst an unwound call leaks
/// one `Arc` count. Build calls take the index mutably for their duration only, and none of
/// them calls an import.
struct IndexResource(RefCell<Arc<crate::Index>>);

impl IndexResource {
    /// The index for a query (no borrow outlives this call).
    fn get(&self) -> Arc<crate::Index> {
        Arc::clone(&self.0.borrow())
    }

    /// Run a build call (`add-root`, `add-files`, `finish`, `restore-section`) on the index.
    fn build<R>(
        &self,
        call: &str,
        f: impl FnOnce(&mut crate::Index) -> Result<R, m::Error>,
    ) -> Result<R, t::Error> {
        let mut slot = self.0.borrow_mut();
        match Arc::get_mut(&mut slot) {
            Some(index) => f(index).map_err(error),
            // Only an unwound query leaves another `Arc` behind, and queries read only once the
            // index is finished, when every build call is refused anyway: say why.
            None => Err(error(slot.check_building(call).err().unwrap_or_else(
                || m::Error::Other(format!("{call}: the index is in use")),
            ))),
        }
    }

    /// Like [`Self::get`], for the queries that answer nothing useful before `finish`.
    fn ready(&self) -> Result<Arc<crate::Index>, t::Error> {
        let index = self.get();
        index.ready().map_err(error)?;
        Ok(index)
    }
}

/// `model::Files` over the imported `files.read`.
struct HostFiles;

impl m::Files for HostFiles {
    fn read(&self, root: u32, path: &str) -> Result<Vec<u8>, String> {
        skills_mcp::engine::files::read(root, path)
    }
}

impl x::GuestIndex for IndexResource {
    fn new(config: t::EngineConfig) -> Self {
        let config = m::EngineConfig {
            algorithm: match config.algorithm {
                t::Algorithm::Ranked => m::Algorithm::Ranked,
                t::Algorithm::Keywords => m::Algorithm::Keywords,
            },
            min_score: config.min_score,
            ambiguity_threshold: config.ambiguity_threshold,
            max_results: config.max_results,
        };
        IndexResource(RefCell::new(Arc::new(crate::Index::new(config))))
    }

    fn add_root(&self, name: String, listing: Vec<t::Entry>) -> Result<Vec<String>, t::Error> {
        let listing = listing
            .into_iter()
            .map(|e| m::Entry {
                path: e.path,
                kind: match e.kind {
                    t::EntryKind::File => m::EntryKind::File,
                    t::EntryKind::Directory => m::EntryKind::Directory,
                    t::EntryKind::Symlink => m::EntryKind::Symlink,
                },
                size: e.size,
            })
            .collect();
        self.build("add-root", |index| index.add_root(&name, listing))
    }

    fn add_files(&self, root: u32, files: Vec<t::FileData>) -> Result<(), t::Error> {
        let files = files
            .into_iter()
            .map(|f| m::FileData {
                path: f.path,
                bytes: f.bytes,
            })
            .collect();
        self.build("add-files", |index| index.add_files(root, files))
    }

    fn finish(&self) -> Result<(), t::Error> {
        self.build("finish", crate::Index::finish)
    }

    fn len(&self) -> Result<u32, t::Error> {
        Ok(u32::try_from(self.ready()?.len()).unwrap_or(u32::MAX))
    }

    fn skills(&self) -> Result<Vec<t::SkillInfo>, t::Error> {
        Ok(self.ready()?.skills().into_iter().map(skill).collect())
    }

    fn catalogue(&self, budget: u32) -> Result<t::Catalogue, t::Error> {
        let (text, tier) =
            crate::tiers::index_catalogue(&*self.ready()?, budget as usize).map_err(error)?;
        Ok(t::Catalogue {
            text,
            tier: match tier {
                crate::tiers::Tier::Full => t::CatalogueTier::Full,
                crate::tiers::Tier::Compact => t::CatalogueTier::Compact,
                crate::tiers::Tier::Names => t::CatalogueTier::Names,
                crate::tiers::Tier::Categories => t::CatalogueTier::Categories,
            },
        })
    }

    fn summaries(&self, start: u32, count: u32) -> Result<Vec<t::SkillSummary>, t::Error> {
        let index = self.ready()?;
        Ok(
            crate::views::summaries(&index, start as usize, count as usize)
                .into_iter()
                .map(|s| t::SkillSummary {
                    skill_path: s.skill_path,
                    name: s.name,
                    description: s.description,
                })
                .collect(),
        )
    }

    fn get(&self, path_or_name: String) -> Result<t::SkillInfo, t::Error> {
        self.get().get(&path_or_name).map(skill).map_err(error)
    }

    fn suggest(&self, path_or_name: String, limit: u32) -> Result<Vec<String>, t::Error> {
        Ok(self.ready()?.suggest(&path_or_name, limit))
    }

    fn search(&self, query: String, limit: u32) -> Result<Vec<t::SearchHit>, t::Error> {
        self.get()
            .search(&query, limit)
            .map(|hits| hits.into_iter().map(hit).collect())
            .map_err(error)
    }

    fn search_brief(&self, query: String, limit: u32) -> Result<Vec<t::SearchHit>, t::Error> {
        self.get()
            .search_brief(&query, limit)
            .map(|hits| hits.into_iter().map(hit).collect())
            .map_err(error)
    }

    fn explain(&self, query: String, skill_path: String) -> Result<t::Explanation, t::Error> {
        self.get()
            .explain(&query, &skill_path)
            .map(|e| t::Explanation {
                skill_path: e.skill_path,
                score: e.score,
                terms: e
                    .terms
                    .into_iter()
                    .map(|t| t::ExplainTerm {
                        field: t.field,
                        term: t.term,
                        contribution: t.contribution,
                    })
                    .collect(),
                notes: e.notes,
            })
            .map_err(error)
    }

    fn route(&self, context: String) -> Result<t::RouteOutcome, t::Error> {
        self.get()
            .route(&context)
            .map(|o| match o {
                m::RouteOutcome::NoMatch => t::RouteOutcome::NoMatch,
                m::RouteOutcome::Ambiguous(hits) => {
                    t::RouteOutcome::Ambiguous(hits.into_iter().map(hit).collect())
                }
                m::RouteOutcome::Matched(h) => t::RouteOutcome::Matched(hit(h)),
            })
            .map_err(error)
    }

    fn resolve(&self, skill_path: String) -> Result<t::ResolvedSkill, t::Error> {
        self.get()
            .resolve(&HostFiles, &skill_path)
            .map(|r| t::ResolvedSkill {
                skill_path: r.skill_path,
                content: r.content,
                assets: r.assets.into_iter().map(asset).collect(),
                scripts: r.scripts.into_iter().map(asset).collect(),
                inherited_assets: r.inherited_assets.into_iter().map(asset).collect(),
                inherited_scripts: r.inherited_scripts.into_iter().map(asset).collect(),
            })
            .map_err(error)
    }

    fn locate_asset(&self, skill_path: String, file: String) -> Result<t::AssetLocation, t::Error> {
        self.get()
            .locate_asset(&skill_path, &file)
            .map(|l| t::AssetLocation {
                asset: asset(l.asset),
                root: l.root,
                path: l.path,
            })
            .map_err(error)
    }

    fn tree(&self, path: Option<String>) -> Result<Vec<t::TreeNode>, t::Error> {
        self.get()
            .tree(path.as_deref())
            .map(|nodes| {
                nodes
                    .into_iter()
                    .map(|n| t::TreeNode {
                        name: n.name,
                        path: n.path,
                        skill: n.skill.map(skill),
                        children: n.children,
                    })
                    .collect()
            })
            .map_err(error)
    }

    fn manifest(&self, skill_path: String) -> Result<Vec<t::ManifestFile>, t::Error> {
        self.get()
            .manifest(&skill_path)
            .map(|files| {
                files
                    .into_iter()
                    .map(|f| t::ManifestFile {
                        relative: f.relative,
                        root: f.root,
                        path: f.path,
                        size: f.size,
                    })
                    .collect()
            })
            .map_err(error)
    }

    fn extension_skills(&self) -> Vec<t::ExtensionSkill> {
        self.get()
            .extension_skills()
            .into_iter()
            .map(|s| t::ExtensionSkill {
                skill_path: s.skill_path,
                ext_path: s.ext_path,
                name: s.name,
            })
            .collect()
    }

    fn extension_skill_md(&self, skill_path: String) -> Result<t::ServedSkillMd, t::Error> {
        self.get()
            .extension_skill_md(&HostFiles, &skill_path)
            .map(|s| t::ServedSkillMd {
                ext_path: s.ext_path,
                name: s.name,
                bytes: s.bytes,
                frontmatter_json: s.frontmatter_json,
            })
            .map_err(error)
    }

    fn reports(&self) -> Result<Vec<t::FileReport>, t::Error> {
        Ok(self.ready()?.reports().into_iter().map(report).collect())
    }

    fn diagnostics(&self) -> Result<Vec<t::Diagnostic>, t::Error> {
        Ok(self
            .ready()?
            .diagnostics()
            .into_iter()
            .map(diagnostic)
            .collect())
    }

    fn snapshot_sections(&self) -> Result<u32, t::Error> {
        self.get().snapshot_sections().map_err(error)
    }

    fn snapshot_section(&self, n: u32) -> Result<Vec<u8>, t::Error> {
        self.get().snapshot_section(n).map_err(error)
    }

    fn restore_section(&self, n: u32, count: u32, bytes: Vec<u8>) -> Result<(), t::Error> {
        self.build("restore-section", |index| {
            index.restore_section(n, count, &bytes)
        })
    }

    fn score_draft(
        &self,
        path: String,
        bytes: Vec<u8>,
        requests: Vec<String>,
        limit: u32,
    ) -> Result<x::DraftRanking, t::Error> {
        editor::score_draft(&self.get(), path, bytes, requests, limit)
    }

    fn check_skill(
        &self,
        path: String,
        bytes: Vec<u8>,
        listing: Vec<t::Entry>,
    ) -> Result<x::SkillCheck, t::Error> {
        editor::check_skill_in(&self.get(), path, bytes, listing)
    }

    fn eval_file(&self, skill_path: String) -> Result<x::EvalFile, t::Error> {
        evals::eval_file(&self.get(), &skill_path)
    }

    fn eval_files(&self) -> Result<Vec<x::EvalFile>, t::Error> {
        evals::eval_files(&self.get())
    }

    fn evaluate(
        &self,
        skill_path: String,
        queries: Vec<x::EvalQuery>,
        accept_ambiguous: bool,
    ) -> Result<x::SkillEval, t::Error> {
        evals::evaluate(&self.get(), &skill_path, queries, accept_ambiguous)
    }

    fn evaluate_draft(
        &self,
        path: String,
        bytes: Vec<u8>,
        queries: Vec<x::EvalQuery>,
        accept_ambiguous: bool,
    ) -> Result<x::SkillEval, t::Error> {
        evals::evaluate_draft(&self.get(), &path, &bytes, queries, accept_ambiguous)
    }

    fn audit(&self, requests: Vec<x::SkillRequests>) -> Result<Vec<x::AuditSkill>, t::Error> {
        audit::audit(&self.get(), requests)
    }

    fn audit_part(
        &self,
        requests: Vec<x::SkillRequests>,
        part: u32,
        parts: u32,
    ) -> Result<Vec<u8>, t::Error> {
        self.get()
            .audit_part(&audit::given(requests), part, parts)
            .map_err(error)
    }

    fn audit_merge(
        &self,
        requests: Vec<x::SkillRequests>,
        parts: Vec<Vec<u8>>,
    ) -> Result<Vec<x::AuditSkill>, t::Error> {
        let skills = self
            .get()
            .audit_merge(&audit::given(requests), &parts)
            .map_err(error)?;
        Ok(skills.into_iter().map(audit::skill).collect())
    }

    fn audit_merge_share(
        &self,
        requests: Vec<x::SkillRequests>,
        parts: Vec<Vec<u8>>,
        share: u32,
        shares: u32,
    ) -> Result<Vec<u8>, t::Error> {
        self.get()
            .audit_merge_share(&audit::given(requests), &parts, share, shares)
            .map_err(error)
    }

    fn audit_gather(&self, shares: Vec<Vec<u8>>) -> Result<Vec<x::AuditSkill>, t::Error> {
        let skills = self.get().audit_gather(&shares).map_err(error)?;
        Ok(skills.into_iter().map(audit::skill).collect())
    }

    fn audit_one(
        &self,
        skill_path: String,
        requests: Vec<String>,
    ) -> Result<x::AuditSkill, t::Error> {
        self.get()
            .audit_one(&skill_path, &requests)
            .map(audit::skill)
            .map_err(error)
    }

    fn audit_requests(&self, skill_path: String) -> Result<Vec<String>, t::Error> {
        self.get().audit_requests(&skill_path).map_err(error)
    }

    fn set_access(&self, rules: Vec<t::AccessRule>) -> Result<Vec<t::AccessFinding>, t::Error> {
        let rules = rules
            .into_iter()
            .map(|r| crate::access::Rule {
                skills: r.skills,
                roots: r.roots,
                groups: r.groups,
                subjects: r.subjects,
                scopes: r.scopes,
            })
            .collect();
        // The index is cloned out of the cell first: `set-access` may call `files.read`.
        let index = self.get();
        let findings = index.set_access(&HostFiles, rules).map_err(error)?;
        Ok(findings
            .into_iter()
            .map(|f| t::AccessFinding {
                key: f.key,
                severity: if f.error {
                    t::Severity::Error
                } else {
                    t::Severity::Warning
                },
                message: f.message,
            })
            .collect())
    }

    fn view(&self, caller: t::Caller) -> Result<x::Index, t::Error> {
        let index = self.get();
        let view = with_caller(&caller, |c| index.view(c)).map_err(error)?;
        Ok(x::Index::new(IndexResource(RefCell::new(
            view.unwrap_or(index),
        ))))
    }

    fn hidden(&self, caller: t::Caller) -> Result<Vec<t::HiddenSkill>, t::Error> {
        let index = self.get();
        let hidden = with_caller(&caller, |c| index.hidden(c)).map_err(error)?;
        Ok(hidden
            .into_iter()
            .map(|h| t::HiddenSkill {
                path: h.path,
                rules: h.rules,
            })
            .collect())
    }
}

/// `f` with the engine's form of a WIT caller.
fn with_caller<R>(caller: &t::Caller, f: impl FnOnce(crate::access::Caller<'_>) -> R) -> R {
    match caller {
        t::Caller::Unrestricted => f(crate::access::Caller::Unrestricted),
        t::Caller::Identity(id) => f(crate::access::Caller::Identity {
            subject: id.subject.as_deref(),
            groups: &id.groups,
            scopes: &id.scopes,
        }),
    }
}

fn report(r: m::FileReport) -> t::FileReport {
    t::FileReport {
        root: r.root,
        path: r.path,
        skill_path: r.skill_path,
        worst: r.worst.map(severity),
        diagnostics: r.diagnostics.into_iter().map(diagnostic).collect(),
    }
}

fn diagnostic(d: m::Diagnostic) -> t::Diagnostic {
    t::Diagnostic {
        root: d.root,
        path: d.path,
        line: d.line,
        severity: severity(d.severity),
        message: d.message,
    }
}

fn severity(s: m::Severity) -> t::Severity {
    match s {
        m::Severity::Info => t::Severity::Info,
        m::Severity::Warning => t::Severity::Warning,
        m::Severity::Error => t::Severity::Error,
    }
}

fn skill(s: m::SkillInfo) -> t::SkillInfo {
    t::SkillInfo {
        skill_path: s.skill_path,
        name: s.name,
        description: s.description,
        shape: match s.shape {
            m::SkillShape::AgentSkill => t::SkillShape::AgentSkill,
            m::SkillShape::Hierarchical => t::SkillShape::Hierarchical,
        },
        root: s.root,
        file: s.file,
        resource_dir: s.resource_dir,
        keywords: s.keywords,
        priority: s.priority,
        inherit: s.inherit,
        parent: s.parent,
        asset_count: s.asset_count,
        script_count: s.script_count,
        frontmatter_json: s.frontmatter_json,
        version: s.version,
    }
}

fn hit(h: m::SearchHit) -> t::SearchHit {
    t::SearchHit {
        skill_path: h.skill_path,
        name: h.name,
        description: h.description,
        score: h.score,
        matched: h.matched,
        version: h.version,
    }
}

fn asset(a: m::AssetInfo) -> t::AssetInfo {
    t::AssetInfo {
        file: a.file,
        description: a.description,
        asset_type: a.asset_type,
        is_binary: a.is_binary,
        mime_type: a.mime_type,
        size: a.size,
        from: a.from,
        script: a.script.map(|s| t::ScriptInfo {
            execution: match s.execution {
                m::Execution::Claude => t::Execution::Claude,
                m::Execution::Server => t::Execution::Server,
            },
            args: s
                .args
                .into_iter()
                .map(|a| t::ScriptArg {
                    name: a.name,
                    description: a.description,
                    required: a.required,
                })
                .collect(),
        }),
    }
}

fn error(e: m::Error) -> t::Error {
    match e {
        m::Error::NotFound(m) => t::Error::NotFound(m),
        m::Error::InvalidPath(m) => t::Error::InvalidPath(m),
        m::Error::InvalidArgument(m) => t::Error::InvalidArgument(m),
        m::Error::TooLarge(s) => t::Error::TooLarge(t::SizeError {
            path: s.path,
            size: s.size,
            limit: s.limit,
        }),
        m::Error::ReadFailed(m) => t::Error::ReadFailed(m),
        m::Error::NotReady => t::Error::NotReady,
        m::Error::Other(m) => t::Error::Other(m),
    }
}

/// The editor entry points (`check-skill`, `score-draft`): conversions only.
mod editor {
    use super::{diagnostic, error, severity, skill, t, x};
    use crate::index::editor as e;
    use crate::model as m;

    fn config(c: t::EngineConfig) -> m::EngineConfig {
        m::EngineConfig {
            algorithm: match c.algorithm {
                t::Algorithm::Ranked => m::Algorithm::Ranked,
                t::Algorithm::Keywords => m::Algorithm::Keywords,
            },
            min_score: c.min_score,
            ambiguity_threshold: c.ambiguity_threshold,
            max_results: c.max_results,
        }
    }

    fn entry(e: t::Entry) -> m::Entry {
        m::Entry {
            path: e.path,
            kind: match e.kind {
                t::EntryKind::File => m::EntryKind::File,
                t::EntryKind::Directory => m::EntryKind::Directory,
                t::EntryKind::Symlink => m::EntryKind::Symlink,
            },
            size: e.size,
        }
    }

    pub fn check_skill(
        c: t::EngineConfig,
        path: String,
        bytes: Vec<u8>,
        listing: Vec<t::Entry>,
    ) -> Result<x::SkillCheck, t::Error> {
        let listing = listing.into_iter().map(entry).collect();
        e::check_skill(&config(c), &path, &bytes, listing)
            .map(skill_check)
            .map_err(error)
    }

    pub fn check_skill_in(
        index: &crate::Index,
        path: String,
        bytes: Vec<u8>,
        listing: Vec<t::Entry>,
    ) -> Result<x::SkillCheck, t::Error> {
        let listing = listing.into_iter().map(entry).collect();
        index
            .check_skill(&path, &bytes, listing)
            .map(skill_check)
            .map_err(error)
    }

    fn skill_check(c: e::SkillCheck) -> x::SkillCheck {
        x::SkillCheck {
            skill: c.skill.map(skill),
            worst: c.worst.map(severity),
            diagnostics: c.diagnostics.into_iter().map(diagnostic).collect(),
            frontmatter_json: c.frontmatter_json,
            served_name: c.served_name,
            served_description: c.served_description,
            ext_path: c.ext_path,
            left_out: c.left_out,
        }
    }

    pub fn score_draft(
        index: &crate::Index,
        path: String,
        bytes: Vec<u8>,
        requests: Vec<String>,
        limit: u32,
    ) -> Result<x::DraftRanking, t::Error> {
        index
            .score_draft(&path, &bytes, &requests, limit)
            .map(|r| x::DraftRanking {
                skill_path: r.skill_path,
                replaces: r.replaces,
                requests: r
                    .requests
                    .into_iter()
                    .map(|d| x::DraftRank {
                        request: d.request,
                        score: d.score,
                        rank: d.rank,
                        matching: d.matching,
                        matched: d.matched,
                        above: d
                            .above
                            .into_iter()
                            .map(|a| x::Rival {
                                skill_path: a.skill_path,
                                name: a.name,
                                score: a.score,
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .map_err(error)
    }
}

/// The trigger-eval entry points (`parse-eval-queries`, `eval-file`, `eval-files`,
/// `evaluate`): conversions only.
mod evals {
    use super::{error, t, x};
    use crate::evals as e;

    pub fn parse(bytes: &[u8]) -> Result<Vec<x::EvalQuery>, Vec<x::EvalProblem>> {
        e::parse_eval_queries(bytes)
            .map(|queries| {
                queries
                    .into_iter()
                    .map(|q| x::EvalQuery {
                        query: q.query,
                        should_trigger: q.should_trigger,
                    })
                    .collect()
            })
            .map_err(|problems| {
                problems
                    .into_iter()
                    .map(|p| x::EvalProblem {
                        entry: p.entry,
                        line: p.line,
                        column: p.column,
                        message: p.message,
                    })
                    .collect()
            })
    }

    fn file(f: e::EvalFile) -> x::EvalFile {
        x::EvalFile {
            skill_path: f.skill_path,
            root: f.root,
            path: f.path,
            exists: f.exists,
        }
    }

    pub fn eval_file(index: &crate::Index, skill_path: &str) -> Result<x::EvalFile, t::Error> {
        index.eval_file(skill_path).map(file).map_err(error)
    }

    pub fn eval_files(index: &crate::Index) -> Result<Vec<x::EvalFile>, t::Error> {
        index
            .eval_files()
            .map(|files| files.into_iter().map(file).collect())
            .map_err(error)
    }

    fn queries(queries: Vec<x::EvalQuery>) -> Vec<e::EvalQuery> {
        queries
            .into_iter()
            .map(|q| e::EvalQuery {
                query: q.query,
                should_trigger: q.should_trigger,
            })
            .collect()
    }

    pub fn evaluate(
        index: &crate::Index,
        skill_path: &str,
        queries: Vec<x::EvalQuery>,
        accept_ambiguous: bool,
    ) -> Result<x::SkillEval, t::Error> {
        index
            .evaluate(skill_path, &self::queries(queries), accept_ambiguous)
            .map(skill_eval)
            .map_err(error)
    }

    pub fn evaluate_draft(
        index: &crate::Index,
        path: &str,
        bytes: &[u8],
        queries: Vec<x::EvalQuery>,
        accept_ambiguous: bool,
    ) -> Result<x::SkillEval, t::Error> {
        index
            .evaluate_draft(path, bytes, &self::queries(queries), accept_ambiguous)
            .map(skill_eval)
            .map_err(error)
    }

    fn skill_eval(eval: e::SkillEval) -> x::SkillEval {
        x::SkillEval {
            skill_path: eval.skill_path,
            passed: eval.all.passed,
            total: eval.all.total,
            train_passed: eval.train.passed,
            train_total: eval.train.total,
            validation_passed: eval.validation.passed,
            validation_total: eval.validation.total,
            results: eval
                .results
                .into_iter()
                .map(|r| x::EvalResult {
                    query: r.query,
                    should_trigger: r.should_trigger,
                    split: match r.split {
                        e::EvalSplit::Train => x::EvalSplit::Train,
                        e::EvalSplit::Validation => x::EvalSplit::Validation,
                    },
                    outcome: match r.outcome {
                        e::EvalOutcome::Matched => x::EvalOutcome::Matched,
                        e::EvalOutcome::Other(p) => x::EvalOutcome::Other(p),
                        e::EvalOutcome::Ambiguous(c) => x::EvalOutcome::Ambiguous(c),
                        e::EvalOutcome::NoMatch => x::EvalOutcome::NoMatch,
                    },
                    rank: r.rank,
                    passed: r.passed,
                })
                .collect(),
        }
    }
}

/// The collection audit (`audit`): conversions only.
mod audit {
    use super::{error, t, x};
    use crate::index::audit as a;

    /// The requests given for some skills, in the engine's terms.
    pub fn given(requests: Vec<x::SkillRequests>) -> Vec<a::SkillRequests> {
        requests
            .into_iter()
            .map(|r| a::SkillRequests {
                skill_path: r.skill_path,
                requests: r.requests,
            })
            .collect()
    }

    pub fn audit(
        index: &crate::Index,
        requests: Vec<x::SkillRequests>,
    ) -> Result<Vec<x::AuditSkill>, t::Error> {
        let skills = index.audit(&given(requests)).map_err(error)?;
        Ok(skills.into_iter().map(skill).collect())
    }

    pub fn skill(s: a::AuditSkill) -> x::AuditSkill {
        x::AuditSkill {
            skill_path: s.skill_path,
            requests: s.requests,
            derived: s.derived,
            competitors: s
                .competitors
                .into_iter()
                .map(|c| x::AuditCompetitor {
                    skill_path: c.skill_path,
                    strength: c.strength,
                    shared: c.shared,
                    separating: c.separating,
                })
                .collect(),
            findings: s
                .findings
                .into_iter()
                .map(|f| x::AuditFinding {
                    kind: match f.kind {
                        a::AuditFindingKind::Unreachable => x::AuditFindingKind::Unreachable,
                        a::AuditFindingKind::Duplicate => x::AuditFindingKind::Duplicate,
                        a::AuditFindingKind::Hijacker => x::AuditFindingKind::Hijacker,
                    },
                    message: f.message,
                })
                .collect(),
        }
    }
}
