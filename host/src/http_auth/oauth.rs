//! OAuth 2.1 access tokens (JWT): the resource URL and its metadata URL, the checks of a
//! token, and the identity its claims give.

use std::{collections::BTreeSet, path::PathBuf, time::Duration};

use anyhow::{Result, bail};
use axum::http::Uri;
use jsonwebtoken::{Algorithm, Validation, errors::ErrorKind};
use serde_json::Value;

use super::{
    AuthConfig, Identity, IdentityKind, LogSink, METADATA_PATH, Refusal,
    jwks::{Jwks, JwksSource, Key, KeySet, RefreshError},
};

/// Most keys of a JWKS tried against one token without a `kid`.
const MAX_KEYS_TRIED: usize = 8;

/// JWT access tokens of the configured issuers, checked against their key set.
pub(super) struct OAuth {
    pub(super) issuers: Vec<String>,
    /// The resource URL (also the required audience).
    pub(super) resource: String,
    /// Its metadata URL (for `WWW-Authenticate`) and the local paths serving it.
    pub(super) metadata_url: String,
    pub(super) metadata_paths: Vec<String>,
    leeway: u64,
    jwks: Jwks,
}

impl OAuth {
    /// The OAuth checks of `c` (`None`: OAuth is off); a JWKS file is loaded now, a URL that
    /// cannot be fetched yet is a warning.
    pub(super) fn from_config(c: &AuthConfig, log: &LogSink) -> Result<Option<Self>> {
        let o = &c.oauth;
        let oauth_on = !o.issuers.is_empty() || !o.jwks.trim().is_empty();
        if !oauth_on {
            return Ok(None);
        }
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
        jwks.load_at_start(log)?;
        Ok(Some(OAuth {
            issuers: o.issuers.clone(),
            resource,
            metadata_url,
            metadata_paths,
            leeway: o.leeway_seconds,
            jwks,
        }))
    }

    /// Check a token shaped like a JWT: its key (by `kid`, fetching the key set again when the
    /// key is unknown), algorithm, signature, issuer, audience, `exp` and `nbf`.
    pub(super) async fn verify(
        &self,
        token: &str,
        groups_claim: &str,
        log: &LogSink,
    ) -> Result<Identity, Refusal> {
        let header = jwt_header(token).ok_or_else(|| Refusal::invalid_token("malformed token"))?;
        let alg_name = header.get("alg").and_then(Value::as_str).unwrap_or("");
        let alg: Algorithm = match alg_name.parse() {
            Ok(a) if !matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) => a,
            _ => return Err(Refusal::invalid_token("token algorithm not accepted")),
        };
        let kid = header.get("kid").and_then(Value::as_str).map(str::to_owned);

        let mut keys = self.jwks.current();
        self.jwks.refresh_in_background_if_stale(log);
        let known = |keys: &KeySet| match &kid {
            Some(k) => keys.keys.iter().any(|key| key.kid.as_deref() == Some(k)),
            None => !keys.keys.is_empty(),
        };
        if !known(&keys) {
            match self.jwks.refresh_for_unknown_kid(log).await {
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
        validation.leeway = self.leeway;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.set_issuer(&self.issuers);
        validation.set_audience(&[&self.resource]);
        let mut last = Refusal::invalid_token("bad signature");
        for key in matching {
            match jsonwebtoken::decode::<Value>(token, &key.key, &validation) {
                Ok(data) => return Ok(jwt_identity(&data.claims, groups_claim)),
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
/// space-separated string, RFC 9068) or `scp` (a list or a string), groups from the claim
/// `groups_claim` (a dotted path such as `realm_access.roles` reaches a nested claim; a list
/// or a space-separated string).
fn jwt_identity(claims: &Value, groups_claim: &str) -> Identity {
    let sub = claims.get("sub").and_then(Value::as_str).map(str::to_owned);
    let subject = sub
        .clone()
        .or_else(|| {
            claims
                .get("client_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "unknown".to_string());
    let nested = groups_claim
        .split('.')
        .try_fold(claims, |value, key| value.get(key));
    let groups = words(nested);
    let mut scopes = BTreeSet::new();
    for key in ["scope", "scp"] {
        scopes.extend(words(claims.get(key)));
    }
    Identity {
        subject,
        scopes,
        kind: IdentityKind::Jwt,
        sub,
        groups,
    }
}

/// The words of a claim: a space-separated string, or the strings of a list (other values
/// skipped); nothing for anything else.
fn words(claim: Option<&Value>) -> BTreeSet<String> {
    match claim {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => BTreeSet::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn scopes(i: &Identity) -> Vec<&str> {
        i.scopes.iter().map(String::as_str).collect()
    }

    #[test]
    fn claims_give_subject_and_scopes() {
        let i = jwt_identity(
            &json!({"sub": "user-1", "scope": " skills:read  skills:run "}),
            "groups",
        );
        assert_eq!(i.subject, "user-1");
        assert_eq!(scopes(&i), ["skills:read", "skills:run"]);
        assert_eq!(i.kind, IdentityKind::Jwt);
        // `scp` as a list (non-strings skipped) or a string; both claims are read.
        let i = jwt_identity(
            &json!({"client_id": "app", "scp": ["a", 3, "b"], "scope": "c"}),
            "groups",
        );
        assert_eq!(i.subject, "app");
        assert_eq!(scopes(&i), ["a", "b", "c"]);
        let i = jwt_identity(&json!({"sub": 42, "scp": "x"}), "groups");
        assert_eq!(i.subject, "unknown");
        assert_eq!(scopes(&i), ["x"]);
        let i = jwt_identity(&json!({"sub": "s", "scope": 5}), "groups");
        assert!(i.scopes.is_empty());
    }

    #[test]
    fn groups_come_from_the_configured_claim_nested_or_not() {
        let claims = json!({
            "sub": "alice",
            "groups": ["finance", 7, "ops"],
            "realm_access": {"roles": "hr  audit"},
            "team": {"name": 3},
        });
        let groups = |claim: &str| -> Vec<String> {
            jwt_identity(&claims, claim).groups.into_iter().collect()
        };
        assert_eq!(groups("groups"), ["finance", "ops"]);
        assert_eq!(groups("realm_access.roles"), ["audit", "hr"]);
        // Missing, or not a list or string: no groups.
        assert!(groups("realm_access.missing").is_empty());
        assert!(groups("team.name").is_empty());
        assert!(groups("team").is_empty());
        let i = jwt_identity(&claims, "groups");
        assert_eq!(i.sub.as_deref(), Some("alice"));
        // No `sub`: no subject for rules, `client_id` in logs.
        let i = jwt_identity(&json!({"client_id": "app"}), "groups");
        assert_eq!((i.sub, i.subject.as_str()), (None, "app"));
    }

    #[test]
    fn the_header_is_read_without_checking() {
        use base64::Engine as _;
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let token = format!("{}.{}.sig", b64(r#"{"alg":"ES256","kid":"k1"}"#), b64("{}"));
        let header = jwt_header(&token).unwrap();
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["kid"], "k1");
        // Padding is tolerated; anything else that is not base64url JSON is not a header.
        let padded = format!("{}==.e30.sig", b64(r#"{"alg":"none"}"#));
        assert_eq!(jwt_header(&padded).unwrap()["alg"], "none");
        assert!(jwt_header("not base64!.x.y").is_none());
        assert!(jwt_header(&format!("{}.x.y", b64("not json"))).is_none());
    }

    #[test]
    fn resource_urls_insert_the_well_known_path() {
        let (resource, metadata, paths) =
            resource_urls(" https://skills.example.com/mcp/ ").unwrap();
        assert_eq!(resource, "https://skills.example.com/mcp/");
        assert_eq!(
            metadata,
            "https://skills.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            paths,
            [METADATA_PATH, "/.well-known/oauth-protected-resource/mcp"]
        );
        let (_, metadata, paths) = resource_urls("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            metadata,
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
        assert_eq!(paths, [METADATA_PATH]);
        for bad in [
            "",
            "skills.example.com/mcp",
            "ftp://skills.example.com/mcp",
            "https://skills.example.com/mcp?x=1",
            "https://skills.example.com/mcp#top",
        ] {
            let err = resource_urls(bad).unwrap_err().to_string();
            assert!(err.contains("auth.resource_url"), "{bad}: {err}");
        }
    }
}
