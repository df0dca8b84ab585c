//! Each dev request's own time through the component (issue 27's "median per dev query"):
//! the 240 dev requests (`short` and `task` of `../shared/eval/dev_queries.json`, as
//! `search --batch` reads them) on one reused instance, what `search --batch` does for a line
//! timed: the engine's `search-brief(q, 10)`, the hits lifted, the JSON line written
//! (`skills_engine::output::batch_line`). The list runs `PASSES` times (default 40), the
//! passes one after another, so a burst of noise on a shared machine touches every request
//! alike; a request's time is the median of its passes. Printed per corpus: the median over
//! the requests, their mean (what `benches/search_scale.sh` divides out of whole runs), p90,
//! p99, the slowest, and the five slowest requests.
//!
//! Corpora: `combined` (when `../shared/corpora/combined` is present) and the generated one
//! (10,000 skills; `SKILLS_MCP_BENCH_GEN_SKILLS=50000` for 50,000, generated once under
//! `target/bench-corpus/`). The index is built in the instance (no index cache); the bench
//! uses the server binary's allocator (mimalloc) for the host's part.
//!
//! `cargo bench -p skills-mcp --bench query_times`; `-- --test` runs the bundled skills once.

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;
use std::time::Instant;

use support::component;

// The server binary's allocator (host/src/main.rs): the host's part of a request (lifting the
// hits, writing the line) allocates as it does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let test = support::test_mode();
    let passes: usize = if test {
        1
    } else {
        std::env::var("PASSES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(40)
    };
    let mut requests = support::dev_requests();
    if requests.is_empty() {
        eprintln!("note: ../shared/eval/dev_queries.json is absent: the built-in queries");
        requests = support::queries(&support::bundled());
    }
    let corpora = if test {
        vec![support::bundled()]
    } else {
        let mut v: Vec<_> = support::combined().into_iter().collect();
        v.push(support::generated());
        v
    };
    let rt = component::runtime();
    println!("| corpus | requests x passes | median (µs) | mean | p90 | p99 | slowest |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    let mut slowest_lists = Vec::new();
    for corpus in corpora {
        let (mut guest, index) = component::component_index(&rt, &corpus);
        // One untimed pass: the instance's memory grown, the code paths warm.
        for q in &requests {
            black_box(guest.search_brief(index, q, 10).expect("search"));
        }
        let mut times = vec![Vec::with_capacity(passes); requests.len()];
        for _ in 0..passes {
            for (q, t) in requests.iter().zip(times.iter_mut()) {
                let start = Instant::now();
                let line = match guest.search_brief(index, q, 10) {
                    Ok(hits) => {
                        skills_engine::output::batch_line(q, Ok(&skills_mcp::output::hits(hits)))
                    }
                    Err(e) => skills_engine::output::batch_line(q, Err(&format!("{e:#}"))),
                };
                black_box(line);
                t.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
        let mut per_request: Vec<(f64, &str)> = times
            .iter_mut()
            .zip(&requests)
            .map(|(t, q)| {
                t.sort_by(f64::total_cmp);
                (t[t.len() / 2], q.as_str())
            })
            .collect();
        per_request.sort_by(|a, b| a.0.total_cmp(&b.0));
        let sorted: Vec<f64> = per_request.iter().map(|p| p.0).collect();
        let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
        println!(
            "| {} | {} x {passes} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            corpus.name,
            requests.len(),
            percentile(&sorted, 0.5),
            mean,
            percentile(&sorted, 0.9),
            percentile(&sorted, 0.99),
            sorted[sorted.len() - 1],
        );
        slowest_lists.push((corpus.name.clone(), per_request));
    }
    for (name, per_request) in slowest_lists {
        println!("\nslowest on {name}:");
        for (t, q) in per_request.iter().rev().take(5) {
            let q: String = q.chars().take(90).collect();
            println!("  {t:8.1} µs  {q}");
        }
    }
}
