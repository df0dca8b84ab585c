//! Tests: `skills-mcp eval` (trigger evals), through the real binary: every query is answered
//! exactly as the server's `get_skill` routes it (compared through a real MCP client over stdio,
//! on the bundled skills and on a copy of the combined corpus with the dev queries as eval
//! files), the table, `--json`, `--junit`, exit codes, located errors, hidden skills.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rmcp::ServiceExt as _;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::common::{
    self, agent_skill_md, assert_exit, bin, skill_md, stderr, stdout, write_files,
};
use crate::mcp::{Client, call, ok};

/// The shared folder beside the repository (`../shared`: the corpus and the dev queries), or
/// `SKILLS_MCP_SHARED`.
fn shared() -> PathBuf {
    std::env::var_os("SKILLS_MCP_SHARED").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
        PathBuf::from,
    )
}

/// `eval` over `roots` only (no standard folders), with `args`.
fn eval(roots: &[&Path], args: &[&str]) -> std::process::Output {
    let mut cmd = bin();
    cmd.arg("--no-default-roots");
    for r in roots {
        cmd.arg("--root").arg(r);
    }
    cmd.arg("eval")
        .args(args)
        .output()
        .expect("run skills-mcp eval")
}

fn json_of(o: &std::process::Output) -> Value {
    common::json(o)
}

/// How `get_skill` answered a context, as eval names it: `(outcome, winner, candidates)`.
type Routed = (String, Option<String>, Vec<String>);

/// Ask the real binary serving `roots` over stdio, through an rmcp client, for every context.
async fn get_skill_answers(roots: &[&Path], contexts: &[String]) -> Vec<Routed> {
    let home = TempDir::new().unwrap();
    let mut cmd = crate::common::stdio_server(home.path());
    cmd.arg("--no-default-roots");
    for r in roots {
        cmd.arg("--root").arg(r);
    }
    let client = Client::default()
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .expect("initialize");
    let mut answers = Vec::with_capacity(contexts.len());
    for context in contexts {
        let v = ok(call(&client, "get_skill", json!({ "context": context })).await);
        answers.push(if v["no_match"] == json!(true) {
            ("no_match".into(), None, vec![])
        } else if v["ambiguous"] == json!(true) {
            let candidates = v["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["skill_path"].as_str().unwrap().to_owned())
                .collect();
            ("ambiguous".into(), None, candidates)
        } else {
            let path = v["skill_path"]
                .as_str()
                .expect("a matched skill")
                .to_owned();
            ("matched".into(), Some(path), vec![])
        });
    }
    client.cancel().await.unwrap();
    answers
}

/// Every query of an `eval --json` answer equals `get_skill`'s answer for it: the same
/// outcome (matched or other for a match, by who won), winner and candidates. Returns how many
/// queries were compared.
async fn same_as_get_skill(roots: &[&Path], answer: &Value) -> usize {
    let mut contexts = Vec::new();
    let mut expected = Vec::new();
    for skill in answer["skills"].as_array().unwrap() {
        let name = skill["skill"].as_str().unwrap();
        for q in skill["queries"].as_array().unwrap() {
            contexts.push(q["query"].as_str().unwrap().to_owned());
            expected.push((name.to_owned(), q.clone()));
        }
    }
    let routed = get_skill_answers(roots, &contexts).await;
    let mut differ = Vec::new();
    for ((skill, q), (outcome, winner, candidates)) in expected.iter().zip(&routed) {
        let want_outcome = match (outcome.as_str(), winner) {
            ("matched", Some(w)) if w == skill => "matched",
            ("matched", _) => "other",
            (o, _) => o,
        };
        let got_candidates: Vec<String> = q["candidates"]
            .as_array()
            .map(|c| c.iter().map(|p| p.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default();
        if q["outcome"] != json!(want_outcome)
            || q["winner"] != json!(winner)
            || &got_candidates != candidates
        {
            differ.push(format!(
                "{skill}: {:?}: eval says {} / {} / {:?}; get_skill says {outcome} / {winner:?} / {candidates:?}",
                q["query"], q["outcome"], q["winner"], got_candidates
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} queries differ:\n{}",
        differ.len(),
        contexts.len(),
        differ.join("\n")
    );
    contexts.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_answers_every_query_as_get_skill_routes_it_on_the_bundled_skills() {
    let bundled = common::bundled_skills();
    for flags in [&[][..], &["--accept-ambiguous"]] {
        let args: Vec<&str> = ["--json"].iter().chain(flags).copied().collect();
        let out = eval(&[&bundled], &args);
        let answer = json_of(&out);
        // The bundled eval files pass, and say so with exit 0.
        assert_exit(&out, 0);
        let skills: Vec<&str> = answer["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["skill"].as_str().unwrap())
            .collect();
        assert_eq!(
            skills,
            vec!["api/auth", "git/commit-messages", "ui/react/forms"]
        );
        assert_eq!(answer["passed"], answer["total"], "{answer:#}");
        let n = same_as_get_skill(&[&bundled], &answer).await;
        assert!(n >= 60, "{n} queries");
    }
}

/// The issue's "done when", on a copy of the combined corpus (read-only; copied to a temp
/// dir) with each dev query's two requests as the expected skill's eval file, positives, and
/// the next dev skill's as near-miss negatives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_answers_every_dev_query_as_get_skill_routes_it_on_the_combined_corpus() {
    let corpus = shared().join("corpora/combined");
    let dev = shared().join("eval/dev_queries.json");
    if !corpus.is_dir() || !dev.is_file() {
        eprintln!(
            "SKIPPED: {} or {} is absent (set SKILLS_MCP_SHARED to the shared folder)",
            corpus.display(),
            dev.display()
        );
        return;
    }
    let copy = TempDir::new().unwrap();
    let status = std::process::Command::new("cp")
        .arg("-R")
        .arg(format!("{}/.", corpus.display()))
        .arg(copy.path())
        .status()
        .expect("cp");
    assert!(status.success());
    let queries: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&dev).unwrap()).unwrap();
    let mut files: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (i, q) in queries.iter().enumerate() {
        let id = q["id"].as_str().unwrap();
        let next = &queries[(i + 1) % queries.len()];
        let entry = files.entry(id.to_owned()).or_default();
        for (request, should) in [
            (&q["short"], true),
            (&q["task"], true),
            (&next["short"], false),
            (&next["task"], false),
        ] {
            if next["id"] == q["id"] && !should {
                continue;
            }
            entry.push(json!({"query": request, "should_trigger": should}));
        }
    }
    for (id, entries) in &files {
        let dir = copy.path().join(id).join("evals");
        assert!(
            dir.parent().unwrap().is_dir(),
            "{id} is not a folder of the corpus"
        );
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("eval_queries.json"),
            serde_json::to_string_pretty(entries).unwrap(),
        )
        .unwrap();
    }
    let out = eval(&[copy.path()], &["--json"]);
    let answer = json_of(&out);
    // Some dev requests are routed elsewhere today: exit 1, every skill reported.
    assert_exit(&out, 1);
    assert_eq!(answer["skills"].as_array().unwrap().len(), files.len());
    assert!(
        answer["errors"].as_array().unwrap().is_empty(),
        "{}",
        answer["errors"]
    );
    eprintln!(
        "combined corpus: {} of {} eval queries pass",
        answer["passed"], answer["total"]
    );
    let n = same_as_get_skill(&[copy.path()], &answer).await;
    assert_eq!(n as u64, answer["total"].as_u64().unwrap());
}

/// A small collection: a form skill with evals that pass, a PDF skill with one that fails, and
/// a third whose eval file is malformed.
fn collection() -> TempDir {
    let dir = TempDir::new().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "forms/SKILL.md",
                &agent_skill_md(
                    "forms",
                    "Build validated web forms - fields, inline errors, submit",
                    "Forms.",
                ),
            ),
            (
                "forms/evals/eval_queries.json",
                r#"[
                  {"query": "build a signup form with inline errors", "should_trigger": true},
                  {"query": "validate the fields of my web form before submit", "should_trigger": true},
                  {"query": "merge two pdf files", "should_trigger": false}
                ]"#,
            ),
            (
                "docs/pdf.md",
                &skill_md("Merge and split PDF files", &["pdf", "merge"], "PDF."),
            ),
            (
                "docs/pdf/evals/eval_queries.json",
                r#"[
                  {"query": "merge two pdf files", "should_trigger": true},
                  {"query": "fill the form fields with inline errors", "should_trigger": true},
                  {"query": "bake bread", "should_trigger": false}
                ]"#,
            ),
            (
                "broken/SKILL.md",
                &agent_skill_md("broken", "Rotate the nightly logs", "Logs."),
            ),
            (
                "broken/evals/eval_queries.json",
                r#"[{"query": "rotate logs", "should_trigger": true}, {"query": "rotate logs nightly"}, 3]"#,
            ),
        ],
    );
    dir
}

#[test]
fn eval_prints_a_table_and_exits_1_below_the_pass_rate_or_on_a_malformed_file() {
    let dir = collection();
    let out = eval(&[dir.path()], &[]);
    assert_exit(&out, 1);
    let text = stdout(&out);
    let err = stderr(&out);
    // The malformed file is located (file, entry, what is wrong); the others still run.
    let file = dir.path().join("broken/evals/eval_queries.json");
    assert!(
        err.contains(&format!(
            "{}: entry 1: `should_trigger` is missing (true or false)",
            file.display()
        )),
        "{err}"
    );
    assert!(err.contains("entry 2: a number, not an object"), "{err}");
    let header = text.lines().next().unwrap();
    for column in [
        "skill",
        "passed",
        "rate",
        "recall",
        "false triggers",
        "train",
        "validation",
        "won instead",
    ] {
        assert!(header.contains(column), "{header}");
    }
    let row = |skill: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{skill} ")))
            .unwrap_or_else(|| panic!("no row for {skill}:\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row("forms")[1..4], ["3/3", "100%", "2/2"]);
    // docs/pdf: its second query goes to forms, which won instead.
    let pdf = row("docs/pdf");
    assert_eq!(pdf[1..5], ["2/3", "67%", "1/2", "0/1"]);
    assert_eq!(pdf.last(), Some(&"(1)"));
    assert!(pdf.contains(&"forms"), "{pdf:?}");
    assert!(text.contains("docs/pdf: 1 failed\n  FAIL ["), "{text}");
    assert!(
        text.contains(
            "should trigger: \"fill the form fields with inline errors\" -> forms matched"
        ),
        "{text}"
    );
    assert!(text.contains("2 skills evaluated: 1 meets --min-pass-rate 1, 1 below; 5/6 queries passed; 1 eval file could not be run"), "{text}");

    // With the pass rate lowered and the malformed file gone: exit 0.
    std::fs::remove_file(&file).unwrap();
    assert_exit(&eval(&[dir.path()], &["--min-pass-rate", "0.6"]), 0);
    assert_exit(&eval(&[dir.path()], &["--min-pass-rate", "0.7"]), 1);
}

#[test]
fn eval_json_has_the_documented_shape() {
    let dir = collection();
    std::fs::remove_file(dir.path().join("broken/evals/eval_queries.json")).unwrap();
    let out = eval(&[dir.path()], &["--json"]);
    assert_exit(&out, 1);
    let v = json_of(&out);
    assert_eq!(
        (v["passed"].clone(), v["total"].clone()),
        (json!(5), json!(6))
    );
    assert_eq!(v["hidden"], json!([]));
    assert_eq!(v["errors"], json!([]));
    let pdf = &v["skills"][0];
    assert_eq!(pdf["skill"], json!("docs/pdf"));
    assert_eq!(
        (pdf["passed"].clone(), pdf["total"].clone()),
        (json!(2), json!(3))
    );
    let q = &pdf["queries"][1];
    assert_eq!(q["query"], json!("fill the form fields with inline errors"));
    assert_eq!(q["should_trigger"], json!(true));
    assert_eq!(q["outcome"], json!("other"));
    assert_eq!(q["winner"], json!("forms"));
    assert_eq!(q["passed"], json!(false));
    assert!(q.get("candidates").is_none(), "{q}");
    assert!(
        q["rank"].is_null() || q["rank"].as_u64().unwrap() > 1,
        "{q}"
    );
    let q = &pdf["queries"][0];
    assert_eq!(
        (q["outcome"].clone(), q["winner"].clone(), q["rank"].clone()),
        (json!("matched"), json!("docs/pdf"), json!(1))
    );
    let q = &pdf["queries"][2];
    assert_eq!(
        (
            q["outcome"].clone(),
            q["winner"].clone(),
            q["passed"].clone()
        ),
        (json!("no_match"), Value::Null, json!(true))
    );
    // Every query has exactly the documented keys (`candidates` only when ambiguous).
    for skill in v["skills"].as_array().unwrap() {
        let mut splits = BTreeMap::new();
        for q in skill["queries"].as_array().unwrap() {
            let keys: Vec<&str> = q.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(
                keys,
                [
                    "outcome",
                    "passed",
                    "query",
                    "rank",
                    "should_trigger",
                    "split",
                    "winner"
                ],
                "{q}"
            );
            *splits
                .entry(q["split"].as_str().unwrap().to_owned())
                .or_insert(0) += 1;
        }
        // 2 positives -> 1 train + 1 validation; 1 negative -> 1 train.
        assert_eq!(
            splits,
            BTreeMap::from([("train".to_owned(), 2), ("validation".to_owned(), 1)])
        );
        let train = &skill["train"];
        let validation = &skill["validation"];
        assert_eq!(
            train["total"].as_u64().unwrap() + validation["total"].as_u64().unwrap(),
            3
        );
    }
}

#[test]
fn ambiguous_requests_pass_only_with_accept_ambiguous() {
    let dir = TempDir::new().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "alpha/SKILL.md",
                &agent_skill_md("alpha", "Rotate log files nightly", "Logs."),
            ),
            (
                "beta/SKILL.md",
                &agent_skill_md("beta", "Rotate log files nightly", "Logs."),
            ),
            (
                "alpha/evals/eval_queries.json",
                r#"[{"query": "rotate log files", "should_trigger": true}]"#,
            ),
        ],
    );
    let out = eval(&[dir.path()], &["--json"]);
    assert_exit(&out, 1);
    let q = &json_of(&out)["skills"][0]["queries"][0];
    assert_eq!(q["outcome"], json!("ambiguous"));
    assert_eq!(q["candidates"], json!(["alpha", "beta"]));
    assert_eq!(q["winner"], Value::Null);
    assert_eq!(q["rank"], json!(1));
    let out = eval(&[dir.path()], &["--json", "--accept-ambiguous"]);
    assert_exit(&out, 0);
    assert_eq!(
        json_of(&out)["skills"][0]["queries"][0]["passed"],
        json!(true)
    );
}

#[test]
fn skill_path_file_runs_one_file_and_usage_errors_exit_2() {
    let dir = collection();
    let file = dir.path().join("given.json");
    std::fs::write(
        &file,
        r#"[{"query": "merge two pdf files", "should_trigger": true}]"#,
    )
    .unwrap();
    let out = eval(
        &[dir.path()],
        &["--json", "--skill", "docs/pdf", file.to_str().unwrap()],
    );
    assert_exit(&out, 0);
    let v = json_of(&out);
    assert_eq!(v["skills"].as_array().unwrap().len(), 1);
    assert_eq!(v["skills"][0]["skill"], json!("docs/pdf"));
    // For another skill, the same query fails.
    let out = eval(&[dir.path()], &["--skill", "forms", file.to_str().unwrap()]);
    assert_exit(&out, 1);
    assert!(
        stdout(&out).contains("-> docs/pdf matched"),
        "{}",
        stdout(&out)
    );
    // Usage errors.
    let missing = dir.path().join("missing.json");
    let out = eval(
        &[dir.path()],
        &["--skill", "forms", missing.to_str().unwrap()],
    );
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("missing.json"), "{}", stderr(&out));
    assert_exit(&eval(&[dir.path()], &["--min-pass-rate", "1.5"]), 2);
    assert_exit(&eval(&[dir.path()], &["--skill", "forms"]), 2);
    // An unknown skill: not found, with suggestions.
    let out = eval(&[dir.path()], &["--skill", "fomrs", file.to_str().unwrap()]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("forms"), "{}", stderr(&out));
}

#[test]
fn no_eval_file_is_a_failure_with_a_hint() {
    let dir = TempDir::new().unwrap();
    write_files(
        dir.path(),
        &[(
            "pdf/SKILL.md",
            &agent_skill_md("pdf", "Merge PDF files", "PDF."),
        )],
    );
    let out = eval(&[dir.path()], &[]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("no eval file found"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn junit_has_a_testsuite_per_skill_and_a_testcase_per_query() {
    let dir = collection();
    let report = dir.path().join("junit.xml");
    let out = eval(&[dir.path()], &["--junit", report.to_str().unwrap()]);
    assert_exit(&out, 1);
    let xml = std::fs::read_to_string(&report).unwrap();
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"skills-mcp eval\" tests=\"7\" failures=\"1\" errors=\"1\" skipped=\"0\">"), "{xml}");
    assert!(
        xml.contains("<testsuite name=\"docs/pdf\" tests=\"3\" failures=\"1\""),
        "{xml}"
    );
    assert!(
        xml.contains("<testsuite name=\"forms\" tests=\"3\" failures=\"0\""),
        "{xml}"
    );
    assert_eq!(xml.matches("<testcase ").count(), 7, "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 1, "{xml}");
    assert!(
        xml.contains("<failure message=\"should trigger; forms matched (docs/pdf "),
        "{xml}"
    );
    assert!(
        xml.contains("type=\"malformed\">entry 1: `should_trigger` is missing"),
        "{xml}"
    );
    assert_eq!(
        xml.matches("<testsuite ").count(),
        xml.matches("</testsuite>").count()
    );
}

#[test]
fn a_skill_hidden_from_the_caller_is_reported_not_evaluated() {
    let dir = collection();
    std::fs::remove_file(dir.path().join("broken/evals/eval_queries.json")).unwrap();
    let config = dir.path().join("server.yaml");
    std::fs::write(
        &config,
        "access:\n  rules:\n    - skills: [\"docs/**\"]\n      groups: [writers]\n",
    )
    .unwrap();
    let run = |who: &[&str]| {
        bin()
            .arg("--config")
            .arg(&config)
            .args(["--no-default-roots", "--root"])
            .arg(dir.path())
            .args(["eval", "--json"])
            .args(who)
            .output()
            .unwrap()
    };
    // The local operator without `access.local` sees everything.
    let v = json_of(&run(&[]));
    assert_eq!(v["skills"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(v["hidden"], json!([]));
    for who in [&["--anonymous"][..], &["--groups", "readers"]] {
        let out = run(who);
        assert_exit(&out, 0);
        let v = json_of(&out);
        assert_eq!(v["hidden"], json!(["docs/pdf"]), "{who:?}");
        assert_eq!(v["skills"][0]["skill"], json!("forms"));
        assert_eq!(v["skills"].as_array().unwrap().len(), 1);
    }
    let v = json_of(&run(&["--groups", "writers"]));
    assert_eq!(v["hidden"], json!([]));
    assert_eq!(v["skills"].as_array().unwrap().len(), 2);
}

/// An eval file is a file of its skill (in its manifest) and never routing evidence: the same
/// hits, scores and routing with and without one, through the component.
#[test]
fn an_eval_file_changes_no_ranking() {
    let dir = collection();
    let requests = [
        "merge two pdf files",
        "fill the form fields with inline errors",
        "rotate logs nightly",
        "should_trigger query eval",
        "validate the fields of my web form before submit",
    ];
    let answers = |root: &Path| {
        let catalog = common::catalog(&[root]);
        requests
            .iter()
            .map(|r| {
                (
                    catalog.search(r, 10).unwrap(),
                    format!("{:?}", catalog.route(r).unwrap()),
                )
            })
            .collect::<Vec<_>>()
    };
    let with = answers(dir.path());
    let manifest: Vec<String> = common::catalog(&[dir.path()])
        .manifest("docs/pdf")
        .unwrap()
        .into_iter()
        .map(|f| f.relative)
        .collect();
    assert_eq!(manifest, vec!["pdf.md", "evals/eval_queries.json"]);
    for folder in ["forms", "docs/pdf", "broken"] {
        std::fs::remove_dir_all(dir.path().join(folder).join("evals")).unwrap();
    }
    assert_eq!(with, answers(dir.path()));
}
