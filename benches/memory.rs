//! Memory of the real binary on a corpus (issue 38): peak RSS of the stdio server restarting
//! from the index cache, of the one-shot CLI (`search --batch`), and of a refresh storm.
//!
//! ```text
//! cargo bench -p skills-mcp --bench memory                          # this build's binary
//! cargo bench -p skills-mcp --bench memory -- --bin /path/to/skills-mcp --reps 5
//! cargo bench -p skills-mcp --bench memory -- --corpus DIR --only storm
//! ```
//!
//! The corpus is `combined` (`../shared/corpora/combined`, or `$SKILLS_MCP_SHARED/corpora/…`),
//! else the bundled skills. Every run gets a fresh `HOME` and shares one compiled-engine cache
//! and one index cache (both written by a warm-up run first), as a user's sessions do.
//!
//! - **serve**: `skills-mcp --root C serve` over stdio: `initialize`, `tools/list`, one
//!   `search_skills` and one `get_skill`; then `VmHWM` (peak RSS) of `/proc/<pid>/status`, and
//!   the resident size of the engine's linear memory (the largest anonymous mapping).
//! - **cli**: `skills-mcp --root C search --batch` with the queries on stdin; its peak RSS is
//!   the `ru_maxrss` of `wait4`.
//! - **storm**: the server as in *serve*, then 50 `refresh_skills` calls written at once; `VmRSS`
//!   before the burst, two seconds after its last answer, and `VmHWM`; the wall time of the burst
//!   and the rebuilds it ran (`skills_mcp_index_build_duration_seconds_count` on `/metrics`).
//!
//! Medians over `--reps` runs (default 5; 1 in `--test` mode).

#[path = "support/mod.rs"]
mod support;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::server::Server;

const TIMEOUT: Duration = Duration::from_secs(120);
const STORM: u64 = 50;

struct Opts {
    bin: PathBuf,
    corpus: support::Corpus,
    reps: usize,
    only: Option<String>,
}

fn opts() -> Opts {
    let mut o = Opts {
        bin: PathBuf::from(env!("CARGO_BIN_EXE_skills-mcp")),
        corpus: support::combined().unwrap_or_else(support::bundled),
        reps: if support::test_mode() { 1 } else { 5 },
        only: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bin" => o.bin = args.next().expect("--bin PATH").into(),
            "--corpus" => {
                let root = PathBuf::from(args.next().expect("--corpus DIR"));
                o.corpus = support::Corpus {
                    name: root
                        .file_name()
                        .map_or("corpus".into(), |n| n.to_string_lossy().into_owned()),
                    root,
                };
            }
            "--reps" => o.reps = args.next().and_then(|n| n.parse().ok()).expect("--reps N"),
            "--only" => o.only = args.next(),
            _ => {}
        }
    }
    o.reps = o.reps.max(1);
    o
}

/// Fresh `HOME`s below one scratch folder, with the caches shared between runs.
struct Scratch {
    dir: PathBuf,
    runs: usize,
}

impl Scratch {
    fn new(bin: &Path) -> Self {
        // One scratch folder per binary: another build's caches are not this one's.
        let tag = format!("{:x}", {
            use std::hash::{Hash as _, Hasher as _};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            bin.hash(&mut h);
            std::fs::metadata(bin)
                .and_then(|m| m.modified())
                .ok()
                .hash(&mut h);
            h.finish()
        });
        let dir = support::scratch_dir().join(format!("memory-{tag}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("cache")).expect("scratch folder");
        Self { dir, runs: 0 }
    }

    /// The command with a fresh `HOME` and the shared caches.
    fn command(&mut self, bin: &Path) -> Command {
        self.runs += 1;
        let home = self.dir.join(format!("home-{}", self.runs));
        std::fs::create_dir_all(&home).expect("home");
        let mut cmd = Command::new(bin);
        cmd.current_dir(&home)
            .env("HOME", &home)
            .env("SKILLS_MCP_CACHE_DIR", self.dir.join("cache"))
            .env("SKILLS_MCP_INDEX_CACHE", "on")
            .env_remove("SKILLS_DIR")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("RUST_LOG");
        cmd
    }
}

/// The stdio server of `o` on its corpus, initialized.
fn spawn(o: &Opts, scratch: &mut Scratch, extra: &[&str]) -> Server {
    let mut cmd = scratch.command(&o.bin);
    cmd.arg("--root")
        .arg(&o.corpus.root)
        .arg("serve")
        .args(extra);
    let mut s = Server::spawn(cmd).expect("spawn skills-mcp");
    s.initialize("memory-bench", TIMEOUT)
        .unwrap_or_else(|e| panic!("{e}"));
    s
}

/// The answer to `id`.
fn answer(s: &Server, id: u64) -> Value {
    s.answer(id, TIMEOUT)
        .unwrap_or_else(|| panic!("no answer to {id}"))
}

/// A session's first requests: the tools, one search, one `get_skill`.
fn session(s: &mut Server, query: &str) {
    for (id, request) in [
        (
            2,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        ),
        (3, Server::call(3, "search_skills", json!({"query": query}))),
        (4, Server::call(4, "get_skill", json!({"context": query}))),
    ] {
        s.send(&[request]).expect("write");
        answer(s, id);
    }
}

/// The address of `--metrics-listen`, from the log.
fn metrics_addr(s: &Server) -> String {
    s.find_in_log(TIMEOUT, |line| {
        let rest = line.split("metrics on http://").nth(1)?;
        Some(rest.split('/').next().unwrap_or(rest).to_string())
    })
    .expect("a metrics line in the log")
}

/// `skills_mcp_index_build_duration_seconds_count` from `/metrics` at `addr`.
fn builds(addr: &str) -> f64 {
    let mut s = std::net::TcpStream::connect(addr).expect("connect to /metrics");
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut text = String::new();
    s.read_to_string(&mut text).expect("read /metrics");
    text.lines()
        .find_map(|l| l.strip_prefix("skills_mcp_index_build_duration_seconds_count "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(f64::NAN)
}

/// Peak RSS (kB) of the stdio server restarting from the caches, after a session, and its
/// engine's linear memory then ([`Server::guest_kb`]: the high-water mark of the engine's heap).
fn serve(o: &Opts, scratch: &mut Scratch, query: &str) -> (u64, u64) {
    let mut s = spawn(o, scratch, &[]);
    session(&mut s, query);
    let (_, hwm) = s.status_kb();
    let guest = s.guest_kb().unwrap_or(0);
    s.stop();
    (hwm, guest)
}

/// Peak RSS (kB) of `search --batch` over `queries`: `ru_maxrss` of the child.
fn cli(o: &Opts, scratch: &mut Scratch, queries: &[String]) -> u64 {
    support::search_batch_peak_rss_kb(scratch.command(&o.bin), &o.corpus.root, queries)
        .unwrap_or_else(|e| panic!("search --batch: {e}"))
}

/// One storm (see the module's documentation).
struct Storm {
    before_kb: u64,
    after_kb: u64,
    hwm_kb: u64,
    burst: Duration,
    rebuilds: f64,
}

fn storm(o: &Opts, scratch: &mut Scratch, query: &str) -> Storm {
    let mut s = spawn(o, scratch, &["--metrics-listen", "127.0.0.1:0"]);
    let metrics = metrics_addr(&s);
    session(&mut s, query);
    // Settled: what the allocator frees late is given back before "before" is read.
    std::thread::sleep(Duration::from_secs(2));
    let (before_kb, _) = s.status_kb();
    let built = builds(&metrics);
    let started = Instant::now();
    let calls: Vec<Value> = (100..100 + STORM)
        .map(|id| Server::call(id, "refresh_skills", json!({})))
        .collect();
    s.send(&calls).expect("write");
    let mut answered = 0;
    let deadline = Instant::now() + TIMEOUT;
    while answered < STORM {
        let line = s
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("the storm's answers");
        if let Ok(v) = serde_json::from_str::<Value>(&line)
            && v["id"].as_u64().is_some_and(|id| id >= 100)
        {
            assert_eq!(
                v["result"]["structuredContent"]["success"],
                json!(true),
                "{v}"
            );
            answered += 1;
        }
    }
    let burst = started.elapsed();
    std::thread::sleep(Duration::from_secs(2));
    let (after_kb, hwm_kb) = s.status_kb();
    let rebuilds = builds(&metrics) - built;
    s.stop();
    Storm {
        before_kb,
        after_kb,
        hwm_kb,
        burst,
        rebuilds,
    }
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn mb(kb: u64) -> String {
    format!("{:.1} MB", kb as f64 / 1024.0)
}

fn main() {
    let o = opts();
    let wanted = |mode: &str| o.only.as_deref().is_none_or(|m| m == mode);
    let mut scratch = Scratch::new(&o.bin);
    let queries = support::queries(&o.corpus);
    let query = queries.first().cloned().unwrap_or_else(|| "pdf".into());
    println!(
        "memory of {} on {} ({}), median of {} runs\n",
        o.bin.display(),
        o.corpus.name,
        o.corpus.root.display(),
        o.reps
    );
    // Warm-up: the compiled engine and the index cache are written once.
    serve(&o, &mut scratch, &query);
    println!("| process | peak RSS (VmHWM) |\n|---|---:|");
    if wanted("serve") {
        let (runs, guest): (Vec<u64>, Vec<u64>) =
            (0..o.reps).map(|_| serve(&o, &mut scratch, &query)).unzip();
        println!(
            "| stdio server, restarting from the index cache | {} |",
            mb(median(runs))
        );
        println!(
            "| of which the engine's linear memory (resident) | {} |",
            mb(median(guest))
        );
    }
    if wanted("cli") {
        let runs = (0..o.reps)
            .map(|_| cli(&o, &mut scratch, &queries))
            .collect();
        println!(
            "| `search --batch` ({} queries, from the index cache) | {} |",
            queries.len(),
            mb(median(runs))
        );
    }
    if wanted("storm") {
        let runs: Vec<Storm> = (0..o.reps.min(3))
            .map(|_| storm(&o, &mut scratch, &query))
            .collect();
        let pick = |f: fn(&Storm) -> u64| median(runs.iter().map(f).collect());
        println!(
            "\n| {STORM} pipelined `refresh_skills` | RSS before | RSS 2 s after the last answer | after / before | peak (VmHWM) | burst | rebuilds |\n|---|---:|---:|---:|---:|---:|---:|"
        );
        let (before, after) = (pick(|s| s.before_kb), pick(|s| s.after_kb));
        let burst = median(runs.iter().map(|s| s.burst.as_millis() as u64).collect());
        let rebuilds = runs.iter().map(|s| s.rebuilds).fold(0.0, f64::max);
        println!(
            "| median of {} | {} | {} | {:.2} | {} | {burst} ms | {rebuilds} at most |",
            runs.len(),
            mb(before),
            mb(after),
            after as f64 / before.max(1) as f64,
            mb(pick(|s| s.hwm_kb)),
        );
    }
    let _ = std::fs::remove_dir_all(&scratch.dir);
}
