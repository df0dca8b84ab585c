//! `skills-mcp audit` through the real binary: a collection with an over-broad skill, a skill
//! another always outranks and the same skill in two roots; the findings, the JSON shape, the
//! text report's order, and the caller flags (a hidden skill is not reported).

use serde_json::Value;
use tempfile::TempDir;

use crate::common::*;

/// Two roots: `main` with six narrow skills ending with the same generic sentence, the
/// over-broad skill that is about exactly that sentence, a skill always outranked by its richer
/// twin, and a PDF skill; `team` with the PDF skill again under another name.
fn collection() -> (TempDir, TempDir) {
    let mut files: Vec<(String, String)> = [
        ("csv-tidy", "Clean CSV exports. Works on data files."),
        ("json-pretty", "Format JSON payloads. Works on data files."),
        ("yaml-lint", "Lint YAML manifests. Works on data files."),
        ("xml-check", "Validate XML feeds. Works on data files."),
        ("toml-edit", "Edit TOML settings. Works on data files."),
        ("ini-parse", "Parse INI sections. Works on data files."),
        ("convert", "Convert files."),
        ("pdf-forms", PDF),
    ]
    .iter()
    .map(|(n, d)| (format!("{n}/SKILL.md"), agent_skill_md(n, d, "# Use")))
    .collect();
    files.push((
        "data-files/SKILL.md".into(),
        "---\nname: data-files\ndescription: Works on data files.\nkeywords: [data, files, \
         data files, works]\nwhen_to_use: works on data files\n---\n"
            .into(),
    ));
    files.push((
        "convert-files/SKILL.md".into(),
        "---\nname: convert-files\ndescription: Convert files, convert files between formats, \
         convert files in bulk.\nkeywords: [convert, convert files]\nwhen_to_use: convert \
         files\n---\n"
            .into(),
    ));
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (&**p, &**c)).collect();
    let main = tree(&files);
    let team = tree(&[(
        "forms-pdf/SKILL.md",
        &agent_skill_md("forms-pdf", PDF, "# Use"),
    )]);
    (main, team)
}

const PDF: &str = "Fill in PDF forms and flatten them for printing or archiving.";

fn audit(main: &TempDir, team: &TempDir, extra: &[&str]) -> std::process::Output {
    bin()
        .args(["--no-default-roots", "--root"])
        .arg(main.path())
        .arg("--root")
        .arg(team.path())
        .arg("audit")
        .args(extra)
        .output()
        .expect("run skills-mcp audit")
}

fn skill<'a>(report: &'a Value, path: &str) -> &'a Value {
    report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["skill"] == path)
        .unwrap_or_else(|| panic!("{path} in {report:#}"))
}

fn kinds(s: &Value) -> Vec<&str> {
    s["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect()
}

#[test]
fn audit_json_names_the_hijacker_the_unreachable_skill_and_the_duplicates() {
    let (main, team) = collection();
    let out = audit(&main, &team, &["--json"]);
    assert_exit(&out, 0);
    let report = json(&out);
    // The exact shape: {"skills": [{"skill", "competitors": [{"skill", "strength", "shared",
    // "separating"}], "findings": [{"kind", "message"}]}]}.
    let top: Vec<&String> = report.as_object().unwrap().keys().collect();
    assert_eq!(top, ["skills"]);
    let skills = report["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 11);
    for s in skills {
        let mut keys: Vec<&String> = s.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["competitors", "findings", "skill"], "{s}");
        let competitors = s["competitors"].as_array().unwrap();
        assert!(competitors.len() <= 3, "{s}");
        let mut last = f64::INFINITY;
        for c in competitors {
            let mut keys: Vec<&String> = c.as_object().unwrap().keys().collect();
            keys.sort();
            assert_eq!(keys, ["separating", "shared", "skill", "strength"], "{c}");
            let strength = c["strength"].as_f64().unwrap();
            // 0 for one that wins or ties none of the requests but comes closest.
            assert!((0.0..=1.0).contains(&strength) && strength <= last, "{s}");
            last = strength;
            assert!(c["shared"].is_array() && c["separating"].is_array());
        }
        for f in s["findings"].as_array().unwrap() {
            let mut keys: Vec<&String> = f.as_object().unwrap().keys().collect();
            keys.sort();
            assert_eq!(keys, ["kind", "message"], "{f}");
        }
    }

    let broad = skill(&report, "data-files");
    assert!(kinds(broad).contains(&"hijacker"), "{broad:#}");
    for n in [
        "csv-tidy",
        "json-pretty",
        "yaml-lint",
        "xml-check",
        "toml-edit",
        "ini-parse",
    ] {
        assert_eq!(
            skill(&report, n)["competitors"][0]["skill"],
            "data-files",
            "{n}"
        );
    }

    let weak = skill(&report, "convert");
    assert_eq!(kinds(weak), ["unreachable"], "{weak:#}");
    let rival = &weak["competitors"][0];
    assert_eq!(rival["skill"], "convert-files");
    assert_eq!(rival["strength"], 1.0);
    assert!(
        rival["shared"]
            .as_array()
            .unwrap()
            .contains(&"convert".into()),
        "{rival}"
    );

    for (path, other) in [("pdf-forms", "forms-pdf"), ("forms-pdf", "pdf-forms")] {
        let s = skill(&report, path);
        assert_eq!(kinds(s), ["duplicate"], "{s:#}");
        let message = s["findings"][0]["message"].as_str().unwrap();
        assert!(message.contains(other), "{message}");
        assert!(message.contains("roots"), "{message}");
    }
    // Worst first: the unreachable skill, then the duplicates, then the rest.
    assert_eq!(skills[0]["skill"], "convert");
    assert_eq!(kinds(&skills[1]), ["duplicate"]);
    assert_eq!(kinds(&skills[2]), ["duplicate"]);
}

#[test]
fn audit_text_is_read_top_down_worst_first() {
    let (main, team) = collection();
    let out = audit(&main, &team, &[]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("audit of 11 skills")
            && first.contains("1 unreachable")
            && first.contains("2 with a near-identical description"),
        "{text}"
    );
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} in\n{text}"))
    };
    assert!(at("\nconvert  (") < at("\npdf-forms  ("));
    assert!(at("unreachable: ranks first on none") < at("duplicate: description"));
    assert!(at("duplicate: description") < at("hijacker: ranks first on requests meant for"));
    assert!(
        text.contains("100%  convert-files  shared: convert"),
        "{text}"
    );
}

#[test]
fn audit_sees_what_the_caller_sees() {
    let (main, team) = collection();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("audit-config.yaml");
    std::fs::write(
        &config,
        "access:\n  rules:\n    - skills: [\"forms-pdf\"]\n      groups: [forms]\n",
    )
    .unwrap();
    let run = |who: &[&str]| -> Value {
        let out = bin()
            .arg("--config")
            .arg(&config)
            .args(["--no-default-roots", "--root"])
            .arg(main.path())
            .arg("--root")
            .arg(team.path())
            .args(["audit", "--json"])
            .args(who)
            .output()
            .unwrap();
        assert_exit(&out, 0);
        json(&out)
    };
    let paths = |r: &Value| -> Vec<String> {
        r["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["skill"].as_str().unwrap().to_owned())
            .collect()
    };
    // Default: the local operator (no `access.local`: every skill).
    let local = run(&[]);
    assert!(paths(&local).contains(&"forms-pdf".into()));
    assert_eq!(local, run(&["--local"]));
    // A caller outside the group: the hidden skill is not reported, nor named as a duplicate.
    let other = run(&["--subject", "bob"]);
    assert_eq!(paths(&other).len(), 10);
    assert!(!paths(&other).contains(&"forms-pdf".into()));
    assert!(kinds(skill(&other, "pdf-forms")).is_empty(), "{other:#}");
    assert!(!other.to_string().contains("forms-pdf"));
    // One of the group sees it.
    let member = run(&["--groups", "forms"]);
    assert!(paths(&member).contains(&"forms-pdf".into()));
    // Conflicting caller flags are a usage error.
    let out = audit(&main, &team, &["--local", "--subject", "x"]);
    assert_exit(&out, 2);
}

/// A skill's eval queries are the requests meant for it (its `should_trigger: true` ones only):
/// one of them is won by another skill, which becomes its competitor, although nothing in its
/// own text would have named it. A malformed eval file is a located warning, and that skill's
/// requests are derived from its text.
#[test]
fn audit_takes_a_skills_eval_queries_as_its_requests() {
    let eval = r#"[
        {"query": "draw a bar chart from my spreadsheet columns", "should_trigger": true},
        {"query": "plot line charts of spreadsheet columns", "should_trigger": true},
        {"query": "fill in PDF forms", "should_trigger": false}
    ]"#;
    let root = tree(&[
        (
            "pdf-forms/SKILL.md",
            &agent_skill_md("pdf-forms", PDF, "# Use"),
        ),
        ("pdf-forms/evals/eval_queries.json", eval),
        (
            "chart-maker/SKILL.md",
            &agent_skill_md(
                "chart-maker",
                "Draw bar charts and line charts from spreadsheet columns.",
                "# Use",
            ),
        ),
        (
            "broken/SKILL.md",
            &agent_skill_md(
                "broken",
                "Rename photos by the date they were taken.",
                "# Use",
            ),
        ),
        ("broken/evals/eval_queries.json", r#"[{"query": 3}]"#),
    ]);
    let run = |extra: &[&str]| {
        bin()
            .args(["--no-default-roots", "--root"])
            .arg(root.path())
            .arg("audit")
            .args(extra)
            .output()
            .expect("run skills-mcp audit")
    };
    let out = run(&["--json"]);
    assert_exit(&out, 0);
    let report = json(&out);
    let pdf = skill(&report, "pdf-forms");
    let rival = &pdf["competitors"][0];
    assert_eq!(rival["skill"], "chart-maker", "{pdf:#}");
    // Both requests meant for it (the `should_trigger: false` one is not) go to the other.
    assert_eq!(rival["strength"], 1.0, "{pdf:#}");
    assert!(
        rival["shared"].as_array().unwrap().is_empty()
            && rival["separating"]
                .as_array()
                .unwrap()
                .contains(&"spreadsheet".into()),
        "{rival}"
    );
    assert_eq!(kinds(pdf), ["unreachable"], "{pdf:#}");
    // The malformed file: located, named, and the skill still audited from its own text.
    let err = stderr(&out);
    let file = root.path().join("broken/evals/eval_queries.json");
    assert!(
        err.contains(&format!("warning: {}: entry 0:", file.display()))
            && err.contains("skill broken; its audit requests are derived from its text"),
        "{err}"
    );
    assert!(
        skill(&report, "broken")["findings"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let text = stdout(&run(&[]));
    assert!(
        text.starts_with("audit of 3 skills (1 with eval queries, 2 with requests derived")
            && text.contains("\npdf-forms  (2 requests, its eval queries)"),
        "{text}"
    );
}

/// The audit split over engine instances (this one and copies of the index, one a part:
/// `index.audit-part`, then `index.audit-merge`), as the verb runs it on a machine with more
/// than one CPU, gives the very answer of one `index.audit` call, with given requests or
/// none.
#[test]
fn audit_in_parts_over_engine_instances_is_the_one_audit() {
    let (main, team) = collection();
    let catalog = catalog(&[main.path(), team.path()]);
    let given = [skills_mcp::runtime::SkillRequests {
        skill_path: "pdf-forms".into(),
        requests: vec!["clean up these data files".into()],
    }];
    let report = |r: anyhow::Result<Vec<skills_mcp::runtime::AuditSkill>>| {
        r.expect("an audit")
            .into_iter()
            .map(skills_mcp::output::audit_skill)
            .collect::<Vec<_>>()
    };
    for requests in [&given[..], &[]] {
        let whole = report(catalog.audit(requests));
        assert!(whole.iter().any(|s| !s.findings.is_empty()), "{whole:?}");
        for threads in [1, 2, 3] {
            assert_eq!(
                report(catalog.audit_parallel(requests, threads)),
                whole,
                "{threads} instances"
            );
        }
    }
}
