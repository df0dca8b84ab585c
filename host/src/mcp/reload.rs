//! Live reload: watch the local roots, wait for a quiet moment (debounce), rebuild the index
//! off the async threads (requests meanwhile see the previous snapshot), then tell clients
//! (list-changed notifications for resources, prompts and tools).
//!
//! The watcher is inotify read by a task on Linux (`reload/inotify.rs`: a watch per folder,
//! kept as its parent and name), `notify` elsewhere (`reload/portable.rs`, compiled and
//! unit-tested on Linux too: both pass the same folder cases, `tests::folder_cases`).

use std::{path::PathBuf, time::Duration};

use anyhow::Result;
use tokio::sync::mpsc;

use super::SkillsServer;

#[cfg(target_os = "linux")]
mod inotify;
#[cfg(any(not(target_os = "linux"), test))]
mod portable;

/// Keeps the watcher alive; dropping it stops live reload.
pub struct WatchGuard {
    #[cfg(not(target_os = "linux"))]
    _watcher: notify::RecommendedWatcher,
    /// Reads the watcher's events (Linux).
    #[cfg(target_os = "linux")]
    events: tokio::task::JoinHandle<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        self.events.abort();
        self.task.abort();
    }
}

/// Whether a changed path can matter to the index (not inside `.git` or `node_modules`).
fn relevant(path: &std::path::Path) -> bool {
    !path
        .components()
        .any(|c| matches!(c.as_os_str().to_str(), Some(".git" | "node_modules")))
}

/// The roots' watches, placed: changes are queued from then on, until [`Watching::reload`]
/// acts on them (so a change made while the index is being built is not lost).
pub struct Watching {
    /// The watches; their events wait in the kernel's queue until `reload` reads them.
    #[cfg(target_os = "linux")]
    watcher: inotify::Tree,
    #[cfg(target_os = "linux")]
    tx: mpsc::UnboundedSender<()>,
    #[cfg(not(target_os = "linux"))]
    watcher: notify::RecommendedWatcher,
    changes: mpsc::UnboundedReceiver<()>,
}

/// Watch `roots` recursively (a watch a folder: a walk of every folder). Blocking.
pub fn start_watching(roots: Vec<PathBuf>) -> Result<Watching> {
    let (tx, changes) = mpsc::unbounded_channel::<()>();
    #[cfg(target_os = "linux")]
    let watching = Watching {
        watcher: inotify::Tree::watch(&roots)?,
        tx,
        changes,
    };
    #[cfg(not(target_os = "linux"))]
    let watching = Watching {
        watcher: portable::watch(&roots, tx)?,
        changes,
    };
    // The walk's buffers, freed on this thread, go back now (not at its next allocation).
    crate::allocator::release_freed();
    Ok(watching)
}

impl Watching {
    /// From now on, after `debounce` without further changes (those queued since the watches
    /// were placed included), rebuild `server`'s index and notify. Must be called inside a
    /// tokio runtime.
    pub fn reload(self, server: SkillsServer, debounce: Duration) -> WatchGuard {
        #[cfg(target_os = "linux")]
        let Self {
            watcher,
            tx,
            changes: mut rx,
        } = self;
        #[cfg(target_os = "linux")]
        let events = tokio::spawn(watcher.run(tx));
        #[cfg(not(target_os = "linux"))]
        let Self {
            watcher,
            changes: mut rx,
        } = self;
        let task = tokio::spawn(async move {
            while rx.recv().await.is_some() {
                // Debounce: wait until no change arrived for `debounce`.
                loop {
                    match tokio::time::timeout(debounce, rx.recv()).await {
                        Ok(Some(())) => continue,
                        Ok(None) => return,
                        Err(_) => break,
                    }
                }
                match server.reindex().await {
                    Ok(n) => tracing::info!("skills changed on disk; {n} skills indexed"),
                    Err(e) => tracing::error!(
                        "reindexing failed, the previous index keeps serving: {}",
                        crate::logsafe::Escaped(format!("{e:#}"))
                    ),
                }
            }
        });
        WatchGuard {
            #[cfg(not(target_os = "linux"))]
            _watcher: watcher,
            #[cfg(target_os = "linux")]
            events,
            task,
        }
    }
}

/// The folder cases every watcher passes (inotify's and `notify`'s, on Linux; `notify`'s
/// backends elsewhere).
#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use tokio::sync::mpsc;

    fn mkdir(p: &Path) {
        std::fs::create_dir_all(p).unwrap();
    }

    /// A change, within a few seconds.
    async fn changed(rx: &mut mpsc::UnboundedReceiver<()>) -> bool {
        tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .is_ok_and(|c| c.is_some())
    }

    /// No change for a while.
    async fn quiet(rx: &mut mpsc::UnboundedReceiver<()>) -> bool {
        tokio::time::timeout(Duration::from_millis(300), rx.recv())
            .await
            .is_err()
    }

    /// The root `tmp/root` the cases start from: `a/b`, `.git/objects`, `c/node_modules/x`, and
    /// `link`, a symbolic link to the folder `tmp/outside`.
    pub fn folders(tmp: &Path) -> PathBuf {
        let root = tmp.join("root");
        mkdir(&root.join("a/b"));
        mkdir(&root.join(".git/objects"));
        mkdir(&root.join("c/node_modules/x"));
        let outside = tmp.join("outside");
        mkdir(&outside);
        #[cfg(unix)]
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        root
    }

    /// With a watcher of `root` ([`folders`]) sending on `rx`: writes in `.git`,
    /// `node_modules` and through the link, and reads, are no change; a file written, a new
    /// folder (and the folders in it), a folder moved within the root (and then written in), a
    /// file and a folder deleted are; a folder moved out of the root is no longer watched.
    pub async fn folder_cases(tmp: &Path, root: &Path, rx: &mut mpsc::UnboundedReceiver<()>) {
        // Inside `.git` or `node_modules`, and reading a file: nothing.
        std::fs::write(root.join(".git/objects/o"), "x").unwrap();
        std::fs::write(root.join("c/node_modules/x/f"), "x").unwrap();
        std::fs::write(tmp.join("outside/f"), "x").unwrap();
        std::fs::write(root.join("a/b/SKILL.md"), "x").unwrap();
        assert!(changed(rx).await, "a file written in a/b");
        while !quiet(rx).await {}
        let _ = std::fs::read(root.join("a/b/SKILL.md")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "x").unwrap();
        std::fs::write(root.join("c/node_modules/x/g"), "x").unwrap();
        std::fs::write(tmp.join("outside/g"), "x").unwrap();
        assert!(
            quiet(rx).await,
            "a read, and writes in .git, node_modules and through a link, are no change"
        );

        // A folder made with folders inside: those are watched too.
        mkdir(&root.join("new/deep/er"));
        assert!(changed(rx).await);
        while !quiet(rx).await {}
        std::fs::write(root.join("new/deep/er/SKILL.md"), "x").unwrap();
        assert!(changed(rx).await, "a file written in a new folder");

        // A folder moved within the root is followed; moved out, it is not.
        while !quiet(rx).await {}
        std::fs::rename(root.join("new"), root.join("a/moved")).unwrap();
        assert!(changed(rx).await);
        while !quiet(rx).await {}
        std::fs::write(root.join("a/moved/deep/f"), "x").unwrap();
        assert!(changed(rx).await, "a file written in a moved folder");
        while !quiet(rx).await {}
        std::fs::rename(root.join("a/moved"), tmp.join("away")).unwrap();
        assert!(changed(rx).await);
        while !quiet(rx).await {}
        std::fs::write(tmp.join("away/deep/er/f"), "x").unwrap();
        assert!(
            quiet(rx).await,
            "a folder moved out of the root is not watched"
        );

        // A deleted file and folder.
        std::fs::remove_file(root.join("a/b/SKILL.md")).unwrap();
        assert!(changed(rx).await);
        std::fs::remove_dir_all(root.join("a")).unwrap();
        assert!(changed(rx).await);
    }
}
