//! Authentication and scopes for the MCP endpoint over HTTP.
//!
//! HTTP clients are strangers until they present a token. Two kinds of bearer token are
//! accepted, configured by the operator only (flags, environment, the `auth` section of
//! `--config FILE`; a root's `config.yaml` cannot touch this section):
//!
//! - **static tokens**, from a file (one per line: `TOKEN [SCOPE...]`) and/or an environment
//!   variable (the same lines, separated by newlines or `;`). Only their SHA-256 is kept in
//!   memory, and a presented token's hash is compared with every one in constant time;
//! - **OAuth 2.1 access tokens** (JWT): signature checked against a JWKS (a file or an
//!   http(s) URL, cached, refreshed periodically and when an unknown `kid` appears, at most once
//!   per `jwks_min_refresh_seconds`), issuer, audience (this server's `--resource-url`), `exp`
//!   and `nbf` with a leeway. Only the algorithm of the key that matches (by `kid`) is accepted,
//!   so `alg: none` and algorithm confusion (an RSA public key used as an HMAC secret) fail.
//!
//! Then every request needs a **scope** by what it does; the middleware reads the JSON-RPC body
//! (one message or a batch, bounded) to find `method` and, for `tools/call`, `params.name`:
//! `run_script` needs the run scope, `refresh_skills` the refresh scope, anything else that reads
//! skills the read scope; the protocol's housekeeping (`initialize`, `ping`, notifications,
//! answers to the server's own requests) needs no scope. A body that cannot be classified needs
//! every scope. The verified [`Identity`] is put in the request's extensions (rmcp hands them to
//! the handlers in `RequestContext::extensions`) and in the response's (for an access log).
//!
//! Refusals: 401 with `WWW-Authenticate: Bearer ...` (`resource_metadata` when OAuth is on, and
//! `error="invalid_token"` when a token was presented), 403 `error="insufficient_scope"` with the
//! missing `scope`, 413 for a body over the limit, 400 for a token in the query string or two
//! `Authorization` headers, 503 when a token's key is unknown and the JWKS cannot be fetched.
//! A token never appears in a log line, an error or a response.
//!
//! This is transport security, like rmcp's own JSON-RPC handling, so it lives in the host; no
//! rule about skills is involved.

use std::{
    collections::{BTreeSet, HashMap},
    path::{Path, PathBuf},
    sync::{
        Arc, RwLock,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context as _, Result, bail};
use axum::{
    Router,
    body::Body,
    extract::{Request, State},
    http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header},
    middleware::Next,
    response::{IntoResponse as _, Response},
    routing::get,
};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, errors::ErrorKind};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

/// The environment variable read for static tokens unless `tokens_env` names another.
pub const DEFAULT_TOKENS_ENV: &str = "SKILLS_MCP_AUTH_TOKENS";
/// The tool that needs the run scope.
pub const RUN_SCRIPT_TOOL: &str = "run_script";
/// The tool that needs the refresh scope.
pub const REFRESH_TOOL: &str = "refresh_skills";
/// Where the protected resource metadata (RFC 9728) is served.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";
/// Shortest static token accepted (bytes): a guessable token is refused at start-up.
pub const MIN_TOKEN_LEN: usize = 16;
/// Largest JWKS document read (bytes).
const MAX_JWKS_BYTES: u64 = 1 << 20;
/// Most keys of a JWKS tried against one token without a `kid`.
const MAX_KEYS_TRIED: usize = 8;

/// The `auth` section of the configuration (`--config FILE` only: it is removed, with a
/// warning, from a root's `config.yaml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthConfig {
    /// A file of static tokens, one per line: `TOKEN [SCOPE...]` (no scope: every scope);
    /// blank lines and lines starting with `#` are skipped. `""`: none.
    pub tokens_file: String,
    /// The environment variable holding static tokens (the same lines, separated by newlines
    /// or `;`).
    pub tokens_env: String,
    /// This server's public URL as clients reach it (e.g. `https://skills.example.com/mcp`):
    /// the audience a JWT must carry, and the `resource` of the metadata. Required with OAuth.
    pub resource_url: String,
    /// OAuth 2.1 resource server (JWT access tokens).
    pub oauth: OAuthConfig,
    /// The names of the three scopes.
    pub scopes: ScopeNames,
    /// Largest request body the scope check reads, in bytes; a larger one is refused with 413.
    pub max_body_bytes: u64,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            tokens_file: String::new(),
            tokens_env: DEFAULT_TOKENS_ENV.into(),
            resource_url: String::new(),
            oauth: OAuthConfig::default(),
            scopes: ScopeNames::default(),
            max_body_bytes: 4 * 1024 * 1024,
        }
    }
}

/// `auth.oauth`: where JWT access tokens come from and how they are checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OAuthConfig {
    /// The authorization servers (their issuer identifiers); a token's `iss` must be one.
    /// Empty: OAuth is off.
    pub issuers: Vec<String>,
    /// The signing keys: a JWKS file, or an `https://` (or `http://`) URL.
    pub jwks: String,
    /// Minutes after which the key set is fetched again (in the background).
    pub jwks_refresh_minutes: u64,
    /// Least seconds between two fetches caused by an unknown `kid`.
    pub jwks_min_refresh_seconds: u64,
    /// Seconds a JWKS fetch may take.
    pub jwks_timeout_seconds: u64,
    /// Clock skew allowed on `exp` and `nbf`, in seconds (at most 300).
    pub leeway_seconds: u64,
}

impl Default for OAuthConfig {
    fn default() -> Self {
        Self {
            issuers: Vec::new(),
            jwks: String::new(),
            jwks_refresh_minutes: 15,
            jwks_min_refresh_seconds: 30,
            jwks_timeout_seconds: 10,
            leeway_seconds: 60,
        }
    }
}

/// The names of the scopes (as they appear in tokens and in the metadata).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScopeNames {
    /// Reading skills: tools other than the two below, resources, prompts, `skills/*`.
    pub read: String,
    /// `tools/call` of `run_script`.
    pub run: String,
    /// `tools/call` of `refresh_skills`.
    pub refresh: String,
}

impl Default for ScopeNames {
    fn default() -> Self {
        Self {
            read: "skills:read".into(),
            run: "skills:run".into(),
            refresh: "skills:refresh".into(),
        }
    }
}

impl ScopeNames {
    fn all(&self) -> [&str; 3] {
        [&self.read, &self.run, &self.refresh]
    }
}

/// Authentication options of `serve --http`: flags over the `auth` section of the
/// configuration. Flatten it into the `serve` arguments and set [`AuthOptions::config`] from
/// `Config::auth` before [`Authenticator::from_options`].
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AuthOptions {
    /// A file of static bearer tokens, one per line: `TOKEN [SCOPE...]` (no scope: all).
    #[arg(long = "auth-tokens-file", value_name = "FILE")]
    pub tokens_file: Option<PathBuf>,

    /// The environment variable holding static tokens (default SKILLS_MCP_AUTH_TOKENS; lines
    /// as in the file, separated by newlines or `;`). Tokens are never taken as a flag value.
    #[arg(long = "auth-tokens-env", value_name = "VAR")]
    pub tokens_env: Option<String>,

    /// This server's public URL (e.g. https://skills.example.com/mcp): the audience of JWT
    /// access tokens and the `resource` of /.well-known/oauth-protected-resource.
    #[arg(long = "resource-url", value_name = "URL")]
    pub resource_url: Option<String>,

    /// An OAuth authorization server (issuer) whose JWT access tokens are accepted
    /// (repeatable; replaces `auth.oauth.issuers`).
    #[arg(long = "oauth-issuer", value_name = "URL")]
    pub oauth_issuers: Vec<String>,

    /// The issuers' signing keys: a JWKS file or an http(s) URL.
    #[arg(long = "oauth-jwks", value_name = "FILE|URL")]
    pub oauth_jwks: Option<String>,

    /// The `auth` section of the configuration (defaults when not set).
    #[arg(skip)]
    pub config: AuthConfig,

    /// The environment to read the tokens variable from (`None`: this process's).
    #[arg(skip)]
    pub env: Option<HashMap<String, String>>,
}

impl AuthOptions {
    /// The configuration with the flags applied over it.
    pub fn effective(&self) -> AuthConfig {
        let mut c = self.config.clone();
        if let Some(f) = &self.tokens_file {
            c.tokens_file = f.display().to_string();
        }
        if let Some(v) = &self.tokens_env {
            c.tokens_env = v.clone();
        }
        if let Some(u) = &self.resource_url {
            c.resource_url = u.clone();
        }
        if !self.oauth_issuers.is_empty() {
            c.oauth.issuers = self.oauth_issuers.clone();
        }
        if let Some(j) = &self.oauth_jwks {
            c.oauth.jwks = j.clone();
        }
        c
    }
}

/// Who a request comes from, once verified; in the request's (and response's) extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// `static:<where the token was configured>` or the JWT's `sub` (`client_id` without one).
    pub subject: String,
    /// The scopes granted.
    pub scopes: BTreeSet<String>,
    /// How the token was verified.
    pub kind: IdentityKind,
}

/// How an [`Identity`] was verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentityKind {
    /// A configured static token.
    Static,
    /// A JWT access token of a configured issuer.
    Jwt,
}

impl Identity {
    /// Whether the identity holds `scope`.
    pub fn has(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }
}

/// One static token: its hash, never the token.
struct StaticToken {
    hash: [u8; 32],
    scopes: BTreeSet<String>,
    /// Where it was configured, e.g. `tokens.txt:3` (never the token).
    label: String,
}

/// Where log lines go (stderr unless a test captures them).
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// The configured checks; build it once with [`Authenticator::from_options`] and share it.
pub struct Authenticator {
    static_tokens: Vec<StaticToken>,
    oauth: Option<OAuth>,
    scopes: ScopeNames,
    max_body_bytes: usize,
    log: LogSink,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("static_tokens", &self.static_tokens.len())
            .field("oauth", &self.oauth.as_ref().map(|o| &o.resource))
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

struct OAuth {
    issuers: Vec<String>,
    /// The resource URL (also the required audience).
    resource: String,
    /// Its metadata URL (for `WWW-Authenticate`) and the local paths serving it.
    metadata_url: String,
    metadata_paths: Vec<String>,
    leeway: u64,
    jwks: Jwks,
}

impl Authenticator {
    /// Build the checks from operator configuration. `None` when neither static tokens nor
    /// OAuth are configured. Errors name the setting (and `file:line` for a token file) and
    /// never show a token.
    pub fn from_options(opts: &AuthOptions) -> Result<Option<Self>> {
        Self::from_options_with_log(
            opts,
            Arc::new(|line: &str| match line.strip_prefix("warning: ") {
                Some(warning) => tracing::warn!("{warning}"),
                None => tracing::info!("{line}"),
            }),
        )
    }

    /// [`Authenticator::from_options`] with its log lines (start-up included) sent to `log`.
    pub fn from_options_with_log(opts: &AuthOptions, log: LogSink) -> Result<Option<Self>> {
        let c = opts.effective();
        let scopes = c.scopes.clone();
        for (key, name) in [
            ("auth.scopes.read", &scopes.read),
            ("auth.scopes.run", &scopes.run),
            ("auth.scopes.refresh", &scopes.refresh),
        ] {
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\')
            {
                bail!(
                    "invalid configuration: {key} = {name:?}; allowed: a scope name (visible ASCII, no quote or backslash)"
                );
            }
        }
        if scopes.read == scopes.run
            || scopes.read == scopes.refresh
            || scopes.run == scopes.refresh
        {
            bail!("invalid configuration: auth.scopes: the three scope names must differ");
        }

        let mut static_tokens = Vec::new();
        if !c.tokens_file.trim().is_empty() {
            let path = Path::new(c.tokens_file.trim());
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the token file {}", path.display()))?;
            parse_tokens(
                &text,
                &path.display().to_string(),
                &scopes,
                &mut static_tokens,
            )?;
        }
        if !c.tokens_env.is_empty() {
            let value = match &opts.env {
                Some(env) => env.get(&c.tokens_env).cloned(),
                None => std::env::var(&c.tokens_env).ok(),
            };
            if let Some(value) = value.filter(|v| !v.trim().is_empty()) {
                let text = value.replace(';', "\n");
                parse_tokens(
                    &text,
                    &format!("${}", c.tokens_env),
                    &scopes,
                    &mut static_tokens,
                )?;
            }
        }

        let o = &c.oauth;
        let oauth_on = !o.issuers.is_empty() || !o.jwks.trim().is_empty();
        let oauth = if oauth_on {
            if o.issuers.is_empty() {
                bail!(
                    "invalid configuration: auth.oauth.issuers (--oauth-issuer) is empty; allowed: the issuer URL of each authorization server whose tokens are accepted"
                );
            }
            if o.jwks.trim().is_empty() {
                bail!(
                    "invalid configuration: auth.oauth.jwks (--oauth-jwks) is empty; allowed: a JWKS file or an http(s) URL"
                );
            }
            if o.leeway_seconds > 300 {
                bail!(
                    "invalid configuration: auth.oauth.leeway_seconds = {}; allowed: 0 to 300",
                    o.leeway_seconds
                );
            }
            for (key, v) in [
                ("auth.oauth.jwks_refresh_minutes", o.jwks_refresh_minutes),
                ("auth.oauth.jwks_timeout_seconds", o.jwks_timeout_seconds),
            ] {
                if v == 0 {
                    bail!("invalid configuration: {key} = 0; allowed: a whole number, at least 1");
                }
            }
            let (resource, metadata_url, metadata_paths) = resource_urls(&c.resource_url)?;
            let source = if o.jwks.starts_with("https://") || o.jwks.starts_with("http://") {
                JwksSource::Url(o.jwks.trim().to_string())
            } else {
                JwksSource::File(PathBuf::from(o.jwks.trim()))
            };
            let jwks = Jwks::new(
                source,
                Duration::from_secs(o.jwks_refresh_minutes * 60),
                Duration::from_secs(o.jwks_min_refresh_seconds),
                Duration::from_secs(o.jwks_timeout_seconds),
            );
            jwks.load_at_start(&log)?;
            Some(OAuth {
                issuers: o.issuers.clone(),
                resource,
                metadata_url,
                metadata_paths,
                leeway: o.leeway_seconds,
                jwks,
            })
        } else {
            None
        };
        if static_tokens.is_empty() && oauth.is_none() {
            if !c.tokens_file.trim().is_empty() {
                bail!("the token file {} holds no token", c.tokens_file.trim());
            }
            return Ok(None);
        }
        if c.max_body_bytes == 0 {
            bail!(
                "invalid configuration: auth.max_body_bytes = 0; allowed: a whole number of bytes, at least 1"
            );
        }
        Ok(Some(Self {
            static_tokens,
            oauth,
            scopes,
            max_body_bytes: usize::try_from(c.max_body_bytes).unwrap_or(usize::MAX),
            log,
        }))
    }

    /// Whether any check is configured (always true for a built authenticator).
    pub fn is_configured(&self) -> bool {
        !self.static_tokens.is_empty() || self.oauth.is_some()
    }

    /// Whether OAuth (JWT access tokens, resource metadata) is on.
    pub fn oauth_enabled(&self) -> bool {
        self.oauth.is_some()
    }

    /// How many static tokens are configured.
    pub fn static_token_count(&self) -> usize {
        self.static_tokens.len()
    }

    /// Send log lines to `sink` instead of stderr (tests capture them this way).
    pub fn with_log_sink(mut self, sink: LogSink) -> Self {
        self.log = sink;
        self
    }

    /// The protected resource metadata (RFC 9728), when OAuth is on.
    pub fn resource_metadata(&self) -> Option<Value> {
        let o = self.oauth.as_ref()?;
        Some(json!({
            "resource": o.resource,
            "authorization_servers": o.issuers,
            "scopes_supported": self.scopes.all(),
            "bearer_methods_supported": ["header"],
            "resource_name": "skills-mcp",
        }))
    }

    /// Check a presented bearer token.
    pub async fn authenticate(&self, token: &str) -> Result<Identity, Refusal> {
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found: Option<&StaticToken> = None;
        for t in &self.static_tokens {
            // Every configured hash is compared, in constant time.
            if bool::from(t.hash.ct_eq(&hash)) && found.is_none() {
                found = Some(t);
            }
        }
        if let Some(t) = found {
            return Ok(Identity {
                subject: format!("static:{}", t.label),
                scopes: t.scopes.clone(),
                kind: IdentityKind::Static,
            });
        }
        match &self.oauth {
            Some(o) if token.split('.').count() == 3 => self.verify_jwt(o, token).await,
            _ => Err(Refusal::invalid_token("unknown token")),
        }
    }

    async fn verify_jwt(&self, o: &OAuth, token: &str) -> Result<Identity, Refusal> {
        let header = jwt_header(token).ok_or_else(|| Refusal::invalid_token("malformed token"))?;
        let alg_name = header.get("alg").and_then(Value::as_str).unwrap_or("");
        let alg: Algorithm = match alg_name.parse() {
            Ok(a) if !matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) => a,
            _ => return Err(Refusal::invalid_token("token algorithm not accepted")),
        };
        let kid = header.get("kid").and_then(Value::as_str).map(str::to_owned);

        let mut keys = o.jwks.current();
        o.jwks.refresh_in_background_if_stale(&self.log);
        let known = |keys: &KeySet| match &kid {
            Some(k) => keys.keys.iter().any(|key| key.kid.as_deref() == Some(k)),
            None => !keys.keys.is_empty(),
        };
        if !known(&keys) {
            match o.jwks.refresh_for_unknown_kid(&self.log).await {
                Ok(fresh) => keys = fresh,
                Err(RefreshError::RateLimited) => {}
                Err(RefreshError::Failed) => {
                    return Err(Refusal::unavailable(
                        "the authorization server's signing keys (JWKS) could not be fetched",
                    ));
                }
            }
            if !known(&keys) {
                return Err(Refusal::invalid_token("unknown signing key"));
            }
        }
        let candidates: Vec<&Key> = keys
            .keys
            .iter()
            .filter(|k| kid.is_none() || k.kid == kid)
            .collect();
        let matching: Vec<&Key> = candidates
            .iter()
            .copied()
            .filter(|k| k.alg == alg)
            .take(MAX_KEYS_TRIED)
            .collect();
        if matching.is_empty() {
            return Err(Refusal::invalid_token(
                "token algorithm does not match the signing key",
            ));
        }
        let mut validation = Validation::new(alg);
        validation.algorithms = vec![alg];
        validation.leeway = o.leeway;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.set_issuer(&o.issuers);
        validation.set_audience(&[&o.resource]);
        let mut last = Refusal::invalid_token("bad signature");
        for key in matching {
            match jsonwebtoken::decode::<Value>(token, &key.key, &validation) {
                Ok(data) => return Ok(jwt_identity(&data.claims)),
                Err(e) => {
                    last = Refusal::invalid_token(match e.kind() {
                        ErrorKind::ExpiredSignature => "token expired",
                        ErrorKind::ImmatureSignature => "token not yet valid",
                        ErrorKind::InvalidIssuer => "token issuer not accepted",
                        ErrorKind::InvalidAudience => "token audience is not this server",
                        ErrorKind::InvalidSignature => "bad signature",
                        ErrorKind::MissingRequiredClaim(c) => match c.as_str() {
                            "exp" => "token has no exp claim",
                            "iss" => "token has no iss claim",
                            _ => "token has no aud claim",
                        },
                        ErrorKind::InvalidAlgorithm => {
                            "token algorithm does not match the signing key"
                        }
                        _ => "malformed token",
                    });
                    if !matches!(e.kind(), ErrorKind::InvalidSignature) {
                        // Claims are checked after the signature: this key verified it.
                        break;
                    }
                }
            }
        }
        Err(last)
    }

    /// The scopes a request body needs, by JSON-RPC method (see the module docs).
    pub fn required_scopes(&self, body: &[u8]) -> BTreeSet<String> {
        let need = classify(body);
        let mut out = BTreeSet::new();
        if need.read {
            out.insert(self.scopes.read.clone());
        }
        if need.run {
            out.insert(self.scopes.run.clone());
        }
        if need.refresh {
            out.insert(self.scopes.refresh.clone());
        }
        out
    }

    /// `WWW-Authenticate` for a refusal.
    fn challenge(&self, error: Option<(&str, &str)>, scope: Option<&str>) -> String {
        let mut parts = Vec::new();
        match &self.oauth {
            Some(o) => parts.push(format!("resource_metadata=\"{}\"", o.metadata_url)),
            None => parts.push("realm=\"skills-mcp\"".to_string()),
        }
        if let Some((code, description)) = error {
            parts.push(format!("error=\"{code}\""));
            parts.push(format!("error_description=\"{description}\""));
        }
        if let Some(scope) = scope {
            parts.push(format!("scope=\"{scope}\""));
        }
        format!("Bearer {}", parts.join(", "))
    }

    fn refuse(&self, refusal: &Refusal) -> Response {
        let mut response = (
            refusal.status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            json!({"error": refusal.code, "error_description": refusal.description}).to_string(),
        )
            .into_response();
        let challenge = match refusal.status {
            StatusCode::UNAUTHORIZED if refusal.code == "unauthorized" => {
                Some(self.challenge(None, None))
            }
            StatusCode::UNAUTHORIZED => {
                Some(self.challenge(Some((refusal.code, refusal.description)), None))
            }
            StatusCode::FORBIDDEN => Some(self.challenge(
                Some((refusal.code, refusal.description)),
                refusal.scope.as_deref(),
            )),
            StatusCode::BAD_REQUEST => {
                Some(self.challenge(Some((refusal.code, refusal.description)), None))
            }
            _ => None,
        };
        if let Some(c) = challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, c);
        }
        if refusal.status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
        }
        response
    }
}

/// Why a request is refused (status, OAuth error code, a fixed description; never a token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    /// `unauthorized` (no token), `invalid_token`, `invalid_request`, `insufficient_scope`,
    /// `request_too_large`, `temporarily_unavailable`.
    pub code: &'static str,
    pub description: &'static str,
    /// The scopes needed (for `insufficient_scope`).
    pub scope: Option<String>,
}

impl Refusal {
    fn new(status: StatusCode, code: &'static str, description: &'static str) -> Self {
        Self {
            status,
            code,
            description,
            scope: None,
        }
    }
    fn invalid_token(description: &'static str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "invalid_token", description)
    }
    fn unavailable(description: &'static str) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "temporarily_unavailable",
            description,
        )
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.description
        )
    }
}

/// Wrap every route of `router` (the MCP endpoint at `/mcp`) with the bearer/JWT check and the
/// scope checks, and add `GET /.well-known/oauth-protected-resource` (and the path-suffixed
/// form RFC 9728 gives for the resource URL, e.g. `.../mcp`) when OAuth is on. Routes merged
/// after this call (e.g. `/healthz`) stay open.
pub fn apply(router: Router, auth: Arc<Authenticator>) -> Router {
    // A route layer: unknown paths stay 404, only the routes given are behind the check.
    let protected = router.route_layer(axum::middleware::from_fn_with_state(auth.clone(), check));
    let Some(oauth) = &auth.oauth else {
        return protected;
    };
    let mut metadata = Router::new();
    for path in &oauth.metadata_paths {
        metadata = metadata.route(path, get(serve_metadata));
    }
    protected.merge(metadata.with_state(auth))
}

async fn serve_metadata(State(auth): State<Arc<Authenticator>>) -> Response {
    match auth.resource_metadata() {
        Some(m) => (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "max-age=3600"),
            ],
            m.to_string(),
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The middleware: token, then scopes (reading the body of a POST), then the inner route.
async fn check(State(auth): State<Arc<Authenticator>>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let token = match bearer_token(request.headers(), request.uri()) {
        Ok(Some(token)) => token,
        Ok(None) => {
            return auth.refuse(&Refusal::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a bearer token is required",
            ));
        }
        Err(refusal) => {
            (auth.log)(&format!(
                "auth: {method} {path} refused: {}",
                refusal.description
            ));
            return auth.refuse(&refusal);
        }
    };
    let identity = match auth.authenticate(&token).await {
        Ok(identity) => identity,
        Err(refusal) => {
            (auth.log)(&format!("auth: {method} {path} refused: {refusal}"));
            return auth.refuse(&refusal);
        }
    };
    drop(token);
    let (mut parts, body) = request.into_parts();
    let body = if parts.method == Method::POST {
        let too_large = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|n| n > auth.max_body_bytes as u64);
        let bytes = if too_large {
            None
        } else {
            match axum::body::to_bytes(body, auth.max_body_bytes).await {
                Ok(bytes) => Some(bytes),
                Err(e) => {
                    let limited = std::error::Error::source(&e)
                        .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
                    if !limited {
                        return auth.refuse(&Refusal::new(
                            StatusCode::BAD_REQUEST,
                            "invalid_request",
                            "the request body could not be read",
                        ));
                    }
                    None
                }
            }
        };
        let Some(bytes) = bytes else {
            return auth.refuse(&Refusal::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                "the request body is over the size limit",
            ));
        };
        let needed = auth.required_scopes(&bytes);
        let missing: Vec<&str> = needed
            .iter()
            .filter(|s| !identity.has(s))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            (auth.log)(&format!(
                "auth: {method} {path} refused for {}: missing scope {}",
                identity.subject.escape_debug(),
                missing.join(" ")
            ));
            let mut refusal = Refusal::new(
                StatusCode::FORBIDDEN,
                "insufficient_scope",
                "the token lacks a scope this request needs",
            );
            refusal.scope = Some(needed.into_iter().collect::<Vec<_>>().join(" "));
            return auth.refuse(&refusal);
        }
        Body::from(bytes)
    } else {
        body
    };
    parts.extensions.insert(identity.clone());
    let mut response = next.run(Request::from_parts(parts, body)).await;
    response.extensions_mut().insert(identity);
    response
}

/// The bearer token of a request: `Ok(None)` without one (or with another scheme), a 400
/// refusal for two `Authorization` headers or a token in the query string (which the MCP
/// specification forbids: URLs end up in logs).
fn bearer_token(headers: &HeaderMap, uri: &Uri) -> Result<Option<String>, Refusal> {
    if let Some(query) = uri.query()
        && query
            .split('&')
            .any(|pair| pair.split('=').next() == Some("access_token"))
    {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "tokens are accepted only in the Authorization header",
        ));
    }
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "more than one Authorization header",
        ));
    }
    let Ok(value) = value.to_str() else {
        return Err(Refusal::invalid_token("malformed Authorization header"));
    };
    let value = value.trim();
    let Some((scheme, token)) = value.split_once(' ') else {
        return Ok(None);
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Ok(None);
    }
    let token = token.trim();
    if token.is_empty() {
        return Ok(None);
    }
    Ok(Some(token.to_owned()))
}

/// What a body needs: by method, `params.name` for `tools/call`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Need {
    read: bool,
    run: bool,
    refresh: bool,
}

impl Need {
    const ALL: Need = Need {
        read: true,
        run: true,
        refresh: true,
    };
    fn or(self, other: Need) -> Need {
        Need {
            read: self.read || other.read,
            run: self.run || other.run,
            refresh: self.refresh || other.refresh,
        }
    }
}

/// One JSON-RPC message as far as scopes care. Derived `Deserialize` refuses duplicate keys,
/// so a body whose `method` or `name` is given twice (which another parser might read the
/// other way) is unclassifiable, and needs every scope.
#[derive(Deserialize)]
struct Message {
    method: Option<String>,
    params: Option<Params>,
}

#[derive(Deserialize)]
struct Params {
    name: Option<Value>,
}

fn classify(body: &[u8]) -> Need {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    match first {
        Some(b'[') => match serde_json::from_slice::<Vec<Message>>(body) {
            Ok(batch) if !batch.is_empty() => batch
                .iter()
                .map(classify_one)
                .fold(Need::default(), Need::or),
            _ => Need::ALL,
        },
        Some(b'{') => match serde_json::from_slice::<Message>(body) {
            Ok(m) => classify_one(&m),
            Err(_) => Need::ALL,
        },
        _ => Need::ALL,
    }
}

fn classify_one(m: &Message) -> Need {
    let read = Need {
        read: true,
        ..Need::default()
    };
    let Some(method) = m.method.as_deref() else {
        // An answer to a request of the server (sampling, elicitation, roots).
        return Need::default();
    };
    match method {
        "initialize" | "ping" | "server/discover" | "logging/setLevel" => Need::default(),
        _ if method.starts_with("notifications/") => Need::default(),
        "tools/call" => match m.params.as_ref().and_then(|p| p.name.as_ref()) {
            Some(Value::String(name)) if name == RUN_SCRIPT_TOOL => Need {
                run: true,
                ..Need::default()
            },
            Some(Value::String(name)) if name == REFRESH_TOOL => Need {
                refresh: true,
                ..Need::default()
            },
            Some(Value::String(_)) => read,
            _ => Need::ALL,
        },
        _ => read,
    }
}

/// Parse static token lines into `out`. `source` names where they come from in errors (with
/// the line number); a token is never shown.
fn parse_tokens(
    text: &str,
    source: &str,
    scopes: &ScopeNames,
    out: &mut Vec<StaticToken>,
) -> Result<()> {
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let token = words.next().unwrap_or_default();
        if token.len() < MIN_TOKEN_LEN {
            bail!(
                "{source}:{n}: the token is shorter than {MIN_TOKEN_LEN} characters; allowed: a random token of at least {MIN_TOKEN_LEN} characters (e.g. `openssl rand -hex 32`)"
            );
        }
        if !token.bytes().all(is_token_char) {
            bail!("{source}:{n}: the token has a character outside A-Z a-z 0-9 - . _ ~ + / =");
        }
        let mut granted = BTreeSet::new();
        for scope in words {
            if !scopes.all().contains(&scope) {
                bail!(
                    "{source}:{n}: unknown scope `{scope}`; allowed: {}",
                    scopes.all().join(", ")
                );
            }
            granted.insert(scope.to_string());
        }
        if granted.is_empty() {
            granted = scopes.all().iter().map(|s| s.to_string()).collect();
        }
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if out.iter().any(|t| t.hash == hash) {
            bail!("{source}:{n}: the same token is configured twice");
        }
        out.push(StaticToken {
            hash,
            scopes: granted,
            label: format!("{source}:{n}"),
        });
    }
    Ok(())
}

/// RFC 6750 `b64token` characters.
fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

/// The resource URL, its metadata URL (RFC 9728 section 3.1: the well-known path inserted
/// between the host and the resource's path) and the local paths that serve the metadata.
fn resource_urls(resource: &str) -> Result<(String, String, Vec<String>)> {
    let resource = resource.trim();
    let allowed =
        "the server's public URL, e.g. https://skills.example.com/mcp (no query or fragment)";
    if resource.is_empty() {
        bail!(
            "invalid configuration: auth.resource_url (--resource-url) is required with OAuth; allowed: {allowed}"
        );
    }
    let uri: Uri = resource.parse().map_err(|_| {
        anyhow::anyhow!(
            "invalid configuration: auth.resource_url = {resource:?}; allowed: {allowed}"
        )
    })?;
    let ok_scheme = matches!(uri.scheme_str(), Some("https" | "http"));
    if !ok_scheme || uri.authority().is_none() || uri.query().is_some() || resource.contains('#') {
        bail!("invalid configuration: auth.resource_url = {resource:?}; allowed: {allowed}");
    }
    let scheme = uri.scheme_str().unwrap_or("https");
    let authority = uri.authority().map(|a| a.as_str()).unwrap_or_default();
    let path = uri.path().trim_end_matches('/');
    let suffixed = format!("{METADATA_PATH}{path}");
    let metadata_url = format!("{scheme}://{authority}{suffixed}");
    let mut paths = vec![METADATA_PATH.to_string()];
    if !path.is_empty() {
        paths.push(suffixed);
    }
    Ok((resource.to_string(), metadata_url, paths))
}

/// The JSON header of a JWT, without checking anything.
fn jwt_header(token: &str) -> Option<Value> {
    use base64::Engine as _;
    let header = token.split('.').next()?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The identity of verified claims: `sub` (else `client_id`), scopes from `scope` (a
/// space-separated string, RFC 9068) or `scp` (a list or a string).
fn jwt_identity(claims: &Value) -> Identity {
    let subject = claims
        .get("sub")
        .or_else(|| claims.get("client_id"))
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_string();
    let mut scopes = BTreeSet::new();
    for key in ["scope", "scp"] {
        match claims.get(key) {
            Some(Value::String(s)) => scopes.extend(s.split_whitespace().map(str::to_owned)),
            Some(Value::Array(list)) => {
                scopes.extend(list.iter().filter_map(Value::as_str).map(str::to_owned))
            }
            _ => {}
        }
    }
    Identity {
        subject,
        scopes,
        kind: IdentityKind::Jwt,
    }
}

// ---- the key set -------------------------------------------------------------------------

enum JwksSource {
    File(PathBuf),
    Url(String),
}

impl JwksSource {
    /// How the source is named in logs: a URL without its query (which could carry a secret).
    fn display(&self) -> String {
        match self {
            Self::File(p) => p.display().to_string(),
            Self::Url(u) => u.split(['?', '#']).next().unwrap_or_default().to_string(),
        }
    }
}

struct Key {
    kid: Option<String>,
    alg: Algorithm,
    key: DecodingKey,
}

#[derive(Default)]
struct KeySet {
    keys: Vec<Key>,
    /// When the keys were (last) loaded.
    loaded: Option<Instant>,
}

/// Fetches are serialised by this lock; requests whose key is known never wait for it.
#[derive(Default)]
struct FetchState {
    last_attempt: Option<Instant>,
    last_failed: bool,
}

struct Jwks {
    source: Arc<JwksSource>,
    keys: Arc<RwLock<Arc<KeySet>>>,
    fetch: tokio::sync::Mutex<FetchState>,
    background: Arc<AtomicBool>,
    last_background: std::sync::Mutex<Option<Instant>>,
    max_age: Duration,
    min_interval: Duration,
    timeout: Duration,
}

enum RefreshError {
    /// A fetch happened less than `min_interval` ago.
    RateLimited,
    /// The source could not be read or parsed (logged).
    Failed,
}

impl Jwks {
    fn new(
        source: JwksSource,
        max_age: Duration,
        min_interval: Duration,
        timeout: Duration,
    ) -> Self {
        Self {
            source: Arc::new(source),
            keys: Arc::new(RwLock::new(Arc::new(KeySet::default()))),
            fetch: tokio::sync::Mutex::new(FetchState::default()),
            background: Arc::new(AtomicBool::new(false)),
            last_background: std::sync::Mutex::new(None),
            max_age,
            min_interval,
            timeout,
        }
    }

    fn current(&self) -> Arc<KeySet> {
        self.keys.read().map(|k| k.clone()).unwrap_or_default()
    }

    fn store(&self, set: KeySet) -> Arc<KeySet> {
        let set = Arc::new(set);
        if let Ok(mut k) = self.keys.write() {
            *k = set.clone();
        }
        set
    }

    /// At start-up: a file must load (a configuration error otherwise); a URL that cannot be
    /// fetched is a warning, and the keys are fetched when the first token needs them.
    fn load_at_start(&self, log: &LogSink) -> Result<()> {
        match load_keys(&self.source, self.timeout, log) {
            Ok(set) => {
                self.store(set);
                Ok(())
            }
            Err(e) => match &*self.source {
                JwksSource::File(_) => {
                    Err(e.context("loading the OAuth signing keys (auth.oauth.jwks)"))
                }
                JwksSource::Url(_) => {
                    log(&format!(
                        "warning: auth: the JWKS at {} could not be fetched ({e:#}); tokens are refused until it can be",
                        self.source.display()
                    ));
                    Ok(())
                }
            },
        }
    }

    /// Fetch again because a token names a key we do not have: at most once per
    /// `min_interval`; concurrent callers share one fetch.
    async fn refresh_for_unknown_kid(&self, log: &LogSink) -> Result<Arc<KeySet>, RefreshError> {
        let started = Instant::now();
        let mut state = self.fetch.lock().await;
        if let Some(last) = state.last_attempt {
            if last >= started {
                // Another request fetched while this one waited.
                return if state.last_failed {
                    Err(RefreshError::Failed)
                } else {
                    Ok(self.current())
                };
            }
            if last.elapsed() < self.min_interval {
                return if state.last_failed && self.current().keys.is_empty() {
                    Err(RefreshError::Failed)
                } else {
                    Err(RefreshError::RateLimited)
                };
            }
        }
        let result = self.fetch_now(log).await;
        state.last_attempt = Some(Instant::now());
        state.last_failed = result.is_err();
        result.map_err(|()| RefreshError::Failed)
    }

    async fn fetch_now(&self, log: &LogSink) -> Result<Arc<KeySet>, ()> {
        let source = self.source.clone();
        let timeout = self.timeout;
        let log2 = log.clone();
        let loaded = tokio::task::spawn_blocking(move || load_keys(&source, timeout, &log2)).await;
        match loaded {
            Ok(Ok(set)) => {
                log(&format!(
                    "auth: loaded {} signing key(s) from {}",
                    set.keys.len(),
                    self.source.display()
                ));
                Ok(self.store(set))
            }
            Ok(Err(e)) => {
                log(&format!(
                    "warning: auth: the JWKS at {} could not be fetched ({e:#}); keeping the {} key(s) already loaded",
                    self.source.display(),
                    self.current().keys.len()
                ));
                Err(())
            }
            Err(e) => {
                log(&format!("warning: auth: the JWKS fetch stopped: {e}"));
                Err(())
            }
        }
    }

    /// When the keys are older than `max_age`, fetch them again in the background (the
    /// request goes on with the keys it has).
    fn refresh_in_background_if_stale(&self, log: &LogSink) {
        let stale = self
            .current()
            .loaded
            .is_none_or(|at| at.elapsed() >= self.max_age);
        if !stale || self.background.swap(true, Ordering::AcqRel) {
            return;
        }
        // A source that keeps failing is tried at most once per `min_interval` (and 10 s).
        if let Ok(mut last) = self.last_background.lock() {
            if last.is_some_and(|at| at.elapsed() < self.min_interval.max(Duration::from_secs(10)))
            {
                self.background.store(false, Ordering::Release);
                return;
            }
            *last = Some(Instant::now());
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            self.background.store(false, Ordering::Release);
            return;
        };
        let source = self.source.clone();
        let timeout = self.timeout;
        let log = log.clone();
        let flag = self.background.clone();
        let slot = Arc::downgrade(&self.keys);
        handle.spawn(async move {
            let log2 = log.clone();
            let src = source.clone();
            let loaded = tokio::task::spawn_blocking(move || load_keys(&src, timeout, &log2)).await;
            match loaded {
                Ok(Ok(set)) => {
                    if let Some(slot) = slot.upgrade()
                        && let Ok(mut k) = slot.write()
                    {
                        *k = Arc::new(set);
                    }
                }
                Ok(Err(e)) => log(&format!(
                    "warning: auth: the periodic JWKS refresh from {} failed ({e:#}); keeping the keys already loaded",
                    source.display()
                )),
                Err(_) => {}
            }
            flag.store(false, Ordering::Release);
        });
    }
}

/// Read and parse the key set. Keys that cannot verify JWTs here (symmetric `oct` keys,
/// encryption keys, unknown types or curves) are skipped with a log line.
fn load_keys(source: &JwksSource, timeout: Duration, log: &LogSink) -> Result<KeySet> {
    let text = match source {
        JwksSource::File(path) => {
            let meta =
                std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
            if meta.len() > MAX_JWKS_BYTES {
                bail!("{} is over {MAX_JWKS_BYTES} bytes", path.display());
            }
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
        }
        JwksSource::Url(url) => {
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .timeout_global(Some(timeout))
                .http_status_as_error(false)
                .max_redirects(3)
                .user_agent(concat!("skills-mcp/", env!("CARGO_PKG_VERSION")))
                .build()
                .into();
            let mut response = agent
                .get(url)
                .header("Accept", "application/json")
                .call()
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let status = response.status();
            if !status.is_success() {
                bail!("HTTP status {}", status.as_u16());
            }
            response
                .body_mut()
                .with_config()
                .limit(MAX_JWKS_BYTES)
                .read_to_string()
                .map_err(|e| anyhow::anyhow!("reading the answer: {e}"))?
        }
    };
    parse_jwks(&text, log)
}

fn parse_jwks(text: &str, log: &LogSink) -> Result<KeySet> {
    let doc: Value = serde_json::from_str(text).context("the JWKS is not JSON")?;
    let Some(list) = doc.get("keys").and_then(Value::as_array) else {
        bail!("the JWKS has no `keys` list");
    };
    let mut keys = Vec::new();
    for (i, raw) in list.iter().enumerate() {
        match parse_key(raw) {
            Ok(key) => keys.push(key),
            Err(why) => log(&format!("auth: JWKS key #{i} skipped: {why}")),
        }
    }
    Ok(KeySet {
        keys,
        loaded: Some(Instant::now()),
    })
}

fn parse_key(raw: &Value) -> Result<Key, String> {
    use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
    if raw
        .get("use")
        .and_then(Value::as_str)
        .is_some_and(|u| u != "sig")
    {
        return Err("not a signing key (`use` is not `sig`)".into());
    }
    let jwk: Jwk = serde_json::from_value(raw.clone())
        .map_err(|e| format!("not a JWK this server reads ({e})"))?;
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return Err("an encryption key".into());
    }
    let inferred = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => Algorithm::ES256,
            EllipticCurve::P384 => Algorithm::ES384,
            _ => return Err("an unsupported curve".into()),
        },
        AlgorithmParameters::OctetKeyPair(p) => match p.curve {
            EllipticCurve::Ed25519 => Algorithm::EdDSA,
            _ => return Err("an unsupported curve".into()),
        },
        AlgorithmParameters::OctetKey(_) => {
            return Err("a symmetric (`oct`) key: only public keys are accepted".into());
        }
    };
    let alg = match jwk.common.key_algorithm {
        None => inferred,
        Some(a) => {
            let alg = match a {
                KeyAlgorithm::ES256 => Algorithm::ES256,
                KeyAlgorithm::ES384 => Algorithm::ES384,
                KeyAlgorithm::RS256 => Algorithm::RS256,
                KeyAlgorithm::RS384 => Algorithm::RS384,
                KeyAlgorithm::RS512 => Algorithm::RS512,
                KeyAlgorithm::PS256 => Algorithm::PS256,
                KeyAlgorithm::PS384 => Algorithm::PS384,
                KeyAlgorithm::PS512 => Algorithm::PS512,
                KeyAlgorithm::EdDSA => Algorithm::EdDSA,
                _ => return Err("its `alg` is not a public-key signature algorithm".into()),
            };
            if family(alg) != family(inferred) {
                return Err("its `alg` does not fit its key type".into());
            }
            alg
        }
    };
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| format!("unreadable key material ({e})"))?;
    Ok(Key {
        kid: jwk.common.key_id.clone(),
        alg,
        key,
    })
}

/// The key type an algorithm needs (`RS*` and `PS*` share RSA keys).
fn family(alg: Algorithm) -> u8 {
    match alg {
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => 0,
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => 1,
        Algorithm::ES256 | Algorithm::ES384 => 2,
        Algorithm::EdDSA => 3,
    }
}
