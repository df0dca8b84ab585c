//! How a skill root is walked, written once for every host.
//!
//! A host lists folders and reads files; which entries a listing holds, in which order, how
//! deep it goes, where it stops, what is said about the entries left out, which paths a host
//! may open and how files travel in `add-files` batches are rules, and they live here. The
//! native server (`host/src/catalog/walk.rs`, through cap-std) and the stock-WASI command
//! (`cli-wasm/`, through `std::fs`) call [`walk`] with their own [`Folders`]; JavaScript hosts
//! (the package's `fromDirectory`, the browser editor) drive the same [`folder_step`] through
//! the WIT `walk-folder`, and read the numbers through `get-walk-policy`.
//!
//! The walk: each folder's entries together in byte order of their names, then its subfolders
//! depth-first in the same order; symlinks are listed and never entered; folders named in
//! [`WalkPolicy::skip_dir_names`] are left out silently; folders deeper than
//! [`WalkPolicy::max_depth`] are listed but not entered; the listing stops at
//! [`WalkPolicy::max_entries`]; a FIFO, socket or device is never opened (a FIFO would block)
//! and is reported; a name the engine cannot take as a path (a backslash, a leading drive
//! letter, not UTF-8) is reported and left out.

use crate::model::{
    ChildKind, Diagnostic, Entry, EntryKind, FileReport, FolderChild, FolderStep, Severity,
    WalkPolicy,
};

/// Folder names never entered.
pub const SKIP_DIR_NAMES: [&str; 2] = [".git", "node_modules"];
/// Deepest folder level entered below a root.
pub const MAX_DEPTH: u32 = 32;
/// Most entries listed in one root.
pub const MAX_ENTRIES: u32 = 200_000;
/// Largest skill file the engine reads.
pub const MAX_SKILL_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Most bytes of files in one `add-files` batch (the guest's memory stays small).
pub const MAX_BATCH_BYTES: u64 = 256 * 1024;
/// Most files in one `add-files` batch.
pub const MAX_BATCH_FILES: u32 = 256;

/// How hosts must walk a root.
pub fn walk_policy() -> WalkPolicy {
    WalkPolicy {
        skip_dir_names: SKIP_DIR_NAMES.iter().map(|s| s.to_string()).collect(),
        max_depth: MAX_DEPTH,
        max_entries: MAX_ENTRIES,
        max_skill_file_bytes: MAX_SKILL_FILE_BYTES,
        max_batch_bytes: MAX_BATCH_BYTES,
        max_batch_files: MAX_BATCH_FILES,
    }
}

/// One entry of a folder as a Rust host read it; `M` is the host's own data about a file
/// (e.g. its metadata for a cache fingerprint), handed back with the listed entry.
#[derive(Debug)]
pub struct Child<M> {
    /// The entry's name, or a printable form of a name that is not UTF-8.
    pub name: Result<String, String>,
    /// What it is, or why the host could not tell (a failed stat).
    pub kind: Result<ChildKind, String>,
    /// Bytes (files only).
    pub size: u64,
    pub meta: Option<M>,
}

/// What [`Folders::list`] answers: the folder's children, or why it cannot be listed.
pub type Listed<M> = Result<Vec<Result<Child<M>, String>>, String>;

/// A root's folders, as a host lists them.
pub trait Folders {
    /// The host's data about a listed file.
    type Meta;
    /// The entries of the folder `path` (`""`: the root), in any order: `Err` when the folder
    /// cannot be listed, an inner `Err` for an entry that cannot be read.
    fn list(&mut self, path: &str) -> Listed<Self::Meta>;
}

/// A root's listing.
#[derive(Debug)]
pub struct Listing<M> {
    /// Every listed entry in walk order, with the host's data about it.
    pub entries: Vec<(Entry, Option<M>)>,
    /// What was left out and why (host findings, merged into `validate`'s reports).
    pub findings: Vec<FileReport>,
    /// Whether something could not be looked at (a failed stat, the entry cap): a listing
    /// that is not the whole root.
    pub incomplete: bool,
}

/// A host finding about one file (or a whole root, with an empty path).
pub fn host_report(root: u32, path: &str, severity: Severity, message: String) -> FileReport {
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

/// Why a path read from a folder cannot be given to the engine, which refuses a listing with a
/// path that is not a clean `/`-separated relative path (a file name may hold a backslash on
/// Unix; a top-level name may look like a drive letter). `None`: it can.
pub fn unlistable(path: &str) -> Option<&'static str> {
    let b = path.as_bytes();
    if path.contains('\\') {
        Some("the name contains a backslash, which skill paths do not allow")
    } else if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        Some("the name starts like a drive letter (`c:`), which skill paths do not allow")
    } else {
        None
    }
}

/// Why a name given by a host is not one folder entry (empty, `.`, `..`, a `/` or a NUL in
/// it). `None`: it is. File systems never give such names; a JavaScript host might.
fn not_a_name(name: &str) -> Option<&'static str> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        Some("not a single folder entry name")
    } else {
        None
    }
}

/// Check a path a host is about to open below a root: a clean relative path (no `..`, no
/// leading `/`, no backslash, no drive letter, no empty or `.` segment), as every path of a
/// listing is. Hosts check it before opening anything, whoever asked.
pub fn check_read_path(path: &str) -> Result<(), String> {
    crate::paths::validate_relative(path)
        .map(|_| ())
        .map_err(|why| format!("refusing the path {:?}: {why}", crate::paths::echo(path)))
}

/// One folder of a walk: the folder `prefix` (`""`: the root), `depth` levels below the root,
/// whose children the host read in any order; `listed` entries of this root were listed
/// before it. Says which children are listed (in order), which folders to walk next (in
/// order, each before the next), what is reported, whether the entry cap stops the walk
/// (`stop`) and whether a folder was too deep to enter.
pub fn folder_step<M>(
    root: u32,
    prefix: &str,
    depth: u32,
    listed: usize,
    children: impl IntoIterator<Item = Result<Child<M>, String>>,
    policy: &WalkPolicy,
) -> Step<M> {
    let mut findings = Vec::new();
    let mut incomplete = false;
    let mut kept: Vec<(String, String, EntryKind, u64, Option<M>)> = Vec::new();
    for child in children {
        let child = match child {
            Ok(child) => child,
            Err(e) => {
                findings.push(host_report(
                    root,
                    prefix,
                    Severity::Warning,
                    format!("cannot read a folder entry: {e}"),
                ));
                continue;
            }
        };
        let name = match child.name {
            Ok(name) => name,
            Err(shown) => {
                findings.push(host_report(
                    root,
                    prefix,
                    Severity::Warning,
                    format!("skipped {shown}: the name is not UTF-8"),
                ));
                continue;
            }
        };
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if let Some(why) = not_a_name(&name).or_else(|| unlistable(&path)) {
            findings.push(host_report(
                root,
                prefix,
                Severity::Warning,
                format!("skipped {name:?}: {why}"),
            ));
            continue;
        }
        let kind = match child.kind {
            Ok(kind) => kind,
            Err(e) => {
                incomplete = true;
                findings.push(host_report(
                    root,
                    &path,
                    Severity::Warning,
                    format!("skipped: cannot stat: {e}"),
                ));
                continue;
            }
        };
        match kind {
            ChildKind::Symlink => kept.push((name, path, EntryKind::Symlink, 0, None)),
            ChildKind::Directory => {
                if !policy.skip_dir_names.contains(&name) {
                    kept.push((name, path, EntryKind::Directory, 0, None));
                }
            }
            ChildKind::File => kept.push((name, path, EntryKind::File, child.size, child.meta)),
            ChildKind::Special(what) => findings.push(host_report(
                root,
                &path,
                Severity::Warning,
                format!("skipped: {what} is not a regular file or a folder; it is never read"),
            )),
        }
    }
    kept.sort_by(|a, b| a.0.cmp(&b.0));
    let mut step = Step {
        entries: Vec::new(),
        enter: Vec::new(),
        findings,
        stop: false,
        too_deep: false,
        incomplete,
    };
    for (_, path, kind, size, meta) in kept {
        if listed + step.entries.len() >= policy.max_entries as usize {
            step.stop = true;
            break;
        }
        if kind == EntryKind::Directory {
            if depth < policy.max_depth {
                step.enter.push(path.clone());
            } else {
                step.too_deep = true;
            }
        }
        step.entries.push((Entry { path, kind, size }, meta));
    }
    step
}

/// [`folder_step`]'s answer (with the host's data about each listed file).
#[derive(Debug)]
pub struct Step<M> {
    pub entries: Vec<(Entry, Option<M>)>,
    pub enter: Vec<String>,
    pub findings: Vec<FileReport>,
    pub stop: bool,
    pub too_deep: bool,
    pub incomplete: bool,
}

/// [`folder_step`] for a host that knows each child's name and kind (the WIT `walk-folder`).
pub fn folder_step_of(
    root: u32,
    prefix: &str,
    depth: u32,
    listed: u32,
    children: Vec<FolderChild>,
    policy: &WalkPolicy,
) -> FolderStep {
    let children = children.into_iter().map(|c| {
        Ok(Child::<()> {
            name: Ok(c.name),
            kind: Ok(c.kind),
            size: c.size,
            meta: None,
        })
    });
    let step = folder_step(root, prefix, depth, listed as usize, children, policy);
    FolderStep {
        entries: step.entries.into_iter().map(|(e, _)| e).collect(),
        enter: step.enter,
        findings: step.findings,
        stop: step.stop,
        too_deep: step.too_deep,
    }
}

/// The findings that close a walk: the entry cap reached, folders too deep to enter.
pub fn closing_findings(
    root: u32,
    truncated: bool,
    too_deep: bool,
    policy: &WalkPolicy,
) -> Vec<FileReport> {
    let mut out = Vec::new();
    if truncated {
        out.push(host_report(
            root,
            "",
            Severity::Warning,
            format!(
                "listing stopped at {} entries; the rest of the root is skipped",
                policy.max_entries
            ),
        ));
    }
    if too_deep {
        out.push(host_report(
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

/// Walk root `root` through `folders`, as the module docs say.
pub fn walk<F: Folders>(folders: &mut F, root: u32, policy: &WalkPolicy) -> Listing<F::Meta> {
    let mut out = Listing {
        entries: Vec::new(),
        findings: Vec::new(),
        incomplete: false,
    };
    let (mut truncated, mut too_deep) = (false, false);
    // (a folder's path relative to the root, its depth)
    let mut stack: Vec<(String, u32)> = vec![(String::new(), 0)];
    while let Some((prefix, depth)) = stack.pop() {
        let children = match folders.list(&prefix) {
            Ok(children) => children,
            Err(e) => {
                out.findings.push(host_report(
                    root,
                    &prefix,
                    Severity::Error,
                    format!("cannot list this folder: {e}"),
                ));
                continue;
            }
        };
        let step = folder_step(root, &prefix, depth, out.entries.len(), children, policy);
        out.entries.extend(step.entries);
        out.findings.extend(step.findings);
        out.incomplete |= step.incomplete;
        too_deep |= step.too_deep;
        // Depth-first in name order: push in reverse so the first name is popped first.
        stack.extend(step.enter.into_iter().rev().map(|p| (p, depth + 1)));
        if step.stop {
            truncated = true;
            break;
        }
    }
    out.incomplete |= truncated;
    out.findings
        .extend(closing_findings(root, truncated, too_deep, policy));
    out
}

/// Split the files `wanted` (in the engine's order) into `add-files` batches of at most
/// `max_bytes` bytes (a larger file travels alone) and [`WalkPolicy::max_batch_files`] files;
/// a file for which `alone` holds travels in a batch of its own.
pub fn batches(
    wanted: &[String],
    size: impl Fn(&str) -> u64,
    alone: impl Fn(&str) -> bool,
    max_bytes: u64,
    policy: &WalkPolicy,
) -> Vec<Vec<String>> {
    let max_files = policy.max_batch_files.max(1) as usize;
    let mut batches = Vec::new();
    let mut current = Vec::new();
    let mut bytes = 0u64;
    for path in wanted {
        if alone(path) {
            batches.push(vec![path.clone()]);
            continue;
        }
        let size = size(path);
        if !current.is_empty() && (bytes + size > max_bytes || current.len() >= max_files) {
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

#[cfg(test)]
mod tests;
