//! Index tests: the reference tables and examples of discovery, matching, inheritance and assets end to end, both skill shapes, several
//! roots, and the query API.

use super::*;
use std::collections::HashMap;

/// One root in memory: its name and its files (path, bytes).
type MemRoot = (String, Vec<(String, Vec<u8>)>);

/// Files in memory, per root.
#[derive(Default, Clone)]
pub(super) struct Mem {
    roots: Vec<MemRoot>,
}

impl Mem {
    pub(super) fn root(mut self, name: &str, files: &[(&str, &str)]) -> Self {
        self.roots.push((
            name.into(),
            files
                .iter()
                .map(|(p, c)| (p.to_string(), c.as_bytes().to_vec()))
                .collect(),
        ));
        self
    }

    /// Register every root and its files in `idx` (the caller finishes).
    pub(super) fn add_to(&self, idx: &mut Index) {
        for (root, (name, files)) in self.roots.iter().enumerate() {
            let listing = files
                .iter()
                .map(|(p, c)| Entry {
                    path: p.clone(),
                    kind: EntryKind::File,
                    size: c.len() as u64,
                })
                .collect();
            let wanted = idx.add_root(name, listing).expect("a valid listing");
            let by_path: HashMap<&str, &Vec<u8>> =
                files.iter().map(|(p, c)| (p.as_str(), c)).collect();
            let data = wanted
                .iter()
                .map(|p| FileData {
                    path: p.clone(),
                    bytes: by_path[p.as_str()].clone(),
                })
                .collect();
            idx.add_files(root as u32, data)
                .expect("the files asked for");
        }
    }

    fn index_with(&self, config: EngineConfig) -> Index {
        let mut idx = Index::new(config);
        self.add_to(&mut idx);
        idx.finish().expect("finished once");
        idx
    }

    pub(super) fn index(&self) -> Index {
        self.index_with(EngineConfig::default())
    }
}

impl Files for Mem {
    fn read(&self, root: u32, path: &str) -> Result<Vec<u8>, String> {
        self.roots
            .get(root as usize)
            .and_then(|(_, files)| files.iter().find(|(p, _)| p == path))
            .map(|(_, c)| c.clone())
            .ok_or_else(|| format!("{path}: no such file"))
    }
}

/// The spec's running example (sections 4, 6, 7).
fn spec_tree() -> Mem {
    Mem::default().root(
        "skills",
        &[
            (
                "_root.md",
                "---\ndescription: Global rules\nkeywords: [global]\nassets:\n  - file: global.css\n    description: Global styles\n---\n\nGlobal rules\n",
            ),
            ("_root/global.css", "body{}"),
            (
                "ui/_index.md",
                "---\ndescription: UI rules\nkeywords: [ui]\nassets: [{file: design-tokens.json}]\n---\nUI rules\n",
            ),
            ("ui/_index/design-tokens.json", "{}"),
            (
                "ui/react/_index.md",
                "---\ndescription: React rules\nkeywords: [react]\nassets:\n  - file: component-base.tsx\n    description: parent base\n    type: template\n---\nReact rules\n",
            ),
            ("ui/react/_index/component-base.tsx", "base"),
            (
                "ui/react/auth.md",
                "---\ndescription: React authentication components and patterns\nkeywords: [react, auth, component, login]\npriority: 5\nassets:\n  - file: assets/AuthProvider.tsx.template\n    description: Provider\n    type: template\n  - file: component-base.tsx\n    description: auth base\nscripts:\n  - file: scripts/scaffold-auth.sh\n    description: Scaffold\n    execution: server\n    args:\n      - name: target\n        description: Where\n---\n\n# Auth\n\nAuth rules\n",
            ),
            ("ui/react/auth/assets/AuthProvider.tsx.template", "import React"),
            ("ui/react/auth/component-base.tsx", "auth base"),
            ("ui/react/auth/scripts/scaffold-auth.sh", "#!/bin/sh"),
            (
                "no-inherit.md",
                "---\ndescription: Standalone rules\nkeywords: [standalone]\ninherit: false\n---\nOnly mine\n",
            ),
            ("README.md", "# Plain docs, no frontmatter\n"),
        ],
    )
}

fn paths_of(idx: &Index) -> Vec<String> {
    idx.skills().into_iter().map(|s| s.skill_path).collect()
}

fn report<'a>(reports: &'a [FileReport], root: u32, path: &str) -> &'a FileReport {
    reports
        .iter()
        .find(|r| r.root == root && r.path == path)
        .unwrap_or_else(|| panic!("no report for {root}:{path}"))
}

#[test]
fn spec_tree_skills_parents_and_resource_dirs() {
    let idx = spec_tree().index();
    assert_eq!(
        paths_of(&idx),
        vec![
            "_root",
            "no-inherit",
            "ui/_index",
            "ui/react/_index",
            "ui/react/auth"
        ]
    );
    assert_eq!(idx.len(), 5);
    let parent = |p: &str| idx.get(p).unwrap().parent;
    // Spec 4.4 table.
    assert_eq!(parent("_root"), None);
    assert_eq!(parent("ui/_index").as_deref(), Some("_root"));
    assert_eq!(parent("ui/react/_index").as_deref(), Some("ui/_index"));
    assert_eq!(parent("ui/react/auth").as_deref(), Some("ui/react/_index"));
    assert_eq!(parent("no-inherit").as_deref(), Some("_root"));
    // Spec 4.5 table.
    let rdir = |p: &str| idx.get(p).unwrap().resource_dir;
    assert_eq!(rdir("ui/react/auth").as_deref(), Some("ui/react/auth"));
    assert_eq!(rdir("ui/_index").as_deref(), Some("ui/_index"));
    assert_eq!(rdir("_root").as_deref(), Some("_root"));
    assert_eq!(rdir("no-inherit"), None);
    // Defaults and typed fields.
    let auth = idx.get("ui/react/auth").unwrap();
    assert_eq!(auth.shape, SkillShape::Hierarchical);
    assert_eq!(auth.name, "auth");
    assert_eq!(auth.file, "ui/react/auth.md");
    assert_eq!(auth.priority, 5);
    assert!(auth.inherit);
    assert_eq!(auth.keywords, vec!["react", "auth", "component", "login"]);
    assert_eq!(auth.asset_count, 2);
    assert_eq!(auth.script_count, 1);
    assert!(!idx.get("no-inherit").unwrap().inherit);
    assert_eq!(idx.get("ui/_index").unwrap().name, "ui");
    assert_eq!(idx.get("_root").unwrap().priority, 0);
    let json: serde_json::Value =
        serde_json::from_str(&idx.get("no-inherit").unwrap().frontmatter_json).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"description": "Standalone rules", "keywords": ["standalone"], "inherit": false})
    );
    // README.md has no frontmatter: examined, not a skill, no finding.
    let reports = idx.reports();
    let readme = report(&reports, 0, "README.md");
    assert_eq!(readme.skill_path, None);
    assert_eq!(readme.worst, None);
    assert!(reports.iter().all(|r| r.worst.is_none()), "{reports:#?}");
}

#[test]
fn spec_6_2_content_aggregation_with_inherit_true_and_false() {
    let mem = spec_tree();
    let idx = mem.index();
    let r = idx.resolve(&mem, "ui/react/auth").unwrap();
    assert_eq!(
        r.content,
        "=== GLOBAL RULES (from _root.md) ===\n\nGlobal rules\n\n\
         === UI (from ui/_index.md) ===\n\nUI rules\n\n\
         === UI > REACT (from ui/react/_index.md) ===\n\nReact rules\n\n\
         === UI > REACT > AUTH (from ui/react/auth.md) ===\n\n# Auth\n\nAuth rules"
    );
    let r = idx.resolve(&mem, "no-inherit").unwrap();
    assert_eq!(r.content, "Only mine");
    assert!(r.inherited_assets.is_empty());
    let r = idx.resolve(&mem, "_root").unwrap();
    assert_eq!(
        r.content,
        "=== GLOBAL RULES (from _root.md) ===\n\nGlobal rules"
    );
}

#[test]
fn spec_7_3_assets_inheritance_and_from() {
    let mem = spec_tree();
    let idx = mem.index();
    let r = idx.resolve(&mem, "ui/react/auth").unwrap();
    let own: Vec<(&str, &str, Option<u64>)> = r
        .assets
        .iter()
        .map(|a| (a.file.as_str(), a.asset_type.as_str(), a.size))
        .collect();
    assert_eq!(
        own,
        vec![
            ("assets/AuthProvider.tsx.template", "template", Some(12)),
            ("component-base.tsx", "other", Some(9)),
        ]
    );
    assert!(r.assets.iter().all(|a| a.from.is_none()));
    assert_eq!(r.scripts.len(), 1);
    let s = r.scripts[0].script.as_ref().unwrap();
    assert_eq!(s.execution, Execution::Server);
    assert_eq!(s.args[0].name, "target");
    assert!(s.args[0].required);
    // component-base.tsx is overridden by the skill: only the two others are inherited.
    let inherited: Vec<(&str, Option<&str>)> = r
        .inherited_assets
        .iter()
        .map(|a| (a.file.as_str(), a.from.as_deref()))
        .collect();
    assert_eq!(
        inherited,
        vec![
            ("global.css", Some("_root")),
            ("design-tokens.json", Some("ui/_index"))
        ]
    );
    assert!(r.inherited_scripts.is_empty());
    // Without the override, the parent's version is inherited.
    let r = idx.resolve(&mem, "ui/react/_index").unwrap();
    assert_eq!(r.assets[0].file, "component-base.tsx");
    assert_eq!(r.inherited_assets.len(), 2);
}

#[test]
fn spec_7_5_chain_lookup() {
    let idx = spec_tree().index();
    // Own asset.
    let loc = idx
        .locate_asset("ui/react/auth", "assets/AuthProvider.tsx.template")
        .unwrap();
    assert_eq!(loc.root, 0);
    assert_eq!(loc.path, "ui/react/auth/assets/AuthProvider.tsx.template");
    assert_eq!(loc.asset.from, None);
    // Own script.
    let loc = idx
        .locate_asset("ui/react/auth", "scripts/scaffold-auth.sh")
        .unwrap();
    assert!(loc.asset.script.is_some());
    // Own override of a parent's file.
    let loc = idx
        .locate_asset("ui/react/auth", "component-base.tsx")
        .unwrap();
    assert_eq!(loc.path, "ui/react/auth/component-base.tsx");
    assert_eq!(loc.asset.from, None);
    // From the parent, and from the root.
    let loc = idx
        .locate_asset("ui/react/auth", "design-tokens.json")
        .unwrap();
    assert_eq!(loc.path, "ui/_index/design-tokens.json");
    assert_eq!(loc.asset.from.as_deref(), Some("ui/_index"));
    let loc = idx.locate_asset("ui/react/auth", "global.css").unwrap();
    assert_eq!(loc.path, "_root/global.css");
    assert_eq!(loc.asset.from.as_deref(), Some("_root"));
    // inherit: false stops the lookup at the skill.
    assert!(matches!(
        idx.locate_asset("no-inherit", "global.css"),
        Err(Error::NotFound(m)) if m.contains("looked in: no-inherit)")
    ));
    // Not found anywhere.
    assert!(matches!(
        idx.locate_asset("ui/react/auth", "nope.txt"),
        Err(Error::NotFound(m)) if m.contains("ui/react/auth, ui/react/_index, ui/_index, _root")
    ));
    // Path checks come after the skill check.
    assert!(matches!(
        idx.locate_asset("ui/react/auth", "../_index/component-base.tsx"),
        Err(Error::InvalidPath(_))
    ));
    assert!(matches!(
        idx.locate_asset("ui/react/autth", "../x"),
        Err(Error::NotFound(m)) if m.contains("did you mean: ui/react/auth")
    ));
}

#[test]
fn missing_intermediate_parents_walk_up() {
    let idx = Mem::default()
        .root(
            "r",
            &[
                ("_root.md", "---\ndescription: g\n---\nG"),
                ("ui/_index.md", "---\ndescription: ui\n---\nU"),
                (
                    "ui/react/hooks/state.md",
                    "---\ndescription: s\nkeywords: [s]\n---\nS",
                ),
                (
                    "api/v2/auth.md",
                    "---\ndescription: a\nkeywords: [a]\n---\nA",
                ),
            ],
        )
        .index();
    assert_eq!(
        idx.get("ui/react/hooks/state").unwrap().parent.as_deref(),
        Some("ui/_index")
    );
    assert_eq!(
        idx.get("api/v2/auth").unwrap().parent.as_deref(),
        Some("_root")
    );
    // Category nodes need only `description`.
    assert!(idx.get("ui/_index").unwrap().keywords.is_empty());
}

#[test]
fn agent_skills_folders_join_the_same_tree() {
    let mem = Mem::default().root(
        "r",
        &[
            ("_root.md", "---\ndescription: g\n---\nGlobal"),
            ("ui/react/_index.md", "---\ndescription: r\n---\nReact"),
            (
                "ui/react/login/SKILL.md",
                "---\nname: login\ndescription: Login forms\n---\n# Login\nBody\n",
            ),
            ("ui/react/login/scripts/gen.sh", "echo"),
            ("ui/react/login/references/flow.md", "# flow"),
            ("ui/react/login/assets/logo.png", "PNG"),
            ("ui/react/login/LICENSE.txt", "MIT"),
        ],
    );
    let idx = mem.index();
    let s = idx.get("ui/react/login").unwrap();
    assert_eq!(s.shape, SkillShape::AgentSkill);
    assert_eq!(s.parent.as_deref(), Some("ui/react/_index"));
    assert_eq!(s.resource_dir.as_deref(), Some("ui/react/login"));
    assert_eq!(s.file, "ui/react/login/SKILL.md");
    assert_eq!((s.asset_count, s.script_count), (3, 1));
    let r = idx.resolve(&mem, "ui/react/login").unwrap();
    assert_eq!(
        r.content,
        "=== GLOBAL RULES (from _root.md) ===\n\nGlobal\n\n\
         === UI > REACT (from ui/react/_index.md) ===\n\nReact\n\n\
         === UI > REACT > LOGIN (from ui/react/login/SKILL.md) ===\n\n# Login\nBody"
    );
    let types: Vec<(&str, &str, bool)> = r
        .assets
        .iter()
        .map(|a| (a.file.as_str(), a.asset_type.as_str(), a.is_binary))
        .collect();
    assert_eq!(
        types,
        vec![
            ("LICENSE.txt", "other", false),
            ("assets/logo.png", "asset", true),
            ("references/flow.md", "reference", false)
        ]
    );
    assert_eq!(r.scripts[0].file, "scripts/gen.sh");
    assert_eq!(
        r.scripts[0].script.as_ref().unwrap().execution,
        Execution::Claude
    );
    let loc = idx
        .locate_asset("ui/react/login", "assets/logo.png")
        .unwrap();
    assert_eq!(loc.path, "ui/react/login/assets/logo.png");
    assert_eq!(loc.asset.mime_type, "image/png");
    assert_eq!(loc.asset.size, Some(3));
    // A markdown file inside a skill folder is a resource, not a skill.
    assert!(idx.get("ui/react/login/references/flow").is_err());
    assert_eq!(idx.len(), 3);
}

#[test]
fn declared_script_overrides_undeclared_and_missing_declared_file_is_located() {
    let idx = Mem::default()
        .root(
            "r",
            &[
                (
                    "deploy/SKILL.md",
                    "---\nname: deploy\ndescription: Deploy things\nscripts:\n  - file: scripts/run.sh\n    execution: server\n    args: [{name: env, required: false}]\nassets:\n  - file: templates/missing.yaml\n---\nBody",
                ),
                ("deploy/scripts/run.sh", "#!/bin/sh"),
            ],
        )
        .index();
    let loc = idx.locate_asset("deploy", "scripts/run.sh").unwrap();
    let script = loc.asset.script.unwrap();
    assert_eq!(script.execution, Execution::Server);
    assert!(!script.args[0].required);
    // Declared but missing: located (the host reports it), no size, and a warning.
    let loc = idx
        .locate_asset("deploy", "templates/missing.yaml")
        .unwrap();
    assert_eq!(loc.asset.size, None);
    assert_eq!(loc.path, "deploy/templates/missing.yaml");
    let reports = idx.reports();
    let r = report(&reports, 0, "deploy/SKILL.md");
    assert_eq!(r.worst, Some(Severity::Warning));
    assert!(
        r.diagnostics.iter().any(|d| d
            .message
            .contains("`templates/missing.yaml` does not exist")
            && d.line == Some(8)),
        "{r:#?}"
    );
}

#[test]
fn nested_skills_and_hidden_folders() {
    let mem = Mem::default().root(
        "r",
        &[
            (
                "outer/SKILL.md",
                "---\nname: outer\ndescription: Outer\n---\nO",
            ),
            (
                "outer/notes.md",
                "---\ndescription: not a skill\nkeywords: [x]\n---\n",
            ),
            (
                "outer/inner/SKILL.md",
                "---\nname: inner\ndescription: Inner\n---\nI",
            ),
            ("outer/inner/data.csv", "a,b"),
            (
                ".curated/gh/SKILL.md",
                "---\nname: gh\ndescription: GitHub\n---\nG",
            ),
            (
                ".system/creator/SKILL.md",
                "---\nname: creator\ndescription: Create\n---\nC",
            ),
        ],
    );
    let idx = mem.index();
    assert_eq!(
        paths_of(&idx),
        vec![".curated/gh", ".system/creator", "outer", "outer/inner"]
    );
    // The nested skill's files belong to it, not to the outer one.
    let outer = idx.manifest("outer").unwrap();
    let rel: Vec<&str> = outer.iter().map(|f| f.relative.as_str()).collect();
    assert_eq!(rel, vec!["SKILL.md", "notes.md"]);
    let inner = idx.manifest("outer/inner").unwrap();
    let rel: Vec<(&str, &str, u64)> = inner
        .iter()
        .map(|f| (f.relative.as_str(), f.path.as_str(), f.size))
        .collect();
    assert_eq!(
        rel,
        vec![
            ("SKILL.md", "outer/inner/SKILL.md", 40),
            ("data.csv", "outer/inner/data.csv", 3)
        ]
    );
    assert_eq!(idx.get("outer").unwrap().asset_count, 1);
    // The nested skill's parent follows the parent rule (`outer/_index`, missing, then none).
    assert_eq!(idx.get("outer/inner").unwrap().parent, None);
}

#[test]
fn hierarchical_manifest_and_generated_skill_md() {
    let mem = spec_tree();
    let idx = mem.index();
    let m = idx.manifest("ui/react/auth").unwrap();
    let rel: Vec<(&str, &str)> = m
        .iter()
        .map(|f| (f.relative.as_str(), f.path.as_str()))
        .collect();
    assert_eq!(
        rel,
        vec![
            ("auth.md", "ui/react/auth.md"),
            (
                "assets/AuthProvider.tsx.template",
                "ui/react/auth/assets/AuthProvider.tsx.template"
            ),
            ("component-base.tsx", "ui/react/auth/component-base.tsx"),
            (
                "scripts/scaffold-auth.sh",
                "ui/react/auth/scripts/scaffold-auth.sh"
            ),
        ]
    );
    assert_eq!(idx.manifest("no-inherit").unwrap().len(), 1);
    // Served by the Skills extension as `skill://ui/SKILL.md`: the file's own frontmatter
    // with the name, and the resolved content.
    let served = idx.extension_skill_md(&mem, "ui/_index").unwrap();
    assert_eq!(
        (served.ext_path.as_str(), served.name.as_str()),
        ("ui", "ui")
    );
    assert_eq!(
        String::from_utf8(served.bytes).unwrap(),
        "---\nname: ui\ndescription: UI rules\nkeywords: [ui]\nassets: [{file: design-tokens.json}]\n---\n\n=== GLOBAL RULES (from _root.md) ===\n\nGlobal rules\n\n=== UI (from ui/_index.md) ===\n\nUI rules\n"
    );
    assert_eq!(
        served.frontmatter_json,
        r#"{"name":"ui","description":"UI rules","keywords":["ui"],"assets":[{"file":"design-tokens.json"}]}"#
    );
    let root = idx.extension_skill_md(&mem, "_root").unwrap();
    assert_eq!(root.ext_path, "root");
    assert!(
        String::from_utf8(root.bytes)
            .unwrap()
            .starts_with("---\nname: root\ndescription: Global rules\nkeywords: [global]\n")
    );
    // The tools keep the skill path; the extension's path finds the skill too.
    assert_eq!(idx.get("ui").unwrap().skill_path, "ui/_index");
    assert_eq!(idx.get("ui/_index").unwrap().skill_path, "ui/_index");
    let listed: Vec<(String, String)> = idx
        .extension_skills()
        .into_iter()
        .map(|s| (s.ext_path, s.skill_path))
        .collect();
    assert!(
        listed.contains(&("root".into(), "_root".into())),
        "{listed:?}"
    );
    assert!(
        listed.windows(2).all(|w| w[0].0 < w[1].0),
        "sorted by ext path"
    );
}

#[test]
fn agent_skill_md_is_served_verbatim() {
    let raw = "\u{FEFF}---\r\nname: pdf\r\ndescription: PDFs\r\n---\r\nBody\r\n";
    let mem = Mem::default().root("r", &[("pdf/SKILL.md", raw)]);
    let idx = mem.index();
    let served = idx.extension_skill_md(&mem, "pdf").unwrap();
    assert_eq!(served.bytes, raw.as_bytes());
    assert_eq!(
        served.frontmatter_json,
        r#"{"name":"pdf","description":"PDFs"}"#
    );
    // A name that is not the folder's is set; the rest of the file is kept.
    let renamed = Mem::default().root(
        "r",
        &[(
            "my_tool/SKILL.md",
            "---\r\nname: My Tool\r\ndescription: Tools\r\nlicense: MIT\r\n---\r\nBody\r\n",
        )],
    );
    let served = renamed
        .index()
        .extension_skill_md(&renamed, "my_tool")
        .unwrap();
    assert_eq!(served.ext_path, "my-tool");
    assert_eq!(
        String::from_utf8(served.bytes).unwrap(),
        "---\nname: my-tool\ndescription: Tools\nlicense: MIT\n---\nBody\n"
    );
    assert_eq!(
        served.frontmatter_json,
        r#"{"name":"my-tool","description":"Tools","license":"MIT"}"#
    );
    assert_eq!(
        idx.resolve(&mem, "pdf").unwrap().content,
        "=== PDF (from pdf/SKILL.md) ===\n\nBody"
    );
    assert_eq!(idx.reports()[0].worst, None);
}

#[test]
fn validation_findings_are_located_and_clear() {
    let idx = Mem::default()
        .root(
            "r",
            &[
                ("nofm/SKILL.md", "# Just markdown\n"),
                (
                    "badyaml/SKILL.md",
                    "---\nname: badyaml\ndescription: Use when: things break\n---\n",
                ),
                ("nodesc/SKILL.md", "---\nname: nodesc\n---\nbody"),
                ("unclosed/SKILL.md", "---\nname: unclosed\ndescription: d\n"),
                (
                    "Bad_Name/SKILL.md",
                    "---\nname: Bad_Name-\ndescription: d\n---\n",
                ),
                ("noname/SKILL.md", "\n---\ndescription: d\n---\n"),
                (
                    "variant/skill.md",
                    "---\nname: variant\ndescription: d\n---\n",
                ),
                ("nokw.md", "---\ndescription: has no keywords\n---\n"),
                ("nodesc2.md", "---\nkeywords: [a]\ntitle: x\n---\n"),
                ("plain.md", "no frontmatter at all"),
                ("list.md", "---\ndescription: [a, b]\nkeywords: [k]\n---\n"),
            ],
        )
        .index();
    assert_eq!(paths_of(&idx), vec!["Bad_Name", "noname", "variant"]);
    let reports = idx.reports();
    let one = |path: &str| {
        let r = report(&reports, 0, path);
        (r.worst, r.diagnostics.clone())
    };
    let (w, d) = one("nofm/SKILL.md");
    assert_eq!(w, Some(Severity::Error));
    assert_eq!(d[0].line, Some(1));
    assert!(d[0].message.starts_with("no frontmatter"));
    let (w, d) = one("badyaml/SKILL.md");
    assert_eq!(w, Some(Severity::Error));
    assert_eq!(d[0].line, Some(3));
    assert!(d[0].message.contains("invalid YAML"));
    let (w, d) = one("nodesc/SKILL.md");
    assert_eq!(w, Some(Severity::Error));
    assert!(
        d[0].message
            .starts_with("no `description` in the frontmatter")
    );
    let (_, d) = one("unclosed/SKILL.md");
    assert!(d[0].message.contains("never closed"));
    let (w, d) = one("Bad_Name/SKILL.md");
    assert_eq!(w, Some(Severity::Warning));
    // charset, trailing hyphen, folder mismatch; then the name the Skills extension gives it
    assert_eq!(d.len(), 4, "{d:#?}");
    assert!(d[..3].iter().all(|x| x.line == Some(2)));
    assert!(
        d[3].message.contains("`skill://bad-name/SKILL.md`"),
        "{d:#?}"
    );
    let (_, d) = one("noname/SKILL.md");
    assert!(d.iter().any(|x| x.message.contains("blank line(s) before")));
    assert!(
        d.iter()
            .any(|x| x.message.contains("the folder name `noname` is used"))
    );
    assert_eq!(idx.get("noname").unwrap().name, "noname");
    let (_, d) = one("variant/skill.md");
    assert!(d[0].message.contains("requires `SKILL.md`"));
    let (w, d) = one("nokw.md");
    assert_eq!(w, Some(Severity::Warning));
    assert!(d[0].message.starts_with("no `keywords`"));
    let (w, d) = one("nodesc2.md");
    assert_eq!(w, Some(Severity::Warning));
    assert!(d[0].message.starts_with("no `description`"), "{d:#?}");
    assert_eq!(one("plain.md").0, None);
    let (_, d) = one("list.md");
    assert!(d[0].message.contains("must be text, found a list"));
    // Sorted by root and path.
    let order: Vec<&str> = reports.iter().map(|r| r.path.as_str()).collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
}

#[test]
fn several_roots_later_wins_with_findings_on_both() {
    let mem = Mem::default()
        .root(
            "base",
            &[
                ("_root.md", "---\ndescription: base root\n---\nBase"),
                (
                    "api/auth.md",
                    "---\ndescription: old auth\nkeywords: [auth]\n---\nOld",
                ),
                (
                    "api/only-base.md",
                    "---\ndescription: b\nkeywords: [b]\n---\nB",
                ),
            ],
        )
        .root(
            "team",
            &[
                (
                    "api/auth.md",
                    "---\ndescription: new auth\nkeywords: [auth]\n---\nNew",
                ),
                ("api/_index.md", "---\ndescription: api\n---\nAPI"),
            ],
        );
    let idx = mem.index();
    assert_eq!(
        paths_of(&idx),
        vec!["_root", "api/_index", "api/auth", "api/only-base"]
    );
    let auth = idx.get("api/auth").unwrap();
    assert_eq!((auth.root, auth.description.as_str()), (1, "new auth"));
    // Parents span roots.
    assert_eq!(auth.parent.as_deref(), Some("api/_index"));
    assert_eq!(
        idx.get("api/only-base").unwrap().parent.as_deref(),
        Some("api/_index")
    );
    let r = idx.resolve(&mem, "api/auth").unwrap();
    assert_eq!(
        r.content,
        "=== GLOBAL RULES (from _root.md) ===\n\nBase\n\n=== API (from api/_index.md) ===\n\nAPI\n\n=== API > AUTH (from api/auth.md) ===\n\nNew"
    );
    let reports = idx.reports();
    let lost = report(&reports, 0, "api/auth.md");
    assert_eq!(lost.worst, Some(Severity::Warning));
    assert!(
        lost.diagnostics[0]
            .message
            .starts_with("shadowed by root 1 (`team`) file `api/auth.md`"),
        "{lost:#?}"
    );
    let won = report(&reports, 1, "api/auth.md");
    assert_eq!(won.worst, Some(Severity::Info));
    assert!(
        won.diagnostics[0]
            .message
            .contains("shadows root 0 (`base`)")
    );
    // Reports are sorted by root, then path.
    let keys: Vec<(u32, &str)> = reports.iter().map(|r| (r.root, r.path.as_str())).collect();
    assert_eq!(
        keys,
        vec![
            (0, "_root.md"),
            (0, "api/auth.md"),
            (0, "api/only-base.md"),
            (1, "api/_index.md"),
            (1, "api/auth.md")
        ]
    );
}

#[test]
fn duplicate_names_warn_and_get_by_name() {
    let idx = Mem::default()
        .root(
            "r",
            &[
                (
                    "a/review/SKILL.md",
                    "---\nname: review\ndescription: A\n---\n",
                ),
                (
                    "b/review/SKILL.md",
                    "---\nname: review\ndescription: B\n---\n",
                ),
                (
                    "c/pdf-tools/SKILL.md",
                    "---\nname: pdf-tools\ndescription: PDF\n---\n",
                ),
                (
                    "docs/testing.md",
                    "---\ndescription: t\nkeywords: [t]\n---\n",
                ),
                (
                    "web/testing.md",
                    "---\ndescription: t\nkeywords: [t]\n---\n",
                ),
            ],
        )
        .index();
    let reports = idx.reports();
    let r = report(&reports, 0, "a/review/SKILL.md");
    assert!(r.diagnostics[0].message.contains("also used by `b/review`"));
    // Default hierarchical names do not warn.
    assert_eq!(report(&reports, 0, "docs/testing.md").worst, None);
    // get: path, then unique name (any case), else not found with suggestions.
    assert_eq!(idx.get("c/pdf-tools").unwrap().name, "pdf-tools");
    assert_eq!(idx.get("PDF-Tools").unwrap().skill_path, "c/pdf-tools");
    assert_eq!(
        idx.get("c/pdf-tools/SKILL.md").unwrap().skill_path,
        "c/pdf-tools"
    );
    assert_eq!(
        idx.get("docs/testing.md").unwrap().skill_path,
        "docs/testing"
    );
    assert!(
        matches!(idx.get("review"), Err(Error::NotFound(m)) if m.contains("a/review, b/review"))
    );
    assert!(
        matches!(idx.get("testing"), Err(Error::NotFound(m)) if m.contains("docs/testing, web/testing"))
    );
    assert!(matches!(
        idx.get("pdf-tool"),
        Err(Error::NotFound(m)) if m == "no skill `pdf-tool`; did you mean: c/pdf-tools"
    ));
    assert!(matches!(idx.get(" "), Err(Error::InvalidArgument(_))));
}

#[test]
fn suggest_is_ranked_and_deterministic() {
    let idx = Mem::default()
        .root(
            "r",
            &[
                (
                    "tools/pdf/SKILL.md",
                    "---\nname: pdf\ndescription: d\n---\n",
                ),
                (
                    "tools/pdf-forms/SKILL.md",
                    "---\nname: pdf-forms\ndescription: d\n---\n",
                ),
                (
                    "docs/docx/SKILL.md",
                    "---\nname: docx\ndescription: d\n---\n",
                ),
                (
                    "web/react/SKILL.md",
                    "---\nname: react\ndescription: d\n---\n",
                ),
            ],
        )
        .index();
    assert_eq!(idx.suggest("PDF", 5), vec!["tools/pdf", "tools/pdf-forms"]);
    assert_eq!(idx.suggest("tools/pfd", 5), vec!["tools/pdf"]);
    assert_eq!(idx.suggest("reactt", 5), vec!["web/react"]);
    assert_eq!(idx.suggest("doc", 1), vec!["docs/docx"]);
    assert_eq!(idx.suggest("pdf", 1), vec!["tools/pdf"]);
    assert!(idx.suggest("zzzzzzzz", 5).is_empty());
    assert!(idx.suggest("", 5).is_empty());
}

#[test]
fn tree_flattened_and_filtered() {
    let idx = spec_tree().index();
    let t = idx.tree(None).unwrap();
    let show = |t: &[TreeNode]| -> Vec<(String, String, bool, Vec<u32>)> {
        t.iter()
            .map(|n| {
                (
                    n.name.clone(),
                    n.path.clone(),
                    n.skill.is_some(),
                    n.children.clone(),
                )
            })
            .collect()
    };
    assert_eq!(
        show(&t),
        vec![
            ("_root".into(), "_root".into(), true, vec![1, 2]),
            ("no-inherit".into(), "no-inherit".into(), true, vec![]),
            ("ui".into(), "ui/_index".into(), true, vec![3]),
            ("react".into(), "ui/react/_index".into(), true, vec![4]),
            ("auth".into(), "ui/react/auth".into(), true, vec![]),
        ]
    );
    assert_eq!(t[4].skill.as_ref().unwrap().asset_count, 2);
    let sub = idx.tree(Some("ui")).unwrap();
    assert_eq!(sub[0].path, "ui/_index");
    assert_eq!(sub.len(), 3);
    assert_eq!(idx.tree(Some("ui/_index")).unwrap(), sub);
    assert_eq!(idx.tree(Some("ui/react/")).unwrap().len(), 2);
    assert_eq!(idx.tree(Some("ui/react/auth")).unwrap().len(), 1);
    assert_eq!(idx.tree(Some("_root")).unwrap(), t);
    assert!(matches!(idx.tree(Some("uix")), Err(Error::NotFound(_))));
    // Folders without a category skill are plain nodes.
    let idx = Mem::default()
        .root(
            "r",
            &[
                ("a/b/SKILL.md", "---\nname: b\ndescription: d\n---\n"),
                ("a/c.md", "---\ndescription: d\nkeywords: [k]\n---\n"),
            ],
        )
        .index();
    let t = idx.tree(None).unwrap();
    assert_eq!(
        show(&t),
        vec![
            ("".into(), "".into(), false, vec![1]),
            ("a".into(), "a".into(), false, vec![2, 3]),
            ("b".into(), "a/b".into(), true, vec![]),
            ("c".into(), "a/c".into(), true, vec![]),
        ]
    );
}

#[test]
fn root_level_skill_md_takes_the_root_name() {
    let mem = Mem::default().root(
        "/home/me/skills/my-skill/",
        &[
            (
                "SKILL.md",
                "---\nname: my-skill\ndescription: Whole root\n---\nRoot body",
            ),
            ("scripts/x.py", "print()"),
            ("docs/guide.md", "---\ndescription: g\nkeywords: [g]\n---\n"),
            ("sub/SKILL.md", "---\nname: sub\ndescription: Sub\n---\n"),
        ],
    );
    let idx = mem.index();
    assert_eq!(paths_of(&idx), vec!["my-skill", "sub"]);
    let s = idx.get("my-skill").unwrap();
    assert_eq!(s.resource_dir.as_deref(), Some(""));
    assert_eq!((s.asset_count, s.script_count), (1, 1));
    let m = idx.manifest("my-skill").unwrap();
    let rel: Vec<&str> = m.iter().map(|f| f.relative.as_str()).collect();
    assert_eq!(rel, vec!["SKILL.md", "docs/guide.md", "scripts/x.py"]);
    assert_eq!(
        idx.locate_asset("my-skill", "scripts/x.py").unwrap().path,
        "scripts/x.py"
    );
}

/// A listing of files (no folders), each `size` bytes.
fn files(paths: &[&str], size: u64) -> Vec<Entry> {
    paths
        .iter()
        .map(|p| Entry {
            path: (*p).into(),
            kind: EntryKind::File,
            size,
        })
        .collect()
}

fn data(path: &str, text: &str) -> FileData {
    FileData {
        path: path.into(),
        bytes: text.as_bytes().to_vec(),
    }
}

/// The `InvalidArgument` message of `r`, failing on anything else.
fn refused<T: std::fmt::Debug>(r: Result<T, Error>) -> String {
    match r {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("expected invalid-argument, got {other:?}"),
    }
}

const SKILL_A: &str = "---\nname: a\ndescription: First skill\n---\nA body\n";

#[test]
fn not_ready_before_finish_and_unsupplied_files() {
    let mut idx = Index::new(EngineConfig::default());
    let wanted = idx
        .add_root(
            "r",
            vec![
                Entry {
                    path: "a/SKILL.md".into(),
                    kind: EntryKind::File,
                    size: 10,
                },
                Entry {
                    path: "b.md".into(),
                    kind: EntryKind::Symlink,
                    size: 0,
                },
            ],
        )
        .unwrap();
    assert_eq!(wanted, vec!["a/SKILL.md"]);
    assert_eq!(idx.get("a"), Err(Error::NotReady));
    assert_eq!(idx.search("x", 3), Err(Error::NotReady));
    assert_eq!(idx.tree(None), Err(Error::NotReady));
    assert_eq!(idx.ready(), Err(Error::NotReady));
    assert_eq!(idx.snapshot_sections(), Err(Error::NotReady));
    // A host that could not read a file leaves it out: `finish` reports it.
    idx.finish().unwrap();
    assert_eq!(idx.ready(), Ok(()));
    assert!(idx.is_empty());
    let reports = idx.reports();
    assert!(
        report(&reports, 0, "a/SKILL.md").diagnostics[0]
            .message
            .contains("never supplied")
    );
    assert_eq!(report(&reports, 0, "b.md").worst, Some(Severity::Info));
}

/// Issue 14: build calls after `finish` are refused and leave the finished index as it was
/// (`add-root` after `finish` used to un-finish it silently).
#[test]
fn build_calls_after_finish_are_refused_and_change_nothing() {
    let mut idx = Index::new(EngineConfig::default());
    idx.add_root("r", files(&["a/SKILL.md"], 10)).unwrap();
    idx.add_files(0, vec![data("a/SKILL.md", SKILL_A)]).unwrap();
    idx.finish().unwrap();
    let before = (idx.skills(), idx.reports(), idx.search("first", 5));

    let m = refused(idx.add_root("late", files(&["b/SKILL.md"], 10)));
    assert!(m.contains("add-root") && m.contains("finished"), "{m}");
    let m = refused(idx.add_files(0, vec![data("a/SKILL.md", SKILL_A)]));
    assert!(m.contains("add-files") && m.contains("finished"), "{m}");
    let m = refused(idx.finish());
    assert!(m.contains("finish") && m.contains("finished"), "{m}");

    assert_eq!(idx.ready(), Ok(()), "still finished");
    assert_eq!(
        (idx.skills(), idx.reports(), idx.search("first", 5)),
        before
    );
    assert_eq!(idx.roots.len(), 1);
}

/// Issue 14: a restored index is finished too; a restore in progress takes no build call.
#[test]
fn build_calls_on_a_restored_or_restoring_index_are_refused() {
    let idx = spec_tree().index();
    let count = idx.snapshot_sections().unwrap();
    let sections: Vec<Vec<u8>> = (0..count)
        .map(|n| idx.snapshot_section(n).unwrap())
        .collect();

    let mut half = Index::new(EngineConfig::default());
    half.restore_section(0, count, &sections[0]).unwrap();
    for m in [
        refused(half.add_root("r", files(&["x/SKILL.md"], 1))),
        refused(half.finish()),
    ] {
        assert!(m.contains("snapshot is being restored"), "{m}");
    }
    let m = refused(half.add_files(0, vec![data("x/SKILL.md", SKILL_A)]));
    assert!(m.contains("snapshot is being restored"), "{m}");
    for (n, bytes) in sections.iter().enumerate().skip(1) {
        half.restore_section(n as u32, count, bytes).unwrap();
    }
    assert_eq!(half.skills(), idx.skills());
    let m = refused(half.add_root("r", files(&["x/SKILL.md"], 1)));
    assert!(m.contains("finished"), "{m}");
    assert_eq!(half.skills(), idx.skills());
}

/// Issue 14: `add-files` for a root never added, a file never asked for, a file supplied twice.
#[test]
fn files_not_asked_for_are_refused_naming_them() {
    let mut idx = Index::new(EngineConfig::default());
    let m = refused(idx.add_files(0, vec![data("a/SKILL.md", SKILL_A)]));
    assert!(m.contains("no root 0") && m.contains("0 root(s)"), "{m}");

    idx.add_root("r", files(&["a/SKILL.md", "b/SKILL.md", "notes.txt"], 10))
        .unwrap();
    let m = refused(idx.add_files(3, vec![data("a/SKILL.md", SKILL_A)]));
    assert!(m.contains("no root 3") && m.contains("1 root(s)"), "{m}");

    // A file the listing has but add-root did not ask for, and one it never listed: the
    // whole batch is refused, the good file included, naming both culprits.
    let m = refused(idx.add_files(
        0,
        vec![
            data("a/SKILL.md", SKILL_A),
            data("notes.txt", "x"),
            data("ghost.md", "x"),
        ],
    ));
    assert!(m.contains("`notes.txt`") && m.contains("`ghost.md`"), "{m}");
    assert!(!m.contains("`a/SKILL.md`"), "{m}");
    assert!(m.contains("root 0 (`r`)"), "{m}");
    // Twice in one batch.
    let m = refused(idx.add_files(
        0,
        vec![data("b/SKILL.md", SKILL_A), data("b/SKILL.md", SKILL_A)],
    ));
    assert!(m.contains("`b/SKILL.md` (twice in this batch)"), "{m}");
    // Nothing of the refused batches was taken: both files are still wanted.
    idx.add_files(0, vec![data("a/SKILL.md", SKILL_A)]).unwrap();
    // Already supplied.
    let m = refused(idx.add_files(0, vec![data("a/SKILL.md", SKILL_A)]));
    assert!(
        m.contains("`a/SKILL.md`") && m.contains("already supplied"),
        "{m}"
    );
    idx.finish().unwrap();
    assert_eq!(paths_of(&idx), vec!["a"]);
    let reports = idx.reports();
    assert!(
        report(&reports, 0, "b/SKILL.md").diagnostics[0]
            .message
            .contains("never supplied")
    );
    assert!(!reports.iter().any(|r| r.path == "ghost.md"));
}

/// Issue 14: a bad listing entry is refused, naming the root and the entry, and registers
/// nothing (root ids stay dense).
#[test]
fn bad_listing_entries_are_refused_and_register_nothing() {
    let mut idx = Index::new(EngineConfig::default());
    for bad in [
        "../escape/SKILL.md",
        "/abs/SKILL.md",
        "a//SKILL.md",
        "a\\SKILL.md",
    ] {
        let m = refused(idx.add_root("team", files(&["ok/SKILL.md", bad], 10)));
        assert!(m.contains("add-root `team`"), "{m}");
        assert!(m.contains(&format!("{bad:?}")), "{m} should name {bad:?}");
    }
    let m = refused(idx.add_root("team", files(&["a.md", "a.md"], 10)));
    assert!(m.contains("\"a.md\" is listed twice"), "{m}");
    assert!(idx.roots.is_empty() && idx.reports.is_empty() && idx.pending.is_empty());
    // The index is still new: a good root is root 0.
    let wanted = idx.add_root("team", files(&["ok/SKILL.md"], 10)).unwrap();
    assert_eq!(wanted, vec!["ok/SKILL.md"]);
    idx.add_files(0, vec![data("ok/SKILL.md", SKILL_A)])
        .unwrap();
    idx.finish().unwrap();
    assert_eq!(idx.get("ok").unwrap().root, 0);
}

/// Issue 14: a `Files` that fails costs that query only.
#[test]
fn a_failing_read_fails_that_call_only() {
    struct Flaky(std::cell::Cell<bool>);
    impl Files for Flaky {
        fn read(&self, _root: u32, path: &str) -> Result<Vec<u8>, String> {
            if self.0.replace(false) {
                Err(format!("{path}: disk on fire"))
            } else {
                Ok(SKILL_A.as_bytes().to_vec())
            }
        }
    }
    let mut idx = Index::new(EngineConfig::default());
    idx.add_root("r", files(&["a/SKILL.md"], 10)).unwrap();
    idx.add_files(0, vec![data("a/SKILL.md", SKILL_A)]).unwrap();
    idx.finish().unwrap();
    let files = Flaky(std::cell::Cell::new(true));
    match idx.resolve(&files, "a") {
        Err(Error::ReadFailed(m)) => assert!(m.contains("disk on fire"), "{m}"),
        other => panic!("expected read-failed, got {other:?}"),
    }
    assert!(
        idx.resolve(&files, "a")
            .unwrap()
            .content
            .ends_with("A body")
    );
}

#[test]
fn size_limit_is_reported_with_the_size() {
    let mut idx = Index::new(EngineConfig::default());
    let max = walk_policy().max_skill_file_bytes;
    let wanted = idx
        .add_root(
            "r",
            vec![Entry {
                path: "big/SKILL.md".into(),
                kind: EntryKind::File,
                size: max + 1,
            }],
        )
        .unwrap();
    assert!(wanted.is_empty());
    idx.finish().unwrap();
    let reports = idx.reports();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].worst, Some(Severity::Warning));
    assert!(
        reports[0].diagnostics[0]
            .message
            .contains(&format!("{} bytes", max + 1))
    );
}

#[test]
fn search_doc_extracts_what_ranking_needs() {
    let body = format!(
        "\n# Title\n\n```\n# not a heading\n```\n## Usage\n{}",
        "x".repeat(5000)
    );
    let content = format!(
        "---\nname: demo\ndescription: Demo skill\nwhen_to_use: When demoing\ntags: [a, b]\nargument-hint: <file>\nmetadata:\n  category: tools\nlicense: MIT\n---\n{body}"
    );
    let mut idx = Index::new(EngineConfig::default());
    idx.add_root(
        "r",
        vec![Entry {
            path: "demo/SKILL.md".into(),
            kind: EntryKind::File,
            size: content.len() as u64,
        }],
    )
    .unwrap();
    let role = Role::Agent {
        folder: "demo".into(),
    };
    let (d, _) = idx
        .parse_file(
            0,
            "demo/SKILL.md",
            &role,
            content.as_bytes(),
            &mut Vec::new(),
        )
        .expect("a skill");
    assert_eq!(d.hints, "When demoing\na, b\n<file>\ntools");
    assert_eq!(d.headings, "Title\nUsage");
    assert_eq!(d.body_prefix.len(), BODY_PREFIX_BYTES);
    assert!(d.body_prefix.starts_with("# Title"));
}

#[test]
fn search_route_and_explain_with_the_ranked_algorithm() {
    let idx = spec_tree().index();
    let hits = idx.search("React authentication component", 3).unwrap();
    assert_eq!(hits[0].skill_path, "ui/react/auth");
    assert!(hits[0].score > 0.0 && hits[0].score <= 1.0);
    assert!(matches!(
        idx.search("  ", 3),
        Err(Error::InvalidArgument(_))
    ));
    match idx
        .route("Create a React authentication component with login")
        .unwrap()
    {
        RouteOutcome::Matched(h) => assert_eq!(h.skill_path, "ui/react/auth"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        idx.route("quantum chromodynamics").unwrap(),
        RouteOutcome::NoMatch
    );
    let e = idx
        .explain("react authentication", "ui/react/auth")
        .unwrap();
    assert_eq!(e.skill_path, "ui/react/auth");
    assert!(e.score > 0.0);
    assert!(!e.terms.is_empty());
    assert!(matches!(idx.explain("x", "nope"), Err(Error::NotFound(_))));
}

#[test]
fn search_route_and_explain_with_the_spec_keyword_algorithm() {
    let config = EngineConfig {
        algorithm: Algorithm::Keywords,
        ..EngineConfig::default()
    };
    let idx = spec_tree().index_with(config);
    // auth: keywords [react, auth, component, login], priority 5:
    // "react" + "authentication" (contains "auth") + "component" = 3/4 + 0.005.
    // ui/react/_index: keywords [react] = 1/1 (short keyword lists win under the spec).
    let hits = idx
        .search("Create a React component for the authentication", 5)
        .unwrap();
    assert_eq!(hits[0].skill_path, "ui/react/_index");
    assert!((hits[0].score - 1.0).abs() < 1e-9, "{hits:?}");
    assert_eq!(hits[1].skill_path, "ui/react/auth");
    assert!((hits[1].score - 0.755).abs() < 1e-9, "{hits:?}");
    assert_eq!(hits[1].matched, vec!["react", "auth", "component"]);
    let e = idx
        .explain(
            "Create a React component for the authentication",
            "ui/react/auth",
        )
        .unwrap();
    assert!((e.score - 0.755).abs() < 1e-9);
    assert_eq!(e.terms.len(), 3);
    assert!((e.terms[0].contribution - 0.25).abs() < 1e-9);
    // "login auth": auth matches 2/4 + 0.005; nothing else matches.
    match idx.route("login auth").unwrap() {
        RouteOutcome::Matched(h) => {
            assert_eq!(h.skill_path, "ui/react/auth");
            assert!((h.score - 0.505).abs() < 1e-9);
        }
        other => panic!("{other:?}"),
    }
    // 1.0 vs 0.755: a clear winner under the spec.
    match idx.route("react authentication component").unwrap() {
        RouteOutcome::Matched(h) => assert_eq!(h.skill_path, "ui/react/_index"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn spec_4_1_markdown_in_a_resource_folder_is_a_resource() {
    let mem = Mem::default().root(
        "r",
        &[
            (
                "guide.md",
                "---\ndescription: Guide\nkeywords: [guide]\n---\nG",
            ),
            (
                "guide/extra.md",
                "---\ndescription: Looks like a skill\nkeywords: [x]\n---\nX",
            ),
            (
                "guide/deep/more.md",
                "---\ndescription: d\nkeywords: [y]\n---\nY",
            ),
            // `docs.md` is plain Markdown, not a skill: `docs/` is not a resource folder.
            ("docs.md", "# Docs\n"),
            (
                "docs/howto.md",
                "---\ndescription: How to\nkeywords: [how]\n---\nH",
            ),
        ],
    );
    let idx = mem.index();
    assert_eq!(paths_of(&idx), vec!["docs/howto", "guide"]);
    let reports = idx.reports();
    let r = report(&reports, 0, "guide/extra.md");
    assert_eq!(
        (r.skill_path.as_deref(), r.worst),
        (None, Some(Severity::Info))
    );
    assert!(
        r.diagnostics[0]
            .message
            .contains("resource folder `guide/`")
    );
    let m = idx.manifest("guide").unwrap();
    let rel: Vec<&str> = m.iter().map(|f| f.relative.as_str()).collect();
    assert_eq!(rel, vec!["guide.md", "deep/more.md", "extra.md"]);
}

#[test]
fn absurd_queries_are_refused_without_echo() {
    let idx = spec_tree().index();
    let huge = "react ".repeat(3 << 20);
    for (query, says) in [
        (huge.as_str(), "bytes long"),
        (&"a ".repeat(MAX_QUERY_WORDS + 1)[..], "more than 512 words"),
    ] {
        for e in [
            idx.search(query, 3).unwrap_err(),
            idx.route(query).unwrap_err(),
            idx.explain(query, "ui/react/auth").unwrap_err(),
        ] {
            let Error::InvalidArgument(m) = e else {
                panic!("{e:?}")
            };
            assert!(m.contains(says), "{m}");
            assert!(m.len() < 300, "no echo of the query: {m}");
        }
    }
    // At the limits, a query is searched.
    let words = "react ".repeat(MAX_QUERY_WORDS);
    assert!(words.len() <= MAX_QUERY_BYTES);
    assert!(idx.search(&words, 3).is_ok());
}

#[test]
fn long_paths_are_echoed_cut_short_and_cost_no_suggestions() {
    let idx = spec_tree().index();
    let long = "ui/react/".repeat(400_000);
    let started = std::time::Instant::now();
    let Err(Error::NotFound(m)) = idx.get(&long) else {
        panic!("expected NotFound")
    };
    assert!(m.len() < 400, "{} bytes", m.len());
    assert!(m.contains("3600000 bytes"), "{m}");
    let Err(Error::InvalidPath(m)) = crate::paths::validate_relative_path(&format!("/{long}"))
    else {
        panic!("expected InvalidPath")
    };
    assert!(m.len() < 400, "{} bytes", m.len());
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
}

/// Restore `sections` into a new index: never a panic; when it succeeds, the index answers.
fn restore_checked(sections: &[Vec<u8>]) -> bool {
    let count = sections.len() as u32;
    let mut idx = Index::new(EngineConfig::default());
    for (n, bytes) in sections.iter().enumerate() {
        if idx.restore_section(n as u32, count, bytes).is_err() {
            // A failed restore leaves a new index: a fresh build still works.
            spec_tree().add_to(&mut idx);
            idx.finish().unwrap();
            assert!(idx.search("react", 3).is_ok());
            return false;
        }
    }
    // Restored: every query path runs without a panic.
    let _ = idx.search("react authentication", 5);
    let _ = idx.route("react login component");
    let _ = idx.get("ui/react/auth");
    let _ = idx.suggest("reac", 3);
    let _ = idx.tree(None);
    if let Ok(n) = idx.snapshot_sections() {
        for k in 0..n {
            let _ = idx.snapshot_section(k);
        }
    }
    true
}

/// With the unit tests' tiny section sizes, the spec tree's arrays, reports, documents and
/// metadata each span several sections, and the restore (appending chunk after chunk into
/// arrays reserved at their size) gives the same index: the same answers, the same snapshot.
#[test]
fn snapshot_in_many_small_sections_restores_the_same_index() {
    let idx = spec_tree().index();
    let good = good_snapshot();
    let largest = good.iter().map(Vec::len).max().unwrap();
    // (more search index parts than its 2 plus one per large array; more skills than a section)
    assert!(idx.search_index.as_ref().unwrap().parts() > 12);
    assert!(idx.docs.len() > 3 && idx.reports.len() > 3);
    assert!(
        largest <= crate::rank::CHUNK_BYTES.max(1024),
        "a section of {largest} bytes"
    );
    let count = good.len() as u32;
    let mut copy = Index::new(EngineConfig::default());
    for (n, bytes) in good.iter().enumerate() {
        copy.restore_section(n as u32, count, bytes).unwrap();
    }
    for q in ["react authentication", "deploy", "login form", "reac"] {
        assert_eq!(copy.search(q, 10), idx.search(q, 10), "{q}");
    }
    assert_eq!(copy.reports(), idx.reports());
    let again: Vec<Vec<u8>> = (0..count)
        .map(|k| copy.snapshot_section(k).unwrap())
        .collect();
    assert!(again == good, "the restored index snapshots the same");
}

fn good_snapshot() -> Vec<Vec<u8>> {
    let idx = spec_tree().index();
    let n = idx.snapshot_sections().unwrap();
    (0..n).map(|k| idx.snapshot_section(k).unwrap()).collect()
}

#[test]
fn fuzz_snapshot_restore_with_damaged_sections() {
    use crate::fuzz::{Rng, cases, seed};
    let good = good_snapshot();
    assert!(restore_checked(&good), "the undamaged snapshot restores");
    let mut rng = Rng::new(3);
    for case in 0..cases() {
        let mut sections = good.clone();
        let k = rng.below(sections.len());
        let s = &mut sections[k];
        match rng.below(6) {
            0 if !s.is_empty() => {
                let at = rng.below(s.len());
                s[at] ^= 1 << rng.below(8);
            }
            1 => {
                let to = rng.below(s.len() + 1);
                s.truncate(to);
            }
            2 => {
                let at = rng.below(s.len() + 1);
                let byte = rng.next_u64() as u8;
                s.insert(at, byte);
            }
            3 if !s.is_empty() => {
                // A varint made huge (lengths and counts).
                let at = rng.below(s.len());
                s[at] = 0xFF;
                s.splice(at + 1..at + 1, [0xFF, 0xFF, 0xFF, 0x0F]);
            }
            4 => {
                let j = rng.below(good.len());
                sections[k] = good[j].clone();
            }
            _ => {
                for b in s.iter_mut() {
                    if rng.below(16) == 0 {
                        *b = rng.next_u64() as u8;
                    }
                }
            }
        }
        let run = std::panic::catch_unwind(|| restore_checked(&sections));
        if run.is_err() {
            panic!(
                "case {case} (FUZZ_SEED={}): section {k} damaged; keep it as guest/fuzz-regressions/snapshot/section-{k}-<name>.bin:\n{:?}",
                seed(),
                sections[k]
            );
        }
    }
}

/// Each file `section-K-*.bin` replaces section K of the spec tree's snapshot.
#[test]
fn snapshot_regressions_replay() {
    let good = good_snapshot();
    for (path, bytes) in crate::fuzz::regressions("snapshot") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let k: usize = name
            .strip_prefix("section-")
            .and_then(|r| r.split('-').next())
            .and_then(|k| k.parse().ok())
            .unwrap_or_else(|| panic!("{name}: name it section-K-what.bin"));
        let mut sections = good.clone();
        sections[k] = bytes;
        eprintln!("{name}");
        restore_checked(&sections);
    }
}
