use std::collections::BTreeMap;

use super::*;

/// A root in memory: each folder's children, in the (unsorted) order a file system gives them.
#[derive(Default)]
struct Tree {
    folders: BTreeMap<String, Vec<Result<Child<u32>, String>>>,
    unlistable: Vec<String>,
    asked: Vec<String>,
}

fn file(name: &str, size: u64) -> Result<Child<u32>, String> {
    Ok(Child {
        name: Ok(name.into()),
        kind: Ok(ChildKind::File),
        size,
        meta: Some(size as u32),
    })
}

fn kind(name: &str, kind: ChildKind) -> Result<Child<u32>, String> {
    Ok(Child {
        name: Ok(name.into()),
        kind: Ok(kind),
        size: 0,
        meta: None,
    })
}

fn dir(name: &str) -> Result<Child<u32>, String> {
    kind(name, ChildKind::Directory)
}

impl Tree {
    fn with(mut self, folder: &str, children: Vec<Result<Child<u32>, String>>) -> Self {
        self.folders.insert(folder.into(), children);
        self
    }
}

impl Folders for Tree {
    type Meta = u32;
    fn list(&mut self, path: &str) -> Listed<u32> {
        self.asked.push(path.to_string());
        if self.unlistable.iter().any(|p| p == path) {
            return Err("permission denied".into());
        }
        Ok(std::mem::take(self.folders.get_mut(path).expect(path)))
    }
}

fn paths<M>(l: &Listing<M>) -> Vec<&str> {
    l.entries.iter().map(|(e, _)| e.path.as_str()).collect()
}

fn messages(findings: &[FileReport]) -> Vec<String> {
    findings
        .iter()
        .flat_map(|r| r.diagnostics.iter())
        .map(|d| format!("{}: {}", d.path, d.message))
        .collect()
}

#[test]
fn depth_first_in_byte_order_skipping_the_policy_names() {
    let mut tree = Tree::default()
        .with(
            "",
            vec![
                dir("b"),
                file("Z.md", 3),
                dir("node_modules"),
                dir("a"),
                dir(".git"),
                kind("link", ChildKind::Symlink),
            ],
        )
        .with("a", vec![file("SKILL.md", 10), dir("x")])
        .with("a/x", vec![file("y.md", 1)])
        .with("b", vec![file("SKILL.md", 20)]);
    let l = walk(&mut tree, 0, &walk_policy());
    assert_eq!(
        paths(&l),
        // A folder's entries together, then its subfolders, first name first.
        [
            "Z.md",
            "a",
            "b",
            "link",
            "a/SKILL.md",
            "a/x",
            "a/x/y.md",
            "b/SKILL.md",
        ]
    );
    // Skipped folders and symlinks are never listed.
    assert_eq!(tree.asked, ["", "a", "a/x", "b"]);
    assert!(l.findings.is_empty(), "{:?}", messages(&l.findings));
    assert!(!l.incomplete);
    // The host's data comes back with its file.
    let (e, meta) = &l.entries[4];
    assert_eq!(e.path, "a/SKILL.md");
    assert_eq!((e.kind, e.size, *meta), (EntryKind::File, 10, Some(10)));
}

#[test]
fn special_files_hostile_names_and_failures_are_reported_not_listed() {
    let mut tree = Tree::default()
        .with(
            "",
            vec![
                kind("pipe.md", ChildKind::Special("a FIFO (named pipe)".into())),
                file("a\\b.md", 1),
                dir("c:"),
                Err("i/o error".into()),
                Ok(Child {
                    name: Err("\"bad\\xFF\"".into()),
                    kind: Ok(ChildKind::File),
                    size: 1,
                    meta: None,
                }),
                Ok(Child {
                    name: Ok("gone.md".into()),
                    kind: Err("no such file".into()),
                    size: 0,
                    meta: None,
                }),
                dir("locked"),
                file("ok.md", 1),
            ],
        )
        .with("locked", vec![]);
    tree.unlistable.push("locked".into());
    let l = walk(&mut tree, 3, &walk_policy());
    assert_eq!(paths(&l), ["locked", "ok.md"]);
    assert_eq!(
        messages(&l.findings),
        [
            "pipe.md: skipped: a FIFO (named pipe) is not a regular file or a folder; it is never read",
            ": skipped \"a\\\\b.md\": the name contains a backslash, which skill paths do not allow",
            ": skipped \"c:\": the name starts like a drive letter (`c:`), which skill paths do not allow",
            ": cannot read a folder entry: i/o error",
            ": skipped \"bad\\xFF\": the name is not UTF-8",
            "gone.md: skipped: cannot stat: no such file",
            "locked: cannot list this folder: permission denied",
        ]
    );
    assert!(l.findings.iter().all(|r| r.root == 3));
    assert_eq!(l.findings.last().unwrap().worst, Some(Severity::Error));
    // A failed stat makes the listing incomplete (it is not cached as the whole root).
    assert!(l.incomplete);
}

#[test]
fn names_a_javascript_host_might_give_are_refused() {
    for name in ["", ".", "..", "a/b", "nul\0"] {
        let step = folder_step_of(
            0,
            "f",
            0,
            0,
            vec![FolderChild {
                name: name.into(),
                kind: ChildKind::File,
                size: 1,
            }],
            &walk_policy(),
        );
        assert!(step.entries.is_empty(), "{name:?}");
        assert!(
            messages(&step.findings)[0].contains("not a single folder entry name"),
            "{name:?}"
        );
    }
}

#[test]
fn depth_and_entry_limits_stop_the_walk_and_say_so() {
    let policy = WalkPolicy {
        max_depth: 1,
        ..walk_policy()
    };
    let mut tree = Tree::default()
        .with("", vec![dir("a")])
        .with("a", vec![dir("b"), file("f.md", 1)]);
    let l = walk(&mut tree, 0, &policy);
    assert_eq!(paths(&l), ["a", "a/b", "a/f.md"]);
    assert_eq!(tree.asked, ["", "a"], "a/b is listed, never entered");
    assert_eq!(
        messages(&l.findings),
        [": folders deeper than 1 levels were not entered"]
    );
    assert!(!l.incomplete);

    let policy = WalkPolicy {
        max_entries: 3,
        ..walk_policy()
    };
    let mut tree = Tree::default()
        .with("", vec![dir("a"), dir("b")])
        .with("a", vec![file("1.md", 1), file("2.md", 1)]);
    let l = walk(&mut tree, 0, &policy);
    assert_eq!(paths(&l), ["a", "b", "a/1.md"]);
    assert_eq!(tree.asked, ["", "a"], "the walk stops at the cap");
    assert_eq!(
        messages(&l.findings),
        [": listing stopped at 3 entries; the rest of the root is skipped"]
    );
    assert!(l.incomplete);
}

#[test]
fn the_wit_step_says_what_the_walk_does() {
    let children = vec![
        FolderChild {
            name: "z".into(),
            kind: ChildKind::Directory,
            size: 0,
        },
        FolderChild {
            name: "node_modules".into(),
            kind: ChildKind::Directory,
            size: 0,
        },
        FolderChild {
            name: "B.md".into(),
            kind: ChildKind::File,
            size: 7,
        },
        FolderChild {
            name: "sock".into(),
            kind: ChildKind::Special("a socket".into()),
            size: 0,
        },
    ];
    let step = folder_step_of(0, "top", 0, 0, children.clone(), &walk_policy());
    assert_eq!(
        step.entries,
        [
            Entry {
                path: "top/B.md".into(),
                kind: EntryKind::File,
                size: 7
            },
            Entry {
                path: "top/z".into(),
                kind: EntryKind::Directory,
                size: 0
            },
        ]
    );
    assert_eq!(step.enter, ["top/z"]);
    assert_eq!(
        messages(&step.findings),
        ["top/sock: skipped: a socket is not a regular file or a folder; it is never read"]
    );
    assert!(!step.stop && !step.too_deep);
    // `listed` counts toward the cap.
    let max = walk_policy().max_entries;
    let step = folder_step_of(0, "top", 0, max - 1, children, &walk_policy());
    assert_eq!(step.entries.len(), 1);
    assert!(step.stop);
}

#[test]
fn hosts_open_only_clean_relative_paths() {
    for ok in ["a.md", "a/b/SKILL.md", ".hidden/x"] {
        assert_eq!(check_read_path(ok), Ok(()), "{ok}");
    }
    for bad in [
        "",
        "/etc/passwd",
        "../secret",
        "a/../../b",
        "a\\..\\b",
        "c:/x",
        "a//b",
        "./a",
        "a\0b",
    ] {
        let e = check_read_path(bad).expect_err(bad);
        assert!(e.starts_with("refusing the path"), "{e}");
    }
}

#[test]
fn batches_are_bounded_in_bytes_and_files() {
    let policy = WalkPolicy {
        max_batch_files: 2,
        ..walk_policy()
    };
    let wanted: Vec<String> = ["a", "b", "c", "big", "d", "e"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let size = |p: &str| if p == "big" { 100 } else { 10 };
    let b = batches(&wanted, size, |p| p == "e", 25, &policy);
    // A file that travels alone goes at once; the open batch follows.
    assert_eq!(
        b,
        [vec!["a", "b"], vec!["c"], vec!["big"], vec!["e"], vec!["d"]]
    );
    // The policy's own numbers.
    let p = walk_policy();
    let wanted: Vec<String> = (0..600).map(|i| format!("{i}.md")).collect();
    let b = batches(&wanted, |_| 1, |_| false, p.max_batch_bytes, &p);
    assert_eq!(b.iter().map(Vec::len).collect::<Vec<_>>(), [256, 256, 88]);
}
