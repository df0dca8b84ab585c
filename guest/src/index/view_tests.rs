//! Views (issue 24): each caller sees exactly its skills, on every method, ranked as if the
//! hidden skills did not exist.

use super::tests::Mem;
use super::*;
use crate::access::{Caller, Rule};

fn v(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

fn hier(description: &str, keywords: &str, body: &str) -> String {
    format!("---\ndescription: {description}\nkeywords: [{keywords}]\n---\n\n# Heading\n\n{body}\n")
}

/// Two roots: `main` (open UI skills, the finance team's tree) and `hr-handbook` (an Agent
/// Skills root); a hidden marker word in each team's texts.
fn teams() -> Mem {
    let main: Vec<(String, String)> = vec![
        (
            "_root.md".into(),
            "---\ndescription: Global rules for everyone\nkeywords: [global]\n---\nGlobal rules\n"
                .into(),
        ),
        ("ui/_index.md".into(), hier("UI rules", "ui", "UI rules")),
        (
            "ui/forms.md".into(),
            hier(
                "Build accessible forms with validation",
                "forms, validation, accessible",
                "Forms and validation",
            ),
        ),
        (
            "ui/tables.md".into(),
            hier(
                "Render data tables with sorting",
                "tables, sorting, report",
                "Tables",
            ),
        ),
        (
            "finance/_index.md".into(),
            "---\ndescription: Finance zanzibar rules\nkeywords: [finance]\nassets: [{file: chart.csv}]\n---\nFINANCE-PARENT zanzibar content\n".into(),
        ),
        ("finance/_index/chart.csv".into(), "a,b".into()),
        (
            "finance/ledger.md".into(),
            hier(
                "Reconcile the zanzibar general ledger",
                "ledger, reconcile, accounting, report",
                "Ledger zanzibar",
            ),
        ),
        (
            "finance/tax/vat.md".into(),
            hier(
                "File zanzibar VAT returns",
                "vat, tax, returns",
                "VAT",
            ),
        ),
    ];
    let hr: Vec<(String, String)> = vec![
        (
            "leave/SKILL.md".into(),
            "---\nname: leave\ndescription: Request quokka parental leave and holidays\n---\nLeave quokka policy\n".into(),
        ),
        (
            "onboarding/SKILL.md".into(),
            "---\nname: onboarding\ndescription: Onboard a new quokka hire with forms\n---\nOnboarding forms quokka\n".into(),
        ),
    ];
    let main: Vec<(&str, &str)> = main.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let hr: Vec<(&str, &str)> = hr.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    Mem::default().root("main", &main).root("hr-handbook", &hr)
}

fn team_rules() -> Vec<Rule> {
    vec![
        Rule {
            skills: v(&["finance/**"]),
            groups: v(&["finance"]),
            ..Rule::default()
        },
        Rule {
            roots: v(&["hr-handbook"]),
            groups: v(&["hr"]),
            ..Rule::default()
        },
    ]
}

fn paths_of(idx: &Index) -> Vec<String> {
    idx.skills().into_iter().map(|s| s.skill_path).collect()
}

/// Every answer of every read method of `idx`, as text (for leak checks). An error's echo of
/// what was asked (`` `finance/ledger` ``) is masked: echoing the question leaks nothing.
fn everything(idx: &Index, files: &dyn Files) -> String {
    let mut out = String::new();
    let mut put = |asked: &[&str], x: &dyn std::fmt::Debug| {
        let mut text = format!("{x:?}\n");
        for a in asked {
            text = text.replace(&format!("`{a}`"), "`<asked>`");
        }
        out.push_str(&text);
    };
    put(&[], &idx.len());
    put(&[], &idx.skills());
    put(&[], &crate::views::summaries(idx, 0, 1000));
    for budget in [100_000, 2_000, 300, 80] {
        put(&[], &crate::tiers::index_catalogue(idx, budget));
    }
    put(&[], &idx.tree(None));
    put(&[], &idx.extension_skills());
    put(&[], &idx.reports());
    put(&[], &idx.diagnostics());
    let all = [
        "finance",
        "finance/_index",
        "finance/ledger",
        "finance/tax/vat",
        "ledger",
        "leave",
        "onboarding",
        "vat",
        "ui/forms",
        "ui/tables",
        "ui/_index",
        "_root",
        "legder",
        "leav",
        "finance/tax",
    ];
    for p in all {
        put(&[p], &idx.get(p));
        put(&[p], &idx.suggest(p, 10));
        put(&[p], &idx.tree(Some(p)));
        put(&[p], &idx.resolve(files, p));
        put(&[p, "chart.csv"], &idx.locate_asset(p, "chart.csv"));
        put(&[p], &idx.manifest(p));
        put(&[p], &idx.extension_skill_md(files, p));
        put(&[p], &idx.explain("report", p));
    }
    for q in [
        "reconcile the ledger",
        "zanzibar",
        "quokka",
        "report",
        "forms",
        "parental leave",
        "vat tax returns",
        "finance",
        "onboarding",
    ] {
        put(&[], &idx.search(q, 50));
        put(&[], &idx.route(q));
    }
    put(
        &[],
        &idx.score_draft(
            "ui/draft.md",
            hier("Draft report skill", "report, forms", "x").as_bytes(),
            &v(&["report", "forms"]),
            20,
        ),
    );
    out
}

fn identity<'a>(groups: &'a [String]) -> Caller<'a> {
    Caller::Identity {
        subject: None,
        groups,
        scopes: &[],
    }
}

#[test]
fn two_callers_each_see_exactly_their_skills_on_every_method() {
    let mem = teams();
    let idx = mem.index();
    let findings = idx.set_access(&mem, team_rules()).expect("rules set");
    assert!(findings.is_empty(), "{findings:?}");
    let (fin, hr) = (v(&["finance"]), v(&["hr"]));
    let finance = idx
        .view(identity(&fin))
        .unwrap()
        .expect("a restricted view");
    let people = idx.view(identity(&hr)).unwrap().expect("a restricted view");
    let anonymous = idx
        .view(Caller::ANONYMOUS)
        .unwrap()
        .expect("a restricted view");
    let open = ["_root", "ui/_index", "ui/forms", "ui/tables"];
    let fin_only = ["finance/_index", "finance/ledger", "finance/tax/vat"];
    let hr_only = ["leave", "onboarding"];
    let sorted = |xs: &[&[&str]]| {
        let mut all: Vec<String> = xs
            .iter()
            .flat_map(|x| x.iter().map(|s| s.to_string()))
            .collect();
        all.sort();
        all
    };
    assert_eq!(paths_of(&finance), sorted(&[&open, &fin_only]));
    assert_eq!(paths_of(&people), sorted(&[&open, &hr_only]));
    assert_eq!(paths_of(&anonymous), sorted(&[&open]));
    assert_eq!(finance.len(), 7);
    assert_eq!(people.len(), 6);
    // The full index still has everything; `unrestricted` and no rules share it.
    assert_eq!(idx.len(), 9);
    assert!(idx.view(Caller::Unrestricted).unwrap().is_none());

    // Nothing of what a view hides appears in any answer of any method.
    let f = everything(&finance, &mem);
    let h = everything(&people, &mem);
    let a = everything(&anonymous, &mem);
    for hidden in ["quokka", "leave", "onboarding", "hr-handbook"] {
        if let Some(at) = f.find(hidden) {
            panic!(
                "finance view leaks {hidden}: {}",
                &f[at.saturating_sub(300)..(at + 100).min(f.len())]
            );
        }
        assert!(!a.contains(hidden), "anonymous view leaks {hidden}");
    }
    for hidden in [
        "zanzibar",
        "finance",
        "ledger",
        "VAT",
        "FINANCE-PARENT",
        "chart.csv",
    ] {
        if let Some(at) = h.find(hidden) {
            panic!(
                "hr view leaks {hidden}: {}",
                &h[at.saturating_sub(300)..(at + 100).min(h.len())]
            );
        }
        assert!(!a.contains(hidden), "anonymous view leaks {hidden}");
    }
    // ...and what it shows is served.
    assert!(f.contains("FINANCE-PARENT") && f.contains("chart.csv") && f.contains("zanzibar"));
    assert!(h.contains("quokka") && h.contains("Leave quokka policy"));

    // Method by method, the permitted caller sees it and the other does not.
    assert_eq!(finance.get("ledger").unwrap().skill_path, "finance/ledger");
    assert!(
        matches!(people.get("finance/ledger"), Err(Error::NotFound(m)) if !m.contains("ledger") || m.contains("no skill `finance/ledger`"))
    );
    assert!(
        people
            .suggest("finance/ledgr", 10)
            .iter()
            .all(|s| !s.contains("finance"))
    );
    assert_eq!(people.get("leave").unwrap().skill_path, "leave");
    let hits = finance.search("reconcile the ledger", 10).unwrap();
    assert_eq!(hits[0].skill_path, "finance/ledger");
    assert!(people.search("zanzibar", 10).unwrap().is_empty());
    assert!(
        people
            .search("report", 10)
            .unwrap()
            .iter()
            .all(|h| h.skill_path == "ui/tables")
    );
    assert!(matches!(
        people.route("reconcile the zanzibar ledger").unwrap(),
        RouteOutcome::NoMatch
    ));
    assert!(matches!(
        finance.route("reconcile the zanzibar ledger").unwrap(),
        RouteOutcome::Matched(h) if h.skill_path == "finance/ledger"
    ));
    let located = finance.locate_asset("finance/ledger", "chart.csv").unwrap();
    assert_eq!(located.path, "finance/_index/chart.csv");
    assert!(people.locate_asset("finance/ledger", "chart.csv").is_err());
    assert!(finance.extension_skill_md(&mem, "leave").is_err());
    assert!(people.extension_skill_md(&mem, "leave").is_ok());
    assert!(finance.explain("vat", "finance/tax/vat").is_ok());
    assert!(people.explain("vat", "finance/tax/vat").is_err());
}

#[test]
fn a_hidden_parent_passes_nothing_down() {
    let mem = teams();
    let idx = mem.index();
    // Only the category node is hidden; its children stay visible to everyone.
    let rules = vec![Rule {
        skills: v(&["finance/_index"]),
        groups: v(&["finance"]),
        ..Rule::default()
    }];
    assert!(idx.set_access(&mem, rules).unwrap().is_empty());
    let full = idx.resolve(&mem, "finance/ledger").unwrap();
    assert!(full.content.contains("FINANCE-PARENT"));
    assert!(full.inherited_assets.iter().any(|a| a.file == "chart.csv"));
    let nobody = idx.view(Caller::ANONYMOUS).unwrap().unwrap();
    let ledger = nobody.resolve(&mem, "finance/ledger").unwrap();
    assert!(
        !ledger.content.contains("FINANCE-PARENT"),
        "{}",
        ledger.content
    );
    assert!(
        ledger.content.contains("Global rules"),
        "the next visible ancestor still passes down"
    );
    assert!(
        ledger
            .inherited_assets
            .iter()
            .all(|a| a.file != "chart.csv")
    );
    assert!(nobody.locate_asset("finance/ledger", "chart.csv").is_err());
    assert_eq!(
        nobody.get("finance/ledger").unwrap().parent.as_deref(),
        Some("_root")
    );
    let md = nobody.extension_skill_md(&mem, "finance/ledger").unwrap();
    assert!(!String::from_utf8_lossy(&md.bytes).contains("FINANCE-PARENT"));
    // The finance team sees the parent's content.
    let fin = v(&["finance"]);
    let finance = idx.view(identity(&fin)).unwrap();
    assert!(
        finance.is_none(),
        "every rule admits it: the full index answers"
    );
}

/// A generated collection over two roots, with words drawn so that document frequencies,
/// lengths and typos all depend on which skills are there.
fn generated() -> Mem {
    const WORDS: &[&str] = &[
        "deploy",
        "kubernetes",
        "cluster",
        "ledger",
        "invoice",
        "payroll",
        "react",
        "forms",
        "postgres",
        "database",
        "backup",
        "restore",
        "security",
        "audit",
        "incident",
        "runbook",
        "python",
        "package",
        "publish",
        "release",
        "terraform",
        "network",
        "latency",
        "cache",
        "budget",
        "forecast",
        "hiring",
        "onboarding",
        "design",
        "tokens",
        "testing",
        "coverage",
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let areas = ["finance", "ops", "eng", "hr", "secret"];
    let mut roots: Vec<Vec<(String, String)>> = vec![Vec::new(), Vec::new()];
    for (root, files) in roots.iter_mut().enumerate() {
        for i in 0..120 {
            let mut words = |k: usize| (0..k).map(|_| WORDS[next(WORDS.len())]).collect::<Vec<_>>();
            let (d, k, b) = (words(6).join(" "), words(3).join(", "), words(30).join(" "));
            // Root 1 shadows some skill paths of root 0 (every tenth: `ops/...`).
            let id = if root == 1 && i % 10 == 1 {
                i
            } else {
                i + 1000 * root
            };
            let path = format!("{}/s{id}.md", areas[id % areas.len()]);
            files.push((path, hier(&format!("Skill {d}"), &k, &b)));
        }
        files.push((
            "secret/_index.md".into(),
            hier("Secret area", "secret, audit", "secret body"),
        ));
    }
    let r0: Vec<(&str, &str)> = roots[0]
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let r1: Vec<(&str, &str)> = roots[1]
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    Mem::default().root("base", &r0).root("overlay", &r1)
}

#[test]
fn a_view_ranks_exactly_as_an_index_of_its_files() {
    // Rules: `finance/**` for group finance, the whole `overlay` root for group ops.
    let rules = vec![
        Rule {
            skills: v(&["finance/**"]),
            groups: v(&["finance"]),
            ..Rule::default()
        },
        Rule {
            roots: v(&["overlay"]),
            groups: v(&["ops"]),
            ..Rule::default()
        },
        Rule {
            skills: v(&["secret/**"]),
            subjects: v(&["root"]),
            ..Rule::default()
        },
    ];
    let mem = generated();
    let idx = mem.index();
    assert!(idx.set_access(&mem, rules).unwrap().is_empty());
    let queries = [
        "deploy kubernetes cluster",
        "ledger invoice",
        "payroll forecast budget",
        "postgres backup restore",
        "security audit incident runbook",
        "publish python package",
        "terraform network latency",
        "react forms design tokens",
        "testing coverage",
        "kubernetes",
        "kubernets",
        "postgre",
        "secret audit",
    ];
    // The finance group: everything of `base` but `secret`; `overlay` hidden (so the shadowed
    // skills of `base` come back).
    let fin = v(&["finance"]);
    let view = idx.view(identity(&fin)).unwrap().unwrap();
    // (`finance/**` admits it to the overlay's finance skills: any rule selecting a skill
    // may admit.)
    let alone = without(&idx, &mem, &|root, p| {
        (root == 1 && !p.starts_with("finance/")) || p.starts_with("secret/")
    });
    compare(&view, &alone, &queries);
    let overlay = idx.skills().iter().filter(|s| s.root == 1).count();
    assert!(
        overlay > 100,
        "the overlay root serves its skills in the full index"
    );
    assert!(
        view.skills()
            .iter()
            .all(|s| s.root == 0 || s.skill_path.starts_with("finance/"))
    );
    // Skills of `base` the overlay shadows come back in the view.
    let back = view
        .skills()
        .iter()
        .filter(|s| s.root == 0 && idx.get(&s.skill_path).unwrap().root == 1)
        .count();
    assert!(back > 0, "some shadowed base skills are served again");

    // The ops group: all of `overlay` (its rule admits it, even where `finance/**` or
    // `secret/**` select too); `finance` and `secret` of `base` hidden.
    let ops = v(&["ops"]);
    let view = idx.view(identity(&ops)).unwrap().unwrap();
    let alone = without(&idx, &mem, &|root, p| {
        root == 0 && (p.starts_with("finance/") || p.starts_with("secret/"))
    });
    compare(&view, &alone, &queries);
    assert!(paths_of(&view).len() < idx.len());
}

/// The index of the files of `idx`'s collection `mem` whose skill path `drop` leaves.
fn without(idx: &Index, mem: &Mem, drop: &dyn Fn(usize, &str) -> bool) -> Index {
    let mut out = Mem::default();
    for (root, r) in idx.roots.iter().enumerate() {
        let files: Vec<(String, Vec<u8>)> = idx
            .reports
            .iter()
            .filter(|((rt, _), rep)| {
                *rt as usize == root && rep.skill_path.as_deref().is_some_and(|p| !drop(root, p))
            })
            .map(|((rt, bytes::Key(p)), _)| (p.clone(), mem.read(*rt, p).unwrap()))
            .collect();
        let files: Vec<(&str, String)> = files
            .iter()
            .map(|(p, b)| (p.as_str(), String::from_utf8(b.clone()).unwrap()))
            .collect();
        let files: Vec<(&str, &str)> = files.iter().map(|(p, b)| (*p, b.as_str())).collect();
        out = out.root(&r.name, &files);
    }
    out.index()
}

/// Same skills, same search results and scores (to 1e-9), same routes.
fn compare(view: &Index, alone: &Index, queries: &[&str]) {
    assert_eq!(paths_of(view), paths_of(alone));
    assert_eq!(view.skills(), alone.skills());
    for q in queries {
        let a = view.search(q, 1000).unwrap();
        let b = alone.search(q, 1000).unwrap();
        assert!(!b.is_empty(), "{q}: the query should match something");
        assert_eq!(a.len(), b.len(), "{q}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.skill_path, y.skill_path, "{q}");
            assert!(
                (x.score - y.score).abs() < 1e-9,
                "{q}: {} vs {}",
                x.score,
                y.score
            );
            assert_eq!(x.matched, y.matched, "{q}");
        }
        assert_eq!(
            format!("{:?}", view.route(q)),
            format!("{:?}", alone.route(q)),
            "{q}"
        );
    }
}

#[test]
fn findings_are_keyed_and_errors_leave_the_rules_unchanged() {
    let mem = teams();
    let idx = mem.index();
    assert!(idx.set_access(&mem, team_rules()).unwrap().is_empty());
    let bad = vec![
        Rule {
            skills: v(&["finance/**", "nothing/**", "a//b"]),
            roots: v(&["no-such-root"]),
            groups: v(&["x"]),
            ..Rule::default()
        },
        Rule {
            roots: v(&["hr-handbook"]),
            ..Rule::default()
        },
    ];
    let found = idx.set_access(&mem, bad).unwrap();
    let keys: Vec<(&str, bool)> = found.iter().map(|f| (f.key.as_str(), f.error)).collect();
    assert_eq!(
        keys,
        vec![
            ("access.rules[0].skills[1]", false),
            ("access.rules[0].skills[2]", true),
            ("access.rules[0].roots[0]", true),
            ("access.rules[1]", false),
        ]
    );
    assert!(found[2].message.contains("known: main, hr-handbook"));
    // Refused: the earlier rules still decide.
    let hr = v(&["hr"]);
    let people = idx.view(identity(&hr)).unwrap().unwrap();
    assert_eq!(people.len(), 6);
    // Warnings only: applied.
    let warned = vec![Rule {
        skills: v(&["finance/**", "nothing/**"]),
        ..Rule::default()
    }];
    let found = idx.set_access(&mem, warned).unwrap();
    assert_eq!(found.len(), 2);
    assert!(found.iter().all(|f| !f.error));
    let people = idx.view(identity(&hr)).unwrap().unwrap();
    assert_eq!(
        people.len(),
        6,
        "finance hidden from everyone, hr-handbook open"
    );
    assert!(paths_of(&people).contains(&"leave".to_string()));
    // Views have no rules of their own, and no snapshot.
    assert!(matches!(
        people.set_access(&mem, team_rules()),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        people.view(Caller::ANONYMOUS),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        people.hidden(Caller::ANONYMOUS),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        people.snapshot_sections(),
        Err(Error::InvalidArgument(_))
    ));
    // Before `finish`: not ready.
    assert!(matches!(
        Index::default().set_access(&mem, team_rules()),
        Err(Error::NotReady)
    ));
}

#[test]
fn hidden_lists_each_hidden_skill_with_its_rules() {
    let mem = teams();
    let idx = mem.index();
    let mut rules = team_rules();
    rules.push(Rule {
        skills: v(&["finance/tax/**"]),
        subjects: v(&["tax-auditor"]),
        ..Rule::default()
    });
    assert!(idx.set_access(&mem, rules).unwrap().is_empty());
    let hr = v(&["hr"]);
    let hidden = idx.hidden(identity(&hr)).unwrap();
    let got: Vec<(&str, &[u32])> = hidden
        .iter()
        .map(|h| (h.path.as_str(), h.rules.as_slice()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("finance/_index", &[0u32][..]),
            ("finance/ledger", &[0][..]),
            ("finance/tax/vat", &[0, 2][..]),
        ]
    );
    let auditor = Caller::Identity {
        subject: Some("tax-auditor"),
        groups: &[],
        scopes: &[],
    };
    let hidden: Vec<String> = idx
        .hidden(auditor)
        .unwrap()
        .into_iter()
        .map(|h| h.path)
        .collect();
    assert_eq!(
        hidden,
        v(&["finance/_index", "finance/ledger", "leave", "onboarding"])
    );
    assert!(idx.hidden(Caller::Unrestricted).unwrap().is_empty());
}

#[test]
fn callers_admitted_by_the_same_rules_share_one_view() {
    let mem = teams();
    let idx = mem.index();
    idx.set_access(&mem, team_rules()).unwrap();
    let fin = v(&["finance"]);
    let fin_and_other = v(&["finance", "sales"]);
    let a = idx
        .view(Caller::Identity {
            subject: Some("bob"),
            groups: &fin,
            scopes: &[],
        })
        .unwrap()
        .unwrap();
    let b = idx
        .view(Caller::Identity {
            subject: Some("carol"),
            groups: &fin_and_other,
            scopes: &v(&["skills:read"]),
        })
        .unwrap()
        .unwrap();
    assert!(Arc::ptr_eq(&a, &b), "same admitted rules, one view");
    assert_eq!(idx.views_built(), 1);
    let anon = idx.view(Caller::ANONYMOUS).unwrap().unwrap();
    assert!(!Arc::ptr_eq(&a, &anon));
    assert_eq!(idx.views_built(), 2);
    let again = idx.view(Caller::ANONYMOUS).unwrap().unwrap();
    assert!(Arc::ptr_eq(&anon, &again));
    assert_eq!(idx.views_built(), 2);
    // New rules drop the cached views.
    idx.set_access(&mem, team_rules()).unwrap();
    assert_eq!(idx.views_built(), 0);
    let fresh = idx.view(Caller::ANONYMOUS).unwrap().unwrap();
    assert!(!Arc::ptr_eq(&anon, &fresh));
    assert_eq!(paths_of(&fresh), paths_of(&anon));
}

#[test]
fn the_cache_is_bounded_in_views() {
    let mem = teams();
    let idx = mem.index();
    // 70 rules, each for its own group (70 distinct admitted sets), and one hiding every skill
    // from everyone: 70 empty views.
    let mut rules: Vec<Rule> = (0..70)
        .map(|i| Rule {
            skills: v(&["nothing/**"]),
            groups: v(&[&format!("g{i}")]),
            ..Rule::default()
        })
        .collect();
    rules.push(Rule {
        skills: v(&["**"]),
        ..Rule::default()
    });
    idx.set_access(&mem, rules).unwrap();
    let first = v(&["g0"]);
    let kept = idx.view(identity(&first)).unwrap().unwrap();
    for i in 1..70 {
        let g = v(&[&format!("g{i}")]);
        assert_eq!(idx.view(identity(&g)).unwrap().unwrap().len(), 0);
        // g0 stays the most recently used one
        assert!(Arc::ptr_eq(
            &kept,
            &idx.view(identity(&first)).unwrap().unwrap()
        ));
    }
    let cache = idx.access.as_ref().unwrap().lock().unwrap().cache.len();
    assert_eq!(cache, VIEW_CACHE);
    assert_eq!(idx.views_built(), 70);
}

#[test]
fn the_cache_is_bounded_in_skills() {
    let mem = teams();
    let idx = mem.index();
    // 10 rules on the same skills, each for its own group: 10 distinct admitted sets, each view
    // with every skill (any rule selecting a skill may admit).
    let rules: Vec<Rule> = (0..10)
        .map(|i| Rule {
            skills: v(&["finance/**"]),
            groups: v(&[&format!("g{i}")]),
            ..Rule::default()
        })
        .collect();
    idx.set_access(&mem, rules).unwrap();
    let first = v(&["g0"]);
    let kept = idx.view(identity(&first)).unwrap().unwrap();
    for i in 1..10 {
        let g = v(&[&format!("g{i}")]);
        assert_eq!(idx.view(identity(&g)).unwrap().unwrap().len(), idx.len());
        assert!(Arc::ptr_eq(
            &kept,
            &idx.view(identity(&first)).unwrap().unwrap()
        ));
    }
    let cache = idx.access.as_ref().unwrap().lock().unwrap().cache.len();
    assert_eq!(cache, VIEW_CACHE_SKILLS_FACTOR);
    assert_eq!(idx.views_built(), 10);
}

#[test]
fn a_restored_index_makes_the_same_views() {
    let mem = teams();
    let idx = mem.index();
    let mut restored = Index::default();
    let n = idx.snapshot_sections().unwrap();
    for i in 0..n {
        restored
            .restore_section(i, n, &idx.snapshot_section(i).unwrap())
            .unwrap();
    }
    idx.set_access(&mem, team_rules()).unwrap();
    restored.set_access(&mem, team_rules()).unwrap();
    for groups in [v(&["finance"]), v(&["hr"]), v(&[])] {
        let a = idx.view(identity(&groups)).unwrap().unwrap();
        let b = restored.view(identity(&groups)).unwrap().unwrap();
        assert_eq!(everything(&a, &mem), everything(&b, &mem));
    }
}

#[test]
fn a_skill_file_that_cannot_be_read_again_is_left_out_with_a_warning() {
    let mem = teams();
    let idx = mem.index();
    // A `files` without the hr root.
    struct Partial<'a>(&'a Mem);
    impl Files for Partial<'_> {
        fn read(&self, root: u32, path: &str) -> Result<Vec<u8>, String> {
            if root == 1 {
                Err("gone".into())
            } else {
                self.0.read(root, path)
            }
        }
    }
    let found = idx.set_access(&Partial(&mem), team_rules()).unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found
            .iter()
            .all(|f| f.key == "access" && !f.error && f.message.contains("gone"))
    );
    let hr = v(&["hr"]);
    assert_eq!(
        paths_of(&idx.view(identity(&hr)).unwrap().unwrap()).len(),
        4
    );
}

/// Leak paths one by one: a suggestion, the catalogue's counts, the tree's nodes, an ambiguous
/// route that would involve a hidden skill, a shadowed skill coming back.
#[test]
fn leak_paths() {
    let mem = teams();
    let idx = mem.index();
    idx.set_access(&mem, team_rules()).unwrap();
    let nobody = idx.view(Caller::ANONYMOUS).unwrap().unwrap();
    // Suggestions for a hidden name and a near miss of it.
    assert!(
        nobody.suggest("ledger", 10).is_empty()
            || nobody
                .suggest("ledger", 10)
                .iter()
                .all(|s| !s.contains("ledger"))
    );
    match nobody.get("finance/ledger") {
        Err(Error::NotFound(m)) => assert!(!m.contains("did you mean: finance"), "{m}"),
        other => panic!("{other:?}"),
    }
    // The catalogue's category tier counts the visible skills only.
    let (text, _) = crate::tiers::index_catalogue(&nobody, 60).unwrap();
    assert!(!text.contains("finance"), "{text}");
    let (full_text, _) = crate::tiers::index_catalogue(&idx, 100_000).unwrap();
    let (view_text, _) = crate::tiers::index_catalogue(&nobody, 100_000).unwrap();
    assert!(full_text.contains("finance/ledger") && !view_text.contains("finance"));
    // The tree: no node for a hidden folder, children counted among the visible.
    let tree = nobody.tree(None).unwrap();
    assert!(
        tree.iter()
            .all(|n| !n.path.starts_with("finance") && n.path != "leave")
    );
    let skills_in_tree = tree.iter().filter(|n| n.skill.is_some()).count();
    assert_eq!(skills_in_tree, nobody.len());
    assert!(nobody.tree(Some("finance")).is_err());
    // A request both teams' skills answer: ambiguous for the full index, not for a view that
    // sees one of them.
    let q = "forms onboarding new hire";
    let fin = v(&["finance"]);
    let finance = idx.view(identity(&fin)).unwrap().unwrap();
    for outcome in [finance.route(q).unwrap(), nobody.route(q).unwrap()] {
        let text = format!("{outcome:?}");
        assert!(!text.contains("onboarding\""), "{text}");
    }
    // Shadowing across roots is decided among the visible files: a hidden overlay brings the
    // base skill back.
    let mem = Mem::default()
        .root(
            "base",
            &[("tool.md", &hier("Base tool", "tool", "base body") as &str)],
        )
        .root(
            "private",
            &[(
                "tool.md",
                &hier("Private tool", "tool", "private body") as &str,
            )],
        );
    let idx = mem.index();
    assert_eq!(idx.get("tool").unwrap().description, "Private tool");
    idx.set_access(
        &mem,
        vec![Rule {
            roots: v(&["private"]),
            groups: v(&["insiders"]),
            ..Rule::default()
        }],
    )
    .unwrap();
    let outside = idx.view(Caller::ANONYMOUS).unwrap().unwrap();
    assert_eq!(outside.get("tool").unwrap().description, "Base tool");
    assert_eq!(outside.get("tool").unwrap().root, 0);
    let text = everything(&outside, &mem);
    assert!(
        !text.contains("Private") && !text.contains("private body") && !text.contains("shadow")
    );
    assert!(
        idx.hidden(Caller::ANONYMOUS).unwrap().is_empty(),
        "`tool` is visible (from base)"
    );
}

/// A request two skills answer alike is ambiguous in the full index; for a caller who may not
/// see one of them it is matched, and the hidden one is not among any candidates.
#[test]
fn an_ambiguous_route_is_decided_among_the_visible_skills() {
    let a = hier(
        "Deploy a kubernetes cluster",
        "deploy, kubernetes, cluster",
        "Deploy",
    );
    let b = hier(
        "Deploy a kubernetes cluster safely",
        "deploy, kubernetes, cluster",
        "Deploy",
    );
    let mem = Mem::default().root(
        "main",
        &[
            ("ops/deploy.md", a.as_str()),
            ("secret/deploy.md", b.as_str()),
        ],
    );
    let idx = mem.index();
    let q = "deploy a kubernetes cluster";
    match idx.route(q).unwrap() {
        RouteOutcome::Ambiguous(hits) => {
            let paths: Vec<&str> = hits.iter().map(|h| h.skill_path.as_str()).collect();
            assert!(paths.contains(&"secret/deploy") && paths.contains(&"ops/deploy"));
        }
        other => panic!("expected ambiguous in the full index: {other:?}"),
    }
    idx.set_access(
        &mem,
        vec![Rule {
            skills: v(&["secret/**"]),
            groups: v(&["sec"]),
            ..Rule::default()
        }],
    )
    .unwrap();
    let outside = idx.view(Caller::ANONYMOUS).unwrap().unwrap();
    match outside.route(q).unwrap() {
        RouteOutcome::Matched(hit) => assert_eq!(hit.skill_path, "ops/deploy"),
        other => panic!("expected matched in the view: {other:?}"),
    }
    // Its score is the view's: the statistics of one skill, not of two.
    let alone = Mem::default()
        .root("main", &[("ops/deploy.md", a.as_str())])
        .index();
    let (x, y) = (outside.search(q, 5).unwrap(), alone.search(q, 5).unwrap());
    assert_eq!(x.len(), 1);
    assert!((x[0].score - y[0].score).abs() < 1e-9);
}
