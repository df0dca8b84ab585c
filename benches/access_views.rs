//! Access views (issue 24) through the component (`skills_mcp::runtime`, one reused instance):
//! - `view_search/{corpus}`: the query list (the 240 `short` requests of the dev set on the
//!   combined corpus), `search(q, 10)` each, on the full index (`unrestricted`), on a held view
//!   of a caller under 20 rules (`view`), and taking the view for each request as the server
//!   does (`view_per_request`: `view(caller)` from the cache, search, drop the handle);
//! - `view_build/{corpus}`: the first request of a new view (the rules set again, which drops
//!   the cached views, then `view(caller)` timed): the index build over the visible files;
//! - `tenth_view_search/{corpus}`: the query list on a held view of a caller who sees about a
//!   tenth of the skills (a rule selecting every skill for another group, and one admitting
//!   the caller's group to the largest folders that together hold at most 10%), beside the
//!   unrestricted run of the same list.
//!
//! Goals: a search under a view costs at most 1.2x an unrestricted one at 2,600 skills with 20
//! rules (issue 24); under a view showing about 10% of the skills, no more than without one
//! (issue 27). The time `set-access` takes the first time (every skill file read and
//! analysed again) is printed once per corpus.
//!
//! `cargo bench -p skills-mcp --bench access_views`; `-- --test` runs each once.

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skills_mcp::runtime::{AccessRule, Caller, CallerIdentity, Guest, IndexHandle};
use support::component;

/// 20 rules over the largest folders of the corpus by their first two segments
/// (`repo/area/**`, or a skill `repo/skill` with what is below it), each for one of four
/// groups; the caller holds `g0`, `g1` and `g2`, so the skills of 5 of them are hidden.
fn rules(guest: &mut Guest, index: IndexHandle) -> Vec<AccessRule> {
    let mut by_prefix: BTreeMap<String, usize> = BTreeMap::new();
    for s in guest.skills(index).expect("skills") {
        let mut segs = s.skill_path.split('/');
        if let (Some(a), Some(b)) = (segs.next(), segs.next()) {
            *by_prefix.entry(format!("{a}/{b}")).or_default() += 1;
        }
    }
    let mut prefixes: Vec<(String, usize)> = by_prefix.into_iter().collect();
    prefixes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    prefixes
        .into_iter()
        .take(20)
        .enumerate()
        .map(|(i, (p, _))| AccessRule {
            skills: vec![format!("{p}/**")],
            roots: Vec::new(),
            groups: vec![format!("g{}", i % 4)],
            subjects: Vec::new(),
            scopes: Vec::new(),
        })
        .collect()
}

/// A rule selecting every skill for group `staff`, and one admitting group `team` to the
/// largest folders (by their first two segments) that together hold at most a tenth of the
/// skills: a caller of `team` alone sees those folders only.
fn tenth_rules(guest: &mut Guest, index: IndexHandle) -> Vec<AccessRule> {
    let skills = guest.skills(index).expect("skills");
    let mut by_prefix: BTreeMap<String, usize> = BTreeMap::new();
    for s in &skills {
        let mut segs = s.skill_path.split('/');
        if let (Some(a), Some(b)) = (segs.next(), segs.next()) {
            *by_prefix.entry(format!("{a}/{b}")).or_default() += 1;
        }
    }
    let mut prefixes: Vec<(String, usize)> = by_prefix.into_iter().collect();
    prefixes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let (mut globs, mut held) = (Vec::new(), 0);
    for (p, n) in prefixes {
        if held + n <= skills.len() / 10 {
            held += n;
            globs.push(format!("{p}/**"));
        }
    }
    let rule = |skills: Vec<String>, group: &str| AccessRule {
        skills,
        roots: Vec::new(),
        groups: vec![group.into()],
        subjects: Vec::new(),
        scopes: Vec::new(),
    };
    vec![rule(vec!["**".into()], "staff"), rule(globs, "team")]
}

/// `search(q, 10)` on `index` for each request of `qs`.
fn search_all(guest: &mut Guest, index: IndexHandle, qs: &[String]) {
    for q in qs {
        black_box(guest.search(index, q, 10).expect("search"));
    }
}

fn caller() -> Caller {
    Caller::Identity(CallerIdentity {
        subject: Some("bench".into()),
        groups: vec!["g0".into(), "g1".into(), "g2".into()],
        scopes: Vec::new(),
    })
}

fn views(c: &mut Criterion) {
    let rt = component::runtime();
    let corpora: Vec<support::Corpus> = support::combined()
        .into_iter()
        .chain([support::generated()])
        .collect();
    for corpus in corpora {
        let qs = support::queries(&corpus);
        let (mut guest, index) = component::component_index(&rt, &corpus);
        let rules = rules(&mut guest, index);
        assert_eq!(rules.len(), 20, "{}: fewer than 20 folders", corpus.name);
        let started = Instant::now();
        let findings = guest.set_access(index, &rules).expect("set-access");
        let first_set = started.elapsed();
        assert!(findings.is_empty(), "{findings:?}");
        let who = caller();
        let view = guest.view(index, &who).expect("view");
        let (all, seen) = (guest.len(index).unwrap(), guest.len(view).unwrap());
        eprintln!(
            "{}: {all} skills, {seen} visible to the caller under 20 rules; first set-access (every skill file read and analysed again): {first_set:.2?}",
            corpus.name
        );
        assert!(seen < all);

        let mut g = c.benchmark_group(format!("view_search/{}", corpus.name));
        g.throughput(Throughput::Elements(qs.len() as u64));
        g.sample_size(20);
        g.bench_function("unrestricted", |b| {
            b.iter(|| search_all(&mut guest, index, &qs))
        });
        g.bench_function("view", |b| b.iter(|| search_all(&mut guest, view, &qs)));
        g.bench_function("view_per_request", |b| {
            b.iter(|| {
                for q in &qs {
                    let v = guest.view(index, &who).expect("view");
                    black_box(guest.search(v, q, 10).expect("search"));
                    guest.drop_index(v).expect("drop");
                }
            })
        });
        g.finish();

        let mut g = c.benchmark_group(format!("view_build/{}", corpus.name));
        g.sample_size(10);
        g.bench_function("first_request", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    // New rules drop the cached views (the files are not read again).
                    guest.set_access(index, &rules).expect("set-access");
                    let t = Instant::now();
                    let v = guest.view(index, &who).expect("view");
                    total += t.elapsed();
                    guest.drop_index(v).expect("drop");
                }
                total
            })
        });
        g.finish();
        guest.drop_index(view).expect("drop");

        let rules = tenth_rules(&mut guest, index);
        assert!(
            guest
                .set_access(index, &rules)
                .expect("set-access")
                .is_empty()
        );
        let team = Caller::Identity(CallerIdentity {
            subject: Some("bench".into()),
            groups: vec!["team".into()],
            scopes: Vec::new(),
        });
        let view = guest.view(index, &team).expect("view");
        let seen = guest.len(view).unwrap();
        eprintln!(
            "{}: {seen} of {all} skills ({:.1}%) visible to a caller of the tenth view",
            corpus.name,
            seen as f64 * 100.0 / all as f64
        );
        assert!(seen > 0 && seen * 10 <= all);
        let mut g = c.benchmark_group(format!("tenth_view_search/{}", corpus.name));
        g.throughput(Throughput::Elements(qs.len() as u64));
        g.sample_size(20);
        g.bench_function("unrestricted", |b| {
            b.iter(|| search_all(&mut guest, index, &qs))
        });
        g.bench_function("view", |b| b.iter(|| search_all(&mut guest, view, &qs)));
        g.finish();
        guest.drop_index(view).expect("drop");
    }
}

criterion_group!(benches, views);
criterion_main!(benches);
