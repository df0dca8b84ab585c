//! Tests: the lock file (`skills-mcp lock`, `--check`, `--update`) through the real binary, over
//! a real git repository whose branch moves and a real registry (Debian's `docker-registry`)
//! whose tag moves; `contentDigest` checked against a computation written here from ToolHive's
//! definition, not the engine's code.

use std::path::{Path, PathBuf};
use std::process::Output;

use sha2::{Digest as _, Sha256};
use tempfile::TempDir;

use crate::common::{Registry, Remote, Service, assert_exit, bin, require_service, stdout};

fn skill(name: &str, version: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: The {name} skill for {name} work.\nmetadata:\n  version: \"{version}\"\n---\n# {name}\n\nBody of {name}.\n"
    )
}

/// ToolHive's contentDigest of the files below `dir`, computed here: sorted paths; for each
/// `path`, NUL, the raw SHA-256 of its bytes, `\n`; the SHA-256 of all that.
fn toolhive_digest(dir: &Path) -> String {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_str().unwrap().to_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    files.sort();
    let mut framed = Vec::new();
    for (path, bytes) in files {
        framed.extend_from_slice(path.as_bytes());
        framed.push(0);
        framed.extend_from_slice(&Sha256::digest(&bytes));
        framed.push(b'\n');
    }
    let hex: String = Sha256::digest(&framed)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// A configuration with the given `sources:` lines and the content folder below `dir`.
fn config(dir: &Path, sources: &str) -> PathBuf {
    let file = dir.join("config.yaml");
    std::fs::write(
        &file,
        format!(
            "sources:\n  default_roots: false\n{sources}git:\n  content_dir: {}\n  timeout_seconds: 20\n",
            dir.join("content").display()
        ),
    )
    .unwrap();
    file
}

fn skills_mcp(config: &Path, args: &[&str]) -> Output {
    bin()
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .expect("run skills-mcp")
}

fn lock_yaml(path: &Path) -> serde_yaml::Value {
    serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn lock_check_catches_a_moved_git_branch_and_update_moves_the_pin() {
    let remote = Remote::new();
    let first = remote.commit(
        &[
            ("skills/alpha/SKILL.md", &skill("alpha", "1.0")),
            ("skills/alpha/scripts/run.sh", "echo alpha\n"),
            ("skills/beta/SKILL.md", &skill("beta", "2.10")),
        ],
        "first",
    );
    let tmp = TempDir::new().unwrap();
    let cfg = config(
        tmp.path(),
        &format!("  repos:\n    - url: {}\n      name: team\n", remote.url()),
    );
    // No lock file yet: --check is a usage error (2), naming the file.
    let out = skills_mcp(&cfg, &["lock", "--check"]);
    assert_exit(&out, 2);
    assert!(
        crate::common::stderr(&out).contains("skills.lock"),
        "{out:?}"
    );

    let out = skills_mcp(&cfg, &["lock"]);
    assert_exit(&out, 0);
    // Beside the --config file by default.
    let lock = tmp.path().join("skills.lock");
    let text = std::fs::read_to_string(&lock).unwrap();
    let yaml = lock_yaml(&lock);
    let entry = &yaml["sources"][0];
    assert_eq!(entry["name"], "team");
    assert_eq!(entry["kind"], "git");
    assert_eq!(entry["digest"].as_str(), Some(first.as_str()));
    assert!(
        entry["resolvedReference"]
            .as_str()
            .unwrap()
            .ends_with(&format!("@{first}")),
        "{text}"
    );
    let skills = entry["skills"].as_sequence().unwrap();
    assert_eq!(skills.len(), 2, "{text}");
    assert_eq!(skills[0]["name"], "alpha");
    assert_eq!(
        skills[0]["contentDigest"].as_str(),
        Some(toolhive_digest(&remote.work().join("skills/alpha")).as_str()),
        "{text}"
    );
    assert_eq!(skills[1]["name"], "beta");
    assert_eq!(skills[1]["version"], "2.10");
    // Deterministic: locking the same state again writes the same bytes.
    assert_exit(&skills_mcp(&cfg, &["lock"]), 0);
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), text);

    let out = skills_mcp(&cfg, &["lock", "--check"]);
    assert_exit(&out, 0);

    // The branch moves: --check exits 1 naming the source and the changed skill.
    let second = remote.commit(&[("skills/beta/SKILL.md", &skill("beta", "2.11"))], "beta");
    let out = skills_mcp(&cfg, &["lock", "--check"]);
    assert_exit(&out, 1);
    let report = stdout(&out);
    assert!(report.contains("source team: moved from"), "{report}");
    assert!(report.contains(&second), "{report}");
    assert!(report.contains("skill beta: content"), "{report}");
    assert!(!report.contains("skill alpha"), "{report}");
    // --check wrote nothing.
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), text);

    // An unknown name is a usage error; --update NAME moves that pin.
    assert_exit(&skills_mcp(&cfg, &["lock", "--update", "nosuch"]), 2);
    assert_exit(&skills_mcp(&cfg, &["lock", "--update", "team"]), 0);
    assert_eq!(
        lock_yaml(&lock)["sources"][0]["digest"].as_str(),
        Some(second.as_str())
    );
    assert_exit(&skills_mcp(&cfg, &["lock", "--check"]), 0);

    // A hand-edited lock (a skill's digest that no content has) is drift too, named.
    let edited = std::fs::read_to_string(&lock).unwrap().replacen(
        lock_yaml(&lock)["sources"][0]["skills"][0]["contentDigest"]
            .as_str()
            .unwrap(),
        "sha256:0000000000000000000000000000000000000000000000000000000000000000",
        1,
    );
    let other = tmp.path().join("other.lock");
    std::fs::write(&other, edited).unwrap();
    let out = skills_mcp(
        &cfg,
        &["lock", "--check", "--lock", other.to_str().unwrap()],
    );
    assert_exit(&out, 1);
    assert!(
        stdout(&out).contains("source team: skill alpha: content"),
        "{out:?}"
    );
}

#[test]
fn lock_check_catches_a_moved_oci_tag() {
    let Some(bin_dir) = require_service(Service::Registry, "lock_oci_tag") else {
        return;
    };
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let reg = Registry::start(&bin_dir, &work.join("registry"));
    let folder = work.join("src/forms");
    std::fs::create_dir_all(&folder).unwrap();
    let reference = format!("{}/skills/forms:1", reg.host());
    let push = |version: &str| {
        std::fs::write(folder.join("SKILL.md"), skill("forms", version)).unwrap();
        let out = bin()
            .arg("push")
            .arg(&folder)
            .arg(&reference)
            .output()
            .unwrap();
        assert_exit(&out, 0);
        let line = stdout(&out);
        line.trim().split('@').nth(1).unwrap().to_owned()
    };
    let first = push("1.0");
    let cfg = config(work, &format!("  oci:\n    - ref: {reference}\n"));
    assert_exit(&skills_mcp(&cfg, &["lock"]), 0);
    let lock = work.join("skills.lock");
    let yaml = lock_yaml(&lock);
    let entry = &yaml["sources"][0];
    assert_eq!(entry["name"], "forms");
    assert_eq!(entry["kind"], "oci");
    assert_eq!(entry["digest"].as_str(), Some(first.as_str()));
    assert_eq!(entry["version"], "1.0");
    // The artifact's one skill: its digest on the entry, as ToolHive writes it, over the
    // files pushed (the folder as served).
    assert_eq!(
        entry["contentDigest"].as_str(),
        Some(toolhive_digest(&folder).as_str())
    );
    assert_exit(&skills_mcp(&cfg, &["lock", "--check"]), 0);

    // The tag moves to another artifact.
    let second = push("1.1");
    assert_ne!(first, second);
    let out = skills_mcp(&cfg, &["lock", "--check"]);
    assert_exit(&out, 1);
    let report = stdout(&out);
    assert!(
        report.contains(&format!(
            "source forms: moved from {first} (locked) to {second}"
        )),
        "{report}"
    );
}

/// The skill paths `skills-mcp list --json` prints.
fn listed(config: &Path, extra: &[&str]) -> (Vec<String>, String) {
    let mut args = vec!["list", "--json"];
    args.extend_from_slice(extra);
    let out = skills_mcp(config, &args);
    assert_exit(&out, 0);
    fn paths(nodes: &serde_json::Value, out: &mut Vec<String>) {
        for node in nodes.as_array().into_iter().flatten() {
            if node["description"].as_str().is_some_and(|d| !d.is_empty()) {
                out.push(node["path"].as_str().unwrap_or_default().to_owned());
            }
            paths(&node["children"], out);
        }
    }
    let mut out_paths = Vec::new();
    paths(&crate::common::json(&out), &mut out_paths);
    out_paths.sort();
    (out_paths, crate::common::stderr(&out))
}

#[test]
fn rollback_pins_the_previous_commit_until_unpin() {
    let remote = Remote::new();
    let first = remote.commit(&[("skills/alpha/SKILL.md", &skill("alpha", "1"))], "a");
    let tmp = TempDir::new().unwrap();
    let cfg = config(
        tmp.path(),
        &format!("  repos:\n    - url: {}\n      name: team\n", remote.url()),
    );
    assert_eq!(listed(&cfg, &[]).0, ["alpha"]);
    let second = remote.commit(&[("skills/gamma/SKILL.md", &skill("gamma", "1"))], "g");
    // `lock` fetches, as a refresh does: the source moves to the second commit.
    assert_exit(&skills_mcp(&cfg, &["lock"]), 0);
    assert_eq!(listed(&cfg, &[]).0, ["alpha", "gamma"]);

    assert_exit(&skills_mcp(&cfg, &["sources", "rollback", "nosuch"]), 2);
    let out = skills_mcp(&cfg, &["sources", "rollback", "team"]);
    assert_exit(&out, 0);
    assert!(stdout(&out).contains(&first[..12]), "{out:?}");
    assert_eq!(listed(&cfg, &[]).0, ["alpha"]);
    let info = crate::common::json(&skills_mcp(&cfg, &["sources", "list", "--json"]));
    assert_eq!(info[0]["name"], "team");
    assert_eq!(info[0]["revision"].as_str(), Some(first.as_str()));
    assert_eq!(info[0]["pinned"].as_str(), Some(first.as_str()));
    assert_eq!(info[0]["previous"].as_str(), Some(second.as_str()));

    // A refresh (here `lock`, which fetches) honours the pin and reports the moved remote.
    let out = skills_mcp(&cfg, &["lock"]);
    assert_exit(&out, 0);
    assert!(
        crate::common::stderr(&out).contains("the remote moved to"),
        "{out:?}"
    );
    assert_eq!(
        lock_yaml(&tmp.path().join("skills.lock"))["sources"][0]["digest"].as_str(),
        Some(first.as_str())
    );
    assert_eq!(listed(&cfg, &[]).0, ["alpha"]);

    let out = skills_mcp(&cfg, &["sources", "unpin", "team"]);
    assert_exit(&out, 0);
    assert!(stdout(&out).contains("unpinned"), "{out:?}");
    assert_exit(&skills_mcp(&cfg, &["lock"]), 0);
    assert_eq!(listed(&cfg, &[]).0, ["alpha", "gamma"]);
    let info = crate::common::json(&skills_mcp(&cfg, &["sources", "list", "--json"]));
    assert_eq!(info[0]["revision"].as_str(), Some(second.as_str()));
    assert!(info[0].get("pinned").is_none(), "{info}");
}

#[test]
fn locked_sources_serve_the_locked_commit_and_refuse_content_the_lock_disagrees_with() {
    let remote = Remote::new();
    let first = remote.commit(
        &[
            ("skills/alpha/SKILL.md", &skill("alpha", "1")),
            ("skills/beta/SKILL.md", &skill("beta", "1")),
        ],
        "first",
    );
    let tmp = TempDir::new().unwrap();
    let repos = format!("  repos:\n    - url: {}\n      name: team\n", remote.url());
    let cfg = config(tmp.path(), &repos);
    assert_exit(&skills_mcp(&cfg, &["lock"]), 0);
    let lock = tmp.path().join("skills.lock");
    let locked_cfg = tmp.path().join("locked.yaml");
    std::fs::write(
        &locked_cfg,
        std::fs::read_to_string(&cfg).unwrap().replace(
            "sources:\n",
            &format!(
                "sources:\n  locked: true\n  lock_file: {}\n",
                lock.display()
            ),
        ),
    )
    .unwrap();

    // The branch moves; `lock --check` (which fetches) leaves the new commit on disk.
    let second = remote.commit(
        &[
            ("skills/beta/SKILL.md", &skill("beta", "2")),
            ("skills/gamma/SKILL.md", &skill("gamma", "1")),
        ],
        "second",
    );
    assert_exit(&skills_mcp(&cfg, &["lock", "--check"]), 1);
    assert_eq!(listed(&cfg, &[]).0, ["alpha", "beta", "gamma"]);
    // Locked: the locked commit is served again, not the one on disk.
    let (skills, _) = listed(&locked_cfg, &[]);
    assert_eq!(skills, ["alpha", "beta"]);
    let info = crate::common::json(&skills_mcp(&locked_cfg, &["sources", "list", "--json"]));
    assert_eq!(info[0]["revision"].as_str(), Some(first.as_str()));
    // `serve --locked` on the unlocked configuration: the same, and the moved branch is
    // reported, not followed.
    let out = bin()
        .arg("--config")
        .arg(&cfg)
        .args(["serve", "--locked"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = crate::common::stderr(&out);
    assert!(
        err.contains(&format!("the remote moved to {}", &second[..12])),
        "{err}"
    );
    assert!(err.contains("the lock file pins it"), "{err}");

    // A lock that disagrees with the content: beta's digest edited. beta is refused (a located
    // error naming it and the lock file), alpha keeps serving.
    let text = std::fs::read_to_string(&lock).unwrap();
    let beta = lock_yaml(&lock)["sources"][0]["skills"][1]["contentDigest"]
        .as_str()
        .unwrap()
        .to_owned();
    std::fs::write(
        &lock,
        text.replace(
            &beta,
            "sha256:1111111111111111111111111111111111111111111111111111111111111111",
        ),
    )
    .unwrap();
    let (skills, err) = listed(&locked_cfg, &[]);
    assert_eq!(skills, ["alpha"], "{err}");
    assert!(err.contains("skill beta"), "{err}");
    assert!(
        err.contains("disagrees with the locked sha256:1111"),
        "{err}"
    );
    assert!(err.contains(&lock.display().to_string()), "{err}");
    // A lock without an entry for a configured source refuses to serve it locked.
    std::fs::write(&lock, "version: 1\nsources: []\n").unwrap();
    let out = skills_mcp(&locked_cfg, &["list"]);
    assert!(!out.status.success());
    assert!(
        crate::common::stderr(&out).contains("no entry for the git source \"team\""),
        "{out:?}"
    );
}

/// The hex of the SHA-256 of the index `serve --http` at `addr` answers now.
fn index_revision(addr: &str) -> String {
    let url = format!("http://{addr}/.well-known/agent-skills/index.json");
    let (status, _, body) = crate::index::get(&url, &[]);
    assert_eq!(status, 200, "{url}");
    Sha256::digest(&body)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn index_sources_are_locked_checked_served_locked_and_rolled_back() {
    // The publisher: a real `serve --http` over a folder, which picks up edits.
    let published = TempDir::new().unwrap();
    crate::common::write_files(
        published.path(),
        &[
            ("alpha/SKILL.md", &skill("alpha", "1")),
            ("beta/SKILL.md", &skill("beta", "1")),
            ("beta/scripts/run.sh", "echo 1\n"),
        ],
    );
    let a = crate::http::Server::start(published.path(), None, &[]);
    let first = index_revision(&a.addr);
    let sources = format!(
        "  indexes:\n    - {{url: \"http://{}/.well-known/agent-skills/index.json\", name: team}}\n",
        a.addr
    );
    let tmp = TempDir::new().unwrap();
    let cfg = config(tmp.path(), &sources);

    // `lock` records the index's digest and each skill's contentDigest over the files served.
    assert_exit(&skills_mcp(&cfg, &["lock"]), 0);
    let lock = tmp.path().join("skills.lock");
    let yaml = lock_yaml(&lock);
    let entry = &yaml["sources"][0];
    assert_eq!(entry["name"], "team");
    assert_eq!(entry["kind"], "index");
    assert_eq!(
        entry["digest"].as_str(),
        Some(&format!("sha256:{first}")[..])
    );
    for (i, name) in ["alpha", "beta"].iter().enumerate() {
        assert_eq!(entry["skills"][i]["name"].as_str(), Some(*name));
        assert_eq!(
            entry["skills"][i]["contentDigest"].as_str(),
            Some(toolhive_digest(&published.path().join(name)).as_str()),
            "{name}"
        );
    }
    assert_exit(&skills_mcp(&cfg, &["lock", "--check"]), 0);

    // beta's archive moves on the publisher: the index moves with it.
    std::fs::write(published.path().join("beta/SKILL.md"), skill("beta", "2")).unwrap();
    let started = std::time::Instant::now();
    let second = loop {
        let now = index_revision(&a.addr);
        if now != first {
            break now;
        }
        assert!(
            started.elapsed().as_secs() < 30,
            "the publisher never reloaded"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let out = skills_mcp(&cfg, &["lock", "--check"]);
    assert_exit(&out, 1);
    let report = stdout(&out);
    assert!(
        report.contains(&format!(
            "source team: moved from sha256:{first} (locked) to sha256:{second}"
        )),
        "{report}"
    );
    assert!(
        report.contains("source team: skill beta: content"),
        "{report}"
    );
    assert!(!report.contains("skill alpha"), "{report}");

    // A fresh replica served locked: the index moved, so its entries are those of the current
    // index; alpha's entry kept its digest and serves, beta's moved and is refused by name.
    let replica = TempDir::new().unwrap();
    let replica_cfg = config(
        replica.path(),
        &format!("  lock_file: {}\n{sources}", lock.display()),
    );
    let out = bin()
        .arg("--config")
        .arg(&replica_cfg)
        .args(["serve", "--locked"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = crate::common::stderr(&out);
    assert!(
        err.contains(&format!("the remote moved to {}", &second[..12])),
        "{err}"
    );
    assert!(
        err.contains("skill beta") && err.contains("disagrees with the locked"),
        "{err}"
    );
    let locked_cfg = replica.path().join("locked.yaml");
    std::fs::write(
        &locked_cfg,
        std::fs::read_to_string(&replica_cfg)
            .unwrap()
            .replace("sources:\n", "sources:\n  locked: true\n"),
    )
    .unwrap();
    let (skills, err) = listed(&locked_cfg, &[]);
    assert_eq!(skills, ["alpha"], "{err}");
    // The first replica still has the locked index's snapshot: served whole.
    let first_locked = tmp.path().join("locked.yaml");
    std::fs::write(
        &first_locked,
        std::fs::read_to_string(&cfg).unwrap().replace(
            "sources:\n",
            &format!(
                "sources:\n  locked: true\n  lock_file: {}\n",
                lock.display()
            ),
        ),
    )
    .unwrap();
    let (skills, err) = listed(&first_locked, &[]);
    assert_eq!(skills, ["alpha", "beta"], "{err}");
    let info = crate::common::json(&skills_mcp(&first_locked, &["sources", "list", "--json"]));
    assert_eq!(info[0]["revision"].as_str(), Some(first.as_str()));

    // Rollback and unpin (the unlocked configuration, sharing the first replica's folder, which
    // the locked listing just moved back to the first index: `lock` follows the index again).
    assert_exit(&skills_mcp(&cfg, &["lock"]), 0);
    let info = crate::common::json(&skills_mcp(&cfg, &["sources", "list", "--json"]));
    assert_eq!(
        info[0]["revision"].as_str(),
        Some(second.as_str()),
        "{info}"
    );
    let out = skills_mcp(&cfg, &["sources", "rollback", "team"]);
    assert_exit(&out, 0);
    let info = crate::common::json(&skills_mcp(&cfg, &["sources", "list", "--json"]));
    assert_eq!(info[0]["revision"].as_str(), Some(first.as_str()), "{info}");
    assert_eq!(info[0]["pinned"].as_str(), Some(first.as_str()), "{info}");
    // A refresh (`lock` fetches) honours the pin and reports the moved index.
    let out = skills_mcp(&cfg, &["lock"]);
    assert_exit(&out, 0);
    assert!(
        crate::common::stderr(&out).contains("the remote moved to"),
        "{out:?}"
    );
    assert_eq!(
        lock_yaml(&lock)["sources"][0]["digest"].as_str(),
        Some(&format!("sha256:{first}")[..])
    );
    assert_exit(&skills_mcp(&cfg, &["sources", "unpin", "team"]), 0);
    assert_exit(&skills_mcp(&cfg, &["lock"]), 0);
    assert_eq!(
        lock_yaml(&lock)["sources"][0]["digest"].as_str(),
        Some(&format!("sha256:{second}")[..])
    );
    assert!(!a.log().contains("panicked"), "{}", a.log());
}
