//! Real and crafted skill files, read natively through `std::fs` and indexed end to end.
//!
//! - `tests/fixtures/synthetic` and `tests/fixtures/real` (in the repository): every trap
//!   gives a usable skill or a clear, located finding.
//! - `../shared/corpora/combined` (beside the repository) (2,621 real skills, outside the repository): all load,
//!   nothing panics. Skipped when the folder is absent.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use skills_engine::{EngineConfig, FileReport, Index, Severity, SkillShape};

#[path = "support/native.rs"]
mod native;
use native::{FsFiles, index, listing};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn report<'a>(reports: &'a [FileReport], path: &str) -> &'a FileReport {
    reports
        .iter()
        .find(|r| r.path == path)
        .unwrap_or_else(|| panic!("no report for {path}"))
}

#[test]
fn synthetic_traps() {
    let dir = fixtures().join("synthetic");
    if !dir.is_dir() {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    }
    let (idx, files) = index(&[("synthetic", dir)]);
    let paths: Vec<String> = idx.skills().into_iter().map(|s| s.skill_path).collect();
    assert_eq!(
        paths,
        vec![
            "blank-line-before-fence",
            "bom",
            "c1-control",
            "empty-body",
            "indented-fence-in-block-scalar",
            "lowercase-filename",
            "mixed-line-endings",
            "null-values",
        ]
    );
    let get = |p: &str| idx.get(p).unwrap();
    assert_eq!(
        get("mixed-line-endings").description,
        "Frontmatter lines alternate between CRLF and LF endings, and the closing fence uses CRLF."
    );
    assert!(
        get("indented-fence-in-block-scalar")
            .description
            .contains("\n---\n")
    );
    assert_eq!(get("bom").name, "bom");
    assert!(get("c1-control").description.contains('\u{FFFD}'));
    let json: serde_json::Value =
        serde_json::from_str(&get("null-values").frontmatter_json).unwrap();
    assert_eq!(json["license"], serde_json::Value::Null);
    assert_eq!(json["compatibility"], serde_json::Value::Null);
    assert_eq!(json["metadata"]["author"], serde_json::Value::Null);
    assert_eq!(
        idx.resolve(&files, "empty-body").unwrap().content,
        "=== EMPTY-BODY (from empty-body/SKILL.md) ===\n\n"
    );

    let reports = idx.reports();
    let r = report(&reports, "no-frontmatter/SKILL.md");
    assert_eq!(
        (r.worst, r.diagnostics[0].line),
        (Some(Severity::Error), Some(1))
    );
    let r = report(&reports, "unquoted-colon/SKILL.md");
    assert_eq!(
        (r.worst, r.diagnostics[0].line),
        (Some(Severity::Error), Some(3))
    );
    assert!(r.diagnostics[0].message.contains("invalid YAML"));
    let r = report(&reports, "five-bytes/SKILL.md");
    assert_eq!(r.worst, Some(Severity::Error));
    assert!(r.diagnostics[0].message.contains("never closed"));
    let r = report(&reports, "c1-control/SKILL.md");
    assert_eq!(
        (r.worst, r.diagnostics[0].line),
        (Some(Severity::Warning), Some(3))
    );
    let r = report(&reports, "blank-line-before-fence/SKILL.md");
    assert_eq!(r.worst, Some(Severity::Warning));
    let r = report(&reports, "lowercase-filename/skill.md");
    assert_eq!(r.worst, Some(Severity::Warning));
    for ok in [
        "bom/SKILL.md",
        "mixed-line-endings/SKILL.md",
        "null-values/SKILL.md",
    ] {
        assert_eq!(report(&reports, ok).worst, None, "{ok}");
    }
    // Every file is either a skill or has a finding: never a silent drop.
    for r in &reports {
        assert!(r.skill_path.is_some() || r.worst.is_some(), "{r:?}");
    }
}

#[test]
fn real_fixtures() {
    let base = fixtures().join("real");
    if !base.is_dir() {
        eprintln!("skipped: {} is absent", base.display());
        return;
    }
    let mut roots: Vec<(String, PathBuf)> = fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    roots.sort();
    let roots: Vec<(&str, PathBuf)> = roots.iter().map(|(n, p)| (n.as_str(), p.clone())).collect();
    let (idx, files) = index(&roots);
    // 16 SKILL.md files; the sample skill without frontmatter is not a skill.
    assert_eq!(idx.len(), 15);
    let get = |p: &str| idx.get(p).unwrap();
    let nested = get("skills/qdrant-scaling/scaling-query-volume");
    assert_eq!(nested.name, "qdrant-scaling-query-volume");
    assert_eq!(nested.shape, SkillShape::AgentSkill);
    let outer = idx.manifest("skills/qdrant-scaling").unwrap();
    assert!(
        outer
            .iter()
            .all(|f| !f.path.contains("scaling-query-volume"))
    );
    let curated = get("skills/.curated/gh-address-comments");
    assert_eq!(curated.script_count, 1);
    let clean = get("skills/clean-code");
    assert_eq!(clean.priority, 0);
    assert!(clean.frontmatter_json.contains("\"version\":2.0"));
    let geo = idx
        .resolve(&files, "scientific-skills/geomaster")
        .expect("CRLF skill resolves");
    assert!(!geo.content.contains('\r'));
    let devil = get("cli-tool/components/skills/productivity/devil");
    assert!(devil.description.chars().count() > 1024);

    let reports = idx.reports();
    let find = |suffix: &str| {
        reports
            .iter()
            .find(|r| r.path.ends_with(suffix))
            .unwrap_or_else(|| panic!("{suffix}"))
    };
    assert!(
        find("clean-code/SKILL.md")
            .diagnostics
            .iter()
            .any(|d| d.message.contains("`priority`") && d.line == Some(6))
    );
    assert!(
        find("devil/SKILL.md")
            .diagnostics
            .iter()
            .any(|d| d.message.contains("1177 characters"))
    );
    assert!(
        find("infinite-gratitude/SKILL.md")
            .diagnostics
            .iter()
            .any(|d| d.message.contains("differs from its folder name"))
    );
    assert_eq!(
        find("sample-skill/SKILL.md").worst,
        Some(Severity::Error),
        "no frontmatter"
    );
    // Skill resources are not examined as skills.
    assert!(
        !reports
            .iter()
            .any(|r| r.path.ends_with("programming-languages.md"))
    );
}

/// The full corpus: every skill loads, nothing panics. 2,621 `SKILL.md` files: 2,620 skills,
/// and one file without frontmatter (`skill-tester/assets/sample-skill`, a sample asset
/// upstream) reported as a located error.
#[test]
#[ignore = "reads the 2,621-skill corpus outside the repository and compares its snapshot restore question by question (about 4 min in release); run with --ignored"]
fn combined_corpus_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/combined");
    if !dir.is_dir() {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    }
    let start = Instant::now();
    let (idx, files) = index(&[("combined", dir)]);
    let built = start.elapsed();
    let reports = idx.reports();
    let count = |s: Severity| reports.iter().filter(|r| r.worst == Some(s)).count();
    eprintln!(
        "{} skills from {} examined files in {built:?}: {} with errors, {} with warnings, {} with info",
        idx.len(),
        reports.len(),
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
    );
    // Findings by kind (message with quoted parts and numbers blanked), most frequent first.
    let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
    for d in reports.iter().flat_map(|r| &r.diagnostics) {
        let mut kind = String::new();
        let mut quoted = false;
        for c in d.message.chars() {
            if c == '`' {
                quoted = !quoted;
                kind.push_str(if quoted { "`…" } else { "`" });
            } else if !quoted {
                kind.push(if c.is_ascii_digit() { '#' } else { c });
            }
        }
        *kinds.entry(kind).or_default() += 1;
    }
    let mut kinds: Vec<(usize, String)> = kinds.into_iter().map(|(k, n)| (n, k)).collect();
    kinds.sort_by(|a, b| b.cmp(a));
    for (n, k) in &kinds {
        eprintln!("{n:>6}  {k}");
    }
    for r in reports.iter().filter(|r| r.worst == Some(Severity::Error)) {
        eprintln!("{}: {:?}", r.path, r.diagnostics);
    }
    assert_eq!(idx.len(), 2620);
    let skill_files = reports
        .iter()
        .filter(|r| r.path.ends_with("/SKILL.md"))
        .count();
    assert_eq!(skill_files, 2621);
    assert_eq!(count(Severity::Error), 1);
    assert!(
        report(&reports, "alirezarezvani__claude-skills/engineering/skills/skill-tester/assets/sample-skill/SKILL.md")
            .diagnostics[0]
            .message
            .starts_with("no frontmatter")
    );
    // Every skill resolves and has a manifest.
    for s in idx.skills() {
        idx.resolve(&files, &s.skill_path).expect("resolves");
        let m = idx.manifest(&s.skill_path).unwrap();
        assert_eq!(m[0].relative, "SKILL.md");
    }
    let tree = idx.tree(None).unwrap();
    assert_eq!(tree.iter().filter(|n| n.skill.is_some()).count(), 2620);
    // Its snapshot restores the very same index.
    assert!(observe(&idx, &files, QUERIES) == observe(&restored(&idx), &files, QUERIES));
    assert!(
        !idx.search("extract tables from a pdf", 5)
            .unwrap()
            .is_empty()
    );
    // Off-topic requests answer no_match with the default configuration, even where a word of
    // theirs names a skill ("weather": ambient-weather-automation).
    for request in [
        "what is the weather in Paris",
        "tell me a joke",
        "what time is it in Tokyo",
        "recipe for chocolate cake",
        "how tall is mount everest",
    ] {
        let outcome = idx.route(request).unwrap();
        assert!(
            matches!(outcome, skills_engine::RouteOutcome::NoMatch),
            "{request}: {outcome:?}"
        );
    }
}

/// Everything a host can ask of `idx`, as text: listings, reports, every skill's details,
/// resolved content, manifest and assets, and searches, explanations and routes for `queries`
/// and for each skill's own name and description.
fn observe(idx: &Index, files: &FsFiles, queries: &[&str]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut put = |what: &str, v: &dyn std::fmt::Debug| writeln!(out, "{what}: {v:?}").unwrap();
    put("len", &idx.len());
    put("skills", &idx.skills());
    put("reports", &idx.reports());
    put("diagnostics", &idx.diagnostics());
    put("tree", &idx.tree(None));
    put("extension", &idx.extension_skills());
    let mut asked: Vec<String> = queries.iter().map(|q| q.to_string()).collect();
    for s in idx.skills() {
        let p = &s.skill_path;
        put("get", &idx.get(p));
        put("get by name", &idx.get(&s.name));
        put("suggest", &idx.suggest(&p[..p.len() / 2], 3));
        put("resolve", &idx.resolve(files, p));
        put("skill_md", &idx.extension_skill_md(files, p));
        put("tree below", &idx.tree(Some(p)));
        let manifest = idx.manifest(p);
        put("manifest", &manifest);
        for f in manifest.iter().flatten() {
            put("asset", &idx.locate_asset(p, &f.relative));
        }
        asked.push(s.name.clone());
        asked.push(s.description.chars().take(80).collect());
    }
    for q in &asked {
        let hits = idx.search(q, 10);
        put("search", &hits);
        put("route", &idx.route(q));
        if let Some(best) = hits.ok().and_then(|h| h.into_iter().next()) {
            put("explain", &idx.explain(q, &best.skill_path));
        }
    }
    out
}

/// `idx` written as snapshot sections and read back into a new index.
fn restored(idx: &Index) -> Index {
    let count = idx.snapshot_sections().expect("finished");
    let mut copy = Index::new(idx.config().clone());
    for n in 0..count {
        let bytes = idx.snapshot_section(n).expect("section");
        copy.restore_section(n, count, &bytes).expect("restores");
    }
    copy
}

const QUERIES: &[&str] = &[
    "extract tables from a pdf",
    "review my pull request",
    "deploy to kubernetes",
    "write unit tests",
    "what is the weather in Paris",
    "pdf",
    "postgres migrations",
];

/// Three roots with shadowing, both skill shapes, inheritance, assets and every trap of the
/// fixtures: the restored index answers every question exactly as the one that was built.
#[test]
fn snapshot_restores_the_same_index() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let roots = [
        ("real", fixtures().join("real")),
        ("synthetic", fixtures().join("synthetic")),
        ("bundled", repo.join("skills")),
    ];
    let (idx, files) = index(&roots);
    assert!(idx.len() > 20, "{} skills", idx.len());
    let copy = restored(&idx);
    let before = observe(&idx, &files, QUERIES);
    assert!(
        before == observe(&copy, &files, QUERIES),
        "the restored index differs"
    );
    // A snapshot of the copy gives the same index again.
    assert!(before == observe(&restored(&copy), &files, QUERIES));
    // A restored index is finished like a built one: both refuse more roots, and stay as
    // they were (issue 14).
    let extra = repo.join("tests/fixtures/synthetic");
    for i in [&idx, &copy] {
        let mut i = restored(i);
        let err = i
            .add_root("again", listing(&extra))
            .unwrap_err()
            .to_string();
        assert!(err.contains("finished"), "{err}");
        assert!(before == observe(&i, &files, QUERIES));
    }
}

/// A damaged, truncated, foreign or out-of-order snapshot is a located error that leaves the
/// index new, and a good snapshot still restores into it afterwards.
#[test]
fn snapshot_damage_is_a_located_error() {
    let (idx, files) = index(&[("synthetic", fixtures().join("synthetic"))]);
    let count = idx.snapshot_sections().unwrap();
    let sections: Vec<Vec<u8>> = (0..count)
        .map(|n| idx.snapshot_section(n).unwrap())
        .collect();
    let fresh = || Index::new(EngineConfig::default());
    let err = |r: Result<(), skills_engine::Error>| r.unwrap_err().to_string();

    // Unfinished: nothing to snapshot.
    assert_eq!(
        fresh().snapshot_sections(),
        Err(skills_engine::Error::NotReady)
    );
    // Not a header.
    let mut i = fresh();
    let e = err(i.restore_section(0, count, b"garbage"));
    assert!(e.contains("section 0 of"), "{e}");
    // A section before the header, or out of order.
    let mut i = fresh();
    assert!(err(i.restore_section(1, count, &sections[1])).contains("must come first"));
    i.restore_section(0, count, &sections[0]).unwrap();
    let e = err(i.restore_section(2, count, &sections[2]));
    assert!(e.contains("expected section 1"), "{e}");
    // The wrong number of sections.
    assert!(err(fresh().restore_section(0, count + 1, &sections[0])).contains("sections given"));
    // Every section cut short, and every section with a byte changed somewhere inside, fails
    // somewhere (or, for a changed byte that still decodes, gives a consistent index).
    for k in 0..count as usize {
        let mut i = fresh();
        let mut failed = None;
        for (n, s) in sections.iter().enumerate() {
            let bytes = if n == k { &s[..s.len() - 1] } else { &s[..] };
            if let Err(e) = i.restore_section(n as u32, count, bytes) {
                failed = Some(e.to_string());
                break;
            }
        }
        let e = failed.unwrap_or_else(|| panic!("section {k} cut short was accepted"));
        assert!(e.contains(&format!("section {k} of {count}")), "{e}");
        assert!(i.is_empty() && i.reports().is_empty(), "left half restored");
    }
    // Into an index that has roots already.
    let (mut used, _) = index(&[("synthetic", fixtures().join("synthetic"))]);
    assert!(err(used.restore_section(0, count, &sections[0])).contains("new index only"));
    // After a failure, the same index restores a good snapshot.
    let mut i = fresh();
    assert!(i.restore_section(0, count, b"").is_err());
    for (n, s) in sections.iter().enumerate() {
        i.restore_section(n as u32, count, s).unwrap();
    }
    assert!(observe(&i, &files, QUERIES) == observe(&idx, &files, QUERIES));
}
