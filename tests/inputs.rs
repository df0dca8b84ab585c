//! Input bounds (issue 13, part B), through the real binary: no single input stalls start-up
//! or a request, every bad JSON-RPC line gets one answer the client can match, nothing is
//! skipped silently.

use std::{
    io::{BufRead as _, BufReader, Write as _},
    path::Path,
    process::{Child, ChildStdin, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::common::{agent_skill_md, bin, stderr, stdout, tree};

/// The binary serving MCP on stdio over `root`, after the initialize handshake.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Session {
    fn start(root: &Path) -> Self {
        let home = tempfile::TempDir::new().unwrap();
        let mut child = bin()
            .args(["--no-default-roots", "--root"])
            .arg(root)
            .current_dir(home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn skills-mcp");
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut s = Self {
            stdin: child.stdin.take(),
            child,
            lines,
        };
        s.send(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}})
            .to_string(),
        );
        // The first start of a new engine build compiles it (slow on a busy machine).
        let init = s
            .next_within(Duration::from_secs(180))
            .expect("initialize answered");
        assert_eq!(init["id"], "init", "{init}");
        s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        std::mem::forget(home);
        s
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next answer the server writes, its notifications skipped (None after 15 s: a
    /// client would wait forever).
    fn next(&mut self) -> Option<Value> {
        self.next_within(Duration::from_secs(15))
    }

    fn next_within(&mut self, wait: Duration) -> Option<Value> {
        loop {
            let line = self.lines.recv_timeout(wait).ok()?;
            let v: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if v.get("method").is_none() {
                return Some(v);
            }
        }
    }

    /// Every line up to the answer to a ping with `id` (which proves the server still serves).
    fn until_ping(&mut self, id: i64) -> Vec<Value> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string());
        let mut before = Vec::new();
        loop {
            let v = self
                .next()
                .unwrap_or_else(|| panic!("no answer to ping {id}; before it: {before:?}"));
            if v["id"] == id && v.get("result").is_some() {
                return before;
            }
            // The server's own notifications are not answers.
            if v.get("method").is_none() {
                before.push(v);
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn small_root() -> tempfile::TempDir {
    tree(&[(
        "pdf/SKILL.md",
        &agent_skill_md(
            "pdf",
            "Fill PDF forms and extract text from PDF files.",
            "Use it.",
        ),
    )])
}

/// One bad line, one answer: the error `code`, with `id` (null when none can be matched).
#[track_caller]
fn one_error(answers: &[Value], id: Value, code: i64, input: &str) {
    assert_eq!(
        answers.len(),
        1,
        "{input}: exactly one answer, got {answers:?}"
    );
    let a = &answers[0];
    assert_eq!(a["jsonrpc"], "2.0", "{input}: {a}");
    assert_eq!(a["id"], id, "{input}: {a}");
    assert_eq!(a["error"]["code"], code, "{input}: {a}");
    assert!(
        a["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
}

#[test]
fn every_bad_json_rpc_line_gets_one_answer_the_client_can_match() {
    let root = small_root();
    let mut s = Session::start(root.path());
    let null = Value::Null;
    let cases: Vec<(&str, Value, i64)> = vec![
        ("{not json", null.clone(), -32700),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
            null.clone(),
            -32700,
        ),
        ("[]", null.clone(), -32600),
        (
            r#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
            null.clone(),
            -32600,
        ),
        ("42", null.clone(), -32600),
        (
            r#"{"jsonrpc":"2.0","id":[3],"method":"ping"}"#,
            null.clone(),
            -32600,
        ),
        (r#"{"jsonrpc":"2.0"}"#, null.clone(), -32600),
        (
            r#"{"jsonrpc":"1.0","id":10,"method":"ping"}"#,
            json!(10),
            -32600,
        ),
        (r#"{"id":11,"method":"ping"}"#, json!(11), -32600),
        (
            r#"{"jsonrpc":"2.0","id":"s12","method":7}"#,
            json!("s12"),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/list","params":[1,2]}"#,
            json!(13),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":"search"}"#,
            json!(14),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":15,"method":"resources/read","params":{"uri":5}}"#,
            json!(15),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":16,"method":"resources/read","params":{}}"#,
            json!(16),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":17,"method":"resources/directory/read","params":{"uri":[]}}"#,
            json!(17),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":18,"method":"resources/directory/read"}"#,
            json!(18),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":5}}"#,
            json!(19),
            -32602,
        ),
    ];
    for (i, (input, id, code)) in cases.iter().enumerate() {
        s.send(input);
        let answers = s.until_ping(1000 + i as i64);
        one_error(&answers, id.clone(), *code, input);
    }
    // Unknown methods stay rmcp's: -32601 with the id.
    // rmcp answers them on its own task, so the ping's answer may come first.
    s.send(r#"{"jsonrpc":"2.0","id":20,"method":"no/such"}"#);
    let mut answers = s.until_ping(2000);
    if answers.is_empty() {
        answers.extend(s.next());
    }
    one_error(&answers, json!(20), -32601, "no/such");
    // A bad notification is not answered (JSON-RPC), and the server keeps serving.
    s.send(r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#);
    assert!(s.until_ping(2001).is_empty());
    // Good requests still work.
    s.send(r#"{"jsonrpc":"2.0","id":21,"method":"tools/list"}"#);
    let list = s.next().unwrap();
    assert_eq!(list["id"], 21);
    assert!(
        list["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
}

#[test]
fn an_over_long_line_is_answered_and_serving_goes_on() {
    let root = small_root();
    let mut s = Session::start(root.path());
    // 20 MB in one line: written from a thread (the server reads it as it streams in).
    let mut stdin = s.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let head = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_skills","arguments":{"query":""#;
        stdin.write_all(head.as_bytes()).unwrap();
        let chunk = "pdf ".repeat(1 << 18);
        for _ in 0..20 {
            stdin.write_all(chunk.as_bytes()).unwrap();
        }
        stdin.write_all(b"\"}}}\n").unwrap();
        stdin.flush().unwrap();
        stdin
    });
    let started = Instant::now();
    let answer = s.next().expect("an answer to the 20 MB line");
    s.stdin = Some(writer.join().unwrap());
    // Its id was within the limit: the client that sent it gets its answer.
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("line limit"), "{message}");
    assert!(answer.to_string().len() < 1000, "no echo: {answer}");
    assert!(started.elapsed() < Duration::from_secs(15));
    assert!(s.until_ping(7).is_empty());
    // Just under the limit is read (and a too-long query refused without echo).
    let query = "pdf ".repeat(1 << 19);
    s.send(
        &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "search_skills", "arguments": {"query": query}}})
        .to_string(),
    );
    let answer = s.next().unwrap();
    assert_eq!(answer["id"], 8, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer.to_string();
    assert!(text.contains("bytes long"), "{text}");
    assert!(
        text.len() < 2000,
        "the query is not echoed: {} bytes",
        text.len()
    );
}

/// A 15 MiB `tools/call` over the line limit is answered with its own id (the top-level one,
/// not the `id` inside its arguments); a line whose id comes only after the limit gets
/// `id: null`. Neither line is kept whole in memory, and serving goes on.
#[test]
fn an_over_long_line_is_answered_with_its_own_id() {
    let root = small_root();
    let mut s = Session::start(root.path());
    let mut stdin = s.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let filler = "pdf ".repeat(1 << 18);
        for (head, tail) in [
            (
                r#"{"jsonrpc":"2.0","id":"call-15MiB","method":"tools/call","params":{"name":"search_skills","arguments":{"id":7,"query":""#,
                r#""}}}"#,
            ),
            (
                r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"search_skills","arguments":{"id":8,"query":""#,
                r#""}},"id":"late"}"#,
            ),
        ] {
            stdin.write_all(head.as_bytes()).unwrap();
            // 15 x 1 MiB.
            for _ in 0..15 {
                stdin.write_all(filler.as_bytes()).unwrap();
            }
            stdin.write_all(tail.as_bytes()).unwrap();
            stdin.write_all(b"\n").unwrap();
        }
        stdin.flush().unwrap();
        stdin
    });
    let first = s.next().expect("an answer to the first 15 MiB line");
    let second = s.next().expect("an answer to the second 15 MiB line");
    s.stdin = Some(writer.join().unwrap());
    assert_eq!(first["id"], "call-15MiB", "{first}");
    assert_eq!(second["id"], Value::Null, "{second}");
    for answer in [&first, &second] {
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("line limit"), "{message}");
        assert!(answer.to_string().len() < 1000, "no echo: {answer}");
    }
    assert!(s.until_ping(9).is_empty());
}

#[test]
fn queries_are_bounded_and_never_echoed_unbounded() {
    let root = small_root();
    let mut s = Session::start(root.path());
    let calls = [
        (
            "search_skills",
            json!({"query": "pdf ".repeat(20_000)}),
            "bytes long",
        ),
        (
            "search_skills",
            json!({"query": "a ".repeat(600)}),
            "more than 512 words",
        ),
        (
            "get_skill",
            json!({"context": "pdf ".repeat(20_000)}),
            "bytes long",
        ),
    ];
    for (i, (tool, args, says)) in calls.iter().enumerate() {
        s.send(
            &json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": tool, "arguments": args}})
            .to_string(),
        );
        let answer = s.next().unwrap();
        assert_eq!(answer["id"], i, "{answer}");
        assert_eq!(answer["result"]["isError"], true, "{tool}: {answer}");
        let text = answer.to_string();
        assert!(text.contains(says), "{tool}: {text}");
        assert!(text.len() < 2000, "{tool}: {} bytes back", text.len());
    }
    // A normal query still works and its echo is the query.
    s.send(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "search_skills", "arguments": {"query": "fill a pdf form"}}})
        .to_string(),
    );
    let answer = s.next().unwrap();
    let hits = &answer["result"]["structuredContent"];
    assert_eq!(hits["query"], "fill a pdf form", "{answer}");
    assert_eq!(hits["results"][0]["skill_path"], "pdf", "{answer}");
}

/// Run `validate` with `root` as the root (twice: the first run may compile a new engine build
/// into the cache; the second is timed), killed after 120 s (a stall fails the test, not the
/// suite).
fn validate(root: &Path) -> (std::process::Output, Duration) {
    validate_once(root);
    validate_once(root)
}

fn validate_once(root: &Path) -> (std::process::Output, Duration) {
    let started = Instant::now();
    let child = bin()
        .args(["--no-default-roots", "--root"])
        .arg(root)
        .arg("validate")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    let (tx, rx) = mpsc::channel::<()>();
    let killer = std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(120)).is_err() {
            let _ = std::process::Command::new("kill")
                .arg(id.to_string())
                .status();
        }
    });
    let out = child.wait_with_output().unwrap();
    let _ = tx.send(());
    let _ = killer.join();
    (out, started.elapsed())
}

#[test]
fn deep_nesting_in_a_skill_costs_milliseconds_and_is_located() {
    let bad = format!(
        "---\nname: bad\ndescription: {}\n---\nBody.\n",
        "[".repeat(80 * 1024)
    );
    let root = tree(&[
        ("bad/SKILL.md", &bad),
        (
            "good/SKILL.md",
            &agent_skill_md("good", "A good skill for tests.", "Body."),
        ),
    ]);
    let (o, took) = validate(root.path());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    let line = out
        .lines()
        .find(|l| l.contains("bad/SKILL.md"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.starts_with("error"), "{line}");
    assert!(line.contains("bad/SKILL.md:3"), "located: {line}");
    assert!(line.contains("deeper than 64 levels"), "{line}");
    assert!(out.contains("good/SKILL.md"), "{out}");
    // Before the bound: the engine's 20 s deadline.
    assert!(took < Duration::from_secs(8), "took {took:?}");
}

#[test]
fn deep_nesting_in_a_root_config_is_refused_quickly() {
    let root = tree(&[
        (
            "config.yaml",
            &format!("matching: {}\n", "[".repeat(80 * 1024)),
        ),
        (
            "good/SKILL.md",
            &agent_skill_md("good", "A good skill for tests.", "Body."),
        ),
    ]);
    let (o, took) = validate(root.path());
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("config.yaml"), "names the file: {err}");
    assert!(err.contains("deeper than 64 levels"), "{err}");
    assert!(err.contains("line 1"), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[cfg(unix)]
#[test]
fn fifos_and_folders_named_skill_md_are_reported_never_opened() {
    let root = tree(&[
        (
            "good/SKILL.md",
            &agent_skill_md("good", "A good skill for tests.", "Body."),
        ),
        ("folder/SKILL.md/inner.txt", "x"),
        ("docs/guide.md", "# Guide\n"),
    ]);
    std::fs::create_dir_all(root.path().join("piped")).unwrap();
    for fifo in ["piped/SKILL.md", "docs/pipe.md"] {
        let made = std::process::Command::new("mkfifo")
            .arg(root.path().join(fifo))
            .status()
            .expect("mkfifo");
        assert!(made.success());
    }
    let (o, took) = validate(root.path());
    let out = stdout(&o);
    assert!(took < Duration::from_secs(30), "took {took:?}: {out}");
    for (path, says) in [
        ("piped/SKILL.md", "FIFO"),
        ("docs/pipe.md", "FIFO"),
        ("folder/SKILL.md", "must be a regular file"),
    ] {
        let line = out
            .lines()
            .find(|l| l.contains(path))
            .unwrap_or_else(|| panic!("{path} is not reported:\n{out}"));
        assert!(line.starts_with("warning"), "{line}");
        assert!(line.contains(says), "{line}");
    }
    assert!(out.contains("ok       "), "{out}");
}

/// What must hold for the answer to any line: valid JSON-RPC errors, matched ids, bounded
/// messages.
fn check_front(line: &[u8]) {
    use skills_mcp::jsonrpc::{Verdict, check_client_message};
    let verdict = check_client_message(line);
    let parsed: Option<Value> = serde_json::from_slice(line.trim_ascii()).ok();
    match verdict {
        Verdict::Forward => {
            // Only well-formed single messages reach rmcp.
            let v = parsed.expect("forwarded lines are JSON");
            assert_eq!(v["jsonrpc"], "2.0", "{v}");
            let obj = v.as_object().expect("an object");
            assert!(obj.get("method").is_none_or(Value::is_string), "{v}");
            assert!(obj.get("params").is_none_or(Value::is_object), "{v}");
        }
        Verdict::Answer(a) => {
            assert_eq!(a["jsonrpc"], "2.0", "{a}");
            let code = a["error"]["code"].as_i64().unwrap();
            assert!([-32700, -32600, -32602].contains(&code), "{a}");
            let message = a["error"]["message"].as_str().unwrap();
            assert!(!message.is_empty() && message.chars().count() <= 400, "{a}");
            match parsed.as_ref().and_then(|v| v.get("id")) {
                Some(id @ (Value::String(_) | Value::Number(_))) if code != -32700 => {
                    assert_eq!(&a["id"], id, "the answer carries the request's id")
                }
                _ => assert!(a["id"].is_null() || code != -32700, "{a}"),
            }
            if parsed.is_none() {
                assert_eq!(code, -32700);
                assert!(a["id"].is_null());
            }
        }
        Verdict::Ignore(_) => {
            // Only blank lines and notifications (no id) go unanswered.
            if let Some(v) = parsed {
                assert!(v.get("id").is_none(), "a request must be answered: {v}");
            } else {
                assert!(line.trim_ascii().is_empty());
            }
        }
    }
}

fn fuzz_seed() -> u64 {
    std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5ECB_2026)
}

#[test]
fn fuzz_the_json_rpc_front() {
    let cases: usize = std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_000);
    let mut x = fuzz_seed() | 1;
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    const PIECES: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"",
        "\"jsonrpc\"",
        "\"2.0\"",
        "\"1.0\"",
        "\"id\"",
        "1",
        "-1",
        "1.5",
        "1e999",
        "null",
        "true",
        "\"method\"",
        "\"ping\"",
        "\"tools/call\"",
        "\"resources/read\"",
        "\"resources/directory/read\"",
        "\"initialize\"",
        "\"params\"",
        "\"uri\"",
        "\"skill://x\"",
        "\"name\"",
        "\"arguments\"",
        "\"result\"",
        "\"error\"",
        "{}",
        "[]",
        " ",
        "\\u0000",
        "\"\\ud800\"",
        "é",
    ];
    let seeds = [
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"a","method":"resources/read","params":{"uri":"skill://x"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_skills","arguments":{"query":"pdf"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
    ];
    for case in 0..cases {
        let line: Vec<u8> = if next() % 2 == 0 {
            // A good message, damaged: a byte flipped, cut, or a piece spliced in.
            let mut b = seeds[(next() % seeds.len() as u64) as usize]
                .as_bytes()
                .to_vec();
            for _ in 0..1 + next() % 3 {
                let at = (next() % (b.len() as u64 + 1)) as usize;
                match next() % 3 {
                    0 if at < b.len() => b[at] ^= 1 << (next() % 7),
                    1 => b.truncate(at),
                    _ => {
                        let piece = PIECES[(next() % PIECES.len() as u64) as usize];
                        b.splice(at..at, piece.bytes());
                    }
                }
            }
            b
        } else {
            let n = 1 + next() % 30;
            (0..n)
                .flat_map(|_| PIECES[(next() % PIECES.len() as u64) as usize].bytes())
                .collect()
        };
        let run = std::panic::catch_unwind(|| check_front(&line));
        if run.is_err() {
            panic!(
                "case {case} (FUZZ_SEED={}): keep this line in guest/fuzz-regressions/jsonrpc/:\n{}",
                fuzz_seed(),
                String::from_utf8_lossy(&line)
            );
        }
    }
}

#[test]
fn json_rpc_front_regressions_replay() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../guest/fuzz-regressions/jsonrpc");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        for line in bytes.split(|&b| b == b'\n') {
            check_front(line);
            n += 1;
        }
    }
    assert!(n > 0, "{}: no regression inputs", dir.display());
}
