//! The command line's answers as text: what `skills-mcp search | get | validate` print, and what
//! the stock-WASI command `skills-engine-cli` prints, from one function each, so that the two
//! agree by construction (`.ci/wasi` checks it byte for byte). Pure formatting, no I/O: callers
//! write the strings. JSON keeps the shapes of the MCP tools' answers.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::model::*;

/// Collapse whitespace so a value fits on one line.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `value` as pretty JSON and a newline (how every JSON answer is printed).
pub fn pretty(value: &Value) -> String {
    let mut s = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into());
    s.push('\n');
    s
}

/// A search hit as `search --json` / `--batch` list it.
pub fn hit_json(hit: &SearchHit) -> Value {
    json!({
        "skill_path": hit.skill_path,
        "name": hit.name,
        "score": hit.score,
        "description": hit.description,
    })
}

/// Why a hit scores what it does (`search --json --explain`).
pub fn explanation_json(e: &Explanation) -> Value {
    json!({
        "skill_path": e.skill_path,
        "score": e.score,
        "terms": e.terms.iter().map(|t| json!({
            "field": t.field,
            "term": t.term,
            "contribution": t.contribution,
        })).collect::<Vec<_>>(),
        "notes": e.notes,
    })
}

/// `search --json`: `{"query", "results": [{skill_path, name, score, description, matched,
/// explain?}]}`; `explanations` is empty or one per hit.
pub fn search_json(query: &str, hits: &[SearchHit], explanations: &[Explanation]) -> String {
    let results: Vec<Value> = hits
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut v = hit_json(h);
            v["matched"] = json!(h.matched);
            if let Some(e) = explanations.get(i) {
                v["explain"] = explanation_json(e);
            }
            v
        })
        .collect();
    pretty(&json!({ "query": query, "results": results }))
}

/// `search`: one line per hit, `score  skill_path  description`, each followed by its
/// explanation's terms and notes when `explanations` has one per hit.
pub fn search_text(hits: &[SearchHit], explanations: &[Explanation]) -> String {
    let mut out = String::new();
    for (i, h) in hits.iter().enumerate() {
        out.push_str(&format!(
            "{:.3}  {}  {}\n",
            h.score,
            h.skill_path,
            one_line(&h.description)
        ));
        if let Some(e) = explanations.get(i) {
            for t in &e.terms {
                out.push_str(&format!(
                    "         {:+.4}  {}:{}\n",
                    t.contribution, t.field, t.term
                ));
            }
            for n in &e.notes {
                out.push_str(&format!("         {n}\n"));
            }
        }
    }
    out
}

/// One line of `search --batch` (without its newline): the hits, or the error of that query.
pub fn batch_line(query: &str, result: Result<&[SearchHit], &str>) -> String {
    // Serialised straight from borrowed fields, keys in the order a `serde_json::Value` map
    // keeps them (sorted), so the bytes are those of [`hit_json`] in a `json!` object.
    #[derive(serde::Serialize)]
    struct Hit<'a> {
        description: &'a str,
        name: &'a str,
        score: f64,
        skill_path: &'a str,
    }
    #[derive(serde::Serialize)]
    struct Line<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
        query: &'a str,
        results: Vec<Hit<'a>>,
    }
    let (hits, error) = match result {
        Ok(hits) => (hits, None),
        Err(e) => (&[][..], Some(e)),
    };
    let line = Line {
        error,
        query,
        results: hits
            .iter()
            .map(|h| Hit {
                description: &h.description,
                name: &h.name,
                score: h.score,
                skill_path: &h.skill_path,
            })
            .collect(),
    };
    serde_json::to_string(&line).unwrap_or_default()
}

/// `get_skill` when nothing matches.
pub fn no_match_json() -> Value {
    json!({
        "no_match": true,
        "message": "No skill matches the given context.",
    })
}

/// `get_skill` for an ambiguous request.
pub fn ambiguous_json(hits: &[SearchHit]) -> Value {
    json!({
        "ambiguous": true,
        "candidates": hits.iter().map(|h| json!({
            "skill_path": h.skill_path,
            "score": h.score,
            "description": h.description,
            "matched_keywords": h.matched,
        })).collect::<Vec<_>>(),
        "message": "Multiple skills match. Specify your need or pick a skill_path.",
    })
}

/// `get_skill` for a match: its score, matched keywords, content and files.
pub fn matched_json(hit: &SearchHit, resolved: &ResolvedSkill) -> Value {
    let mut out = json!({
        "skill_path": resolved.skill_path,
        "score": hit.score,
        "matched_keywords": hit.matched,
    });
    resolved_json(resolved, &mut out);
    out
}

/// `get --path`: a skill's content and files, in the shape of a match without `score` and
/// `matched_keywords`.
pub fn skill_json(resolved: &ResolvedSkill) -> Value {
    let mut out = json!({ "skill_path": resolved.skill_path });
    resolved_json(resolved, &mut out);
    out
}

/// The content and file fields of a `get_skill` answer.
fn resolved_json(resolved: &ResolvedSkill, out: &mut Value) {
    let list = |assets: &[AssetInfo]| assets.iter().map(asset_info_json).collect::<Vec<_>>();
    out["content"] = json!(resolved.content);
    out["assets"] = json!(list(&resolved.assets));
    out["scripts"] = json!(list(&resolved.scripts));
    out["inherited_assets"] = json!(list(&resolved.inherited_assets));
    out["inherited_scripts"] = json!(list(&resolved.inherited_scripts));
}

/// An asset (`file`, `description`, `type`) or script (`file`, `description`, `execution`,
/// `args`) of a `get_skill` answer, with `from` when inherited.
pub fn asset_info_json(asset: &AssetInfo) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("file".into(), json!(asset.file));
    out.insert("description".into(), json!(asset.description));
    match &asset.script {
        Some(script) => {
            let execution = match script.execution {
                Execution::Claude => "claude",
                Execution::Server => "server",
            };
            out.insert("execution".into(), json!(execution));
            out.insert(
                "args".into(),
                Value::Array(
                    script
                        .args
                        .iter()
                        .map(|a| {
                            json!({
                                "name": a.name,
                                "description": a.description,
                                "required": a.required,
                            })
                        })
                        .collect(),
                ),
            );
        }
        None => {
            out.insert("type".into(), json!(asset.asset_type));
        }
    }
    if let Some(from) = &asset.from {
        out.insert("from".into(), json!(from));
    }
    Value::Object(out)
}

/// The engine's reports with a host's own findings (unreadable, oversized or left-out files,
/// root errors) merged in: a finding about a file the engine reported joins its report (the
/// worse severity wins), the others become reports of their own; sorted by root and path.
pub fn merge_reports(engine: Vec<FileReport>, host: &[FileReport]) -> Vec<FileReport> {
    let mut reports: BTreeMap<(u32, String), FileReport> = engine
        .into_iter()
        .map(|r| ((r.root, r.path.clone()), r))
        .collect();
    for h in host {
        match reports.get_mut(&(h.root, h.path.clone())) {
            Some(r) => {
                r.worst = r.worst.max(h.worst);
                r.diagnostics.extend(h.diagnostics.iter().cloned());
            }
            None => {
                reports.insert((h.root, h.path.clone()), h.clone());
            }
        }
    }
    reports.into_values().collect()
}

/// A file of a root as `validate` names it: the root as the user gave it (`#n` when unknown),
/// then the path.
pub fn located(roots: &[String], root: u32, path: &str) -> String {
    let base = roots
        .get(root as usize)
        .cloned()
        .unwrap_or_else(|| format!("#{root}"));
    if path.is_empty() {
        base
    } else {
        format!("{}/{path}", base.trim_end_matches('/'))
    }
}

/// `validate`: what it prints, and whether any file has errors (exit 1).
pub struct Validation {
    pub text: String,
    pub has_errors: bool,
}

/// `validate`: `ok` per file without findings (unless `quiet`), one line per finding
/// (`quiet`: files with warnings or errors only), then the summary. `roots` are the roots as
/// the user gave them, `skills` the number of skills indexed.
pub fn validate_text(
    reports: &[FileReport],
    roots: &[String],
    quiet: bool,
    skills: u32,
) -> Validation {
    let (mut ok, mut warnings, mut errors) = (0usize, 0usize, 0usize);
    let mut out = String::new();
    for report in reports {
        match report.worst {
            Some(Severity::Error) => errors += 1,
            Some(Severity::Warning) => warnings += 1,
            _ => ok += 1,
        }
        if report.diagnostics.is_empty() {
            if !quiet {
                out.push_str(&format!(
                    "ok       {}\n",
                    located(roots, report.root, &report.path)
                ));
            }
            continue;
        }
        if quiet && report.worst.is_none_or(|w| w == Severity::Info) {
            continue;
        }
        for d in &report.diagnostics {
            let label = match d.severity {
                Severity::Error => "error  ",
                Severity::Warning => "warning",
                Severity::Info => "info   ",
            };
            let line = d.line.map(|l| format!(":{l}")).unwrap_or_default();
            out.push_str(&format!(
                "{label}  {}{line}: {}\n",
                located(roots, d.root, &d.path),
                one_line(&d.message)
            ));
        }
    }
    out.push_str(&format!(
        "{} files checked in {} root(s): {ok} ok, {warnings} with warnings, {errors} with errors; {skills} skills indexed\n",
        reports.len(),
        roots.len(),
    ));
    Validation {
        text: out,
        has_errors: errors > 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(root: u32, path: &str, findings: &[(Severity, Option<u32>, &str)]) -> FileReport {
        FileReport {
            root,
            path: path.into(),
            skill_path: None,
            worst: findings.iter().map(|f| f.0).max(),
            diagnostics: findings
                .iter()
                .map(|&(severity, line, message)| Diagnostic {
                    root,
                    path: path.into(),
                    line,
                    severity,
                    message: message.into(),
                })
                .collect(),
        }
    }

    #[test]
    fn validate_lists_files_findings_and_a_summary() {
        let reports = vec![
            report(0, "a/SKILL.md", &[]),
            report(
                0,
                "b.md",
                &[(Severity::Warning, Some(3), "no  `keywords`\n here")],
            ),
            report(1, "c/SKILL.md", &[(Severity::Error, None, "broken")]),
            report(1, "d.md", &[(Severity::Info, None, "fyi")]),
        ];
        let roots = vec!["skills/".to_string(), "/x".to_string()];
        let v = validate_text(&reports, &roots, false, 7);
        assert_eq!(
            v.text,
            "ok       skills/a/SKILL.md\n\
             warning  skills/b.md:3: no `keywords` here\n\
             error    /x/c/SKILL.md: broken\n\
             info     /x/d.md: fyi\n\
             4 files checked in 2 root(s): 2 ok, 1 with warnings, 1 with errors; 7 skills indexed\n"
        );
        assert!(v.has_errors);
        let q = validate_text(&reports[..2], &roots, true, 7);
        assert_eq!(
            q.text,
            "warning  skills/b.md:3: no `keywords` here\n\
             2 files checked in 2 root(s): 1 ok, 1 with warnings, 0 with errors; 7 skills indexed\n"
        );
        assert!(!q.has_errors);
        assert_eq!(located(&roots, 5, "f"), "#5/f");
        assert_eq!(located(&roots, 0, ""), "skills/");
    }

    #[test]
    fn host_findings_merge_into_the_engine_reports() {
        let engine = vec![
            report(0, "a.md", &[(Severity::Info, None, "engine")]),
            report(0, "c.md", &[]),
        ];
        let host = vec![
            report(0, "a.md", &[(Severity::Error, None, "host")]),
            report(0, "b.md", &[(Severity::Warning, None, "unreadable")]),
        ];
        let merged = merge_reports(engine, &host);
        let paths: Vec<&str> = merged.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, vec!["a.md", "b.md", "c.md"]);
        assert_eq!(merged[0].worst, Some(Severity::Error));
        assert_eq!(merged[0].diagnostics.len(), 2);
        assert_eq!(merged[0].diagnostics[0].message, "engine");
    }

    #[test]
    fn search_text_and_json() {
        let hit = SearchHit {
            skill_path: "ui/forms".into(),
            name: "forms".into(),
            description: "Build\n forms".into(),
            score: 0.55555,
            matched: vec!["form".into()],
        };
        let e = Explanation {
            skill_path: "ui/forms".into(),
            score: 0.55555,
            terms: vec![ExplainTerm {
                field: "name".into(),
                term: "form".into(),
                contribution: 0.5,
            }],
            notes: vec!["normalised".into()],
        };
        assert_eq!(
            search_text(std::slice::from_ref(&hit), &[]),
            "0.556  ui/forms  Build forms\n"
        );
        assert_eq!(
            search_text(std::slice::from_ref(&hit), std::slice::from_ref(&e)),
            "0.556  ui/forms  Build forms\n         +0.5000  name:form\n         normalised\n"
        );
        let v: Value =
            serde_json::from_str(&search_json("q", std::slice::from_ref(&hit), &[e])).unwrap();
        assert_eq!(v["results"][0]["matched"], json!(["form"]));
        assert_eq!(v["results"][0]["explain"]["terms"][0]["term"], "form");
        assert_eq!(
            batch_line("q", Err("bad")),
            r#"{"error":"bad","query":"q","results":[]}"#
        );
        // the same bytes as the `json!` object of `hit_json`s
        let odd = SearchHit {
            description: "say \"hi\"\n\u{1}é".into(),
            score: 1.0 / 3.0,
            ..hit.clone()
        };
        assert_eq!(
            batch_line("q\"", Ok(&[hit.clone(), odd.clone()])),
            json!({ "query": "q\"", "results": [hit_json(&hit), hit_json(&odd)] }).to_string()
        );
    }
}
