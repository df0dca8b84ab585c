//! Editor entry points: a checked file gives the index's own findings, and a draft ranked
//! against a finished index gets the rank and score a real rebuild with the draft gives.

use super::*;
use std::path::Path;

/// Every file below `dir` (relative `/` paths, `.git` and `node_modules` skipped) and its bytes.
fn load(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let ty = e.file_type().unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if ty.is_dir() && name != ".git" && name != "node_modules" {
                walk(base, &e.path(), out);
            } else if ty.is_file() {
                let path = e.path();
                let rel = path.strip_prefix(base).unwrap().to_string_lossy();
                out.push((rel.replace('\\', "/"), std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

/// A finished index of `files` (one root).
fn build(files: &[(String, Vec<u8>)]) -> Index {
    let mut index = Index::default();
    let listing = files
        .iter()
        .map(|(p, b)| Entry {
            path: p.clone(),
            kind: EntryKind::File,
            size: b.len() as u64,
        })
        .collect();
    let wanted: HashSet<String> = index
        .add_root("root", listing)
        .expect("a valid listing")
        .into_iter()
        .collect();
    let batch = files
        .iter()
        .filter(|(p, _)| wanted.contains(p))
        .map(|(p, b)| FileData {
            path: p.clone(),
            bytes: b.clone(),
        })
        .collect();
    index.add_files(0, batch).expect("files it asked for");
    index.finish().expect("a new index");
    index
}

fn bundled() -> Vec<(String, Vec<u8>)> {
    load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills"))
}

/// Check `draft` (file `path`) against a real rebuild of `files` with it, for `requests`.
fn same_as_rebuild(files: &[(String, Vec<u8>)], path: &str, draft: &str, requests: &[&str]) {
    let index = build(files);
    let requests: Vec<String> = requests.iter().map(|r| r.to_string()).collect();
    let ranking = index
        .score_draft(path, draft.as_bytes(), &requests, u32::MAX)
        .unwrap();
    let mut with: Vec<(String, Vec<u8>)> = files.iter().filter(|f| f.0 != path).cloned().collect();
    with.push((path.to_owned(), draft.as_bytes().to_vec()));
    let rebuilt = build(&with);
    assert_eq!(
        ranking.replaces,
        files.iter().any(|f| f.0 == path),
        "replaces for {path}"
    );
    for r in &ranking.requests {
        let hits = rebuilt.search(&r.request, u32::MAX).unwrap();
        let at = hits.iter().position(|h| h.skill_path == ranking.skill_path);
        assert_eq!(
            r.rank.map(|x| x as usize),
            at.map(|x| x + 1),
            "rank of {} for {:?}",
            ranking.skill_path,
            r.request
        );
        assert_eq!(
            r.matching as usize,
            hits.len(),
            "matching for {:?}",
            r.request
        );
        if let Some(at) = at {
            let want = hits[at].score;
            assert!(
                (r.score - want).abs() <= 1e-9 * want.max(1.0),
                "score for {:?}: draft {} vs rebuilt {want}",
                r.request,
                r.score
            );
            assert_eq!(r.matched, hits[at].matched, "matched for {:?}", r.request);
            assert_eq!(r.above.len(), at, "skills above for {:?}", r.request);
            for (a, h) in r.above.iter().zip(&hits) {
                assert_eq!(a.skill_path, h.skill_path, "above for {:?}", r.request);
                assert!((a.score - h.score).abs() <= 1e-9, "{a:?} vs {h:?}");
            }
        } else {
            assert_eq!(r.score, 0.0);
        }
    }
    // A small limit bounds the skills listed above the draft, never the count of matches
    // (also when the draft matches nothing).
    let short = index
        .score_draft(path, draft.as_bytes(), &requests, 2)
        .unwrap();
    for (r, all) in short.requests.iter().zip(&ranking.requests) {
        assert_eq!(r.matching, all.matching, "matching for {:?}", r.request);
        assert_eq!(r.rank, all.rank, "rank for {:?}", r.request);
        assert_eq!(
            r.above.len(),
            all.above.len().min(2),
            "above for {:?}",
            r.request
        );
    }
}

const NEW_AGENT_SKILL: &str = "---\nname: csv-cleaner\ndescription: Clean messy CSV files and fix encodings, delimiters and quoting, then validate the columns.\nkeywords: [csv, spreadsheet, data cleaning]\n---\n# CSV cleaner\n\nUse pandas to load the file.\n\n## Validate columns\n";

#[test]
fn check_skill_locates_a_broken_field_and_clears_when_fixed() {
    let cfg = EngineConfig::default();
    let broken = "---\nname: Bad Name\ndescription: [not, text]\n---\nbody\n";
    let c = check_skill(&cfg, "tools/bad/SKILL.md", broken.as_bytes(), Vec::new()).unwrap();
    assert_eq!(c.skill, None);
    assert_eq!(c.worst, Some(Severity::Error));
    let d = c
        .diagnostics
        .iter()
        .find(|d| d.message.contains("description"))
        .expect("a description finding");
    assert_eq!(d.line, Some(3));
    assert!(c.frontmatter_json.unwrap().contains("\"not\""));

    let fixed = "---\nname: bad\ndescription: Fixes things\n---\nbody\n";
    let c = check_skill(&cfg, "tools/bad/SKILL.md", fixed.as_bytes(), Vec::new()).unwrap();
    assert_eq!(c.worst, None, "{:?}", c.diagnostics);
    let s = c.skill.expect("a skill");
    assert_eq!(s.skill_path, "tools/bad");
    assert_eq!(c.served_name.as_deref(), Some("bad"));
    assert_eq!(c.served_description.as_deref(), Some("Fixes things"));

    // A name that differs from the folder: a warning on its line; the served name is the folder's.
    let other = "---\nname: other\ndescription: Fixes things\n---\n";
    let c = check_skill(&cfg, "tools/bad/SKILL.md", other.as_bytes(), Vec::new()).unwrap();
    assert_eq!(c.worst, Some(Severity::Warning));
    assert!(c.diagnostics.iter().any(|d| d.line == Some(2)));
    assert_eq!(c.served_name.as_deref(), Some("bad"));
}

#[test]
fn check_skill_gives_the_index_build_findings() {
    // The same file in a real index build has the same findings.
    let files = bundled();
    let index = build(&files);
    for report in index.reports() {
        let bytes = &files.iter().find(|f| f.0 == report.path).unwrap().1;
        let listing = files
            .iter()
            .map(|(p, b)| Entry {
                path: p.clone(),
                kind: EntryKind::File,
                size: b.len() as u64,
            })
            .collect();
        let c = check_skill(&EngineConfig::default(), &report.path, bytes, listing).unwrap();
        // Findings that need other files (shadowing, parents) are the index's; those of the
        // file itself are the same.
        for d in &c.diagnostics {
            assert!(
                report.diagnostics.contains(d),
                "{}: {d:?} not in {:?}",
                report.path,
                report.diagnostics
            );
        }
        if let Some(p) = &report.skill_path {
            let want = index.get(p).unwrap();
            let got = c.skill.as_ref().expect("a skill");
            assert_eq!(got.skill_path, want.skill_path);
            assert_eq!(got.frontmatter_json, want.frontmatter_json);
            assert_eq!(got.description, want.description);
            // The name an editor shows is the one the extension lists it under.
            let listed = index
                .extension_skills()
                .into_iter()
                .find(|e| e.skill_path == *p)
                .expect("every bundled skill is listed");
            assert_eq!(c.served_name.as_deref(), Some(listed.name.as_str()), "{p}");
        }
    }
}

#[test]
fn check_skill_serves_category_nodes_under_their_folder() {
    let cfg = EngineConfig::default();
    let category = "---\ndescription: API rules\n---\nRules.\n";
    for (path, name) in [
        ("api/_index.md", "api"),
        ("_root.md", "root"),
        ("ui/react/_index.md", "react"),
        (
            "x/capsule_crm-automation/SKILL.md",
            "capsule-crm-automation",
        ),
    ] {
        let text = if path.ends_with("SKILL.md") {
            "---\nname: capsule-crm-automation\ndescription: CRM\n---\n"
        } else {
            category
        };
        let c = check_skill(&cfg, path, text.as_bytes(), Vec::new()).unwrap();
        assert!(c.skill.is_some(), "{path}: {:?}", c.diagnostics);
        assert_eq!(c.served_name.as_deref(), Some(name), "{path}");
    }
    // No name can be made: none, and a finding says why.
    let c = check_skill(
        &cfg,
        "x/日本/SKILL.md",
        "---\nname: x\ndescription: d\n---\n".as_bytes(),
        Vec::new(),
    )
    .unwrap();
    assert!(c.skill.is_some());
    assert_eq!(c.served_name, None);
    assert!(
        c.diagnostics
            .iter()
            .any(|d| d.message.contains("left out of the Skills extension")),
        "{:?}",
        c.diagnostics
    );
}

#[test]
fn check_skill_refuses_bad_paths() {
    let cfg = EngineConfig::default();
    assert!(matches!(
        check_skill(&cfg, "../x/SKILL.md", b"", Vec::new()),
        Err(Error::InvalidPath(_))
    ));
    assert!(matches!(
        check_skill(&cfg, "x/notes.txt", b"", Vec::new()),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn a_new_draft_ranks_as_in_a_rebuilt_index() {
    same_as_rebuild(
        &bundled(),
        "data/csv-cleaner/SKILL.md",
        NEW_AGENT_SKILL,
        &[
            "clean a csv file",
            "react login form",
            "fix the delimiters of a spreadsheet",
            "validate columns with pandas",
            "csv",
            "cleening csvs",
            "unrelated weather in paris",
        ],
    );
}

#[test]
fn a_draft_replacing_a_skill_ranks_as_in_a_rebuilt_index() {
    let files = bundled();
    let (path, bytes) = files
        .iter()
        .find(|(p, _)| p.ends_with("SKILL.md"))
        .expect("a bundled SKILL.md")
        .clone();
    let text = String::from_utf8(bytes).unwrap();
    let edited = text.replacen("description:", "description: Parse CSV spreadsheets and", 1);
    same_as_rebuild(
        &files,
        &path,
        &edited,
        &["parse a csv spreadsheet", "react form validation", "deploy"],
    );
    // A hierarchical file, edited.
    let (path, bytes) = files
        .iter()
        .find(|(p, _)| p.ends_with(".md") && !p.ends_with("SKILL.md") && !p.contains("_"))
        .expect("a bundled hierarchical skill")
        .clone();
    let text = String::from_utf8(bytes).unwrap();
    same_as_rebuild(
        &files,
        &path,
        &text,
        &["react login form", "authentication"],
    );
}

#[test]
fn a_draft_that_is_not_a_skill_is_an_invalid_argument() {
    let index = build(&bundled());
    let e = index
        .score_draft(
            "x/SKILL.md",
            b"---\nname: x\n---\n",
            &["anything".into()],
            5,
        )
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("description")),
        "{e:?}"
    );
    let e = index
        .score_draft("x/SKILL.md", NEW_AGENT_SKILL.as_bytes(), &[" ".into()], 5)
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)));
    assert!(matches!(
        Index::default().score_draft("x/SKILL.md", NEW_AGENT_SKILL.as_bytes(), &[], 5),
        Err(Error::NotReady)
    ));
}

/// On the 2,621-skill corpus (when it is beside the repository): drafts made from real skills,
/// new and replacing, against a real rebuild for dev queries; and the time of a lint + rank of
/// a draft for 5 requests (the editor's per-keystroke work; budget 50 ms in a browser).
#[test]
fn on_the_combined_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/combined");
    let queries = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval/dev_queries.json");
    if !dir.is_dir() || !queries.is_file() {
        eprintln!("note: {} absent: corpus comparison skipped", dir.display());
        return;
    }
    let files = load(&dir);
    let queries: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&queries).unwrap()).unwrap();
    let requests: Vec<String> = queries
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|q| {
            ["short", "task"]
                .into_iter()
                .filter_map(|k| q.get(k).and_then(|v| v.as_str()).map(str::to_owned))
        })
        .take(12)
        .collect();
    assert!(!requests.is_empty(), "no requests in dev_queries.json");
    let refs: Vec<&str> = requests.iter().map(String::as_str).collect();
    // A new skill, and a real one edited in place.
    same_as_rebuild(
        &files,
        "zz-draft/csv-cleaner/SKILL.md",
        NEW_AGENT_SKILL,
        &refs,
    );
    let (path, bytes) = files
        .iter()
        .filter(|(p, _)| p.ends_with("SKILL.md"))
        .nth(100)
        .unwrap()
        .clone();
    let edited = String::from_utf8_lossy(&bytes).replacen("description:", "description: CSV", 1);
    same_as_rebuild(&files, &path, &edited, &refs);

    // Timing: what an editor does per keystroke.
    let index = build(&files);
    let five: Vec<String> = requests.iter().take(5).cloned().collect();
    let runs = 20;
    let start = std::time::Instant::now();
    for _ in 0..runs {
        let c = check_skill(
            &EngineConfig::default(),
            &path,
            edited.as_bytes(),
            Vec::new(),
        )
        .unwrap();
        assert!(c.skill.is_some());
        let r = index
            .score_draft(&path, edited.as_bytes(), &five, 10)
            .unwrap();
        assert_eq!(r.requests.len(), 5);
    }
    let each = start.elapsed().as_secs_f64() * 1000.0 / runs as f64;
    let t = std::time::Instant::now();
    for _ in 0..runs {
        check_skill(
            &EngineConfig::default(),
            &path,
            edited.as_bytes(),
            Vec::new(),
        )
        .unwrap();
    }
    let check = t.elapsed().as_secs_f64() * 1000.0 / runs as f64;
    eprintln!("  of which check-skill: {check:.2} ms");
    eprintln!(
        "draft lint + rank for 5 requests on {} skills: {each:.2} ms (native)",
        index.len()
    );
}
