//! The Agent Skills discovery index (schema 0.2.0), served by `serve --http` at
//! `/.well-known/agent-skills/index.json` for the caller's view: every skill the Skills
//! extension lists for that caller (the same entries as `skills/list`: a hidden skill is absent,
//! names and files are the extension's), as
//!
//! ```json
//! {"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
//!  "skills": [{"name": "pdf", "type": "archive", "description": "...",
//!              "url": "skills/docs/pdf/<hex>/pdf.tar.gz", "digest": "sha256:<hex>"}]}
//! ```
//!
//! A skill of one file (its served `SKILL.md`) is a `skill-md` entry, its URL serving those
//! bytes; a skill with more files is an `archive`, a `.tar.gz` of its served files at the
//! archive root written by the one deterministic tar writer `push` uses
//! ([`crate::sources::oci::archive`], mtime 0), so every replica gives the same bytes. URLs are
//! relative to the index and content-addressed (`skills/<ext-path>/<hex>/...`, the digest of the
//! bytes served in the path): a file is served only while the skill still gives those bytes
//! (else 404, and a client reads the index again), so replicas behind one name never mix bytes.
//! Entries are in ext-path order; a name is listed once (its first ext path), since a client
//! installs an entry under its name. The document is the same bytes for the same skills.

use std::sync::{Arc, Mutex};

use serde::Serialize;
use sha2::{Digest as _, Sha256};

use super::View;
use super::extension::{self, Source};
use crate::runtime::ExtensionSkill;

/// The schema the index declares.
pub const SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
/// Every path the discovery index serves is below this (the read scope guards them all).
pub const PREFIX: &str = "/.well-known/agent-skills/";
/// Where the index is served.
pub const INDEX_PATH: &str = "/.well-known/agent-skills/index.json";
/// Where the files of its entries are served (below this, `<ext-path>/<hex>/<file>`).
pub const FILES_PATH: &str = "/.well-known/agent-skills/skills/";

/// The index built for one view (once per view: a caller's view is remade when the catalogue
/// or the rules change).
#[derive(Default)]
pub(crate) struct Cache(Mutex<Option<Arc<Built>>>);

/// The index document, and its ETag (the digest of its bytes).
pub(crate) struct Built {
    pub(crate) json: Vec<u8>,
    pub(crate) etag: String,
}

#[derive(Serialize)]
struct Document<'a> {
    #[serde(rename = "$schema")]
    schema: &'a str,
    skills: Vec<IndexEntry>,
}

#[derive(Serialize)]
struct IndexEntry {
    name: String,
    #[serde(rename = "type")]
    kind: &'static str,
    description: String,
    url: String,
    digest: String,
}

/// A skill's bytes as the index serves them.
pub(crate) struct Artifact {
    /// `skill-md` or `archive`.
    pub(crate) kind: &'static str,
    pub(crate) bytes: Vec<u8>,
    /// The last segment of its URL.
    pub(crate) file: String,
}

impl Artifact {
    pub(crate) fn content_type(&self) -> &'static str {
        if self.kind == "archive" {
            "application/gzip"
        } else {
            "text/markdown; charset=utf-8"
        }
    }
}

/// `sha256:` and the hex of the SHA-256 of `bytes`.
fn hex_digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The served bytes of `listed`: its `SKILL.md` alone, or its files as a `.tar.gz`.
fn artifact(view: &View, listed: &ExtensionSkill) -> Result<Artifact, String> {
    let entry = extension::entry(view, listed);
    let entry = entry.as_ref().as_ref().map_err(Clone::clone)?;
    if let [only] = &entry.files[..]
        && matches!(only.source, Source::SkillMd)
    {
        return Ok(Artifact {
            kind: "skill-md",
            bytes: extension::read(view, &listed.skill_path, only)?,
            file: "SKILL.md".into(),
        });
    }
    let mut files = Vec::with_capacity(entry.files.len());
    for f in &entry.files {
        files.push((
            f.relative.clone(),
            extension::read(view, &listed.skill_path, f)?,
        ));
    }
    let bytes = crate::sources::oci::archive::tar_gz(&files, 0).map_err(|e| format!("{e:#}"))?;
    Ok(Artifact {
        kind: "archive",
        bytes,
        file: format!("{}.tar.gz", listed.name),
    })
}

/// The index of `view` (built once per view).
pub(crate) fn index(view: &View) -> Arc<Built> {
    let mut cache = view.discovery.0.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(built) = cache.as_ref() {
        return built.clone();
    }
    let mut skills: Vec<IndexEntry> = Vec::with_capacity(view.ext.len());
    let mut names = std::collections::HashSet::new();
    for listed in &view.ext {
        if names.contains(listed.name.as_str()) {
            continue;
        }
        let artifact = match artifact(view, listed) {
            Ok(a) => a,
            // The extension left it out (and said why on stderr).
            Err(_) => continue,
        };
        let description = match extension::entry(view, listed).as_ref() {
            Ok(e) => e.skill.frontmatter.description.clone(),
            Err(_) => continue,
        };
        let hex = hex_digest(&artifact.bytes);
        names.insert(listed.name.clone());
        skills.push(IndexEntry {
            name: listed.name.clone(),
            kind: artifact.kind,
            description,
            url: format!(
                "skills/{}/{hex}/{}",
                extension::encode_path(&listed.ext_path),
                extension::encode_path(&artifact.file)
            ),
            digest: format!("sha256:{hex}"),
        });
    }
    let json = serde_json::to_vec_pretty(&Document {
        schema: SCHEMA,
        skills,
    })
    .unwrap_or_default();
    let etag = format!("\"sha256-{}\"", hex_digest(&json));
    let built = Arc::new(Built { json, etag });
    *cache = Some(built.clone());
    built
}

/// The file at `rest` (the request path below [`FILES_PATH`], still percent-encoded:
/// `<ext-path>/<hex>/<file>`) if the skill of that ext path, in `view`, gives bytes of that
/// digest now; `None` otherwise.
pub(crate) fn file(view: &View, rest: &str) -> Option<Artifact> {
    let path = extension::decode_uri(&format!("{}{rest}", extension::SCHEME))?;
    let (head, file) = path.rsplit_once('/')?;
    let (ext_path, hex) = head.rsplit_once('/')?;
    let listed = extension::find(view, ext_path)?;
    let artifact = artifact(view, listed).ok()?;
    (artifact.file == file && hex_digest(&artifact.bytes) == hex).then_some(artifact)
}
