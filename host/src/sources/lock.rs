//! The lock file (`skills-mcp lock`): the revision of every remote source, and the
//! `contentDigest` of each of its skills, in the field names of ToolHive's `toolhive.lock.yaml`
//! (`name`, `source`, `resolvedReference`, `digest`, `contentDigest`, `version`).
//!
//! ```yaml
//! version: 1
//! sources:                      # sorted by name
//!   - name: team-skills         # the source's `name`
//!     kind: git
//!     source: https://example.com/skills.git#main   # as configured (no credentials)
//!     resolvedReference: https://example.com/skills.git@<commit>
//!     digest: <commit>          # git: the commit; OCI: the manifest digest (sha256:...)
//!     skills:                   # sorted by name (the skill path)
//!       - name: pdf
//!         contentDigest: sha256:...
//!         version: "1.2"
//!   - name: pdf                 # an OCI artifact: one skill, its digest also on the entry
//!     kind: oci
//!     source: ghcr.io/org/skills/pdf:1.0
//!     resolvedReference: ghcr.io/org/skills/pdf@sha256:...
//!     digest: sha256:...
//!     contentDigest: sha256:...
//!     skills: [...]
//! ```
//!
//! A skill's `contentDigest` is ToolHive's ([`skills_engine::content_digest`]) over the files
//! the engine's manifest lists for it (`SKILL.md` and the other files of its folder, nested
//! skills' files excluded), read from the snapshot served.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};
use skills_engine::content_digest::{content_digest, file_sha256};

use crate::catalog::{Catalog, CatalogOptions, RootSpec};

/// The lock file's name when neither `--lock` nor `sources.lock_file` names one.
pub const DEFAULT_LOCK_FILE: &str = "skills.lock";
/// The format's version (`version:`).
pub const LOCK_VERSION: u32 = 1;

/// A lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    pub version: u32,
    #[serde(default)]
    pub sources: Vec<LockedSource>,
}

/// The entry of one remote source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockedSource {
    pub name: String,
    /// `git`, `oci`.
    pub kind: String,
    /// The source as configured (without credentials).
    pub source: String,
    pub resolved_reference: String,
    /// Git: the commit; OCI: the manifest digest.
    pub digest: String,
    /// A single-skill source (an OCI artifact): its skill's digest, as ToolHive writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_digest: Option<String>,
    /// A single-skill source: its skill's `metadata.version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default)]
    pub skills: Vec<LockedSkill>,
}

/// One skill of a source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LockedSkill {
    /// The skill path within the source.
    pub name: String,
    pub content_digest: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl LockFile {
    /// A lock of `sources`, sorted (sources by name, skills by name): the same state gives the
    /// same bytes.
    pub fn new(mut sources: Vec<LockedSource>) -> Self {
        for s in &mut sources {
            s.skills.sort_by(|a, b| a.name.cmp(&b.name));
        }
        sources.sort_by(|a, b| a.name.cmp(&b.name));
        Self {
            version: LOCK_VERSION,
            sources,
        }
    }

    /// The entry of the source `name`.
    pub fn source(&self, name: &str) -> Option<&LockedSource> {
        self.sources.iter().find(|s| s.name == name)
    }

    /// Reads and checks the lock file at `path`; errors name the file (and the line for YAML).
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the lock file {}", path.display()))?;
        let lock: LockFile = serde_yaml::from_str(&text)
            .with_context(|| format!("the lock file {} is malformed", path.display()))?;
        if lock.version != LOCK_VERSION {
            bail!(
                "the lock file {} has version {}; this skills-mcp reads version {LOCK_VERSION}",
                path.display(),
                lock.version
            );
        }
        Ok(lock)
    }

    /// The YAML text (sorted, as [`Self::new`] orders it).
    pub fn to_yaml(&self) -> Result<String> {
        let sorted = Self::new(self.sources.clone());
        Ok(format!(
            "# Written by `skills-mcp lock`; checked by `skills-mcp lock --check`.\n{}",
            serde_yaml::to_string(&sorted)?
        ))
    }

    /// Writes the lock to `path` atomically (a temporary file renamed over it).
    pub fn write(&self, path: &Path) -> Result<()> {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(dir) = dir {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        super::snapshots::write_atomically(path, self.to_yaml()?.as_bytes())
    }

    /// How `now` differs from this lock, one line per drifted source or skill (empty: none).
    /// `only`: compare just that source.
    pub fn drift(&self, now: &LockFile, only: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        let wanted = |name: &str| only.is_none_or(|o| o == name);
        for current in now.sources.iter().filter(|s| wanted(&s.name)) {
            let name = &current.name;
            let Some(locked) = self.source(name) else {
                out.push(format!(
                    "source {name}: not in the lock file (now at {})",
                    current.digest
                ));
                continue;
            };
            if locked.digest != current.digest {
                out.push(format!(
                    "source {name}: moved from {} (locked) to {}",
                    locked.digest, current.digest
                ));
            }
            for skill in &current.skills {
                match locked.skills.iter().find(|s| s.name == skill.name) {
                    None => out.push(format!("source {name}: skill {}: not locked", skill.name)),
                    Some(l) if l.content_digest != skill.content_digest => out.push(format!(
                        "source {name}: skill {}: content {} differs from the locked {}",
                        skill.name, skill.content_digest, l.content_digest
                    )),
                    Some(_) => {}
                }
            }
            for l in &locked.skills {
                if !current.skills.iter().any(|s| s.name == l.name) {
                    out.push(format!("source {name}: skill {}: locked but gone", l.name));
                }
            }
        }
        for locked in self.sources.iter().filter(|s| wanted(&s.name)) {
            if now.source(&locked.name).is_none() {
                out.push(format!(
                    "source {}: locked but no longer configured",
                    locked.name
                ));
            }
        }
        out
    }
}

/// Where the lock file is: `--lock`, else `sources.lock_file` (relative to the `--config`
/// file's folder when one is given), else `skills.lock` beside the `--config` file, else in the
/// current folder.
pub fn lock_path(flag: Option<&Path>, configured: Option<&Path>, config: Option<&Path>) -> PathBuf {
    let beside_config = |name: &Path| match config.and_then(Path::parent) {
        Some(dir) if name.is_relative() => dir.join(name),
        _ => name.to_path_buf(),
    };
    if let Some(flag) = flag {
        return flag.to_path_buf();
    }
    if let Some(configured) = configured.filter(|p| !p.as_os_str().is_empty()) {
        return beside_config(&super::git::expand_home(configured));
    }
    beside_config(Path::new(DEFAULT_LOCK_FILE))
}

/// The `contentDigest` of every skill the engine indexes in `root` (a source's served folder),
/// with its version, sorted by skill path. The files are those of each skill's manifest.
pub fn skill_digests(root: &Path, options: CatalogOptions) -> Result<Vec<LockedSkill>> {
    Ok(hashed_skills(root, options)?
        .into_iter()
        .map(|(skill, _)| skill)
        .collect())
}

/// [`skill_digests`], each skill with the paths of its files relative to `root`.
pub(crate) fn hashed_skills(
    root: &Path,
    mut options: CatalogOptions,
) -> Result<Vec<(LockedSkill, Vec<String>)>> {
    options.index_cache = None;
    let catalog = Catalog::open(vec![RootSpec::new(root.to_path_buf())], options)?;
    let mut out = Vec::new();
    for skill in catalog.skills()? {
        let mut files = Vec::new();
        let mut paths = Vec::new();
        for file in catalog.manifest(&skill.skill_path)? {
            let bytes = catalog
                .read_file(file.root, &file.path, super::oci::unpack::MAX_BYTES)
                .with_context(|| format!("hashing {}", file.path))?;
            files.push((file.relative, file_sha256(&bytes)));
            paths.push(file.path);
        }
        out.push((
            LockedSkill {
                name: skill.skill_path,
                content_digest: content_digest(&files),
                version: skill.version,
            },
            paths,
        ));
    }
    out.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    Ok(out)
}

/// `skills-mcp lock`.
#[derive(Debug, Clone, clap::Args)]
pub struct LockArgs {
    /// The lock file (default: `sources.lock_file`, else `skills.lock` beside the `--config`
    /// file, else in the current folder).
    #[arg(long = "lock", value_name = "FILE")]
    pub lock: Option<PathBuf>,
    /// Compare the sources' current revisions and skills with the lock file without writing it:
    /// exits 1 naming each drifted source and skill.
    #[arg(long, conflicts_with = "update")]
    pub check: bool,
    /// Move the pins of every source, or only of the source NAME (the other entries are kept as
    /// they are in the lock file).
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "")]
    pub update: Option<String>,
}

/// Runs `lock`: fetches every remote source (honouring `sources rollback` pins, not the lock
/// file), then writes the lock, or with `--check` compares it. `config_file`: `--config`.
pub fn run(
    args: &LockArgs,
    config_file: Option<&Path>,
    config: &crate::config::Config,
) -> Result<std::process::ExitCode> {
    use std::process::ExitCode;
    let usage = |message: String| {
        eprintln!("skills-mcp: error: {}", crate::logsafe::Escaped(message));
        Ok(ExitCode::from(crate::cli::EXIT_USAGE))
    };
    let path = lock_path(
        args.lock.as_deref(),
        config.sources.lock_file.as_deref(),
        config_file,
    );
    let remote = config.sources.remote_sources();
    if remote.is_empty() {
        return usage(
            "no remote source is configured (sources.repo, sources.repos, sources.oci, sources.indexes): nothing to lock"
                .into(),
        );
    }
    let only = args.update.as_deref().filter(|n| !n.is_empty());
    let existing = if args.check || only.is_some() {
        match LockFile::read(&path) {
            Ok(lock) => Some(lock),
            Err(e) => return usage(format!("{e:#}")),
        }
    } else {
        None
    };
    let sources = super::Sources::from_process(&remote, &config.git, config.github_token.clone())?;
    if let Some(message) = only.and_then(|name| sources.unknown(name)) {
        return usage(message);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let problems = runtime.block_on(sources.initialize_with(super::Fetch::Always));
    if !problems.is_empty() {
        bail!(
            "could not bring every source up to date, nothing {}: {}",
            if args.check { "checked" } else { "written" },
            problems.join("; ")
        );
    }
    let now = LockFile::new(sources.lock_entries(&crate::mcp::catalog_options(config))?);
    let mut out = std::io::stdout().lock();
    if args.check {
        let Some(locked) = existing else {
            unreachable!("read above")
        };
        let drift = locked.drift(&now, None);
        for line in &drift {
            writeln!(out, "drift: {}", crate::logsafe::Escaped(line))?;
        }
        if drift.is_empty() {
            writeln!(
                out,
                "{}: {} sources up to date",
                path.display(),
                now.sources.len()
            )?;
            return Ok(ExitCode::SUCCESS);
        }
        return Ok(ExitCode::from(crate::cli::EXIT_FAILURE));
    }
    let lock = match (only, existing) {
        (Some(name), Some(mut lock)) => {
            lock.sources.retain(|s| s.name != name);
            lock.sources
                .extend(now.sources.into_iter().filter(|s| s.name == name));
            LockFile::new(lock.sources)
        }
        _ => now,
    };
    lock.write(&path)?;
    let skills: usize = lock.sources.iter().map(|s| s.skills.len()).sum();
    writeln!(
        out,
        "wrote {}: {} sources, {skills} skills",
        path.display(),
        lock.sources.len()
    )?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(name: &str, digest: &str, skills: &[(&str, &str)]) -> LockedSource {
        LockedSource {
            name: name.into(),
            kind: "git".into(),
            source: format!("https://example.com/{name}.git#main"),
            resolved_reference: format!("https://example.com/{name}.git@{digest}"),
            digest: digest.into(),
            content_digest: None,
            version: None,
            skills: skills
                .iter()
                .map(|(n, d)| LockedSkill {
                    name: (*n).into(),
                    content_digest: (*d).into(),
                    version: None,
                })
                .collect(),
        }
    }

    #[test]
    fn output_is_sorted_and_reads_back() {
        let lock = LockFile::new(vec![
            source("b", "2", &[("z", "sha256:1"), ("a", "sha256:2")]),
            source("a", "1", &[]),
        ]);
        let text = lock.to_yaml().unwrap();
        assert!(text.find("name: a").unwrap() < text.find("name: b").unwrap());
        assert!(text.contains("resolvedReference:") && text.contains("contentDigest:"));
        let back: LockFile = serde_yaml::from_str(&text).unwrap();
        assert_eq!(back, lock);
        assert_eq!(back.sources[1].skills[0].name, "a");
    }

    #[test]
    fn drift_names_each_source_and_skill() {
        let locked = LockFile::new(vec![
            source("a", "1", &[("x", "sha256:1"), ("gone", "sha256:9")]),
            source("old", "5", &[]),
        ]);
        let now = LockFile::new(vec![
            source("a", "2", &[("x", "sha256:2"), ("new", "sha256:3")]),
            source("c", "3", &[]),
        ]);
        let drift = locked.drift(&now, None);
        assert_eq!(
            drift,
            [
                "source a: moved from 1 (locked) to 2",
                "source a: skill new: not locked",
                "source a: skill x: content sha256:2 differs from the locked sha256:1",
                "source a: skill gone: locked but gone",
                "source c: not in the lock file (now at 3)",
                "source old: locked but no longer configured",
            ]
        );
        assert!(locked.drift(&locked, None).is_empty());
        assert_eq!(locked.drift(&now, Some("c")).len(), 1);
    }

    #[test]
    fn lock_path_precedence() {
        let cfg = Path::new("/etc/team/config.yaml");
        assert_eq!(
            lock_path(Some(Path::new("x.lock")), Some(Path::new("y")), Some(cfg)),
            PathBuf::from("x.lock")
        );
        assert_eq!(
            lock_path(None, Some(Path::new("y.lock")), Some(cfg)),
            PathBuf::from("/etc/team/y.lock")
        );
        assert_eq!(
            lock_path(None, None, Some(cfg)),
            PathBuf::from("/etc/team/skills.lock")
        );
        assert_eq!(lock_path(None, None, None), PathBuf::from("skills.lock"));
    }
}
