//! The JSON-RPC front: every line a client sends is checked here before rmcp sees it, so every
//! bad input gets exactly one answer the client can match, and no line can stall the server.
//!
//! rmcp ignores lines that are not JSON, answers envelopes it cannot read without their `id`,
//! takes a known method with malformed params for an unknown method (`-32601`), and drops
//! over-long lines without a word. [`check_client_message`] (usable by any transport) answers
//! those itself:
//!
//! | input                                             | answer                          |
//! |---------------------------------------------------|---------------------------------|
//! | not JSON                                          | `-32700`, `id: null`            |
//! | a batch (array), not an object, a bad `id` type   | `-32600`, `id: null`            |
//! | `jsonrpc` not `"2.0"`, `method` not a string      | `-32600` with the request's id  |
//! | `params` not an object                            | `-32602` with the request's id  |
//! | a known method whose params do not fit its schema | `-32602` with the request's id  |
//! | a response with neither `result` nor `error`      | `-32600` with its id            |
//!
//! A bad notification (no `id`) is not answered (JSON-RPC), only noted on stderr.
//! [`serve_stdio`] puts the check between stdin/stdout and rmcp, with a line limit of
//! [`MAX_LINE_BYTES`] (a longer line is skipped as it streams in, never buffered, and answered
//! with `-32600`, `id: null`).

use std::sync::Arc;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// Longest request line read on stdio, in bytes (4 MiB); a longer one is answered with an error.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// Longest piece of client input repeated in an error message, in characters.
pub const MAX_ECHO_CHARS: usize = 120;

/// JSON-RPC error codes.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// The request methods rmcp's server model knows: a request for one of them whose params do not
/// fit is an invalid-params error, not an unknown method.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/directory/read",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

/// What to do with one line from a client.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// A well-formed message: hand it to rmcp.
    Forward,
    /// Answer this JSON-RPC error response (one line) instead.
    Answer(Value),
    /// Nothing to answer (a blank line, or a bad notification: the reason, for stderr).
    Ignore(Option<String>),
}

/// `s` cut to [`MAX_ECHO_CHARS`] characters (with `…` when cut): client input in messages.
pub fn clip(s: &str) -> String {
    match s.char_indices().nth(MAX_ECHO_CHARS) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// A JSON-RPC error response.
pub fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": clip_message(message)}})
}

/// Messages are ours, but may quote client input (serde's messages do): keep them short.
fn clip_message(m: &str) -> String {
    match m.char_indices().nth(MAX_ECHO_CHARS * 3) {
        Some((at, _)) => format!("{}…", &m[..at]),
        None => m.to_string(),
    }
}

/// The answer to a line longer than [`MAX_LINE_BYTES`].
pub fn too_long_response(len: usize) -> Value {
    error_response(
        Value::Null,
        INVALID_REQUEST,
        &format!(
            "the message is longer than the {MAX_LINE_BYTES}-byte line limit ({}{len} bytes); it was skipped",
            if len > MAX_LINE_BYTES {
                "at least "
            } else {
                ""
            }
        ),
    )
}

/// Check one line (one JSON-RPC message, without its newline) from a client.
pub fn check_client_message(line: &[u8]) -> Verdict {
    let line = line.trim_ascii();
    if line.is_empty() {
        return Verdict::Ignore(None);
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Answer(error_response(
                Value::Null,
                PARSE_ERROR,
                &format!("parse error: the message is not valid JSON ({e})"),
            ));
        }
    };
    let obj = match &value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Verdict::Answer(error_response(
                Value::Null,
                INVALID_REQUEST,
                "invalid request: batches (JSON arrays) are not supported; send one message per line",
            ));
        }
        _ => {
            return Verdict::Answer(error_response(
                Value::Null,
                INVALID_REQUEST,
                "invalid request: a JSON-RPC message is a JSON object",
            ));
        }
    };
    let id = match obj.get("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        Some(_) => {
            return Verdict::Answer(error_response(
                Value::Null,
                INVALID_REQUEST,
                "invalid request: `id` must be a string or a number",
            ));
        }
    };
    // A bad message: answered with its id when it has one (a request), noted otherwise.
    let bad = |code: i64, message: String| match &id {
        Some(id) => Verdict::Answer(error_response(id.clone(), code, &message)),
        None => Verdict::Ignore(Some(clip_message(&message))),
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return bad(
            INVALID_REQUEST,
            "invalid request: `jsonrpc` must be \"2.0\"".into(),
        );
    }
    let method = match obj.get("method") {
        Some(Value::String(m)) => Some(m.as_str()),
        Some(_) => {
            return bad(
                INVALID_REQUEST,
                "invalid request: `method` must be a string".into(),
            );
        }
        None => None,
    };
    let Some(method) = method else {
        // A response to one of the server's requests.
        let (result, error) = (obj.contains_key("result"), obj.contains_key("error"));
        if id.is_none() || result == error {
            return Verdict::Answer(error_response(
                id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "invalid request: a message without `method` is a response: it needs an `id` and exactly one of `result` or `error`",
            ));
        }
        return typed(value, None, &id);
    };
    match obj.get("params") {
        None | Some(Value::Object(_)) => {}
        Some(other) => {
            return bad(
                INVALID_PARAMS,
                format!(
                    "invalid params for `{}`: `params` must be an object, got {}",
                    clip(method),
                    kind(other)
                ),
            );
        }
    }
    let method = method.to_string();
    typed(value, Some(&method), &id)
}

/// The message as rmcp's model reads it: what rmcp would misreport is answered here.
fn typed(value: Value, method: Option<&str>, id: &Option<Value>) -> Verdict {
    let known = method.is_some_and(|m| KNOWN_METHODS.contains(&m));
    let invalid_params = |detail: &str| {
        let m = method.unwrap_or_default();
        let message = format!("invalid params for `{}`: {detail}", clip(m));
        match id {
            Some(id) => Verdict::Answer(error_response(id.clone(), INVALID_PARAMS, &message)),
            None => Verdict::Ignore(Some(clip_message(&message))),
        }
    };
    match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        Ok(JsonRpcMessage::Request(r)) if known => match r.request {
            // rmcp falls back to a custom request when a known method's params do not fit.
            ClientRequest::CustomRequest(_) => invalid_params(&params_detail(&value)),
            _ => Verdict::Forward,
        },
        Ok(_) => Verdict::Forward,
        Err(e) if known => invalid_params(&e.to_string()),
        Err(e) => match id {
            Some(id) => Verdict::Answer(error_response(
                id.clone(),
                INVALID_REQUEST,
                &format!("invalid request: {e}"),
            )),
            None => Verdict::Ignore(Some(clip_message(&format!("invalid message: {e}")))),
        },
    }
}

/// Why the params of a known method do not fit (the deserializer's own words, for the request
/// types this server serves; a general sentence otherwise).
fn params_detail(value: &Value) -> String {
    use rmcp::model as m;
    fn why<T: serde::de::DeserializeOwned>(v: &Value) -> Option<String> {
        serde_json::from_value::<T>(v.clone())
            .err()
            .map(|e| e.to_string())
    }
    let method = value.get("method").and_then(Value::as_str).unwrap_or("");
    let detail = match method {
        "initialize" => why::<m::InitializeRequest>(value),
        "resources/read" => why::<m::ReadResourceRequest>(value),
        "resources/directory/read" => why::<m::ReadResourceDirectoryRequest>(value),
        "prompts/get" => why::<m::GetPromptRequest>(value),
        "tools/call" => why::<m::CallToolRequest>(value),
        "completion/complete" => why::<m::CompleteRequest>(value),
        "skills/get" => why::<m::GetSkillRequest>(value),
        _ => None,
    };
    detail.unwrap_or_else(|| "they do not fit the method's schema".into())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Lines in from `input`, checked: good ones are written to `to_rmcp` (newline-terminated), bad
/// ones answered through `out`. Ends at the end of `input` (then `to_rmcp` is shut down, so
/// rmcp sees the end too). Memory: at most [`MAX_LINE_BYTES`] of one line.
pub async fn filter_lines<R, W, O>(input: R, mut to_rmcp: W, out: Arc<tokio::sync::Mutex<O>>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
    O: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line: Vec<u8> = Vec::new();
    // Bytes of the current line seen so far when it went over the limit (it is being skipped).
    let mut skipping: Option<usize> = None;
    loop {
        let buf = match reader.fill_buf().await {
            Ok(b) => b,
            Err(e) => {
                tracing::error!("reading stdin: {e}");
                break;
            }
        };
        if buf.is_empty() {
            // The end: a last line without a newline is still a message.
            if skipping.is_none() && !line.is_empty() {
                let l = std::mem::take(&mut line);
                if !handle(&l, &mut to_rmcp, &out).await {
                    break;
                }
            } else if let Some(n) = skipping {
                answer(&out, &too_long_response(n)).await;
            }
            break;
        }
        let (chunk, newline) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let used = chunk.len() + usize::from(newline);
        match skipping.as_mut() {
            Some(n) => *n += chunk.len(),
            None if line.len() + chunk.len() > MAX_LINE_BYTES => {
                skipping = Some(line.len() + chunk.len());
                line = Vec::new();
            }
            None => line.extend_from_slice(chunk),
        }
        reader.consume(used);
        if newline {
            if let Some(n) = skipping.take() {
                tracing::warn!(
                    "a message of {n} bytes is over the {MAX_LINE_BYTES}-byte line limit; answered with an error"
                );
                answer(&out, &too_long_response(n)).await;
            } else {
                let ok = handle(&line, &mut to_rmcp, &out).await;
                line.clear();
                if line.capacity() > 1 << 20 {
                    line = Vec::new();
                }
                if !ok {
                    break;
                }
            }
        }
    }
    let _ = to_rmcp.shutdown().await;
}

/// One whole line: forwarded (false when rmcp is gone), answered or noted.
async fn handle<W, O>(line: &[u8], to_rmcp: &mut W, out: &tokio::sync::Mutex<O>) -> bool
where
    W: AsyncWrite + Unpin,
    O: AsyncWrite + Unpin,
{
    match check_client_message(line) {
        Verdict::Forward => {
            to_rmcp.write_all(line).await.is_ok()
                && to_rmcp.write_all(b"\n").await.is_ok()
                && to_rmcp.flush().await.is_ok()
        }
        Verdict::Answer(response) => {
            answer(out, &response).await;
            true
        }
        Verdict::Ignore(Some(why)) => {
            tracing::warn!("ignored a malformed notification: {why}");
            true
        }
        Verdict::Ignore(None) => true,
    }
}

/// Write one response line to the client.
async fn answer<O: AsyncWrite + Unpin>(out: &tokio::sync::Mutex<O>, response: &Value) {
    let mut text = response.to_string();
    text.push('\n');
    let mut out = out.lock().await;
    let _ = out.write_all(text.as_bytes()).await;
    let _ = out.flush().await;
}

/// Lines rmcp writes, copied whole to `out` (shared with the front's own answers, so lines
/// never interleave).
pub async fn copy_lines<R, O>(from_rmcp: R, out: Arc<tokio::sync::Mutex<O>>)
where
    R: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(64 * 1024, from_rmcp);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let mut out = out.lock().await;
                if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                    break;
                }
            }
        }
    }
}

/// The rmcp side of the stdio front: a duplex stream whose other end is fed from stdin through
/// [`filter_lines`] and copied to stdout by [`copy_lines`] (both spawned on the current runtime).
/// The second value ends once everything rmcp wrote is on stdout (await it after serving).
pub fn serve_stdio() -> (tokio::io::DuplexStream, tokio::task::JoinHandle<()>) {
    serve_front(tokio::io::stdin(), tokio::io::stdout())
}

/// [`serve_stdio`] over any input and output (tests use pipes).
pub fn serve_front<R, O>(
    input: R,
    output: O,
) -> (tokio::io::DuplexStream, tokio::task::JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (ours, rmcp_side) = tokio::io::duplex(256 * 1024);
    let (from_rmcp, to_rmcp) = tokio::io::split(ours);
    let out = Arc::new(tokio::sync::Mutex::new(output));
    tokio::spawn(filter_lines(input, to_rmcp, out.clone()));
    let copied = tokio::spawn(copy_lines(from_rmcp, out));
    (rmcp_side, copied)
}
