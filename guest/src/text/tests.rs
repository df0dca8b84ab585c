use super::*;

#[test]
fn spec_example() {
    assert_eq!(
        tokenize("Create a React component for the authentication"),
        vec!["create", "react", "component", "authentication"]
    );
}

#[test]
fn keeps_hyphens_drops_punctuation_and_dedupes() {
    assert_eq!(
        tokenize("Set-up: React, react; node.js (front-end)!"),
        vec!["set-up", "react", "node", "js", "front-end"]
    );
    assert!(tokenize("-- - !!").is_empty());
}

#[test]
fn french_stop_words_and_accents() {
    assert_eq!(
        tokenize("Créer un composant pour l'authentification de la clé"),
        vec!["créer", "composant", "authentification", "clé"]
    );
}

#[test]
fn unicode_letters_survive() {
    assert_eq!(tokenize("Größe 日本語"), vec!["größe", "日本語"]);
}

#[test]
fn empty_input() {
    assert!(tokenize("").is_empty());
    assert!(tokenize("the a of le la").is_empty());
}

#[test]
fn identifiers_split() {
    assert_eq!(
        split_identifiers("getUserName snake_case kebab-case HTTPServer k8s"),
        vec![
            vec!["get", "user", "name"],
            vec!["snake", "case"],
            vec!["kebab", "case"],
            vec!["http", "server"],
            vec!["k8s"],
        ]
    );
}

#[test]
fn acronym_plurals_keep_the_acronym() {
    let parts = |chunk: &str| {
        let (mut buf, mut ranges) = (String::new(), Vec::new());
        split_chunk(chunk, &mut buf, &mut ranges);
        let got: Vec<String> = ranges.iter().map(|&(a, b)| buf[a..b].to_string()).collect();
        assert_eq!(got, parts_by_chars(chunk), "{chunk:?}");
        got
    };
    assert_eq!(parts("LLMs"), ["llm"]);
    assert_eq!(parts("APIs"), ["api"]);
    assert_eq!(parts("PRs"), ["pr"]);
    assert_eq!(parts("myAPIs"), ["my", "api"]);
    assert_eq!(parts("ÉTATs"), ["état"]);
    // not a plural acronym: one capital, a digit, or the `s` is not last in the run
    assert_eq!(parts("Is"), ["is"]);
    assert_eq!(parts("K8s"), ["k8s"]);
    assert_eq!(parts("LLMsUsed"), ["ll", "ms", "used"]);
    assert_eq!(parts("XMLHttp"), ["xml", "http"]);
    let mut analyzer = Analyzer::new();
    let terms: Vec<String> = analysed(&mut analyzer, &["Review open PRs with LLMs"])
        .into_iter()
        .map(|t| t.0)
        .collect();
    assert!(terms.contains(&"pr".to_string()), "{terms:?}");
    assert!(terms.contains(&"llm".to_string()), "{terms:?}");
}

/// The char-by-char rules the byte paths must follow.
fn parts_by_chars(chunk: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in chunk.split(|c: char| !c.is_alphanumeric()) {
        if !piece.is_empty() {
            split_camel(piece, |p| out.push(p.to_lowercase()));
        }
    }
    out
}

/// Texts with the shapes the analyser must get right.
const TRICKY: &[&str] = &[
    "getUserName snake_case kebab-case HTTPServer k8s XMLHttpRequest",
    "LLMs APIs PRs IDs myAPIs GPUsX HTTPs Is ABs K8s ÉTATs APIsé XMLs2 LLMsUsed",
    "ABC aBC AbC abC A1B2c3 fp16 S3Bucket iOS macOS URLs JSONParser x",
    "--a--b__c..d//e (f) [g]{h} 'i' \"j\" 10.5.3 v2.0-beta1 a.b.c.d",
    "tab\there\nnew\rline\x0bvt\x0cff end",
    "café naïve Größe 日本語 ÉCOLE éCole x\u{a0}y x\u{2003}y x\u{3000}y — → ✓",
    "a\u{85}b\u{2028}c\u{1680}d \u{a0}\u{a0} Café-Bar caféBar ǅemal İstanbul ﬁle",
    "  leading and trailing  ",
    "",
    " ",
    "Pull Requests, pull-request, the pull of requests; machine learning end-to-end",
    "large language models: LLM, a large-language-model, natural language processing",
    "abcdefghijkl-mnopqrstuvwx abcdefghijkl-mnopqrstuvwxy ABCDEFGHIJKL-MNOPQRSTUVWX",
    "ééééééééééé-éééééééééééé ééééééééééé-éééééééééééé-é",
    "2024 10 007 v1 1v 2fa K8S Postgres postgres POSTGRES psql",
    "supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis",
    "the The THE and of le la les I'm l'authentification qu'il",
    "a-b-c-d a_b_c a/b x.y.z.w -_-_- ___ ... 1-2-3",
    // a non-ASCII letter or digit within or after an ASCII run (it is read again)
    "ABé xABé getUserNaméX ABCé fooé é éAB aé-b e\u{301}x ABǅ aǅb AǄb ABⓐ ABⅫc x² ABC²",
    "aBC²d ١٢٣ ab١٢ foo—bar ABC—def HTTPé—x café's naïveTéST ÀB ǅ Ǆ ǆ İ ß ẞ",
    "XMLHttpRéquest-ÉTÉ-été über_Größe ÀÉÎ-ÕÜ-y",
];

/// The analyser's rules written plainly (character by character, no memoisation): for
/// each whitespace chunk of each piece, its parts, then its join.
fn reference(pieces: &[&str]) -> Vec<(String, String, u32, bool)> {
    fn term(w: &str) -> Option<String> {
        if w.bytes().all(|b| b.is_ascii_digit()) || is_rank_stop_word(w) {
            None
        } else {
            Some(stem(crate::synonyms::canonical(w).unwrap_or(w)).into_owned())
        }
    }
    let mut out = Vec::new();
    let mut position = 0;
    let mut recent: Vec<String> = Vec::new();
    for chunk in pieces.iter().flat_map(|p| p.split_whitespace()) {
        let parts = parts_by_chars(chunk);
        let first = position;
        for part in &parts {
            if let Some(t) = term(part) {
                out.push((t.clone(), part.clone(), position, false));
                for (words, abbr) in crate::synonyms::PHRASES {
                    let n = words.len() - 1;
                    if words[n] == t
                        && recent.len() >= n
                        && recent[recent.len() - n..] == words[..n]
                    {
                        out.push((abbr.to_string(), abbr.to_string(), position, true));
                    }
                }
                if recent.len() >= 4 {
                    recent.remove(0);
                }
                recent.push(t);
            }
            position += 1;
        }
        if (2..=3).contains(&parts.len()) {
            let joined = parts.concat();
            if joined.chars().count() <= 24
                && let Some(t) = term(&joined)
            {
                out.push((t, joined, first, true));
            }
        }
    }
    out
}

/// The analyser's output on `pieces` (term texts), checking on the way that terms are
/// numbered in order of first appearance.
fn analysed(analyzer: &mut Analyzer, pieces: &[&str]) -> Vec<(String, String, u32, bool)> {
    let mut out = Vec::new();
    let mut ids = Vec::new();
    analyzer.run_pieces(pieces.iter().copied(), |term, surface, position, joined| {
        ids.push(term);
        out.push((String::new(), surface.to_string(), position, joined));
    });
    for (o, &id) in out.iter_mut().zip(&ids) {
        o.0 = analyzer.term(id).to_string();
    }
    out
}

/// A deterministic jumble of letters, digits, separators, non-ASCII letters and Unicode
/// whitespace, and of words from the phrase and alias tables.
fn jumble(seed: u64, len: usize) -> String {
    const BITS: &[&str] = &[
        "a",
        "s",
        "AB",
        "b",
        "z",
        "Q",
        "X",
        "e",
        "1",
        "9",
        "0",
        "-",
        "_",
        " ",
        " ",
        " ",
        "\t",
        "\n",
        ".",
        "/",
        "é",
        "É",
        "ß",
        "日",
        "\u{a0}",
        "\u{2003}",
        "ǅ",
        "İ",
        "ﬁ",
        "pull",
        "request",
        "Requests",
        "end",
        "machine",
        "learning",
        "k8s",
        "the",
        "Postgres",
        "XMLHttp",
        "2024",
        "language",
        "model",
        "large",
        "tHe",
        "DataFrame",
        "ÉCOLE",
        "—",
        "²",
        "Ⅻ",
        "\u{301}",
        "ⓐ",
        "١",
    ];
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut s = String::new();
    for _ in 0..len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push_str(BITS[(x % BITS.len() as u64) as usize]);
    }
    s
}

#[test]
fn split_chunk_matches_the_char_rules() {
    for text in TRICKY {
        for chunk in text.split_whitespace() {
            let (mut buf, mut ranges) = (String::new(), Vec::new());
            split_chunk(chunk, &mut buf, &mut ranges);
            let got: Vec<&str> = ranges.iter().map(|&(a, b)| &buf[a..b]).collect();
            assert_eq!(got, parts_by_chars(chunk), "{chunk:?}");
        }
    }
}

#[test]
fn analyzer_matches_the_reference() {
    // one analyser throughout, so that words come back from its cache
    let mut analyzer = Analyzer::new();
    for _ in 0..2 {
        for text in TRICKY {
            assert_eq!(
                analysed(&mut analyzer, &[text]),
                reference(&[text]),
                "{text:?}"
            );
        }
        for seed in 0..3000 {
            let text = jumble(seed, 1 + seed as usize % 60);
            assert_eq!(
                analysed(&mut analyzer, &[&text]),
                reference(&[&text]),
                "{text:?}"
            );
        }
    }
    // pieces: analysed as if joined by whitespace (positions and phrases run on)
    let pieces = ["Pull", "requests", "", "getUser-Name", "  end", "to-end x"];
    assert_eq!(analysed(&mut analyzer, &pieces), reference(&pieces));
    assert_eq!(
        analysed(&mut analyzer, &pieces),
        analysed(&mut analyzer, &[&pieces.join(" ")])
    );
    let pieces = [jumble(7, 40), jumble(8, 3), String::new(), jumble(9, 50)];
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    assert_eq!(analysed(&mut analyzer, &pieces), reference(&pieces));
}

#[test]
fn terms_are_numbered_in_order_of_first_appearance() {
    let mut analyzer = Analyzer::new();
    let mut ids = Vec::new();
    analyzer.run(
        "Deploy to k8s: deploy, DEPLOY, pull requests and pull-requests",
        |term, _, _, _| ids.push(term),
    );
    let mut next = 0;
    for &id in &ids {
        assert!(id <= next, "{ids:?}");
        if id == next {
            next += 1;
        }
    }
    assert_eq!(next as usize, analyzer.terms_len());
    let texts: Vec<&str> = (0..next).map(|t| analyzer.term(t)).collect();
    assert_eq!(
        texts,
        vec!["deploy", "kubernet", "pull", "request", "pr", "pullrequest"]
    );
}

#[test]
fn word_cache_edge_cases() {
    let long = "x".repeat(1000);
    let mut longer = long.clone();
    longer.push('y');
    let words: Vec<&[u8]> = vec![
        b"",
        b"a",
        b"ab",
        b"abc",
        b"abcd",
        b"abcde",
        b"abcdefg",
        b"abcdefgh",
        b"abcdefghi",
        b"abcdefghijklmnop",
        b"abcdefghijklmnopq",
        b"abcdefghijklmnoq",
        "café".as_bytes(),
        "日本語".as_bytes(),
        long.as_bytes(),
        longer.as_bytes(),
    ];
    let mut cache = WordCache::default();
    for (i, w) in words.iter().enumerate() {
        assert_eq!(cache.find::<false>(word_hash(w), w), None, "{w:?}");
        cache.insert(word_hash(w), w, i as u32);
    }
    for (i, w) in words.iter().enumerate() {
        assert_eq!(
            cache.find::<false>(word_hash(w), w),
            Some(i as u32),
            "{w:?}"
        );
    }
    assert_eq!(
        cache.find::<false>(word_hash(b"abcdefghz"), b"abcdefghz"),
        None
    );
    // many words: the table grows (rehashing with `word_hash`) and finds them all
    let many: Vec<String> = (0..20_000).map(|i| format!("w{i}")).collect();
    for (i, w) in many.iter().enumerate() {
        cache.insert(word_hash(w.as_bytes()), w.as_bytes(), 100 + i as u32);
    }
    for (i, w) in many.iter().enumerate() {
        assert_eq!(
            cache.find::<false>(word_hash(w.as_bytes()), w.as_bytes()),
            Some(100 + i as u32)
        );
    }
    assert_eq!(cache.find::<false>(word_hash(b"ab"), b"ab"), Some(2));
}

/// A deterministic word of ASCII letters (both cases) and digits, of `len` bytes.
fn ascii_word(x: &mut u64, len: usize) -> Vec<u8> {
    const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    (0..len)
        .map(|_| {
            *x ^= *x << 13;
            *x ^= *x >> 7;
            *x ^= *x << 17;
            // mostly lowercase, as in real text
            let k = (*x >> 11) as usize;
            if k.is_multiple_of(4) {
                ALNUM[k / 4 % ALNUM.len()]
            } else {
                ALNUM[k / 4 % 26]
            }
        })
        .collect()
}

#[test]
fn folded_hash_and_compare_are_those_of_the_lowercase_word() {
    let mut x = 11u64;
    for i in 0..60_000 {
        let w = ascii_word(&mut x, i % 41);
        let lower = w.to_ascii_lowercase();
        assert_eq!(word_hash_folded::<true>(&w), word_hash(&lower), "{w:?}");
        assert!(same_bytes_folded::<true>(&lower, &w), "{w:?}");
        assert!(same_bytes_folded::<false>(&lower, &lower));
        // any other stored word of that length differs
        let other = ascii_word(&mut x, w.len()).to_ascii_lowercase();
        assert_eq!(same_bytes_folded::<true>(&other, &w), other == lower);
        for k in 0..w.len() {
            let mut v = lower.clone();
            v[k] = if v[k] == b'z' { b'0' } else { v[k] + 1 };
            assert!(!same_bytes_folded::<true>(&v, &w), "{w:?} at {k}");
        }
    }
    // the reference rule on arbitrary bytes: equal to `b` with `0x20` set in every byte
    for i in 0..20_000u64 {
        let mut y = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let n = (i % 37) as usize;
        let b: Vec<u8> = (0..n)
            .map(|_| {
                y ^= y << 13;
                y ^= y >> 7;
                y ^= y << 17;
                y as u8
            })
            .collect();
        let mut a: Vec<u8> = b.iter().map(|c| c | 0x20).collect();
        assert!(same_bytes_folded::<true>(&a, &b));
        if n > 0 {
            let k = (y >> 20) as usize % n;
            a[k] ^= 1 << ((y >> 40) % 8);
            assert_eq!(
                same_bytes_folded::<true>(&a, &b),
                a.iter().zip(&b).all(|(p, q)| *p == q | 0x20)
            );
        }
    }
}

#[test]
fn folded_lookup_finds_lowercase_words() {
    let mut cache = WordCache::default();
    let mut x = 3u64;
    let words: Vec<Vec<u8>> = (0..5000).map(|i| ascii_word(&mut x, 1 + i % 30)).collect();
    for (i, w) in words.iter().enumerate() {
        let lower = w.to_ascii_lowercase();
        if cache.find::<false>(word_hash(&lower), &lower).is_none() {
            cache.insert(word_hash(&lower), &lower, i as u32);
        }
    }
    for w in &words {
        let lower = w.to_ascii_lowercase();
        let want = cache.find::<false>(word_hash(&lower), &lower);
        assert!(want.is_some());
        assert_eq!(cache.find::<true>(word_hash_folded::<true>(w), w), want);
    }
    for _ in 0..5000 {
        let w = ascii_word(&mut x, 12);
        let lower = w.to_ascii_lowercase();
        assert_eq!(
            cache.find::<true>(word_hash_folded::<true>(&w), &w),
            cache.find::<false>(word_hash(&lower), &lower)
        );
    }
}

#[test]
fn terms_only_run_gives_the_same_terms() {
    let mut a = Analyzer::new();
    let mut b = Analyzer::new();
    let mut texts: Vec<String> = TRICKY.iter().map(|t| t.to_string()).collect();
    texts.extend((0..3000).map(|seed| jumble(seed, 1 + seed as usize % 60)));
    for _ in 0..2 {
        for t in &texts {
            let mut full = Vec::new();
            a.run_pieces([t.as_str(), "x Y", t.as_str()], |term, _, _, joined| {
                full.push((term, joined))
            });
            let mut terms = vec![7];
            b.run_pieces_terms([t.as_str(), "x Y", t.as_str()], &mut terms);
            assert_eq!(terms[0], 7, "appended");
            let full: Vec<(String, bool)> = full
                .into_iter()
                .map(|(t, j)| (a.term(t).to_string(), j))
                .collect();
            let terms: Vec<(String, bool)> = terms[1..]
                .iter()
                .map(|&x| (b.term(x & !JOINED).to_string(), x & JOINED != 0))
                .collect();
            assert_eq!(full, terms, "{t:?}");
        }
    }
    // same numbering too, when both analysers saw the same texts
    assert_eq!(a.terms_len(), b.terms_len());
    for t in 0..a.terms_len() as u32 {
        assert_eq!(a.term(t), b.term(t));
    }
}

#[test]
fn word_hash_spreads_short_words() {
    // every word of 0 to 3 letters: no two share a hash, nor the low 16 bits too often
    let mut words = vec![Vec::new()];
    let mut level = vec![Vec::new()];
    for _ in 0..3 {
        level = level
            .iter()
            .flat_map(|w: &Vec<u8>| {
                (b'a'..=b'z').map(move |c| {
                    let mut w = w.clone();
                    w.push(c);
                    w
                })
            })
            .collect();
        words.extend(level.iter().cloned());
    }
    let hashes: HashSet<u64> = words.iter().map(|w| word_hash(w)).collect();
    assert_eq!(hashes.len(), words.len());
    let low: HashSet<u64> = hashes.iter().map(|h| h & 0xffff).collect();
    assert!(
        low.len() > words.len() * 3 / 4,
        "{} of {}",
        low.len(),
        words.len()
    );
    assert_eq!(word_hash(b"same words"), word_hash(b"same words"));
}

#[test]
fn lower_run_end_matches_the_byte_rule() {
    let naive = |b: &[u8], mut j: usize| {
        while j < b.len() && (b[j].is_ascii_lowercase() || b[j].is_ascii_digit()) {
            j += 1;
        }
        j
    };
    let mut texts: Vec<Vec<u8>> = TRICKY.iter().map(|t| t.as_bytes().to_vec()).collect();
    texts.push(b"abcdefghijklmnopqrstuvwxyz0123456789abcdefgh".to_vec());
    texts.push(b"`{/:@[az09AZ".to_vec());
    texts.push((0..=255u8).collect());
    texts.push((0..=255u8).rev().collect());
    texts.push(b"".to_vec());
    for seed in 0..200 {
        texts.push(jumble(seed, 20).into_bytes());
    }
    for t in &texts {
        for j in 0..=t.len() {
            assert_eq!(lower_run_end(t, j), naive(t, j), "{t:?} at {j}");
        }
    }
    // every byte value right after a run of 8+ members
    for x in 0..=255u8 {
        let mut t = b"abcdefgh12".to_vec();
        t.push(x);
        t.extend_from_slice(b"zzzzzzzz");
        assert_eq!(lower_run_end(&t, 0), naive(&t, 0), "{x}");
        assert_eq!(lower_run_end(&t, 3), naive(&t, 3), "{x}");
    }
}

#[test]
fn same_bytes_compares_every_byte() {
    let words: Vec<Vec<u8>> = (0..=40)
        .map(|n| (0..n).map(|i| b'a' + (i % 26) as u8).collect())
        .collect();
    for w in &words {
        assert!(same_bytes(w, w));
        // a change at any position is seen
        for k in 0..w.len() {
            let mut v = w.clone();
            v[k] ^= 0x20;
            assert!(!same_bytes(w, &v), "{w:?} at {k}");
        }
        for v in &words {
            if v.len() != w.len() {
                assert!(!same_bytes(w, v));
            }
        }
    }
    assert!(same_bytes(b"", b""));
    assert!(!same_bytes("é".as_bytes(), "è".as_bytes()));
}

#[test]
fn hashed_tables_agree_with_the_lists() {
    for (alias, _) in crate::synonyms::ALIASES {
        assert_eq!(canonical(alias), crate::synonyms::canonical(alias));
    }
    for w in ["kubernetes", "", "k8", "k8ss", "K8s", "postgres", "db"] {
        assert_eq!(canonical(w), crate::synonyms::canonical(w), "{w}");
    }
    for (g, (last, _)) in phrase_groups().iter().enumerate() {
        assert_eq!(phrase_group_index().get(last), Some(&(g as u32)));
    }
    assert_eq!(phrase_group_index().len(), phrase_groups().len());
    assert!(is_rank_stop_word("the") && is_rank_stop_word("please"));
    assert!(!is_rank_stop_word("ai") && !is_rank_stop_word("postgres"));
    assert!(is_stop_word("le") && !is_stop_word("react"));
}

#[test]
fn recent_keeps_the_last_four() {
    let mut r = Recent::default();
    assert!(r.as_slice().is_empty());
    for t in 1..=3 {
        r.push(t);
    }
    assert_eq!(r.as_slice(), &[1, 2, 3]);
    r.push(4);
    r.push(5);
    r.push(6);
    assert_eq!(r.as_slice(), &[3, 4, 5, 6]);
    r.clear();
    r.push(9);
    assert_eq!(r.as_slice(), &[9]);
}

#[test]
fn stemming() {
    assert_eq!(stem("migrations"), "migrat");
    assert_eq!(stem("migrating"), "migrat");
    assert_eq!(stem("k8s"), "k8s");
    assert_eq!(stem("fp16"), "fp16");
    assert_eq!(stem("css"), "css");
}

#[test]
fn analyze_joins_compounds_and_stems() {
    let terms: Vec<String> = analyze("Pre-training the models")
        .into_iter()
        .map(|t| t.term)
        .collect();
    assert_eq!(terms, vec!["pre", "train", "pretrain", "model"]);
    let t = analyze("I need help with fine-tuning");
    let terms: Vec<&str> = t.iter().map(|t| t.term.as_str()).collect();
    assert_eq!(terms, vec!["fine", "tune", "finetun"]);
    assert!(t[2].joined);
}

#[test]
fn analyze_aliases_phrases_numbers() {
    let terms: Vec<String> = analyze("Deploy to k8s, review 2 pull requests")
        .into_iter()
        .map(|t| t.term)
        .collect();
    assert_eq!(
        terms,
        vec!["deploy", "kubernet", "review", "pull", "request", "pr"]
    );
    let t = analyze("end-to-end");
    let terms: Vec<&str> = t.iter().map(|t| t.term.as_str()).collect();
    assert_eq!(terms, vec!["end", "end", "e2e", "endtoend"]);
}
