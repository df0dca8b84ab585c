use super::*;

fn doc(path: &str, name: &str, desc: &str, body: &str) -> SearchDoc {
    SearchDoc {
        skill_path: path.into(),
        name: name.into(),
        description: desc.into(),
        body_prefix: body.into(),
        ..Default::default()
    }
}

fn corpus() -> Vec<SearchDoc> {
    vec![
        doc(
            "db/postgres-migrations",
            "postgres-migrations",
            "Write safe PostgreSQL schema migrations with zero downtime and rollbacks.",
            "# Migrations\nAdd columns, backfill, and lock-free index creation.",
        ),
        doc(
            "k8s/network-policies",
            "k8s-network-policies",
            "Kubernetes NetworkPolicy patterns: default deny, namespace isolation.",
            "# Policies\nBlock traffic between namespaces.",
        ),
        doc(
            "js/react-components",
            "react-components",
            "Build React components in TypeScript with hooks and tests.",
            "# Components\nUse function components.",
        ),
        doc(
            "docs/pdf-extract",
            "pdf-extract",
            "Extract text and tables from PDF documents.",
            "# PDF\nUse pdfplumber for tables.",
        ),
        doc(
            "git/pr-review",
            "pr-review",
            "Review pull requests and leave actionable comments.",
            "# Review\nRead the diff first.",
        ),
    ]
}

fn top(index: &SearchIndex, q: &str) -> Option<String> {
    index
        .search(q, 1)
        .first()
        .map(|s| index.paths[s.doc].clone())
}

#[test]
fn idf_formula() {
    assert!((idf_of(10, 1) - (1.0f64 + 9.5 / 1.5).ln()).abs() < 1e-12);
    assert!((idf_of(10, 0) - (1.0f64 + 10.5 / 0.5).ln()).abs() < 1e-12);
    // rarer terms weigh more; a term in every document still weighs a little
    assert!(idf_of(100, 1) > idf_of(100, 50));
    assert!(idf_of(100, 100) > 0.0);
}

#[test]
fn finds_the_obvious_skill() {
    let index = SearchIndex::build(&corpus());
    assert_eq!(
        top(&index, "postgres schema migration").as_deref(),
        Some("db/postgres-migrations")
    );
    assert_eq!(
        top(&index, "kubernetes default deny").as_deref(),
        Some("k8s/network-policies")
    );
    // abbreviation table: k8s <-> kubernetes, pull request -> pr
    assert_eq!(
        top(&index, "k8s namespace isolation").as_deref(),
        Some("k8s/network-policies")
    );
    assert_eq!(
        top(&index, "review my pull request").as_deref(),
        Some("git/pr-review")
    );
    assert_eq!(
        top(&index, "extract tables from a pdf").as_deref(),
        Some("docs/pdf-extract")
    );
}

#[test]
fn prefix_and_typo_alternatives() {
    let index = SearchIndex::build(&corpus());
    // the stem "compon" (components) is a prefix of "componentri"
    assert_eq!(
        top(&index, "componentry").as_deref(),
        Some("js/react-components")
    );
    // one typo in a word the catalogue knows (typo candidates are terms of 2+ skills)
    let mut docs = corpus();
    docs.push(doc("iac/terraform", "terraform", "Terraform modules", ""));
    docs.push(doc("iac/plan", "plan", "Review a terraform plan", ""));
    let index = SearchIndex::build(&docs);
    assert_eq!(
        top(&index, "terrafrom modules").as_deref(),
        Some("iac/terraform")
    );
    let e = index.explain("terrafrom", 5);
    assert!(e.terms.iter().any(|t| t.term.contains("typo")), "{e:?}");
}

#[test]
fn scores_are_normalised_and_sorted() {
    let index = SearchIndex::build(&corpus());
    for q in [
        "postgres",
        "react hooks typescript components tests",
        "zero downtime schema migrations with rollbacks",
        "weather",
        "pdf",
    ] {
        let hits = index.search(q, 10);
        for w in hits.windows(2) {
            assert!(w[0].score >= w[1].score);
        }
        for h in &hits {
            assert!(h.score > 0.0 && h.score <= 1.0, "{q}: {}", h.score);
        }
    }
    // a request made only of the skill's own distinctive words scores high
    let hits = index.search("pdf tables extract", 1);
    assert!(hits[0].score > 0.5, "{}", hits[0].score);
}

#[test]
fn off_topic_requests_score_low() {
    let index = SearchIndex::build(&corpus());
    for q in [
        "what's the weather in Paris tomorrow",
        "tell me a joke about cats",
    ] {
        let best = index.search(q, 1).first().map_or(0.0, |s| s.score);
        assert!(best < 0.2, "{q}: {best}");
    }
}

#[test]
fn evidence_factor_cuts_single_word_and_body_only_matches() {
    let index = SearchIndex::build(&corpus());
    // "postgres" alone: one word, no halving
    let one = index.search("postgres", 1)[0].score;
    let e = index.explain("postgres", 0);
    assert!(!e.notes.iter().any(|n| n.contains("x 0.4")), "{e:?}");
    assert!(one > 0.2);
    // "postgres" plus an unknown word: only one of two words matched -> halved
    let e = index.explain("postgres zzzunknownword", 0);
    assert!(e.notes.iter().any(|n| n.contains("x 0.4")), "{e:?}");
    // body-only evidence ("lock-free" and "backfill" appear only in the body) -> halved
    let e = index.explain("backfill lock-free", 0);
    assert!(e.score > 0.0);
    assert!(e.notes.iter().any(|n| n.contains("x 0.4")), "{e:?}");
    // two words in the description: full score
    let e = index.explain("zero downtime", 0);
    assert!(!e.notes.iter().any(|n| n.contains("x 0.4")), "{e:?}");
}

#[test]
fn empty_and_stop_word_queries() {
    let index = SearchIndex::build(&corpus());
    assert!(index.search("", 10).is_empty());
    assert!(index.search("the of and le la", 10).is_empty());
    assert!(index.search("postgres", 0).is_empty());
    let empty = SearchIndex::build(&[]);
    assert!(empty.is_empty());
    assert!(empty.search("postgres", 10).is_empty());
}

#[test]
fn explain_sums_to_the_search_score() {
    let index = SearchIndex::build(&corpus());
    for q in [
        "postgres schema migration",
        "k8s default deny",
        "review pull requests",
        "weather",
    ] {
        for s in index.search(q, 5) {
            let e = index.explain(q, s.doc);
            assert!((e.score - s.score).abs() < 1e-9, "{q}");
            let sum: f64 = e.terms.iter().map(|t| t.contribution).sum();
            assert!((sum - e.score).abs() < 1e-9, "{q}: {sum} vs {}", e.score);
            assert!(
                e.terms
                    .iter()
                    .all(|t| FIELD_NAMES.contains(&t.field.as_str()))
            );
            assert_eq!(e.skill_path, index.paths[s.doc]);
        }
    }
    let e = index.explain("postgres", 99);
    assert_eq!(e.score, 0.0);
    let e = index.explain("weather", 0);
    assert_eq!(e.score, 0.0);
    assert!(e.terms.is_empty());
}

#[test]
fn explain_reports_fields() {
    let index = SearchIndex::build(&corpus());
    let e = index.explain("postgres lock-free", 0);
    let fields: Vec<&str> = e.terms.iter().map(|t| t.field.as_str()).collect();
    assert!(fields.contains(&"name"), "{fields:?}");
    assert!(fields.contains(&"description"), "{fields:?}");
    assert!(fields.contains(&"body"), "{fields:?}");
}

#[test]
fn deterministic() {
    let docs = corpus();
    let a = SearchIndex::build(&docs);
    let b = SearchIndex::build(&docs);
    for q in [
        "postgres",
        "react components",
        "review",
        "tables pdf documents",
    ] {
        assert_eq!(a.search(q, 10), b.search(q, 10));
        assert_eq!(a.search(q, 10), a.search(q, 10));
    }
}

#[test]
fn ties_break_by_priority_then_path() {
    let mut docs = vec![
        doc("b", "alpha", "same words here", ""),
        doc("a", "alpha", "same words here", ""),
        doc("c", "alpha", "same words here", ""),
    ];
    docs[2].priority = 5;
    let index = SearchIndex::build(&docs);
    let order: Vec<&str> = index
        .search("same words", 10)
        .iter()
        .map(|s| index.paths[s.doc].as_str())
        .collect();
    assert_eq!(order, vec!["c", "a", "b"]);
}

#[test]
fn pairs_favour_words_said_together() {
    // both skills hold "schema" and "review"; only one says them together
    let docs = vec![
        doc(
            "a/apart",
            "apart",
            "Review pull requests for style; also covers the database schema of services.",
            "",
        ),
        doc(
            "b/together",
            "together",
            "Schema review for services and their database, with pull requests for style.",
            "",
        ),
    ];
    let index = SearchIndex::build(&docs);
    assert_eq!(top(&index, "review schema").as_deref(), Some("b/together"));
    let e = index.explain("review schema", 1);
    assert!(e.terms.iter().any(|t| t.term.contains("(pair)")), "{e:?}");
    let sum: f64 = e.terms.iter().map(|t| t.contribution).sum();
    assert!((sum - e.score).abs() < 1e-9);
    // without pairs the two tie on the words alone (or nearly)
    let flat = SearchIndex::build_with(
        &docs,
        Params {
            pair_weight: 0.0,
            ..Params::default()
        },
    );
    let e = flat.explain("review schema", 1);
    assert!(!e.terms.iter().any(|t| t.term.contains("(pair)")), "{e:?}");
    // a skill holding no pair scores as without proximity
    let a = index.search("review schema", 2);
    let b = flat.search("review schema", 2);
    let apart = |v: &[Scored]| v.iter().find(|s| s.doc == 0).map(|s| s.score);
    assert_eq!(apart(&a), apart(&b));
}

#[test]
fn matched_lists_request_words() {
    let index = SearchIndex::build(&corpus());
    let hits = index.search("Postgres weather migrations", 1);
    assert_eq!(hits[0].matched, vec!["postgres", "migrations"]);
}

#[test]
fn body_is_bounded() {
    let long = format!("{} needle", "filler ".repeat(2000));
    let docs = vec![doc("a", "a", "x", &long), doc("b", "b", "y", "needle")];
    let index = SearchIndex::build(&docs);
    let paths: Vec<&str> = index
        .search("needle", 10)
        .iter()
        .map(|s| index.paths[s.doc].as_str())
        .collect();
    assert_eq!(paths, vec!["b"]);
}

#[test]
fn one_edit() {
    assert!(within_one_edit("kubernetes", "kubernets"));
    assert!(within_one_edit("kubernetes", "kubrenetes"));
    assert!(within_one_edit("kubernetes", "kubernetez"));
    assert!(within_one_edit("kubernetes", "kubernetess"));
    assert!(within_one_edit("same", "same"));
    assert!(!within_one_edit("kubernetes", "kubrenetez"));
    assert!(!within_one_edit("abc", "abcde"));
    assert!(within_one_edit("café", "cafe"));
}

/// The packing `encode_tf` must keep (the former array-returning encoder).
fn pack_tf_reference(tf: &[u16; NUM_FIELDS]) -> Vec<u8> {
    let mut out = vec![0u8];
    let mut fields = tf.iter().enumerate().filter(|(_, t)| **t != 0);
    if let (Some((f, &t)), None) = (fields.next(), fields.next())
        && t <= 15
    {
        out[0] = 0x80 | (f as u8) << 4 | t as u8;
        return out;
    }
    for (f, &t) in tf.iter().enumerate() {
        if t != 0 {
            out[0] |= 1 << f;
            put_varint(&mut out, u32::from(t));
        }
    }
    out
}

#[test]
fn encode_tf_matches_the_reference_packing() {
    let values = [0u16, 1, 2, 15, 16, 127, 128, 300, 16_383, 16_384, u16::MAX];
    let mut x = 99u64;
    for _ in 0..20_000 {
        let mut tf = [0u16; NUM_FIELDS];
        for t in &mut tf {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // mostly zeros, as in real postings
            *t = if x.is_multiple_of(3) {
                values[(x >> 8) as usize % values.len()]
            } else {
                0
            };
        }
        let mut v = vec![0xaa];
        encode_tf(&mut v, &tf);
        assert_eq!(v[1..], pack_tf_reference(&tf)[..], "{tf:?}");
        assert_eq!(packed_tf_len(&v[1..]), v.len() - 1);
        assert_eq!(decode_tf(&v, &mut 1), tf);
    }
    for f in 0..NUM_FIELDS {
        for t in [1u16, 15, 16] {
            let mut tf = [0; NUM_FIELDS];
            tf[f] = t;
            let mut v = Vec::new();
            encode_tf(&mut v, &tf);
            assert_eq!(v, pack_tf_reference(&tf), "{tf:?}");
        }
    }
}

#[test]
fn nonzero_fields_matches_a_loop() {
    let naive = |tf: &[u16; NUM_FIELDS]| {
        let mut m = 0u32;
        for (f, &t) in tf.iter().enumerate() {
            if t != 0 {
                m |= 1 << f;
            }
        }
        m
    };
    let values = [0u16, 1, 2, 0x7fff, 0x8000, 0x8001, 0xff00, 0x00ff, u16::MAX];
    // every mask with values at the lane edges
    for m in 0..1u32 << NUM_FIELDS {
        for &v in &values[1..] {
            let mut tf = [0u16; NUM_FIELDS];
            for (f, t) in tf.iter_mut().enumerate() {
                if m & 1 << f != 0 {
                    *t = v;
                }
            }
            assert_eq!(nonzero_fields(&tf), m, "{tf:?}");
        }
    }
    let mut x = 7u64;
    for _ in 0..100_000 {
        let mut tf = [0u16; NUM_FIELDS];
        for t in &mut tf {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *t = match x % 4 {
                0 => x as u16 >> (x >> 20 & 15),
                1 => values[(x >> 8) as usize % values.len()],
                _ => 0,
            };
        }
        assert_eq!(nonzero_fields(&tf), naive(&tf), "{tf:?}");
    }
}

#[test]
fn lanes_count_like_saturating_u16s() {
    let mut x = 21u64;
    for round in 0..2000 {
        let mut tf = [0u16; NUM_FIELDS];
        // some fields start near the top, so that saturation is reached
        if round % 3 == 0 {
            for t in &mut tf {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *t = if x.is_multiple_of(2) {
                    u16::MAX - (x >> 8) as u16 % 4
                } else {
                    0
                };
            }
        }
        let mut lanes = lanes_of(&tf);
        for _ in 0..(round % 50) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let f = (x >> 5) as usize % NUM_FIELDS;
            tf[f] = tf[f].saturating_add(1);
            lane_add(&mut lanes, f);
            assert_eq!(lanes, lanes_of(&tf), "{tf:?}");
        }
        for (f, &t) in tf.iter().enumerate() {
            assert_eq!(lane(&lanes, f), t);
        }
        assert_eq!(lanes[1] >> 48, 0);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        encode_lanes(&mut a, &lanes);
        encode_tf(&mut b, &tf);
        assert_eq!(a, b);
        assert_eq!(a, pack_tf_reference(&tf));
    }
}

#[test]
fn pseudo_tf_of_one_field_has_the_same_bits() {
    let mut x = 5u64;
    let norms = [
        0.0,
        -0.0,
        1.0,
        1e-300,
        3.7,
        f64::MAX,
        0.1 + 0.2,
        f64::MIN_POSITIVE,
    ];
    for i in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut norm = [0.0; NUM_FIELDS];
        for (k, n) in norm.iter_mut().enumerate() {
            *n = if i < 64 {
                norms[(i + k) % norms.len()]
            } else {
                f64::from_bits(x.rotate_left(k as u32 * 9) >> 2)
            };
        }
        let f = (x >> 40) as usize % NUM_FIELDS;
        let t = (x >> 50) as u8 % 15 + 1;
        let mut tf = [0u16; NUM_FIELDS];
        tf[f] = u16::from(t);
        assert_eq!(
            pseudo_tf_one(norm[f], t).to_bits(),
            pseudo_tf(&norm, &tf).to_bits(),
            "{norm:?} {tf:?}"
        );
    }
}

#[test]
fn packed_frequencies_round_trip() {
    let cases = [
        [0; NUM_FIELDS],
        [1, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 1],
        [0, 0, 15, 0, 0, 0, 0],
        [0, 0, 16, 0, 0, 0, 0],
        [2, 3, 0, 0, 0, 0, 0],
        [127, 128, 300, 16_383, 16_384, 40_000, u16::MAX],
    ];
    for tf in cases {
        let mut v = Vec::new();
        encode_tf(&mut v, &tf);
        assert_eq!(packed_tf_len(&v), v.len());
        // followed by more bytes (the next term's), the length is the same
        let mut w = v.clone();
        w.extend_from_slice(&[0x81, 0xff, 0x7f, 3]);
        assert_eq!(packed_tf_len(&w), v.len());
        let mut pos = 0;
        assert_eq!(decode_tf(&v, &mut pos), tf);
        assert_eq!(pos, v.len());
    }
    for n in [0u32, 1, 127, 128, 300, 1 << 21, u32::MAX] {
        let mut v = Vec::new();
        put_varint(&mut v, n);
        let mut pos = 0;
        assert_eq!(get_varint(&v, &mut pos), n);
    }
}

/// A posting's frequencies found through the skip table are those of decoding the term's
/// postings one by one from its first, for every posting of every term (long lists and short,
/// a term starting inside a skip block or on its edge).
#[test]
fn posting_frequencies_through_the_skips_are_those_of_a_walk() {
    let index = SearchIndex::build(&generated(600));
    let mut long = 0;
    for t in 0..index.vocabulary_len() as u32 {
        let range = index.range(t);
        long += usize::from(range.len() > 2 * TF_SKIP);
        let mut pos = index.tf_offsets[t as usize] as usize;
        for i in range {
            assert_eq!(
                index.posting_tf(t, i),
                decode_tf(&index.tf_bytes, &mut pos),
                "{t} {i}"
            );
        }
        assert_eq!(pos, index.tf_offsets[t as usize + 1] as usize);
    }
    assert!(long > 10, "{long} terms of long lists");
    assert_eq!(
        index.tf_skips.get().map(Vec::len),
        Some((*index.offsets.last().unwrap() as usize).div_ceil(TF_SKIP))
    );
}

#[test]
fn analysed_forms_survive_taking_an_index_apart() {
    let docs = corpus();
    let a = SearchIndex::build(&docs);
    let mut builder = Builder::new(Params::default());
    let again = a.into_analysed(&mut builder);
    let b = builder.build(
        again,
        docs.iter().map(|d| d.skill_path.clone()).collect(),
        docs.iter().map(|d| d.priority).collect(),
    );
    let a = SearchIndex::build(&docs);
    for q in [
        "postgres",
        "review pull requests",
        "k8s deny",
        "componentry",
    ] {
        assert_eq!(a.search(q, 10), b.search(q, 10));
        for d in 0..docs.len() {
            assert_eq!(a.explain(q, d), b.explain(q, d));
        }
    }
    assert_eq!(a.vocabulary_len(), b.vocabulary_len());
    // the words already analysed come along (the rebuild did not stem them again)
    let words = |ix: &SearchIndex| {
        let mut w: Vec<(String, Option<String>)> = ix
            .known_entries()
            .map(|(w, t)| (w.to_owned(), t.map(|t| ix.term(t).to_owned())))
            .collect();
        w.sort();
        w
    };
    assert_eq!(words(&a), words(&b));
}

/// The terms of a request's words taken from the collection's known words
/// ([`crate::text::KnownWords`]) are those that stemming gives: for every word the build
/// analysed (in capitals, between other words, in compounds) and for words it never saw.
#[test]
fn known_words_give_the_terms_stemming_gives() {
    let index = SearchIndex::build(&corpus());
    let known = index.known_entries().count();
    // (a stop word, a number and camel-case parts among them)
    assert!(known > 40, "{known} known words");
    assert!(
        index
            .known_entries()
            .any(|(w, t)| w == "the" && t.is_none())
    );
    assert!(
        index
            .known_entries()
            .any(|(w, t)| w == "migrations" && t.is_some())
    );
    let table = index.known.as_ref().expect("a table of the known words");
    let terms = |request: &str, known| {
        with_terms(request, known, |t| {
            (0..t.len())
                .map(|i| (t.term(i).to_owned(), t.surface(i).to_owned(), t.joined(i)))
                .collect::<Vec<_>>()
        })
    };
    let mut requests: Vec<String> = index
        .known_entries()
        .map(|(w, _)| w.to_owned())
        .collect::<Vec<_>>()
        .chunks(7)
        .map(|c| c.join(" "))
        .collect();
    requests.extend(
        [
            "Write SAFE PostgreSQL Schema-Migrations, with zero-downtime",
            "pull requests for NetworkPolicy in the k8s namespaces",
            "unseenword migrating écrire größe 2024 pdfplumber's tables",
        ]
        .map(String::from),
    );
    for request in &requests {
        let stemmed = terms(request, None);
        assert!(!stemmed.is_empty(), "{request}");
        assert_eq!(terms(request, Some(table)), stemmed, "{request}");
    }
    // (the table is what is read: a table of other terms gives those)
    let other = crate::text::KnownWords::new(
        std::sync::Arc::new(crate::text::Vocab {
            text: "zzz".into(),
            ends: vec![3],
        }),
        std::sync::Arc::new(crate::text::WordList {
            text: b"migrationssafe".to_vec(),
            ends: vec![10, 14],
            terms: vec![0, crate::text::DROPPED],
        }),
    );
    let other = std::sync::Arc::new(other);
    let got = terms("safe Migrations tables", Some(&other));
    let got: Vec<&str> = got.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(got, ["zzz", "tabl"]);
}

#[test]
fn ids_sort_like_sort_unstable() {
    let mut scratch = Vec::new();
    let mut x = 12345u64;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m) as u32
    };
    let mut cases: Vec<Vec<u32>> = vec![
        vec![],
        vec![7],
        (0..200).rev().collect(),
        (0..200).collect(),
        vec![5; 100],
        vec![u32::MAX, 0, 1 << 31, 255, 256, 65_535, 65_536, 1 << 24],
    ];
    for (len, m) in [(63, 1000), (64, 1000), (65, 10), (300, 300), (1000, 40_000)] {
        cases.push((0..len).map(|_| next(m)).collect());
    }
    cases.push((0..500).map(|_| next(u64::from(u32::MAX))).collect());
    let mut wide: Vec<u32> = (0..100).map(|_| next(1 << 30)).collect();
    wide.extend([u32::MAX, 0, u32::MAX - 1]);
    cases.push(wide);
    for ids in cases {
        let mut want = ids.clone();
        want.sort_unstable();
        let mut got = ids.clone();
        sort_ids(&mut got, &mut scratch);
        assert_eq!(got, want);
    }
}

#[test]
fn prefix_keys_order_like_strings() {
    let mut words = vec![
        "",
        "a",
        "ab",
        "abc",
        "abcdefgh",
        "abcdefgha",
        "abcdefghb",
        "abcdefgi",
        "b",
        "ba",
        "zzzzzzzzzzzz",
        "zzzzzzzz",
        "café",
        "cafe",
        "caff",
        "日本",
        "2fa",
        "a2",
        "é",
    ];
    words.sort_unstable_by(|a, b| prefix_key(a).cmp(&prefix_key(b)).then_with(|| a.cmp(b)));
    let mut plain = words.clone();
    plain.sort_unstable();
    assert_eq!(words, plain);
    for w in &plain {
        for v in &plain {
            if prefix_key(w) < prefix_key(v) {
                assert!(w < v, "{w} {v}");
            }
        }
    }
}

#[test]
fn utf8_truncation() {
    assert_eq!(truncate_utf8("héllo", 2), "h");
    assert_eq!(truncate_utf8("héllo", 3), "hé");
    assert_eq!(truncate_utf8("abc", 10), "abc");
}

/// A generated collection past several windows of top-k retrieval: words drawn with a skewed
/// frequency (common words in most skills, rare ones in few), some sharing prefixes, names and
/// descriptions short, bodies longer, a few priorities.
fn generated(n: usize) -> Vec<SearchDoc> {
    const STEMS: &[&str] = &[
        "deploy",
        "deployment",
        "database",
        "data",
        "dataset",
        "test",
        "testing",
        "tests",
        "review",
        "reviewer",
        "kubernetes",
        "network",
        "policy",
        "policies",
        "python",
        "pytest",
        "react",
        "reactive",
        "component",
        "components",
        "migration",
        "migrate",
        "schema",
        "postgres",
        "postgresql",
        "pdf",
        "extract",
        "extraction",
        "table",
        "tables",
        "git",
        "commit",
        "branch",
        "release",
        "docker",
        "container",
        "image",
        "images",
        "log",
        "logging",
        "metric",
        "metrics",
        "trace",
        "tracing",
        "secure",
        "security",
        "secret",
        "token",
        "cache",
        "caching",
        "queue",
        "worker",
        "stream",
        "streaming",
        "search",
        "index",
        "ranking",
        "prompt",
        "agent",
        "skill",
        "workflow",
        "lint",
        "format",
        "build",
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // skewed: the square of a uniform draw favours the first words
    let word = |next: &mut dyn FnMut() -> u64| {
        let u = (next() % 10_000) as f64 / 10_000.0;
        STEMS[((u * u) * STEMS.len() as f64) as usize]
    };
    (0..n)
        .map(|i| {
            let mut words = |k: usize| -> String {
                (0..k)
                    .map(|_| word(&mut next))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let name = words(2).replace(' ', "-");
            let description = words(8);
            let body = words(40);
            let mut d = doc(&format!("gen/{i:05}-{name}"), &name, &description, &body);
            d.priority = (i % 7) as i32 - 3;
            d
        })
        .collect()
}

/// Top-k retrieval (windows, the non-essential slots read only for skills an essential one
/// touched, skills below the threshold skipped) gives exactly the exhaustive ranking: the same
/// skills in the same order, the same scores to the bit, the same matched words, for requests
/// short and long, with prefixes, typos and unknown words, at several limits.
#[test]
fn top_k_is_the_exhaustive_ranking() {
    let index = SearchIndex::build(&generated(3_000));
    let requests = [
        "deploy",
        "deploy database",
        "postgres schema migration rollback",
        "kubernetes network policy for a secure cluster",
        "pytest python testing with tables and data extraction from pdf",
        "review the release branch commit and lint the build",
        "cach strem wrker queue",
        "deploymnt of docker imags",
        "agent skill workflow prompt ranking search index",
        "tracing metrics logging for a streaming worker with a cache and a secret token",
        "unknownword anotherunknown deploy",
        "data",
        "test tests testing tested",
        "component components react reactive container containers",
    ];
    let mut checked = 0;
    for request in requests {
        let q = prepare(&index, request);
        for limit in [1, 3, 10, 40, 300] {
            let fast = index.top_k(&q, limit, true);
            // without the matched words: the same skills, order and scores
            let brief = index.top_k(&q, limit, false);
            assert_eq!(brief.len(), fast.len(), "{request:?} at {limit}");
            for (b, f) in brief.iter().zip(&fast) {
                assert_eq!((b.doc, b.score.to_bits()), (f.doc, f.score.to_bits()));
                assert!(b.matched.is_empty(), "{request:?} at {limit}");
            }
            let slow: Vec<Scored> = rank(&index, &q, limit)
                .into_iter()
                .map(|(doc, score)| Scored {
                    doc,
                    score,
                    matched: matched(&index, &q, doc),
                })
                .collect();
            assert_eq!(fast.len(), slow.len(), "{request:?} at {limit}");
            for (f, s) in fast.iter().zip(&slow) {
                assert_eq!(f.doc, s.doc, "{request:?} at {limit}");
                assert_eq!(
                    f.score.to_bits(),
                    s.score.to_bits(),
                    "{request:?} at {limit}"
                );
                assert_eq!(f.matched, s.matched, "{request:?} at {limit}");
            }
            checked += fast.len();
        }
    }
    // the requests do match: the comparison is not of empty lists
    assert!(checked > 1_000, "{checked} results compared");
}
