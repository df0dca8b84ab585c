//! Tests: security (issue 13, trust boundaries), each through the real binary.
//!
//! - a skills root's `config.yaml` cannot configure the server (secrets pass-through,
//!   analytics endpoint): ignored with a warning naming the file and the key;
//! - a script cannot find the server's secrets anywhere a child can look;
//! - a damaged or foreign compiled-engine cache never runs: warned about once and rewritten;
//! - control characters in content (file names) cannot forge log lines.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::analytics::Endpoint;

fn write(root: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The real binary in a clean environment: `PATH`, `HOME` = `home`, a cache folder of its own,
/// no index cache, plus `env`.
fn bin(home: &Path, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skills-mcp"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SKILLS_MCP_CACHE_DIR", home.join("cache"))
        .env("SKILLS_MCP_INDEX_CACHE", "off")
        .current_dir(home)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Wait for `child` at most `limit`; kill it and fail when it takes longer.
fn wait_bounded(mut child: Child, limit: Duration, what: &str) -> Output {
    let deadline = Instant::now() + limit;
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const ENV_SKILL: &str = "---
description: Environment tools
keywords: [environment]
scripts:
  - file: scripts/env.sh
    description: Prints the environment
    execution: server
  - file: scripts/hunt.py
    description: Looks for a secret everywhere a child can look
    execution: server
    args:
      - name: needle_reversed
        description: The secret, reversed
        required: true
---
Environment tools.
";

/// Looks for the secret (given reversed, so the argument itself is not it) in the script's own
/// environment, the parent's environ, cmdline and memory (every readable mapping), every
/// thread's environ, and every open file descriptor. Prints `found: PLACE` per hit, `denied:
/// PLACE` where the kernel refused, and exits 1 when it found the secret anywhere.
const HUNT_PY: &str = r#"import os, sys
needle = os.environ["SKILL_ARG_NEEDLE_REVERSED"][::-1].encode()
ppid = os.getppid()
found = []
def look(place, data):
    if data and needle in data:
        found.append(place)
def read(place, path, limit=64 << 20):
    try:
        with open(path, "rb") as f:
            look(place, f.read(limit))
    except OSError as e:
        print("denied:", place, e.strerror)
for k, v in os.environ.items():
    if k != "SKILL_ARG_NEEDLE_REVERSED":
        look("own env " + k, v.encode())
read("parent environ", "/proc/%d/environ" % ppid)
read("parent cmdline", "/proc/%d/cmdline" % ppid)
try:
    for tid in os.listdir("/proc/%d/task" % ppid):
        read("parent thread environ", "/proc/%d/task/%s/environ" % (ppid, tid))
except OSError as e:
    print("denied: parent tasks", e.strerror)
try:
    maps = open("/proc/%d/maps" % ppid).read().splitlines()
    mem = open("/proc/%d/mem" % ppid, "rb", 0)
    scanned = 0
    for line in maps:
        fields = line.split()
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        if not fields[1].startswith("r") or hi - lo > (256 << 20):
            continue
        try:
            mem.seek(lo)
            look("parent memory " + fields[0], mem.read(hi - lo))
            scanned += 1
        except OSError:
            pass
    print("scanned", scanned, "mappings of the parent")
except OSError as e:
    print("denied: parent memory", e.strerror)
for fd in os.listdir("/proc/self/fd"):
    try:
        target = os.readlink("/proc/self/fd/" + fd)
        look("fd %s link" % fd, target.encode())
        if not target.startswith(("pipe:", "socket:", "/dev/null", "anon_inode:")):
            read("fd %s (%s)" % (fd, target), "/proc/self/fd/" + fd)
    except OSError:
        pass
read("parent fd listing", "/proc/%d/fd" % ppid)
for place in found:
    print("found:", place)
sys.exit(1 if found else 0)
"#;

fn env_root(config_yaml: Option<&str>) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    write(&root, "tools/_index.md", ENV_SKILL);
    write(&root, "tools/_index/scripts/env.sh", "env | sort\n");
    write(&root, "tools/_index/scripts/hunt.py", HUNT_PY);
    if let Some(yaml) = config_yaml {
        write(&root, "config.yaml", yaml);
    }
    tmp
}

/// A skills root (here a folder; a git source is the same) whose `config.yaml` asks for the
/// server's secret and points analytics at its own endpoint: both are ignored with a warning
/// naming the file and each key; its script does not see the secret (over MCP, through the real
/// binary), and the endpoint receives nothing, not even at the shutdown flush. Its matching
/// settings still apply.
#[test]
fn a_roots_config_cannot_pass_secrets_or_enable_analytics() {
    let endpoint = Endpoint::start();
    let yaml = format!(
        "scripts:\n  env_passthrough: [SOME_SECRET]\n  runners:\n    .sh: bash\n  timeout_seconds: 30\n\
         analytics:\n  enabled: true\n  endpoint: {}\n  flush_interval_seconds: 1\n\
         matching:\n  min_score: 0.3\n",
        endpoint.url
    );
    let home = env_root(Some(&yaml));
    let root = home.path().join("skills");
    let mut child = bin(
        home.path(),
        &[("SOME_SECRET", "hunter2-root-config"), ("GITHUB_TOKEN", "")],
    )
    .arg("--no-default-roots")
    .arg("--root")
    .arg(&root)
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "run_script",
        "arguments": {"skill_path": "tools/_index", "file": "scripts/env.sh", "args": {}}}}),
    );
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "get_skill", "arguments": {"context": "environment tools"}}}),
    );
    let mut answers = std::collections::HashMap::new();
    let mut line = String::new();
    while answers.len() < 2 && stdout.read_line(&mut line).unwrap() > 0 {
        let v: Value = serde_json::from_str(line.trim()).unwrap_or(Value::Null);
        line.clear();
        if let Some(id) = v["id"].as_i64().filter(|id| *id >= 2) {
            answers.insert(id, v);
        }
    }
    // Longer than the flush interval the root asked for, then the shutdown flush.
    std::thread::sleep(Duration::from_millis(1500));
    drop(stdin);
    let out = wait_bounded(child, Duration::from_secs(60), "the server");
    let err = stderr(&out);

    let run = &answers[&2]["result"]["structuredContent"];
    let env = run["stdout"].as_str().unwrap_or_default();
    assert_eq!(run["success"], true, "{run}\n{err}");
    assert!(env.contains("PATH="), "{env}");
    assert!(
        !env.contains("hunter2"),
        "the script saw the secret:\n{env}"
    );
    assert!(!env.contains("SOME_SECRET"), "{env}");
    assert!(
        answers[&3]["result"].is_object(),
        "get_skill answered: {}",
        answers[&3]
    );
    assert!(
        endpoint.seen().is_empty(),
        "the root's analytics endpoint received {:?}",
        endpoint.seen()
    );
    let config = root.join("config.yaml").display().to_string();
    for key in [
        "scripts.env_passthrough",
        "scripts.runners",
        "analytics.enabled",
        "analytics.endpoint",
        "analytics.flush_interval_seconds",
    ] {
        assert!(
            err.lines()
                .any(|l| l.contains("warning") && l.contains(&config) && l.contains(key)),
            "no warning naming {config} and `{key}`:\n{err}"
        );
    }
    for allowed in ["scripts.timeout_seconds", "matching.min_score"] {
        assert!(!err.contains(allowed), "{allowed} is allowed:\n{err}");
    }
}

/// The same rules, in the configuration as loaded: a root may set matching, lower limits and
/// turn scripts off; it may not raise a limit, turn scripts on, widen the extensions, or set
/// anything of analytics, git, refresh or sources. The operator's `--config` may.
#[test]
fn what_a_root_may_and_may_not_set() {
    use skills_mcp::config::{LoadOptions, load};
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("skills");
    write(
        &root,
        "config.yaml",
        "matching:\n  min_score: 0.35\n  algorithm: keywords\n\
         scripts:\n  timeout_seconds: 5\n  max_output_bytes: 99999999\n  enabled: false\n  \
         allowed_extensions: [.sh, .rb]\n  env_passthrough: [AWS_SECRET_ACCESS_KEY]\n\
         assets:\n  max_size_bytes: 1000\n\
         analytics:\n  buffer_path: /tmp/elsewhere.jsonl\n\
         refresh:\n  interval_seconds: 1\n\
         git:\n  content_dir: /tmp/x\n\
         sources:\n  repos: [{url: 'https://example.invalid/r.git'}]\n",
    );
    let options = LoadOptions {
        roots: vec![root.clone()],
        cwd: home.path().to_path_buf(),
        no_default_roots: true,
        ..LoadOptions::default()
    };
    let loaded = load(&options).unwrap();
    let c = &loaded.config;
    let w = loaded.warnings.join("\n");
    assert_eq!(c.matching.min_score, 0.35);
    assert_eq!(c.scripts.timeout_seconds, 5, "lowered");
    assert_eq!(c.assets.max_size_bytes, 1000, "lowered");
    assert!(!c.scripts.enabled, "turned off");
    assert_eq!(c.scripts.max_output_bytes, 1_048_576, "not raised: {w}");
    assert!(
        !c.scripts.allowed_extensions.iter().any(|e| e == ".rb"),
        "{w}"
    );
    assert!(c.scripts.env_passthrough.is_empty(), "{w}");
    assert_ne!(
        c.analytics.buffer_path,
        PathBuf::from("/tmp/elsewhere.jsonl")
    );
    assert_eq!(c.refresh.interval_seconds, None);
    assert_ne!(c.git.content_dir, PathBuf::from("/tmp/x"));
    assert!(c.sources.repos.is_empty());
    for key in [
        "scripts.max_output_bytes",
        "scripts.allowed_extensions",
        "scripts.env_passthrough",
        "analytics.buffer_path",
        "refresh.interval_seconds",
        "git.content_dir",
        "sources.repos",
    ] {
        assert!(
            loaded
                .warnings
                .iter()
                .any(|l| l.contains("config.yaml") && l.contains(&format!("`{key}`"))),
            "{key}: {w}"
        );
    }
    assert_eq!(loaded.warnings.len(), 7, "{w}");

    // A root may not turn scripts back on that an earlier root turned off.
    let second = home.path().join("second");
    write(&second, "config.yaml", "scripts:\n  enabled: true\n");
    let mut both = options.clone();
    both.roots.push(second);
    let loaded = load(&both).unwrap();
    assert!(!loaded.config.scripts.enabled);
    assert!(
        loaded
            .warnings
            .iter()
            .any(|l| l.contains("second") && l.contains("`scripts.enabled`")),
        "{:?}",
        loaded.warnings
    );

    // The operator's file may set all of it.
    let operator = home.path().join("operator.yaml");
    std::fs::write(
        &operator,
        "scripts:\n  env_passthrough: [TOOL_HOME]\n  max_output_bytes: 99999999\n",
    )
    .unwrap();
    let mut with_file = options.clone();
    with_file.config_file = Some(operator);
    let loaded = load(&with_file).unwrap();
    assert_eq!(loaded.config.scripts.env_passthrough, ["TOOL_HOME"]);
    assert_eq!(loaded.config.scripts.max_output_bytes, 99_999_999);
}

/// A script run by the server (`skills-mcp run`, the real binary) looks for the server's token
/// everywhere a child can: its own environment, the server's `/proc/PID/environ`, `cmdline`,
/// every thread's environ, every readable mapping of its memory, and its own open file
/// descriptors. It finds it nowhere, although the tests run as root.
#[test]
fn a_script_cannot_find_the_servers_secrets() {
    let secret = "ghp_TopSecretToken4242";
    let home = env_root(None);
    let root = home.path().join("skills");
    let reversed: String = secret.chars().rev().collect();
    let out = bin(
        home.path(),
        &[("GITHUB_TOKEN", secret), ("SKILLS_TEST_TOKEN", secret)],
    )
    .arg("--no-default-roots")
    .arg("--root")
    .arg(&root)
    .args(["run", "tools/_index", "scripts/hunt.py", "--arg"])
    .arg(format!("needle_reversed={reversed}"))
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let out = wait_bounded(out, Duration::from_secs(120), "skills-mcp run");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            stderr(&out)
        )
    });
    let report = v["stdout"].as_str().unwrap_or_default();
    assert!(
        !report.contains("found:"),
        "the script found the secret:\n{report}\n{}",
        v["stderr"]
    );
    assert_eq!(v["exit_code"], 0, "{v}");
    // It did look: the kernel refused the server's environment and memory.
    assert!(report.contains("denied: parent environ"), "{report}");
    assert!(!stderr(&out).contains(secret), "{}", stderr(&out));
}

/// The compiled engine in the cache folder, after a first run wrote it.
fn cached_engine(cache: &Path) -> PathBuf {
    std::fs::read_dir(cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .unwrap_or_else(|| panic!("no .cwasm in {}", cache.display()))
}

fn list(home: &Path, root: &Path) -> Output {
    let child = bin(home, &[])
        .arg("--no-default-roots")
        .arg("--root")
        .arg(root)
        .arg("list")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_bounded(child, Duration::from_secs(300), "skills-mcp list")
}

/// Flipped bytes (200, 2,000), a truncated file, another valid-looking file swapped in, and a
/// file others may write: each time the real binary starts, answers, warns once, and the cache
/// holds a good artifact again (the next start is silent). A cache folder others may write is
/// not used at all. (Before the fix, 200 flipped bytes hung every start and 2,000 killed it with
/// SIGILL.)
#[test]
fn a_damaged_engine_cache_never_runs() {
    use sha2::Digest as _;
    use std::os::unix::fs::PermissionsExt as _;
    let home = env_root(None);
    let root = home.path().join("skills");
    let cache = home.path().join("cache");
    let first = list(home.path(), &root);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let listing = String::from_utf8_lossy(&first.stdout).into_owned();
    assert!(listing.contains("tools/_index"), "{listing}");
    assert_eq!(
        std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777,
        0o700,
        "the cache folder is private"
    );
    let file = cached_engine(&cache);
    let good = std::fs::read(&file).unwrap();
    assert!(good.len() > 100_000, "{} bytes", good.len());

    let flip = |n: usize| {
        let mut bytes = good.clone();
        let start = bytes.len() / 3;
        for b in &mut bytes[start..start + n] {
            *b ^= 0x5a;
        }
        bytes
    };
    let mut other = good.clone();
    other.extend_from_slice(b"\0\0\0\0extra section");
    let other_len = other.len();
    other[other_len - 40..].copy_from_slice(&[0x90; 40]);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("200 bytes flipped", flip(200)),
        ("2,000 bytes flipped", flip(2000)),
        ("truncated", good[..good.len() / 2].to_vec()),
        ("another file swapped in", other),
    ];
    let side = PathBuf::from(format!("{}.sha256", file.display()));
    for (case, bytes) in cases {
        std::fs::write(&file, &bytes).unwrap();
        let o = list(home.path(), &root);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{case}: {err}");
        assert_eq!(String::from_utf8_lossy(&o.stdout), listing, "{case}");
        assert_eq!(
            err.matches("ignoring the cached engine").count(),
            1,
            "{case}: one warning\n{err}"
        );
        let now = std::fs::read(&file).unwrap();
        assert_ne!(now, bytes, "{case}: rewritten");
        let digest: String = sha2::Sha256::digest(&now)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let recorded = std::fs::read_to_string(&side).unwrap();
        assert!(recorded.starts_with(&digest), "{case}: {recorded}");
        let again = list(home.path(), &root);
        assert!(
            !stderr(&again).contains("cached engine"),
            "{case}: silent next time\n{}",
            stderr(&again)
        );
    }

    // A cache file others may write is refused (and replaced by a private one).
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let o = list(home.path(), &root);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("others may write"), "{}", stderr(&o));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "rewritten private");

    // A cache folder others may write is not used: compiled in memory, nothing written there.
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::remove_file(&file).unwrap();
    let o = list(home.path(), &root);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not using the compiled-engine cache"),
        "{}",
        stderr(&o)
    );
    assert!(!file.exists(), "nothing written to a shared folder");
}

/// A skill folder and a file whose names hold a newline and an ESC sequence: the server's stderr
/// (its log) holds no raw control character and no line that the name forged; the names appear
/// escaped. `validate`'s report on stdout is escaped the same way.
#[test]
fn control_characters_in_names_cannot_forge_log_lines() {
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("skills");
    let evil = "evil\nskills-mcp: error: FORGED line\x1b[31m";
    write(
        &root,
        &format!("{evil}/SKILL.md"),
        "---\nname: other-name\ndescription: A skill whose folder name is hostile\n---\nBody.\n",
    );
    write(
        &root,
        "notes/bad\n\x1b[2Jname.md",
        "---\ndescription: [unclosed\n---\nBody.\n",
    );
    // At debug, start-up logs each finding (by default they are counted in one line).
    let child = bin(home.path(), &[])
        .args(["--log-level", "debug", "--no-default-roots", "--root"])
        .arg(&root)
        .arg("serve")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_bounded(child, Duration::from_secs(60), "skills-mcp serve");
    let err = stderr(&out);
    assert!(
        err.contains("evil\\nskills-mcp: error: FORGED line\\x1b[31m"),
        "the warning about the hostile folder is logged, escaped:\n{err}"
    );
    assert!(err.contains("bad\\n\\x1b[2Jname.md"), "{err}");
    assert!(!err.contains('\x1b'), "raw ESC in the log:\n{err:?}");
    for line in err.lines() {
        assert!(
            line.starts_with("skills-mcp") || line.starts_with("[skills-mcp]"),
            "a line not written by the server: {line:?}\n{err}"
        );
        assert!(!line.starts_with("skills-mcp: error: FORGED"), "{line:?}");
        assert!(!line.contains('\r'), "{line:?}");
    }

    let out = bin(home.path(), &[])
        .arg("--no-default-roots")
        .arg("--root")
        .arg(&root)
        .arg("validate")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(!report.contains('\x1b'), "{report:?}");
    assert!(
        !report
            .lines()
            .any(|l| l.starts_with("skills-mcp: error: FORGED")),
        "{report}"
    );
    assert!(report.contains("FORGED line\\x1b[31m"), "{report}");
    assert_eq!(
        skills_mcp::logsafe::escape("a\nb\x1b[31m\t\u{85}\u{202e}é"),
        "a\\nb\\x1b[31m\\t\\u{85}\\u{202e}é"
    );
}

/// The check-then-open race: while a thread keeps swapping the skill's `scripts/` folder for a
/// symlink to an outside folder holding a script of the same name, the real server runs the
/// script 200 times over MCP. The outside script never runs: each run either runs the inside
/// script or is refused. (Before the fix, 5 of 200 runs ran the outside one.)
#[test]
fn swapping_scripts_for_a_symlink_never_runs_an_outside_script() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("skills");
    write(
        &root,
        "tools/_index.md",
        "---\ndescription: Tools\nkeywords: [tools]\nscripts:\n  - file: scripts/check.sh\n    \
         description: Check\n    execution: server\n---\nTools.\n",
    );
    write(&root, "tools/_index/scripts/check.sh", "echo inside\n");
    let outside = home.path().join("outside");
    let marker = home.path().join("outside-ran");
    write(
        &outside,
        "check.sh",
        format!("echo OUTSIDE\ntouch '{}'\n", marker.display()),
    );
    // No live reload: the index is built once, before the swapping starts, with the script in
    // place; what is raced is the run itself.
    let operator = home.path().join("operator.yaml");
    std::fs::write(&operator, "refresh:\n  watch: false\n").unwrap();
    let mut child = bin(home.path(), &[])
        .arg("--no-default-roots")
        .arg("--config")
        .arg(&operator)
        .arg("--root")
        .arg(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"result\""), "initialize: {line}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let stop = Arc::new(AtomicBool::new(false));
    let scripts = root.join("tools/_index/scripts");
    let aside = root.join("tools/_index/scripts.real");
    let swapper = {
        let (stop, scripts, aside, outside) = (
            stop.clone(),
            scripts.clone(),
            aside.clone(),
            outside.clone(),
        );
        std::thread::spawn(move || {
            let mut swaps = 0u32;
            while !stop.load(Ordering::Relaxed) && swaps < 1_000_000 {
                std::fs::rename(&scripts, &aside).unwrap();
                std::os::unix::fs::symlink(&outside, &scripts).unwrap();
                std::thread::sleep(Duration::from_micros(500));
                std::fs::remove_file(&scripts).unwrap();
                std::fs::rename(&aside, &scripts).unwrap();
                std::thread::sleep(Duration::from_millis(1));
                swaps += 1;
            }
            swaps
        })
    };
    let (mut inside, mut refused) = (0, 0);
    for id in 1..=200 {
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "run_script",
            "arguments": {"skill_path": "tools/_index", "file": "scripts/check.sh", "args": {}}}}),
        );
        let answer = loop {
            line.clear();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "the server stopped"
            );
            let v: Value = serde_json::from_str(line.trim()).unwrap_or(Value::Null);
            if v["id"] == id {
                break v;
            }
        };
        let text = answer.to_string();
        assert!(
            !text.contains("OUTSIDE"),
            "run {id} ran the outside script: {text}"
        );
        if answer["result"]["structuredContent"]["stdout"] == "inside\n" {
            inside += 1;
        } else {
            refused += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    drop(stdin);
    let _ = wait_bounded(child, Duration::from_secs(60), "the server");
    assert!(!marker.exists(), "the outside script ran");
    assert!(swaps > 10, "the folder was swapped {swaps} times");
    assert!(inside > 0, "no run got through ({refused} refused)");
    eprintln!("200 runs: {inside} ran the inside script, {refused} refused; {swaps} swaps");
}
