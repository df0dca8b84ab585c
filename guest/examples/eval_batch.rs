//! Retrieval evaluation harness for the ranker (native).
//!
//! ```text
//! eval_batch ROOT                      one query per stdin line -> one JSON line per query:
//!                                      {"query":..,"results":[{"skill_path","name","score","description"}]}
//! eval_batch ROOT --keywords           same, with the spec's keyword matching
//! eval_batch ROOT --bench              mean latency per query (stdin queries, repeated
//!                                      EVAL_REPS times, default 20)
//! eval_batch ROOT --route              the routing decision for each stdin query
//! eval_batch ROOT --eval QUERIES.json  recall@1/@3 and MRR@10 (all, even ids, odd ids),
//!                                      short and task styles; negatives are routed
//! eval_batch ROOT --explain PATH       explain PATH's score for each stdin query
//! eval_batch ROOT --index ...          search through the engine's own `Index` (listing,
//!                                      add_root, add_files, finish) instead of SearchDocs
//!                                      extracted here; combines with the modes above
//! eval_batch ROOT --index --audit     `skills-mcp audit --json` of the engine's `Index`, with
//!                                      the choices of `AUDIT_HITS` (hits read per request),
//!                                      `AUDIT_HEADINGS` (body headings taken as requests),
//!                                      `AUDIT_MUTUAL` (1: closeness counted both ways),
//!                                      `AUDIT_ORDER`, `AUDIT_KEEP`, `AUDIT_CLAUSES` (see
//!                                      `AuditParams`) instead of the shipped ones
//!                                      (`benches/eval/audit_ideas.sh`)
//! eval_batch ROOT --build-stats [N]    build the engine's `Index` N times (default 3) as the
//!                                      host does (batches of 2 MiB / 256 files): median time,
//!                                      peak and retained heap (a counting allocator)
//! ```
//!
//! Skills are read from `ROOT` with `std::fs` (every `SKILL.md`, any case, symlinks not
//! followed, `.git` and `node_modules` skipped; skill path = folder relative to ROOT) and turned
//! into [`SearchDoc`]s with the engine's own frontmatter helpers. Ranking parameters can be
//! overridden from the environment for tuning: `RANK_K1`, `RANK_W` (7 comma-separated field
//! weights), `RANK_B` (7 values), `RANK_JOINED`, `RANK_PREFIX`, `RANK_TYPO`, `RANK_SINGLE_WORD`,
//! `RANK_BODY_BYTES`, `RANK_PAIR` (pair weight), `RANK_PAIR_WINDOW`.

use serde_json::json;
use skills_engine::Index;
use skills_engine::model::{EngineConfig, Entry, EntryKind, FileData, RouteOutcome, SearchHit};
use skills_engine::rank::{Params, SearchDoc, SearchIndex};
use skills_engine::{frontmatter, keyword, route};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The system allocator, counting live and peak bytes (for `--build-stats`).
struct Counting;

static LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static PEAK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[allow(unsafe_code)]
// SAFETY: every call is forwarded to `System` unchanged; only counters are updated.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use std::sync::atomic::Ordering::Relaxed;
        let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
        PEAK.fetch_max(live, Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        LIVE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// `--build-stats`: build the engine's index as the host does, `reps` times.
fn build_stats(root: &Path, reps: usize) {
    use std::sync::atomic::Ordering::Relaxed;
    let mut entries = Vec::new();
    listing(root, root, &mut entries);
    let mut times = Vec::new();
    let mut peak = 0;
    let mut retained = 0;
    let mut before_finish = 0;
    for _ in 0..reps {
        let t = Instant::now();
        let base = LIVE.load(Relaxed);
        PEAK.store(base, Relaxed);
        let mut index = Index::new(EngineConfig::default());
        let wanted = index
            .add_root("root", entries.clone())
            .expect("a valid listing");
        let mut batch = Vec::new();
        let mut bytes = 0;
        for p in wanted {
            let Ok(b) = std::fs::read(root.join(&p)) else {
                continue;
            };
            bytes += b.len();
            batch.push(FileData { path: p, bytes: b });
            if bytes >= 2 * 1024 * 1024 || batch.len() >= 256 {
                index
                    .add_files(0, std::mem::take(&mut batch))
                    .expect("the files asked for");
                bytes = 0;
            }
        }
        index.add_files(0, batch).expect("the files asked for");
        before_finish = LIVE.load(Relaxed) - base;
        index.finish().expect("finished once");
        times.push(t.elapsed().as_secs_f64() * 1e3);
        peak = PEAK.load(Relaxed) - base;
        retained = LIVE.load(Relaxed) - base;
        std::hint::black_box(&index);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "build: median {:.0} ms (min {:.0}) over {reps}; heap peak {:.1} MB, live before finish \
         {:.1} MB, retained {:.1} MB",
        times[times.len() / 2],
        times[0],
        peak as f64 / 1e6,
        before_finish as f64 / 1e6,
        retained as f64 / 1e6
    );
}

/// Bytes of body handed to the ranker (it keeps `Params::body_bytes` of it).
const BODY_READ_BYTES: usize = 64 * 1024;

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(ft) = e.file_type() else { continue };
        let name = e.file_name().to_string_lossy().into_owned();
        if ft.is_dir() {
            if name == ".git" || name == "node_modules" {
                continue;
            }
            walk(&e.path(), out);
        } else if ft.is_file() && name.eq_ignore_ascii_case("skill.md") {
            out.push(e.path());
        }
    }
}

/// Every entry below `dir` (symlinks listed, not followed; `.git`, `node_modules` skipped).
fn listing(root: &Path, dir: &Path, out: &mut Vec<Entry>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        let path = e.path();
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        if ft.is_symlink() {
            out.push(Entry {
                path: rel,
                kind: EntryKind::Symlink,
                size: 0,
            });
        } else if ft.is_dir() {
            let name = e.file_name();
            if name == ".git" || name == "node_modules" {
                continue;
            }
            out.push(Entry {
                path: rel,
                kind: EntryKind::Directory,
                size: 0,
            });
            listing(root, &path, out);
        } else if ft.is_file() {
            let size = e.metadata().map(|m| m.len()).unwrap_or(0);
            out.push(Entry {
                path: rel,
                kind: EntryKind::File,
                size,
            });
        }
    }
}

/// The engine's own index over `root` (what the product does), through its build protocol.
fn build_index(root: &Path) -> Index {
    let mut entries = Vec::new();
    listing(root, root, &mut entries);
    let mut index = Index::new(EngineConfig::default());
    let wanted = index.add_root("root", entries).expect("a valid listing");
    let files: Vec<FileData> = wanted
        .into_iter()
        .filter_map(|p| {
            std::fs::read(root.join(&p))
                .ok()
                .map(|bytes| FileData { path: p, bytes })
        })
        .collect();
    index.add_files(0, files).expect("the files asked for");
    index.finish().expect("finished once");
    index
}

fn hint_text(map: &serde_yaml::Mapping) -> String {
    let mut parts = Vec::new();
    for key in [
        "when_to_use",
        "when-to-use",
        "whenToUse",
        "tags",
        "triggers",
        "category",
        "argument-hint",
    ] {
        if let Some(v) = frontmatter::get(map, key) {
            let list = frontmatter::string_list(v);
            if !list.is_empty() {
                parts.push(list.join(", "));
            }
        }
    }
    parts.join("\n")
}

fn load(root: &Path) -> Vec<SearchDoc> {
    let mut files = Vec::new();
    walk(root, &mut files);
    let mut docs = Vec::new();
    for f in files {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        };
        let mut notes = Vec::new();
        let text = frontmatter::decode(&bytes, &mut notes);
        let dir = f.parent().unwrap_or(root);
        let skill_path = dir
            .strip_prefix(root)
            .unwrap_or(dir)
            .to_string_lossy()
            .replace('\\', "/");
        let folder = skill_path.rsplit('/').next().unwrap_or("").to_string();
        let (map, body) = match frontmatter::split(&text) {
            frontmatter::Split::Found(b) => (
                frontmatter::parse(&b, &mut notes).unwrap_or_default(),
                b.body,
            ),
            frontmatter::Split::None { body } => (serde_yaml::Mapping::new(), body),
            frontmatter::Split::Unclosed { .. } => (serde_yaml::Mapping::new(), ""),
        };
        let s = |k: &str| {
            frontmatter::get(&map, k)
                .and_then(frontmatter::scalar_string)
                .unwrap_or_default()
        };
        let name = Some(s("name"))
            .filter(|n| !n.trim().is_empty())
            .unwrap_or(folder);
        let mut keywords = Vec::new();
        for k in ["keywords", "aliases"] {
            if let Some(v) = frontmatter::get(&map, k) {
                keywords.extend(frontmatter::string_list(v));
            }
        }
        let body = frontmatter::trim_body(body);
        docs.push(SearchDoc {
            skill_path,
            name,
            description: s("description"),
            keywords,
            hints: hint_text(&map),
            headings: frontmatter::headings(body, 4096),
            body_prefix: frontmatter::prefix(body, BODY_READ_BYTES).to_string(),
            priority: frontmatter::get(&map, "priority")
                .and_then(frontmatter::integer)
                .unwrap_or(0),
        });
    }
    docs
}

fn env_f(name: &str, v: &mut f64) {
    if let Ok(s) = std::env::var(name) {
        *v = s.parse().expect(name);
    }
}

fn env_arr(name: &str, v: &mut [f64; 7]) {
    if let Ok(s) = std::env::var(name) {
        for (i, x) in s.split(',').enumerate() {
            v[i] = x.trim().parse().expect(name);
        }
    }
}

fn params_from_env() -> Params {
    let mut p = Params::default();
    env_f("RANK_K1", &mut p.k1);
    env_arr("RANK_W", &mut p.weight);
    env_arr("RANK_B", &mut p.b);
    env_f("RANK_JOINED", &mut p.joined_weight);
    env_f("RANK_PREFIX", &mut p.prefix_factor);
    env_f("RANK_TYPO", &mut p.typo_factor);
    env_f("RANK_SINGLE_WORD", &mut p.single_word_factor);
    env_f("RANK_PAIR", &mut p.pair_weight);
    if let Ok(s) = std::env::var("RANK_PAIR_WINDOW") {
        p.pair_window = s.parse().expect("RANK_PAIR_WINDOW");
    }
    if let Ok(s) = std::env::var("RANK_BODY_BYTES") {
        p.body_bytes = s.parse().expect("RANK_BODY_BYTES");
    }
    p
}

struct Engine {
    docs: Vec<SearchDoc>,
    index: SearchIndex,
    keywords: bool,
    /// The product's index, when `--index` is given.
    engine_index: Option<Index>,
}

impl Engine {
    fn search(&self, q: &str, limit: usize) -> Vec<SearchHit> {
        if let Some(ix) = &self.engine_index {
            return ix.search(q, limit as u32).unwrap_or_default();
        }
        let scored = if self.keywords {
            keyword::search(&self.docs, q, limit)
        } else {
            self.index.search(q, limit)
        };
        scored
            .into_iter()
            .map(|s| {
                let d = &self.docs[s.doc];
                SearchHit {
                    skill_path: d.skill_path.clone(),
                    name: d.name.clone(),
                    description: d.description.clone(),
                    score: s.score,
                    matched: s.matched,
                    version: None,
                }
            })
            .collect()
    }
}

fn read_queries() -> Vec<String> {
    std::io::stdin()
        .lock()
        .lines()
        .map_while(Result::ok)
        .collect()
}

fn outcome_line(o: &RouteOutcome) -> String {
    match o {
        RouteOutcome::NoMatch => "no_match".to_string(),
        RouteOutcome::Matched(h) => format!("matched {} ({:.3})", h.skill_path, h.score),
        RouteOutcome::Ambiguous(v) => format!(
            "ambiguous [{}]",
            v.iter()
                .map(|h| format!("{} ({:.3})", h.skill_path, h.score))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[derive(Default, Clone, Copy)]
struct Acc {
    n: usize,
    r1: usize,
    r3: usize,
    rr: f64,
}

impl Acc {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(r) = rank {
            if r == 0 {
                self.r1 += 1;
            }
            if r < 3 {
                self.r3 += 1;
            }
            if r < 10 {
                self.rr += 1.0 / (r as f64 + 1.0);
            }
        }
    }
    fn show(&self) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "r@1 {:.3} r@3 {:.3} mrr {:.3}",
            self.r1 as f64 / n,
            self.r3 as f64 / n,
            self.rr / n
        )
    }
}

fn eval(engine: &Engine, path: &str, verbose: bool) {
    let text = std::fs::read_to_string(path).expect("queries file");
    let qs: Vec<serde_json::Value> = serde_json::from_str(&text).expect("queries json");
    let config = EngineConfig::default();
    // [style][split: all, even, odd]
    let mut acc = [[Acc::default(); 3]; 2];
    let mut top_scores = [Vec::new(), Vec::new()];
    let mut routes = [[0usize; 4]; 2]; // matched-correct, matched-wrong, ambiguous, no_match
    let mut i = 0usize;
    for q in &qs {
        if q.get("negative").and_then(|v| v.as_bool()) == Some(true) {
            continue;
        }
        let id = q["id"].as_str().unwrap_or_default();
        let split = 1 + (i % 2);
        i += 1;
        for (si, style) in ["short", "task"].iter().enumerate() {
            let Some(query) = q[style].as_str() else {
                continue;
            };
            let hits = engine.search(query, 10);
            let rank = hits.iter().position(|h| h.skill_path == id);
            acc[si][0].add(rank);
            acc[si][split].add(rank);
            if let Some(h) = hits.first() {
                top_scores[si].push(h.score);
            }
            match route::decide(&config, hits.clone()) {
                RouteOutcome::Matched(h) if h.skill_path == id => routes[si][0] += 1,
                RouteOutcome::Matched(_) => routes[si][1] += 1,
                RouteOutcome::Ambiguous(_) => routes[si][2] += 1,
                RouteOutcome::NoMatch => routes[si][3] += 1,
            }
            if verbose && rank != Some(0) {
                println!(
                    "MISS {style} [{}] {query}\n   gold {id}\n   got  {}",
                    rank.map_or("-".to_string(), |r| (r + 1).to_string()),
                    hits.iter()
                        .take(3)
                        .map(|h| format!("{} ({:.3})", h.skill_path, h.score))
                        .collect::<Vec<_>>()
                        .join("\n        ")
                );
            }
        }
    }
    for (si, style) in ["short", "task"].iter().enumerate() {
        println!(
            "{style:5} all {} | even {} | odd {}",
            acc[si][0].show(),
            acc[si][1].show(),
            acc[si][2].show()
        );
    }
    for (si, style) in ["short", "task"].iter().enumerate() {
        let mut s = top_scores[si].clone();
        s.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let pct = |p: f64| {
            s.get(((s.len() as f64 - 1.0) * p) as usize)
                .copied()
                .unwrap_or(0.0)
        };
        println!(
            "{style:5} top score min {:.3} p10 {:.3} p50 {:.3} | route: matched-right {} matched-wrong {} ambiguous {} no_match {}",
            pct(0.0),
            pct(0.1),
            pct(0.5),
            routes[si][0],
            routes[si][1],
            routes[si][2],
            routes[si][3]
        );
    }
    let negatives: Vec<&str> = qs
        .iter()
        .filter(|q| q.get("negative").and_then(|v| v.as_bool()) == Some(true))
        .flat_map(|q| {
            ["short", "task", "query"]
                .iter()
                .filter_map(move |k| q[*k].as_str())
        })
        .collect();
    for neg in negatives {
        let hits = engine.search(neg, 10);
        println!(
            "negative {:60} -> {}",
            neg,
            outcome_line(&route::decide(&config, hits))
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = PathBuf::from(args.first().expect("usage: eval_batch ROOT [--mode]"));
    let flag = |f: &str| args.iter().position(|a| a == f);
    if let Some(i) = flag("--build-stats") {
        let reps = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(3);
        build_stats(&root, reps);
        return;
    }
    let t0 = Instant::now();
    let docs = load(&root);
    let t_load = t0.elapsed();
    let t1 = Instant::now();
    let index = SearchIndex::build_with(&docs, params_from_env());
    let t_build = t1.elapsed();
    let t2 = Instant::now();
    let engine_index = flag("--index").map(|_| build_index(&root));
    if engine_index.is_some() {
        eprintln!(
            "engine index: {} skills in {:.0} ms",
            engine_index.as_ref().map_or(0, Index::len),
            t2.elapsed().as_secs_f64() * 1e3
        );
    }
    let engine = Engine {
        docs,
        index,
        keywords: flag("--keywords").is_some(),
        engine_index,
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if flag("--audit").is_some() {
        let index = engine.engine_index.as_ref().expect("--audit needs --index");
        let mut params = skills_engine::index::AuditParams::default();
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
        };
        if let Some(v) = var("AUDIT_HITS") {
            params.hits = u32::try_from(v).expect("AUDIT_HITS");
        }
        if let Some(v) = var("AUDIT_HEADINGS") {
            params.headings = v;
        }
        if let Some(v) = var("AUDIT_MUTUAL") {
            params.mutual = u8::try_from(v).expect("AUDIT_MUTUAL");
        }
        if let Some(v) = var("AUDIT_KEEP") {
            params.keep = v;
        }
        if let Some(v) = var("AUDIT_ORDER") {
            params.order = u8::try_from(v).expect("AUDIT_ORDER");
        }
        if let Some(v) = var("AUDIT_CLAUSES") {
            params.clauses = v != 0;
        }
        let t = Instant::now();
        let skills = index.audit_with(&[], &params).expect("an audit");
        eprintln!("audit: {:.1} s", t.elapsed().as_secs_f64());
        let json = skills_engine::output::audit_json(&skills);
        writeln!(out, "{}", skills_engine::output::pretty(&json)).unwrap();
    } else if let Some(i) = flag("--eval") {
        eval(&engine, &args[i + 1], flag("--verbose").is_some());
    } else if flag("--bench").is_some() {
        let qs = read_queries();
        let reps = std::env::var("EVAL_REPS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20);
        let t = Instant::now();
        let mut n = 0usize;
        for _ in 0..reps {
            for q in &qs {
                n += engine.search(q, 10).len();
            }
        }
        let per = t.elapsed().as_secs_f64() * 1e6 / (reps * qs.len().max(1)) as f64;
        writeln!(
            out,
            "{} skills; load {:.0} ms, build {:.1} ms; {} queries x {reps}: mean {per:.1} µs/query ({n} hits)",
            engine.docs.len(),
            t_load.as_secs_f64() * 1e3,
            t_build.as_secs_f64() * 1e3,
            qs.len()
        )
        .unwrap();
    } else if flag("--route").is_some() {
        let config = EngineConfig::default();
        for q in read_queries() {
            let hits = engine.search(&q, 10);
            writeln!(
                out,
                "{q}\n  -> {}",
                outcome_line(&route::decide(&config, hits))
            )
            .unwrap();
        }
    } else if let Some(i) = flag("--explain") {
        let path = &args[i + 1];
        let doc = engine
            .docs
            .iter()
            .position(|d| &d.skill_path == path)
            .expect("no such skill path");
        for q in read_queries() {
            let e = engine.index.explain(&q, doc);
            writeln!(out, "{q}\n  score {:.4}", e.score).unwrap();
            for t in &e.terms {
                writeln!(out, "  {:12} {:30} {:.4}", t.field, t.term, t.contribution).unwrap();
            }
            for n in &e.notes {
                writeln!(out, "  note: {n}").unwrap();
            }
        }
    } else {
        for q in read_queries() {
            let limit = std::env::var("EVAL_LIMIT")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(10);
            let hits = engine.search(&q, limit);
            let results: Vec<_> = hits
                .iter()
                .map(|h| {
                    json!({"skill_path": h.skill_path, "name": h.name, "score": h.score, "matched": h.matched,
                           "description": h.description})
                })
                .collect();
            writeln!(out, "{}", json!({"query": q, "results": results})).unwrap();
        }
    }
}
