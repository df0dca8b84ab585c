//! Live reload: watch the local roots (notify), wait for a quiet moment (debounce), rebuild the
//! index off the async threads (requests meanwhile see the previous snapshot), then tell clients
//! (list-changed notifications for resources, prompts and tools).

use std::{path::PathBuf, time::Duration};

use anyhow::{Context, Result};
use notify::{EventKind, RecursiveMode, Watcher};
use tokio::sync::mpsc;

use super::SkillsServer;

/// Keeps the watcher alive; dropping it stops live reload.
pub struct WatchGuard {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whether a changed path can matter to the index (not inside `.git` or `node_modules`).
fn relevant(path: &std::path::Path) -> bool {
    !path
        .components()
        .any(|c| matches!(c.as_os_str().to_str(), Some(".git" | "node_modules")))
}

/// Watch `roots` recursively; after `debounce` without further changes, rebuild and notify.
/// Must be called inside a tokio runtime.
pub fn watch(server: SkillsServer, roots: Vec<PathBuf>, debounce: Duration) -> Result<WatchGuard> {
    let (tx, mut rx) = mpsc::unbounded_channel::<()>();
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
    for root in &roots {
        watcher
            .watch(root, RecursiveMode::Recursive)
            .with_context(|| format!("watching {}", root.display()))?;
    }
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
    Ok(WatchGuard {
        _watcher: watcher,
        task,
    })
}
