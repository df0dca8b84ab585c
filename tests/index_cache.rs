//! Tests: index cache.
//!
//! The on-disk index cache through the real component and the real binary: a second open of
//! unchanged roots restores the very same index; any change to the roots (content, size, time,
//! an added or removed file), a damaged cache file or fresh files mean a build, and the catalog
//! always serves.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use skills_mcp::catalog::{Catalog, RootSpec};
use tempfile::TempDir;

use crate::common::{
    agent_skill_md, bin, bundled_skills, fixtures, options, sample_tree, stdout, write_files,
};

/// Copy the tree `from` into `to` (files and folders; symlinks as symlinks).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let t = e.file_type().unwrap();
        if t.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if t.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Every file below `dir` modified at `when` (so a build may be cached: files changed within
/// seconds of the walk never are).
fn set_mtimes(dir: &Path, when: SystemTime) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        if t.is_dir() {
            set_mtimes(&e.path(), when);
        } else if t.is_file() {
            let f = std::fs::File::options()
                .append(true)
                .open(e.path())
                .unwrap();
            f.set_modified(when).unwrap();
        }
    }
}

fn an_hour_ago() -> SystemTime {
    SystemTime::now() - Duration::from_secs(3600)
}

/// Three roots (the sample tree, the synthetic traps, the bundled skills), copied and settled.
fn roots() -> TempDir {
    let dir = TempDir::new().unwrap();
    copy_tree(sample_tree().path(), &dir.path().join("sample"));
    copy_tree(&fixtures().join("synthetic"), &dir.path().join("synthetic"));
    copy_tree(&bundled_skills(), &dir.path().join("bundled"));
    set_mtimes(dir.path(), an_hour_ago());
    dir
}

fn specs(dir: &Path) -> Vec<RootSpec> {
    ["sample", "synthetic", "bundled"]
        .iter()
        .map(|r| RootSpec::new(dir.join(r)))
        .collect()
}

fn open(roots: &[RootSpec], cache: &Path) -> Catalog {
    let mut o = options();
    o.index_cache = Some(cache.to_owned());
    Catalog::open(roots.to_vec(), o).expect("open the catalog")
}

/// The cache files in `cache`.
fn snaps(cache: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "snap"));
    v
}

/// What a client can ask of `c`, as text: listings, findings, every skill's content, manifest
/// and files, and searches, explanations and routes.
fn observe(c: &Catalog) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut put = |what: &str, v: &dyn std::fmt::Debug| writeln!(out, "{what}: {v:?}").unwrap();
    put("skills", &c.skills().unwrap());
    put("reports", &c.reports().unwrap());
    put("diagnostics", &c.diagnostics().unwrap());
    put("tree", &c.tree(None).unwrap());
    put("list", &c.list_json(None).unwrap());
    put("extension", &c.extension_skills().unwrap());
    let skills = c.skills().unwrap();
    for s in &skills {
        put("resolve", &c.resolve(&s.skill_path));
        put("skill_md", &c.extension_skill_md(&s.skill_path));
        let manifest = c.manifest(&s.skill_path);
        for f in manifest.iter().flatten() {
            put("asset", &c.locate_asset(&s.skill_path, &f.relative));
        }
        put("manifest", &manifest);
    }
    let queries = skills
        .iter()
        .flat_map(|s| [s.name.clone(), s.description.clone()])
        .chain([
            "react login".into(),
            "extract pdf tables".into(),
            "weather".into(),
        ]);
    for q in queries {
        let hits = c.search(&q, 10);
        put("search", &hits);
        put("route", &c.route(&q));
        if let Some(best) = hits.ok().and_then(|h| h.into_iter().next()) {
            put("explain", &c.explain(&q, &best.skill_path));
        }
    }
    out
}

#[test]
fn a_second_open_restores_the_same_index_from_the_cache() {
    let dir = roots();
    let cache = TempDir::new().unwrap();
    let roots = specs(dir.path());
    let built = open(&roots, cache.path());
    assert!(!built.stats().from_cache);
    assert!(built.stats().files_read > 20, "{:?}", built.stats());
    assert_eq!(snaps(cache.path()).len(), 1, "the build was cached");
    let restored = open(&roots, cache.path());
    let stats = restored.stats();
    assert!(stats.from_cache, "{stats:?}");
    assert_eq!((stats.files_read, stats.bytes_read), (0, 0));
    assert_eq!(stats.skills, built.stats().skills);
    assert_eq!(stats.entries, built.stats().entries);
    assert!(
        observe(&built) == observe(&restored),
        "the restored index differs"
    );
    // Without a cache folder every open builds.
    let uncached = Catalog::open(roots.clone(), options()).unwrap();
    assert!(!uncached.stats().from_cache);
    assert!(observe(&uncached) == observe(&restored));
    // A rebuild of unchanged roots (a watcher's spurious event) restores too.
    assert!(restored.rebuild().unwrap().from_cache);
    // Another set of roots (fewer, or in another order: precedence changes) has its own file.
    let two = open(&roots[..2], cache.path());
    let swapped = open(&[roots[1].clone(), roots[0].clone()], cache.path());
    assert!(!two.stats().from_cache && !swapped.stats().from_cache);
    assert_eq!(snaps(cache.path()).len(), 3);
    assert!(open(&roots[..2], cache.path()).stats().from_cache);
}

#[test]
fn any_change_to_the_roots_rebuilds() {
    let dir = roots();
    let cache = TempDir::new().unwrap();
    let roots = specs(dir.path());
    open(&roots, cache.path());
    let file = dir.path().join("sample/tools/pdf/SKILL.md");
    let original = std::fs::read_to_string(&file).unwrap();
    let old = std::fs::metadata(&file).unwrap().modified().unwrap();
    // Each change leaves the files it touches an hour old (settled), so that only the
    // fingerprint, not the fresh-file rule, can notice it.
    let backdate = |p: &Path| {
        let f = std::fs::File::options().append(true).open(p).unwrap();
        f.set_modified(old).unwrap();
    };
    type Change<'a> = Box<dyn Fn() + 'a>;
    let cases: [(&str, Change, &str); 4] = [
        (
            // Same size, same modification time: the status-change time still differs.
            "same size and time",
            Box::new(|| {
                let changed = original.replace("Extract text", "Extract TEXT");
                assert_eq!(changed.len(), original.len());
                std::fs::write(&file, changed).unwrap();
                backdate(&file);
            }),
            "Extract TEXT and tables from PDF files",
        ),
        (
            "another size",
            Box::new(|| {
                std::fs::write(&file, original.replace("Extract text", "Extract all text"))
                    .unwrap();
                backdate(&file);
            }),
            "Extract all text and tables from PDF files",
        ),
        (
            "an added skill",
            Box::new(|| {
                let sample = dir.path().join("sample");
                write_files(
                    &sample,
                    &[(
                        "tools/csv/SKILL.md",
                        &agent_skill_md("csv", "Read CSV files", "x"),
                    )],
                );
                backdate(&sample.join("tools/csv/SKILL.md"));
            }),
            "Extract all text and tables from PDF files",
        ),
        (
            "a removed skill",
            Box::new(|| std::fs::remove_dir_all(dir.path().join("sample/tools/csv")).unwrap()),
            "Extract all text and tables from PDF files",
        ),
    ];
    for (what, change, description) in cases {
        change();
        let c = open(&roots, cache.path());
        assert!(!c.stats().from_cache, "{what}: the stale cache was used");
        assert_eq!(c.get("pdf").unwrap().description, description, "{what}");
        assert_eq!(c.get("csv").is_ok(), what == "an added skill", "{what}");
        // The new build replaced the cache file.
        let again = open(&roots, cache.path());
        assert!(
            again.stats().from_cache,
            "{what}: the new build was not cached"
        );
        assert!(observe(&c) == observe(&again), "{what}");
        assert_eq!(snaps(cache.path()).len(), 1);
    }
}

#[test]
fn a_damaged_cache_file_is_rebuilt_and_the_catalog_serves() {
    let dir = roots();
    let cache = TempDir::new().unwrap();
    let roots = specs(dir.path());
    let expected = observe(&open(&roots, cache.path()));
    let snap = snaps(cache.path()).pop().unwrap();
    let good = std::fs::read(&snap).unwrap();
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    let mut bad_count = good.clone();
    bad_count[24 + 32] ^= 0x01;
    let damages: [(&str, Vec<u8>); 6] = [
        ("a flipped byte", flipped),
        ("cut in half", good[..good.len() / 2].to_vec()),
        ("cut in the header", good[..40].to_vec()),
        ("empty", Vec::new()),
        ("another number of sections", bad_count),
        ("garbage", b"not a cache file at all".repeat(100)),
    ];
    for (what, bytes) in damages {
        std::fs::write(&snap, &bytes).unwrap();
        let c = open(&roots, cache.path());
        assert!(
            !c.stats().from_cache,
            "{what}: restored from a damaged file"
        );
        assert!(observe(&c) == expected, "{what}: the rebuilt index differs");
        assert!(
            std::fs::read(&snap).unwrap() != bytes,
            "{what}: not rewritten"
        );
        assert!(open(&roots, cache.path()).stats().from_cache, "{what}");
    }
    // A cache folder that cannot be created: the catalog builds and serves.
    let blocked = cache.path().join("a-file");
    std::fs::write(&blocked, "x").unwrap();
    let c = open(&roots, &blocked.join("cache"));
    assert!(!c.stats().from_cache);
    assert!(observe(&c) == expected);
}

#[test]
fn files_changed_moments_ago_are_not_cached() {
    let dir = roots();
    let cache = TempDir::new().unwrap();
    let roots = specs(dir.path());
    // One file just written: its timestamp could hide a second write within its granularity.
    std::fs::write(dir.path().join("bundled/README-fresh.md"), "fresh\n").unwrap();
    let c = open(&roots, cache.path());
    assert!(!c.stats().from_cache);
    assert!(snaps(cache.path()).is_empty(), "a racy build was cached");
    set_mtimes(dir.path(), an_hour_ago());
    open(&roots, cache.path());
    assert_eq!(snaps(cache.path()).len(), 1);
}

/// The binary: `search` and `validate` answer the same from the cache, `serve` says it restored
/// and answers over stdio, and `SKILLS_MCP_INDEX_CACHE=off` writes nothing.
#[test]
fn the_binary_uses_the_index_cache() {
    let dir = roots();
    let cache = TempDir::new().unwrap();
    let root = dir.path().join("sample");
    let run = |args: &[&str], on: bool| {
        let mut cmd = bin();
        cmd.env("SKILLS_MCP_CACHE_DIR", cache.path())
            .env_remove("SKILLS_MCP_INDEX_CACHE")
            .args(["--no-default-roots", "--root"])
            .arg(&root)
            .args(args);
        if !on {
            cmd.env("SKILLS_MCP_INDEX_CACHE", "off");
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success() || args[0] == "validate", "{o:?}");
        stdout(&o)
    };
    let search = ["search", "--json", "react login"];
    let validate = ["validate"];
    let uncached = (run(&search, false), run(&validate, false));
    assert!(snaps(cache.path()).is_empty(), "off wrote a cache");
    let first = (run(&search, true), run(&validate, true));
    assert_eq!(snaps(cache.path()).len(), 1);
    let second = (run(&search, true), run(&validate, true));
    assert_eq!(uncached, first);
    assert_eq!(first, second);
    let hits: Value = serde_json::from_str(&second.0).unwrap();
    assert_eq!(hits["results"][0]["skill_path"], json!("ui/react/auth"));

    // serve over stdio, twice: the second start restores.
    let serve = |expect_cached: bool| {
        let mut cmd = bin();
        cmd.env("SKILLS_MCP_CACHE_DIR", cache.path())
            .env_remove("SKILLS_MCP_INDEX_CACHE")
            .args(["--no-default-roots", "--root"])
            .arg(&root)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        use std::io::{BufRead as _, Write as _};
        let requests = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "search_skills", "arguments": {"query": "react login"}}}),
        ];
        for r in requests {
            writeln!(stdin, "{r}").unwrap();
        }
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut answer = None;
        for line in lines.by_ref() {
            let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if v["id"] == json!(2) {
                answer = Some(v["result"].clone());
                break;
            }
        }
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            err.contains("(from the index cache)"),
            expect_cached,
            "stderr: {err}"
        );
        answer.expect("an answer to tools/call")
    };
    assert_eq!(serve(true), serve(true));
    std::fs::remove_file(snaps(cache.path()).pop().unwrap()).unwrap();
    let rebuilt = serve(false);
    assert_eq!(rebuilt, serve(true));
    assert!(rebuilt.to_string().contains("ui/react/auth"), "{rebuilt}");
}
