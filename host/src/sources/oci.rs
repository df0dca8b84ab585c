//! OCI sources: a skill published as a ToolHive OCI artifact (`sources.oci: [{ref, name?,
//! verify?, token_env?, token_realm?}]`), pulled by tag or digest into the source's snapshot folder
//! ([`crate::sources::snapshots`]) and served under the source's name.
//!
//! A pull: the manifest (or image index) of the reference; when its digest is the snapshot
//! already on disk, nothing more is asked (one manifest request per refresh). Otherwise: with
//! `verify`, its cosign signature is checked first ([`cosign`]); then the platform manifest,
//! the image config (its `dev.toolhive.skills.name` label must be the source's name) and the
//! one layer, each checked against its digest, unpacked as untrusted content ([`unpack`]) into
//! `trees/<digest hex>/<name>/`. Any failure leaves the previous snapshot served.

pub mod archive;
pub mod cosign;
pub mod encrypted_key;
pub mod push;
pub mod reference;
pub mod registry;
pub mod unpack;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::snapshots::Snapshots;
use super::{BoxFuture, Fetched, Pinned, Source};
use reference::Reference;
use registry::{DOCKER_LIST, INDEX, Registry};

/// ToolHive's artifact type, and the label naming the skill.
pub const ARTIFACT_TYPE: &str = "dev.toolhive.skills.v1";
pub const NAME_LABEL: &str = "dev.toolhive.skills.name";
/// The layer's media types accepted.
const LAYER_TYPES: [&str; 2] = [
    "application/vnd.oci.image.layer.v1.tar+gzip",
    "application/vnd.docker.image.rootfs.diff.tar.gzip",
];

/// An entry of `sources.oci`.
///
/// ```yaml
/// sources:
///   oci:
///     - ref: ghcr.io/stacklok/dockyard/skills/pdf:1.0   # tag or @sha256:... digest
///       name: pdf                  # default: the repository's last segment; must equal the
///                                  # artifact's dev.toolhive.skills.name label
///       verify: {key: cosign.pub}  # accept only artifacts signed by this key (cosign)
///       token_env: REGISTRY_TOKEN  # variable holding a token (default: anonymous)
///       token_realm: https://auth.docker.io  # a token realm on another origin that may
///                                  # receive the token (default: the registry's origin only)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawOciSource")]
pub struct OciSourceConfig {
    /// `host[:port]/repository[:tag][@sha256:<hex>]`.
    #[serde(rename = "ref")]
    pub reference: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// The origin (`scheme://host[:port]`) of a token realm on another origin than the
    /// registry's that may receive the token (Docker Hub's is `https://auth.docker.io`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_realm: Option<String>,
}

/// `verify: {key: FILE}`: the PEM public key (ECDSA P-256) the artifact's cosign signature
/// must verify with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyConfig {
    pub key: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOciSource {
    #[serde(rename = "ref")]
    reference: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    verify: Option<VerifyConfig>,
    #[serde(default)]
    token_env: Option<String>,
    #[serde(default)]
    token_realm: Option<String>,
}

impl TryFrom<RawOciSource> for OciSourceConfig {
    type Error = String;

    fn try_from(raw: RawOciSource) -> Result<Self, String> {
        let source = OciSourceConfig {
            reference: raw.reference.trim().to_owned(),
            name: raw.name,
            verify: raw.verify,
            token_env: raw.token_env,
            token_realm: raw.token_realm.map(|r| r.trim().to_owned()),
        };
        source.validate()?;
        Ok(source)
    }
}

impl OciSourceConfig {
    /// A source for `reference`, unverified, anonymous.
    pub fn new(reference: impl Into<String>) -> Self {
        Self {
            reference: reference.into(),
            name: None,
            verify: None,
            token_env: None,
            token_realm: None,
        }
    }

    /// Checks the reference, the name and the token variable.
    pub fn validate(&self) -> Result<(), String> {
        Reference::parse(&self.reference).map_err(|e| format!("{e:#}"))?;
        if let Some(name) = &self.name {
            crate::config::check_root_name(name)?;
        }
        check_token_env(self.token_env.as_deref(), "a registry")?;
        if let Some(realm) = &self.token_realm {
            check_token_realm(realm)?;
        }
        Ok(())
    }

    /// The name access rules know the source by, and the skill's name: `name`, else the
    /// repository's last segment.
    pub fn root_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| {
            Reference::parse(&self.reference)
                .map(|r| r.last_segment().to_owned())
                .unwrap_or_else(|_| "oci".into())
        })
    }
}

/// A `token_realm` (a source's, `push --token-realm`): an http(s) URL; its origin counts.
pub fn check_token_realm(realm: &str) -> Result<(), String> {
    match registry::origin_of(realm) {
        Some(_) => Ok(()),
        None => Err(format!(
            "token_realm {realm:?} is not an http(s) URL such as https://auth.docker.io"
        )),
    }
}

/// A source's `token_env` (OCI, index): a variable name, and not the git sources' token.
pub(crate) fn check_token_env(token_env: Option<&str>, what: &str) -> Result<(), String> {
    if token_env == Some(crate::sources::DEFAULT_TOKEN_ENV) {
        return Err(format!(
            "token_env {:?} is the git sources' token; name another variable for {what}",
            crate::sources::DEFAULT_TOKEN_ENV
        ));
    }
    if let Some(var) = token_env
        && (var.is_empty() || var.contains(['=', '\0']))
    {
        return Err(format!(
            "token_env {var:?} is not an environment variable name"
        ));
    }
    Ok(())
}

/// The folder of an OCI source below the content folder: `oci-<name>-<8 hex of the reference>`.
pub fn checkout_dir(content_dir: &Path, config: &OciSourceConfig) -> PathBuf {
    super::snapshots::checkout_dir(
        content_dir,
        "oci",
        config.reference.as_str(),
        &config.root_name(),
    )
}

/// The root path an OCI source is served from, known before any I/O.
pub fn root_path(content_dir: &Path, config: &OciSourceConfig) -> PathBuf {
    checkout_dir(content_dir, config).join("current")
}

/// One OCI source.
#[derive(Debug)]
pub(crate) struct OciSource {
    inner: Arc<Inner>,
}

struct Inner {
    label: String,
    reference: Reference,
    name: String,
    key: Option<PathBuf>,
    registry: Registry,
    snapshots: Snapshots,
    timeout: Duration,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OciSource")
            .field("reference", &self.label)
            .finish_non_exhaustive()
    }
}

impl OciSource {
    /// The source of `config`, its token (if any) read by the caller from `token_env`;
    /// `insecure`: the registries spoken to in plain HTTP besides loopback.
    pub(crate) fn new(
        config: &OciSourceConfig,
        content_dir: &Path,
        insecure: &[String],
        token: Option<String>,
        timeout: Duration,
    ) -> Result<Self> {
        config.validate().map_err(|e| anyhow!(e))?;
        let reference = Reference::parse(&config.reference)?;
        let registry = Registry::new(&reference, insecure, token, timeout)
            .with_token_realm(config.token_realm.clone());
        Ok(Self {
            inner: Arc::new(Inner {
                label: reference.to_string(),
                name: config.root_name(),
                key: config.verify.as_ref().map(|v| v.key.clone()),
                registry,
                snapshots: Snapshots::new(checkout_dir(content_dir, config)),
                reference,
                timeout,
            }),
        })
    }
}

impl Source for OciSource {
    fn kind(&self) -> &'static str {
        "oci"
    }

    fn label(&self) -> &str {
        &self.inner.label
    }

    fn snapshots(&self) -> &Snapshots {
        &self.inner.snapshots
    }

    fn name(&self) -> &str {
        &self.inner.name
    }

    fn lock_reference(&self, revision: &str) -> super::LockReference {
        let r = &self.inner.reference;
        super::LockReference {
            digest: format!("sha256:{revision}"),
            resolved_reference: format!("{}/{}@sha256:{revision}", r.registry, r.repository),
        }
    }

    fn lock_wait(&self) -> Duration {
        self.inner.timeout * 2
    }

    fn resolve_root(&self, tree: &Path) -> Result<PathBuf> {
        skill_root(&self.inner.name, tree)
    }

    fn fetch<'a>(&'a self, served: Option<&'a str>) -> BoxFuture<'a, Result<Fetched>> {
        let inner = Arc::clone(&self.inner);
        let served = served.map(str::to_owned);
        super::blocking(move || inner.pull(served.as_deref()))
    }

    fn fetch_pinned<'a>(
        &'a self,
        served: Option<&'a str>,
        pin: &'a str,
    ) -> BoxFuture<'a, Result<Pinned>> {
        let inner = Arc::clone(&self.inner);
        let served = served.map(str::to_owned);
        let pin = pin.to_owned();
        super::blocking(move || inner.pull_pinned(served.as_deref(), &pin))
    }
}

impl Inner {
    /// See the module docs. Errors name the reference.
    fn pull(&self, served: Option<&str>) -> Result<Fetched> {
        self.pull_inner(self.reference.target(), served)
            .with_context(|| self.label.clone())
    }

    /// Pulls the manifest digest `pin` (hex), after asking where the reference points now (one
    /// manifest request, to report a moved tag; never followed).
    fn pull_pinned(&self, served: Option<&str>, pin: &str) -> Result<Pinned> {
        if !super::snapshots::is_revision(pin) || pin.len() != 64 {
            bail!("{}: {pin:?} is not a manifest digest", self.label);
        }
        let upstream = match self.registry.manifest(self.reference.target()) {
            Ok((_, _, digest)) => Some(digest.trim_start_matches("sha256:").to_owned()),
            Err(e) => {
                tracing::warn!(
                    "oci: {}: could not read where it points now ({}); pulling the pinned sha256:{}",
                    self.label,
                    crate::logsafe::Escaped(format!("{e:#}")),
                    super::snapshots::short(pin)
                );
                None
            }
        };
        let fetched = match self.cached(pin, served) {
            Some(cached) => cached?,
            None => self
                .pull_inner(&format!("sha256:{pin}"), served)
                .with_context(|| format!("{}@sha256:{pin}", self.label))?,
        };
        Ok(Pinned { fetched, upstream })
    }

    /// The snapshot of `hex` when it is on disk: a snapshot is only installed once checked (and
    /// verified), so the same digest is reused without asking the registry.
    fn cached(&self, hex: &str, served: Option<&str>) -> Option<Result<Fetched>> {
        let tree = self.snapshots.tree(hex);
        if !tree.is_dir() {
            return None;
        }
        Some(skill_root(&self.name, &tree).map(|root| Fetched {
            files_changed: if served == Some(hex) {
                0
            } else {
                count_files(&root)
            },
            revision: hex.to_owned(),
            root,
        }))
    }

    fn pull_inner(&self, target: &str, served: Option<&str>) -> Result<Fetched> {
        let (bytes, media_type, digest) = self.registry.manifest(target)?;
        let hex = digest.trim_start_matches("sha256:").to_owned();
        let tree = self.snapshots.tree(&hex);
        if let Some(cached) = self.cached(&hex, served) {
            return cached;
        }
        if let Some(key) = &self.key {
            let key = cosign::PublicKey::load(key)?;
            cosign::verify(&self.registry, &self.reference, &digest, &key).context("refused")?;
        }
        let manifest = self.platform_manifest(&bytes, &media_type)?;
        let config = descriptor(&manifest, "config")?;
        let config = self
            .registry
            .blob(&config.0, config.1, registry::MAX_SMALL_BLOB_BYTES)?;
        let config: Value =
            serde_json::from_slice(&config).context("the image config is not JSON")?;
        let label = config
            .get("config")
            .and_then(|c| c.get("Labels"))
            .and_then(|l| l.get(NAME_LABEL))
            .and_then(Value::as_str);
        match label {
            Some(label) if label == self.name => {}
            Some(label) => bail!(
                "the artifact is the skill {:?}, not {:?} (the source's name must agree with its {NAME_LABEL} label)",
                crate::logsafe::Escaped(label).to_string(),
                self.name
            ),
            None => bail!("not a skill artifact: its image config has no {NAME_LABEL} label"),
        }
        let layers: Vec<&Value> = manifest
            .get("layers")
            .and_then(Value::as_array)
            .map(|l| l.iter().collect())
            .unwrap_or_default();
        let [layer] = layers[..] else {
            bail!(
                "a skill artifact has exactly one layer; this one has {}",
                layers.len()
            );
        };
        let layer_type = layer.get("mediaType").and_then(Value::as_str).unwrap_or("");
        if !LAYER_TYPES.contains(&layer_type) {
            bail!("the layer's media type {layer_type:?} is not a gzip-compressed tar");
        }
        let (layer_digest, layer_size) = descriptor_of(layer)?;
        let layer = self
            .registry
            .blob(&layer_digest, layer_size, unpack::MAX_BYTES)?;
        let staging = self.snapshots.staging(&hex)?;
        let result = (|| {
            let skill = staging.join(&self.name);
            std::fs::create_dir(&skill).with_context(|| format!("creating {}", skill.display()))?;
            let files = unpack::unpack(&layer, &skill)?;
            if !files.iter().any(|f| f == "SKILL.md") {
                bail!("the layer holds no SKILL.md at its root");
            }
            Ok(files.len() as u64)
        })();
        let files = match result {
            Ok(n) => n,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        self.snapshots.install(&staging, &hex)?;
        Ok(Fetched {
            revision: hex,
            root: tree,
            files_changed: files,
        })
    }

    /// The image manifest: `bytes` itself, or for an image index its linux/amd64 manifest (else
    /// the first; ToolHive's platforms share one layer), fetched by digest.
    fn platform_manifest(&self, bytes: &[u8], media_type: &str) -> Result<Value> {
        let value: Value = serde_json::from_slice(bytes).context("the manifest is not JSON")?;
        if media_type != INDEX && media_type != DOCKER_LIST {
            return Ok(value);
        }
        let manifests = value
            .get("manifests")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let pick = manifests
            .iter()
            .find(|m| {
                m.get("platform").is_some_and(|p| {
                    p.get("os").and_then(Value::as_str) == Some("linux")
                        && p.get("architecture").and_then(Value::as_str) == Some("amd64")
                })
            })
            .or_else(|| manifests.first())
            .ok_or_else(|| anyhow!("the image index lists no manifest"))?;
        let (digest, _) = descriptor_of(pick)?;
        let (bytes, media_type, _) = self.registry.manifest(&digest)?;
        if media_type == INDEX || media_type == DOCKER_LIST {
            bail!("the image index nests another index");
        }
        serde_json::from_slice(&bytes).context("the platform manifest is not JSON")
    }
}

/// The folder served in the snapshot at `tree`: the snapshot itself, holding `<name>/SKILL.md`.
fn skill_root(name: &str, tree: &Path) -> Result<PathBuf> {
    if tree.join(name).join("SKILL.md").is_file() {
        Ok(tree.to_path_buf())
    } else {
        bail!("the snapshot {} holds no {name}/SKILL.md", tree.display())
    }
}

/// The `digest` and `size` of the descriptor `field` of `manifest`.
fn descriptor(manifest: &Value, field: &str) -> Result<(String, Option<u64>)> {
    descriptor_of(
        manifest
            .get(field)
            .ok_or_else(|| anyhow!("the manifest has no {field}"))?,
    )
}

fn descriptor_of(d: &Value) -> Result<(String, Option<u64>)> {
    let digest = d
        .get("digest")
        .and_then(Value::as_str)
        .filter(|d| reference::is_digest(d))
        .ok_or_else(|| anyhow!("a descriptor without a sha256 digest"))?;
    Ok((digest.to_owned(), d.get("size").and_then(Value::as_u64)))
}

/// Files below `dir` (for `files_changed` when a known snapshot comes back).
pub(crate) fn count_files(dir: &Path) -> u64 {
    walk_count(dir, 0)
}

fn walk_count(dir: &Path, depth: usize) -> u64 {
    if depth > 16 {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => walk_count(&e.path(), depth + 1),
            Ok(t) if t.is_file() => 1,
            _ => 0,
        })
        .sum()
}
