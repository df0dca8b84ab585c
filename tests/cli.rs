//! Tests: cli.
//!
//! The real `skills-mcp` binary, end to end: every verb on the bundled tree, then on fixture
//! trees built in temp dirs.

use std::path::Path;

use base64::Engine as _;
use serde_json::Value;

use crate::common::{
    assert_exit, bin, bundled_skills, fixtures, json, run, run_with_stdin, sample_tree, skill_md,
    stderr, stdout, tree, write_files,
};

/// The compile cache of this user (kept when a test points HOME elsewhere).
fn cache_dir() -> std::path::PathBuf {
    skills_mcp::runtime::default_cache_dir().unwrap_or_else(std::env::temp_dir)
}

/// `--root <bundled skills>` followed by `args`.
fn bundled(args: &[&str]) -> std::process::Output {
    let root = bundled_skills();
    let mut all = vec!["--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    run(&all)
}

/// `--root <dir>` followed by `args`.
fn on(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["--root", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    run(&all)
}

/// Every node of a `list --json` tree, depth first.
fn flatten(nodes: &Value, out: &mut Vec<Value>) {
    for node in nodes.as_array().expect("an array of nodes") {
        out.push(node.clone());
        flatten(&node["children"], out);
    }
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    k.sort_unstable();
    k
}

// ---- the bundled tree ----

#[test]
fn bundled_list_prints_an_indented_tree() {
    let o = bundled(&["list"]);
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("(ui/react/auth)"), "{out}");
    let auth = out.lines().find(|l| l.contains("(ui/react/auth)")).unwrap();
    let ui = out.lines().find(|l| l.contains("(ui/_index)")).unwrap();
    let indent = |l: &str| l.len() - l.trim_start().len();
    assert!(indent(auth) > indent(ui), "{out}");
}

#[test]
fn bundled_list_json_is_the_spec_tree() {
    let o = bundled(&["list", "--json"]);
    assert_exit(&o, 0);
    let mut nodes = Vec::new();
    flatten(&json(&o), &mut nodes);
    for node in &nodes {
        assert_eq!(
            keys(node),
            [
                "assetCount",
                "children",
                "description",
                "is_skill",
                "keywords",
                "name",
                "path",
                "scriptCount"
            ]
        );
    }
    let auth = nodes
        .iter()
        .find(|n| n["path"] == "ui/react/auth")
        .expect("ui/react/auth in the tree");
    assert_eq!(auth["name"], "auth");
    assert_eq!(auth["assetCount"], 3);
    assert_eq!(auth["scriptCount"], 2);
    assert!(
        auth["keywords"]
            .as_array()
            .unwrap()
            .contains(&Value::from("react"))
    );
}

#[test]
fn bundled_list_below_a_path() {
    let o = bundled(&["list", "ui", "--json"]);
    assert_exit(&o, 0);
    let tree = json(&o);
    assert_eq!(tree.as_array().unwrap().len(), 1);
    let mut nodes = Vec::new();
    flatten(&tree, &mut nodes);
    assert!(nodes.iter().any(|n| n["path"] == "ui/react/auth"));
    assert!(!nodes.iter().any(|n| n["path"] == "api/auth"));
}

#[test]
fn bundled_search_human_and_json() {
    let o = bundled(&["search", "react authentication", "--limit", "3"]);
    assert_exit(&o, 0);
    let first = stdout(&o).lines().next().unwrap_or_default().to_string();
    assert!(first.contains("ui/react/auth"), "{}", stdout(&o));

    let o = bundled(&["search", "react authentication", "--json"]);
    assert_exit(&o, 0);
    let v = json(&o);
    assert_eq!(v["query"], "react authentication");
    assert_eq!(v["results"][0]["skill_path"], "ui/react/auth");
    assert!(v["results"][0]["score"].as_f64().unwrap() > 0.0);
}

#[test]
fn bundled_search_explain() {
    let o = bundled(&[
        "search",
        "react authentication",
        "--json",
        "--explain",
        "-n",
        "1",
    ]);
    assert_exit(&o, 0);
    let v = json(&o);
    let explain = &v["results"][0]["explain"];
    assert_eq!(explain["skill_path"], "ui/react/auth");
    assert!(explain["terms"].is_array());
    let o = bundled(&["search", "react authentication", "--explain", "-n", "1"]);
    assert_exit(&o, 0);
    assert!(stdout(&o).lines().count() > 1, "{}", stdout(&o));
}

#[test]
fn bundled_search_batch_answers_one_json_line_per_query() {
    let root = bundled_skills();
    let o = run_with_stdin(
        &["--root", root.to_str().unwrap(), "search", "--batch"],
        "react authentication\n\ncommit message format\nzzzz qqqq xxxx\n",
    );
    assert_exit(&o, 0);
    let lines: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 3, "{}", stdout(&o));
    assert_eq!(lines[0]["query"], "react authentication");
    assert_eq!(lines[1]["query"], "commit message format");
    assert_eq!(lines[0]["results"][0]["skill_path"], "ui/react/auth");
    assert_eq!(lines[1]["results"][0]["skill_path"], "git/commit-messages");
    assert_eq!(lines[2]["results"], Value::Array(vec![]));
    for line in &lines {
        assert_eq!(keys(line), ["query", "results"]);
        for r in line["results"].as_array().unwrap() {
            assert_eq!(keys(r), ["description", "name", "score", "skill_path"]);
        }
        assert!(line["results"].as_array().unwrap().len() <= 10);
    }
}

#[test]
fn search_batch_answers_each_query_before_the_next_arrives() {
    use std::io::{BufRead, Write};
    let root = bundled_skills();
    let mut child = bin()
        .args(["--root", root.to_str().unwrap(), "search", "--batch"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting skills-mcp");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line.expect("a line")).is_err() {
                break;
            }
        }
    });
    // one query at a time, stdin kept open: each answer must come before the next query
    for (query, first) in [
        ("react authentication", "ui/react/auth"),
        ("commit message format", "git/commit-messages"),
    ] {
        writeln!(stdin, "{query}").unwrap();
        stdin.flush().unwrap();
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .unwrap_or_else(|e| panic!("no answer to {query:?} while stdin is open: {e}"));
        let v: Value = serde_json::from_str(&line).expect("a JSON line");
        assert_eq!(v["query"], query);
        assert_eq!(v["results"][0]["skill_path"], first, "{v}");
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    assert!(rx.recv_timeout(std::time::Duration::from_secs(10)).is_err());
}

#[test]
fn bundled_get_routes_to_a_match_with_content_and_files() {
    let o = bundled(&["get", "create a react authentication component with login"]);
    assert_exit(&o, 0);
    let v = json(&o);
    assert_eq!(v["skill_path"], "ui/react/auth", "{v:#}");
    assert!(v["score"].as_f64().unwrap() > 0.0);
    assert!(v["matched_keywords"].is_array());
    let content = v["content"].as_str().unwrap();
    assert!(
        content.starts_with("=== GLOBAL RULES (from _root.md) ==="),
        "{content}"
    );
    assert!(content.contains("=== UI > REACT > AUTH (from ui/react/auth.md) ==="));
    let assets = v["assets"].as_array().unwrap();
    assert!(assets.iter().any(|a| a["file"] == "assets/auth-flow.svg"));
    for a in assets {
        assert_eq!(keys(a), ["description", "file", "type"]);
    }
    let scripts = v["scripts"].as_array().unwrap();
    let server = scripts
        .iter()
        .find(|s| s["file"] == "scripts/validate-auth-config.sh")
        .expect("the server script");
    assert_eq!(server["execution"], "server");
    assert_eq!(server["args"][0]["name"], "env_file");
    assert_eq!(server["args"][0]["required"], true);
    let inherited = v["inherited_assets"].as_array().unwrap();
    assert!(
        inherited
            .iter()
            .any(|a| a["file"] == "assets/design-tokens.json" && a["from"] == "ui/_index"),
        "{inherited:?}"
    );
    // The category's base is overridden by the skill's own file of the same name.
    assert!(
        !inherited
            .iter()
            .any(|a| a["file"] == "assets/component-base.tsx.template")
    );
    assert!(v["inherited_scripts"].is_array());
}

#[test]
fn bundled_get_no_match_exits_1() {
    let o = bundled(&["get", "zzzz qqqq xxxx"]);
    assert_exit(&o, 1);
    let v = json(&o);
    assert_eq!(v["no_match"], true);
    assert_eq!(v["message"], "No skill matches the given context.");
}

#[test]
fn bundled_get_by_path() {
    let o = bundled(&["get", "--path", "ui/react/auth"]);
    assert_exit(&o, 0);
    let v = json(&o);
    assert_eq!(v["skill_path"], "ui/react/auth");
    assert!(v.get("score").is_none());
    assert!(
        v["content"]
            .as_str()
            .unwrap()
            .contains("React authentication")
    );

    let o = bundled(&["get", "--path", "ui/react/atuh"]);
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("not found"), "{}", stderr(&o));
}

#[test]
fn bundled_asset_text_binary_and_inherited() {
    let o = bundled(&["asset", "ui/react/auth", "assets/AuthProvider.tsx.template"]);
    assert_exit(&o, 0);
    let v = json(&o);
    assert_eq!(v["skill_path"], "ui/react/auth");
    assert_eq!(v["file"], "assets/AuthProvider.tsx.template");
    assert_eq!(v["type"], "template");
    let content = v["content"].as_str().unwrap();
    assert_eq!(v["size_bytes"].as_u64().unwrap(), content.len() as u64);
    assert!(v.get("resolved_from").is_none());
    assert!(v.get("content_base64").is_none());

    let o = bundled(&["asset", "ui/react/auth", "assets/auth-flow.svg"]);
    assert_exit(&o, 0);
    let v = json(&o);
    assert_eq!(v["mime_type"], "image/svg+xml");
    assert_eq!(v["type"], "image");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(v["content_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(v["size_bytes"].as_u64().unwrap(), bytes.len() as u64);
    assert!(String::from_utf8_lossy(&bytes).contains("<svg"));

    let o = bundled(&["asset", "ui/react/auth", "assets/design-tokens.json"]);
    assert_exit(&o, 0);
    assert_eq!(json(&o)["resolved_from"], "ui/_index");
}

#[test]
fn bundled_asset_errors() {
    // Over the size limit: the sizes are in the message.
    let o = bundled(&[
        "asset",
        "ui/react/auth",
        "assets/AuthProvider.tsx.template",
        "--max-bytes",
        "10",
    ]);
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("limit of 10 bytes"), "{}", stderr(&o));
    // Unknown asset, unknown skill.
    assert_exit(&bundled(&["asset", "ui/react/auth", "assets/nope.txt"]), 1);
    assert_exit(&bundled(&["asset", "ui/react/nope", "assets/x.txt"]), 1);
    // Traversal attempts are usage errors, refused before any file access.
    for bad in ["../../etc/passwd", "/etc/passwd", "assets\\x", "a/../../b"] {
        let o = bundled(&["asset", "ui/react/auth", bad]);
        assert_exit(&o, 2);
        assert!(stderr(&o).contains("invalid path"), "{bad}: {}", stderr(&o));
        assert!(stdout(&o).is_empty());
    }
}

#[test]
fn bundled_validate_passes() {
    let root = bundled_skills();
    let o = run(&["validate", root.to_str().unwrap()]);
    assert_exit(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("ok       "), "{out}");
    assert!(out.contains("ui/react/auth.md"), "{out}");
    let summary = out.lines().last().unwrap();
    assert!(summary.contains("files checked"), "{summary}");
    assert!(summary.contains(" 0 with errors"), "{summary}");
}

#[test]
fn the_bundled_tree_is_the_default_root() {
    let o = run(&["search", "react authentication", "--json"]);
    assert_exit(&o, 0);
    assert_eq!(json(&o)["results"][0]["skill_path"], "ui/react/auth");
}

// ---- usage ----

#[test]
fn usage_errors_exit_2() {
    assert_exit(&run(&["search"]), 2);
    assert_exit(&run(&["frobnicate"]), 2);
    assert_exit(&run(&["get"]), 2);
    assert_exit(&run(&["get", "x", "--path", "y"]), 2);
    assert_exit(&run(&["search", "--limit", "lots", "x"]), 2);
    let o = run(&["--help"]);
    assert_exit(&o, 0);
    for verb in ["search", "get", "list", "asset", "validate"] {
        assert!(stdout(&o).contains(verb), "{}", stdout(&o));
    }
}

// ---- fixture trees ----

#[test]
fn fixture_tree_every_verb() {
    let dir = sample_tree();
    let o = on(dir.path(), &["search", "pdf tables", "--json"]);
    assert_exit(&o, 0);
    assert_eq!(json(&o)["results"][0]["skill_path"], "tools/pdf");

    let o = on(dir.path(), &["get", "--path", "tools/pdf"]);
    assert_exit(&o, 0);
    assert!(json(&o)["content"].as_str().unwrap().contains("pdftotext"));

    let o = on(dir.path(), &["asset", "ui/react/auth", "assets/base.tsx"]);
    assert_exit(&o, 0);
    assert_eq!(json(&o)["content"], "export const AuthBase = 2;\n");

    let o = on(dir.path(), &["asset", "ui/react/auth", "assets/logo.png"]);
    assert_exit(&o, 0);
    let v = json(&o);
    assert_eq!(v["mime_type"], "image/png");
    assert!(v["content_base64"].is_string());

    let o = on(dir.path(), &["asset", "tools/pdf", "references/notes.md"]);
    assert_exit(&o, 0);
    assert_eq!(json(&o)["content"], "Some notes.\n");

    let o = on(dir.path(), &["list"]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("(tools/pdf)"), "{}", stdout(&o));

    let o = run(&["validate", dir.path().to_str().unwrap()]);
    assert_exit(&o, 0);
}

#[test]
fn validate_reports_located_errors_and_exits_1() {
    let dir = tree(&[
        ("good.md", &skill_md("Good", &["good"], "Fine.")),
        (
            "bad/SKILL.md",
            "---\nname: bad\ndescription: Bad\nmetadata: [bad\n---\nBroken YAML.\n",
        ),
        (
            "nodesc/SKILL.md",
            "---\nname: nodesc\n---\nNo description.\n",
        ),
    ]);
    let o = run(&["validate", dir.path().to_str().unwrap()]);
    assert_exit(&o, 1);
    let out = stdout(&o);
    let root = dir.path().display().to_string();
    assert!(out.contains(&format!("ok       {root}/good.md")), "{out}");
    let bad = out
        .lines()
        .find(|l| l.contains("bad/SKILL.md"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(bad.starts_with("error"), "{bad}");
    assert!(bad.contains(&format!("{root}/bad/SKILL.md:")), "{bad}");
    assert!(out.contains("nodesc/SKILL.md"), "{out}");
    let summary = out.lines().last().unwrap();
    assert!(summary.contains("with errors"), "{summary}");
    assert!(!summary.contains(" 0 with errors"), "{summary}");

    // --quiet hides the ok lines, not the findings.
    let o = run(&["validate", "--quiet", dir.path().to_str().unwrap()]);
    assert_exit(&o, 1);
    assert!(!stdout(&o).contains("good.md"));
    assert!(stdout(&o).contains("bad/SKILL.md"));
}

#[test]
fn validate_reports_a_missing_root() {
    let scratch = tempfile::tempdir().unwrap();
    let missing = scratch.path().join("nope");
    let o = run(&["validate", missing.to_str().unwrap()]);
    assert_exit(&o, 1);
    assert!(
        stdout(&o).contains("cannot open the skill root"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn skills_dir_and_root_flags_stack_with_later_roots_winning() {
    let a = tree(&[
        ("same.md", &skill_md("From A", &["same"], "A.")),
        ("only-a.md", &skill_md("Only in A", &["alpha"], "A.")),
    ]);
    let b = tree(&[("same.md", &skill_md("From B", &["same"], "B."))]);
    let c = tree(&[("only-c.md", &skill_md("Only in C", &["gamma"], "C."))]);
    let list = std::env::join_paths([a.path(), b.path()]).unwrap();
    let o = bin()
        .env("SKILLS_DIR", &list)
        .args(["--root", c.path().to_str().unwrap(), "list", "--json"])
        .output()
        .unwrap();
    assert_exit(&o, 0);
    let mut nodes = Vec::new();
    flatten(&json(&o), &mut nodes);
    let desc = |p: &str| {
        nodes
            .iter()
            .find(|n| n["path"] == p)
            .map(|n| n["description"].clone())
            .unwrap_or_else(|| panic!("{p} missing: {nodes:?}"))
    };
    assert_eq!(desc("same"), "From B");
    assert_eq!(desc("only-a"), "Only in A");
    assert_eq!(desc("only-c"), "Only in C");
}

#[test]
fn a_missing_root_is_a_warning_and_the_others_serve() {
    let good = sample_tree();
    let scratch = tempfile::tempdir().unwrap();
    let missing = scratch.path().join("nope");
    let o = run(&[
        "--root",
        missing.to_str().unwrap(),
        "--root",
        good.path().to_str().unwrap(),
        "search",
        "pdf",
        "--json",
    ]);
    assert_exit(&o, 0);
    assert!(stderr(&o).contains("nope"), "{}", stderr(&o));
    assert_eq!(json(&o)["results"][0]["skill_path"], "tools/pdf");
}

#[test]
fn real_skill_fixtures_validate_without_crashing() {
    let real = fixtures().join("real");
    if !real.is_dir() {
        eprintln!("skipped: {} is absent", real.display());
        return;
    }
    let o = run(&["validate", real.to_str().unwrap()]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let summary = stdout(&o).lines().last().unwrap_or_default().to_string();
    assert!(summary.contains("files checked"), "{summary}");
    assert!(
        !stderr(&o).contains("skills engine failed"),
        "{}",
        stderr(&o)
    );
}

/// The shared corpus of real skills (seed 004's "done when"): indexed with located warnings
/// and no crash. Runs only where the corpus is present.
#[test]
fn the_real_corpus_validates_without_crashing() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/combined");
    if !corpus.is_dir() {
        eprintln!("skipped: {} is absent", corpus.display());
        return;
    }
    let o = run(&["validate", "--quiet", corpus.to_str().unwrap()]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("skills engine failed"),
        "{}",
        stderr(&o)
    );
    let out = stdout(&o);
    let summary = out.lines().last().unwrap_or_default();
    assert!(summary.contains("files checked"), "{summary}");
    let skills: u32 = summary
        .split(';')
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(skills >= 2000, "{summary}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("warning") && l.contains(".md")),
        "no located warnings"
    );
}

/// `--config FILE` and the standard folders reach every verb, not only `serve`.
#[test]
fn the_configuration_applies_to_every_verb() {
    let extra = tree(&[(
        "widgets/SKILL.md",
        "---\nname: widgets\ndescription: Assemble blue widgets from parts.\n---\nSteps.\n",
    )]);
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("cfg.yaml");
    let write_config = |min_score: f64| {
        std::fs::write(
            &config,
            format!(
                "sources:\n  roots: [{}]\nmatching:\n  min_score: {min_score}\n",
                extra.path().display()
            ),
        )
        .unwrap();
    };
    let verb = |args: &[&str]| {
        bin()
            .current_dir(home.path())
            .env("HOME", home.path())
            .env("SKILLS_MCP_CACHE_DIR", cache_dir())
            .arg("--config")
            .arg(&config)
            .args(args)
            .output()
            .unwrap()
    };
    write_config(0.2);
    let o = verb(&["search", "blue widgets", "--json"]);
    assert_exit(&o, 0);
    assert_eq!(json(&o)["results"][0]["skill_path"], "widgets");
    let o = verb(&["get", "assemble blue widgets"]);
    assert_exit(&o, 0);
    assert_eq!(json(&o)["skill_path"], "widgets");
    let o = verb(&["list", "--json"]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("\"widgets\""), "{}", stdout(&o));
    let o = verb(&["validate"]);
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("widgets/SKILL.md"), "{}", stdout(&o));
    // The file's matching section is honoured too: nothing reaches a minimum score of 1.
    write_config(1.0);
    let o = verb(&["get", "assemble blue widgets"]);
    assert_exit(&o, 1);
    assert_eq!(json(&o)["no_match"], true);

    // Without --config, `./skills` of the working directory is a standard root.
    write_files(
        home.path(),
        &[(
            "skills/gadgets/SKILL.md",
            "---\nname: gadgets\ndescription: Calibrate red gadgets.\n---\nSteps.\n",
        )],
    );
    let o = bin()
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("SKILLS_MCP_CACHE_DIR", cache_dir())
        .args(["search", "calibrate red gadgets", "--json"])
        .output()
        .unwrap();
    assert_exit(&o, 0);
    assert_eq!(json(&o)["results"][0]["skill_path"], "gadgets");
    // --no-default-roots leaves it out: only the --root given is searched.
    let o = bin()
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("SKILLS_MCP_CACHE_DIR", cache_dir())
        .args(["--no-default-roots", "--root"])
        .arg(extra.path())
        .args(["list", "--json"])
        .output()
        .unwrap();
    assert_exit(&o, 0);
    assert!(stdout(&o).contains("\"widgets\""), "{}", stdout(&o));
    assert!(!stdout(&o).contains("gadgets"), "{}", stdout(&o));
}

/// A root that is not a directory is a warning while another root serves, and an error (not
/// the bundled folder) when it was the only root given.
#[test]
fn the_only_root_missing_is_an_error() {
    let scratch = tempfile::tempdir().unwrap();
    let missing = scratch.path().join("nope");
    let o = bin()
        .current_dir(scratch.path())
        .env("HOME", scratch.path())
        .args(["--root", missing.to_str().unwrap(), "search", "react"])
        .output()
        .unwrap();
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("no skill root") && stderr(&o).contains("nope"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
}

/// A reader that stops early (`skills-mcp get ... | head -c 100`) ends the command quietly.
#[test]
fn a_closed_stdout_ends_quietly() {
    use std::io::Read as _;
    let body = "A line of the skill's long body, repeated.\n".repeat(20_000);
    let dir = tree(&[(
        "big/SKILL.md",
        &format!("---\nname: big\ndescription: A big skill.\n---\n{body}"),
    )]);
    let mut child = bin()
        .args([
            "--root",
            dir.path().to_str().unwrap(),
            "get",
            "--path",
            "big",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 100];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let o = child.wait_with_output().unwrap();
    assert_exit(&o, 0);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}
