//! The component gives the recorded answers (`tests/fixtures/answers/`, checked natively by
//! `guest/tests/answers.rs`): the engine built for wasm32 and run by wasmtime ranks exactly as
//! the native library does, on the bundled skills and, when `../shared` is beside the
//! repository, on the combined corpus; on the generated 10,000 (and, with `--ignored`, 50,000).

use std::path::{Path, PathBuf};

use crate::common;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Search every recorded request of `fixture` on a catalog of `root` and compare: same skill
/// paths in the same order, same matched words, scores within 1e-9; and `search-brief` gives
/// the same hits, bit for bit, without the matched words.
fn same_answers(fixture: &str, root: &Path) {
    let path = repo().join("tests/fixtures/answers").join(fixture);
    let text = std::fs::read_to_string(&path).expect("the recorded answers");
    let recorded: serde_json::Value = serde_json::from_str(&text).expect("fixture JSON");
    let answers = recorded["answers"].as_array().expect("answers");
    assert!(!answers.is_empty());
    let catalog = common::catalog(&[root]);
    let mut differ = Vec::new();
    for a in answers {
        let request = a[0].as_str().unwrap();
        let hits = catalog.search(request, 10).expect("search");
        let want = a[1].as_array().unwrap();
        let same = hits.len() == want.len()
            && hits.iter().zip(want).all(|(h, w)| {
                h.skill_path == w[0].as_str().unwrap()
                    && (h.score - w[1].as_f64().unwrap()).abs() <= 1e-9
                    && h.matched == serde_json::from_value::<Vec<String>>(w[2].clone()).unwrap()
            });
        if !same {
            differ.push(format!("{request:?}: {hits:?}"));
        }
        // `search-brief` (search_skills, search --batch): the same hits to the bit, no words
        let brief = catalog.search_brief(request, 10).expect("search-brief");
        let same = brief.len() == hits.len()
            && brief.iter().zip(&hits).all(|(b, h)| {
                b.skill_path == h.skill_path
                    && b.score.to_bits() == h.score.to_bits()
                    && (&b.name, &b.description) == (&h.name, &h.description)
                    && b.matched.is_empty()
            });
        if !same {
            differ.push(format!("{request:?} (search-brief): {brief:?}"));
        }
    }
    assert!(
        differ.is_empty(),
        "{fixture}: {} of {} answers differ:\n{}",
        differ.len(),
        answers.len(),
        differ.join("\n")
    );
}

#[test]
fn the_component_gives_the_recorded_answers_on_the_bundled_skills() {
    same_answers("bundled.json", &common::bundled_skills());
}

#[test]
fn the_component_gives_the_recorded_answers_on_the_combined_corpus() {
    let root = repo().join("../shared/corpora/combined");
    if !root.is_dir() {
        eprintln!("skipped: {} is absent", root.display());
        return;
    }
    same_answers("combined.json", &root);
}

#[path = "../benches/support/gen_corpus.rs"]
#[allow(dead_code)]
mod gen_corpus;

/// The generated corpus of `skills` skills (seed 7, as the fixtures and benches), generated
/// once under `target/bench-corpus/`.
fn generated(skills: usize) -> PathBuf {
    gen_corpus::ensure_corpus(&repo().join("target/bench-corpus"), skills, 7)
        .expect("generating the corpus")
}

#[test]
fn the_component_gives_the_recorded_answers_on_10000_generated_skills() {
    same_answers("gen10k.json", &generated(10_000));
}

/// Past 32,768 skills the postings' document numbers are 32 bits wide. Slow (the component
/// indexes 50,000 skills): run with `--ignored`.
#[test]
#[ignore = "indexes 50,000 generated skills through the component; run with --ignored"]
fn the_component_gives_the_recorded_answers_on_50000_generated_skills() {
    same_answers("gen50k.json", &generated(50_000));
}
