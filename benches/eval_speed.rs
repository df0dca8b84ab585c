//! `skills-mcp eval` speed (issue 39): 10,000 eval queries over the combined corpus (2,620
//! skills) through the real binary, one index build included (`SKILLS_MCP_INDEX_CACHE=off`),
//! the compiled engine cached (one untimed run first). Goal: under 3 s on 2 cores.
//!
//! Set-up (untimed): the corpus linked (`cp -al`, or copied) into
//! `target/bench-corpus/eval-<corpus>/`, then an `evals/eval_queries.json` written, where the
//! engine says a skill's eval file is, in 500 skills spread over the corpus, 20 queries each
//! (10 that should trigger, 10 that should not): 10,000 in all. The queries are the 240 dev
//! requests of `../shared/eval/dev_queries.json` and each skill's description cut to its first
//! 12 words, dealt round-robin, so they are as long and as varied as requests are.
//!
//! Printed: the wall time of each of `RUNS` runs (default 5) of `skills-mcp --no-default-roots
//! --root DIR eval --json` (its output read and dropped), the fastest and the median, and the
//! queries a second. `cargo bench -p skills-mcp --bench eval_speed`; `-- --test` runs the
//! bundled skills once (20 eval files of 20 queries).

#[path = "support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use support::Corpus;

/// Skills given an eval file, and queries in each.
const FILES: usize = 500;
const PER_FILE: usize = 20;

/// The corpus copied (hard links where the file system allows) below the scratch folder, with
/// eval files in `files` skills: `(root, files written, queries written)`.
fn prepare(corpus: &Corpus, files: usize) -> (PathBuf, usize, usize) {
    let dir = support::scratch_dir().join(format!("eval-{}", corpus.name));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("removing the previous copy");
    }
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    let linked = Command::new("cp")
        .arg("-al")
        .arg(&corpus.root)
        .arg(&dir)
        .status()
        .is_ok_and(|s| s.success());
    if !linked {
        let _ = std::fs::remove_dir_all(&dir);
        let copied = Command::new("cp")
            .arg("-R")
            .arg(&corpus.root)
            .arg(&dir)
            .status()
            .expect("cp");
        assert!(copied.success(), "copying {}", corpus.root.display());
    }
    let index = support::native_index(corpus);
    let skills = index.skills();
    let mut pool: Vec<String> = support::dev_requests();
    for s in &skills {
        let words: Vec<&str> = s.description.split_whitespace().take(12).collect();
        if words.len() >= 3 {
            pool.push(words.join(" "));
        }
    }
    pool.sort();
    pool.dedup();
    // Without ../shared (the dev requests) the bundled skills' 12 descriptions are the whole
    // pool: the files of `--test` mode are then that long, never a query twice.
    let per_file = PER_FILE.min(pool.len());
    assert!(per_file >= 2, "{} distinct queries", pool.len());
    let step = (skills.len() / files.max(1)).max(1);
    let mut written = 0;
    let mut files_written = 0;
    let mut next = 0;
    for s in skills.iter().step_by(step).take(files) {
        let file = index.eval_file(&s.skill_path).expect("eval file");
        let entries: Vec<serde_json::Value> = (0..per_file)
            .map(|j| {
                let query = &pool[(next + j) % pool.len()];
                serde_json::json!({"query": query, "should_trigger": j < per_file / 2})
            })
            .collect();
        next += per_file;
        let path = dir.join(&file.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        // A linked file is replaced, never written through (that would change the original).
        let _ = std::fs::remove_file(&path);
        std::fs::write(&path, serde_json::to_vec(&entries).unwrap()).unwrap();
        written += entries.len();
        files_written += 1;
    }
    (dir, files_written, written)
}

/// One run of `eval --json` on `root`: its wall time in seconds and the queries it answered.
fn run(root: &Path) -> (f64, u64) {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_skills-mcp"))
        .env("SKILLS_MCP_INDEX_CACHE", "off")
        .env_remove("SKILLS_DIR")
        .args(["--no-default-roots", "--log-level", "error", "--root"])
        .arg(root)
        .args(["eval", "--json", "--min-pass-rate", "0"])
        .stdin(Stdio::null())
        .output()
        .expect("run skills-mcp eval");
    let seconds = start.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("eval --json");
    (seconds, v["total"].as_u64().unwrap_or(0))
}

fn main() {
    let test = support::test_mode();
    let (corpus, files, runs) = if test {
        (support::bundled(), 20, 1)
    } else {
        let Some(corpus) = support::combined() else {
            eprintln!("the combined corpus is absent: nothing to measure");
            return;
        };
        let runs = std::env::var("RUNS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(5);
        (corpus, FILES, runs)
    };
    let (root, files_written, written) = prepare(&corpus, files);
    // The compiled engine cached, the files in the page cache.
    let (_, total) = run(&root);
    assert_eq!(total as usize, written, "every query answered");
    let mut times: Vec<f64> = (0..runs).map(|_| run(&root).0).collect();
    for (i, t) in times.iter().enumerate() {
        println!("run {}: {t:.3} s", i + 1);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "eval on {} ({} skills with eval files, {written} queries, one index build each run): fastest {:.3} s, median {median:.3} s, {:.0} queries/s at the median",
        corpus.name,
        files_written,
        times[0],
        written as f64 / median
    );
    if !test {
        let _ = std::fs::remove_dir_all(&root);
    }
}
