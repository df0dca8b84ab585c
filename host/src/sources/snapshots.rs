//! The folder of one remote source: immutable snapshots, one per revision, and the atomic swap
//! of the one served. Every kind of source (git, OCI) keeps its content this way; only how a
//! snapshot is fetched differs (see [`super::Source`]).
//!
//! ```text
//! <content_dir>/<name>-<hash>/
//!   trees/<revision>/  the files of a revision, complete: a snapshot only appears by a rename
//!   CURRENT            the revision served (cache for the next start), replaced by a rename
//!   current            symlink to the folder served below `trees/<revision>`, replaced by a rename (Unix)
//!   .lock              held while syncing, so two servers sharing the folder take turns
//! ```
//!
//! A revision is a git commit id or the hex of an OCI manifest digest (40 or 64 hex digits).
//! Skills are served from a folder below `trees/<revision>`, which never changes once it exists:
//! a refresh makes the new snapshot beside the old one and re-points `current`; the caller's next
//! index build opens `current` and reaches the new folder, while the previous index keeps reading
//! the previous one (kept on disk). No reader ever sees half a tree, and a failed fetch or check
//! leaves the last good snapshot served.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, Result, bail};

/// Snapshots other than the current and the previous one are removed once this old (another
/// server sharing the folder may still be serving a recent one).
const PRUNE_AFTER: Duration = Duration::from_secs(600);
/// Leftovers of an interrupted operation (temporary folders) are removed once this old.
const STALE_AFTER: Duration = Duration::from_secs(3600);

static UNIQUE: AtomicU64 = AtomicU64::new(0);

/// A name for a temporary entry that no other operation, in this process or another, uses.
pub(crate) fn unique(prefix: &str) -> String {
    format!(
        ".tmp-{prefix}-{}-{}",
        std::process::id(),
        UNIQUE.fetch_add(1, Ordering::Relaxed)
    )
}

/// What the last sync of a source left.
#[derive(Debug, Clone, Default)]
pub(crate) struct SourceState {
    /// Revision served (git commit, OCI manifest digest's hex).
    pub(crate) revision: Option<String>,
    /// Folder served, below `trees/<revision>`.
    pub(crate) root: Option<PathBuf>,
    /// Last successful sync with the remote.
    pub(crate) last_sync: Option<SystemTime>,
    /// Error of the last sync, when it failed (redacted).
    pub(crate) last_error: Option<String>,
}

/// The snapshot folder of one source, and what it serves.
#[derive(Debug)]
pub(crate) struct Snapshots {
    dir: PathBuf,
    state: Mutex<SourceState>,
}

impl Snapshots {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            state: Mutex::new(SourceState::default()),
        }
    }

    /// The folder holding this source's snapshots (and, for git, its repository).
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn trees_dir(&self) -> PathBuf {
        self.dir.join("trees")
    }

    /// The snapshot folder of `revision` (it may not exist).
    pub(crate) fn tree(&self, revision: &str) -> PathBuf {
        self.trees_dir().join(revision)
    }

    /// The stable path of the folder served: the `current` symlink on Unix.
    pub(crate) fn current_path(&self) -> PathBuf {
        self.dir.join("current")
    }

    pub(crate) fn state(&self) -> SourceState {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn update_state(&self, f: impl FnOnce(&mut SourceState)) {
        f(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()));
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

    /// Without symlinks, callers use the per-revision folder from [`SourceState::root`].
    #[cfg(not(unix))]
    fn point_current(&self, _root: &Path) -> Result<()> {
        Ok(())
    }

    /// The revision a previous run served (`CURRENT`), if its snapshot is still on disk, with
    /// the folder `resolve` finds in it; `current` is pointed at that folder.
    pub(crate) fn load_cached(
        &self,
        label: &str,
        resolve: impl FnOnce(&Path) -> Result<PathBuf>,
    ) -> Option<String> {
        let text = std::fs::read_to_string(self.dir.join("CURRENT")).ok()?;
        let revision = text.trim().to_owned();
        if !is_revision(&revision) {
            return None;
        }
        let tree = self.tree(&revision);
        if !tree.is_dir() {
            return None;
        }
        let root = resolve(&tree).ok()?;
        if let Err(e) = self.point_current(&root) {
            tracing::warn!("{label}: {}", crate::logsafe::Escaped(format!("{e:#}")));
        }
        self.update_state(|s| {
            s.revision = Some(revision.clone());
            s.root = Some(root);
        });
        Some(revision)
    }

    /// Makes the folders, waits for the lock (another server may be syncing the same source,
    /// for up to `wait`) and removes what an interrupted operation left. The lock is held until
    /// the returned file is dropped.
    pub(crate) async fn begin(&self, wait: Duration) -> Result<std::fs::File> {
        std::fs::create_dir_all(self.trees_dir())
            .with_context(|| format!("creating {}", self.trees_dir().display()))?;
        let lock = self.lock(wait).await?;
        self.clean_stale();
        Ok(lock)
    }

    async fn lock(&self, wait: Duration) -> Result<std::fs::File> {
        let path = self.dir.join(".lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        let deadline = tokio::time::Instant::now() + wait;
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

    /// A new, empty staging folder below `trees/`, to fill and then [`Self::install`].
    pub(crate) fn staging(&self, revision: &str) -> Result<PathBuf> {
        let staging = self.trees_dir().join(unique(short(revision)));
        std::fs::create_dir_all(&staging)
            .with_context(|| format!("creating {}", staging.display()))?;
        Ok(staging)
    }

    /// Renames a complete `staging` folder to `trees/<revision>`: the snapshot exists complete or
    /// not at all. Another server sharing the folder may have made the same snapshot first.
    pub(crate) fn install(&self, staging: &Path, revision: &str) -> Result<()> {
        let tree = self.tree(revision);
        if let Err(e) = std::fs::rename(staging, &tree) {
            let _ = std::fs::remove_dir_all(staging);
            if !tree.is_dir() {
                return Err(e).with_context(|| format!("installing {}", tree.display()));
            }
        }
        Ok(())
    }

    /// Serves `root` (below `trees/<revision>`) from now on: `current` re-pointed, `CURRENT`
    /// rewritten, the state updated; snapshots older than the previous one are pruned.
    pub(crate) fn swap(&self, revision: &str, root: PathBuf) -> Result<()> {
        let old = self.state().revision;
        self.point_current(&root)?;
        if old.as_deref() != Some(revision) {
            write_atomically(
                &self.dir.join("CURRENT"),
                format!("{revision}\n").as_bytes(),
            )?;
        }
        self.update_state(|s| {
            s.revision = Some(revision.to_owned());
            s.root = Some(root);
        });
        self.prune(&[old.as_deref(), Some(revision)]);
        Ok(())
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
            if !is_revision(&name)
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

/// A git object id or the hex of a SHA-256 digest: 40 or 64 hex digits.
pub(crate) fn is_revision(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The first 12 characters of a revision, for messages.
pub(crate) fn short(revision: &str) -> &str {
    &revision[..revision.len().min(12)]
}

fn older_than(path: &Path, age: Duration) -> bool {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|elapsed| elapsed >= age)
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(unique("write"));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}
