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
    /// What the lock file pins (`serve --locked`): followed before any `PIN`.
    pub(crate) locked: Option<std::sync::Arc<Locked>>,
    /// The view served for a locked revision some of whose skills the lock refuses: (the
    /// folder it was made from, the view).
    pub(crate) view: Option<(PathBuf, PathBuf)>,
    /// The last upstream revision reported as not followed (reported once per revision).
    pub(crate) reported_upstream: Option<String>,
}

/// What the lock file pins of one source (`serve --locked`, `sources.locked`).
#[derive(Debug)]
pub(crate) struct Locked {
    /// The revision (git commit, manifest digest's hex).
    pub(crate) revision: String,
    /// Its skills and their `contentDigest`.
    pub(crate) skills: Vec<super::lock::LockedSkill>,
    /// The lock file, for messages.
    pub(crate) lock_file: PathBuf,
    /// How skills are indexed to be hashed.
    pub(crate) options: crate::catalog::CatalogOptions,
}

/// The snapshot folder of one source, and what it serves.
#[derive(Debug)]
pub(crate) struct Snapshots {
    dir: PathBuf,
    state: Mutex<SourceState>,
}

/// The folder of a source's snapshots below `content_dir`: `KIND-NAME-HASH`, where the hash (of
/// the kind, where it comes from and its name) keeps two sources of one name apart.
pub fn checkout_dir(content_dir: &Path, kind: &str, origin: &str, name: &str) -> PathBuf {
    use sha2::{Digest as _, Sha256};
    let digest = Sha256::digest(format!("{kind}\n{origin}\n{name}"));
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    content_dir.join(format!("{kind}-{name}-{hex}"))
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

    /// The revision `sources rollback` pinned (`PIN`), which every replica sharing the folder
    /// follows until `sources unpin`.
    pub(crate) fn pin(&self) -> Option<String> {
        read_revision(&self.dir.join("PIN"))
    }

    /// Pins `revision` (`None`: unpins).
    pub(crate) fn set_pin(&self, revision: Option<&str>) -> Result<()> {
        let path = self.dir.join("PIN");
        match revision {
            Some(revision) => write_atomically(&path, format!("{revision}\n").as_bytes()),
            None => match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(e).with_context(|| format!("removing {}", path.display()))
                }
                _ => Ok(()),
            },
        }
    }

    /// The revision served before the current one (`PREVIOUS`), written by [`Self::swap`].
    pub(crate) fn previous(&self) -> Option<String> {
        read_revision(&self.dir.join("PREVIOUS"))
    }

    /// The revision a sync must serve: the lock file's, else the `PIN`, else none (follow the
    /// remote).
    pub(crate) fn wanted(&self) -> Option<String> {
        self.state()
            .locked
            .map(|l| l.revision.clone())
            .or_else(|| self.pin())
    }

    /// A folder with the files of `root` (a snapshot's served folder) but those of `leave_out`
    /// (paths relative to `root`), hard-linked (copied where links fail): what a locked source
    /// serves when the lock refuses some of its skills. Made once per revision and refusal, below
    /// `views/`, complete before it appears.
    pub(crate) fn view(
        &self,
        revision: &str,
        root: &Path,
        leave_out: &[String],
    ) -> Result<PathBuf> {
        use sha2::{Digest as _, Sha256};
        let views = self.dir.join("views");
        std::fs::create_dir_all(&views).with_context(|| format!("creating {}", views.display()))?;
        // The folder it is made from too: a locked index source serves its pin from the
        // snapshot of whatever the index holds now (see `index::Inner::pull_pinned`).
        let digest = Sha256::digest(format!("{}\n{}", root.display(), leave_out.join("\n")));
        let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
        let dest = views.join(format!("{revision}-{hex}"));
        if dest.is_dir() {
            return Ok(dest);
        }
        let staging = views.join(unique("view"));
        let skip: std::collections::HashSet<&str> = leave_out.iter().map(String::as_str).collect();
        let result = link_tree(root, &staging, "", &skip, 0)
            .and_then(|()| std::fs::rename(&staging, &dest).map_err(Into::into));
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&staging);
            if !dest.is_dir() {
                return Err(e).with_context(|| format!("making {}", dest.display()));
            }
        }
        Ok(dest)
    }

    /// Stops serving anything (the `current` link removed): a locked source whose locked
    /// revision could not be brought in serves nothing rather than another revision.
    pub(crate) fn unserve(&self) {
        let _ = std::fs::remove_file(self.current_path());
        self.update_state(|s| {
            s.revision = None;
            s.root = None;
        });
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
        let revision = read_revision(&self.dir.join("CURRENT"))?;
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
        let on_disk = read_revision(&self.dir.join("CURRENT"));
        if on_disk.as_deref() != Some(revision) {
            write_atomically(
                &self.dir.join("CURRENT"),
                format!("{revision}\n").as_bytes(),
            )?;
            // What `sources rollback` goes back to.
            if let Some(before) = on_disk.or(old.clone()).filter(|o| o != revision) {
                write_atomically(&self.dir.join("PREVIOUS"), format!("{before}\n").as_bytes())?;
            }
        }
        self.update_state(|s| {
            s.revision = Some(revision.to_owned());
            s.root = Some(root);
        });
        self.prune(&[old.as_deref(), Some(revision)]);
        Ok(())
    }

    /// Removes snapshots other than `keep` (and those `CURRENT`, `PREVIOUS` and `PIN` name) that
    /// are old enough.
    fn prune(&self, keep: &[Option<&str>]) {
        let named: Vec<String> = ["CURRENT", "PREVIOUS", "PIN"]
            .iter()
            .filter_map(|f| read_revision(&self.dir.join(f)))
            .collect();
        let Ok(entries) = std::fs::read_dir(self.trees_dir()) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !is_revision(&name)
                || keep.contains(&Some(name.as_ref()))
                || named.iter().any(|n| n.as_str() == name.as_ref())
                || !older_than(&entry.path(), PRUNE_AFTER)
            {
                continue;
            }
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }

    /// Removes temporary folders and files left by an interrupted operation.
    fn clean_stale(&self) {
        for dir in [self.dir.clone(), self.trees_dir(), self.dir.join("views")] {
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

/// Links every regular file below `from` into `to` (made), but those whose path relative to
/// the top (`rel`) is in `skip`; symlinks and other entries are left out.
fn link_tree(
    from: &Path,
    to: &Path,
    rel: &str,
    skip: &std::collections::HashSet<&str>,
    depth: usize,
) -> Result<()> {
    if depth > 64 {
        bail!("{} nests too deep", from.display());
    }
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name_str) = name.to_str() else {
            continue;
        };
        let path = if rel.is_empty() {
            name_str.to_owned()
        } else {
            format!("{rel}/{name_str}")
        };
        let kind = entry.file_type()?;
        if kind.is_dir() {
            link_tree(&entry.path(), &to.join(&name), &path, skip, depth + 1)?;
        } else if kind.is_file() && !skip.contains(path.as_str()) {
            let target = to.join(&name);
            if std::fs::hard_link(entry.path(), &target).is_err() {
                std::fs::copy(entry.path(), &target)
                    .with_context(|| format!("copying {}", entry.path().display()))?;
            }
        }
    }
    Ok(())
}

/// The revision a file (`CURRENT`, `PREVIOUS`, `PIN`) names, if it names one.
fn read_revision(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let revision = text.trim();
    is_revision(revision).then(|| revision.to_owned())
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
