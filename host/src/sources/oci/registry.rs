//! The registry HTTP API (OCI distribution spec, v2) as a source needs it: manifests by tag or
//! digest, blobs by digest (each checked against its digest), anonymous or with a token.
//!
//! Transport: HTTPS, except for a loopback registry or one the operator lists
//! (`sources.insecure_registries`), which is spoken to in plain HTTP. Credentials (a token from
//! the variable the source names) go only to the registry's own origin: as `Basic` when it asks
//! so, or to the token realm its `WWW-Authenticate: Bearer` challenge names when that realm is
//! on the registry's origin (scheme, host name and port), or on the one other origin the
//! operator lists for the source (`token_realm`, e.g. Docker Hub's `https://auth.docker.io`);
//! over HTTPS, or plain HTTP to a loopback or listed host. Never across a redirect to another
//! origin. Without credentials a token is asked for anonymously, wherever the realm is.

use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use super::reference::Reference;

/// Largest manifest (or image index) read.
pub const MAX_MANIFEST_BYTES: u64 = 4 << 20;
/// Largest config or signature payload read.
pub const MAX_SMALL_BLOB_BYTES: u64 = 1 << 20;

/// Media types.
pub const INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";

/// One repository of one registry.
pub struct Registry {
    base: String,
    /// `host[:port]` as the reference writes it, for messages.
    host: String,
    repository: String,
    agent: ureq::Agent,
    /// `user:secret` or a bare token, from the operator's variable.
    credentials: Option<String>,
    /// Whether credentials may travel in plain HTTP (a listed registry, loopback).
    plain_ok: bool,
    /// The registries spoken to in plain HTTP besides loopback ones.
    insecure: Vec<String>,
    /// A token realm on another origin the operator lets receive the credentials.
    token_realm: Option<String>,
    bearer: Mutex<Option<String>>,
}

/// Whether `host` is a loopback address or `localhost`.
pub fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether a server at `host` (`host_port`: with its port, as written) is spoken to in plain
/// HTTP: a loopback one, or one the operator lists (`sources.insecure_registries`: host or
/// host:port). Registries and index sources follow this one rule.
pub fn plain_http_allowed(host: &str, host_port: &str, listed: &[String]) -> bool {
    is_loopback(host) || listed.iter().any(|i| i == host_port || i == host)
}

/// [`plain_http_allowed`] for the server `url` names (its host without IPv6 brackets, its port
/// as written when not the scheme's default).
pub fn plain_http_allowed_url(url: &url::Url, listed: &[String]) -> bool {
    let host = url.host_str().unwrap_or_default();
    let host = host.trim_matches(['[', ']']);
    let host_port = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    plain_http_allowed(host, &host_port, listed)
}

/// The origin credentials are bound to (registries, their token realms, index sources: this
/// one rule): the scheme, the host as the URL parser normalises it (lower case, IDNA) and the
/// port, the scheme's default made explicit (`https://h` and `https://h:443` are one origin).
/// Userinfo, path and query do not count. `None` for anything but an http(s) URL with a host:
/// such a URL is on no origin, not even its own.
pub fn origin(url: &url::Url) -> Option<url::Origin> {
    (matches!(url.scheme(), "http" | "https") && url.host().is_some()).then(|| url.origin())
}

/// The [`origin`] of the URL written `url` (`None` when it is not a URL, or on no origin).
pub fn origin_of(url: &str) -> Option<url::Origin> {
    url::Url::parse(url).ok().as_ref().and_then(origin)
}

/// Whether the URLs `a` and `b` are on one [`origin`] (a string that is not a URL is on none).
pub fn same_origin(a: &str, b: &str) -> bool {
    matches!((origin_of(a), origin_of(b)), (Some(a), Some(b)) if a == b)
}

impl Registry {
    /// A client for `reference`'s repository: plain HTTP when its host is loopback or listed in
    /// `insecure` (host or host:port), HTTPS otherwise.
    pub fn new(
        reference: &Reference,
        insecure: &[String],
        credentials: Option<String>,
        timeout: Duration,
    ) -> Self {
        let plain = plain_http_allowed(reference.host(), &reference.registry, insecure);
        let scheme = if plain { "http" } else { "https" };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .https_only(!plain)
            .user_agent(concat!("skills-mcp/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Self {
            base: format!("{scheme}://{}", reference.registry),
            host: reference.registry.clone(),
            repository: reference.repository.clone(),
            agent,
            credentials,
            plain_ok: plain,
            insecure: insecure.to_vec(),
            token_realm: None,
            bearer: Mutex::new(None),
        }
    }

    /// Lets the credentials go to a token realm on `origin` (a URL; its scheme, host and port
    /// count) besides the registry's own origin.
    pub fn with_token_realm(mut self, origin: Option<String>) -> Self {
        self.token_realm = origin;
        self
    }

    /// Whether the credentials may be sent to the token realm `realm`: on the registry's own
    /// origin or the listed one, over HTTPS or plain HTTP to a loopback or listed host.
    fn credentials_may_go_to(&self, realm: &str) -> Result<()> {
        let url = url::Url::parse(realm)
            .map_err(|e| anyhow!("its token realm {realm:?} is not a URL ({e})"))?;
        let listed = self.token_realm.as_deref();
        if !same_origin(realm, &self.base) && !listed.is_some_and(|l| same_origin(realm, l)) {
            bail!(
                "its token realm {} is on another origin than the registry ({}); the credentials go only to the registry's own origin, or to the realm the operator lists (the source's `token_realm`, push --token-realm)",
                redact_url(realm),
                self.base
            );
        }
        let plain_ok = url.scheme() == "http" && plain_http_allowed_url(&url, &self.insecure);
        if url.scheme() != "https" && !plain_ok {
            bail!(
                "its token realm {} is not HTTPS; refusing to send the credentials",
                redact_url(realm)
            );
        }
        Ok(())
    }

    /// The manifest (or index) `target` (tag or digest): its bytes, media type and digest
    /// (computed from the bytes; when `target` is a digest, it must match).
    pub fn manifest(&self, target: &str) -> Result<(Vec<u8>, String, String)> {
        let url = format!("{}/v2/{}/manifests/{target}", self.base, self.repository);
        let accept = [INDEX, MANIFEST, DOCKER_MANIFEST, DOCKER_LIST].join(", ");
        let (bytes, media_type) = self.get(&url, &accept, MAX_MANIFEST_BYTES)?;
        let digest = digest_of(&bytes);
        if target.starts_with("sha256:") && digest != target {
            bail!("the manifest {target} has the digest {digest}: its bytes do not match");
        }
        let media_type = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| v.get("mediaType")?.as_str().map(str::to_owned))
            .or(media_type)
            .unwrap_or_default();
        Ok((bytes, media_type, digest))
    }

    /// Whether the manifest `target` exists (a 404 is `Ok(None)`): its bytes and digest.
    pub fn manifest_if_any(&self, target: &str) -> Result<Option<(Vec<u8>, String)>> {
        match self.manifest(target) {
            Ok((bytes, _, digest)) => Ok(Some((bytes, digest))),
            Err(e) if e.downcast_ref::<NotFound>().is_some() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The blob `digest`, at most `limit` bytes, checked against the digest (and `size`).
    pub fn blob(&self, digest: &str, size: Option<u64>, limit: u64) -> Result<Vec<u8>> {
        if let Some(size) = size
            && size > limit
        {
            bail!("the blob {digest} is {size} bytes; at most {limit} are accepted");
        }
        let url = format!("{}/v2/{}/blobs/{digest}", self.base, self.repository);
        let (bytes, _) = self.get(&url, "*/*", limit)?;
        if size.is_some_and(|s| s != bytes.len() as u64) {
            bail!(
                "the blob {digest} is {} bytes, not the {} its manifest says",
                bytes.len(),
                size.unwrap_or_default()
            );
        }
        let actual = digest_of(&bytes);
        if actual != digest {
            bail!("the blob {digest} has the digest {actual}: its bytes do not match");
        }
        Ok(bytes)
    }

    /// Whether the blob `digest` is in the repository already (HEAD).
    pub fn has_blob(&self, digest: &str) -> Result<bool> {
        let url = format!("{}/v2/{}/blobs/{digest}", self.base, self.repository);
        let status = self.send("HEAD", &url, None, "*/*")?.0;
        Ok(status == 200)
    }

    /// Uploads `bytes` as a blob (one monolithic upload: POST, then PUT with the digest),
    /// unless the repository has it already; returns its digest.
    pub fn push_blob(&self, bytes: &[u8]) -> Result<String> {
        let digest = digest_of(bytes);
        if self.has_blob(&digest)? {
            return Ok(digest);
        }
        let url = format!("{}/v2/{}/blobs/uploads/", self.base, self.repository);
        let (status, location, body) =
            self.send("POST", &url, Some((&[], "application/octet-stream")), "*/*")?;
        if status != 202 {
            bail!("starting an upload: HTTP {status}{}", registry_error(&body));
        }
        let Some(location) = location else {
            bail!("starting an upload: no location");
        };
        let mut put = resolve(&url, &location);
        put.push(if put.contains('?') { '&' } else { '?' });
        put.push_str("digest=");
        put.push_str(&percent(&digest));
        let (status, _, body) = self.send(
            "PUT",
            &put,
            Some((bytes, "application/octet-stream")),
            "*/*",
        )?;
        if status != 201 {
            bail!("uploading {digest}: HTTP {status}{}", registry_error(&body));
        }
        Ok(digest)
    }

    /// Puts `bytes` (of `media_type`) as the manifest `target` (a tag or its digest).
    pub fn push_manifest(&self, target: &str, bytes: &[u8], media_type: &str) -> Result<String> {
        let url = format!("{}/v2/{}/manifests/{target}", self.base, self.repository);
        let (status, _, body) = self.send("PUT", &url, Some((bytes, media_type)), "*/*")?;
        if status != 201 {
            bail!(
                "putting the manifest {target}: HTTP {status}{}",
                registry_error(&body)
            );
        }
        Ok(digest_of(bytes))
    }

    /// One request with a body or none, authenticated once on a 401: status, `Location`, and
    /// the start of the answer.
    fn send(
        &self,
        method: &str,
        url: &str,
        body: Option<(&[u8], &str)>,
        accept: &str,
    ) -> Result<(u16, Option<String>, String)> {
        let mut authenticated = false;
        loop {
            let auth = self
                .bearer
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            let result = match (method, body) {
                ("HEAD", _) => {
                    let mut r = self.agent.head(url).header("Accept", accept);
                    if let Some(a) = &auth {
                        r = r.header("Authorization", a);
                    }
                    r.call()
                }
                (_, Some((bytes, content_type))) => {
                    let mut r = if method == "POST" {
                        self.agent.post(url)
                    } else {
                        self.agent.put(url)
                    };
                    r = r
                        .header("Content-Type", content_type)
                        .header("Accept", accept);
                    if let Some(a) = &auth {
                        r = r.header("Authorization", a);
                    }
                    r.send(bytes)
                }
                _ => bail!("{method} without a body"),
            };
            let mut response = result.map_err(|e| anyhow!("{}: {e}", redact_url(url)))?;
            let status = response.status().as_u16();
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            if status == 401 && !authenticated {
                authenticated = true;
                let challenge = header("www-authenticate").unwrap_or_default();
                let auth = self
                    .authenticate(&challenge)
                    .with_context(|| format!("the registry {}", self.host))?;
                *self.bearer.lock().unwrap_or_else(|e| e.into_inner()) = Some(auth);
                continue;
            }
            let location = header("location");
            let text = if method == "HEAD" {
                String::new()
            } else {
                response
                    .body_mut()
                    .with_config()
                    .limit(4096)
                    .read_to_string()
                    .unwrap_or_default()
            };
            return Ok((status, location, text));
        }
    }

    /// GET `url`, authenticating once on a 401 and following up to 3 redirects (without
    /// credentials when they leave the registry's origin).
    fn get(&self, url: &str, accept: &str, limit: u64) -> Result<(Vec<u8>, Option<String>)> {
        let mut url = url.to_owned();
        let mut authenticated = false;
        for _ in 0..5 {
            let same_origin = same_origin(&url, &self.base);
            let mut request = self.agent.get(&url).header("Accept", accept);
            let bearer = self
                .bearer
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            if same_origin && let Some(auth) = &bearer {
                request = request.header("Authorization", auth);
            }
            let mut response = request
                .call()
                .map_err(|e| anyhow!("{}: {e}", redact_url(&url)))?;
            let status = response.status().as_u16();
            match status {
                200 => {
                    let media_type = response
                        .headers()
                        .get("content-type")
                        .and_then(|v| v.to_str().ok())
                        .map(|v| v.split(';').next().unwrap_or(v).trim().to_owned());
                    let bytes = response
                        .body_mut()
                        .with_config()
                        .limit(limit.saturating_add(1))
                        .read_to_vec()
                        .map_err(|e| anyhow!("reading {}: {e}", redact_url(&url)))?;
                    if bytes.len() as u64 > limit {
                        bail!("{} is over {limit} bytes", redact_url(&url));
                    }
                    return Ok((bytes, media_type));
                }
                301 | 302 | 303 | 307 | 308 => {
                    let Some(location) = response
                        .headers()
                        .get("location")
                        .and_then(|v| v.to_str().ok())
                    else {
                        bail!("{}: a redirect without a location", redact_url(&url));
                    };
                    url = resolve(&url, location);
                }
                401 if !authenticated && same_origin => {
                    authenticated = true;
                    let challenge = response
                        .headers()
                        .get("www-authenticate")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    let auth = self
                        .authenticate(&challenge)
                        .with_context(|| format!("the registry {}", self.host))?;
                    *self.bearer.lock().unwrap_or_else(|e| e.into_inner()) = Some(auth);
                }
                404 => {
                    return Err(anyhow!(NotFound(format!(
                        "{} was not found (HTTP 404)",
                        redact_url(&url)
                    ))));
                }
                _ => {
                    let body = response
                        .body_mut()
                        .with_config()
                        .limit(4096)
                        .read_to_string()
                        .unwrap_or_default();
                    bail!(
                        "{} answered HTTP {status}{}",
                        redact_url(&url),
                        registry_error(&body)
                    );
                }
            }
        }
        bail!(
            "{}: too many redirects or challenges",
            redact_url(url.as_str())
        )
    }

    /// The `Authorization` value answering `challenge` (`Bearer realm=...` or `Basic`).
    fn authenticate(&self, challenge: &str) -> Result<String> {
        let (scheme, params) = challenge.split_once(' ').unwrap_or((challenge, ""));
        let params = parse_params(params);
        if scheme.eq_ignore_ascii_case("basic") {
            let Some(creds) = &self.credentials else {
                bail!(
                    "it asks for credentials; name the variable holding a token in the source's `token_env`"
                );
            };
            if !(self.base.starts_with("https://") || self.plain_ok) {
                bail!("it asks for credentials over plain HTTP; refusing to send them");
            }
            return Ok(format!("Basic {}", basic(creds)));
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            bail!("it asks for an unknown authentication scheme {scheme:?}");
        }
        let Some(realm) = params.iter().find(|(k, _)| k == "realm").map(|(_, v)| v) else {
            bail!("its challenge names no token realm");
        };
        let mut url = realm.clone();
        let mut sep = if url.contains('?') { '&' } else { '?' };
        for key in ["service", "scope"] {
            if let Some((_, v)) = params.iter().find(|(k, _)| k == key) {
                url.push(sep);
                url.push_str(key);
                url.push('=');
                url.push_str(&percent(v));
                sep = '&';
            }
        }
        if !params.iter().any(|(k, _)| k == "scope") {
            url.push(sep);
            url.push_str(&format!(
                "scope=repository:{}:pull",
                percent(&self.repository)
            ));
        }
        let mut request = self.agent.get(&url);
        if let Some(creds) = &self.credentials {
            self.credentials_may_go_to(realm)?;
            request = request.header("Authorization", &format!("Basic {}", basic(creds)));
        }
        let mut response = request
            .call()
            .map_err(|e| anyhow!("getting a token from {}: {e}", redact_url(realm)))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(64 << 10)
            .read_to_string()
            .map_err(|e| anyhow!("reading the token: {e}"))?;
        if status != 200 {
            let how = if self.credentials.is_some() {
                "refused the credentials"
            } else {
                "refused an anonymous request (name the variable holding a token in the source's `token_env`)"
            };
            bail!(
                "its token realm {} {how} (HTTP {status})",
                redact_url(realm)
            );
        }
        let value: serde_json::Value =
            serde_json::from_str(&body).context("the token answer is not JSON")?;
        let token = value
            .get("token")
            .or_else(|| value.get("access_token"))
            .and_then(|t| t.as_str())
            .ok_or_else(|| anyhow!("the token answer has no token"))?;
        Ok(format!("Bearer {token}"))
    }
}

/// A 404 from the registry.
#[derive(Debug)]
pub struct NotFound(String);

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotFound {}

/// `sha256:<hex>` of `bytes`.
pub fn digest_of(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// `user:secret` as given, else `token:<the token>`, base64-encoded for `Basic`.
fn basic(creds: &str) -> String {
    let pair = if creds.contains(':') {
        creds.to_owned()
    } else {
        format!("token:{creds}")
    };
    base64::engine::general_purpose::STANDARD.encode(pair)
}

/// `key="value", key2="value2"` of a challenge.
fn parse_params(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            break;
        };
        let key = key
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let after = after.trim_start();
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            match quoted.find('"') {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => (quoted, ""),
            }
        } else {
            match after.find(',') {
                Some(end) => (&after[..end], &after[end..]),
                None => (after, ""),
            }
        };
        out.push((key, value.to_owned()));
        rest = next.trim_start().trim_start_matches(',').trim_start();
    }
    out
}

fn percent(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `location` resolved against `base` (absolute, or a path on the same origin).
fn resolve(base: &str, location: &str) -> String {
    if location.contains("://") {
        return location.to_owned();
    }
    let origin_end = base
        .find("://")
        .and_then(|i| base[i + 3..].find('/').map(|j| i + 3 + j))
        .unwrap_or(base.len());
    if location.starts_with('/') {
        format!("{}{location}", &base[..origin_end])
    } else {
        let dir_end = base.rfind('/').unwrap_or(base.len());
        format!("{}/{location}", &base[..dir_end])
    }
}

/// A URL without its query (signed storage URLs carry credentials there).
fn redact_url(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

/// `: CODE: message` of a registry's JSON error answer, if it is one.
fn registry_error(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            let e = v.get("errors")?.get(0)?;
            Some(format!(
                ": {} {}",
                e.get("code")?.as_str()?,
                e.get("message").and_then(|m| m.as_str()).unwrap_or("")
            ))
        })
        .map(|s| crate::logsafe::Escaped(s.trim_end()).to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_and_redirects_parse() {
        let p = parse_params(
            r#"realm="https://ghcr.io/token",service="ghcr.io",scope="repository:a/b:pull""#,
        );
        assert_eq!(
            p,
            [
                ("realm".to_string(), "https://ghcr.io/token".to_string()),
                ("service".into(), "ghcr.io".into()),
                ("scope".into(), "repository:a/b:pull".into())
            ]
        );
        assert_eq!(
            resolve("http://h:5/v2/a/blobs/x", "/store/1?sig=2"),
            "http://h:5/store/1?sig=2"
        );
        assert_eq!(redact_url("https://s3/x?X-Amz-Signature=1"), "https://s3/x");
        assert!(is_loopback("127.0.0.1") && is_loopback("::1") && !is_loopback("10.0.0.1"));
    }

    #[test]
    fn one_origin_rule() {
        let same = [
            // The scheme's default port, written or not.
            (
                "https://reg.example.com/v2/",
                "https://reg.example.com:443/token",
            ),
            ("http://reg.example.com/a", "http://reg.example.com:80/b"),
            // The host's case.
            ("https://REG.Example.COM/v2/", "https://reg.example.com"),
            // Userinfo does not count.
            (
                "https://user:secret@reg.example.com/x",
                "https://reg.example.com/y",
            ),
            (
                "http://[::1]:5000/v2/",
                "http://[0:0:0:0:0:0:0:1]:5000/auth",
            ),
        ];
        for (a, b) in same {
            assert!(same_origin(a, b) && same_origin(b, a), "{a} {b}");
        }
        let other = [
            // Prefix tricks: a longer host, a host in the userinfo, a host in the path.
            (
                "https://reg.example.com",
                "https://reg.example.com.evil/token",
            ),
            ("https://reg.example.com", "https://reg.example.com.evil"),
            (
                "https://reg.example.com",
                "https://reg.example.com@evil.example/token",
            ),
            (
                "https://reg.example.com",
                "https://evil.example/https://reg.example.com/",
            ),
            ("https://reg.example.com", "https://evil.reg.example.com/"),
            // Another port (also the other scheme's default), another scheme.
            ("https://reg.example.com", "https://reg.example.com:8443/"),
            ("https://reg.example.com", "https://reg.example.com:80/"),
            ("https://reg.example.com", "http://reg.example.com/"),
            // Another name for the same address.
            ("http://127.0.0.1:5000", "http://localhost:5000"),
            // Not an http(s) URL: on no origin, not even its own.
            ("file:///tmp/x", "file:///tmp/x"),
            ("data:text/plain,x", "data:text/plain,x"),
            ("not a url", "not a url"),
        ];
        for (a, b) in other {
            assert!(!same_origin(a, b) && !same_origin(b, a), "{a} {b}");
        }
    }

    #[test]
    fn credentials_go_only_to_the_registry_s_origin_or_the_listed_realm() {
        let client = |reference: &str, listed: Option<&str>| {
            Registry::new(
                &Reference::parse(reference).unwrap(),
                &["plain.example:5000".to_string()],
                Some("u:p".into()),
                Duration::from_secs(1),
            )
            .with_token_realm(listed.map(str::to_owned))
        };
        let ghcr = client("ghcr.io/org/skills/pdf:1", None);
        assert!(ghcr.credentials_may_go_to("https://ghcr.io/token").is_ok());
        assert!(
            ghcr.credentials_may_go_to("https://ghcr.io:443/token")
                .is_ok()
        );
        for other in [
            "https://auth.docker.io/token",
            "https://ghcr.io:8443/token",
            "http://ghcr.io/token",
            "https://evil.ghcr.io/token",
            "not a url",
        ] {
            assert!(ghcr.credentials_may_go_to(other).is_err(), "{other}");
        }
        let hub = client("docker.io/library/x:1", Some("https://auth.docker.io"));
        assert!(
            hub.credentials_may_go_to("https://auth.docker.io/token")
                .is_ok()
        );
        assert!(
            hub.credentials_may_go_to("http://auth.docker.io/token")
                .is_err()
        );
        // Loopback: another port or another name for the same address is another origin.
        let local = client("127.0.0.1:5000/a:1", None);
        assert!(
            local
                .credentials_may_go_to("http://127.0.0.1:5000/auth")
                .is_ok()
        );
        assert!(
            local
                .credentials_may_go_to("http://127.0.0.1:5001/auth")
                .is_err()
        );
        assert!(
            local
                .credentials_may_go_to("http://localhost:5000/auth")
                .is_err()
        );
        // A listed realm in plain HTTP only on a loopback or insecure-listed host.
        let listed = client("127.0.0.1:5000/a:1", Some("http://10.0.0.9:80"));
        assert!(
            listed
                .credentials_may_go_to("http://10.0.0.9/auth")
                .is_err()
        );
        // IPv6 loopback in plain HTTP.
        let v6 = client("[::1]:5000/a:1", None);
        assert!(v6.credentials_may_go_to("http://[::1]:5000/auth").is_ok());
        let listed = client("127.0.0.1:5000/a:1", Some("http://plain.example:5000"));
        assert!(
            listed
                .credentials_may_go_to("http://plain.example:5000/auth")
                .is_ok()
        );
    }
}
