//! The file watcher on Linux: one inotify instance, read by a task of the runtime (no thread
//! of its own), with a watch on every folder of the roots.
//!
//! Each watched folder is kept as its parent's watch and its own name (a root: its whole
//! path), so that the path of a folder that gains a subfolder can be made again; nothing else
//! is kept. (`notify` kept each folder's whole path twice, in two maps, and a thread with its
//! own poll loop: about 2 MB of the stdio server's heap on a corpus of 4,425 folders.)
//!
//! Only the events that can change the index are asked for (no opens, reads or closes): a
//! file or folder made, written, changed in its attributes, deleted or moved, a root deleted
//! or moved, or the kernel's queue overflowing. Folders named `.git` or `node_modules` are
//! neither watched nor reported ([`super::relevant`]).

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;
use tokio::sync::mpsc;

/// [`Dir::parent`] of a root.
const ROOT: i32 = -1;

/// What a folder's watch asks for.
fn mask(root: bool) -> WatchFlags {
    let changes = WatchFlags::ATTRIB
        | WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MODIFY
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO;
    if root {
        // (a root given as a symbolic link is followed, as the index follows it)
        changes | WatchFlags::DELETE_SELF | WatchFlags::MOVE_SELF
    } else {
        changes | WatchFlags::ONLYDIR | WatchFlags::DONT_FOLLOW
    }
}

/// A watched folder.
#[derive(Debug)]
struct Dir {
    /// The watch of the folder holding it ([`ROOT`]: a root).
    parent: i32,
    /// Its name in that folder (a root: its path).
    name: Box<OsStr>,
}

/// An inotify instance and its watched folders, by watch.
#[derive(Debug)]
pub struct Tree {
    fd: OwnedFd,
    dirs: HashMap<i32, Dir>,
}

impl Tree {
    /// Watch every folder of `roots` (blocking: a walk of each root's folders). Fails when a
    /// root or a folder cannot be watched (no inotify, too many watches for the system's
    /// limit, a folder that cannot be read).
    pub fn watch(roots: &[PathBuf]) -> Result<Self> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)
            .context("starting the file watcher (inotify)")?;
        let mut tree = Self {
            fd,
            dirs: HashMap::new(),
        };
        for root in roots {
            if !super::relevant(root) {
                continue;
            }
            tree.add(root.clone(), ROOT, root.as_os_str().into())
                .with_context(|| format!("watching {}", root.display()))?;
        }
        Ok(tree)
    }

    /// Number of folders watched.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.dirs.len()
    }

    /// Watch folder `path` (named `name` in the folder of watch `parent`) and every folder
    /// below it. A folder that is gone or no longer a folder when its watch is placed is
    /// skipped (it changed meanwhile, and that change is an event of its parent).
    fn add(&mut self, path: PathBuf, parent: i32, name: Box<OsStr>) -> Result<()> {
        let mut todo = vec![(path, parent, name)];
        while let Some((path, parent, name)) = todo.pop() {
            let wd = match inotify::add_watch(&self.fd, &path, mask(parent == ROOT)) {
                Ok(wd) => wd,
                Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) if parent != ROOT => continue,
                Err(e) => {
                    return Err(std::io::Error::from(e))
                        .with_context(|| format!("watching {}", path.display()));
                }
            };
            self.dirs.insert(wd, Dir { parent, name });
            let Ok(entries) = std::fs::read_dir(&path) else {
                continue;
            };
            for entry in entries.flatten() {
                // (`file_type` does not follow a symbolic link: the index does not either)
                let name = entry.file_name();
                if entry.file_type().is_ok_and(|t| t.is_dir()) && relevant_name(&name) {
                    todo.push((entry.path(), wd, name.into_boxed_os_str()));
                }
            }
        }
        Ok(())
    }

    /// The path of the folder of watch `wd`.
    fn path(&self, mut wd: i32) -> Option<PathBuf> {
        let mut names: Vec<&OsStr> = Vec::new();
        loop {
            let dir = self.dirs.get(&wd)?;
            names.push(&dir.name);
            if dir.parent == ROOT {
                break;
            }
            wd = dir.parent;
        }
        Some(names.iter().rev().collect())
    }

    /// The watch of folder `name` in the folder of watch `parent`.
    fn child(&self, parent: i32, name: &OsStr) -> Option<i32> {
        self.dirs
            .iter()
            .find(|(_, d)| d.parent == parent && *d.name == *name)
            .map(|(&wd, _)| wd)
    }

    /// Stop watching the folder of watch `wd` and every folder below it (moved away: its
    /// watches would report a place that is no longer the root's).
    fn remove(&mut self, wd: i32) {
        let mut gone = vec![wd];
        let mut i = 0;
        while i < gone.len() {
            let p = gone[i];
            gone.extend(
                self.dirs
                    .iter()
                    .filter(|(_, d)| d.parent == p)
                    .map(|(&c, _)| c),
            );
            i += 1;
        }
        for wd in gone {
            self.dirs.remove(&wd);
            // (a watch the kernel removed already is no error worth a word)
            let _ = inotify::remove_watch(&self.fd, wd);
        }
    }

    /// Take in one event; whether it is a change the index may care about.
    fn event(&mut self, wd: i32, flags: ReadFlags, name: Option<&OsStr>) -> bool {
        if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
            // (events were lost: anything may have changed)
            return true;
        }
        if flags.contains(ReadFlags::IGNORED) {
            // (the folder is gone, or its watch was removed)
            self.dirs.remove(&wd);
            return false;
        }
        if name.is_some_and(|n| !relevant_name(n)) {
            return false;
        }
        if let (true, Some(name)) = (flags.contains(ReadFlags::ISDIR), name) {
            if flags.contains(ReadFlags::MOVED_FROM)
                && let Some(child) = self.child(wd, name)
            {
                self.remove(child);
            }
            if flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO)
                && let Some(parent) = self.path(wd)
                && let Err(e) = self.add(parent.join(name), wd, name.into())
            {
                tracing::warn!(
                    "file watcher: a new folder is not watched: {}",
                    crate::logsafe::Escaped(format!("{e:#}"))
                );
            }
        }
        true
    }

    /// Read the events as they come and send one `()` on `tx` for each batch that holds a
    /// change, until `tx` is closed. Must run inside a tokio runtime.
    pub async fn run(mut self, tx: mpsc::UnboundedSender<()>) {
        let fd = match self.fd.try_clone() {
            Ok(fd) => fd,
            Err(e) => return warn_stopped(&e),
        };
        // SAFETY: the descriptor is owned by the `AsyncFd` (a duplicate of the tree's, which
        // only places and removes watches), neither replaced nor closed while registered: it
        // is closed when the `AsyncFd` drops, after it is deregistered.
        #[allow(unsafe_code)]
        let registered = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
        };
        let ready = match registered {
            Ok(ready) => ready,
            Err(e) => return warn_stopped(&e),
        };
        let mut buf = vec![MaybeUninit::<u8>::uninit(); 4096];
        // (events copied out of the buffer before they are acted on: acting adds watches)
        let mut batch: Vec<(i32, ReadFlags, Option<OsString>)> = Vec::new();
        loop {
            let mut guard = match ready.readable().await {
                Ok(guard) => guard,
                Err(e) => return warn_stopped(&e),
            };
            let mut reader = inotify::Reader::new(ready.get_ref(), &mut buf);
            loop {
                match reader.next() {
                    Ok(e) => batch.push((
                        e.wd(),
                        e.events(),
                        e.file_name()
                            .map(|n| OsStr::from_bytes(n.to_bytes()).to_owned()),
                    )),
                    Err(Errno::AGAIN) => {
                        guard.clear_ready();
                        break;
                    }
                    Err(Errno::INTR) => {}
                    Err(e) => return warn_stopped(&std::io::Error::from(e)),
                }
            }
            let mut changed = false;
            for (wd, flags, name) in batch.drain(..) {
                changed |= self.event(wd, flags, name.as_deref());
            }
            if changed && tx.send(()).is_err() {
                return;
            }
        }
    }
}

/// Whether a folder or file of this name can matter to the index ([`super::relevant`]).
fn relevant_name(name: &OsStr) -> bool {
    super::relevant(Path::new(name))
}

fn warn_stopped(e: &dyn std::fmt::Display) {
    tracing::warn!("file watcher stopped; live reload is off: {e}");
}

#[cfg(test)]
mod tests {
    use super::super::tests::{folder_cases, folders};
    use super::*;

    #[tokio::test]
    async fn watches_every_folder_but_git_and_node_modules_and_follows_new_and_moved_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let root = folders(tmp.path());
        let tree = Tree::watch(std::slice::from_ref(&root)).unwrap();
        // root, a, a/b, c (not .git, node_modules or the link's target)
        assert_eq!(tree.len(), 4, "{tree:?}");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(tree.run(tx));
        folder_cases(tmp.path(), &root, &mut rx).await;
        task.abort();
    }

    #[test]
    fn a_root_that_cannot_be_watched_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let e = Tree::watch(&[tmp.path().join("missing")]).unwrap_err();
        assert!(format!("{e:#}").contains("missing"), "{e:#}");
    }
}
