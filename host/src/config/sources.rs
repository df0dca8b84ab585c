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
    /// More roots, after the standard ones (relative paths are relative to the working directory).
    pub roots: Vec<PathBuf>,
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
        });
        primary
            .into_iter()
            .chain(self.repos.iter().cloned())
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
}
