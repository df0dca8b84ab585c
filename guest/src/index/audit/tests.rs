//! The audit on small collections built for it: a skill another one always outranks
//! (unreachable), the same skill in two roots (duplicate), an over-broad skill that ranks first
//! on requests meant for many others (hijacker), and the report's order and evidence.

use super::*;
use crate::index::tests::Mem;

fn skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n")
}

fn find<'a>(report: &'a [AuditSkill], path: &str) -> &'a AuditSkill {
    report
        .iter()
        .find(|s| s.skill_path == path)
        .unwrap_or_else(|| panic!("{path} audited"))
}

fn kinds(s: &AuditSkill) -> Vec<AuditFindingKind> {
    s.findings.iter().map(|f| f.kind).collect()
}

/// Skills about different things, none of which competes much with the others.
fn distinct() -> Vec<(String, String)> {
    [
        (
            "csv-cleaner",
            "Clean messy CSV spreadsheets, trim cells, fix delimiters.",
        ),
        (
            "git-bisect",
            "Find the commit that introduced a regression with git bisect.",
        ),
        (
            "docker-slim",
            "Shrink Docker images with multi-stage builds.",
        ),
        (
            "regex-tester",
            "Write and test regular expressions against samples.",
        ),
        (
            "sql-migrate",
            "Write reversible SQL schema migrations for PostgreSQL.",
        ),
        (
            "pdf-forms",
            "Fill in PDF forms and flatten them for printing.",
        ),
    ]
    .iter()
    .map(|(n, d)| (format!("{n}/SKILL.md"), skill(n, d)))
    .collect()
}

fn mem(files: &[(String, String)]) -> Mem {
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (&**p, &**c)).collect();
    Mem::default().root("skills", &files)
}

#[test]
fn derived_requests_come_from_the_skills_own_text() {
    let idx = mem(&[(
        "pdf-forms/SKILL.md".into(),
        "---\nname: pdf-forms\ndescription: Fill in PDF forms. Flatten them for printing, \
         e.g. tax forms; keep a copy. Ok.\nkeywords: [pdf, acroform]\n---\n# PDF forms\n\
         ## Fill a form\n## Overview\n```\n# not a heading\n```\n### Flatten for print\n\
         ## One\n## Two words\n## Three more words\n## Four more words\n"
            .into(),
    )])
    .index();
    let requests = idx.audit_requests("pdf-forms").unwrap();
    assert_eq!(
        requests,
        vec![
            "pdf forms",
            "Fill in PDF forms. Flatten them for printing, e.g. tax forms; keep a copy. Ok.",
            "Fill in PDF forms",
            "Flatten them for printing, e.g. tax forms",
            "keep a copy",
            "pdf acroform",
            // The first 4 headings of 2 words or more that are not already requests.
            "Fill a form",
            "Flatten for print",
            "Two words",
            "Three more words",
        ]
    );
    assert!(matches!(
        idx.audit_requests("nope"),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(Index::default().audit(&[]), Err(Error::NotReady)));
}

#[test]
fn distinct_skills_have_no_findings() {
    let report = mem(&distinct()).index().audit(&[]).unwrap();
    assert_eq!(report.len(), 6);
    for s in &report {
        assert!(s.findings.is_empty(), "{}: {:?}", s.skill_path, s.findings);
        assert!(s.derived);
        assert!(s.requests >= 2, "{}: {}", s.skill_path, s.requests);
        for c in &s.competitors {
            assert!((0.0..=1.0).contains(&c.strength));
        }
    }
}

#[test]
fn a_skill_always_outranked_is_unreachable_and_its_rival_competes_with_the_evidence() {
    let mut files = distinct();
    files.push((
        "convert/SKILL.md".into(),
        skill("convert", "Convert files."),
    ));
    files.push((
        "convert-files/SKILL.md".into(),
        "---\nname: convert-files\ndescription: Convert files, convert files between formats, \
         convert files in bulk.\nkeywords: [convert, convert files]\nwhen_to_use: convert files\n---\n"
            .into(),
    ));
    let report = mem(&files).index().audit(&[]).unwrap();
    let weak = find(&report, "convert");
    assert_eq!(kinds(weak), vec![AuditFindingKind::Unreachable]);
    assert!(
        weak.findings[0]
            .message
            .contains("first instead: convert-files"),
        "{}",
        weak.findings[0].message
    );
    let rival = &weak.competitors[0];
    assert_eq!(rival.skill_path, "convert-files");
    assert_eq!(rival.strength, 1.0);
    assert!(rival.shared.contains(&"convert".to_string()), "{rival:?}");
    // Worst first: the unreachable skill leads the report.
    assert_eq!(report[0].skill_path, "convert");
    assert!(find(&report, "convert-files").findings.is_empty());
}

#[test]
fn the_same_skill_in_two_roots_is_a_duplicate_naming_both_roots() {
    let description = "Fill in PDF forms and flatten them for printing or archiving.";
    let idx = Mem::default()
        .root(
            "team-a",
            &[("pdf-forms/SKILL.md", &skill("pdf-forms", description))],
        )
        .root(
            "team-b",
            &[
                ("forms-pdf/SKILL.md", &skill("forms-pdf", description)),
                (
                    "git-bisect/SKILL.md",
                    &skill("git-bisect", "Find a bad commit with git bisect."),
                ),
            ],
        )
        .index();
    let report = idx.audit(&[]).unwrap();
    for (path, other) in [("pdf-forms", "forms-pdf"), ("forms-pdf", "pdf-forms")] {
        let s = find(&report, path);
        assert_eq!(kinds(s), vec![AuditFindingKind::Duplicate], "{path}");
        let message = &s.findings[0].message;
        assert!(message.contains(other), "{message}");
        assert!(message.contains("roots `team-a` and `team-b`"), "{message}");
        assert_eq!(s.competitors[0].skill_path, other);
    }
    assert!(find(&report, "git-bisect").findings.is_empty());
}

/// Six narrow skills that end with the same generic sentence, and one whose name and
/// description are about exactly that: it takes that sentence from all six.
pub(super) fn hijacked() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = NARROW
        .iter()
        .map(|(n, d)| (format!("{n}/SKILL.md"), skill(n, d)))
        .collect();
    files.push((
        "data-files/SKILL.md".into(),
        "---\nname: data-files\ndescription: Works on data files.\nkeywords: [data, files, data files, works]\nwhen_to_use: works on data files\n---\n".into(),
    ));
    files
}

const NARROW: [(&str, &str); 6] = [
    ("csv-tidy", "Clean CSV exports. Works on data files."),
    ("json-pretty", "Format JSON payloads. Works on data files."),
    ("yaml-lint", "Lint YAML manifests. Works on data files."),
    ("xml-check", "Validate XML feeds. Works on data files."),
    ("toml-edit", "Edit TOML settings. Works on data files."),
    ("ini-parse", "Parse INI sections. Works on data files."),
];

#[test]
fn a_skill_taking_the_requests_of_many_others_is_a_hijacker() {
    let report = mem(&hijacked()).index().audit(&[]).unwrap();
    let broad = find(&report, "data-files");
    assert_eq!(kinds(broad), vec![AuditFindingKind::Hijacker]);
    let message = &broad.findings[0].message;
    assert!(
        message.starts_with("ranks first on requests meant for 6 other skills (csv-tidy, ini-parse, json-pretty and 3 more)"),
        "{message}"
    );
    for (n, _) in NARROW {
        let s = find(&report, n);
        assert!(s.findings.is_empty(), "{n}: {:?}", s.findings);
        let top = &s.competitors[0];
        assert_eq!(top.skill_path, "data-files", "{n}");
        assert_eq!(top.strength, 0.25, "{n}: 1 of its 4 requests");
        assert_eq!(top.shared, ["data", "files", "works"], "{n}");
        assert!(top.separating.is_empty(), "{n}: {top:?}");
        // Then the closest that win or tie none: two of the other narrow skills, which come
        // among the hits of the requests that end all six.
        assert_eq!(s.competitors.len(), 3, "{n}: {:?}", s.competitors);
        for c in &s.competitors[1..] {
            assert_eq!(c.strength, 0.0, "{n}: {c:?}");
            assert!(NARROW.iter().any(|(m, _)| *m == c.skill_path), "{n}: {c:?}");
            assert!(c.shared.contains(&"data".to_string()), "{n}: {c:?}");
        }
    }
    assert_eq!(report[0].skill_path, "data-files", "worst first");
}

#[test]
fn given_requests_replace_the_derived_ones_and_unknown_skills_are_ignored() {
    let idx = mem(&distinct()).index();
    let given = [
        SkillRequests {
            skill_path: "pdf-forms".into(),
            requests: vec![
                "fill the tax form pdf".into(),
                "clean up this csv export".into(),
                " ".into(),
            ],
        },
        SkillRequests {
            skill_path: "not-here".into(),
            requests: vec!["anything".into()],
        },
    ];
    let report = idx.audit(&given).unwrap();
    let s = find(&report, "pdf-forms");
    assert!(!s.derived);
    assert_eq!(s.requests, 2);
    // The csv request is won by csv-cleaner: half of the requests meant for pdf-forms.
    assert_eq!(s.competitors[0].skill_path, "csv-cleaner");
    assert_eq!(s.competitors[0].strength, 0.5);
    assert!(s.findings.is_empty());
    assert_eq!(report.len(), 6);
}

#[test]
fn one_skills_audit_is_its_entry_in_the_collections_without_the_hijacker_finding_or_reach() {
    let mut files = hijacked();
    files.extend(distinct());
    let idx = mem(&files).index();
    // One skill's requests say nothing of the others' rivals' reach: equally close rivals
    // that win or tie as many requests go by their summed score there, as in the
    // collection's audit without reach.
    let reachless = AuditParams {
        order: 3,
        ..AuditParams::default()
    };
    let report = idx.audit_with(&[], &reachless).unwrap();
    for s in &report {
        let mut expected = s.clone();
        expected
            .findings
            .retain(|f| f.kind != AuditFindingKind::Hijacker);
        assert_eq!(idx.audit_one(&s.skill_path, &[]).unwrap(), expected);
    }
    assert_eq!(
        kinds(find(&report, "data-files")),
        vec![AuditFindingKind::Hijacker]
    );
    // Given requests replace the derived ones, as in the collection's audit.
    let given = [
        "fill the tax form pdf".to_string(),
        "clean up this csv export".into(),
    ];
    let one = idx.audit_one("pdf-forms", &given).unwrap();
    let all = idx
        .audit_with(
            &[SkillRequests {
                skill_path: "pdf-forms".into(),
                requests: given.to_vec(),
            }],
            &reachless,
        )
        .unwrap();
    assert_eq!(&one, find(&all, "pdf-forms"));
    assert!(!one.derived);
    assert!(matches!(
        idx.audit_one("nope", &[]),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        Index::default().audit_one("x", &[]),
        Err(Error::NotReady)
    ));
}

/// The competitors kept are the closest (among the hits of the most requests); equally close
/// ones go by the requests they win or tie, then by their reach (among the hits of how many
/// skills' requests they are), the broader first, when the whole collection was searched
/// (shipped); measured as ideas: by reach alone, or without reach. The kept ones are listed
/// strongest first.
#[test]
fn equally_close_rivals_go_by_the_requests_they_win_then_their_reach() {
    let idx = mem(&distinct()).index();
    let tally = |doc: usize, near: u32, count: u32, reach: Option<u32>| Tally {
        reach,
        near,
        count,
        ..Tally::new(doc)
    };
    let kept = |tallies: Vec<Tally>, order: u8| -> Vec<usize> {
        let params = AuditParams {
            order,
            ..AuditParams::default()
        };
        idx.closest(tallies, &params)
            .iter()
            .map(|t| t.doc)
            .collect()
    };
    let tallies = || {
        vec![
            tally(0, 3, 0, Some(1)),
            tally(1, 2, 1, Some(2)),
            tally(2, 2, 0, Some(5)),
            tally(3, 2, 0, Some(9)),
            tally(4, 1, 2, Some(40)),
        ]
    };
    // 0 is the closest; of the equally close 1, 2, 3: 1 wins one, then 3 reaches further
    // than 2; listed strongest first (1 wins one).
    assert_eq!(AuditParams::default().order, 0);
    assert_eq!(kept(tallies(), 0), vec![1, 0, 3]);
    // By reach alone, the broadest two (1, which wins one, is dropped).
    assert_eq!(kept(tallies(), 2), vec![0, 3, 2]);
    // Without reach: by requests won or tied, then the summed score, then the path.
    assert_eq!(kept(tallies(), 3), vec![1, 0, 2]);
    let no_reach = || {
        tallies()
            .into_iter()
            .map(|mut t| {
                t.reach = None;
                t
            })
            .collect::<Vec<_>>()
    };
    // (as `audit_one` has it: one skill's requests say nothing of reach)
    assert_eq!(kept(no_reach(), 0), vec![1, 0, 2]);
    assert_eq!(kept(no_reach(), 2), vec![1, 0, 2]);
}

/// An audit split in parts (each searched on its own copy of the index in the host) merges to
/// the very answer of one audit, with given requests too; parts of another index or split,
/// missing or repeated ones are refused.
#[test]
fn an_audit_in_parts_merges_to_the_one_audit() {
    let mut files = hijacked();
    files.extend(distinct());
    let idx = mem(&files).index();
    let given = [SkillRequests {
        skill_path: "pdf-forms".into(),
        requests: vec!["clean up this csv export".into()],
    }];
    let whole = idx.audit(&given).unwrap();
    assert!(whole.iter().any(|s| !s.findings.is_empty()));
    for parts in [1u32, 2, 3, 7, 40] {
        let encoded: Vec<Vec<u8>> = (0..parts)
            .rev()
            .map(|p| idx.audit_part(&given, p, parts).unwrap())
            .collect();
        assert_eq!(idx.audit_merge(&given, &encoded).unwrap(), whole, "{parts}");
    }
    let invalid = |r: Result<Vec<AuditSkill>, Error>| matches!(r, Err(Error::InvalidArgument(_)));
    let two: Vec<Vec<u8>> = (0..2).map(|p| idx.audit_part(&[], p, 2).unwrap()).collect();
    assert!(invalid(idx.audit_merge(&[], &two[..1])));
    assert!(invalid(
        idx.audit_merge(&[], &[two[0].clone(), two[0].clone()])
    ));
    let other = mem(&distinct()).index();
    assert!(invalid(other.audit_merge(&[], &two)));
    let mut damaged = two.clone();
    damaged[1].pop();
    assert!(invalid(idx.audit_merge(&[], &damaged)));
    assert!(matches!(
        idx.audit_part(&[], 2, 2),
        Err(Error::InvalidArgument(_))
    ));
}

/// A merge split in shares (each merged on its own copy of the index in the host) gathers to
/// the very answer of one merge, whatever the order the shares come in; a share of another
/// index or split, a missing, repeated or damaged one, is refused.
#[test]
fn a_merge_in_shares_gathers_to_the_one_audit() {
    let mut files = hijacked();
    files.extend(distinct());
    let idx = mem(&files).index();
    let given = [SkillRequests {
        skill_path: "pdf-forms".into(),
        requests: vec!["clean up this csv export".into()],
    }];
    let whole = idx.audit(&given).unwrap();
    assert!(whole.iter().any(|s| !s.findings.is_empty()));
    assert!(whole.iter().any(|s| !s.competitors.is_empty()));
    let parts: Vec<Vec<u8>> = (0..3)
        .map(|p| idx.audit_part(&given, p, 3).unwrap())
        .collect();
    for shares in [1u32, 2, 3, 40] {
        let encoded: Vec<Vec<u8>> = (0..shares)
            .rev()
            .map(|k| idx.audit_merge_share(&given, &parts, k, shares).unwrap())
            .collect();
        assert_eq!(idx.audit_gather(&encoded).unwrap(), whole, "{shares}");
    }
    let invalid = |r: Result<Vec<AuditSkill>, Error>| matches!(r, Err(Error::InvalidArgument(_)));
    let two: Vec<Vec<u8>> = (0..2)
        .map(|k| idx.audit_merge_share(&given, &parts, k, 2).unwrap())
        .collect();
    assert!(invalid(idx.audit_gather(&two[..1])));
    assert!(invalid(idx.audit_gather(&[two[0].clone(), two[0].clone()])));
    assert!(invalid(mem(&distinct()).index().audit_gather(&two)));
    let mut damaged = two.clone();
    damaged[1].pop();
    assert!(invalid(idx.audit_gather(&damaged)));
    assert!(invalid(idx.audit_gather(&parts)));
    assert!(matches!(
        idx.audit_merge_share(&given, &parts, 2, 2),
        Err(Error::InvalidArgument(_))
    ));
}

/// A part carries only what the merge reads (a 50,000-skill audit's parts must fit one engine
/// instance): of each skill's tallies, those that may be among the closest once reach is known,
/// each with only the requests its evidence explains; the `duplicate` findings found before.
#[test]
fn a_part_holds_only_what_the_merge_reads() {
    // (skills made of the same few words: each comes among the hits of many others')
    const WORDS: [&str; 8] = [
        "clean", "merge", "files", "reports", "tables", "export", "check", "sync",
    ];
    let files: Vec<(String, String)> = (0..24)
        .map(|i| {
            let words: Vec<&str> = (0..4).map(|k| WORDS[(i * (k + 3) + k) % 8]).collect();
            let d = format!("{}. {} them.", words.join(" "), WORDS[i % 8]);
            (
                format!("tool-{i}/SKILL.md"),
                skill(&format!("tool-{i}"), &d),
            )
        })
        .collect();
    let idx = mem(&files).index();
    let params = AuditParams::default();
    let encoded = idx.audit_part(&[], 0, 1).unwrap();
    let part = part::Part::decode(&encoded, idx.audit_fingerprint()).unwrap();
    let (mut kept, mut all) = (0, 0);
    for (s, found) in &part.skills {
        let requests = derived_requests(&idx.docs[*s], &params);
        let whole = idx.search_requests(*s, &requests, &params);
        assert_eq!(found.duplicates, whole.duplicates);
        assert_eq!(found.wins, whole.wins);
        for t in &found.tallies {
            let w = whole
                .tallies
                .iter()
                .find(|w| w.doc == t.doc)
                .expect("tallied");
            assert_eq!((t.count, t.near), (w.count, w.near));
            assert!(t.requests.len() <= EVIDENCE_REQUESTS && t.won <= t.requests.len());
            assert_eq!(t.requests[..], w.requests[..t.requests.len()]);
        }
        kept += found.tallies.len();
        all += whole.tallies.len();
    }
    assert!(kept < all, "{kept} of {all} tallies kept");
}
