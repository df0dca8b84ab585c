//! What the editor may read and write on disk: the configured roots, each opened once as a
//! cap-std [`Dir`] (every path stays inside it), read with the catalog's capped read, written
//! atomically (a file beside, then a rename) only when the file is still what the editor
//! opened (its SHA-256 compared). A git-sourced or bundled root is read-only. Which files may
//! be written at all (skill files, eval files) is decided by the caller ([`super`]), with the
//! engine's answers; here are the rules of the disk: no symlink on the way, no special file,
//! the size cap, the digest, the atomic replace.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::Dir;
use sha2::Digest as _;

use crate::catalog::{ReadError, read_capped};
use crate::config::RootSource;

/// Largest file the editor reads or writes: the largest skill file an index build reads.
pub const MAX_FILE_BYTES: u64 = skills_engine::walk::MAX_SKILL_FILE_BYTES;

/// One configured root as the editor sees it.
pub struct Root {
    /// The root's name (what access rules call it).
    pub name: String,
    pub path: PathBuf,
    /// `bundled`, `git` or `folder`.
    pub kind: &'static str,
    /// Why it cannot be written, when it cannot.
    pub read_only: Option<String>,
    dir: Option<Dir>,
}

/// Why a read or a save was refused.
#[derive(Debug)]
pub enum Refusal {
    /// 403: the root is read-only, or the path is not one the editor writes.
    Forbidden(String),
    /// 404.
    NotFound(String),
    /// 409: the file changed on disk since it was opened (or appeared, for a new file).
    Stale(String),
    /// 413: over [`MAX_FILE_BYTES`].
    TooLarge(String),
    /// 400: a malformed path or request.
    Invalid(String),
    /// 500: the disk said no.
    Io(String),
}

impl Refusal {
    pub fn status(&self) -> u16 {
        match self {
            Refusal::Forbidden(_) => 403,
            Refusal::NotFound(_) => 404,
            Refusal::Stale(_) => 409,
            Refusal::TooLarge(_) => 413,
            Refusal::Invalid(_) => 400,
            Refusal::Io(_) => 500,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Refusal::Forbidden(m)
            | Refusal::NotFound(m)
            | Refusal::Stale(m)
            | Refusal::TooLarge(m)
            | Refusal::Invalid(m)
            | Refusal::Io(m) => m,
        }
    }
}

/// The roots, and one lock that makes a save's check-then-rename atomic among this editor's
/// own requests.
pub struct Sandbox {
    pub roots: Vec<Root>,
    saving: Mutex<()>,
}

/// The SHA-256 of `bytes`, hex: what a save compares.
pub fn digest(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Sandbox {
    /// Open the configured roots (a root that cannot be opened is listed, unavailable).
    pub fn open(roots: &[crate::config::RootSpec]) -> Self {
        let roots = roots
            .iter()
            .map(|r| {
                let (kind, read_only) = match r.source {
                    RootSource::Bundled => (
                        "bundled",
                        Some("the skills bundled in skills-mcp are read-only".to_string()),
                    ),
                    RootSource::Git => (
                        "git",
                        Some(
                            "a git source is read-only here (edit the repository, then push)"
                                .to_string(),
                        ),
                    ),
                    RootSource::Index => (
                        "index",
                        Some(
                            "an index source is read-only here (edit the skill where the index is served)"
                                .to_string(),
                        ),
                    ),
                    RootSource::Oci => (
                        "oci",
                        Some(
                            "an OCI source is read-only here (edit the skill, then push it)"
                                .to_string(),
                        ),
                    ),
                    _ => ("folder", None),
                };
                let dir = Dir::open_ambient_dir(&r.path, cap_std::ambient_authority());
                let read_only = match (&dir, read_only) {
                    (_, Some(why)) => Some(why),
                    (Err(e), None) => Some(format!("the folder cannot be opened: {e}")),
                    (Ok(_), None) => None,
                };
                Root {
                    name: r.root_name.clone(),
                    path: r.path.clone(),
                    kind,
                    read_only,
                    dir: dir.ok(),
                }
            })
            .collect();
        Self {
            roots,
            saving: Mutex::new(()),
        }
    }

    fn root(&self, root: usize) -> Result<&Root, Refusal> {
        self.roots
            .get(root)
            .ok_or_else(|| Refusal::Invalid(format!("there is no root #{root}")))
    }

    /// Read `path` of `root` (a regular file within the cap, never through a symlink).
    pub fn read(&self, root: usize, path: &str) -> Result<Vec<u8>, Refusal> {
        let r = self.root(root)?;
        let dir = r
            .dir
            .as_ref()
            .ok_or_else(|| Refusal::NotFound(format!("the root {} is not available", r.name)))?;
        skills_engine::walk::check_read_path(path).map_err(Refusal::Invalid)?;
        self.no_symlink_on_the_way(dir, path)?;
        read_capped(dir, path, MAX_FILE_BYTES).map_err(|e| match e {
            ReadError::TooLarge { size, limit } => Refusal::TooLarge(format!(
                "{path} is {size} bytes, over the editor's limit of {limit} bytes"
            )),
            ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Refusal::NotFound(format!("{path} does not exist in the root {}", r.name))
            }
            ReadError::Refused(why) => Refusal::Forbidden(format!("{path}: {why}")),
            ReadError::Io(e) => Refusal::Io(format!("{path}: {e}")),
        })
    }

    /// Whether `path` exists in `root` (as anything).
    pub fn exists(&self, root: usize, path: &str) -> bool {
        self.root(root)
            .ok()
            .and_then(|r| r.dir.as_ref())
            .is_some_and(|d| d.symlink_metadata(path).is_ok())
    }

    /// Replace `path` of `root` by `bytes`, atomically, when the file on disk is still the one
    /// whose digest is `expected` (`None`: the file must not exist yet). Returns the new digest.
    pub fn save(
        &self,
        root: usize,
        path: &str,
        bytes: &[u8],
        expected: Option<&str>,
    ) -> Result<String, Refusal> {
        let r = self.root(root)?;
        if let Some(why) = &r.read_only {
            return Err(Refusal::Forbidden(format!(
                "{path} is in the root {}, which is read-only: {why}",
                r.name
            )));
        }
        let dir = r
            .dir
            .as_ref()
            .ok_or_else(|| Refusal::NotFound(format!("the root {} is not available", r.name)))?;
        skills_engine::walk::check_read_path(path).map_err(Refusal::Invalid)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(Refusal::TooLarge(format!(
                "{} bytes, over the editor's limit of {MAX_FILE_BYTES} bytes",
                bytes.len()
            )));
        }
        let _one_at_a_time = self.saving.lock().unwrap_or_else(|e| e.into_inner());
        self.no_symlink_on_the_way(dir, path)?;
        let mode = match (dir.symlink_metadata(path), expected) {
            (Ok(meta), Some(expected)) => {
                if !meta.is_file() {
                    return Err(Refusal::Forbidden(format!("{path} is not a regular file")));
                }
                let now = self.read(root, path)?;
                if digest(&now) != expected {
                    return Err(Refusal::Stale(format!(
                        "{path} changed on disk since it was opened; nothing was written. \
                         Copy your text, reopen the file, and apply your change again"
                    )));
                }
                Some(meta.permissions())
            }
            (Ok(_), None) => {
                return Err(Refusal::Stale(format!(
                    "{path} already exists; nothing was written. Open it to edit it"
                )));
            }
            (Err(e), _) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Refusal::Io(format!("{path}: {e}")));
            }
            (Err(_), Some(_)) => {
                return Err(Refusal::Stale(format!(
                    "{path} was removed from disk since it was opened; nothing was written"
                )));
            }
            (Err(_), None) => None,
        };
        let (parent, name) = match path.rsplit_once('/') {
            Some((parent, name)) => (parent, name),
            None => ("", path),
        };
        if !parent.is_empty() {
            dir.create_dir_all(parent)
                .map_err(|e| Refusal::Io(format!("creating the folder {parent}: {e}")))?;
            // A folder created meanwhile by someone else as a symlink is refused here.
            self.no_symlink_on_the_way(dir, path)?;
        }
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let beside = format!(
            "{}.{name}.{}-{n}.skills-mcp-editor.tmp",
            if parent.is_empty() {
                String::new()
            } else {
                format!("{parent}/")
            },
            std::process::id()
        );
        let written = (|| -> std::io::Result<()> {
            let mut options = cap_std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            let mut file = dir.open_with(&beside, &options)?;
            if let Some(permissions) = mode {
                file.set_permissions(permissions)?;
            }
            file.write_all(bytes)?;
            file.sync_all()?;
            drop(file);
            dir.rename(&beside, dir, path)
        })();
        if let Err(e) = written {
            let _ = dir.remove_file(&beside);
            return Err(Refusal::Io(format!("writing {path}: {e}")));
        }
        Ok(digest(bytes))
    }

    /// Refuse a path any of whose folders is a symlink (cap-std would keep it inside the root;
    /// the editor does not follow one at all, as the index build does not).
    fn no_symlink_on_the_way(&self, dir: &Dir, path: &str) -> Result<(), Refusal> {
        let mut prefix = String::new();
        for part in path.split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            match dir.symlink_metadata(&prefix) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(Refusal::Forbidden(format!(
                        "{prefix} is a symlink; the editor does not follow symlinks"
                    )));
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(Refusal::Io(format!("{prefix}: {e}"))),
            }
        }
        Ok(())
    }
}
