//! Tests: analytics, against a real HTTP endpoint on 127.0.0.1 (port 0) that records what it
//! receives and can be switched down and up.

use std::collections::HashSet;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, UNIX_EPOCH};

use serde_json::{Value, json};
use skills_mcp::analytics::{Analytics, AnalyticsConfig, EventData, iso8601, server_id};
use tempfile::TempDir;

/// How the endpoint answers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Mode {
    /// 200 OK.
    Up = 0,
    /// 500 after reading the request.
    Error = 1,
    /// Closes the connection before reading anything (as if the network were down).
    Refuse = 2,
    /// Reads and records the request, then closes without answering (a lost response).
    LoseResponse = 3,
}

/// A tiny HTTP/1.1 endpoint recording every JSON body it accepted (answered 200) and every body it
/// read at all.
#[derive(Clone)]
pub struct Endpoint {
    pub url: String,
    accepted: Arc<Mutex<Vec<Value>>>,
    seen: Arc<Mutex<Vec<Value>>>,
    mode: Arc<AtomicU8>,
}

impl Endpoint {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/events", listener.local_addr().unwrap());
        let accepted = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mode = Arc::new(AtomicU8::new(Mode::Up as u8));
        let (a, s, m) = (accepted.clone(), seen.clone(), mode.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (a, s, m) = (a.clone(), s.clone(), m.clone());
                std::thread::spawn(move || serve(stream, &a, &s, &m));
            }
        });
        Self {
            url,
            accepted,
            seen,
            mode,
        }
    }

    pub fn set(&self, mode: Mode) {
        self.mode.store(mode as u8, Ordering::SeqCst);
    }

    /// Bodies answered 200.
    pub fn accepted(&self) -> Vec<Value> {
        self.accepted.lock().unwrap().clone()
    }

    /// Every event accepted, in order.
    pub fn accepted_events(&self) -> Vec<Value> {
        self.accepted()
            .iter()
            .flat_map(|b| b["events"].as_array().cloned().unwrap_or_default())
            .collect()
    }

    /// Bodies read, whatever the answer.
    pub fn seen(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }

    /// Waits until `n` events were accepted.
    pub fn wait_for_events(&self, n: usize, within: Duration) -> Vec<Value> {
        let deadline = Instant::now() + within;
        loop {
            let events = self.accepted_events();
            if events.len() >= n || Instant::now() > deadline {
                return events;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn serve(
    stream: std::net::TcpStream,
    accepted: &Mutex<Vec<Value>>,
    seen: &Mutex<Vec<Value>>,
    mode: &AtomicU8,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let m = mode.load(Ordering::SeqCst);
        if m == Mode::Refuse as u8 {
            return; // dropped: connection closed unread
        }
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" || line == "\n" {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        assert!(request_line.starts_with("POST "), "{request_line}");
        seen.lock().unwrap().push(value.clone());
        let m = mode.load(Ordering::SeqCst);
        if m == Mode::LoseResponse as u8 || m == Mode::Refuse as u8 {
            return;
        }
        let status = if m == Mode::Up as u8 {
            accepted.lock().unwrap().push(value);
            "200 OK"
        } else {
            "500 Internal Server Error"
        };
        if write!(writer, "HTTP/1.1 {status}\r\nContent-Length: 2\r\n\r\nok").is_err() {
            return;
        }
    }
}

fn config(endpoint: &str, dir: &Path) -> AnalyticsConfig {
    AnalyticsConfig {
        enabled: true,
        endpoint: endpoint.to_owned(),
        buffer_path: dir.join("buffer.jsonl"),
        timeout_seconds: 5,
        ..AnalyticsConfig::default()
    }
}

fn buffer_lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("buffer.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn ids(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

/// One event of every event type the analytics log knows.
fn track_all(a: &Analytics) {
    a.no_match("deploy the moon");
    a.ambiguous("auth", &["ui/react/auth", "api/auth"]);
    a.skill_served(
        "react login",
        "ui/react/auth",
        None,
        0.8,
        &["react", "auth"],
        false,
    );
    a.asset_served("ui/react/auth", "assets/logo.png", "image", true, 1234);
    a.script_executed(
        "ops/deploy",
        "scripts/run.sh",
        "server",
        true,
        Some(0),
        42,
        &["target"],
    );
    a.skill_feedback("ui/react/auth", true, Some("great"));
    a.refresh("git", true, Some("abc123"), Some(3), Some(24));
}

#[tokio::test]
async fn every_event_type_arrives_in_one_batch() {
    let endpoint = Endpoint::start();
    let dir = TempDir::new().unwrap();
    let a = Analytics::new(config(&endpoint.url, dir.path()));
    track_all(&a);
    assert_eq!(a.pending(), 7);
    let report = a.flush().await;
    assert_eq!(report.sent, 7, "{report:?}");
    assert_eq!(report.buffered, 0);
    assert_eq!(a.pending(), 0);
    let bodies = endpoint.accepted();
    assert_eq!(bodies.len(), 1);
    assert!(bodies[0].get("dropped").is_none());
    let events = bodies[0]["events"].as_array().unwrap();

    let expected: [(&str, &[&str]); 7] = [
        ("no_match", &["context"]),
        ("ambiguous", &["context", "candidates"]),
        (
            "skill_served",
            &[
                "context",
                "skill_path",
                "score",
                "matched_keywords",
                "was_ambiguous",
            ],
        ),
        (
            "asset_served",
            &[
                "skill_path",
                "file",
                "asset_type",
                "is_inherited",
                "size_bytes",
            ],
        ),
        (
            "script_executed",
            &[
                "skill_path",
                "file",
                "execution_mode",
                "success",
                "exit_code",
                "duration_ms",
                "args_provided",
            ],
        ),
        ("skill_feedback", &["skill_path", "useful", "comment"]),
        (
            "refresh",
            &[
                "mode",
                "success",
                "commit_hash",
                "files_changed",
                "skills_reindexed",
            ],
        ),
    ];
    let server = server_id(|k| std::env::var(k).ok());
    for (event, (kind, fields)) in events.iter().zip(expected) {
        assert_eq!(event["type"], kind);
        assert_eq!(event["server_id"], server.as_str());
        let ts = event["timestamp"].as_str().unwrap();
        assert!(ts.len() == 24 && ts.ends_with('Z'), "{ts}");
        let mut keys: Vec<&str> = event["data"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        let mut want = fields.to_vec();
        want.sort_unstable();
        assert_eq!(keys, want, "{kind}");
    }
    assert_eq!(events[2]["data"]["score"], 0.8);
    assert_eq!(events[3]["data"]["size_bytes"], 1234);
    assert_eq!(events[5]["data"]["comment"], "great");
    let unique: HashSet<String> = ids(events).into_iter().collect();
    assert_eq!(unique.len(), 7);
    assert!(buffer_lines(dir.path()).is_empty());

    // Nothing queued: no request.
    assert_eq!(a.flush().await.sent, 0);
    assert_eq!(endpoint.seen().len(), 1);
}

#[tokio::test]
async fn endpoint_down_then_up_delivers_everything_buffered() {
    let endpoint = Endpoint::start();
    let dir = TempDir::new().unwrap();
    let a = Analytics::new(config(&endpoint.url, dir.path()));

    endpoint.set(Mode::Error);
    a.no_match("one");
    a.no_match("two");
    let r = a.flush().await;
    assert_eq!((r.sent, r.buffered), (0, 2), "{r:?}");
    assert!(r.error.as_deref().unwrap().contains("500"), "{r:?}");

    endpoint.set(Mode::Refuse);
    a.no_match("three");
    let r = a.flush().await;
    assert_eq!((r.sent, r.buffered), (0, 3), "{r:?}");
    assert!(r.error.is_some());
    assert_eq!(buffer_lines(dir.path()).len(), 3);

    // A restart in between: the buffer outlives the process.
    drop(a);
    let a = Analytics::new(config(&endpoint.url, dir.path()));
    a.no_match("four");
    endpoint.set(Mode::Up);
    let r = a.flush().await;
    assert_eq!((r.sent, r.buffered), (4, 0), "{r:?}");
    let events = endpoint.accepted_events();
    let contexts: Vec<&str> = events
        .iter()
        .map(|e| e["data"]["context"].as_str().unwrap())
        .collect();
    assert_eq!(contexts, ["one", "two", "three", "four"]);
    assert!(buffer_lines(dir.path()).is_empty());
}

#[tokio::test]
async fn a_lost_response_means_at_least_once() {
    let endpoint = Endpoint::start();
    let dir = TempDir::new().unwrap();
    let a = Analytics::new(config(&endpoint.url, dir.path()));
    endpoint.set(Mode::LoseResponse);
    a.no_match("maybe delivered");
    let r = a.flush().await;
    assert!(r.error.is_some(), "{r:?}");
    assert_eq!(endpoint.seen().len(), 1);
    endpoint.set(Mode::Up);
    a.no_match("next");
    assert_eq!(a.flush().await.sent, 2);
    // The receiver got the first event twice, with the same id: it can drop the duplicate.
    let first = ids(endpoint.seen()[0]["events"].as_array().unwrap());
    let second = ids(&endpoint.accepted_events());
    assert_eq!(first[0], second[0]);
}

#[tokio::test]
async fn the_timer_flushes_and_shutdown_flushes_the_rest() {
    let endpoint = Endpoint::start();
    let dir = TempDir::new().unwrap();
    let a = Analytics::start(AnalyticsConfig {
        flush_interval_seconds: 1,
        ..config(&endpoint.url, dir.path())
    });
    a.no_match("by the timer");
    let got = tokio::task::spawn_blocking({
        let e = endpoint.clone();
        move || e.wait_for_events(1, Duration::from_secs(10))
    })
    .await
    .unwrap();
    assert_eq!(got.len(), 1);

    // Shutdown sends what the timer has not.
    let dir2 = TempDir::new().unwrap();
    let slow = Analytics::start(AnalyticsConfig {
        flush_interval_seconds: 3600,
        ..config(&endpoint.url, dir2.path())
    });
    slow.skill_feedback("a/b", false, None);
    slow.skill_feedback("a/c", true, None);
    let r = slow.shutdown().await;
    assert_eq!(r.sent, 2, "{r:?}");
    assert_eq!(endpoint.accepted_events().len(), 3);
    // Idempotent; an event after shutdown lands in the buffer for the next run.
    slow.no_match("late");
    assert_eq!(slow.shutdown().await.sent, 1);
    a.shutdown().await;
}

#[tokio::test]
async fn shutdown_with_the_endpoint_down_keeps_events_on_disk() {
    let endpoint = Endpoint::start();
    let dir = TempDir::new().unwrap();
    endpoint.set(Mode::Refuse);
    let a = Analytics::start(config(&endpoint.url, dir.path()));
    a.no_match("kept");
    let r = a.shutdown().await;
    assert_eq!((r.sent, r.buffered), (0, 1), "{r:?}");
    a.no_match("after shutdown");
    assert_eq!(buffer_lines(dir.path()).len(), 2);

    endpoint.set(Mode::Up);
    let next = Analytics::new(config(&endpoint.url, dir.path()));
    assert_eq!(next.flush().await.sent, 2);
}

#[tokio::test]
async fn corrupt_and_half_written_lines_are_skipped() {
    let endpoint = Endpoint::start();
    let dir = TempDir::new().unwrap();
    let good = json!({"id": "x-1", "type": "no_match", "timestamp": "2026-01-01T00:00:00.000Z",
        "server_id": "dev-test", "data": {"context": "kept"}});
    std::fs::write(
        dir.path().join("buffer.jsonl"),
        format!(
            "{good}\nnot json at all\n[1,2]\n{{\"no\":\"type\"}}\n\n{{\"type\":\"no_match\",\"timest"
        ),
    )
    .unwrap();
    let a = Analytics::new(config(&endpoint.url, dir.path()));
    a.no_match("new");
    let r = a.flush().await;
    assert_eq!(r.sent, 2, "{r:?}");
    assert_eq!(r.corrupt_skipped, 4);
    let events = endpoint.accepted_events();
    assert_eq!(events[0], good);
    assert_eq!(events[1]["data"]["context"], "new");
    assert!(buffer_lines(dir.path()).is_empty());

    // While the endpoint is down, corrupt lines are purged from the file (warned about once).
    std::fs::write(dir.path().join("buffer.jsonl"), "garbage\n").unwrap();
    endpoint.set(Mode::Error);
    a.no_match("x");
    let r = a.flush().await;
    assert_eq!((r.corrupt_skipped, r.buffered), (1, 1));
    assert_eq!(buffer_lines(dir.path()).len(), 1);
    assert_eq!(a.flush().await.corrupt_skipped, 0);
}

#[tokio::test]
async fn the_buffer_is_bounded_and_drops_are_reported() {
    let endpoint = Endpoint::start();
    let dir = TempDir::new().unwrap();
    let cfg = AnalyticsConfig {
        max_buffer_events: 5,
        ..config(&endpoint.url, dir.path())
    };
    let a = Analytics::new(cfg.clone());
    endpoint.set(Mode::Error);
    for i in 0..8 {
        a.no_match(&format!("e{i}"));
    }
    // The in-memory queue is bounded too.
    assert_eq!(a.pending(), 5);
    let r = a.flush().await;
    assert_eq!(r.buffered, 5, "{r:?}");
    for i in 8..10 {
        a.no_match(&format!("e{i}"));
    }
    let r = a.flush().await;
    assert_eq!(r.buffered, 5, "{r:?}");
    // The count survives a restart: it lives in the buffer file.
    drop(a);
    let a = Analytics::new(cfg);
    endpoint.set(Mode::Up);
    let r = a.flush().await;
    assert_eq!((r.sent, r.dropped_reported), (5, 5), "{r:?}");
    let body = &endpoint.accepted()[0];
    assert_eq!(body["dropped"], 5);
    let contexts: Vec<&str> = body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["data"]["context"].as_str().unwrap())
        .collect();
    assert_eq!(contexts, ["e5", "e6", "e7", "e8", "e9"]);

    // Reported once.
    a.no_match("after");
    a.flush().await;
    assert!(endpoint.accepted()[1].get("dropped").is_none());
}

#[tokio::test]
async fn disabled_analytics_do_nothing() {
    let a = Analytics::new(AnalyticsConfig::default());
    assert!(!a.is_enabled());
    assert!(a.buffer_path().is_none());
    let built = AtomicBool::new(false);
    a.track_with(|| {
        built.store(true, Ordering::SeqCst);
        EventData::NoMatch {
            context: String::new(),
        }
    });
    track_all(&a);
    assert!(!built.load(Ordering::SeqCst));
    assert_eq!(a.pending(), 0);
    assert_eq!(a.flush().await, Default::default());
    assert_eq!(a.shutdown().await, Default::default());
    // Feedback still answers (and logs).
    let r = a.report_usage("ui/react/auth", true, None);
    assert!(r.recorded);
}

#[tokio::test]
async fn report_usage_answers_and_tracks_feedback() {
    let endpoint = Endpoint::start();
    let dir = TempDir::new().unwrap();
    let a = Analytics::new(config(&endpoint.url, dir.path()));
    let r = a.report_usage("ui/react/auth", false, Some("outdated\nexample"));
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"recorded": true, "message": "Feedback recorded for ui/react/auth"})
    );
    a.flush().await;
    let events = endpoint.accepted_events();
    assert_eq!(events[0]["type"], "skill_feedback");
    assert_eq!(
        events[0]["data"],
        json!({"skill_path": "ui/react/auth", "useful": false, "comment": "outdated\nexample"})
    );
}

#[test]
fn configuration_and_formats() {
    let mut c = AnalyticsConfig::default();
    assert!(!c.enabled);
    assert_eq!(c.flush_interval_seconds, 30);
    assert!(
        c.buffer_path()
            .ends_with(".skills-mcp/analytics-buffer.jsonl")
    );
    c.apply_env(|k| (k == "ANALYTICS_ENDPOINT").then(|| " https://example.invalid/e ".into()));
    assert!(c.enabled);
    assert_eq!(c.endpoint, "https://example.invalid/e");
    let parsed: AnalyticsConfig =
        serde_yaml::from_str("enabled: true\nendpoint: http://x\nmax_buffer_events: 7\n").unwrap();
    assert_eq!(parsed.max_buffer_events, 7);
    assert_eq!(parsed.timeout_seconds, 10);

    assert_eq!(
        server_id(|k| (k == "USER").then(|| "ada".into())),
        "dev-ada"
    );
    assert_eq!(
        server_id(|k| (k == "USERNAME").then(|| "bob".into())),
        "dev-bob"
    );
    assert_eq!(server_id(|_| None), "dev-unknown");

    let at = |secs: u64, ms: u64| {
        iso8601(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(ms))
    };
    assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
    assert_eq!(at(1_771_425_000, 7), "2026-02-18T14:30:00.007Z");
    assert_eq!(at(1_709_251_199, 999), "2024-02-29T23:59:59.999Z");
    assert_eq!(at(951_868_800, 0), "2000-03-01T00:00:00.000Z");
}

/// SIGTERM (and SIGINT) stop the real server with a last flush: an event tracked a moment before
/// reaches the endpoint even though the flush interval is an hour and stdin stays open.
#[test]
fn sigterm_flushes_the_last_events() {
    use std::process::{Command, Stdio};
    for signal in ["TERM", "INT"] {
        let endpoint = Endpoint::start();
        let home = TempDir::new().unwrap();
        let root = home.path().join("skills");
        std::fs::create_dir_all(root.join("pdf")).unwrap();
        std::fs::write(
            root.join("pdf/SKILL.md"),
            "---\nname: pdf\ndescription: Fill PDF forms\n---\nUse the form tool.\n",
        )
        .unwrap();
        let config = home.path().join("config.yaml");
        std::fs::write(
            &config,
            "analytics:\n  flush_interval_seconds: 3600\n  timeout_seconds: 25\nrefresh:\n  watch: false\nsources:\n  default_roots: false\n",
        )
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_skills-mcp"))
            .arg("--config")
            .arg(&config)
            .arg("--root")
            .arg(&root)
            .current_dir(home.path())
            .env("HOME", home.path())
            .env("ANALYTICS_ENDPOINT", &endpoint.url)
            .env_remove("SKILLS_REPO")
            .env_remove("SKILLS_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(home.path().join("stderr.log")).unwrap())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
        send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        );
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        send(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "report_usage", "arguments": {"skill_path": "pdf", "useful": true}}}),
        );
        let mut answered = false;
        let mut line = String::new();
        while stdout.read_line(&mut line).unwrap() > 0 {
            let v: Value = serde_json::from_str(line.trim()).unwrap_or(Value::Null);
            line.clear();
            if v["id"] == 2 {
                assert_eq!(v["result"]["structuredContent"]["recorded"], true, "{v}");
                answered = true;
                break;
            }
        }
        assert!(answered);
        assert!(endpoint.accepted().is_empty());
        let killed = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(killed.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "SIG{signal} did not stop the server"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let events = endpoint.accepted_events();
        // On failure, say what the server said and what it kept for the next run.
        let stderr = std::fs::read_to_string(home.path().join("stderr.log")).unwrap_or_default();
        assert_eq!(
            events.len(),
            1,
            "SIG{signal}: {events:?}, exit {status}, bodies seen {:?}, stderr:\n{stderr}",
            endpoint.seen()
        );
        assert_eq!(events[0]["type"], "skill_feedback");
        drop(stdin);
    }
}
