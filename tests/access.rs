//! Tests: who sees which skill (issue 24), through the real binary over HTTP on 127.0.0.1 with
//! several tokens (a finance group, an hr subject, a rule's scope, no groups) and a JWT whose
//! groups sit in a nested claim.
//!
//! The proof that a hidden skill leaks nothing is a comparison: the same requests, by the
//! same caller, are answered byte for byte the same by a server where the hidden skills are
//! really absent from the disk (every surface: tools, resources, prompts, the Skills
//! extension, the instructions, error messages, counts and digests); and the hidden names,
//! paths and contents never appear in any answer. The permitted caller sees them.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::common::{agent_skill_md, bin, write_files};

/// How long a reload may take to show in the log.
const RELOADED: &str = "reload: applied";
use crate::http::{Answer, Server, initialize_with, post_2026_with, raw};
use crate::http_auth::{ISSUER, TestKey, jwks, now};

const T_FIN: &str = "tok-finance-0123456789abcdefghijk";
const T_HR: &str = "tok-hr-0123456789abcdefghijklmnopq";
const T_SCOPE: &str = "tok-scope-0123456789abcdefghijklmn";
const T_NONE: &str = "tok-none-0123456789abcdefghijklmno";

/// Strings of the finance skills: none may reach a caller outside the finance group.
const FINANCE_SECRETS: [&str; 5] = [
    "finance/budget",
    "finance-budget",
    "zorblatt",
    "secret-budget-content",
    "budget-template",
];
/// Strings of the hr root's skill: only alice and the `skills:hr` scope see them.
const HR_SECRETS: [&str; 3] = ["leave-policy", "quuxvacation", "secret-leave-content"];

/// The two roots: `main` (finance and general skills) and `hr` (named `hr-handbook`).
struct Tree {
    _dir: TempDir,
    main: PathBuf,
    hr: PathBuf,
    config: PathBuf,
    tokens: PathBuf,
    jwks: PathBuf,
}

fn tree(with_finance: bool, rules: &str, key: &TestKey) -> Tree {
    let dir = TempDir::new().unwrap();
    let main = dir.path().join("main");
    let hr = dir.path().join("hr");
    let mut files = vec![(
        "general/onboarding/SKILL.md".to_string(),
        agent_skill_md(
            "onboarding",
            "Onboard a new employee to the company and plan the first budget week",
            "Onboarding steps for every newcomer.\n",
        ),
    )];
    if with_finance {
        files.push((
            "finance/budget/SKILL.md".into(),
            agent_skill_md(
                "finance-budget",
                "Plan the quarterly budget zorblatt forecast",
                "secret-budget-content: plan each line.\n",
            ),
        ));
        files.push((
            "finance/budget/budget-template.csv".into(),
            "line,amount\n".into(),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write_files(&main, &files);
    write_files(
        &hr,
        &[(
            "leave-policy/SKILL.md",
            &agent_skill_md(
                "leave-policy",
                "Leave policy for quuxvacation and sick days",
                "secret-leave-content: ask early.\n",
            ),
        )],
    );
    let tokens = dir.path().join("tokens.txt");
    std::fs::write(
        &tokens,
        format!(
            "# four callers\n{T_FIN} groups=finance sub=bob\n{T_HR} sub=alice\n{T_SCOPE} skills:read skills:hr\n{T_NONE}\n"
        ),
    )
    .unwrap();
    let jwks_file = dir.path().join("jwks.json");
    std::fs::write(&jwks_file, jwks(&[key])).unwrap();
    let config = dir.path().join("server.yaml");
    write_config(&config, &hr, rules);
    Tree {
        _dir: dir,
        main,
        hr,
        config,
        tokens,
        jwks: jwks_file,
    }
}

/// The default rules: finance/** for the finance group; the hr root for alice or `skills:hr`.
const RULES: &str = "  rules:\n    - skills: [\"finance/**\"]\n      groups: [finance]\n    - roots: [hr-handbook]\n      subjects: [alice]\n      scopes: [skills:hr]\n";

fn write_config(path: &Path, hr: &Path, rules: &str) {
    std::fs::write(
        path,
        format!(
            "sources:\n  roots:\n    - {{path: {}, name: hr-handbook}}\naccess:\n  groups_claim: realm_access.roles\n{rules}",
            hr.display()
        ),
    )
    .unwrap();
}

fn start(t: &Tree, resource: Option<&str>) -> Server {
    let config = t.config.display().to_string();
    let tokens = t.tokens.display().to_string();
    let jwks = t.jwks.display().to_string();
    let mut flags = vec!["--config", &config, "--auth-tokens-file", &tokens];
    if let Some(resource) = resource {
        flags.extend([
            "--oauth-issuer",
            ISSUER,
            "--oauth-jwks",
            &jwks,
            "--resource-url",
            resource,
        ]);
    }
    Server::start(&t.main, None, &flags)
}

/// One stateless request as `token`.
fn ask(
    s: &Server,
    token: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: Value,
) -> Answer {
    let auth = format!("\r\nAuthorization: Bearer {token}");
    post_2026_with(&s.addr, id, method, name, params, &auth)
}

/// Every surface, as one caller: (what, answer body).
fn battery(s: &Server, token: &str) -> Vec<(String, String)> {
    let tool = |name: &str, args: Value| {
        (
            "tools/call",
            Some(name.to_string()),
            json!({"name": name, "arguments": args}),
        )
    };
    let requests: Vec<(&str, Option<String>, Value)> = vec![
        ("tools/list", None, json!({})),
        tool("search_skills", json!({"query": "budget forecast plan"})),
        tool("search_skills", json!({"query": "zorblatt"})),
        tool(
            "get_skill",
            json!({"context": "plan the quarterly budget forecast"}),
        ),
        tool("get_skill", json!({"skill_path": "finance/budget"})),
        tool("get_skill", json!({"skill_path": "finance-budget"})),
        tool("get_skill", json!({"skill_path": "finance/budgte"})),
        tool("get_skill", json!({"skill_path": "leave-policy"})),
        tool("list_skills", json!({})),
        tool(
            "get_asset",
            json!({"skill_path": "finance/budget", "file": "budget-template.csv"}),
        ),
        tool(
            "report_usage",
            json!({"skill_path": "finance/budget", "useful": true}),
        ),
        tool(
            "run_script",
            json!({"skill_path": "finance/budget", "file": "x.sh", "args": {}}),
        ),
        ("resources/list", None, json!({})),
        ("resources/templates/list", None, json!({})),
        (
            "resources/read",
            Some("skill://finance-budget/SKILL.md".into()),
            json!({"uri": "skill://finance-budget/SKILL.md"}),
        ),
        (
            "resources/read",
            Some("skill://finance-budget/budget-template.csv".into()),
            json!({"uri": "skill://finance-budget/budget-template.csv"}),
        ),
        (
            "resources/directory/read",
            Some("skill://finance-budget/".into()),
            json!({"uri": "skill://finance-budget/"}),
        ),
        ("prompts/list", None, json!({})),
        (
            "prompts/get",
            Some("finance/budget".into()),
            json!({"name": "finance/budget"}),
        ),
        ("skills/list", None, json!({})),
        (
            "skills/get",
            Some("skill://finance-budget/SKILL.md".into()),
            json!({"uri": "skill://finance-budget/SKILL.md"}),
        ),
        (
            "completion/complete",
            None,
            json!({"ref": {"type": "ref/prompt", "name": "finance/budget"}, "argument": {"name": "context", "value": "b"}}),
        ),
        ("server/discover", None, json!({})),
    ];
    requests
        .into_iter()
        .enumerate()
        .map(|(i, (method, name, params))| {
            let a = ask(
                s,
                token,
                i as u64 + 1,
                method,
                name.as_deref(),
                params.clone(),
            );
            (
                format!("{method} {params}"),
                format!("{} {}", a.status, a.body),
            )
        })
        .collect()
}

#[track_caller]
fn leaks_none(answers: &[(String, String)], secrets: &[&str], who: &str) {
    for (what, body) in answers {
        // A request naming the hidden skill gets its own words back in an error message
        // (`finance/budget` not found): only the requests that do not name it are checked.
        if secrets.iter().any(|s| what.contains(s)) {
            continue;
        }
        for secret in secrets {
            assert!(
                !body.contains(secret),
                "{who}: `{secret}` leaked by {what}:\n{body}"
            );
        }
    }
}

fn joined(answers: &[(String, String)]) -> String {
    answers
        .iter()
        .map(|(_, b)| b.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_hidden_skill_is_answered_as_if_it_did_not_exist_on_every_surface() {
    let key = TestKey::new("k1");
    let full = tree(true, RULES, &key);
    let server = start(&full, None);
    let hr_full = battery(&server, T_HR);
    let none_full = battery(&server, T_NONE);
    let scope_full = battery(&server, T_SCOPE);
    let fin_full = battery(&server, T_FIN);
    drop(server);

    // The permitted caller sees the finance skill on the listing surfaces.
    let fin = joined(&fin_full);
    for surface in [
        "search_skills",
        "list_skills",
        "resources/list",
        "prompts/list",
        "skills/list",
        "tools/list",
    ] {
        let (_, body) = fin_full.iter().find(|(w, _)| w.contains(surface)).unwrap();
        assert!(
            body.contains("finance"),
            "finance caller, {surface}: {body}"
        );
    }
    assert!(
        fin.contains("secret-budget-content"),
        "the finance caller reads it"
    );
    leaks_none(&fin_full, &HR_SECRETS, "bob (finance group)");

    // Alice (hr subject) and the `skills:hr` scope see the hr root, not finance; the caller
    // without groups sees neither.
    leaks_none(&hr_full, &FINANCE_SECRETS, "alice");
    leaks_none(&scope_full, &FINANCE_SECRETS, "the skills:hr scope");
    leaks_none(&none_full, &FINANCE_SECRETS, "no groups");
    leaks_none(&none_full, &HR_SECRETS, "no groups");
    assert!(
        joined(&hr_full).contains("secret-leave-content"),
        "alice reads the hr skill"
    );
    assert!(
        joined(&scope_full).contains("leave-policy"),
        "the hr scope lists it"
    );

    // The same requests on a server where the finance skill is really absent: the same bytes.
    let absent = tree(false, RULES, &key);
    let server = start(&absent, None);
    for (caller, token, seen) in [("alice", T_HR, &hr_full), ("no groups", T_NONE, &none_full)] {
        let again = battery(&server, token);
        for ((what, a), (_, b)) in seen.iter().zip(&again) {
            assert_eq!(
                a, b,
                "{caller}: {what} differs from a server without the skill"
            );
        }
    }
}

/// The skill paths `list_skills` gives a caller.
fn listed(s: &Server, token: &str) -> String {
    let a = ask(
        s,
        token,
        1,
        "tools/call",
        Some("list_skills"),
        json!({"name": "list_skills", "arguments": {}}),
    );
    assert_eq!(a.status, 200, "{a:?}");
    a.body
}

#[test]
fn sighup_applies_new_rules_and_rotated_tokens_and_refuses_a_bad_configuration() {
    let key = TestKey::new("k1");
    let t = tree(true, RULES, &key);
    let server = start(&t, None);
    assert!(!listed(&server, T_NONE).contains("finance/budget"));
    assert!(listed(&server, T_FIN).contains("finance/budget"));

    // The finance rule removed: finance is visible to every caller from the next request.
    write_config(
        &t.config,
        &t.hr,
        // (`skills:hr` stays named: a token line grants it.)
        "  rules:\n    - roots: [hr-handbook]\n      subjects: [alice]\n      scopes: [skills:hr]\n",
    );
    server.signal(rustix::process::Signal::HUP);
    server.wait_for(RELOADED);
    assert!(
        listed(&server, T_NONE).contains("finance/budget"),
        "the rule is gone"
    );
    assert!(!listed(&server, T_NONE).contains("leave-policy"));

    // A bad configuration (a rule naming an unknown root) is refused; the last good one serves.
    write_config(
        &t.config,
        &t.hr,
        "  rules:\n    - roots: [no-such-root]\n      groups: [x]\n    - skills: [\"finance/**\"]\n      groups: [finance]\n      scopes: [skills:hr]\n",
    );
    server.signal(rustix::process::Signal::HUP);
    server.wait_for("reload refused");
    assert!(
        server.log().contains("access.rules[0].roots[0]"),
        "{}",
        server.log()
    );
    assert!(
        listed(&server, T_NONE).contains("finance/budget"),
        "the old rules serve"
    );

    // Rotated tokens: T_NONE removed, a new one added with the finance group.
    let fresh = "tok-fresh-0123456789abcdefghijklmn";
    std::fs::write(
        &t.tokens,
        format!("{T_FIN} groups=finance\n{fresh} groups=finance\n"),
    )
    .unwrap();
    write_config(&t.config, &t.hr, RULES);
    server.signal(rustix::process::Signal::HUP);
    wait_for_count(&server, RELOADED, 2);
    assert!(listed(&server, fresh).contains("finance/budget"));
    let gone = ask(&server, T_NONE, 1, "tools/list", None, json!({}));
    assert_eq!(gone.status, 401, "{gone:?}");

    // A malformed token line on reload is refused too; the tokens in use stay.
    std::fs::write(&t.tokens, format!("{fresh} groups=a,,b\n")).unwrap();
    server.signal(rustix::process::Signal::HUP);
    wait_for_count(&server, "reload refused", 2);
    assert!(server.log().contains("tokens.txt:1"), "{}", server.log());
    assert!(listed(&server, T_FIN).contains("finance/budget"));
}

/// Wait for the `n`th stderr line containing `text`.
fn wait_for_count(s: &Server, text: &str, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        if s.log().lines().filter(|l| l.contains(text)).count() >= n {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("not {n} lines with {text:?}:\n{}", s.log());
}

#[test]
fn a_session_belongs_to_the_identity_that_opened_it_and_its_instructions_are_the_callers() {
    let key = TestKey::new("k1");
    let t = tree(true, RULES, &key);
    let server = start(&t, None);
    let host = format!("\r\nHost: {}", server.addr);
    let opened = initialize_with(
        &server.addr,
        &format!("{host}\r\nAuthorization: Bearer {T_FIN}"),
    );
    assert_eq!(opened.status, 200, "{opened:?}");
    let id = opened.header("mcp-session-id").expect("a session id");
    let instructions = message(&opened)["result"]["instructions"].to_string();
    assert!(instructions.contains("finance/budget"), "{instructions}");
    let other = initialize_with(
        &server.addr,
        &format!("{host}\r\nAuthorization: Bearer {T_NONE}"),
    );
    let instructions = message(&other)["result"]["instructions"].to_string();
    assert!(
        instructions.contains("general/onboarding"),
        "{instructions}"
    );
    for secret in FINANCE_SECRETS.iter().chain(&HR_SECRETS) {
        assert!(!other.body.contains(secret), "{secret} in {other:?}");
    }

    let list = |token: &str| {
        raw(
            &server.addr,
            &format!(
                "POST /mcp HTTP/1.1{host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {id}\r\nAuthorization: Bearer {token}"
            ),
            br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
        )
    };
    let stolen = list(T_NONE);
    assert_eq!(stolen.status, 404, "{stolen:?}");
    assert!(!stolen.body.contains("finance"), "{stolen:?}");
    let own = list(T_FIN);
    assert_eq!(own.status, 200, "{own:?}");
}

/// The JSON-RPC message of an SSE answer (after the stream's empty priming event).
fn message(a: &Answer) -> Value {
    let data = a
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .find(|d| d.contains("jsonrpc"))
        .unwrap_or_else(|| panic!("no JSON-RPC message in {a:?}"));
    serde_json::from_str(data).unwrap()
}

#[test]
fn a_malformed_token_field_stops_start_up_with_file_and_line() {
    let key = TestKey::new("k1");
    let t = tree(true, RULES, &key);
    std::fs::write(
        &t.tokens,
        format!("# ok\n{T_FIN} groups=finance\n{T_HR} sub=\n"),
    )
    .unwrap();
    let out = bin()
        .args(["--config"])
        .arg(&t.config)
        .args(["--no-default-roots", "--root"])
        .arg(&t.main)
        .args(["serve", "--http", "127.0.0.1:0", "--auth-tokens-file"])
        .arg(&t.tokens)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("{}:3: `sub=` is empty", t.tokens.display())),
        "{stderr}"
    );
    assert!(!stderr.contains(T_HR), "the token is never shown: {stderr}");
}

#[test]
fn jwt_groups_come_from_a_dotted_claim() {
    let key = TestKey::new("k1");
    let t = tree(true, RULES, &key);
    // The resource URL is this server's; its port is not known before it listens, and the
    // audience is compared as configured: any URL works for the test as long as both agree.
    let resource = "https://skills.example.test/mcp";
    let server = start(&t, Some(resource));
    let jwt = |roles: Value| {
        key.sign(&json!({
            "iss": ISSUER, "aud": resource, "sub": "carol", "scope": "skills:read",
            "iat": now(), "exp": now() + 600, "realm_access": {"roles": roles},
        }))
    };
    assert!(listed(&server, &jwt(json!(["finance", "ops"]))).contains("finance/budget"));
    let other = listed(&server, &jwt(json!("ops sales")));
    assert!(other.contains("general/onboarding"), "{other}");
    for secret in FINANCE_SECRETS.iter().chain(&HR_SECRETS) {
        assert!(!other.contains(secret), "{secret} in {other}");
    }
}

#[test]
fn the_local_operator_holds_access_local() {
    let key = TestKey::new("k1");
    let t = tree(true, RULES, &key);
    let config = std::fs::read_to_string(&t.config)
        .unwrap()
        .replace("access:\n", "access:\n  local: {groups: [finance]}\n");
    std::fs::write(&t.config, config).unwrap();
    // Loopback without authentication: the local operator.
    let flags = ["--config", t.config.to_str().unwrap()];
    let server = Server::start(&t.main, None, &flags);
    let a = post_2026_with(
        &server.addr,
        1,
        "tools/call",
        Some("list_skills"),
        json!({"name": "list_skills", "arguments": {}}),
        "",
    );
    assert!(a.body.contains("finance/budget"), "{a:?}");
    for secret in HR_SECRETS {
        assert!(!a.body.contains(secret), "{secret} in {a:?}");
    }
}

#[test]
fn access_check_prints_what_a_caller_sees_and_which_rule_hides_the_rest() {
    let key = TestKey::new("k1");
    let t = tree(true, RULES, &key);
    let check = |who: &[&str]| -> Value {
        let out = bin()
            .arg("--config")
            .arg(&t.config)
            .args(["--no-default-roots", "--root"])
            .arg(&t.main)
            .args(["access", "check", "--json"])
            .args(who)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let fin = check(&["--groups", "finance"]);
    assert_eq!(
        fin["visible"],
        json!(["finance/budget", "general/onboarding"])
    );
    assert_eq!(
        fin["hidden"],
        json!([{"path": "leave-policy", "rules": [1]}])
    );
    let line = format!("{T_SCOPE} skills:read skills:hr");
    let scoped = check(&["--token-file-line", &line]);
    assert_eq!(
        scoped["visible"],
        json!(["general/onboarding", "leave-policy"])
    );
    assert_eq!(
        scoped["hidden"],
        json!([{"path": "finance/budget", "rules": [0]}])
    );
    let anonymous = check(&[]);
    assert_eq!(anonymous["visible"], json!(["general/onboarding"]));
}

/// `list_skills` over stdio (the real binary, `serve` without `--http`): the local operator.
fn list_over_stdio(t: &Tree) -> String {
    use std::io::{BufRead as _, BufReader, Write as _};
    let mut child = bin()
        .args(["--config", t.config.to_str().unwrap()])
        .args(["serve", "--no-default-roots", "--root"])
        .arg(&t.main)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "stdio-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "list_skills", "arguments": {}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let answer: Value = serde_json::from_str(&line).unwrap_or_default();
            if answer["id"] == 2 {
                let _ = tx.send(line);
                return;
            }
        }
    });
    let answer = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("an answer to list_skills over stdio");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    answer
}

#[test]
fn over_stdio_the_local_operator_holds_access_local_or_sees_everything_without_it() {
    let key = TestKey::new("k1");
    let t = tree(true, RULES, &key);
    // Without `access.local`: every skill, as before rules existed.
    let all = list_over_stdio(&t);
    assert!(all.contains("finance/budget"), "{all}");
    assert!(all.contains("leave-policy"), "{all}");
    // With it: what its groups are admitted to, and nothing of the hr root.
    let config = std::fs::read_to_string(&t.config)
        .unwrap()
        .replace("access:\n", "access:\n  local: {groups: [finance]}\n");
    std::fs::write(&t.config, config).unwrap();
    let local = list_over_stdio(&t);
    assert!(local.contains("finance/budget"), "{local}");
    for secret in HR_SECRETS {
        assert!(!local.contains(secret), "{secret} in {local}");
    }
}
