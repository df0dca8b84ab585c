//! MCP over Streamable HTTP (`skills-mcp serve --http [ADDR]`), secure by default.
//!
//! rmcp's [`StreamableHttpService`] speaks the protocol at `/mcp`: 2026-07-28 stateless POSTs
//! (GET/DELETE 405, `MCP-Protocol-Version`, `Mcp-Method` / `Mcp-Name` checked) and, for older
//! clients, `initialize` sessions with SSE streams. ONE [`SkillsServer`] (one index) serves
//! every connection; the factory hands out cheap clones of it.
//!
//! Around it, this module owns what rmcp leaves to the application:
//! - `Host` allowlist (loopback names by default) and `Origin` validation always on (rmcp
//!   checks Origin only when asked): both 403, done by rmcp from [`HttpConfig`];
//! - listening on a non-loopback address is refused unless authentication is configured or
//!   the operator says the server is open to everyone ([`check_listen`]);
//! - limits: request body size (413), per-request timeout (504), a cap on requests in flight
//!   (503 at once, never a queue), header read timeout (slow, idle and half-open connections
//!   are closed);
//! - `/healthz` (alive) and `/readyz` (index built), one access log line per request on stderr,
//!   graceful shutdown on SIGTERM/SIGINT.
//!
//! # Layers (outermost first)
//! [`with_limits`] (in-flight cap, timeout, access log) wraps the router of [`router`]
//! (`/mcp` behind a readiness gate, and the probes). Authentication (`http_auth::apply`) wraps
//! the MCP endpoint inside [`router`], so refused requests are still logged and capped, and the
//! probes stay open. The body of a POST is read once, within `max_body_bytes`, and classified
//! once by the one [`BodyReader`] of the server ([`crate::http_body`]): in the authentication
//! layer after the token check when authentication is on, in the gate otherwise; the scope
//! check and the access log read its [`RpcCall`], and rmcp gets the bytes.

use std::{
    net::{IpAddr, Ipv4Addr, SocketAddr},
    sync::{Arc, OnceLock},
    time::{Duration, Instant},
};

use anyhow::{Context as _, Result, bail};
use axum::{
    Router,
    body::Body,
    extract::{Request, State},
    http::{HeaderValue, Method, StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::get,
};
use http_body_util::BodyExt as _;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::{
    config::Loaded,
    http_body::{BodyReader, CallSlot, RpcCall},
    mcp::SkillsServer,
};

/// The `server` section of the configuration: how `serve` listens. Only the operator sets it
/// (`--config FILE` and flags); a root's `config.yaml` cannot (its `server` section is ignored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HttpConfig {
    /// `stdio` (the default) or `http`.
    pub transport: Transport,
    /// Address `serve --http` listens on when no ADDR is given.
    pub listen: String,
    /// `Host` header values accepted at `/mcp` (names, or `name:port`); `"*"` accepts any.
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted at `/mcp` (`scheme://host[:port|:*]`); any other is 403. A
    /// request without `Origin` (not from a browser) is accepted.
    pub allowed_origins: Vec<String>,
    /// Allow listening on a non-loopback address without authentication (open to everyone).
    pub public_without_auth: bool,
    /// Largest request body, in bytes (413 beyond).
    pub max_body_bytes: usize,
    /// Seconds to read a request and produce its response head (504 beyond).
    pub request_timeout_seconds: u64,
    /// Most requests handled at once; beyond, 503 at once (never a queue).
    pub max_in_flight: usize,
    /// Seconds a connection may take to send a request's headers, or stay idle between
    /// requests, before it is closed.
    pub header_read_timeout_seconds: u64,
    /// Seconds a shutdown waits for requests in flight.
    pub shutdown_grace_seconds: u64,
    /// Sessions and SSE streams for clients older than 2026-07-28 (`initialize` clients). Off:
    /// every request is answered statelessly (any replica can answer any request), and such
    /// clients get no list-changed notifications.
    pub sessions: bool,
}

/// How `serve` speaks MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Stdio,
    Http,
}

/// The default listening address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            transport: Transport::Stdio,
            listen: DEFAULT_LISTEN.into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: [
                "http://localhost:*",
                "http://127.0.0.1:*",
                "http://[::1]:*",
                "https://localhost:*",
                "https://127.0.0.1:*",
                "https://[::1]:*",
            ]
            .map(String::from)
            .to_vec(),
            public_without_auth: false,
            max_body_bytes: 1 << 20,
            request_timeout_seconds: 30,
            max_in_flight: 256,
            header_read_timeout_seconds: 10,
            shutdown_grace_seconds: 10,
            sessions: true,
        }
    }
}

impl HttpConfig {
    /// Values out of range: `(key, value, allowed)`.
    pub fn check(&self) -> Vec<(String, String, String)> {
        let mut bad = Vec::new();
        if let Err(e) = parse_listen(&self.listen) {
            bad.push((
                "server.listen".into(),
                format!("{:?}", self.listen),
                format!("{e}"),
            ));
        }
        for (key, value, ok, allowed) in [
            (
                "server.max_body_bytes",
                self.max_body_bytes as u64,
                self.max_body_bytes >= 1024,
                "a whole number of bytes, at least 1024",
            ),
            (
                "server.request_timeout_seconds",
                self.request_timeout_seconds,
                (1..=3600).contains(&self.request_timeout_seconds),
                "a whole number of seconds from 1 to 3600",
            ),
            (
                "server.max_in_flight",
                self.max_in_flight as u64,
                (1..=65_536).contains(&self.max_in_flight),
                "a whole number of requests from 1 to 65536",
            ),
            (
                "server.header_read_timeout_seconds",
                self.header_read_timeout_seconds,
                (1..=3600).contains(&self.header_read_timeout_seconds),
                "a whole number of seconds from 1 to 3600",
            ),
            (
                "server.shutdown_grace_seconds",
                self.shutdown_grace_seconds,
                self.shutdown_grace_seconds <= 3600,
                "a whole number of seconds from 0 to 3600",
            ),
        ] {
            if !ok {
                bad.push((key.into(), value.to_string(), allowed.into()));
            }
        }
        if self.allowed_hosts.is_empty() {
            bad.push((
                "server.allowed_hosts".into(),
                "[]".into(),
                "host names (\"*\" accepts any Host)".into(),
            ));
        }
        for origin in &self.allowed_origins {
            let ok = origin == "null"
                || origin
                    .split_once("://")
                    .is_some_and(|(scheme, rest)| !scheme.is_empty() && !rest.is_empty());
            if !ok {
                bad.push((
                    "server.allowed_origins".into(),
                    format!("{origin:?}"),
                    "origins such as \"https://app.example.com\" or \"http://localhost:*\"".into(),
                ));
            }
        }
        bad
    }
}

/// What `serve --http` was asked on the command line (flags win over the `server` section).
#[derive(Debug, Clone, Default)]
pub struct HttpFlags {
    /// `--http ADDR` (the configured `server.listen` when `None`).
    pub listen: Option<String>,
    /// `--public-without-auth`.
    pub public_without_auth: bool,
    /// `--allowed-host` (added to the configured ones).
    pub allowed_hosts: Vec<String>,
    /// `--allowed-origin` (added to the configured ones).
    pub allowed_origins: Vec<String>,
}

impl HttpFlags {
    /// The configuration with these flags applied.
    pub fn apply(&self, config: &HttpConfig) -> HttpConfig {
        let mut c = config.clone();
        if let Some(listen) = &self.listen {
            c.listen = listen.clone();
        }
        c.public_without_auth |= self.public_without_auth;
        c.allowed_hosts.extend(self.allowed_hosts.iter().cloned());
        c.allowed_origins
            .extend(self.allowed_origins.iter().cloned());
        c
    }
}

/// `ADDR` as a socket address: `IP:PORT`, `[IPv6]:PORT`, `localhost:PORT` or `:PORT` (loopback).
pub fn parse_listen(addr: &str) -> Result<SocketAddr> {
    let addr = addr.trim();
    if let Ok(a) = addr.parse::<SocketAddr>() {
        return Ok(a);
    }
    let port = addr
        .strip_prefix("localhost:")
        .or_else(|| addr.strip_prefix(':'));
    if let Some(port) = port
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    bail!("an address such as 127.0.0.1:8080, [::1]:8080, localhost:8080 or :8080")
}

/// Whether the server may listen on `addr`: a loopback address always; any other only when
/// authentication is configured or the operator opened the server to everyone.
pub fn check_listen(
    addr: SocketAddr,
    auth_configured: bool,
    public_without_auth: bool,
) -> Result<()> {
    if addr.ip().to_canonical().is_loopback() || auth_configured || public_without_auth {
        return Ok(());
    }
    bail!(
        "refusing to listen on {addr}: it is not a loopback address and no authentication is \
         configured, so anyone who can reach it could use this server. Listen on 127.0.0.1 \
         (behind a reverse proxy that authenticates), configure authentication, or pass \
         --public-without-auth (server.public_without_auth: true) to serve everyone"
    )
}

/// State shared by the HTTP handlers.
pub struct HttpState {
    /// The one MCP server, once the index is built.
    pub server: OnceLock<SkillsServer>,
    /// The effective `server` configuration.
    pub config: HttpConfig,
    /// Permits for requests in flight.
    in_flight: Arc<Semaphore>,
    /// Cancelled at shutdown: ends SSE streams and sessions.
    pub cancel: CancellationToken,
    /// Reads and classifies request bodies, within `max_body_bytes`.
    pub body: BodyReader,
}

impl HttpState {
    pub fn new(config: HttpConfig) -> Arc<Self> {
        Arc::new(Self {
            server: OnceLock::new(),
            body: BodyReader::new(config.max_body_bytes),
            in_flight: Arc::new(Semaphore::new(config.max_in_flight)),
            config,
            cancel: CancellationToken::new(),
        })
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> usize {
        self.config.max_in_flight - self.in_flight.available_permits()
    }
}

/// The router: MCP at `/mcp` (behind the readiness gate and the body limit) and the probes.
/// The MCP endpoint (behind `auth` when it is configured) and the probes (always open);
/// [`with_limits`] wraps the result.
pub fn router(
    state: &Arc<HttpState>,
    auth: Option<Arc<crate::http_auth::Authenticator>>,
) -> Router {
    let c = &state.config;
    let mut rmcp_config = StreamableHttpServerConfig::default()
        .with_allowed_origins(c.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(c.max_body_bytes)
        .with_json_response(true)
        .with_legacy_session_mode(c.sessions)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_cancellation_token(state.cancel.clone());
    rmcp_config = if c.allowed_hosts.iter().any(|h| h == "*") {
        rmcp_config.disable_allowed_hosts()
    } else {
        rmcp_config.with_allowed_hosts(c.allowed_hosts.clone())
    };
    let factory_state = state.clone();
    let mcp = StreamableHttpService::new(
        move || {
            factory_state
                .server
                .get()
                .cloned()
                .ok_or_else(|| std::io::Error::other("the index is not built yet"))
        },
        Arc::new(LocalSessionManager::default()),
        rmcp_config,
    );
    let mut endpoint = Router::new()
        .route_service("/mcp", mcp)
        .route_layer(middleware::from_fn_with_state(state.clone(), mcp_gate));
    if let Some(auth) = auth {
        endpoint = crate::http_auth::apply(endpoint, auth, state.body.clone());
    }
    endpoint
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz).with_state(state.clone()))
}

/// The outer layer: the in-flight cap, the per-request timeout and the access log.
pub fn with_limits(router: Router, state: &Arc<HttpState>) -> Router {
    router.layer(middleware::from_fn_with_state(state.clone(), limits))
}

async fn readyz(State(state): State<Arc<HttpState>>) -> Response {
    match state.server.get() {
        Some(server) => {
            let skills = server.catalog().len().unwrap_or(0);
            format!("ready: {skills} skills\n").into_response()
        }
        None => (StatusCode::SERVICE_UNAVAILABLE, "not ready: indexing\n").into_response(),
    }
}

/// What the access log names for an MCP request: the JSON-RPC method and the tool, prompt or
/// resource it is about (a single message; `-` for a batch or what is not JSON-RPC).
fn call_label(call: &RpcCall) -> Option<String> {
    let m = call.single()?;
    let method = m.method.as_deref()?;
    let target = m.name.as_deref().or(m.uri.as_deref());
    // Names come from the client: keep them printable and short in the log.
    let clean = |s: &str| -> String {
        s.chars()
            .take(200)
            .map(|c| if c.is_control() || c == ' ' { '_' } else { c })
            .collect()
    };
    Some(match target {
        Some(t) => format!("{} {}", clean(method), clean(t)),
        None => clean(method),
    })
}

/// `/mcp`: 503 until the index is built; the body of a POST is read and classified here unless
/// the authentication layer did it (413 over the limit).
async fn mcp_gate(State(state): State<Arc<HttpState>>, request: Request, next: Next) -> Response {
    if state.server.get().is_none() {
        let mut r = (StatusCode::SERVICE_UNAVAILABLE, "not ready: indexing\n").into_response();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    }
    match state.body.read(request).await {
        Ok(request) => next.run(request).await,
        Err(refused) => refused,
    }
}

/// Every request: a permit of the in-flight cap (503 at once when none is left; kept until the
/// response body is sent, except for GET streams), the timeout (504), one access log line.
async fn limits(State(state): State<Arc<HttpState>>, mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    // Filled by whichever layer reads the body, for the access log.
    let slot = CallSlot::default();
    request.extensions_mut().insert(slot.clone());
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let probe = path == "/healthz" || path == "/readyz";
    let permit = if probe {
        None
    } else {
        match state.in_flight.clone().try_acquire_owned() {
            Ok(p) => Some(p),
            Err(_) => {
                let mut r = (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "too many requests in flight, retry later\n",
                )
                    .into_response();
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                access_log(&method, &path, None, r.status(), started);
                return r;
            }
        }
    };
    let timeout = Duration::from_secs(state.config.request_timeout_seconds);
    let response = match tokio::time::timeout(timeout, next.run(request)).await {
        Ok(r) => r,
        Err(_) => (
            StatusCode::GATEWAY_TIMEOUT,
            format!("no response within {} s\n", timeout.as_secs()),
        )
            .into_response(),
    };
    if !probe {
        access_log(&method, &path, slot.get(), response.status(), started);
    }
    match permit {
        // A GET stream may stay open for hours: it does not hold a slot.
        Some(permit) if method != Method::GET => {
            let (parts, body) = response.into_parts();
            let body = body.map_frame(move |frame| {
                let _held = &permit;
                frame
            });
            Response::from_parts(parts, Body::new(body))
        }
        _ => response,
    }
}

/// One line on stderr: method, path, MCP method and target, status, latency (to the response
/// head). Never a header (so never a token).
fn access_log(
    method: &Method,
    path: &str,
    call: Option<&RpcCall>,
    status: StatusCode,
    started: Instant,
) {
    let call = call.and_then(call_label);
    let call = call.as_deref().unwrap_or("-");
    let path: String = path.chars().take(200).filter(|c| !c.is_control()).collect();
    tracing::info!(
        target: "skills_mcp::http::access",
        "http: {method} {path} {call} {} {:.1}ms",
        status.as_u16(),
        started.elapsed().as_secs_f64() * 1000.0
    );
}

/// Accept connections on `listener` until `shutdown` resolves, then stop accepting, let the
/// requests in flight finish (within the grace period), end SSE streams, and return.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    state: Arc<HttpState>,
    shutdown: impl std::future::Future<Output = ()>,
) {
    use hyper_util::{
        rt::{TokioIo, TokioTimer},
        server::graceful::GracefulShutdown,
        service::TowerToHyperService,
    };
    let graceful = GracefulShutdown::new();
    let header_timeout = Duration::from_secs(state.config.header_read_timeout_seconds);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: wait a little, keep serving.
                        tracing::warn!("http: accepting a connection failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let mut builder = hyper::server::conn::http1::Builder::new();
                builder
                    .timer(TokioTimer::new())
                    .header_read_timeout(header_timeout);
                let conn = builder.serve_connection(
                    TokioIo::new(stream),
                    TowerToHyperService::new(app.clone()),
                );
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    let grace = Duration::from_secs(state.config.shutdown_grace_seconds);
    let waiting = state.in_flight();
    tracing::info!(
        "http: stopped accepting; waiting up to {} s for {waiting} request(s) in flight",
        grace.as_secs()
    );
    let all = u32::try_from(state.config.max_in_flight).unwrap_or(u32::MAX);
    let finished = tokio::time::timeout(grace, state.in_flight.acquire_many(all))
        .await
        .is_ok();
    if !finished {
        tracing::warn!(
            "http: {} request(s) still in flight after {} s; closing them",
            state.in_flight(),
            grace.as_secs()
        );
    }
    // SSE streams and sessions end now; connections close once their response is sent.
    state.cancel.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(2), graceful.shutdown()).await;
}

/// `serve --http`: index the roots, listen, serve MCP over HTTP until SIGINT / SIGTERM;
/// analytics are flushed on the way out. `git`: the git sources, already synced.
pub fn run_http(
    loaded: &Loaded,
    git: Option<Arc<crate::git::GitSync>>,
    config: HttpConfig,
    auth: Option<Arc<crate::http_auth::Authenticator>>,
) -> Result<()> {
    for w in &loaded.warnings {
        tracing::warn!("{w}");
    }
    let addr =
        parse_listen(&config.listen).with_context(|| format!("--http {:?}", config.listen))?;
    let auth_configured = auth.as_ref().is_some_and(|a| a.is_configured());
    check_listen(addr, auth_configured, config.public_without_auth)?;
    for (i, root) in loaded.roots.iter().enumerate() {
        tracing::info!("root {i}: {} ({:?})", root.name(), root.source);
    }
    if !addr.ip().to_canonical().is_loopback() && !auth_configured {
        tracing::warn!("serving {addr} WITHOUT authentication: anyone who can reach it can use it");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let listener = {
        let _in_runtime = runtime.enter();
        let std = std::net::TcpListener::bind(addr)
            .with_context(|| format!("cannot listen on {addr}"))?;
        std.set_nonblocking(true)?;
        tokio::net::TcpListener::from_std(std)?
    };
    let local = listener.local_addr()?;
    tracing::info!("listening on http://{local}/mcp (health: /healthz, readiness: /readyz)");
    let analytics = {
        let _in_runtime = runtime.enter();
        crate::analytics::Analytics::start(loaded.config.analytics.clone())
    };
    let services = crate::mcp::Services {
        analytics: analytics.clone(),
        git: git.clone(),
        ..crate::mcp::Services::default()
    };
    let state = HttpState::new(config);
    let app = with_limits(router(&state, auth), &state);

    let result = runtime.block_on(async {
        // The index is built while /healthz already answers (and /readyz says 503).
        let (failed_tx, failed_rx) = tokio::sync::oneshot::channel::<anyhow::Error>();
        let building = {
            let state = state.clone();
            let loaded = loaded.clone();
            tokio::task::spawn_blocking(move || match crate::mcp::open_timed(&loaded, services) {
                Ok((server, built)) => {
                    let cached = if server.catalog().stats().from_cache {
                        " (from the index cache)"
                    } else {
                        ""
                    };
                    tracing::info!(
                        "{} skills indexed in {} ms{cached}; ready",
                        server.catalog().len().unwrap_or(0),
                        built.as_millis()
                    );
                    let _ = state.server.set(server.clone());
                    Some(server)
                }
                Err(e) => {
                    let _ = failed_tx.send(e);
                    None
                }
            })
        };
        let mut failure = None;
        let background = {
            let loaded = loaded.clone();
            async move {
                let Ok(Some(server)) = building.await else {
                    std::future::pending::<()>().await;
                    unreachable!()
                };
                let periodic = git.map(|git| {
                    let rebuild = server.clone();
                    git.set_reindex(crate::git::reindex_fn(move |_roots| {
                        let server = rebuild.clone();
                        async move { server.reindex().await }
                    }));
                    let refresh = &loaded.config.refresh;
                    refresh
                        .enabled
                        .then(|| git.spawn_periodic(refresh.interval()))
                });
                let watch = if loaded.config.refresh.watch {
                    let paths = loaded
                        .roots
                        .iter()
                        .filter(|r| r.source != crate::config::RootSource::Git)
                        .map(|r| r.path.clone())
                        .collect();
                    let debounce = Duration::from_millis(loaded.config.refresh.debounce_ms);
                    tokio::task::spawn_blocking(move || {
                        match crate::mcp::watch(server, paths, debounce) {
                            Ok(w) => Some(w),
                            Err(e) => {
                                tracing::warn!("live reload is off: {e:#}");
                                None
                            }
                        }
                    })
                    .await
                    .ok()
                    .flatten()
                } else {
                    None
                };
                // Keep the watcher and the periodic refresh alive while serving.
                let _keep = (periodic, watch);
                std::future::pending::<()>().await;
            }
        };
        let shutdown = async {
            tokio::select! {
                signal = crate::mcp::stop_signal() => {
                    tracing::info!("{signal}; stopping");
                }
                Ok(e) = failed_rx => failure = Some(e),
            }
        };
        tokio::select! {
            () = serve(listener, app, state.clone(), shutdown) => {}
            () = background => {}
        }
        // No event is lost: what is queued is sent (or kept in the buffer file for next time).
        analytics.shutdown().await;
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    tracing::info!("http: stopped");
    result
}
