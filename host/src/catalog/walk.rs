//! The roots on disk: opened once as cap-std directories, walked by the engine's walk policy
//! (symlinks and special files reported, never followed), and read with a size cap on a few
//! threads.

use super::*;

/// Why a file could not be read.
#[derive(Debug)]
pub(super) enum ReadError {
    TooLarge { size: u64, limit: u64 },
    Refused(String),
    Io(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::TooLarge { size, limit } => {
                write!(f, "{size} bytes, over the limit of {limit} bytes")
            }
            ReadError::Refused(why) => write!(f, "{why}"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// Read `path` (relative to `dir`) if it is a regular file of at most `limit` bytes. The last
/// component is never followed if it is a symlink; cap-std keeps every step inside `dir`.
pub(super) fn read_capped(dir: &Dir, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
    if path.is_empty()
        || path.starts_with('/')
        || path.contains(['\\', '\0'])
        || path
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return Err(ReadError::Refused(format!("refusing the path {path:?}")));
    }
    let meta = dir.symlink_metadata(path).map_err(ReadError::Io)?;
    if meta.file_type().is_symlink() {
        return Err(ReadError::Refused("is a symlink (not followed)".into()));
    }
    if !meta.is_file() {
        return Err(ReadError::Refused("is not a regular file".into()));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    // Never blocks: a file swapped for a FIFO after the check above opens without waiting for
    // a writer (O_NONBLOCK), a swapped-in symlink is not followed, and the opened handle itself
    // must be a regular file.
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt as _;
        options.custom_flags(
            (rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOFOLLOW).bits() as i32,
        );
    }
    let file = dir.open_with(path, &options).map_err(ReadError::Io)?;
    if !file.metadata().map_err(ReadError::Io)?.is_file() {
        return Err(ReadError::Refused("is not a regular file".into()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// A host finding about one file (or a whole root, with an empty path).
pub(super) fn host_report(
    root: u32,
    path: &str,
    severity: Severity,
    message: String,
) -> FileReport {
    FileReport {
        root,
        path: path.to_string(),
        skill_path: None,
        worst: Some(severity),
        diagnostics: vec![Diagnostic {
            root,
            path: path.to_string(),
            line: None,
            severity,
            message,
        }],
    }
}

/// What a file that is neither a regular file, a folder nor a symlink is, in words.
pub(super) fn special_kind(t: &cap_std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use cap_std::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    let _ = t;
    "a special file"
}

/// A root's listing, as the engine's walk policy says.
pub(super) struct Listing {
    pub(super) entries: Vec<Entry>,
    pub(super) issues: Vec<FileReport>,
    /// Fingerprint of the walk (for the index cache).
    pub(super) print: ListingPrint,
}

/// Walk `dir` depth-first, entries sorted by name. Symlinks are listed, never entered.
pub(super) fn walk(dir: &Dir, root: u32, policy: &WalkPolicy) -> Listing {
    let mut out = Listing {
        entries: Vec::new(),
        issues: Vec::new(),
        print: ListingPrint::default(),
    };
    let max_entries = policy.max_entries as usize;
    let mut too_deep = false;
    let mut truncated = false;
    // (a folder's path relative to the root, its depth). Folders are listed through the root's
    // `Dir` by relative path: one open per folder (cap-std keeps it beneath the root).
    let mut stack: Vec<(String, u32)> = vec![(String::new(), 0)];
    while let Some((prefix, depth)) = stack.pop() {
        let listed = if prefix.is_empty() {
            dir.entries()
        } else {
            dir.read_dir(&prefix)
        };
        let entries = match listed {
            Ok(entries) => entries,
            Err(e) => {
                out.issues.push(host_report(
                    root,
                    &prefix,
                    Severity::Error,
                    format!("cannot list this folder: {e}"),
                ));
                continue;
            }
        };
        let mut children = Vec::new();
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    out.issues.push(host_report(
                        root,
                        &prefix,
                        Severity::Warning,
                        format!("cannot read a folder entry: {e}"),
                    ));
                    continue;
                }
            };
            let name = entry.file_name();
            let Some(name) = name.to_str().map(str::to_owned) else {
                out.issues.push(host_report(
                    root,
                    &prefix,
                    Severity::Warning,
                    format!("skipped {name:?}: the name is not UTF-8"),
                ));
                continue;
            };
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            if let Some(why) = unlistable(&path) {
                out.issues.push(host_report(
                    root,
                    &prefix,
                    Severity::Warning,
                    format!("skipped {name:?}: {why}"),
                ));
                continue;
            }
            let file_type = match entry.file_type() {
                Ok(t) => t,
                Err(e) => {
                    out.print.mark_incomplete();
                    out.issues.push(host_report(
                        root,
                        &path,
                        Severity::Warning,
                        format!("skipped: cannot stat: {e}"),
                    ));
                    continue;
                }
            };
            if file_type.is_symlink() {
                children.push((name, path, EntryKind::Symlink, 0, None));
            } else if file_type.is_dir() {
                if !policy.skip_dir_names.contains(&name) {
                    children.push((name, path, EntryKind::Directory, 0, None));
                }
            } else if file_type.is_file() {
                let meta = entry.metadata().ok();
                let size = meta.as_ref().map_or(0, |m| m.len());
                children.push((name, path, EntryKind::File, size, meta));
            } else {
                // A FIFO, socket or device: never opened (a FIFO would block), but said.
                out.issues.push(host_report(
                    root,
                    &path,
                    Severity::Warning,
                    format!(
                        "skipped: {} is not a regular file or a folder; it is never read",
                        special_kind(&file_type)
                    ),
                ));
            }
        }
        children.sort_by(|a, b| a.0.cmp(&b.0));
        let mut subdirs = Vec::new();
        for (_, path, kind, size, meta) in children {
            if out.entries.len() >= max_entries {
                truncated = true;
                break;
            }
            if kind == EntryKind::Directory {
                if depth < policy.max_depth {
                    subdirs.push((path.clone(), depth + 1));
                } else {
                    too_deep = true;
                }
            }
            out.print.entry(&path, kind, size, meta.as_ref());
            out.entries.push(Entry { path, kind, size });
        }
        // Depth-first in name order: push in reverse so the first name is popped first.
        stack.extend(subdirs.into_iter().rev());
        if truncated {
            break;
        }
    }
    if truncated {
        out.print.mark_incomplete();
        out.issues.push(host_report(
            root,
            "",
            Severity::Warning,
            format!("listing stopped at {max_entries} entries; the rest of the root is skipped"),
        ));
    }
    if too_deep {
        out.issues.push(host_report(
            root,
            "",
            Severity::Warning,
            format!(
                "folders deeper than {} levels were not entered",
                policy.max_depth
            ),
        ));
    }
    out
}

/// Why a path read from a folder cannot be given to the engine, which refuses a listing with a
/// path that is not a clean `/`-separated relative path (a file name may hold a backslash on
/// Unix; a top-level name may look like a drive letter). `None`: it can.
pub(super) fn unlistable(path: &str) -> Option<&'static str> {
    let b = path.as_bytes();
    if path.contains('\\') {
        Some("the name contains a backslash, which skill paths do not allow")
    } else if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        Some("the name starts like a drive letter (`c:`), which skill paths do not allow")
    } else {
        None
    }
}

pub(super) type ReadResult = Result<Vec<u8>, ReadError>;

/// Read the batches on `threads` threads and hand each one, in order, to `consume`.
pub(super) fn read_batches(
    dir: &Dir,
    batches: &[Vec<String>],
    limit: u64,
    threads: usize,
    mut consume: impl FnMut(&[String], Vec<ReadResult>),
) {
    let threads = threads.clamp(1, batches.len().max(1));
    let next = AtomicUsize::new(0);
    // A bounded channel: readers stay at most a few batches ahead of the engine.
    let (tx, rx) = mpsc::sync_channel::<(usize, Vec<ReadResult>)>(threads);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(batch) = batches.get(i) else { break };
                    let read = batch.iter().map(|p| read_capped(dir, p, limit)).collect();
                    if tx.send((i, read)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut pending = std::collections::BTreeMap::new();
        let mut emitted = 0;
        for (i, read) in rx {
            pending.insert(i, read);
            while let Some(read) = pending.remove(&emitted) {
                consume(&batches[emitted], read);
                emitted += 1;
            }
        }
    });
}

/// Open every root (a failure is a report for that root) and walk the ones that opened.
pub(super) fn open_roots(
    specs: &[RootSpec],
    policy: &WalkPolicy,
) -> (Arc<Roots>, Vec<Listing>, Vec<FileReport>) {
    let mut dirs = Vec::new();
    let mut listings = Vec::new();
    let mut reports = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let root = i as u32;
        match open_root(&spec.path) {
            Ok(dir) => {
                let listing = walk(&dir, root, policy);
                reports.extend(listing.issues.iter().cloned());
                listings.push(listing);
                dirs.push(Some(dir));
            }
            Err(e) => {
                tracing::error!(
                    "root {}: {}",
                    crate::logsafe::Escaped(&spec.name),
                    crate::logsafe::Escaped(format!("{e:#}"))
                );
                reports.push(host_report(root, "", Severity::Error, format!("{e:#}")));
                listings.push(Listing {
                    entries: Vec::new(),
                    issues: Vec::new(),
                    print: ListingPrint::default(),
                });
                dirs.push(None);
            }
        }
    }
    let roots = Roots {
        dirs,
        policy: policy.clone(),
        max_file_bytes: policy.max_skill_file_bytes,
    };
    (Arc::new(roots), listings, reports)
}

pub(super) fn open_root(path: &Path) -> anyhow::Result<Dir> {
    Dir::open_ambient_dir(path, cap_std::ambient_authority())
        .with_context(|| format!("cannot open the skill root {}", path.display()))
}

/// List the roots of a snapshot again (for an engine restart), through the same `Dir`s.
pub(super) fn relist(roots: &Roots) -> Vec<Listing> {
    roots
        .dirs
        .iter()
        .enumerate()
        .map(|(i, dir)| match dir {
            Some(dir) => walk(dir, i as u32, &roots.policy),
            None => Listing {
                entries: Vec::new(),
                issues: Vec::new(),
                print: ListingPrint::default(),
            },
        })
        .collect()
}
