//! The performance report of issue 7: every goal as a ratio to a floor measured in the same run,
//! printed as Markdown tables (the README's performance section).
//!
//! ```text
//! cargo bench -p skills-mcp --bench perf_report            # 5 timed runs per measurement
//! cargo bench -p skills-mcp --bench perf_report -- --reps 9
//! cargo bench -p skills-mcp --bench perf_report -- --test  # once each (CI)
//! ```
//!
//! Per corpus (bundled, combined when `../shared/corpora/combined` exists, 10k generated):
//! - **floor**: a plain single-threaded `std::fs` walk of the root (names, types, file sizes)
//!   and a read of every file the engine asks for: the I/O any implementation must do;
//! - **index build**: natively (the guest crate as a library, same walk, sequential reads),
//!   through the component with the same sequential driver, and through the real
//!   `Catalog::open` (cap-std walk, parallel reads, batches, fresh instance);
//! - **queries**: `search(q, 10)` for every request of the query list, and `get_skill` (route +
//!   resolve the best candidate), natively and through the component (one reused instance),
//!   plus `resolve` of fixed skill paths (must not grow with the catalogue);
//! - **serve**: the real binary (`skills-mcp --root DIR serve`) on a warm compile cache: time
//!   from spawn to the `tools/list` answer, to the first `tools/call` answer, and its peak RSS
//!   (`VmHWM` of `/proc/<pid>/status`, read before it exits). Start-up minus build subtracts the
//!   server's own `Catalog::open` time (its stderr line `N skills indexed in T ms`), so load that
//!   changes between the in-process measurement and the server's run does not enter it.
//! - **one-shot CLI**: `skills-mcp --root DIR search --batch` over the query list, restoring the
//!   index from the index cache: its peak RSS (`ru_maxrss` of `wait4`). `benches/memory.rs`
//!   has the same figures for any binary, and a refresh storm.
//!
//! Medians of `--reps` runs after one warm-up run (the page cache is warm for every variant).

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use skills_mcp::catalog::{Catalog, CatalogOptions, RootSpec};
use support::server::Server;
use support::{Corpus, component};

/// Start-up allowance over the index build (issue 7).
const STARTUP_BUDGET_MS: f64 = 50.0;

struct Opts {
    reps: usize,
    warmup: bool,
    only: Option<String>,
}

fn opts() -> Opts {
    let test = support::test_mode();
    let mut o = Opts {
        reps: if test { 1 } else { 5 },
        warmup: !test,
        only: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--reps" => o.reps = args.next().and_then(|n| n.parse().ok()).expect("--reps N"),
            "--corpus" => o.only = args.next(),
            _ => {}
        }
    }
    o.reps = o.reps.max(1);
    o
}

/// Median wall time of `reps` runs of `f` (after one untimed run when `warmup`).
fn median(o: &Opts, mut f: impl FnMut()) -> Duration {
    if o.warmup {
        f();
    }
    let mut t: Vec<Duration> = (0..o.reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort();
    t[t.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn verdict(ok: bool) -> &'static str {
    if ok { "yes" } else { "**no**" }
}

struct BuildRow {
    corpus: String,
    skills: u32,
    files: usize,
    mb: f64,
    floor: Duration,
    native: Duration,
    component: Duration,
    catalog: Duration,
    /// `Catalog::open` restoring from the index cache (`None` when the build was not cached:
    /// files changed within seconds of the walk).
    cached: Option<Duration>,
}

struct QueryRow {
    corpus: String,
    queries: usize,
    native_search: Duration,
    component_search: Duration,
    catalog_search: Duration,
    native_get: Duration,
    component_get: Duration,
    catalog_get: Duration,
    native_resolve: Duration,
    catalog_resolve: Duration,
}

struct ServeRow {
    corpus: String,
    /// Whether the server could use the index cache (and did, after the warm-up start).
    index_cache: bool,
    tools_list: Option<Duration>,
    first_call: Option<Duration>,
    build: Duration,
    /// `Catalog::open` inside the server (median of the starts), as its stderr reports it.
    serve_build: Option<Duration>,
    hwm_kb: Option<u64>,
    guest_kb: Option<u64>,
    note: String,
}

fn main() {
    let o = opts();
    let started = Instant::now();
    let mut corpora = support::corpora();
    if let Some(only) = &o.only {
        corpora.retain(|c| &c.name == only);
    }
    let rt = component::runtime();

    // Instantiation from the InstancePre (the catalog does it once per build).
    let bundled = support::bundled();
    let inst = median(
        &Opts {
            reps: if o.warmup { 21 } else { 1 },
            warmup: o.warmup,
            only: None,
        },
        || {
            black_box(component::instance(&rt, &bundled));
        },
    );

    let mut builds = Vec::new();
    let mut queries = Vec::new();
    let mut serves = Vec::new();
    let mut clis = Vec::new();
    for corpus in &corpora {
        eprintln!("measuring {} ...", corpus.name);
        let to_read = support::files_to_read(corpus);
        let mb = to_read
            .iter()
            .filter_map(|p| std::fs::metadata(corpus.root.join(p)).ok())
            .map(|m| m.len())
            .sum::<u64>() as f64
            / 1e6;

        // Index build.
        let floor = median(&o, || {
            black_box(support::floor_walk_read(&corpus.root, &to_read));
        });
        let native = median(&o, || {
            black_box(support::native_index(corpus).len());
        });
        let comp = median(&o, || {
            black_box(component::component_index(&rt, corpus).1);
        });
        let open = || {
            Catalog::open(vec![RootSpec::new(&corpus.root)], CatalogOptions::default())
                .expect("Catalog::open")
        };
        let catalog_t = median(&o, || {
            black_box(open());
        });
        let cache_dir = support::scratch_dir().join("index-cache");
        let open_cached = || {
            let options = CatalogOptions {
                index_cache: Some(cache_dir.clone()),
                ..CatalogOptions::default()
            };
            Catalog::open(vec![RootSpec::new(&corpus.root)], options).expect("Catalog::open")
        };
        open_cached();
        let cached = open_cached().stats().from_cache.then(|| {
            median(&o, || {
                black_box(open_cached());
            })
        });
        let catalog = open();
        let skills = catalog.len().expect("len");
        builds.push(BuildRow {
            corpus: corpus.name.clone(),
            skills,
            files: to_read.len(),
            mb,
            floor,
            native,
            component: comp,
            catalog: catalog_t,
            cached,
        });

        // Queries.
        let qs = support::queries(corpus);
        let n = qs.len() as u32;
        let index = support::native_index(corpus);
        let files = support::FsFiles(vec![corpus.root.clone()]);
        let (mut guest, handle) = component::component_index(&rt, corpus);
        let per_q = |d: Duration| d / n;
        let native_search = per_q(median(&o, || {
            for q in &qs {
                black_box(index.search(q, 10).expect("search"));
            }
        }));
        let component_search = per_q(median(&o, || {
            for q in &qs {
                black_box(guest.search(handle, q, 10).expect("search"));
            }
        }));
        let catalog_search = per_q(median(&o, || {
            for q in &qs {
                black_box(catalog.search(q, 10).expect("search"));
            }
        }));
        let native_get = per_q(median(&o, || {
            for q in &qs {
                black_box(support::native_get_skill(&index, &files, q));
            }
        }));
        let component_get = per_q(median(&o, || {
            for q in &qs {
                black_box(component::get_skill(&mut guest, handle, q));
            }
        }));
        let catalog_get = per_q(median(&o, || {
            for q in &qs {
                black_box(catalog.get_skill_json(q).expect("get_skill"));
            }
        }));
        // Fixed skills (every 97th): resolve cost must not depend on the catalogue's size.
        let paths: Vec<String> = index
            .skills()
            .into_iter()
            .step_by(97)
            .take(20)
            .map(|s| s.skill_path)
            .collect();
        let np = paths.len().max(1) as u32;
        let native_resolve = median(&o, || {
            for p in &paths {
                black_box(index.resolve(&files, p).expect("resolve"));
            }
        }) / np;
        let catalog_resolve = median(&o, || {
            for p in &paths {
                black_box(catalog.resolve(p).expect("resolve"));
            }
        }) / np;
        queries.push(QueryRow {
            corpus: corpus.name.clone(),
            queries: qs.len(),
            native_search,
            component_search,
            catalog_search,
            native_get,
            component_get,
            catalog_get,
            native_resolve,
            catalog_resolve,
        });
        drop(guest);
        drop(catalog);

        // The real server.
        serves.push(serve(&o, corpus, catalog_t, &qs[0], false));
        serves.push(serve(&o, corpus, cached.unwrap_or(catalog_t), &qs[0], true));
        clis.push((corpus.name.clone(), qs.len(), cli_peak(&o, corpus, &qs)));
    }

    println!("\n## Performance (measured {})\n", machine());
    println!(
        "Instantiating the engine from its `InstancePre`: {:.0} µs (median).\n",
        us(inst)
    );
    println!(
        "### Index build (median of {} runs, warm page cache)\n",
        o.reps
    );
    println!(
        "| corpus | skills | files read | MB read | floor: walk + read | native engine | component, same driver | `Catalog::open` | catalog / floor | goal <= 1.5x | `Catalog::open` from the index cache | cached / floor | goal <= 1.5x |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|");
    for b in &builds {
        let r = b.catalog.as_secs_f64() / b.floor.as_secs_f64();
        println!(
            "| {} | {} | {} | {:.1} | {:.1} ms | {:.1} ms ({:.2}x) | {:.1} ms ({:.2}x) | {:.1} ms | {:.2}x | {} | {} |",
            b.corpus,
            b.skills,
            b.files,
            b.mb,
            ms(b.floor),
            ms(b.native),
            b.native.as_secs_f64() / b.floor.as_secs_f64(),
            ms(b.component),
            b.component.as_secs_f64() / b.floor.as_secs_f64(),
            ms(b.catalog),
            r,
            verdict(r <= 1.5),
            match b.cached {
                Some(c) => {
                    let rc = c.as_secs_f64() / b.floor.as_secs_f64();
                    format!("{:.1} ms | {rc:.2}x | {}", ms(c), verdict(rc <= 1.5))
                }
                None => "not cached (files changed seconds before) | - | -".into(),
            }
        );
    }
    println!(
        "\n### Queries (per request, median of {} passes over the query list)\n",
        o.reps
    );
    println!(
        "| corpus | queries | search native | search component | component / native | goal <= 2x | search via catalog | get_skill native | get_skill component | component / native | get_skill via catalog (JSON) | resolve native | resolve via catalog |"
    );
    println!("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for q in &queries {
        let rs = q.component_search.as_secs_f64() / q.native_search.as_secs_f64();
        let rg = q.component_get.as_secs_f64() / q.native_get.as_secs_f64();
        println!(
            "| {} | {} | {:.0} µs | {:.0} µs | {:.2}x | {} | {:.0} µs | {:.0} µs | {:.0} µs | {:.2}x | {:.0} µs | {:.0} µs | {:.0} µs |",
            q.corpus,
            q.queries,
            us(q.native_search),
            us(q.component_search),
            rs,
            verdict(rs <= 2.0),
            us(q.catalog_search),
            us(q.native_get),
            us(q.component_get),
            rg,
            us(q.catalog_get),
            us(q.native_resolve),
            us(q.catalog_resolve),
        );
    }
    println!(
        "\n### `skills-mcp serve` (warm compile cache, median of {} starts)\n",
        o.reps
    );
    println!(
        "| corpus | index | `tools/list` answered | first `tools/call` answered | index build (`Catalog::open`) | index build in serve | start-up - build in serve | goal <= 50 ms | peak RSS (VmHWM) | goal | of which engine linear memory |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---|---:|---|---:|");
    for s in &serves {
        let limit_mb = match s.corpus.as_str() {
            "combined" => Some(35.0),
            c if c.starts_with("gen") => Some(80.0),
            _ => None,
        };
        let (list, call, over, ok) = match (s.tools_list, s.first_call) {
            (Some(l), c) => {
                let last = c.unwrap_or(l).max(l);
                let over = ms(last) - ms(s.serve_build.unwrap_or(s.build));
                (
                    format!("{:.1} ms", ms(l)),
                    c.map_or("n/a".into(), |c| format!("{:.1} ms", ms(c))),
                    format!("{over:.1} ms"),
                    verdict(over <= STARTUP_BUDGET_MS).to_string(),
                )
            }
            _ => ("n/a".into(), "n/a".into(), "n/a".into(), s.note.clone()),
        };
        let rss = s
            .hwm_kb
            .map_or("n/a".into(), |k| format!("{:.1} MB", k as f64 / 1024.0));
        let rss_ok = match (s.hwm_kb, limit_mb) {
            (Some(k), Some(l)) => format!("{} (<= {l:.0} MB)", verdict((k as f64 / 1024.0) <= l)),
            _ => "-".into(),
        };
        println!(
            "| {} | {} | {list} | {call} | {:.1} ms | {} | {over} | {ok} | {rss} | {rss_ok} | {} |",
            s.corpus,
            if s.index_cache {
                "from the cache"
            } else {
                "built"
            },
            ms(s.build),
            s.serve_build
                .map_or("n/a".into(), |b| format!("{:.1} ms", ms(b))),
            s.guest_kb
                .map_or("n/a".into(), |k| format!("{:.1} MB", k as f64 / 1024.0))
        );
    }
    println!(
        "\n### `skills-mcp search --batch` (from the index cache, median of {} runs)\n",
        o.reps
    );
    println!("| corpus | queries | peak RSS (`ru_maxrss`) | goal |\n|---|---:|---:|---|");
    for (corpus, queries, peak) in &clis {
        let limit_mb = (corpus == "combined").then_some(35.0);
        let (rss, ok) = match (peak, limit_mb) {
            (Ok(k), Some(l)) => (
                format!("{:.1} MB", *k as f64 / 1024.0),
                format!("{} (<= {l:.0} MB)", verdict((*k as f64 / 1024.0) <= l)),
            ),
            (Ok(k), None) => (format!("{:.1} MB", *k as f64 / 1024.0), "-".into()),
            (Err(e), _) => ("n/a".into(), e.clone()),
        };
        println!("| {corpus} | {queries} | {rss} | {ok} |");
    }
    println!(
        "\nTotal time of this report: {:.0} s.",
        started.elapsed().as_secs_f64()
    );
}

/// CPU and load, to read the numbers with.
fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into());
    format!("on {cpus} CPUs, load average {load} at the end")
}

/// `skills-mcp --root ROOT serve` from `home`, with or without the index cache, sharing this
/// process's compile cache.
fn spawn_server(root: &Path, home: &Path, index_cache: bool) -> std::io::Result<Server> {
    let cache = skills_mcp::runtime::default_cache_dir().unwrap_or_default();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skills-mcp"));
    cmd.env(
        "SKILLS_MCP_INDEX_CACHE",
        if index_cache { "on" } else { "off" },
    )
    .arg("--root")
    .arg(root)
    .arg("serve")
    .current_dir(home)
    // No standard roots from the real home; the same compile cache as this process.
    .env("HOME", home)
    .env("SKILLS_MCP_CACHE_DIR", cache)
    .env_remove("SKILLS_DIR")
    .env_remove("XDG_CACHE_HOME");
    Server::spawn(cmd)
}

/// The server's own index build time, from its log line
/// "skills-mcp: N skills indexed in T ms; ...".
fn built_ms(line: &str) -> Option<Duration> {
    line.split_once(" skills indexed in ")
        .and_then(|(_, rest)| rest.split_once(" ms"))
        .and_then(|(t, _)| t.parse::<u64>().ok())
        .map(Duration::from_millis)
}

/// What one start of the server measured: tools/list time, first tools/call time, VmHWM kB, the
/// engine's linear memory kB, and the server's own index build time.
type ServeRun = (
    Duration,
    Option<Duration>,
    Option<u64>,
    Option<u64>,
    Option<Duration>,
);

/// One start of the server (see [`ServeRun`]).
fn serve_once(
    corpus: &Corpus,
    home: &Path,
    query: &str,
    index_cache: bool,
) -> Result<ServeRun, String> {
    let timeout = Duration::from_secs(120);
    let t0 = Instant::now();
    let mut s = spawn_server(&corpus.root, home, index_cache).map_err(|e| format!("spawn: {e}"))?;
    let r = (|| {
        s.initialize("perf_report", timeout)?;
        s.send(&[json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})])
            .map_err(|e| format!("write: {e}"))?;
        let list = s.answer(2, timeout).ok_or("no tools/list answer")?;
        let t_list = t0.elapsed();
        let tools: Vec<String> = list["result"]["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .filter_map(|t| t["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let mut t_call = None;
        if tools.iter().any(|t| t == "get_skill") {
            s.send(&[Server::call(3, "get_skill", json!({"context": query}))])
                .map_err(|e| format!("write: {e}"))?;
            s.answer(3, timeout).ok_or("no tools/call answer")?;
            t_call = Some(t0.elapsed());
        }
        let built = s.find_in_log(Duration::from_secs(1), built_ms);
        let (_, hwm) = s.status_kb();
        Ok((
            t_list,
            t_call,
            Some(hwm).filter(|&kb| kb > 0),
            s.guest_kb(),
            built,
        ))
    })();
    s.stop();
    r
}

/// Peak RSS (kB) of the one-shot CLI, `search --batch` over `queries` restoring the index from
/// the index cache (written by a first run), median of `o.reps` runs.
fn cli_peak(o: &Opts, corpus: &Corpus, queries: &[String]) -> Result<u64, String> {
    let home = support::scratch_dir().join("home");
    let _ = std::fs::create_dir_all(&home);
    let command = || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skills-mcp"));
        cmd.current_dir(&home)
            .env("HOME", &home)
            .env(
                "SKILLS_MCP_CACHE_DIR",
                skills_mcp::runtime::default_cache_dir().unwrap_or_default(),
            )
            .env("SKILLS_MCP_INDEX_CACHE", "on")
            .env_remove("SKILLS_DIR")
            .env_remove("XDG_CACHE_HOME");
        cmd
    };
    support::search_batch_peak_rss_kb(command(), &corpus.root, queries)?;
    let mut runs = (0..o.reps)
        .map(|_| support::search_batch_peak_rss_kb(command(), &corpus.root, queries))
        .collect::<Result<Vec<u64>, String>>()?;
    runs.sort_unstable();
    Ok(runs[runs.len() / 2])
}

fn serve(o: &Opts, corpus: &Corpus, build: Duration, query: &str, index_cache: bool) -> ServeRow {
    let home = support::scratch_dir().join("home");
    let _ = std::fs::create_dir_all(&home);
    let mut row = ServeRow {
        corpus: corpus.name.clone(),
        index_cache,
        tools_list: None,
        first_call: None,
        build,
        serve_build: None,
        hwm_kb: None,
        guest_kb: None,
        note: String::new(),
    };
    // With the index cache, one start writes it even in the quick mode.
    if (o.warmup || index_cache)
        && let Err(e) = serve_once(corpus, &home, query, index_cache)
    {
        row.note = e;
        return row;
    }
    let mut runs = Vec::new();
    for _ in 0..o.reps {
        match serve_once(corpus, &home, query, index_cache) {
            Ok(r) => runs.push(r),
            Err(e) => {
                row.note = e;
                return row;
            }
        }
    }
    let mid = runs.len() / 2;
    let mut lists: Vec<Duration> = runs.iter().map(|r| r.0).collect();
    lists.sort();
    row.tools_list = Some(lists[mid]);
    let mut calls: Vec<Duration> = runs.iter().filter_map(|r| r.1).collect();
    calls.sort();
    row.first_call = calls.get(calls.len() / 2).copied();
    let mut builds: Vec<Duration> = runs.iter().filter_map(|r| r.4).collect();
    builds.sort();
    row.serve_build = builds.get(builds.len() / 2).copied();
    row.hwm_kb = runs.iter().filter_map(|r| r.2).max();
    row.guest_kb = runs.iter().filter_map(|r| r.3).max();
    row
}
