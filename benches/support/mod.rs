//! Shared by the benches: the corpora, the floor (a plain native walk + read), the native index
//! build and the queries.
//!
//! Corpora: `bundled` (the repository's `skills/`), `combined` (`../shared/corpora/combined`
//! next to the repository, or below `SKILLS_MCP_SHARED`; 2,621 real skills; skipped with a note when absent) and `gen10k`
//! (10,000 generated skills, written once to `target/bench-corpus/`; `SKILLS_MCP_BENCH_GEN_SKILLS`
//! changes the count).

// Each bench uses a different part of this module.
#![allow(dead_code)]

pub mod component;
pub mod gen_corpus;
pub mod server;

use std::fs;
use std::path::{Path, PathBuf};

use skills_engine::{Entry, EntryKind, FileData, Files, Index, RouteOutcome};

/// Seed of the generated corpus.
pub const GEN_SEED: u64 = 7;
/// Default number of generated skills.
pub const GEN_SKILLS: usize = 10_000;
/// Files handed to the engine per `add_files` call.
pub const BATCH: usize = 64;

/// A corpus to measure.
#[derive(Debug, Clone)]
pub struct Corpus {
    pub name: String,
    pub root: PathBuf,
}

/// The repository root (benches run with the package folder `host/` as working directory).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ has a parent")
        .to_path_buf()
}

/// The shared folder next to the repository (`../shared`: corpora, eval), or
/// `SKILLS_MCP_SHARED` when set (a worktree elsewhere).
pub fn shared_dir() -> PathBuf {
    std::env::var_os("SKILLS_MCP_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("../shared"))
}

/// Where generated corpora and bench scratch files go.
pub fn scratch_dir() -> PathBuf {
    workspace().join("target").join("bench-corpus")
}

pub fn bundled() -> Corpus {
    Corpus {
        name: "bundled".into(),
        root: workspace().join("skills"),
    }
}

/// The shared real corpus, when this checkout has it next to it.
pub fn combined() -> Option<Corpus> {
    let root = shared_dir().join("corpora/combined");
    if root.is_dir() {
        Some(Corpus {
            name: "combined".into(),
            root: root.canonicalize().unwrap_or(root),
        })
    } else {
        eprintln!(
            "note: {} is absent: skipping the benches on the combined corpus",
            root.display()
        );
        None
    }
}

/// The generated corpus (generated on first use).
pub fn generated() -> Corpus {
    let count = std::env::var("SKILLS_MCP_BENCH_GEN_SKILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(GEN_SKILLS);
    let root = gen_corpus::ensure_corpus(&scratch_dir(), count, GEN_SEED)
        .expect("generating the bench corpus");
    let name = if count.is_multiple_of(1000) {
        format!("gen{}k", count / 1000)
    } else {
        format!("gen{count}")
    };
    Corpus { name, root }
}

/// Every corpus available here: bundled, combined (when present), generated.
pub fn corpora() -> Vec<Corpus> {
    let mut v = vec![bundled()];
    v.extend(combined());
    v.push(generated());
    v
}

/// A root's listing as the engine wants it: every entry below `root` (symlinks not followed,
/// the policy's skipped folder names not entered), paths relative and `/`-separated, file
/// sizes from `stat`. A plain single-threaded `std::fs` walk.
pub fn walk(root: &Path) -> Vec<Entry> {
    let policy = skills_engine::walk_policy();
    let mut out = Vec::new();
    let mut stack: Vec<(PathBuf, String, u32)> = vec![(root.to_owned(), String::new(), 0)];
    while let Some((dir, rel, depth)) = stack.pop() {
        let Ok(rd) = fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            let path = if rel.is_empty() {
                name.to_owned()
            } else {
                format!("{rel}/{name}")
            };
            if ft.is_dir() {
                if policy.skip_dir_names.iter().any(|s| s == name) {
                    continue;
                }
                out.push(Entry {
                    path: path.clone(),
                    kind: EntryKind::Directory,
                    size: 0,
                });
                if depth < policy.max_depth {
                    stack.push((e.path(), path, depth + 1));
                }
            } else if ft.is_symlink() {
                out.push(Entry {
                    path,
                    kind: EntryKind::Symlink,
                    size: 0,
                });
            } else {
                let size = e.metadata().map(|m| m.len()).unwrap_or(0);
                out.push(Entry {
                    path,
                    kind: EntryKind::File,
                    size,
                });
            }
        }
    }
    out
}

/// The files the engine reads to index `root` (asked once, outside any timing).
pub fn files_to_read(corpus: &Corpus) -> Vec<String> {
    let mut index = Index::default();
    index
        .add_root(&corpus.name, walk(&corpus.root))
        .expect("a valid listing")
}

/// The floor: walk `root` (as [`walk`]) and read every file in `to_read`. Returns the bytes
/// read (so nothing is optimised away).
pub fn floor_walk_read(root: &Path, to_read: &[String]) -> u64 {
    let listing = walk(root);
    let mut bytes = listing.len() as u64;
    for p in to_read {
        if let Ok(b) = fs::read(root.join(p)) {
            bytes += b.len() as u64;
        }
    }
    bytes
}

/// Builds the index natively (the guest crate as a Rust library): walk, `add_root`, read the
/// files it asks for, `add_files` in batches of [`BATCH`], `finish`.
pub fn native_index(corpus: &Corpus) -> Index {
    let mut index = Index::default();
    let listing = walk(&corpus.root);
    let to_read = index
        .add_root(&corpus.name, listing)
        .expect("a valid listing");
    let mut batch = Vec::with_capacity(BATCH);
    for path in to_read {
        let bytes = fs::read(corpus.root.join(&path)).unwrap_or_default();
        batch.push(FileData { path, bytes });
        if batch.len() == BATCH {
            index
                .add_files(0, std::mem::take(&mut batch))
                .expect("the files asked for");
        }
    }
    if !batch.is_empty() {
        index.add_files(0, batch).expect("the files asked for");
    }
    index.finish().expect("finished once");
    index
}

/// Reads files for a native index (root ids in `add_root` order).
pub struct FsFiles(pub Vec<PathBuf>);

impl Files for FsFiles {
    fn read(&self, root: u32, path: &str) -> Result<Vec<u8>, String> {
        let base = self.0.get(root as usize).ok_or("no such root")?;
        fs::read(base.join(path)).map_err(|e| format!("{path}: {e}"))
    }
}

/// `get_skill` natively: route the request, resolve the best candidate. Returns the content
/// length (0 when nothing matched).
pub fn native_get_skill(index: &Index, files: &dyn Files, request: &str) -> usize {
    let best = match index.route(request).expect("route") {
        RouteOutcome::Matched(hit) => hit.skill_path,
        RouteOutcome::Ambiguous(hits) => match hits.into_iter().next() {
            Some(hit) => hit.skill_path,
            None => return 0,
        },
        RouteOutcome::NoMatch => return 0,
    };
    index
        .resolve(files, &best)
        .map(|r| r.content.len())
        .unwrap_or(0)
}

/// Short requests used on every corpus that has no query set of its own.
pub const BUILTIN_QUERIES: &[&str] = &[
    "react form validation",
    "jwt authentication api",
    "write a commit message",
    "postgres schema migration",
    "deploy kubernetes helm chart",
    "profile memory leak",
    "scan dependencies for cve",
    "generate pdf report",
    "accessibility of a button",
    "terraform aws lambda",
    "kafka stream consumer retry",
    "prompt evaluation dataset",
];

/// The queries for `corpus`: the `short` requests of `../shared/eval/dev_queries.json` for the
/// combined corpus, else [`BUILTIN_QUERIES`].
pub fn queries(corpus: &Corpus) -> Vec<String> {
    if corpus.name == "combined" {
        let v = dev_queries(&["short"]);
        if !v.is_empty() {
            return v;
        }
    }
    BUILTIN_QUERIES.iter().map(|q| (*q).to_owned()).collect()
}

/// The dev requests as `search --batch` gets them (`benches/support/dev_requests.py`): each
/// entry's `short` then `task` request, whitespace collapsed; empty when the file is absent.
pub fn dev_requests() -> Vec<String> {
    dev_queries(&["short", "task"])
        .into_iter()
        .map(|r| r.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The strings `fields` of each entry of `../shared/eval/dev_queries.json`, entry by entry in
/// file order; empty when the file is absent or unreadable.
pub fn dev_queries(fields: &[&str]) -> Vec<String> {
    let path = shared_dir().join("eval/dev_queries.json");
    let Ok(text) = fs::read_to_string(&path) else {
        return Vec::new();
    };
    let Ok(serde_json::Value::Array(items)) = serde_json::from_str(&text) else {
        return Vec::new();
    };
    items
        .iter()
        .flat_map(|q| fields.iter().filter_map(|&k| q.get(k)?.as_str()))
        .map(str::to_owned)
        .collect()
}

/// Whether the bench binary runs in criterion's test mode (`cargo bench -- --test`, or
/// `cargo test --benches`): each bench once, no measurement.
pub fn test_mode() -> bool {
    let args: Vec<String> = std::env::args().collect();
    let bench = args.iter().any(|a| a == "--bench");
    let test = args.iter().any(|a| a == "--test");
    test || !bench
}

/// Wait for `child` and return its peak resident set size in kB (`ru_maxrss` of `wait4`),
/// failing unless it exited with 0.
pub fn wait_peak_rss_kb(child: std::process::Child) -> Result<u64, String> {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: `rusage` is plain data (zeroed is a valid value); `wait4` fills it for our own
    // child, which `child` no longer waits for (it is forgotten, not dropped half-way).
    #[allow(unsafe_code)]
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let r = libc::wait4(pid, &mut status, 0, &mut usage);
        if r != pid {
            return Err(format!("wait4: {}", std::io::Error::last_os_error()));
        }
        usage
    };
    drop(child);
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(format!("exited with status {status:#x}"));
    }
    Ok(usage.ru_maxrss as u64)
}

/// Peak RSS (kB) of `skills-mcp --root ROOT search --batch` run by `cmd` (the binary, its
/// environment) over `queries` written to its stdin.
pub fn search_batch_peak_rss_kb(
    mut cmd: std::process::Command,
    root: &Path,
    queries: &[String],
) -> Result<u64, String> {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = cmd
        .arg("--root")
        .arg(root)
        .args(["search", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let text = queries.join("\n") + "\n";
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let peak = wait_peak_rss_kb(child);
    let _ = writer.join();
    peak
}
