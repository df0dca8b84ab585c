//! Index sources: another server's Agent Skills discovery index (`sources.indexes: [URL]`,
//! schema 0.2.0, as `serve --http` serves it at `/.well-known/agent-skills/index.json`), each
//! entry fetched into the source's snapshot folder ([`crate::sources::snapshots`]) as the folder
//! `<name>/`.
//!
//! A fetch: the index (with `If-None-Match` once an ETag is known: a 304, or the same bytes,
//! is the snapshot already on disk, and nothing more is asked: one request per refresh). The
//! revision is the hex of the SHA-256 of the index's bytes. For a new revision, every entry's
//! `url` is resolved against the index URL (RFC 3986) and fetched; its bytes must have the
//! entry's `digest` before anything else is done with them; a `skill-md` entry becomes
//! `<name>/SKILL.md`, an `archive` (`.tar.gz` or `.zip`, told apart by its first bytes) is
//! unpacked as untrusted content by the same sandboxed unpack OCI layers go through
//! ([`super::oci::unpack`]: no `..`, no links, limits, gzip and zip bombs stopped). Then the engine indexes the snapshot and each skill's frontmatter `name`
//! must be its entry's name. Only then is the snapshot installed; any failure leaves the
//! previous one served.
//!
//! Transport: the rule OCI registries follow ([`super::oci::registry::plain_http_allowed`]):
//! HTTPS, plain HTTP only to loopback or to hosts the operator lists
//! (`sources.insecure_registries`). The token (from the variable the source names) goes only to
//! the index's own origin; an entry on another origin is refused unless the operator lists that
//! origin (`sources.index_origins`), and is then fetched without credentials. Redirects are not
//! followed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::oci::{registry, unpack};
use super::snapshots::Snapshots;
use super::snapshots::short;
use super::{BoxFuture, Fetched, Pinned, Source};

/// The one schema read (clients stop on another).
pub const SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
/// Largest index document read.
const MAX_INDEX_BYTES: u64 = 8 << 20;
/// Most entries an index may hold.
const MAX_ENTRIES: usize = 10_000;

/// An entry of `sources.indexes`: the index URL, or `{url, name?, token_env?}`.
///
/// ```yaml
/// sources:
///   indexes:
///     - https://skills.example.com/.well-known/agent-skills/index.json
///     - url: https://team.example.com/.well-known/agent-skills/index.json
///       name: team                 # for access rules (default: the URL's host)
///       token_env: TEAM_TOKEN      # a bearer token with skills:read, sent to that origin only
///   index_origins: [https://cdn.example.com]   # other origins entries may be served from
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawIndexSource")]
pub struct IndexSourceConfig {
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawIndexSource {
    Url(String),
    Full {
        url: String,
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        token_env: Option<String>,
    },
}

impl TryFrom<RawIndexSource> for IndexSourceConfig {
    type Error = String;

    fn try_from(raw: RawIndexSource) -> Result<Self, String> {
        let source = match raw {
            RawIndexSource::Url(url) => IndexSourceConfig::new(url.trim()),
            RawIndexSource::Full {
                url,
                name,
                token_env,
            } => IndexSourceConfig {
                url: url.trim().to_owned(),
                name,
                token_env,
            },
        };
        source.validate()?;
        Ok(source)
    }
}

impl IndexSourceConfig {
    /// A source for the index at `url`, anonymous.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            name: None,
            token_env: None,
        }
    }

    /// Checks the URL, the name and the token variable.
    pub fn validate(&self) -> Result<(), String> {
        let url =
            url::Url::parse(&self.url).map_err(|e| format!("{:?} is not a URL: {e}", self.url))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(format!("{:?} is not an http(s) URL", self.url));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(format!(
                "{}: credentials do not go in the URL; name the variable holding a token in `token_env`",
                redact(&url)
            ));
        }
        if let Some(name) = &self.name {
            crate::config::check_root_name(name)?;
        }
        super::oci::check_token_env(self.token_env.as_deref(), "an index")
    }

    /// The name access rules know the source by: `name`, else the URL's host (`:` of a port
    /// as `-`).
    pub fn root_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| {
            url::Url::parse(&self.url)
                .ok()
                .and_then(|u| {
                    let host = u.host_str()?.trim_matches(['[', ']']).replace(':', "-");
                    Some(match u.port() {
                        Some(p) => format!("{host}-{p}"),
                        None => host,
                    })
                })
                .filter(|n| crate::config::check_root_name(n).is_ok())
                .unwrap_or_else(|| "index".into())
        })
    }
}

/// The folder of an index source below the content folder: `index-<name>-<8 hex of the URL>`.
pub fn checkout_dir(content_dir: &Path, config: &IndexSourceConfig) -> PathBuf {
    super::snapshots::checkout_dir(
        content_dir,
        "index",
        config.url.as_str(),
        &config.root_name(),
    )
}

/// The root path an index source is served from, known before any I/O.
pub fn root_path(content_dir: &Path, config: &IndexSourceConfig) -> PathBuf {
    checkout_dir(content_dir, config).join("current")
}

/// A URL without credentials, query or fragment (for messages).
fn redact(url: &url::Url) -> String {
    let mut clean = url.clone();
    let _ = clean.set_username("");
    let _ = clean.set_password(None);
    clean.set_query(None);
    clean.set_fragment(None);
    clean.to_string()
}

/// One index source.
#[derive(Debug)]
pub(crate) struct IndexSource {
    inner: Arc<Inner>,
}

struct Inner {
    label: String,
    /// The source's name (access rules, the lock file).
    name: String,
    url: url::Url,
    /// Origins (`scheme://host[:port]`) entries may be fetched from besides the index's own.
    origins: Vec<url::Origin>,
    insecure: Vec<String>,
    token: Option<String>,
    agent: ureq::Agent,
    snapshots: Snapshots,
    timeout: Duration,
    /// The ETag of the index last fetched and the revision it gave.
    etag: Mutex<Option<(String, String)>>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexSource")
            .field("url", &self.label)
            .finish_non_exhaustive()
    }
}

/// One entry of the index, as read.
struct IndexEntry {
    name: String,
    kind: String,
    url: url::Url,
    digest: String,
}

impl IndexSource {
    /// The source of `config`, its token (if any) read by the caller from `token_env`;
    /// `origins`: other origins entries may come from; `insecure`: hosts spoken to in plain
    /// HTTP besides loopback.
    pub(crate) fn new(
        config: &IndexSourceConfig,
        content_dir: &Path,
        origins: &[String],
        insecure: &[String],
        token: Option<String>,
        timeout: Duration,
    ) -> Result<Self> {
        config.validate().map_err(|e| anyhow!(e))?;
        let url = url::Url::parse(&config.url)?;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("skills-mcp/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Self {
            inner: Arc::new(Inner {
                label: redact(&url),
                name: config.root_name(),
                origins: origins
                    .iter()
                    .filter_map(|o| registry::origin_of(o))
                    .collect(),
                insecure: insecure.to_vec(),
                token,
                agent,
                snapshots: Snapshots::new(checkout_dir(content_dir, config)),
                url,
                timeout,
                etag: Mutex::new(None),
            }),
        })
    }
}

impl Source for IndexSource {
    fn kind(&self) -> &'static str {
        "index"
    }

    fn label(&self) -> &str {
        &self.inner.label
    }

    fn name(&self) -> &str {
        &self.inner.name
    }

    /// The lock file pins an index by the digest of its bytes.
    fn lock_reference(&self, revision: &str) -> super::LockReference {
        super::LockReference {
            digest: format!("sha256:{revision}"),
            resolved_reference: format!("{}@sha256:{revision}", self.inner.label),
        }
    }

    fn snapshots(&self) -> &Snapshots {
        &self.inner.snapshots
    }

    fn lock_wait(&self) -> Duration {
        self.inner.timeout * 2
    }

    fn fetch<'a>(&'a self, served: Option<&'a str>) -> BoxFuture<'a, Result<Fetched>> {
        let inner = Arc::clone(&self.inner);
        let served = served.map(str::to_owned);
        super::blocking(move || {
            inner
                .pull(served.as_deref())
                .with_context(|| inner.label.clone())
        })
    }

    fn fetch_pinned<'a>(
        &'a self,
        served: Option<&'a str>,
        pin: &'a str,
    ) -> BoxFuture<'a, Result<Pinned>> {
        let inner = Arc::clone(&self.inner);
        let served = served.map(str::to_owned);
        let pin = pin.to_owned();
        super::blocking(move || {
            inner
                .pull_pinned(served.as_deref(), &pin)
                .with_context(|| inner.label.clone())
        })
    }
}

/// The hex of the SHA-256 of `bytes`.
fn hex(bytes: &[u8]) -> String {
    registry::digest_of(bytes)
        .trim_start_matches("sha256:")
        .to_owned()
}

impl Inner {
    /// The index's revision now, and its bytes unless the server answered 304 to the ETag of
    /// `served`'s snapshot (on disk): one request.
    fn index(&self, served: Option<&str>) -> Result<(String, Option<Vec<u8>>)> {
        // A snapshot already on disk for the revision served: ask with its ETag.
        let known = self
            .etag
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .filter(|(_, rev)| Some(rev.as_str()) == served && self.snapshots.tree(rev).is_dir());
        let (status, etag, bytes) = self.get(
            &self.url,
            "application/json",
            MAX_INDEX_BYTES,
            known.as_ref().map(|(etag, _)| etag.as_str()),
        )?;
        if status == 304 {
            let (_, revision) = known.ok_or_else(|| anyhow!("a 304 to a request without ETag"))?;
            return Ok((revision, None));
        }
        let revision = hex(&bytes);
        if let Some(etag) = etag {
            *self.etag.lock().unwrap_or_else(|e| e.into_inner()) = Some((etag, revision.clone()));
        }
        Ok((revision, Some(bytes)))
    }

    fn pull(&self, served: Option<&str>) -> Result<Fetched> {
        let (revision, bytes) = self.index(served)?;
        let Some(bytes) = bytes else {
            return Ok(Fetched {
                root: self.snapshots.tree(&revision),
                revision,
                files_changed: 0,
            });
        };
        let tree = self.snapshots.tree(&revision);
        // A snapshot is only installed once every entry was checked: the same index is reused.
        if tree.is_dir() {
            return Ok(Fetched {
                files_changed: if served == Some(revision.as_str()) {
                    0
                } else {
                    super::oci::count_files(&tree)
                },
                revision,
                root: tree,
            });
        }
        let entries = self.entries(&bytes)?;
        let staging = self.snapshots.staging(&revision)?;
        let result = self.fill(&entries, &staging);
        let files = match result {
            Ok(n) => n,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        self.snapshots.install(&staging, &revision)?;
        Ok(Fetched {
            revision,
            root: tree,
            files_changed: files,
        })
    }

    /// Serves the index revision `pin` (the lock file's `digest`, or a `sources rollback`
    /// pin), and says where the index is now (never followed):
    /// - its snapshot, when on disk (one request for the index, to report a move);
    /// - else the index is fetched as by [`Self::pull`]: when it still has that revision, that
    ///   snapshot;
    /// - else, when the lock file pins the source, the current index's snapshot is served under
    ///   the pin (a hard-linked view, so that its folder outlives the current snapshot): an
    ///   index entry is pinned by its digest and the lock's `contentDigest`, so the lock then
    ///   refuses each skill whose entry moved, by name, and the others serve;
    /// - else (a rollback pin whose snapshot is gone) an error.
    fn pull_pinned(&self, served: Option<&str>, pin: &str) -> Result<Pinned> {
        if !super::snapshots::is_revision(pin) || pin.len() != 64 {
            bail!("{pin:?} is not the digest of an index");
        }
        let tree = self.snapshots.tree(pin);
        if tree.is_dir() {
            let upstream = match self.index(served) {
                Ok((now, _)) => Some(now),
                Err(e) => {
                    tracing::warn!(
                        "index: {}: could not read where it is now ({}); serving the pinned sha256:{}",
                        self.label,
                        crate::logsafe::Escaped(format!("{e:#}")),
                        short(pin)
                    );
                    None
                }
            };
            return Ok(Pinned {
                fetched: Fetched {
                    files_changed: if served == Some(pin) {
                        0
                    } else {
                        super::oci::count_files(&tree)
                    },
                    revision: pin.to_owned(),
                    root: tree,
                },
                upstream,
            });
        }
        let now = self.pull(served)?;
        let upstream = Some(now.revision.clone());
        if now.revision == pin {
            return Ok(Pinned {
                fetched: now,
                upstream,
            });
        }
        let locked = self
            .snapshots
            .state()
            .locked
            .is_some_and(|l| l.revision == pin);
        if !locked {
            bail!(
                "the index moved to sha256:{} and the snapshot of the pinned sha256:{} is no longer on disk",
                short(&now.revision),
                short(pin)
            );
        }
        let root = self.snapshots.view(pin, &now.root, &[])?;
        Ok(Pinned {
            fetched: Fetched {
                revision: pin.to_owned(),
                root,
                files_changed: now.files_changed,
            },
            upstream,
        })
    }

    /// The entries of the index `bytes`, each URL resolved and allowed.
    fn entries(&self, bytes: &[u8]) -> Result<Vec<IndexEntry>> {
        let doc: Value = serde_json::from_slice(bytes).context("the index is not JSON")?;
        let schema = doc.get("$schema").and_then(Value::as_str).unwrap_or("");
        if schema != SCHEMA {
            bail!(
                "the index's $schema is {:?}; only {SCHEMA} is read",
                crate::logsafe::Escaped(schema).to_string()
            );
        }
        let list = doc
            .get("skills")
            .and_then(Value::as_array)
            .ok_or_else(|| anyhow!("the index has no `skills` list"))?;
        if list.len() > MAX_ENTRIES {
            bail!(
                "the index lists {} skills; at most {MAX_ENTRIES} are read",
                list.len()
            );
        }
        let mut out: Vec<IndexEntry> = Vec::with_capacity(list.len());
        for (i, entry) in list.iter().enumerate() {
            let field = |key: &str| {
                entry
                    .get(key)
                    .and_then(Value::as_str)
                    .ok_or_else(|| anyhow!("skills[{i}] has no `{key}` string"))
            };
            let name = field("name")?;
            let shown = crate::logsafe::Escaped(name).to_string();
            crate::config::check_root_name(name)
                .map_err(|_| anyhow!("skills[{i}]: the name {shown} is not a skill name"))?;
            if out.iter().any(|e| e.name == name) {
                bail!("skills[{i}]: the name {shown} is listed twice");
            }
            let kind = field("type")?;
            if kind != "skill-md" && kind != "archive" {
                bail!(
                    "skills[{i}] ({shown}): the type {:?} is neither skill-md nor archive",
                    crate::logsafe::Escaped(kind).to_string()
                );
            }
            let digest = field("digest")?;
            if !super::oci::reference::is_digest(digest) {
                bail!(
                    "skills[{i}] ({shown}): the digest is not sha256: and 64 lowercase hex digits"
                );
            }
            let url = self
                .url
                .join(field("url")?)
                .map_err(|e| anyhow!("skills[{i}] ({shown}): its url: {e}"))?;
            self.allowed(&url)
                .map_err(|e| anyhow!("skills[{i}] ({shown}): {e}"))?;
            out.push(IndexEntry {
                name: name.to_owned(),
                kind: kind.to_owned(),
                url,
                digest: digest.to_owned(),
            });
        }
        Ok(out)
    }

    /// Whether an entry may be fetched from `url`: the index's origin, or one the operator lists.
    fn allowed(&self, url: &url::Url) -> Result<()> {
        let listed = || registry::origin(url).is_some_and(|o| self.origins.contains(&o));
        if !registry::same_origin(url.as_str(), self.url.as_str()) && !listed() {
            bail!(
                "its url is on another origin ({}); refused (list it in sources.index_origins to allow it)",
                url.origin().ascii_serialization()
            );
        }
        Ok(())
    }

    /// Fetches every entry into `staging` (checked against its digest, unpacked), then has the
    /// engine check each skill's name; returns the number of files.
    fn fill(&self, entries: &[IndexEntry], staging: &Path) -> Result<u64> {
        let mut files = 0u64;
        for entry in entries {
            let shown = &entry.name;
            let limit = if entry.kind == "archive" {
                unpack::MAX_BYTES
            } else {
                skills_engine::extension::MAX_BYTES
            };
            let (status, _, bytes) = self
                .get(&entry.url, "*/*", limit, None)
                .with_context(|| format!("the skill {shown}"))?;
            if status != 200 {
                bail!("the skill {shown}: HTTP {status}");
            }
            let actual = registry::digest_of(&bytes);
            if actual != entry.digest {
                bail!(
                    "the skill {shown}: its bytes have the digest {actual}, not the index's {}; refused",
                    entry.digest
                );
            }
            let dir = staging.join(&entry.name);
            std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
            if entry.kind == "skill-md" {
                std::fs::write(dir.join("SKILL.md"), &bytes)
                    .with_context(|| format!("writing {}", dir.display()))?;
                files += 1;
                continue;
            }
            // A `.zip` (by its first bytes, not the URL's name), else a `.tar.gz`.
            let unpacked = if bytes.starts_with(b"PK\x03\x04") {
                unpack::unpack_zip(&bytes, &dir)
            } else {
                unpack::unpack(&bytes, &dir)
            }
            .with_context(|| format!("the skill {shown}: its archive"))?;
            if !unpacked.iter().any(|f| f == "SKILL.md") {
                bail!("the skill {shown}: its archive holds no SKILL.md at its root");
            }
            files += unpacked.len() as u64;
        }
        check_names(entries, staging)?;
        Ok(files)
    }

    /// GET `url` (the token only to the index's origin; plain HTTP only where allowed), at most
    /// `limit` bytes: status, ETag, body (empty but for a 200).
    fn get(
        &self,
        url: &url::Url,
        accept: &str,
        limit: u64,
        if_none_match: Option<&str>,
    ) -> Result<(u16, Option<String>, Vec<u8>)> {
        match url.scheme() {
            "https" => {}
            "http" if registry::plain_http_allowed_url(url, &self.insecure) => {}
            scheme => bail!(
                "{}: {scheme} is refused (HTTPS, or plain HTTP to loopback or a host in sources.insecure_registries)",
                redact(url)
            ),
        }
        let mut request = self.agent.get(url.as_str()).header("Accept", accept);
        if let Some(tag) = if_none_match {
            request = request.header("If-None-Match", tag);
        }
        if registry::same_origin(url.as_str(), self.url.as_str())
            && let Some(token) = &self.token
        {
            request = request.header("Authorization", &format!("Bearer {token}"));
        }
        let mut response = request
            .call()
            .map_err(|e| anyhow!("{}: {e}", redact(url)))?;
        let status = response.status().as_u16();
        let etag = response
            .headers()
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        match status {
            200 => {
                let bytes = response
                    .body_mut()
                    .with_config()
                    .limit(limit.saturating_add(1))
                    .read_to_vec()
                    .map_err(|e| anyhow!("reading {}: {e}", redact(url)))?;
                if bytes.len() as u64 > limit {
                    bail!("{} is over {limit} bytes", redact(url));
                }
                Ok((status, etag, bytes))
            }
            304 => Ok((status, etag, Vec::new())),
            301 | 302 | 303 | 307 | 308 => bail!(
                "{} answered a redirect (HTTP {status}); redirects are not followed: give the URL it names",
                redact(url)
            ),
            _ => bail!("{} answered HTTP {status}", redact(url)),
        }
    }
}

/// The engine indexes `staging`: each entry is a skill whose frontmatter `name` is the entry's.
fn check_names(entries: &[IndexEntry], staging: &Path) -> Result<()> {
    let catalog = crate::catalog::Catalog::open(
        vec![crate::catalog::RootSpec::new(staging.to_path_buf())],
        crate::catalog::CatalogOptions::default(),
    )
    .context("indexing the fetched skills")?;
    for entry in entries {
        let name = &entry.name;
        let info = catalog
            .get(name)
            .ok()
            .filter(|i| i.skill_path == *name)
            .ok_or_else(|| anyhow!("the skill {name}: its SKILL.md is not a skill the engine reads (run `skills-mcp validate` on it)"))?;
        let declared = serde_json::from_str::<Value>(&info.frontmatter_json)
            .ok()
            .and_then(|f| f.get("name").and_then(Value::as_str).map(str::to_owned));
        if declared.as_deref() != Some(name.as_str()) {
            bail!(
                "the skill {name}: its frontmatter names it {}; the index entry's name must agree",
                declared.map_or("nothing".into(), |d| format!(
                    "{:?}",
                    crate::logsafe::Escaped(&d).to_string()
                ))
            );
        }
    }
    Ok(())
}
