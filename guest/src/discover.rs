//! Discovery: from a root's listing, which files are skill files, which skill owns which
//! file, and the compact listing kept for sizes, folder existence and manifests.
//!
//! Rules (both skill shapes share one tree):
//! - A folder holding `SKILL.md` is an Agent Skills folder. Case variants (`skill.md`,
//!   `Skill.md`) are accepted with a warning; when a folder has several, `SKILL.md` (else the
//!   first in byte order) is the skill file and the others are plain resources, with a
//!   warning. Every other file below the folder belongs to that skill, except the files of a
//!   nested folder holding its own `SKILL.md`, which is a skill of its own. A root-level
//!   `SKILL.md` makes the whole root one skill.
//! - Any other `*.md` file outside every skill folder is a hierarchical candidate
//!   and is read. Spec 4.1 also ignores the resource folders of hierarchical skills (`a/b.md`
//!   owns `a/b/`); whether `a/b.md` is a skill is only known once it is parsed, so that rule
//!   is applied by the index at `finish` (a candidate inside the resource folder of a valid
//!   hierarchical skill is a resource, with an info finding), never silently here. A
//!   candidate `x.md` next to an Agent Skills folder `x/` would define the same skill path:
//!   it is not read, with a warning.
//! - Files larger than the walk policy's `max_skill_file_bytes` are not read (warning with
//!   the size); symbolic links are never followed (info); entries below a skipped folder
//!   name (`.git`, `node_modules`) are dropped. A listing with an entry whose path is not a
//!   clean relative path, a path listed twice, or a path that is both a file and a folder is
//!   refused as a whole (the error names the entry): the host's walk is wrong. Hidden folders are NOT skipped (`.curated`, `.system`
//!   hold real skills).

use std::collections::{BTreeMap, HashSet};

use crate::bytes;
use crate::frontmatter::Note;
use crate::model::{Entry, EntryKind, Severity, WalkPolicy};
use crate::paths;

/// A root's listing, kept compactly: sorted files with sizes and owners, sorted folders, and
/// the Agent Skills folders.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Listing {
    files: Vec<(Box<str>, u64)>,
    /// Per file of `files`: the byte length of its innermost Agent Skills folder (a prefix
    /// of its path; `0` for the root), or [`NO_OWNER`].
    owners: Vec<u32>,
    dirs: Vec<Box<str>>,
    skill_folders: HashSet<Box<str>>,
}

/// No Agent Skills folder contains the file.
const NO_OWNER: u32 = u32::MAX;

/// Position of `path` in the sorted `files`.
fn find_file(files: &[(Box<str>, u64)], path: &str) -> Result<usize, usize> {
    files.binary_search_by(|(p, _)| bytes::cmp_str(p, path))
}

impl Listing {
    /// Size of a file, `None` when it is not a listed file.
    pub fn size(&self, path: &str) -> Option<u64> {
        find_file(&self.files, path).ok().map(|i| self.files[i].1)
    }

    /// Whether `path` is a folder (the root `""` always is).
    pub fn is_dir(&self, path: &str) -> bool {
        path.is_empty()
            || self
                .dirs
                .binary_search_by(|d| bytes::cmp_str(d, path))
                .is_ok()
    }

    /// The range of `files` strictly inside `dir`.
    fn range_under(&self, dir: &str) -> std::ops::Range<usize> {
        if dir.is_empty() {
            return 0..self.files.len();
        }
        // The paths inside `dir` are those starting with `dir/`: sorted, they follow every
        // path smaller than `dir/` and are contiguous.
        let inside = |p: &str| {
            p.len() > dir.len() && p.as_bytes()[dir.len()] == b'/' && bytes::starts_with(p, dir)
        };
        let below =
            |p: &str| match bytes::cmp(&p.as_bytes()[..p.len().min(dir.len())], dir.as_bytes()) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Greater => false,
                // `p` starts with `dir` (or is a prefix of it): below `dir/` when shorter than
                // it or when its next byte is below `/`.
                std::cmp::Ordering::Equal => p.len() <= dir.len() || p.as_bytes()[dir.len()] < b'/',
            };
        let start = self.files.partition_point(|(p, _)| below(p));
        let len = self.files[start..]
            .iter()
            .take_while(|(p, _)| inside(p))
            .count();
        start..start + len
    }

    /// Files strictly inside `dir`, sorted, with sizes.
    pub fn files_under<'a>(&'a self, dir: &str) -> impl Iterator<Item = (&'a str, u64)> + 'a {
        self.files[self.range_under(dir)]
            .iter()
            .map(|(p, s)| (&**p, *s))
    }

    /// Whether `folder` holds a skill file (`SKILL.md` or a case variant).
    pub fn is_skill_folder(&self, folder: &str) -> bool {
        self.skill_folders.contains(folder)
    }

    /// The innermost Agent Skills folder containing `path`, if any.
    pub fn owner<'a>(&self, path: &'a str) -> Option<&'a str> {
        match find_file(&self.files, path) {
            Ok(i) => {
                let n = self.owners[i];
                (n != NO_OWNER).then(|| &path[..n as usize])
            }
            Err(_) => paths::ancestors(path).find(|a| self.skill_folders.contains(*a)),
        }
    }

    /// The files of the Agent Skills folder `folder` that belong to it (nested skills' files
    /// excluded), except `skill_file`: relative to the folder, sorted, with sizes.
    pub fn folder_files(&self, folder: &str, skill_file: &str) -> Vec<(String, u64)> {
        self.folder_entries(folder, skill_file)
            .map(|(p, s)| (paths::strip_dir(p, folder).to_owned(), s))
            .collect()
    }

    /// [`Listing::folder_files`] as paths relative to the root, without copying them.
    pub fn folder_entries<'a>(
        &'a self,
        folder: &str,
        skill_file: &'a str,
    ) -> impl Iterator<Item = (&'a str, u64)> + 'a {
        let range = self.range_under(folder);
        let own = u32::try_from(folder.len()).unwrap_or(NO_OWNER);
        self.files[range.clone()]
            .iter()
            .zip(&self.owners[range])
            .filter(move |((p, _), o)| **o == own && !bytes::eq_str(p, skill_file))
            .map(|((p, s), _)| (&**p, *s))
    }

    /// Files inside `dir` that no Agent Skills folder owns, sorted, with sizes (the resource
    /// files of a hierarchical skill).
    pub fn unowned_files_under<'a>(
        &'a self,
        dir: &'a str,
    ) -> impl Iterator<Item = (&'a str, u64)> + 'a {
        let range = self.range_under(dir);
        self.files[range.clone()]
            .iter()
            .zip(&self.owners[range])
            .filter(|(_, o)| **o == NO_OWNER)
            .map(|((p, s), _)| (&**p, *s))
    }

    pub fn file_count(&self) -> usize {
        self.files.len()
    }
}

/// How a file to read will be interpreted.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Role {
    /// The `SKILL.md` of the Agent Skills folder `folder` (`""`: the root itself).
    Agent { folder: String },
    /// A hierarchical candidate.
    Hierarchical,
}

/// The outcome of [`discover`].
#[derive(Debug, Default)]
pub struct Discovery {
    pub listing: Listing,
    /// Files the host must read, sorted by path.
    pub to_read: Vec<(String, Role)>,
    /// Findings about examined files (including files not read), by path.
    pub notes: BTreeMap<String, Vec<Note>>,
}

/// Whether `f` holds for a `/`-separated segment of `path` (as `path.split('/').any(f)`).
fn any_segment(path: &str, f: impl Fn(&str) -> bool) -> bool {
    let mut rest = path;
    while let Some(i) = bytes::find(rest, b'/') {
        if f(&rest[..i]) {
            return true;
        }
        rest = &rest[i + 1..];
    }
    f(rest)
}

fn is_skill_file_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("skill.md")
}

/// Apply the discovery rules (module docs) to a root's listing.
///
/// A listing entry whose path is not a clean relative path, a path listed twice, or a path
/// listed both as a file and as a folder is refused: `Err` naming it (the host's walk is
/// wrong, and guessing would hide it).
pub fn discover(entries: Vec<Entry>, policy: &WalkPolicy) -> Result<Discovery, String> {
    let mut out = Discovery::default();
    let note = |out: &mut Discovery, path: &str, severity: Severity, message: String| {
        out.notes
            .entry(path.to_owned())
            .or_default()
            .push(Note::new(None, severity, message));
    };
    let skipped = |segment: &str| policy.skip_dir_names.iter().any(|s| s == segment);
    let mut files: Vec<(Box<str>, u64)> = Vec::new();
    let mut dirs: HashSet<Box<str>> = HashSet::new();
    for e in entries {
        if let Err(why) = paths::validate_relative(&e.path) {
            return Err(format!(
                "listing entry {:?} is not a clean relative path: {why}",
                e.path
            ));
        }
        let folders = match e.kind {
            EntryKind::Directory => e.path.as_str(),
            _ => paths::parent_dir(&e.path),
        };
        if !folders.is_empty() && any_segment(folders, skipped) {
            continue;
        }
        match e.kind {
            EntryKind::Symlink => note(
                &mut out,
                &e.path,
                Severity::Info,
                "symbolic link ignored: links are never followed".into(),
            ),
            EntryKind::Directory => {
                if is_skill_file_name(paths::file_name(&e.path)) {
                    note(
                        &mut out,
                        &e.path,
                        Severity::Warning,
                        "a folder named like a skill file: a skill file must be a regular file; it is not a skill".into(),
                    );
                }
                if !dirs.insert(e.path.clone().into_boxed_str()) {
                    return Err(format!("listing entry {:?} is listed twice", e.path));
                }
            }
            EntryKind::File => files.push((e.path.into_boxed_str(), e.size)),
        }
    }
    files.sort_unstable_by(|a, b| bytes::cmp_str(&a.0, &b.0).then(a.1.cmp(&b.1)));
    if let Some(w) = files.windows(2).find(|w| bytes::eq_str(&w[0].0, &w[1].0)) {
        return Err(format!("listing entry {:?} is listed twice", &*w[0].0));
    }
    if let Some((f, _)) = files.iter().find(|(f, _)| dirs.contains(&**f)) {
        return Err(format!(
            "listing entry {:?} is listed both as a file and as a folder",
            &**f
        ));
    }
    // Every folder holding a file is a folder (files of one folder are neighbours once sorted).
    let mut last_parent: Option<&str> = None;
    for (f, _) in &files {
        let parent = paths::parent_dir(f);
        if last_parent.is_some_and(|l| bytes::eq_str(l, parent)) {
            continue;
        }
        last_parent = Some(parent);
        let mut a = parent;
        while !a.is_empty() && !dirs.contains(a) {
            dirs.insert(a.into());
            a = paths::parent_dir(a);
        }
    }
    let mut dirs: Vec<Box<str>> = dirs.into_iter().collect();
    dirs.sort_unstable_by(|a, b| bytes::cmp_str(a, b));

    // Agent Skills folders and their skill files: (folder, file), by folder then file.
    let mut by_folder: Vec<(&str, &str)> = files
        .iter()
        .filter(|(f, _)| is_skill_file_name(paths::file_name(f)))
        .map(|(f, _)| (paths::parent_dir(f), &**f))
        .collect();
    // Stable: the files of one folder stay in path order.
    by_folder.sort_by(|a, b| bytes::cmp_str(a.0, b.0));
    let max = policy.max_skill_file_bytes;
    let size_of = |p: &str| find_file(&files, p).map(|i| files[i].1).unwrap_or(0);
    let mut skill_folders: HashSet<Box<str>> = HashSet::new();
    let mut groups = by_folder.as_slice();
    while let Some(&(folder, _)) = groups.first() {
        let n = groups
            .iter()
            .take_while(|(d, _)| bytes::eq_str(d, folder))
            .count();
        let candidates: Vec<&str> = groups[..n].iter().map(|(_, f)| *f).collect();
        groups = &groups[n..];
        let chosen = candidates
            .iter()
            .find(|c| paths::file_name(c) == "SKILL.md")
            .unwrap_or(&candidates[0]);
        for other in candidates.iter().filter(|c| *c != chosen) {
            note(
                &mut out,
                other,
                Severity::Warning,
                format!(
                    "not used as a skill file: its folder already has `{}`; it is served as a plain resource",
                    paths::file_name(chosen)
                ),
            );
        }
        if paths::file_name(chosen) != "SKILL.md" {
            note(
                &mut out,
                chosen,
                Severity::Warning,
                format!(
                    "the skill file is named `{}`; the Agent Skills format requires `SKILL.md` (accepted here, other clients may miss it)",
                    paths::file_name(chosen)
                ),
            );
        }
        skill_folders.insert(folder.into());
        let size = size_of(chosen);
        if size > max {
            note(
                &mut out,
                chosen,
                Severity::Warning,
                format!(
                    "the file is {size} bytes, over the limit of {max} bytes: not read, so its skill is skipped"
                ),
            );
        } else {
            out.to_read.push((
                (*chosen).to_owned(),
                Role::Agent {
                    folder: (*folder).to_owned(),
                },
            ));
        }
    }

    // The owner of every file: its innermost Agent Skills folder (the same for the files of
    // one folder, neighbours once sorted).
    let mut owners: Vec<u32> = Vec::with_capacity(files.len());
    let mut last: Option<(&str, u32)> = None;
    for (f, _) in &files {
        let parent = paths::parent_dir(f);
        let owner = match last {
            Some((l, o)) if bytes::eq_str(l, parent) => o,
            _ => {
                let o = paths::ancestors(f)
                    .find(|a| skill_folders.contains(*a))
                    .map_or(NO_OWNER, |a| u32::try_from(a.len()).unwrap_or(NO_OWNER));
                last = Some((parent, o));
                o
            }
        };
        owners.push(owner);
    }

    // Hierarchical candidates.
    let md: Vec<(&str, u64)> = files
        .iter()
        .zip(&owners)
        .filter(|((f, _), o)| {
            **o == NO_OWNER && f.ends_with(".md") && !is_skill_file_name(paths::file_name(f))
        })
        .map(|((f, s), _)| (&**f, *s))
        .collect();
    for (f, size) in md {
        let stem = paths::resource_dir_of_md(f);
        if skill_folders.contains(stem) {
            note(
                &mut out,
                f,
                Severity::Warning,
                format!(
                    "not read: the skill path `{stem}` is already defined by the Agent Skills folder `{stem}/`"
                ),
            );
            continue;
        }
        if size > max {
            note(
                &mut out,
                f,
                Severity::Warning,
                format!("the file is {size} bytes, over the limit of {max} bytes: not read"),
            );
            continue;
        }
        out.to_read.push((f.to_owned(), Role::Hierarchical));
    }
    out.to_read.sort();
    out.listing = Listing {
        files,
        owners,
        dirs,
        skill_folders,
    };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, size: u64) -> Entry {
        Entry {
            path: path.into(),
            kind: EntryKind::File,
            size,
        }
    }

    fn policy() -> WalkPolicy {
        crate::index::walk_policy()
    }

    fn read_list(d: &Discovery) -> Vec<(&str, bool)> {
        d.to_read
            .iter()
            .map(|(p, r)| (p.as_str(), matches!(r, Role::Agent { .. })))
            .collect()
    }

    #[test]
    fn any_segment_is_split_any() {
        for p in [
            "",
            "a",
            "a/b",
            "/a",
            "a/",
            "a//b",
            ".git",
            "x/.git/y",
            "x/.gitx",
            "node_modules",
        ] {
            let f = |s: &str| s.is_empty() || s == ".git" || s == "node_modules";
            assert_eq!(any_segment(p, f), p.split('/').any(f), "{p}");
            let g = |s: &str| s == "b";
            assert_eq!(any_segment(p, g), p.split('/').any(g), "{p}");
        }
    }

    #[test]
    fn both_shapes_nested_skills_and_hidden_folders() {
        let d = discover(
            vec![
                file("_root.md", 10),
                file("README.md", 10),
                file("ui/_index.md", 10),
                file("ui/react/auth.md", 10),
                file("ui/react/auth/assets/AuthProvider.tsx", 100),
                file("ui/react/auth/notes.md", 10),
                file("tools/pdf/SKILL.md", 10),
                file("tools/pdf/reference.md", 10),
                file("tools/pdf/scripts/fill.py", 50),
                file("tools/pdf/forms/SKILL.md", 10),
                file("tools/pdf/forms/guide.md", 10),
                file(".curated/x/SKILL.md", 10),
                file(".system/y/skill.md", 10),
                file(".git/HEAD.md", 10),
                file("node_modules/pkg/README.md", 10),
                Entry {
                    path: "link.md".into(),
                    kind: EntryKind::Symlink,
                    size: 0,
                },
            ],
            &policy(),
        )
        .expect("a valid listing");
        assert_eq!(
            read_list(&d),
            vec![
                (".curated/x/SKILL.md", true),
                (".system/y/skill.md", true),
                ("README.md", false),
                ("_root.md", false),
                ("tools/pdf/SKILL.md", true),
                ("tools/pdf/forms/SKILL.md", true),
                ("ui/_index.md", false),
                ("ui/react/auth.md", false),
                ("ui/react/auth/notes.md", false),
            ]
        );
        let l = &d.listing;
        assert_eq!(l.owner("tools/pdf/forms/guide.md"), Some("tools/pdf/forms"));
        assert_eq!(l.owner("tools/pdf/reference.md"), Some("tools/pdf"));
        assert_eq!(l.owner("ui/react/auth.md"), None);
        assert_eq!(
            l.folder_files("tools/pdf", "tools/pdf/SKILL.md"),
            vec![
                ("reference.md".to_string(), 10),
                ("scripts/fill.py".to_string(), 50)
            ]
        );
        assert!(l.is_dir("ui/react/auth"));
        assert!(l.is_dir("ui/react/auth/assets"));
        assert!(!l.is_dir("ui/react/auth/assets/AuthProvider.tsx"));
        assert_eq!(l.size("ui/react/auth/assets/AuthProvider.tsx"), Some(100));
        assert_eq!(l.size("nope"), None);
        assert!(
            d.notes[".system/y/skill.md"][0]
                .message
                .contains("requires `SKILL.md`")
        );
        assert_eq!(d.notes["link.md"][0].severity, Severity::Info);
        assert!(!d.notes.contains_key(".git/HEAD.md"));
    }

    #[test]
    fn size_limit_conflicts_and_case_variants() {
        let max = policy().max_skill_file_bytes;
        let d = discover(
            vec![
                file("big/SKILL.md", max + 1),
                file("big/notes.md", 1),
                file("huge.md", max + 5),
                file("dup/SKILL.md", 1),
                file("dup/skill.md", 1),
                file("x.md", 1),
                file("x/SKILL.md", 1),
            ],
            &policy(),
        )
        .expect("a valid listing");
        assert_eq!(
            read_list(&d),
            vec![("dup/SKILL.md", true), ("x/SKILL.md", true)]
        );
        assert!(
            d.notes["big/SKILL.md"][0]
                .message
                .contains(&format!("{} bytes", max + 1))
        );
        assert!(d.notes["huge.md"][0].message.contains("over the limit"));
        assert!(
            d.notes["dup/skill.md"][0]
                .message
                .contains("plain resource")
        );
        assert!(d.notes["x.md"][0].message.contains("already defined"));
        // The too-large skill still owns its folder.
        assert_eq!(d.listing.owner("big/notes.md"), Some("big"));
    }

    #[test]
    fn root_level_skill_owns_everything_but_nested_skills() {
        let d = discover(
            vec![
                file("SKILL.md", 1),
                file("docs/guide.md", 1),
                file("sub/SKILL.md", 1),
                file("sub/a.txt", 1),
            ],
            &policy(),
        )
        .expect("a valid listing");
        assert_eq!(
            read_list(&d),
            vec![("SKILL.md", true), ("sub/SKILL.md", true)]
        );
        assert_eq!(
            d.listing.folder_files("", "SKILL.md"),
            vec![("docs/guide.md".to_string(), 1)]
        );
        assert_eq!(
            d.listing
                .files_under("")
                .map(|(p, _)| p)
                .collect::<Vec<_>>(),
            vec!["SKILL.md", "docs/guide.md", "sub/SKILL.md", "sub/a.txt"]
        );
    }

    #[test]
    fn directory_entries_mark_empty_resource_folders() {
        let d = discover(
            vec![
                file("a.md", 1),
                Entry {
                    path: "a".into(),
                    kind: EntryKind::Directory,
                    size: 0,
                },
                file("ab/x.md", 1),
            ],
            &policy(),
        )
        .expect("a valid listing");
        assert!(d.listing.is_dir("a"));
        assert!(d.listing.is_dir("ab"));
        assert!(!d.listing.is_dir("b"));
        assert_eq!(read_list(&d), vec![("a.md", false), ("ab/x.md", false)]);
        assert_eq!(d.listing.files_under("a").count(), 0);
    }

    #[test]
    fn a_folder_named_skill_md_is_reported() {
        let d = discover(
            vec![
                Entry {
                    path: "x/SKILL.md".into(),
                    kind: EntryKind::Directory,
                    size: 0,
                },
                file("x/SKILL.md/inner.txt", 1),
            ],
            &policy(),
        )
        .expect("a valid listing");
        assert!(read_list(&d).iter().all(|(p, _)| *p != "x/SKILL.md"));
        let notes = &d.notes["x/SKILL.md"];
        assert_eq!(notes[0].severity, Severity::Warning);
        assert!(
            notes[0].message.contains("must be a regular file"),
            "{notes:?}"
        );
    }

    /// Issue 14: a bad listing entry is refused, naming it, instead of being dropped.
    #[test]
    fn bad_listing_entries_are_refused_naming_them() {
        let dir = |p: &str| Entry {
            path: p.into(),
            kind: EntryKind::Directory,
            size: 0,
        };
        let cases: Vec<(Vec<Entry>, &str, &str)> = vec![
            (
                vec![file("a/SKILL.md", 1), file("../escape.md", 1)],
                "\"../escape.md\"",
                "traversal",
            ),
            (vec![file("/abs.md", 1)], "\"/abs.md\"", "relative"),
            (vec![file("a\\b.md", 1)], "a\\\\b.md", "backslash"),
            (vec![file("a//b.md", 1)], "\"a//b.md\"", "empty"),
            (vec![file("", 1)], "\"\"", "empty"),
            (vec![file("./a.md", 1)], "\"./a.md\"", ""),
            (
                vec![file("a.md", 1), file("a.md", 2)],
                "\"a.md\" is listed twice",
                "",
            ),
            (vec![dir("d"), dir("d")], "\"d\" is listed twice", ""),
            (
                vec![dir("d"), file("d", 3)],
                "\"d\" is listed both as a file and as a folder",
                "",
            ),
            // Checked even below a folder the walk policy skips.
            (vec![file(".git/../x.md", 1)], "\".git/../x.md\"", ""),
        ];
        for (entries, names, why) in cases {
            let err = discover(entries, &policy()).expect_err(names);
            assert!(err.contains(names), "{err} should name {names}");
            assert!(err.contains(why), "{err} should say {why}");
        }
    }
}
