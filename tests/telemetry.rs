//! Tests: Prometheus metrics (`--metrics-listen`) and OTLP traces, through the real binary.
//! Requests of known kinds go over HTTP (raw, on 127.0.0.1) and stdio; `/metrics` is scraped
//! and its counts compared with the requests made. Traces go to an OTLP/HTTP receiver started
//! here on 127.0.0.1, which decodes the protobuf the server sends.

use std::{
    collections::BTreeMap,
    io::{BufRead as _, BufReader, Write as _},
    process::Stdio,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::common::{bin, sample_tree};
use crate::http::{Answer, Server, initialize_with, post_2026, post_2026_with, raw};

/// A text no metric may show: it is only ever in a query.
const SECRET_QUERY: &str = "zebra-quokka-7731";

/// The address of the metrics listener, from the server's log.
fn metrics_addr(log: &str) -> String {
    log.lines()
        .find_map(|l| l.split("metrics on http://").nth(1))
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no metrics line in\n{log}"))
        .to_string()
}

fn scrape(addr: &str, token: Option<&str>) -> Answer {
    let auth = token
        .map(|t| format!("\r\nAuthorization: Bearer {t}"))
        .unwrap_or_default();
    raw(
        addr,
        &format!("GET /metrics HTTP/1.1\r\nHost: {addr}{auth}"),
        b"",
    )
}

/// Every sample of an exposition: `name{labels}` to value.
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            Some((series.to_string(), value.parse().ok()?))
        })
        .collect()
}

#[track_caller]
fn count(samples: &BTreeMap<String, f64>, series: &str) -> f64 {
    *samples
        .get(series)
        .unwrap_or_else(|| panic!("no {series} in\n{samples:#?}"))
}

fn search(addr: &str, id: u64) -> Answer {
    post_2026(
        addr,
        id,
        "tools/call",
        Some("search_skills"),
        json!({"name": "search_skills", "arguments": {"query": format!("{SECRET_QUERY} auth")}}),
    )
}

#[test]
fn metrics_count_the_http_requests_made() {
    let root = sample_tree();
    let server = Server::start(
        root.path(),
        Some("server:\n  max_body_bytes: 4096\n"),
        &["--metrics-listen", "127.0.0.1:0"],
    );
    let addr = server.addr.clone();
    let metrics = metrics_addr(&server.log());
    for id in 0..3 {
        let a = search(&addr, id);
        assert_eq!(a.status, 200, "{a:?}");
        assert!(a.json()["result"].is_object(), "{a:?}");
    }
    for id in 10..12 {
        assert_eq!(
            post_2026(&addr, id, "tools/list", None, json!({})).status,
            200
        );
    }
    // A tool the server does not have: its name never becomes a label.
    let a = post_2026(
        &addr,
        20,
        "tools/call",
        Some("no_such_tool_4242"),
        json!({"name": "no_such_tool_4242", "arguments": {}}),
    );
    assert_eq!(a.status, 200, "{a:?}");
    // A tool error (a skill that does not exist).
    let a = post_2026(
        &addr,
        21,
        "tools/call",
        Some("get_skill"),
        json!({"name": "get_skill", "arguments": {"name": "no/such/skill"}}),
    );
    assert_eq!(a.json()["result"]["isError"], true, "{a:?}");
    for _ in 0..2 {
        let a = raw(
            &addr,
            &format!("GET /healthz HTTP/1.1\r\nHost: {addr}"),
            b"",
        );
        assert_eq!(a.status, 200);
    }
    // Refused: a foreign Origin (the Host and Origin guard), a body over the limit.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let a = raw(
        &addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://evil.example.com\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
        ),
        body.as_bytes(),
    );
    assert_eq!(a.status, 403, "{a:?}");
    let big = vec![b' '; 5000];
    let a = raw(
        &addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
        ),
        &big,
    );
    assert_eq!(a.status, 413, "{a:?}");

    let scraped = scrape(&metrics, None);
    assert_eq!(scraped.status, 200, "{scraped:?}");
    assert!(
        scraped
            .head
            .to_ascii_lowercase()
            .contains("text/plain; version=0.0.4"),
        "{}",
        scraped.head
    );
    let text = scraped.body;
    let s = samples(&text);
    let op = "mcp_server_operation_duration_seconds_count";
    assert_eq!(
        count(
            &s,
            &format!("{op}{{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"search_skills\"}}")
        ),
        3.0
    );
    assert_eq!(
        count(&s, &format!("{op}{{mcp_method_name=\"tools/list\"}}")),
        2.0
    );
    assert_eq!(
        count(
            &s,
            &format!(
                "{op}{{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"get_skill\",error_type=\"tool_error\"}}"
            )
        ),
        1.0
    );
    let other: Vec<_> = s
        .iter()
        .filter(|(k, _)| k.starts_with(op) && k.contains("gen_ai_tool_name=\"_OTHER\""))
        .collect();
    assert_eq!(other.len(), 1, "{other:?}");
    assert_eq!(*other[0].1, 1.0);
    assert!(other[0].0.contains("error_type=\""), "{other:?}");
    // Every MCP request counted once, no other method.
    let total: f64 = s
        .iter()
        .filter(|(k, _)| k.starts_with(op))
        .map(|(_, v)| v)
        .sum();
    assert_eq!(total, 7.0, "{text}");
    let http = "http_server_request_duration_seconds_count";
    assert_eq!(
        count(
            &s,
            &format!(
                "{http}{{http_request_method=\"POST\",http_route=\"/mcp\",http_response_status_code=\"200\"}}"
            )
        ),
        7.0
    );
    assert_eq!(
        count(
            &s,
            &format!(
                "{http}{{http_request_method=\"GET\",http_route=\"/healthz\",http_response_status_code=\"200\"}}"
            )
        ),
        2.0
    );
    assert_eq!(
        count(
            &s,
            "skills_mcp_requests_refused_total{reason=\"host_origin\"}"
        ),
        1.0
    );
    assert_eq!(
        count(
            &s,
            "skills_mcp_requests_refused_total{reason=\"body_too_large\"}"
        ),
        1.0
    );
    assert_eq!(
        s.keys()
            .filter(|k| k.starts_with("skills_mcp_requests_refused_total"))
            .count(),
        2,
        "{text}"
    );
    assert!(count(&s, "skills_mcp_skills_indexed") > 0.0);
    assert_eq!(
        count(&s, "skills_mcp_index_build_duration_seconds_count"),
        1.0
    );
    assert_eq!(
        count(
            &s,
            &format!(
                "skills_mcp_build_info{{version=\"{}\"}}",
                env!("CARGO_PKG_VERSION")
            )
        ),
        1.0
    );
    assert!(count(&s, "process_resident_memory_bytes") > 1e6);
    assert!(count(&s, "process_open_fds") >= 3.0);
    assert!(s.contains_key("process_cpu_seconds_total"));
    // Bounded labels: neither the query nor an unknown tool's name is anywhere.
    assert!(!text.contains(SECRET_QUERY), "{text}");
    assert!(!text.contains("no_such_tool_4242"), "{text}");
    assert!(!text.contains("no/such/skill"), "{text}");
    // Only /metrics is served there.
    let a = raw(
        &metrics,
        &format!("GET /mcp HTTP/1.1\r\nHost: {metrics}"),
        b"",
    );
    assert_eq!(a.status, 404);
}

#[test]
fn sessions_open_are_counted_until_closed() {
    let root = sample_tree();
    let server = Server::start(root.path(), None, &["--metrics-listen", "127.0.0.1:0"]);
    let (addr, metrics) = (server.addr.clone(), metrics_addr(&server.log()));
    let open = |want: f64| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let s = samples(&scrape(&metrics, None).body);
            let now = count(&s, "skills_mcp_http_sessions_open");
            if now == want || Instant::now() > deadline {
                return now;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    assert_eq!(open(0.0), 0.0);
    let a = initialize_with(&addr, &format!("\r\nHost: {addr}"));
    assert_eq!(a.status, 200, "{a:?}");
    let id = a.header("mcp-session-id").expect("a session id");
    // A stateless request is no session.
    assert_eq!(
        post_2026(&addr, 5, "tools/list", None, json!({})).status,
        200
    );
    assert_eq!(open(1.0), 1.0);
    let closed = raw(
        &addr,
        &format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nMcp-Session-Id: {id}"),
        b"",
    );
    assert!(closed.status < 300, "{closed:?}");
    assert_eq!(open(0.0), 0.0);
}

#[test]
fn the_metrics_token_is_asked_for() {
    let root = sample_tree();
    let token = "metrics-token-0123456789";
    let server = Server::spawn_with_env(
        root.path(),
        None,
        &["--metrics-listen", "127.0.0.1:0"],
        &[("SKILLS_MCP_METRICS_TOKEN", token)],
    );
    server.wait_for("metrics on http://");
    let metrics = metrics_addr(&server.log());
    let none = scrape(&metrics, None);
    assert_eq!(none.status, 401, "{none:?}");
    assert!(!none.body.contains("skills_mcp_"), "{none:?}");
    let wrong = scrape(&metrics, Some("metrics-token-0123456780"));
    assert_eq!(wrong.status, 401);
    let right = scrape(&metrics, Some(token));
    assert_eq!(right.status, 200);
    assert!(right.body.contains("skills_mcp_build_info"));
    // The token is never logged.
    assert!(!server.log().contains(token));
}

#[test]
fn a_short_metrics_token_or_a_bad_address_stops_the_start() {
    let root = sample_tree();
    let out = bin()
        .args(["serve", "--no-default-roots", "--root"])
        .arg(root.path())
        .args(["--metrics-listen", "127.0.0.1:0"])
        .env("SKILLS_MCP_METRICS_TOKEN", "short")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SKILLS_MCP_METRICS_TOKEN"), "{err}");
    assert!(!err.contains("short"), "{err}");
    let out = bin()
        .args(["serve", "--no-default-roots", "--root"])
        .arg(root.path())
        .args(["--metrics-listen", "nowhere:1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--metrics-listen \"nowhere:1\""), "{err}");
}

/// Lines of a child's stream, read on a thread.
fn lines_of(stream: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

#[test]
fn metrics_count_the_stdio_requests_made() {
    let root = sample_tree();
    let home = tempfile::TempDir::new().unwrap();
    let mut child = bin()
        .args(["serve", "--no-default-roots", "--root"])
        .arg(root.path())
        .args(["--metrics-listen", "127.0.0.1:0"])
        .env("HOME", home.path())
        .current_dir(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = lines_of(child.stdout.take().unwrap());
    let err = lines_of(child.stderr.take().unwrap());
    let log = Arc::new(Mutex::new(String::new()));
    let deadline = Instant::now() + Duration::from_secs(60);
    let metrics = loop {
        let line = err
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("no metrics line:\n{}", log.lock().unwrap()));
        log.lock().unwrap().push_str(&line);
        if line.contains("metrics on http://") {
            break metrics_addr(&line);
        }
    };
    let mut stdin = child.stdin.take().unwrap();
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for id in 2..4 {
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "search_skills", "arguments": {"query": SECRET_QUERY}}}),
        );
    }
    send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    let mut answered = Vec::new();
    while answered.len() < 4 {
        let line = out
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer on stdout");
        let v: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = v.get("id").and_then(Value::as_u64) {
            answered.push(id);
        }
    }
    let text = scrape(&metrics, None).body;
    let s = samples(&text);
    let op = "mcp_server_operation_duration_seconds_count";
    assert_eq!(
        count(&s, &format!("{op}{{mcp_method_name=\"initialize\"}}")),
        1.0
    );
    assert_eq!(
        count(
            &s,
            &format!("{op}{{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"search_skills\"}}")
        ),
        2.0
    );
    assert_eq!(count(&s, &format!("{op}{{mcp_method_name=\"ping\"}}")), 1.0);
    // No HTTP request was made.
    assert!(
        !s.keys()
            .any(|k| k.starts_with("http_server_request_duration_seconds_count")),
        "{text}"
    );
    assert!(!text.contains(SECRET_QUERY));
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
}

/// A span as the receiver decoded it.
#[derive(Debug, Clone)]
struct Span {
    name: String,
    trace_id: String,
    span_id: String,
    parent: String,
    kind: i32,
    attributes: BTreeMap<String, String>,
}

/// An OTLP/HTTP receiver on 127.0.0.1: every span of every `POST /v1/traces`.
struct Receiver {
    addr: String,
    spans: Arc<Mutex<Vec<Span>>>,
    _runtime: tokio::runtime::Runtime,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Receiver {
    fn start() -> Self {
        use opentelemetry_proto::tonic::{
            collector::trace::v1::ExportTraceServiceRequest, common::v1::any_value,
        };
        use prost::Message as _;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let spans = Arc::new(Mutex::new(Vec::new()));
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let sink = spans.clone();
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |body: axum::body::Bytes| {
                let sink = sink.clone();
                async move {
                    let request = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                    let mut sink = sink.lock().unwrap();
                    for rs in request.resource_spans {
                        for ss in rs.scope_spans {
                            for s in ss.spans {
                                let attributes = s
                                    .attributes
                                    .iter()
                                    .map(|kv| {
                                        let v = match kv
                                            .value
                                            .as_ref()
                                            .and_then(|v| v.value.clone())
                                        {
                                            Some(any_value::Value::StringValue(s)) => s,
                                            Some(any_value::Value::IntValue(i)) => i.to_string(),
                                            Some(any_value::Value::BoolValue(b)) => b.to_string(),
                                            other => format!("{other:?}"),
                                        };
                                        (kv.key.clone(), v)
                                    })
                                    .collect();
                                sink.push(Span {
                                    name: s.name,
                                    trace_id: hex(&s.trace_id),
                                    span_id: hex(&s.span_id),
                                    parent: hex(&s.parent_span_id),
                                    kind: s.kind,
                                    attributes,
                                });
                            }
                        }
                    }
                    (
                        [("content-type", "application/x-protobuf")],
                        axum::body::Bytes::new(),
                    )
                }
            }),
        );
        runtime.spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            addr,
            spans,
            _runtime: runtime,
        }
    }

    /// Wait (up to 20 s) until `done` holds for the spans received.
    fn wait(&self, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let spans = self.spans.lock().unwrap().clone();
            if done(&spans) || Instant::now() > deadline {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A server over HTTP exporting to `receiver` (a 100 ms batch delay), with `env` besides;
/// returned once the index is built.
fn traced_server(receiver: &Receiver, env: (&str, &str)) -> (tempfile::TempDir, Server) {
    let root = sample_tree();
    let endpoint = format!("http://{}", receiver.addr);
    let server = Server::spawn_with_env(
        root.path(),
        None,
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            env,
        ],
    );
    server.wait_for("skills indexed");
    (root, server)
}

#[test]
fn traces_continue_the_clients_trace_into_the_server() {
    let receiver = Receiver::start();
    let (_root, server) = traced_server(&receiver, ("OTEL_SERVICE_NAME", "skills-mcp-test"));
    let addr = server.addr.clone();
    // A: the parent in the HTTP header.
    let (trace_a, parent_a) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
    let a = post_2026_with(
        &addr,
        11,
        "tools/call",
        Some("search_skills"),
        json!({"name": "search_skills", "arguments": {"query": "auth"}}),
        &format!("\r\ntraceparent: 00-{trace_a}-{parent_a}-01"),
    );
    assert_eq!(a.status, 200, "{a:?}");
    // B: the parent in params._meta.
    let (trace_b, parent_b) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let b = post_2026(
        &addr,
        12,
        "tools/call",
        Some("get_skill"),
        json!({"name": "get_skill", "arguments": {"name": "no/such/skill"},
               "_meta": {"traceparent": format!("00-{trace_b}-{parent_b}-01")}}),
    );
    assert_eq!(b.json()["result"]["isError"], true, "{b:?}");
    // C: no parent.
    assert_eq!(
        post_2026(&addr, 13, "tools/list", None, json!({})).status,
        200
    );
    let spans = receiver.wait(|s| {
        let named = |n: &str| s.iter().any(|x| x.name == n);
        named("tools/call search_skills") && named("tools/call get_skill") && named("tools/list")
    });
    let requests: Vec<&Span> = spans
        .iter()
        .filter(|s| s.attributes.contains_key("mcp.method.name"))
        .collect();
    // One span per request.
    assert_eq!(requests.len(), 3, "{requests:#?}");

    let a = requests
        .iter()
        .find(|s| s.name == "tools/call search_skills")
        .unwrap();
    assert_eq!(
        (a.trace_id.as_str(), a.parent.as_str()),
        (trace_a, parent_a)
    );
    assert_eq!(a.kind, 2, "SERVER"); // SpanKind::Server
    for (k, v) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "search_skills"),
        ("gen_ai.operation.name", "execute_tool"),
        ("jsonrpc.request.id", "11"),
        ("mcp.protocol.version", "2026-07-28"),
    ] {
        assert_eq!(
            a.attributes.get(k).map(String::as_str),
            Some(v),
            "{k}: {a:#?}"
        );
    }
    assert!(!a.attributes.contains_key("error.type"), "{a:#?}");
    // Work done for it is its child.
    let children: Vec<&Span> = spans.iter().filter(|s| s.parent == a.span_id).collect();
    assert!(
        children
            .iter()
            .any(|c| c.name == "index read" && c.trace_id == trace_a),
        "{spans:#?}"
    );

    let b = requests
        .iter()
        .find(|s| s.name == "tools/call get_skill")
        .unwrap();
    assert_eq!(
        (b.trace_id.as_str(), b.parent.as_str()),
        (trace_b, parent_b)
    );
    assert_eq!(
        b.attributes.get("error.type").map(String::as_str),
        Some("tool_error")
    );

    let c = requests.iter().find(|s| s.name == "tools/list").unwrap();
    assert!(c.parent.is_empty(), "{c:#?}");
    assert_ne!(c.trace_id, trace_a);
    assert_ne!(c.trace_id, trace_b);

    // The start-up's index build is traced too (a root span).
    assert!(spans.iter().any(|s| s.name == "index build"), "{spans:#?}");
}

#[test]
fn traces_are_off_when_the_sdk_is_disabled() {
    let receiver = Receiver::start();
    let (_root, server) = traced_server(&receiver, ("OTEL_SDK_DISABLED", "true"));
    assert_eq!(search(&server.addr, 1).status, 200);
    std::thread::sleep(Duration::from_millis(600));
    drop(server);
    assert!(receiver.spans.lock().unwrap().is_empty());
}

/// A storm of `refresh_skills` calls, pipelined over stdio to the real binary: one rebuild runs
/// and one is queued, every caller arriving meanwhile shares the queued one's result (counted by
/// `skills_mcp_index_build_duration_seconds_count` on `/metrics`), and a skill added during the
/// first rebuild is in the answers of every call made after it was added.
#[test]
fn a_refresh_storm_runs_at_most_two_rebuilds() {
    let root = tempfile::TempDir::new().unwrap();
    // Enough skills that a rebuild outlasts the writing of the calls.
    for i in 0..1500 {
        crate::common::write_files(
            root.path(),
            &[(
                &format!("s{i:04}/SKILL.md"),
                &crate::common::agent_skill_md(
                    &format!("s{i:04}"),
                    &format!("Skill number {i} about topic {} and more", i % 37),
                    &"Some body text for the index to read.\n".repeat(20),
                ),
            )],
        );
    }
    let home = tempfile::TempDir::new().unwrap();
    // No live reload: the calls alone rebuild.
    std::fs::write(home.path().join("c.yaml"), "refresh:\n  watch: false\n").unwrap();
    let mut child = bin()
        .args(["serve", "--no-default-roots", "--root"])
        .arg(root.path())
        .args(["--metrics-listen", "127.0.0.1:0", "--config"])
        .arg(home.path().join("c.yaml"))
        .env("HOME", home.path())
        .env("SKILLS_MCP_INDEX_CACHE", "off")
        .current_dir(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = lines_of(child.stdout.take().unwrap());
    let err = lines_of(child.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut log = String::new();
    let metrics = loop {
        let line = err
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("no metrics line:\n{log}"));
        log.push_str(&line);
        if line.contains("metrics on http://") {
            break metrics_addr(&line);
        }
    };
    let mut stdin = child.stdin.take().unwrap();
    let mut send = |lines: &[Value]| {
        for v in lines {
            writeln!(stdin, "{v}").unwrap();
        }
        stdin.flush().unwrap();
    };
    let answer = |id: u64| loop {
        let line = out
            .recv_timeout(Duration::from_secs(120))
            .expect("an answer on stdout");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == json!(id) {
            return v;
        }
    };
    send(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]);
    answer(1);
    let builds = || {
        count(
            &samples(&scrape(&metrics, None).body),
            "skills_mcp_index_build_duration_seconds_count",
        )
    };
    let before = builds();
    let refresh = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "refresh_skills", "arguments": {}}})
    };
    // 25 calls; a skill added (during the first rebuild); 25 calls more.
    send(&(100..125).map(refresh).collect::<Vec<_>>());
    crate::common::write_files(
        root.path(),
        &[(
            "late/SKILL.md",
            &crate::common::agent_skill_md("late", "Added during a rebuild", "Late.\n"),
        )],
    );
    send(&(125..150).map(refresh).collect::<Vec<_>>());
    let mut answers = BTreeMap::new();
    while answers.len() < 50 {
        let line = out
            .recv_timeout(Duration::from_secs(120))
            .expect("an answer on stdout");
        let v: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = v["id"].as_u64() {
            let result = &v["result"]["structuredContent"];
            assert_eq!(result["success"], json!(true), "{v}");
            answers.insert(id, result["skills_reindexed"].as_u64().unwrap());
        }
    }
    for (id, skills) in &answers {
        if *id >= 125 {
            assert_eq!(*skills, 1501, "call {id}: {answers:?}");
        } else {
            assert!(*skills == 1500 || *skills == 1501, "{answers:?}");
        }
    }
    let rebuilds = builds() - before;
    assert!((1.0..=2.0).contains(&rebuilds), "{rebuilds} rebuilds");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
}
