//! The roots on disk: opened once as cap-std directories, walked by the engine crate's walk
//! ([`skills_engine::walk`]: the order, limits and findings are its rules; here is only how
//! cap-std lists a folder), and read with a size cap on a few threads.

use super::*;

/// Why a file could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
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
pub(crate) fn read_capped(dir: &Dir, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
    skills_engine::walk::check_read_path(path).map_err(ReadError::Refused)?;
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

/// A host finding about one file (or a whole root, with an empty path), as the engine crate's
/// walk words them.
pub(super) fn host_report(
    root: u32,
    path: &str,
    severity: Severity,
    message: String,
) -> FileReport {
    crate::output::report_back(skills_engine::walk::host_report(
        root,
        path,
        crate::output::severity(severity),
        message,
    ))
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

/// A root's folders as cap-std lists them (every step stays beneath the root's `Dir`).
struct CapFolders<'a> {
    dir: &'a Dir,
}

impl skills_engine::walk::Folders for CapFolders<'_> {
    /// What the index cache's fingerprint needs of a file's metadata.
    type Meta = FileStamp;

    fn list(&mut self, path: &str) -> skills_engine::walk::Listed<Self::Meta> {
        let listed = if path.is_empty() {
            self.dir.entries()
        } else {
            self.dir.read_dir(path)
        };
        let entries = listed.map_err(|e| e.to_string())?;
        Ok(entries
            .map(|entry| {
                let entry = entry.map_err(|e| e.to_string())?;
                let name = entry.file_name();
                let Some(name) = name.to_str().map(str::to_owned) else {
                    return Ok(Child {
                        name: Err(format!("{name:?}")),
                        kind: Err(String::new()),
                        size: 0,
                        meta: None,
                    });
                };
                let kind = entry.file_type().map_err(|e| e.to_string()).map(|t| {
                    if t.is_symlink() {
                        ChildKind::Symlink
                    } else if t.is_dir() {
                        ChildKind::Directory
                    } else if t.is_file() {
                        ChildKind::File
                    } else {
                        ChildKind::Special(special_kind(&t).to_string())
                    }
                });
                let meta = match kind {
                    Ok(ChildKind::File) => entry.metadata().ok(),
                    _ => None,
                };
                Ok(Child {
                    name: Ok(name),
                    kind,
                    size: meta.as_ref().map_or(0, |m| m.len()),
                    meta: meta.as_ref().map(FileStamp::new),
                })
            })
            .collect())
    }
}

/// Walk `dir` as the engine crate's walk says, and fingerprint what it listed.
pub(super) fn walk(dir: &Dir, root: u32, policy: &skills_engine::WalkPolicy) -> Listing {
    let walked = skills_engine::walk::walk(&mut CapFolders { dir }, root, policy);
    let mut print = ListingPrint::default();
    // A new vector, not one collected in place: that would keep the walk's larger allocation
    // (entries with their stamps) as long as the listing lives.
    let mut entries = Vec::with_capacity(walked.entries.len());
    for (e, stamp) in walked.entries {
        let entry = crate::output::entry_back(e);
        print.entry(&entry.path, entry.kind, entry.size, stamp.as_ref());
        entries.push(entry);
    }
    if walked.incomplete {
        print.mark_incomplete();
    }
    Listing {
        entries,
        issues: walked
            .findings
            .into_iter()
            .map(crate::output::report_back)
            .collect(),
        print,
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
    let policy = &crate::output::walk_policy(policy);
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
