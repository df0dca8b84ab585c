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

/// The listing entries of `files`, with their sizes.
fn entries(files: &[(String, Vec<u8>)]) -> Vec<Entry> {
    files
        .iter()
        .map(|(p, b)| Entry {
            path: p.clone(),
            kind: EntryKind::File,
            size: b.len() as u64,
        })
        .collect()
}

/// A finished index of `files` (one root).
fn build(files: &[(String, Vec<u8>)]) -> Index {
    build_listed(files, &[])
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
        let c = check_skill(
            &EngineConfig::default(),
            &report.path,
            bytes,
            entries(&files),
        )
        .unwrap();
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

/// A finished index of `files` (one root) whose listing also holds `listed` (path, size): files
/// that are counted but never read (a large data file of a skill).
fn build_listed(files: &[(String, Vec<u8>)], listed: &[(&str, u64)]) -> Index {
    let mut index = Index::default();
    let mut listing = entries(files);
    listing.extend(listed.iter().map(|(p, size)| Entry {
        path: (*p).to_owned(),
        kind: EntryKind::File,
        size: *size,
    }));
    let wanted: HashSet<String> = index
        .add_root("root", listing)
        .unwrap()
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
    index.add_files(0, batch).unwrap();
    index.finish().unwrap();
    index
}

fn agent(name: &str) -> Vec<u8> {
    format!("---\nname: {name}\ndescription: Automate {name} work\n---\n# {name}\n").into_bytes()
}

/// `(ext path, why left out)` that `check-skill` against the collection gives the draft, checked
/// equal to what a rebuilt index with the draft in it gives (`extension-skills`, the finding).
fn verdict(
    collection: &[(&str, &[u8])],
    listed: &[(&str, u64)],
    draft: (&str, &[u8]),
) -> (Option<String>, Option<String>) {
    let files: Vec<(String, Vec<u8>)> = collection
        .iter()
        .map(|(p, b)| ((*p).to_owned(), b.to_vec()))
        .collect();
    let index = build_listed(&files, listed);
    let (path, bytes) = draft;
    // The editor hands over the entries of the draft's folder.
    let folder = path.rsplit_once('/').map_or("", |(f, _)| f);
    let listing: Vec<Entry> = listed
        .iter()
        .filter(|(p, _)| p.starts_with(&format!("{folder}/")))
        .map(|(p, size)| Entry {
            path: (*p).to_owned(),
            kind: EntryKind::File,
            size: *size,
        })
        .collect();
    let c = index.check_skill(path, bytes, listing).unwrap();
    let skill_path = c
        .skill
        .as_ref()
        .expect("the draft is a skill")
        .skill_path
        .clone();
    // The rebuild: the collection with the draft in it (replacing the file of its path).
    let mut with: Vec<(String, Vec<u8>)> = files.into_iter().filter(|(p, _)| p != path).collect();
    with.push((path.to_owned(), bytes.to_vec()));
    let rebuilt = build_listed(&with, listed);
    let i = rebuilt.position(&skill_path).unwrap();
    let map = rebuilt.extension_map();
    let want = match map.ext_path(i) {
        Ok(ext) => (Some(ext.to_owned()), None),
        Err(why) => (None, Some(why.to_owned())),
    };
    assert_eq!((c.ext_path.clone(), c.left_out.clone()), want, "{path}");
    assert_eq!(
        c.served_name.as_deref(),
        want.0.as_deref().map(extension::name_of),
        "{path}"
    );
    // The finding says the same as the rebuilt index's.
    let found = |diagnostics: &[Diagnostic]| -> Vec<String> {
        diagnostics
            .iter()
            .filter(|d| d.message.contains("Skills extension"))
            .map(|d| d.message.clone())
            .collect()
    };
    let rebuilt_findings: Vec<Diagnostic> = rebuilt
        .diagnostics()
        .into_iter()
        .filter(|d| d.path == path)
        .collect();
    assert_eq!(found(&c.diagnostics), found(&rebuilt_findings), "{path}");
    want
}

#[test]
fn check_skill_against_a_collection_says_what_a_rebuild_lists() {
    let hub = agent("docker-hub-automation");
    let hub_ = agent("docker_hub-automation");
    let pdf = agent("pdf");
    let mib = 1024 * 1024;
    // A folder name that maps to a URI another skill holds: left out, the holder named.
    let collection: [(&str, &[u8]); 2] = [
        ("docker-hub-automation/SKILL.md", &hub),
        ("pdf/SKILL.md", &pdf),
    ];
    let v = verdict(&collection, &[], ("docker_hub-automation/SKILL.md", &hub_));
    assert_eq!(
        v,
        (
            None,
            Some(
                "`skill://docker-hub-automation/SKILL.md` is the skill `docker-hub-automation`"
                    .into()
            )
        )
    );
    // Alone, the engine-level check still lists it (it cannot know the collection).
    let alone = check_skill(
        &EngineConfig::default(),
        "docker_hub-automation/SKILL.md",
        &hub_,
        Vec::new(),
    )
    .unwrap();
    assert_eq!(alone.ext_path.as_deref(), Some("docker-hub-automation"));
    // The holder itself, edited: still listed (the draft replaces it).
    let v = verdict(
        &collection,
        &[],
        (
            "docker-hub-automation/SKILL.md",
            &agent("docker-hub-automation"),
        ),
    );
    assert_eq!(v, (Some("docker-hub-automation".into()), None));
    // Both in the collection: the holder's draft keeps the URI, the other's is left out, and a
    // third name mapping there is left out too.
    let both: [(&str, &[u8]); 2] = [
        ("docker-hub-automation/SKILL.md", &hub),
        ("docker_hub-automation/SKILL.md", &hub_),
    ];
    assert_eq!(
        verdict(&both, &[], ("docker-hub-automation/SKILL.md", &hub))
            .0
            .as_deref(),
        Some("docker-hub-automation")
    );
    assert!(
        verdict(&both, &[], ("docker_hub-automation/SKILL.md", &hub_))
            .1
            .is_some()
    );
    assert!(
        verdict(&both, &[], ("docker__hub-automation/SKILL.md", &hub_))
            .1
            .is_some()
    );
    // The holder over the 16 MiB limit: it is left out and takes no URI, so the other gets it.
    let data = [("docker-hub-automation/data.bin", 17 * mib)];
    let v = verdict(&both, &data, ("docker-hub-automation/SKILL.md", &hub));
    assert_eq!(v.0, None);
    assert!(
        v.1.as_deref().unwrap().starts_with(&format!(
            "its files total {} bytes, over the limit of 16777216 (16 MiB)",
            17 * mib + hub.len() as u64
        )),
        "{v:?}"
    );
    let v = verdict(&both, &data, ("docker_hub-automation/SKILL.md", &hub_));
    assert_eq!(v, (Some("docker-hub-automation".into()), None));
    // Over 512 files: left out with the count (its SKILL.md and 512 others).
    let many: Vec<(String, u64)> = (0..512).map(|n| (format!("pdf/refs/{n}.md"), 10)).collect();
    let many: Vec<(&str, u64)> = many.iter().map(|(p, s)| (p.as_str(), *s)).collect();
    let v = verdict(&collection, &many, ("pdf/SKILL.md", &pdf));
    assert_eq!(
        v,
        (None, Some("it has 513 files, over the limit of 512".into()))
    );
    // 511 others: listed.
    let v = verdict(&collection, &many[..511], ("pdf/SKILL.md", &pdf));
    assert_eq!(v, (Some("pdf".into()), None));
}

#[test]
fn check_skill_against_a_collection_is_not_ready_before_finish() {
    let index = Index::default();
    assert!(matches!(
        index.check_skill("pdf/SKILL.md", &agent("pdf"), Vec::new()),
        Err(Error::NotReady)
    ));
}
