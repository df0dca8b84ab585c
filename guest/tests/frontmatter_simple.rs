//! The frontmatter fast path (`frontmatter::parse_simple`) against serde_yaml on real files:
//! for every Markdown file with a frontmatter, when the fast path accepts the YAML, it must
//! give exactly serde_yaml's value (mapping key order included).
//!
//! - the repository's `skills/` and `tests/fixtures/`: always;
//! - `../shared/corpora/combined` (beside the repository) (2,621 real skills, outside the repository): ignored by
//!   default, run with `--ignored`.

use std::fs;
use std::path::{Path, PathBuf};

use serde_yaml::Value;
use skills_engine::frontmatter::{self, Split};

#[path = "support/yaml_eq.rs"]
mod yaml_eq;
use yaml_eq::same;

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            markdown_files(&p, out);
        } else if ft.is_file() && p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

#[derive(Debug, Default)]
struct Counts {
    files: usize,
    with_frontmatter: usize,
    accepted: usize,
    skill_md: usize,
    skill_md_accepted: usize,
}

/// Check every Markdown file under `dir`; panics on the first difference.
fn check(dir: &Path) -> Counts {
    let mut files = Vec::new();
    markdown_files(dir, &mut files);
    files.sort();
    let mut c = Counts::default();
    for path in files {
        c.files += 1;
        let bytes = fs::read(&path).expect("readable file");
        let text = frontmatter::decode(&bytes, &mut Vec::new());
        let Split::Found(block) = frontmatter::split(&text) else {
            continue;
        };
        c.with_frontmatter += 1;
        let is_skill = path.file_name().is_some_and(|n| n == "SKILL.md");
        c.skill_md += usize::from(is_skill);
        let yaml = frontmatter::clean_yaml(&block, &mut Vec::new());
        let Some(fast) = frontmatter::parse_simple(&yaml) else {
            continue;
        };
        c.accepted += 1;
        c.skill_md_accepted += usize::from(is_skill);
        let slow = serde_yaml::from_str::<Value>(&yaml).unwrap_or_else(|e| {
            panic!(
                "{}: the fast path accepted YAML serde_yaml refuses: {e}",
                path.display()
            )
        });
        let fast = Value::Mapping(fast);
        assert!(
            same(&fast, &slow),
            "{}: fast path {fast:?}\nserde_yaml {slow:?}",
            path.display()
        );
        // And through `parse` (what the index uses), nothing differs either.
        let mapped = frontmatter::parse(&block, &mut Vec::new()).expect("parses");
        assert!(same(&Value::Mapping(mapped), &slow), "{}", path.display());
    }
    eprintln!("{}: {c:?}", dir.display());
    c
}

#[test]
fn fast_path_matches_serde_yaml_on_repository_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for dir in ["skills", "tests/fixtures"] {
        let c = check(&root.join(dir));
        assert!(c.with_frontmatter > 0 && c.accepted > 0, "{dir}: {c:?}");
    }
}

#[test]
#[ignore = "reads the 2,621-skill corpus outside the repository; run with --ignored"]
fn fast_path_matches_serde_yaml_on_the_corpus() {
    let dir = &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/combined");
    if !dir.is_dir() {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    }
    let c = check(dir);
    assert!(c.skill_md >= 2_600, "{c:?}");
    eprintln!(
        "accepted: {:.1}% of files with frontmatter, {:.1}% of SKILL.md",
        100.0 * c.accepted as f64 / c.with_frontmatter as f64,
        100.0 * c.skill_md_accepted as f64 / c.skill_md as f64
    );
}
