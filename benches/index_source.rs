//! The discovery index end to end (issue 40, "Speed": a 100-skill index fetched, verified and
//! served in under 5 s on loopback). One real `serve --http` publishes 100 skills (half of one
//! file, half with scripts and references: `archive` entries); a second real `serve --http`
//! consumes its index (`sources.indexes`): the time from spawning the consumer to its
//! `skills indexed` line covers fetching the index and the 100 entries, checking every digest,
//! unpacking the archives, the engine's name check and the consumer's own index build. Then the
//! consumer's own index is read back and every entry's digest compared with the publisher's.
//!
//! ```text
//! cargo bench -p skills-mcp --bench index_source              # 100 skills, 3 runs
//! cargo bench -p skills-mcp --bench index_source -- --skills 500
//! ```

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

struct Server {
    child: Child,
    addr: String,
    ready: Duration,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `serve --http 127.0.0.1:0` over `root` with `config`, in `home`; returns once it has indexed.
fn start(root: &Path, config: Option<&Path>, home: &Path) -> Server {
    let started = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skills-mcp"));
    cmd.args([
        "serve",
        "--http",
        "127.0.0.1:0",
        "--no-default-roots",
        "--usage-db",
        "off",
        "--root",
    ])
    .arg(root)
    .env("HOME", home)
    .env_remove("SKILLS_DIR")
    .current_dir(home)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    if let Some(config) = config {
        cmd.arg("--config").arg(config);
    }
    let mut child = cmd.spawn().expect("spawn skills-mcp serve --http");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut addr = None;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("listening on http://").nth(1) {
                addr = rest.split('/').next().map(str::to_string);
            }
            if line.contains("skills indexed") {
                let _ = tx.send(addr.clone());
            }
            if line.contains("error") || line.contains("warn") {
                eprintln!("  server: {line}");
            }
        }
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(120))
        .ok()
        .flatten()
        .expect("the server did not become ready");
    Server {
        child,
        addr,
        ready: started.elapsed(),
    }
}

fn get(url: &str) -> Vec<u8> {
    let mut response = ureq::get(url)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    response
        .body_mut()
        .with_config()
        .limit(1 << 30)
        .read_to_vec()
        .unwrap()
}

/// name -> digest of the index at `addr`.
fn digests(addr: &str) -> Vec<(String, String)> {
    let index: Value = serde_json::from_slice(&get(&format!(
        "http://{addr}/.well-known/agent-skills/index.json"
    )))
    .unwrap();
    let mut out: Vec<(String, String)> = index["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["digest"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

fn write_skills(root: &Path, n: usize) {
    for i in 0..n {
        let name = format!("skill-{i:04}");
        let dir = root.join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        let body = format!(
            "---\nname: {name}\ndescription: Skill number {i} handles task {i} for the bench\n---\n# {name}\n\n{}\n",
            "Step by step instructions for the task. ".repeat(40)
        );
        std::fs::write(dir.join("SKILL.md"), body).unwrap();
        if i % 2 == 1 {
            std::fs::create_dir_all(dir.join("scripts")).unwrap();
            std::fs::create_dir_all(dir.join("references")).unwrap();
            std::fs::write(
                dir.join("scripts/run.py"),
                format!("print({i})\n").repeat(50),
            )
            .unwrap();
            std::fs::write(dir.join("references/notes.md"), "Notes.\n".repeat(200)).unwrap();
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let skills = args
        .iter()
        .position(|a| a == "--skills")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(100usize);
    let runs = if args.iter().any(|a| a == "--test") {
        1
    } else {
        3
    };
    let scratch = tempfile::TempDir::new().unwrap();
    let root = scratch.path().join("published");
    write_skills(&root, skills);
    let publisher_home = scratch.path().join("publisher");
    std::fs::create_dir_all(&publisher_home).unwrap();
    let publisher = start(&root, None, &publisher_home);
    let theirs = digests(&publisher.addr);
    assert_eq!(theirs.len(), skills);
    println!(
        "index_source: {skills} skills published by {}",
        publisher.addr
    );
    let mut times = Vec::new();
    for run in 0..runs {
        // A fresh consumer each run: nothing cached on disk.
        let home = scratch.path().join(format!("consumer-{run}"));
        let empty = home.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        let config = home.join("server.yaml");
        std::fs::write(
            &config,
            format!(
                "sources:\n  indexes:\n    - http://{}/.well-known/agent-skills/index.json\n",
                publisher.addr
            ),
        )
        .unwrap();
        let consumer = start(&empty, Some(&config), &home);
        let ours = digests(&consumer.addr);
        assert_eq!(ours, theirs, "the consumer serves the same bytes");
        println!(
            "  run {run}: fetched, verified and served {skills} skills in {:.2} s (consumer start to ready)",
            consumer.ready.as_secs_f64()
        );
        times.push(consumer.ready.as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    println!(
        "index_source: median {:.2} s, fastest {:.2} s over {runs} run(s) (goal: under 5 s)",
        times[times.len() / 2],
        times[0]
    );
}
