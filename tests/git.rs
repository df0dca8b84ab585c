//! Tests: git sources, with real repositories in temp dirs (a bare repository as the `file://`
//! remote, or served over dumb HTTP by a tiny local server to check how a token travels).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use skills_mcp::sources::{
    GitConfig, GitSourceConfig, LocalSourceConfig, SourceConfig, Sources, reindex_fn,
};
use tempfile::TempDir;

use crate::common::{Remote, git};

fn skill(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n\nBody of {name}.\n")
}

fn git_config(content: &Path) -> GitConfig {
    GitConfig {
        content_dir: content.to_path_buf(),
        timeout_seconds: 30,
    }
}

fn sync_for(url: &str, content: &Path) -> Arc<Sources> {
    Arc::new(
        Sources::new(
            &[SourceConfig::Git(GitSourceConfig::new(url))],
            &git_config(content),
            |_| None,
        )
        .unwrap(),
    )
}

/// A reindex callback that counts `SKILL.md` files below each root and counts its calls.
fn counting_reindex(sync: &Sources) -> Arc<AtomicUsize> {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    sync.set_reindex(reindex_fn(move |roots| {
        c.fetch_add(1, Ordering::SeqCst);
        async move { Ok(roots.iter().map(|r| count_named(&r.path, "SKILL.md")).sum()) }
    }));
    calls
}

fn count_named(dir: &Path, name: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                count_named(&p, name)
            } else {
                usize::from(e.file_name() == name)
            }
        })
        .sum()
}

fn root(sync: &Sources) -> PathBuf {
    sync.roots()[0].path.clone()
}

/// Every file below `dir` (following nothing), as (path, bytes).
fn all_files(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            all_files(&e.path(), out);
        } else if ft.is_file() {
            out.push((e.path(), std::fs::read(e.path()).unwrap_or_default()));
        }
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn clone_then_refresh_picks_up_a_pushed_skill() {
    let remote = Remote::new();
    let first = remote.commit(&[("skills/alpha/SKILL.md", &skill("alpha"))], "alpha");
    let content = TempDir::new().unwrap();
    let sync = sync_for(&remote.url(), content.path());
    let calls = counting_reindex(&sync);

    assert!(sync.initialize().await.is_empty());
    // The spec's layout: the repository's `skills/` folder is the root.
    let root = root(&sync);
    assert!(root.join("alpha/SKILL.md").is_file(), "{}", root.display());
    assert!(!root.join(".git").exists());
    assert_eq!(
        sync.status()[0].commit_hash.as_deref(),
        Some(first.as_str())
    );

    // Nothing moved: the periodic check does not reindex.
    let same = sync.refresh_if_changed().await;
    assert!(same.success && !same.changed, "{same:?}");
    assert_eq!(same.files_changed, Some(0));
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    let second = remote.commit(
        &[
            ("skills/beta/SKILL.md", &skill("beta")),
            ("README.md", "outside the skills folder\n"),
        ],
        "beta",
    );
    let response = sync.force_refresh().await;
    assert!(response.success, "{response:?}");
    assert!(response.changed);
    assert_eq!(response.commit_hash.as_deref(), Some(second.as_str()));
    // Only files below the served folder count.
    assert_eq!(response.files_changed, Some(1));
    assert_eq!(response.skills_reindexed, Some(2));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // The root path is stable and now leads to the new commit.
    assert_eq!(sync.roots()[0].path, root);
    assert!(root.join("beta/SKILL.md").is_file());

    // The spec's git-mode response.
    let json = serde_json::to_value(&response).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in [
        "success",
        "commit_hash",
        "files_changed",
        "skills_reindexed",
        "last_sync",
    ] {
        assert!(keys.contains(&key), "{key} missing from {json}");
    }
    let last_sync = json["last_sync"].as_str().unwrap();
    assert_eq!(last_sync.len(), 24, "{last_sync}");
    assert!(last_sync.ends_with('Z') && last_sync.as_bytes()[10] == b'T');

    // A deletion upstream disappears here too; the periodic check reindexes on its own.
    remote.remove("skills/alpha", "drop alpha");
    let periodic = sync.refresh_if_changed().await;
    assert!(periodic.success && periodic.changed, "{periodic:?}");
    assert_eq!(periodic.skills_reindexed, Some(1));
    assert!(!root.join("alpha").exists());
    assert_eq!(calls.load(Ordering::SeqCst), 2);

    // A restart starts from the cached snapshot.
    let again = sync_for(&remote.url(), content.path());
    assert!(again.initialize().await.is_empty());
    assert!(again.roots()[0].path.join("beta/SKILL.md").is_file());
}

#[tokio::test]
async fn periodic_timer_refreshes_by_itself() {
    let remote = Remote::new();
    remote.commit(&[("a/SKILL.md", &skill("a"))], "a");
    let content = TempDir::new().unwrap();
    let sync = sync_for(&remote.url(), content.path());
    let calls = counting_reindex(&sync);
    sync.initialize().await;
    // No `skills/` folder: the repository root is served.
    assert!(root(&sync).join("a/SKILL.md").is_file());

    let timer = sync.spawn_periodic(Duration::from_millis(200));
    remote.commit(&[("b/SKILL.md", &skill("b"))], "b");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !root(&sync).join("b/SKILL.md").is_file() || calls.load(Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "the timer never picked up the commit"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    timer.abort();
}

#[tokio::test]
async fn force_push_is_followed() {
    let remote = Remote::new();
    remote.commit(&[("skills/a/SKILL.md", &skill("a"))], "a");
    remote.commit(&[("skills/b/SKILL.md", &skill("b"))], "b");
    let content = TempDir::new().unwrap();
    let sync = sync_for(&remote.url(), content.path());
    sync.initialize().await;
    assert!(root(&sync).join("b/SKILL.md").is_file());

    // History rewritten upstream: b is gone, c replaces it.
    git(&remote.work(), &["reset", "--quiet", "--hard", "HEAD~1"]);
    let rewritten = remote.commit(&[("skills/c/SKILL.md", &skill("c"))], "c instead of b");
    let response = sync.force_refresh().await;
    assert!(response.success, "{response:?}");
    assert_eq!(response.commit_hash.as_deref(), Some(rewritten.as_str()));
    assert_eq!(response.files_changed, Some(2)); // b removed, c added
    assert!(root(&sync).join("c/SKILL.md").is_file());
    assert!(!root(&sync).join("b").exists());
}

#[tokio::test]
async fn damaged_checkouts_are_recovered() {
    let remote = Remote::new();
    remote.commit(&[("skills/a/SKILL.md", &skill("a"))], "a");
    let content = TempDir::new().unwrap();
    let sync = sync_for(&remote.url(), content.path());
    sync.initialize().await;
    let dir = sync.checkout_dirs()[0].clone();
    let repo = dir.join("repo.git");
    assert!(repo.join("HEAD").is_file());

    // 1. The repository deleted (the `.git` of a working copy).
    std::fs::remove_dir_all(&repo).unwrap();
    let c1 = remote.commit(&[("skills/b/SKILL.md", &skill("b"))], "b");
    let r = sync.force_refresh().await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.commit_hash.as_deref(), Some(c1.as_str()));
    assert!(root(&sync).join("b/SKILL.md").is_file());

    // 2. Garbage where git keeps its state.
    std::fs::write(repo.join("HEAD"), b"\0\0 not a ref").unwrap();
    let c2 = remote.commit(&[("skills/c/SKILL.md", &skill("c"))], "c");
    let r = sync.force_refresh().await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.commit_hash.as_deref(), Some(c2.as_str()));
    assert!(root(&sync).join("c/SKILL.md").is_file());

    // 3. Objects lost (a broken object store): the next commit cannot be checked out from it.
    for sub in ["objects/pack", "objects"] {
        for e in std::fs::read_dir(repo.join(sub)).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() && name.len() == 2 {
                std::fs::remove_dir_all(e.path()).unwrap();
            } else if name.starts_with("pack-") {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
    }
    let c3 = remote.commit(&[("skills/d/SKILL.md", &skill("d"))], "d");
    let r = sync.force_refresh().await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.commit_hash.as_deref(), Some(c3.as_str()));
    assert!(root(&sync).join("d/SKILL.md").is_file());

    // 4. The served snapshot deleted: made again, same commit.
    let served = std::fs::canonicalize(root(&sync)).unwrap(); // trees/<commit>/skills
    std::fs::remove_dir_all(served.parent().unwrap()).unwrap();
    let r = sync.force_refresh().await;
    assert!(r.success, "{r:?}");
    assert!(root(&sync).join("d/SKILL.md").is_file());

    // No temporary folder is left behind, and only finished snapshots exist.
    for e in std::fs::read_dir(dir.join("trees")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(name.len() == 40 || name.len() == 64, "leftover {name}");
    }
}

#[tokio::test]
async fn network_down_serves_the_cache() {
    let remote = Remote::new();
    let first = remote.commit(&[("skills/a/SKILL.md", &skill("a"))], "a");
    let content = TempDir::new().unwrap();
    sync_for(&remote.url(), content.path()).initialize().await;

    // The remote vanishes (as a server would behind a dead network); the server restarts.
    let away = remote.tmp.path().join("away.git");
    std::fs::rename(remote.bare(), &away).unwrap();
    let sync = sync_for(&remote.url(), content.path());
    let calls = counting_reindex(&sync);
    let problems = sync.initialize().await;
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("cached"), "{}", problems[0]);
    assert!(root(&sync).join("a/SKILL.md").is_file());

    // A refresh during the outage fails, keeps serving, and still reindexes.
    let r = sync.force_refresh().await;
    assert!(!r.success);
    assert!(
        r.message.as_deref().unwrap_or("").contains("fetching"),
        "{r:?}"
    );
    assert_eq!(r.commit_hash.as_deref(), Some(first.as_str()));
    assert_eq!(r.skills_reindexed, Some(1));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(sync.status()[0].error.is_some());
    assert!(root(&sync).join("a/SKILL.md").is_file());

    // Back up: the next refresh catches up.
    std::fs::rename(&away, remote.bare()).unwrap();
    let next = remote.commit(&[("skills/b/SKILL.md", &skill("b"))], "b");
    let r = sync.force_refresh().await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.commit_hash.as_deref(), Some(next.as_str()));
    assert!(sync.status()[0].error.is_none());
}

#[tokio::test]
async fn failed_first_clone_leaves_the_other_roots_served() {
    let tmp = TempDir::new().unwrap();
    let local = tmp.path().join("local");
    std::fs::create_dir_all(local.join("mine")).unwrap();
    std::fs::write(local.join("mine/SKILL.md"), skill("mine")).unwrap();
    let missing = tmp.path().join("later.git");
    let url = format!("file://{}", missing.display());
    let sync = Arc::new(
        Sources::new(
            &[
                SourceConfig::Local(LocalSourceConfig {
                    path: local.clone(),
                }),
                SourceConfig::Git(GitSourceConfig::new(&url)),
            ],
            &git_config(&tmp.path().join("content")),
            |_| None,
        )
        .unwrap(),
    );
    let problems = sync.initialize().await;
    assert_eq!(problems.len(), 1);
    assert!(problems[0].contains("could not clone"), "{}", problems[0]);
    let roots = sync.roots();
    assert_eq!(roots.len(), 2);
    assert_eq!(roots[0].path, local);
    assert!(!roots[1].path.exists());
    // Nothing half-made is left.
    let dir = sync.checkout_dirs()[0].clone();
    assert!(!dir.join("repo.git").exists());

    // The repository appears; a refresh clones it and the same root path now serves it.
    let tmp_work = TempDir::new().unwrap();
    git(tmp.path(), &["init", "--quiet", "--bare", "later.git"]);
    git(tmp_work.path(), &["init", "--quiet", "w"]);
    let w = tmp_work.path().join("w");
    std::fs::write(w.join("SKILL.md"), skill("later")).unwrap();
    git(&w, &["add", "-A"]);
    git(&w, &["commit", "--quiet", "-m", "x"]);
    git(
        &w,
        &["push", "--quiet", missing.to_str().unwrap(), "HEAD:main"],
    );
    let r = sync.force_refresh().await;
    assert!(r.success, "{r:?}");
    assert!(roots[1].path.join("SKILL.md").is_file());
    // The path is known without any I/O (configuration resolves roots with it).
    let cfg = GitSourceConfig::new(&url);
    assert_eq!(
        skills_mcp::sources::root_path(&git_config(&tmp.path().join("content")), &cfg),
        roots[1].path
    );
}

#[tokio::test]
async fn missing_branch_and_subpath_are_clear_errors() {
    let remote = Remote::new();
    remote.commit(&[("docs/x/SKILL.md", &skill("x"))], "x");
    let content = TempDir::new().unwrap();
    let mut on_dev = GitSourceConfig::new(remote.url());
    on_dev.branch = "dev".into();
    let mut sub = GitSourceConfig::new(remote.url());
    sub.subpath = Some("nope".into());
    let mut good = GitSourceConfig::new(remote.url());
    good.subpath = Some("docs".into());
    let sync = Sources::new(
        &[on_dev, sub, good].map(SourceConfig::Git),
        &git_config(content.path()),
        |_| None,
    )
    .unwrap();
    let problems = sync.initialize().await;
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("dev"), "{}", problems[0]);
    assert!(problems[1].contains("\"nope\""), "{}", problems[1]);
    assert!(sync.roots()[2].path.join("x/SKILL.md").is_file());

    // Several git sources: the response lists each.
    let sync = Arc::new(sync);
    let r = sync.force_refresh().await;
    assert!(!r.success);
    assert_eq!(r.sources.len(), 3);
    assert!(r.sources[2].error.is_none() && r.sources[2].commit_hash.is_some());
}

#[tokio::test]
async fn refreshes_during_one_share_the_next() {
    let remote = Remote::new();
    remote.commit(&[("a/SKILL.md", &skill("a"))], "a");
    let content = TempDir::new().unwrap();
    let sync = sync_for(&remote.url(), content.path());
    sync.initialize().await;
    let started = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Notify::new());
    let calls = Arc::new(AtomicUsize::new(0));
    let (s, r, c) = (started.clone(), release.clone(), calls.clone());
    sync.set_reindex(reindex_fn(move |_| {
        let (s, r, c) = (s.clone(), r.clone(), c.clone());
        async move {
            let n = c.fetch_add(1, Ordering::SeqCst) + 1;
            s.notify_one();
            r.notified().await;
            Ok(n)
        }
    }));
    let spawn = |force: bool| {
        let sync = sync.clone();
        tokio::spawn(async move {
            if force {
                sync.force_refresh().await
            } else {
                sync.refresh_if_changed().await
            }
        })
    };

    let first = spawn(true);
    started.notified().await;
    // Arriving during the first refresh: a forced one and a periodic check join the next
    // refresh (nobody is turned away).
    let second = spawn(true);
    let periodic = spawn(false);
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
    release.notify_one();
    let first = first.await.unwrap();
    assert!(
        first.success && first.skills_reindexed == Some(1),
        "{first:?}"
    );
    // The queued refresh is forced (the second caller forced it): it reindexes.
    started.notified().await;
    release.notify_one();
    let (second, periodic) = (second.await.unwrap(), periodic.await.unwrap());
    assert!(
        second.success && second.skills_reindexed == Some(2),
        "{second:?}"
    );
    assert_eq!(second, periodic);
    assert_eq!(calls.load(Ordering::SeqCst), 2);

    // Idle again: the next caller starts a refresh of its own.
    let third = spawn(true);
    started.notified().await;
    release.notify_one();
    assert_eq!(third.await.unwrap().skills_reindexed, Some(3));
}

/// A static file server for one folder (git's dumb HTTP protocol), recording the `Authorization`
/// header of every request; `fail` makes it answer 500 to everything.
struct DumbHttp {
    port: u16,
    auth: Arc<Mutex<Vec<String>>>,
    fail: Arc<AtomicBool>,
}

impl DumbHttp {
    fn serve(dir: PathBuf) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let auth = Arc::new(Mutex::new(Vec::new()));
        let fail = Arc::new(AtomicBool::new(false));
        let (a, f) = (auth.clone(), fail.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                if reader.read_line(&mut request).is_err() {
                    continue;
                }
                let mut header = String::new();
                while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                    if let Some(v) = header
                        .to_ascii_lowercase()
                        .starts_with("authorization:")
                        .then(|| header[14..].trim().to_owned())
                    {
                        a.lock().unwrap().push(v);
                    }
                    header.clear();
                }
                let path = request.split_whitespace().nth(1).unwrap_or("/");
                let path = path.split('?').next().unwrap().trim_start_matches('/');
                let file = dir.join(path);
                let (status, body) = if f.load(Ordering::SeqCst) {
                    ("500 Internal Server Error", Vec::new())
                } else if !path.contains("..") && file.is_file() {
                    ("200 OK", std::fs::read(&file).unwrap())
                } else {
                    ("404 Not Found", Vec::new())
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(&body);
                let _ = stream.flush();
                let mut rest = Vec::new();
                let _ = stream.set_read_timeout(Some(Duration::from_millis(10)));
                let _ = reader.read_to_end(&mut rest);
            }
        });
        Self { port, auth, fail }
    }
}

#[tokio::test]
async fn a_token_never_shows() {
    const TOKEN: &str = "ghp_FAKEtoken0123456789SECRET";
    let remote = Remote::new();
    remote.commit(&[("skills/a/SKILL.md", &skill("a"))], "a");
    let server = DumbHttp::serve(remote.tmp.path().to_path_buf());
    let url = format!("http://127.0.0.1:{}/remote.git", server.port);
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{TOKEN}"));
    let content = TempDir::new().unwrap();
    let mut source = GitSourceConfig::new(&url);
    source.token_env = Some("MY_SKILLS_TOKEN".into());
    let sync = Arc::new(
        Sources::new(
            &[SourceConfig::Git(source)],
            &git_config(content.path()),
            |k| (k == "MY_SKILLS_TOKEN").then(|| TOKEN.to_owned()),
        )
        .unwrap(),
    );

    // What `ps` would show: the command line carries no secret; the environment carries the
    // header, scoped to the source's origin.
    let cmd = sync.fetch_command(0).unwrap();
    let argv: Vec<String> = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    for a in &argv {
        assert!(
            !a.contains(TOKEN) && !a.contains(&basic),
            "secret in argv: {argv:?}"
        );
    }
    let env: Vec<(String, String)> = cmd
        .get_envs()
        .filter_map(|(k, v)| {
            Some((
                k.to_string_lossy().into_owned(),
                v?.to_string_lossy().into_owned(),
            ))
        })
        .collect();
    let key = env
        .iter()
        .find(|(_, v)| v.contains(&basic))
        .map(|(k, _)| k.clone());
    let key = key.expect("the header is in the environment");
    let n = key.strip_prefix("GIT_CONFIG_VALUE_").unwrap();
    let scoped = format!("http.http://127.0.0.1:{}/.extraHeader", server.port);
    assert!(
        env.contains(&(format!("GIT_CONFIG_KEY_{n}"), scoped)),
        "{env:?}"
    );
    assert!(env.contains(&("GIT_TERMINAL_PROMPT".into(), "0".into())));
    assert!(!format!("{sync:?}").contains(TOKEN));

    // A real clone over HTTP with the header.
    let problems = sync.initialize().await;
    assert!(problems.is_empty(), "{problems:?}");
    assert!(root(&sync).join("a/SKILL.md").is_file());
    assert!(
        server
            .auth
            .lock()
            .unwrap()
            .iter()
            .any(|h| *h == format!("Basic {basic}")),
        "the server never saw the token"
    );

    // A failing remote: the error names the problem, never the secret.
    server.fail.store(true, Ordering::SeqCst);
    let r = sync.force_refresh().await;
    assert!(!r.success);
    let text = serde_json::to_string(&r).unwrap() + &format!("{:?}", sync.status());
    assert!(text.contains("127.0.0.1"), "{text}");
    assert!(!text.contains(TOKEN) && !text.contains(&basic), "{text}");

    // Nothing on disk holds it (`.git/config` included).
    let mut files = Vec::new();
    all_files(content.path(), &mut files);
    assert!(files.iter().any(|(p, _)| p.ends_with("repo.git/config")));
    for (path, bytes) in &files {
        assert!(
            !contains(bytes, TOKEN) && !contains(bytes, &basic),
            "secret in {}",
            path.display()
        );
    }
}

#[tokio::test]
async fn credentials_in_the_url_move_to_the_header() {
    const SECRET: &str = "hunter2-not-in-ps";
    let remote = Remote::new();
    remote.commit(&[("x/SKILL.md", &skill("x"))], "x");
    let server = DumbHttp::serve(remote.tmp.path().to_path_buf());
    let url = format!("http://alice:{SECRET}@127.0.0.1:{}/remote.git", server.port);
    let content = TempDir::new().unwrap();
    let sync = sync_for(&url, content.path());
    let cmd = sync.fetch_command(0).unwrap();
    assert!(
        cmd.get_args()
            .all(|a| !a.to_string_lossy().contains(SECRET))
    );
    assert!(sync.initialize().await.is_empty());
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("alice:{SECRET}"));
    assert!(
        server
            .auth
            .lock()
            .unwrap()
            .contains(&format!("Basic {basic}"))
    );
    let label = &sync.status()[0].source;
    assert!(!label.contains(SECRET), "{label}");
    let mut files = Vec::new();
    all_files(content.path(), &mut files);
    for (path, bytes) in &files {
        assert!(!contains(bytes, SECRET), "secret in {}", path.display());
    }
    // Without any token the machine's credential helper is left alone: no header at all.
    let plain = sync_for(
        &format!("http://127.0.0.1:{}/remote.git", server.port),
        content.path(),
    );
    let cmd = plain.fetch_command(0).unwrap();
    assert!(
        cmd.get_envs()
            .all(|(k, _)| !k.to_string_lossy().starts_with("GIT_CONFIG_KEY"))
    );
}

#[test]
fn source_configuration() {
    let yaml = "- url: https://example.invalid/a.git\n  subpath: skills\n- url: file:///r.git\n  branch: dev\n  token_env: OTHER\n";
    let sources: Vec<GitSourceConfig> = serde_yaml::from_str(yaml).unwrap();
    assert_eq!(sources[0].branch, "main");
    assert_eq!(sources[0].subpath.as_deref(), Some("skills"));
    assert_eq!(sources[1].branch, "dev");
    assert_eq!(sources[1].token_env(), "OTHER");
    assert_eq!(sources[0].token_env(), "GITHUB_TOKEN");
    for bad in [
        "- {}\n",
        "- url: ''\n",
        "- url: a\n  subpath: ../x\n",
        "- url: a\n  subpath: /abs\n",
        "- url: a\n  branch: '-x'\n",
        "- url: a\n  branch: 'a b'\n",
        "- url: '--upload-pack=x'\n",
    ] {
        assert!(
            serde_yaml::from_str::<Vec<GitSourceConfig>>(bad).is_err(),
            "{bad}"
        );
    }
    let env = |k: &str| match k {
        "SKILLS_REPO" => Some("file:///x.git".to_owned()),
        "SKILLS_BRANCH" => Some("prod".to_owned()),
        _ => None,
    };
    let Some(SourceConfig::Git(g)) = SourceConfig::from_env(env) else {
        panic!("SKILLS_REPO gives a git source")
    };
    assert_eq!(
        (g.url.as_str(), g.branch.as_str()),
        ("file:///x.git", "prod")
    );
    assert!(SourceConfig::from_env(|_| None).is_none());

    let d = GitConfig::default();
    assert!(d.content_dir().ends_with(".skills-mcp/content"));
    // The same repository twice is refused; two branches of it are two sources.
    let a = GitSourceConfig::new("file:///x.git");
    let mut b = a.clone();
    assert!(Sources::new(&[a.clone(), b.clone()].map(SourceConfig::Git), &d, |_| None).is_err());
    b.branch = "other".into();
    let two = Sources::new(&[a, b].map(SourceConfig::Git), &d, |_| None).unwrap();
    let dirs = two.checkout_dirs();
    assert_ne!(dirs[0], dirs[1]);
    assert!(
        dirs[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("x-")
    );
}

/// A hierarchical-free Agent Skill with a distinctive description.
fn agent_skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n{description}\n")
}

/// The real binary on stdio, serving `SKILLS_REPO`, with analytics to `endpoint`.
async fn start_server(
    home: &Path,
    repo_url: &str,
    endpoint: &str,
    interval_seconds: u64,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    use rmcp::ServiceExt as _;
    let config = home.join("config.yaml");
    std::fs::write(
        &config,
        format!(
            "refresh:\n  interval_seconds: {interval_seconds}\n  watch: false\nanalytics:\n  flush_interval_seconds: 1\nsources:\n  default_roots: false\n"
        ),
    )
    .unwrap();
    let mut cmd = crate::common::stdio_server(home);
    cmd.arg("--config")
        .arg(&config)
        .env("USER", "e2e")
        .env("SKILLS_REPO", repo_url)
        .env("ANALYTICS_ENDPOINT", endpoint)
        .env_remove("SKILLS_BRANCH")
        .env_remove("GITHUB_TOKEN")
        .env_remove("REFRESH_INTERVAL_MINUTES");
    ().serve(rmcp::transport::TokioChildProcess::new(cmd).unwrap())
        .await
        .expect("the server starts")
}

async fn tool(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    name: &str,
    args: serde_json::Value,
) -> Result<serde_json::Value, String> {
    let serde_json::Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let r = client
        .call_tool(rmcp::model::CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    let text: String = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    if r.is_error == Some(true) {
        return Err(text);
    }
    Ok(r.structured_content
        .unwrap_or_else(|| serde_json::from_str(&text).unwrap()))
}

/// Issue 5, "Done when": a server started with `SKILLS_REPO=file:///...bare.git` serves its
/// skills, picks up a pushed commit on `refresh_skills` and on its own timer, and every analytics
/// event reaches a local endpoint that was down for part of the run (two runs of the binary: the
/// events of the first wait in the buffer file while the endpoint is down).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn done_when_a_server_follows_its_repository_and_delivers_every_event() {
    use crate::analytics::{Endpoint, Mode};
    use serde_json::json;
    let endpoint = Endpoint::start();
    endpoint.set(Mode::Refuse);
    let remote = Remote::new();
    remote.commit(
        &[
            (
                "skills/alpha/SKILL.md",
                &agent_skill("alpha", "Launch rockets into orbit with the alpha launcher"),
            ),
            ("skills/alpha/reference.md", "# Launch checklist\n"),
        ],
        "alpha",
    );
    let home = TempDir::new().unwrap();

    // Run 1: no periodic refresh to speak of; the endpoint is down throughout.
    let client = start_server(home.path(), &remote.url(), &endpoint.url, 3600).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "report_usage"));
    let routed = tool(
        &client,
        "get_skill",
        json!({"context": "launch rockets into orbit"}),
    )
    .await
    .unwrap();
    assert_eq!(routed["skill_path"], "alpha", "{routed}");
    tool(&client, "get_skill", json!({"skill_path": "alpha"}))
        .await
        .unwrap();
    let none = tool(
        &client,
        "get_skill",
        json!({"context": "xylophone quartz zebra"}),
    )
    .await
    .unwrap();
    assert_eq!(none["no_match"], true, "{none}");
    let asset = tool(
        &client,
        "get_asset",
        json!({"skill_path": "alpha", "file": "reference.md"}),
    )
    .await
    .unwrap();
    assert!(asset["content"].as_str().unwrap().contains("checklist"));
    let feedback = tool(
        &client,
        "report_usage",
        json!({"skill_path": "alpha", "useful": true, "comment": "clear"}),
    )
    .await
    .unwrap();
    assert_eq!(
        feedback,
        json!({"recorded": true, "message": "Feedback recorded for alpha"})
    );
    let unknown = tool(
        &client,
        "report_usage",
        json!({"skill_path": "no/such/skill", "useful": false}),
    )
    .await
    .unwrap_err();
    assert!(unknown.contains("no/such/skill"), "{unknown}");

    // A pushed commit, picked up by refresh_skills (git mode).
    assert!(
        tool(&client, "get_skill", json!({"skill_path": "beta"}))
            .await
            .is_err()
    );
    let pushed = remote.commit(
        &[(
            "skills/beta/SKILL.md",
            &agent_skill("beta", "Brew beta coffee with a siphon"),
        )],
        "beta",
    );
    let refreshed = tool(&client, "refresh_skills", json!({})).await.unwrap();
    assert_eq!(refreshed["success"], true, "{refreshed}");
    assert_eq!(refreshed["mode"], "git");
    assert_eq!(refreshed["commit_hash"], pushed.as_str());
    assert_eq!(refreshed["files_changed"], 1);
    assert_eq!(refreshed["skills_reindexed"], 2);
    assert!(refreshed["last_sync"].as_str().unwrap().ends_with('Z'));
    tool(&client, "get_skill", json!({"skill_path": "beta"}))
        .await
        .unwrap();
    client.cancel().await.unwrap();
    // Nothing reached the endpoint; everything waits on disk.
    assert!(endpoint.accepted().is_empty());
    let buffer = home.path().join(".skills-mcp/analytics-buffer.jsonl");
    let waiting = std::fs::read_to_string(&buffer).unwrap().lines().count();
    assert_eq!(waiting, 7, "events of run 1 in the buffer");

    // Run 2: the cached checkout; the endpoint comes back mid-run; the timer follows the branch.
    let client = start_server(home.path(), &remote.url(), &endpoint.url, 1).await;
    tool(&client, "get_skill", json!({"skill_path": "beta"}))
        .await
        .unwrap();
    endpoint.set(Mode::Up);
    remote.commit(
        &[(
            "skills/gamma/SKILL.md",
            &agent_skill("gamma", "Measure gamma radiation safely"),
        )],
        "gamma",
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let tree = tool(&client, "list_skills", json!({})).await.unwrap();
        if tree.to_string().contains("gamma") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the timer never picked up gamma: {tree}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tool(&client, "get_skill", json!({"skill_path": "gamma"}))
        .await
        .unwrap();
    client.cancel().await.unwrap();

    // Every event of both runs arrived, each once.
    let events = endpoint.wait_for_events(9, Duration::from_secs(10));
    let mut by_type = std::collections::BTreeMap::new();
    let mut ids = std::collections::HashSet::new();
    for e in &events {
        assert_eq!(e["server_id"], "dev-e2e");
        assert!(
            ids.insert(e["id"].as_str().unwrap().to_owned()),
            "twice: {e}"
        );
        *by_type
            .entry(e["type"].as_str().unwrap().to_owned())
            .or_insert(0) += 1;
    }
    let expected: std::collections::BTreeMap<String, i32> = [
        ("skill_served", 5),
        ("no_match", 1),
        ("asset_served", 1),
        ("skill_feedback", 1),
        ("refresh", 1),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(by_type, expected, "{events:#?}");
    let refresh = events.iter().find(|e| e["type"] == "refresh").unwrap();
    assert_eq!(refresh["data"]["mode"], "git");
    assert_eq!(refresh["data"]["commit_hash"], pushed.as_str());
    assert_eq!(std::fs::read_to_string(&buffer).unwrap(), "");
}

/// Through the real binary: a failed first clone over HTTP with `GITHUB_TOKEN` set is a clear
/// error on stderr that never shows the token, the server still starts and serves its other root, and the token was sent to the remote as a header.
#[test]
fn the_binary_never_prints_the_token() {
    const TOKEN: &str = "ghp_E2Efake_token_DO_NOT_PRINT_42";
    let remote = Remote::new();
    remote.commit(&[("skills/a/SKILL.md", &skill("a"))], "a");
    let server = DumbHttp::serve(remote.tmp.path().to_path_buf());
    server.fail.store(true, Ordering::SeqCst);
    let home = TempDir::new().unwrap();
    let local = home.path().join("local");
    std::fs::create_dir_all(local.join("mine")).unwrap();
    std::fs::write(local.join("mine/SKILL.md"), skill("mine")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_skills-mcp"))
        .arg("--root")
        .arg(&local)
        .current_dir(home.path())
        .env("HOME", home.path())
        .env(
            "SKILLS_REPO",
            format!("http://127.0.0.1:{}/remote.git", server.port),
        )
        .env("GITHUB_TOKEN", TOKEN)
        .env_remove("SKILLS_DIR")
        .env_remove("ANALYTICS_ENDPOINT")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("could not clone"), "{stderr}");
    assert!(stderr.contains("1 skills indexed"), "{stderr}");
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{TOKEN}"));
    assert!(
        !stderr.contains(TOKEN) && !stderr.contains(&basic),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains(TOKEN));
    assert!(
        server
            .auth
            .lock()
            .unwrap()
            .contains(&format!("Basic {basic}"))
    );
    let mut files = Vec::new();
    all_files(home.path(), &mut files);
    for (path, bytes) in &files {
        assert!(!contains(bytes, TOKEN), "token in {}", path.display());
    }
}

/// The configuration names git roots before any I/O: `sources.repo` then `sources.repos`, after
/// the standard roots and before `sources.roots` / `SKILLS_DIR` / `--root`; bad values are errors.
#[test]
fn configuration_resolves_git_roots() {
    use skills_mcp::config::{LoadOptions, RootSource, load};
    let tmp = TempDir::new().unwrap();
    let flag = tmp.path().join("flag");
    std::fs::create_dir_all(&flag).unwrap();
    let file = tmp.path().join("c.yaml");
    std::fs::write(
        &file,
        format!(
            "sources:\n  default_roots: false\n  repos:\n    - url: https://example.invalid/b.git\n      subpath: docs\n      token_env: B_TOKEN\ngit:\n  content_dir: {}\nrefresh:\n  interval_seconds: 5\n",
            tmp.path().join("content").display()
        ),
    )
    .unwrap();
    let opts = LoadOptions {
        config_file: Some(file.clone()),
        roots: vec![flag.clone()],
        env: [
            ("SKILLS_REPO".to_owned(), "file:///srv/a.git".to_owned()),
            ("GITHUB_TOKEN".to_owned(), "tok".to_owned()),
        ]
        .into(),
        cwd: tmp.path().to_path_buf(),
        home: Some(tmp.path().to_path_buf()),
        bundled: None,
        embedded_bundle: false,
        no_default_roots: false,
    };
    let loaded = load(&opts).unwrap();
    let sources: Vec<RootSource> = loaded.roots.iter().map(|r| r.source).collect();
    assert_eq!(
        sources,
        [RootSource::Git, RootSource::Git, RootSource::Flag]
    );
    let git = loaded.config.sources.git_sources();
    assert_eq!(git.len(), 2);
    assert_eq!(git[1].token_env(), "B_TOKEN");
    for (root, source) in loaded.roots.iter().zip(&git) {
        assert_eq!(
            root.path,
            skills_mcp::sources::root_path(&loaded.config.git, source)
        );
        assert!(root.path.starts_with(tmp.path().join("content")));
    }
    assert_eq!(loaded.config.refresh.interval(), Duration::from_secs(5));
    assert_eq!(loaded.config.github_token.as_deref(), Some("tok"));

    for bad in [
        "sources:\n  repo: '--upload-pack=x'\n",
        "sources:\n  repos:\n    - url: x\n      subpath: ../up\n",
        "analytics:\n  max_buffer_events: 0\n",
        "refresh:\n  interval_seconds: 0\n",
    ] {
        std::fs::write(&file, bad).unwrap();
        let e = load(&LoadOptions {
            env: Default::default(),
            ..opts.clone()
        });
        assert!(e.is_err(), "{bad}");
    }
}
