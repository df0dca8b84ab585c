//! The engine through the wasmtime component (`skills_mcp::runtime`), driven exactly like the
//! native build in the parent module: same walk, same sequential reads, same batches.

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use skills_mcp::runtime::{
    EngineConfig, Entry, EntryKind, FileData, FileSource, Guest, IndexHandle, RouteOutcome,
    Runtime, RuntimeOptions,
};

use super::{BATCH, Corpus};

/// Reads files for the component (root ids in `add_root` order).
pub struct FsSource(pub Vec<PathBuf>);

impl FileSource for FsSource {
    fn read(&self, root: u32, path: &str) -> Result<Vec<u8>, String> {
        let base = self.0.get(root as usize).ok_or("no such root")?;
        fs::read(base.join(path)).map_err(|e| format!("{path}: {e}"))
    }
}

/// The runtime with the component compiled (from the on-disk cache when warm).
pub fn runtime() -> Runtime {
    Runtime::new(RuntimeOptions::default()).expect("compiling the engine component")
}

/// The walk of the parent module, as the component's records.
pub fn listing(corpus: &Corpus) -> Vec<Entry> {
    super::walk(&corpus.root)
        .into_iter()
        .map(|e| Entry {
            path: e.path,
            kind: match e.kind {
                skills_engine::EntryKind::File => EntryKind::File,
                skills_engine::EntryKind::Directory => EntryKind::Directory,
                skills_engine::EntryKind::Symlink => EntryKind::Symlink,
            },
            size: e.size,
        })
        .collect()
}

/// A fresh instance reading `corpus`.
pub fn instance(rt: &Runtime, corpus: &Corpus) -> Guest {
    rt.instantiate(Arc::new(FsSource(vec![corpus.root.clone()])))
        .expect("instantiating the engine")
}

/// Builds the index in a fresh instance: walk, `add-root`, sequential reads, `add-files` in
/// batches, `finish`.
pub fn component_index(rt: &Runtime, corpus: &Corpus) -> (Guest, IndexHandle) {
    let mut guest = instance(rt, corpus);
    let index = guest
        .new_index(&EngineConfig::default())
        .expect("index constructor");
    let to_read = guest
        .add_root(index, &corpus.name, &listing(corpus))
        .expect("add-root");
    let mut batch = Vec::with_capacity(BATCH);
    for path in to_read {
        let bytes = fs::read(corpus.root.join(&path)).unwrap_or_default();
        batch.push(FileData { path, bytes });
        if batch.len() == BATCH {
            guest.add_files(index, 0, &batch).expect("add-files");
            batch.clear();
        }
    }
    if !batch.is_empty() {
        guest.add_files(index, 0, &batch).expect("add-files");
    }
    guest.finish(index).expect("finish");
    (guest, index)
}

/// `get_skill` through the component: route the request, resolve the best candidate.
/// Returns the content length (0 when nothing matched).
pub fn get_skill(guest: &mut Guest, index: IndexHandle, request: &str) -> usize {
    let best = match guest.route(index, request).expect("route") {
        RouteOutcome::Matched(hit) => hit.skill_path,
        RouteOutcome::Ambiguous(hits) => match hits.into_iter().next() {
            Some(hit) => hit.skill_path,
            None => return 0,
        },
        RouteOutcome::NoMatch => return 0,
    };
    guest
        .resolve(index, &best)
        .map(|r| r.content.len())
        .unwrap_or(0)
}
