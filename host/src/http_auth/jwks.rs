//! The issuers' signing keys (a JWKS file or URL): loaded at start-up, cached, refreshed in the
//! background when old and at once (rate-limited) when a token names an unknown key.

use std::{
    path::PathBuf,
    sync::{
        Arc, RwLock,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context as _, Result, bail};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use super::LogSink;

/// Largest JWKS document read (bytes).
const MAX_JWKS_BYTES: u64 = 1 << 20;

/// Where the keys come from.
pub(super) enum JwksSource {
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

/// One usable key: its id, the one algorithm it verifies, the key.
pub(super) struct Key {
    pub(super) kid: Option<String>,
    pub(super) alg: Algorithm,
    pub(super) key: DecodingKey,
}

#[derive(Default)]
pub(super) struct KeySet {
    pub(super) keys: Vec<Key>,
    /// When the keys were (last) loaded.
    loaded: Option<Instant>,
}

/// Fetches are serialised by this lock; requests whose key is known never wait for it.
#[derive(Default)]
struct FetchState {
    last_attempt: Option<Instant>,
    last_failed: bool,
}

/// The cached key set and how it is refreshed.
pub(super) struct Jwks {
    source: Arc<JwksSource>,
    keys: Arc<RwLock<Arc<KeySet>>>,
    fetch: tokio::sync::Mutex<FetchState>,
    background: Arc<AtomicBool>,
    last_background: std::sync::Mutex<Option<Instant>>,
    max_age: Duration,
    min_interval: Duration,
    timeout: Duration,
}

pub(super) enum RefreshError {
    /// A fetch happened less than `min_interval` ago.
    RateLimited,
    /// The source could not be read or parsed (logged).
    Failed,
}

impl Jwks {
    pub(super) fn new(
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

    pub(super) fn current(&self) -> Arc<KeySet> {
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
    pub(super) fn load_at_start(&self, log: &LogSink) -> Result<()> {
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
    pub(super) async fn refresh_for_unknown_kid(
        &self,
        log: &LogSink,
    ) -> Result<Arc<KeySet>, RefreshError> {
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
    pub(super) fn refresh_in_background_if_stale(&self, log: &LogSink) {
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

/// Read and parse the key set (a failure counts in `skills_mcp_jwks_fetch_failures_total`).
/// Keys that cannot verify JWTs here (symmetric `oct` keys, encryption keys, unknown types or
/// curves) are skipped with a log line.
fn load_keys(source: &JwksSource, timeout: Duration, log: &LogSink) -> Result<KeySet> {
    let loaded = read_keys(source, timeout, log);
    if loaded.is_err() {
        crate::telemetry::metrics().jwks_failures.inc();
    }
    loaded
}

fn read_keys(source: &JwksSource, timeout: Duration, log: &LogSink) -> Result<KeySet> {
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;

    /// The P-256 public key of RFC 7517, appendix A.1.
    fn ec_key() -> Value {
        json!({
            "kty": "EC", "crv": "P-256", "use": "sig", "kid": "1",
            "x": "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4",
            "y": "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM",
        })
    }

    fn with(mut key: Value, field: &str, value: Value) -> Value {
        key[field] = value;
        key
    }

    #[test]
    fn usable_keys_are_kept_with_their_one_algorithm() {
        let key = parse_key(&ec_key()).unwrap();
        assert_eq!(key.kid.as_deref(), Some("1"));
        assert_eq!(key.alg, Algorithm::ES256);
        let key = parse_key(&with(ec_key(), "alg", json!("ES256"))).unwrap();
        assert_eq!(key.alg, Algorithm::ES256);
    }

    #[test]
    fn keys_that_cannot_verify_here_are_refused_with_a_reason() {
        for (raw, why) in [
            (with(ec_key(), "use", json!("enc")), "not a signing key"),
            (
                json!({"kty": "oct", "k": "c2VjcmV0", "kid": "h"}),
                "a symmetric (`oct`) key",
            ),
            // An RSA algorithm named on an EC key (algorithm confusion).
            (
                with(ec_key(), "alg", json!("RS256")),
                "its `alg` does not fit its key type",
            ),
            (
                with(ec_key(), "alg", json!("HS256")),
                "its `alg` is not a public-key signature algorithm",
            ),
            (json!({"kty": "nope"}), "not a JWK this server reads"),
        ] {
            let err = parse_key(&raw).err().expect(why);
            assert!(err.starts_with(why), "{err:?} does not start with {why:?}");
        }
    }

    #[test]
    fn a_key_set_keeps_what_it_can_and_logs_the_rest() {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = lines.clone();
        let log: LogSink = Arc::new(move |l: &str| sink.lock().unwrap().push(l.into()));
        let text = json!({"keys": [ec_key(), {"kty": "oct", "k": "c2VjcmV0"}]}).to_string();
        let set = parse_jwks(&text, &log).unwrap();
        assert_eq!(set.keys.len(), 1);
        assert!(set.loaded.is_some());
        let lines = lines.lock().unwrap();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("auth: JWKS key #1 skipped: a symmetric"),
            "{lines:?}"
        );
        drop(lines);
        let err = parse_jwks("{}", &log).err().unwrap().to_string();
        assert_eq!(err, "the JWKS has no `keys` list");
        let err = parse_jwks("nope", &log).err().unwrap().to_string();
        assert_eq!(err, "the JWKS is not JSON");
    }

    #[test]
    fn a_url_is_named_without_its_query() {
        let source = JwksSource::Url("https://a.example/jwks?secret=1#x".into());
        assert_eq!(source.display(), "https://a.example/jwks");
    }
}
