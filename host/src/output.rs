//! The engine's answers (the types `bindgen!` generates from the WIT) as the engine crate's own
//! model types, so that the host prints them with [`skills_engine::output`], the same functions
//! the stock-WASI command `skills-engine-cli` uses: one formatting, by construction. Field for
//! field copies (moved where the answer is owned), nothing else.

use skills_engine::model as m;

use crate::runtime as r;

pub fn hit(h: r::SearchHit) -> m::SearchHit {
    m::SearchHit {
        skill_path: h.skill_path,
        name: h.name,
        description: h.description,
        score: h.score,
        matched: h.matched,
        version: h.version,
    }
}

pub fn hits(hs: Vec<r::SearchHit>) -> Vec<m::SearchHit> {
    hs.into_iter().map(hit).collect()
}

pub fn explanation(e: &r::Explanation) -> m::Explanation {
    m::Explanation {
        skill_path: e.skill_path.clone(),
        score: e.score,
        terms: e
            .terms
            .iter()
            .map(|t| m::ExplainTerm {
                field: t.field.clone(),
                term: t.term.clone(),
                contribution: t.contribution,
            })
            .collect(),
        notes: e.notes.clone(),
    }
}

pub fn severity(s: r::Severity) -> m::Severity {
    match s {
        r::Severity::Info => m::Severity::Info,
        r::Severity::Warning => m::Severity::Warning,
        r::Severity::Error => m::Severity::Error,
    }
}

pub fn report(rep: &r::FileReport) -> m::FileReport {
    m::FileReport {
        root: rep.root,
        path: rep.path.clone(),
        skill_path: rep.skill_path.clone(),
        worst: rep.worst.map(severity),
        diagnostics: rep
            .diagnostics
            .iter()
            .map(|d| m::Diagnostic {
                root: d.root,
                path: d.path.clone(),
                line: d.line,
                severity: severity(d.severity),
                message: d.message.clone(),
            })
            .collect(),
    }
}

/// A model report back as the runtime's (the catalog hands out runtime types).
pub fn report_back(rep: m::FileReport) -> r::FileReport {
    let back = |s: m::Severity| match s {
        m::Severity::Info => r::Severity::Info,
        m::Severity::Warning => r::Severity::Warning,
        m::Severity::Error => r::Severity::Error,
    };
    r::FileReport {
        root: rep.root,
        path: rep.path,
        skill_path: rep.skill_path,
        worst: rep.worst.map(back),
        diagnostics: rep
            .diagnostics
            .into_iter()
            .map(|d| r::Diagnostic {
                root: d.root,
                path: d.path,
                line: d.line,
                severity: back(d.severity),
                message: d.message,
            })
            .collect(),
    }
}

/// The engine's walk policy as the engine crate's walk reads it.
pub fn walk_policy(p: &r::WalkPolicy) -> m::WalkPolicy {
    m::WalkPolicy {
        skip_dir_names: p.skip_dir_names.clone(),
        max_depth: p.max_depth,
        max_entries: p.max_entries,
        max_skill_file_bytes: p.max_skill_file_bytes,
        max_batch_bytes: p.max_batch_bytes,
        max_batch_files: p.max_batch_files,
    }
}

/// A listed entry back as the runtime's (handed to `add-root`).
pub fn entry_back(e: m::Entry) -> r::Entry {
    r::Entry {
        path: e.path,
        kind: match e.kind {
            m::EntryKind::File => r::EntryKind::File,
            m::EntryKind::Directory => r::EntryKind::Directory,
            m::EntryKind::Symlink => r::EntryKind::Symlink,
        },
        size: e.size,
    }
}

pub fn asset(a: &r::AssetInfo) -> m::AssetInfo {
    m::AssetInfo {
        file: a.file.clone(),
        description: a.description.clone(),
        asset_type: a.asset_type.clone(),
        is_binary: a.is_binary,
        mime_type: a.mime_type.clone(),
        size: a.size,
        from: a.from.clone(),
        script: a.script.as_ref().map(|s| m::ScriptInfo {
            execution: match s.execution {
                r::Execution::Claude => m::Execution::Claude,
                r::Execution::Server => m::Execution::Server,
            },
            args: s
                .args
                .iter()
                .map(|a| m::ScriptArg {
                    name: a.name.clone(),
                    description: a.description.clone(),
                    required: a.required,
                })
                .collect(),
        }),
    }
}

pub fn resolved(s: &r::ResolvedSkill) -> m::ResolvedSkill {
    let list = |v: &[r::AssetInfo]| v.iter().map(asset).collect();
    m::ResolvedSkill {
        skill_path: s.skill_path.clone(),
        content: s.content.clone(),
        assets: list(&s.assets),
        scripts: list(&s.scripts),
        inherited_assets: list(&s.inherited_assets),
        inherited_scripts: list(&s.inherited_scripts),
    }
}

/// An audit's skill, its paths, words and messages escaped (they come from skill files: a
/// control character in one must not reach the terminal raw).
pub fn audit_skill(s: r::AuditSkill) -> skills_engine::index::AuditSkill {
    use crate::logsafe::escape;
    use skills_engine::index::{AuditCompetitor, AuditFinding, AuditFindingKind};
    let words = |w: Vec<String>| w.iter().map(|w| escape(w)).collect();
    skills_engine::index::AuditSkill {
        skill_path: escape(&s.skill_path),
        requests: s.requests,
        derived: s.derived,
        competitors: s
            .competitors
            .into_iter()
            .map(|c| AuditCompetitor {
                skill_path: escape(&c.skill_path),
                strength: c.strength,
                shared: words(c.shared),
                separating: words(c.separating),
            })
            .collect(),
        findings: s
            .findings
            .into_iter()
            .map(|f| AuditFinding {
                kind: match f.kind {
                    r::AuditFindingKind::Unreachable => AuditFindingKind::Unreachable,
                    r::AuditFindingKind::Duplicate => AuditFindingKind::Duplicate,
                    r::AuditFindingKind::Hijacker => AuditFindingKind::Hijacker,
                },
                message: escape(&f.message),
            })
            .collect(),
    }
}
