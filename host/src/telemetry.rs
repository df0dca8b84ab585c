//! Telemetry: Prometheus metrics ([`metrics`], served by [`listener`]; process figures from
//! [`process`]) and OpenTelemetry traces ([`trace`]). [`observed`] is the one place an MCP
//! request is measured and traced; the other metrics are counted where their event happens.
//! See docs/operations.md for every metric and span.

pub mod listener;
pub mod metrics;
pub mod observed;
pub mod process;
pub mod trace;

pub use metrics::metrics;
pub use observed::Observed;

/// A span for work done for a request (an index read, a build, a git sync, a script run), a
/// child of the current span; `Span::none()` when traces are off (no cost).
#[macro_export]
macro_rules! child_span {
    ($name:expr $(, $($field:tt)*)?) => {
        if $crate::telemetry::trace::enabled() {
            tracing::info_span!(target: "skills_mcp::telemetry::work", $name $(, $($field)*)?)
        } else {
            tracing::Span::none()
        }
    };
}
