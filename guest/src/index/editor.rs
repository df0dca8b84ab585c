//! Entry points for skill editors (issue 14): check one skill file from its bytes, and rank a
//! draft skill among a finished collection without rebuilding it.
//!
//! Both reuse the index's own code: [`check_skill`] runs the draft through a one-file
//! [`Index`] (discovery, frontmatter parsing, every validation rule, `finish`), and
//! [`Index::score_draft`] analyses the draft with the index's analyser and scores it with the
//! collection's statistics as they would be with the draft in it ([`crate::rank::WithDraft`]).

use super::*;
use crate::rank::{Draft, WithDraft};

/// Root name used for a file checked on its own (a root-level `SKILL.md` takes its skill path
/// from its frontmatter `name`).
const DRAFT_ROOT: &str = "";

/// The outcome of [`check_skill`].
#[derive(Debug, Clone, PartialEq)]
pub struct SkillCheck {
    /// The skill the file defines, when it is a valid skill.
    pub skill: Option<SkillInfo>,
    /// Worst severity of the diagnostics; `None` means no finding.
    pub worst: Option<Severity>,
    /// Every finding about the file, with its line when known (root 0).
    pub diagnostics: Vec<Diagnostic>,
    /// The frontmatter as parsed, as a JSON object (also when the file is not a valid skill);
    /// `None` when there is none or it cannot be parsed.
    pub frontmatter_json: Option<String>,
    /// The `name` the Skills extension serves (the last segment of `ext_path`); `None` when it
    /// is left out (`left_out` says why).
    pub served_name: Option<String>,
    /// The `description` the Skills extension serves: the frontmatter's, verbatim.
    pub served_description: Option<String>,
    /// Where the Skills extension lists it: `skill://<ext_path>/SKILL.md`; `None` when it is
    /// left out.
    pub ext_path: Option<String>,
    /// Why the Skills extension leaves it out (`skills/list`, `skill://` resources): no name can
    /// be made from its path, it is over a limit (with its figures), or (checked against a
    /// collection, [`Index::check_skill`]) another skill holds its URI (named). `None` when it is
    /// listed, or when the file is not a skill.
    pub left_out: Option<String>,
}

/// A skill that ranks above a draft.
#[derive(Debug, Clone, PartialEq)]
pub struct Rival {
    pub skill_path: String,
    pub name: String,
    pub score: f64,
}

/// How a draft fares on one request (see [`crate::rank::DraftScore`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DraftRank {
    pub request: String,
    pub score: f64,
    pub rank: Option<u32>,
    pub matching: u32,
    pub matched: Vec<String>,
    pub above: Vec<Rival>,
}

/// [`Index::score_draft`]'s answer.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftRanking {
    /// The draft's skill path.
    pub skill_path: String,
    /// Whether the draft replaces the collection's skill of the same path.
    pub replaces: bool,
    pub requests: Vec<DraftRank>,
}

/// The listing of a root holding `path` (with `bytes`) and those of the other `listing`
/// entries that can change its findings: the files of its own folder (a `SKILL.md`'s folder, a
/// hierarchical file's resource folder). The rest of a large root is left out, so that a check
/// costs the same in a collection of thousands of skills.
fn draft_listing(path: &str, size: usize, listing: Vec<Entry>) -> Vec<Entry> {
    let folder = if paths::file_name(path).eq_ignore_ascii_case("skill.md") {
        paths::parent_dir(path)
    } else {
        paths::resource_dir_of_md(path)
    };
    let mine = |p: &str| {
        folder.is_empty()
            || p.strip_prefix(folder)
                .is_some_and(|rest| rest.starts_with('/') || rest.is_empty())
    };
    let mut entries: Vec<Entry> = listing
        .into_iter()
        .filter(|e| e.path != path && mine(&e.path))
        .collect();
    entries.push(Entry {
        path: path.to_owned(),
        kind: EntryKind::File,
        size: size as u64,
    });
    entries
}

/// Check one skill file: `path` is its path relative to its root (`SKILL.md`,
/// `pdf/SKILL.md`, `ui/react/forms.md`), `listing` the other entries of the root if known
/// (assets are checked against it; may be empty). Same rules as an index build.
pub fn check_skill(
    config: &EngineConfig,
    path: &str,
    bytes: &[u8],
    listing: Vec<Entry>,
) -> Result<SkillCheck, Error> {
    check(config, path, bytes, listing, None)
}

/// [`check_skill`], and with a `collection` the Skills extension's verdict in it
/// ([`Index::check_skill`]).
fn check(
    config: &EngineConfig,
    path: &str,
    bytes: &[u8],
    listing: Vec<Entry>,
    collection: Option<&Index>,
) -> Result<SkillCheck, Error> {
    paths::validate_relative(path).map_err(|why| Error::InvalidPath(format!("{path}: {why}")))?;
    if !path.to_ascii_lowercase().ends_with(".md") {
        return Err(Error::InvalidArgument(format!(
            "{path}: a skill file is a `.md` file"
        )));
    }
    let mut index = Index::new(config.clone());
    let wanted = index.add_root(DRAFT_ROOT, draft_listing(path, bytes.len(), listing))?;
    if wanted.iter().any(|w| w == path) {
        index.add_files(
            0,
            vec![FileData {
                path: path.to_owned(),
                bytes: bytes.to_vec(),
            }],
        )?;
    }
    // Other files the listing names are not read: they are dropped from the index, unreported.
    index.pending.clear();
    index.finish()?;
    let mut report = index.reports.remove(&(0, bytes::Key(path.to_owned())));
    let skill = report
        .as_ref()
        .and_then(|r| r.skill_path.as_deref())
        .and_then(|p| index.get(p).ok())
        .filter(|s| s.file == path);
    // The Skills extension: the one-file index's verdict (the name rule, the limits), and in a
    // collection, whether another skill holds that URI; the finding says the final one.
    let place: Option<Result<(String, Kind), String>> = skill.as_ref().map(|s| {
        let i = index
            .position(&s.skill_path)
            .expect("the checked skill is in its index");
        let map = index.extension_map();
        let alone = match map.ext_path(i) {
            Ok(ext) => Ok((
                ext.to_owned(),
                map.kinds[i].expect("a listed skill has a kind"),
            )),
            Err(why) => Err(why.to_owned()),
        };
        let Some(c) = collection else {
            return alone;
        };
        let placed = match &alone {
            Ok((ext, kind)) => c
                .extension_place(&s.skill_path, ext, *kind)
                .map(|()| (ext.clone(), *kind)),
            Err(why) => Err(why.clone()),
        };
        if placed != alone
            && let Some(r) = report.as_mut()
        {
            let note = |p: &Result<(String, Kind), String>| match p {
                Ok((ext, kind)) => build::extension_note(Ok(ext), Some(*kind), &s.skill_path),
                Err(why) => build::extension_note(Err(why), None, &s.skill_path),
            };
            if let Some(old) = note(&alone) {
                r.notes.retain(|n| *n != old);
            }
            r.notes.extend(note(&placed));
        }
        placed
    });
    let diagnostics: Vec<Diagnostic> = report
        .as_ref()
        .map(|r| r.diagnostics(0, path).collect())
        .unwrap_or_default();
    let frontmatter_json = match &skill {
        Some(s) => Some(s.frontmatter_json.clone()),
        None => {
            let text = frontmatter::decode(bytes, &mut Vec::new());
            match frontmatter::split(&text) {
                Split::Found(block) => frontmatter::parse(&block, &mut Vec::new())
                    .ok()
                    .map(|m| frontmatter::to_json(&m)),
                _ => None,
            }
        }
    };
    let ext_path = match &place {
        Some(Ok((ext, _))) => Some(ext.clone()),
        _ => None,
    };
    let served_name = ext_path
        .as_deref()
        .map(|ext| extension::name_of(ext).to_owned());
    let left_out = match place {
        Some(Err(why)) => Some(why),
        _ => None,
    };
    let served_description = skill.as_ref().map(|s| {
        match serde_json::from_str::<serde_json::Value>(&s.frontmatter_json) {
            Ok(serde_json::Value::Object(m)) => match m.get("description") {
                Some(serde_json::Value::String(d)) => d.clone(),
                _ => s.description.clone(),
            },
            _ => s.description.clone(),
        }
    });
    Ok(SkillCheck {
        skill,
        worst: diagnostics.iter().map(|d| d.severity).max(),
        diagnostics,
        frontmatter_json,
        served_name,
        served_description,
        ext_path,
        left_out,
    })
}

impl Index {
    /// [`check_skill`] against this finished collection: the same findings, and the Skills
    /// extension's verdict as `skills/list` would give it with the file in the collection
    /// (replacing the skill of its skill path, if any): listed under its ext path, or left out
    /// because another skill holds that URI (named), over a limit or without a valid name.
    /// `not-ready` before `finish`.
    pub fn check_skill(
        &self,
        path: &str,
        bytes: &[u8],
        listing: Vec<Entry>,
    ) -> Result<SkillCheck, Error> {
        self.ready()?;
        check(&self.config, path, bytes, listing, Some(self))
    }

    /// Whether a skill at `skill_path` asking for `ext` (as `kind`, within the limits) is listed
    /// there in this collection, replacing the skill of that path: `Err` names the skill that
    /// holds it, by the rule of [`ExtensionMap::new`].
    fn extension_place(&self, skill_path: &str, ext: &str, kind: Kind) -> Result<(), String> {
        let paths = |i: usize| self.docs[i].skill_path.as_str();
        match self.extension_map().holder(ext, skill_path, paths) {
            Some((held, h))
                if extension::precedence(held, paths(h))
                    < extension::precedence(kind, skill_path) =>
            {
                Err(extension::held_by(ext, paths(h)))
            }
            _ => Ok(()),
        }
    }

    /// The draft skill file `path` holding `bytes`, analysed as an index build analyses a skill,
    /// and this finished collection's search structures, for ranking it among them (the
    /// `ranked` algorithm only).
    pub(super) fn draft_doc(
        &self,
        path: &str,
        bytes: &[u8],
    ) -> Result<(SearchDoc, &SearchIndex), Error> {
        self.ready()?;
        if self.config.algorithm != Algorithm::Ranked {
            return Err(Error::InvalidArgument(
                "a draft is ranked with the `ranked` algorithm only".into(),
            ));
        }
        paths::validate_relative(path)
            .map_err(|why| Error::InvalidPath(format!("{path}: {why}")))?;
        let Some(search) = self.search_index.as_ref() else {
            return Err(Error::NotReady);
        };
        // The draft's searchable text, exactly as an index build extracts it.
        let mut one = Index::new(self.config.clone());
        one.add_root(DRAFT_ROOT, draft_listing(path, bytes.len(), Vec::new()))?;
        let Some(role) = one.pending.remove(&(0, path.to_owned())) else {
            return Err(Error::InvalidArgument(format!(
                "{path} is not a skill file (a `SKILL.md`, or another `.md` file)"
            )));
        };
        let mut notes = Vec::new();
        let Some((doc, _)) = one.parse_file(0, path, &role, bytes, &mut notes) else {
            let why = notes
                .iter()
                .max_by_key(|n| n.severity)
                .map(|n| n.message.clone())
                .unwrap_or_else(|| "not a skill".into());
            return Err(Error::InvalidArgument(format!(
                "the draft {path} is not a skill: {why}"
            )));
        };
        Ok((doc, search))
    }

    /// Rank the draft skill file `path` (relative to its root, as for [`check_skill`]) with
    /// `bytes` among this finished collection for each of `requests`, as if it had been added
    /// to it (replacing the skill of the same skill path, if any), without rebuilding it. At
    /// most `limit` skills ranked above the draft are listed per request.
    pub fn score_draft(
        &self,
        path: &str,
        bytes: &[u8],
        requests: &[String],
        limit: u32,
    ) -> Result<DraftRanking, Error> {
        self.ready()?;
        if let Some(i) = requests.iter().position(|r| r.trim().is_empty()) {
            return Err(Error::InvalidArgument(format!("request {i} is empty")));
        }
        let (doc, search) = self.draft_doc(path, bytes)?;
        let draft = Draft::new(&doc, search);
        let replaces = self.position(&doc.skill_path);
        let with: WithDraft<'_> = search.with_draft(&draft, replaces);
        let requests = requests
            .iter()
            .map(|request| {
                let s = with.score(request, limit as usize);
                DraftRank {
                    request: request.clone(),
                    score: s.score,
                    rank: s.rank.map(|r| u32::try_from(r).unwrap_or(u32::MAX)),
                    matching: u32::try_from(s.matching).unwrap_or(u32::MAX),
                    matched: s.matched,
                    above: s
                        .above
                        .into_iter()
                        .map(|(d, score)| Rival {
                            skill_path: self.docs[d].skill_path.clone(),
                            name: self.docs[d].name.clone(),
                            score,
                        })
                        .collect(),
                }
            })
            .collect();
        Ok(DraftRanking {
            skill_path: doc.skill_path,
            replaces: replaces.is_some(),
            requests,
        })
    }
}

#[cfg(test)]
mod tests;
