//! Tests: logs through `tracing`, to stderr only (text or JSON lines, `RUST_LOG` and
//! `--log-level`), and to MCP clients (`logging/setLevel`, `notifications/message`), all through
//! the real binary.

#![allow(deprecated)] // rmcp marks MCP logging deprecated (SEP-2577); clients still use it.

use std::{
    path::Path,
    process::{Output, Stdio},
    sync::{Arc, Mutex},
    time::Duration,
};

use rmcp::{
    ClientHandler, RoleClient, ServiceExt,
    model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams},
    service::NotificationContext,
    transport::TokioChildProcess,
};
use tempfile::TempDir;

use crate::common::{agent_skill_md, bin, write_files};

/// A root with one good skill.
fn root() -> TempDir {
    let dir = TempDir::new().unwrap();
    write_files(
        dir.path(),
        &[(
            "good/SKILL.md",
            agent_skill_md("good", "A skill that parses", "Body.\n").as_str(),
        )],
    );
    dir
}

/// `serve` on `root` with stdin closed at once: it starts, logs its start-up lines, and stops.
fn serve_once(root: &Path, args: &[&str], rust_log: Option<&str>) -> Output {
    let home = TempDir::new().unwrap();
    serve_in(home.path(), root, args, rust_log)
}

/// [`serve_once`] with `home` as its home, current folder and cache folder (`home/cache`).
fn serve_in(home: &Path, root: &Path, args: &[&str], rust_log: Option<&str>) -> Output {
    let mut cmd = bin();
    cmd.args(["serve", "--no-default-roots", "--root"])
        .arg(root)
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("SKILLS_MCP_CACHE_DIR", home.join("cache"))
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(filter) = rust_log {
        cmd.env("RUST_LOG", filter);
    }
    let out = cmd.output().expect("run skills-mcp serve");
    // No client ever sends `initialize`: the session ends at once (exit 1, one closing error).
    assert!(
        err(&out).contains("starting the MCP session"),
        "{}",
        err(&out)
    );
    // stdout is the MCP stream: no log line ever reaches it.
    assert!(
        out.stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn start_up_lines_are_info_and_rust_log_or_log_level_quiets_them() {
    let root = root();
    let default = serve_once(root.path(), &[], None);
    assert!(
        err(&default).contains("skills-mcp: 1 skills indexed") && err(&default).contains("root 0"),
        "{}",
        err(&default)
    );
    let quiet = serve_once(root.path(), &[], Some("warn"));
    assert!(!err(&quiet).contains("skills indexed"), "{}", err(&quiet));
    assert!(!err(&quiet).contains("root 0"), "{}", err(&quiet));
    // The flag wins over RUST_LOG, both ways.
    let flag = serve_once(root.path(), &["--log-level", "info"], Some("warn"));
    assert!(err(&flag).contains("skills indexed"), "{}", err(&flag));
    let flag = serve_once(root.path(), &["--log-level", "error"], Some("debug"));
    assert!(!err(&flag).contains("skills indexed"), "{}", err(&flag));
}

/// The start-up line's figures: `(skills, index ms, engine how, engine ms)` of
/// `skills-mcp: N skills indexed in T ms; engine <how> in T ms; serving MCP on stdio`.
fn start_up_figures(stderr: &str) -> (u64, u64, String, u64) {
    let line = stderr
        .lines()
        .find(|l| l.contains(" skills indexed in "))
        .unwrap_or_else(|| panic!("no start-up line: {stderr}"));
    let (skills, rest) = line
        .strip_prefix("skills-mcp: ")
        .and_then(|l| l.split_once(" skills indexed in "))
        .unwrap_or_else(|| panic!("{line}"));
    let (index_ms, rest) = rest
        .split_once(" ms; engine ")
        .unwrap_or_else(|| panic!("{line}"));
    let (how, rest) = rest.split_once(" in ").unwrap_or_else(|| panic!("{line}"));
    let (engine_ms, rest) = rest.split_once(" ms; ").unwrap_or_else(|| panic!("{line}"));
    assert_eq!(rest, "serving MCP on stdio", "{line}");
    (
        skills.parse().unwrap(),
        index_ms.parse().unwrap(),
        how.to_owned(),
        engine_ms.parse().unwrap(),
    )
}

#[test]
fn the_start_up_line_gives_the_engine_its_own_time_apart_from_the_index() {
    let root = root();
    let home = TempDir::new().unwrap();
    // A first start compiles the engine (and caches it); the next loads it.
    let first = serve_in(home.path(), root.path(), &[], None);
    let (skills, _, how, _) = start_up_figures(&err(&first));
    assert_eq!((skills, how.as_str()), (1, "compiled"), "{}", err(&first));
    let cached = std::fs::read_dir(home.path().join("cache"))
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().ends_with(".cwasm"));
    assert!(cached, "the compiled engine is cached");
    let second = serve_in(home.path(), root.path(), &[], None);
    let (skills, _, how, _) = start_up_figures(&err(&second));
    assert_eq!(
        (skills, how.as_str()),
        (1, "loaded from the compiled-engine cache"),
        "{}",
        err(&second)
    );
}

#[test]
fn warnings_still_show_at_warn_and_are_labelled() {
    let root = root();
    write_files(
        root.path(),
        &[(
            "odd/SKILL.md",
            "---\nname: odd\ndescription: [unclosed\n---\nx\n",
        )],
    );
    let out = serve_once(root.path(), &[], Some("warn"));
    let line = err(&out)
        .lines()
        .find(|l| l.contains("odd/SKILL.md"))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no line names odd/SKILL.md: {}", err(&out)));
    assert!(line.starts_with("skills-mcp: error: "), "{line}");
}

#[test]
fn log_format_json_is_one_object_per_stderr_line() {
    let root = root();
    let out = serve_once(root.path(), &["--log-format", "json"], None);
    let text = err(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 2, "{text}");
    let mut saw_start = false;
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}"));
        assert!(v["timestamp"].is_string(), "{line}");
        assert!(v["level"].is_string(), "{line}");
        assert!(
            v["target"].as_str().unwrap().starts_with("skills_mcp"),
            "{line}"
        );
        let message = v["fields"]["message"].as_str().unwrap();
        saw_start |= message.contains("skills indexed") && v["level"] == "INFO";
    }
    assert!(saw_start, "{text}");
}

/// A client that keeps every `notifications/message` and counts list changes.
#[derive(Clone, Default)]
struct Recorder {
    messages: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
    changes: Arc<Mutex<usize>>,
    notify: Arc<tokio::sync::Notify>,
}

impl ClientHandler for Recorder {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.messages.lock().unwrap().push(params);
        self.notify.notify_waiters();
    }
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        *self.changes.lock().unwrap() += 1;
        self.notify.notify_waiters();
    }
}

impl Recorder {
    /// Wait (at most 30 s) until `done` holds over the messages and the change count.
    async fn until(
        &self,
        what: &str,
        done: impl Fn(&[LoggingMessageNotificationParam], usize) -> bool,
    ) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let notified = self.notify.notified();
            if done(
                &self.messages.lock().unwrap(),
                *self.changes.lock().unwrap(),
            ) {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                panic!(
                    "timed out waiting for {what}; messages: {:?}",
                    self.messages.lock().unwrap()
                );
            }
        }
    }

    fn naming(&self, file: &str) -> Vec<LoggingMessageNotificationParam> {
        self.messages
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m.data.as_str().is_some_and(|d| d.contains(file)))
            .cloned()
            .collect()
    }
}

/// Bytes that are not UTF-8 in a skill's body: the engine keeps the skill with a warning.
fn not_utf8(name: &str) -> Vec<u8> {
    let mut bytes = agent_skill_md(name, "Has a bad byte", "Body ").into_bytes();
    bytes.extend_from_slice(b"\xff\xfe here\n");
    bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_that_breaks_during_live_reload_reaches_the_client_until_set_level_error() {
    let run = async {
        let root = root();
        let home = TempDir::new().unwrap();
        let mut cmd = crate::common::stdio_server(home.path());
        cmd.args(["--no-default-roots", "--root"])
            .arg(root.path())
            .env("SKILLS_MCP_CACHE_DIR", home.path().join("cache"))
            .env_remove("RUST_LOG");
        let (transport, _stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn skills-mcp");
        let recorder = Recorder::default();
        let client = recorder.clone().serve(transport).await.expect("initialize");
        let info = client.peer_info().unwrap();
        assert!(info.capabilities.logging.is_some(), "{info:?}");

        // Default level (warning): a skill that goes bad on disk is reported to the client.
        std::fs::create_dir_all(root.path().join("odd")).unwrap();
        std::fs::write(root.path().join("odd/SKILL.md"), not_utf8("odd")).unwrap();
        recorder
            .until("a warning naming odd/SKILL.md", |m, _| {
                m.iter().any(|m| {
                    m.level == LoggingLevel::Warning
                        && m.data.as_str().is_some_and(|d| d.contains("odd/SKILL.md"))
                })
            })
            .await;
        let odd = recorder.naming("odd/SKILL.md");
        assert_eq!(
            odd[0]
                .logger
                .as_deref()
                .map(|l| l.starts_with("skills_mcp")),
            Some(true)
        );
        assert!(odd[0].data.as_str().unwrap().contains("UTF-8"), "{odd:?}");
        // Info lines (the reload's "skills indexed") stay below the default level.
        assert!(
            recorder
                .messages
                .lock()
                .unwrap()
                .iter()
                .all(|m| m.level != LoggingLevel::Info),
            "{:?}",
            recorder.messages.lock().unwrap()
        );

        // setLevel error: warnings stop, errors still come.
        client
            .set_level(SetLevelRequestParams::new(LoggingLevel::Error))
            .await
            .unwrap();
        let changes = *recorder.changes.lock().unwrap();
        std::fs::create_dir_all(root.path().join("quiet")).unwrap();
        std::fs::create_dir_all(root.path().join("broken")).unwrap();
        std::fs::write(root.path().join("quiet/SKILL.md"), not_utf8("quiet")).unwrap();
        std::fs::write(
            root.path().join("broken/SKILL.md"),
            "---\nname: broken\ndescription: [unclosed\n---\nBody.\n",
        )
        .unwrap();
        recorder
            .until("an error naming broken/SKILL.md and the reload", |m, c| {
                c > changes
                    && m.iter().any(|m| {
                        m.level == LoggingLevel::Error
                            && m.data
                                .as_str()
                                .is_some_and(|d| d.contains("broken/SKILL.md"))
                    })
            })
            .await;
        // Both findings were logged by the same rebuild; give the queue a moment anyway.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            recorder.naming("quiet/SKILL.md").is_empty(),
            "{:?}",
            recorder.naming("quiet/SKILL.md")
        );
        client.cancel().await.unwrap();
    };
    tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the test finished in time");
}

/// A root whose folder name holds a newline and an ANSI escape, with one good skill and a
/// `config.yaml` that sets an operator-only key (so a warning names the file as well).
fn hostile_root() -> (TempDir, std::path::PathBuf) {
    let parent = TempDir::new().unwrap();
    let root = parent.path().join("ro\nFAKE LINE \x1b[31mred");
    std::fs::create_dir(&root).unwrap();
    write_files(
        &root,
        &[
            (
                "good/SKILL.md",
                agent_skill_md("good", "A skill that parses", "Body.\n").as_str(),
            ),
            ("config.yaml", "analytics:\n  enabled: true\n"),
        ],
    );
    (parent, root)
}

/// Neither the root line nor the `config.yaml` warning lets the folder name start a line or
/// reach the terminal raw: both are there, escaped.
fn assert_no_forged_line(stderr: &str) {
    for line in stderr.lines() {
        assert!(
            !line.starts_with("FAKE LINE"),
            "forged line {line:?} in:\n{stderr}"
        );
        assert!(!line.contains('\x1b'), "raw escape in {line:?}");
    }
    let escaped = "ro\\nFAKE LINE \\x1b[31mred";
    let root_line = stderr
        .lines()
        .find(|l| l.starts_with("skills-mcp: root 0: "))
        .unwrap_or_else(|| panic!("no root line:\n{stderr}"));
    assert!(root_line.contains(escaped), "{root_line}");
    let warning = stderr
        .lines()
        .find(|l| l.contains("`analytics.enabled` ignored"))
        .unwrap_or_else(|| panic!("no config.yaml warning:\n{stderr}"));
    assert!(
        warning.starts_with("skills-mcp: warning: ") && warning.contains(escaped),
        "{warning}"
    );
}

#[test]
fn a_root_folder_name_cannot_forge_a_log_line_over_stdio() {
    let (_parent, root) = hostile_root();
    let out = serve_once(&root, &[], None);
    assert_no_forged_line(&err(&out));
}

#[test]
fn a_root_folder_name_cannot_forge_a_log_line_over_http() {
    use std::io::{BufRead as _, BufReader};
    let (_parent, root) = hostile_root();
    let home = TempDir::new().unwrap();
    let mut child = bin()
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--no-default-roots",
            "--root",
        ])
        .arg(&root)
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("SKILLS_MCP_CACHE_DIR", home.path().join("cache"))
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn skills-mcp serve --http");
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        let mut seen = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            seen.push_str(&line);
            seen.push('\n');
            if line.contains("skills indexed") {
                break;
            }
        }
        let _ = tx.send(seen);
    });
    let seen = rx.recv_timeout(Duration::from_secs(60));
    let _ = child.kill();
    let _ = child.wait();
    let seen = seen.expect("the HTTP server never said its index was built");
    assert!(seen.contains("listening on http://127.0.0.1:"), "{seen}");
    assert_no_forged_line(&seen);
}

#[test]
fn start_up_summarizes_skill_findings_and_lists_them_at_debug() {
    let root = root();
    for name in ["w1", "w2", "w3"] {
        let dir = root.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), not_utf8(name)).unwrap();
    }
    write_files(
        root.path(),
        &[(
            "odd/SKILL.md",
            "---\nname: odd\ndescription: [unclosed\n---\nx\n",
        )],
    );
    let default = err(&serve_once(root.path(), &[], None));
    // Errors (a skill that is not served) keep a line each.
    assert!(
        default
            .lines()
            .any(|l| l.starts_with("skills-mcp: error: ") && l.contains("odd/SKILL.md")),
        "{default}"
    );
    // Warnings are counted in one line naming the command that lists them.
    for name in ["w1", "w2", "w3"] {
        assert!(!default.contains(&format!("{name}/SKILL.md")), "{default}");
    }
    let summary: Vec<&str> = default
        .lines()
        .filter(|l| l.contains("skill files have findings"))
        .collect();
    assert_eq!(
        summary,
        [
            "skills-mcp: warning: 4 skill files have findings: 1 with errors (listed above), \
          3 with warnings; `skills-mcp validate` lists them (`--log-level debug` logs each here)"
        ],
        "{default}"
    );
    // At debug, each warning has its own line too.
    let debug = err(&serve_once(root.path(), &["--log-level", "debug"], None));
    for name in ["w1", "w2", "w3"] {
        assert!(
            debug
                .lines()
                .any(|l| l.starts_with("skills-mcp: debug: warning: ")
                    && l.contains(&format!("{name}/SKILL.md"))),
            "{name}: {debug}"
        );
    }
    // And `validate` lists them.
    let listed = crate::common::run(&["validate", root.path().to_str().unwrap()]);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    for name in ["w1", "w2", "w3", "odd"] {
        assert!(listed.contains(&format!("{name}/SKILL.md")), "{listed}");
    }
}

#[test]
fn a_clean_start_has_no_findings_line() {
    let root = root();
    let out = err(&serve_once(root.path(), &[], None));
    assert!(!out.contains("have findings"), "{out}");
}
