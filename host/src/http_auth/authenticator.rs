//! The configured checks, built once from operator configuration, and who a request is.

use std::{
    collections::BTreeSet,
    sync::{Arc, RwLock},
};

use anyhow::{Result, bail};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use super::{
    AuthOptions, LogSink, Refusal, ScopeNames,
    oauth::OAuth,
    scopes::classify,
    tokens::{StaticToken, load_tokens},
};
use crate::http_body::RpcCall;

/// Who a request comes from, once verified; in the request's (and response's) extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Who the caller is in logs and usage events: the token line's `sub=NAME`, else
    /// `static:<where the token was configured>`; the JWT's `sub` (`client_id` without one).
    pub subject: String,
    /// The scopes granted.
    pub scopes: BTreeSet<String>,
    /// How the token was verified.
    pub kind: IdentityKind,
    /// The subject access rules know the caller by: the JWT's `sub`, a token line's
    /// `sub=NAME` (`None` without one).
    pub sub: Option<String>,
    /// The caller's groups: the JWT claim named by `access.groups_claim`, a token line's
    /// `groups=A,B`.
    pub groups: BTreeSet<String>,
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

/// The configured checks; build it once with [`Authenticator::from_options`] and share it.
pub struct Authenticator {
    /// Replaced whole when the token file is read again ([`Authenticator::reload_tokens`]).
    static_tokens: RwLock<Arc<Tokens>>,
    pub(super) oauth: Option<OAuth>,
    pub(super) scopes: ScopeNames,
    pub(super) log: LogSink,
    /// The JWT claim holding groups (a dotted path).
    groups_claim: String,
}

/// Static tokens read again, not in use yet ([`Authenticator::install_tokens`]).
pub struct PreparedTokens(Tokens);

/// The static tokens, and the scopes access rules name (known besides the three).
struct Tokens {
    tokens: Vec<StaticToken>,
    rule_scopes: Vec<String>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("static_tokens", &self.static_token_count())
            .field("oauth", &self.oauth.as_ref().map(|o| &o.resource))
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
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

        let static_tokens = Self::read_tokens(opts, &scopes)?;
        let oauth = OAuth::from_config(&c, &log)?;
        if static_tokens.tokens.is_empty() && oauth.is_none() {
            if !c.tokens_file.trim().is_empty() {
                bail!("the token file {} holds no token", c.tokens_file.trim());
            }
            return Ok(None);
        }
        let groups_claim = match opts.groups_claim.trim() {
            "" => "groups".to_string(),
            claim => claim.to_string(),
        };
        Ok(Some(Self {
            static_tokens: RwLock::new(Arc::new(static_tokens)),
            oauth,
            scopes,
            log,
            groups_claim,
        }))
    }

    /// The static tokens of `opts` (file and variable).
    fn read_tokens(opts: &AuthOptions, scopes: &ScopeNames) -> Result<Tokens> {
        let c = opts.effective();
        let tokens = load_tokens(&c, opts.env.as_ref(), scopes, &opts.rule_scopes)?;
        Ok(Tokens {
            tokens,
            rule_scopes: opts.rule_scopes.clone(),
        })
    }

    /// Read the static tokens of `opts` again (SIGHUP: rotated tokens, new rule scopes),
    /// without using them yet: [`Authenticator::install_tokens`] swaps them in. The scope
    /// names, OAuth and the groups claim are kept from start-up.
    pub fn prepare_tokens(&self, opts: &AuthOptions) -> Result<PreparedTokens> {
        let fresh = Self::read_tokens(opts, &self.scopes)?;
        if fresh.tokens.is_empty() && self.oauth.is_none() {
            bail!("no static token is left and OAuth is off: every request would be refused");
        }
        Ok(PreparedTokens(fresh))
    }

    /// Use the tokens read by [`Authenticator::prepare_tokens`] from the next request on;
    /// returns how many static tokens are configured now.
    pub fn install_tokens(&self, prepared: PreparedTokens) -> usize {
        let count = prepared.0.tokens.len();
        *self
            .static_tokens
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Arc::new(prepared.0);
        count
    }

    fn tokens(&self) -> Arc<Tokens> {
        self.static_tokens
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether any check is configured (always true for a built authenticator).
    pub fn is_configured(&self) -> bool {
        !self.tokens().tokens.is_empty() || self.oauth.is_some()
    }

    /// Whether OAuth (JWT access tokens, resource metadata) is on.
    pub fn oauth_enabled(&self) -> bool {
        self.oauth.is_some()
    }

    /// How many static tokens are configured.
    pub fn static_token_count(&self) -> usize {
        self.tokens().tokens.len()
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
            "scopes_supported": self.supported_scopes(),
            "bearer_methods_supported": ["header"],
            "resource_name": "skills-mcp",
        }))
    }

    /// The three scopes, then those access rules name.
    fn supported_scopes(&self) -> Vec<String> {
        let mut all: Vec<String> = self.scopes.all().iter().map(|s| s.to_string()).collect();
        for s in &self.tokens().rule_scopes {
            if !all.contains(s) {
                all.push(s.clone());
            }
        }
        all
    }

    /// Check a presented bearer token.
    pub async fn authenticate(&self, token: &str) -> Result<Identity, Refusal> {
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let tokens = self.tokens();
        let mut found: Option<&StaticToken> = None;
        for t in &tokens.tokens {
            // Every configured hash is compared, in constant time.
            if bool::from(t.hash.ct_eq(&hash)) && found.is_none() {
                found = Some(t);
            }
        }
        if let Some(t) = found {
            return Ok(Identity {
                subject: t
                    .sub
                    .clone()
                    .unwrap_or_else(|| format!("static:{}", t.label)),
                scopes: t.scopes.clone(),
                kind: IdentityKind::Static,
                sub: t.sub.clone(),
                groups: t.groups.clone(),
            });
        }
        match &self.oauth {
            Some(o) if token.split('.').count() == 3 => {
                o.verify(token, &self.groups_claim, &self.log).await
            }
            _ => Err(Refusal::invalid_token("unknown token")),
        }
    }

    /// The scopes a classified request body needs, by JSON-RPC method (see the module docs).
    pub fn required_scopes(&self, call: &RpcCall) -> BTreeSet<String> {
        let need = classify(call);
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
}
