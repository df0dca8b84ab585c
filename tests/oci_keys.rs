//! Tests: cosign's encrypted private keys (`push --key` with `COSIGN_PASSWORD`), against real
//! cosign output (tests/fixtures/cosign, see its README), a key sealed independently by
//! libsodium (PyNaCl) with Python's scrypt, and a push to a real registry (Debian's
//! `docker-registry`) that another replica verifies with the fixture's public key.

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use skills_mcp::sources::oci::push::signing_key_with;
use skills_mcp::sources::oci::{OciSourceConfig, VerifyConfig};
use tempfile::TempDir;

use crate::common::{Registry, Service, key_pair, oci_replica, require_service, succeed};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/cosign")
        .join(name)
}

/// The 65-byte uncompressed point of a PEM `PUBLIC KEY` (P-256 SubjectPublicKeyInfo).
fn point_of(public_pem: &Path) -> Vec<u8> {
    let text = std::fs::read_to_string(public_pem).unwrap();
    let body: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap();
    assert_eq!(der.len(), 91, "{}", public_pem.display());
    der[26..].to_vec()
}

fn public_point(pair: &ring::signature::EcdsaKeyPair) -> Vec<u8> {
    ring::signature::KeyPair::public_key(pair).as_ref().to_vec()
}

#[test]
fn cosign_encrypted_keys_open_to_their_public_keys() {
    for (name, passphrase) in [
        ("sigstore-labelled", "hello"),
        ("cosign-labelled", "hello"),
        ("empty-passphrase", ""),
    ] {
        let key = fixture(&format!("{name}.key"));
        let pair = signing_key_with(&key, Some(passphrase.as_bytes()))
            .unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert_eq!(
            public_point(&pair),
            point_of(&fixture(&format!("{name}.pub"))),
            "{name}"
        );
    }
    // A wrong passphrase is refused, naming the file; so is a missing one, naming the variable.
    let key = fixture("sigstore-labelled.key");
    let e = format!("{:#}", signing_key_with(&key, Some(b"hullo")).unwrap_err());
    assert!(
        e.contains("sigstore-labelled.key") && e.contains("passphrase is wrong"),
        "{e}"
    );
    let e = format!("{:#}", signing_key_with(&key, None).unwrap_err());
    assert!(
        e.contains("sigstore-labelled.key") && e.contains("COSIGN_PASSWORD"),
        "{e}"
    );
}

#[test]
fn a_hostile_or_broken_encrypted_key_is_refused_quickly_and_named() {
    let tmp = TempDir::new().unwrap();
    let seal = |json: &str| {
        let body = base64::engine::general_purpose::STANDARD.encode(json);
        format!(
            "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n{body}\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n"
        )
    };
    let cases = [
        (
            "huge-n",
            seal(
                r#"{"kdf":{"name":"scrypt","params":{"N":1073741824,"r":8,"p":1},"salt":"AAAA"},"cipher":{"name":"nacl/secretbox","nonce":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},"ciphertext":"AAAAAAAAAAAAAAAAAAAAAA=="}"#,
            ),
            "scrypt cost",
        ),
        (
            "other-cipher",
            seal(
                r#"{"kdf":{"name":"scrypt","params":{"N":2,"r":1,"p":1},"salt":"AAAA"},"cipher":{"name":"aes-gcm","nonce":"AAAA"},"ciphertext":"AAAA"}"#,
            ),
            "aes-gcm",
        ),
        (
            "not-json",
            seal("{kdf"),
            "not cosign's encrypted key format",
        ),
    ];
    let started = std::time::Instant::now();
    for (name, text, reason) in cases {
        let path = tmp.path().join(format!("{name}.key"));
        std::fs::write(&path, text).unwrap();
        let e = format!("{:#}", signing_key_with(&path, Some(b"x")).unwrap_err());
        assert!(
            e.contains(&format!("{name}.key")) && e.contains(reason),
            "{name}: {e}"
        );
    }
    // Refused before any scrypt work: N = 2^30 would need 1 TiB and minutes.
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

/// A python3 that has PyNaCl (Debian's python3-nacl), if any.
fn python_with_nacl() -> Option<&'static str> {
    ["python3", "/usr/bin/python3"].into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import nacl.secret"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Seals `der` as cosign does, with Python's hashlib.scrypt and PyNaCl's SecretBox (libsodium):
/// an implementation independent of ours.
const SEAL_PY: &str = r#"
import base64, hashlib, json, os, sys
import nacl.secret
der = open(sys.argv[1], "rb").read()
salt, nonce = os.urandom(32), os.urandom(24)
key = hashlib.scrypt(sys.argv[2].encode(), salt=salt, n=65536, r=8, p=1, dklen=32, maxmem=1 << 28)
sealed = nacl.secret.SecretBox(key).encrypt(der, nonce).ciphertext
body = json.dumps({
    "kdf": {"name": "scrypt", "params": {"N": 65536, "r": 8, "p": 1},
            "salt": base64.b64encode(salt).decode()},
    "cipher": {"name": "nacl/secretbox", "nonce": base64.b64encode(nonce).decode()},
    "ciphertext": base64.b64encode(sealed).decode(),
}).encode()
b64 = base64.b64encode(body).decode()
lines = [b64[i:i + 64] for i in range(0, len(b64), 64)]
print("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----")
print("\n".join(lines))
print("-----END ENCRYPTED SIGSTORE PRIVATE KEY-----")
"#;

#[test]
fn a_key_sealed_by_libsodium_opens_to_openssl_s_public_key() {
    let Some(python) = python_with_nacl() else {
        let line = "SKIPPED oci_keys libsodium cross-check: no python3 with PyNaCl; install: apt-get install python3-nacl";
        if std::env::var_os("CI").is_some() {
            panic!("{line} (CI is set)");
        }
        eprintln!("{line}");
        return;
    };
    let tmp = TempDir::new().unwrap();
    let (plain, public) = key_pair(tmp.path(), "plain");
    let der = tmp.path().join("plain.der");
    succeed(
        Command::new("openssl")
            .args(["pkcs8", "-topk8", "-nocrypt", "-outform", "DER", "-in"])
            .arg(&plain)
            .arg("-out")
            .arg(&der),
    );
    let sealed = succeed(
        Command::new(python)
            .args(["-c", SEAL_PY])
            .arg(&der)
            .arg("correct horse"),
    );
    let key = tmp.path().join("sealed.key");
    std::fs::write(&key, sealed).unwrap();
    let pair = signing_key_with(&key, Some(b"correct horse")).unwrap();
    assert_eq!(public_point(&pair), point_of(&public));
    let e = format!(
        "{:#}",
        signing_key_with(&key, Some(b"battery")).unwrap_err()
    );
    assert!(e.contains("sealed.key") && e.contains("passphrase"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_pushed_with_cosign_s_encrypted_key_is_verified_by_a_replica() {
    let Some(bin) = require_service(Service::Registry, "oci_push_encrypted_key") else {
        return;
    };
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let reg = Registry::start(&bin, &work.join("registry"));
    let skill = work.join("src/notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: notes\ndescription: Take meeting notes.\n---\n# Notes\n",
    )
    .unwrap();
    let key = fixture("sigstore-labelled.key");
    let reference = format!("{}/skills/notes:1", reg.host());
    let push = |password: Option<&str>| {
        let mut cmd = crate::common::bin();
        cmd.arg("push")
            .arg(&skill)
            .arg(&reference)
            .arg("--key")
            .arg(&key)
            .env_remove("COSIGN_PASSWORD");
        if let Some(p) = password {
            cmd.env("COSIGN_PASSWORD", p);
        }
        cmd.output().unwrap()
    };
    // Without the passphrase, or with a wrong one: refused before anything is pushed.
    for password in [None, Some("wrong")] {
        let out = push(password);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("sigstore-labelled.key") && stderr.contains("passphrase"),
            "{stderr}"
        );
    }
    let out = push(Some("hello"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A replica verifying with the fixture's public key (derived by openssl) serves it.
    let mut config = OciSourceConfig::new(&reference);
    config.verify = Some(VerifyConfig {
        key: fixture("sigstore-labelled.pub"),
    });
    let sources = oci_replica(config, &work.join("replica"), |_| None);
    let problems = sources.initialize().await;
    assert!(problems.is_empty(), "{problems:?}");
    let served = std::fs::read_to_string(sources.roots()[0].path.join("notes/SKILL.md")).unwrap();
    assert!(served.contains("Take meeting notes."), "{served}");
    // The other fixture's public key does not verify it.
    let mut config = OciSourceConfig::new(&reference);
    config.verify = Some(VerifyConfig {
        key: fixture("cosign-labelled.pub"),
    });
    let sources = oci_replica(config, &work.join("other-key"), |_| None);
    let problems = sources.initialize().await;
    assert!(!problems.is_empty(), "accepted a signature by another key");
}
