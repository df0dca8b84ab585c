//! Live reload: watch the local roots, wait for a quiet moment (debounce), rebuild the index
//! off the async threads (requests meanwhile see the previous snapshot), then tell clients
//! (list-changed notifications for resources, prompts and tools).
//!
//! The watcher is inotify read by a task on Linux (`reload/inotify.rs`: a watch per folder,
//! kept as its parent and name), `notify` elsewhere.

use std::{path::PathBuf, time::Duration};

use anyhow::Result;
use tokio::sync::mpsc;

use super::SkillsServer;

#[cfg(target_os = "linux")]
mod inotify;

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
        watcher: notify_watcher(&roots, tx)?,
        changes,
    };
    // The walk's buffers, freed on this thread, go back now (not at its next allocation).
    crate::allocator::release_freed();
    Ok(watching)
}

/// `notify`'s watcher of `roots`, sending `()` on `tx` for each relevant event.
#[cfg(not(target_os = "linux"))]
fn notify_watcher(
    roots: &[PathBuf],
    tx: mpsc::UnboundedSender<()>,
) -> Result<notify::RecommendedWatcher> {
    use anyhow::Context as _;
    use notify::{EventKind, RecursiveMode, Watcher};
    let handler = move |event: notify::Result<notify::Event>| match event {
        Ok(event) => {
            if matches!(event.kind, EventKind::Access(_)) {
                return;
            }
            if event.paths.is_empty() || event.paths.iter().any(|p| relevant(p)) {
                let _ = tx.send(());
            }
        }
        Err(e) => tracing::warn!("file watcher: {}", crate::logsafe::Escaped(e.to_string())),
    };
    // Symlinks are not followed: the index never follows them either.
    let config = notify::Config::default().with_follow_symlinks(false);
    let mut watcher =
        notify::RecommendedWatcher::new(handler, config).context("starting the file watcher")?;
    for root in roots {
        watcher
            .watch(root, RecursiveMode::Recursive)
            .with_context(|| format!("watching {}", root.display()))?;
    }
    Ok(watcher)
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
