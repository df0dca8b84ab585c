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
    let mut v = json!({
        "skill_path": hit.skill_path,
        "name": hit.name,
        "score": hit.score,
        "description": hit.description,
    });
    if let Some(version) = &hit.version {
        v["version"] = json!(version);
    }
    v
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
    let (hits, error) = match result {
        Ok(hits) => (hits, None),
        Err(e) => (&[][..], Some(e)),
    };
    let mut out = Vec::new();
    push_search_answer(
        &mut out,
        error,
        query,
        hits.iter().map(|h| HitFields {
            description: &h.description,
            name: &h.name,
            score: h.score,
            skill_path: &h.skill_path,
            uri: None,
            version: h.version.as_deref(),
        }),
    );
    String::from_utf8(out).expect("JSON text is UTF-8")
}

/// The fields of a hit in a search's compact answer ([`push_search_answer`]).
pub struct HitFields<'a> {
    pub description: &'a str,
    pub name: &'a str,
    pub score: f64,
    pub skill_path: &'a str,
    /// The skill's SKILL.md in the Skills extension, when the answer gives it.
    pub uri: Option<&'a str>,
    /// The skill's `metadata.version`, when it has one.
    pub version: Option<&'a str>,
}

/// A search's answer as compact JSON, appended to `out`: `{"error":..,"query":..,"results":
/// [{"description":..,"name":..,"score":..,"skill_path":..,"uri":..}]}`, `error` and `uri`
/// only when given. The bytes are those `serde_json` writes for the same object as a
/// `serde_json::Value` (keys sorted), written straight from the fields: what `search --batch`
/// prints a line of, and the text of the `search_skills` tool's answer.
pub fn push_search_answer<'a>(
    out: &mut Vec<u8>,
    error: Option<&str>,
    query: &str,
    hits: impl IntoIterator<Item = HitFields<'a>>,
) {
    out.push(b'{');
    if let Some(e) = error {
        out.extend_from_slice(b"\"error\":");
        push_json_str(out, e);
        out.push(b',');
    }
    out.extend_from_slice(b"\"query\":");
    push_json_str(out, query);
    out.extend_from_slice(b",\"results\":[");
    for (i, h) in hits.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"description\":");
        push_json_str(out, h.description);
        out.extend_from_slice(b",\"name\":");
        push_json_str(out, h.name);
        out.extend_from_slice(b",\"score\":");
        // serde_json writes a number that is not finite as null, as a `Value` holds it.
        serde_json::to_writer(&mut *out, &h.score).expect("writing to memory");
        out.extend_from_slice(b",\"skill_path\":");
        push_json_str(out, h.skill_path);
        if let Some(uri) = h.uri {
            out.extend_from_slice(b",\"uri\":");
            push_json_str(out, uri);
        }
        if let Some(version) = h.version {
            out.extend_from_slice(b",\"version\":");
            push_json_str(out, version);
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
}

/// Appends `s` as a JSON string, quotes included, escaped byte for byte as serde_json does
/// (`"`, `\\`, and control characters: `\b \t \n \f \r`, the others `\u00xx`; nothing else).
/// The runs between escapes are found 16 bytes at a time on x86-64 (SSE2), 8 elsewhere
/// ([`next_to_escape`]), faster than serde_json's byte-by-byte table.
pub fn push_json_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut copied = 0;
    let mut i = next_to_escape(bytes, 0);
    while i < bytes.len() {
        let b = bytes[i];
        out.extend_from_slice(&bytes[copied..i]);
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            }
        }
        copied = i + 1;
        i = next_to_escape(bytes, i + 1);
    }
    out.extend_from_slice(&bytes[copied..]);
    out.push(b'"');
}

/// Whether JSON escapes byte `b` (below 0x20, a quote or a backslash).
#[inline]
fn to_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The first byte of `bytes` at or after `i` that JSON escapes ([`to_escape`]), or its length.
#[inline]
fn next_to_escape(bytes: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86-64 (every intrinsic here is available); each load reads the
    // 16 bytes of a chunk of `bytes`, unaligned.
    #[allow(unsafe_code)]
    unsafe {
        use core::arch::x86_64::*;
        let (low, quote, slash) = (
            _mm_set1_epi8(0x1f),
            _mm_set1_epi8(b'"' as i8),
            _mm_set1_epi8(b'\\' as i8),
        );
        while let Some(chunk) = bytes.get(i..i + 16) {
            let v = _mm_loadu_si128(chunk.as_ptr().cast());
            // (a byte at most 0x1f is its own unsigned maximum with 0x1f)
            let control = _mm_cmpeq_epi8(_mm_max_epu8(v, low), low);
            let special = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash));
            let mask = _mm_movemask_epi8(_mm_or_si128(control, special)) as u32;
            if mask != 0 {
                return i + mask.trailing_zeros() as usize;
            }
            i += 16;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        // Whether a byte of `w` is below 0x20, a quote or a backslash (exact: the bit tricks
        // find no byte that is not there).
        let any_to_escape = |w: u64| {
            let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
            (w.wrapping_sub(ONES * 0x20) & !w & HIGH)
                | zero(w ^ (ONES * b'"' as u64))
                | zero(w ^ (ONES * b'\\' as u64))
                != 0
        };
        while let Some(word) = bytes.get(i..i + 8) {
            let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            if any_to_escape(w) {
                break;
            }
            i += 8;
        }
    }
    while i < bytes.len() && !to_escape(bytes[i]) {
        i += 1;
    }
    i
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

/// `audit --json`: `{"skills": [{"skill", "competitors": [{"skill", "strength", "shared",
/// "separating"}], "findings": [{"kind", "message"}]}]}`, in the audit's order (worst first).
pub fn audit_json(skills: &[crate::index::AuditSkill]) -> Value {
    let skills: Vec<Value> = skills
        .iter()
        .map(|s| {
            json!({
                "skill": s.skill_path,
                "competitors": s.competitors.iter().map(|c| json!({
                    "skill": c.skill_path,
                    "strength": c.strength,
                    "shared": c.shared,
                    "separating": c.separating,
                })).collect::<Vec<_>>(),
                "findings": s.findings.iter().map(|f| json!({
                    "kind": f.kind.as_str(),
                    "message": f.message,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "skills": skills })
}

/// `audit`: a report read top-down, worst first: a summary of the findings, then each skill
/// with a finding or a competitor (its findings, then its competitors with their strength and
/// words), then how many skills have neither.
pub fn audit_text(skills: &[crate::index::AuditSkill]) -> String {
    use crate::index::AuditFindingKind as K;
    let count = |k: K| {
        skills
            .iter()
            .filter(|s| s.findings.iter().any(|f| f.kind == k))
            .count()
    };
    let from_evals = skills.iter().filter(|s| !s.derived).count();
    let mut out = format!(
        "audit of {} skills ({} with eval queries, {} with requests derived from their text): {} unreachable, {} with a near-identical description, {} over-broad\n",
        skills.len(),
        from_evals,
        skills.len() - from_evals,
        count(K::Unreachable),
        count(K::Duplicate),
        count(K::Hijacker),
    );
    let mut quiet = 0usize;
    for s in skills {
        if s.findings.is_empty() && s.competitors.is_empty() {
            quiet += 1;
            continue;
        }
        out.push_str(&format!(
            "\n{}  ({} request{}, {})\n",
            s.skill_path,
            s.requests,
            if s.requests == 1 { "" } else { "s" },
            if s.derived {
                "derived from its text"
            } else {
                "its eval queries"
            }
        ));
        for f in &s.findings {
            out.push_str(&format!(
                "  {}: {}\n",
                f.kind.as_str(),
                one_line(&f.message)
            ));
        }
        for c in &s.competitors {
            let words = |label: &str, w: &[String]| {
                if w.is_empty() {
                    String::new()
                } else {
                    format!("  {label}: {}", w.join(", "))
                }
            };
            // A competitor that wins or ties none of the requests only comes close.
            let strength = if c.strength > 0.0 {
                format!("{:>4.0}%", c.strength * 100.0)
            } else {
                "close".to_owned()
            };
            out.push_str(&format!(
                "  {strength}  {}{}{}\n",
                c.skill_path,
                words("shared", &c.shared),
                words("separating", &c.separating)
            ));
        }
    }
    if quiet > 0 {
        out.push_str(&format!(
            "\n{quiet} skill{} without findings or competitors\n",
            if quiet == 1 { "" } else { "s" }
        ));
    }
    out
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
            version: None,
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
            version: Some("1.10".into()),
            ..hit.clone()
        };
        assert!(
            batch_line("q", Ok(std::slice::from_ref(&odd))).ends_with(r#","version":"1.10"}]}"#)
        );
        assert_eq!(
            batch_line("q\"", Ok(&[hit.clone(), odd.clone()])),
            json!({ "query": "q\"", "results": [hit_json(&hit), hit_json(&odd)] }).to_string()
        );
    }

    #[test]
    fn strings_are_escaped_as_serde_json_does() {
        // Every ASCII character and a few others, at every place in and across 8- and 16-byte
        // chunks.
        let mut chars: Vec<char> = (0u8..0x80).map(char::from).collect();
        chars.extend(['é', '日', '🦀', '\u{2028}', '\u{80}', '\u{ff}']);
        for c in chars {
            for before in 0..36 {
                for after in [0, 1, 7, 9] {
                    let s = format!("{}{c}{c}{}", "a".repeat(before), "b".repeat(after));
                    let mut out = Vec::new();
                    push_json_str(&mut out, &s);
                    assert_eq!(
                        String::from_utf8(out).unwrap(),
                        serde_json::to_string(&s).unwrap(),
                        "{s:?}"
                    );
                }
            }
        }
    }
}
