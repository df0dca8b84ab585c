//! Logs: `tracing` events to stderr (text or JSON lines, filtered by `RUST_LOG` or
//! `--log-level`), and to every MCP client that has the `logging` capability.
//!
//! stdout is the MCP stream and the CLI's output, so nothing here ever writes to it. The MCP
//! side is a [`Layer`] that forwards the server's events about its skills (the targets of
//! [`CLIENT_TARGETS`]: broken skills, reloads, git updates; never the HTTP access log, scripts
//! or authentication, which would tell one client about another) at or above
//! each client's level (`logging/setLevel`; warning until a client sets one) as
//! `notifications/message`: the event is formatted once and offered to each client's bounded
//! queue with `try_send` (a full queue drops the message; the logging call never waits), and a
//! task per client sends the queue. Events raised while forwarding are not forwarded again.

#![allow(deprecated)] // rmcp marks MCP logging deprecated (SEP-2577); clients still use it.

use std::cell::Cell;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;

/// rmcp warns about every error answer it sends (`response error id=..`): a client's bad
/// request, not the server's trouble. Below debug, only its errors are shown.
const QUIET: &str = "rmcp::service=error";
/// The target prefix of this crate's events: the only ones sent to MCP clients.
const OWN_TARGET: &str = "skills_mcp";
/// The modules whose events MCP clients receive: what concerns the skills every client is
/// served. Other modules' events (HTTP access, authentication, scripts, analytics, start-up)
/// stay in the operator's log.
pub const CLIENT_TARGETS: [&str; 3] = [
    "skills_mcp::mcp",
    "skills_mcp::sources",
    "skills_mcp::catalog",
];

/// Whether the server's events about its skills go to MCP clients at all: off while access
/// rules are in force (a finding names a skill file, which may be hidden from a client).
static CLIENT_EVENTS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Forward the server's events about its skills to MCP clients (`true`, the default) or not
/// (under access rules: see [`crate::access`]).
pub fn forward_skill_events(on: bool) {
    CLIENT_EVENTS.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether events of `target` are forwarded to MCP clients.
fn for_clients(target: &str) -> bool {
    CLIENT_TARGETS.iter().any(|t| {
        target
            .strip_prefix(t)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    })
}

/// Messages waiting for one client; more are dropped.
const QUEUE: usize = 256;

/// `--log-level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogLevel {
    Off,
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

/// `--log-format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// `skills-mcp: warning: message`, one line each.
    #[default]
    Text,
    /// One JSON object per line (timestamp, level, target, fields), for a log collector.
    Json,
}

/// The stderr filter: `--log-level` when given (this crate at that level, other crates at
/// warning at most), else `RUST_LOG`, else this crate at info and others at warning; rmcp's
/// per-answer warnings ([`QUIET`]) only from `--log-level debug` or a `RUST_LOG` naming rmcp.
pub fn filter(level: Option<LogLevel>, rust_log: Option<&str>) -> EnvFilter {
    let directives = match level {
        Some(level) => {
            let own = match level {
                LogLevel::Off => "off",
                LogLevel::Error => "error",
                LogLevel::Warn => "warn",
                LogLevel::Info => "info",
                LogLevel::Debug => "debug",
                LogLevel::Trace => "trace",
            };
            match level {
                LogLevel::Off | LogLevel::Error => format!("{own},{OWN_TARGET}={own}"),
                LogLevel::Warn | LogLevel::Info => format!("warn,{QUIET},{OWN_TARGET}={own}"),
                LogLevel::Debug | LogLevel::Trace => format!("warn,{OWN_TARGET}={own}"),
            }
        }
        None => match rust_log.map(str::trim).filter(|s| !s.is_empty()) {
            // rmcp's per-answer warnings stay quiet unless the filter names rmcp itself.
            Some(spec) if spec.contains("rmcp") => spec.to_owned(),
            Some(spec) => format!("{spec},{QUIET}"),
            None => format!("warn,{QUIET},{OWN_TARGET}=info"),
        },
    };
    EnvFilter::builder().parse_lossy(directives)
}

/// Install the process's subscriber: stderr in `format` filtered by [`filter`] (reading
/// `RUST_LOG`), plus the MCP forwarding layer. A second call does nothing.
pub fn init(level: Option<LogLevel>, format: LogFormat) {
    let rust_log = std::env::var("RUST_LOG").ok();
    let filter = filter(level, rust_log.as_deref());
    let stderr = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .event_format(Plain)
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            // Within a traced request, the request span's fields (its trace_id among them).
            .with_current_span(crate::telemetry::trace::wanted_by_env())
            .with_span_list(false)
            .with_filter(filter)
            .boxed(),
    };
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(McpLayer.with_filter(tracing_subscriber::filter::filter_fn(
            |meta: &tracing::Metadata<'_>| for_clients(meta.target()),
        )))
        // OpenTelemetry traces when the OTEL_* environment asks for them (else no layer).
        .with(crate::telemetry::trace::layer())
        .try_init();
}

/// The text format: `skills-mcp: <level>: <message> <fields>` (no label for info), and the
/// target for events of other crates; one line per event, whatever the message holds (control
/// characters are written as escapes, see [`crate::logsafe`]).
struct Plain;

impl<S, N> FormatEvent<S, N> for Plain
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let meta = event.metadata();
        let label = match *meta.level() {
            Level::ERROR => "error: ",
            Level::WARN => "warning: ",
            Level::INFO => "",
            Level::DEBUG => "debug: ",
            Level::TRACE => "trace: ",
        };
        write!(writer, "skills-mcp: {label}")?;
        if !meta.target().starts_with(OWN_TARGET) {
            write!(writer, "{}: ", meta.target())?;
        }
        // Formatted aside, then escaped: whatever a call site passes (a folder name, a file's
        // text), a control character cannot end this line or start a forged one.
        let mut fields = String::new();
        ctx.field_format()
            .format_fields(Writer::new(&mut fields), event)?;
        // Within a traced request: the trace id, recorded on the request span.
        if crate::telemetry::trace::enabled()
            && let Some(id) = ctx.event_scope().and_then(|scope| {
                scope.into_iter().find_map(|span| {
                    let ext = span.extensions();
                    let f = ext.get::<tracing_subscriber::fmt::FormattedFields<N>>()?;
                    let at = f.fields.find("trace_id=")? + "trace_id=".len();
                    let id = f.fields.get(at..at + 32)?;
                    id.bytes()
                        .all(|b| b.is_ascii_hexdigit())
                        .then(|| id.to_owned())
                })
            })
        {
            fields.push_str(" trace_id=");
            fields.push_str(&id);
        }
        writeln!(writer, "{}", crate::logsafe::Escaped(&fields))
    }
}

/// One connected client: its level (a [`LoggingLevel`] as `u8`) and its queue.
struct Sink {
    level: Arc<AtomicU8>,
    tx: mpsc::Sender<LoggingMessageNotificationParam>,
}

static SINKS: Mutex<Vec<Sink>> = Mutex::new(Vec::new());

thread_local! {
    /// Set while an event is being forwarded: events raised meanwhile are not forwarded.
    static FORWARDING: Cell<bool> = const { Cell::new(false) };
}

/// A client's level as stored in its [`Sink`].
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The MCP level of a tracing level.
fn mcp_level(level: Level) -> LoggingLevel {
    match level {
        Level::ERROR => LoggingLevel::Error,
        Level::WARN => LoggingLevel::Warning,
        Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

/// A client's log level, shared between its forwarding task and `logging/setLevel`.
#[derive(Debug, Clone)]
pub struct ClientLevel(Arc<AtomicU8>);

impl ClientLevel {
    /// Change what this client receives (`logging/setLevel`).
    pub fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
    }
}

/// Start sending this process's log events to `peer` (from warning up, until
/// [`ClientLevel::set`] says otherwise), until the client goes away. Needs a tokio runtime.
pub fn forward_to(peer: Peer<RoleServer>) -> ClientLevel {
    let level = Arc::new(AtomicU8::new(rank(LoggingLevel::Warning)));
    let (tx, mut rx) = mpsc::channel::<LoggingMessageNotificationParam>(QUEUE);
    SINKS.lock().unwrap_or_else(|e| e.into_inner()).push(Sink {
        level: Arc::clone(&level),
        tx,
    });
    tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            if peer.notify_logging_message(message).await.is_err() {
                break;
            }
        }
        // Dropping `rx` closes the queue; the layer then forgets this sink.
    });
    ClientLevel(level)
}

/// Forwards this crate's events to the [`SINKS`].
struct McpLayer;

impl<S: Subscriber> Layer<S> for McpLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        if !for_clients(meta.target())
            || FORWARDING.with(Cell::get)
            || !CLIENT_EVENTS.load(std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        let level = mcp_level(*meta.level());
        let mut sinks = SINKS.lock().unwrap_or_else(|e| e.into_inner());
        sinks.retain(|s| !s.tx.is_closed());
        if !sinks
            .iter()
            .any(|s| rank(level) >= s.level.load(Ordering::Relaxed))
        {
            return;
        }
        FORWARDING.with(|f| f.set(true));
        let mut text = Message::default();
        event.record(&mut text);
        let message =
            LoggingMessageNotificationParam::new(level, text.0.into()).with_logger(meta.target());
        for sink in sinks.iter() {
            if rank(level) >= sink.level.load(Ordering::Relaxed) {
                // Never wait: a client that does not keep up loses messages, not the server.
                let _ = sink.tx.try_send(message.clone());
            }
        }
        FORWARDING.with(|f| f.set(false));
    }
}

/// An event's message followed by its other fields (`name=value`).
#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.insert_str(0, value);
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0.insert_str(0, &format!("{value:?}"));
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}
