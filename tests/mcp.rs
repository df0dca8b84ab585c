//! Tests: the MCP server, in process (an rmcp client over `tokio::io::duplex`) and as the real
//! binary over stdio; and the configuration it starts from.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use base64::Engine as _;
use rmcp::{
    ClientHandler, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ErrorCode, GetPromptRequestParams,
        GetSkillRequestParams, ReadResourceDirectoryRequestParams, ReadResourceRequestParams,
        ResourceContents, SkillResources,
    },
    service::{NotificationContext, RunningService, ServiceError},
};
use serde_json::{Value, json};
use skills_mcp::{
    config::{self, LoadOptions},
    mcp::SkillsServer,
};
use tempfile::TempDir;

/// Every test runs under this limit (a hung server fails the test instead of the run).
const LIMIT: Duration = Duration::from_secs(120);

pub(crate) fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// A small tree with both shapes of skill, inheritance, assets and scripts.
pub(crate) fn fixture() -> TempDir {
    let dir = TempDir::new().unwrap();
    let r = dir.path();
    write(
        r,
        "_root.md",
        "---\ndescription: Global rules for every task\nkeywords: [global]\n---\nGlobal rules: be precise.\n",
    );
    write(
        r,
        "ui/_index.md",
        "---\ndescription: User interface conventions\nkeywords: [ui, frontend]\nassets:\n  - file: styles/tokens.json\n    description: Design tokens\n    type: config\n---\nUI rules: use the design tokens.\n",
    );
    write(r, "ui/_index/styles/tokens.json", "{\"color\": \"blue\"}\n");
    write(
        r,
        "ui/react/auth.md",
        "---\ndescription: React authentication components and login forms\nkeywords: [react, authentication, login]\nassets:\n  - file: templates/AuthProvider.tsx\n    description: Auth provider template\n    type: template\n  - file: images/logo.png\n    description: Logo\n    type: image\n  - file: missing.txt\n    description: Declared but absent\nscripts:\n  - file: scripts/check.sh\n    description: Checks the auth configuration\n    execution: claude\n---\nAuth rules: never store tokens in localStorage.\n",
    );
    write(
        r,
        "ui/react/auth/templates/AuthProvider.tsx",
        "export const AuthProvider = () => null;\n",
    );
    write(
        r,
        "ui/react/auth/images/logo.png",
        [0x89, b'P', b'N', b'G', 0, 1, 2, 0xff],
    );
    write(r, "ui/react/auth/scripts/check.sh", "#!/bin/sh\necho ok\n");
    write(
        r,
        "api/deploy-a.md",
        "---\ndescription: Deploy services to a kubernetes cluster\nkeywords: [deploy, kubernetes, cluster]\n---\nDeploy A.\n",
    );
    write(
        r,
        "api/deploy-b.md",
        "---\ndescription: Deploy services to a kubernetes cluster\nkeywords: [deploy, kubernetes, cluster]\n---\nDeploy B.\n",
    );
    write(
        r,
        "pdf-processing/SKILL.md",
        "---\nname: pdf-processing\ndescription: Extract text and tables from PDF documents, fill PDF forms\nlicense: MIT\nmetadata:\n  owner: docs-team\n---\n# PDF processing\n\nUse pdfplumber.\n",
    );
    write(r, "pdf-processing/reference.md", "# Reference\n");
    write(r, "pdf-processing/scripts/extract.py", "print('hi')\n");
    write(
        r,
        "tools/odd-folder/SKILL.md",
        "---\nname: Odd Tool\ndescription: A skill whose name differs from its folder\n---\nOdd.\n",
    );
    dir
}

fn options(roots: &[&Path]) -> LoadOptions {
    LoadOptions {
        roots: roots.iter().map(|p| p.to_path_buf()).collect(),
        cwd: std::env::temp_dir(),
        ..Default::default()
    }
}

/// Open a server (off the async threads: engine calls block).
pub(crate) fn server_with(roots: &[&Path], yaml: Option<&str>) -> (SkillsServer, Option<TempDir>) {
    tokio::task::block_in_place(|| open_server(roots, yaml))
}

fn open_server(roots: &[&Path], yaml: Option<&str>) -> (SkillsServer, Option<TempDir>) {
    let mut opts = options(roots);
    let cfg = yaml.map(|y| {
        let d = TempDir::new().unwrap();
        write(d.path(), "c.yaml", y);
        opts.config_file = Some(d.path().join("c.yaml"));
        d
    });
    let loaded = config::load(&opts).expect("config loads");
    (skills_mcp::mcp::open(&loaded).expect("server opens"), cfg)
}

pub(crate) fn server(root: &Path) -> SkillsServer {
    server_with(&[root], None).0
}

/// A client that counts list-changed notifications.
#[derive(Clone, Default)]
pub(crate) struct Client {
    resources: Arc<AtomicUsize>,
    prompts: Arc<AtomicUsize>,
    tools: Arc<AtomicUsize>,
    changed: Arc<tokio::sync::Notify>,
}

impl ClientHandler for Client {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.resources.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }
    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.prompts.fetch_add(1, Ordering::SeqCst);
    }
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools.fetch_add(1, Ordering::SeqCst);
    }
}

pub(crate) type Connected = RunningService<RoleClient, Client>;

async fn connect_with(server: SkillsServer, client: Client) -> Connected {
    let (a, b) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let _ = server.serve_transport(a).await;
    });
    client.serve(b).await.expect("client connects")
}

pub(crate) async fn connect(server: SkillsServer) -> Connected {
    connect_with(server, Client::default()).await
}

pub(crate) async fn call(client: &Connected, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e:?}"))
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The JSON of a successful call.
pub(crate) fn ok(result: CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "tool error: {}", text(&result));
    match result.structured_content {
        Some(v) => v,
        None => serde_json::from_str(&text(&result)).expect("JSON text"),
    }
}

/// The message of a tool error.
pub(crate) fn err(result: CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected a tool error: {}",
        text(&result)
    );
    text(&result)
}

pub(crate) fn code(e: ServiceError) -> ErrorCode {
    match e {
        ServiceError::McpError(e) => e.code,
        other => panic!("expected an MCP error, got {other:?}"),
    }
}

pub(crate) fn bytes_of(c: &ResourceContents) -> Vec<u8> {
    match c {
        ResourceContents::TextResourceContents { text, .. } => text.as_bytes().to_vec(),
        ResourceContents::BlobResourceContents { blob, .. } => {
            base64::engine::general_purpose::STANDARD
                .decode(blob)
                .unwrap()
        }
        other => panic!("unexpected contents {other:?}"),
    }
}

pub(crate) async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(LIMIT, f)
        .await
        .expect("test timed out")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_with_schemas_annotations_and_short_descriptions() {
    within(async {
        let root = fixture();
        let client = connect(server(root.path())).await;
        let info = client.peer_info().expect("server info");
        let instructions = info.instructions.clone().unwrap_or_default();
        assert!(instructions.contains("get_skill"), "{instructions}");
        assert!(instructions.contains("pdf-processing"), "{instructions}");
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        for name in [
            "get_skill",
            "search_skills",
            "list_skills",
            "get_asset",
            "refresh_skills",
        ] {
            assert!(names.contains(&name), "{name} missing from {names:?}");
        }
        for t in &tools {
            let d = t.description.as_deref().unwrap_or_default();
            assert!(!d.is_empty(), "{} has no description", t.name);
            assert!(
                d.chars().count() < 2048,
                "{}: {} chars",
                t.name,
                d.chars().count()
            );
            let read_only = t.annotations.as_ref().and_then(|a| a.read_only_hint);
            match t.name.as_ref() {
                "get_skill" | "search_skills" | "list_skills" | "get_asset" => {
                    assert_eq!(read_only, Some(true), "{}", t.name)
                }
                "refresh_skills" => assert_eq!(read_only, Some(false)),
                // Tools of other features (run_script, report_usage) say what they are.
                _ => assert!(read_only.is_some(), "{} has no read_only_hint", t.name),
            }
            assert_eq!(
                t.input_schema.get("type"),
                Some(&json!("object")),
                "{}",
                t.name
            );
        }
        let get_skill = tools.iter().find(|t| t.name == "get_skill").unwrap();
        assert!(
            get_skill
                .description
                .as_deref()
                .unwrap()
                .contains("ui/react/auth"),
            "the catalogue is in the description"
        );
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_skill_routes_a_context_to_no_match_ambiguous_or_a_resolved_skill() {
    within(async {
        let root = fixture();
        let client = connect(server(root.path())).await;

        let v = ok(call(&client, "get_skill", json!({"context": "zzqx vvwy"})).await);
        assert_eq!(v["no_match"], json!(true), "{v}");

        let v = ok(call(
            &client,
            "get_skill",
            json!({"context": "deploy kubernetes cluster"}),
        )
        .await);
        assert_eq!(v["ambiguous"], json!(true), "{v}");
        let candidates: Vec<&str> = v["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["skill_path"].as_str().unwrap())
            .collect();
        assert!(candidates.contains(&"api/deploy-a"), "{v}");
        assert!(candidates.contains(&"api/deploy-b"), "{v}");

        let v = ok(call(
            &client,
            "get_skill",
            json!({"context": "build a React login form with authentication"}),
        )
        .await);
        assert_eq!(v["skill_path"], json!("ui/react/auth"), "{v}");
        assert!(v["score"].is_number(), "{v}");
        let content = v["content"].as_str().unwrap();
        assert!(content.contains("Auth rules"), "{content}");
        assert!(content.contains("UI rules"), "inherited: {content}");
        assert!(content.contains("Global rules"), "inherited: {content}");
        let assets: Vec<&str> = v["assets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["file"].as_str().unwrap())
            .collect();
        assert!(assets.contains(&"templates/AuthProvider.tsx"), "{v}");
        assert_eq!(v["scripts"][0]["file"], json!("scripts/check.sh"), "{v}");
        assert_eq!(v["scripts"][0]["execution"], json!("claude"), "{v}");
        assert_eq!(v["inherited_assets"][0]["from"], json!("ui/_index"), "{v}");
        assert_eq!(v["uri"], json!("skill://ui/react/auth/SKILL.md"));
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_skill_loads_by_path_or_name_and_suggests_for_unknown_ones() {
    within(async {
        let root = fixture();
        let client = connect(server(root.path())).await;
        let v = ok(call(&client, "get_skill", json!({"skill_path": "ui/react/auth"})).await);
        assert_eq!(v["skill_path"], json!("ui/react/auth"));
        assert!(v.get("score").is_none(), "a direct load has no score: {v}");

        let v = ok(call(
            &client,
            "get_skill",
            json!({"skill_path": "pdf-processing"}),
        )
        .await);
        assert!(v["content"].as_str().unwrap().contains("pdfplumber"), "{v}");

        let e = err(call(&client, "get_skill", json!({"skill_path": "ui/react/auht"})).await);
        assert!(e.contains("skill_path"), "{e}");
        assert!(e.contains("ui/react/auth"), "did you mean: {e}");

        let e = err(call(&client, "get_skill", json!({})).await);
        assert!(e.contains("context") && e.contains("skill_path"), "{e}");
        let e = err(call(&client, "get_skill", json!({"context": "   "})).await);
        assert!(e.contains("context"), "{e}");
        let e = err(call(&client, "get_skill", json!({"context": 5})).await);
        assert!(e.contains("`context`") && e.contains("string"), "{e}");
        let e = err(call(&client, "get_skill", json!({"skillpath": "x"})).await);
        assert!(e.contains("`skillpath`"), "{e}");
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_skills_ranks_and_checks_its_arguments() {
    within(async {
        let root = fixture();
        let client = connect(server(root.path())).await;
        let v = ok(call(&client, "search_skills", json!({"query": "pdf tables"})).await);
        let first = &v["results"][0];
        assert_eq!(first["skill_path"], json!("pdf-processing"), "{v}");
        assert_eq!(first["uri"], json!("skill://pdf-processing/SKILL.md"));
        assert!(first["score"].as_f64().unwrap() > 0.0);
        assert!(first["description"].as_str().unwrap().contains("PDF"));

        let v = ok(call(
            &client,
            "search_skills",
            json!({"query": "deploy", "limit": 1}),
        )
        .await);
        assert_eq!(v["results"].as_array().unwrap().len(), 1, "{v}");

        for bad in [
            json!({"query": "x", "limit": 0}),
            json!({"query": "x", "limit": 51}),
        ] {
            let e = err(call(&client, "search_skills", bad).await);
            assert!(e.contains("limit") && e.contains("50"), "{e}");
        }
        let e = err(call(&client, "search_skills", json!({"query": "  "})).await);
        assert!(e.contains("query"), "{e}");
        let e = err(call(&client, "search_skills", json!({})).await);
        assert!(e.contains("`query`"), "{e}");
        let e = err(call(
            &client,
            "search_skills",
            json!({"query": "x", "limit": "ten"}),
        )
        .await);
        assert!(e.contains("`limit`"), "{e}");
        client.cancel().await.unwrap();
    })
    .await
}

fn find_node<'a>(node: &'a Value, path: &str) -> Option<&'a Value> {
    if node["path"] == json!(path) {
        return Some(node);
    }
    node["children"]
        .as_array()?
        .iter()
        .find_map(|c| find_node(c, path))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_skills_gives_the_tree_with_counts() {
    within(async {
        let root = fixture();
        let client = connect(server(root.path())).await;
        let tree = ok(call(&client, "list_skills", json!({})).await);
        let auth = find_node(&tree, "ui/react/auth").expect("auth in the tree");
        assert_eq!(auth["is_skill"], json!(true));
        assert_eq!(auth["scriptCount"], json!(1), "{auth}");
        assert!(auth["assetCount"].as_u64().unwrap() >= 2, "{auth}");
        assert!(find_node(&tree, "pdf-processing").is_some());

        let sub = ok(call(&client, "list_skills", json!({"path": "ui"})).await);
        assert!(find_node(&sub, "ui/react/auth").is_some(), "{sub}");
        assert!(find_node(&sub, "pdf-processing").is_none(), "{sub}");

        let e = err(call(&client, "list_skills", json!({"path": "nowhere/at/all"})).await);
        assert!(e.contains("path"), "{e}");
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_asset_serves_text_binary_and_inherited_files_and_refuses_bad_ones() {
    within(async {
        let root = fixture();
        let client = connect(server(root.path())).await;
        let v = ok(call(
            &client,
            "get_asset",
            json!({"skill_path": "ui/react/auth", "file": "templates/AuthProvider.tsx"}),
        )
        .await);
        assert_eq!(
            v["content"],
            json!("export const AuthProvider = () => null;\n")
        );
        assert_eq!(v["size_bytes"], json!(40));
        assert_eq!(v["type"], json!("template"));
        assert!(v.get("resolved_from").is_none(), "{v}");

        let v = ok(call(
            &client,
            "get_asset",
            json!({"skill_path": "ui/react/auth", "file": "images/logo.png"}),
        )
        .await);
        let raw = base64::engine::general_purpose::STANDARD
            .decode(v["content_base64"].as_str().unwrap())
            .unwrap();
        assert_eq!(raw, [0x89, b'P', b'N', b'G', 0, 1, 2, 0xff]);
        assert_eq!(v["mime_type"], json!("image/png"));
        assert_eq!(v["size_bytes"], json!(8));

        let v = ok(call(
            &client,
            "get_asset",
            json!({"skill_path": "ui/react/auth", "file": "styles/tokens.json"}),
        )
        .await);
        assert_eq!(v["resolved_from"], json!("ui/_index"), "{v}");

        let e = err(call(
            &client,
            "get_asset",
            json!({"skill_path": "ui/react/auth", "file": "../../_root.md"}),
        )
        .await);
        assert!(e.contains("file"), "{e}");
        let e = err(call(
            &client,
            "get_asset",
            json!({"skill_path": "ui/react/auth", "file": "missing.txt"}),
        )
        .await);
        assert!(e.contains("missing.txt"), "{e}");
        let e = err(call(
            &client,
            "get_asset",
            json!({"skill_path": "ui/react/auth", "file": "nope.txt"}),
        )
        .await);
        assert!(e.contains("file"), "{e}");
        let e = err(call(
            &client,
            "get_asset",
            json!({"skill_path": "nope/skill", "file": "a.txt"}),
        )
        .await);
        assert!(e.contains("skill_path"), "{e}");
        let e = err(call(&client, "get_asset", json!({"skill_path": "ui/react/auth"})).await);
        assert!(e.contains("`file`"), "{e}");
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_asset_names_the_sizes_over_the_limit() {
    within(async {
        let root = fixture();
        let (server, _cfg) = server_with(&[root.path()], Some("assets:\n  max_size_bytes: 10\n"));
        let client = connect(server).await;
        let e = err(call(
            &client,
            "get_asset",
            json!({"skill_path": "ui/react/auth", "file": "templates/AuthProvider.tsx"}),
        )
        .await);
        assert!(e.contains("40") && e.contains("10"), "{e}");
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_skills_reindexes_in_local_mode() {
    within(async {
        let root = fixture();
        let client = connect(server(root.path())).await;
        let before = ok(call(&client, "refresh_skills", json!({})).await);
        assert_eq!(before["success"], json!(true));
        assert_eq!(before["mode"], json!("local"));
        let n = before["skills_reindexed"].as_u64().unwrap();
        write(
            root.path(),
            "extra/SKILL.md",
            "---\nname: extra\ndescription: An extra skill\n---\nExtra.\n",
        );
        let after = ok(call(&client, "refresh_skills", json!({})).await);
        assert_eq!(
            after["skills_reindexed"].as_u64().unwrap(),
            n + 1,
            "{after}"
        );
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_extension_serves_every_file_with_matching_digests() {
    within(async {
        let root = fixture();
        // More than one page of skills.
        for i in 0..510 {
            write(
                root.path(),
                &format!("bulk/skill-{i:02}/SKILL.md"),
                format!(
                    "---\nname: skill-{i:02}\ndescription: Bulk skill number {i}\n---\nBody {i}.\n"
                ),
            );
        }
        let client = connect(server(root.path())).await;
        let first = client.list_skills(None).await.unwrap();
        assert!(first.next_cursor.is_some(), "paginated");
        let skills = client.list_all_skills().await.unwrap();
        let uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
        for uri in [
            "skill://pdf-processing/SKILL.md",
            "skill://ui/react/auth/SKILL.md",
            "skill://bulk/skill-509/SKILL.md",
            "skill://tools/odd-folder/SKILL.md",
        ] {
            assert!(uris.contains(&uri), "{uri} not in {uris:?}");
        }
        assert!(skills.len() >= 515, "{}", skills.len());

        let mut files = 0;
        for skill in &skills {
            let got = client
                .get_skill(GetSkillRequestParams::new(skill.uri.clone()))
                .await
                .unwrap();
            assert_eq!(&got.skill, skill);
            let SkillResources::Files(resources) = &skill.resources else {
                panic!("static manifests")
            };
            assert_eq!(resources[0].uri, skill.uri, "SKILL.md first");
            for r in resources {
                let read = client
                    .read_resource(ReadResourceRequestParams::new(r.uri.clone()))
                    .await
                    .unwrap_or_else(|e| panic!("{}: {e:?}", r.uri));
                let bytes = bytes_of(&read.contents[0]);
                r.verify(&bytes).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(r.digest, rmcp::model::sha256_digest(&bytes));
                files += 1;
            }
        }
        assert!(files > skills.len(), "assets are served too");

        // Frontmatter verbatim; the name from the path.
        let pdf = skills
            .iter()
            .find(|s| s.name() == "pdf-processing")
            .unwrap();
        assert_eq!(pdf.frontmatter.extra["license"], json!("MIT"));
        assert_eq!(
            pdf.frontmatter.extra["metadata"]["owner"],
            json!("docs-team")
        );
        let odd = skills
            .iter()
            .find(|s| s.uri == "skill://tools/odd-folder/SKILL.md")
            .unwrap();
        assert_eq!(odd.name(), "odd-folder");
        assert_eq!(
            odd.meta.as_ref().unwrap().0["io.github.skills-mcp/declared-name"],
            json!("Odd Tool")
        );

        // A hierarchical skill is a virtual SKILL.md with the resolved content.
        let read = client
            .read_resource(ReadResourceRequestParams::new(
                "skill://ui/react/auth/SKILL.md",
            ))
            .await
            .unwrap();
        let md = String::from_utf8(bytes_of(&read.contents[0])).unwrap();
        assert!(md.starts_with("---"), "{md}");
        assert!(
            md.contains("Auth rules") && md.contains("Global rules"),
            "{md}"
        );
        let auth = skills
            .iter()
            .find(|s| s.uri == "skill://ui/react/auth/SKILL.md")
            .unwrap();
        assert_eq!(auth.name(), "auth");
        let SkillResources::Files(res) = &auth.resources else {
            unreachable!()
        };
        assert!(
            res.iter()
                .any(|r| r.uri == "skill://ui/react/auth/templates/AuthProvider.tsx"),
            "{res:?}"
        );
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_uris_and_non_directories_are_invalid_params() {
    within(async {
        let root = fixture();
        let client = connect(server(root.path())).await;
        for uri in [
            "skill://nope/SKILL.md",
            "skill://pdf-processing/nope/SKILL.md",
        ] {
            let e = client
                .get_skill(GetSkillRequestParams::new(uri))
                .await
                .unwrap_err();
            assert_eq!(code(e), ErrorCode::INVALID_PARAMS, "{uri}");
        }
        for uri in [
            "skill://pdf-processing/nope.md",
            "file:///etc/passwd",
            "skill://pdf-processing/../ui/react/auth/SKILL.md",
            "skill://nope",
        ] {
            let e = client
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
                .unwrap_err();
            assert_eq!(code(e), ErrorCode::INVALID_PARAMS, "{uri}");
        }
        let e = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new(
                "skill://pdf-processing/SKILL.md",
            ))
            .await
            .unwrap_err();
        assert_eq!(code(e), ErrorCode::INVALID_PARAMS);
        let e = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new("skill://nowhere"))
            .await
            .unwrap_err();
        assert_eq!(code(e), ErrorCode::INVALID_PARAMS);
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn directories_list_their_direct_children() {
    within(async {
        let root = fixture();
        let client = connect(server(root.path())).await;
        let top = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new("skill://"))
            .await
            .unwrap();
        let names: Vec<&str> = top.resources.iter().map(|r| r.name.as_str()).collect();
        assert!(
            names.contains(&"pdf-processing") && names.contains(&"ui"),
            "{names:?}"
        );
        assert!(top.resources.iter().all(|r| r.is_directory()));

        let pdf = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new(
                "skill://pdf-processing",
            ))
            .await
            .unwrap();
        let mut entries: Vec<(String, bool)> = pdf
            .resources
            .iter()
            .map(|r| (r.uri.clone(), r.is_directory()))
            .collect();
        entries.sort();
        assert_eq!(
            entries,
            [
                ("skill://pdf-processing/SKILL.md".to_string(), false),
                ("skill://pdf-processing/reference.md".to_string(), false),
                ("skill://pdf-processing/scripts".to_string(), true),
            ]
        );
        let scripts = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new(
                "skill://pdf-processing/scripts",
            ))
            .await
            .unwrap();
        assert_eq!(scripts.resources.len(), 1);
        assert_eq!(
            scripts.resources[0].uri,
            "skill://pdf-processing/scripts/extract.py"
        );

        let resources = client.list_all_resources().await.unwrap();
        assert!(
            resources
                .iter()
                .any(|r| r.uri == "skill://pdf-processing/SKILL.md")
        );
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_over_the_file_limit_are_left_out_of_the_extension_only() {
    within(async {
        let root = fixture();
        for i in 0..520 {
            write(root.path(), &format!("big/files/f{i:03}.txt"), "x");
        }
        write(
            root.path(),
            "big/SKILL.md",
            "---\nname: big\ndescription: A skill with too many files\n---\nBig.\n",
        );
        let client = connect(server(root.path())).await;
        let skills = client.list_all_skills().await.unwrap();
        assert!(!skills.iter().any(|s| s.uri == "skill://big/SKILL.md"));
        let e = client
            .get_skill(GetSkillRequestParams::new("skill://big/SKILL.md"))
            .await
            .unwrap_err();
        assert_eq!(code(e), ErrorCode::INVALID_PARAMS);
        let v = ok(call(&client, "get_skill", json!({"skill_path": "big"})).await);
        assert_eq!(v["skill_path"], json!("big"));
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_skill_is_a_prompt_and_prompt_names_complete() {
    within(async {
        let root = fixture();
        let client = connect(server(root.path())).await;
        let prompts = client.list_all_prompts().await.unwrap();
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        assert!(names.contains(&"load_skill"), "{names:?}");
        assert!(names.contains(&"ui/react/auth") && names.contains(&"pdf-processing"));

        let mut args = serde_json::Map::new();
        args.insert("context".into(), json!("a login page"));
        let p = client
            .get_prompt(GetPromptRequestParams::new("ui/react/auth").with_arguments(args))
            .await
            .unwrap();
        let body = serde_json::to_string(&p.messages).unwrap();
        assert!(
            body.contains("Auth rules") && body.contains("a login page"),
            "{body}"
        );

        let mut args = serde_json::Map::new();
        args.insert("skill".into(), json!("pdf-processing"));
        let p = client
            .get_prompt(GetPromptRequestParams::new("load_skill").with_arguments(args))
            .await
            .unwrap();
        assert!(
            serde_json::to_string(&p.messages)
                .unwrap()
                .contains("pdfplumber")
        );

        let e = client
            .get_prompt(GetPromptRequestParams::new("no/such/skill"))
            .await
            .unwrap_err();
        assert_eq!(code(e), ErrorCode::INVALID_PARAMS);

        let c = client
            .complete_prompt_argument("load_skill", "skill", "ui/re", None)
            .await
            .unwrap();
        assert_eq!(c.values, ["ui/react/auth"]);
        let c = client
            .complete_prompt_argument("load_skill", "skill", "pdf", None)
            .await
            .unwrap();
        assert!(c.values.contains(&"pdf-processing".to_string()));
        client.cancel().await.unwrap();
    })
    .await
}

fn generated(n: usize) -> TempDir {
    let dir = TempDir::new().unwrap();
    for i in 0..n {
        write(
            dir.path(),
            &format!("cat{}/skill-{i:03}/SKILL.md", i % 7),
            format!(
                "---\nname: skill-{i:03}\ndescription: Generated skill {i} about topic {} with a fairly long description that goes on to describe when to use it and when not to use it\n---\nBody.\n",
                i % 13
            ),
        );
    }
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instructions_and_descriptions_carry_the_catalogue_by_tier() {
    within(async {
        for (n, marker) in [(100, "skill-099"), (400, "search_skills")] {
            let root = generated(n);
            let client = connect(server(root.path())).await;
            let instructions = client.peer_info().unwrap().instructions.clone().unwrap();
            assert!(instructions.contains(marker), "{n}: {instructions}");
            if n == 400 {
                assert!(instructions.contains("cat0 ("), "{instructions}");
                assert!(!instructions.contains("skill-399"));
            }
            let tools = client.list_all_tools().await.unwrap();
            for t in &tools {
                let d = t.description.as_deref().unwrap_or_default();
                assert!(
                    d.chars().count() < 2048,
                    "{n}: {} has {}",
                    t.name,
                    d.chars().count()
                );
            }
            client.cancel().await.unwrap();
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_skill_added_on_disk_appears_while_requests_run() {
    within(async {
        let root = fixture();
        let server = server(root.path());
        let _watch = skills_mcp::mcp::start_watching(vec![root.path().to_path_buf()])
            .unwrap()
            .reload(server.clone(), Duration::from_millis(100));
        let client = Client::default();
        let counts = client.clone();
        let client = Arc::new(connect_with(server, client).await);

        // Requests keep running during the rebuild and never fail.
        let busy = {
            let client = client.clone();
            tokio::spawn(async move {
                let mut n = 0;
                while n < 2000 {
                    let v = ok(call(&client, "search_skills", json!({"query": "pdf"})).await);
                    assert!(v["results"].is_array());
                    let skills = client.list_all_skills().await.unwrap();
                    assert!(skills.len() >= 6);
                    n += 1;
                    if counts.resources.load(Ordering::SeqCst) > 0 && n > 3 {
                        break;
                    }
                }
            })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        let changed = counts.changed.notified();
        write(
            root.path(),
            "fresh/new-skill/SKILL.md",
            "---\nname: new-skill\ndescription: A freshly added skill about quokkas\n---\nQuokkas.\n",
        );
        tokio::time::timeout(Duration::from_secs(30), changed)
            .await
            .expect("resources/list_changed after adding a skill");
        // The prompts and tools notifications follow the resources one.
        for _ in 0..100 {
            if counts.prompts.load(Ordering::SeqCst) >= 1 && counts.tools.load(Ordering::SeqCst) >= 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(counts.prompts.load(Ordering::SeqCst) >= 1);
        assert!(counts.tools.load(Ordering::SeqCst) >= 1);
        let skills = client.list_all_skills().await.unwrap();
        assert!(skills.iter().any(|s| s.uri == "skill://fresh/new-skill/SKILL.md"));
        let v = ok(call(&client, "get_skill", json!({"skill_path": "fresh/new-skill"})).await);
        assert!(v["content"].as_str().unwrap().contains("Quokkas"));

        // A skill that becomes invalid is reported; the others keep serving.
        write(root.path(), "fresh/new-skill/SKILL.md", "---\nname: [unclosed\n---\n");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let v = ok(call(&client, "get_skill", json!({"skill_path": "pdf-processing"})).await);
        assert_eq!(v["skill_path"], json!("pdf-processing"));
        busy.await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_opens_with_server_discover_is_served() {
    within(async {
        use rmcp::{ClientLifecycleMode, ClientServiceExt, model::ProtocolVersion};
        let root = fixture();
        let server = server(root.path());
        let (a, b) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            let _ = server.serve_transport(a).await;
        });
        let client = Client::default()
            .serve_with_lifecycle(
                b,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("discover");
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "get_skill"));
        let v = ok(call(&client, "search_skills", json!({"query": "pdf"})).await);
        assert_eq!(v["results"][0]["skill_path"], json!("pdf-processing"));
        let skills = client.list_all_skills().await.unwrap();
        assert!(!skills.is_empty());

        // 2026-07-28 clients get list-changed notifications on a subscriptions/listen stream.
        let filter = rmcp::model::SubscriptionFilter::builder()
            .resources_list_changed()
            .prompts_list_changed()
            .build();
        let mut subscription = client.listen(filter).await.expect("subscriptions/listen");
        write(
            root.path(),
            "late/SKILL.md",
            "---\nname: late\ndescription: A late skill\n---\nLate.\n",
        );
        ok(call(&client, "refresh_skills", json!({})).await);
        let note = tokio::time::timeout(Duration::from_secs(10), subscription.next())
            .await
            .expect("a notification")
            .expect("the stream")
            .expect("not closed");
        assert!(
            matches!(
                note,
                rmcp::model::ServerNotification::ResourceListChangedNotification(_)
            ),
            "{note:?}"
        );
        assert!(
            client
                .list_all_skills()
                .await
                .unwrap()
                .iter()
                .any(|s| s.uri == "skill://late/SKILL.md")
        );
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_root_overrides_the_same_skill_path() {
    within(async {
        let base = fixture();
        let team = TempDir::new().unwrap();
        write(
            team.path(),
            "pdf-processing/SKILL.md",
            "---\nname: pdf-processing\ndescription: The team's PDF skill\n---\nTeam PDF rules.\n",
        );
        let (server, _) = server_with(&[base.path(), team.path()], None);
        let client = connect(server).await;
        let v = ok(call(
            &client,
            "get_skill",
            json!({"skill_path": "pdf-processing"}),
        )
        .await);
        assert!(
            v["content"].as_str().unwrap().contains("Team PDF rules"),
            "{v}"
        );
        let read = client
            .read_resource(ReadResourceRequestParams::new(
                "skill://pdf-processing/SKILL.md",
            ))
            .await
            .unwrap();
        let md = String::from_utf8(bytes_of(&read.contents[0])).unwrap();
        assert!(md.contains("Team PDF rules"), "{md}");
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bundled_skills_are_served() {
    within(async {
        let bundled = crate::common::bundled_skills();
        let client = connect(server(&bundled)).await;
        let skills = client.list_all_skills().await.unwrap();
        assert!(!skills.is_empty());
        for skill in &skills {
            let SkillResources::Files(files) = &skill.resources else {
                continue;
            };
            for f in files {
                let read = client
                    .read_resource(ReadResourceRequestParams::new(f.uri.clone()))
                    .await
                    .unwrap();
                f.verify(&bytes_of(&read.contents[0])).unwrap();
            }
        }
        let tree = ok(call(&client, "list_skills", json!({})).await);
        assert!(!tree["children"].as_array().unwrap().is_empty());
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_mcp_on_stdio() {
    within(async {
        use rmcp::transport::TokioChildProcess;
        let root = fixture();
        let home = TempDir::new().unwrap();
        let mut cmd = crate::common::stdio_server(home.path());
        cmd.arg("--root").arg(root.path());
        let transport = TokioChildProcess::new(cmd).expect("spawn skills-mcp");
        let client = ().serve(transport).await.expect("initialize");
        let info = client.peer_info().unwrap();
        assert_eq!(info.server_info.as_ref().unwrap().name, "skills-mcp");
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        for name in [
            "get_skill",
            "search_skills",
            "list_skills",
            "get_asset",
            "refresh_skills",
        ] {
            assert!(names.contains(&name), "{name} missing from {names:?}");
        }
        let calls: [(&str, Value); 5] = [
            (
                "get_skill",
                json!({"context": "react login authentication"}),
            ),
            ("search_skills", json!({"query": "pdf"})),
            ("list_skills", json!({})),
            (
                "get_asset",
                json!({"skill_path": "pdf-processing", "file": "reference.md"}),
            ),
            ("refresh_skills", json!({})),
        ];
        for (tool, args) in calls {
            let Value::Object(args) = args else {
                unreachable!()
            };
            let r = client
                .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
                .await
                .unwrap();
            assert_ne!(r.is_error, Some(true), "{tool}: {}", text(&r));
        }
        client.cancel().await.unwrap();
    })
    .await
}

/// The configuration: layers, precedence, validation, roots.
mod config_tests {
    use super::*;
    use skills_mcp::config::{Algorithm, Config, RootSource, example_config};

    fn load(opts: &LoadOptions) -> anyhow::Result<config::Loaded> {
        config::load(opts)
    }

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn example_config_parses_back_to_the_defaults_with_a_comment_on_every_key() {
        let example = example_config();
        let parsed: Config = serde_yaml::from_str(&example).unwrap();
        assert_eq!(parsed, Config::default());
        let lines: Vec<&str> = example.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') || t.starts_with("- ") {
                continue;
            }
            let commented = t.contains(" #") || lines[i - 1].trim().starts_with('#');
            assert!(commented, "line {}: {line:?} has no comment", i + 1);
        }
        // And every key of the defaults appears in it.
        let defaults = serde_yaml::to_value(Config::default()).unwrap();
        for (section, body) in defaults.as_mapping().unwrap() {
            let section = section.as_str().unwrap();
            assert!(example.contains(&format!("\n{section}:\n")), "{section}");
            for (key, _) in body.as_mapping().unwrap() {
                let key = key.as_str().unwrap();
                assert!(example.contains(&format!("  {key}:")), "{section}.{key}");
            }
        }
    }

    #[test]
    fn layers_apply_in_order_defaults_roots_file_env() {
        let a = TempDir::new().unwrap();
        let b = TempDir::new().unwrap();
        let c = TempDir::new().unwrap();
        write(
            a.path(),
            "config.yaml",
            "matching:\n  min_score: 0.3\n  max_results: 5\nassets:\n  max_size_bytes: 100\n",
        );
        write(b.path(), "config.yaml", "matching:\n  min_score: 0.4\n");
        write(
            c.path(),
            "file.yaml",
            "matching:\n  algorithm: keywords\nassets:\n  max_size_bytes: 200\nscripts:\n  runners:\n    .rb: ruby\n",
        );
        let mut opts = options(&[a.path(), b.path()]);
        opts.config_file = Some(c.path().join("file.yaml"));
        opts.env = env(&[
            ("REFRESH_INTERVAL_MINUTES", "5"),
            ("ANALYTICS_ENDPOINT", "https://x.test/e"),
        ]);
        let loaded = load(&opts).unwrap();
        let cfg = &loaded.config;
        assert_eq!(cfg.matching.min_score, 0.4, "the later root wins");
        assert_eq!(cfg.matching.max_results, 5);
        assert_eq!(cfg.matching.algorithm, Algorithm::Keywords);
        assert_eq!(cfg.assets.max_size_bytes, 200, "--config over roots");
        assert_eq!(cfg.scripts.runners[".rb"], "ruby");
        assert_eq!(cfg.scripts.runners[".py"], "python3", "maps merge");
        assert_eq!(cfg.refresh.interval_minutes, 5);
        assert!(cfg.analytics.enabled);
        assert_eq!(cfg.analytics.endpoint, "https://x.test/e");
        assert_eq!(loaded.layers.len(), 5, "{:?}", loaded.layers);
    }

    #[test]
    fn unknown_keys_warn_and_bad_values_stop_with_key_value_and_allowed() {
        let a = TempDir::new().unwrap();
        write(
            a.path(),
            "config.yaml",
            "matching:\n  min_scor: 0.3\ncolour: red\nsources:\n  roots: [x]\n",
        );
        let loaded = load(&options(&[a.path()])).unwrap();
        let w = loaded.warnings.join("\n");
        assert!(w.contains("matching.min_scor"), "{w}");
        assert!(w.contains("colour"), "{w}");
        assert!(w.contains("sources"), "{w}");

        for (yaml, key, value) in [
            ("matching:\n  min_score: 1.5\n", "matching.min_score", "1.5"),
            ("matching:\n  max_results: 0\n", "matching.max_results", "0"),
            (
                "scripts:\n  allowed_extensions: [sh]\n",
                "scripts.allowed_extensions",
                "sh",
            ),
            (
                "matching:\n  algorithm: fuzzy\n",
                "matching.algorithm",
                "fuzzy",
            ),
            (
                "matching:\n  min_score: high\n",
                "matching.min_score",
                "high",
            ),
        ] {
            write(a.path(), "config.yaml", yaml);
            let e = format!("{:#}", load(&options(&[a.path()])).unwrap_err());
            assert!(
                e.contains(key) || (key == "matching.algorithm" && e.contains("algorithm")),
                "{yaml}: {e}"
            );
            assert!(e.contains(value), "{yaml}: {e}");
            assert!(e.contains("config.yaml"), "names the file: {e}");
        }
        // Analytics is the operator's: a bad value in --config stops start-up, naming the file.
        let c = TempDir::new().unwrap();
        write(c.path(), "op.yaml", "analytics:\n  endpoint: ftp://x\n");
        let mut opts = options(&[]);
        opts.config_file = Some(c.path().join("op.yaml"));
        let e = format!("{:#}", load(&opts).unwrap_err());
        assert!(
            e.contains("analytics.endpoint") && e.contains("ftp://x") && e.contains("op.yaml"),
            "{e}"
        );
        let mut opts = options(&[]);
        opts.env = env(&[("REFRESH_INTERVAL_MINUTES", "soon")]);
        let e = format!("{:#}", load(&opts).unwrap_err());
        assert!(
            e.contains("REFRESH_INTERVAL_MINUTES")
                && e.contains("soon")
                && e.contains("at least 1"),
            "{e}"
        );
    }

    #[test]
    fn roots_come_in_precedence_order() {
        let home = TempDir::new().unwrap();
        let cwd = TempDir::new().unwrap();
        let extra = TempDir::new().unwrap();
        let flag = TempDir::new().unwrap();
        let bundled = TempDir::new().unwrap();
        for d in [".claude/skills", ".agents/skills"] {
            std::fs::create_dir_all(home.path().join(d)).unwrap();
            std::fs::create_dir_all(cwd.path().join(d)).unwrap();
        }
        std::fs::create_dir_all(cwd.path().join("skills")).unwrap();
        let opts = LoadOptions {
            roots: vec![flag.path().to_path_buf(), extra.path().to_path_buf()],
            env: env(&[("SKILLS_DIR", &extra.path().display().to_string())]),
            cwd: cwd.path().to_path_buf(),
            home: Some(home.path().to_path_buf()),
            bundled: Some(bundled.path().to_path_buf()),
            ..Default::default()
        };
        let roots = load(&opts).unwrap().roots;
        let got: Vec<(PathBuf, RootSource)> =
            roots.iter().map(|r| (r.path.clone(), r.source)).collect();
        let want = vec![
            (home.path().join(".claude/skills"), RootSource::Standard),
            (home.path().join(".agents/skills"), RootSource::Standard),
            (cwd.path().join(".claude/skills"), RootSource::Standard),
            (cwd.path().join(".agents/skills"), RootSource::Standard),
            (cwd.path().join("skills"), RootSource::Standard),
            (flag.path().to_path_buf(), RootSource::Flag),
            // Listed twice (SKILLS_DIR, then --root): keeps its last place.
            (extra.path().to_path_buf(), RootSource::Flag),
        ];
        assert_eq!(got, want);

        // Nothing configured: the bundled folder.
        let empty = TempDir::new().unwrap();
        let opts = LoadOptions {
            cwd: empty.path().to_path_buf(),
            home: Some(empty.path().to_path_buf()),
            bundled: Some(bundled.path().to_path_buf()),
            ..Default::default()
        };
        let roots = load(&opts).unwrap().roots;
        assert_eq!(roots.len(), 1);
        assert_eq!(roots[0].source, RootSource::Bundled);

        // A --root that is not a directory stops start-up.
        let opts = LoadOptions {
            roots: vec![empty.path().join("nope")],
            cwd: empty.path().to_path_buf(),
            ..Default::default()
        };
        let e = format!("{:#}", load(&opts).unwrap_err());
        assert!(e.contains("--root") && e.contains("nope"), "{e}");
    }
}

/// The "done when", on the shared corpus (2,621 real skills; not part of the default run:
/// `cargo test --release -p skills-mcp mcp::the_combined_corpus -- --ignored`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs ../shared/corpora/combined"]
async fn the_combined_corpus_is_served_by_the_binary() {
    use rmcp::transport::TokioChildProcess;
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/combined");
    if !corpus.is_dir() {
        eprintln!("no corpus at {}", corpus.display());
        return;
    }
    let extra = TempDir::new().unwrap();
    let home = TempDir::new().unwrap();
    let mut cmd = crate::common::stdio_server(home.path());
    cmd.arg("--root")
        .arg(&corpus)
        .arg("--root")
        .arg(extra.path());
    let started = std::time::Instant::now();
    let client = Client::default()
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .expect("initialize");
    eprintln!("initialized in {:?}", started.elapsed());
    let tools = client.list_all_tools().await.unwrap();
    for t in &tools {
        assert!(t.description.as_deref().unwrap_or_default().chars().count() < 2048);
    }
    let v = ok(call(
        &client,
        "search_skills",
        json!({"query": "pdf forms", "limit": 5}),
    )
    .await);
    assert!(!v["results"].as_array().unwrap().is_empty(), "{v}");
    let v = ok(call(
        &client,
        "get_skill",
        json!({"context": "write a pull request description"}),
    )
    .await);
    assert!(v.is_object(), "{v}");
    let tree = ok(call(&client, "list_skills", json!({})).await);
    assert!(!tree["children"].as_array().unwrap().is_empty());

    let started = std::time::Instant::now();
    let skills = client.list_all_skills().await.unwrap();
    eprintln!("{} skills listed in {:?}", skills.len(), started.elapsed());
    assert!(skills.len() > 2000, "{}", skills.len());
    let started = std::time::Instant::now();
    let mut files = 0;
    for skill in &skills {
        let SkillResources::Files(resources) = &skill.resources else {
            continue;
        };
        for r in resources {
            let read = client
                .read_resource(ReadResourceRequestParams::new(r.uri.clone()))
                .await
                .unwrap_or_else(|e| panic!("{}: {e:?}", r.uri));
            r.verify(&bytes_of(&read.contents[0]))
                .unwrap_or_else(|e| panic!("{e}"));
            files += 1;
        }
    }
    eprintln!("{files} files read and verified in {:?}", started.elapsed());

    // A skill added on disk appears without a restart.
    let changed = client.service().changed.notified();
    write(
        extra.path(),
        "added/SKILL.md",
        "---\nname: added\ndescription: A skill added while serving, about wombats\n---\nWombats.\n",
    );
    tokio::time::timeout(Duration::from_secs(120), changed)
        .await
        .expect("list_changed after adding a skill");
    let v = ok(call(&client, "get_skill", json!({"skill_path": "added"})).await);
    assert!(v["content"].as_str().unwrap().contains("Wombats"));
    client.cancel().await.unwrap();
}
