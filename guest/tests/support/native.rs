//! Roots on disk indexed natively (the engine crate as a Rust library, read through `std::fs`),
//! shared by the corpus tests and the recorded answers.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use skills_engine::{EngineConfig, Entry, EntryKind, FileData, Files, Index, walk_policy};

/// The roots of an index, on disk.
pub struct FsFiles(pub Vec<PathBuf>);

impl Files for FsFiles {
    fn read(&self, root: u32, path: &str) -> Result<Vec<u8>, String> {
        fs::read(self.0[root as usize].join(path)).map_err(|e| e.to_string())
    }
}

/// The listing of `dir` as a host would walk it (symlinks listed, never followed).
pub fn listing(dir: &Path) -> Vec<Entry> {
    let skip = walk_policy().skip_dir_names;
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((abs, rel)) = stack.pop() {
        for e in fs::read_dir(&abs).expect("readable folder") {
            let e = e.expect("entry");
            let name = e.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let meta = fs::symlink_metadata(e.path()).expect("metadata");
            let ft = meta.file_type();
            if ft.is_symlink() {
                out.push(Entry {
                    path,
                    kind: EntryKind::Symlink,
                    size: 0,
                });
            } else if ft.is_dir() {
                if skip.contains(&name) {
                    continue;
                }
                out.push(Entry {
                    path: path.clone(),
                    kind: EntryKind::Directory,
                    size: 0,
                });
                stack.push((e.path(), path));
            } else {
                out.push(Entry {
                    path,
                    kind: EntryKind::File,
                    size: meta.len(),
                });
            }
        }
    }
    out
}

/// Index `roots` (name, folder) natively.
pub fn index(roots: &[(&str, PathBuf)]) -> (Index, FsFiles) {
    let mut idx = Index::new(EngineConfig::default());
    for (root, (name, dir)) in roots.iter().enumerate() {
        let wanted = idx.add_root(name, listing(dir)).expect("a valid listing");
        let files = wanted
            .into_iter()
            .map(|path| FileData {
                bytes: fs::read(dir.join(&path)).expect("readable file"),
                path,
            })
            .collect();
        idx.add_files(root as u32, files)
            .expect("the files asked for");
    }
    idx.finish().expect("finished once");
    (idx, FsFiles(roots.iter().map(|(_, d)| d.clone()).collect()))
}
