//! Tests: runtime.
//!
//! The catalog through the real component: traps and recovery, memory limits, traversal
//! attempts, broken roots, symlinks, size limits and the atomic rebuild.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use skills_mcp::catalog::{Catalog, RootSpec};
use skills_mcp::runtime::{EngineError, EngineErrorKind, GuestTrap, RouteOutcome, Severity};

use crate::common::{catalog, options, sample_tree, skill_md, tree, write_files};

fn engine_error(e: &anyhow::Error) -> &EngineErrorKind {
    &e.downcast_ref::<EngineError>()
        .unwrap_or_else(|| panic!("not an engine error: {e:#}"))
        .0
}

#[test]
fn catalog_is_send_sync_and_clone() {
    fn assert_traits<T: Send + Sync + Clone + 'static>() {}
    assert_traits::<Catalog>();
}

#[test]
fn a_trap_fails_that_call_and_the_next_call_works() {
    let dir = sample_tree();
    let c = catalog(&[dir.path()]);
    let before = c.search("react auth", 5).expect("search");
    assert!(!before.is_empty());

    c.trap_next_call().expect("arm a trap");
    let err = c.search("react auth", 5).expect_err("the call traps");
    let trap = err
        .downcast_ref::<GuestTrap>()
        .unwrap_or_else(|| panic!("not a trap: {err:#}"));
    assert_eq!(trap.call, "index.search");
    let message = format!("{err:#}");
    assert!(message.contains("skills engine failed"), "{message}");
    assert!(message.contains("longer than"), "{message}");

    // The next call gets a fresh instance and an index rebuilt from the roots.
    let after = c.search("react auth", 5).expect("search after the trap");
    assert_eq!(before, after);
    assert_eq!(c.len().unwrap(), c.skills().unwrap().len() as u32);
}

#[test]
fn every_kind_of_call_recovers_after_a_trap() {
    let dir = sample_tree();
    let c = catalog(&[dir.path()]);
    for round in 0..3 {
        c.trap_next_call().unwrap();
        assert!(c.get("ui/react/auth").is_err(), "round {round}");
        assert_eq!(c.get("ui/react/auth").unwrap().skill_path, "ui/react/auth");
        c.trap_next_call().unwrap();
        assert!(c.resolve("ui/react/auth").is_err());
        assert!(
            c.resolve("ui/react/auth")
                .unwrap()
                .content
                .contains("Auth rules.")
        );
    }
}

#[test]
fn a_memory_limit_too_small_to_start_is_a_clear_error() {
    let dir = sample_tree();
    let mut opts = options();
    opts.runtime.memory_limit = 64 * 1024;
    let err = Catalog::open(vec![RootSpec::new(dir.path())], opts)
        .err()
        .expect("the engine cannot start in 64 KiB");
    let message = format!("{err:#}");
    assert!(message.contains("memory"), "{message}");
    // The process goes on: a normal catalog still opens.
    catalog(&[dir.path()]);
}

#[test]
fn a_file_that_exhausts_the_engine_is_left_out_and_reported() {
    // A frontmatter with a huge keyword list: parsing it needs far more memory than allowed.
    let mut huge = String::from("---\ndescription: Huge\nkeywords:\n");
    while huge.len() < 3 * 1024 * 1024 {
        huge.push_str("  - kw\n");
    }
    huge.push_str("---\nBody.\n");
    let dir = sample_tree();
    write_files(dir.path(), &[("huge.md", &huge)]);

    let mut opts = options();
    opts.runtime.memory_limit = 24 * 1024 * 1024;
    // One batch for everything: the build must isolate the culprit, then leave it out.
    opts.batch_bytes = 64 * 1024 * 1024;
    let c = Catalog::open(vec![RootSpec::new(dir.path())], opts).expect("open");
    assert_eq!(c.stats().files_excluded, 1, "{:?}", c.stats());
    let reports = c.reports().unwrap();
    let huge_report = reports
        .iter()
        .find(|r| r.path == "huge.md")
        .expect("a report for huge.md");
    assert_eq!(huge_report.worst, Some(Severity::Error));
    assert!(
        huge_report
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error && d.message.contains("ran out of memory")),
        "{huge_report:?}"
    );
    // The rest of the tree is served.
    assert_eq!(c.get("ui/react/auth").unwrap().skill_path, "ui/react/auth");
    assert!(c.get("huge").is_err());
}

#[test]
fn traversal_attempts_are_refused() {
    let dir = sample_tree();
    let c = catalog(&[dir.path()]);
    for bad in [
        "../../etc/passwd",
        "assets/../../../etc/passwd",
        "/etc/passwd",
        "assets\\base.tsx",
        "..\\..\\etc\\passwd",
        "assets/base.tsx\0",
        "assets//base.tsx",
        "",
    ] {
        let err = c
            .read_asset("ui/react/auth", bad, None)
            .expect_err("refused");
        assert!(
            matches!(engine_error(&err), EngineErrorKind::InvalidPath(_)),
            "{bad:?}: {err:#}"
        );
        assert!(matches!(
            engine_error(&c.locate_asset("ui/react/auth", bad).unwrap_err()),
            EngineErrorKind::InvalidPath(_)
        ));
    }
    // The host's own reads refuse them too, whatever the engine says.
    for bad in ["../x", "/etc/passwd", "a/../../x", "a\\b"] {
        assert!(c.read_file(0, bad, 1024).is_err(), "{bad:?}");
    }
}

#[test]
fn assets_resolve_with_inheritance_and_size_limits() {
    let dir = sample_tree();
    let c = catalog(&[dir.path()]);
    let own = c
        .read_asset("ui/react/auth", "assets/base.tsx", None)
        .unwrap();
    assert_eq!(own.bytes, b"export const AuthBase = 2;\n");
    assert_eq!(own.location.asset.from, None);

    let err = c
        .read_asset("ui/react/auth", "assets/base.tsx", Some(5))
        .unwrap_err();
    match engine_error(&err) {
        EngineErrorKind::TooLarge(size) => {
            assert_eq!(size.size, 27);
            assert_eq!(size.limit, 5);
        }
        other => panic!("{other:?}"),
    }
    assert!(format!("{err:#}").contains("27 bytes"), "{err:#}");
}

#[test]
fn a_declared_but_missing_asset_is_not_found() {
    let dir = tree(&[(
        "a.md",
        "---\ndescription: A\nkeywords: [a]\nassets:\n  - file: gone.txt\n    description: Gone\n---\nA.\n",
    )]);
    std::fs::create_dir(dir.path().join("a")).unwrap();
    let c = catalog(&[dir.path()]);
    let err = c.read_asset("a", "gone.txt", None).unwrap_err();
    assert!(
        matches!(engine_error(&err), EngineErrorKind::NotFound(_)),
        "{err:#}"
    );
}

#[test]
fn a_broken_root_is_reported_and_the_others_serve() {
    let good = sample_tree();
    let scratch = tempfile::tempdir().unwrap();
    let missing = scratch.path().join("missing");
    let not_a_dir = scratch.path().join("file");
    std::fs::write(&not_a_dir, "not a folder").unwrap();

    let c = Catalog::open(
        vec![
            RootSpec::new(&missing),
            RootSpec::new(good.path()),
            RootSpec::new(&not_a_dir),
        ],
        options(),
    )
    .expect("a broken root does not stop the catalog");
    let stats = c.stats();
    assert_eq!((stats.roots, stats.roots_ok), (3, 1));
    let reports = c.reports().unwrap();
    for root in [0, 2] {
        let r = reports
            .iter()
            .find(|r| r.root == root && r.path.is_empty())
            .unwrap_or_else(|| panic!("no report for root {root}: {reports:?}"));
        assert_eq!(r.worst, Some(Severity::Error));
        assert!(
            r.diagnostics[0]
                .message
                .contains("cannot open the skill root")
        );
    }
    assert_eq!(c.get("ui/react/auth").unwrap().root, 1);
    assert!(!c.search("react", 10).unwrap().is_empty());
}

#[test]
fn an_empty_root_answers_no_match() {
    let dir = tempfile::tempdir().unwrap();
    let c = catalog(&[dir.path()]);
    assert_eq!(c.len().unwrap(), 0);
    assert_eq!(
        c.route("react authentication").unwrap(),
        RouteOutcome::NoMatch
    );
}

#[cfg(unix)]
#[test]
fn symlinks_are_never_followed() {
    let outside = tree(&[
        (
            "secret.md",
            &skill_md("Secret outside", &["secret"], "Secret."),
        ),
        (
            "dir/other.md",
            &skill_md("Other outside", &["other"], "Other."),
        ),
    ]);
    let dir = sample_tree();
    std::os::unix::fs::symlink(
        outside.path().join("secret.md"),
        dir.path().join("linked.md"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path().join("dir"), dir.path().join("linkdir")).unwrap();
    let c = catalog(&[dir.path()]);
    let skills: Vec<String> = c
        .skills()
        .unwrap()
        .into_iter()
        .map(|s| s.skill_path)
        .collect();
    assert!(skills.contains(&"ui/react/auth".to_string()));
    assert!(
        !skills
            .iter()
            .any(|s| s.starts_with("linked") || s.starts_with("linkdir")),
        "{skills:?}"
    );
    // The host's reads refuse them too (a symlink, and a path escaping the root).
    assert!(c.read_file(0, "linked.md", 1024).is_err());
    assert!(c.read_file(0, "linkdir/other.md", 1024).is_err());
}

#[test]
fn rebuild_swaps_the_index_while_readers_keep_reading() {
    let dir = sample_tree();
    let c = catalog(&[dir.path()]);
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let c = c.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let hits = c.search("react auth", 5).expect("search during a rebuild");
                    assert!(!hits.is_empty());
                    n += 1;
                }
                n
            })
        })
        .collect();
    for i in 0..3 {
        write_files(
            dir.path(),
            &[(
                &format!("new/skill{i}.md"),
                &skill_md(&format!("New skill {i}"), &["fresh"], "New."),
            )],
        );
        let stats = c.rebuild().expect("rebuild");
        assert!(stats.skills >= 6 + i, "{stats:?}");
        assert_eq!(
            c.get(&format!("new/skill{i}")).unwrap().description,
            format!("New skill {i}")
        );
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().expect("reader thread") > 0);
    }
}
