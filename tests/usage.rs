//! Tests: the usage store and `skills-mcp stats`.
//!
//! The real binary over stdio (a raw JSON-RPC client) records into SQLite from a fresh home, or
//! into a real PostgreSQL (15 or later, found by `pg_config`) cluster each test starts in a
//! temporary folder on a loopback port (as root through `runuser -u postgres`, since `initdb`
//! refuses root) and stops; without PostgreSQL those tests are skipped aloud (they fail when `CI`
//! is set: `common::require_service`). `stats --json`
//! is checked against the requests made.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skills_mcp::analytics::{Analytics, AnalyticsConfig};
use skills_mcp::usage::stats::{Period, sparkline};
use skills_mcp::usage::store::Row;
use skills_mcp::usage::{Location, RecordSubjects, Recorder, Store};
use tempfile::TempDir;

use crate::common::{
    PG_PASSWORD, Pg, Service, agent_skill_md, bin, require_service, tree, unique_suffix,
};

/// Three skills: `pdf` and `csv` are found by their words, `zip` is never asked for.
fn skills() -> TempDir {
    tree(&[
        (
            "pdf/SKILL.md",
            &agent_skill_md(
                "pdf",
                "Fill PDF forms and extract PDF text",
                "Use the form tool.",
            ),
        ),
        (
            "csv/SKILL.md",
            &agent_skill_md(
                "csv",
                "Clean CSV spreadsheets and merge columns",
                "Use pandas.",
            ),
        ),
        (
            "zip/SKILL.md",
            &agent_skill_md("zip", "Compress archives into zip files", "Use zip -r."),
        ),
    ])
}

/// A server on stdio, spoken to with raw JSON-RPC lines.
pub(crate) struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: mpsc::Receiver<Value>,
    next: u64,
    stderr: PathBuf,
}

impl Client {
    /// Starts `skills-mcp --root ROOT serve` with `env`, in `home` (also HOME), and initializes.
    pub(crate) fn start(root: &Path, home: &Path, env: &[(&str, &str)], extra: &[&str]) -> Client {
        let stderr = home.join(format!("stderr-{}.log", unique_suffix()));
        let mut cmd = bin();
        cmd.arg("--no-default-roots")
            .arg("--root")
            .arg(root)
            .arg("serve")
            .args(extra)
            .current_dir(home)
            .env("HOME", home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("SKILLS_MCP_DATABASE_URL")
            .env_remove("ANALYTICS_ENDPOINT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn skills-mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && v.get("id").is_some()
                    && tx.send(v).is_err()
                {
                    return;
                }
            }
        });
        let mut s = Client {
            stdin: child.stdin.take(),
            child,
            answers: rx,
            next: 1,
            stderr,
        };
        s.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "usage-test", "version": "0"}}}),
        );
        s.wait_for(1);
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{v}").expect("write to the server");
    }

    /// Sends a `tools/call` without waiting.
    pub(crate) fn call(&mut self, tool: &str, arguments: Value) {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
    }

    /// Waits for `n` answers; panics (with the server's stderr) on an error answer or timeout.
    pub(crate) fn wait_for(&mut self, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut out = Vec::new();
        while out.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.answers.recv_timeout(left) {
                Ok(v) => {
                    assert!(v.get("error").is_none(), "{v}\n{}", self.stderr_text());
                    out.push(v);
                }
                Err(_) => panic!(
                    "{} of {n} answers; stderr:\n{}",
                    out.len(),
                    self.stderr_text()
                ),
            }
        }
        out
    }

    fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Closes stdin (the client goes away) and waits for the exit (after the last write).
    pub(crate) fn close(mut self) -> String {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the server did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stderr_text()
    }

    /// SIGKILL: no shutdown, no last write.
    fn kill9(mut self) {
        self.child.kill().unwrap();
        let _ = self.child.wait();
    }
}

/// `count` get_skill requests: `pdf` ones are served, `moon` ones find nothing.
fn load(server: &mut Client, pdf: usize, moon: usize) {
    for i in 0..pdf.max(moon) {
        if i < pdf {
            server.call("get_skill", json!({"context": "fill a pdf form"}));
        }
        if i < moon {
            server.call("get_skill", json!({"context": "land on the moon"}));
        }
    }
    server.wait_for(pdf + moon);
}

/// `skills-mcp stats --json` with `args`.
pub(crate) fn stats(root: &Path, home: &Path, args: &[&str]) -> Value {
    let out = bin()
        .arg("--no-default-roots")
        .arg("--root")
        .arg(root)
        .arg("stats")
        .arg("--json")
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("SKILLS_MCP_DATABASE_URL")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stats: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn served(report: &Value, skill: &str) -> i64 {
    report["served"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["skill"] == skill)
        .map_or(0, |s| s["count"].as_i64().unwrap())
}

#[test]
fn a_fresh_home_records_to_sqlite_and_stats_counts_equal_the_requests() {
    let root = skills();
    let home = TempDir::new().unwrap();
    let mut server = Client::start(root.path(), home.path(), &[], &[]);
    load(&mut server, 7, 3);
    server.call("report_usage", json!({"skill_path": "pdf", "useful": true}));
    server.call(
        "report_usage",
        json!({"skill_path": "pdf", "useful": false, "comment": "too short"}),
    );
    server.call(
        "report_usage",
        json!({"skill_path": "csv", "useful": false}),
    );
    server.wait_for(3);
    let stderr = server.close();

    let db = home.path().join(".local/state/skills-mcp/usage.sqlite3");
    assert!(db.is_file(), "no {}; stderr:\n{stderr}", db.display());
    let r = stats(root.path(), home.path(), &[]);
    assert_eq!(r["period"]["days"], 30, "{r}");
    assert_eq!(served(&r, "pdf"), 7, "{r}");
    assert_eq!(r["served"].as_array().unwrap().len(), 1, "{r}");
    let per_day: i64 = r["served"][0]["per_day"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .sum();
    assert_eq!(per_day, 7);
    assert_eq!(r["never_served"], json!(["csv", "zip"]), "{r}");
    assert_eq!(
        r["no_match"],
        json!([{"query": "land on the moon", "count": 3}]),
        "{r}"
    );
    let feedback = r["feedback"].as_array().unwrap();
    let pdf = feedback.iter().find(|f| f["skill"] == "pdf").unwrap();
    assert_eq!(
        (pdf["helpful"].as_i64(), pdf["not_helpful"].as_i64()),
        (Some(1), Some(1))
    );
    assert_eq!(pdf["comments"], json!(["too short"]));
    let csv = feedback.iter().find(|f| f["skill"] == "csv").unwrap();
    assert_eq!(
        (csv["helpful"].as_i64(), csv["not_helpful"].as_i64()),
        (Some(0), Some(1))
    );
    assert_eq!(r["subjects"], json!([]), "stdio has no subject");
    assert_eq!(r["events"], 13);

    // --skill narrows, the text report names the store.
    let only = stats(root.path(), home.path(), &["--skill", "csv"]);
    assert_eq!(only["served"], json!([]));
    assert_eq!(only["never_served"], json!(["csv"]));
    assert_eq!(only["no_match"], json!([]));
    let text = bin()
        .args(["--no-default-roots", "--root"])
        .arg(root.path())
        .args(["stats", "--since", "7d"])
        .env("HOME", home.path())
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains(&db.display().to_string()), "{text}");
    assert!(text.contains("\"land on the moon\""), "{text}");
    assert!(text.contains("(7 days, UTC)"), "{text}");
}

#[test]
fn usage_db_off_records_nothing_and_a_corrupt_file_is_named_while_serving_goes_on() {
    let root = skills();
    let home = TempDir::new().unwrap();
    let mut server = Client::start(root.path(), home.path(), &[], &["--usage-db", "off"]);
    load(&mut server, 2, 0);
    server.close();
    assert!(!home.path().join(".local/state").exists());

    let bad = home.path().join("bad.sqlite3");
    std::fs::write(&bad, vec![b'x'; 8192]).unwrap();
    let mut server = Client::start(
        root.path(),
        home.path(),
        &[],
        &["--usage-db", bad.to_str().unwrap()],
    );
    load(&mut server, 3, 1);
    std::thread::sleep(Duration::from_millis(800));
    let stderr = server.close();
    assert!(
        stderr.contains(&format!("usage store {}", bad.display()))
            && stderr.contains("not a database"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_delivered_twice_is_stored_once_and_a_full_buffer_counts_its_drops() {
    let dir = TempDir::new().unwrap();
    let db = dir.path().join("u.sqlite3");
    let buffer = dir.path().join("buffer.jsonl");
    let event = |i: usize| {
        json!({"id": format!("id-{i}"), "type": "skill_served", "timestamp": skills_mcp::analytics::iso8601(std::time::SystemTime::now()),
            "server_id": "dev-t", "replica_id": "r1", "data": {"context": "q", "skill_path": "pdf", "score": 1.0, "matched_keywords": [], "was_ambiguous": false}})
    };
    // The same buffer delivered twice: one row per id.
    let rows: Vec<Row> = (0..5)
        .map(|i| Row::from_event(&event(i)).unwrap())
        .collect();
    let mut store = Store::open(&Location::Sqlite(db.clone())).unwrap();
    assert_eq!(store.insert(&rows).unwrap(), 5);
    assert_eq!(store.insert(&rows).unwrap(), 0);
    assert_eq!(
        store
            .query("SELECT COUNT(*) FROM usage_events", &[])
            .unwrap()[0][0]
            .int(),
        5
    );

    // An unusable store (a folder): 12 events wait in a buffer of at most 4 (3 events and the
    // count of the 9 dropped), then go to a working store.
    let folder = dir.path().join("a-folder");
    std::fs::create_dir_all(&folder).unwrap();
    let down = Recorder::start(Location::Sqlite(folder), buffer.clone(), 4, 0);
    for i in 100..112 {
        down.record(&event(i));
    }
    std::thread::sleep(Duration::from_millis(1500));
    down.shutdown(Duration::from_secs(5));
    let lines = std::fs::read_to_string(&buffer).unwrap();
    assert_eq!(lines.lines().count(), 4, "{lines}");
    let up = Recorder::start(Location::Sqlite(db.clone()), buffer.clone(), 4, 0);
    up.shutdown(Duration::from_secs(10));
    assert_eq!(std::fs::read_to_string(&buffer).unwrap(), "");
    let mut store = Store::open(&Location::Sqlite(db)).unwrap();
    let period = Period::parse("1d", skills_mcp::usage::stats::now()).unwrap();
    let r = skills_mcp::usage::stats::report(&mut store, &period, None, 50, &[]).unwrap();
    assert_eq!(r.served[0].count, 5 + 3);
    assert_eq!(r.dropped, 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn privacy_switches_apply_before_the_store() {
    let dir = TempDir::new().unwrap();
    let db = dir.path().join("u.sqlite3");
    let config = AnalyticsConfig {
        store: db.display().to_string(),
        record_queries: false,
        record_subjects: RecordSubjects::Hash,
        subject_key: "operator-secret".into(),
        replica_id: "replica-7".into(),
        ..AnalyticsConfig::default()
    };
    let a = Analytics::start(config);
    assert!(a.is_enabled());
    skills_mcp::usage::subject::scope(Some("alice@example.com".into()), async {
        a.no_match("my secret project");
        a.skill_served("my secret project", "pdf", None, 0.9, &["pdf"], false);
    })
    .await;
    a.no_match("anonymous");
    a.shutdown().await;
    let mut store = Store::open(&Location::Sqlite(db)).unwrap();
    let rows = store
        .query(
            "SELECT type, query, subject, replica_id, data FROM usage_events ORDER BY subject",
            &[],
        )
        .unwrap();
    assert_eq!(rows.len(), 3);
    let hashed = skills_mcp::usage::recorded_subject(
        "alice@example.com",
        RecordSubjects::Hash,
        "operator-secret",
    )
    .unwrap();
    assert!(hashed.starts_with("hmac:") && !hashed.contains("alice"));
    assert_ne!(
        Some(hashed.clone()),
        skills_mcp::usage::recorded_subject("alice@example.com", RecordSubjects::Hash, "other")
    );
    let (anonymous, alice): (Vec<_>, Vec<_>) = rows
        .iter()
        .partition(|r| r[2] == skills_mcp::usage::store::Cell::Null);
    assert_eq!((anonymous.len(), alice.len()), (1, 2), "{rows:?}");
    for row in &rows {
        assert_eq!(
            row[1],
            skills_mcp::usage::store::Cell::Null,
            "no query text: {row:?}"
        );
        assert_eq!(row[3].text(), "replica-7");
        assert!(!row[4].text().contains("secret project"), "{row:?}");
        assert!(!row[4].text().contains("anonymous"), "{row:?}");
    }
    for row in alice {
        assert_eq!(row[2].text(), hashed);
    }
    // Without a key, `hash` records no subject at all.
    assert_eq!(
        skills_mcp::usage::recorded_subject("alice", RecordSubjects::Hash, ""),
        None
    );
}

#[test]
fn periods_sparklines_and_database_urls() {
    let day = skills_mcp::usage::time::DAY_MS;
    let now = skills_mcp::usage::time::parse_date("2026-03-01").unwrap() * day + 5_000;
    let p = Period::parse("7d", now).unwrap();
    assert_eq!(
        (p.since.as_str(), p.until.as_str(), p.days),
        ("2026-02-23", "2026-03-01", 7)
    );
    let p = Period::parse("2024-02-28", now).unwrap();
    assert_eq!(p.since, "2024-02-28");
    for bad in ["0d", "x", "2026-03-02", "2026-02-30"] {
        assert!(Period::parse(bad, now).is_err(), "{bad}");
    }
    assert_eq!(sparkline(&[0, 1, 4, 8], 10), " ▁▄█");
    assert_eq!(sparkline(&[1, 1, 0, 0], 2), "█ ");
    assert_eq!(
        skills_mcp::usage::time::parse_timestamp("2026-02-18T14:30:00.007Z"),
        Some(1_771_425_000_007)
    );

    use skills_mcp::usage::pg::{redact, target};
    assert_eq!(
        redact("postgres://u:pw@db:5432/usage?sslmode=require&password=x"),
        "postgres://u:***@db:5432/usage?sslmode=require"
    );
    assert_eq!(redact("host=db password=pw"), "host=db password=***");
    for mode in [
        "disable",
        "allow",
        "prefer",
        "require",
        "verify-ca",
        "verify-full",
    ] {
        assert!(
            target(&format!("postgres://u@db/x?sslmode={mode}")).is_ok(),
            "{mode}"
        );
    }
    let e = target("postgres://u:pw@db/x?sslmode=sometimes")
        .err()
        .unwrap();
    assert!(format!("{e:#}").contains("sslmode=\"sometimes\""), "{e:#}");
    assert!(!format!("{e:#}").contains("pw"), "{e:#}");
}

#[test]
fn two_servers_on_one_postgres_under_load_give_exact_counts() {
    let Some(pg_bin) = require_service(
        Service::Postgres,
        "usage::two_servers_on_one_postgres_under_load_give_exact_counts",
    ) else {
        return;
    };
    let pg = Pg::start(&pg_bin);
    let root = skills();
    let (home_a, home_b) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let url = pg.url();
    let mut a = Client::start(
        root.path(),
        home_a.path(),
        &[
            ("SKILLS_MCP_DATABASE_URL", &url),
            ("SKILLS_MCP_REPLICA_ID", "a"),
        ],
        &[],
    );
    let mut b = Client::start(
        root.path(),
        home_b.path(),
        &[
            ("SKILLS_MCP_DATABASE_URL", &url),
            ("SKILLS_MCP_REPLICA_ID", "b"),
        ],
        &[],
    );
    // Both at once, in rounds, while the writers deliver.
    for _ in 0..5 {
        for s in [&mut a, &mut b] {
            for _ in 0..60 {
                s.call("get_skill", json!({"context": "fill a pdf form"}));
            }
        }
        a.wait_for(60);
        b.wait_for(60);
    }
    let (sa, sb) = (a.close(), b.close());
    let (per, total) = pg.served();
    assert_eq!(
        per,
        vec![("a".into(), 300), ("b".into(), 300)],
        "{sa}\n{sb}"
    );
    assert_eq!(total, 600);

    let r = stats(root.path(), home_a.path(), &["--database-url", &url]);
    assert_eq!(served(&r, "pdf"), 600, "{r}");
    assert!(
        r["store"].as_str().unwrap().contains("postgres:***@"),
        "{r}"
    );
}

#[test]
fn postgres_stopped_mid_load_loses_and_doubles_nothing() {
    let Some(pg_bin) = require_service(
        Service::Postgres,
        "usage::postgres_stopped_mid_load_loses_and_doubles_nothing",
    ) else {
        return;
    };
    let pg = Pg::start(&pg_bin);
    let root = skills();
    let home = TempDir::new().unwrap();
    let url = pg.url();
    let mut s = Client::start(
        root.path(),
        home.path(),
        &[("SKILLS_MCP_DATABASE_URL", &url)],
        &[],
    );
    load(&mut s, 100, 0);
    std::thread::sleep(Duration::from_millis(600));
    pg.down();
    // The server keeps answering while the database is gone.
    load(&mut s, 100, 20);
    std::thread::sleep(Duration::from_millis(1500));
    pg.up();
    load(&mut s, 100, 0);
    let stderr = s.close();
    assert!(
        stderr.contains("usage database postgres://postgres:***@127.0.0.1"),
        "the failure names the database: {stderr}"
    );
    assert!(!stderr.contains(PG_PASSWORD), "{stderr}");
    let (_, total) = pg.served();
    assert_eq!(total, 300, "{stderr}");
    let r = stats(root.path(), home.path(), &["--database-url", &url]);
    assert_eq!(
        r["no_match"],
        json!([{"query": "land on the moon", "count": 20}])
    );
}

#[test]
fn a_sigkilled_servers_buffered_events_arrive_after_its_restart() {
    let Some(pg_bin) = require_service(
        Service::Postgres,
        "usage::a_sigkilled_servers_buffered_events_arrive_after_its_restart",
    ) else {
        return;
    };
    let pg = Pg::start(&pg_bin);
    pg.down();
    let root = skills();
    let home = TempDir::new().unwrap();
    let url = pg.url();
    let env = [("SKILLS_MCP_DATABASE_URL", url.as_str())];
    let mut s = Client::start(root.path(), home.path(), &env, &[]);
    load(&mut s, 40, 0);
    s.kill9();
    pg.up();
    // A wrong password: named, the server serves anyway, the events keep waiting.
    let wrong = url.replace(PG_PASSWORD, "not-the-password");
    let mut s = Client::start(
        root.path(),
        home.path(),
        &[("SKILLS_MCP_DATABASE_URL", wrong.as_str())],
        &[],
    );
    load(&mut s, 1, 0);
    std::thread::sleep(Duration::from_millis(800));
    let stderr = s.close();
    assert!(
        stderr.contains("password authentication failed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("usage database postgres://postgres:***@"),
        "{stderr}"
    );
    assert_eq!(pg.served().1, 0);
    // The restart with the right password delivers the killed server's events (and the one
    // the refused server buffered).
    let s = Client::start(root.path(), home.path(), &env, &[]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while pg.served().1 < 41 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    s.close();
    assert_eq!(pg.served().1, 41);
}

// ---- usage files are private ----

/// A file's or folder's permission bits.
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Waits until SQLite has made `db`'s `-wal` and `-shm` files (a write went through).
fn wait_for_wal(db: &Path, server: &Client) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    let shm = PathBuf::from(format!("{}-shm", db.display()));
    while !(wal.is_file() && shm.is_file()) {
        assert!(
            Instant::now() < deadline,
            "no {} and -shm: {}",
            wal.display(),
            server.stderr_text()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every file of `dir` (names and modes), sorted.
fn modes(dir: &Path) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                mode(&e.path()),
            )
        })
        .collect();
    out.sort();
    out
}

/// The usage files of a state folder: the store with its `-wal` and `-shm`, the buffer and its
/// two lock files.
fn usage_file_names(names: &[(String, u32)]) -> Vec<&str> {
    let mut kinds: Vec<&str> = names
        .iter()
        .map(|(n, _)| match n.as_str() {
            n if n.starts_with("usage-buffer-") && n.ends_with(".jsonl.writer.lock") => {
                "buffer.writer.lock"
            }
            n if n.starts_with("usage-buffer-") && n.ends_with(".jsonl.lock") => "buffer.lock",
            n if n.starts_with("usage-buffer-") && n.ends_with(".jsonl") => "buffer",
            n => n,
        })
        .collect();
    kinds.sort_unstable();
    kinds
}

#[test]
fn usage_files_are_created_private_in_a_private_state_folder() {
    let root = skills();
    let home = TempDir::new().unwrap();
    let state = home.path().join(".local/state/skills-mcp");
    let db = state.join("usage.sqlite3");
    let mut server = Client::start(root.path(), home.path(), &[], &[]);
    load(&mut server, 3, 1);
    wait_for_wal(&db, &server);
    // While it serves: the folder 0700, every file in it 0600 (the -wal and -shm included).
    assert_eq!(mode(&state), 0o700);
    let files = modes(&state);
    assert_eq!(
        usage_file_names(&files),
        [
            "buffer",
            "buffer.lock",
            "buffer.writer.lock",
            "usage.sqlite3",
            "usage.sqlite3-shm",
            "usage.sqlite3-wal"
        ],
        "{files:?}"
    );
    for (name, m) in &files {
        assert_eq!(*m, 0o600, "{name}");
    }
    let stderr = server.close();
    assert!(!stderr.contains("made private"), "{stderr}");
    assert_eq!(served(&stats(root.path(), home.path(), &[]), "pdf"), 3);
}

#[test]
fn usage_files_others_could_read_are_tightened_at_start_with_one_line() {
    let root = skills();
    let home = TempDir::new().unwrap();
    let state = home.path().join(".local/state/skills-mcp");
    let db = state.join("usage.sqlite3");
    let mut server = Client::start(root.path(), home.path(), &[], &[]);
    load(&mut server, 2, 0);
    server.close();
    // As an older skills-mcp left them: the folder 0755, the files 0644.
    let loosen = || {
        set_mode(&state, 0o755);
        for (name, _) in modes(&state) {
            set_mode(&state.join(name), 0o644);
        }
    };
    loosen();
    let loose = modes(&state);
    assert!(loose.len() >= 3, "{loose:?}");
    let mut server = Client::start(root.path(), home.path(), &[], &[]);
    load(&mut server, 1, 0);
    wait_for_wal(&db, &server);
    let stderr = server.close();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("made private"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains(&format!("{} 755 -> 700", state.display())),
        "{}",
        lines[0]
    );
    for (name, _) in &loose {
        assert!(
            lines[0].contains(&format!("{name} 644 -> 600")),
            "{name}: {}",
            lines[0]
        );
    }
    assert_eq!(mode(&state), 0o700);
    for (name, m) in modes(&state) {
        assert_eq!(m, 0o600, "{name}");
    }
    // Nothing left to change: no line.
    let server = Client::start(root.path(), home.path(), &[], &[]);
    let stderr = server.close();
    assert!(!stderr.contains("made private"), "{stderr}");
    // `stats` does the same before it reads.
    loosen();
    let out = bin()
        .args(["--no-default-roots", "--root"])
        .arg(root.path())
        .args(["stats", "--json"])
        .current_dir(home.path())
        .env("HOME", home.path())
        .env_remove("XDG_STATE_HOME")
        .env_remove("SKILLS_MCP_DATABASE_URL")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.contains("made private"))
            .count(),
        1,
        "{stderr}"
    );
    assert_eq!(mode(&state), 0o700);
    assert_eq!(mode(&db), 0o600);
}

#[test]
fn a_folder_the_operator_named_keeps_its_mode_and_new_files_in_it_are_private() {
    let root = skills();
    let home = TempDir::new().unwrap();
    let ops = home.path().join("ops");
    std::fs::create_dir(&ops).unwrap();
    set_mode(&ops, 0o755);
    let db = ops.join("usage.sqlite3");
    let flag = ["--usage-db", db.to_str().unwrap()];
    let mut server = Client::start(root.path(), home.path(), &[], &flag);
    load(&mut server, 2, 0);
    wait_for_wal(&db, &server);
    assert_eq!(mode(&ops), 0o755, "the operator's folder is left as it is");
    for (name, m) in modes(&ops) {
        assert_eq!(m, 0o600, "{name}");
    }
    // The buffer is in the state folder, private.
    let state = home.path().join(".local/state/skills-mcp");
    assert_eq!(mode(&state), 0o700);
    for (name, m) in modes(&state) {
        assert_eq!(m, 0o600, "{name}");
    }
    server.close();
    // A file the operator made readable by a group stays so: only the state folder is tightened.
    set_mode(&db, 0o640);
    let mut server = Client::start(root.path(), home.path(), &[], &flag);
    load(&mut server, 1, 0);
    let stderr = server.close();
    assert_eq!((mode(&ops), mode(&db)), (0o755, 0o640), "{stderr}");
    assert!(!stderr.contains("made private"), "{stderr}");
    assert_eq!(
        served(&stats(root.path(), home.path(), &flag[..]), "pdf"),
        3
    );
}
