//! The one place an MCP request is measured and traced, whatever the transport.
//!
//! [`Observed`] wraps the [`SkillsServer`] that both transports serve (stdio, and the factory of
//! the Streamable HTTP service): every request method delegates to the server inside an
//! [`Observation`], which
//! - observes `mcp_server_operation_duration_seconds` once the answer is ready, labelled with
//!   the method, the tool of `tools/call` (one of the server's tools, else `_OTHER`) and, on
//!   failure, `error.type` (the JSON-RPC error code, or `tool_error` for a result with
//!   `isError`);
//! - when traces are exported ([`super::trace`]), runs the request in a span named
//!   `{mcp.method.name} {target}` (`tools/call search_skills`) with the conventions'
//!   attributes, whose parent is the client's trace: `params._meta.traceparent`, else the
//!   HTTP `traceparent` header. Index reads, builds, git syncs and script runs made for the
//!   request are its child spans.
//!
//! Requests rmcp answers itself before dispatching (an unsupported protocol version, missing
//! `_meta` of the 2026-07-28 lifecycle, an unknown method) and notifications are not counted
//! here; the HTTP metrics see them.

#![allow(clippy::manual_async_fn)]
#![allow(deprecated)] // rmcp marks logging and resources/subscribe deprecated; clients still use them.

use std::{any::Any, borrow::Cow, future::Future, time::Instant};

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::*,
    service::{MaybeSendFuture, NotificationContext, RequestContext, SubscriptionContext},
};
use tracing::{Instrument as _, field::Empty};

use super::metrics::{McpLabels, OTHER, metrics};
use crate::mcp::SkillsServer;

/// The server as the transports serve it: measured and traced.
pub struct Observed(
    pub SkillsServer,
    /// Set by an `initialize` over HTTP: this instance serves a session (clients older than
    /// 2026-07-28) and counts in `skills_mcp_http_sessions_open` until rmcp drops it (the
    /// session closed or expired).
    std::sync::OnceLock<super::metrics::GaugeGuard>,
);

impl Observed {
    pub fn new(server: SkillsServer) -> Self {
        Self(server, std::sync::OnceLock::new())
    }
}

/// What a request is about, for its span name and labels.
enum Target {
    Tool(String),
    Prompt(String),
    Resource(String),
}

/// One request being handled.
struct Observation {
    method: &'static str,
    tool: Option<Cow<'static, str>>,
    started: Instant,
    span: tracing::Span,
}

impl Observation {
    fn start(
        server: &SkillsServer,
        method: &'static str,
        target: Option<Target>,
        context: &RequestContext<RoleServer>,
    ) -> Self {
        let tool = match &target {
            Some(Target::Tool(name)) => Some(server.tool_label(name)),
            _ => None,
        };
        let span = if super::trace::enabled() {
            request_span(method, target.as_ref(), tool.as_deref(), context)
        } else {
            tracing::Span::none()
        };
        Self {
            method,
            tool,
            started: Instant::now(),
            span,
        }
    }

    /// Run the handler's future in the span; count and close when it answers.
    ///
    /// The handler's future is boxed: rmcp's `handle_request` future is as large as the largest
    /// of every method's, and it is moved and copied several times as the task that runs it is
    /// spawned (it was 8.8 KB, `tools/call` 6.8 KB of it: every request copied about 100 KB
    /// through `tokio::spawn`, callgrind); boxed, it is allocated once, at its own size.
    fn run<T: Any>(
        self,
        handler: impl Future<Output = Result<T, McpError>> + MaybeSendFuture,
    ) -> impl Future<Output = Result<T, McpError>> + MaybeSendFuture {
        let span = self.span.clone();
        let handler = Box::pin(handler);
        async move {
            let result = handler.await;
            let error: Option<Cow<'static, str>> = match &result {
                Err(e) => Some(e.code.0.to_string().into()),
                Ok(ok) => (ok as &dyn Any)
                    .downcast_ref::<CallToolResponse>()
                    .is_some_and(
                        |r| matches!(r, CallToolResponse::Complete(r) if r.is_error == Some(true)),
                    )
                    .then_some(Cow::Borrowed("tool_error")),
            };
            if let Some(e) = &error {
                self.span.record("error.type", e.as_ref());
                self.span.record("otel.status_code", "ERROR");
            }
            metrics()
                .mcp_operation
                .get_or_create(&McpLabels {
                    mcp_method_name: self.method,
                    gen_ai_tool_name: self.tool,
                    error_type: error,
                })
                .observe(self.started.elapsed().as_secs_f64());
            result
        }
        .instrument(span)
    }
}

/// The request's span, its parent the client's trace when it sent one.
fn request_span(
    method: &'static str,
    target: Option<&Target>,
    tool: Option<&str>,
    context: &RequestContext<RoleServer>,
) -> tracing::Span {
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let parts = context.extensions.get::<axum::http::request::Parts>();
    let header = |name: &str| {
        parts
            .and_then(|p| p.headers.get(name))
            .and_then(|v| v.to_str().ok())
    };
    let meta = |name: &str| context.meta.get(name).and_then(|v| v.as_str());
    let name = match target {
        Some(Target::Tool(_)) => format!("{method} {}", tool.unwrap_or(OTHER)),
        Some(Target::Prompt(p)) => format!("{method} {}", clip(p)),
        _ => method.to_owned(),
    };
    let span = tracing::info_span!(
        target: "skills_mcp::telemetry::request",
        "mcp request",
        otel.name = name,
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = method,
        mcp.session.id = Empty,
        mcp.protocol.version = Empty,
        mcp.resource.uri = Empty,
        jsonrpc.request.id = %context.id,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        gen_ai.operation.name = Empty,
        error.type = Empty,
        network.transport = if parts.is_some() { "tcp" } else { "pipe" },
        trace_id = Empty,
    );
    match target {
        Some(Target::Tool(name)) => {
            span.record("gen_ai.tool.name", clip(name).as_str());
            span.record("gen_ai.operation.name", "execute_tool");
        }
        Some(Target::Prompt(name)) => {
            span.record("gen_ai.prompt.name", clip(name).as_str());
        }
        Some(Target::Resource(uri)) => {
            span.record("mcp.resource.uri", clip(uri).as_str());
        }
        None => {}
    }
    if let Some(session) = header("mcp-session-id") {
        span.record("mcp.session.id", clip(session).as_str());
    }
    let version = context
        .protocol_version()
        .map(|v| v.to_string())
        .or_else(|| header("mcp-protocol-version").map(str::to_owned));
    if let Some(v) = version {
        span.record("mcp.protocol.version", clip(&v).as_str());
    }
    let parent = super::trace::extract(meta("traceparent"), meta("tracestate"))
        .or_else(|| super::trace::extract(header("traceparent"), header("tracestate")));
    if let Some(parent) = parent {
        let _ = span.set_parent(parent);
    }
    // For log lines written within the request (the parent is final now).
    if let Some(id) = super::trace::trace_id(&span) {
        span.record("trace_id", id.as_str());
    }
    span
}

/// A client's string as an attribute: at most 200 characters.
fn clip(s: &str) -> String {
    s.chars().take(200).collect()
}

impl ServerHandler for Observed {
    fn ping(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "ping", target, &context);
        span.run(self.0.ping(context))
    }

    fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<InitializeResult, McpError>> + MaybeSendFuture + '_ {
        if context
            .extensions
            .get::<axum::http::request::Parts>()
            .is_some()
        {
            let _ = self.1.set(super::metrics::GaugeGuard::new(
                &metrics().http_sessions_open,
            ));
        }
        let target = None;
        let span = Observation::start(&self.0, "initialize", target, &context);
        span.run(self.0.initialize(request, context))
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, McpError> {
        self.0.negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.0.supported_protocol_versions()
    }

    fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<DiscoverResult, McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "server/discover", target, &context);
        span.run(self.0.discover(context))
    }

    fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CompleteResult, McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "completion/complete", target, &context);
        span.run(self.0.complete(request, context))
    }

    fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "logging/setLevel", target, &context);
        span.run(self.0.set_level(request, context))
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, McpError>> + MaybeSendFuture + '_ {
        let target = Some(Target::Prompt(request.name.to_string()));
        let span = Observation::start(&self.0, "prompts/get", target, &context);
        span.run(self.0.get_prompt(request, context))
    }

    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListPromptsResult, McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "prompts/list", target, &context);
        span.run(self.0.list_prompts(request, context))
    }

    fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourcesResult, McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "resources/list", target, &context);
        span.run(self.0.list_resources(request, context))
    }

    fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourceTemplatesResult, McpError>> + MaybeSendFuture + '_
    {
        let target = None;
        let span = Observation::start(&self.0, "resources/templates/list", target, &context);
        span.run(self.0.list_resource_templates(request, context))
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, McpError>> + MaybeSendFuture + '_ {
        let target = Some(Target::Resource(request.uri.to_string()));
        let span = Observation::start(&self.0, "resources/read", target, &context);
        span.run(self.0.read_resource(request, context))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.0.accepted_subscription_filter(requested)
    }

    fn listen(
        &self,
        context: SubscriptionContext,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        // Boxed as in `Observation::run`: no method's future makes every request's larger.
        Box::pin(self.0.listen(context))
    }

    fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "resources/subscribe", target, &context);
        span.run(self.0.subscribe(request, context))
    }

    fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "resources/unsubscribe", target, &context);
        span.run(self.0.unsubscribe(request, context))
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, McpError>> + MaybeSendFuture + '_ {
        let target = Some(Target::Tool(request.name.to_string()));
        let span = Observation::start(&self.0, "tools/call", target, &context);
        span.run(self.0.call_tool(request, context))
    }

    fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "tools/list", target, &context);
        span.run(self.0.list_tools(request, context))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.get_tool(name)
    }

    fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CustomResult, McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "_OTHER", target, &context);
        span.run(self.0.on_custom_request(request, context))
    }

    fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.0.on_cancelled(notification, context)
    }

    fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.0.on_progress(notification, context)
    }

    fn on_initialized(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.0.on_initialized(context)
    }

    fn on_roots_list_changed(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.0.on_roots_list_changed(context)
    }

    fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.0.on_custom_notification(notification, context)
    }

    fn get_info(&self) -> ServerConfig {
        self.0.get_info()
    }

    fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetTaskResult, McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "tasks/get", target, &context);
        span.run(self.0.get_task(request, context))
    }

    fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "tasks/update", target, &context);
        span.run(self.0.update_task(request, context))
    }

    fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "tasks/cancel", target, &context);
        span.run(self.0.cancel_task(request, context))
    }

    fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListSkillsResult, McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "skills/list", target, &context);
        span.run(self.0.list_skills(request, context))
    }

    fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetSkillResult, McpError>> + MaybeSendFuture + '_ {
        let target = None;
        let span = Observation::start(&self.0, "skills/get", target, &context);
        span.run(self.0.get_skill(request, context))
    }

    fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceDirectoryResult, McpError>> + MaybeSendFuture + '_
    {
        let target = None;
        let span = Observation::start(&self.0, "resources/directory/read", target, &context);
        span.run(self.0.read_resource_directory(request, context))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size of the future `f` returns (no call: its type is enough).
    fn size<A, B, F: Future>(_: impl Fn(&'static Observed, A, B) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    #[test]
    fn handler_futures_are_boxed() {
        type Context = RequestContext<RoleServer>;
        // Unboxed, `tools/call`'s was 6,784 bytes and rmcp's `handle_request` 8,784.
        let sizes = [
            size(|s, r: CallToolRequestParams, c: Context| s.call_tool(r, c)),
            size(|s, r: ReadResourceRequestParams, c: Context| s.read_resource(r, c)),
            size(|s, r: InitializeRequestParams, c: Context| s.initialize(r, c)),
            size(|s, r: Option<PaginatedRequestParams>, c: Context| s.list_skills(r, c)),
            size(|s, c: SubscriptionContext, _: ()| s.listen(c)),
        ];
        assert!(sizes.iter().all(|&n| n <= 256), "{sizes:?}");
    }
}
