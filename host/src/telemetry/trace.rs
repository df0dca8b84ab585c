//! OpenTelemetry traces over OTLP HTTP/protobuf, configured by the standard `OTEL_*` variables
//! (only the operator's environment: nothing a client or a skill sends changes where spans go).
//!
//! On when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set, unless
//! `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. The SDK reads the rest:
//! `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES` (default service name `skills-mcp`),
//! `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`, `OTEL_EXPORTER_OTLP_HEADERS`,
//! `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_BSP_*`. The protocol is `http/protobuf` (the only one
//! built in; another value turns traces off with a warning). Spans are the `tracing` spans of
//! this crate ([`tracing_opentelemetry`] bridges them), sent by the SDK's batch processor on its
//! own thread through [`UreqClient`] (the ureq client and rustls the server already has: https
//! endpoints work, no second TLS stack). Off: no layer, no exporter, no cost.

use std::{
    pin::Pin,
    sync::{Mutex, OnceLock},
};

use opentelemetry::{
    Context,
    propagation::{Extractor, TextMapPropagator as _},
    trace::{TraceContextExt as _, TracerProvider as _},
};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::{Resource, propagation::TraceContextPropagator, trace::SdkTracerProvider};
use tracing_subscriber::{Layer, registry::LookupSpan};

/// The provider, kept to flush spans at exit ([`shutdown`]).
static PROVIDER: OnceLock<Mutex<Option<SdkTracerProvider>>> = OnceLock::new();

/// Whether traces are exported (the request spans are only made then).
pub fn enabled() -> bool {
    PROVIDER
        .get()
        .is_some_and(|p| p.lock().is_ok_and(|p| p.is_some()))
}

/// What the environment asks for: `Ok(None)` when traces are off.
fn wanted(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<()>, String> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    if set("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none")) {
        return Ok(None);
    }
    if set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_none()
        && set("OTEL_EXPORTER_OTLP_ENDPOINT").is_none()
    {
        return Ok(None);
    }
    let protocol =
        set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| set("OTEL_EXPORTER_OTLP_PROTOCOL"));
    match protocol.as_deref().map(str::trim) {
        None | Some("http/protobuf") => Ok(Some(())),
        Some(other) => Err(format!(
            "OTEL_EXPORTER_OTLP_PROTOCOL={other:?} is not supported (only http/protobuf); \
             traces are off"
        )),
    }
}

/// Whether this process's environment asks for traces (before the layer exists).
pub fn wanted_by_env() -> bool {
    matches!(wanted(&|k: &str| std::env::var(k).ok()), Ok(Some(())))
}

/// The layer exporting this crate's spans, when the environment asks for traces (`None`
/// otherwise, or when the exporter cannot be built: a warning says why). Called once, by
/// [`crate::logging::init`].
pub fn layer<S>() -> Option<impl Layer<S>>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    let env = |k: &str| std::env::var(k).ok();
    match wanted(&env) {
        Ok(None) => return None,
        Ok(Some(())) => {}
        Err(why) => {
            eprintln!("skills-mcp: warning: {why}");
            return None;
        }
    }
    let exporter = match opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_http_client(UreqClient::new())
        .build()
    {
        Ok(e) => e,
        Err(e) => {
            eprintln!("skills-mcp: warning: traces are off: the OTLP exporter: {e}");
            return None;
        }
    };
    let mut resource = Resource::builder();
    let named = env("OTEL_SERVICE_NAME").is_some_and(|v| !v.trim().is_empty())
        || env("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|v| v.contains("service.name="));
    if !named {
        resource = resource.with_service_name("skills-mcp");
    }
    resource = resource.with_attribute(opentelemetry::KeyValue::new(
        "service.version",
        env!("CARGO_PKG_VERSION"),
    ));
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build();
    let tracer = provider.tracer("skills-mcp");
    let _ = PROVIDER.set(Mutex::new(Some(provider)));
    Some(
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_tracked_inactivity(false)
            .with_filter(tracing_subscriber::filter::filter_fn(
                |meta: &tracing::Metadata<'_>| {
                    meta.is_span() && meta.target().starts_with("skills_mcp")
                },
            )),
    )
}

/// Send the spans still queued and stop the exporter (end of `serve`).
pub fn shutdown() {
    let provider = PROVIDER
        .get()
        .and_then(|p| p.lock().ok().and_then(|mut p| p.take()));
    if let Some(provider) = provider
        && let Err(e) = provider.shutdown()
    {
        tracing::warn!("traces: the last spans could not be sent: {e}");
    }
}

/// The W3C `traceparent` (and `tracestate`) a client sent, as a parent context.
pub fn extract(traceparent: Option<&str>, tracestate: Option<&str>) -> Option<Context> {
    struct Carrier<'a>(Option<&'a str>, Option<&'a str>);
    impl Extractor for Carrier<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            match key {
                "traceparent" => self.0,
                "tracestate" => self.1,
                _ => None,
            }
        }
        fn keys(&self) -> Vec<&str> {
            vec!["traceparent", "tracestate"]
        }
    }
    traceparent?;
    let cx = TraceContextPropagator::new().extract(&Carrier(traceparent, tracestate));
    cx.span().span_context().is_valid().then_some(cx)
}

/// The trace id of `span` (32 hex digits), when it is part of an exported trace.
pub fn trace_id(span: &tracing::Span) -> Option<String> {
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let cx = span.context();
    let sc = cx.span().span_context().clone();
    sc.is_valid().then(|| sc.trace_id().to_string())
}

/// An OTLP HTTP client over ureq (blocking; the SDK's batch processor calls it on its own
/// thread).
#[derive(Debug)]
pub struct UreqClient(ureq::Agent);

impl UreqClient {
    pub fn new() -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(std::time::Duration::from_secs(10)))
            .build()
            .new_agent();
        Self(agent)
    }

    fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let request = Request::from_parts(parts, body.to_vec());
        let response = self.0.run(request)?;
        let (parts, mut body) = response.into_parts();
        let bytes = body.with_config().limit(4 << 20).read_to_vec()?;
        Ok(Response::from_parts(parts, Bytes::from(bytes)))
    }
}

impl Default for UreqClient {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpClient for UreqClient {
    fn send_bytes<'a, 'b>(
        &'a self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        Box::pin(async move { self.send(request) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_decides() {
        fn with<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        }
        assert_eq!(wanted(&with(&[])), Ok(None));
        let on = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")];
        assert_eq!(wanted(&with(&on)), Ok(Some(())));
        assert_eq!(
            wanted(&with(&[
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://x/v1/traces"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ])),
            Ok(Some(()))
        );
        assert_eq!(
            wanted(&with(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"),
                ("OTEL_SDK_DISABLED", "true"),
            ])),
            Ok(None)
        );
        assert_eq!(
            wanted(&with(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"),
                ("OTEL_TRACES_EXPORTER", "none"),
            ])),
            Ok(None)
        );
        assert!(
            wanted(&with(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ]))
            .is_err()
        );
    }

    #[test]
    fn a_traceparent_is_a_parent_and_garbage_is_none() {
        let cx = extract(
            Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            None,
        )
        .unwrap();
        assert_eq!(
            cx.span().span_context().trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert!(extract(Some("00-xyz"), None).is_none());
        assert!(extract(None, None).is_none());
    }
}
