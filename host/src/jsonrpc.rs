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
//! [`MAX_LINE_BYTES`]: a longer line is skipped as it streams in, never buffered, and answered
//! with `-32600`, carrying the request's `id` when its top-level `id` appears within the limit
//! ([`top_level_id`]), `id: null` otherwise.

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

/// The answer to a line longer than [`MAX_LINE_BYTES`]: `id` is what [`top_level_id`] found in
/// the part that was read (`null` when nothing).
pub fn too_long_response(id: Value, len: usize) -> Value {
    error_response(
        id,
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

/// The top-level `id` of a JSON-RPC message of which only `prefix` was read (a line over the
/// limit): a string or a number (`null` for any other value), found by a scanner that follows
/// strings (with their escapes) and nesting, so an `id` inside `params` is never taken. `None`
/// when the prefix is not the start of a JSON object or ends before a top-level `id` value is
/// complete. The first top-level `id` wins.
pub fn top_level_id(prefix: &[u8]) -> Option<Value> {
    let mut s = Scan { b: prefix, i: 0 };
    s.ws();
    s.eat(b'{')?;
    loop {
        s.ws();
        match s.peek()? {
            b'}' => return None,
            b',' => {
                s.i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let key = s.string()?;
        s.ws();
        s.eat(b':')?;
        s.ws();
        // An escaped `id` is at most `"\u0069\u0064"`: longer keys are not decoded.
        let is_id =
            key.len() <= 14 && serde_json::from_slice::<String>(key).is_ok_and(|k| k == "id");
        let value = s.value()?;
        if is_id {
            return Some(match value.first() {
                Some(b'"' | b'-' | b'0'..=b'9') => serde_json::from_slice(value).ok()?,
                _ => Value::Null,
            });
        }
    }
}

/// A cursor over a prefix of JSON text: each step returns `None` when the prefix ends first.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string starting at the cursor: its raw text, quotes included.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        self.eat(b'"')?;
        loop {
            let rest = self.b.get(self.i..)?;
            let at = rest.iter().position(|&c| c == b'"' || c == b'\\')?;
            self.i += at;
            if self.b[self.i] == b'"' {
                self.i += 1;
                return Some(&self.b[start..self.i]);
            }
            // A backslash escapes the next byte (`\uXXXX` needs nothing more here).
            self.i += 2;
        }
    }

    /// One value starting at the cursor (skipped, nesting followed): its raw text. A number or
    /// literal is complete only when something follows it.
    fn value(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.i += 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            _ => {
                let rest = self.b.get(self.i..)?;
                let len = rest
                    .iter()
                    .position(|&c| matches!(c, b',' | b'}' | b']') || c.is_ascii_whitespace())?;
                if len == 0 {
                    return None;
                }
                self.i += len;
            }
        }
        Some(&self.b[start..self.i])
    }
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
    // The current line went over the limit and is being skipped: its bytes seen so far, and
    // the request's id when it was within the limit.
    let mut skipping: Option<(usize, Value)> = None;
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
            } else if let Some((n, id)) = skipping {
                answer(&out, &too_long_response(id, n)).await;
            }
            break;
        }
        let (chunk, newline) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let used = chunk.len() + usize::from(newline);
        match skipping.as_mut() {
            Some((n, _)) => *n += chunk.len(),
            None if line.len() + chunk.len() > MAX_LINE_BYTES => {
                // What fits is read for the id; the rest of the line is dropped as it comes.
                let room = MAX_LINE_BYTES - line.len();
                line.extend_from_slice(&chunk[..room]);
                let id = top_level_id(&line).unwrap_or(Value::Null);
                skipping = Some((line.len() - room + chunk.len(), id));
                line = Vec::new();
            }
            None => line.extend_from_slice(chunk),
        }
        reader.consume(used);
        if newline {
            if let Some((n, id)) = skipping.take() {
                tracing::warn!(
                    "a message of {n} bytes is over the {MAX_LINE_BYTES}-byte line limit; answered with an error"
                );
                answer(&out, &too_long_response(id, n)).await;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn id(prefix: &str) -> Option<Value> {
        top_level_id(prefix.as_bytes())
    }

    #[test]
    fn the_top_level_id_is_found_as_a_number_or_a_string() {
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":7,"method":"x"#), Some(json!(7)));
        assert_eq!(id(r#" { "id" : -2.5e3 , "#), Some(json!(-2500.0)));
        assert_eq!(id(r#"{"id":"a-1","params":{"#), Some(json!("a-1")));
        assert_eq!(
            id(r#"{"id":"q\"uo\\te\u00e9","#),
            Some(json!("q\"uo\\te\u{e9}"))
        );
        // An escaped key is the same key.
        assert_eq!(id(r#"{"\u0069d":3,"#), Some(json!(3)));
        // Any other value: `null` (the id is answered as unusable).
        assert_eq!(id(r#"{"id":null,"#), Some(Value::Null));
        assert_eq!(id(r#"{"id":{"a":1},"#), Some(Value::Null));
        assert_eq!(id(r#"{"id":true,"#), Some(Value::Null));
    }

    #[test]
    fn an_id_inside_params_or_a_string_is_not_taken() {
        let head = r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":{"id":1,"q":"pdf"#;
        assert_eq!(id(head), None);
        // The top-level id after a nested one.
        let line = r#"{"params":{"id":1,"list":[{"id":2},"}",{"x":"\"id\":3"}]},"id":"top","#;
        assert_eq!(id(line), Some(json!("top")));
        // `"id":` inside a string value, its quotes escaped.
        let line = r#"{"method":"a\",\"id\":9,\"b","id":4,"#;
        assert_eq!(id(line), Some(json!(4)));
        // A key that merely contains "id".
        assert_eq!(id(r#"{"idx":1,"uid":2,"id":3,"#), Some(json!(3)));
    }

    #[test]
    fn an_id_cut_by_the_limit_or_after_it_is_not_found() {
        // The number may go on past the limit.
        assert_eq!(id(r#"{"id":12"#), None);
        assert_eq!(id(r#"{"id":"abc"#), None);
        assert_eq!(id(r#"{"id""#), None);
        assert_eq!(id(r#"{"params":{"a":"\"#), None);
        assert_eq!(id(r#"{"method":"x","params":{"a":[1,2"#), None);
        // Not an object.
        assert_eq!(id(r#"[{"id":1},"#), None);
        assert_eq!(id(""), None);
        assert_eq!(id(r#"{"id":1}"#), Some(json!(1)));
        assert_eq!(id(r#"{}"#), None);
    }

    /// A line of `len` bytes: `head`, filler inside a string, `tail`.
    fn long_line(head: &str, len: usize, tail: &str) -> Vec<u8> {
        let mut line = head.as_bytes().to_vec();
        line.resize(len - tail.len(), b'x');
        line.extend_from_slice(tail.as_bytes());
        line.push(b'\n');
        line
    }

    async fn answers_to(input: Vec<u8>) -> Vec<Value> {
        let (to_rmcp, mut rmcp_side) = tokio::io::duplex(1 << 16);
        let (mut out_read, out_write) = tokio::io::duplex(1 << 16);
        let out = Arc::new(tokio::sync::Mutex::new(out_write));
        let forwarded = tokio::spawn(async move {
            let mut all = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut rmcp_side, &mut all)
                .await
                .unwrap();
            all
        });
        filter_lines(&input[..], to_rmcp, out.clone()).await;
        drop(out);
        let mut text = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut out_read, &mut text)
            .await
            .unwrap();
        let forwarded = forwarded.await.unwrap();
        assert!(
            forwarded.len() < 1000,
            "{} bytes forwarded",
            forwarded.len()
        );
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn an_over_long_line_is_answered_with_its_id_when_it_was_read() {
        let head = r#"{"jsonrpc":"2.0","id":"call-15","method":"tools/call","params":{"name":"x","arguments":{"id":1,"q":""#;
        let mut input = long_line(head, 15 << 20, r#""}}}"#);
        // Its id after the limit: not known.
        let head = r#"{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"q":""#;
        input.extend(long_line(head, MAX_LINE_BYTES + 10, r#""}},"id":5}"#));
        // Over the limit at the end of input, without a newline.
        let head = r#"{"id":6,"params":""#;
        let mut last = long_line(head, MAX_LINE_BYTES + 1, r#""}"#);
        last.pop();
        input.extend(last);
        let answers = answers_to(input).await;
        assert_eq!(answers.len(), 3, "{answers:?}");
        for (answer, id) in answers
            .iter()
            .zip([json!("call-15"), Value::Null, json!(6)])
        {
            assert_eq!(answer["id"], id, "{answer}");
            assert_eq!(answer["error"]["code"], INVALID_REQUEST, "{answer}");
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.contains("line limit"), "{message}");
        }
        assert!(
            answers[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&(15 << 20).to_string())
        );
    }
}
