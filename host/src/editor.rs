//! `skills-mcp editor`: the browser skill editor on the configured roots, saving.
//!
//! The page, script and styles are `js/editor/`, embedded in the binary by `build.rs` (no Node
//! in the build). In the browser the editor's host adapter (`js/editor/engine-host.js`) calls
//! the JSON endpoints below, and this process runs the same engine component as `serve`:
//! the lint, served name and draft rank of a draft are the engine's, against the same index.
//!
//! Security (see docs/editor.md):
//! - it listens on a loopback address only (a random port by default);
//! - the static files carry no secret and are served to anyone who can connect; every
//!   `/api/` call must carry the per-run secret in the `X-Skills-Editor-Secret` header (never
//!   a cookie, so another site's page cannot make the browser send it). The secret travels in
//!   the fragment of the URL printed on stdout (a fragment is never sent to a server), and the
//!   browser is opened through a 0600 file holding that URL, not a command-line argument;
//! - `Host` and `Origin` are checked by the layer `/mcp` uses ([`crate::http::guard`]),
//!   allowing only this editor's own address;
//! - saves go through [`sandbox`]: skill files (`*.md`, not an asset or script of another
//!   skill) and eval files only, inside a writable root, no symlink, within the size cap,
//!   atomically, and only when the file on disk is still the one the page opened.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, bail};
use axum::{
    Json, Router,
    extract::{DefaultBodyLimit, Path as UrlPath, Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use clap::Args;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::runtime::{EngineError, Entry};

pub mod sandbox;

use sandbox::{Refusal, Sandbox};

include!(concat!(env!("OUT_DIR"), "/editor_files.rs"));

/// The header every API call carries the per-run secret in.
pub const SECRET_HEADER: &str = "x-skills-editor-secret";

/// Where a skill's eval queries are, in its resource folder (the engine's rule places them;
/// this only spots a path that may be one).
const EVAL_FILE: &str = "evals/eval_queries.json";

/// Most requests a draft is ranked for at once.
const MAX_REQUESTS: usize = 200;

/// `skills-mcp editor`.
#[derive(Debug, Clone, Args)]
pub struct EditorArgs {
    /// Listen on ADDR, a loopback address (`127.0.0.1:PORT`, `[::1]:PORT`, `localhost:PORT`
    /// or `:PORT`; port 0: a random free port). Any other address is refused.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub listen: String,
    /// Only print the editor's URL (it carries the secret); do not open a browser.
    #[arg(long)]
    pub no_browser: bool,
    /// Whose view the tree, checks, ranks and evals are computed in (no flag: the local
    /// operator, what a stdio client sees).
    #[command(flatten)]
    pub caller: crate::cli::CallerArgs,
}

/// The state of the API.
struct Editor {
    /// The full index (rebuilt after a save).
    catalog: Catalog,
    /// The caller's view of it: what is listed, checked and ranked.
    view: Catalog,
    caller: String,
    sandbox: Sandbox,
    secret: String,
    /// Each root's listing, taken when first needed and again after a save into it.
    listings: Mutex<Vec<Option<Arc<Vec<Entry>>>>>,
}

/// The address `--listen` names, refused unless it is a loopback address.
pub fn listen_addr(listen: &str) -> anyhow::Result<std::net::SocketAddr> {
    let addr = crate::http::parse_listen(listen)?;
    if !addr.ip().to_canonical().is_loopback() {
        bail!(
            "refusing to listen on {addr}: the editor writes your skills and listens on a \
             loopback address only (127.0.0.1, [::1])"
        );
    }
    Ok(addr)
}

/// Run the editor on `addr` (see [`listen_addr`]) until SIGINT/SIGTERM.
pub fn run(
    addr: std::net::SocketAddr,
    catalog: Catalog,
    config: &crate::config::Config,
    roots: &[crate::config::RootSpec],
    args: &EditorArgs,
) -> anyhow::Result<ExitCode> {
    crate::access::apply(&catalog, &config.access)?;
    let caller =
        crate::access::check::caller(&args.caller, config, crate::cli::DefaultCaller::Local)?;
    let view = catalog.view_as(caller.clone());
    let editor = Arc::new(Editor {
        caller: crate::access::check::describe(&caller),
        view,
        catalog,
        sandbox: Sandbox::open(roots),
        secret: new_secret()?,
        listings: Mutex::new(vec![None; roots.len()]),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("listening on {addr}"))?;
        let local = listener.local_addr()?;
        let url = format!("http://{local}/#secret={}", editor.secret);
        let skills = editor.view.len().unwrap_or(0);
        tracing::info!(
            "editor: {skills} skills in {} roots, at http://{local}/ (the URL with its secret is on stdout)",
            editor.sandbox.roots.len()
        );
        {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            writeln!(out, "{url}")?;
            out.flush()?;
        }
        let opened = if args.no_browser {
            None
        } else {
            open_browser(&url)
        };
        let app = router(editor, local.port());
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let signal = crate::serve::drain::stop_signal().await;
                tracing::info!("{signal}; stopping the editor");
            })
            .await;
        if let Some(file) = opened {
            let _ = std::fs::remove_file(file);
        }
        served.context("serving the editor")?;
        Ok(ExitCode::SUCCESS)
    })
}

/// The routes: the static files (open), the API (the secret), all behind the Host and Origin
/// guard of this editor's own address.
fn router(editor: Arc<Editor>, port: u16) -> Router {
    let hosts = [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ];
    let origins = hosts.clone().map(|h| format!("http://{h}"));
    let guard = Arc::new(crate::http::guard::Guard::new(&hosts, &origins));
    let api = Router::new()
        .route("/api/state", get(api_state))
        .route("/api/open", post(api_open))
        .route("/api/check", post(api_check))
        .route("/api/save", post(api_save))
        .route("/api/audit", post(api_audit))
        .route_layer(middleware::from_fn_with_state(
            editor.clone(),
            require_secret,
        ))
        .with_state(editor);
    Router::new()
        .route("/", get(|| static_file(UrlPath("index.html".into()))))
        .route("/{file}", get(static_file))
        .merge(api)
        // A save of the largest file, JSON-escaped.
        .layer(DefaultBodyLimit::max(
            (sandbox::MAX_FILE_BYTES as usize) * 2 + 64 * 1024,
        ))
        .layer(middleware::from_fn_with_state(
            guard,
            crate::http::guard::layer,
        ))
}

/// 32 random bytes, base64url.
fn new_secret() -> anyhow::Result<String> {
    use base64::Engine as _;
    use ring::rand::SecureRandom as _;
    let mut bytes = [0u8; 32];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| anyhow::anyhow!("no randomness for the editor's secret"))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Open the default browser on `url` through a 0600 file that redirects to it (as Jupyter
/// does): the secret is never on a command line others can read. Returns the file, removed at
/// exit. A failure is a warning: the URL is printed.
fn open_browser(url: &str) -> Option<std::path::PathBuf> {
    let file = std::env::temp_dir().join(format!("skills-mcp-editor-{}.html", std::process::id()));
    let html = format!(
        "<!doctype html>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"refresh\" content=\"0;url={url}\">\n\
         <title>skills-mcp editor</title>\n<p>Opening <a href=\"{url}\">the skill editor</a>...</p>\n"
    );
    let written = (|| -> std::io::Result<()> {
        use std::io::Write as _;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let _ = std::fs::remove_file(&file);
        options.open(&file)?.write_all(html.as_bytes())
    })();
    if let Err(e) = written {
        tracing::warn!(
            "editor: could not write {} to open a browser ({e}); open the URL printed above",
            file.display()
        );
        return None;
    }
    let mut command = match std::env::var_os("BROWSER").filter(|b| !b.is_empty()) {
        Some(browser) => std::process::Command::new(browser),
        None if cfg!(target_os = "macos") => std::process::Command::new("open"),
        None if cfg!(windows) => {
            let mut c = std::process::Command::new("cmd");
            c.args(["/C", "start", ""]);
            c
        }
        None => std::process::Command::new("xdg-open"),
    };
    command
        .arg(&file)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if let Err(e) = command.spawn() {
        tracing::warn!("editor: could not open a browser ({e}); open the URL printed above");
    }
    Some(file)
}

/// A static file of `js/editor/`, or 404.
async fn static_file(UrlPath(name): UrlPath<String>) -> Response {
    let Some((_, bytes)) = EDITOR_FILES.iter().find(|(n, _)| *n == name) else {
        return (StatusCode::NOT_FOUND, "not found\n").into_response();
    };
    let kind = match name.rsplit_once('.').map(|(_, e)| e) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    };
    let mut r = (*bytes).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; \
             img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// Every API call: the secret in [`SECRET_HEADER`], compared in constant time.
async fn require_secret(
    State(editor): State<Arc<Editor>>,
    request: Request,
    next: Next,
) -> Response {
    use subtle::ConstantTimeEq as _;
    let given = request
        .headers()
        .get(SECRET_HEADER)
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    if given.is_empty() || !bool::from(given.ct_eq(editor.secret.as_bytes())) {
        return refusal(
            StatusCode::UNAUTHORIZED,
            "this request does not carry the editor's secret (the X-Skills-Editor-Secret \
             header): open the URL `skills-mcp editor` printed, which holds it",
        );
    }
    let mut r = next.run(request).await;
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn refusal(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": message}))).into_response()
}

fn refused(r: Refusal) -> Response {
    refusal(
        StatusCode::from_u16(r.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        r.message(),
    )
}

/// An engine call's error as the page shows it: `{kind, message}`.
fn engine_error(e: &anyhow::Error) -> Value {
    let kind = match e.downcast_ref::<EngineError>().map(|e| &e.0) {
        Some(crate::runtime::EngineErrorKind::NotFound(_)) => "not-found",
        Some(crate::runtime::EngineErrorKind::InvalidPath(_)) => "invalid-path",
        Some(crate::runtime::EngineErrorKind::InvalidArgument(_)) => "invalid-argument",
        Some(crate::runtime::EngineErrorKind::TooLarge(_)) => "too-large",
        Some(crate::runtime::EngineErrorKind::ReadFailed(_)) => "read-failed",
        Some(crate::runtime::EngineErrorKind::NotReady) => "not-ready",
        Some(crate::runtime::EngineErrorKind::Other(_)) | None => "other",
    };
    json!({"kind": kind, "message": format!("{e:#}")})
}

/// Run blocking engine work off the async threads; a panic or an error is a 500.
async fn blocking(f: impl FnOnce() -> anyhow::Result<Response> + Send + 'static) -> Response {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => refusal(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}")),
        Err(_) => refusal(StatusCode::INTERNAL_SERVER_ERROR, "the request failed"),
    }
}

/// `GET /api/state`: the roots (read-only or not, and why) and the caller's skills.
async fn api_state(State(editor): State<Arc<Editor>>) -> Response {
    blocking(move || {
        let roots: Vec<Value> = editor
            .sandbox
            .roots
            .iter()
            .enumerate()
            .map(|(i, r)| {
                json!({
                    "root": i,
                    "name": r.name,
                    "path": r.path.display().to_string(),
                    "kind": r.kind,
                    "readOnly": r.read_only,
                })
            })
            .collect();
        let skills: Vec<Value> = editor
            .view
            .skills()?
            .into_iter()
            .map(|s| {
                json!({
                    "root": s.root,
                    "file": s.file,
                    "skillPath": s.skill_path,
                    "name": s.name,
                    "description": s.description,
                })
            })
            .collect();
        Ok(
            Json(json!({"caller": editor.caller, "roots": roots, "skills": skills}))
                .into_response(),
        )
    })
    .await
}

#[derive(Deserialize)]
struct OpenRequest {
    root: usize,
    path: String,
}

/// `POST /api/open {"root", "path"}`: a file the editor may write (a skill file), its text and
/// digest.
async fn api_open(State(editor): State<Arc<Editor>>, Json(q): Json<OpenRequest>) -> Response {
    blocking(move || {
        if let Err(r) = editor.writable_kind(q.root, &q.path, None) {
            return Ok(refused(r));
        }
        let bytes = match editor.sandbox.read(q.root, &q.path) {
            Ok(b) => b,
            Err(r) => return Ok(refused(r)),
        };
        let digest = sandbox::digest(&bytes);
        let Ok(text) = String::from_utf8(bytes) else {
            return Ok(refusal(
                StatusCode::UNPROCESSABLE_ENTITY,
                &format!("{} is not UTF-8 text", q.path),
            ));
        };
        let read_only = editor
            .sandbox
            .roots
            .get(q.root)
            .and_then(|r| r.read_only.clone());
        let evals = match editor.evals_of(q.root, &q.path) {
            Ok(e) => e,
            Err(r) => return Ok(refused(r)),
        };
        Ok(Json(json!({
            "root": q.root,
            "path": q.path,
            "text": text,
            "digest": digest,
            "readOnly": read_only,
            "evals": evals,
        }))
        .into_response())
    })
    .await
}

#[derive(Deserialize)]
struct CheckRequest {
    root: usize,
    path: String,
    text: String,
    #[serde(default)]
    requests: Vec<String>,
    /// The skill's eval queries, as the page holds them (run against the draft).
    #[serde(default)]
    evals: Vec<EvalIn>,
}

/// An eval query as the page sends it (the eval file's own form).
#[derive(Deserialize)]
struct EvalIn {
    query: String,
    should_trigger: bool,
}

/// `POST /api/check`: the engine's check of the draft against the caller's view of the
/// collection, and its rank for each request.
async fn api_check(State(editor): State<Arc<Editor>>, Json(c): Json<CheckRequest>) -> Response {
    blocking(move || {
        if c.requests.len() > MAX_REQUESTS {
            return Ok(refusal(
                StatusCode::BAD_REQUEST,
                &format!("at most {MAX_REQUESTS} requests at once"),
            ));
        }
        let listing = editor.folder_listing(c.root, &c.path);
        let check = match editor
            .view
            .check_skill(&c.path, c.text.as_bytes(), &listing)
        {
            Ok(check) => check,
            Err(e) => return Ok(Json(json!({"error": engine_error(&e)})).into_response()),
        };
        let requests: Vec<String> = c
            .requests
            .iter()
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .collect();
        let (ranking, rank_error) = if check.skill.is_some() && !requests.is_empty() {
            match editor
                .view
                .score_draft(&c.path, c.text.as_bytes(), &requests, 5)
            {
                Ok(r) => (serde_json::to_value(&r)?, Value::Null),
                Err(e) => (Value::Null, engine_error(&e)),
            }
        } else {
            (Value::Null, Value::Null)
        };
        // The eval queries, run for the draft as `skills-mcp eval` runs them for the saved
        // skill (`evaluate-draft`: each routed as a rebuilt index would route it).
        let (evals, eval_error) = if check.skill.is_some() && !c.evals.is_empty() {
            let queries: Vec<crate::runtime::EvalQuery> = c
                .evals
                .iter()
                .map(|q| crate::runtime::EvalQuery {
                    query: q.query.clone(),
                    should_trigger: q.should_trigger,
                })
                .collect();
            match editor
                .view
                .evaluate_draft(&c.path, c.text.as_bytes(), &queries, false)
            {
                Ok(e) => (crate::eval::skill_json(&e), Value::Null),
                Err(e) => (Value::Null, engine_error(&e)),
            }
        } else {
            (Value::Null, Value::Null)
        };
        Ok(Json(json!({
            "check": serde_json::to_value(&check)?,
            "ranking": ranking,
            "rankError": rank_error,
            "evals": evals,
            "evalError": eval_error,
        }))
        .into_response())
    })
    .await
}

#[derive(Deserialize)]
struct AuditRequest {
    root: usize,
    path: String,
    /// The requests meant for the skill (its eval queries that should trigger it); none:
    /// those derived from its text.
    #[serde(default)]
    requests: Vec<String>,
}

/// `POST /api/audit {"root", "path", "requests"}`: the audit of the skill the file is, as
/// saved (`index.audit-one` over the caller's view, what `skills-mcp audit` reports for it,
/// without the collection-wide `hijacker` finding), in `audit --json`'s shape for one skill:
/// `{"audit": {"skill", "competitors": [{"skill", "strength", "shared", "separating"}],
/// "findings": [..]}}`; `{"audit": null}` when the file is no skill of the index yet.
async fn api_audit(State(editor): State<Arc<Editor>>, Json(a): Json<AuditRequest>) -> Response {
    blocking(move || {
        if a.requests.len() > MAX_REQUESTS {
            return Ok(refusal(
                StatusCode::BAD_REQUEST,
                &format!("at most {MAX_REQUESTS} requests at once"),
            ));
        }
        let skill = editor
            .view
            .skills()?
            .into_iter()
            .find(|s| s.root as usize == a.root && s.file == a.path);
        let Some(skill) = skill else {
            return Ok(Json(json!({ "audit": null })).into_response());
        };
        match editor.view.audit_one(&skill.skill_path, &a.requests) {
            Ok(one) => {
                let report = skills_engine::output::audit_json(&[crate::output::audit_skill(one)]);
                Ok(Json(json!({ "audit": report["skills"][0] })).into_response())
            }
            Err(e) => Ok(Json(json!({ "error": engine_error(&e) })).into_response()),
        }
    })
    .await
}

#[derive(Deserialize)]
struct SaveRequest {
    root: usize,
    path: String,
    text: String,
    /// The digest of the file as it was opened; `null` for a new file.
    digest: Option<String>,
}

/// `POST /api/save`: write a skill file or an eval file (see [`sandbox::Sandbox::save`]), then
/// rebuild the index so that the next check and rank see it.
async fn api_save(State(editor): State<Arc<Editor>>, Json(s): Json<SaveRequest>) -> Response {
    blocking(move || {
        if let Err(r) = editor.writable_kind(s.root, &s.path, Some(&s.text)) {
            return Ok(refused(r));
        }
        let digest =
            match editor
                .sandbox
                .save(s.root, &s.path, s.text.as_bytes(), s.digest.as_deref())
            {
                Ok(d) => d,
                Err(r) => return Ok(refused(r)),
            };
        tracing::info!(
            "editor: saved {} in the root {}",
            crate::logsafe::Escaped(&s.path),
            editor.sandbox.roots[s.root].name
        );
        if let Some(slot) = editor.listings().get_mut(s.root) {
            *slot = None;
        }
        let rebuilt = editor.catalog.rebuild().map(|stats| stats.skills);
        // A skill file saved (a new one is in the index now): where its eval file goes.
        let evals = editor.evals_of(s.root, &s.path).unwrap_or(None);
        Ok(Json(json!({
            "root": s.root,
            "path": s.path,
            "digest": digest,
            "evals": evals,
            "skills": rebuilt.as_ref().ok(),
            "rebuildError": rebuilt.err().map(|e| format!("{e:#}")),
        }))
        .into_response())
    })
    .await
}

impl Editor {
    /// [`Self::writable_kind`] of an eval file: the one of a skill of `root`, holding valid
    /// eval queries.
    fn eval_file_kind(&self, root: usize, path: &str, text: Option<&str>) -> Result<(), Refusal> {
        let io = |e: anyhow::Error| Refusal::Io(format!("{e:#}"));
        let skills = self.catalog.skills().map_err(io)?;
        let owner = skills.iter().filter(|s| s.root as usize == root).find(|s| {
            self.catalog
                .eval_file(&s.skill_path)
                .is_ok_and(|f| f.root as usize == root && f.path == path)
        });
        if owner.is_none() {
            return Err(Refusal::Forbidden(format!(
                "{path} is not the eval file of a skill of this root ({EVAL_FILE} in a skill's \
                 resource folder)"
            )));
        }
        if let Some(text) = text
            && let Err(problems) = self
                .catalog
                .parse_eval_queries(text.as_bytes())
                .map_err(io)?
        {
            let said: Vec<String> = problems.iter().map(crate::eval::located).collect();
            return Err(Refusal::Invalid(format!(
                "{path}: not saved, the eval queries have problems: {}",
                said.join("; ")
            )));
        }
        Ok(())
    }

    fn listings(&self) -> std::sync::MutexGuard<'_, Vec<Option<Arc<Vec<Entry>>>>> {
        self.listings.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The entries of the root below the draft's folder (what `check-skill` uses of a
    /// listing), as the JavaScript editor hands them: a keystroke's cost does not grow with
    /// the root.
    fn folder_listing(&self, root: usize, path: &str) -> Vec<Entry> {
        let listing = {
            let mut all = self.listings();
            let Some(slot) = all.get_mut(root) else {
                return Vec::new();
            };
            slot.get_or_insert_with(|| Arc::new(self.catalog.listing(root as u32)))
                .clone()
        };
        let folder = match path.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/"),
            None => String::new(),
        };
        listing
            .iter()
            .filter(|e| e.path.starts_with(&folder))
            .cloned()
            .collect()
    }

    /// The eval file of the skill whose file is `path` in `root` (the engine's rule of where
    /// it is), read and parsed: `{"path", "digest" (null: not on disk), "text", "queries",
    /// "problems"}`; `None` when `path` is no skill of the caller's index (a new file not
    /// saved yet).
    fn evals_of(&self, root: usize, path: &str) -> Result<Option<Value>, Refusal> {
        let io = |e: anyhow::Error| Refusal::Io(format!("{e:#}"));
        let skills = self.view.skills().map_err(io)?;
        let Some(skill) = skills
            .iter()
            .find(|s| s.root as usize == root && s.file == path)
        else {
            return Ok(None);
        };
        let file = self.view.eval_file(&skill.skill_path).map_err(io)?;
        let bytes = match self.sandbox.read(root, &file.path) {
            Ok(bytes) => Some(bytes),
            Err(Refusal::NotFound(_)) => None,
            Err(r) => return Err(r),
        };
        let (queries, problems) = match &bytes {
            None => (Vec::new(), Vec::new()),
            Some(bytes) => match self.view.parse_eval_queries(bytes).map_err(io)? {
                Ok(queries) => (queries, Vec::new()),
                Err(problems) => (
                    Vec::new(),
                    problems.iter().map(crate::eval::located).collect(),
                ),
            },
        };
        let queries: Vec<Value> = queries
            .iter()
            .map(|q| json!({"query": q.query, "should_trigger": q.should_trigger}))
            .collect();
        Ok(Some(json!({
            "path": file.path,
            "digest": bytes.as_deref().map(sandbox::digest),
            "text": bytes.as_deref().map(String::from_utf8_lossy),
            "queries": queries,
            "problems": problems,
        })))
    }

    /// Whether `path` of `root` is a file the editor reads and writes: the eval file of a
    /// skill of that root (where the engine says it is; a text that is no valid list of eval
    /// queries is refused), or a Markdown skill file that is no asset or script of a skill
    /// (the engine's manifests say), which, when it is new (`text` given, the file absent),
    /// defines a skill at that path (the engine's check says). Scripts and assets are refused.
    fn writable_kind(&self, root: usize, path: &str, text: Option<&str>) -> Result<(), Refusal> {
        skills_engine::walk::check_read_path(path).map_err(Refusal::Invalid)?;
        if root >= self.sandbox.roots.len() {
            return Err(Refusal::Invalid(format!("there is no root #{root}")));
        }
        if path == EVAL_FILE || path.ends_with(&format!("/{EVAL_FILE}")) {
            return self.eval_file_kind(root, path, text);
        }
        let is_md = path
            .rsplit_once('.')
            .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("md"));
        if !is_md {
            return Err(Refusal::Forbidden(format!(
                "{path}: the editor reads and writes skill files (*.md) only, never a script \
                 or an asset"
            )));
        }
        let skills = self
            .catalog
            .skills()
            .map_err(|e| Refusal::Io(format!("{e:#}")))?;
        let root_u32 = root as u32;
        if skills.iter().any(|s| s.root == root_u32 && s.file == path) {
            return Ok(());
        }
        // A file of another skill's folder (a reference, a template, a script) is that skill's.
        for s in skills.iter().filter(|s| s.root == root_u32) {
            let Some(dir) = &s.resource_dir else { continue };
            if !path.starts_with(&format!("{dir}/")) {
                continue;
            }
            let manifest = self
                .catalog
                .manifest(&s.skill_path)
                .map_err(|e| Refusal::Io(format!("{e:#}")))?;
            if manifest
                .iter()
                .any(|f| f.root == root_u32 && f.path == path)
            {
                return Err(Refusal::Forbidden(format!(
                    "{path} is a file of the skill {} (an asset or a script), not a skill \
                     file; the editor does not write it",
                    s.skill_path
                )));
            }
        }
        if let Some(text) = text
            && !self.sandbox.exists(root, path)
        {
            // A new file in an Agent Skill's folder would be one of its files.
            if let Some(s) = skills.iter().find(|s| {
                s.root == root_u32
                    && s.shape == crate::runtime::SkillShape::AgentSkill
                    && s.resource_dir
                        .as_ref()
                        .is_some_and(|d| path.starts_with(&format!("{d}/")))
                    && !path.ends_with("/SKILL.md")
            }) {
                return Err(Refusal::Forbidden(format!(
                    "{path} would be a file of the skill {} (an asset), not a skill file; the \
                     editor does not write it",
                    s.skill_path
                )));
            }
            let check = self
                .catalog
                .check_skill(path, text.as_bytes(), &self.folder_listing(root, path))
                .map_err(|e| Refusal::Invalid(format!("{e:#}")))?;
            match check.skill {
                Some(skill) if skill.file == path => {}
                _ => {
                    return Err(Refusal::Invalid(format!(
                        "{path} would not be a skill (fix the findings first): a new file is \
                         saved only when it defines a skill"
                    )));
                }
            }
        }
        Ok(())
    }
}
