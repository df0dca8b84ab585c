//! Versions (issue 40 part 5): a skill's `metadata.version` is the text it was written as
//! (`1.10`, not the number 1.1) and appears, only when the skill has one, in `search_skills`,
//! `list_skills`, `skills-mcp list`, the Skills extension's `skills/list` `_meta`, and
//! (see `usage_*`) in the usage store's rows and `stats`. Through a real rmcp client against the
//! real component, and the real binary.

use std::path::Path;

use serde_json::{Value, json};
use tempfile::TempDir;

use skills_mcp::usage::store::{Cell, SCHEMA_VERSION};
use skills_mcp::usage::{Location, Store};

use crate::common::{Pg, Service, require_service, run};
use crate::mcp::{call, connect, ok, server, within, write};
use crate::usage::{Client as UsageClient, stats as usage_stats};

/// A root with `versioned` (`version: 1.10`, plain: YAML's number 1.1) and `plain` (none).
pub(crate) fn versioned_root() -> TempDir {
    let d = TempDir::new().unwrap();
    write(
        d.path(),
        "versioned/SKILL.md",
        "---\nname: versioned\ndescription: Convert invoices into ledger entries\nmetadata:\n  author: finance\n  version: 1.10\n---\n# Invoices\n\nBook them.\n",
    );
    write(
        d.path(),
        "plain/SKILL.md",
        "---\nname: plain\ndescription: Scan receipts into ledger entries\n---\n# Receipts\n",
    );
    d
}

fn by<'a>(items: &'a [Value], key: &str, value: &str) -> &'a Value {
    items
        .iter()
        .find(|v| v[key] == json!(value))
        .unwrap_or_else(|| panic!("no {key} {value} in {items:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_version_is_its_text_in_search_list_and_skills_list() {
    within(async {
        let root = versioned_root();
        let client = connect(server(root.path())).await;

        let found = ok(call(&client, "search_skills", json!({"query": "ledger entries"})).await);
        let results = found["results"].as_array().unwrap();
        assert_eq!(
            by(results, "skill_path", "versioned")["version"],
            json!("1.10")
        );
        assert!(by(results, "skill_path", "plain").get("version").is_none());
        // The text form of the answer says the same.
        let answer = client
            .call_tool(
                rmcp::model::CallToolRequestParams::new("search_skills").with_arguments(
                    json!({"query": "ledger entries"})
                        .as_object()
                        .unwrap()
                        .clone(),
                ),
            )
            .await
            .unwrap();
        let text = answer.content[0].as_text().unwrap().text.clone();
        assert!(text.contains(r#""version":"1.10""#), "{text}");
        assert_eq!(text.matches("\"version\"").count(), 1, "{text}");

        let tree = ok(call(&client, "list_skills", json!({})).await);
        let children = tree["children"].as_array().unwrap();
        assert_eq!(by(children, "path", "versioned")["version"], json!("1.10"));
        assert!(by(children, "path", "plain").get("version").is_none());

        let skills = client.list_all_skills().await.unwrap();
        let meta = |name: &str| {
            skills
                .iter()
                .find(|s| s.name() == name)
                .and_then(|s| s.meta.clone())
                .unwrap()
                .0
        };
        assert_eq!(
            meta("versioned")["io.github.skills-mcp/version"],
            json!("1.10")
        );
        assert!(meta("plain").get("io.github.skills-mcp/version").is_none());
        // The entry's frontmatter holds `metadata` as the map of strings it is.
        let versioned = skills.iter().find(|s| s.name() == "versioned").unwrap();
        assert_eq!(
            versioned.frontmatter.extra["metadata"],
            json!({"author": "finance", "version": "1.10"})
        );
        client.cancel().await.unwrap();
    })
    .await;
}

fn list(root: &Path, json: bool) -> String {
    let root = root.to_str().unwrap();
    let out = if json {
        run(&["--root", root, "list", "--json"])
    } else {
        run(&["--root", root, "list"])
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn skills_mcp_list_shows_the_version() {
    let root = versioned_root();
    let text = list(root.path(), false);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .to_owned()
    };
    assert!(
        line("versioned").starts_with("versioned version 1.10  (versioned)"),
        "{text}"
    );
    assert!(!line("plain").contains("version"), "{text}");
    let v: Value = serde_json::from_str(&list(root.path(), true)).unwrap();
    let nodes = v.as_array().unwrap();
    assert_eq!(by(nodes, "path", "versioned")["version"], json!("1.10"));
    assert!(by(nodes, "path", "plain").get("version").is_none());
}

/// The usage schema as versions 1 and 2 left it (the statements both databases ran): a store
/// from before versions were recorded.
const SCHEMA_V2: &str =
    "CREATE TABLE usage_schema (version INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL);
    CREATE TABLE usage_events (
        id TEXT PRIMARY KEY,
        ts BIGINT NOT NULL,
        type TEXT NOT NULL,
        server_id TEXT NOT NULL,
        replica_id TEXT NOT NULL,
        subject TEXT,
        skill TEXT,
        query TEXT,
        file TEXT,
        success BOOLEAN,
        exit_code INTEGER,
        useful BOOLEAN,
        comment TEXT,
        data TEXT NOT NULL
    );
    CREATE INDEX usage_events_type_ts ON usage_events (type, ts, skill);
    CREATE INDEX usage_events_ts ON usage_events (ts, subject);
    CREATE INDEX usage_events_skill_ts ON usage_events (skill, ts);
    CREATE INDEX usage_events_served ON usage_events (type, skill, ts)
        WHERE type = 'skill_served';
    INSERT INTO usage_schema (version, applied_ms) VALUES (1, 0), (2, 0);";

/// One `skill_served` row of `versioned` written before the upgrade.
fn old_row() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    format!(
        "INSERT INTO usage_events (id, ts, type, server_id, replica_id, skill, query, data) \
         VALUES ('old-1', {now}, 'skill_served', 's', 'r', 'versioned', 'x', '{{\"skill_path\":\"versioned\"}}')"
    )
}

/// Serves `versioned` twice (by path, by request) and `plain` once from a server on `home`.
fn serve_three(root: &Path, home: &Path, env: &[(&str, &str)]) {
    let mut server = UsageClient::start(root, home, env, &[]);
    server.call("get_skill", json!({"skill_path": "versioned"}));
    server.call("get_skill", json!({"context": "book the invoices"}));
    server.call("get_skill", json!({"skill_path": "plain"}));
    server.wait_for(3);
    server.close();
}

/// `(skill, version)` of the `skill_served` rows, the old one first, and the schema version.
fn rows(store: &mut Store) -> (Vec<(String, Option<String>)>, i64) {
    let rows = store
        .query(
            "SELECT skill, version FROM usage_events WHERE type = 'skill_served' \
             ORDER BY (id = 'old-1') DESC, skill DESC",
            &[],
        )
        .unwrap()
        .into_iter()
        .map(|r| {
            let version = match &r[1] {
                Cell::Null => None,
                c => Some(c.text()),
            };
            (r[0].text(), version)
        })
        .collect();
    let schema = store
        .query("SELECT MAX(version) FROM usage_schema", &[])
        .unwrap()[0][0]
        .int();
    (rows, schema)
}

fn expected_rows() -> Vec<(String, Option<String>)> {
    vec![
        ("versioned".into(), None),
        ("versioned".into(), Some("1.10".into())),
        ("versioned".into(), Some("1.10".into())),
        ("plain".into(), None),
    ]
}

#[test]
fn usage_events_record_the_version_and_an_old_sqlite_store_upgrades_in_place() {
    let root = versioned_root();
    let home = TempDir::new().unwrap();
    let db = home.path().join(".local/state/skills-mcp/usage.sqlite3");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(SCHEMA_V2).unwrap();
        conn.execute_batch(&old_row()).unwrap();
    }
    serve_three(root.path(), home.path(), &[]);

    let mut store = Store::open(&Location::Sqlite(db.clone())).unwrap();
    assert_eq!(rows(&mut store), (expected_rows(), SCHEMA_VERSION));
    assert_eq!(SCHEMA_VERSION, 3);
    // The event's data carries it too.
    let data = store
        .query(
            "SELECT data FROM usage_events WHERE version IS NOT NULL",
            &[],
        )
        .unwrap();
    for d in data {
        let v: Value = serde_json::from_str(&d[0].text()).unwrap();
        assert_eq!(v["version"], json!("1.10"), "{v}");
    }

    // `stats`: the versions served, only for the skill that has one.
    let r = usage_stats(root.path(), home.path(), &[]);
    let served = r["served"].as_array().unwrap();
    let versioned = by(served, "skill", "versioned");
    assert_eq!(versioned["count"], json!(3), "{r}");
    assert_eq!(
        versioned["versions"],
        json!([{"version": "1.10", "count": 2}]),
        "{r}"
    );
    assert!(
        by(served, "skill", "plain").get("versions").is_none(),
        "{r}"
    );
    let text = crate::common::bin()
        .args(["--no-default-roots", "--root"])
        .arg(root.path())
        .arg("stats")
        .env("HOME", home.path())
        .env_remove("XDG_STATE_HOME")
        .env_remove("SKILLS_MCP_DATABASE_URL")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("versions 1.10 x2"), "{text}");
}

#[test]
fn an_old_postgres_usage_database_upgrades_in_place_and_records_the_version() {
    let Some(pg_bin) = require_service(
        Service::Postgres,
        "versions::an_old_postgres_usage_database_upgrades_in_place_and_records_the_version",
    ) else {
        return;
    };
    let pg = Pg::start(&pg_bin);
    let url = pg.url();
    {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        client.batch_execute(SCHEMA_V2).unwrap();
        client.batch_execute(&old_row()).unwrap();
    }
    let root = versioned_root();
    let home = TempDir::new().unwrap();
    serve_three(
        root.path(),
        home.path(),
        &[("SKILLS_MCP_DATABASE_URL", &url)],
    );

    let mut store = Store::open(&Location::Postgres(url.clone())).unwrap();
    assert_eq!(rows(&mut store), (expected_rows(), SCHEMA_VERSION));
    let r = usage_stats(root.path(), home.path(), &["--database-url", &url]);
    let served = r["served"].as_array().unwrap();
    assert_eq!(
        by(served, "skill", "versioned")["versions"],
        json!([{"version": "1.10", "count": 2}]),
        "{r}"
    );
    assert!(
        by(served, "skill", "plain").get("versions").is_none(),
        "{r}"
    );
}
