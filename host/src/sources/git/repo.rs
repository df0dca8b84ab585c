//! One git source on disk: a bare repository that tracks the remote branch, beside the
//! source's snapshots of its commits (one folder per commit, [`crate::sources::snapshots`]).
//!
//! ```text
//! <content_dir>/<name>-<hash>/
//!   repo.git/        bare repository; `refs/remotes/origin/<branch>` is the remote branch
//!   trees/<commit>/  the files of <commit> (the rest of the layout: `snapshots`)
//! ```
//!
//! Skills are served from `trees/<commit>/<subpath>`. The remote branch is the truth: a
//! force-pushed or diverged branch simply replaces the tracking ref (`+` refspec), which is what
//! `git reset --hard origin/<branch>` would do in a working copy. A repository that git can no
//! longer use (deleted, truncated, objects missing) is re-cloned into a temporary folder and
//! swapped in with a rename, while the last snapshot keeps being served.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use sha2::{Digest as _, Sha256};

use super::command::{GitRunner, PreparedUrl, git_dir_arg, prepare_url, work_tree_arg};
use super::config::GitSourceConfig;
use crate::sources::snapshots::{Snapshots, is_revision, short, unique};
use crate::sources::{BoxFuture, Fetched, Pinned, Source};

/// One git source.
#[derive(Debug)]
pub(crate) struct Repo {
    /// `<clean url>#<branch>`: how logs and responses name the source.
    pub(crate) label: String,
    name: String,
    url: PreparedUrl,
    branch: String,
    subpath: Option<String>,
    runner: GitRunner,
    snapshots: Snapshots,
}

impl Source for Repo {
    fn kind(&self) -> &'static str {
        "git"
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn snapshots(&self) -> &Snapshots {
        &self.snapshots
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn lock_reference(&self, revision: &str) -> crate::sources::LockReference {
        crate::sources::LockReference {
            digest: revision.to_owned(),
            resolved_reference: format!(
                "{}@{revision}",
                self.runner.redactor().redact(&self.url.clean)
            ),
        }
    }

    fn lock_wait(&self) -> Duration {
        self.runner.timeout() * 2
    }

    fn resolve_root(&self, tree: &Path) -> Result<PathBuf> {
        Repo::resolve_root(self, tree)
    }

    fn redact(&self, text: &str) -> String {
        self.runner.redactor().redact(text)
    }

    fn fetch_command(&self) -> Option<std::process::Command> {
        Some(Repo::fetch_command(self))
    }

    fn fetch<'a>(&'a self, served: Option<&'a str>) -> BoxFuture<'a, Result<Fetched>> {
        Box::pin(self.fetch_snapshot(served))
    }

    fn fetch_pinned<'a>(
        &'a self,
        served: Option<&'a str>,
        pin: &'a str,
    ) -> BoxFuture<'a, Result<Pinned>> {
        Box::pin(self.fetch_pinned_snapshot(served, pin))
    }
}

impl Repo {
    pub(crate) fn new(
        config: &GitSourceConfig,
        content_dir: &Path,
        token: Option<&str>,
        timeout: Duration,
    ) -> Result<Self> {
        let url = prepare_url(config.url.trim());
        config.validate().map_err(|e| anyhow!(e))?;
        let runner = GitRunner::new(&url, token, timeout);
        let label = format!("{}#{}", runner.redactor().redact(&url.clean), config.branch);
        let dir = checkout_dir(content_dir, config);
        Ok(Self {
            label,
            name: config.root_name(),
            url,
            branch: config.branch.clone(),
            subpath: config.subpath.clone(),
            runner,
            snapshots: Snapshots::new(dir),
        })
    }

    fn dir(&self) -> &Path {
        self.snapshots.dir()
    }

    fn repo_dir(&self) -> PathBuf {
        self.dir().join("repo.git")
    }

    fn tracking_ref(&self) -> String {
        format!("refs/remotes/origin/{}", self.branch)
    }

    /// Fetches the remote branch (clone, fetch, recover) and makes its commit's snapshot; the
    /// swap is the caller's ([`crate::sources`]).
    async fn fetch_snapshot(&self, old: Option<&str>) -> Result<Fetched> {
        self.update_repo().await?;
        let new = match self.remote_head().await {
            Ok(commit) => commit,
            Err(e) => {
                tracing::warn!(
                    "git: {}: repository unusable after fetch ({}); re-cloning",
                    self.label,
                    crate::logsafe::Escaped(format!("{e:#}"))
                );
                self.clone_fresh().await?;
                self.remote_head().await?
            }
        };
        let tree = self.snapshots.tree(&new);
        if !tree.is_dir()
            && let Err(e) = self.materialize(&new).await
        {
            tracing::warn!(
                "git: {}: could not check out {} ({}); re-cloning",
                self.label,
                short(&new),
                crate::logsafe::Escaped(format!("{e:#}"))
            );
            self.clone_fresh().await?;
            self.materialize(&new).await?;
        }
        let root = self.resolve_root(&tree)?;
        let files_changed = if old == Some(new.as_str()) {
            0
        } else {
            self.files_changed(old, &new, &tree, &root).await
        };
        Ok(Fetched {
            revision: new,
            root,
            files_changed,
        })
    }

    /// The snapshot of the commit `pin` (checked out from the repository, which is fetched first
    /// when it can be: the remote's head is reported, never followed). A commit the repository
    /// does not hold is an error naming it.
    async fn fetch_pinned_snapshot(&self, old: Option<&str>, pin: &str) -> Result<Pinned> {
        if !is_revision(pin) {
            bail!("{pin:?} is not a commit id");
        }
        let upstream = match self.update_repo().await {
            Ok(()) => self.remote_head().await.ok(),
            Err(e) => {
                tracing::warn!(
                    "git: {}: could not fetch ({}); checking out the pinned {} from the local repository",
                    self.label,
                    crate::logsafe::Escaped(format!("{e:#}")),
                    short(pin)
                );
                None
            }
        };
        let tree = self.snapshots.tree(pin);
        if !tree.is_dir() {
            self.materialize(pin).await.with_context(|| {
                format!(
                    "the pinned commit {} is not in the repository of {}",
                    short(pin),
                    self.label
                )
            })?;
        }
        let root = self.resolve_root(&tree)?;
        let files_changed = if old == Some(pin) {
            0
        } else {
            self.files_changed(old, pin, &tree, &root).await
        };
        Ok(Pinned {
            fetched: Fetched {
                revision: pin.to_owned(),
                root,
                files_changed,
            },
            upstream,
        })
    }

    /// Fetches into the repository, cloning it when it is missing or unusable; a fetch that fails
    /// on a sound repository is a network (or remote) failure and is returned as is.
    async fn update_repo(&self) -> Result<()> {
        let repo = self.repo_dir();
        if !self.usable(&repo).await {
            if repo.exists() {
                tracing::warn!(
                    "git: {}: repository at {} is damaged; re-cloning",
                    self.label,
                    repo.display()
                );
            }
            return self.clone_fresh().await;
        }
        match self.fetch_into(&repo).await {
            Ok(()) => Ok(()),
            Err(fetch_err) => {
                if self.sound(&repo).await {
                    return Err(fetch_err);
                }
                tracing::warn!(
                    "git: {}: fetch failed on a damaged repository; re-cloning",
                    self.label
                );
                self.clone_fresh()
                    .await
                    .with_context(|| format!("{fetch_err:#}"))
            }
        }
    }

    /// Git recognises the folder as a repository.
    async fn usable(&self, repo: &Path) -> bool {
        repo.join("HEAD").is_file()
            && self
                .runner
                .run(
                    "checking the repository",
                    &[
                        git_dir_arg(repo).as_os_str(),
                        OsStr::new("rev-parse"),
                        OsStr::new("--git-dir"),
                    ],
                    &[],
                )
                .await
                .is_ok()
    }

    /// Every object reachable from the repository's refs is present.
    async fn sound(&self, repo: &Path) -> bool {
        self.runner
            .run(
                "checking the repository",
                &[
                    git_dir_arg(repo).as_os_str(),
                    OsStr::new("fsck"),
                    OsStr::new("--connectivity-only"),
                    OsStr::new("--no-progress"),
                    OsStr::new("--no-dangling"),
                ],
                &[],
            )
            .await
            .is_ok()
    }

    /// `git --git-dir=<repo> fetch ... <url> +refs/heads/<branch>:refs/remotes/origin/<branch>`.
    fn fetch_args(&self, repo: &Path) -> Vec<std::ffi::OsString> {
        let refspec = format!("+refs/heads/{}:{}", self.branch, self.tracking_ref());
        let mut args = vec![git_dir_arg(repo)];
        args.extend(
            [
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--",
                &self.url.clean,
                &refspec,
            ]
            .map(std::ffi::OsString::from),
        );
        args
    }

    /// The command a fetch runs (see [`GitRunner::command`]).
    pub(crate) fn fetch_command(&self) -> std::process::Command {
        self.runner.command(&self.fetch_args(&self.repo_dir()))
    }

    async fn fetch_into(&self, repo: &Path) -> Result<()> {
        self.runner
            .run(
                &format!("fetching {}", self.label),
                &self.fetch_args(repo),
                &[],
            )
            .await
            .map(drop)
    }

    /// Clones (`--single-branch` equivalent: only the tracked branch) into a temporary folder and
    /// renames it into place.
    async fn clone_fresh(&self) -> Result<()> {
        let tmp = self.dir().join(unique("repo"));
        let result = async {
            self.runner
                .run(
                    "creating the repository",
                    &[
                        OsStr::new("init"),
                        OsStr::new("--quiet"),
                        OsStr::new("--bare"),
                        tmp.as_os_str(),
                    ],
                    &[],
                )
                .await?;
            // For people who look inside: `git fetch` works there too. The URL has no password.
            let refspec = format!("+refs/heads/{}:{}", self.branch, self.tracking_ref());
            for (key, value) in [
                ("remote.origin.url", self.url.clean.as_str()),
                ("remote.origin.fetch", refspec.as_str()),
                ("remote.origin.tagOpt", "--no-tags"),
            ] {
                self.runner
                    .run(
                        "configuring the repository",
                        &[
                            git_dir_arg(&tmp).as_os_str(),
                            OsStr::new("config"),
                            OsStr::new(key),
                            OsStr::new(value),
                        ],
                        &[],
                    )
                    .await?;
            }
            self.fetch_into(&tmp).await
        }
        .await;
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
        let repo = self.repo_dir();
        let old = self.dir().join(unique("old-repo"));
        if repo.exists() {
            std::fs::rename(&repo, &old)
                .with_context(|| format!("moving the damaged {} aside", repo.display()))?;
        }
        std::fs::rename(&tmp, &repo).with_context(|| format!("installing {}", repo.display()))?;
        let _ = std::fs::remove_dir_all(&old);
        Ok(())
    }

    /// The commit of the remote branch, as last fetched.
    async fn remote_head(&self) -> Result<String> {
        let spec = format!("{}^{{commit}}", self.tracking_ref());
        let out = self
            .runner
            .run(
                "reading the fetched branch",
                &[
                    git_dir_arg(&self.repo_dir()).as_os_str(),
                    OsStr::new("rev-parse"),
                    OsStr::new("--verify"),
                    OsStr::new("--quiet"),
                    OsStr::new(&spec),
                ],
                &[],
            )
            .await?;
        let commit = out.trim().to_owned();
        if !is_revision(&commit) {
            bail!("unexpected commit id {commit:?}");
        }
        Ok(commit)
    }

    /// Writes the files of `commit` to a staging folder (with its own index file) and installs
    /// it as `trees/<commit>`: the snapshot exists complete or not at all.
    async fn materialize(&self, commit: &str) -> Result<()> {
        let staging = self.snapshots.staging(commit)?;
        let index = self.dir().join(unique("index"));
        let result = self
            .runner
            .run(
                &format!("checking out {}", short(commit)),
                &[
                    git_dir_arg(&self.repo_dir()).as_os_str(),
                    work_tree_arg(&staging).as_os_str(),
                    OsStr::new("read-tree"),
                    OsStr::new("--reset"),
                    OsStr::new("-u"),
                    OsStr::new(commit),
                ],
                &[("GIT_INDEX_FILE", index.as_os_str())],
            )
            .await;
        let _ = std::fs::remove_file(&index);
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
        self.snapshots.install(&staging, commit)
    }

    /// The folder served for the snapshot at `tree`.
    fn resolve_root(&self, tree: &Path) -> Result<PathBuf> {
        if !tree.is_dir() {
            bail!("snapshot {} is missing", tree.display());
        }
        match self.subpath.as_deref().map(|s| s.trim_matches('/')) {
            None => {
                // A repository's skills live in `<checkout>/skills`; a repository without it serves its root.
                let skills = tree.join("skills");
                Ok(if skills.is_dir() {
                    skills
                } else {
                    tree.to_path_buf()
                })
            }
            Some("" | ".") => Ok(tree.to_path_buf()),
            Some(sub) => {
                let root = tree.join(sub);
                if root.is_dir() {
                    Ok(root)
                } else {
                    bail!(
                        "{}: subpath {sub:?} does not exist on the branch",
                        self.label
                    )
                }
            }
        }
    }

    /// The number of files that differ between `old` and `new` below the served folder (every file
    /// of `new` there when `old` is unknown or no longer in the repository).
    async fn files_changed(&self, old: Option<&str>, new: &str, tree: &Path, root: &Path) -> u64 {
        let repo = self.repo_dir();
        let pathspec = root
            .strip_prefix(tree)
            .ok()
            .and_then(|p| p.to_str())
            .map(|p| p.replace('\\', "/"))
            .filter(|p| !p.is_empty());
        let old_known = match old {
            Some(old) => self
                .runner
                .run(
                    "looking up the previous commit",
                    &[
                        git_dir_arg(&repo).as_os_str(),
                        OsStr::new("cat-file"),
                        OsStr::new("-e"),
                        OsStr::new(&format!("{old}^{{commit}}")),
                    ],
                    &[],
                )
                .await
                .is_ok(),
            None => false,
        };
        let git_dir = git_dir_arg(&repo);
        let mut args: Vec<&OsStr> = vec![git_dir.as_os_str()];
        match (old, old_known) {
            (Some(old), true) => {
                args.extend(["diff", "--name-only", "--no-renames", "-z", old, new].map(OsStr::new))
            }
            _ => args.extend(["ls-tree", "-r", "--name-only", "-z", new].map(OsStr::new)),
        }
        args.push(OsStr::new("--"));
        if let Some(p) = &pathspec {
            args.push(OsStr::new(p));
        }
        match self.runner.run("counting changed files", &args, &[]).await {
            Ok(out) => out.split('\0').filter(|s| !s.is_empty()).count() as u64,
            Err(e) => {
                tracing::warn!(
                    "git: {}: {}",
                    self.label,
                    crate::logsafe::Escaped(format!("{e:#}"))
                );
                0
            }
        }
    }
}

/// The folder of a source below the content folder.
pub(crate) fn checkout_dir(content_dir: &Path, config: &GitSourceConfig) -> PathBuf {
    let url = prepare_url(config.url.trim());
    content_dir.join(dir_name(
        &url.clean,
        &config.branch,
        config.subpath.as_deref(),
    ))
}

/// `<last path segment>-<8 hex digits of the URL, branch and subpath>`: readable and distinct per
/// source (two subpaths of one branch are two sources, each with its own clone).
fn dir_name(url: &str, branch: &str, subpath: Option<&str>) -> String {
    let name = repo_name(url);
    let digest = Sha256::digest(format!("{url}\n{branch}\n{}", subpath.unwrap_or("")).as_bytes());
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{name}-{hex}")
}

/// A repository's name from its URL: the last path segment without `.git`, other characters
/// than `A-Z a-z 0-9 - _ .` as `_`, at most 48 characters (`repo` when nothing is left). The
/// checkout folder's name and a git source's default `name`.
pub(crate) fn repo_name(url: &str) -> String {
    let last = url
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\', ':'])
        .next()
        .unwrap_or("");
    let last = last.strip_suffix(".git").unwrap_or(last);
    let mut name: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect();
    name = name.trim_start_matches('.').to_owned();
    if name.is_empty() {
        name = "repo".to_owned();
    }
    name
}
