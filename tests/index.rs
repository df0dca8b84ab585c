//! Tests: the Agent Skills discovery index (issue 40 part 3), served by the real binary
//! (`serve --http` on 127.0.0.1) and read with a real HTTP client (ureq), every digest checked
//! over the bytes received.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;

use serde_json::Value;
use sha2::{Digest as _, Sha256};
use tempfile::TempDir;

use crate::common::{agent_skill_md, write_files};
use crate::http::Server;

const T_READ: &str = "tok-index-read-0123456789abcdefgh";
const T_FIN: &str = "tok-index-fin-0123456789abcdefghi";
const T_RUN: &str = "tok-index-run-0123456789abcdefghi";

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A GET with `headers`: (status, headers, body bytes).
pub(crate) fn get(url: &str, headers: &[(&str, &str)]) -> (u16, BTreeMap<String, String>, Vec<u8>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let mut request = agent.get(url);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let mut response = request.call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = response.status().as_u16();
    let head = response
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    let body = response
        .body_mut()
        .with_config()
        .limit(200 << 20)
        .read_to_vec()
        .unwrap();
    (status, head, body)
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// The files of a `.tar.gz`, by path.
pub(crate) fn untar(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut out = BTreeMap::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = String::from_utf8(entry.path_bytes().into_owned()).unwrap();
        let mut body = Vec::new();
        entry.read_to_end(&mut body).unwrap();
        out.insert(path, body);
    }
    out
}

/// A root with a one-file skill (`alpha`), a skill with files (`beta`) and a finance skill only
/// the finance group may see.
fn team_root() -> TempDir {
    let dir = TempDir::new().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "alpha/SKILL.md",
                &agent_skill_md("alpha", "Alpha writes haiku", "Count the syllables.\n"),
            ),
            (
                "beta/SKILL.md",
                &agent_skill_md("beta", "Beta formats tables", "Run scripts/fmt.py.\n"),
            ),
            ("beta/scripts/fmt.py", "print('table')\n"),
            ("beta/reference/notes.md", "# Notes\nAlign the columns.\n"),
            (
                "finance/budget/SKILL.md",
                &agent_skill_md(
                    "finance-budget",
                    "Plan the quarterly budget",
                    "secret-budget-content\n",
                ),
            ),
            ("finance/budget/template.csv", "line,amount\n"),
        ],
    );
    dir
}

/// Serves `root` with static tokens and a rule hiding `finance/**` from all but its group.
fn serve_with_auth(root: &Path, dir: &Path) -> Server {
    let tokens = dir.join("tokens.txt");
    std::fs::write(
        &tokens,
        format!("{T_READ} skills:read\n{T_FIN} skills:read groups=finance\n{T_RUN} skills:run\n"),
    )
    .unwrap();
    let config = "access:\n  rules:\n    - skills: [\"finance/**\"]\n      groups: [finance]\n";
    Server::start(
        root,
        Some(config),
        &["--auth-tokens-file", tokens.to_str().unwrap()],
    )
}

/// The index at `base` (`http://addr`) read with `headers`, and each entry's bytes, checked
/// against its digest: name -> (entry, bytes).
pub(crate) fn read_index(
    base: &str,
    headers: &[(&str, &str)],
) -> (Value, BTreeMap<String, (Value, Vec<u8>)>) {
    let index_url = format!("{base}/.well-known/agent-skills/index.json");
    let (status, head, body) = get(&index_url, headers);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(head["content-type"], "application/json");
    let index: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        index["$schema"],
        "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    );
    let mut out = BTreeMap::new();
    for entry in index["skills"].as_array().unwrap() {
        let url = entry["url"].as_str().unwrap();
        // Relative to the index.
        assert!(!url.starts_with('/') && !url.contains("://"), "{url}");
        let file_url = format!("{base}/.well-known/agent-skills/{url}");
        let (status, _, bytes) = get(&file_url, headers);
        assert_eq!(status, 200, "{file_url}");
        let digest = entry["digest"].as_str().unwrap();
        assert_eq!(digest, format!("sha256:{}", sha256_hex(&bytes)), "{url}");
        // Content-addressed: the digest is in the path.
        assert!(url.contains(&sha256_hex(&bytes)), "{url}");
        out.insert(
            entry["name"].as_str().unwrap().to_owned(),
            (entry.clone(), bytes),
        );
    }
    (index, out)
}

#[test]
fn index_serves_the_callers_view_with_every_digest_right() {
    let root = team_root();
    let dir = TempDir::new().unwrap();
    let server = serve_with_auth(root.path(), dir.path());
    let base = format!("http://{}", server.addr);
    let index_url = format!("{base}/.well-known/agent-skills/index.json");

    // No token: 401; a token without the read scope: 403.
    let (status, head, _) = get(&index_url, &[]);
    assert_eq!(status, 401);
    assert!(head["www-authenticate"].starts_with("Bearer"), "{head:?}");
    let (status, _, _) = get(&index_url, &[("Authorization", &bearer(T_RUN))]);
    assert_eq!(status, 403);

    // The read token: alpha as skill-md, beta as an archive, the finance skill absent.
    let auth = bearer(T_READ);
    let (index, entries) = read_index(&base, &[("Authorization", &auth)]);
    assert_eq!(
        entries.keys().collect::<Vec<_>>(),
        ["alpha", "beta"],
        "{index}"
    );
    let text = index.to_string();
    assert!(
        !text.contains("finance") && !text.contains("budget"),
        "{text}"
    );
    let (alpha, alpha_bytes) = &entries["alpha"];
    assert_eq!(alpha["type"], "skill-md");
    assert_eq!(alpha["description"], "Alpha writes haiku");
    assert!(String::from_utf8_lossy(alpha_bytes).contains("Count the syllables."));
    let (beta, beta_bytes) = &entries["beta"];
    assert_eq!(beta["type"], "archive");
    assert!(beta["url"].as_str().unwrap().ends_with(".tar.gz"));
    let files = untar(beta_bytes);
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        ["SKILL.md", "reference/notes.md", "scripts/fmt.py"]
    );
    assert_eq!(files["scripts/fmt.py"], b"print('table')\n");
    // The same bytes on every read (deterministic document and archives), and a 304 for a
    // client that has them.
    let (_, head, first) = get(&index_url, &[("Authorization", &auth)]);
    let (_, _, second) = get(&index_url, &[("Authorization", &auth)]);
    assert_eq!(first, second);
    let etag = head["etag"].clone();
    let (status, _, body) = get(
        &index_url,
        &[("Authorization", &auth), ("If-None-Match", &etag)],
    );
    assert_eq!((status, body.len()), (304, 0));

    // The finance group sees its skill; its URL serves nothing to the read token.
    let (_, fin) = read_index(&base, &[("Authorization", &bearer(T_FIN))]);
    // Listed under its served name (the last segment of its path).
    assert!(fin.contains_key("budget"), "{:?}", fin.keys());
    let hidden = format!(
        "{base}/.well-known/agent-skills/{}",
        fin["budget"].0["url"].as_str().unwrap()
    );
    let (status, _, body) = get(&hidden, &[("Authorization", &auth)]);
    assert_eq!(status, 404, "{}", String::from_utf8_lossy(&body));
    assert!(!String::from_utf8_lossy(&body).contains("secret"));

    // A digest the skill does not give (bytes changed, or made up): 404.
    let url = beta["url"].as_str().unwrap();
    let wrong = url.replace(&sha256_hex(beta_bytes), &"0".repeat(64));
    let (status, _, _) = get(
        &format!("{base}/.well-known/agent-skills/{wrong}"),
        &[("Authorization", &auth)],
    );
    assert_eq!(status, 404);

    // Host and Origin: the same guard as /mcp.
    let (status, _, _) = get(
        &index_url,
        &[("Authorization", &auth), ("Origin", "https://evil.example")],
    );
    assert_eq!(status, 403);
    let answer = crate::http::raw(
        &server.addr,
        &format!(
            "GET /.well-known/agent-skills/index.json HTTP/1.1\r\nHost: evil.example\r\nAuthorization: {auth}"
        ),
        b"",
    );
    assert_eq!(answer.status, 403, "{answer:?}");
    assert!(!server.log().contains(T_READ), "a token in the log");
}

#[test]
fn index_without_authentication_is_the_local_view_on_loopback() {
    let root = team_root();
    let server = Server::start(root.path(), None, &[]);
    let base = format!("http://{}", server.addr);
    // Without access rules the local operator sees every skill.
    let (_, entries) = read_index(&base, &[]);
    assert_eq!(
        entries.keys().collect::<Vec<_>>(),
        ["alpha", "beta", "budget"]
    );
}

// ---- consuming an index --------------------------------------------------------------------

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use skills_mcp::sources::index::IndexSourceConfig;
use skills_mcp::sources::{GitConfig, SourceConfig, Sources};

/// Requests received: path and `Authorization` header.
type Requests = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A plain static HTTP server on 127.0.0.1 (a real socket), its files replaceable, every
/// request recorded with its `Authorization` header.
struct Static {
    base: String,
    files: Arc<Mutex<HashMap<String, Vec<u8>>>>,
    requests: Requests,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Static {
    async fn start() -> Self {
        use axum::{extract::Request, http::StatusCode, response::IntoResponse};
        let files: Arc<Mutex<HashMap<String, Vec<u8>>>> = Arc::default();
        let requests: Requests = Arc::default();
        let (f, r) = (files.clone(), requests.clone());
        let app = axum::Router::new().fallback(move |request: Request| {
            let (f, r) = (f.clone(), r.clone());
            async move {
                let path = request.uri().path().to_owned();
                let auth = request
                    .headers()
                    .get("authorization")
                    .map(|v| v.to_str().unwrap().to_owned());
                r.lock().unwrap().push((path.clone(), auth));
                match f.lock().unwrap().get(&path) {
                    Some(bytes) => bytes.clone().into_response(),
                    None => StatusCode::NOT_FOUND.into_response(),
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await
                .unwrap();
        });
        Self {
            base,
            files,
            requests,
            _stop: tx,
        }
    }

    fn put(&self, path: &str, bytes: Vec<u8>) {
        self.files.lock().unwrap().insert(path.to_owned(), bytes);
    }

    fn paths(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.0.clone())
            .collect()
    }
}

/// An index document over `(name, type, url, bytes)` entries (the digest of `bytes`).
fn index_doc(entries: &[(&str, &str, &str, &[u8])]) -> Vec<u8> {
    let skills: Vec<Value> = entries
        .iter()
        .map(|(name, kind, url, bytes)| {
            serde_json::json!({"name": name, "type": kind, "description": format!("{name} skill"),
                "url": url, "digest": format!("sha256:{}", sha256_hex(bytes))})
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
        "skills": skills,
    }))
    .unwrap()
}

/// A `.tar.gz` of `files` (plain ustar, as any tool writes it).
fn tar_gz(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (path, bytes) in files {
        let mut header = tar::Header::new_ustar();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, path, *bytes).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

fn index_sources(
    content: &Path,
    url: &str,
    origins: &[String],
    token: Option<&str>,
) -> Arc<Sources> {
    let mut config = IndexSourceConfig::new(url);
    config.name = Some("team".into());
    let token = token.map(str::to_owned);
    if token.is_some() {
        config.token_env = Some("TEAM_INDEX_TOKEN".into());
    }
    Arc::new(
        Sources::new(
            &[SourceConfig::Index {
                config,
                origins: origins.to_vec(),
                insecure: Vec::new(),
            }],
            &GitConfig {
                content_dir: content.to_path_buf(),
                timeout_seconds: 10,
            },
            move |var| (var == "TEAM_INDEX_TOKEN").then(|| token.clone()).flatten(),
        )
        .unwrap(),
    )
}

fn served(sources: &Sources, name: &str, file: &str) -> Option<String> {
    let root = &sources.roots()[0].path;
    std::fs::read_to_string(root.join(name).join(file)).ok()
}

fn revision(sources: &Sources) -> Option<String> {
    sources.status()[0].commit_hash.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_source_verifies_every_digest_and_keeps_its_last_good_snapshot() {
    let site = Static::start().await;
    let tmp = TempDir::new().unwrap();
    let alpha = agent_skill_md("alpha", "Alpha writes haiku", "v1\n");
    let beta_md = agent_skill_md("beta", "Beta formats tables", "v1\n");
    let beta = tar_gz(&[
        ("SKILL.md", beta_md.as_bytes()),
        ("scripts/fmt.py", b"print(1)\n"),
    ]);
    site.put("/skills/alpha.md", alpha.clone().into_bytes());
    site.put("/skills/beta.tar.gz", beta.clone());
    let good = index_doc(&[
        (
            "alpha",
            "skill-md",
            "../../skills/alpha.md",
            alpha.as_bytes(),
        ),
        ("beta", "archive", "/skills/beta.tar.gz", &beta),
    ]);
    site.put("/.well-known/agent-skills/index.json", good.clone());
    let url = format!("{}/.well-known/agent-skills/index.json", site.base);
    let sources = index_sources(&tmp.path().join("content"), &url, &[], None);
    let problems = sources.initialize().await;
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        served(&sources, "alpha", "SKILL.md").as_deref(),
        Some(alpha.as_str())
    );
    assert_eq!(
        served(&sources, "beta", "scripts/fmt.py").as_deref(),
        Some("print(1)\n")
    );
    let first = revision(&sources).unwrap();
    assert_eq!(first, sha256_hex(&good));
    // The engine reads the snapshot as a root: both skills, by their names.
    let catalog = crate::common::catalog(&[&sources.roots()[0].path]);
    let mut names: Vec<String> = catalog
        .skills()
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    names.sort();
    assert_eq!(names, ["alpha", "beta"]);

    // Unchanged: one request (the index), no entry fetched again.
    let before = site.paths().len();
    let r = sources.force_refresh().await;
    assert!(r.success, "{r:?}");
    assert_eq!(
        site.paths()[before..],
        ["/.well-known/agent-skills/index.json"]
    );

    // A new index whose beta digest its bytes do not match: refused, the old one serves.
    let beta2 = tar_gz(&[("SKILL.md", beta_md.replace("v1", "v2").as_bytes())]);
    let tampered = tar_gz(&[("SKILL.md", beta_md.replace("v1", "EVIL").as_bytes())]);
    site.put("/skills/beta.tar.gz", tampered);
    site.put(
        "/.well-known/agent-skills/index.json",
        index_doc(&[
            (
                "alpha",
                "skill-md",
                "../../skills/alpha.md",
                alpha.as_bytes(),
            ),
            ("beta", "archive", "/skills/beta.tar.gz", &beta2),
        ]),
    );
    let r = sources.force_refresh().await;
    assert!(!r.success, "{r:?}");
    let message = r.message.unwrap_or_default();
    assert!(
        message.contains("beta") && message.contains("digest"),
        "{message}"
    );
    assert_eq!(revision(&sources).as_deref(), Some(first.as_str()));
    assert!(served(&sources, "beta", "SKILL.md").unwrap().contains("v1"));

    // The right bytes arrive: served.
    site.put("/skills/beta.tar.gz", beta2.clone());
    let r = sources.force_refresh().await;
    assert!(r.success, "{r:?}");
    assert!(served(&sources, "beta", "SKILL.md").unwrap().contains("v2"));

    // A name that disagrees with the skill's frontmatter: refused.
    let wrong = agent_skill_md("other", "Named otherwise", "x\n");
    site.put("/skills/gamma.md", wrong.clone().into_bytes());
    site.put(
        "/.well-known/agent-skills/index.json",
        index_doc(&[("gamma", "skill-md", "/skills/gamma.md", wrong.as_bytes())]),
    );
    let r = sources.force_refresh().await;
    let message = r.message.unwrap_or_default();
    assert!(!r.success && message.contains("gamma"), "{message}");
    assert!(served(&sources, "beta", "SKILL.md").unwrap().contains("v2"));

    // A gzip bomb (a tar entry of 200 MB of zeros, compressed): stopped, nothing served from it.
    let bomb = {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut header = tar::Header::new_ustar();
        header.set_path("SKILL.md").unwrap();
        header.set_size(200_000_000);
        header.set_mode(0o644);
        header.set_cksum();
        std::io::Write::write_all(&mut gz, header.as_bytes()).unwrap();
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..200 {
            std::io::Write::write_all(&mut gz, &zeros).unwrap();
        }
        gz.finish().unwrap()
    };
    assert!(bomb.len() < 1_000_000, "{}", bomb.len());
    site.put("/skills/bomb.tar.gz", bomb.clone());
    site.put(
        "/.well-known/agent-skills/index.json",
        index_doc(&[("bomb", "archive", "/skills/bomb.tar.gz", &bomb)]),
    );
    let r = sources.force_refresh().await;
    let message = r.message.unwrap_or_default();
    assert!(!r.success && message.contains("more than"), "{message}");
    assert!(served(&sources, "beta", "SKILL.md").unwrap().contains("v2"));
    assert!(served(&sources, "bomb", "SKILL.md").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_on_another_origin_is_refused_unless_listed_and_gets_no_token() {
    let site = Static::start().await;
    let cdn = Static::start().await;
    let tmp = TempDir::new().unwrap();
    let alpha = agent_skill_md("alpha", "Alpha writes haiku", "from the cdn\n");
    cdn.put("/alpha.md", alpha.clone().into_bytes());
    let foreign = format!("{}/alpha.md", cdn.base);
    site.put(
        "/.well-known/agent-skills/index.json",
        index_doc(&[("alpha", "skill-md", &foreign, alpha.as_bytes())]),
    );
    let url = format!("{}/.well-known/agent-skills/index.json", site.base);
    let token = "index-token-0123456789abcdef";

    let refused = index_sources(&tmp.path().join("a"), &url, &[], Some(token));
    let problems = refused.initialize().await;
    assert!(
        problems.len() == 1 && problems[0].contains("another origin"),
        "{problems:?}"
    );
    assert!(cdn.paths().is_empty(), "nothing asked of the other origin");

    let listed = index_sources(
        &tmp.path().join("b"),
        &url,
        std::slice::from_ref(&cdn.base),
        Some(token),
    );
    let problems = listed.initialize().await;
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        served(&listed, "alpha", "SKILL.md").as_deref(),
        Some(alpha.as_str())
    );
    // The token went to the index's origin only.
    let site_auth = site.requests.lock().unwrap().clone();
    assert!(
        site_auth
            .iter()
            .all(|(_, a)| a.as_deref() == Some(&format!("Bearer {token}")[..]))
    );
    let cdn_auth = cdn.requests.lock().unwrap().clone();
    assert_eq!(cdn_auth, [("/alpha.md".to_string(), None)]);
}

#[test]
fn the_index_of_one_server_is_consumed_by_another_with_every_digest_checked() {
    let root = team_root();
    let dir = TempDir::new().unwrap();
    let a = serve_with_auth(root.path(), dir.path());
    let (_, theirs) = read_index(
        &format!("http://{}", a.addr),
        &[("Authorization", &bearer(T_READ))],
    );
    // B reads A's index with the read token (the finance skill is not in that view).
    let empty = TempDir::new().unwrap();
    let config = format!(
        "sources:\n  indexes:\n    - {{url: \"http://{}/.well-known/agent-skills/index.json\", name: team, token_env: TEAM_TOKEN}}\n",
        a.addr
    );
    let b = Server::spawn_with_env(empty.path(), Some(&config), &[], &[("TEAM_TOKEN", T_READ)]);
    b.wait_for("skills indexed");
    let (_, ours) = read_index(&format!("http://{}", b.addr), &[]);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        ["alpha", "beta"],
        "{}",
        b.log()
    );
    for (name, (entry, bytes)) in &ours {
        // The same bytes by digest, served again by B.
        assert_eq!(entry["digest"], theirs[name].0["digest"], "{name}");
        assert_eq!(bytes, &theirs[name].1, "{name}");
    }
    // A refresh of B with A unchanged: one request for the index (a 304), no file fetched.
    let count = |what: &str| a.log().lines().filter(|l| l.contains(what)).count();
    let files_before = count("GET /.well-known/agent-skills/skills/");
    let not_modified = count("GET /.well-known/agent-skills/index.json - 304");
    let answer = crate::http::post_2026(
        &b.addr,
        7,
        "tools/call",
        Some("refresh_skills"),
        serde_json::json!({"name": "refresh_skills", "arguments": {}}),
    );
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(!answer.body.contains("\"isError\":true"), "{answer:?}");
    assert_eq!(
        count("GET /.well-known/agent-skills/index.json - 304"),
        not_modified + 1,
        "{}",
        a.log()
    );
    assert_eq!(count("GET /.well-known/agent-skills/skills/"), files_before);
    assert!(!b.log().contains(T_READ) && !a.log().contains(T_READ));
}

// ---- .zip archives in an index ---------------------------------------------------------------

/// One entry of a `.zip` written here byte by byte (PKWARE's APPNOTE: local header, deflated
/// data, central directory, end record): its name as stored, its bytes, its Unix mode (the high
/// 16 bits of the external attributes) and the uncompressed size its headers claim (`None`:
/// the truth).
struct ZipEntry<'a> {
    name: &'a str,
    data: &'a [u8],
    mode: u32,
    claimed: Option<u32>,
}

impl<'a> ZipEntry<'a> {
    fn file(name: &'a str, data: &'a [u8]) -> Self {
        Self {
            name,
            data,
            mode: 0o100_644,
            claimed: None,
        }
    }
}

/// CRC-32 (IEEE), bit by bit.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A `.zip` of `entries`, each deflated, made by Unix (so the mode is read).
fn zip(entries: &[ZipEntry]) -> Vec<u8> {
    use std::io::Write as _;
    let mut out = Vec::new();
    let mut central = Vec::new();
    for e in entries {
        let mut enc =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(e.data).unwrap();
        let deflated = enc.finish().unwrap();
        let size = e.claimed.unwrap_or(e.data.len() as u32);
        let mut common = Vec::new();
        for half in [20u16, 0, 8, 0, 0x21] {
            // version needed, flags, method (deflate), time, date (1980-01-01)
            common.extend(half.to_le_bytes());
        }
        common.extend(crc32(e.data).to_le_bytes());
        common.extend((deflated.len() as u32).to_le_bytes());
        common.extend(size.to_le_bytes());
        common.extend((e.name.len() as u16).to_le_bytes());
        common.extend(0u16.to_le_bytes()); // extra field length
        let offset = out.len() as u32;
        out.extend(0x0403_4b50u32.to_le_bytes());
        out.extend(&common);
        out.extend(e.name.as_bytes());
        out.extend(&deflated);
        central.extend(0x0201_4b50u32.to_le_bytes());
        central.extend(((3u16 << 8) | 20).to_le_bytes()); // made by Unix
        central.extend(&common);
        for half in [0u16, 0, 0] {
            // comment length, disk, internal attributes
            central.extend(half.to_le_bytes());
        }
        central.extend((e.mode << 16).to_le_bytes());
        central.extend(offset.to_le_bytes());
        central.extend(e.name.as_bytes());
    }
    let at = out.len() as u32;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0u8; 4]); // disk numbers
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(at.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zip_archives_in_an_index_go_through_the_same_sandbox_as_tar() {
    let site = Static::start().await;
    let tmp = TempDir::new().unwrap();
    let content = tmp.path().join("content");
    let md = agent_skill_md("delta", "Delta packs zips", "Run scripts/pack.sh.\n");
    let good = zip(&[
        ZipEntry::file("SKILL.md", md.as_bytes()),
        ZipEntry {
            name: "scripts/",
            data: b"",
            mode: 0o040_755,
            claimed: None,
        },
        ZipEntry::file("scripts/pack.sh", b"echo pack\n"),
        ZipEntry::file("reference/notes.md", b"# Notes\n"),
    ]);
    let publish = |archive: &[u8]| {
        site.put("/skills/delta.zip", archive.to_vec());
        site.put(
            "/.well-known/agent-skills/index.json",
            index_doc(&[("delta", "archive", "/skills/delta.zip", archive)]),
        );
    };
    publish(&good);
    let url = format!("{}/.well-known/agent-skills/index.json", site.base);
    let sources = index_sources(&content, &url, &[], None);
    let problems = sources.initialize().await;
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        served(&sources, "delta", "SKILL.md").as_deref(),
        Some(&md[..])
    );
    assert_eq!(
        served(&sources, "delta", "scripts/pack.sh").as_deref(),
        Some("echo pack\n")
    );
    assert_eq!(
        served(&sources, "delta", "reference/notes.md").as_deref(),
        Some("# Notes\n")
    );
    let first = revision(&sources).unwrap();
    // The engine reads it as a skill with its files.
    let catalog = crate::common::catalog(&[&sources.roots()[0].path]);
    let names: Vec<String> = catalog
        .skills()
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["delta"]);

    // Each refused with a message naming the skill and the reason; the good snapshot serves on
    // and nothing lands outside the source's folder.
    // 100 MB of zeros in 100 KB: once with headers that say so, once with headers that claim
    // 1,000 bytes (stopped as the inflated bytes pass the size claimed, not written).
    let zeros = vec![0u8; 100_000_000];
    let bomb = zip(&[
        ZipEntry::file("SKILL.md", md.as_bytes()),
        ZipEntry::file("big.bin", &zeros),
    ]);
    let lying = zip(&[
        ZipEntry::file("SKILL.md", md.as_bytes()),
        ZipEntry {
            claimed: Some(1000),
            ..ZipEntry::file("big.bin", &zeros)
        },
    ]);
    assert!(bomb.len() < 1_000_000, "{}", bomb.len());
    drop(zeros);
    let evil = b"evil\n";
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("a zip bomb", bomb, "more than 95000000 bytes"),
        ("a zip bomb whose headers lie", lying, "unpacking big.bin"),
        (
            "a `../` path",
            zip(&[
                ZipEntry::file("SKILL.md", md.as_bytes()),
                ZipEntry::file("../../../escaped.md", evil),
            ]),
            "unsafe path",
        ),
        (
            "an absolute path",
            zip(&[
                ZipEntry::file("SKILL.md", md.as_bytes()),
                ZipEntry::file("/tmp/escaped.md", evil),
            ]),
            "unsafe path",
        ),
        (
            "a symbolic link",
            zip(&[
                ZipEntry::file("SKILL.md", md.as_bytes()),
                ZipEntry {
                    mode: 0o120_777,
                    ..ZipEntry::file("notes.md", b"../../../../etc/passwd")
                },
            ]),
            "notes.md, which is a symbolic link",
        ),
        (
            "a path twice",
            zip(&[
                ZipEntry::file("SKILL.md", md.as_bytes()),
                ZipEntry::file("SKILL.md", md.as_bytes()),
            ]),
            "SKILL.md twice",
        ),
    ];
    for (what, archive, why) in cases {
        publish(&archive);
        let r = sources.force_refresh().await;
        let message = r.message.unwrap_or_default();
        assert!(!r.success, "{what}: {message}");
        assert!(
            message.contains("the skill delta: its archive") && message.contains(why),
            "{what}: {message}"
        );
        assert_eq!(
            revision(&sources).as_deref(),
            Some(first.as_str()),
            "{what}"
        );
        assert_eq!(
            served(&sources, "delta", "scripts/pack.sh").as_deref(),
            Some("echo pack\n"),
            "{what}"
        );
        assert!(served(&sources, "delta", "big.bin").is_none(), "{what}");
        assert!(!holds(tmp.path(), "escaped.md"), "{what}");
    }
}

/// Whether a file named `name` is anywhere below `dir`.
fn holds(dir: &Path, name: &str) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        let kind = e.file_type().unwrap();
        e.file_name() == name || (kind.is_dir() && holds(&e.path(), name))
    })
}
