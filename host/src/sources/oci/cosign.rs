//! Key-based cosign verification, offline: the classic layout (`sha256-<hex>.sig` tag; layers
//! of type `application/vnd.dev.cosign.simplesigning.v1+json` whose bytes are the payload and
//! whose `dev.cosignproject.cosign/signature` annotation holds the base64 ECDSA P-256 (SHA-256)
//! signature over them). An artifact is accepted when one layer's signature verifies with the
//! operator's public key and its payload names the manifest digest being served. No keyless
//! machinery (Fulcio, Rekor, TUF) is involved: `ring` checks the signature.

use std::path::Path;

use anyhow::{Context as _, Result, anyhow, bail};
use base64::Engine as _;
use serde_json::Value;

use super::reference::Reference;
use super::registry::{MAX_SMALL_BLOB_BYTES, Registry};

/// The payload's media type.
pub const SIMPLESIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation holding the signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";

/// The DER prefix of an ECDSA P-256 SubjectPublicKeyInfo (id-ecPublicKey, prime256v1, a
/// 66-byte bit string), before the 65-byte uncompressed point.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// An ECDSA P-256 public key, as `openssl pkey -pubout` (or `cosign generate-key-pair`) writes
/// it: PEM `PUBLIC KEY`, an X.509 SubjectPublicKeyInfo.
#[derive(Debug, Clone)]
pub struct PublicKey {
    point: Vec<u8>,
}

impl PublicKey {
    /// Reads the PEM file at `path`.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the public key {}", path.display()))?;
        Self::from_pem(&text).with_context(|| format!("the public key {}", path.display()))
    }

    pub fn from_pem(text: &str) -> Result<Self> {
        let der = pem_block(text, "PUBLIC KEY")?;
        match der.strip_prefix(&P256_SPKI_PREFIX[..]) {
            Some(point) if point.len() == 65 && point[0] == 4 => Ok(Self {
                point: point.to_vec(),
            }),
            _ => bail!("not an ECDSA P-256 public key (PEM `PUBLIC KEY`, SubjectPublicKeyInfo)"),
        }
    }

    /// Whether `signature` (ASN.1 DER) signs `message`.
    pub fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_ASN1,
            &self.point,
        )
        .verify(message, signature)
        .is_ok()
    }
}

/// The DER inside the first PEM block labelled `label`.
pub fn pem_block(text: &str, label: &str) -> Result<Vec<u8>> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = text
        .find(&begin)
        .ok_or_else(|| anyhow!("no `{begin}` block"))?
        + begin.len();
    let stop = text[start..]
        .find(&end)
        .ok_or_else(|| anyhow!("no `{end}` line"))?;
    let body: String = text[start..start + stop]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|e| anyhow!("the {label} block is not base64: {e}"))
}

/// The signature tag of `digest`: `sha256-<hex>.sig`.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replace(':', "-"))
}

/// Checks that `digest` (the manifest or index served for `reference`) carries a valid cosign
/// signature by `key`; the error says why not (unsigned, signed by another key, tampered).
pub fn verify(
    registry: &Registry,
    reference: &Reference,
    digest: &str,
    key: &PublicKey,
) -> Result<()> {
    let tag = signature_tag(digest);
    let Some((bytes, _)) = registry.manifest_if_any(&tag)? else {
        bail!("unsigned: no cosign signature (the tag {tag} does not exist)");
    };
    let manifest: Value =
        serde_json::from_slice(&bytes).context("the signature manifest is not JSON")?;
    let layers = manifest
        .get("layers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut reasons: Vec<String> = Vec::new();
    for layer in layers
        .iter()
        .filter(|l| l.get("mediaType").and_then(Value::as_str) == Some(SIMPLESIGNING))
    {
        let Some(signature) = layer
            .get("annotations")
            .and_then(|a| a.get(SIGNATURE_ANNOTATION))
            .and_then(Value::as_str)
        else {
            reasons.push("a signature layer without a signature".into());
            continue;
        };
        let Ok(signature) = base64::engine::general_purpose::STANDARD.decode(signature.trim())
        else {
            reasons.push("a signature that is not base64".into());
            continue;
        };
        let Some(payload_digest) = layer.get("digest").and_then(Value::as_str) else {
            reasons.push("a signature layer without a digest".into());
            continue;
        };
        let size = layer.get("size").and_then(Value::as_u64);
        let payload = registry.blob(payload_digest, size, MAX_SMALL_BLOB_BYTES)?;
        if !key.verifies(&payload, &signature) {
            reasons.push("a signature by another key (or over other bytes)".into());
            continue;
        }
        let payload: Value = serde_json::from_slice(&payload)
            .map_err(|_| anyhow!("a signed payload that is not JSON"))?;
        let critical = payload.get("critical");
        let signed = critical
            .and_then(|c| c.get("image"))
            .and_then(|i| i.get("docker-manifest-digest"))
            .and_then(Value::as_str);
        if signed != Some(digest) {
            reasons.push(format!(
                "a valid signature of another manifest ({})",
                signed.unwrap_or("none named")
            ));
            continue;
        }
        let kind = critical.and_then(|c| c.get("type")).and_then(Value::as_str);
        if kind != Some("cosign container image signature") {
            reasons.push(format!("a signed payload of type {kind:?}"));
            continue;
        }
        let identity = critical
            .and_then(|c| c.get("identity"))
            .and_then(|i| i.get("docker-reference"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        tracing::debug!(
            "oci: {reference}: signature verified (signed for {})",
            crate::logsafe::Escaped(identity)
        );
        return Ok(());
    }
    if reasons.is_empty() {
        bail!("unsigned: the signature image {tag} holds no cosign signature");
    }
    bail!("no valid signature by the key: {}", reasons.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_p256_public_key_is_read_and_checks_signatures() {
        use ring::signature::KeyPair as _;
        let rng = ring::rand::SystemRandom::new();
        let alg = &ring::signature::ECDSA_P256_SHA256_ASN1_SIGNING;
        let pkcs8 = ring::signature::EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        let pair = ring::signature::EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap();
        let mut der = P256_SPKI_PREFIX.to_vec();
        der.extend_from_slice(pair.public_key().as_ref());
        let pem = format!(
            "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(&der)
        );
        let key = PublicKey::from_pem(&pem).unwrap();
        let sig = pair.sign(&rng, b"payload").unwrap();
        assert!(key.verifies(b"payload", sig.as_ref()));
        assert!(!key.verifies(b"payloaD", sig.as_ref()));
        assert!(
            PublicKey::from_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----")
                .is_err()
        );
        assert_eq!(
            signature_tag(&format!("sha256:{}", "ab".repeat(32))),
            format!("sha256-{}.sig", "ab".repeat(32))
        );
    }
}
