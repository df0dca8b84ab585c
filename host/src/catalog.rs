//! Skill roots opened as cap-std directories, walked and read (in parallel) to build engine indexes; the current index snapshot, swapped atomically.
//!
//! [`Catalog`] is the thread-safe facade the CLI and the MCP server call. An index build
//! (`Catalog::open`, [`Catalog::rebuild`]):
//! 1. opens every root once as a cap-std [`Dir`] (a missing or unreadable root is a located
//!    error for that root; the others keep serving);
//! 2. walks each root following the engine's `walk-policy` (symlinks are reported, never
//!    followed), hands the listing to `add-root`, reads the files the engine asks for through
//!    the `Dir` with a size cap on a few threads, and passes them in `add-files` batches of
//!    bounded size, then calls `finish`;
//! 3. swaps the new snapshot in: readers keep the previous one until they are done with it.
//!
//! If the engine traps on a batch, the build starts over with that batch's files one by one, and
//! a file that still makes it trap is left out with an error in the reports. A trap during a
//! query fails that query only: the next call re-instantiates the engine and rebuilds the
//! snapshot's index from the same roots.
//!
//! The engine runs all calls of one snapshot in one instance, one call at a time: the methods
//! block (an async caller should use `spawn_blocking`).

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Instant;

use anyhow::{Context as _, anyhow};
use base64::Engine as _;
use cap_std::fs::Dir;
use serde_json::{Value, json};

use crate::index_cache::{self, ListingPrint};
use crate::runtime::{
    AssetInfo, AssetLocation, Catalogue, Diagnostic, EngineConfig, EngineError, EngineErrorKind,
    Entry, EntryKind, Explanation, ExtensionSkill, FileData, FileReport, FileSource, Guest,
    GuestTrap, IndexHandle, ManifestFile, NoFiles, ResolvedSkill, RouteOutcome, Runtime,
    RuntimeOptions, SearchHit, ServedSkillMd, Severity, SizeError, SkillInfo, SkillSummary,
    TreeNode, WalkPolicy,
};

/// Default largest asset served (`assets.max_size_bytes`).
pub const DEFAULT_MAX_ASSET_BYTES: u64 = 1024 * 1024;
/// Most retries of a build whose engine trapped on some file.
const MAX_BUILD_ATTEMPTS: usize = 12;
/// Most files in one `add-files` batch.
const MAX_BATCH_FILES: usize = 256;

/// A skill root: a directory of skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootSpec {
    /// How the root is named in messages and given to `add-root`.
    pub name: String,
    pub path: PathBuf,
}

impl RootSpec {
    /// A root named after its path.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        Self {
            name: path.display().to_string(),
            path,
        }
    }
}

/// How a catalog builds and serves.
#[derive(Debug, Clone)]
pub struct CatalogOptions {
    pub engine: EngineConfig,
    pub runtime: RuntimeOptions,
    /// Largest asset [`Catalog::read_asset`] serves unless told otherwise.
    pub max_asset_bytes: u64,
    /// Largest total of file bytes in one `add-files` batch (the guest's memory stays small).
    pub batch_bytes: u64,
    /// Threads reading files during a build.
    pub read_threads: usize,
    /// Folder of the on-disk index cache ([`crate::index_cache`]); `None`: every open builds.
    pub index_cache: Option<PathBuf>,
}

impl Default for CatalogOptions {
    fn default() -> Self {
        Self {
            engine: EngineConfig::default(),
            runtime: RuntimeOptions::default(),
            max_asset_bytes: DEFAULT_MAX_ASSET_BYTES,
            batch_bytes: 256 * 1024,
            read_threads: std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .clamp(1, 4),
            index_cache: None,
        }
    }
}

/// What an index build found.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct BuildStats {
    /// Skills in the index.
    pub skills: u32,
    /// Roots configured, and how many could be opened.
    pub roots: usize,
    pub roots_ok: usize,
    /// Entries listed, files read and their bytes.
    pub entries: usize,
    pub files_read: usize,
    pub bytes_read: u64,
    /// Files left out because the engine trapped on them.
    pub files_excluded: usize,
    /// Build time in milliseconds.
    pub millis: u64,
    /// Whether the index came from the on-disk index cache (nothing was read or parsed).
    pub from_cache: bool,
}

/// The bytes of an asset, with where they came from.
#[derive(Debug, Clone)]
pub struct AssetContent {
    pub skill_path: String,
    pub location: AssetLocation,
    pub bytes: Vec<u8>,
}

/// The thread-safe facade over the skill roots and the engine (cheap to clone).
#[derive(Clone)]
pub struct Catalog {
    inner: Arc<Inner>,
}

struct Inner {
    runtime: Runtime,
    options: CatalogOptions,
    roots: Vec<RootSpec>,
    current: RwLock<Arc<Snapshot>>,
    rebuilding: Mutex<()>,
}

/// One built index and the roots it was built from.
struct Snapshot {
    roots: Arc<Roots>,
    stats: BuildStats,
    /// Findings of the host (root errors, unreadable or oversized files, excluded files).
    host_reports: Vec<FileReport>,
    /// Files left out because the engine trapped on them (kept out of recovery rebuilds too).
    excluded: BTreeSet<(u32, String)>,
    live: Mutex<Option<Live>>,
}

/// An engine instance holding the snapshot's index.
struct Live {
    guest: Guest,
    index: IndexHandle,
}

/// The opened roots of one build: what the engine's `files.read` reads through.
struct Roots {
    dirs: Vec<Option<Dir>>,
    /// The engine's walk policy, for listing the roots again.
    policy: WalkPolicy,
    /// Largest file `files.read` returns.
    max_file_bytes: u64,
}

impl FileSource for Roots {
    fn read(&self, root: u32, path: &str) -> Result<Vec<u8>, String> {
        let dir = self
            .dirs
            .get(root as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| format!("root {root} is not available"))?;
        read_capped(dir, path, self.max_file_bytes).map_err(|e| format!("{path}: {e}"))
    }
}

/// Why a file could not be read.
#[derive(Debug)]
enum ReadError {
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
fn read_capped(dir: &Dir, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
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
fn host_report(root: u32, path: &str, severity: Severity, message: String) -> FileReport {
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
fn special_kind(t: &cap_std::fs::FileType) -> &'static str {
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
struct Listing {
    entries: Vec<Entry>,
    issues: Vec<FileReport>,
    /// Fingerprint of the walk (for the index cache).
    print: ListingPrint,
}

/// Walk `dir` depth-first, entries sorted by name. Symlinks are listed, never entered.
fn walk(dir: &Dir, root: u32, policy: &WalkPolicy) -> Listing {
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
fn unlistable(path: &str) -> Option<&'static str> {
    let b = path.as_bytes();
    if path.contains('\\') {
        Some("the name contains a backslash, which skill paths do not allow")
    } else if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        Some("the name starts like a drive letter (`c:`), which skill paths do not allow")
    } else {
        None
    }
}

/// A build that could not complete.
enum BuildFailure {
    /// The engine trapped on an `add-files` batch.
    Batch {
        root: u32,
        files: Vec<String>,
        trap: anyhow::Error,
    },
    Other(anyhow::Error),
}

impl From<anyhow::Error> for BuildFailure {
    fn from(e: anyhow::Error) -> Self {
        BuildFailure::Other(e)
    }
}

/// A freshly built index in its own engine instance.
struct Built {
    live: Live,
    stats: BuildStats,
    host_reports: Vec<FileReport>,
}

/// Everything a build needs besides the roots.
struct Builder<'a> {
    runtime: &'a Runtime,
    options: &'a CatalogOptions,
    names: &'a [RootSpec],
}

impl Builder<'_> {
    /// Build, retrying around files that make the engine trap.
    fn build(
        &self,
        roots: &Arc<Roots>,
        listings: &[Listing],
        excluded: &mut BTreeSet<(u32, String)>,
        excluded_reports: &mut Vec<FileReport>,
    ) -> anyhow::Result<Built> {
        let mut isolate: BTreeSet<(u32, String)> = BTreeSet::new();
        let mut last = None;
        for _ in 0..MAX_BUILD_ATTEMPTS {
            match self.build_once(roots, listings, excluded, &isolate) {
                Ok(built) => return Ok(built),
                Err(BuildFailure::Other(e)) => return Err(e),
                Err(BuildFailure::Batch { root, files, trap }) => {
                    if let [file] = files.as_slice() {
                        eprintln!(
                            "skills-mcp: leaving out {}/{}: {}",
                            crate::logsafe::Escaped(&self.names[root as usize].name),
                            crate::logsafe::Escaped(file),
                            crate::logsafe::Escaped(format!("{trap:#}"))
                        );
                        excluded_reports.push(host_report(
                            root,
                            file,
                            Severity::Error,
                            format!("left out: the engine failed on this file: {trap:#}"),
                        ));
                        excluded.insert((root, file.clone()));
                    } else {
                        isolate.extend(files.into_iter().map(|f| (root, f)));
                    }
                    last = Some(trap);
                }
            }
        }
        Err(last.unwrap_or_else(|| anyhow!("the index build failed")))
            .context("building the index: the engine kept failing")
    }

    fn build_once(
        &self,
        roots: &Arc<Roots>,
        listings: &[Listing],
        excluded: &BTreeSet<(u32, String)>,
        isolate: &BTreeSet<(u32, String)>,
    ) -> Result<Built, BuildFailure> {
        let started = Instant::now();
        let (mut guest, index) = self.new_index(roots)?;
        let mut stats = BuildStats {
            roots: self.names.len(),
            roots_ok: roots.dirs.iter().filter(|d| d.is_some()).count(),
            ..BuildStats::default()
        };
        let mut host_reports = Vec::new();
        for (i, spec) in self.names.iter().enumerate() {
            let root = i as u32;
            let listing = &listings[i];
            stats.entries += listing.entries.len();
            let wanted = guest
                .add_root(index, &spec.name, &listing.entries)
                .with_context(|| format!("registering the root {}", spec.name))?;
            let Some(dir) = roots.dirs[i].as_ref() else {
                continue;
            };
            let sizes: std::collections::HashMap<&str, u64> = listing
                .entries
                .iter()
                .map(|e| (e.path.as_str(), e.size))
                .collect();
            let wanted: Vec<String> = wanted
                .into_iter()
                .filter(|p| !excluded.contains(&(root, p.clone())))
                .collect();
            let batches = self.batches(root, &wanted, &sizes, isolate);
            let mut failure = None;
            read_batches(
                dir,
                &batches,
                roots.max_file_bytes,
                self.options.read_threads,
                |batch, read| {
                    if failure.is_some() {
                        return;
                    }
                    let mut data = Vec::with_capacity(read.len());
                    for (path, result) in batch.iter().zip(read) {
                        match result {
                            Ok(bytes) => {
                                stats.files_read += 1;
                                stats.bytes_read += bytes.len() as u64;
                                data.push(FileData {
                                    path: path.clone(),
                                    bytes,
                                });
                            }
                            Err(ReadError::TooLarge { size, limit }) => {
                                host_reports.push(host_report(
                                    root,
                                    path,
                                    Severity::Error,
                                    format!(
                                        "skipped: {size} bytes, over the limit of {limit} bytes"
                                    ),
                                ));
                            }
                            Err(e) => host_reports.push(host_report(
                                root,
                                path,
                                Severity::Error,
                                format!("skipped: cannot read: {e}"),
                            )),
                        }
                    }
                    if data.is_empty() {
                        return;
                    }
                    if let Err(e) = guest.add_files(index, root, &data) {
                        failure = Some(if e.downcast_ref::<GuestTrap>().is_some() {
                            BuildFailure::Batch {
                                root,
                                files: batch.to_vec(),
                                trap: e,
                            }
                        } else {
                            BuildFailure::Other(e)
                        });
                    }
                },
            );
            if let Some(f) = failure {
                return Err(f);
            }
        }
        guest.finish(index)?;
        stats.skills = guest.len(index)?;
        stats.files_excluded = excluded.len();
        stats.millis = started.elapsed().as_millis() as u64;
        Ok(Built {
            live: Live { guest, index },
            stats,
            host_reports,
        })
    }

    /// A new engine instance reading through `roots`, with a new, empty index.
    fn new_index(&self, roots: &Arc<Roots>) -> anyhow::Result<(Guest, IndexHandle)> {
        let files: Arc<dyn FileSource> = roots.clone();
        let mut guest = self
            .runtime
            .instantiate(files)
            .context("starting the engine")?;
        let index = guest.new_index(&self.options.engine)?;
        Ok((guest, index))
    }

    /// The index of `listings` from the on-disk cache, in a new instance; `None` when the
    /// cache has no (current) index for them.
    fn restore(
        &self,
        roots: &Arc<Roots>,
        listings: &[Listing],
        key: &index_cache::Key,
    ) -> anyhow::Result<Option<Built>> {
        let started = Instant::now();
        let (mut guest, index) = self.new_index(roots)?;
        if !key.load(&mut guest, index)? {
            return Ok(None);
        }
        let stats = BuildStats {
            skills: guest.len(index)?,
            roots: self.names.len(),
            roots_ok: roots.dirs.iter().filter(|d| d.is_some()).count(),
            entries: listings.iter().map(|l| l.entries.len()).sum(),
            millis: started.elapsed().as_millis() as u64,
            from_cache: true,
            ..BuildStats::default()
        };
        Ok(Some(Built {
            live: Live { guest, index },
            stats,
            host_reports: Vec::new(),
        }))
    }

    /// Split `wanted` into batches of bounded bytes; isolated files travel alone.
    fn batches(
        &self,
        root: u32,
        wanted: &[String],
        sizes: &std::collections::HashMap<&str, u64>,
        isolate: &BTreeSet<(u32, String)>,
    ) -> Vec<Vec<String>> {
        let mut batches = Vec::new();
        let mut current = Vec::new();
        let mut bytes = 0u64;
        for path in wanted {
            if isolate.contains(&(root, path.clone())) {
                batches.push(vec![path.clone()]);
                continue;
            }
            let size = sizes.get(path.as_str()).copied().unwrap_or(0);
            if !current.is_empty()
                && (bytes + size > self.options.batch_bytes || current.len() >= MAX_BATCH_FILES)
            {
                batches.push(std::mem::take(&mut current));
                bytes = 0;
            }
            bytes += size;
            current.push(path.clone());
        }
        if !current.is_empty() {
            batches.push(current);
        }
        batches
    }
}

type ReadResult = Result<Vec<u8>, ReadError>;

/// Read the batches on `threads` threads and hand each one, in order, to `consume`.
fn read_batches(
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
fn open_roots(
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
                eprintln!(
                    "skills-mcp: root {}: {}",
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

fn open_root(path: &Path) -> anyhow::Result<Dir> {
    Dir::open_ambient_dir(path, cap_std::ambient_authority())
        .with_context(|| format!("cannot open the skill root {}", path.display()))
}

impl Catalog {
    /// Open `roots` (later roots take precedence) and build the first index.
    pub fn open(roots: Vec<RootSpec>, options: CatalogOptions) -> anyhow::Result<Self> {
        let runtime = Runtime::new(options.runtime.clone())?;
        let snapshot = build_snapshot(&runtime, &options, &roots)?;
        Ok(Self {
            inner: Arc::new(Inner {
                runtime,
                options,
                roots,
                current: RwLock::new(Arc::new(snapshot)),
                rebuilding: Mutex::new(()),
            }),
        })
    }

    /// The roots, in precedence order (lowest first); a root's index is its `root` id.
    pub fn roots(&self) -> &[RootSpec] {
        &self.inner.roots
    }

    pub fn options(&self) -> &CatalogOptions {
        &self.inner.options
    }

    /// Statistics of the current index.
    pub fn stats(&self) -> BuildStats {
        self.snapshot().stats.clone()
    }

    /// Rebuild the index from the roots and swap it in atomically; concurrent callers keep
    /// using the previous index meanwhile. Concurrent rebuilds run one after the other.
    pub fn rebuild(&self) -> anyhow::Result<BuildStats> {
        let _one_at_a_time = lock(&self.inner.rebuilding);
        let snapshot = build_snapshot(&self.inner.runtime, &self.inner.options, &self.inner.roots)?;
        let stats = snapshot.stats.clone();
        *self
            .inner
            .current
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Arc::new(snapshot);
        Ok(stats)
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        self.inner
            .current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Run `f` on the current index; restart the engine first if a trap killed it.
    fn with_index<R>(
        &self,
        f: impl FnOnce(&mut Guest, IndexHandle) -> anyhow::Result<R>,
    ) -> anyhow::Result<R> {
        let snapshot = self.snapshot();
        let mut live = lock(&snapshot.live);
        if live.is_none() {
            let mut excluded = snapshot.excluded.clone();
            let mut reports = Vec::new();
            let built = Builder {
                runtime: &self.inner.runtime,
                options: &self.inner.options,
                names: &self.inner.roots,
            }
            .build(
                &snapshot.roots,
                &relist(&snapshot.roots),
                &mut excluded,
                &mut reports,
            )
            .context("restarting the skills engine")?;
            *live = Some(built.live);
        }
        let Some(l) = live.as_mut() else {
            unreachable!("just set")
        };
        let result = f(&mut l.guest, l.index);
        if l.guest.is_poisoned() {
            // The next call gets a fresh instance with the index rebuilt from the roots.
            *live = None;
        }
        result
    }

    /// Make the next engine call trap (its deadline is 0), to exercise recovery in tests.
    #[doc(hidden)]
    pub fn trap_next_call(&self) -> anyhow::Result<()> {
        self.with_index(|g, _| {
            g.trap_next_call();
            Ok(())
        })
    }

    /// Check a relative file argument with the engine's rules; returns it as the engine uses it.
    pub fn validate_relative_path(&self, path: &str) -> anyhow::Result<String> {
        self.with_index(|g, _| g.validate_relative_path(path))
    }

    /// Number of skills.
    pub fn len(&self) -> anyhow::Result<u32> {
        self.with_index(|g, i| g.len(i))
    }

    pub fn is_empty(&self) -> anyhow::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Every skill, sorted by skill path.
    pub fn skills(&self) -> anyhow::Result<Vec<SkillInfo>> {
        self.with_index(|g, i| g.skills(i))
    }

    /// Skills `start..start + count` in skill-path order with what listings show (path, name,
    /// description): a page of [`Self::skills`] without the rest of each skill.
    pub fn summaries(&self, start: u32, count: u32) -> anyhow::Result<Vec<SkillSummary>> {
        self.with_index(|g, i| g.summaries(i, start, count))
    }

    /// The catalogue as text within `budget` characters (the engine picks the tier).
    pub fn catalogue(&self, budget: u32) -> anyhow::Result<Catalogue> {
        self.with_index(|g, i| g.catalogue(i, budget))
    }

    /// `text` on one line, at most `limit` characters, as listings shorten descriptions.
    pub fn shorten(&self, text: &str, limit: u32) -> anyhow::Result<String> {
        self.with_index(|g, _| g.shorten(text, limit))
    }

    /// One skill by path or unique name; a not-found error carries suggestions.
    pub fn get(&self, path_or_name: &str) -> anyhow::Result<SkillInfo> {
        self.with_index(|g, i| g.get(i, path_or_name))
    }

    /// Closest skill paths to a mistyped one.
    pub fn suggest(&self, path_or_name: &str, limit: u32) -> anyhow::Result<Vec<String>> {
        self.with_index(|g, i| g.suggest(i, path_or_name, limit))
    }

    /// Ranked results, best first.
    pub fn search(&self, query: &str, limit: u32) -> anyhow::Result<Vec<SearchHit>> {
        self.with_index(|g, i| g.search(i, query, limit))
    }

    /// Why `skill_path` scores what it does for `query`.
    pub fn explain(&self, query: &str, skill_path: &str) -> anyhow::Result<Explanation> {
        self.with_index(|g, i| g.explain(i, query, skill_path))
    }

    /// Route a free-text request: no match, ambiguous, or one skill.
    pub fn route(&self, context: &str) -> anyhow::Result<RouteOutcome> {
        self.with_index(|g, i| g.route(i, context))
    }

    /// Content with inheritance applied, and all assets and scripts.
    pub fn resolve(&self, skill_path: &str) -> anyhow::Result<ResolvedSkill> {
        self.with_index(|g, i| g.resolve(i, skill_path))
    }

    /// Which file an asset or script request refers to (the path is checked first).
    pub fn locate_asset(&self, skill_path: &str, file: &str) -> anyhow::Result<AssetLocation> {
        self.with_index(|g, i| {
            g.validate_relative_path(file)?;
            g.locate_asset(i, skill_path, file)
        })
    }

    /// Locate an asset and read it (at most `max_bytes`, default the catalog's limit).
    /// Errors: invalid path, unknown skill or asset, declared but missing, too large (with
    /// sizes; an [`EngineError`] with `too-large`).
    pub fn read_asset(
        &self,
        skill_path: &str,
        file: &str,
        max_bytes: Option<u64>,
    ) -> anyhow::Result<AssetContent> {
        let location = self.locate_asset(skill_path, file)?;
        let limit = max_bytes.unwrap_or(self.inner.options.max_asset_bytes);
        let bytes = self
            .read_file(location.root, &location.path, limit)
            .with_context(|| format!("reading {file:?} of the skill {skill_path:?}"))?;
        Ok(AssetContent {
            skill_path: skill_path.to_string(),
            location,
            bytes,
        })
    }

    /// Read a file of a root (a manifest entry, an asset) with a size limit. A missing file
    /// is a `not-found` [`EngineError`], an oversized one `too-large`.
    pub fn read_file(&self, root: u32, path: &str, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
        let snapshot = self.snapshot();
        let name = self
            .inner
            .roots
            .get(root as usize)
            .map_or_else(|| format!("#{root}"), |r| r.name.clone());
        let dir = snapshot
            .roots
            .dirs
            .get(root as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| anyhow!("the skill root {name} is not available"))?;
        match read_capped(dir, path, max_bytes) {
            Ok(bytes) => Ok(bytes),
            Err(ReadError::TooLarge { size, limit }) => {
                Err(anyhow!(EngineError(EngineErrorKind::TooLarge(SizeError {
                    path: path.to_string(),
                    size,
                    limit,
                }))))
            }
            Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(anyhow!(EngineError(EngineErrorKind::NotFound(format!(
                    "{path} is declared but missing on disk (root {name})"
                )))))
            }
            Err(e) => Err(anyhow!(EngineError(EngineErrorKind::ReadFailed(format!(
                "{path} (root {name}): {e}"
            ))))),
        }
    }

    /// The skill tree (flattened; node 0 is its root), optionally below `path`.
    pub fn tree(&self, path: Option<&str>) -> anyhow::Result<Vec<TreeNode>> {
        self.with_index(|g, i| g.tree(i, path))
    }

    /// Every file of a skill, `SKILL.md` first.
    pub fn manifest(&self, skill_path: &str) -> anyhow::Result<Vec<ManifestFile>> {
        self.with_index(|g, i| g.manifest(i, skill_path))
    }

    /// Every skill the Skills extension lists (with its path there), sorted by that path.
    pub fn extension_skills(&self) -> anyhow::Result<Vec<ExtensionSkill>> {
        self.with_index(|g, i| g.extension_skills(i))
    }

    /// The `SKILL.md` the Skills extension serves for a skill (by skill path), with its
    /// frontmatter as JSON.
    pub fn extension_skill_md(&self, skill_path: &str) -> anyhow::Result<ServedSkillMd> {
        self.with_index(|g, i| g.extension_skill_md(i, skill_path))
    }

    /// Every examined file with its findings, the host's included (root errors, unreadable,
    /// oversized or left-out files), sorted by root and path.
    pub fn reports(&self) -> anyhow::Result<Vec<FileReport>> {
        let snapshot = self.snapshot();
        let engine = self.with_index(|g, i| g.reports(i))?;
        let host: Vec<_> = snapshot
            .host_reports
            .iter()
            .map(crate::output::report)
            .collect();
        Ok(skills_engine::output::merge_reports(
            engine.iter().map(crate::output::report).collect(),
            &host,
        )
        .into_iter()
        .map(crate::output::report_back)
        .collect())
    }
}

impl Catalog {
    /// The findings of [`Self::reports`] alone (the engine's, then the host's for the same
    /// file), sorted by root and path.
    pub fn diagnostics(&self) -> anyhow::Result<Vec<Diagnostic>> {
        let snapshot = self.snapshot();
        let mut all = self.with_index(|g, i| g.diagnostics(i))?;
        all.extend(
            snapshot
                .host_reports
                .iter()
                .flat_map(|r| r.diagnostics.iter().cloned()),
        );
        // Stable: the engine's findings stay first for the same file.
        all.sort_by(|a, b| (a.root, &a.path).cmp(&(b.root, &b.path)));
        Ok(all)
    }
}

/// List the roots of a snapshot again (for an engine restart), through the same `Dir`s.
fn relist(roots: &Roots) -> Vec<Listing> {
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

fn build_snapshot(
    runtime: &Runtime,
    options: &CatalogOptions,
    specs: &[RootSpec],
) -> anyhow::Result<Snapshot> {
    let policy = runtime
        .instantiate(Arc::new(NoFiles))
        .and_then(|mut g| g.walk_policy())
        .context("asking the engine for its walk policy")?;
    let walked_at = std::time::SystemTime::now();
    let (roots, listings, mut host_reports) = open_roots(specs, &policy);
    let key = options.index_cache.as_deref().map(|dir| {
        let prints = specs
            .iter()
            .zip(&listings)
            .zip(&roots.dirs)
            .map(|((spec, l), dir)| {
                (
                    spec.name.as_str(),
                    spec.path.as_path(),
                    dir.as_ref().map(|_| &l.print),
                )
            });
        index_cache::Key::new(dir, prints, walked_at)
    });
    let builder = Builder {
        runtime,
        options,
        names: specs,
    };
    if let Some(key) = &key {
        match builder.restore(&roots, &listings, key) {
            Ok(Some(built)) => {
                return Ok(Snapshot {
                    roots,
                    stats: built.stats,
                    host_reports,
                    excluded: BTreeSet::new(),
                    live: Mutex::new(Some(built.live)),
                });
            }
            Ok(None) => {}
            Err(e) => eprintln!(
                "skills-mcp: warning: ignoring the index cache {}: {}; rebuilding it",
                crate::logsafe::EscapedPath(key.file()),
                crate::logsafe::Escaped(format!("{e:#}"))
            ),
        }
    }
    let mut excluded = BTreeSet::new();
    let mut excluded_reports = Vec::new();
    let mut built = builder.build(&roots, &listings, &mut excluded, &mut excluded_reports)?;
    if let Some(key) = &key
        && key.settled()
        && excluded.is_empty()
        && built.host_reports.is_empty()
        && let Err(e) = key.store(&mut built.live.guest, built.live.index)
    {
        eprintln!(
            "skills-mcp: warning: could not write the index cache {}: {}",
            crate::logsafe::EscapedPath(key.file()),
            crate::logsafe::Escaped(format!("{e:#}"))
        );
    }
    host_reports.extend(built.host_reports);
    host_reports.extend(excluded_reports);
    Ok(Snapshot {
        roots,
        stats: built.stats,
        host_reports,
        excluded,
        live: Mutex::new(Some(built.live)),
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The JSON answers of the tools (`get_skill`, `list_skills`, `get_asset`), shared by
/// the CLI and the MCP server.
impl Catalog {
    /// `get_skill` (8.1): `no_match`, `ambiguous` with candidates, or the match with its
    /// content, assets, scripts and inherited ones.
    pub fn get_skill_json(&self, context: &str) -> anyhow::Result<Value> {
        use skills_engine::output as o;
        match self.route(context)? {
            RouteOutcome::NoMatch => Ok(o::no_match_json()),
            RouteOutcome::Ambiguous(hits) => Ok(o::ambiguous_json(&crate::output::hits(&hits))),
            RouteOutcome::Matched(hit) => {
                let resolved = self.resolve(&hit.skill_path)?;
                Ok(o::matched_json(
                    &crate::output::hit(&hit),
                    &crate::output::resolved(&resolved),
                ))
            }
        }
    }

    /// `get_skill` by skill path (`get --path`): the skill's resolved content and files, in the
    /// shape of a match without `score` and `matched_keywords`.
    pub fn skill_json(&self, skill_path: &str) -> anyhow::Result<Value> {
        let skill = self.get(skill_path)?;
        let resolved = self.resolve(&skill.skill_path)?;
        Ok(skills_engine::output::skill_json(&crate::output::resolved(
            &resolved,
        )))
    }

    /// `list_skills` (8.2): the recursive tree of `SkillNode`s (`name`, `path`, `description`,
    /// `keywords`, `assetCount`, `scriptCount`, `children`). Without a path, the top-level
    /// nodes; with one, a one-element list holding that subtree.
    pub fn list_json(&self, path: Option<&str>) -> anyhow::Result<Value> {
        let nodes = self.tree(path)?;
        let Some(root) = nodes.first() else {
            return Ok(json!([]));
        };
        if path.is_none() && root.skill.is_none() && root.path.is_empty() {
            Ok(Value::Array(
                root.children
                    .iter()
                    .map(|&c| tree_node_json(&nodes, c as usize, 0))
                    .collect(),
            ))
        } else {
            Ok(json!([tree_node_json(&nodes, 0, 0)]))
        }
    }

    /// `get_asset` (8.3): `content` (text) or `content_base64` + `mime_type` (binary, or text
    /// that is not UTF-8), `size_bytes`, `type`, and `resolved_from` when inherited.
    pub fn asset_json(
        &self,
        skill_path: &str,
        file: &str,
        max_bytes: Option<u64>,
    ) -> anyhow::Result<Value> {
        let asset = self.read_asset(skill_path, file, max_bytes)?;
        let info = &asset.location.asset;
        let mut out = serde_json::Map::new();
        out.insert("skill_path".into(), json!(skill_path));
        out.insert("file".into(), json!(info.file));
        let text = if info.is_binary {
            None
        } else {
            std::str::from_utf8(&asset.bytes).ok()
        };
        match text {
            Some(text) => {
                out.insert("content".into(), json!(text));
            }
            None => {
                out.insert(
                    "content_base64".into(),
                    json!(base64::engine::general_purpose::STANDARD.encode(&asset.bytes)),
                );
            }
        }
        out.insert("size_bytes".into(), json!(asset.bytes.len()));
        out.insert("type".into(), json!(info.asset_type));
        if text.is_none() {
            out.insert("mime_type".into(), json!(info.mime_type));
        }
        if let Some(from) = &info.from {
            out.insert("resolved_from".into(), json!(from));
        }
        Ok(Value::Object(out))
    }
}

/// An asset (`file`, `description`, `type`) or script (`file`, `description`, `execution`,
/// `args`) of a `get_skill` answer, with `from` when inherited.
pub fn asset_info_json(asset: &AssetInfo) -> Value {
    skills_engine::output::asset_info_json(&crate::output::asset(asset))
}

/// One `SkillNode` of `list_skills`, recursively (depth-bounded against a malformed tree).
fn tree_node_json(nodes: &[TreeNode], i: usize, depth: usize) -> Value {
    let Some(node) = nodes.get(i) else {
        return Value::Null;
    };
    let children: Vec<Value> = if depth > 256 {
        Vec::new()
    } else {
        node.children
            .iter()
            .filter(|&&c| c as usize != i)
            .map(|&c| tree_node_json(nodes, c as usize, depth + 1))
            .collect()
    };
    let skill = node.skill.as_ref();
    json!({
        "name": node.name,
        "path": node.path,
        "description": skill.map_or("", |s| s.description.as_str()),
        "keywords": skill.map_or(&[][..], |s| s.keywords.as_slice()),
        "assetCount": skill.map_or(0, |s| s.asset_count),
        "scriptCount": skill.map_or(0, |s| s.script_count),
        "children": children,
    })
}
