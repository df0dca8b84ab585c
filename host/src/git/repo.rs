//! One git source on disk: a bare repository that tracks the remote branch, and immutable
//! snapshots of its commits, one folder per commit.
//!
//! ```text
//! <content_dir>/<name>-<hash>/
//!   repo.git/        bare repository; `refs/remotes/origin/<branch>` is the remote branch
//!   trees/<commit>/  the files of <commit>, complete: a snapshot only appears by a rename
//!   CURRENT          the commit served (cache for the next start), replaced by a rename
//!   current          symlink to `trees/<commit>/<subpath>`, replaced by a rename (Unix)
//!   .lock            held while syncing, so two servers sharing the folder take turns
//! ```
//!
//! Skills are served from `trees/<commit>/<subpath>`, which never changes once it exists: a refresh
//! fetches, materialises the new commit beside the old one and re-points `current`; the caller's
//! next index build opens `current` and reaches the new folder, while the previous index keeps
//! reading the previous one (kept on disk). No reader ever sees half a tree. The remote branch is the truth: a force-pushed or
//! diverged branch simply replaces the tracking ref (`+` refspec), which is what
//! `git reset --hard origin/<branch>` would do in a working copy. A repository that git can no
//! longer use (deleted, truncated, objects missing) is re-cloned into a temporary folder and swapped
//! in with a rename, while the last snapshot keeps being served.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, Result, anyhow, bail};
use sha2::{Digest as _, Sha256};

use super::command::{GitRunner, PreparedUrl, git_dir_arg, prepare_url, work_tree_arg};
use super::config::GitSourceConfig;

/// Snapshots other than the current and the previous one are removed once this old (another
/// server sharing the folder may still be serving a recent one).
const PRUNE_AFTER: Duration = Duration::from_secs(600);
/// Leftovers of an interrupted operation (temporary folders) are removed once this old.
const STALE_AFTER: Duration = Duration::from_secs(3600);

static UNIQUE: AtomicU64 = AtomicU64::new(0);

/// A name for a temporary entry that no other operation, in this process or another, uses.
fn unique(prefix: &str) -> String {
    format!(
        ".tmp-{prefix}-{}-{}",
        std::process::id(),
        UNIQUE.fetch_add(1, Ordering::Relaxed)
    )
}

/// What the last sync of a source left.
#[derive(Debug, Clone, Default)]
pub(crate) struct RepoState {
    /// Commit served.
    pub(crate) commit: Option<String>,
    /// Folder served: `trees/<commit>/<subpath>`.
    pub(crate) root: Option<PathBuf>,
    /// Last successful sync with the remote.
    pub(crate) last_sync: Option<SystemTime>,
    /// Error of the last sync, when it failed (redacted).
    pub(crate) last_error: Option<String>,
}

/// What a successful sync did.
#[derive(Debug, Clone)]
pub(crate) struct SyncOutcome {
    pub(crate) old: Option<String>,
    pub(crate) new: String,
    pub(crate) files_changed: u64,
}

impl SyncOutcome {
    pub(crate) fn changed(&self) -> bool {
        self.old.as_deref() != Some(self.new.as_str())
    }
}

/// One git source.
#[derive(Debug)]
pub(crate) struct Repo {
    /// `<clean url>#<branch>`: how logs and responses name the source.
    pub(crate) label: String,
    url: PreparedUrl,
    branch: String,
    subpath: Option<String>,
    dir: PathBuf,
    runner: GitRunner,
    state: Mutex<RepoState>,
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
            url,
            branch: config.branch.clone(),
            subpath: config.subpath.clone(),
            dir,
            runner,
            state: Mutex::new(RepoState::default()),
        })
    }

    /// The folder holding this source's repository and snapshots.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn state(&self) -> RepoState {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn update_state(&self, f: impl FnOnce(&mut RepoState)) {
        f(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()));
    }

    fn repo_dir(&self) -> PathBuf {
        self.dir.join("repo.git")
    }

    fn trees_dir(&self) -> PathBuf {
        self.dir.join("trees")
    }

    /// The stable path of the folder served: the `current` symlink on Unix.
    pub(crate) fn current_path(&self) -> PathBuf {
        self.dir.join("current")
    }

    /// Re-points `current` at `root` (a new symlink renamed over the old one: atomic).
    #[cfg(unix)]
    fn point_current(&self, root: &Path) -> Result<()> {
        let link = self.current_path();
        let target = root.strip_prefix(&self.dir).unwrap_or(root);
        if std::fs::read_link(&link).is_ok_and(|t| t == target) {
            return Ok(());
        }
        let tmp = self.dir.join(unique("link"));
        std::os::unix::fs::symlink(target, &tmp)
            .with_context(|| format!("creating {}", tmp.display()))?;
        std::fs::rename(&tmp, &link).with_context(|| {
            let _ = std::fs::remove_file(&tmp);
            format!("switching {}", link.display())
        })
    }

    /// Without symlinks, callers use the per-commit folder from [`RepoState::root`].
    #[cfg(not(unix))]
    fn point_current(&self, _root: &Path) -> Result<()> {
        Ok(())
    }

    fn tracking_ref(&self) -> String {
        format!("refs/remotes/origin/{}", self.branch)
    }

    /// Picks up the snapshot a previous run served (`CURRENT`), if it is still complete on disk.
    pub(crate) fn load_cached(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.dir.join("CURRENT")).ok()?;
        let commit = text.trim().to_owned();
        if !is_object_id(&commit) {
            return None;
        }
        let tree = self.trees_dir().join(&commit);
        let root = self.resolve_root(&tree).ok()?;
        if let Err(e) = self.point_current(&root) {
            tracing::warn!(
                "git: {}: {}",
                self.label,
                crate::logsafe::Escaped(format!("{e:#}"))
            );
        }
        self.update_state(|s| {
            s.commit = Some(commit.clone());
            s.root = Some(root);
        });
        Some(commit)
    }

    /// Brings the source up to date with its remote branch (clone, fetch, recover) and switches to
    /// the new commit's snapshot. On error the previous snapshot stays served.
    /// Counted per source (its label, the operator's) in `skills_mcp_git_syncs_total` and
    /// `skills_mcp_git_last_success_timestamp_seconds`, traced as a `git sync` span.
    pub(crate) async fn sync(&self) -> Result<SyncOutcome> {
        use tracing::Instrument as _;
        let span = crate::child_span!("git sync", git.source = self.label.as_str());
        let result = self.sync_inner().instrument(span).await;
        let metrics = crate::telemetry::metrics();
        match &result {
            Ok(outcome) => {
                metrics.git_sync(
                    &self.label,
                    if outcome.changed() {
                        "updated"
                    } else {
                        "unchanged"
                    },
                );
                self.update_state(|s| {
                    s.last_sync = Some(SystemTime::now());
                    s.last_error = None;
                });
            }
            Err(e) => {
                metrics.git_sync(&self.label, "failed");
                let msg = self.runner.redactor().redact(&format!("{e:#}"));
                self.update_state(|s| s.last_error = Some(msg));
            }
        }
        result.map_err(|e| anyhow!(self.runner.redactor().redact(&format!("{e:#}"))))
    }

    async fn sync_inner(&self) -> Result<SyncOutcome> {
        std::fs::create_dir_all(self.trees_dir())
            .with_context(|| format!("creating {}", self.trees_dir().display()))?;
        let _lock = self.lock().await?;
        self.clean_stale();

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
        let tree = self.trees_dir().join(&new);
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

        let old = self.state().commit;
        let files_changed = if old.as_deref() == Some(new.as_str()) {
            0
        } else {
            self.files_changed(old.as_deref(), &new, &tree, &root).await
        };
        self.point_current(&root)?;
        if old.as_deref() != Some(new.as_str()) {
            write_atomically(&self.dir.join("CURRENT"), format!("{new}\n").as_bytes())?;
        }
        self.update_state(|s| {
            s.commit = Some(new.clone());
            s.root = Some(root);
        });
        self.prune(&[old.as_deref(), Some(new.as_str())]);
        Ok(SyncOutcome {
            old,
            new,
            files_changed,
        })
    }

    /// Waits for the folder's lock (another server may be syncing the same source).
    async fn lock(&self) -> Result<std::fs::File> {
        let path = self.dir.join(".lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        let deadline = tokio::time::Instant::now() + self.runner.timeout() * 2;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(std::fs::TryLockError::WouldBlock)
                    if tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    bail!("another process keeps {} locked", path.display())
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(e).with_context(|| format!("locking {}", path.display()));
                }
            }
        }
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
        let tmp = self.dir.join(unique("repo"));
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
        let old = self.dir.join(unique("old-repo"));
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
        if !is_object_id(&commit) {
            bail!("unexpected commit id {commit:?}");
        }
        Ok(commit)
    }

    /// Writes the files of `commit` to a temporary folder (with its own index file) and renames it
    /// to `trees/<commit>`: the snapshot exists complete or not at all.
    async fn materialize(&self, commit: &str) -> Result<()> {
        let staging = self.trees_dir().join(unique(short(commit)));
        let index = self.dir.join(unique("index"));
        std::fs::create_dir_all(&staging)
            .with_context(|| format!("creating {}", staging.display()))?;
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
        let tree = self.trees_dir().join(commit);
        if let Err(e) = std::fs::rename(&staging, &tree) {
            let _ = std::fs::remove_dir_all(&staging);
            // Another server sharing the folder made the same snapshot first.
            if !tree.is_dir() {
                return Err(e).with_context(|| format!("installing {}", tree.display()));
            }
        }
        Ok(())
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

    /// Removes snapshots other than `keep` (and the one `CURRENT` names) that are old enough.
    fn prune(&self, keep: &[Option<&str>]) {
        let current = std::fs::read_to_string(self.dir.join("CURRENT")).unwrap_or_default();
        let Ok(entries) = std::fs::read_dir(self.trees_dir()) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !is_object_id(&name)
                || keep.contains(&Some(name.as_ref()))
                || current.trim() == name
                || !older_than(&entry.path(), PRUNE_AFTER)
            {
                continue;
            }
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }

    /// Removes temporary folders and files left by an interrupted operation.
    fn clean_stale(&self) {
        for dir in [self.dir.clone(), self.trees_dir()] {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if entry.file_name().to_string_lossy().starts_with(".tmp-")
                    && older_than(&path, STALE_AFTER)
                {
                    if entry.file_type().is_ok_and(|t| t.is_dir()) {
                        let _ = std::fs::remove_dir_all(&path);
                    } else {
                        let _ = std::fs::remove_file(&path);
                    }
                }
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

fn is_object_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

pub(crate) fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

fn older_than(path: &Path, age: Duration) -> bool {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|elapsed| elapsed >= age)
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(unique("write"));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}
