use super::*;

fn found(text: &str) -> Block<'_> {
    match split(text) {
        Split::Found(b) => b,
        other => panic!("expected frontmatter, got {other:?}"),
    }
}

fn parse_ok(text: &str) -> Mapping {
    let mut notes = Vec::new();
    parse(&found(text), &mut notes).expect("valid yaml")
}

#[test]
fn bom_and_crlf_are_normalised() {
    let mut notes = Vec::new();
    let text = decode(
        b"\xEF\xBB\xBF---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n",
        &mut notes,
    );
    assert!(notes.is_empty());
    assert_eq!(text, "---\nname: x\ndescription: d\n---\nbody\n");
    let b = found(&text);
    assert_eq!(b.yaml, "name: x\ndescription: d\n");
    assert_eq!(b.body, "body\n");
    assert_eq!(b.open_line, 1);
    assert_eq!(b.body_line, 5);
}

#[test]
fn mixed_line_endings() {
    let mut notes = Vec::new();
    let text = decode(
        b"---\nname: x\r\ndescription: d\r---\r\nA\nB\r\n",
        &mut notes,
    );
    assert_eq!(text, "---\nname: x\ndescription: d\n---\nA\nB\n");
    let m = parse_ok(&text);
    assert_eq!(
        get(&m, "description").and_then(scalar_string).as_deref(),
        Some("d")
    );
}

#[test]
fn invalid_utf8_is_replaced_with_a_located_warning() {
    let mut notes = Vec::new();
    let text = decode(b"---\ndescription: d\n---\nbad \xFF here\n", &mut notes);
    assert!(text.contains("bad \u{FFFD} here"));
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].line, Some(4));
    assert_eq!(notes[0].severity, Severity::Warning);
}

#[test]
fn leading_blank_line_is_accepted_and_counted() {
    let b = found("\n  \n---\ndescription: d\n---\nbody");
    assert_eq!(b.leading_blank_lines, 2);
    assert_eq!(b.open_line, 3);
    assert_eq!(b.body, "body");
}

#[test]
fn horizontal_rule_in_body_is_body() {
    let b = found("---\ndescription: d\n---\nintro\n\n---\n\nmore\n---\n");
    assert_eq!(b.yaml, "description: d\n");
    assert_eq!(b.body, "intro\n\n---\n\nmore\n---\n");
}

#[test]
fn fence_with_trailing_spaces() {
    let b = found("---  \ndescription: d\n--- \t\nbody");
    assert_eq!(b.yaml, "description: d\n");
    assert_eq!(b.body, "body");
}

#[test]
fn indented_fence_inside_block_scalar_is_yaml() {
    let text = "---\ndescription: |\n  first\n  ---\n  after\nname: x\n---\nbody\n";
    let b = found(text);
    assert_eq!(b.body, "body\n");
    let m = parse_ok(text);
    assert_eq!(
        get(&m, "description").and_then(scalar_string).as_deref(),
        Some("first\n---\nafter\n")
    );
}

#[test]
fn block_scalars_and_wrapped_plain_descriptions() {
    let m = parse_ok(
        "---\na: |-\n  one\n  two\nb: >\n  folded\n  text\nc: >-\n  x\n  y\nd: plain text\n  wrapped over\n  three lines\n---\n",
    );
    let s = |k| get(&m, k).and_then(scalar_string).unwrap();
    assert_eq!(s("a"), "one\ntwo");
    assert_eq!(s("b"), "folded text\n");
    assert_eq!(s("c"), "x y");
    assert_eq!(s("d"), "plain text wrapped over three lines");
}

#[test]
fn numbers_dates_nulls_in_json_and_typed_reads() {
    let m = parse_ok(
        "---\nversion: 2.0\ncount: 3\ndate: 2024-01-15\nnothing: null\ntilde: ~\nflag: yes\n1: one\ntrue: t\nlist: [a, 2, null]\nmeta:\n  k: v\n---\n",
    );
    assert_eq!(
        to_json(&m),
        r#"{"version":2.0,"count":3,"date":"2024-01-15","nothing":null,"tilde":null,"flag":"yes","1":"one","true":"t","list":["a",2,null],"meta":{"k":"v"}}"#
    );
    assert_eq!(
        get(&m, "version").and_then(scalar_string).as_deref(),
        Some("2.0")
    );
    assert_eq!(
        get(&m, "count").and_then(scalar_string).as_deref(),
        Some("3")
    );
    assert!(get(&m, "nothing").is_none());
    assert!(get(&m, "absent").is_none());
    assert_eq!(string_list(get(&m, "list").unwrap()), vec!["a", "2"]);
    assert_eq!(boolean(get(&m, "flag").unwrap()), Some(true));
    // The JSON is valid.
    let v: serde_json::Value = serde_json::from_str(&to_json(&m)).unwrap();
    assert_eq!(v["version"], serde_json::json!(2.0));
}

#[test]
fn lenient_lists_and_integers() {
    let m = parse_ok(
        "---\nk1: [react, ' hooks ', '']\nk2: \"react, hooks\"\nk3: single\nk4: 42\np1: 5\np2: '7'\np3: 2.9\np4: high\n---\n",
    );
    assert_eq!(string_list(get(&m, "k1").unwrap()), vec!["react", "hooks"]);
    assert_eq!(string_list(get(&m, "k2").unwrap()), vec!["react", "hooks"]);
    assert_eq!(string_list(get(&m, "k3").unwrap()), vec!["single"]);
    assert_eq!(string_list(get(&m, "k4").unwrap()), vec!["42"]);
    assert_eq!(integer(get(&m, "p1").unwrap()), Some(5));
    assert_eq!(integer(get(&m, "p2").unwrap()), Some(7));
    assert_eq!(integer(get(&m, "p3").unwrap()), Some(2));
    assert_eq!(integer(get(&m, "p4").unwrap()), None);
}

#[test]
fn invalid_yaml_is_located_in_the_file() {
    // Blank line first: fence on line 2, the bad `: ` on YAML line 2 = file line 4.
    let text = "\n---\nname: x\ndescription: Use this: when things break\n---\nbody";
    let mut notes = Vec::new();
    let err = parse(&found(text), &mut notes).unwrap_err();
    assert_eq!(err.line, Some(4));
    assert_eq!(err.severity, Severity::Error);
    assert!(
        err.message.starts_with("invalid YAML in the frontmatter: "),
        "{}",
        err.message
    );
    assert!(err.message.contains("line 4"), "{}", err.message);
}

#[test]
fn absurd_nesting_is_refused_fast_and_located() {
    // 80 KB of `[` kept serde_yaml busy for the engine's whole deadline (quadratic).
    let text = format!(
        "\n---\nname: x\ndescription: {}\n---\nbody",
        "[".repeat(80 * 1024)
    );
    let started = std::time::Instant::now();
    let err = parse(&found(&text), &mut Vec::new()).unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_millis(500));
    assert_eq!(err.line, Some(4));
    assert_eq!(err.severity, Severity::Error);
    assert!(
        err.message.contains("deeper than 64 levels"),
        "{}",
        err.message
    );
    // Deep block nesting too.
    let mut yaml = String::new();
    for i in 0..200 {
        yaml.push_str(&format!("{}k{i}:\n", " ".repeat(i)));
    }
    let text = format!("---\n{yaml}---\n");
    let err = parse(&found(&text), &mut Vec::new()).unwrap_err();
    assert_eq!(err.line, Some(66));
}

#[test]
fn non_mapping_frontmatter_is_an_error() {
    let mut notes = Vec::new();
    let err = parse(&found("---\n- a\n- b\n---\n"), &mut notes).unwrap_err();
    assert!(
        err.message.contains("list, not a mapping"),
        "{}",
        err.message
    );
    assert!(
        parse(&found("---\n---\nbody"), &mut notes)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn no_frontmatter_and_unclosed() {
    assert_eq!(
        split("# Title\n---\n"),
        Split::None {
            body: "# Title\n---\n"
        }
    );
    assert_eq!(split(""), Split::None { body: "" });
    assert_eq!(
        split("----\nx\n----\n"),
        Split::None {
            body: "----\nx\n----\n"
        }
    );
    assert_eq!(split("---\nname: x\n"), Split::Unclosed { open_line: 1 });
    assert_eq!(body_of("---\na: 1\n---\nB"), "B");
    assert_eq!(body_of("plain"), "plain");
}

#[test]
fn control_characters_are_replaced_with_a_warning() {
    let text = "---\nname: x\ndescription: smart\u{92}quote\n---\n";
    let mut notes = Vec::new();
    let m = parse(&found(text), &mut notes).unwrap();
    assert_eq!(
        get(&m, "description").and_then(scalar_string).as_deref(),
        Some("smart\u{FFFD}quote")
    );
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].line, Some(3));
    // Emoji, CJK and zero-width joiners are fine.
    let mut notes = Vec::new();
    let m = parse(
        &found("---\ndescription: 👩\u{200D}💻 日本語\n---\n"),
        &mut notes,
    )
    .unwrap();
    assert!(notes.is_empty());
    assert_eq!(
        get(&m, "description").and_then(scalar_string).as_deref(),
        Some("👩\u{200D}💻 日本語")
    );
}

#[test]
fn key_lines() {
    let b = found("\n---\nname: x\n\"description\": d\n---\n");
    assert_eq!(key_line(&b, "name"), Some(3));
    assert_eq!(key_line(&b, "description"), Some(4));
    assert_eq!(key_line(&b, "keywords"), None);
}

#[test]
fn headings_outside_code() {
    let body = "# Title\ntext\n## Sub ##\n```\n# not a heading\n```\n#nospace\n    # indented code\n~~~~\n# no\n~~~~\n### Three\n";
    assert_eq!(headings(body, 1000), "Title\nSub\nThree");
    assert_eq!(headings(body, 9), "Title\nSub");
}

use super::yaml_eq::same;

/// The fast path accepts `yaml` and gives what serde_yaml gives.
fn simple_ok(yaml: &str) -> Mapping {
    let fast = parse_simple(yaml).unwrap_or_else(|| panic!("refused: {yaml:?}"));
    let slow = serde_yaml::from_str::<Value>(yaml).expect("serde_yaml reads it");
    let fast = Value::Mapping(fast);
    assert!(same(&fast, &slow), "{yaml:?}\nfast {fast:?}\nslow {slow:?}");
    match fast {
        Value::Mapping(m) => m,
        _ => unreachable!(),
    }
}

fn s(v: &str) -> Value {
    Value::String(v.into())
}

fn map(entries: &[(&str, Value)]) -> Value {
    Value::Mapping(
        entries
            .iter()
            .map(|(k, v)| (s(k), v.clone()))
            .collect::<Mapping>(),
    )
}

fn seq(items: &[&str]) -> Value {
    Value::Sequence(items.iter().map(|i| s(i)).collect())
}

#[test]
fn simple_flat_plain_scalars_keep_order() {
    let m = simple_ok(
        "name: pdf-tools\ndescription: Use when no, \"quoted\" words, a:b, C# and 50% ok\nallowed_tools: Read, Write\nhint: <feature|bug> <name>\nz.key/x-y: é unicode 👩‍💻  inner  spaces   \n",
    );
    assert_eq!(
        Value::Mapping(m),
        map(&[
            ("name", s("pdf-tools")),
            (
                "description",
                s("Use when no, \"quoted\" words, a:b, C# and 50% ok")
            ),
            ("allowed_tools", s("Read, Write")),
            ("hint", s("<feature|bug> <name>")),
            ("z.key/x-y", s("é unicode 👩‍💻  inner  spaces")),
        ])
    );
    let keys: Vec<_> = simple_ok("b: x\na: why\nc: z\n")
        .keys()
        .map(|k| k.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(keys, ["b", "a", "c"]);
}

#[test]
fn simple_wrapped_plain_scalars_fold() {
    let m = simple_ok(
        "description: first line\n  second   \n     third\n\n  after blank\n\n\n  two blanks\nname: x\n",
    );
    assert_eq!(
        m.get("description"),
        Some(&s("first line second third\nafter blank\n\ntwo blanks"))
    );
    assert_eq!(m.get("name"), Some(&s("x")));
    let m = simple_ok("meta:\n  d: one\n   two\n  e: f\n");
    assert_eq!(
        Value::Mapping(m),
        map(&[("meta", map(&[("d", s("one two")), ("e", s("f"))]))])
    );
}

#[test]
fn simple_quoted_scalars() {
    let m = simple_ok(concat!(
        "a: 'it''s: #1, [x] & *y'\n",
        "b: \"tab\\there \\\"q\\\" \\\\ \\/ \\n \\x41\\u00e9\\U0001F600 \\_ \\0 \\e \\N \\L \\P \\a \\b \\v \\f \\r \\ \"\n",
        "c: ''\n",
        "d: \"\"\n",
        "e: '  padded  '   \n",
        "f: \"null\"\n",
        "g: '123'\n",
    ));
    assert_eq!(m.get("a"), Some(&s("it's: #1, [x] & *y")));
    assert_eq!(
        m.get("b"),
        Some(&s(
            "tab\there \"q\" \\ / \n Aé😀 \u{A0} \0 \u{1B} \u{85} \u{2028} \u{2029} \u{7} \u{8} \u{B} \u{C} \r  "
        ))
    );
    assert_eq!(m.get("c"), Some(&s("")));
    assert_eq!(m.get("d"), Some(&s("")));
    assert_eq!(m.get("e"), Some(&s("  padded  ")));
    assert_eq!(m.get("f"), Some(&s("null")));
    assert_eq!(m.get("g"), Some(&s("123")));
}

#[test]
fn simple_block_scalars() {
    let m = simple_ok(concat!(
        "lit: |\n  one\n    indented\n\n  two  \n\n\n",
        "strip: |-\n  a\n  b\n\n",
        "keep: |+\n  a\n\n\n",
        "fold: >\n  folded\n  text\n\n  para\n\n\n  two\n",
        "fold_strip: >-\n  x\n  y\n",
        "fold_keep: >+\n  x\n  y\n\n",
        "lead: |\n\n  after blank\n",
        "deep: |\n      six\n      spaces\n",
        "hash: |\n  # not a comment\n  ---\n",
        "last: >\n  end\n",
    ));
    let g = |k: &str| m.get(k).and_then(Value::as_str).unwrap().to_owned();
    assert_eq!(g("lit"), "one\n  indented\n\ntwo  \n");
    assert_eq!(g("strip"), "a\nb");
    assert_eq!(g("keep"), "a\n\n\n");
    assert_eq!(g("fold"), "folded text\npara\n\ntwo\n");
    assert_eq!(g("fold_strip"), "x y");
    assert_eq!(g("fold_keep"), "x y\n\n");
    assert_eq!(g("lead"), "\nafter blank\n");
    assert_eq!(g("deep"), "six\nspaces\n");
    assert_eq!(g("hash"), "# not a comment\n---\n");
    assert_eq!(g("last"), "end\n");
}

#[test]
fn simple_nesting_lists_nulls_and_comments() {
    let m = simple_ok(concat!(
        "# leading comment\n",
        "\n",
        "name: x\n",
        "metadata:\n",
        "  author: 'someone'\n",
        "    # indented comment (after a plain scalar: refused)\n",
        "# column-0 comment inside\n",
        "  nested:\n",
        "    deeper: value\n",
        "    tags: [a, 'b, c', \"d\"]\n",
        "  empty:\n",
        "tags:\n",
        "  - one\n",
        "  -   'two'\n",
        "  - \"three\"\n",
        "compact:\n",
        "- p\n",
        "- q r\n",
        "none:\n",
        "flow: []\n",
        "flow2: [ spaced item ,x ]\n",
        "last:\n",
    ));
    assert_eq!(
        Value::Mapping(m),
        map(&[
            ("name", s("x")),
            (
                "metadata",
                map(&[
                    ("author", s("someone")),
                    (
                        "nested",
                        map(&[("deeper", s("value")), ("tags", seq(&["a", "b, c", "d"]))])
                    ),
                    ("empty", Value::Null),
                ])
            ),
            ("tags", seq(&["one", "two", "three"])),
            ("compact", seq(&["p", "q r"])),
            ("none", Value::Null),
            ("flow", seq(&[])),
            ("flow2", seq(&["spaced item", "x"])),
            ("last", Value::Null),
        ])
    );
}

#[test]
fn simple_lists_of_mappings() {
    let m = simple_ok(concat!(
        "assets:\n",
        "  - file: assets/a.json\n",
        "    description: wrapped\n",
        "      over two lines\n",
        "    type: schema\n",
        "  -   file: b\n",
        "      args:\n",
        "        - name: message\n",
        "          required:\n",
        "scripts:\n",
        "- file: c\n",
        "  exec: |\n",
        "    run\n",
        "- key:value\n",
        "- http://x.y\n",
    ));
    assert_eq!(
        Value::Mapping(m),
        map(&[
            (
                "assets",
                Value::Sequence(vec![
                    map(&[
                        ("file", s("assets/a.json")),
                        ("description", s("wrapped over two lines")),
                        ("type", s("schema")),
                    ]),
                    map(&[
                        ("file", s("b")),
                        (
                            "args",
                            Value::Sequence(vec![map(&[
                                ("name", s("message")),
                                ("required", Value::Null),
                            ])])
                        ),
                    ]),
                ])
            ),
            (
                "scripts",
                Value::Sequence(vec![
                    map(&[("file", s("c")), ("exec", s("run\n"))]),
                    s("key:value"),
                    s("http://x.y"),
                ])
            ),
        ])
    );
}

#[test]
fn simple_refuses_what_it_is_not_sure_of() {
    let refused = [
        "",
        "\n",
        "# only a comment\n",
        "name: x",                     // no final newline
        "  name: x\n",                 // indented top level
        "name: x\nname: y\n",          // duplicate key
        "a: &anchor x\nb: *anchor\n",  // anchor
        "a: x\nb: *x\n",               // alias
        "a: !tag x\n",                 // tag
        "? a\n: b\n",                  // complex key
        "'quoted key': x\n",           // quoted key
        "a key: x\n",                  // key with a space
        "1: one\n",                    // numeric key
        "true: t\n",                   // boolean key
        "Null: t\n",                   // null key
        "key:value\n",                 // no space after the colon
        "a: 1\n",                      // number
        "a: 2.0\n",                    // float
        "a: 2024-01-15\n",             // date-like
        "a: -x\n",                     // dash
        "a: .inf\n",                   // dot
        "a: +1\n",                     // plus
        "a: ~\n",                      // null
        "a: null\n",                   // null
        "a: NULL\n",                   // null
        "a: true\n",                   // boolean
        "a: False\n",                  // boolean
        "a: yes\n",                    // YAML 1.1 boolean
        "a: Off\n",                    // YAML 1.1 boolean
        "a: nan\n",                    // special float word
        "a: {k: v}\n",                 // flow mapping
        "a: @x\n",                     // reserved
        "a: `x`\n",                    // reserved
        "a: %x\n",                     // directive-like
        "a: x # comment\n",            // trailing comment
        "a: 'x' # comment\n",          // trailing comment after a quoted scalar
        "a: x: y\n",                   // nested colon
        "a: ends with:\n",             // trailing colon
        "a: x\n  b: y\n",              // continuation that is a mapping
        "a: x\n  - y\n",               // continuation starting with an indicator
        "a: x\n  # comment\n  more\n", // comment inside a plain scalar
        "a: x\n  # comment\nb: y\n",   // comment more indented after a plain scalar
        "a:\tx\n",                     // tab
        "a: x\r\n",                    // carriage return
        "a: x\u{85}y\n",               // NEL
        "a: x\u{2028}y\n",             // line separator
        "a: \u{FEFF}x\n",              // BOM
        "a: 'multi\n  line'\n",        // multi-line quoted
        "a: \"multi\n  line\"\n",      // multi-line quoted
        "a: \"esc \\q\"\n",            // unknown escape
        "a: \"\\ud800\"\n",            // surrogate escape
        "a: \"cont \\\n  x\"\n",       // escaped line break
        "a: 'x' y\n",                  // text after a quoted scalar
        "a: |2\n  x\n",                // explicit indentation
        "a: | # c\n  x\n",             // comment after a header
        "a: |\nb: x\n",                // empty block scalar
        "a: |\n",                      // empty block scalar at the end
        "a: |\n    \n  x\n",           // leading blank line more indented
        "a: |\n  x\n     \n  y\n",     // blank line more indented than content
        "a: >\n  x\n    more\n",       // more-indented line in a folded scalar
        "a: |\n  x\n y\n",             // odd dedent after a block scalar
        "a: [x, [y]]\n",               // nested flow list
        "a: [x, y\n  ]\n",             // multi-line flow list
        "a: [x, y,]\n",                // trailing comma
        "a: [x, ]\n",                  // trailing comma
        "a: [x, 1]\n",                 // number item
        "a: [x] y\n",                  // text after a flow list
        "a: [x #y]\n",                 // comment-like item
        "a: [k: v]\n",                 // flow pair
        "a:\n  - 1\n",                 // number item
        "a:\n  -\n",                   // empty item
        "a:\n  - k: v\n     j: w\n",   // mapping item with keys out of line
        "a:\n  - k: v\n   j: w\n",     // mapping item with keys out of line
        "a:\n  - k: v\n    k: w\n",    // duplicate key in a mapping item
        "a:\n  - 'k': v\n",            // quoted key in a mapping item
        "a:\n  - - x\n",               // nested list
        "a:\n  - x\n    y\n",          // multi-line item
        "a:\n  - x\n  b: y\n",         // mapping after a non-compact list
        "a:\n  b: x\n c: y\n",         // odd dedent
        "a:\n  b: x\n    c: y\n",      // odd indent
        "a:\n  plain text\n",          // scalar on the next line
        "- a\n- b\n",                  // top-level list
        "a: x\n--- y\n",               // document marker
        "a: x\n...\n",                 // document end
        "%YAML 1.2\na: x\n",           // directive
        "<<: *base\n",                 // merge key
        "a: <<\n",                     // merge-like value
        "a: << x\n",                   // merge-like value
    ];
    for yaml in refused {
        assert!(parse_simple(yaml).is_none(), "accepted {yaml:?}");
    }
}

/// What `parse` gives does not depend on the fast path: its result is what serde_yaml
/// gives (control characters cleaned first, with notes), and errors still come from it.
#[test]
fn parse_with_fast_path_matches_serde_yaml() {
    let text = "---\nname: x\ndescription: smart\u{92}quote\ntags: [a, b]\n---\n";
    let mut notes = Vec::new();
    let m = parse(&found(text), &mut notes).unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(m.get("description"), Some(&s("smart\u{FFFD}quote")));
    assert!(parse_simple("name: x\ndescription: smart\u{92}quote\n").is_none());
    let text = "---\nname: x\nname: y\n---\n";
    let err = parse(&found(text), &mut Vec::new()).unwrap_err();
    assert!(
        err.message.contains("duplicate entry with key \"name\""),
        "{}",
        err.message
    );
}

#[test]
fn all_printable_matches_yaml_printable_on_every_char() {
    let mut buf = [0u8; 4];
    for cp in 0..=0x10FFFFu32 {
        let Some(c) = char::from_u32(cp) else {
            continue;
        };
        let one = c.encode_utf8(&mut buf);
        assert_eq!(all_printable(one), yaml_printable(c), "U+{cp:04X}");
    }
    assert!(all_printable("ok é 👩‍💻\t\n"));
    assert!(!all_printable("ok \u{9F} é"));
}

/// A small deterministic random generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// Random documents built from the constructs of real frontmatter, near misses included:
/// whenever the fast path accepts one, serde_yaml must give the same value.
#[test]
fn simple_agrees_with_serde_yaml_on_random_documents() {
    let keys = [
        "name",
        "description",
        "a",
        "b",
        "tags",
        "meta",
        "x_y",
        "k-1",
        "c",
        "d",
        "e",
        "f",
        "g",
        "h",
        "i",
        "j",
        "k",
        "l",
        "m",
        "o",
        "p",
        "q",
        "r",
        "s",
        "t",
        "u",
        "v",
        "w",
        "Yes",
    ];
    let scalars = [
        "plain",
        "two words",
        "plain",
        "with: colon",
        "a:b",
        "C# x",
        "x #y",
        "é ü",
        "yes",
        "no",
        "Null",
        "1.0",
        "0x1F",
        "-x",
        "x -",
        "'q'",
        "'it''s'",
        "\"d\\\"q\"",
        "\"\\u00e9\\t\"",
        "\"\\ud83d\"",
        "[a, b]",
        "[]",
        "[a,b ]",
        "['x, y', z]",
        "[a, 1]",
        "[ a , 'b' ]",
        "{a: b}",
        "&a x",
        "*a",
        "!t x",
        "x  ",
        "~",
        "true",
        "ends:",
        "100%",
        "a\"b",
        "a'b",
        "<x>",
        "@x",
        "`x`",
        "'a' 'b'",
        "'' ",
        "\"\"",
        "|",
        "|-",
        "|+",
        ">",
        ">-",
        ">+",
        "|2",
        "| #c",
        "",
        "",
        "",
    ];
    let good = [
        "plain",
        "two words",
        "'q'",
        "\"d\\\"q\"",
        "[a, b]",
        "|",
        "|-",
        ">",
        "",
        "",
    ];
    let texts = [
        "more",
        "more text",
        "x",
        "é",
        "# hash",
        "---",
        "- dash",
        "k: v",
        "'q'",
        "[x]",
        "a  b",
        "ends:",
        "~",
        "x #c",
        "tail  ",
        "no",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut accepted, mut total) = (0, 0);
    // Constructs the accepted documents must cover.
    type Feature = fn(&str) -> bool;
    let features: [(&str, Feature); 8] = [
        ("mapping item", |d| d.contains("- k:") || d.contains("- j:")),
        ("literal", |d| d.contains(": |\n")),
        ("folded", |d| d.contains(": >\n")),
        ("strip", |d| d.contains(": |-\n")),
        ("nested", |d| d.contains(":\n  ") && d.contains("\n  e")),
        ("flow", |d| d.contains("[a, b]")),
        ("wrapped", |d| d.contains("plain\n  ")),
        ("comment", |d| d.contains("# c\n")),
    ];
    let mut covered = [0usize; 8];
    for _ in 0..200_000 {
        let mut doc = String::new();
        // Indentation of the current mapping, and of its parent's keys.
        let mut levels = vec![0usize];
        for _ in 0..1 + rng.next() % 6 {
            if rng.one_in(8) {
                doc.push_str(rng.pick(&["\n", "  \n", "# c\n", "  # c\n", "- x\n", " \n"]));
            }
            if levels.len() > 1 && rng.one_in(3) {
                levels.pop();
            }
            let ind = *levels.last().unwrap() + usize::from(rng.one_in(40));
            let pad = " ".repeat(ind);
            let key = rng.pick(&keys);
            let value = if rng.one_in(4) {
                rng.pick(&scalars)
            } else {
                rng.pick(&good)
            };
            doc.push_str(&pad);
            doc.push_str(key);
            doc.push(':');
            if !value.is_empty() {
                doc.push_str(rng.pick(&[" ", " ", "  "]));
                doc.push_str(value);
            }
            doc.push('\n');
            let step = *rng
                .pick(&["2", "2", "4", "1", "3"])
                .as_bytes()
                .first()
                .unwrap() as usize
                - b'0' as usize;
            let child = " ".repeat(ind + step);
            let wraps = value.starts_with(['|', '>']) || value.starts_with(char::is_alphabetic);
            let roll = rng.next() % if wraps { 4 } else { 12 };
            match (value, roll) {
                ("", 0) => levels.push(ind + step),
                ("", 1 | 2) => {
                    // A list, indented or compact.
                    let at = if rng.one_in(2) { &child } else { &pad };
                    for _ in 0..1 + rng.next() % 3 {
                        doc.push_str(at);
                        let dash = rng.pick(&["- ", "- ", "-  ", "-"]);
                        doc.push_str(dash);
                        if rng.one_in(2) {
                            // A mapping item, maybe with more keys or wrapped lines.
                            doc.push_str(rng.pick(&["k: ", "k:", "j: "]));
                            doc.push_str(rng.pick(&good));
                            doc.push('\n');
                            for _ in 0..rng.next() % 3 {
                                doc.push_str(at);
                                if rng.one_in(4) {
                                    doc.push_str(rng.pick(&["", " ", "   ", "    "]));
                                } else {
                                    doc.push_str(&" ".repeat(dash.len()));
                                }
                                doc.push_str(
                                    rng.pick(&["j: x", "l: 'y'", "m: [a]", "text", "- z"]),
                                );
                                doc.push('\n');
                            }
                            continue;
                        }
                        doc.push_str(rng.pick(&scalars));
                        doc.push('\n');
                    }
                }
                (_, 0 | 1) => {
                    // Continuation or content lines.
                    for _ in 0..1 + rng.next() % 4 {
                        match rng.next() % 6 {
                            0 => doc.push_str(rng.pick(&["", "  ", "      ", " "])),
                            1 => {
                                doc.push_str(&child);
                                doc.push_str("  ");
                                doc.push_str(rng.pick(&texts));
                            }
                            2 if rng.one_in(3) => {
                                doc.push_str(rng.pick(&["", " ", "   "]));
                                doc.push_str(rng.pick(&texts));
                            }
                            _ => {
                                doc.push_str(&child);
                                if rng.one_in(3) {
                                    doc.push_str(rng.pick(&texts));
                                } else {
                                    doc.push_str(rng.pick(&["text", "more words", "end  "]));
                                }
                            }
                        }
                        doc.push('\n');
                    }
                }
                _ => {}
            }
        }
        total += 1;
        if let Some(fast) = parse_simple(&doc) {
            accepted += 1;
            for (i, (_, f)) in features.iter().enumerate() {
                covered[i] += usize::from(f(&doc));
            }
            let slow = serde_yaml::from_str::<Value>(&doc)
                .unwrap_or_else(|e| panic!("{doc:?}: fast path accepted, serde_yaml: {e}"));
            let fast = Value::Mapping(fast);
            assert!(same(&fast, &slow), "{doc:?}\nfast {fast:?}\nslow {slow:?}");
        }
    }
    // The generator must exercise the fast path, not only its refusals.
    assert!(accepted * 10 > total, "{accepted} of {total} accepted");
    for ((name, _), n) in features.iter().zip(covered) {
        assert!(n > 100, "{name}: {n} accepted documents");
    }
    eprintln!("{accepted} of {total} random documents accepted, covering {covered:?}");
}

#[test]
fn headings_match_the_reference() {
    let cases = [
        "# Title\ntext\n## Sub ##\n```\n# not a heading\n```\n#nospace\n    # indented code\n~~~~\n# no\n~~~~\n### Three\n",
        "```\n# in\n``\n# still in\n````\n# out\n",
        "````\n# in\n```\n# still in\n`````\n# out\n",
        "~~~\n# in\n```\n# in\n~~~ \n# out\n",
        "~~~\n# in\n~~~ x\n# still in\n~~~\n# out\n",
        "```rust\n# in\n```\n# out\n",
        "   ```\n# in\n   ```\n# out\n    ```\n# not fence\n",
        "# CRLF\r\n## Two\r\n```\r\n# in\r\n```\r\n### Three ###\r\n",
        "# lone CR\r",
        "# é unicode ü #\n##\u{3000}ideographic space\u{3000}\n#\u{3000}x\n",
        "####### seven\n###### six\n#\tTab\n# trailing #s ###\n# C#\n# #\n#\n",
        " # one\n  # two\n   # three\n    # four\n\t# tab\n",
        "",
        "\n\n\n",
        "no headings at all\njust text",
        "# last line without newline",
        "``\n# two backticks are not a fence\n",
        "```\nunclosed\n# in\n",
        "~~~~~~\n~~~\n# in\n~~~~~~~~\n# out\n",
        "# a\n# bb\n# ccc\n# dddd\n# eeeee\n",
    ];
    for body in cases {
        for max in [0, 1, 3, 4, 6, 9, 12, 100, usize::MAX] {
            assert_eq!(
                headings(body, max),
                headings_reference(body, max),
                "{body:?} max {max}"
            );
        }
    }
    // Random bodies from tricky lines.
    let lines = [
        "# h",
        "## h2 ##",
        "```",
        "````",
        "~~~",
        "~~~~",
        "``` x",
        "   ```",
        "    ```",
        " # h",
        "    # h",
        "text",
        "",
        "#x",
        "####### h",
        "#\th",
        "# é",
        "\r",
        "# h\r",
        "~~~ ",
        "``",
    ];
    let mut rng = Rng(12345);
    for _ in 0..5_000 {
        let mut body = String::new();
        for _ in 0..rng.next() % 12 {
            body.push_str(rng.pick(&lines));
            body.push_str(rng.pick(&["\n", "\n", "\r\n"]));
        }
        if rng.one_in(2) {
            body.push_str(rng.pick(&lines));
        }
        let max = (rng.next() % 40) as usize;
        assert_eq!(
            headings(&body, max),
            headings_reference(&body, max),
            "{body:?}"
        );
    }
}

#[test]
fn find_markup_finds_the_first_hit() {
    let text = "abcdefgh#ijklmnop`qr~~~\u{e9}#";
    let b = text.as_bytes();
    for from in 0..=b.len() {
        let want = (from..b.len()).find(|&j| matches!(b[j], b'#' | b'`' | b'~'));
        assert_eq!(find_markup(b, from), want, "from {from}");
    }
    // A hit after a byte equal to a searched byte plus one (no borrow false positives).
    let b = b"$$$$$$$$\x22#\x24`\x7F~\x01\x00";
    for from in 0..b.len() {
        let want = (from..b.len()).find(|&j| matches!(b[j], b'#' | b'`' | b'~'));
        assert_eq!(find_markup(b, from), want, "from {from}");
    }
    assert_eq!(find_markup(b"", 0), None);
    assert_eq!(find_markup(b"plain text without any", 0), None);
}

/// Every Markdown file of the corpus gives the same headings as the reference.
#[test]
#[ignore = "reads the corpus outside the repository; run with --ignored"]
fn headings_match_the_reference_on_the_corpus() {
    let mut stack = vec![std::path::PathBuf::from("/work/shared/corpora/combined")];
    let mut n = 0;
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                let text = decode(&std::fs::read(&p).unwrap(), &mut Vec::new());
                let body = body_of(&text);
                for max in [4096, 200, usize::MAX] {
                    assert_eq!(headings(body, max), headings_reference(body, max), "{p:?}");
                }
                n += 1;
            }
        }
    }
    eprintln!("{n} files");
}

#[test]
fn prefix_and_trim() {
    assert_eq!(prefix("héllo", 2), "h");
    assert_eq!(prefix("héllo", 3), "hé");
    assert_eq!(prefix("ab", 10), "ab");
    assert_eq!(trim_body("\n\n  code\nx  \n\n"), "  code\nx");
    assert_eq!(trim_body("\n \n"), "");
}

/// `metadata` is a map of strings: a value keeps the text it was written as.
#[test]
fn metadata_values_keep_their_text() {
    let cases = [
        ("1.10", "1.10"),
        ("1.0", "1.0"),
        ("01", "01"),
        ("2.0.0", "2.0.0"),
        ("'1.10'", "1.10"),
        ("\"1.10\"", "1.10"),
        ("true", "true"),
        ("2024-01-15", "2024-01-15"),
        ("0x1F", "0x1F"),
        ("1e3", "1e3"),
        ("-0", "-0"),
        ("  3.10   # a comment", "3.10"),
    ];
    for (written, text) in cases {
        let m = parse_ok(&format!(
            "---\nname: x\ndescription: d\nmetadata:\n  author: me\n  version: {written}\n  tags: [a, 2]\n---\n"
        ));
        assert_eq!(version(&m).as_deref(), Some(text), "version: {written}");
        let Some(Value::Mapping(meta)) = get(&m, "metadata") else {
            panic!("metadata is a mapping");
        };
        // Every scalar of `metadata` is a string; other values keep their shape.
        assert_eq!(get(meta, "version"), Some(&Value::String(text.into())));
        assert_eq!(string_list(get(meta, "tags").unwrap()), vec!["a", "2"]);
        // The JSON form carries the text too.
        let v: serde_json::Value = serde_json::from_str(&to_json(&m)).unwrap();
        assert_eq!(v["metadata"]["version"], serde_json::json!(text));
    }
    // Other metadata numbers and booleans keep their text, and lenient reads still work.
    let m = parse_ok(
        "---\nname: x\nmetadata:\n  priority: 5\n  beta: yes\n  on: true\n  n: 1.50\n---\n",
    );
    let Some(Value::Mapping(meta)) = get(&m, "metadata") else {
        panic!("metadata is a mapping");
    };
    assert_eq!(integer(get(meta, "priority").unwrap()), Some(5));
    assert_eq!(boolean(get(meta, "on").unwrap()), Some(true));
    assert_eq!(
        get(meta, "n").and_then(scalar_string).as_deref(),
        Some("1.50")
    );
    assert_eq!(
        get(meta, "beta").and_then(scalar_string).as_deref(),
        Some("yes")
    );
    // An alias to a number keeps the anchored text.
    let m = parse_ok("---\nname: x\nbase: &v 1.10\nmetadata:\n  version: *v\n---\n");
    assert_eq!(version(&m).as_deref(), Some("1.10"));
    // Top-level fields keep YAML's types; a top-level `version` is not the skill's version.
    let m = parse_ok("---\nname: x\nversion: 1.10\n---\n");
    assert_eq!(to_json(&m), r#"{"name":"x","version":1.1}"#);
    assert_eq!(version(&m), None);
    // Absent, null, empty and non-scalar versions are no version.
    for yaml in [
        "metadata:\n  author: me",
        "metadata:\n  version:",
        "metadata:\n  version: ~",
        "metadata:\n  version: ''",
        "metadata:\n  version: [1, 2]",
        "metadata: 1.10",
    ] {
        let m = parse_ok(&format!("---\nname: x\n{yaml}\n---\n"));
        assert_eq!(version(&m), None, "{yaml}");
    }
}
