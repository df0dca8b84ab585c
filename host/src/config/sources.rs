//! The `sources` section: where skills come from (standard folders, listed roots, git).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::GitSourceConfig;
use super::check::{Checks, Section};

/// Where skills come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SourcesConfig {
    /// Use the standard roots (`~/.claude/skills`, `~/.agents/skills`, `./.claude/skills`,
    /// `./.agents/skills`, `./skills`) when they exist.
    pub default_roots: bool,
    /// More roots, after the standard ones (relative paths are relative to the working
    /// directory): a path, or `{path: DIR, name: NAME}` naming it for access rules (default
    /// name: the folder's).
    pub roots: Vec<RootEntry>,
    /// Git URL of a skills repository (empty: no git source).
    pub repo: String,
    /// Branch of `repo` to track.
    pub branch: String,
    /// Folder of `repo` holding the skills (default: `skills/` when the branch has it, else the
    /// repository root).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subpath: Option<String>,
    /// More git repositories (`url`, `branch`, `subpath`, `token_env`), after `repo`.
    pub repos: Vec<GitSourceConfig>,
    /// Skills published as OCI artifacts (`ref`, `name`, `verify`, `token_env`, `token_realm`), after the git
    /// sources.
    pub oci: Vec<crate::sources::oci::OciSourceConfig>,
    /// Registries (and index hosts) spoken to in plain HTTP (`host` or `host:port`) besides
    /// loopback ones.
    pub insecure_registries: Vec<String>,
    /// The lock file (`skills-mcp lock`; default: `skills.lock` beside the `--config` file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock_file: Option<PathBuf>,
    /// Serve exactly the revisions of the lock file (as `serve --locked`).
    pub locked: bool,
    /// Agent Skills discovery indexes (`URL`, or `{url, name, token_env}`), after the OCI
    /// sources.
    pub indexes: Vec<crate::sources::index::IndexSourceConfig>,
    /// Origins (`scheme://host[:port]`) an index's entries may be fetched from besides the
    /// index's own (without credentials).
    pub index_origins: Vec<String>,
}

/// An entry of `sources.roots`: a folder, optionally named for access rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RootEntry {
    /// A folder, named after its last segment.
    Path(PathBuf),
    /// A folder and its name.
    Named {
        path: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
}

impl RootEntry {
    /// The folder.
    pub fn path(&self) -> &PathBuf {
        match self {
            RootEntry::Path(p) | RootEntry::Named { path: p, .. } => p,
        }
    }

    /// The name given, if any.
    pub fn name(&self) -> Option<&str> {
        match self {
            RootEntry::Path(_) => None,
            RootEntry::Named { name, .. } => name.as_deref(),
        }
    }
}

impl Default for SourcesConfig {
    fn default() -> Self {
        Self {
            default_roots: true,
            roots: Vec::new(),
            repo: String::new(),
            branch: "main".into(),
            subpath: None,
            repos: Vec::new(),
            oci: Vec::new(),
            insecure_registries: Vec::new(),
            lock_file: None,
            locked: false,
            indexes: Vec::new(),
            index_origins: Vec::new(),
        }
    }
}

impl SourcesConfig {
    /// The git sources, lowest precedence first: `repo` (when set), then `repos`.
    pub fn git_sources(&self) -> Vec<GitSourceConfig> {
        let primary = (!self.repo.trim().is_empty()).then(|| GitSourceConfig {
            url: self.repo.trim().to_string(),
            branch: self.branch.trim().to_string(),
            subpath: self.subpath.clone(),
            token_env: None,
            name: None,
        });
        primary
            .into_iter()
            .chain(self.repos.iter().cloned())
            .collect()
    }
}

impl SourcesConfig {
    /// Every remote source in root order: the git sources, the OCI sources, the indexes.
    pub fn remote_sources(&self) -> Vec<crate::sources::SourceConfig> {
        use crate::sources::SourceConfig;
        self.git_sources()
            .into_iter()
            .map(SourceConfig::Git)
            .chain(self.oci.iter().map(|o| SourceConfig::Oci {
                config: o.clone(),
                insecure_registries: self.insecure_registries.clone(),
            }))
            .chain(self.indexes.iter().map(|i| SourceConfig::Index {
                config: i.clone(),
                origins: self.index_origins.clone(),
                insecure: self.insecure_registries.clone(),
            }))
            .collect()
    }
}

impl Section for SourcesConfig {
    fn check(&self, c: &mut Checks) {
        c.need(
            !self.branch.trim().is_empty(),
            "sources.branch",
            format!("{:?}", self.branch),
            "a non-empty branch name",
        );
        let git = self.git_sources();
        if !self.repo.trim().is_empty()
            && let Some(Err(e)) = git.first().map(GitSourceConfig::validate)
        {
            c.need(false, "sources.repo", format!("{:?}", self.repo), &e);
        }
        for (i, root) in self.roots.iter().enumerate() {
            if let Some(Err(e)) = root.name().map(super::check_root_name) {
                c.need(
                    false,
                    &format!("sources.roots[{i}].name"),
                    format!("{:?}", root.name().unwrap_or_default()),
                    &e,
                );
            }
        }
        for (i, origin) in self.index_origins.iter().enumerate() {
            c.need(
                crate::sources::oci::registry::origin_of(origin).is_some(),
                &format!("sources.index_origins[{i}]"),
                format!("{origin:?}"),
                "an http(s) origin such as https://cdn.example.com",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_comes_before_repos() {
        let s = SourcesConfig {
            repo: " https://example.com/a.git ".into(),
            branch: "dev".into(),
            repos: vec![GitSourceConfig {
                url: "https://example.com/b.git".into(),
                branch: "main".into(),
                subpath: None,
                token_env: None,
                name: None,
            }],
            ..SourcesConfig::default()
        };
        let urls: Vec<(String, String)> = s
            .git_sources()
            .into_iter()
            .map(|g| (g.url, g.branch))
            .collect();
        assert_eq!(
            urls,
            [
                ("https://example.com/a.git".to_string(), "dev".to_string()),
                ("https://example.com/b.git".into(), "main".into())
            ]
        );
        assert!(SourcesConfig::default().git_sources().is_empty());
    }

    #[test]
    fn empty_branch_and_option_like_repo_are_refused() {
        let s = SourcesConfig {
            repo: "--upload-pack=evil".into(),
            branch: " ".into(),
            ..SourcesConfig::default()
        };
        let mut c = Checks::default();
        s.check(&mut c);
        let keys: Vec<String> = c.into_vec().into_iter().map(|i| i.key).collect();
        assert_eq!(keys, ["sources.branch", "sources.repo"]);
    }

    #[test]
    fn index_origins_must_be_http_origins() {
        let s = SourcesConfig {
            index_origins: vec![
                "https://cdn.example.com".into(),
                " http://127.0.0.1:8080/ ".into(),
                "cdn.example.com".into(),
                "file:///tmp".into(),
            ],
            ..SourcesConfig::default()
        };
        let mut c = Checks::default();
        s.check(&mut c);
        let keys: Vec<String> = c.into_vec().into_iter().map(|i| i.key).collect();
        assert_eq!(
            keys,
            ["sources.index_origins[2]", "sources.index_origins[3]"]
        );
    }
}
