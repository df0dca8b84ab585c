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
//! Then every request needs a **scope** by what it does; the middleware reads the classified
//! JSON-RPC body ([`crate::http_body::RpcCall`]: one message or a batch, read once within the
//! server's body limit) for `method` and, for `tools/call`, `params.name`:
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
//!
//! # Rooms
//! - `config`: the `auth` section and the `serve` flags over it ([`AuthConfig`], [`AuthOptions`]);
//! - `authenticator`: the configured checks built once ([`Authenticator`]) and who a request is
//!   ([`Identity`]);
//! - `tokens`: static token lines (file and environment);
//! - `oauth`: JWT access tokens (resource URLs, header and claims);
//! - `jwks`: the issuers' key set (loading, caching, refreshing);
//! - `scopes`: which scopes a request needs;
//! - `refusal`: the refusals and their `WWW-Authenticate` challenges;
//! - `middleware`: the axum layer ([`apply`]) and the bearer token of a request.

use std::sync::Arc;

mod authenticator;
mod config;
mod jwks;
pub(crate) mod middleware;
mod oauth;
mod refusal;
mod scopes;
mod tokens;

pub use authenticator::{Authenticator, Identity, IdentityKind, PreparedTokens};
pub use config::{AuthConfig, AuthOptions, OAuthConfig, ScopeNames};
pub use middleware::apply;
pub use refusal::Refusal;
pub use tokens::identity_of_line;

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

/// Where log lines go (stderr unless a test captures them).
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;
