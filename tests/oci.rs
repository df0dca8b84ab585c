//! Tests: OCI sources against a real registry (Debian's `docker-registry`, started here on
//! loopback with a temp config and storage), artifacts in ToolHive's layout written as an OCI
//! image layout and pushed by `skopeo` (an independent client), signed with `openssl` (the
//! cosign classic layout: a `sha256-<hex>.sig` tag), and faults made for real: a registry
//! stopped mid-refresh, a tag moved to an unsigned artifact, a signature by another key, a
//! layer whose stored bytes no longer match its digest, a tar with `..` and a symlink out.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::json;
use sha2::{Digest as _, Sha256};
use skills_mcp::sources::Sources;
use skills_mcp::sources::oci::{OciSourceConfig, VerifyConfig};
use tempfile::TempDir;

use crate::common::{Registry, Service, key_pair, oci_replica, require_service, succeed};

fn sha(bytes: &[u8]) -> String {
    let h = Sha256::digest(bytes);
    format!(
        "sha256:{}",
        h.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// An OCI image layout being written: blobs by digest, then `index.json`.
struct Layout {
    dir: PathBuf,
}

impl Layout {
    fn new(dir: &Path) -> Self {
        std::fs::create_dir_all(dir.join("blobs/sha256")).unwrap();
        std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
        Layout {
            dir: dir.to_path_buf(),
        }
    }

    fn blob(&self, bytes: &[u8]) -> (String, usize) {
        let digest = sha(bytes);
        std::fs::write(
            self.dir
                .join("blobs/sha256")
                .join(digest.trim_start_matches("sha256:")),
            bytes,
        )
        .unwrap();
        (digest, bytes.len())
    }

    /// `index.json` pointing at `root` (media type, digest, size) under the name `tag`.
    fn finish(&self, media_type: &str, digest: &str, size: usize, tag: &str) {
        let index = json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [{
                "mediaType": media_type, "digest": digest, "size": size,
                "annotations": {"org.opencontainers.image.ref.name": tag}
            }]
        });
        std::fs::write(self.dir.join("index.json"), index.to_string()).unwrap();
    }
}

/// A tar.gz of `entries` (`(path, bytes, kind)`; kind `'0'` file, `'2'` symlink to the bytes),
/// the raw path written into the header as is (so that `..` can be).
fn layer(entries: &[(&str, &[u8], u8)]) -> Vec<u8> {
    let mut tar = Vec::new();
    {
        let mut b = tar::Builder::new(&mut tar);
        for (path, bytes, kind) in entries {
            let mut h = tar::Header::new_ustar();
            h.as_ustar_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
            h.set_mode(0o644);
            h.set_mtime(0);
            if *kind == b'2' {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_size(0);
                h.as_ustar_mut().unwrap().linkname[..bytes.len()].copy_from_slice(bytes);
                h.set_cksum();
                b.append(&h, &[][..]).unwrap();
            } else {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_size(bytes.len() as u64);
                h.set_cksum();
                b.append(&h, *bytes).unwrap();
            }
        }
        b.finish().unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

fn skill_md(name: &str, version: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Fill in {name} forms, version {version}.\n---\n# {name}\n\nVersion {version}.\n"
    )
}

/// Pushes a ToolHive-layout artifact (an image index of two platform manifests sharing the
/// layer) as `repo:tag`; returns the index digest.
fn push_artifact(
    reg: &Registry,
    work: &Path,
    repo: &str,
    tag: &str,
    label: &str,
    layer_bytes: &[u8],
) -> String {
    let dir = work.join(format!("layout-{repo}-{tag}").replace('/', "_"));
    let _ = std::fs::remove_dir_all(&dir);
    let l = Layout::new(&dir);
    let config = json!({
        "architecture": "amd64", "os": "linux",
        "config": {"Labels": {"dev.toolhive.skills.name": label, "dev.toolhive.skills.version": tag}},
        "rootfs": {"type": "layers", "diff_ids": []}
    });
    let (config_digest, config_size) = l.blob(config.to_string().as_bytes());
    let (layer_digest, layer_size) = l.blob(layer_bytes);
    let mut manifests = Vec::new();
    for arch in ["amd64", "arm64"] {
        let m = json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "artifactType": "dev.toolhive.skills.v1",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config_size},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest, "size": layer_size,
                        "annotations": {"org.opencontainers.image.title": "skill.tar.gz"}}],
            "annotations": {"dev.toolhive.skills.name": label, "arch": arch}
        });
        let (d, s) = l.blob(m.to_string().as_bytes());
        manifests.push(json!({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": d, "size": s,
                               "platform": {"os": "linux", "architecture": arch}}));
    }
    let index = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "artifactType": "dev.toolhive.skills.v1",
        "manifests": manifests,
        "annotations": {"dev.toolhive.skills.name": label, "org.opencontainers.image.created": "1970-01-01T00:00:00Z"}
    });
    let index_bytes = index.to_string();
    let (digest, size) = l.blob(index_bytes.as_bytes());
    l.finish(
        "application/vnd.oci.image.index.v1+json",
        &digest,
        size,
        tag,
    );
    skopeo_copy(&dir, tag, &format!("{}/{repo}:{tag}", reg.host()), true);
    digest
}

/// Signs `digest` of `repo` with the PEM private key `key` (openssl: ECDSA P-256, SHA-256, DER)
/// and pushes the cosign classic signature image to its `sha256-<hex>.sig` tag.
fn sign(reg: &Registry, work: &Path, repo: &str, digest: &str, key: &Path) {
    let payload = json!({
        "critical": {
            "identity": {"docker-reference": format!("{}/{repo}", reg.host())},
            "image": {"docker-manifest-digest": digest},
            "type": "cosign container image signature"
        },
        "optional": null
    })
    .to_string();
    let payload_file = work.join("payload.json");
    std::fs::write(&payload_file, &payload).unwrap();
    let der = succeed(
        Command::new("openssl")
            .args(["dgst", "-sha256", "-sign"])
            .arg(key)
            .arg(&payload_file),
    );
    use base64::Engine as _;
    let signature = base64::engine::general_purpose::STANDARD.encode(&der);
    let tag = format!("{}.sig", digest.replace(':', "-"));
    let dir = work.join(format!("sig-{}", &tag[7..19]));
    let _ = std::fs::remove_dir_all(&dir);
    let l = Layout::new(&dir);
    let (config_digest, config_size) = l.blob(
        br#"{"architecture":"","os":"","config":{},"rootfs":{"type":"layers","diff_ids":[]}}"#,
    );
    let (payload_digest, payload_size) = l.blob(payload.as_bytes());
    let m = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config_size},
        "layers": [{"mediaType": "application/vnd.dev.cosign.simplesigning.v1+json", "digest": payload_digest, "size": payload_size,
                    "annotations": {"dev.cosignproject.cosign/signature": signature}}]
    });
    let (d, s) = l.blob(m.to_string().as_bytes());
    l.finish("application/vnd.oci.image.manifest.v1+json", &d, s, &tag);
    skopeo_copy(&dir, &tag, &format!("{}/{repo}:{tag}", reg.host()), false);
}

fn skopeo_copy(layout: &Path, tag: &str, dest: &str, all: bool) {
    let mut cmd = Command::new("skopeo");
    cmd.args([
        "copy",
        "--quiet",
        "--dest-tls-verify=false",
        "--preserve-digests",
    ]);
    if all {
        cmd.arg("--all");
    }
    succeed(
        cmd.arg(format!("oci:{}:{tag}", layout.display()))
            .arg(format!("docker://{dest}")),
    );
}

fn oci_sources(content: &Path, reference: &str, key: Option<&Path>) -> Arc<Sources> {
    let mut config = OciSourceConfig::new(reference);
    config.verify = key.map(|k| VerifyConfig {
        key: k.to_path_buf(),
    });
    oci_replica(config, content, |_| None)
}

fn served(sources: &Sources, name: &str) -> String {
    let root = &sources.roots()[0].path;
    std::fs::read_to_string(root.join(name).join("SKILL.md")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oci_source_is_pulled_verified_and_keeps_its_last_good_snapshot() {
    let Some(bin) = require_service(Service::Registry, "oci_source") else {
        return;
    };
    if require_service(Service::Skopeo, "oci_source").is_none() {
        return;
    }
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let mut reg = Registry::start(&bin, &work.join("registry"));
    let (key, public) = key_pair(work, "team");
    let (other_key, _) = key_pair(work, "other");
    let repo = "skills/pdf";
    let reference = format!("{}/{repo}:1.0", reg.host());

    // v1, signed by the team's key.
    let v1 = layer(&[
        ("SKILL.md", skill_md("pdf", "1").as_bytes(), b'0'),
        ("scripts/fill.py", b"print('fill')\n", b'0'),
    ]);
    let d1 = push_artifact(&reg, work, repo, "1.0", "pdf", &v1);
    sign(&reg, work, repo, &d1, &key);

    let content = work.join("content");
    let sources = oci_sources(&content, &reference, Some(&public));
    let problems = sources.initialize().await;
    assert!(problems.is_empty(), "{problems:?}");
    assert!(served(&sources, "pdf").contains("Version 1."));
    let root = &sources.roots()[0].path;
    assert_eq!(
        std::fs::read_to_string(root.join("pdf/scripts/fill.py")).unwrap(),
        "print('fill')\n"
    );
    let status = sources.status();
    assert_eq!(status[0].commit_hash.as_deref(), Some(&d1[7..]));

    // Unchanged: one manifest request, no blob.
    let (manifests, blobs) = (reg.requests("/manifests/"), reg.requests("/blobs/"));
    let r = sources.refresh_if_changed().await;
    assert!(r.success && !r.changed, "{r:?}");
    assert_eq!(reg.requests("/manifests/"), manifests + 1);
    assert_eq!(reg.requests("/blobs/"), blobs);

    // The tag moves to an unsigned artifact: refused, v1 keeps serving.
    let v2 = layer(&[("SKILL.md", skill_md("pdf", "2").as_bytes(), b'0')]);
    let d2 = push_artifact(&reg, work, repo, "1.0", "pdf", &v2);
    let r = sources.refresh_if_changed().await;
    let message = r.message.clone().unwrap_or_default();
    assert!(!r.success, "{r:?}");
    assert!(
        message.contains(&reference) && message.contains("unsigned"),
        "{message}"
    );
    assert!(served(&sources, "pdf").contains("Version 1."));
    assert!(sources.status()[0].error.is_some());

    // Signed by another key: refused.
    sign(&reg, work, repo, &d2, &other_key);
    let r = sources.refresh_if_changed().await;
    let message = r.message.clone().unwrap_or_default();
    assert!(message.contains("another key"), "{message}");
    assert!(served(&sources, "pdf").contains("Version 1."));

    // Signed by the team: followed.
    sign(&reg, work, repo, &d2, &key);
    let r = sources.refresh_if_changed().await;
    assert!(r.success && r.changed, "{r:?}");
    assert!(served(&sources, "pdf").contains("Version 2."));

    // A signed artifact whose stored layer bytes were altered: the digest check refuses it.
    let v3 = layer(&[("SKILL.md", skill_md("pdf", "3").as_bytes(), b'0')]);
    let d3 = push_artifact(&reg, work, repo, "1.0", "pdf", &v3);
    sign(&reg, work, repo, &d3, &key);
    let mut tampered = v3.clone();
    let last = tampered.len() - 9;
    tampered[last] ^= 0xff;
    std::fs::write(reg.blob_file(&sha(&v3)), &tampered).unwrap();
    let r = sources.refresh_if_changed().await;
    let message = r.message.clone().unwrap_or_default();
    assert!(message.contains("do not match"), "{message}");
    assert!(served(&sources, "pdf").contains("Version 2."));

    // The registry stops mid-refresh: the last good snapshot is served, and the next refresh
    // after it is back recovers.
    reg.stop();
    let r = sources.force_refresh().await;
    assert!(!r.success, "{r:?}");
    assert!(served(&sources, "pdf").contains("Version 2."));
    reg.restart();
    let v4 = layer(&[("SKILL.md", skill_md("pdf", "4").as_bytes(), b'0')]);
    let d4 = push_artifact(&reg, work, repo, "1.0", "pdf", &v4);
    sign(&reg, work, repo, &d4, &key);
    let r = sources.refresh_if_changed().await;
    assert!(r.success && r.changed, "{r:?}");
    assert!(served(&sources, "pdf").contains("Version 4."));
    // A new server starting on the same folder serves the cached snapshot while the registry
    // is down.
    reg.stop();
    let again = oci_sources(&content, &reference, Some(&public));
    let problems = again.initialize().await;
    assert!(problems[0].contains("serving the cached"), "{problems:?}");
    assert!(served(&again, "pdf").contains("Version 4."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsafe_layers_and_wrong_names_are_refused() {
    let Some(bin) = require_service(Service::Registry, "oci_unsafe_layers") else {
        return;
    };
    if require_service(Service::Skopeo, "oci_unsafe_layers").is_none() {
        return;
    }
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let reg = Registry::start(&bin, &work.join("registry"));
    let ok = skill_md("forms", "1");
    let cases: [(&str, Vec<u8>, &str, &str); 5] = [
        (
            "dotdot",
            layer(&[
                ("SKILL.md", ok.as_bytes(), b'0'),
                ("../evil.sh", b"x", b'0'),
            ]),
            "forms",
            "`..` segment",
        ),
        (
            "symlink",
            layer(&[
                ("SKILL.md", ok.as_bytes(), b'0'),
                ("out", b"/etc/passwd", b'2'),
            ]),
            "forms",
            "symbolic link",
        ),
        (
            "absolute",
            layer(&[("SKILL.md", ok.as_bytes(), b'0'), ("/tmp/x", b"x", b'0')]),
            "forms",
            "absolute",
        ),
        (
            "twice",
            layer(&[("SKILL.md", ok.as_bytes(), b'0'), ("SKILL.md", b"x", b'0')]),
            "forms",
            "twice",
        ),
        (
            "label",
            layer(&[("SKILL.md", ok.as_bytes(), b'0')]),
            "other",
            "must agree",
        ),
    ];
    for (tag, bytes, label, why) in cases {
        let repo = "skills/forms";
        push_artifact(&reg, work, repo, tag, label, &bytes);
        let content = work.join(format!("content-{tag}"));
        let sources = oci_sources(&content, &format!("{}/{repo}:{tag}", reg.host()), None);
        let problems = sources.initialize().await;
        assert!(
            problems.len() == 1 && problems[0].contains(why),
            "{tag}: {problems:?}"
        );
        assert!(!content.join("evil.sh").exists() && !work.join("evil.sh").exists());
        // Nothing was installed: no snapshot, nothing served.
        let trees: Vec<_> = std::fs::read_dir(sources.checkout_dirs()[0].join("trees"))
            .unwrap()
            .flatten()
            .collect();
        assert!(trees.is_empty(), "{tag}: {trees:?}");
    }
    // A gzip bomb: 200 MB of zeros in one file stops at the limit, before it is all written.
    let mut tar = Vec::new();
    {
        let mut b = tar::Builder::new(&mut tar);
        let mut h = tar::Header::new_ustar();
        h.set_path("SKILL.md").unwrap();
        h.set_size(200_000_000);
        h.set_mode(0o644);
        h.set_cksum();
        b.append(&h, std::io::Read::take(std::io::repeat(0), 200_000_000))
            .unwrap();
        b.finish().unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&tar).unwrap();
    let bomb = gz.finish().unwrap();
    assert!(bomb.len() < 1_000_000, "{}", bomb.len());
    push_artifact(&reg, work, "skills/forms", "bomb", "forms", &bomb);
    let content = work.join("content-bomb");
    let sources = oci_sources(&content, &format!("{}/skills/forms:bomb", reg.host()), None);
    let problems = sources.initialize().await;
    assert!(
        problems[0].contains("more than 95000000 bytes"),
        "{problems:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pushed_skill_is_reproducible_signed_and_served_by_another_replica() {
    let Some(bin) = require_service(Service::Registry, "oci_push") else {
        return;
    };
    if require_service(Service::Skopeo, "oci_push").is_none() {
        return;
    }
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let reg = Registry::start(&bin, &work.join("registry"));
    let (key, public) = key_pair(work, "team");
    let skill = work.join("src/forms");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: forms\ndescription: Fill in tax forms.\nmetadata:\n  version: \"1.10\"\n---\n# Forms\n\nRun scripts/fill.py.\n",
    )
    .unwrap();
    std::fs::write(skill.join("scripts/fill.py"), "print('fill')\n").unwrap();
    let reference = format!("{}/skills/forms:1.10", reg.host());
    let push = |reference: &str, signed: bool| {
        let mut cmd = crate::common::bin();
        cmd.args(["push"]).arg(&skill).arg(reference);
        if signed {
            cmd.arg("--key").arg(&key);
        }
        String::from_utf8(succeed(&mut cmd)).unwrap()
    };
    let first = push(&reference, true);
    let digest = first
        .trim()
        .split('@')
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_owned();
    // Reproducible: the same folder, pushed again elsewhere, has the same digest.
    let again = push(&format!("{}/other/forms:x", reg.host()), false);
    assert!(again.contains(&digest), "{first} / {again}");
    // skopeo, an independent client, reads what we pushed: the index and its platforms.
    let raw = succeed(
        Command::new("skopeo")
            .args(["inspect", "--tls-verify=false", "--raw"])
            .arg(format!("docker://{reference}")),
    );
    assert_eq!(sha(&raw), digest);
    let index: serde_json::Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(index["artifactType"], "dev.toolhive.skills.v1");
    assert_eq!(index["manifests"].as_array().unwrap().len(), 2);
    let inspected = succeed(
        Command::new("skopeo")
            .args(["inspect", "--tls-verify=false"])
            .args(["--override-os", "linux", "--override-arch", "amd64"])
            .arg(format!("docker://{reference}")),
    );
    let inspected: serde_json::Value = serde_json::from_slice(&inspected).unwrap();
    assert_eq!(inspected["Labels"]["dev.toolhive.skills.name"], "forms");
    assert_eq!(inspected["Labels"]["dev.toolhive.skills.version"], "1.10");
    // Another replica verifies the signature and serves the same bytes, by digest too.
    for r in [
        reference.clone(),
        format!("{}/skills/forms@{digest}", reg.host()),
    ] {
        let content = work.join(format!("replica-{}", r.len()));
        let mut config = OciSourceConfig::new(&r);
        config.name = Some("forms".into());
        config.verify = Some(VerifyConfig {
            key: public.clone(),
        });
        let sources = oci_replica(config, &content, |_| None);
        let problems = sources.initialize().await;
        assert!(problems.is_empty(), "{problems:?}");
        let root = &sources.roots()[0].path;
        assert_eq!(
            std::fs::read_to_string(root.join("forms/scripts/fill.py")).unwrap(),
            "print('fill')\n"
        );
        assert!(
            std::fs::read_to_string(root.join("forms/SKILL.md"))
                .unwrap()
                .contains("Fill in tax forms.")
        );
        assert_eq!(
            sources.status()[0].commit_hash.as_deref(),
            Some(&digest[7..])
        );
    }
    // The unsigned copy is refused by a verifying replica.
    let mut config = OciSourceConfig::new(format!("{}/other/forms:x", reg.host()));
    config.name = Some("forms".into());
    config.verify = Some(VerifyConfig {
        key: public.clone(),
    });
    let sources = oci_replica(config, &work.join("unsigned"), |_| None);
    let problems = sources.initialize().await;
    assert!(problems[0].contains("unsigned"), "{problems:?}");
}
