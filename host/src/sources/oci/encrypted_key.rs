//! cosign's encrypted private keys: PEM `ENCRYPTED SIGSTORE PRIVATE KEY` (or the older
//! `ENCRYPTED COSIGN PRIVATE KEY`), as `cosign generate-key-pair` writes them. The block's body
//! is the JSON of go-securesystemslib's `encrypted` package:
//!
//! ```json
//! {"kdf": {"name": "scrypt", "params": {"N": 65536, "r": 8, "p": 1}, "salt": "<base64>"},
//!  "cipher": {"name": "nacl/secretbox", "nonce": "<base64, 24 bytes>"},
//!  "ciphertext": "<base64: 16-byte Poly1305 tag, then the encrypted PKCS#8 DER>"}
//! ```
//!
//! The box key is scrypt(passphrase, salt, N, r, p) (32 bytes); the box is NaCl's `secretbox`
//! (XSalsa20 + Poly1305): the first 32 bytes of the XSalsa20 keystream are the one-time
//! Poly1305 key, the tag covers the encrypted bytes and is checked, in constant time, before
//! anything is decrypted. The passphrase is the operator's (`COSIGN_PASSWORD`, as cosign reads
//! it), never a file's content. scrypt's cost is bounded, so a hostile key file cannot make
//! the host spend minutes or gigabytes on it.

use anyhow::{Result, anyhow, bail};
use base64::Engine as _;
use salsa20::cipher::{KeyIvInit as _, StreamCipher as _};
use serde::Deserialize;
use subtle::ConstantTimeEq as _;

/// The PEM labels of an encrypted key, current first.
pub const LABELS: [&str; 2] = [
    "ENCRYPTED SIGSTORE PRIVATE KEY",
    "ENCRYPTED COSIGN PRIVATE KEY",
];

/// The variable holding the passphrase, as cosign names it.
pub const PASSWORD_VARIABLE: &str = "COSIGN_PASSWORD";

/// The largest scrypt `N` accepted (cosign writes 2^15, 2^16 or 2^17).
pub const MAX_LOG_N: u8 = 20;
/// The most memory scrypt may use (128 · r · N bytes; cosign's strongest setting needs 128 MiB).
const MAX_MEMORY: u64 = 256 << 20;
/// The most work scrypt may do (N · r · p block mixes; cosign's strongest setting does 2^20).
const MAX_WORK: u64 = 1 << 22;

#[derive(Deserialize)]
struct Sealed {
    kdf: Kdf,
    cipher: Cipher,
    ciphertext: String,
}

#[derive(Deserialize)]
struct Kdf {
    name: String,
    params: KdfParams,
    salt: String,
}

#[derive(Deserialize)]
struct KdfParams {
    #[serde(rename = "N")]
    n: u64,
    r: u32,
    p: u32,
}

#[derive(Deserialize)]
struct Cipher {
    name: String,
    nonce: String,
}

/// Whether `text` holds an encrypted key block: its label, if so.
pub fn label_in(text: &str) -> Option<&'static str> {
    LABELS
        .into_iter()
        .find(|label| text.contains(&format!("-----BEGIN {label}-----")))
}

/// The plaintext (cosign's PKCS#8 DER) of the encrypted key `body` (the PEM block's bytes: the
/// JSON above), opened with `passphrase`.
pub fn decrypt(body: &[u8], passphrase: &[u8]) -> Result<Vec<u8>> {
    let sealed: Sealed = serde_json::from_slice(body)
        .map_err(|e| anyhow!("not cosign's encrypted key format ({e})"))?;
    if sealed.kdf.name != "scrypt" {
        bail!(
            "the key derivation {:?} is not supported (only scrypt)",
            sealed.kdf.name
        );
    }
    if sealed.cipher.name != "nacl/secretbox" {
        bail!(
            "the cipher {:?} is not supported (only nacl/secretbox)",
            sealed.cipher.name
        );
    }
    let b64 = |field: &str, value: &str| {
        base64::engine::general_purpose::STANDARD
            .decode(value)
            .map_err(|e| anyhow!("its {field} is not base64 ({e})"))
    };
    let salt = b64("salt", &sealed.kdf.salt)?;
    let nonce = b64("nonce", &sealed.cipher.nonce)?;
    let sealed_box = b64("ciphertext", &sealed.ciphertext)?;
    let nonce: [u8; 24] = nonce
        .try_into()
        .map_err(|n: Vec<u8>| anyhow!("its nonce is {} bytes, not 24", n.len()))?;
    let key = derive(passphrase, &salt, &sealed.kdf.params)?;
    open(&key, &nonce, &sealed_box)
}

/// scrypt(passphrase, salt, N, r, p) → 32 bytes, refusing a cost beyond the bounds.
fn derive(passphrase: &[u8], salt: &[u8], params: &KdfParams) -> Result<[u8; 32]> {
    let KdfParams { n, r, p } = *params;
    if n < 2 || !n.is_power_of_two() {
        bail!("its scrypt N = {n} is not a power of two of at least 2");
    }
    let log_n = n.trailing_zeros() as u8;
    let memory = 128 * u64::from(r) * n;
    let work = n * u64::from(r) * u64::from(p);
    if log_n > MAX_LOG_N || r == 0 || p == 0 || memory > MAX_MEMORY || work > MAX_WORK {
        bail!(
            "its scrypt cost (N = {n}, r = {r}, p = {p}) is beyond what is accepted (N at most 2^{MAX_LOG_N}, 128·r·N at most {} MiB, N·r·p at most 2^22)",
            MAX_MEMORY >> 20
        );
    }
    let params = scrypt::Params::new(log_n, r, p)
        .map_err(|e| anyhow!("its scrypt parameters are invalid ({e})"))?;
    let mut key = [0u8; 32];
    scrypt::scrypt(passphrase, salt, &params, &mut key)
        .map_err(|e| anyhow!("scrypt failed ({e})"))?;
    Ok(key)
}

/// NaCl `crypto_secretbox_open`: `sealed` is the 16-byte Poly1305 tag, then the ciphertext.
/// The tag is checked first; a mismatch (a wrong passphrase, or altered bytes) decrypts nothing.
fn open(key: &[u8; 32], nonce: &[u8; 24], sealed: &[u8]) -> Result<Vec<u8>> {
    if sealed.len() < 16 {
        bail!("its ciphertext is shorter than a tag");
    }
    let (tag, ciphertext) = sealed.split_at(16);
    let mut cipher = salsa20::XSalsa20::new(key.into(), nonce.into());
    let mut one_time_key = [0u8; 32];
    cipher.apply_keystream(&mut one_time_key);
    let expected =
        <poly1305::Poly1305 as poly1305::universal_hash::KeyInit>::new((&one_time_key).into())
            .compute_unpadded(ciphertext);
    if !bool::from(expected.as_slice().ct_eq(tag)) {
        bail!("the passphrase is wrong (or the key file was altered): its tag does not match");
    }
    // The keystream goes on where the one-time key ended: byte 32 of the first block.
    let mut plaintext = ciphertext.to_vec();
    cipher.apply_keystream(&mut plaintext);
    Ok(plaintext)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7914, section 12: scrypt("password", "NaCl", N = 1024, r = 8, p = 16), first 32
    /// bytes of the 64.
    #[test]
    fn scrypt_gives_the_rfc_7914_vector() {
        let key = derive(
            b"password",
            b"NaCl",
            &KdfParams {
                n: 1024,
                r: 8,
                p: 16,
            },
        )
        .unwrap();
        assert_eq!(
            hex(&key),
            "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
        );
    }

    /// NaCl's own secretbox test (tests/secretbox.c in NaCl; libsodium's secretbox vector):
    /// the first bytes of the 131-byte message and its tag.
    #[test]
    fn secretbox_opens_nacl_s_vector_and_refuses_a_changed_byte() {
        let key: [u8; 32] =
            unhex("1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389")
                .try_into()
                .unwrap();
        let nonce: [u8; 24] = unhex("69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37")
            .try_into()
            .unwrap();
        let sealed = unhex(concat!(
            "f3ffc7703f9400e52a7dfb4b3d3305d9",
            "8e993b9f48681273c29650ba32fc76ce48332ea7164d96a4476fb8c531a1186a",
            "c0dfc17c98dce87b4da7f011ec48c97271d2c20f9b928fe2270d6fb863d51738",
            "b48eeee314a7cc8ab932164548e526ae90224368517acfeabd6bb3732bc0e9da",
            "99832b61ca01b6de56244a9e88d5f9b37973f622a43d14a6599b1f654cb45a74",
            "e355a5"
        ));
        let plain = open(&key, &nonce, &sealed).unwrap();
        assert_eq!(
            hex(&plain[..32]),
            "be075fc53c81f2d5cf141316ebeb0c7b5228c52a4c62cbd44b66849b64244ffc"
        );
        let mut altered = sealed.clone();
        altered[40] ^= 1;
        assert!(
            open(&key, &nonce, &altered)
                .unwrap_err()
                .to_string()
                .contains("tag does not match")
        );
    }

    #[test]
    fn a_costly_or_odd_kdf_is_refused_before_any_work() {
        for (n, r, p) in [
            (1 << 21, 8, 1),
            (1 << 20, 8, 1),
            (1 << 16, 8, 64),
            (1000, 8, 1),
        ] {
            let e = derive(b"x", b"salt", &KdfParams { n, r, p }).unwrap_err();
            assert!(e.to_string().contains("scrypt"), "{e}");
        }
        let body = br#"{"kdf":{"name":"pbkdf2","params":{"N":2,"r":1,"p":1},"salt":""},"cipher":{"name":"nacl/secretbox","nonce":""},"ciphertext":""}"#;
        assert!(
            decrypt(body, b"")
                .unwrap_err()
                .to_string()
                .contains("pbkdf2")
        );
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}
