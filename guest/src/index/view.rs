//! Views: the index as one caller sees it (issue 24).
//!
//! The operator's rules ([`crate::access`]) decide, per skill file, who may see it. A view is
//! made by the index build itself ([`super::build::assemble`]) run over the skill files the
//! caller may see, taken where `finish` takes them: after the resource-folder rule, before
//! shadowing across roots, parents, unique names and the search structures. So a view is, to
//! the last statistic, the index those files alone would give: a skill a hidden one shadowed
//! is served, a hidden parent passes neither content nor assets down, names are unique among
//! the visible skills, and document frequencies, field lengths and the normalisation are the
//! view's.
//!
//! What views are made from ([`Material`]): every skill file of the index (`reports` that
//! define a skill), read again once through [`Files`] when rules are first set (a built index
//! does not keep its files' analysed text, and a restored one never had it), parsed with
//! `parse_file` and analysed by one [`rank::Builder`], which each view clones to build its
//! search structures over its files ([`rank::Builder::build`], the one build). Views are
//! cached by the set of rules admitting the caller (which decides the visible set), the
//! [`VIEW_CACHE`] most recently used within [`VIEW_CACHE_SKILLS_FACTOR`] times the index's
//! skills; `set_access` drops them.
//!
//! A view's `reports` (and `diagnostics`) hold the files of its skills only, each with the
//! findings of its parse and those of the view's build: the findings of files that define no
//! skill, and of hidden ones, stay on the full index (the operator's `validate`).

use super::*;
use crate::access::{self, Caller, Finding, Rule, Subject};

/// How many views are kept (least recently used dropped first).
pub const VIEW_CACHE: usize = 64;

/// The cached views hold at most this many times the full index's skills (each view holds its
/// own copy of its skills and search structures; the least recently used are dropped first,
/// the newest view is always kept).
pub const VIEW_CACHE_SKILLS_FACTOR: usize = 4;

/// A skill hidden from a caller (see [`Index::hidden`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenSkill {
    pub path: String,
    /// The rules selecting it (none admits the caller), ascending.
    pub rules: Vec<u32>,
}

/// The rules, what views are made from, and the views made.
#[derive(Debug, Default)]
pub(super) struct Access {
    rules: Arc<Vec<Rule>>,
    material: Option<Arc<Material>>,
    pub(super) cache: Vec<Cached>,
    /// Use counter (for the cache's order).
    tick: u64,
    /// Views built since the rules were set.
    built: u64,
}

#[derive(Debug)]
pub(super) struct Cached {
    /// Which rules admit the callers of this view, one bit per rule.
    key: Vec<u64>,
    view: Arc<Index>,
    used: u64,
}

/// The skill files of an index, parsed and analysed again (see the module docs).
#[derive(Debug)]
pub(super) struct Material {
    builder: rank::Builder,
    files: Vec<Candidate>,
}

#[derive(Debug)]
struct Candidate {
    doc: SearchDoc,
    meta: Meta,
    analysed: Analysed,
    /// The findings of its parse.
    notes: Vec<Note>,
}

impl Index {
    fn access(&self, call: &str) -> Result<std::sync::MutexGuard<'_, Access>, Error> {
        self.ready()?;
        let Some(access) = &self.access else {
            return Err(Error::InvalidArgument(format!(
                "{call}: this index is a view, which has no rules of its own; ask the full index"
            )));
        };
        Ok(access.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Sets the operator's rules (replacing earlier ones, dropping the cached views) and checks
    /// them against this index ([`access::check`]). With an error among the findings the rules
    /// are not applied. The first rules set read every skill file again through `files` (see
    /// the module docs); a file that cannot be read is left out of every view, with a warning
    /// keyed `access`.
    pub fn set_access(&self, files: &dyn Files, rules: Vec<Rule>) -> Result<Vec<Finding>, Error> {
        let material = self.access("set-access")?.material.clone();
        let subjects: Vec<Subject<'_>> = self
            .reports
            .iter()
            .filter_map(|((root, _), r)| {
                Some(Subject {
                    path: r.skill_path.as_deref()?,
                    root: &self.roots[*root as usize].name,
                })
            })
            .collect();
        let names: Vec<&str> = self.roots.iter().map(|r| r.name.as_str()).collect();
        let mut findings = access::check(&rules, &subjects, &names);
        if findings.iter().any(|f| f.error) {
            return Ok(findings);
        }
        // No lock is held while files are read (`files.read` is the host's).
        let material = match material {
            Some(m) => Some(m),
            None if !rules.is_empty() => {
                let (m, more) = self.material(files);
                findings.extend(more);
                Some(Arc::new(m))
            }
            None => None,
        };
        let mut access = self.access("set-access")?;
        *access = Access {
            rules: Arc::new(rules),
            material,
            ..Access::default()
        };
        Ok(findings)
    }

    /// Every skill file of the index, read, parsed and analysed again.
    fn material(&self, files: &dyn Files) -> (Material, Vec<Finding>) {
        let mut builder = rank::Builder::new(Params::default());
        let mut out = Vec::new();
        let mut findings = Vec::new();
        for ((root, bytes::Key(path)), report) in &self.reports {
            let (Some(skill_path), Some(role)) = (&report.skill_path, &report.role) else {
                continue;
            };
            let root_name = &self.roots[*root as usize].name;
            let mut warn = |why: String| {
                findings.push(Finding {
                    key: "access".into(),
                    error: false,
                    message: format!(
                        "the skill file `{path}` of root {root} (`{root_name}`) {why}; it is left out of every view (rebuild the index)"
                    ),
                })
            };
            let bytes = match files.read(*root, path) {
                Ok(b) => b,
                Err(why) => {
                    warn(format!("could not be read again: {why}"));
                    continue;
                }
            };
            let mut notes = Vec::new();
            let Some((mut doc, meta)) = self.parse_file(*root, path, role, &bytes, &mut notes)
            else {
                warn("is no longer a valid skill".into());
                continue;
            };
            if doc.skill_path != *skill_path {
                warn(format!(
                    "now defines `{}` instead of `{skill_path}`",
                    doc.skill_path
                ));
                continue;
            }
            let analysed = builder.analyse(&doc);
            doc.hints = String::new();
            // The audit derives requests from the first headings.
            doc.headings = audit::kept_headings(&doc.headings);
            doc.body_prefix = String::new();
            out.push(Candidate {
                doc,
                meta,
                analysed,
                notes,
            });
        }
        (
            Material {
                builder,
                files: out,
            },
            findings,
        )
    }

    /// The index as `caller` sees it; `None` when it sees everything (no rules, unrestricted,
    /// or admitted by every rule): the full index answers. Views are cached (module docs).
    pub fn view(&self, caller: Caller<'_>) -> Result<Option<Arc<Index>>, Error> {
        let mut access = self.access("view")?;
        let Some(material) = access.material.clone() else {
            return Ok(None);
        };
        let rules = Arc::clone(&access.rules);
        let mut key = vec![0u64; rules.len().div_ceil(64)];
        for (i, rule) in rules.iter().enumerate() {
            if rule.admits(caller) {
                key[i / 64] |= 1 << (i % 64);
            }
        }
        let everyone = rules.iter().all(|r| r.admits(caller));
        if rules.is_empty() || matches!(caller, Caller::Unrestricted) || everyone {
            return Ok(None);
        }
        access.tick += 1;
        let tick = access.tick;
        if let Some(c) = access.cache.iter_mut().find(|c| c.key == key) {
            c.used = tick;
            return Ok(Some(Arc::clone(&c.view)));
        }
        let view = Arc::new(self.build_view(&material, &rules, caller));
        let budget = VIEW_CACHE_SKILLS_FACTOR * self.len().max(1);
        loop {
            let held: usize = access.cache.iter().map(|c| c.view.len()).sum();
            if access.cache.len() < VIEW_CACHE && held + view.len() <= budget {
                break;
            }
            let Some(lru) = access
                .cache
                .iter()
                .enumerate()
                .min_by_key(|(_, c)| c.used)
                .map(|(i, _)| i)
            else {
                break;
            };
            access.cache.swap_remove(lru);
        }
        access.cache.push(Cached {
            key,
            view: Arc::clone(&view),
            used: tick,
        });
        access.built += 1;
        Ok(Some(view))
    }

    /// How many views were built since the rules were set (a cached view is not built again).
    pub fn views_built(&self) -> u64 {
        self.access
            .as_ref()
            .map_or(0, |a| a.lock().unwrap_or_else(|e| e.into_inner()).built)
    }

    /// Whether the rules hide a skill file from `caller` ([`access::decide`]).
    fn visible(&self, rules: &[Rule], caller: Caller<'_>, c: &Candidate) -> bool {
        let skill = Subject {
            path: &c.doc.skill_path,
            root: &self.roots[c.meta.root as usize].name,
        };
        access::decide(rules, caller, skill).is_ok()
    }

    /// The index of the files of `material` that `caller` may see.
    fn build_view(&self, material: &Material, rules: &[Rule], caller: Caller<'_>) -> Index {
        let mut reports: BTreeMap<(u32, bytes::Key), Report> = BTreeMap::new();
        let mut files = Vec::new();
        for c in material
            .files
            .iter()
            .filter(|c| self.visible(rules, caller, c))
        {
            reports.insert(
                (c.meta.root, bytes::Key(c.meta.file.clone())),
                Report {
                    skill_path: Some(c.doc.skill_path.clone()),
                    role: None,
                    notes: c.notes.clone(),
                },
            );
            files.push((c.doc.clone(), c.meta.clone(), c.analysed.clone()));
        }
        let a = build::assemble(&self.roots, files, material.builder.clone());
        for (root, file, note) in a.notes {
            reports
                .entry((root, bytes::Key(file)))
                .or_default()
                .notes
                .push(note);
        }
        Index {
            config: self.config.clone(),
            policy: self.policy.clone(),
            roots: Arc::clone(&self.roots),
            pending: HashMap::new(),
            parsed: Vec::new(),
            builder: None,
            reports,
            docs: a.docs,
            metas: a.metas,
            search_index: Some(a.search),
            finished: true,
            restoring: None,
            extension: OnceLock::from(a.extension),
            access: None,
        }
    }

    /// The skills `caller` may not see: no file of that skill path is visible to it. Each
    /// with the rules that select it (any of its files), ascending; sorted by skill path.
    pub fn hidden(&self, caller: Caller<'_>) -> Result<Vec<HiddenSkill>, Error> {
        let access = self.access("hidden")?;
        let Some(material) = access.material.clone() else {
            return Ok(Vec::new());
        };
        let rules = Arc::clone(&access.rules);
        drop(access);
        let mut by_path: BTreeMap<&str, (bool, Vec<u32>)> = BTreeMap::new();
        for c in &material.files {
            let entry = by_path.entry(c.doc.skill_path.as_str()).or_default();
            entry.0 |= self.visible(&rules, caller, c);
            let skill = Subject {
                path: &c.doc.skill_path,
                root: &self.roots[c.meta.root as usize].name,
            };
            for (i, rule) in rules.iter().enumerate() {
                if rule.selects(skill) {
                    entry.1.push(i as u32);
                }
            }
        }
        Ok(by_path
            .into_iter()
            .filter(|(_, (visible, _))| !visible)
            .map(|(path, (_, mut rules))| {
                rules.sort_unstable();
                rules.dedup();
                HiddenSkill {
                    path: path.to_owned(),
                    rules,
                }
            })
            .collect())
    }
}
