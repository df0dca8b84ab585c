//! Tests: scripts. `run_script`'s cascade and sandbox, through real processes.
//!
//! `fake` tests drive the cascade with a stand-in catalog (the executor needs no engine);
//! `engine` tests go through the real catalog.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use skills_mcp::scripts::{
    ArgDecl, Execution, FoundSkill, LocatedScript, LookupError, RunRequest, ScriptCatalog,
    ScriptDecl, ScriptError, ScriptRunner, ScriptsConfig, arg_env_name,
};

/// A stand-in for the catalog facade: skills with a parent, a resource folder and declared
/// files (`None`: a plain asset).
struct Fake {
    root: PathBuf,
    skills: BTreeMap<String, FakeSkill>,
}

struct FakeSkill {
    parent: Option<String>,
    dir: String,
    files: BTreeMap<String, Option<ScriptDecl>>,
}

impl ScriptCatalog for Fake {
    fn skill(&self, skill_path: &str) -> Result<FoundSkill, LookupError> {
        let skill = self
            .skills
            .get(skill_path)
            .ok_or_else(|| LookupError::NotFound(format!("no skill {skill_path}")))?;
        let dir = self.root.join(&skill.dir);
        Ok(FoundSkill {
            skill_path: skill_path.to_string(),
            resource_dir: dir.is_dir().then_some(dir),
        })
    }

    fn locate(&self, skill_path: &str, file: &str) -> Result<LocatedScript, LookupError> {
        if file.is_empty()
            || file.starts_with('/')
            || file.split('/').any(|s| s.is_empty() || s == "..")
        {
            return Err(LookupError::InvalidPath(format!(
                "{file:?} is not relative"
            )));
        }
        let mut current = Some(skill_path.to_string());
        while let Some(path) = current {
            let skill = &self.skills[&path];
            if let Some(decl) = skill.files.get(file) {
                let dir = self.root.join(&skill.dir);
                let abs = dir.join(file);
                return Ok(LocatedScript {
                    file: file.to_string(),
                    script: decl.clone(),
                    from: (path != skill_path).then_some(path.clone()),
                    size: abs.metadata().ok().map(|m| m.len()),
                    root_dir: self.root.clone(),
                    path: abs,
                    resource_dir: dir,
                });
            }
            current = skill.parent.clone();
        }
        Err(LookupError::NotFound(format!("{skill_path} has no {file}")))
    }
}

fn server(args: &[(&str, bool)]) -> Option<ScriptDecl> {
    Some(ScriptDecl {
        execution: Execution::Server,
        args: args
            .iter()
            .map(|(name, required)| ArgDecl {
                name: name.to_string(),
                description: format!("the {name}"),
                required: *required,
            })
            .collect(),
    })
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `_root` (dir `_root`) declares `scripts/shared.sh`; `tools` (dir `tools`, child of
/// `_root`) declares the given files, whose contents are written under `tools/`.
fn fixture(files: &[(&str, Option<ScriptDecl>, &str)]) -> (tempfile::TempDir, Fake) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    write(&root, "_root/scripts/shared.sh", "echo shared; pwd\n");
    let mut skills = BTreeMap::new();
    skills.insert(
        "_root".to_string(),
        FakeSkill {
            parent: None,
            dir: "_root".into(),
            files: [("scripts/shared.sh".to_string(), server(&[]))].into(),
        },
    );
    let mut own = BTreeMap::new();
    for (file, decl, text) in files {
        if !text.is_empty() {
            write(&root, &format!("tools/{file}"), text);
        }
        own.insert(file.to_string(), decl.clone());
    }
    std::fs::create_dir_all(root.join("tools")).unwrap();
    skills.insert(
        "tools".to_string(),
        FakeSkill {
            parent: Some("_root".into()),
            dir: "tools".into(),
            files: own,
        },
    );
    (tmp, Fake { root, skills })
}

/// The test process's PATH and HOME, plus secrets: never this process's whole environment.
fn host_env(extra: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = ["PATH", "HOME", "LANG"]
        .iter()
        .filter_map(|k| std::env::var_os(k).map(|v| (OsString::from(k), v)))
        .collect();
    env.extend(
        extra
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    env
}

fn runner(config: ScriptsConfig) -> ScriptRunner {
    ScriptRunner::with_env(config, host_env(&[]))
}

fn request(file: &str, args: &[(&str, &str)]) -> RunRequest {
    RunRequest {
        skill_path: "tools".into(),
        file: file.into(),
        args: args
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        cwd: None,
    }
}

/// Alive and not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
    }
}

async fn wait_for(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn read_pid(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn success_with_args_as_env() {
    let (_tmp, cat) = fixture(&[(
        "scripts/hello.sh",
        server(&[("name", true), ("client-id", false)]),
        "echo \"hello $SKILL_ARG_NAME ($SKILL_ARG_CLIENT_ID)\"; echo \"argc=$#\"\n",
    )]);
    let out = runner(ScriptsConfig::default())
        .run(
            &cat,
            &request(
                "scripts/hello.sh",
                &[("name", "world"), ("client-id", "42")],
            ),
        )
        .await
        .unwrap();
    let r = &out.response;
    assert!(r.success, "{r:?}");
    assert_eq!(r.exit_code, 0);
    assert_eq!(r.stdout, "hello world (42)\nargc=0\n");
    assert_eq!(r.stderr, "");
    assert_eq!(r.script, "scripts/hello.sh");
    assert!(!out.timed_out);
    let json = serde_json::to_value(r).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys.len(),
        6,
        "{keys:?}: success, exit_code, stdout, stderr, duration_ms, script"
    );
    // Analytics data: names, never values.
    assert_eq!(out.event.execution_mode, "server");
    assert_eq!(out.event.args_provided, ["client-id", "name"]);
    assert_eq!(out.event.skill_path, "tools");
    assert!(out.event.success);
}

#[tokio::test]
async fn failing_script() {
    let (_tmp, cat) = fixture(&[(
        "scripts/fail.sh",
        server(&[]),
        "echo partial; echo \"Error: Missing required field 'clientId'\" >&2; exit 3\n",
    )]);
    let out = runner(ScriptsConfig::default())
        .run(&cat, &request("scripts/fail.sh", &[]))
        .await
        .unwrap();
    assert!(!out.response.success);
    assert_eq!(out.response.exit_code, 3);
    assert_eq!(out.response.stdout, "partial\n");
    assert_eq!(
        out.response.stderr,
        "Error: Missing required field 'clientId'\n"
    );
    assert!(!out.event.success);
    assert_eq!(out.event.exit_code, 3);
}

#[tokio::test]
async fn killed_by_a_signal_reports_128_plus_signal() {
    let (_tmp, cat) = fixture(&[("scripts/die.sh", server(&[]), "kill -9 $$\n")]);
    let out = runner(ScriptsConfig::default())
        .run(&cat, &request("scripts/die.sh", &[]))
        .await
        .unwrap();
    assert_eq!(out.response.exit_code, 137);
    assert!(!out.response.success);
    assert!(!out.timed_out);
}

#[tokio::test]
async fn missing_args_are_all_listed() {
    let (_tmp, cat) = fixture(&[(
        "scripts/need.sh",
        server(&[
            ("alpha", true),
            ("beta", true),
            ("gamma", false),
            ("delta", true),
        ]),
        "echo never\n",
    )]);
    let err = runner(ScriptsConfig::default())
        .run(&cat, &request("scripts/need.sh", &[("beta", "x")]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "missing_args");
    let ScriptError::MissingArgs { missing, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(missing, &["alpha (the alpha)", "delta (the delta)"]);
    let msg = err.to_string();
    assert!(
        msg.contains("alpha") && msg.contains("delta") && !msg.contains("gamma"),
        "{msg}"
    );
    // A name given in another spelling of the same variable counts.
    let ok = runner(ScriptsConfig::default())
        .run(
            &cat,
            &request(
                "scripts/need.sh",
                &[("ALPHA", "1"), ("beta", "2"), ("Delta", "3")],
            ),
        )
        .await
        .unwrap();
    assert!(ok.response.success);
}

#[tokio::test]
async fn undeclared_and_plain_assets_are_refused() {
    let (_tmp, cat) = fixture(&[("scripts/plain.sh", None, "echo no\n")]);
    // A file of the skill that is not declared as a script (e.g. an Agent Skills scripts/ file).
    write(&cat.root, "tools/scripts/undeclared.sh", "echo no\n");
    let r = runner(ScriptsConfig::default());
    let err = r
        .run(&cat, &request("scripts/undeclared.sh", &[]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "script_not_declared");
    assert!(err.to_string().contains("declare no script"), "{err}");
    let err = r
        .run(&cat, &request("scripts/plain.sh", &[]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "script_not_declared");
    assert!(err.to_string().contains("execution: server"), "{err}");
}

#[tokio::test]
async fn client_scripts_get_guidance() {
    let decl = Some(ScriptDecl {
        execution: Execution::Client,
        args: vec![],
    });
    let (_tmp, cat) = fixture(&[("scripts/local.sh", decl, "echo no\n")]);
    let err = runner(ScriptsConfig::default())
        .run(&cat, &request("scripts/local.sh", &[]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "client_side_script");
    let msg = err.to_string();
    assert!(
        msg.contains("runs on the client") && msg.contains("get_asset"),
        "{msg}"
    );
}

#[tokio::test]
async fn wrong_extension() {
    let (_tmp, cat) = fixture(&[
        ("scripts/x.rb", server(&[]), "puts 1\n"),
        ("scripts/noext", server(&[]), "echo 1\n"),
    ]);
    let r = runner(ScriptsConfig::default());
    for file in ["scripts/x.rb", "scripts/noext"] {
        let err = r.run(&cat, &request(file, &[])).await.unwrap_err();
        assert_eq!(err.code(), "extension_not_allowed", "{file}");
        assert!(err.to_string().contains(".sh, .ts, .js, .py"), "{err}");
    }
    // Allowed, but no runner for it.
    let config = ScriptsConfig {
        allowed_extensions: vec![".sh".into(), "rb".into()],
        ..ScriptsConfig::default()
    };
    let err = runner(config)
        .run(&cat, &request("scripts/x.rb", &[]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "no_runner", "{err}");
}

#[tokio::test]
async fn runner_not_on_path() {
    let (_tmp, cat) = fixture(&[("scripts/a.sh", server(&[]), "echo 1\n")]);
    let mut config = ScriptsConfig::default();
    config
        .runners
        .insert(".sh".into(), "no-such-runner-xyz --flag".into());
    let err = runner(config)
        .run(&cat, &request("scripts/a.sh", &[]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "runner_not_found");
    assert!(err.to_string().contains("no-such-runner-xyz"), "{err}");
}

#[tokio::test]
async fn traversal_is_refused() {
    let (_tmp, cat) = fixture(&[("scripts/a.sh", server(&[]), "echo 1\n")]);
    let r = runner(ScriptsConfig::default());
    for file in [
        "../_root/scripts/shared.sh",
        "/etc/passwd",
        "scripts/../../x.sh",
    ] {
        let err = r.run(&cat, &request(file, &[])).await.unwrap_err();
        assert_eq!(err.code(), "path_traversal", "{file}: {err}");
    }
}

#[tokio::test]
async fn symlink_out_of_the_root_is_refused() {
    let (_tmp, cat) = fixture(&[("scripts/link.sh", server(&[]), "")]);
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "evil.sh", "echo evil\n");
    std::fs::create_dir_all(cat.root.join("tools/scripts")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("evil.sh"),
        cat.root.join("tools/scripts/link.sh"),
    )
    .unwrap();
    let err = runner(ScriptsConfig::default())
        .run(&cat, &request("scripts/link.sh", &[]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "file_missing", "{err}");
}

#[tokio::test]
async fn disabled_globally_and_unknown_skill() {
    let (_tmp, cat) = fixture(&[("scripts/a.sh", server(&[]), "echo 1\n")]);
    let config = ScriptsConfig {
        enabled: false,
        ..ScriptsConfig::default()
    };
    let err = runner(config)
        .run(&cat, &request("scripts/a.sh", &[]))
        .await
        .unwrap_err();
    assert_eq!(err, ScriptError::Disabled);
    assert!(err.to_string().contains("disabled globally"));

    let mut req = request("scripts/a.sh", &[]);
    req.skill_path = "nope".into();
    let err = runner(ScriptsConfig::default())
        .run(&cat, &req)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "skill_not_found");
}

#[tokio::test]
async fn declared_but_missing_file() {
    let (_tmp, cat) = fixture(&[("scripts/gone.sh", server(&[]), "")]);
    let err = runner(ScriptsConfig::default())
        .run(&cat, &request("scripts/gone.sh", &[]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "file_missing");
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let (tmp, cat) = fixture(&[(
        "scripts/slow.sh",
        server(&[]),
        // A grandchild in the background, then the script itself ignores SIGTERM.
        "sleep 300 &\necho $! > \"$SKILL_ARG_PIDS/grandchild\"\necho $$ > \"$SKILL_ARG_PIDS/leader\"\n\
         trap '' TERM\necho partial out\necho partial err >&2\nwhile true; do sleep 1; done\n",
    )]);
    let pids = tmp.path().join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    let config = ScriptsConfig {
        timeout_seconds: 1,
        kill_grace_seconds: 1,
        ..ScriptsConfig::default()
    };
    let started = Instant::now();
    let out = runner(config)
        .run(
            &cat,
            &request("scripts/slow.sh", &[("pids", pids.to_str().unwrap())]),
        )
        .await
        .unwrap();
    let took = started.elapsed();
    let r = &out.response;
    assert!(out.timed_out);
    assert!(!r.success);
    assert_eq!(r.exit_code, 137);
    assert_eq!(r.stdout, "partial out\n");
    assert_eq!(
        r.stderr,
        "partial err\n\n[skills-mcp] Script killed: timeout exceeded."
    );
    assert!(
        took >= Duration::from_secs(2),
        "SIGTERM was ignored: grace applies ({took:?})"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
    for who in ["grandchild", "leader"] {
        let pid = read_pid(&pids.join(who));
        let start = Instant::now();
        while alive(pid) && start.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!alive(pid), "{who} {pid} survived");
    }
}

#[tokio::test]
async fn timeout_sigterm_is_enough_for_a_polite_script() {
    let (_tmp, cat) = fixture(&[("scripts/sleep.sh", server(&[]), "echo go\nsleep 300\n")]);
    let config = ScriptsConfig {
        timeout_seconds: 1,
        kill_grace_seconds: 30,
        ..ScriptsConfig::default()
    };
    let started = Instant::now();
    let out = runner(config)
        .run(&cat, &request("scripts/sleep.sh", &[]))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "no need to wait for the grace"
    );
    assert_eq!(out.response.exit_code, 137);
    assert_eq!(out.response.stdout, "go\n");
    assert!(
        out.response
            .stderr
            .ends_with("[skills-mcp] Script killed: timeout exceeded.")
    );
}

#[tokio::test]
async fn background_processes_do_not_outlive_the_script() {
    let (tmp, cat) = fixture(&[(
        "scripts/daemon.sh",
        server(&[]),
        // The grandchild holds stdout open: the answer must not wait for it.
        "sleep 300 &\necho $! > \"$SKILL_ARG_PIDS/grandchild\"\necho done\n",
    )]);
    let pids = tmp.path().join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    let started = Instant::now();
    let out = runner(ScriptsConfig::default())
        .run(
            &cat,
            &request("scripts/daemon.sh", &[("pids", pids.to_str().unwrap())]),
        )
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(out.response.success);
    assert_eq!(out.response.stdout, "done\n");
    let pid = read_pid(&pids.join("grandchild"));
    let start = Instant::now();
    while alive(pid) && start.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid), "grandchild {pid} survived");
}

#[tokio::test]
async fn ten_megabytes_are_truncated() {
    let (_tmp, cat) = fixture(&[(
        "scripts/flood.sh",
        server(&[]),
        "head -c 10485760 /dev/zero | tr '\\0' a\nhead -c 10485760 /dev/zero | tr '\\0' b >&2\n",
    )]);
    let out = runner(ScriptsConfig::default())
        .run(&cat, &request("scripts/flood.sh", &[]))
        .await
        .unwrap();
    let r = &out.response;
    assert!(
        r.success,
        "{}",
        &r.stderr[r.stderr.len().saturating_sub(200)..]
    );
    let marker = "\n[skills-mcp] Output truncated at 1048576 bytes.";
    assert_eq!(r.stdout.len(), 1_048_576 + marker.len());
    assert_eq!(r.stderr.len(), 1_048_576 + marker.len());
    assert!(r.stdout.ends_with(marker) && r.stderr.ends_with(marker));
    assert!(r.stdout[..1_048_576].bytes().all(|b| b == b'a'));
    assert!(r.stderr[..1_048_576].bytes().all(|b| b == b'b'));
    // Everything was read (the script was not blocked on a full pipe), and discarded.
    assert_eq!(out.stdout_bytes, 10_485_760);
    assert_eq!(out.stderr_bytes, 10_485_760);

    // A small cap, for good measure.
    let config = ScriptsConfig {
        max_output_bytes: 10,
        ..ScriptsConfig::default()
    };
    let out = runner(config)
        .run(&cat, &request("scripts/flood.sh", &[]))
        .await
        .unwrap();
    assert_eq!(
        out.response.stdout,
        "aaaaaaaaaa\n[skills-mcp] Output truncated at 10 bytes."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_limit_answers_busy() {
    let (tmp, cat) = fixture(&[(
        "scripts/wait.sh",
        server(&[("dir", true), ("id", true)]),
        "touch \"$SKILL_ARG_DIR/started-$SKILL_ARG_ID\"\n\
         while [ ! -e \"$SKILL_ARG_DIR/release\" ]; do sleep 0.05; done\necho \"$SKILL_ARG_ID\"\n",
    )]);
    let dir = tmp.path().join("sync");
    std::fs::create_dir_all(&dir).unwrap();
    let dir_s = dir.to_str().unwrap().to_string();
    let config = ScriptsConfig {
        max_concurrent: 2,
        timeout_seconds: 30,
        ..ScriptsConfig::default()
    };
    let r = runner(config);
    let cat = std::sync::Arc::new(cat);
    let mut running = Vec::new();
    for id in ["1", "2"] {
        let (r, cat) = (r.clone(), cat.clone());
        let req = request("scripts/wait.sh", &[("dir", &dir_s), ("id", id)]);
        running.push(tokio::spawn(async move { r.run(&*cat, &req).await }));
    }
    wait_for(&dir.join("started-1")).await;
    wait_for(&dir.join("started-2")).await;
    let started = Instant::now();
    let err = r
        .run(
            &*cat,
            &request("scripts/wait.sh", &[("dir", &dir_s), ("id", "3")]),
        )
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "busy is immediate, not queued"
    );
    assert_eq!(err, ScriptError::Busy { limit: 2 });
    assert!(err.to_string().starts_with("busy"));
    assert!(!dir.join("started-3").exists());

    std::fs::write(dir.join("release"), "").unwrap();
    for task in running {
        assert!(task.await.unwrap().unwrap().response.success);
    }
    // Slots are given back.
    let out = r
        .run(
            &*cat,
            &request("scripts/wait.sh", &[("dir", &dir_s), ("id", "4")]),
        )
        .await
        .unwrap();
    assert_eq!(out.response.stdout, "4\n");
}

#[tokio::test]
async fn inherited_script_runs_from_the_child() {
    let (_tmp, cat) = fixture(&[]);
    let out = runner(ScriptsConfig::default())
        .run(&cat, &request("scripts/shared.sh", &[]))
        .await
        .unwrap();
    assert!(out.response.success);
    assert_eq!(out.from.as_deref(), Some("_root"));
    assert_eq!(out.event.skill_path, "tools");
    // Default cwd: the requested skill's resource folder.
    let tools = cat.root.join("tools").canonicalize().unwrap();
    assert_eq!(
        out.response.stdout,
        format!("shared\n{}\n", tools.display())
    );
}

#[tokio::test]
async fn secrets_do_not_reach_the_script() {
    let (_tmp, cat) = fixture(&[(
        "scripts/env.sh",
        server(&[("token", false)]),
        "env | sort\n",
    )]);
    let env = host_env(&[
        ("GITHUB_TOKEN", "ghp_secret"),
        ("ANALYTICS_ENDPOINT", "https://secret.invalid/hook"),
        ("AWS_SECRET_ACCESS_KEY", "aws_secret"),
        ("SKILLS_REPO", "https://user:pw@git.invalid/r"),
        ("MY_TOOL_HOME", "/opt/tool"),
        ("TMPDIR", "/tmp"),
    ]);
    let config = ScriptsConfig {
        env_passthrough: vec!["MY_TOOL_HOME".into()],
        ..ScriptsConfig::default()
    };
    let out = ScriptRunner::with_env(config, env)
        .run(&cat, &request("scripts/env.sh", &[("token", "given")]))
        .await
        .unwrap();
    let stdout = &out.response.stdout;
    for secret in [
        "ghp_secret",
        "secret.invalid",
        "aws_secret",
        "user:pw",
        "GITHUB_TOKEN",
    ] {
        assert!(!stdout.contains(secret), "{secret} leaked:\n{stdout}");
    }
    let names: Vec<&str> = stdout.lines().filter_map(|l| l.split('=').next()).collect();
    for name in &names {
        assert!(
            [
                "PATH",
                "HOME",
                "LANG",
                "TMPDIR",
                "MY_TOOL_HOME",
                "SKILL_ARG_TOKEN",
                "PWD",
                "SHLVL",
                "_"
            ]
            .contains(name),
            "unexpected variable {name}:\n{stdout}"
        );
    }
    assert!(stdout.contains("MY_TOOL_HOME=/opt/tool\n"));
    assert!(stdout.contains("SKILL_ARG_TOKEN=given\n"));
    assert!(stdout.contains("TMPDIR=/tmp\n"));

    // This process's own environment is not the source either.
    let out = runner(ScriptsConfig::default())
        .run(&cat, &request("scripts/env.sh", &[]))
        .await
        .unwrap();
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if !["PATH", "HOME", "LANG", "PWD", "SHLVL", "_"].contains(&name.as_ref()) {
            assert!(
                !out.response.stdout.contains(&format!("\n{name}=")),
                "{name} leaked"
            );
        }
    }
}

#[tokio::test]
async fn no_shell_no_stdin() {
    let (tmp, cat) = fixture(&[(
        "scripts/lit.sh",
        server(&[("v", true)]),
        "printf '%s\\n' \"$SKILL_ARG_V\"\ncat\necho end\n",
    )]);
    let marker = tmp.path().join("pwned");
    let hostile = format!(
        "$(touch {0}); `touch {0}`; rm -rf /nonexistent",
        marker.display()
    );
    let out = runner(ScriptsConfig::default())
        .run(&cat, &request("scripts/lit.sh", &[("v", &hostile)]))
        .await
        .unwrap();
    assert!(out.response.success);
    // `cat` on a closed stdin ends at once; the value arrives verbatim, uninterpreted.
    assert_eq!(out.response.stdout, format!("{hostile}\nend\n"));
    assert!(!marker.exists());
}

#[tokio::test]
async fn argument_names() {
    assert_eq!(
        arg_env_name("client-id").as_deref(),
        Some("SKILL_ARG_CLIENT_ID")
    );
    assert_eq!(arg_env_name("a.b c").as_deref(), Some("SKILL_ARG_A_B_C"));
    assert_eq!(arg_env_name("ünï").as_deref(), Some("SKILL_ARG__N_"));
    assert_eq!(arg_env_name(""), None);

    let (_tmp, cat) = fixture(&[("scripts/a.sh", server(&[]), "echo 1\n")]);
    let r = runner(ScriptsConfig::default());
    let err = r
        .run(&cat, &request("scripts/a.sh", &[("", "x")]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_args", "{err}");
    let err = r
        .run(
            &cat,
            &request("scripts/a.sh", &[("a-b", "1"), ("a_b", "2")]),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_args");
    assert!(err.to_string().contains("SKILL_ARG_A_B"), "{err}");
    let big = "x".repeat(200 * 1024);
    let err = r
        .run(&cat, &request("scripts/a.sh", &[("big", &big)]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_args");
}

#[tokio::test]
async fn cwd_handling() {
    let (tmp, cat) = fixture(&[("scripts/pwd.sh", server(&[]), "pwd\n")]);
    let r = runner(ScriptsConfig::default());
    // Default: the skill's resource folder.
    let out = r.run(&cat, &request("scripts/pwd.sh", &[])).await.unwrap();
    let tools = cat.root.join("tools").canonicalize().unwrap();
    assert_eq!(out.response.stdout, format!("{}\n", tools.display()));
    // Given: used.
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut req = request("scripts/pwd.sh", &[]);
    req.cwd = Some(work.clone());
    let out = r.run(&cat, &req).await.unwrap();
    assert_eq!(
        out.response.stdout,
        format!("{}\n", work.canonicalize().unwrap().display())
    );
    // Missing, or a file: refused.
    req.cwd = Some(tmp.path().join("absent"));
    let err = r.run(&cat, &req).await.unwrap_err();
    assert_eq!(err.code(), "invalid_cwd");
    assert!(err.to_string().contains("does not exist"), "{err}");
    req.cwd = Some(cat.root.join("tools/scripts/pwd.sh"));
    let err = r.run(&cat, &req).await.unwrap_err();
    assert_eq!(err.code(), "invalid_cwd");
    assert!(err.to_string().contains("not a directory"), "{err}");
}

#[tokio::test]
async fn python_and_node_runners() {
    let (_tmp, cat) = fixture(&[
        (
            "scripts/p.py",
            server(&[("n", true)]),
            "import os\nprint('py', int(os.environ['SKILL_ARG_N']) * 2)\n",
        ),
        (
            "scripts/n.js",
            server(&[("n", true)]),
            "console.log('js', Number(process.env.SKILL_ARG_N) * 2)\n",
        ),
    ]);
    let r = runner(ScriptsConfig::default());
    let py = r
        .run(&cat, &request("scripts/p.py", &[("n", "21")]))
        .await
        .unwrap();
    assert_eq!(py.response.stdout, "py 42\n", "{}", py.response.stderr);
    let js = r
        .run(&cat, &request("scripts/n.js", &[("n", "21")]))
        .await
        .unwrap();
    assert_eq!(js.response.stdout, "js 42\n", "{}", js.response.stderr);
}

#[test]
fn config_section() {
    let d = ScriptsConfig::default();
    assert!(d.enabled);
    assert_eq!(d.timeout_seconds, 60);
    assert_eq!(d.max_output_bytes, 1_048_576);
    assert_eq!(d.allowed_extensions, [".sh", ".ts", ".js", ".py"]);
    assert_eq!(
        d.runner_for(".ts"),
        Some(("npx".into(), vec!["tsx".into()]))
    );
    assert_eq!(d.runner_for("sh"), Some(("bash".into(), vec![])));
    assert_eq!(d.max_concurrent, 4);
    assert_eq!(d.kill_grace_seconds, 5);
    assert!(d.env_passthrough.is_empty());
    assert!(skills_mcp::config::Config::default().check().is_empty());

    // Through the real loader: runners merge over the defaults; ranges are checked.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("c.yaml");
    std::fs::write(
        &file,
        "scripts:\n  enabled: false\n  max_concurrent: 2\n  env_passthrough: [JAVA_HOME]\n  \
         runners:\n    .rb: ruby\n    .py: python3 -I\n",
    )
    .unwrap();
    let opts = skills_mcp::config::LoadOptions {
        config_file: Some(file.clone()),
        roots: vec![tmp.path().to_path_buf()],
        cwd: tmp.path().to_path_buf(),
        ..Default::default()
    };
    let loaded = skills_mcp::config::load(&opts).unwrap();
    let c = &loaded.config.scripts;
    assert!(!c.enabled);
    assert_eq!(c.max_concurrent, 2);
    assert_eq!(c.env_passthrough, ["JAVA_HOME"]);
    assert_eq!(c.timeout_seconds, 60);
    assert_eq!(c.runner_for(".rb"), Some(("ruby".into(), vec![])));
    assert_eq!(
        c.runner_for(".py"),
        Some(("python3".into(), vec!["-I".into()]))
    );
    assert_eq!(c.runner_for(".sh"), Some(("bash".into(), vec![])));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);

    std::fs::write(&file, "scripts:\n  max_concurrent: 0\n").unwrap();
    let err = skills_mcp::config::load(&opts).unwrap_err();
    assert!(
        format!("{err:#}").contains("scripts.max_concurrent"),
        "{err:#}"
    );
}

/// Through the real catalog (the engine decides what is declared, inherited and a valid path).
mod engine {
    use std::path::Path;

    use skills_mcp::catalog::{Catalog, CatalogOptions, RootSpec};
    use skills_mcp::scripts::{RunRequest, ScriptRunner, ScriptsConfig};

    use super::write;

    const TOOLS_INDEX: &str = "---
description: Shared tooling for the tools section
keywords: [tools]
scripts:
  - file: scripts/shared.sh
    description: Greets
    execution: server
    args:
      - name: who
        description: who to greet
      - name: opt
        description: optional
        required: false
  - file: scripts/client.sh
    description: Runs on the client (the default)
  - file: scripts/x.rb
    description: Ruby
    execution: server
  - file: scripts/gone.sh
    description: Declared, never written
    execution: server
assets:
  - file: assets/plain.sh
    description: Not a script
---
Tools rules.
";

    /// `_root`; `tools/_index` declaring scripts; `tools/child` (inherits; has a resource
    /// folder); `tools/orphan` (`inherit: false`); an Agent Skills folder `agent` with a
    /// declared server script and an undeclared `scripts/` file.
    fn tree() -> (tempfile::TempDir, Catalog) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(
            root,
            "_root.md",
            "---\ndescription: Global rules\nkeywords: [global]\n---\nRoot.\n",
        );
        write(root, "tools/_index.md", TOOLS_INDEX);
        write(
            root,
            "tools/_index/scripts/shared.sh",
            "echo \"hi $SKILL_ARG_WHO\"\npwd\n",
        );
        write(root, "tools/_index/scripts/client.sh", "echo client\n");
        write(root, "tools/_index/scripts/x.rb", "puts 1\n");
        write(root, "tools/_index/assets/plain.sh", "echo plain\n");
        write(
            root,
            "tools/child.md",
            "---\ndescription: A child of tools\nkeywords: [child]\n---\nChild.\n",
        );
        write(root, "tools/child/notes.txt", "notes\n");
        write(
            root,
            "tools/orphan.md",
            "---\ndescription: Stands alone\nkeywords: [orphan]\ninherit: false\n---\nOrphan.\n",
        );
        write(
            root,
            "agent/SKILL.md",
            "---\nname: agent\ndescription: An Agent Skills folder with scripts\nscripts:\n  - file: scripts/declared.sh\n    description: Declared for the server\n    execution: server\n---\nBody.\n",
        );
        write(root, "agent/scripts/declared.sh", "echo declared\n");
        write(root, "agent/scripts/undeclared.sh", "echo undeclared\n");
        let catalog = Catalog::open(vec![RootSpec::new(root)], CatalogOptions::default()).unwrap();
        (tmp, catalog)
    }

    fn req(skill: &str, file: &str, args: &[(&str, &str)]) -> RunRequest {
        RunRequest {
            skill_path: skill.into(),
            file: file.into(),
            args: args
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cwd: None,
        }
    }

    fn runner() -> ScriptRunner {
        ScriptRunner::with_env(ScriptsConfig::default(), super::host_env(&[]))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn inherited_script_runs_from_the_child() {
        let (tmp, catalog) = tree();
        let out = runner()
            .run_with_catalog(
                &catalog,
                req("tools/child", "scripts/shared.sh", &[("who", "you")]),
            )
            .await
            .unwrap();
        let child = tmp.path().join("tools/child").canonicalize().unwrap();
        assert_eq!(
            out.response.stdout,
            format!("hi you\n{}\n", child.display())
        );
        assert!(out.response.success);
        assert_eq!(out.response.script, "scripts/shared.sh");
        assert_eq!(out.from.as_deref(), Some("tools/_index"));
        assert_eq!(out.event.skill_path, "tools/child");

        // From the declaring skill itself; its resource folder is the default cwd.
        let out = runner()
            .run_with_catalog(
                &catalog,
                req("tools/_index", "scripts/shared.sh", &[("who", "me")]),
            )
            .await
            .unwrap();
        let own = tmp.path().join("tools/_index").canonicalize().unwrap();
        assert_eq!(out.response.stdout, format!("hi me\n{}\n", own.display()));
        assert_eq!(out.from, None);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cascade_through_the_engine() {
        let (_tmp, catalog) = tree();
        let r = runner();
        let who = [("who", "x")];
        type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], &'a [&'a str]);
        let cases: &[Case] = &[
            (
                "nope/missing",
                "scripts/shared.sh",
                &who,
                &["skill_not_found"],
            ),
            (
                "tools/child",
                "../_index/scripts/shared.sh",
                &who,
                &["path_traversal"],
            ),
            ("tools/child", "/etc/passwd", &who, &["path_traversal"]),
            (
                "tools/child",
                "scripts/nothing.sh",
                &who,
                &["script_not_declared"],
            ),
            (
                "tools/child",
                "assets/plain.sh",
                &who,
                &["script_not_declared"],
            ),
            (
                "tools/child",
                "scripts/client.sh",
                &who,
                &["client_side_script"],
            ),
            ("tools/child", "scripts/shared.sh", &[], &["missing_args"]),
            (
                "tools/child",
                "scripts/x.rb",
                &who,
                &["extension_not_allowed"],
            ),
            ("tools/child", "scripts/gone.sh", &who, &["file_missing"]),
            // `inherit: false`: the parent's scripts are not the orphan's.
            (
                "tools/orphan",
                "scripts/shared.sh",
                &who,
                &["script_not_declared"],
            ),
            // An Agent Skills scripts/ file runs only when declared `execution: server`.
            (
                "agent",
                "scripts/undeclared.sh",
                &[],
                &["script_not_declared", "client_side_script"],
            ),
        ];
        for (skill, file, args, codes) in cases {
            let err = r
                .run_with_catalog(&catalog, req(skill, file, args))
                .await
                .expect_err(&format!("{skill} {file} should be refused"));
            assert!(
                codes.contains(&err.code()),
                "{skill} {file}: {} {err}",
                err.code()
            );
        }
        let err = r
            .run_with_catalog(&catalog, req("tools/child", "scripts/shared.sh", &[]))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("who (who to greet)"), "{err}");
        assert!(!err.to_string().contains("opt"), "{err}");

        let out = r
            .run_with_catalog(&catalog, req("agent", "scripts/declared.sh", &[]))
            .await
            .unwrap();
        assert_eq!(out.response.stdout, "declared\n");

        let off = ScriptRunner::with_env(
            ScriptsConfig {
                enabled: false,
                ..ScriptsConfig::default()
            },
            super::host_env(&[]),
        );
        let err = off
            .run_with_catalog(&catalog, req("agent", "scripts/declared.sh", &[]))
            .await
            .unwrap_err();
        assert_eq!(err.code(), "scripts_disabled");
    }

    fn bundled() -> Catalog {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills");
        Catalog::open(vec![RootSpec::new(dir)], CatalogOptions::default()).unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bundled_server_scripts() {
        let catalog = bundled();
        let r = runner();

        let good = r
            .run_with_catalog(
                &catalog,
                req(
                    "git/commit-messages",
                    "scripts/check-commit-msg.sh",
                    &[("message", "feat(api): add token refresh")],
                ),
            )
            .await
            .unwrap();
        assert!(good.response.success, "{:?}", good.response);
        let bad = r
            .run_with_catalog(
                &catalog,
                req(
                    "git/commit-messages",
                    "scripts/check-commit-msg.sh",
                    &[("message", "Added stuff.")],
                ),
            )
            .await
            .unwrap();
        assert_eq!(bad.response.exit_code, 1, "{:?}", bad.response);
        assert!(
            bad.response.stdout.contains("error: line 1"),
            "{:?}",
            bad.response
        );

        // A JWT with alg none: decoded, flagged.
        let token = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiIxMjMifQ.";
        let jwt = r
            .run_with_catalog(
                &catalog,
                req("api/auth", "scripts/inspect-jwt.py", &[("token", token)]),
            )
            .await
            .unwrap();
        assert!(
            jwt.response.stdout.contains("\"sub\""),
            "{:?}",
            jwt.response
        );
        assert!(!jwt.response.success);

        // The .env checker reads a path relative to the cwd given.
        let work = tempfile::tempdir().unwrap();
        write(
            work.path(),
            ".env",
            "AUTH_ISSUER_URL=https://id.example.com\nAUTH_CLIENT_ID=web\n\
             AUTH_REDIRECT_URI=https://app.example.com/callback\nSESSION_SECRET=0123456789abcdef0123456789abcdef\n",
        );
        let mut env_req = req(
            "ui/react/auth",
            "scripts/validate-auth-config.sh",
            &[("env_file", ".env")],
        );
        env_req.cwd = Some(work.path().to_path_buf());
        let env = r.run_with_catalog(&catalog, env_req).await.unwrap();
        assert!(env.response.success, "{:?}", env.response);
        assert!(
            !env.response.stdout.contains("0123456789abcdef"),
            "secrets are never printed"
        );

        // Inherited by an Agent Skills folder from its hierarchical parent.
        let lint = r
            .run_with_catalog(
                &catalog,
                req(
                    "authoring/writing-skills",
                    "scripts/lint-frontmatter.py",
                    &[("path", work.path().to_str().unwrap())],
                ),
            )
            .await
            .unwrap();
        assert_eq!(lint.from.as_deref(), Some("authoring/_index"));
        assert!(lint.response.exit_code <= 1, "{:?}", lint.response);

        // The folder's own undeclared scripts/ file and client scripts are refused.
        for (skill, file) in [
            ("authoring/writing-skills", "scripts/new-skill.sh"),
            ("ui/react/auth", "scripts/scaffold-auth.sh"),
        ] {
            let err = r
                .run_with_catalog(&catalog, req(skill, file, &[]))
                .await
                .unwrap_err();
            assert!(
                ["script_not_declared", "client_side_script"].contains(&err.code()),
                "{skill} {file}: {err}"
            );
        }
    }
}

/// The CLI verb `run`, through the real binary.
mod cli {
    use std::path::Path;
    use std::process::{Command, Output};
    use std::time::{Duration, Instant};

    use serde_json::Value;

    use super::{alive, read_pid, write};

    const INDEX: &str = "---
description: Scripts for the CLI tests
keywords: [cli]
scripts:
  - file: scripts/env.sh
    description: Prints its environment
    execution: server
  - file: scripts/slow.sh
    description: Starts a grandchild, then never ends
    execution: server
    args:
      - name: pids
        description: folder for the pid files
  - file: scripts/pwd.sh
    description: Prints its working directory
    execution: server
---
Body.
";

    fn tree(config_yaml: Option<&str>) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(root, "tools/_index.md", INDEX);
        write(root, "tools/_index/scripts/env.sh", "env | sort\n");
        write(
            root,
            "tools/_index/scripts/slow.sh",
            "sleep 300 &\necho $! > \"$SKILL_ARG_PIDS/grandchild\"\necho started\nsleep 300\n",
        );
        write(root, "tools/_index/scripts/pwd.sh", "pwd\n");
        if let Some(yaml) = config_yaml {
            write(root, "config.yaml", yaml);
        }
        tmp
    }

    /// `skills-mcp --root ROOT run ...` with only `env` added to a minimal environment.
    fn run(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skills-mcp"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", root)
            // Keep the compiled-engine cache out of the skill root (it may be the bundled one).
            .env(
                "SKILLS_MCP_CACHE_DIR",
                Path::new(env!("CARGO_TARGET_TMPDIR")).join("engine-cache"),
            )
            .arg("--root")
            .arg(root)
            .arg("run")
            .args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    fn json(o: &Output) -> Value {
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "{e}: stdout {:?} stderr {:?}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        })
    }

    fn stderr(o: &Output) -> String {
        String::from_utf8_lossy(&o.stderr).into_owned()
    }

    #[test]
    fn bundled_scripts_and_exit_codes() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills");
        let ok = run(
            &root,
            &[
                "git/commit-messages",
                "scripts/check-commit-msg.sh",
                "--arg",
                "message=docs: explain run_script",
            ],
            &[],
        );
        assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
        let v = json(&ok);
        assert_eq!(v["success"], true);
        assert_eq!(v["exit_code"], 0);
        assert_eq!(v["script"], "scripts/check-commit-msg.sh");
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "duration_ms",
                "exit_code",
                "script",
                "stderr",
                "stdout",
                "success"
            ]
        );

        let failed = run(
            &root,
            &[
                "git/commit-messages",
                "scripts/check-commit-msg.sh",
                "--arg",
                "message=did things",
            ],
            &[],
        );
        assert_eq!(failed.status.code(), Some(1));
        assert_eq!(json(&failed)["exit_code"], 1);

        let missing = run(&root, &["api/auth", "scripts/inspect-jwt.py"], &[]);
        assert_eq!(missing.status.code(), Some(2));
        assert!(
            stderr(&missing).contains("missing required arguments"),
            "{}",
            stderr(&missing)
        );
        assert!(missing.stdout.is_empty());

        let client = run(&root, &["ui/react/auth", "scripts/scaffold-auth.sh"], &[]);
        assert_eq!(client.status.code(), Some(1));
        assert!(stderr(&client).contains("get_asset"), "{}", stderr(&client));

        let traversal = run(&root, &["api/auth", "../auth.md"], &[]);
        assert_eq!(traversal.status.code(), Some(2));
        assert!(
            stderr(&traversal).contains("path traversal"),
            "{}",
            stderr(&traversal)
        );

        let bad_arg = run(
            &root,
            &["api/auth", "scripts/inspect-jwt.py", "--arg", "token"],
            &[],
        );
        assert_eq!(bad_arg.status.code(), Some(2));
        assert!(
            stderr(&bad_arg).contains("NAME=VALUE"),
            "{}",
            stderr(&bad_arg)
        );
    }

    #[test]
    fn server_secrets_stay_out() {
        let tmp = tree(None);
        let o = run(
            tmp.path(),
            &["tools/_index", "scripts/env.sh", "--arg", "x-y=1"],
            &[
                ("GITHUB_TOKEN", "ghp_topsecret"),
                ("ANALYTICS_ENDPOINT", "http://127.0.0.1:9/secret-hook"),
                ("DATABASE_PASSWORD", "hunter2"),
                ("LANG", "C.UTF-8"),
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = json(&o)["stdout"].as_str().unwrap().to_string();
        for secret in [
            "ghp_topsecret",
            "secret-hook",
            "hunter2",
            "GITHUB_TOKEN",
            "DATABASE",
        ] {
            assert!(!out.contains(secret), "{secret} leaked:\n{out}");
        }
        assert!(out.contains("SKILL_ARG_X_Y=1\n"), "{out}");
        assert!(out.contains("LANG=C.UTF-8\n"), "{out}");
    }

    #[test]
    fn config_yaml_disables_and_passes_through() {
        let tmp = tree(Some("scripts:\n  enabled: false\n"));
        let o = run(tmp.path(), &["tools/_index", "scripts/pwd.sh"], &[]);
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).contains("disabled globally"), "{}", stderr(&o));

        // The pass-through list is the operator's (`--config`), never a root's.
        let tmp = tree(None);
        let operator = tmp.path().join("operator.yaml");
        std::fs::write(&operator, "scripts:\n  env_passthrough: [TOOL_HOME]\n").unwrap();
        let o = run(
            tmp.path(),
            &[
                "tools/_index",
                "scripts/env.sh",
                "--config",
                operator.to_str().unwrap(),
            ],
            &[("TOOL_HOME", "/opt/tool"), ("OTHER", "no")],
        );
        let out = json(&o)["stdout"].as_str().unwrap().to_string();
        assert!(out.contains("TOOL_HOME=/opt/tool\n"), "{out}");
        assert!(!out.contains("OTHER="), "{out}");
    }

    #[test]
    fn cwd_flag() {
        let tmp = tree(None);
        let work = tempfile::tempdir().unwrap();
        let o = run(
            tmp.path(),
            &[
                "tools/_index",
                "scripts/pwd.sh",
                "--cwd",
                work.path().to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let expected = format!("{}\n", work.path().canonicalize().unwrap().display());
        assert_eq!(json(&o)["stdout"], expected.as_str());

        let o = run(
            tmp.path(),
            &["tools/_index", "scripts/pwd.sh", "--cwd", "/no/such/dir"],
            &[],
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("invalid cwd"), "{}", stderr(&o));
    }

    #[test]
    fn timeout_from_config_kills_the_grandchild() {
        let tmp = tree(Some(
            "scripts:\n  timeout_seconds: 1\n  kill_grace_seconds: 1\n",
        ));
        let pids = tmp.path().join("pids");
        std::fs::create_dir_all(&pids).unwrap();
        let started = Instant::now();
        let o = run(
            tmp.path(),
            &[
                "tools/_index",
                "scripts/slow.sh",
                "--arg",
                &format!("pids={}", pids.display()),
            ],
            &[],
        );
        assert!(started.elapsed() < Duration::from_secs(15));
        assert_eq!(o.status.code(), Some(1));
        let v = json(&o);
        assert_eq!(v["exit_code"], 137);
        assert_eq!(v["success"], false);
        assert_eq!(v["stdout"], "started\n");
        assert!(
            v["stderr"]
                .as_str()
                .unwrap()
                .ends_with("\n[skills-mcp] Script killed: timeout exceeded.")
        );
        let pid = read_pid(&pids.join("grandchild"));
        let start = Instant::now();
        while alive(pid) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(pid), "grandchild {pid} survived");
    }
}

/// The MCP tool `run_script`: in process (an rmcp client over a duplex pipe) and through the
/// real binary over stdio.
mod mcp {
    use std::path::Path;
    use std::time::{Duration, Instant};

    use rmcp::model::{CallToolRequestParams, CallToolResult};
    use rmcp::service::RunningService;
    use rmcp::{RoleClient, ServiceExt};
    use serde_json::{Value, json};
    use skills_mcp::config::{self, LoadOptions};
    use skills_mcp::mcp::SkillsServer;

    use super::write;

    const INDEX: &str = "---
description: Scripts for the MCP tests
keywords: [mcp]
scripts:
  - file: scripts/echo.sh
    description: Echoes its arguments
    execution: server
    args:
      - name: text
        description: what to print
      - name: count
        description: a number
        required: false
  - file: scripts/env.sh
    description: Prints its environment
    execution: server
  - file: scripts/client.sh
    description: For the client
  - file: scripts/wait.sh
    description: Waits for a file
    execution: server
    args:
      - name: dir
        description: folder to watch
---
Body.
";

    fn tree() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(root, "tools/_index.md", INDEX);
        write(
            root,
            "tools/_index/scripts/echo.sh",
            "echo \"$SKILL_ARG_TEXT ${SKILL_ARG_COUNT:-none}\"\necho oops >&2\nexit 4\n",
        );
        write(root, "tools/_index/scripts/env.sh", "env | sort\n");
        write(root, "tools/_index/scripts/client.sh", "echo client\n");
        write(
            root,
            "tools/_index/scripts/wait.sh",
            "touch \"$SKILL_ARG_DIR/started\"\n\
             while [ ! -e \"$SKILL_ARG_DIR/release\" ]; do sleep 0.05; done\necho released\n",
        );
        tmp
    }

    /// A server over `root` with the `scripts` section given as YAML (off the async threads).
    fn open_server(root: &Path, scripts_yaml: &str) -> (SkillsServer, tempfile::TempDir) {
        let cfg = tempfile::tempdir().unwrap();
        write(cfg.path(), "c.yaml", &format!("scripts:\n{scripts_yaml}"));
        let opts = LoadOptions {
            roots: vec![root.to_path_buf()],
            cwd: std::env::temp_dir(),
            config_file: Some(cfg.path().join("c.yaml")),
            ..Default::default()
        };
        let server = tokio::task::block_in_place(|| {
            let loaded = config::load(&opts).expect("config loads");
            skills_mcp::mcp::open(&loaded).expect("server opens")
        });
        (server, cfg)
    }

    async fn connect(server: SkillsServer) -> RunningService<RoleClient, ()> {
        let (a, b) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            let _ = server.serve_transport(a).await;
        });
        ().serve(b).await.expect("client connects")
    }

    async fn call(client: &RunningService<RoleClient, ()>, args: Value) -> CallToolResult {
        let Value::Object(args) = args else {
            panic!("an object")
        };
        client
            .call_tool(CallToolRequestParams::new("run_script").with_arguments(args))
            .await
            .expect("no protocol error")
    }

    fn text(r: &CallToolResult) -> String {
        r.content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn ok(r: CallToolResult) -> Value {
        assert_ne!(r.is_error, Some(true), "tool error: {}", text(&r));
        match r.structured_content {
            Some(v) => v,
            None => serde_json::from_str(&text(&r)).unwrap(),
        }
    }

    fn err(r: CallToolResult) -> String {
        assert_eq!(r.is_error, Some(true), "expected an error: {}", text(&r));
        text(&r)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn run_script_answers_the_spec_json_and_refuses_with_messages() {
        let root = tree();
        let (server, _cfg) = open_server(root.path(), "  timeout_seconds: 30\n");
        let client = connect(server).await;

        let tools = client.list_all_tools().await.unwrap();
        let tool = tools
            .iter()
            .find(|t| t.name == "run_script")
            .expect("listed");
        let a = tool.annotations.as_ref().expect("annotations");
        assert_eq!(a.destructive_hint, Some(true));
        assert_eq!(a.open_world_hint, Some(true));
        assert_eq!(a.read_only_hint, Some(false));
        let props = tool.input_schema.get("properties").unwrap();
        for key in ["skill_path", "file", "args", "cwd"] {
            assert!(props.get(key).is_some(), "{key} in the schema");
        }

        // A failing script is a result (success: false), not a tool error.
        let v = ok(call(
            &client,
            json!({"skill_path": "tools/_index", "file": "scripts/echo.sh",
                   "args": {"text": "hello", "count": 3}}),
        )
        .await);
        assert_eq!(
            v,
            json!({"success": false, "exit_code": 4, "stdout": "hello 3\n", "stderr": "oops\n",
                   "duration_ms": v["duration_ms"], "script": "scripts/echo.sh"})
        );
        assert!(v["duration_ms"].is_u64());

        let e = err(call(
            &client,
            json!({"skill_path": "tools/_index", "file": "scripts/client.sh", "args": {}}),
        )
        .await);
        assert!(
            e.contains("runs on the client") && e.contains("get_asset"),
            "{e}"
        );
        let e = err(call(
            &client,
            json!({"skill_path": "tools/_index", "file": "scripts/echo.sh", "args": {}}),
        )
        .await);
        assert!(
            e.contains("missing required arguments") && e.contains("text"),
            "{e}"
        );
        let e = err(call(
            &client,
            json!({"skill_path": "tools/_index", "file": "../_index.md", "args": {}}),
        )
        .await);
        assert!(e.contains("path traversal"), "{e}");
        let e = err(call(
            &client,
            json!({"skill_path": "tools/nope", "file": "scripts/echo.sh", "args": {}}),
        )
        .await);
        assert!(e.contains("skill not found"), "{e}");
        let e = err(call(
            &client,
            json!({"skill_path": "tools/_index", "file": "scripts/env.sh", "args": {},
                   "cwd": "/no/such/dir"}),
        )
        .await);
        assert!(e.contains("invalid cwd"), "{e}");
        client.cancel().await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn run_script_is_busy_beyond_max_concurrent_and_can_be_disabled() {
        let root = tree();
        let sync = tempfile::tempdir().unwrap();
        let dir = sync.path().to_str().unwrap().to_string();
        let (server, _cfg) =
            open_server(root.path(), "  max_concurrent: 1\n  timeout_seconds: 30\n");
        let client = std::sync::Arc::new(connect(server).await);

        let first = {
            let (client, dir) = (client.clone(), dir.clone());
            tokio::spawn(async move {
                call(
                    &client,
                    json!({"skill_path": "tools/_index", "file": "scripts/wait.sh",
                           "args": {"dir": dir}}),
                )
                .await
            })
        };
        super::wait_for(&sync.path().join("started")).await;
        let started = Instant::now();
        let e = err(call(
            &client,
            json!({"skill_path": "tools/_index", "file": "scripts/wait.sh", "args": {"dir": dir}}),
        )
        .await);
        assert!(e.starts_with("busy"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(2));
        std::fs::write(sync.path().join("release"), "").unwrap();
        let v = ok(first.await.unwrap());
        assert_eq!(v["stdout"], "released\n");

        let (off, _cfg) = open_server(root.path(), "  enabled: false\n");
        let off = connect(off).await;
        let e = err(call(
            &off,
            json!({"skill_path": "tools/_index", "file": "scripts/env.sh", "args": {}}),
        )
        .await);
        assert!(e.contains("disabled globally"), "{e}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_binary_keeps_its_secrets_from_scripts() {
        use rmcp::transport::TokioChildProcess;
        let root = tree();
        let home = tempfile::tempdir().unwrap();
        let mut cmd = crate::common::stdio_server(home.path());
        cmd.arg("--root")
            .arg(root.path())
            .env("GITHUB_TOKEN", "ghp_server_secret")
            .env("ANALYTICS_ENDPOINT", "http://127.0.0.1:9/secret-endpoint")
            .env("SOME_API_KEY", "sk-live-secret");
        let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
        let r = client
            .call_tool(
                CallToolRequestParams::new("run_script").with_arguments(
                    json!({"skill_path": "tools/_index", "file": "scripts/env.sh", "args": {}})
                        .as_object()
                        .unwrap()
                        .clone(),
                ),
            )
            .await
            .unwrap();
        let v = ok(r);
        let out = v["stdout"].as_str().unwrap();
        for secret in [
            "ghp_server_secret",
            "secret-endpoint",
            "sk-live-secret",
            "GITHUB_TOKEN",
        ] {
            assert!(!out.contains(secret), "{secret} leaked:\n{out}");
        }
        assert!(out.contains("PATH="), "{out}");
        client.cancel().await.unwrap();
    }
}
