//! `skills-mcp push PATH REF [--key FILE]`: publishes a skill folder as a ToolHive OCI artifact
//! (an image index of linux/amd64 and linux/arm64 manifests sharing one layer, an image config
//! labelled `dev.toolhive.skills.*`), reproducibly (the same folder gives the same digest;
//! `org.opencontainers.image.created` from `SOURCE_DATE_EPOCH`, default 0), and signs it in
//! cosign's classic layout with an ECDSA P-256 key. The skill is pushed as the Skills extension
//! serves it: its served `SKILL.md` and the files of its manifest, as the engine lists them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use base64::Engine as _;
use clap::Args;
use serde_json::{Value, json};

use super::cosign::{SIGNATURE_ANNOTATION, SIMPLESIGNING, pem_block, signature_tag};
use super::encrypted_key;
use super::reference::Reference;
use super::registry::{INDEX, MANIFEST, Registry, digest_of};
use super::{ARTIFACT_TYPE, NAME_LABEL};
use crate::catalog::{Catalog, RootSpec};

/// `skills-mcp push`.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// The skill folder (holding `SKILL.md`).
    pub path: PathBuf,
    /// Where to push: `host[:port]/repository:tag`.
    #[arg(value_name = "REF")]
    pub reference: String,
    /// Sign with this ECDSA P-256 private key (PEM, PKCS#8, as `openssl genpkey -algorithm EC
    /// -pkeyopt ec_paramgen_curve:P-256` writes it, or cosign's encrypted key, whose passphrase
    /// is read from COSIGN_PASSWORD).
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// The variable holding a registry token (`user:secret` or a bare token; default:
    /// anonymous).
    #[arg(long, value_name = "VAR")]
    pub token_env: Option<String>,
    /// A token realm on another origin than the registry's that may receive the token
    /// (e.g. https://auth.docker.io); by default only the registry's own origin does.
    #[arg(long, value_name = "URL", value_parser = token_realm_arg)]
    pub token_realm: Option<String>,
    /// Registries spoken to in plain HTTP besides loopback ones (host or host:port).
    #[arg(long = "insecure-registry", value_name = "HOST")]
    pub insecure_registries: Vec<String>,
}

fn token_realm_arg(value: &str) -> Result<String, String> {
    super::check_token_realm(value).map(|()| value.to_owned())
}

/// The artifact built from a skill: its blobs and manifests, and the index's bytes.
pub struct Artifact {
    pub name: String,
    pub config: Vec<u8>,
    pub layer: Vec<u8>,
    pub manifests: Vec<Vec<u8>>,
    pub index: Vec<u8>,
}

/// Runs `push` and prints `REF@digest`.
pub fn run(args: &PushArgs, catalog_options: crate::catalog::CatalogOptions) -> Result<ExitCode> {
    let reference = Reference::parse(&args.reference)?;
    let Some(tag) = reference.tag.clone().filter(|_| reference.digest.is_none()) else {
        bail!("push needs a tag: host/repository:tag");
    };
    let epoch = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse::<u64>()
            .map_err(|_| anyhow!("SOURCE_DATE_EPOCH {v:?} is not a whole number of seconds"))?,
        _ => 0,
    };
    let artifact = build(&args.path, epoch, catalog_options)?;
    let key = args.key.as_deref().map(signing_key).transpose()?;
    let token = args
        .token_env
        .as_deref()
        .and_then(|v| std::env::var(v).ok())
        .filter(|t| !t.trim().is_empty());
    let registry = Registry::new(
        &reference,
        &args.insecure_registries,
        token,
        Duration::from_secs(120),
    )
    .with_token_realm(args.token_realm.clone());
    registry.push_blob(&artifact.config)?;
    registry.push_blob(&artifact.layer)?;
    for m in &artifact.manifests {
        registry.push_manifest(&digest_of(m), m, MANIFEST)?;
    }
    let digest = registry.push_manifest(&tag, &artifact.index, INDEX)?;
    if let Some(key) = &key {
        sign(&registry, &reference, &digest, key)?;
    }
    println!(
        "{}/{}:{tag}@{digest}{}",
        reference.registry,
        reference.repository,
        if key.is_some() { " (signed)" } else { "" }
    );
    tracing::info!("push: {} ({}) as {}", artifact.name, digest, reference);
    Ok(ExitCode::SUCCESS)
}

/// The artifact of the skill folder `path`: the engine indexes its parent and lists the skill's
/// served `SKILL.md` and files; the same files give the same bytes.
pub fn build(path: &Path, epoch: u64, options: crate::catalog::CatalogOptions) -> Result<Artifact> {
    let path = std::path::absolute(path).with_context(|| format!("{}", path.display()))?;
    if !path.join("SKILL.md").is_file() {
        bail!("{} holds no SKILL.md", path.display());
    }
    let (Some(parent), Some(folder)) = (path.parent(), path.file_name()) else {
        bail!("{} is not a skill folder", path.display());
    };
    let folder = folder.to_string_lossy().into_owned();
    let catalog = Catalog::open(vec![RootSpec::new(parent.to_path_buf())], options)?;
    let skill = catalog
        .extension_skills()?
        .into_iter()
        .find(|s| s.skill_path == folder)
        .ok_or_else(|| {
            anyhow!(
                "{} is not a skill the Skills extension serves (run `skills-mcp validate {}`)",
                path.display(),
                parent.display()
            )
        })?;
    let served = catalog.extension_skill_md(&skill.skill_path)?;
    let mut files: Vec<(String, Vec<u8>)> = vec![("SKILL.md".into(), served.bytes.clone())];
    for file in catalog.manifest(&skill.skill_path)? {
        if file.relative == "SKILL.md" {
            continue;
        }
        let bytes = catalog.read_file(file.root, &file.path, super::unpack::MAX_BYTES)?;
        files.push((file.relative, bytes));
    }
    if files.len() > super::unpack::MAX_FILES {
        bail!(
            "the skill has {} files; at most {} are pushed",
            files.len(),
            super::unpack::MAX_FILES
        );
    }
    let total: usize = files.iter().map(|f| f.1.len()).sum();
    if total as u64 > super::unpack::MAX_BYTES {
        bail!(
            "the skill's files are {total} bytes; at most {} are pushed",
            super::unpack::MAX_BYTES
        );
    }
    let frontmatter: Value = serde_json::from_str(&served.frontmatter_json).unwrap_or(Value::Null);
    let text = |key: &str| {
        frontmatter
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let version = frontmatter
        .get("metadata")
        .and_then(|m| m.get("version"))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    let name = served.name.clone();
    let mut paths: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    paths.sort_unstable();
    let mut labels = serde_json::Map::new();
    labels.insert(NAME_LABEL.into(), json!(name));
    labels.insert(
        "dev.toolhive.skills.description".into(),
        json!(text("description")),
    );
    labels.insert("dev.toolhive.skills.version".into(), json!(version));
    labels.insert(
        "dev.toolhive.skills.files".into(),
        json!(serde_json::to_string(&paths)?),
    );
    if !text("license").is_empty() {
        labels.insert("dev.toolhive.skills.license".into(), json!(text("license")));
    }
    let created = crate::analytics::iso8601(std::time::UNIX_EPOCH + Duration::from_secs(epoch));
    let layer = super::archive::tar_gz(&files, epoch)?;
    let config = serde_json::to_vec(&json!({
        "architecture": "amd64",
        "os": "linux",
        "created": created,
        "config": {"Labels": labels},
        "rootfs": {"type": "layers", "diff_ids": [digest_of(&gunzip(&layer)?)]},
    }))?;
    let annotations = json!({
        "org.opencontainers.image.created": created,
        NAME_LABEL: name,
        "dev.toolhive.skills.description": text("description"),
        "dev.toolhive.skills.version": version,
    });
    let mut manifests = Vec::new();
    let mut descriptors = Vec::new();
    for arch in ["amd64", "arm64"] {
        let m = serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST,
            "artifactType": ARTIFACT_TYPE,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                       "digest": digest_of(&config), "size": config.len()},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                        "digest": digest_of(&layer), "size": layer.len(),
                        "annotations": {"org.opencontainers.image.title": "skill.tar.gz"}}],
            "annotations": annotations,
        }))?;
        descriptors.push(
            json!({"mediaType": MANIFEST, "digest": digest_of(&m), "size": m.len(),
                                "platform": {"os": "linux", "architecture": arch}}),
        );
        manifests.push(m);
    }
    let index = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": INDEX,
        "artifactType": ARTIFACT_TYPE,
        "manifests": descriptors,
        "annotations": annotations,
    }))?;
    Ok(Artifact {
        name,
        config,
        layer,
        manifests,
        index,
    })
}

fn gunzip(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes), &mut out)?;
    Ok(out)
}

/// The ECDSA P-256 private key in the PEM file `path`: PKCS#8 `PRIVATE KEY`, or cosign's
/// encrypted key (`ENCRYPTED SIGSTORE PRIVATE KEY`, `ENCRYPTED COSIGN PRIVATE KEY`), opened with
/// the passphrase in `COSIGN_PASSWORD` (the operator's environment, as cosign reads it).
pub fn signing_key(path: &Path) -> Result<ring::signature::EcdsaKeyPair> {
    let passphrase = std::env::var_os(encrypted_key::PASSWORD_VARIABLE);
    signing_key_with(path, passphrase.as_ref().map(|p| p.as_encoded_bytes()))
}

/// [`signing_key`] with the passphrase given (`None`: no passphrase was set).
pub fn signing_key_with(
    path: &Path,
    passphrase: Option<&[u8]>,
) -> Result<ring::signature::EcdsaKeyPair> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the key {}", path.display()))?;
    let der = if let Some(label) = encrypted_key::label_in(&text) {
        let Some(passphrase) = passphrase else {
            bail!(
                "the key {} is encrypted (cosign's format): set {} to its passphrase",
                path.display(),
                encrypted_key::PASSWORD_VARIABLE
            );
        };
        let body =
            pem_block(&text, label).with_context(|| format!("the key {}", path.display()))?;
        encrypted_key::decrypt(&body, passphrase)
            .with_context(|| format!("the encrypted key {}", path.display()))?
    } else if text.contains("ENCRYPTED") {
        bail!(
            "{}: this encrypted key format is not read; give cosign's encrypted key or an unencrypted PKCS#8 PEM key (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256)",
            path.display()
        );
    } else {
        pem_block(&text, "PRIVATE KEY").with_context(|| format!("the key {}", path.display()))?
    };
    ring::signature::EcdsaKeyPair::from_pkcs8(
        &ring::signature::ECDSA_P256_SHA256_ASN1_SIGNING,
        &der,
        &ring::rand::SystemRandom::new(),
    )
    .map_err(|e| anyhow!("{}: not an ECDSA P-256 PKCS#8 key ({e})", path.display()))
}

/// Pushes the cosign signature of `digest` to its `sha256-<hex>.sig` tag.
fn sign(
    registry: &Registry,
    reference: &Reference,
    digest: &str,
    key: &ring::signature::EcdsaKeyPair,
) -> Result<()> {
    let payload = serde_json::to_vec(&json!({
        "critical": {
            "identity": {"docker-reference": format!("{}/{}", reference.registry, reference.repository)},
            "image": {"docker-manifest-digest": digest},
            "type": "cosign container image signature",
        },
        "optional": null,
    }))?;
    let signature = key
        .sign(&ring::rand::SystemRandom::new(), &payload)
        .map_err(|_| anyhow!("signing failed"))?;
    let signature = base64::engine::general_purpose::STANDARD.encode(signature.as_ref());
    let config =
        br#"{"architecture":"","os":"","config":{},"rootfs":{"type":"layers","diff_ids":[]}}"#;
    registry.push_blob(config)?;
    registry.push_blob(&payload)?;
    let manifest = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": digest_of(config), "size": config.len()},
        "layers": [{"mediaType": SIMPLESIGNING, "digest": digest_of(&payload), "size": payload.len(),
                    "annotations": {SIGNATURE_ANNOTATION: signature}}],
    }))?;
    registry.push_manifest(&signature_tag(digest), &manifest, MANIFEST)?;
    Ok(())
}
