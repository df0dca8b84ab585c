//! MCP over Streamable HTTP (`skills-mcp serve --http [ADDR]`), secure by default.
//!
//! rmcp's [`StreamableHttpService`] speaks the protocol at `/mcp`: 2026-07-28 stateless POSTs
//! (GET/DELETE 405, `MCP-Protocol-Version`, `Mcp-Method` / `Mcp-Name` checked) and, for older
//! clients, `initialize` sessions with SSE streams. ONE [`SkillsServer`] (one index) serves
//! every connection; the factory hands out cheap clones of it.
//!
//! Around it, this module owns what rmcp leaves to the application:
//! - `Host` allowlist (loopback names by default) and `Origin` validation always on: both 403,
//!   by the one layer of [`guard`] (the editor's endpoints use it too), from [`HttpConfig`];
//! - listening on a non-loopback address is refused unless authentication is configured or
//!   the operator says the server is open to everyone ([`check_listen`]);
//! - limits: request body size (413), per-request timeout (504), a cap on requests in flight
//!   (503 at once, never a queue), header read timeout (slow, idle and half-open connections
//!   are closed);
//! - `/healthz` (alive) and `/readyz` (index built, not draining), one access log line per
//!   request on stderr, graceful shutdown on SIGTERM/SIGINT after the drain
//!   ([`crate::serve::drain`]);
//! - session ids of older clients that start with the replica id ([`sessions`]), for routing.
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
    sync::{
        Arc, OnceLock,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

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
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::{
    http_body::{BodyReader, CallSlot, RpcCall},
    mcp::SkillsServer,
    telemetry::{metrics, metrics::Refused},
};

pub mod config;
mod discovery;
pub mod guard;
pub mod sessions;
pub use config::{DEFAULT_LISTEN, HttpConfig, HttpFlags, Transport, check_listen, parse_listen};

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
    /// Set at the stop signal ([`crate::serve::drain`]): `/readyz` answers 503 from then on.
    pub draining: AtomicBool,
    /// The replica id that starts every session id ([`sessions::ReplicaSessions`]).
    pub replica: String,
}

impl HttpState {
    pub fn new(config: HttpConfig) -> Arc<Self> {
        Self::for_replica(config, "")
    }

    /// State of a replica: its session ids start with `replica` (none when empty).
    pub fn for_replica(config: HttpConfig, replica: &str) -> Arc<Self> {
        Arc::new(Self {
            server: OnceLock::new(),
            body: BodyReader::new(config.max_body_bytes),
            in_flight: Arc::new(Semaphore::new(config.max_in_flight)),
            config,
            cancel: CancellationToken::new(),
            draining: AtomicBool::new(false),
            replica: replica.to_owned(),
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
    // Host and Origin are checked by our own layer ([`guard`], shared with the editor), not
    // twice.
    let rmcp_config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(c.max_body_bytes)
        .with_json_response(true)
        .with_legacy_session_mode(c.sessions)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_cancellation_token(state.cancel.clone());
    let factory_state = state.clone();
    let mcp = StreamableHttpService::new(
        move || {
            factory_state
                .server
                .get()
                .cloned()
                .map(crate::telemetry::Observed::new)
                .ok_or_else(|| std::io::Error::other("the index is not built yet"))
        },
        Arc::new(sessions::ReplicaSessions::new(&state.replica)),
        rmcp_config,
    );
    // One service shared by every request: axum clones the route's service for each request
    // (five times through the layers) and rmcp's `call` clones it once more, each clone copying
    // its configuration (host and origin lists, a cancellation token); an `Arc` clone instead.
    let mcp = Arc::new(mcp);
    let mcp = tower::service_fn(move |request: Request| {
        let mcp = mcp.clone();
        async move { Ok::<_, std::convert::Infallible>(mcp.handle(request).await) }
    });
    let mut endpoint = Router::new()
        .route_service("/mcp", mcp)
        .route_layer(middleware::from_fn_with_state(state.clone(), mcp_gate))
        // A session belongs to the identity that opened it (inside authentication).
        .route_layer(middleware::from_fn_with_state(
            crate::access::SessionOwners::default(),
            crate::access::session::bind,
        ))
        // The discovery index: behind authentication and the guard, like `/mcp`.
        .merge(discovery::routes(state));
    if let Some(auth) = auth {
        endpoint = crate::http_auth::apply(endpoint, auth, state.body.clone());
    }
    // Outermost at /mcp: a foreign Host or Origin is refused before anything else runs.
    let guard = Arc::new(guard::Guard::new(&c.allowed_hosts, &c.allowed_origins));
    endpoint = endpoint.route_layer(middleware::from_fn_with_state(guard, guard::layer));
    endpoint
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz).with_state(state.clone()))
}

/// The outer layer: the in-flight cap, the per-request timeout and the access log.
pub fn with_limits(router: Router, state: &Arc<HttpState>) -> Router {
    router.layer(middleware::from_fn_with_state(state.clone(), limits))
}

async fn readyz(State(state): State<Arc<HttpState>>) -> Response {
    if state.draining.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "not ready: draining\n").into_response();
    }
    match state.server.get() {
        // Under access rules the probe (open to anyone) does not count the skills.
        Some(server) if server.catalog().has_access_rules() => "ready\n".into_response(),
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
        r.extensions_mut().insert(Refused("not_ready"));
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
                r.extensions_mut().insert(Refused("in_flight"));
                access_log(&method, &path, None, r.status(), started);
                metrics().http_request(&method, &path, &r, started.elapsed());
                return r;
            }
        }
    };
    let timeout = Duration::from_secs(state.config.request_timeout_seconds);
    let response = match tokio::time::timeout(timeout, next.run(request)).await {
        Ok(r) => r,
        Err(_) => {
            let mut r = (
                StatusCode::GATEWAY_TIMEOUT,
                format!("no response within {} s\n", timeout.as_secs()),
            )
                .into_response();
            r.extensions_mut().insert(Refused("timeout"));
            r
        }
    };
    if !probe {
        access_log(&method, &path, slot.get(), response.status(), started);
    }
    metrics().http_request(&method, &path, &response, started.elapsed());
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
