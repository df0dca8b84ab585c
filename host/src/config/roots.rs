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
}

impl RootSpec {
    /// A short, stable display name (the path).
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }
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
                roots.push(RootSpec {
                    path,
                    source: RootSource::Standard,
                });
            }
        }
    }
    for git in sources.git_sources() {
        roots.push(RootSpec {
            path: crate::git::root_path(&config.git, &git),
            source: RootSource::Git,
        });
    }
    let explicit = sources
        .roots
        .iter()
        .map(|p| (p.clone(), RootSource::Config, "sources.roots"))
        .chain(
            opts.env
                .get("SKILLS_DIR")
                .filter(|v| !v.is_empty())
                .map(|v| std::env::split_paths(v).collect::<Vec<_>>())
                .unwrap_or_default()
                .into_iter()
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| (p, RootSource::Env, "SKILLS_DIR")),
        )
        .chain(
            opts.roots
                .iter()
                .map(|p| (p.clone(), RootSource::Flag, "--root")),
        );
    let mut missing = Vec::new();
    for (path, source, from) in explicit {
        let path = absolute(&opts.cwd, &path);
        if !path.is_dir() {
            missing.push(format!(
                "{from}: {} is not a directory; allowed: an existing directory of skills",
                path.display()
            ));
            continue;
        }
        roots.push(RootSpec { path, source });
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
            roots.push(RootSpec {
                path: bundled,
                source: RootSource::Bundled,
            });
        }
    }
    // The same directory twice keeps its last place.
    let keys: Vec<PathBuf> = roots
        .iter()
        .map(|r| r.path.canonicalize().unwrap_or_else(|_| r.path.clone()))
        .collect();
    let mut out = Vec::new();
    for (i, root) in roots.into_iter().enumerate() {
        if !keys[i + 1..].contains(&keys[i]) {
            out.push(root);
        }
    }
    Ok(out)
}
