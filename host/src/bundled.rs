//! The bundled `skills/` folder, embedded in the binary.
//!
//! `build.rs` lists every file of the repository's `skills/` folder (`include_bytes!`) with a
//! digest over their paths and contents. An installed binary has no source tree to read them
//! from, so [`dir`] unpacks them once into the cache folder as `bundled-<digest>/`, read-only,
//! checks them against the embedded bytes at every start (unpacking again on any difference),
//! and hands that folder out as an ordinary root: the same files, the same answers, opened
//! through the same sandboxed path as any other root.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

include!(concat!(env!("OUT_DIR"), "/bundled_skills.rs"));

/// The folder holding the bundled skills, unpacked and checked: `<cache>/bundled-<digest>`
/// (the cache folder of [`crate::runtime::default_cache_dir`], else a per-user folder in the
/// system's temporary folder). `None` when nothing is bundled.
pub fn dir() -> Result<Option<PathBuf>> {
    if BUNDLED_FILES.is_empty() {
        return Ok(None);
    }
    let base = crate::runtime::default_cache_dir().unwrap_or_else(|| {
        #[cfg(unix)]
        let user = rustix::process::getuid().as_raw().to_string();
        #[cfg(not(unix))]
        let user = std::env::var("USERNAME").unwrap_or_default();
        std::env::temp_dir().join(format!("skills-mcp-{user}"))
    });
    unpack_into(&base).map(Some)
}

/// [`dir`] below `base`: reuse `base/bundled-<digest>` when it holds exactly the embedded files,
/// else write them anew (into a fresh folder, then renamed into place).
pub fn unpack_into(base: &Path) -> Result<PathBuf> {
    let short = &BUNDLED_DIGEST[..16];
    let dest = base.join(format!("bundled-{short}"));
    // Ours alone (0700 when created; owned by us and writable by no one else), as for the
    // compiled engine: nobody else can swap files between the check and the serving.
    crate::runtime::prepare_cache_dir(base)
        .map_err(|why| anyhow::anyhow!("the cache folder {}: {why}", base.display()))?;
    if matches(&dest) {
        return Ok(dest);
    }
    let staging = base.join(format!("bundled-{short}.tmp-{}", std::process::id()));
    remove(&staging);
    write_all(&staging)
        .with_context(|| format!("unpacking the bundled skills into {}", staging.display()))?;
    // Checked again: another process may have unpacked a good copy meanwhile (a rename is
    // atomic, so a copy is either whole or absent); only a bad one is removed.
    if std::fs::symlink_metadata(&dest).is_ok() && !matches(&dest) {
        remove(&dest);
    }
    if let Err(e) = std::fs::rename(&staging, &dest) {
        remove(&staging);
        // Another process may have put a good copy there first.
        if !matches(&dest) {
            return Err(e)
                .with_context(|| format!("moving the bundled skills into {}", dest.display()));
        }
    }
    if !matches(&dest) {
        anyhow::bail!(
            "the bundled skills in {} do not match the binary's after unpacking",
            dest.display()
        );
    }
    Ok(dest)
}

/// Whether `dir` holds exactly the embedded files, byte for byte, and nothing else.
fn matches(dir: &Path) -> bool {
    let mut found = 0usize;
    if !count_files(dir, &mut found) || found != BUNDLED_FILES.len() {
        return false;
    }
    BUNDLED_FILES.iter().all(|(rel, bytes)| {
        let path = dir.join(rel);
        std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
            && std::fs::read(&path).is_ok_and(|b| b == *bytes)
    })
}

/// Count the entries below `dir` that are not folders; false when one cannot be listed.
fn count_files(dir: &Path, found: &mut usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    for entry in entries {
        let Ok(entry) = entry else { return false };
        let Ok(kind) = entry.file_type() else {
            return false;
        };
        if kind.is_dir() {
            if !count_files(&entry.path(), found) {
                return false;
            }
        } else {
            *found += 1;
        }
    }
    true
}

/// Write every embedded file below `dir`, then make files and folders read-only.
fn write_all(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for (rel, bytes) in BUNDLED_FILES {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    set_read_only(dir, true)
}

/// Remove `dir` (a copy of the bundled skills), making it writable first.
fn remove(dir: &Path) {
    if std::fs::symlink_metadata(dir).is_err() {
        return;
    }
    let _ = set_read_only(dir, false);
    let _ = std::fs::remove_dir_all(dir);
}

/// Files 0444 and folders 0555 (`read_only`), or owner-writable again (`!read_only`).
fn set_read_only(dir: &Path, read_only: bool) -> Result<()> {
    // Folders become writable before their entries are visited, read-only after.
    if !read_only {
        set_mode(dir, true, false)?;
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            set_read_only(&entry.path(), read_only)?;
        } else if kind.is_file() {
            set_mode(&entry.path(), false, read_only)?;
        }
    }
    if read_only {
        set_mode(dir, true, true)?;
    }
    Ok(())
}

fn set_mode(path: &Path, is_dir: bool, read_only: bool) -> Result<()> {
    let mut perms = std::fs::metadata(path)?.permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = match (is_dir, read_only) {
            (true, true) => 0o555,
            (true, false) => 0o755,
            (false, true) => 0o444,
            (false, false) => 0o644,
        };
        perms.set_mode(mode);
    }
    #[cfg(not(unix))]
    {
        if !is_dir {
            perms.set_readonly(read_only);
        }
    }
    std::fs::set_permissions(path, perms)
        .with_context(|| format!("setting the permissions of {}", path.display()))
}
