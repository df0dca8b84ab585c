//! Tests: MCP over Streamable HTTP (`serve --http`), always through the real binary listening
//! on 127.0.0.1: rmcp's streamable-HTTP client for both protocol eras, raw HTTP for every
//! refusal (status, header, nothing served), the probes, limits, graceful shutdown and two
//! replicas answering one client.

use std::{
    io::{BufRead as _, BufReader, Read as _, Write as _},
    net::TcpStream,
    path::Path,
    process::{Child, Stdio},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt as _,
    model::{CallToolRequestParams, ProtocolVersion, ReadResourceRequestParams, ResourceContents},
    service::NotificationContext,
    transport::StreamableHttpClientTransport,
};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::common::{bin, sample_tree, write_files};

/// A running `skills-mcp serve --http 127.0.0.1:0`, killed on drop.
pub(crate) struct Server {
    child: Child,
    pub(crate) addr: String,
    log: Arc<Mutex<Vec<String>>>,
    _home: TempDir,
    _config: Option<TempDir>,
}

impl Server {
    /// Serve `root` over HTTP with `config` (YAML for `--config`, if any) and `extra` flags;
    /// returns once the index is built.
    pub(crate) fn start(root: &Path, config: Option<&str>, extra: &[&str]) -> Self {
        let server = Self::spawn(root, config, extra);
        server.wait_for("skills indexed");
        server
    }

    /// Like [`Self::start`] but returns as soon as it listens.
    fn spawn(root: &Path, config: Option<&str>, extra: &[&str]) -> Self {
        Self::spawn_with_env(root, config, extra, &[])
    }

    /// Like [`Self::spawn`], with these environment variables set.
    pub(crate) fn spawn_with_env(
        root: &Path,
        config: Option<&str>,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let home = TempDir::new().unwrap();
        let config_dir = config.map(|yaml| {
            let dir = TempDir::new().unwrap();
            std::fs::write(dir.path().join("server.yaml"), yaml).unwrap();
            dir
        });
        let mut cmd = bin();
        cmd.args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--no-default-roots",
            "--root",
        ])
        .arg(root)
        .args(extra)
        .current_dir(home.path())
        .env("HOME", home.path())
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        if let Some(dir) = &config_dir {
            cmd.arg("--config").arg(dir.path().join("server.yaml"));
        }
        let mut child = cmd.spawn().expect("spawn skills-mcp serve --http");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let log = log.clone();
            let stderr = child.stderr.take().unwrap();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    if let Some(rest) = line.split("listening on http://").nth(1) {
                        let addr = rest.split('/').next().unwrap_or_default().to_string();
                        let _ = tx.send(addr);
                    }
                    log.lock().unwrap().push(line);
                }
            });
        }
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "no listening line; stderr:\n{}",
                    log.lock().unwrap().join("\n")
                );
            }
        };
        Self {
            child,
            addr,
            log,
            _home: home,
            _config: config_dir,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub(crate) fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Wait (up to 60 s) for a stderr line containing `text`.
    pub(crate) fn wait_for(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if self.log.lock().unwrap().iter().any(|l| l.contains(text)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("no stderr line with {text:?}:\n{}", self.log());
    }

    pub(crate) fn signal(&self, signal: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer read off the socket.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

impl Answer {
    /// The value of header `name` (case-insensitive), if present.
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }

    /// The JSON-RPC message of the body (plain JSON, or the first SSE `data:` line).
    pub(crate) fn json(&self) -> Value {
        let text = if self.body.trim_start().starts_with('{') {
            self.body.clone()
        } else {
            self.body
                .lines()
                .find_map(|l| l.strip_prefix("data:"))
                .filter(|d| !d.trim().is_empty())
                .unwrap_or_default()
                .to_string()
        };
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
}

/// Send `head` (the request line and headers, without the blank line) and `body` with
/// `Connection: close`, and read the whole answer.
pub(crate) fn raw(addr: &str, head: &str, body: &[u8]) -> Answer {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let request = format!(
        "{head}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(request.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    read_answer(&mut s)
}

fn read_answer(s: &mut TcpStream) -> Answer {
    let mut bytes = Vec::new();
    let _ = s.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    Answer {
        status,
        head: head.to_string(),
        body,
    }
}

/// The payload of a chunked body (sizes in hex, each chunk followed by CRLF).
fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].strip_prefix("\r\n").unwrap_or(&after[n..]);
    }
    out
}

/// A 2026-07-28 (stateless) JSON-RPC request with its headers.
pub(crate) fn post_2026(
    addr: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: Value,
) -> Answer {
    post_2026_with(addr, id, method, name, params, "")
}

/// [`post_2026`] with `extra` header lines (each starting with `\r\n`) and the `_meta` keys
/// `params` has kept beside the lifecycle ones.
pub(crate) fn post_2026_with(
    addr: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: Value,
    extra: &str,
) -> Answer {
    let mut params = params;
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
    });
    if let Some(given) = params.get("_meta").and_then(Value::as_object) {
        for (k, v) in given {
            meta[k] = v.clone();
        }
    }
    params["_meta"] = meta;
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let name = name
        .map(|n| format!("\r\nMcp-Name: {n}"))
        .unwrap_or_default();
    raw(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}{name}{extra}"
        ),
        body.as_bytes(),
    )
}

/// A legacy `initialize` POST with `extra` header lines.
pub(crate) fn initialize_with(addr: &str, extra: &str) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "1"}}})
    .to_string();
    raw(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream{extra}"
        ),
        body.as_bytes(),
    )
}

/// Nothing of the MCP server was served: no JSON-RPC result in the body.
#[track_caller]
fn nothing_served(a: &Answer) {
    assert!(
        !a.body.contains("\"result\"") && !a.body.contains("serverInfo"),
        "{a:?}"
    );
}

fn tool_text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

async fn in_time<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(120), f)
        .await
        .expect("the test took over 120 s")
}

/// A client that counts resource list-changed notifications.
#[derive(Clone, Default)]
struct Counting {
    resources: Arc<AtomicUsize>,
}

impl ClientHandler for Counting {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.resources.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_serves_both_eras_with_the_rmcp_client() {
    in_time(async {
        let root = sample_tree();
        let server = Server::start(root.path(), None, &[]);

        // 2025-11-25 and older: initialize, a session, SSE.
        let transport = StreamableHttpClientTransport::from_uri(server.url());
        let client = Counting::default();
        let counter = client.resources.clone();
        let legacy = client.serve(transport).await.expect("initialize over HTTP");
        let info = legacy.peer_info().unwrap();
        assert_eq!(info.server_info.as_ref().unwrap().name, "skills-mcp");
        let r = legacy
            .call_tool(
                CallToolRequestParams::new("search_skills")
                    .with_arguments(json!({"query": "pdf tables"}).as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        assert_ne!(r.is_error, Some(true), "{}", tool_text(&r));
        assert!(tool_text(&r).contains("tools/pdf"), "{}", tool_text(&r));
        let read = legacy
            .read_resource(ReadResourceRequestParams::new(
                "skill://tools/pdf/references/notes.md",
            ))
            .await
            .unwrap();
        match &read.contents[0] {
            ResourceContents::TextResourceContents { text, .. } => {
                assert_eq!(text, "Some notes.\n")
            }
            other => panic!("{other:?}"),
        }

        // Live reload reaches the session's stream as a list-changed notification.
        write_files(
            root.path(),
            &[(
                "late/SKILL.md",
                "---\nname: late\ndescription: A skill added while serving\n---\nLate.\n",
            )],
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while counter.load(Ordering::SeqCst) == 0 {
            assert!(
                Instant::now() < deadline,
                "no list_changed:\n{}",
                server.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        legacy.cancel().await.unwrap();

        // 2026-07-28: server/discover, stateless POSTs.
        let transport = StreamableHttpClientTransport::from_uri(server.url());
        let modern = ()
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("discover over HTTP");
        let r = modern
            .call_tool(
                CallToolRequestParams::new("search_skills")
                    .with_arguments(json!({"query": "late"}).as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        assert!(tool_text(&r).contains("\"late\""), "{}", tool_text(&r));
        let read = modern
            .read_resource(ReadResourceRequestParams::new("skill://late/SKILL.md"))
            .await
            .unwrap();
        assert!(format!("{:?}", read.contents[0]).contains("Late."));
        modern.cancel().await.unwrap();

        // One access log line per request: method, tool or resource, status, latency.
        let log = server.log();
        assert!(
            log.lines().any(|l| l
                .contains("skills-mcp: http: POST /mcp tools/call search_skills 200 ")
                && l.ends_with("ms")),
            "{log}"
        );
        assert!(
            log.contains("resources/read skill://tools/pdf/references/notes.md 200"),
            "{log}"
        );
    })
    .await
}

#[test]
fn http_refuses_foreign_origin_and_host_and_checks_headers() {
    let root = sample_tree();
    let server = Server::start(root.path(), None, &[]);
    let addr = &server.addr;

    // A good request first (so the refusals below are refusals, not a broken server).
    let ok = initialize_with(
        addr,
        &format!("\r\nHost: {addr}\r\nOrigin: http://localhost:3000"),
    );
    assert_eq!(ok.status, 200, "{ok:?}");
    assert!(ok.body.contains("serverInfo"), "{ok:?}");

    let foreign_origin = initialize_with(
        addr,
        &format!("\r\nHost: {addr}\r\nOrigin: http://evil.example.com"),
    );
    assert_eq!(foreign_origin.status, 403, "{foreign_origin:?}");
    assert!(foreign_origin.body.contains("Origin"), "{foreign_origin:?}");
    assert!(foreign_origin.header("mcp-session-id").is_none());
    nothing_served(&foreign_origin);

    let foreign_host = initialize_with(addr, "\r\nHost: evil.example.com");
    assert_eq!(foreign_host.status, 403, "{foreign_host:?}");
    assert!(foreign_host.body.contains("Host"), "{foreign_host:?}");
    assert!(foreign_host.header("mcp-session-id").is_none());
    nothing_served(&foreign_host);

    // 2026-07-28 is stateless: GET and DELETE are 405 with Allow.
    for method in ["GET", "DELETE"] {
        let a = raw(
            addr,
            &format!(
                "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2026-07-28"
            ),
            b"",
        );
        assert_eq!(a.status, 405, "{method}: {a:?}");
        assert!(
            a.header("allow").is_some_and(|v| v.contains("POST")),
            "{a:?}"
        );
        nothing_served(&a);
    }

    // A valid stateless request, then the same with a wrong or unknown protocol version.
    let good = post_2026(addr, 7, "tools/list", None, json!({}));
    assert_eq!(good.status, 200, "{good:?}");
    assert!(good.json()["result"]["tools"].is_array(), "{good:?}");

    let body = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let mismatch = raw(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Method: tools/list"
        ),
        body.as_bytes(),
    );
    assert_eq!(mismatch.status, 400, "{mismatch:?}");
    nothing_served(&mismatch);
    let unsupported = raw(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 1999-01-01\r\nMcp-Method: tools/list"
        ),
        body.as_bytes(),
    );
    assert_eq!(unsupported.status, 400, "{unsupported:?}");
    nothing_served(&unsupported);
    let method_mismatch = raw(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: prompts/list"
        ),
        body.as_bytes(),
    );
    assert_eq!(method_mismatch.status, 400, "{method_mismatch:?}");
    nothing_served(&method_mismatch);

    let log = server.log();
    // Refused by the Host/Origin guard before the body is read: no method in the log line.
    assert!(log.contains("POST /mcp - 403"), "{log}");
    assert!(log.contains("GET /mcp - 405"), "{log}");
}

#[test]
fn http_limits_body_size_in_flight_requests_and_slow_requests() {
    let root = sample_tree();
    let server = Server::start(
        root.path(),
        Some(
            "server:\n  max_body_bytes: 4096\n  max_in_flight: 1\n  request_timeout_seconds: 2\n  header_read_timeout_seconds: 1\n",
        ),
        &[],
    );
    let addr = &server.addr;

    // Oversized body, declared: refused before it is sent (so nothing is left unread).
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: 5000\r\n\r\n"
    )
    .unwrap();
    let a = read_answer(&mut s);
    assert_eq!(a.status, 413, "{a:?}");
    assert!(a.body.contains("4096"), "{a:?}");
    nothing_served(&a);
    // Oversized body, chunked (no Content-Length).
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    // 2 x 2100 bytes: over the limit, and all of it read by the server before it answers.
    for _ in 0..2 {
        let _ = write!(s, "834\r\n{}\r\n", " ".repeat(0x834));
    }
    let a = read_answer(&mut s);
    assert_eq!(a.status, 413, "{a:?}");
    nothing_served(&a);

    // One request in flight (its body not finished) holds the only slot: the next is 503 at
    // once, with Retry-After; the stalled one gets 504 at its timeout.
    let mut stalled = TcpStream::connect(addr).unwrap();
    stalled
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stalled,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let busy = post_2026(addr, 1, "tools/list", None, json!({}));
    assert_eq!(busy.status, 503, "{busy:?}");
    assert_eq!(busy.header("retry-after").as_deref(), Some("1"), "{busy:?}");
    nothing_served(&busy);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "503 must not wait"
    );
    let timed_out = read_answer(&mut stalled);
    assert_eq!(timed_out.status, 504, "{timed_out:?}");
    nothing_served(&timed_out);
    // The slot is free again.
    let ok = post_2026(addr, 2, "tools/list", None, json!({}));
    assert_eq!(ok.status, 200, "{ok:?}");

    // A connection that sends no complete header is closed after header_read_timeout_seconds.
    let mut slow = TcpStream::connect(addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(slow, "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n").unwrap();
    let started = Instant::now();
    let mut buf = Vec::new();
    let n = slow.read_to_end(&mut buf);
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_secs(5),
        "closed after {elapsed:?} ({n:?}, {:?})",
        String::from_utf8_lossy(&buf)
    );
    // An idle keep-alive connection too (nothing sent at all).
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started = Instant::now();
    let _ = idle.read_to_end(&mut buf);
    assert!(started.elapsed() < Duration::from_secs(5));

    let log = server.log();
    assert!(log.contains("POST /mcp - 413"), "{log}");
    assert!(log.contains("POST /mcp - 503"), "{log}");
    assert!(log.contains("POST /mcp - 504"), "{log}");
}

#[test]
fn http_probes_answer_outside_mcp() {
    let root = sample_tree();
    let server = Server::start(root.path(), None, &[]);
    let addr = &server.addr;
    let health = raw(addr, &format!("GET /healthz HTTP/1.1\r\nHost: {addr}"), b"");
    assert_eq!(health.status, 200, "{health:?}");
    assert_eq!(health.body, "ok\n");
    let ready = raw(addr, &format!("GET /readyz HTTP/1.1\r\nHost: {addr}"), b"");
    assert_eq!(ready.status, 200, "{ready:?}");
    assert!(ready.body.starts_with("ready: "), "{ready:?}");
    // Probes come from load balancers with any Host; they reveal nothing of the skills.
    let probe = raw(addr, "GET /readyz HTTP/1.1\r\nHost: 10.0.0.7:8080", b"");
    assert_eq!(probe.status, 200, "{probe:?}");
    let missing = raw(addr, &format!("GET /nope HTTP/1.1\r\nHost: {addr}"), b"");
    assert_eq!(missing.status, 404, "{missing:?}");
}

#[test]
fn http_refuses_a_non_loopback_address_without_auth_or_the_flag() {
    let root = sample_tree();
    let out = bin()
        .args([
            "serve",
            "--http",
            "0.0.0.0:0",
            "--no-default-roots",
            "--root",
        ])
        .arg(root.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0:0"),
        "{stderr}"
    );
    assert!(stderr.contains("--public-without-auth"), "{stderr}");
    assert!(!stderr.contains("listening on"), "{stderr}");

    // The same in the configuration of a root is ignored (roots are untrusted)...
    write_files(
        root.path(),
        &[(
            "config.yaml",
            "server:\n  public_without_auth: true\n  listen: 0.0.0.0:0\n",
        )],
    );
    let out = bin()
        .args([
            "serve",
            "--http",
            "0.0.0.0:0",
            "--no-default-roots",
            "--root",
        ])
        .arg(root.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("`server.public_without_auth` ignored"),
        "{stderr}"
    );
    assert!(stderr.contains("refusing to listen"), "{stderr}");

    // ... and the operator's explicit flag opens it.
    let mut child = bin()
        .args([
            "serve",
            "--http",
            "0.0.0.0:0",
            "--public-without-auth",
            "--no-default-roots",
            "--root",
        ])
        .arg(root.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    let listening = lines.by_ref().map_while(Result::ok).find(|l| {
        seen.push(l.clone());
        l.contains("listening on http://0.0.0.0:")
    });
    let _ = child.kill();
    let _ = child.wait();
    assert!(listening.is_some(), "{seen:?}");
    assert!(
        seen.iter().any(|l| l.contains("WITHOUT authentication")),
        "{seen:?}"
    );
}

#[test]
fn http_shutdown_finishes_the_request_in_flight() {
    let root = sample_tree();
    let server = Server::start(root.path(), None, &[]);
    let addr = server.addr.clone();
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "search_skills", "arguments": {"query": "pdf"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let (first, rest) = body.split_at(20);
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: search_skills\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{first}",
        body.len()
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    server.signal(rustix::process::Signal::TERM);
    server.wait_for("waiting up to 10 s for 1 request(s) in flight");
    // No new connection is accepted while it drains.
    assert!(
        TcpStream::connect(&addr).is_err()
            || raw(
                &addr,
                &format!("GET /healthz HTTP/1.1\r\nHost: {addr}"),
                b""
            )
            .status
                != 200
    );
    s.write_all(rest.as_bytes()).unwrap();
    let a = read_answer(&mut s);
    assert_eq!(a.status, 200, "{a:?}");
    let v = a.json();
    assert!(
        v["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("tools/pdf")),
        "{v}"
    );
    let mut server = server;
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still running:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}\n{}", server.log());
    let log = server.log();
    assert!(log.contains("SIGTERM; stopping"), "{log}");
    assert!(
        log.contains("POST /mcp tools/call search_skills 200"),
        "{log}"
    );
    assert!(!log.contains("still in flight"), "{log}");
}

#[test]
fn http_two_replicas_answer_one_client_alternately() {
    let root = sample_tree();
    let a = Server::spawn(root.path(), None, &[]);
    let b = Server::spawn(root.path(), None, &[]);
    a.wait_for("skills indexed");
    b.wait_for("skills indexed");
    let replicas = [&a.addr, &b.addr];
    let mut results = Vec::new();
    for (i, (method, name, params)) in [
        ("tools/list", None, json!({})),
        (
            "tools/call",
            Some("search_skills"),
            json!({"name": "search_skills", "arguments": {"query": "react login"}}),
        ),
        (
            "resources/read",
            Some("skill://tools/pdf/references/notes.md"),
            json!({"uri": "skill://tools/pdf/references/notes.md"}),
        ),
        (
            "tools/call",
            Some("get_skill"),
            json!({"name": "get_skill", "arguments": {"skill_path": "ui/react/auth"}}),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let addr = replicas[i % 2];
        let answer = post_2026(addr, i as u64 + 1, method, name, params);
        assert_eq!(
            answer.status,
            200,
            "{method} on replica {}: {answer:?}",
            i % 2
        );
        let v = answer.json();
        assert_eq!(v["id"], json!(i + 1), "{v}");
        assert!(v.get("result").is_some(), "{method}: {v}");
        results.push(v["result"].clone());
    }
    assert!(results[1].to_string().contains("ui/react/auth"));
    assert!(results[2].to_string().contains("Some notes."));
    assert!(results[3].to_string().contains("Auth rules."));
    assert!(!a.log().contains("tools/call search_skills"), "{}", a.log());
    assert!(
        b.log().contains("tools/call search_skills 200"),
        "{}",
        b.log()
    );
    assert!(
        a.log().contains("resources/read skill://tools/pdf"),
        "{}",
        a.log()
    );
}

/// A client that keeps every `notifications/message` it gets.
#[allow(deprecated)] // rmcp marks MCP logging deprecated (SEP-2577); clients still use it.
#[derive(Clone, Default)]
struct Logged {
    messages: Arc<Mutex<Vec<rmcp::model::LoggingMessageNotificationParam>>>,
}

impl ClientHandler for Logged {
    #[allow(deprecated)] // rmcp marks MCP logging deprecated (SEP-2577); clients still use it.
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.messages.lock().unwrap().push(params);
    }
}

#[allow(deprecated)] // MCP logging: see `Logged`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sessions_get_skill_findings_but_never_another_clients_requests() {
    in_time(async {
        let root = sample_tree();
        let server = Server::start(root.path(), None, &[]);
        // Session A listens at debug; session B works.
        let a = Logged::default();
        let seen = a.messages.clone();
        let a = a
            .serve(StreamableHttpClientTransport::from_uri(server.url()))
            .await
            .expect("session A");
        a.set_level(rmcp::model::SetLevelRequestParams::new(
            rmcp::model::LoggingLevel::Debug,
        ))
        .await
        .unwrap();
        let b =
            ().serve(StreamableHttpClientTransport::from_uri(server.url()))
                .await
                .expect("session B");
        let secret_query = "b-private-query-about-payroll";
        let r = b
            .call_tool(
                CallToolRequestParams::new("search_skills")
                    .with_arguments(json!({"query": secret_query}).as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        assert_ne!(r.is_error, Some(true), "{}", tool_text(&r));

        // A skill breaks on disk: A hears of it, naming the file.
        write_files(
            root.path(),
            &[(
                "broken/SKILL.md",
                "---\nname: broken\ndescription: [unclosed\n---\nx\n",
            )],
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let found = seen.lock().unwrap().iter().any(|m| {
                m.data
                    .as_str()
                    .is_some_and(|d| d.contains("broken/SKILL.md"))
            });
            if found {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "no notifications/message naming broken/SKILL.md: {:?}\n{}",
                seen.lock().unwrap(),
                server.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The operator's log has B's request; A's notifications never do.
        server.wait_for("tools/call search_skills 200");
        let messages = seen.lock().unwrap().clone();
        for m in &messages {
            let text = m.data.to_string();
            assert!(!text.contains("POST /mcp"), "{m:?}");
            assert!(!text.contains("search_skills"), "{m:?}");
            assert!(!text.contains(secret_query), "{m:?}");
            let logger = m.logger.as_deref().unwrap_or_default();
            assert!(
                [
                    "skills_mcp::mcp",
                    "skills_mcp::sources",
                    "skills_mcp::catalog"
                ]
                .iter()
                .any(|t| logger.starts_with(t)),
                "{m:?}"
            );
        }
        a.cancel().await.unwrap();
        b.cancel().await.unwrap();
    })
    .await
}

#[test]
fn http_drain_answers_readyz_503_while_serving_then_exits() {
    let root = sample_tree();
    let server = Server::start(
        root.path(),
        Some("analytics:\n  replica_id: rx\n"),
        &["--shutdown-delay", "2"],
    );
    let addr = server.addr.clone();
    // Session ids start with the replica id; one it does not hold is the spec's 404.
    let init = initialize_with(&addr, &format!("\r\nHost: {addr}"));
    assert_eq!(init.status, 200, "{init:?}");
    let sid = init.header("mcp-session-id").unwrap();
    assert!(sid.starts_with("rx.") && sid.len() == 3 + 36, "{sid}");
    let unknown = raw(
        &addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: rx.00000000-0000-0000-0000-000000000000"
        ),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            .to_string()
            .as_bytes(),
    );
    assert_eq!(unknown.status, 404, "{unknown:?}");

    let readyz = |addr: &str| raw(addr, &format!("GET /readyz HTTP/1.1\r\nHost: {addr}"), b"");
    assert_eq!(readyz(&addr).status, 200);
    let signalled = Instant::now();
    server.signal(rustix::process::Signal::TERM);
    server.wait_for("draining: /readyz answers 503 for 2 s");
    let r = readyz(&addr);
    assert_eq!((r.status, r.body.as_str()), (503, "not ready: draining\n"));
    // Requests are still answered while draining.
    let a = post_2026(
        &addr,
        3,
        "tools/call",
        Some("search_skills"),
        json!({"name": "search_skills", "arguments": {"query": "pdf"}}),
    );
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        a.json()["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("tools/pdf"))
    );
    assert!(signalled.elapsed() < Duration::from_secs(2));
    let mut server = server;
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "{}", server.log());
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}\n{}", server.log());
    // The listener stayed open for the delay.
    assert!(signalled.elapsed() >= Duration::from_secs(2));
    let log = server.log();
    assert!(log.contains("SIGTERM; stopping"), "{log}");
    assert!(log.contains("http: stopped accepting"), "{log}");
    assert!(TcpStream::connect(&addr).is_err());
}

#[test]
fn health_asks_a_probe_and_exits_by_its_answer() {
    let root = sample_tree();
    let server = Server::start(root.path(), None, &[]);
    let url = format!("http://{}/readyz", server.addr);
    let ok = crate::common::run(&["health", "--url", &url]);
    crate::common::assert_exit(&ok, 0);
    assert!(
        crate::common::stdout(&ok).starts_with("200 ready: "),
        "{ok:?}"
    );
    let missing = format!("http://{}/nowhere", server.addr);
    let not_found = crate::common::run(&["health", "--url", &missing]);
    crate::common::assert_exit(&not_found, 1);
    assert!(crate::common::stdout(&not_found).starts_with("404"));
    drop(server);
    let refused = crate::common::run(&["health", "--url", &url]);
    crate::common::assert_exit(&refused, 1);
    assert!(
        crate::common::stderr(&refused).contains("Connection refused"),
        "{refused:?}"
    );
}
