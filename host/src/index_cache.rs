//! The on-disk index cache: a finished index, kept as the engine's snapshot sections, so that a
//! start (a CLI command or the server) whose roots did not change skips reading, parsing and
//! analysing every skill file.
//!
//! - **Where**: the per-user cache folder ([`crate::runtime::default_cache_dir`]), one file per
//!   set of roots, `index-<hash>.snap`, the hash taken over the component and the roots' names
//!   and canonical paths. `SKILLS_MCP_INDEX_CACHE=off` (or `SKILLS_MCP_CACHE_DIR=""`) turns it
//!   off.
//! - **Valid when** the file was written by this very component (its SHA-256 is part of the
//!   fingerprint) for a walk that listed exactly the same entries, every file with the same size,
//!   modification time, status-change time, inode and device. Anything else is a rebuild, which
//!   writes the file anew.
//! - **Written** after a build in which every file the engine asked for was read (no host error,
//!   no file left out) and whose newest file is more than [`SETTLE`] older than the walk: a file
//!   rewritten within the timestamps' granularity of the walk could otherwise go unnoticed (git's
//!   "racily clean" entries). Such a build is simply not cached; a later one is.
//! - **Format**: a magic line, the fingerprint (32 bytes), the number of sections, then each
//!   section as length, CRC-32 and bytes, written one at a time as the engine produces them and
//!   handed back one at a time. A damaged file fails a CRC (or the engine's own checks) and is
//!   reported and rebuilt over: the server keeps serving.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, anyhow, bail};
use sha2::{Digest as _, Sha256};

use crate::runtime::{EntryKind, Guest, IndexHandle, component_digest};

/// First bytes of a cache file (the trailing digit is the file format's version).
const MAGIC: &[u8; 24] = b"skills-mcp index cache1\n";
/// A file changed less than this before the walk makes the build uncacheable.
pub const SETTLE: Duration = Duration::from_secs(2);
/// Cache files unused for this long are removed.
const MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);
/// Largest section a cache file may declare (a guard against a garbled length).
const MAX_SECTION: u32 = 256 * 1024 * 1024;

/// The index cache folder unless turned off: `SKILLS_MCP_INDEX_CACHE=off` (or `0`, `false`,
/// `no`), else the per-user cache folder.
pub fn default_dir() -> Option<PathBuf> {
    let off = std::env::var("SKILLS_MCP_INDEX_CACHE").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "off" | "0" | "false" | "no"
        )
    });
    if off {
        None
    } else {
        crate::runtime::default_cache_dir()
    }
}

/// Running fingerprint of one root's walk: every entry's path and kind, and for files their
/// size and timestamps.
#[derive(Clone)]
pub struct ListingPrint {
    sha: Sha256,
    /// Newest modification time of a listed file (nanoseconds since the epoch).
    newest: i128,
    /// Whether every file's metadata could be read (else the walk is not cacheable).
    complete: bool,
}

impl Default for ListingPrint {
    fn default() -> Self {
        Self {
            sha: Sha256::new(),
            newest: i128::MIN,
            complete: true,
        }
    }
}

fn nanos(t: std::io::Result<SystemTime>) -> Option<i128> {
    let t = t.ok()?;
    Some(match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    })
}

/// What the fingerprint keeps of a listed file's metadata: its modification time, and on Unix
/// its status-change time, inode and device. Small, since a walk holds one per file until it
/// ends (the whole `Metadata` is about four times larger).
#[derive(Debug, Clone, Copy)]
pub struct FileStamp {
    /// Modification time (nanoseconds since the epoch), `None` when it could not be read.
    modified: Option<i128>,
    #[cfg(unix)]
    unix: [u64; 4],
}

impl FileStamp {
    pub fn new(meta: &cap_std::fs::Metadata) -> Self {
        Self {
            modified: nanos(meta.modified().map(|t| t.into_std())),
            #[cfg(unix)]
            unix: {
                use cap_std::fs::MetadataExt as _;
                [
                    meta.ctime() as u64,
                    meta.ctime_nsec() as u64,
                    meta.ino(),
                    meta.dev(),
                ]
            },
        }
    }
}

impl ListingPrint {
    /// Add one listed entry (`stamp`: a file's, `None` for folders and symlinks, which are
    /// never read).
    pub fn entry(&mut self, path: &str, kind: EntryKind, size: u64, stamp: Option<&FileStamp>) {
        let kind = match kind {
            EntryKind::File => 0u8,
            EntryKind::Directory => 1,
            EntryKind::Symlink => 2,
        };
        self.sha.update([kind]);
        self.sha.update((path.len() as u64).to_le_bytes());
        self.sha.update(path.as_bytes());
        self.sha.update(size.to_le_bytes());
        if kind != 0 {
            return;
        }
        let Some(modified) = stamp.and_then(|s| s.modified) else {
            self.complete = false;
            return;
        };
        self.newest = self.newest.max(modified);
        self.sha.update(modified.to_le_bytes());
        #[cfg(unix)]
        for x in stamp.map(|s| s.unix).unwrap_or_default() {
            self.sha.update(x.to_le_bytes());
        }
    }

    /// A walk whose files' metadata could not all be read is never cached.
    pub fn mark_incomplete(&mut self) {
        self.complete = false;
    }
}

/// Where the index of one set of roots is cached, and the fingerprint of their current walk.
pub struct Key {
    file: PathBuf,
    dir: PathBuf,
    fingerprint: [u8; 32],
    /// Every root's walk complete.
    complete: bool,
    /// Newest file modification time of the walk.
    newest: i128,
    /// When the walk started.
    walked_at: i128,
}

impl Key {
    /// The key of roots `(name, path, its walk's print or None when it could not be opened)`,
    /// walked from `walked_at` on.
    pub fn new<'a>(
        dir: &Path,
        roots: impl IntoIterator<Item = (&'a str, &'a Path, Option<&'a ListingPrint>)>,
        walked_at: SystemTime,
    ) -> Self {
        let mut name = Sha256::new();
        name.update(component_digest());
        let mut print = Sha256::new();
        print.update(component_digest());
        let mut complete = true;
        let mut newest = i128::MIN;
        for (root_name, path, listing) in roots {
            let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
            for h in [&mut name, &mut print] {
                let path = path.to_string_lossy();
                h.update((root_name.len() as u64).to_le_bytes());
                h.update(root_name.as_bytes());
                h.update((path.len() as u64).to_le_bytes());
                h.update(path.as_bytes());
            }
            match listing {
                Some(l) => {
                    print.update([1]);
                    print.update(l.sha.clone().finalize());
                    complete &= l.complete;
                    newest = newest.max(l.newest);
                }
                None => print.update([0]),
            }
        }
        let name: String = name.finalize()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Self {
            file: dir.join(format!("index-{name}.snap")),
            dir: dir.to_owned(),
            fingerprint: print.finalize().into(),
            complete,
            newest,
            walked_at: nanos(Ok(walked_at)).unwrap_or(i128::MIN),
        }
    }

    /// The cache file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Whether a build from this walk may be written to the cache: every file's metadata was
    /// read and none changed within [`SETTLE`] of the walk.
    pub fn settled(&self) -> bool {
        self.complete && self.newest.saturating_add(SETTLE.as_nanos() as i128) < self.walked_at
    }

    /// The cache file of these roots when it holds the index of this very walk (its magic and
    /// fingerprint read, nothing more). `Ok(None)` when there is no cache for these roots or it
    /// is stale (another walk); an error when the file cannot be read or is not a cache file.
    pub fn open(&self) -> anyhow::Result<Option<Cached>> {
        if !self.complete {
            return Ok(None);
        }
        let mut file = match File::open(&self.file) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).context("opening it"),
        };
        let mut magic = [0u8; MAGIC.len()];
        let mut fingerprint = [0u8; 32];
        let header = file
            .read_exact(&mut magic)
            .and_then(|()| file.read_exact(&mut fingerprint));
        if header.is_err() || &magic != MAGIC {
            bail!("not an index cache file of this version");
        }
        if fingerprint != self.fingerprint {
            return Ok(None);
        }
        Ok(Some(Cached {
            file,
            path: self.file.clone(),
        }))
    }

    /// Write the finished `index` of `guest` as the cache of these roots (atomically: a
    /// temporary file renamed over the old one).
    pub fn store(&self, guest: &mut Guest, index: IndexHandle) -> anyhow::Result<()> {
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))?;
        let tmp = self.dir.join(format!(
            ".index-{}-{}.tmp",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let result = (|| {
            let mut w = BufWriter::with_capacity(256 * 1024, File::create(&tmp)?);
            w.write_all(MAGIC)?;
            w.write_all(&self.fingerprint)?;
            let count = guest.snapshot_sections(index)?;
            w.write_all(&count.to_le_bytes())?;
            for n in 0..count {
                let bytes = guest.snapshot_section(index, n)?;
                let len = u32::try_from(bytes.len())
                    .ok()
                    .filter(|&l| l <= MAX_SECTION)
                    .ok_or_else(|| anyhow!("section {n} is {} bytes", bytes.len()))?;
                w.write_all(&len.to_le_bytes())?;
                w.write_all(&crc32fast::hash(&bytes).to_le_bytes())?;
                w.write_all(&bytes)?;
            }
            // No fsync: a file cut short by a crash fails its checksums and is rebuilt, so the
            // first start does not wait for the disk.
            w.into_inner().map_err(|e| e.into_error())?;
            std::fs::rename(&tmp, &self.file)?;
            anyhow::Ok(())
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        prune(&self.dir);
        result
    }
}

/// A cache file that holds the index of the current walk ([`Key::open`]), read up to its
/// sections.
pub struct Cached {
    file: File,
    path: PathBuf,
}

impl Cached {
    /// Restore the cached index into the new `index` of `guest`, one section at a time: each
    /// section is read into a buffer of its own size, handed to the engine and freed before the
    /// next (no read-ahead buffer, no buffer kept at the largest section's size while the
    /// engine finishes the index). An error when the file is damaged or the engine refuses it
    /// (the index is then as new, or the guest trapped).
    pub fn restore(mut self, guest: &mut Guest, index: IndexHandle) -> anyhow::Result<()> {
        let r = &mut self.file;
        let count = read_u32(r).context("reading the number of sections")?;
        for n in 0..count {
            let len = read_u32(r).with_context(|| format!("section {n}: its length"))?;
            let crc = read_u32(r).with_context(|| format!("section {n}: its checksum"))?;
            if len > MAX_SECTION {
                bail!("section {n}: a length of {len} bytes");
            }
            let mut bytes = vec![0; len as usize];
            r.read_exact(&mut bytes)
                .with_context(|| format!("section {n} of {count}: cut short"))?;
            if crc32fast::hash(&bytes) != crc {
                bail!("section {n} of {count}: checksum mismatch (the file is damaged)");
            }
            guest.restore_section(index, n, count, &bytes)?;
        }
        // In use: pruning (by age) spares it.
        if let Ok(f) = File::options().append(true).open(&self.path) {
            let _ = f.set_modified(SystemTime::now());
        }
        Ok(())
    }
}

fn read_u32(r: &mut impl Read) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

/// Remove index caches unused for [`MAX_AGE`] and temporary files left by a crash (best effort).
fn prune(dir: &Path) {
    let now = SystemTime::now();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let age = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default();
        let stale = (name.starts_with("index-") && name.ends_with(".snap") && age > MAX_AGE)
            || (name.starts_with(".index-")
                && name.ends_with(".tmp")
                && age > Duration::from_secs(3600));
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
