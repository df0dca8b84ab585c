//! Tests: protocol.
//!
//! The engine refuses misuse of the WIT index protocol instead of guessing (issue 14), through
//! the real component and the raw calls a host makes: every call out of order, every file not
//! asked for and every bad listing entry is `invalid-argument` naming it; a query before
//! `finish` is `not-ready`; a failing `files.read` costs that call only. No refusal poisons
//! the instance.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use skills_mcp::runtime::{
    EngineConfig, EngineError, EngineErrorKind, Entry, EntryKind, FileData, FileSource, Guest,
    IndexHandle, Runtime, Severity,
};

use crate::common::{catalog, options, tree};

const SKILL_A: &str = "---\nname: a\ndescription: Alpha tools for testing\n---\nAlpha body.\n";
const SKILL_B: &str = "---\nname: b\ndescription: Beta tools\n---\nBeta body.\n";

/// Serves `a/SKILL.md` and `b/SKILL.md` of root 0; fails the next read when armed.
#[derive(Default)]
struct Files {
    fail_next: AtomicBool,
}

impl FileSource for Files {
    fn read(&self, root: u32, path: &str) -> Result<Vec<u8>, String> {
        if self.fail_next.swap(false, Ordering::SeqCst) {
            return Err(format!("{path}: the disk is on fire"));
        }
        match (root, path) {
            (0, "a/SKILL.md") => Ok(SKILL_A.into()),
            (0, "b/SKILL.md") => Ok(SKILL_B.into()),
            _ => Err(format!("{path}: no such file")),
        }
    }
}

fn file(path: &str, size: usize) -> Entry {
    Entry {
        path: path.into(),
        kind: EntryKind::File,
        size: size as u64,
    }
}

fn data(path: &str, text: &str) -> FileData {
    FileData {
        path: path.into(),
        bytes: text.as_bytes().to_vec(),
    }
}

fn listing() -> Vec<Entry> {
    vec![
        file("a/SKILL.md", SKILL_A.len()),
        file("b/SKILL.md", SKILL_B.len()),
    ]
}

/// A new engine instance over [`Files`] and a new index in it.
fn start() -> (Guest, IndexHandle, Arc<Files>) {
    let files = Arc::new(Files::default());
    let runtime = Runtime::new(options().runtime).expect("runtime");
    let mut guest = runtime.instantiate(files.clone()).expect("instantiate");
    let index = guest
        .new_index(&EngineConfig::default())
        .expect("new index");
    (guest, index, files)
}

/// `start`, with both skills added and the index finished.
fn finished() -> (Guest, IndexHandle, Arc<Files>) {
    let (mut g, i, files) = start();
    let wanted = g.add_root(i, "r", &listing()).expect("add-root");
    assert_eq!(wanted, vec!["a/SKILL.md", "b/SKILL.md"]);
    g.add_files(
        i,
        0,
        &[data("a/SKILL.md", SKILL_A), data("b/SKILL.md", SKILL_B)],
    )
    .expect("add-files");
    g.finish(i).expect("finish");
    (g, i, files)
}

/// The engine error kind of a failed call (not a trap).
fn kind<T: std::fmt::Debug>(r: anyhow::Result<T>) -> EngineErrorKind {
    let e = r.expect_err("the call is refused");
    e.downcast_ref::<EngineError>()
        .unwrap_or_else(|| panic!("not an engine error: {e:#}"))
        .0
        .clone()
}

/// The message of an `invalid-argument` refusal.
fn invalid<T: std::fmt::Debug>(r: anyhow::Result<T>) -> String {
    match kind(r) {
        EngineErrorKind::InvalidArgument(m) => m,
        other => panic!("expected invalid-argument, got {other:?}"),
    }
}

#[test]
fn add_root_after_finish_is_refused_and_the_index_stays_finished() {
    let (mut g, i, _) = finished();
    let before = (g.len(i).unwrap(), g.search(i, "alpha", 5).unwrap());
    assert_eq!(before.0, 2);

    let m = invalid(g.add_root(i, "late", &[file("c/SKILL.md", 10)]));
    assert!(m.contains("add-root") && m.contains("finished"), "{m}");
    let m = invalid(g.add_files(i, 0, &[data("a/SKILL.md", SKILL_A)]));
    assert!(m.contains("add-files") && m.contains("finished"), "{m}");
    let m = invalid(g.finish(i));
    assert!(m.contains("finish"), "{m}");

    // Still finished, unchanged, and the instance is fine.
    assert!(!g.is_poisoned());
    assert_eq!(
        (g.len(i).unwrap(), g.search(i, "alpha", 5).unwrap()),
        before
    );
    assert_eq!(g.reports(i).unwrap().len(), 2);
}

#[test]
fn queries_before_finish_are_not_ready() {
    let (mut g, i, _) = start();
    g.add_root(i, "r", &listing()).unwrap();
    assert_eq!(kind(g.len(i)), EngineErrorKind::NotReady);
    assert_eq!(kind(g.skills(i)), EngineErrorKind::NotReady);
    assert_eq!(kind(g.summaries(i, 0, 10)), EngineErrorKind::NotReady);
    assert_eq!(kind(g.suggest(i, "a", 3)), EngineErrorKind::NotReady);
    assert_eq!(kind(g.reports(i)), EngineErrorKind::NotReady);
    assert_eq!(kind(g.diagnostics(i)), EngineErrorKind::NotReady);
    assert_eq!(kind(g.search(i, "alpha", 3)), EngineErrorKind::NotReady);
    assert_eq!(kind(g.route(i, "alpha")), EngineErrorKind::NotReady);
    assert_eq!(kind(g.resolve(i, "a")), EngineErrorKind::NotReady);
    assert_eq!(kind(g.tree(i, None)), EngineErrorKind::NotReady);
    assert_eq!(kind(g.snapshot_sections(i)), EngineErrorKind::NotReady);
    // The build goes on.
    g.add_files(
        i,
        0,
        &[data("a/SKILL.md", SKILL_A), data("b/SKILL.md", SKILL_B)],
    )
    .unwrap();
    g.finish(i).unwrap();
    assert_eq!(g.len(i).unwrap(), 2);
}

#[test]
fn files_not_asked_for_and_unknown_roots_are_refused_naming_them() {
    let (mut g, i, _) = start();
    let m = invalid(g.add_files(i, 0, &[data("a/SKILL.md", SKILL_A)]));
    assert!(m.contains("no root 0"), "{m}");
    g.add_root(i, "team", &listing()).unwrap();
    let m = invalid(g.add_files(i, 7, &[data("a/SKILL.md", SKILL_A)]));
    assert!(m.contains("no root 7") && m.contains("1 root(s)"), "{m}");

    // One good file and one never asked for: the batch is refused whole, naming the culprit.
    let m = invalid(g.add_files(
        i,
        0,
        &[data("a/SKILL.md", SKILL_A), data("evil/SKILL.md", SKILL_B)],
    ));
    assert!(m.contains("`evil/SKILL.md`") && m.contains("`team`"), "{m}");
    assert!(!m.contains("`a/SKILL.md`"), "{m}");
    let m = invalid(g.add_files(
        i,
        0,
        &[data("a/SKILL.md", SKILL_A), data("a/SKILL.md", SKILL_A)],
    ));
    assert!(m.contains("twice in this batch"), "{m}");

    g.add_files(i, 0, &[data("a/SKILL.md", SKILL_A)]).unwrap();
    let m = invalid(g.add_files(i, 0, &[data("a/SKILL.md", SKILL_A)]));
    assert!(m.contains("already supplied"), "{m}");
    g.add_files(i, 0, &[data("b/SKILL.md", SKILL_B)]).unwrap();
    g.finish(i).unwrap();
    assert!(!g.is_poisoned());
    let paths: Vec<String> = g
        .skills(i)
        .unwrap()
        .into_iter()
        .map(|s| s.skill_path)
        .collect();
    assert_eq!(paths, vec!["a", "b"]);
}

#[test]
fn bad_listing_entries_are_refused_naming_them() {
    let (mut g, i, _) = start();
    for bad in [
        "../escape/SKILL.md",
        "/etc/SKILL.md",
        "a//SKILL.md",
        "x\\SKILL.md",
        "",
    ] {
        let mut entries = listing();
        entries.push(file(bad, 10));
        let m = invalid(g.add_root(i, "team", &entries));
        assert!(m.contains("add-root `team`"), "{m}");
        assert!(m.contains(&format!("{bad:?}")), "{m} should name {bad:?}");
    }
    let mut twice = listing();
    twice.push(file("a/SKILL.md", 3));
    let m = invalid(g.add_root(i, "team", &twice));
    assert!(m.contains("\"a/SKILL.md\" is listed twice"), "{m}");
    // Nothing was registered: the next good root is root 0 and the build works.
    g.add_root(i, "team", &listing()).unwrap();
    g.add_files(
        i,
        0,
        &[data("a/SKILL.md", SKILL_A), data("b/SKILL.md", SKILL_B)],
    )
    .unwrap();
    g.finish(i).unwrap();
    assert_eq!(g.get(i, "a").unwrap().root, 0);
    assert!(!g.is_poisoned());
}

#[test]
fn a_restore_in_progress_takes_no_build_call() {
    let (mut g, i, _) = finished();
    let count = g.snapshot_sections(i).unwrap();
    let sections: Vec<Vec<u8>> = (0..count)
        .map(|n| g.snapshot_section(i, n).unwrap())
        .collect();
    let j = g.new_index(&EngineConfig::default()).unwrap();
    g.restore_section(j, 0, count, &sections[0]).unwrap();
    let m = invalid(g.add_root(j, "r", &listing()));
    assert!(m.contains("snapshot is being restored"), "{m}");
    let m = invalid(g.finish(j));
    assert!(m.contains("snapshot is being restored"), "{m}");
    for (n, bytes) in sections.iter().enumerate().skip(1) {
        g.restore_section(j, n as u32, count, bytes).unwrap();
    }
    assert_eq!(g.skills(j).unwrap(), g.skills(i).unwrap());
    let m = invalid(g.add_root(j, "r", &listing()));
    assert!(m.contains("finished"), "{m}");
}

#[test]
fn a_failing_read_costs_that_call_only() {
    let (mut g, i, files) = finished();
    files.fail_next.store(true, Ordering::SeqCst);
    match kind(g.resolve(i, "a")) {
        EngineErrorKind::ReadFailed(m) => assert!(m.contains("the disk is on fire"), "{m}"),
        other => panic!("expected read-failed, got {other:?}"),
    }
    assert!(!g.is_poisoned());
    assert!(g.resolve(i, "a").unwrap().content.contains("Alpha body."));
    files.fail_next.store(true, Ordering::SeqCst);
    assert!(matches!(
        kind(g.extension_skill_md(i, "b")),
        EngineErrorKind::ReadFailed(_)
    ));
    // Build calls after the failed reads still get their reason, not a panic.
    let m = invalid(g.add_root(i, "late", &listing()));
    assert!(m.contains("finished"), "{m}");
    let served = g.extension_skill_md(i, "b").unwrap();
    assert_eq!(served.name, "b");
    assert!(
        String::from_utf8(served.bytes)
            .unwrap()
            .ends_with("Beta body.\n")
    );
    // A new index in the same instance builds normally.
    let j = g.new_index(&EngineConfig::default()).unwrap();
    g.add_root(j, "r", &listing()).unwrap();
    g.add_files(j, 0, &[data("b/SKILL.md", SKILL_B)]).unwrap();
    g.finish(j).unwrap();
    assert_eq!(g.len(j).unwrap(), 1);
}

/// The native host never hands the engine a listing it refuses: a file name the engine's path
/// rules do not allow (a backslash, legal on Unix) is skipped with a located warning, and the
/// rest of the root is served.
#[test]
fn the_host_walk_skips_names_the_engine_refuses() {
    let dir = tree(&[("ok/SKILL.md", SKILL_A), ("odd/we\\ird.md", "x")]);
    let c = catalog(&[dir.path()]);
    assert_eq!(c.get("ok").unwrap().skill_path, "ok");
    let reports = c.reports().unwrap();
    let odd = reports
        .iter()
        .find(|r| r.path == "odd")
        .unwrap_or_else(|| panic!("no report for odd/: {reports:?}"));
    assert_eq!(odd.worst, Some(Severity::Warning));
    assert!(
        odd.diagnostics[0].message.contains("backslash"),
        "{:?}",
        odd.diagnostics
    );
}
