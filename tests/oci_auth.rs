//! Tests: a registry with token authentication (Debian's `docker-registry`, distribution 2.8,
//! `auth: token: {realm, service, issuer, rootcertbundle}`) and a token server this test runs
//! on 127.0.0.1, issuing ES256 JWTs whose `kid` is the libtrust key ID of the key in the
//! self-signed certificate the registry trusts (both made with the `openssl` CLI). Checked:
//! `push` and a source pull with the right credentials; a clear refusal naming the registry
//! without them or with wrong ones; and the credentials never sent to a token realm on another
//! origin (another port, another host name for the same address) unless the operator lists it.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::json;
use sha2::{Digest as _, Sha256};
use skills_mcp::sources::oci::OciSourceConfig;
use tempfile::TempDir;

use crate::common::{
    Registry, Service, key_pair, oci_replica, require_service, succeed, unique_suffix,
};

const SERVICE: &str = "skills-test-registry";
const ISSUER: &str = "skills-test-issuer";
const USER: &str = "alice";
const SECRET: &str = "s3cret";

/// The libtrust key ID distribution matches a JWT's `kid` against: the SHA-256 of the
/// public key's DER (SubjectPublicKeyInfo), its first 240 bits in base32, in groups of four
/// joined by `:`.
fn libtrust_key_id(spki_der: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let hash = Sha256::digest(spki_der);
    let mut bits = 0u64;
    let mut count = 0;
    let mut out = String::new();
    for &b in &hash[..30] {
        bits = (bits << 8) | u64::from(b);
        count += 8;
        while count >= 5 {
            count -= 5;
            out.push(ALPHABET[((bits >> count) & 31) as usize] as char);
        }
    }
    let groups: Vec<&str> = (0..out.len()).step_by(4).map(|i| &out[i..i + 4]).collect();
    groups.join(":")
}

/// One request the token server answered: whether it carried credentials, and the status.
#[derive(Debug, Clone)]
struct Seen {
    with_credentials: bool,
    status: u16,
}

/// A token server on 127.0.0.1 (GET /token?service=..&scope=..): the right `Basic`
/// credentials get a token granting the scope's actions, no credentials an anonymous token
/// granting nothing, wrong ones a 401.
struct TokenServer {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl TokenServer {
    fn start(key_pem: Vec<u8>, kid: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            let key = jsonwebtoken::EncodingKey::from_ec_pem(&key_pem).unwrap();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    continue;
                }
                let mut authorization = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':')
                        && name.eq_ignore_ascii_case("authorization")
                    {
                        authorization = Some(value.trim().to_owned());
                    }
                }
                let target = request_line.split(' ').nth(1).unwrap_or("").to_owned();
                let query = target.split_once('?').map(|(_, q)| q).unwrap_or("");
                let scope = url::form_urlencoded::parse(query.as_bytes())
                    .find(|(k, _)| k == "scope")
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
                let expected = format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{SECRET}"))
                );
                let (status, body) = match &authorization {
                    Some(a) if *a == expected => (200, token(&key, &kid, Some(USER), &scope)),
                    Some(_) => (401, r#"{"details":"wrong credentials"}"#.to_owned()),
                    None => (200, token(&key, &kid, None, &scope)),
                };
                log.lock().unwrap().push(Seen {
                    with_credentials: authorization.is_some(),
                    status,
                });
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        TokenServer { port, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// A JWT for `scope` (`repository:NAME:ACTIONS`): all its actions for `user`, none for an
/// anonymous caller.
fn token(key: &jsonwebtoken::EncodingKey, kid: &str, user: Option<&str>, scope: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let access: Vec<serde_json::Value> = scope
        .split(' ')
        .filter_map(|s| {
            let mut parts = s.splitn(3, ':');
            let (kind, name, actions) = (parts.next()?, parts.next()?, parts.next()?);
            let actions: Vec<&str> = if user.is_some() {
                actions.split(',').collect()
            } else {
                Vec::new()
            };
            Some(json!({"type": kind, "name": name, "actions": actions}))
        })
        .collect();
    let claims = json!({
        "iss": ISSUER, "sub": user.unwrap_or(""), "aud": SERVICE,
        "exp": now + 300, "nbf": now - 10, "iat": now - 10,
        "jti": format!("{now}-{}", access.len()), "access": access,
    });
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.kid = Some(kid.to_owned());
    let jwt = jsonwebtoken::encode(&header, &claims, key).unwrap();
    json!({"token": jwt, "access_token": jwt, "expires_in": 300}).to_string()
}

/// Pulls `reference` as a source, with the token `token` in `REG_TOKEN` (if any) and
/// `token_realm`: the problems reported, and the served SKILL.md if any.
async fn pull(
    work: &Path,
    reference: &str,
    token: Option<&str>,
    token_realm: Option<String>,
) -> (Vec<String>, Option<String>) {
    let mut config = OciSourceConfig::new(reference);
    config.name = Some("forms".into());
    if token.is_some() {
        config.token_env = Some("REG_TOKEN".into());
    }
    config.token_realm = token_realm;
    let content = work.join(format!("replica-{}", unique_suffix()));
    let token = token.map(str::to_owned);
    let sources = oci_replica(config, &content, move |var| {
        (var == "REG_TOKEN").then(|| token.clone()).flatten()
    });
    let problems = sources.initialize().await;
    let served = std::fs::read_to_string(sources.roots()[0].path.join("forms/SKILL.md")).ok();
    (problems, served)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_realm_gets_the_credentials_only_on_the_operator_s_terms() {
    let Some(bin) = require_service(Service::Registry, "oci_token_realm") else {
        return;
    };
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    // The token server's key and the self-signed certificate the registry trusts.
    let (key, _) = key_pair(work, "token");
    let certificate = work.join("token.crt");
    succeed(
        Command::new("openssl")
            .args(["req", "-x509", "-new", "-key"])
            .arg(&key)
            .args(["-subj", "/CN=skills-mcp test token issuer", "-days", "2"])
            .arg("-out")
            .arg(&certificate),
    );
    let spki = succeed(
        Command::new("openssl")
            .args(["pkey", "-pubout", "-outform", "DER", "-in"])
            .arg(&key),
    );
    let kid = libtrust_key_id(&spki);
    let tokens = TokenServer::start(std::fs::read(&key).unwrap(), kid);
    let realm = format!("http://127.0.0.1:{}/token", tokens.port);
    let reg = Registry::start_with(
        &bin,
        &work.join("registry"),
        &format!(
            "auth:\n  token:\n    realm: {realm}\n    service: {SERVICE}\n    issuer: {ISSUER}\n    rootcertbundle: {}\n",
            certificate.display()
        ),
    );
    let skill = work.join("src/forms");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: forms\ndescription: Fill in tax forms.\n---\n# Forms\n",
    )
    .unwrap();
    let reference = format!("{}/skills/forms:1", reg.host());
    let credentials = format!("{USER}:{SECRET}");

    // push: with the credentials and the realm listed, it is published.
    let push = |realm: Option<&str>| {
        let mut cmd = crate::common::bin();
        cmd.arg("push")
            .arg(&skill)
            .arg(&reference)
            .args(["--token-env", "REG_TOKEN"])
            .env("REG_TOKEN", &credentials);
        if let Some(r) = realm {
            cmd.args(["--token-realm", r]);
        }
        cmd.output().unwrap()
    };
    let before = tokens.seen().len();
    let out = push(None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&reg.host()) && stderr.contains("another origin"),
        "{stderr}"
    );
    assert!(
        tokens.seen()[before..].iter().all(|s| !s.with_credentials),
        "credentials reached an unlisted realm: {:?}",
        tokens.seen()
    );
    let listed = format!("http://127.0.0.1:{}", tokens.port);
    let out = push(Some(&listed));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        tokens
            .seen()
            .iter()
            .any(|s| s.with_credentials && s.status == 200)
    );

    // A pull with the right credentials and the realm listed is served.
    let (problems, served) = pull(work, &reference, Some(&credentials), Some(listed.clone())).await;
    assert!(problems.is_empty(), "{problems:?}");
    assert!(served.unwrap_or_default().contains("Fill in tax forms."));

    // The realm on another origin, not listed: refused, naming the registry; no credentials sent.
    // The same address under another host name is another origin too.
    for token_realm in [
        None,
        Some(format!("http://localhost:{}", tokens.port)),
        Some(format!(
            "http://127.0.0.1:{}",
            reg.host().rsplit(':').next().unwrap()
        )),
    ] {
        let before = tokens.seen().len();
        let (problems, served) =
            pull(work, &reference, Some(&credentials), token_realm.clone()).await;
        assert!(served.is_none(), "{token_realm:?}");
        let all = problems.join("\n");
        assert!(
            all.contains(&reg.host()) && all.contains("another origin"),
            "{token_realm:?}: {all}"
        );
        assert!(
            tokens.seen()[before..].iter().all(|s| !s.with_credentials),
            "{token_realm:?}: credentials sent to {realm}"
        );
    }

    // Wrong credentials, and none: refused, naming the registry.
    let (problems, served) =
        pull(work, &reference, Some("alice:wrong"), Some(listed.clone())).await;
    assert!(served.is_none());
    let all = problems.join("\n");
    assert!(all.contains(&reg.host()) && all.contains("401"), "{all}");
    let (problems, served) = pull(work, &reference, None, None).await;
    assert!(served.is_none());
    let all = problems.join("\n");
    assert!(all.contains(&reg.host()) && all.contains("401"), "{all}");
}
