//! The `auth` section of the configuration and the `serve --http` flags over it.

use std::{collections::HashMap, path::PathBuf};

use serde::{Deserialize, Serialize};

use super::DEFAULT_TOKENS_ENV;

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
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            tokens_file: String::new(),
            tokens_env: DEFAULT_TOKENS_ENV.into(),
            resource_url: String::new(),
            oauth: OAuthConfig::default(),
            scopes: ScopeNames::default(),
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
    /// The three names: read, run, refresh.
    pub fn all(&self) -> [&str; 3] {
        [&self.read, &self.run, &self.refresh]
    }
}

/// Authentication options of `serve --http`: flags over the `auth` section of the
/// configuration. Flatten it into the `serve` arguments and set [`AuthOptions::config`] from
/// `Config::auth` before [`Authenticator::from_options`](super::Authenticator::from_options).
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

    /// The JWT claim holding a caller's groups (`access.groups_claim`; a dotted path reaches
    /// a nested claim; empty: `groups`).
    #[arg(skip)]
    pub groups_claim: String,

    /// Scopes named in access rules (`access.rules[].scopes`): known to token lines besides
    /// the three of `auth.scopes`, and listed in the resource metadata.
    #[arg(skip)]
    pub rule_scopes: Vec<String>,
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
