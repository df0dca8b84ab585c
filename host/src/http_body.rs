//! The body of an MCP request over HTTP: read once, under one limit, and classified once.
//!
//! A POST to `/mcp` is read by [`BodyReader::read`] (the authorization layer calls it after the
//! token check, the `/mcp` gate of [`crate::http`] otherwise; whichever comes first reads, the
//! other finds the result), within `server.max_body_bytes` (413 beyond, declared or streamed),
//! and classified into an [`RpcCall`]: for each JSON-RPC message its method, `id`,
//! `params.name` (the tool of `tools/call`), `params.uri` and `params._meta`, and whether the
//! body is a batch. The call goes into the request's extensions (rmcp hands them to the
//! handlers in `RequestContext::extensions`) and the body is handed on as the bytes read, for
//! rmcp to parse as the protocol; the scope check and the access log read the call instead of
//! the body. Metrics and traces of requests belong here too: this is the one place that knows
//! what a request asks for.

use std::sync::{
    Arc, OnceLock,
    atomic::{AtomicU64, Ordering},
};

use axum::{
    body::Body,
    extract::Request,
    http::{HeaderValue, Method, StatusCode, header},
    response::{IntoResponse as _, Response},
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// What a POST body holds, as far as the server's own layers care; in the request's
/// extensions once read. Cheap to clone.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RpcCall {
    /// The messages in order: one, or those of a batch. Empty when the body is not JSON-RPC
    /// (not JSON, an empty batch, a message that is not an object, a field of a message given
    /// twice, `method` not a string or `params` not an object).
    pub messages: Arc<[RpcMessage]>,
    /// Whether the body is a JSON array (a batch).
    pub batch: bool,
    /// The body's size in bytes.
    pub bytes: usize,
}

/// One JSON-RPC message of a body.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct RpcMessage {
    /// `method` (`None`: a response to a request of the server).
    pub method: Option<String>,
    /// `id` (`None`: absent or `null`, i.e. a notification).
    pub id: Option<Value>,
    /// `params.name` when it is a string: the tool of `tools/call`, the prompt of `prompts/get`.
    pub name: Option<String>,
    /// `params.uri` when it is a string (`resources/read` and the like).
    pub uri: Option<String>,
    /// `params._meta` when it is an object (progress token, trace context, protocol version).
    pub meta: Option<Map<String, Value>>,
}

impl RpcMessage {
    /// The tool called, for `tools/call`.
    pub fn tool(&self) -> Option<&str> {
        match self.method.as_deref() {
            Some("tools/call") => self.name.as_deref(),
            _ => None,
        }
    }
}

/// One message on the wire. Derived `Deserialize` refuses a known field given twice, so a body
/// whose `method` or `name` is given twice (which another parser might read the other way) is
/// not classified at all.
#[derive(Deserialize)]
struct Wire {
    method: Option<String>,
    id: Option<Value>,
    params: Option<WireParams>,
}

#[derive(Deserialize)]
struct WireParams {
    name: Option<Value>,
    uri: Option<Value>,
    #[serde(rename = "_meta")]
    meta: Option<Value>,
}

impl From<Wire> for RpcMessage {
    fn from(w: Wire) -> Self {
        let (name, uri, meta) = match w.params {
            Some(p) => (p.name, p.uri, p.meta),
            None => (None, None, None),
        };
        let string = |v: Option<Value>| match v {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        Self {
            method: w.method,
            id: w.id,
            name: string(name),
            uri: string(uri),
            meta: match meta {
                Some(Value::Object(m)) => Some(m),
                _ => None,
            },
        }
    }
}

impl RpcCall {
    /// Classify a body: one pass of the JSON parser, skipping what is not kept (arguments are
    /// not copied).
    pub fn parse(body: &[u8]) -> Self {
        let batch = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
        let messages: Vec<RpcMessage> = if batch {
            serde_json::from_slice::<Vec<Wire>>(body)
                .map(|list| list.into_iter().map(RpcMessage::from).collect())
                .unwrap_or_default()
        } else {
            serde_json::from_slice::<Wire>(body)
                .map(|w| vec![RpcMessage::from(w)])
                .unwrap_or_default()
        };
        Self {
            messages: messages.into(),
            batch,
            bytes: body.len(),
        }
    }

    /// Whether the body is JSON-RPC (at least one message, all of them readable).
    pub fn is_json_rpc(&self) -> bool {
        !self.messages.is_empty()
    }

    /// The message of a body that is one message (not a batch).
    pub fn single(&self) -> Option<&RpcMessage> {
        match &*self.messages {
            [one] if !self.batch => Some(one),
            _ => None,
        }
    }
}

/// Where an outer layer (the access log) finds the [`RpcCall`] of its request once an inner
/// layer has read the body: put one in the request's extensions before passing it on.
#[derive(Debug, Clone, Default)]
pub struct CallSlot(Arc<OnceLock<RpcCall>>);

impl CallSlot {
    /// The call, if the body was read.
    pub fn get(&self) -> Option<&RpcCall> {
        self.0.get()
    }
}

/// Reads request bodies within one limit and classifies them; shared by the layers of one
/// server. Counts what it classifies.
#[derive(Debug, Clone)]
pub struct BodyReader {
    limit: usize,
    parsed: Arc<AtomicU64>,
}

impl BodyReader {
    /// A reader that refuses bodies over `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            parsed: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The limit, in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// How many bodies this reader (and its clones) has classified.
    pub fn parsed(&self) -> u64 {
        self.parsed.load(Ordering::Relaxed)
    }

    /// Read and classify the body of a POST: the request comes back with the [`RpcCall`] in its
    /// extensions (and in its [`CallSlot`], if it has one) and the bytes as its body. A request
    /// whose body was read already, and any other method, come back as they are. Refusals: 413
    /// for a body over the limit (declared by `Content-Length` or streamed), 400 for a body
    /// that cannot be read.
    pub async fn read(&self, request: Request) -> Result<Request, Response> {
        if request.method() != Method::POST || request.extensions().get::<RpcCall>().is_some() {
            return Ok(request);
        }
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.limit as u64) {
            return Err(self.too_large());
        }
        let (mut parts, body) = request.into_parts();
        let bytes = match axum::body::to_bytes(body, self.limit).await {
            Ok(bytes) => bytes,
            Err(e) => {
                return Err(if e.into_inner().is::<http_body_util::LengthLimitError>() {
                    self.too_large()
                } else {
                    refusal(
                        StatusCode::BAD_REQUEST,
                        "invalid_request",
                        "the request body could not be read",
                    )
                });
            }
        };
        let call = RpcCall::parse(&bytes);
        self.parsed.fetch_add(1, Ordering::Relaxed);
        if let Some(slot) = parts.extensions.get::<CallSlot>() {
            let _ = slot.0.set(call.clone());
        }
        parts.extensions.insert(call);
        Ok(Request::from_parts(parts, Body::from(bytes)))
    }

    fn too_large(&self) -> Response {
        let mut r = refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            &format!("the request body is over the {}-byte limit", self.limit),
        );
        r.extensions_mut()
            .insert(crate::telemetry::metrics::Refused("body_too_large"));
        r
    }
}

/// A refusal in the shape of the authorization refusals: `{"error", "error_description"}`.
fn refusal(status: StatusCode, code: &str, description: &str) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        json!({"error": code, "error_description": description}).to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_message_gives_method_id_name_uri_and_meta() {
        let body = br#"{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"run_script","arguments":{"name":"inner","id":9},"_meta":{"progressToken":5}}}"#;
        let call = RpcCall::parse(body);
        assert!(!call.batch);
        assert_eq!(call.bytes, body.len());
        let m = call.single().unwrap();
        assert_eq!(m.method.as_deref(), Some("tools/call"));
        assert_eq!(m.tool(), Some("run_script"));
        assert_eq!(m.id, Some(json!("a-1")));
        assert_eq!(m.meta.as_ref().unwrap()["progressToken"], 5);
        let call = RpcCall::parse(
            br#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"skill://a/SKILL.md","_meta":7}}"#,
        );
        let m = call.single().unwrap();
        assert_eq!(m.uri.as_deref(), Some("skill://a/SKILL.md"));
        assert_eq!(
            (m.tool(), m.meta.as_ref(), m.id.clone()),
            (None, None, Some(json!(3)))
        );
        // A notification; a response to the server.
        let m = RpcCall::parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(m.single().unwrap().id, None);
        let m = RpcCall::parse(br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#);
        assert_eq!(m.single().unwrap().method, None);
    }

    #[test]
    fn a_batch_gives_its_messages_in_order() {
        let call = RpcCall::parse(
            br#" [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":7}}]"#,
        );
        assert!(call.batch && call.is_json_rpc());
        assert!(call.single().is_none());
        let methods: Vec<_> = call.messages.iter().map(|m| m.method.as_deref()).collect();
        assert_eq!(methods, [Some("ping"), Some("tools/call")]);
        // A tool name that is not a string is no tool.
        assert_eq!(call.messages[1].tool(), None);
    }

    #[test]
    fn what_is_not_json_rpc_has_no_messages() {
        for body in [
            &b""[..],
            b"not json",
            b"[]",
            b"42",
            b"[1]",
            br#"{"method":"a""#,
            br#"{"method":"tools/list","method":"tools/call"}"#,
            br#"{"method":"tools/call","params":{"name":"a","name":"b"}}"#,
            br#"{"method":"tools/call","params":[1]}"#,
            br#"{"method":5}"#,
            br#"[{"method":"ping"},{"method":"ping","id":1,"id":2}]"#,
        ] {
            let call = RpcCall::parse(body);
            assert!(!call.is_json_rpc(), "{}", String::from_utf8_lossy(body));
            assert!(call.single().is_none());
        }
    }
}
