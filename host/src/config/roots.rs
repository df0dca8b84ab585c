//! Which folders are served: the standard folders, git checkouts, `sources.roots`,
//! `SKILLS_DIR`, `--root`, and the bundled skills when none of those gives a root.

use std::path::PathBuf;

use anyhow::{Result, bail};

use super::Config;
use super::layers::{LoadOptions, absolute};

/// Where a root came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootSource {
    /// The `skills/` folder shipped with skills-mcp (used only when nothing else is configured).
    Bundled,
    /// `~/.claude/skills`, `~/.agents/skills`, `./.claude/skills`, `./.agents/skills` or `./skills`.
    Standard,
    /// A git source (`sources.repo`, `sources.repos`): its checkout, which may not exist yet.
    Git,
    /// An OCI source (`sources.oci`): its snapshot, which may not exist yet.
    Oci,
    /// A discovery index (`sources.indexes`): its snapshot, which may not exist yet.
    Index,
    /// `sources.roots` of the configuration.
    Config,
    /// The `SKILLS_DIR` environment variable.
    Env,
    /// A `--root DIR` flag.
    Flag,
}

/// One skill root, in precedence order (the first has the lowest precedence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootSpec {
    /// The directory as given (made absolute).
    pub path: PathBuf,
    pub source: RootSource,
    /// The name access rules know the root by (`access.rules[].roots`), given to the
    /// engine's `add-root`: the configured `name`, else the folder's name (a git source: the
    /// repository's name). Unique among the roots.
    pub root_name: String,
}

impl RootSpec {
    /// A short, stable display name (the path).
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// Checks a root's or git source's `name`: 1 to 64 characters of `A-Z a-z 0-9 - _ .`, not
/// starting with `.`.
pub fn check_root_name(name: &str) -> Result<(), String> {
    let ok = (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "root name {name:?} is not allowed; allowed: 1 to 64 characters of A-Z a-z 0-9 - _ . (not starting with .)"
        ))
    }
}

/// The name of a folder root without a configured one: its last segment.
fn folder_name(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The skills embedded in the binary, unpacked read-only into the cache folder and checked (see
/// [`crate::bundled`]); `None`, with a warning, when they cannot be unpacked.
pub fn bundled_skills_dir() -> Option<PathBuf> {
    match crate::bundled::dir() {
        Ok(dir) => dir,
        Err(e) => {
            tracing::warn!(
                "the bundled skills are not available: {}",
                crate::logsafe::Escaped(format!("{e:#}"))
            );
            None
        }
    }
}

/// The skill roots, lowest precedence first (see the module docs).
///
/// Standard roots are used when they exist; `sources.roots`, `SKILLS_DIR` entries and `--root`
/// flags that are not directories are skipped with a warning (pushed on `warnings`), and are an
/// error when no root is left; a git source's root is its checkout's path, which exists once
/// cloned. The bundled folder is used only when nothing else gives (or names) a root.
pub fn resolve_roots(
    opts: &LoadOptions,
    config: &Config,
    warnings: &mut Vec<String>,
) -> Result<Vec<RootSpec>> {
    let sources = &config.sources;
    let mut roots = Vec::new();
    if sources.default_roots && !opts.no_default_roots {
        let mut standard = Vec::new();
        if let Some(home) = &opts.home {
            standard.push(home.join(".claude").join("skills"));
            standard.push(home.join(".agents").join("skills"));
        }
        standard.push(opts.cwd.join(".claude").join("skills"));
        standard.push(opts.cwd.join(".agents").join("skills"));
        standard.push(opts.cwd.join("skills"));
        for path in standard {
            if path.is_dir() {
                roots.push((
                    RootSpec {
                        root_name: folder_name(&path),
                        path,
                        source: RootSource::Standard,
                    },
                    false,
                ));
            }
        }
    }
    for git in sources.git_sources() {
        roots.push((
            RootSpec {
                path: crate::sources::root_path(&config.git, &git),
                source: RootSource::Git,
                root_name: git.root_name(),
            },
            git.name.is_some(),
        ));
    }
    for oci in &sources.oci {
        roots.push((
            RootSpec {
                path: crate::sources::oci::root_path(&config.git.content_dir(), oci),
                source: RootSource::Oci,
                root_name: oci.root_name(),
            },
            true,
        ));
    }
    for index in &sources.indexes {
        roots.push((
            RootSpec {
                path: crate::sources::index::root_path(&config.git.content_dir(), index),
                source: RootSource::Index,
                root_name: index.root_name(),
            },
            index.name.is_some(),
        ));
    }
    let explicit = sources
        .roots
        .iter()
        .map(|r| {
            (
                r.path().clone(),
                RootSource::Config,
                "sources.roots",
                r.name().map(str::to_string),
            )
        })
        .chain(
            opts.env
                .get("SKILLS_DIR")
                .filter(|v| !v.is_empty())
                .map(|v| std::env::split_paths(v).collect::<Vec<_>>())
                .unwrap_or_default()
                .into_iter()
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| (p, RootSource::Env, "SKILLS_DIR", None)),
        )
        .chain(
            opts.roots
                .iter()
                .map(|p| (p.clone(), RootSource::Flag, "--root", None)),
        );
    let mut missing = Vec::new();
    for (path, source, from, name) in explicit {
        let path = absolute(&opts.cwd, &path);
        if !path.is_dir() {
            missing.push(format!(
                "{from}: {} is not a directory; allowed: an existing directory of skills",
                path.display()
            ));
            continue;
        }
        let named = name.is_some();
        let root_name = name.unwrap_or_else(|| folder_name(&path));
        roots.push((
            RootSpec {
                path,
                source,
                root_name,
            },
            named,
        ));
    }
    if roots.is_empty() && !missing.is_empty() {
        bail!("no skill root to serve: {}", missing.join("; "));
    }
    warnings.extend(missing.into_iter().map(|m| format!("{m} (skipped)")));
    if roots.is_empty() {
        let bundled = match &opts.bundled {
            Some(dir) => Some(dir.clone()),
            None if opts.embedded_bundle => bundled_skills_dir(),
            None => None,
        };
        if let Some(bundled) = bundled.filter(|d| d.is_dir()) {
            roots.push((
                RootSpec {
                    path: bundled,
                    source: RootSource::Bundled,
                    root_name: "bundled".into(),
                },
                false,
            ));
        }
    }
    // The same directory twice keeps its last place.
    let keys: Vec<PathBuf> = roots
        .iter()
        .map(|(r, _)| r.path.canonicalize().unwrap_or_else(|_| r.path.clone()))
        .collect();
    let mut kept = Vec::new();
    for (i, root) in roots.into_iter().enumerate() {
        if !keys[i + 1..].contains(&keys[i]) {
            kept.push(root);
        }
    }
    unique_names(kept)
}

/// Names are unique: a configured `name` given twice (or equal to another root's) is an
/// error; a derived name equal to an earlier one gets `-2`, `-3`... (e.g. `~/.claude/skills`
/// and `./skills` are `skills` and `skills-2`).
fn unique_names(roots: Vec<(RootSpec, bool)>) -> Result<Vec<RootSpec>> {
    let given: Vec<&str> = roots
        .iter()
        .filter(|(_, named)| *named)
        .map(|(r, _)| r.root_name.as_str())
        .collect();
    for (i, name) in given.iter().enumerate() {
        if given[..i].contains(name) {
            bail!(
                "invalid configuration: the root name {name:?} is given to two roots; allowed: a distinct `name` for each root and git source"
            );
        }
    }
    let given: Vec<String> = given.into_iter().map(str::to_string).collect();
    let mut taken: Vec<String> = Vec::new();
    let mut out = Vec::with_capacity(roots.len());
    for (mut root, named) in roots {
        if !named {
            let base = root.root_name.clone();
            let mut n = 1;
            while taken.contains(&root.root_name) || given.contains(&root.root_name) {
                n += 1;
                root.root_name = format!("{base}-{n}");
            }
        }
        taken.push(root.root_name.clone());
        out.push(root);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(path: &str, name: &str, named: bool) -> (RootSpec, bool) {
        (
            RootSpec {
                path: PathBuf::from(path),
                source: RootSource::Config,
                root_name: name.into(),
            },
            named,
        )
    }

    #[test]
    fn derived_names_are_made_unique_and_given_names_must_be() {
        let names: Vec<String> = unique_names(vec![
            root("/a/skills", "skills", false),
            root("/b/skills", "skills", false),
            root("/c/x", "skills-2", true),
            root("/d/hr", "hr", false),
        ])
        .unwrap()
        .into_iter()
        .map(|r| r.root_name)
        .collect();
        assert_eq!(names, ["skills", "skills-3", "skills-2", "hr"]);
        let e = unique_names(vec![root("/a", "hr", true), root("/b", "hr", true)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the root name \"hr\" is given to two roots"),
            "{e}"
        );
    }

    #[test]
    fn a_root_name_is_a_short_plain_word() {
        for ok in ["hr", "finance-repo", "a.b_c", "X1"] {
            assert!(check_root_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".hidden", "a b", "a/b", "é", &"x".repeat(65)] {
            assert!(check_root_name(bad).is_err(), "{bad}");
        }
    }
}
