//! Unpacking a skill archive into a staging folder, as untrusted content: an OCI layer or an
//! index entry's `.tar.gz`, or an index entry's `.zip`. Both go through one [`Sandbox`]: every
//! path through the engine's path rule ([`skills_engine::walk::check_read_path`]: no `..`,
//! nothing absolute, no empty or `.` segment), every write through a cap-std [`Dir`] on the
//! folder (nothing lands outside it), only regular files and folders (no links, devices or
//! FIFOs), no path twice, at most [`MAX_FILES`] files and [`MAX_BYTES`] bytes unpacked
//! (ToolHive's limits). The bytes are counted as they come out of the decompressor, never taken
//! from a header: a gzip or zip bomb stops at that size.

use std::collections::HashSet;
use std::io::{Read, Write as _};
use std::path::Path;

use anyhow::{Context as _, Result, anyhow, bail};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

/// Most files a skill archive may hold (ToolHive's limit).
pub const MAX_FILES: usize = 1000;
/// Most bytes of file content a skill archive may unpack to (ToolHive's limit: 95 MB).
pub const MAX_BYTES: u64 = 95_000_000;
/// What the tar structure may add to the content (headers, PAX records, padding, the end).
const TAR_OVERHEAD: u64 = (MAX_FILES as u64 + 16) * 3 * 512 + (1 << 20);

/// The message of an archive that unpacks to more than [`MAX_BYTES`].
fn too_big() -> String {
    format!("the archive unpacks to more than {MAX_BYTES} bytes (a compression bomb?)")
}

/// A reader that fails once more than `left` bytes came out of `inner`.
struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            return Err(std::io::Error::other(too_big()));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// What an archive entry is.
enum Kind {
    File,
    Folder,
    /// Anything else, named for the message (`symbolic link`, `device`, ...).
    Other(&'static str),
}

/// The one set of checks every archive entry goes through, and the folder it is written to.
struct Sandbox {
    dir: Dir,
    /// Files written.
    seen: HashSet<String>,
    /// Folders, named by an entry or implied by a path.
    folders: HashSet<String>,
    /// Folders named by an entry.
    explicit: HashSet<String>,
    files: Vec<String>,
    /// Bytes of content that may still be written.
    left: u64,
}

impl Sandbox {
    fn open(dest: &Path) -> Result<Self> {
        let dir = Dir::open_ambient_dir(dest, ambient_authority())
            .with_context(|| format!("opening {}", dest.display()))?;
        Ok(Self {
            dir,
            seen: HashSet::new(),
            folders: HashSet::new(),
            explicit: HashSet::new(),
            files: Vec::new(),
            left: MAX_BYTES,
        })
    }

    /// Checks the entry `raw` (its path as the archive spells it) of `kind` and writes it; a
    /// file's bytes come from `content`, counted as they are read (`declared`: the size the
    /// archive claims, refused early when already over the limit, never trusted). Returns the
    /// bytes written.
    fn entry(
        &mut self,
        raw: &[u8],
        kind: Kind,
        declared: u64,
        content: &mut dyn Read,
    ) -> Result<u64> {
        let shown = String::from_utf8_lossy(raw).into_owned();
        let shown = crate::logsafe::Escaped(&shown);
        let Ok(path) = std::str::from_utf8(raw) else {
            bail!("the archive holds a path that is not UTF-8: {shown}");
        };
        let path = path.strip_prefix("./").unwrap_or(path);
        let is_dir = matches!(kind, Kind::Folder);
        let path = if is_dir {
            path.trim_end_matches('/')
        } else {
            path
        };
        if is_dir && (path.is_empty() || path == ".") {
            return Ok(0);
        }
        if let Kind::Other(what) = kind {
            bail!(
                "the archive holds {shown}, which is a {what}; only files and folders are accepted"
            );
        }
        skills_engine::walk::check_read_path(path)
            .map_err(|why| anyhow!("the archive holds an unsafe path: {why}"))?;
        // Every folder above it, so that a file and a folder of one name are caught too.
        let mut parent = path;
        while let Some((up, _)) = parent.rsplit_once('/') {
            if self.seen.contains(up) {
                bail!(
                    "the archive holds {shown} below the file {}",
                    crate::logsafe::Escaped(up)
                );
            }
            self.folders.insert(up.to_owned());
            parent = up;
        }
        if is_dir {
            if self.seen.contains(path) || !self.explicit.insert(path.to_owned()) {
                bail!("the archive holds {shown} twice");
            }
            self.folders.insert(path.to_owned());
            self.dir
                .create_dir_all(path)
                .with_context(|| format!("creating {shown}"))?;
            return Ok(0);
        }
        if self.folders.contains(path) || !self.seen.insert(path.to_owned()) {
            bail!("the archive holds {shown} twice");
        }
        if self.files.len() >= MAX_FILES {
            bail!("the archive holds more than {MAX_FILES} files");
        }
        if declared > self.left {
            bail!("{}", too_big());
        }
        if let Some((up, _)) = path.rsplit_once('/') {
            self.dir
                .create_dir_all(up)
                .with_context(|| format!("creating the folder of {shown}"))?;
        }
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = self
            .dir
            .open_with(path, &options)
            .with_context(|| format!("writing {shown}"))?;
        let copied = std::io::copy(&mut content.take(self.left + 1), &mut file)
            .map_err(|e| anyhow!("unpacking {shown}: {e}"))?;
        if copied > self.left {
            bail!("{}", too_big());
        }
        self.left -= copied;
        file.flush().with_context(|| format!("writing {shown}"))?;
        self.files.push(path.to_owned());
        Ok(copied)
    }

    /// The files written (relative, `/`-separated, sorted).
    fn finish(mut self) -> Vec<String> {
        self.files.sort();
        self.files
    }
}

/// Unpacks the `.tar.gz` `layer` into the empty folder `dest`; returns the files written
/// (relative, `/`-separated, sorted).
pub fn unpack(layer: &[u8], dest: &Path) -> Result<Vec<String>> {
    let mut sandbox = Sandbox::open(dest)?;
    let gz = flate2::read::GzDecoder::new(layer);
    let capped = Capped {
        inner: gz,
        left: MAX_BYTES + TAR_OVERHEAD,
    };
    let mut archive = tar::Archive::new(capped);
    let entries = archive
        .entries()
        .map_err(|e| anyhow!("reading the archive: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| anyhow!("reading the archive: {e}"))?;
        let kind = match entry.header().entry_type() {
            t if t.is_file() => Kind::File,
            t if t.is_dir() => Kind::Folder,
            tar::EntryType::Symlink => Kind::Other("symbolic link"),
            tar::EntryType::Link => Kind::Other("hard link"),
            tar::EntryType::Char | tar::EntryType::Block => Kind::Other("device"),
            tar::EntryType::Fifo => Kind::Other("FIFO"),
            _ => Kind::Other("special entry"),
        };
        let is_file = matches!(kind, Kind::File);
        let raw = entry.path_bytes().into_owned();
        let size = entry.header().size().unwrap_or(u64::MAX);
        let written = sandbox.entry(&raw, kind, size, &mut (&mut entry).take(size))?;
        if is_file && written != size {
            bail!(
                "the archive ends inside {}",
                crate::logsafe::Escaped(String::from_utf8_lossy(&raw))
            );
        }
    }
    Ok(sandbox.finish())
}

/// Most entries (files and folders) a zip archive may list.
const MAX_ZIP_ENTRIES: usize = 2 * MAX_FILES;
/// `S_IFMT`: the kind bits of a Unix mode.
const S_IFMT: u32 = 0o170_000;

/// Unpacks the `.zip` `archive` into the empty folder `dest` by the same rules as [`unpack`]:
/// the central directory names the entries (at most [`MAX_ZIP_ENTRIES`]); an entry whose Unix
/// mode (the external attributes of an archive made on Unix) is not a file or folder (a
/// symbolic link, a device) is refused; stored and deflated entries are read, their bytes
/// counted as they are inflated and checked against the entry's size and CRC-32. Returns the
/// files written.
pub fn unpack_zip(archive: &[u8], dest: &Path) -> Result<Vec<String>> {
    let zip = rawzip::ZipArchive::from_slice(archive)
        .map_err(|e| anyhow!("reading the zip archive: {e}"))?;
    let mut sandbox = Sandbox::open(dest)?;
    for (i, entry) in zip.entries().enumerate() {
        if i >= MAX_ZIP_ENTRIES {
            bail!("the archive lists more than {MAX_ZIP_ENTRIES} entries");
        }
        let entry = entry.map_err(|e| anyhow!("reading the zip archive's directory: {e}"))?;
        let raw = entry.file_path().as_bytes().to_vec();
        let shown = crate::logsafe::Escaped(String::from_utf8_lossy(&raw)).to_string();
        let unix = matches!(
            entry.version_made_by().creator_system(),
            rawzip::CreatorSystem::UNIX | rawzip::CreatorSystem::MACOS
        );
        let bits = if unix {
            (entry.external_attributes() >> 16) & S_IFMT
        } else {
            0
        };
        let kind = match bits {
            0o120_000 => Kind::Other("symbolic link"),
            0o020_000 | 0o060_000 => Kind::Other("device"),
            0o010_000 => Kind::Other("FIFO"),
            0o140_000 => Kind::Other("socket"),
            0o040_000 => Kind::Folder,
            _ if entry.is_dir() => Kind::Folder,
            _ => Kind::File,
        };
        if !matches!(kind, Kind::File) {
            sandbox.entry(&raw, kind, 0, &mut std::io::empty())?;
            continue;
        }
        let local = zip
            .get_entry(entry.wayfinder())
            .map_err(|e| anyhow!("reading {shown} in the zip archive: {e}"))?;
        let declared = entry.uncompressed_size_hint();
        let method = entry.compression_method();
        if method == rawzip::CompressionMethod::STORE {
            sandbox.entry(
                &raw,
                kind,
                declared,
                &mut local.verifying_reader(local.data()),
            )?;
        } else if method == rawzip::CompressionMethod::DEFLATE {
            let inflate = flate2::read::DeflateDecoder::new(local.data());
            sandbox.entry(&raw, kind, declared, &mut local.verifying_reader(inflate))?;
        } else {
            bail!(
                "the archive holds {shown} compressed by {method}; only stored and deflated entries are read"
            );
        }
    }
    Ok(sandbox.finish())
}
