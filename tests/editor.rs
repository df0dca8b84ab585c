//! Tests: `skills-mcp editor` over real HTTP on 127.0.0.1, through the real binary: the static
//! files open, the API behind the per-run secret and the Host/Origin guard, saves through the
//! sandbox (outside the root, through a symlink, a script, an asset, stale, too large,
//! read-only roots refused; a good save replaces the file atomically and `skills-mcp search`
//! ranks the new text, and a running `serve` on the same root picks the save up through its
//! watcher).

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::common::{agent_skill_md, bin, json as stdout_json, run, skill_md, tree};
use crate::http::{Answer, raw};

/// A running `skills-mcp editor --no-browser`.
struct Editor {
    child: Child,
    addr: String,
    secret: String,
    log: Arc<Mutex<Vec<String>>>,
    _home: TempDir,
}

impl Editor {
    /// The editor on `roots` (none: the bundled skills), with `extra` flags; returns once it
    /// printed its URL.
    fn start(roots: &[&Path], extra: &[&str]) -> Self {
        let home = TempDir::new().unwrap();
        let mut cmd = bin();
        cmd.args(["editor", "--no-browser", "--no-default-roots"]);
        for r in roots {
            cmd.arg("--root").arg(r);
        }
        cmd.args(extra)
            .current_dir(home.path())
            .env("HOME", home.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn skills-mcp editor");
        let log = Arc::new(Mutex::new(Vec::new()));
        {
            let log = log.clone();
            let stderr = child.stderr.take().unwrap();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    log.lock().unwrap().push(line);
                }
            });
        }
        let mut url = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        let url = url.trim();
        let Some(rest) = url.strip_prefix("http://") else {
            let _ = child.kill();
            panic!(
                "no URL on stdout ({url:?}); stderr:\n{}",
                log.lock().unwrap().join("\n")
            );
        };
        let (addr, secret) = rest
            .split_once("/#secret=")
            .expect("the secret in the fragment");
        Self {
            child,
            addr: addr.to_string(),
            secret: secret.to_string(),
            log,
            _home: home,
        }
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// `method path` with the secret and this editor's own Host, and `extra` header lines.
    fn call(&self, method: &str, path: &str, body: Option<Value>, extra: &str) -> Answer {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        raw(
            &self.addr,
            &format!(
                "{method} {path} HTTP/1.1\r\nHost: {}\r\nX-Skills-Editor-Secret: {}\r\nContent-Type: application/json{extra}",
                self.addr, self.secret
            ),
            body.as_bytes(),
        )
    }

    fn file(&self, root: usize, path: &str) -> Answer {
        self.call(
            "POST",
            "/api/open",
            Some(json!({"root": root, "path": path})),
            "",
        )
    }

    fn save(&self, root: usize, path: &str, text: &str, digest: Option<&str>) -> Answer {
        self.call(
            "POST",
            "/api/save",
            Some(json!({"root": root, "path": path, "text": text, "digest": digest})),
            "",
        )
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn body_json(a: &Answer) -> Value {
    serde_json::from_str(&a.body).unwrap_or_else(|e| panic!("{e}: {a:?}"))
}

fn skills_tree() -> TempDir {
    tree(&[
        (
            "tools/pdf/SKILL.md",
            "---\nname: pdf\ndescription: Extract text and tables from PDF files\nscripts:\n  - file: scripts/fill.sh\n    description: Fill a form\n---\nUse pdftotext.\n",
        ),
        ("tools/pdf/scripts/fill.sh", "#!/bin/sh\necho filled\n"),
        ("tools/pdf/references/notes.md", "Some notes.\n"),
        (
            "ui/forms.md",
            &skill_md("Web forms and validation", &["forms"], "Forms."),
        ),
        (
            "data/csv/SKILL.md",
            &agent_skill_md("csv", "Clean messy CSV spreadsheets", "Use csvkit."),
        ),
    ])
}

#[test]
fn editor_serves_its_page_and_guards_its_api() {
    let root = skills_tree();
    let editor = Editor::start(&[root.path()], &[]);
    let addr = &editor.addr;

    // The page, openly, without the secret; the secret is in none of the static files.
    for (path, kind) in [
        ("/", "text/html"),
        ("/editor.js", "text/javascript"),
        ("/engine-host.js", "text/javascript"),
        ("/editor.css", "text/css"),
    ] {
        let a = raw(addr, &format!("GET {path} HTTP/1.1\r\nHost: {addr}"), b"");
        assert_eq!(a.status, 200, "{path}: {a:?}");
        assert!(a.header("content-type").unwrap().starts_with(kind), "{a:?}");
        assert!(a.header("content-security-policy").is_some(), "{a:?}");
        assert!(!a.body.contains(&editor.secret));
    }
    let a = raw(
        addr,
        &format!("GET /nothing.js HTTP/1.1\r\nHost: {addr}"),
        b"",
    );
    assert_eq!(a.status, 404);

    // The API without the secret, or with another one: refused, nothing listed.
    let a = raw(
        addr,
        &format!("GET /api/state HTTP/1.1\r\nHost: {addr}"),
        b"",
    );
    assert_eq!(a.status, 401, "{a:?}");
    assert!(
        a.body.contains("secret") && !a.body.contains("tools/pdf"),
        "{a:?}"
    );
    let a = raw(
        addr,
        &format!("GET /api/state HTTP/1.1\r\nHost: {addr}\r\nX-Skills-Editor-Secret: guessed"),
        b"",
    );
    assert_eq!(a.status, 401, "{a:?}");
    // A cookie is no credential.
    let a = raw(
        addr,
        &format!(
            "GET /api/state HTTP/1.1\r\nHost: {addr}\r\nCookie: secret={}",
            editor.secret
        ),
        b"",
    );
    assert_eq!(a.status, 401, "{a:?}");

    // With the secret: the roots and the skills.
    let a = editor.call("GET", "/api/state", None, "");
    assert_eq!(a.status, 200, "{a:?}");
    let state = body_json(&a);
    let paths: Vec<&str> = state["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["skillPath"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"tools/pdf") && paths.contains(&"ui/forms"),
        "{state}"
    );
    assert_eq!(state["roots"][0]["kind"], "folder");
    assert!(state["roots"][0]["readOnly"].is_null());

    // The secret does not make a foreign page or a rebound name welcome.
    let a = editor.call(
        "GET",
        "/api/state",
        None,
        "\r\nOrigin: http://evil.example.com",
    );
    assert_eq!(a.status, 403, "{a:?}");
    assert!(a.body.contains("Origin"), "{a:?}");
    // Another port of localhost is another origin.
    let a = editor.call("GET", "/api/state", None, "\r\nOrigin: http://127.0.0.1:1");
    assert_eq!(a.status, 403, "{a:?}");
    let a = raw(
        addr,
        &format!(
            "GET /api/state HTTP/1.1\r\nHost: evil.example.com\r\nX-Skills-Editor-Secret: {}",
            editor.secret
        ),
        b"",
    );
    assert_eq!(a.status, 403, "{a:?}");
    assert!(a.body.contains("Host"), "{a:?}");
    // The page's own origin is.
    let a = editor.call(
        "GET",
        "/api/state",
        None,
        &format!("\r\nOrigin: http://{addr}"),
    );
    assert_eq!(a.status, 200, "{a:?}");

    // The check runs in the host's engine: findings, the served name, the draft's rank.
    let a = editor.call(
        "POST",
        "/api/check",
        Some(json!({"root": 0, "path": "data/csv/SKILL.md",
            "text": agent_skill_md("csv", "Clean messy CSV spreadsheets and PDF tables", "x"),
            "requests": ["extract tables from pdf files"]})),
        "",
    );
    assert_eq!(a.status, 200, "{a:?}");
    let check = body_json(&a);
    assert_eq!(check["check"]["served_name"], "csv", "{check}");
    assert_eq!(check["check"]["skill"]["skill_path"], "data/csv", "{check}");
    let rank = &check["ranking"]["requests"][0];
    assert_eq!(rank["above"][0]["skill_path"], "tools/pdf", "{check}");
}

#[test]
fn editor_saves_only_skill_files_inside_a_root_atomically() {
    let root = skills_tree();
    let outside = tree(&[(
        "evil/SKILL.md",
        &agent_skill_md("evil", "Outside the root", "Nope."),
    )]);
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
    let editor = Editor::start(&[root.path()], &[]);

    let a = editor.file(0, "tools/pdf/SKILL.md");
    assert_eq!(a.status, 200, "{a:?}");
    let opened = body_json(&a);
    let digest = opened["digest"].as_str().unwrap().to_string();
    let text = opened["text"].as_str().unwrap().to_string();
    assert!(text.contains("Extract text and tables"));

    // Refused, and nothing written: outside the root, through a symlink, a script, an asset,
    // an absolute path.
    let new_skill = agent_skill_md("x", "A skill", "Body.");
    for (path, status, says) in [
        ("../outside.md", 400, "refusing the path"),
        ("/etc/passwd.md", 400, "refusing the path"),
        ("link/evil/SKILL.md", 403, "symlink"),
        ("tools/pdf/scripts/fill.sh", 403, "never a script"),
        ("tools/pdf/references/notes.md", 403, "tools/pdf"),
        ("tools/pdf/more.md", 403, "tools/pdf"),
    ] {
        let a = editor.save(0, path, &new_skill, None);
        assert_eq!(a.status, status, "{path}: {a:?}");
        assert!(a.body.contains(says), "{path}: {a:?}");
    }
    assert_eq!(
        std::fs::read_to_string(outside.path().join("evil/SKILL.md")).unwrap(),
        agent_skill_md("evil", "Outside the root", "Nope.")
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("tools/pdf/scripts/fill.sh")).unwrap(),
        "#!/bin/sh\necho filled\n"
    );
    let a = editor.file(0, "link/evil/SKILL.md");
    assert_eq!(a.status, 403, "{a:?}");
    let a = editor.file(0, "tools/pdf/scripts/fill.sh");
    assert_eq!(a.status, 403, "{a:?}");

    // Stale: the file changed on disk since it was opened. Refused, and the disk keeps the
    // other writer's text.
    let theirs = text.replace("Use pdftotext.", "Use pdftotext -layout.");
    std::fs::write(root.path().join("tools/pdf/SKILL.md"), &theirs).unwrap();
    let mine = text.replace(
        "Extract text and tables from PDF files",
        "Extract text, tables and zebrafish diagrams from PDF files",
    );
    let a = editor.save(0, "tools/pdf/SKILL.md", &mine, Some(&digest));
    assert_eq!(a.status, 409, "{a:?}");
    assert!(a.body.contains("changed on disk"), "{a:?}");
    assert_eq!(
        std::fs::read_to_string(root.path().join("tools/pdf/SKILL.md")).unwrap(),
        theirs
    );

    // Reopened, changed, saved: written beside then renamed over (a new inode, nothing left
    // beside), and the new text is what `search` ranks.
    let a = editor.file(0, "tools/pdf/SKILL.md");
    let digest = body_json(&a)["digest"].as_str().unwrap().to_string();
    let mine = theirs.replace(
        "Extract text and tables from PDF files",
        "Extract text, tables and zebrafish diagrams from PDF files",
    );
    #[cfg(unix)]
    let inode = {
        use std::os::unix::fs::MetadataExt as _;
        std::fs::metadata(root.path().join("tools/pdf/SKILL.md"))
            .unwrap()
            .ino()
    };
    let a = editor.save(0, "tools/pdf/SKILL.md", &mine, Some(&digest));
    assert_eq!(a.status, 200, "{a:?}");
    let saved = body_json(&a);
    assert_ne!(saved["digest"].as_str().unwrap(), digest);
    assert_eq!(
        std::fs::read_to_string(root.path().join("tools/pdf/SKILL.md")).unwrap(),
        mine
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let after = std::fs::metadata(root.path().join("tools/pdf/SKILL.md")).unwrap();
        assert_ne!(
            after.ino(),
            inode,
            "replaced by a rename, not rewritten in place"
        );
    }
    let left: Vec<String> = std::fs::read_dir(root.path().join("tools/pdf"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        left.iter().all(|n| !n.contains(".tmp")),
        "nothing left beside: {left:?}"
    );
    // The digest the save returned is the next save's.
    let again = mine.replace("zebrafish", "zebrafish and axolotl");
    let a = editor.save(0, "tools/pdf/SKILL.md", &again, saved["digest"].as_str());
    assert_eq!(a.status, 200, "{a:?}");
    let o = run(&[
        "search",
        "--json",
        "--no-default-roots",
        "--root",
        root.path().to_str().unwrap(),
        "zebrafish axolotl diagrams",
    ]);
    let hits = stdout_json(&o);
    assert_eq!(hits["results"][0]["skill_path"], "tools/pdf", "{hits}");
    // The editor's own index was rebuilt: its state and checks see the saved text.
    let state = body_json(&editor.call("GET", "/api/state", None, ""));
    let pdf = state["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["skillPath"] == "tools/pdf")
        .unwrap()
        .clone();
    assert!(
        pdf["description"].as_str().unwrap().contains("zebrafish"),
        "{pdf}"
    );

    // Too large: refused before anything is written.
    let huge = format!(
        "---\nname: pdf\ndescription: big\n---\n{}",
        "x".repeat(5 << 20)
    );
    let a = editor.save(0, "tools/pdf/SKILL.md", &huge, saved["digest"].as_str());
    assert_eq!(a.status, 413, "{a:?}");
    assert_eq!(
        std::fs::read_to_string(root.path().join("tools/pdf/SKILL.md")).unwrap(),
        again
    );

    // A new skill: created with its folder; a second "new" save of it is refused (it exists).
    let fresh = agent_skill_md("sql", "Write SQL migrations", "Steps.");
    let a = editor.save(0, "db/sql/SKILL.md", &fresh, None);
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        std::fs::read_to_string(root.path().join("db/sql/SKILL.md")).unwrap(),
        fresh
    );
    let a = editor.save(0, "db/sql/SKILL.md", &fresh, None);
    assert_eq!(a.status, 409, "{a:?}");
    // A new file that would not be a skill is not written.
    let a = editor.save(0, "db/notes.md", "just notes\n", None);
    assert_eq!(a.status, 400, "{a:?}");
    assert!(!root.path().join("db/notes.md").exists());
    assert!(editor.log().contains("editor: saved"), "{}", editor.log());
}

#[test]
fn editor_refuses_public_addresses_and_keeps_bundled_skills_read_only() {
    let o = run(&["editor", "--no-browser", "--listen", "0.0.0.0:0"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("loopback"),
        "{o:?}"
    );

    // No root configured: the bundled skills, read-only.
    let editor = Editor::start(&[], &[]);
    let state = body_json(&editor.call("GET", "/api/state", None, ""));
    assert_eq!(state["roots"][0]["kind"], "bundled", "{state}");
    assert!(state["roots"][0]["readOnly"].is_string(), "{state}");
    let skill = state["skills"][0].clone();
    let file = skill["file"].as_str().unwrap();
    let opened = body_json(&editor.file(0, file));
    let a = editor.save(
        0,
        file,
        opened["text"].as_str().unwrap(),
        opened["digest"].as_str(),
    );
    assert_eq!(a.status, 403, "{a:?}");
    assert!(a.body.contains("read-only"), "{a:?}");
}

#[test]
fn editor_runs_eval_queries_on_the_draft_and_saves_them() {
    let root = skills_tree();
    let editor = Editor::start(&[root.path()], &[]);
    let evals = json!([
        {"query": "tidy spreadsheet columns", "should_trigger": true},
        {"query": "extract tables from pdf files", "should_trigger": false}
    ]);
    let check = |description: &str| {
        body_json(&editor.call(
            "POST",
            "/api/check",
            Some(json!({"root": 0, "path": "data/csv/SKILL.md",
                "text": agent_skill_md("csv", description, "Use csvkit."), "evals": evals})),
            "",
        ))
    };
    // The queries run against the draft as it is typed: the first flips when the description
    // says what it asks; the near miss keeps going to the PDF skill.
    let before = check("Clean messy CSV spreadsheets");
    assert_eq!(before["evals"]["queries"][0]["passed"], false, "{before}");
    assert_eq!(before["evals"]["queries"][1]["passed"], true, "{before}");
    assert_eq!(
        before["evals"]["queries"][1]["winner"], "tools/pdf",
        "{before}"
    );
    let after = check("Clean messy CSV spreadsheets and tidy spreadsheet columns");
    assert_eq!(
        after["evals"]["queries"][0]["outcome"], "matched",
        "{after}"
    );
    assert_eq!(after["evals"]["queries"][0]["passed"], true, "{after}");
    assert_eq!(after["evals"]["passed"], 2, "{after}");

    // Opening the skill says where its eval file goes (the engine's rule), not there yet.
    let opened = body_json(&editor.file(0, "data/csv/SKILL.md"));
    assert_eq!(
        opened["evals"]["path"], "data/csv/evals/eval_queries.json",
        "{opened}"
    );
    assert!(opened["evals"]["digest"].is_null(), "{opened}");

    // Saved only as valid queries, only as a skill's eval file.
    let text = format!("{}\n", serde_json::to_string_pretty(&evals).unwrap());
    let a = editor.save(
        0,
        "data/csv/evals/eval_queries.json",
        "[{\"query\": 1}]",
        None,
    );
    assert_eq!(a.status, 400, "{a:?}");
    assert!(a.body.contains("problems"), "{a:?}");
    let a = editor.save(0, "data/evals/eval_queries.json", &text, None);
    assert_eq!(a.status, 403, "{a:?}");
    let a = editor.save(0, "data/csv/evals/eval_queries.json", &text, None);
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        std::fs::read_to_string(root.path().join("data/csv/evals/eval_queries.json")).unwrap(),
        text
    );
    let opened = body_json(&editor.file(0, "data/csv/SKILL.md"));
    assert_eq!(opened["evals"]["queries"], evals, "{opened}");
    // `skills-mcp eval` runs the saved file (the saved description still misses the first).
    let o = run(&[
        "eval",
        "--json",
        "--no-default-roots",
        "--root",
        root.path().to_str().unwrap(),
    ]);
    let report = stdout_json(&o);
    assert_eq!(report["skills"][0]["skill"], "data/csv", "{report}");
    assert_eq!(report["skills"][0]["total"], 2, "{report}");
}

/// A running `skills-mcp serve` (the real binary over stdio, through an rmcp client) on the same
/// root as the editor picks a saved description up through its watcher: `search_skills` ranks the
/// skill for words only the saved text has.
#[test]
fn a_running_server_picks_up_an_editor_save() {
    use rmcp::ServiceExt as _;
    use rmcp::transport::TokioChildProcess;

    use crate::mcp::{Client, call, ok};

    let root = skills_tree();
    let editor = Editor::start(&[root.path()], &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let home = TempDir::new().unwrap();
        let mut cmd = crate::common::stdio_server(home.path());
        cmd.args(["--no-default-roots", "--root"]).arg(root.path());
        let client = Client::default()
            .serve(TokioChildProcess::new(cmd).unwrap())
            .await
            .expect("initialize");
        let query = json!({"query": "astronomy telescope star charts"});
        let first = |v: &Value| v["results"][0]["skill_path"].as_str().map(str::to_owned);
        let before = ok(call(&client, "search_skills", query.clone()).await);
        assert_ne!(first(&before).as_deref(), Some("data/csv"), "{before}");

        let opened = body_json(&editor.file(0, "data/csv/SKILL.md"));
        let saved = agent_skill_md(
            "csv",
            "Draw astronomy star charts for a telescope session",
            "Use a planisphere.",
        );
        let a = editor.save(0, "data/csv/SKILL.md", &saved, opened["digest"].as_str());
        assert_eq!(a.status, 200, "{a:?}\n{}", editor.log());
        assert_eq!(
            std::fs::read_to_string(root.path().join("data/csv/SKILL.md")).unwrap(),
            saved
        );

        // The watcher debounces, then rebuilds: ask until the server ranks the saved text.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let after = loop {
            let v = ok(call(&client, "search_skills", query.clone()).await);
            if first(&v).as_deref() == Some("data/csv") || std::time::Instant::now() > deadline {
                break v;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        };
        assert_eq!(first(&after).as_deref(), Some("data/csv"), "{after}");
        client.cancel().await.unwrap();
    });
}

/// The open skill's audit competitors: the engine's one-skill audit (`index.audit-one`, the
/// caller's view), the entry `skills-mcp audit --json` gives that skill (less the
/// collection-wide `hijacker` finding); its eval queries, given, are the requests meant for it;
/// a file that is no skill of the index yet has none.
#[test]
fn editor_shows_the_open_skills_audit_competitors() {
    let root = skills_tree();
    let editor = Editor::start(&[root.path()], &[]);
    let audit = |path: &str, requests: Value| {
        let a = editor.call(
            "POST",
            "/api/audit",
            Some(json!({"root": 0, "path": path, "requests": requests})),
            "",
        );
        assert_eq!(a.status, 200, "{a:?}");
        body_json(&a)
    };
    let report = stdout_json(&run(&[
        "audit",
        "--json",
        "--no-default-roots",
        "--root",
        root.path().to_str().unwrap(),
    ]));
    for (file, skill) in [
        ("data/csv/SKILL.md", "data/csv"),
        ("tools/pdf/SKILL.md", "tools/pdf"),
    ] {
        let mut entry = report["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["skill"] == skill)
            .unwrap_or_else(|| panic!("{skill} in {report}"))
            .clone();
        entry["findings"]
            .as_array_mut()
            .unwrap()
            .retain(|f| f["kind"] != "hijacker");
        assert_eq!(audit(file, json!([]))["audit"], entry, "{skill}");
    }
    // Requests meant for the CSV skill that the PDF skill wins: it competes, with the words.
    let given = audit(
        "data/csv/SKILL.md",
        json!([
            "extract tables from pdf files",
            "clean messy csv spreadsheets"
        ]),
    );
    let rival = &given["audit"]["competitors"][0];
    assert_eq!(rival["skill"], "tools/pdf", "{given}");
    assert_eq!(rival["strength"], 0.5, "{given}");
    assert!(
        rival["separating"]
            .as_array()
            .unwrap()
            .contains(&json!("pdf")),
        "{given}"
    );
    // Not a skill of the index (yet): no audit.
    assert!(audit("new/SKILL.md", json!([]))["audit"].is_null());
    // The API's guard holds here too: no secret, no audit.
    let a = raw(
        &editor.addr,
        &format!(
            "POST /api/audit HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json",
            editor.addr
        ),
        br#"{"root": 0, "path": "data/csv/SKILL.md"}"#,
    );
    assert_eq!(a.status, 401, "{a:?}");
}
