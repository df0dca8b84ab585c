//! Configuration of skill sources (git repositories and local folders), the git section and the
//! refresh section, with their environment variables (`SKILLS_REPO`, `SKILLS_BRANCH`, ...).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Default branch of a git source (`SKILLS_BRANCH`).
pub const DEFAULT_BRANCH: &str = "main";
/// Environment variable holding the token of a git source unless the source names another one.
pub const DEFAULT_TOKEN_ENV: &str = "GITHUB_TOKEN";

/// The `git:` section: where checkouts live and how long a git command may take.
///
/// ```yaml
/// git:
///   content_dir: ~/.skills-mcp/content   # one folder per source below it
///   timeout_seconds: 120                 # per git command (clone, fetch, ...)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct GitConfig {
    /// Folder holding one sub-folder per git source (a leading `~/` is the home folder).
    pub content_dir: PathBuf,
    /// Longest a single git command may run before it is killed (network stalls).
    pub timeout_seconds: u64,
}

impl Default for GitConfig {
    fn default() -> Self {
        Self {
            content_dir: PathBuf::from("~/.skills-mcp/content"),
            timeout_seconds: 120,
        }
    }
}

impl GitConfig {
    /// The content folder, a leading `~/` expanded.
    pub fn content_dir(&self) -> PathBuf {
        expand_home(&self.content_dir)
    }

    /// The per-command timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_seconds.max(1))
    }
}

/// A skill source given to [`crate::sources::Sources::new`], in precedence order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceConfig {
    Git(GitSourceConfig),
    Local(LocalSourceConfig),
    /// An OCI artifact, and the registries spoken to in plain HTTP besides loopback.
    Oci {
        config: crate::sources::oci::OciSourceConfig,
        insecure_registries: Vec<String>,
    },
    /// A discovery index, the other origins its entries may come from, and the hosts spoken to
    /// in plain HTTP besides loopback.
    Index {
        config: crate::sources::index::IndexSourceConfig,
        origins: Vec<String>,
        insecure: Vec<String>,
    },
}

impl crate::config::check::Section for GitConfig {
    fn check(&self, c: &mut crate::config::check::Checks) {
        c.at_least(
            "git.timeout_seconds",
            self.timeout_seconds,
            1,
            "a whole number, at least 1",
        );
    }
}

/// A git repository source: an entry of `sources.repos`, or `SKILLS_REPO` / `SKILLS_BRANCH`.
///
/// ```yaml
/// sources:
///   repos:                         # lowest precedence first, like every root list
///     - url: https://github.com/org/skills.git
///       branch: main               # default main
///       subpath: skills            # default: `skills/` when the branch has it, else the root
///       token_env: GITHUB_TOKEN    # variable holding the token (default GITHUB_TOKEN)
///       name: finance-repo         # what access rules call it (default: the repository's name)
/// ```
/// Tokens are never written in a configuration file: a source names the environment variable
/// that holds its token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawGitSource")]
pub struct GitSourceConfig {
    /// Clone URL: `https://...`, `http://...`, `ssh://...`, `git@host:path`, `file://...` or a
    /// local path. Credentials in an http(s) URL are moved into a per-command header, never
    /// passed on a command line or written to `.git/config`.
    pub url: String,
    pub branch: String,
    /// Folder inside the repository that holds the skills; `None` means `skills/` when the
    /// repository has such a folder, else the repository root (`.` forces the root).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subpath: Option<String>,
    /// Environment variable holding the token; `None` means `GITHUB_TOKEN`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// The source's name for access rules (`access.rules[].roots`); `None`: the repository's
    /// name (the URL's last segment without `.git`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A local folder source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalSourceConfig {
    pub path: PathBuf,
}

impl GitSourceConfig {
    /// A source for `url` on the default branch, skills folder auto-detected.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            branch: DEFAULT_BRANCH.to_owned(),
            subpath: None,
            token_env: None,
            name: None,
        }
    }

    /// The name access rules know this source by: `name`, else the repository's name.
    pub fn root_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| {
            super::repo::repo_name(&super::command::prepare_url(self.url.trim()).clean)
        })
    }

    /// The name of the token variable.
    pub fn token_env(&self) -> &str {
        self.token_env.as_deref().unwrap_or(DEFAULT_TOKEN_ENV)
    }

    /// Checks the URL, branch and subpath.
    pub fn validate(&self) -> Result<(), String> {
        let url = self.url.trim();
        if url.is_empty() {
            return Err("a git source's `url` is empty".into());
        }
        if url.starts_with('-') {
            return Err(format!(
                "{:?} is not a git URL",
                super::command::strip_url_passwords(url)
            ));
        }
        validate_branch(&self.branch)?;
        if let Some(sub) = &self.subpath {
            validate_subpath(sub)?;
        }
        if let Some(var) = &self.token_env
            && (var.is_empty() || var.contains(['=', '\0']))
        {
            return Err(format!(
                "token_env {var:?} is not an environment variable name"
            ));
        }
        if let Some(name) = &self.name {
            crate::config::check_root_name(name)?;
        }
        Ok(())
    }
}

impl SourceConfig {
    /// The source named by `SKILLS_REPO` / `SKILLS_BRANCH` if set.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Option<SourceConfig> {
        let url = env("SKILLS_REPO").filter(|v| !v.trim().is_empty())?;
        let mut git = GitSourceConfig::new(url.trim());
        if let Some(branch) = env("SKILLS_BRANCH").filter(|v| !v.trim().is_empty()) {
            git.branch = branch.trim().to_owned();
        }
        Some(SourceConfig::Git(git))
    }
}

/// The on-disk shape of a git source, checked on the way in.
#[derive(Deserialize)]
struct RawGitSource {
    url: String,
    #[serde(default)]
    branch: Option<String>,
    #[serde(default)]
    subpath: Option<String>,
    #[serde(default)]
    token_env: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

impl TryFrom<RawGitSource> for GitSourceConfig {
    type Error = String;

    fn try_from(raw: RawGitSource) -> Result<Self, String> {
        let source = GitSourceConfig {
            url: raw.url.trim().to_owned(),
            branch: raw.branch.unwrap_or_else(|| DEFAULT_BRANCH.to_owned()),
            subpath: raw.subpath,
            token_env: raw.token_env,
            name: raw.name,
        };
        source.validate()?;
        Ok(source)
    }
}

/// A subpath is relative, `/`-separated, without `..`; `.` means the repository root.
pub(crate) fn validate_subpath(sub: &str) -> Result<(), String> {
    if sub.starts_with('/') || sub.starts_with('\\') || sub.contains(':') {
        return Err(format!(
            "subpath {sub:?} must be relative to the repository"
        ));
    }
    if sub.split(['/', '\\']).any(|part| part == "..") {
        return Err(format!("subpath {sub:?} must not contain `..`"));
    }
    Ok(())
}

/// A branch name is passed to git as part of a refspec: refuse what could change its meaning.
pub(crate) fn validate_branch(branch: &str) -> Result<(), String> {
    let bad = branch.is_empty()
        || branch.starts_with('-')
        || branch.starts_with('/')
        || branch.ends_with('/')
        || branch.contains("..")
        || branch.contains("@{")
        || branch
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c));
    if bad {
        Err(format!("{branch:?} is not a valid branch name"))
    } else {
        Ok(())
    }
}

/// The user's home folder (`.` when unknown).
pub(crate) fn home_dir() -> PathBuf {
    std::env::home_dir().unwrap_or_else(|| PathBuf::from("."))
}

/// Expands a leading `~/` (or a lone `~`).
pub(crate) fn expand_home(path: &Path) -> PathBuf {
    match path.to_str() {
        Some("~") => home_dir(),
        Some(s) if s.starts_with("~/") => home_dir().join(&s[2..]),
        _ => path.to_path_buf(),
    }
}
