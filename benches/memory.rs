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
//!   `search_skills` and one `get_skill`; then `VmHWM` (peak RSS) of `/proc/<pid>/status`.
//! - **cli**: `skills-mcp --root C search --batch` with the queries on stdin; its peak RSS is
//!   the `ru_maxrss` of `wait4`.
//! - **storm**: the server as in *serve*, then 50 `refresh_skills` calls written at once; `VmRSS`
//!   before the burst, two seconds after its last answer, and `VmHWM`; the wall time of the burst
//!   and the rebuilds it ran (`skills_mcp_index_build_duration_seconds_count` on `/metrics`).
//!
//! Medians over `--reps` runs (default 5; 1 in `--test` mode).

#[path = "support/mod.rs"]
mod support;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

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

/// `VmRSS` and `VmHWM` of `pid`, in kB.
fn status_kb(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// A running `skills-mcp serve` on stdio.
struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    log: mpsc::Receiver<String>,
}

impl Server {
    fn spawn(o: &Opts, scratch: &mut Scratch, extra: &[&str]) -> Self {
        let mut child = scratch
            .command(&o.bin)
            .arg("--root")
            .arg(&o.corpus.root)
            .arg("serve")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn skills-mcp");
        let lines = lines_of(child.stdout.take().expect("stdout"));
        let log = lines_of(child.stderr.take().expect("stderr"));
        let stdin = child.stdin.take().expect("stdin");
        let mut s = Self {
            child,
            stdin,
            lines,
            log,
        };
        s.send(&[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "memory-bench", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ]);
        s.answer(1);
        s
    }

    fn send(&mut self, messages: &[Value]) {
        let mut text = String::new();
        for m in messages {
            text.push_str(&m.to_string());
            text.push('\n');
        }
        self.stdin.write_all(text.as_bytes()).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// The answer to `id` (answers to other ids are dropped).
    fn answer(&self, id: u64) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let line = self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("no answer to {id}"));
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && v["id"] == json!(id)
            {
                return v;
            }
        }
    }

    fn call(id: u64, tool: &str, arguments: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}})
    }

    /// A session's first requests: the tools, one search, one `get_skill`.
    fn session(&mut self, query: &str) {
        self.send(&[json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})]);
        self.answer(2);
        self.send(&[Self::call(3, "search_skills", json!({"query": query}))]);
        self.answer(3);
        self.send(&[Self::call(4, "get_skill", json!({"context": query}))]);
        self.answer(4);
    }

    /// The address of `--metrics-listen`, from the log.
    fn metrics_addr(&self) -> String {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let line = self
                .log
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("a metrics line in the log");
            if let Some(rest) = line.split("metrics on http://").nth(1) {
                return rest.split('/').next().unwrap_or(rest).to_string();
            }
        }
    }

    fn stop(mut self) {
        drop(self.stdin);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lines_of(stream: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
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

/// Peak RSS (kB) of the stdio server restarting from the caches, after a session.
fn serve(o: &Opts, scratch: &mut Scratch, query: &str) -> u64 {
    let mut s = Server::spawn(o, scratch, &[]);
    s.session(query);
    let (_, hwm) = status_kb(s.child.id());
    s.stop();
    hwm
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
    let mut s = Server::spawn(o, scratch, &["--metrics-listen", "127.0.0.1:0"]);
    let metrics = s.metrics_addr();
    s.session(query);
    // Settled: what the allocator frees late is given back before "before" is read.
    std::thread::sleep(Duration::from_secs(2));
    let (before_kb, _) = status_kb(s.child.id());
    let built = builds(&metrics);
    let started = Instant::now();
    let calls: Vec<Value> = (100..100 + STORM)
        .map(|id| Server::call(id, "refresh_skills", json!({})))
        .collect();
    s.send(&calls);
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
    let (after_kb, hwm_kb) = status_kb(s.child.id());
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
        let runs = (0..o.reps)
            .map(|_| serve(&o, &mut scratch, &query))
            .collect();
        println!(
            "| stdio server, restarting from the index cache | {} |",
            mb(median(runs))
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
