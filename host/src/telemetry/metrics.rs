//! The one metrics registry of the process and every metric in it.
//!
//! Each metric is counted at the one place where its event happens (the MCP dispatch of
//! [`super::observed`], the HTTP limits layer, the authorization refusal, the git sync, the usage
//! recorder, the script runner, the engine's trap recovery, the index build) through
//! [`metrics()`]: an atomic add or a histogram observation, never a global lock. The registry
//! exists whether or not it is served; `--metrics-listen` only serves it ([`super::listener`]),
//! written by prometheus-client in the Prometheus text format (0.0.4).
//!
//! No label takes a value a client chooses freely: methods and tool names are the server's own
//! (anything else is `_OTHER`), routes are a fixed list, git sources are the operator's.

use std::{
    borrow::Cow,
    sync::{LazyLock, atomic::AtomicU64},
    time::Duration,
};

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
    },
    registry::{Registry, Unit},
};

/// The label value of anything outside a bounded set.
pub const OTHER: &str = "_OTHER";

/// `mcp_server_operation_duration_seconds`: one MCP request handled by the server. A label
/// without a value is left out (not written as `""`).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct McpLabels {
    /// `mcp.method.name`: the JSON-RPC method (only those the server dispatches).
    pub mcp_method_name: &'static str,
    /// `gen_ai.tool.name`: the tool of `tools/call` (one of the server's tools, else `_OTHER`).
    pub gen_ai_tool_name: Option<Cow<'static, str>>,
    /// `error.type`: the JSON-RPC error code, or `tool_error` for a tool result with `isError`.
    pub error_type: Option<Cow<'static, str>>,
}

impl EncodeLabelSet for McpLabels {
    fn encode(
        &self,
        encoder: &mut prometheus_client::encoding::LabelSetEncoder,
    ) -> Result<(), std::fmt::Error> {
        use prometheus_client::encoding::EncodeLabel as _;
        ("mcp_method_name", self.mcp_method_name).encode(encoder.encode_label())?;
        if let Some(tool) = &self.gen_ai_tool_name {
            ("gen_ai_tool_name", tool.as_ref()).encode(encoder.encode_label())?;
        }
        if let Some(error) = &self.error_type {
            ("error_type", error.as_ref()).encode(encoder.encode_label())?;
        }
        Ok(())
    }
}

/// `http_server_request_duration_seconds`: one HTTP request on the MCP listener.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HttpLabels {
    /// `http.request.method` (GET, POST, DELETE, OPTIONS, HEAD, else `_OTHER`).
    pub http_request_method: &'static str,
    /// `http.route`: `/mcp`, `/healthz`, `/readyz`, `/.well-known/...`, else `other`.
    pub http_route: &'static str,
    /// `http.response.status_code`.
    pub http_response_status_code: u16,
}

/// A git source (the operator names them in `sources`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SourceLabels {
    pub source: String,
}

/// A git sync's outcome per source.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SyncLabels {
    pub source: String,
    /// `updated`, `unchanged` or `failed`.
    pub outcome: &'static str,
}

/// A remote source of any kind (`git`, `oci`) and its sync outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SourceSyncLabels {
    /// `git` or `oci`.
    pub kind: &'static str,
    pub source: String,
    /// `updated`, `unchanged` or `failed`.
    pub outcome: &'static str,
}

/// A remote source of any kind.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SourceKindLabels {
    pub kind: &'static str,
    pub source: String,
}

/// How a script run ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ExitLabels {
    /// `ok` (exit 0), `failed` (another exit code), `timeout`, `killed` (a signal or the
    /// output limit), `error` (could not start).
    pub outcome: &'static str,
}

/// Why a request was refused before the MCP server answered it.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RefusedLabels {
    /// `auth` (401: no or a bad credential), `scope` (403: missing scope), `host_origin` (403:
    /// Host or Origin not allowed), `body_too_large` (413), `in_flight` (503: the in-flight
    /// cap), `not_ready` (503: still indexing), `timeout` (504), `auth_unavailable` (503: the
    /// issuer's keys cannot be fetched).
    pub reason: &'static str,
}

/// Build information.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BuildLabels {
    pub version: &'static str,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// Every metric of the process.
pub struct Metrics {
    registry: Registry,
    pub mcp_operation: HistogramFamily<McpLabels>,
    pub http_request: HistogramFamily<HttpLabels>,
    pub skills_indexed: Gauge,
    pub index_build: Histogram,
    pub git_last_success: Family<SourceLabels, Gauge<f64, AtomicU64>>,
    pub git_syncs: Family<SyncLabels, Counter>,
    pub source_last_success: Family<SourceKindLabels, Gauge<f64, AtomicU64>>,
    pub source_syncs: Family<SourceSyncLabels, Counter>,
    pub analytics_pending: Gauge,
    pub analytics_dropped: Counter,
    pub scripts_running: Gauge,
    pub script_exits: Family<ExitLabels, Counter>,
    pub engine_restarts: Counter,
    pub http_sessions_open: Gauge,
    pub refused: Family<RefusedLabels, Counter>,
    pub jwks_failures: Counter,
}

/// Request durations: 1 ms to ~16 s (the OpenTelemetry conventions' advice for HTTP and MCP).
fn request_buckets() -> Histogram {
    Histogram::new([
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
        10.0,
    ])
}

impl Metrics {
    fn new() -> Self {
        let mut r = Registry::default();
        let mcp_operation: HistogramFamily<McpLabels> =
            Family::new_with_constructor(request_buckets);
        r.register_with_unit(
            "mcp_server_operation_duration",
            "MCP requests handled, by method, tool and error type",
            Unit::Seconds,
            mcp_operation.clone(),
        );
        let http_request: HistogramFamily<HttpLabels> =
            Family::new_with_constructor(request_buckets);
        r.register_with_unit(
            "http_server_request_duration",
            "HTTP requests on the MCP listener, by method, route and status",
            Unit::Seconds,
            http_request.clone(),
        );
        r.register_collector(Box::new(super::process::Process));
        let own = r.sub_registry_with_prefix("skills_mcp");
        let skills_indexed = Gauge::default();
        own.register(
            "skills_indexed",
            "Skills in the index now served",
            skills_indexed.clone(),
        );
        let index_build = Histogram::new(exponential_buckets(0.01, 2.0, 14));
        own.register_with_unit(
            "index_build_duration",
            "Index builds (start-up, reload, git update)",
            Unit::Seconds,
            index_build.clone(),
        );
        let git_last_success = Family::<SourceLabels, Gauge<f64, AtomicU64>>::default();
        own.register(
            "git_last_success_timestamp_seconds",
            "Unix time of the last successful sync of each git source",
            git_last_success.clone(),
        );
        let git_syncs = Family::<SyncLabels, Counter>::default();
        own.register(
            "git_syncs",
            "Git source syncs by source and outcome",
            git_syncs.clone(),
        );
        let source_last_success = Family::<SourceKindLabels, Gauge<f64, AtomicU64>>::default();
        own.register(
            "source_last_success_timestamp_seconds",
            "Unix time of the last successful sync of each remote source (git, OCI)",
            source_last_success.clone(),
        );
        let source_syncs = Family::<SourceSyncLabels, Counter>::default();
        own.register(
            "source_syncs",
            "Remote source syncs (git, OCI) by kind, source and outcome",
            source_syncs.clone(),
        );
        let analytics_pending = Gauge::default();
        own.register(
            "analytics_events_pending",
            "Usage events queued, not yet written to the usage store or sink",
            analytics_pending.clone(),
        );
        let analytics_dropped = Counter::default();
        own.register(
            "analytics_events_dropped",
            "Usage events dropped (queue full or store unavailable)",
            analytics_dropped.clone(),
        );
        let scripts_running = Gauge::default();
        own.register(
            "scripts_running",
            "Scripts running now",
            scripts_running.clone(),
        );
        let script_exits = Family::<ExitLabels, Counter>::default();
        own.register(
            "script_exits",
            "Script runs ended, by outcome",
            script_exits.clone(),
        );
        let engine_restarts = Counter::default();
        own.register(
            "engine_restarts",
            "Engine instances replaced after a trap",
            engine_restarts.clone(),
        );
        let http_sessions_open = Gauge::default();
        own.register(
            "http_sessions_open",
            "MCP sessions open over HTTP (clients older than 2026-07-28)",
            http_sessions_open.clone(),
        );
        let refused = Family::<RefusedLabels, Counter>::default();
        own.register(
            "requests_refused",
            "HTTP requests refused before the MCP server, by reason",
            refused.clone(),
        );
        let jwks_failures = Counter::default();
        own.register(
            "jwks_fetch_failures",
            "Failed fetches of the OAuth issuer's JWKS",
            jwks_failures.clone(),
        );
        let build = Family::<BuildLabels, Gauge>::default();
        build
            .get_or_create(&BuildLabels {
                version: env!("CARGO_PKG_VERSION"),
            })
            .set(1);
        own.register("build_info", "The running build (always 1)", build);
        Self {
            registry: r,
            mcp_operation,
            http_request,
            skills_indexed,
            index_build,
            git_last_success,
            git_syncs,
            source_last_success,
            source_syncs,
            analytics_pending,
            analytics_dropped,
            scripts_running,
            script_exits,
            engine_restarts,
            http_sessions_open,
            refused,
            jwks_failures,
        }
    }

    /// The whole registry in the Prometheus text format (0.0.4).
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(8 << 10);
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry);
        out
    }

    /// A request refused before the MCP server, for `reason` (see [`RefusedLabels`]).
    pub fn refuse(&self, reason: &'static str) {
        self.refused.get_or_create(&RefusedLabels { reason }).inc();
    }

    /// A sync of the remote source `source` of `kind` (`git`, `oci`) ended with `outcome`
    /// (`updated`, `unchanged`, `failed`); a git source's also counts in the git families.
    pub fn source_sync(&self, kind: &'static str, source: &str, outcome: &'static str) {
        self.source_syncs
            .get_or_create(&SourceSyncLabels {
                kind,
                source: source.to_owned(),
                outcome,
            })
            .inc();
        if outcome != "failed" {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            self.source_last_success
                .get_or_create(&SourceKindLabels {
                    kind,
                    source: source.to_owned(),
                })
                .set(now);
        }
        if kind == "git" {
            self.git_sync(source, outcome);
        }
    }

    /// A git sync of `source` ended with `outcome` (`updated`, `unchanged`, `failed`).
    pub fn git_sync(&self, source: &str, outcome: &'static str) {
        self.git_syncs
            .get_or_create(&SyncLabels {
                source: source.to_owned(),
                outcome,
            })
            .inc();
        if outcome != "failed" {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            self.git_last_success
                .get_or_create(&SourceLabels {
                    source: source.to_owned(),
                })
                .set(now);
        }
    }

    /// An index build of `skills` skills that took `took`.
    pub fn index_built(&self, skills: usize, took: Duration) {
        self.skills_indexed
            .set(i64::try_from(skills).unwrap_or(i64::MAX));
        self.index_build.observe(took.as_secs_f64());
    }

    /// A script run ended with `outcome` (see [`ExitLabels`]).
    pub fn script_exit(&self, outcome: &'static str) {
        self.script_exits
            .get_or_create(&ExitLabels { outcome })
            .inc();
    }
}

/// Put on a response refused before the MCP server (see [`RefusedLabels`] for the reasons);
/// the HTTP limits layer counts it with the request ([`Metrics::http_request`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused(pub &'static str);

/// The `http.route` of a path: a fixed set.
pub fn http_route(path: &str) -> &'static str {
    match path {
        "/mcp" => "/mcp",
        "/healthz" => "/healthz",
        "/readyz" => "/readyz",
        p if p.starts_with("/.well-known/") => "/.well-known/...",
        _ => "other",
    }
}

/// The `http.request.method` of a method: the usual ones, else `_OTHER`.
fn http_method(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::HEAD => "HEAD",
        Method::PUT => "PUT",
        _ => OTHER,
    }
}

impl Metrics {
    /// One HTTP request answered with `response` after `elapsed`: its duration, and its
    /// refusal when a layer marked it refused ([`Refused`]).
    pub fn http_request(
        &self,
        method: &axum::http::Method,
        path: &str,
        response: &axum::response::Response,
        elapsed: Duration,
    ) {
        let route = http_route(path);
        let status = response.status();
        self.http_request
            .get_or_create(&HttpLabels {
                http_request_method: http_method(method),
                http_route: route,
                http_response_status_code: status.as_u16(),
            })
            .observe(elapsed.as_secs_f64());
        if let Some(Refused(reason)) = response.extensions().get::<Refused>() {
            self.refuse(reason);
        }
    }
}

static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

/// The process's metrics.
pub fn metrics() -> &'static Metrics {
    &METRICS
}

/// Keeps a gauge one higher while alive (scripts running, sessions open).
pub struct GaugeGuard(&'static Gauge);

impl GaugeGuard {
    pub fn new(gauge: &'static Gauge) -> Self {
        gauge.inc();
        Self(gauge)
    }
}

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_encodes_our_names_with_their_labels() {
        let m = metrics();
        m.refuse("in_flight");
        m.git_sync("team", "updated");
        m.mcp_operation
            .get_or_create(&McpLabels {
                mcp_method_name: "tools/call",
                gen_ai_tool_name: Some("search_skills".into()),
                error_type: None,
            })
            .observe(0.002);
        let text = m.encode();
        for needle in [
            "# TYPE mcp_server_operation_duration_seconds histogram",
            "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"search_skills\"}",
            "skills_mcp_requests_refused_total{reason=\"in_flight\"}",
            "skills_mcp_git_syncs_total{source=\"team\",outcome=\"updated\"} 1",
            "skills_mcp_git_last_success_timestamp_seconds{source=\"team\"}",
            "skills_mcp_build_info{version=\"",
            "process_resident_memory_bytes ",
            "process_cpu_seconds_total ",
            "process_open_fds ",
        ] {
            assert!(text.contains(needle), "{needle} not in\n{text}");
        }
    }
}
