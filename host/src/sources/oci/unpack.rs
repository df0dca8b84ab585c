//! Unpacking a skill layer (a gzip-compressed tar) into a staging folder, as untrusted content:
//! every path through the engine's path rule ([`skills_engine::walk::check_read_path`]: no
//! `..`, nothing absolute, no empty or `.` segment), every write through a cap-std [`Dir`] on
//! the folder (nothing lands outside it), only regular files and folders (no links, devices or
//! FIFOs), no path twice, at most [`MAX_FILES`] files and [`MAX_BYTES`] bytes unpacked (ToolHive's
//! limits): the decompressed stream is cut at that size, so a gzip bomb stops there.

use std::collections::HashSet;
use std::io::{Read, Write as _};
use std::path::Path;

use anyhow::{Context as _, Result, anyhow, bail};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

/// Most files a skill layer may hold (ToolHive's limit).
pub const MAX_FILES: usize = 1000;
/// Most bytes of file content a skill layer may unpack to (ToolHive's limit: 95 MB).
pub const MAX_BYTES: u64 = 95_000_000;
/// What the tar structure may add to the content (headers, PAX records, padding, the end).
const TAR_OVERHEAD: u64 = (MAX_FILES as u64 + 16) * 3 * 512 + (1 << 20);

/// A reader that fails once more than `left` bytes came out of `inner`.
struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            return Err(std::io::Error::other(format!(
                "the layer unpacks to more than {MAX_BYTES} bytes (a compression bomb?)"
            )));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// Unpacks the `.tar.gz` `layer` into the empty folder `dest`; returns the files written
/// (relative, `/`-separated, sorted).
pub fn unpack(layer: &[u8], dest: &Path) -> Result<Vec<String>> {
    let dir = Dir::open_ambient_dir(dest, ambient_authority())
        .with_context(|| format!("opening {}", dest.display()))?;
    let gz = flate2::read::GzDecoder::new(layer);
    let capped = Capped {
        inner: gz,
        left: MAX_BYTES + TAR_OVERHEAD,
    };
    let mut archive = tar::Archive::new(capped);
    // Files, folders (named or implied by a path), folders named by an entry.
    let mut seen: HashSet<String> = HashSet::new();
    let mut folders: HashSet<String> = HashSet::new();
    let mut explicit: HashSet<String> = HashSet::new();
    let mut files = Vec::new();
    let mut total: u64 = 0;
    let entries = archive
        .entries()
        .map_err(|e| anyhow!("reading the layer: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| anyhow!("reading the layer: {e}"))?;
        let kind = entry.header().entry_type();
        let raw = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&raw).into_owned();
        let shown = crate::logsafe::Escaped(&shown);
        let Ok(path) = String::from_utf8(raw) else {
            bail!("the layer holds a path that is not UTF-8: {shown}");
        };
        let path = path.strip_prefix("./").unwrap_or(&path);
        let is_dir = kind.is_dir();
        let path = if is_dir {
            path.trim_end_matches('/')
        } else {
            path
        };
        if is_dir && (path.is_empty() || path == ".") {
            continue;
        }
        if !(kind.is_file() || is_dir) {
            bail!(
                "the layer holds {shown}, which is a {}; only files and folders are accepted",
                match kind {
                    tar::EntryType::Symlink => "symbolic link",
                    tar::EntryType::Link => "hard link",
                    tar::EntryType::Char | tar::EntryType::Block => "device",
                    tar::EntryType::Fifo => "FIFO",
                    _ => "special entry",
                }
            );
        }
        skills_engine::walk::check_read_path(path)
            .map_err(|why| anyhow!("the layer holds an unsafe path: {why}"))?;
        // Every folder above it, so that a file and a folder of one name are caught too.
        let mut parent = path;
        while let Some((up, _)) = parent.rsplit_once('/') {
            if seen.contains(up) {
                bail!(
                    "the layer holds {shown} below the file {}",
                    crate::logsafe::Escaped(up)
                );
            }
            folders.insert(up.to_owned());
            parent = up;
        }
        if is_dir {
            if seen.contains(path) || !explicit.insert(path.to_owned()) {
                bail!("the layer holds {shown} twice");
            }
            folders.insert(path.to_owned());
            dir.create_dir_all(path)
                .with_context(|| format!("creating {shown}"))?;
            continue;
        }
        if folders.contains(path) || !seen.insert(path.to_owned()) {
            bail!("the layer holds {shown} twice");
        }
        if files.len() >= MAX_FILES {
            bail!("the layer holds more than {MAX_FILES} files");
        }
        let size = entry.header().size().unwrap_or(u64::MAX);
        total = total.saturating_add(size);
        if total > MAX_BYTES {
            bail!("the layer unpacks to more than {MAX_BYTES} bytes");
        }
        if let Some((up, _)) = path.rsplit_once('/') {
            dir.create_dir_all(up)
                .with_context(|| format!("creating the folder of {shown}"))?;
        }
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = dir
            .open_with(path, &options)
            .with_context(|| format!("writing {shown}"))?;
        let copied = std::io::copy(&mut (&mut entry).take(size), &mut file)
            .with_context(|| format!("writing {shown}"))?;
        if copied != size {
            bail!("the layer ends inside {shown}");
        }
        file.flush().with_context(|| format!("writing {shown}"))?;
        files.push(path.to_owned());
    }
    files.sort();
    Ok(files)
}
