//! Load on the HTTP transport (issue 15): N concurrent clients (1, 8, 64) calling `search_skills`
//! and `resources/read` on the real binary (`serve --http`, 2026-07-28 stateless POSTs, one
//! keep-alive connection per client) for a fixed count of requests each phase. Prints
//! requests/s, p50/p99 latency and the server's RSS after each phase and its peak (`VmHWM`).
//!
//! ```text
//! cargo bench -p skills-mcp --bench http_load               # 4,000 requests per phase
//! cargo bench -p skills-mcp --bench http_load -- --count 20000
//! cargo bench -p skills-mcp --bench http_load -- --test     # a few requests per phase (CI)
//! cargo bench -p skills-mcp --bench http_load -- --metrics  # with --metrics-listen on
//! ```
//!
//! Corpus: `../shared/corpora/combined` (2,621 real skills); the bundled `skills/` when it is
//! absent (with a note). Queries: the `short` requests of `../shared/eval/dev_queries.json`
//! when present, else a fixed list.

#[path = "support/mod.rs"]
mod support;

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const CLIENTS: [usize; 3] = [1, 8, 64];

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `VmRSS` and `VmHWM` of `pid`, in MiB.
fn rss(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn start(root: &std::path::Path, metrics: bool) -> Server {
    let config = support::scratch_dir().join("http_load.yaml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "server:\n  max_in_flight: 1024\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_skills-mcp"))
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--no-default-roots",
            "--root",
        ])
        .arg(root)
        .arg("--config")
        .arg(&config)
        .args(if metrics {
            &["--metrics-listen", "127.0.0.1:0"][..]
        } else {
            &[]
        })
        .env_remove("SKILLS_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn skills-mcp serve --http");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut url = None;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("listening on ").nth(1) {
                url = rest.split_whitespace().next().map(str::to_string);
            }
            if line.contains("skills indexed") {
                let _ = tx.send(url.clone());
            }
            // The access log (one line per request) is read and dropped.
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(120))
        .ok()
        .flatten()
        .expect("the server did not become ready");
    Server { child, url }
}

fn queries() -> Vec<String> {
    let from_eval = support::dev_queries(&["short"]);
    if !from_eval.is_empty() {
        return from_eval;
    }
    [
        "react login form",
        "postgres migration",
        "pdf tables",
        "docker compose",
        "unit tests",
        "security audit",
        "write a changelog",
        "kubernetes deployment",
    ]
    .map(String::from)
    .to_vec()
}

/// One 2026-07-28 stateless request; returns its `result`.
async fn call(
    client: &reqwest::Client,
    url: &str,
    id: u64,
    method: &str,
    name: &str,
    params: Value,
) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .body(body.to_string())
        .send()
        .await
        .expect("send");
    let status = response.status();
    let text = response.text().await.expect("body");
    assert!(status.is_success(), "{method} {name}: {status} {text}");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert!(v.get("error").is_none(), "{method} {name}: {v}");
    v["result"].clone()
}

#[derive(Clone, Copy)]
enum Op {
    Search,
    Read,
}

struct Row {
    op: &'static str,
    clients: usize,
    requests: usize,
    per_s: f64,
    p50: f64,
    p99: f64,
    rss: f64,
}

async fn phase(
    url: &str,
    op: Op,
    clients: usize,
    count: usize,
    queries: Arc<Vec<String>>,
    uris: Arc<Vec<String>>,
) -> (Vec<Duration>, Duration) {
    let per_client = count.div_ceil(clients);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let url = url.to_string();
        let queries = queries.clone();
        let uris = uris.clone();
        tasks.push(tokio::spawn(async move {
            let client = reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .build()
                .unwrap();
            let mut latencies = Vec::with_capacity(per_client);
            for i in 0..per_client {
                let k = c * 7919 + i;
                let t = Instant::now();
                match op {
                    Op::Search => {
                        let q = &queries[k % queries.len()];
                        let r = call(
                            &client,
                            &url,
                            k as u64,
                            "tools/call",
                            "search_skills",
                            json!({"name": "search_skills", "arguments": {"query": q, "limit": 10}}),
                        )
                        .await;
                        assert_ne!(r["isError"], json!(true), "{r}");
                    }
                    Op::Read => {
                        let uri = &uris[k % uris.len()];
                        let r = call(
                            &client,
                            &url,
                            k as u64,
                            "resources/read",
                            uri,
                            json!({ "uri": uri }),
                        )
                        .await;
                        assert!(r["contents"].is_array(), "{r}");
                    }
                }
                latencies.push(t.elapsed());
            }
            latencies
        }));
    }
    let mut all = Vec::with_capacity(count);
    for t in tasks {
        all.extend(t.await.expect("a client failed"));
    }
    (all, started.elapsed())
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

fn main() {
    let test = support::test_mode();
    let mut count = if test { 64 } else { 4000 };
    let mut metrics = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--count" {
            count = args.next().and_then(|n| n.parse().ok()).expect("--count N");
        }
        metrics |= a == "--metrics";
    }
    let corpus = support::combined().unwrap_or_else(|| {
        eprintln!("note: measuring the bundled skills instead");
        support::bundled()
    });
    let server = start(&corpus.root, metrics);
    if metrics {
        println!("metrics on (--metrics-listen 127.0.0.1:0)");
    }
    let pid = server.child.id();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let queries = Arc::new(queries());
    // Resource URIs: the SKILL.md of the skills the queries find.
    let uris: Vec<String> = runtime.block_on(async {
        let client = reqwest::Client::new();
        let mut uris = Vec::new();
        for (i, q) in queries.iter().take(50).enumerate() {
            let r = call(
                &client,
                &server.url,
                i as u64,
                "tools/call",
                "search_skills",
                json!({"name": "search_skills", "arguments": {"query": q}}),
            )
            .await;
            let text = r["content"][0]["text"].as_str().unwrap_or("{}");
            let v: Value = serde_json::from_str(text).unwrap_or_default();
            for hit in v["results"].as_array().into_iter().flatten() {
                if let Some(uri) = hit["uri"].as_str() {
                    uris.push(uri.to_string());
                }
            }
        }
        uris.sort();
        uris.dedup();
        uris
    });
    assert!(!uris.is_empty(), "no resource URI found by the queries");
    let uris = Arc::new(uris);
    let (rss_start, _) = rss(pid);
    let mut rows = Vec::new();
    for (op, name) in [(Op::Search, "search_skills"), (Op::Read, "resources/read")] {
        for clients in CLIENTS {
            let (mut latencies, wall) = runtime.block_on(phase(
                &server.url,
                op,
                clients,
                count,
                queries.clone(),
                uris.clone(),
            ));
            latencies.sort();
            rows.push(Row {
                op: name,
                clients,
                requests: latencies.len(),
                per_s: latencies.len() as f64 / wall.as_secs_f64(),
                p50: percentile(&latencies, 0.50),
                p99: percentile(&latencies, 0.99),
                rss: rss(pid).0,
            });
        }
    }
    let (_, peak) = rss(pid);
    println!(
        "\nHTTP load: {} ({} skills root), {} queries, {} resource URIs, {} cpus",
        corpus.name,
        corpus.root.display(),
        queries.len(),
        uris.len(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "\n| request | clients | requests | requests/s | p50 ms | p99 ms | server RSS after (MiB) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {:.0} | {:.2} | {:.2} | {:.1} |",
            r.op, r.clients, r.requests, r.per_s, r.p50, r.p99, r.rss
        );
    }
    println!("\nserver RSS: {rss_start:.1} MiB when ready, peak (VmHWM) {peak:.1} MiB");
}
