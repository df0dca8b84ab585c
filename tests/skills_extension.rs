//! Tests (issue 17): every skill the Skills extension lists is valid by SEP-2640's rules, the
//! ones the official conformance suite checks, on every listed skill (the suite samples one):
//! the name rule on the final skill-path segment, that segment equal to `frontmatter.name`, the
//! entry's `frontmatter` identical to the frontmatter of the `SKILL.md` served for it (parsed
//! here with `serde_yaml`, as the suite parses it with its own YAML reader), and the resources,
//! `skills/get`, `resources/list` and the prompts agreeing with the entry. Also: category nodes
//! and invalid folder names, collisions, the paths the tools keep accepting, and pagination.
//! All through a real rmcp client against the real component.

use std::{
    collections::{BTreeMap, HashSet},
    path::Path,
    time::Instant,
};

use rmcp::model::{
    ErrorCode, GetPromptRequestParams, GetSkillRequestParams, PaginatedRequestParams,
    ReadResourceDirectoryRequestParams, ReadResourceRequestParams, Skill, SkillResources,
};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::common::{bin, bundled_skills, fixtures};
use crate::mcp::{
    Connected, bytes_of, call, code, connect, ok, server, server_with, within, write,
};
use skills_mcp::runtime::{Entry, EntryKind};

/// The Agent Skills naming rule, written out as the suite's regular expression says it:
/// `^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`.
fn valid_name(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.contains("--")
        && (1..=64).contains(&b.len())
        && inner(&b[0])
        && inner(&b[b.len() - 1])
        && b.iter().all(|c| inner(c) || *c == b'-')
}

/// The skill name a `SKILL.md` URI carries, as the suite reads it: the segment before
/// `SKILL.md` (no decoding).
fn final_segment(uri: &str) -> Option<&str> {
    let rest = &uri[uri.find("://")? + 3..];
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        [.., name, "SKILL.md"] => Some(name),
        _ => None,
    }
}

/// A served file split as the suite splits it (a BOM dropped, then
/// `^---\r?\n(.*?)\r?\n---[ \t]*(\r?\n|$)`): the frontmatter YAML and the body after it.
fn split_file(text: &str) -> Result<(&str, &str), String> {
    let t = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = t
        .strip_prefix("---\n")
        .or_else(|| t.strip_prefix("---\r\n"))
        .ok_or("no opening `---` line")?;
    let mut from = 0;
    loop {
        let i = rest[from..].find("\n---").ok_or("no closing `---` line")? + from;
        let after = rest[i + 4..].trim_start_matches([' ', '\t']);
        if after.is_empty() || after.starts_with('\n') || after.starts_with("\r\n") {
            // The frontmatter is every line before the closing fence, its last newline included
            // (a `|` block scalar that ends the frontmatter keeps it).
            let yaml = &rest[..=i];
            let body = after.split_once('\n').map_or("", |(_, b)| b);
            return Ok((yaml, body));
        }
        from = i + 1;
    }
}

/// The frontmatter of a served file, parsed by `serde_yaml` (see [`split_file`]).
fn file_frontmatter(text: &str) -> Result<Value, String> {
    let (yaml, _) = split_file(text)?;
    serde_yaml::from_str::<Value>(yaml).map_err(|e| e.to_string())
}

/// Deep equality as JavaScript's (numbers by value).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Every page of `skills/list`, checking the cursors on the way.
async fn all_pages(client: &Connected) -> (Vec<Skill>, usize) {
    let mut skills = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut params = PaginatedRequestParams::default();
        params.cursor = cursor.clone();
        let page = client.list_skills(Some(params)).await.unwrap();
        pages += 1;
        assert!(page.skills.len() <= 500, "page of {}", page.skills.len());
        skills.extend(page.skills);
        match page.next_cursor {
            Some(next) => {
                assert_ne!(Some(&next), cursor.as_ref(), "a cursor repeats");
                cursor = Some(next);
            }
            None => break,
        }
        assert!(pages <= 50, "more than 50 pages");
    }
    (skills, pages)
}

/// What [`check_every_listed_skill`] found.
struct Checked {
    skills: usize,
    pages: usize,
    files: usize,
}

/// Every rule of the module docs on every listed skill; panics with every violation found.
async fn check_every_listed_skill(client: &Connected, read_every_file: bool) -> Checked {
    let (skills, pages) = all_pages(client).await;
    let resources: BTreeMap<String, (String, Option<String>)> = client
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.uri.clone(), (r.name.clone(), r.description.clone())))
        .collect();
    let mut problems: Vec<String> = Vec::new();
    let mut uris = HashSet::new();
    let mut files = 0;
    for skill in &skills {
        let uri = skill.uri.as_str();
        let mut problem = |what: String| problems.push(format!("{uri}: {what}"));
        if !uris.insert(uri.to_string()) {
            problem("listed twice".into());
        }
        let Some(name) = final_segment(uri) else {
            problem("does not end in /SKILL.md".into());
            continue;
        };
        if !valid_name(name) {
            problem(format!("name {name:?} breaks the naming rule"));
        }
        let entry = serde_json::to_value(&skill.frontmatter).unwrap();
        if entry["name"] != json!(name) {
            problem(format!(
                "final segment {name:?} != frontmatter.name {}",
                entry["name"]
            ));
        }
        // The served SKILL.md says the same.
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
        if read.contents.len() != 1 {
            problem(format!("{} contents", read.contents.len()));
        }
        let bytes = bytes_of(&read.contents[0]);
        let Ok(text) = String::from_utf8(bytes.clone()) else {
            problem("SKILL.md is not text".into());
            continue;
        };
        match file_frontmatter(&text) {
            Err(e) => problem(format!("SKILL.md frontmatter: {e}")),
            Ok(file) => {
                if !same(&file, &entry) {
                    problem(format!(
                        "entry frontmatter {entry} != file frontmatter {file}"
                    ));
                }
                if file["description"].as_str().is_none_or(|d| d.is_empty()) {
                    problem("SKILL.md has no description string".into());
                }
            }
        }
        // Resources: SKILL.md first, each file once, digests right.
        let SkillResources::Files(list) = &skill.resources else {
            problem("resources are not a list".into());
            continue;
        };
        if list.first().map(|r| r.uri.as_str()) != Some(uri) {
            problem("SKILL.md is not the first resource".into());
        }
        let prefix = uri.strip_suffix("SKILL.md").unwrap();
        let distinct: HashSet<&str> = list.iter().map(|r| r.uri.as_str()).collect();
        if distinct.len() != list.len() || !list.iter().all(|r| r.uri.starts_with(prefix)) {
            problem("resources repeat or lie outside the skill".into());
        }
        if let Err(e) = list[0].verify(&bytes) {
            problem(format!("SKILL.md: {e}"));
        }
        if read_every_file {
            for r in &list[1..] {
                let read = client
                    .read_resource(ReadResourceRequestParams::new(r.uri.clone()))
                    .await
                    .unwrap_or_else(|e| panic!("{}: {e:?}", r.uri));
                if let Err(e) = r.verify(&bytes_of(&read.contents[0])) {
                    problem(e.to_string());
                }
            }
        }
        files += list.len();
        // skills/get answers the same entry.
        let got = client
            .get_skill(GetSkillRequestParams::new(uri))
            .await
            .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
        if &got.skill != skill {
            problem("skills/get answers another entry".into());
        }
        // resources/list names it by its name and description.
        match resources.get(uri) {
            None => problem("not in resources/list".into()),
            Some((rname, rdesc)) => {
                // A listing's description is the skill's, trimmed.
                if rname != name
                    || rdesc.as_deref().map(str::trim)
                        != entry["description"].as_str().map(str::trim)
                {
                    problem(format!("resources/list says {rname:?}, {rdesc:?}"));
                }
            }
        }
        // The directory holding it lists it.
        let dir = uri.strip_suffix("/SKILL.md").unwrap();
        let children = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new(dir))
            .await
            .unwrap_or_else(|e| panic!("{dir}: {e:?}"));
        if !children.resources.iter().any(|r| r.uri == uri) {
            problem(format!("{dir} does not list its SKILL.md"));
        }
        // The tools and the prompt know it by its skill path, and agree.
        let skill_path = skill
            .meta
            .as_ref()
            .and_then(|m| m.0.get("io.github.skills-mcp/skill-path"))
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{uri}: no skill path in _meta"))
            .to_string();
        let v = ok(call(client, "get_skill", json!({"skill_path": skill_path})).await);
        if v["uri"] != json!(uri) || v["skill_path"] != json!(skill_path) {
            problem(format!(
                "get_skill {skill_path} answers {} {}",
                v["skill_path"], v["uri"]
            ));
        }
        let prompt = client
            .get_prompt(GetPromptRequestParams::new(skill_path.clone()))
            .await
            .unwrap_or_else(|e| panic!("prompt {skill_path}: {e:?}"));
        let messages = serde_json::to_value(&prompt.messages).unwrap();
        let prompt_text: String = messages
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["content"]["text"].as_str())
            .collect();
        let body = split_file(&text).map_or("", |(_, b)| b).trim();
        let first_line = body.lines().next().unwrap_or_default();
        if !prompt_text.contains(first_line) {
            problem(format!(
                "prompt {skill_path} lacks the body line {first_line:?}"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems in {} skills:\n{}",
        problems.len(),
        skills.len(),
        problems.join("\n")
    );
    Checked {
        skills: skills.len(),
        pages,
        files,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_listed_bundled_skill_and_fixture_follows_the_rules() {
    within(async {
        // The repository's skills/ (the binary embeds these same files: tests/install.rs).
        let bundled = bundled_skills();
        let client = connect(server(&bundled)).await;
        let checked = check_every_listed_skill(&client, true).await;
        // Every bundled skill is listed, category nodes included.
        assert!(checked.skills >= 12, "{}", checked.skills);
        eprintln!(
            "bundled: {} skills, {} files",
            checked.skills, checked.files
        );
        client.cancel().await.unwrap();

        let client = connect(server(&fixtures())).await;
        let checked = check_every_listed_skill(&client, true).await;
        eprintln!(
            "fixtures: {} skills, {} files",
            checked.skills, checked.files
        );
        assert!(checked.skills >= 20, "{}", checked.skills);
        client.cancel().await.unwrap();

        let root = crate::mcp::fixture();
        let client = connect(server(root.path())).await;
        check_every_listed_skill(&client, true).await;
        client.cancel().await.unwrap();
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn category_nodes_are_listed_under_their_folder_and_old_paths_still_work() {
    within(async {
        let client = connect(server(&bundled_skills())).await;
        let skills = client.list_all_skills().await.unwrap();
        let uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
        for uri in [
            "skill://root/SKILL.md",
            "skill://api/SKILL.md",
            "skill://ui/SKILL.md",
            "skill://ui/react/SKILL.md",
            "skill://authoring/SKILL.md",
            "skill://ui/react/auth/SKILL.md",
        ] {
            assert!(uris.contains(&uri), "{uri} not in {uris:?}");
        }
        assert!(
            !uris
                .iter()
                .any(|u| u.contains("_index") || u.contains("_root"))
        );
        let api = skills
            .iter()
            .find(|s| s.uri == "skill://api/SKILL.md")
            .unwrap();
        assert_eq!(api.name(), "api");
        assert_eq!(
            api.meta.as_ref().unwrap().0["io.github.skills-mcp/skill-path"],
            json!("api/_index")
        );
        // Its served SKILL.md keeps its own frontmatter fields, with the name.
        let read = client
            .read_resource(ReadResourceRequestParams::new("skill://api/SKILL.md"))
            .await
            .unwrap();
        let md = String::from_utf8(bytes_of(&read.contents[0])).unwrap();
        let fm = file_frontmatter(&md).unwrap();
        assert_eq!(fm["name"], json!("api"));
        assert_eq!(serde_json::to_value(&api.frontmatter).unwrap(), fm, "{md}");
        // The tools keep the skill paths users know, and take the extension's path too.
        for path in ["api/_index", "_root", "ui/react/_index", "api"] {
            let v = ok(call(&client, "get_skill", json!({"skill_path": path})).await);
            let expected = if path == "api" { "api/_index" } else { path };
            assert_eq!(v["skill_path"], json!(expected), "{path}");
        }
        let v = ok(call(&client, "get_skill", json!({"skill_path": "_root"})).await);
        assert_eq!(v["uri"], json!("skill://root/SKILL.md"));
        let tree = ok(call(&client, "list_skills", json!({})).await).to_string();
        for path in ["\"_root\"", "\"api/_index\"", "\"ui/react/_index\""] {
            assert!(tree.contains(path), "{path} not in {tree}");
        }
        let v = ok(call(&client, "list_skills", json!({"path": "api"})).await).to_string();
        assert!(v.contains("api/auth"), "{v}");
        let v = ok(call(
            &client,
            "search_skills",
            json!({"query": "api conventions", "limit": 50}),
        )
        .await);
        for hit in v["results"].as_array().unwrap() {
            if hit["skill_path"] == json!("api/_index") {
                assert_eq!(hit["uri"], json!("skill://api/SKILL.md"));
            }
        }
        for name in ["api/_index", "_root"] {
            client
                .get_prompt(GetPromptRequestParams::new(name))
                .await
                .unwrap_or_else(|e| panic!("prompt {name}: {e:?}"));
        }
        // The old URIs are not skills of the extension.
        for uri in ["skill://api/_index/SKILL.md", "skill://_root/SKILL.md"] {
            let e = client
                .get_skill(GetSkillRequestParams::new(uri))
                .await
                .unwrap_err();
            assert_eq!(code(e), ErrorCode::INVALID_PARAMS, "{uri}");
        }
        client.cancel().await.unwrap();
    })
    .await
}

fn agent(root: &Path, folder: &str, name: &str, description: &str) {
    write(
        root,
        &format!("{folder}/SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: {description}\n---\n# {description}\n\nBody of {folder}.\n"
        ),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_folder_names_get_derived_names_and_collisions_are_left_out() {
    within(async {
        let a = TempDir::new().unwrap();
        let b = TempDir::new().unwrap();
        let (ra, rb) = (a.path(), b.path());
        agent(ra, "capsule_crm-automation", "capsule_crm-automation", "Capsule CRM");
        agent(ra, "-21risk-automation", "-21risk-automation", "21 risk");
        agent(ra, "docker_hub-automation", "docker_hub-automation", "Docker Hub one");
        agent(ra, "docker-hub-automation", "docker-hub-automation", "Docker Hub two");
        agent(ra, "日本", "nihon", "Japanese folder");
        write(
            ra,
            "api/_index.md",
            "---\ndescription: API category\n---\nAPI rules.\n",
        );
        write(
            ra,
            "api/rest.md",
            "---\ndescription: REST APIs\nkeywords: [rest]\n---\nREST.\n",
        );
        // A later root defines an Agent Skill at `api`: it owns skill://api/SKILL.md.
        agent(rb, "api", "api", "The API skill");
        let (srv, _) = server_with(&[ra, rb], None);
        let client = connect(srv).await;
        check_every_listed_skill(&client, true).await;
        let skills = client.list_all_skills().await.unwrap();
        let by_uri: BTreeMap<&str, &Skill> = skills.iter().map(|s| (s.uri.as_str(), s)).collect();
        let capsule = by_uri["skill://capsule-crm-automation/SKILL.md"];
        assert_eq!(
            capsule.meta.as_ref().unwrap().0["io.github.skills-mcp/declared-name"],
            json!("capsule_crm-automation")
        );
        assert!(by_uri.contains_key("skill://21risk-automation/SKILL.md"));
        assert_eq!(
            by_uri["skill://docker-hub-automation/SKILL.md"].frontmatter.description,
            "Docker Hub two"
        );
        assert_eq!(by_uri["skill://api/SKILL.md"].frontmatter.description, "The API skill");
        assert!(by_uri.contains_key("skill://api/rest/SKILL.md"));
        assert_eq!(skills.len(), 5, "{:?}", by_uri.keys());
        // The served file is the author's, with the name line set.
        let read = client
            .read_resource(ReadResourceRequestParams::new(
                "skill://capsule-crm-automation/SKILL.md",
            ))
            .await
            .unwrap();
        assert_eq!(
            String::from_utf8(bytes_of(&read.contents[0])).unwrap(),
            "---\nname: capsule-crm-automation\ndescription: Capsule CRM\n---\n# Capsule CRM\n\nBody of capsule_crm-automation.\n"
        );
        // The tools serve every one of them by skill path.
        for path in [
            "capsule_crm-automation",
            "-21risk-automation",
            "docker_hub-automation",
            "日本",
            "api/_index",
            "api",
        ] {
            let v = ok(call(&client, "get_skill", json!({"skill_path": path})).await);
            assert_eq!(v["skill_path"], json!(path));
        }
        let v = ok(call(&client, "get_skill", json!({"skill_path": "docker_hub-automation"})).await);
        assert!(v.get("uri").is_none(), "{v}");
        client.cancel().await.unwrap();

        // `validate` says which are renamed and which are left out, and why.
        let out = bin()
            .args(["--no-default-roots", "validate"])
            .arg(ra)
            .arg(rb)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        for needle in [
            "lists it as `skill://capsule-crm-automation/SKILL.md`",
            "left out of the Skills extension (`skills/list`, `skill://` resources): `skill://docker-hub-automation/SKILL.md` is the skill `docker-hub-automation`",
            "left out of the Skills extension (`skills/list`, `skill://` resources): `skill://api/SKILL.md` is the skill `api`",
            "left out of the Skills extension (`skills/list`, `skill://` resources): `日本` is not a valid skill name",
        ] {
            assert!(stdout.contains(needle), "{needle:?} not in\n{stdout}");
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_are_large_and_cursors_survive_a_reload() {
    within(async {
        let root = TempDir::new().unwrap();
        for i in 0..1100 {
            agent(
                root.path(),
                &format!("s{i:04}"),
                &format!("s{i:04}"),
                &format!("Skill {i}"),
            );
        }
        let client = connect(server(root.path())).await;
        let first = client.list_skills(None).await.unwrap();
        assert_eq!(first.skills.len(), 500);
        let cursor = first.next_cursor.clone().expect("a second page");
        assert!(!cursor.contains("s0499"), "opaque: {cursor}");
        // A reload that adds a skill before the cursor and removes one after it.
        agent(root.path(), "a-new", "a-new", "Added");
        std::fs::remove_dir_all(root.path().join("s0600")).unwrap();
        let v = ok(call(&client, "refresh_skills", json!({})).await);
        assert_eq!(v["success"], json!(true), "{v}");
        let mut rest = Vec::new();
        let mut next = Some(cursor);
        while let Some(c) = next {
            let mut params = PaginatedRequestParams::default();
            params.cursor = Some(c);
            let page = client.list_skills(Some(params)).await.unwrap();
            rest.extend(page.skills.into_iter().map(|s| s.uri));
            next = page.next_cursor;
        }
        let expected: Vec<String> = (500..1100)
            .filter(|&i| i != 600)
            .map(|i| format!("skill://s{i:04}/SKILL.md"))
            .collect();
        assert_eq!(rest, expected, "no skill skipped or repeated");
        let (all, pages) = all_pages(&client).await;
        assert_eq!((all.len(), pages), (1100, 3));
        let mut params = PaginatedRequestParams::default();
        params.cursor = Some("not-a-cursor".into());
        let e = client.list_skills(Some(params)).await.unwrap_err();
        assert_eq!(code(e), ErrorCode::INVALID_PARAMS);
        client.cancel().await.unwrap();
    })
    .await
}

/// The same checks on the 2,621 real skills (reads every SKILL.md, and every other file), and
/// the size of each `skills/list` page. Not in the default run (needs the corpus):
/// `cargo test --release -p skills-mcp --test integration -- --ignored every_listed_corpus_skill`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs ../shared/corpora/combined"]
async fn every_listed_corpus_skill_follows_the_rules() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/combined");
    assert!(corpus.is_dir(), "no corpus at {}", corpus.display());
    let started = Instant::now();
    let client = connect(server(&corpus)).await;
    let mut cursor: Option<String> = None;
    loop {
        let mut params = PaginatedRequestParams::default();
        params.cursor = cursor.clone();
        let t = Instant::now();
        let page = client.list_skills(Some(params)).await.unwrap();
        eprintln!(
            "page: {} skills, {} bytes of JSON, {:?} (cold)",
            page.skills.len(),
            serde_json::to_vec(&page).unwrap().len(),
            t.elapsed()
        );
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    let checked = check_every_listed_skill(&client, true).await;
    eprintln!(
        "{} skills in {} pages, {} files checked, in {:?}",
        checked.skills,
        checked.pages,
        checked.files,
        started.elapsed()
    );
    assert!(checked.skills > 2600, "{}", checked.skills);
    assert!(checked.pages <= 10, "{}", checked.pages);
    client.cancel().await.unwrap();
}

/// What [`served_names_agree`] compared.
struct NamesCompared {
    skills: usize,
    listed: usize,
    /// Left out of `skills/list`, each with why (`check-skill`'s `left-out`), by skill path.
    left_out: BTreeMap<String, String>,
}

/// For every skill of `root`: `check-skill` against the server's index (what the editor runs,
/// with the entries of the skill's folder) says what `skills/list` does with it: listed under
/// the same URI and name, or left out, with the reason the index's own finding gives (another
/// skill holds that URI, or a limit with its figures, or no valid name).
async fn served_names_agree(root: &Path) -> NamesCompared {
    let server = server(root);
    let catalog = server.catalog().clone();
    let client = connect(server).await;
    // skill path -> (URI, name) as `skills/list` serves it (the URI's last segment the name).
    let served: BTreeMap<String, (String, String)> = client
        .list_all_skills()
        .await
        .unwrap()
        .into_iter()
        .map(|s| {
            let path = s.meta.as_ref().unwrap().0["io.github.skills-mcp/skill-path"]
                .as_str()
                .unwrap()
                .to_string();
            let name = serde_json::to_value(&s.frontmatter).unwrap()["name"]
                .as_str()
                .unwrap()
                .to_string();
            assert_eq!(final_segment(&s.uri), Some(name.as_str()), "{}", s.uri);
            (path, (s.uri, name))
        })
        .collect();
    client.cancel().await.unwrap();
    tokio::task::block_in_place(|| {
        // The index's own findings: why each skill left out is left out.
        let findings: BTreeMap<String, Vec<String>> = catalog
            .diagnostics()
            .unwrap()
            .into_iter()
            .filter(|d| d.message.contains("Skills extension"))
            .fold(BTreeMap::new(), |mut m, d| {
                m.entry(d.path).or_default().push(d.message);
                m
            });
        let ext_paths: BTreeMap<String, String> = catalog
            .extension_skills()
            .unwrap()
            .into_iter()
            .map(|e| (e.skill_path, e.ext_path))
            .collect();
        let skills = catalog.skills().unwrap();
        let mut problems = Vec::new();
        let mut left_out = BTreeMap::new();
        let mut listed = 0;
        for s in &skills {
            let bytes = catalog.read_file(s.root, &s.file, 16 << 20).unwrap();
            // The editor hands over the entries of the skill's folder, with their sizes.
            let listing: Vec<Entry> = catalog
                .manifest(&s.skill_path)
                .unwrap()
                .into_iter()
                .map(|f| Entry {
                    path: f.path,
                    kind: EntryKind::File,
                    size: f.size,
                })
                .collect();
            let check = catalog.check_skill(&s.file, &bytes, &listing).unwrap();
            let checked_path = check.skill.as_ref().map(|c| c.skill_path.as_str());
            if checked_path != Some(s.skill_path.as_str()) {
                problems.push(format!(
                    "{}: check-skill says skill path {checked_path:?} ({} bytes): {:?}",
                    s.file,
                    bytes.len(),
                    check.diagnostics
                ));
                continue;
            }
            let said: Vec<&String> = check
                .diagnostics
                .iter()
                .map(|d| &d.message)
                .filter(|m| m.contains("Skills extension"))
                .collect();
            let found: Vec<&String> = findings.get(&s.file).into_iter().flatten().collect();
            if said != found {
                problems.push(format!(
                    "{}: check-skill finds {said:?}, the index {found:?}",
                    s.skill_path
                ));
            }
            // Listed: the same ext path as the engine's list the server serves from, and the
            // same name as `skills/list` gives.
            let listed_as = served
                .get(&s.skill_path)
                .map(|(_, name)| (ext_paths.get(&s.skill_path).cloned(), name.clone()));
            let checked = check
                .ext_path
                .clone()
                .map(|ext| (Some(ext), check.served_name.clone().unwrap_or_default()));
            match (listed_as, checked, &check.left_out) {
                (Some(list), Some(checked), None) if list == checked => listed += 1,
                (None, None, Some(why))
                    if found.iter().any(|f| {
                        f.starts_with("left out of the Skills extension") && f.contains(why)
                    }) =>
                {
                    left_out.insert(s.skill_path.clone(), why.clone());
                }
                (list, checked, why) => problems.push(format!(
                    "{}: skills/list serves {list:?}, check-skill says {checked:?}, left out: {why:?}",
                    s.skill_path
                )),
            }
        }
        assert!(
            problems.is_empty(),
            "{} of {} skills disagree:\n{}",
            problems.len(),
            skills.len(),
            problems.join("\n")
        );
        assert_eq!(listed, served.len(), "every served skill was compared");
        NamesCompared {
            skills: skills.len(),
            listed,
            left_out,
        }
    })
}

/// The small case, always run: two folder names that map to one URI, a skill over the 16 MiB
/// limit (a sparse file: its size is what counts), one over 512 files, one with no valid name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_skill_and_skills_list_agree_on_collisions_and_limits() {
    within(async {
        let dir = TempDir::new().unwrap();
        let root = dir.path();
        agent(root, "docker-hub-automation", "docker-hub-automation", "Docker Hub one");
        agent(root, "docker_hub-automation", "docker_hub-automation", "Docker Hub two");
        agent(root, "big", "big", "A skill with a large data file");
        let data = std::fs::File::create(root.join("big/data.bin")).unwrap();
        data.set_len(17 << 20).unwrap();
        agent(root, "many", "many", "A skill with many references");
        for n in 0..512 {
            write(root, &format!("many/refs/{n}.md"), "x");
        }
        agent(root, "enough", "enough", "A skill with 511 references");
        for n in 0..511 {
            write(root, &format!("enough/refs/{n}.md"), "x");
        }
        agent(root, "日本", "nihon", "Japanese folder");
        agent(root, "pdf", "pdf", "Fill PDF forms");
        let c = served_names_agree(root).await;
        assert_eq!((c.skills, c.listed), (7, 3), "{:?}", c.left_out);
        let big_md = std::fs::metadata(root.join("big/SKILL.md")).unwrap().len();
        let want: BTreeMap<String, String> = [
            (
                "big",
                format!(
                    "its files total {} bytes, over the limit of 16777216 (16 MiB)",
                    (17 << 20) + big_md
                ),
            ),
            (
                "docker_hub-automation",
                "`skill://docker-hub-automation/SKILL.md` is the skill `docker-hub-automation`"
                    .into(),
            ),
            ("many", "it has 513 files, over the limit of 512".into()),
            (
                "日本",
                "`日本` is not a valid skill name (1-64 of a-z, 0-9 and single `-`) and none can be derived from it".into(),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(c.left_out, want);
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_skill_gives_the_verdict_skills_list_gives() {
    within(async {
        let started = Instant::now();
        let bundled = served_names_agree(&bundled_skills()).await;
        assert!(bundled.left_out.is_empty(), "every bundled skill is served");
        assert!(bundled.skills >= 12, "{}", bundled.skills);
        eprintln!(
            "bundled: {} skills, the same verdict for each, in {:?}",
            bundled.skills,
            started.elapsed()
        );
        let corpus = std::env::var_os("SKILLS_CORPUS")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/combined")
            });
        if !corpus.is_dir() {
            eprintln!(
                "note: no corpus at {} (set SKILLS_CORPUS): the combined corpus is not compared",
                corpus.display()
            );
            return;
        }
        let started = Instant::now();
        let c = served_names_agree(&corpus).await;
        assert!(c.skills > 2600, "{}", c.skills);
        eprintln!(
            "corpus: {} skills, the same verdict for each: {} listed, {} left out, in {:?}",
            c.skills,
            c.listed,
            c.left_out.len(),
            started.elapsed()
        );
        for (path, why) in &c.left_out {
            eprintln!("  left out: {path}: {why}");
        }
    })
    .await
}
