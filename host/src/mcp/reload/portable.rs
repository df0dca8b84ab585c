//! The file watcher outside Linux: `notify`'s recommended watcher (FSEvents, kqueue,
//! ReadDirectoryChanges), recursive over each root, symbolic links not followed (the index
//! does not follow them either). Events that cannot change the index (accesses, paths in
//! `.git` or `node_modules`: [`super::relevant`]) are dropped.
//!
//! Compiled and unit-tested on Linux too (where `notify` reads inotify), so that a change that
//! breaks this path fails CI, which runs on Linux only.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use notify::{EventKind, RecursiveMode, Watcher as _};
use tokio::sync::mpsc;

/// `notify`'s watcher of `roots`, sending `()` on `tx` for each event that may change the
/// index. Fails when a root cannot be watched.
pub fn watch(
    roots: &[PathBuf],
    tx: mpsc::UnboundedSender<()>,
) -> Result<notify::RecommendedWatcher> {
    let handler = move |event: notify::Result<notify::Event>| match event {
        Ok(event) => {
            if matches!(event.kind, EventKind::Access(_)) {
                return;
            }
            if event.paths.is_empty() || event.paths.iter().any(|p| super::relevant(p)) {
                let _ = tx.send(());
            }
        }
        Err(e) => tracing::warn!("file watcher: {}", crate::logsafe::Escaped(e.to_string())),
    };
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

#[cfg(test)]
mod tests {
    use super::super::tests::{folder_cases, folders};

    #[tokio::test]
    async fn reports_the_folder_cases_the_inotify_watcher_does() {
        let tmp = tempfile::tempdir().unwrap();
        let root = folders(tmp.path());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let watcher = super::watch(std::slice::from_ref(&root), tx).unwrap();
        folder_cases(tmp.path(), &root, &mut rx).await;
        drop(watcher);
    }

    #[test]
    fn a_root_that_cannot_be_watched_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let e = super::watch(&[tmp.path().join("missing")], tx).unwrap_err();
        assert!(format!("{e:#}").contains("missing"), "{e:#}");
    }
}
