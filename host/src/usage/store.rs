//! The usage database: one table of events, in SQLite (the default, one file) or PostgreSQL
//! (several replicas), with the same SQL for both. See docs/usage.md for the schema.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result};
use serde_json::Value;

/// Where the events are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl std::fmt::Display for Location {
    /// `usage store /path/usage.sqlite3` or `usage database postgres://user:***@host/db`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "usage store {}", path.display()),
            Location::Postgres(url) => write!(f, "usage database {}", super::pg::redact(url)),
        }
    }
}

/// The schema, one migration per version, applied in order: `(version, SQL for both databases,
/// SQL for SQLite only)`. A change is a new version, never an edit of an applied one.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "CREATE TABLE usage_events (
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
    CREATE INDEX usage_events_skill_ts ON usage_events (skill, ts);",
        "",
    ),
    (
        2,
        // Covering indexes for the groupings of `skills-mcp stats` (served per skill, then per
        // day for the listed skills; feedback per skill; scripts per skill, file and exit
        // code; subjects), partial: only the rows they count.
        "CREATE INDEX usage_events_served ON usage_events (type, skill, ts)
        WHERE type = 'skill_served';
    CREATE INDEX usage_events_feedback ON usage_events (type, ts, skill, useful)
        WHERE type = 'skill_feedback';
    CREATE INDEX usage_events_scripts ON usage_events (type, ts, skill, file, exit_code, success)
        WHERE type = 'script_executed';
    CREATE INDEX usage_events_subject_ts ON usage_events (subject, ts)
        WHERE subject IS NOT NULL;",
        // The request texts grouped by text and the latest comments: SQLite only, since a
        // PostgreSQL B-tree entry is at most ~2.7 kB and these texts have no bound (an insert
        // would fail there).
        "CREATE INDEX usage_events_comments ON usage_events (type, ts, skill, comment)
        WHERE type = 'skill_feedback' AND comment IS NOT NULL;
    CREATE INDEX usage_events_no_match ON usage_events (type, ts, query)
        WHERE type = 'no_match';
    CREATE INDEX usage_events_ambiguous ON usage_events (type, ts, query)
        WHERE type = 'ambiguous';",
    ),
    (
        3,
        // The served skill's `metadata.version` (as written), when it has one; rows from
        // before stay NULL.
        "ALTER TABLE usage_events ADD COLUMN version TEXT;",
        "",
    ),
];

/// The newest schema version this build knows.
pub const SCHEMA_VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].0;

/// Key of the PostgreSQL advisory lock taken while migrating (replicas starting together take
/// turns).
const MIGRATION_LOCK: i64 = 0x736b_696c_6c73; // "skills"

/// One event as a row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub id: String,
    pub ts: i64,
    pub kind: String,
    pub server_id: String,
    pub replica_id: String,
    pub subject: Option<String>,
    pub skill: Option<String>,
    pub query: Option<String>,
    pub file: Option<String>,
    pub success: Option<bool>,
    pub exit_code: Option<i32>,
    pub useful: Option<bool>,
    pub comment: Option<String>,
    /// The served skill's `metadata.version` (`data.version`).
    pub version: Option<String>,
    pub data: String,
}

impl Row {
    /// The row of a buffered event (`{id, type, timestamp, server_id, replica_id, subject?,
    /// data}`); None when a required field is missing.
    pub fn from_event(event: &Value) -> Option<Row> {
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let data = event.get("data").cloned().unwrap_or(Value::Null);
        let kind = s(event, "type")?;
        let query = match kind.as_str() {
            "no_match" | "ambiguous" | "skill_served" => s(&data, "context"),
            _ => None,
        };
        Some(Row {
            id: s(event, "id")?,
            ts: super::time::parse_timestamp(event.get("timestamp")?.as_str()?)?,
            server_id: s(event, "server_id").unwrap_or_default(),
            replica_id: s(event, "replica_id").unwrap_or_default(),
            subject: s(event, "subject"),
            skill: s(&data, "skill_path"),
            query,
            file: s(&data, "file"),
            success: data.get("success").and_then(Value::as_bool),
            exit_code: data
                .get("exit_code")
                .and_then(Value::as_i64)
                .and_then(|c| i32::try_from(c).ok()),
            useful: data.get("useful").and_then(Value::as_bool),
            comment: s(&data, "comment"),
            version: s(&data, "version"),
            data: data.to_string(),
            kind,
        })
    }
}

/// A query parameter.
#[derive(Debug, Clone)]
pub enum Param {
    Int(i64),
    Text(String),
}

/// A result cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Int(i64),
    Text(String),
    Null,
}

impl Cell {
    pub fn int(&self) -> i64 {
        match self {
            Cell::Int(i) => *i,
            Cell::Text(t) => t.parse().unwrap_or(0),
            Cell::Null => 0,
        }
    }
    pub fn text(&self) -> String {
        match self {
            Cell::Int(i) => i.to_string(),
            Cell::Text(t) => t.clone(),
            Cell::Null => String::new(),
        }
    }
}

/// An open, migrated database.
pub struct Store {
    location: Location,
    db: Db,
}

enum Db {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
}

const INSERT: &str = "INSERT INTO usage_events (id, ts, type, server_id, replica_id, subject, skill, query, file, success, exit_code, useful, comment, version, data) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING";

impl Store {
    /// Opens (creating the SQLite file and its folder on first use) and migrates. Errors name
    /// the store.
    pub fn open(location: &Location) -> Result<Store> {
        Self::open_inner(location).with_context(|| location.to_string())
    }

    fn open_inner(location: &Location) -> Result<Store> {
        let db = match location {
            Location::Sqlite(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                }
                // Created 0600 before SQLite opens it (an empty file is a new database); its
                // `-wal` and `-shm` files take the main file's mode (SQLite's unix VFS).
                super::private_file()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(path)
                    .with_context(|| format!("creating {}", path.display()))?;
                let conn = rusqlite::Connection::open(path)?;
                // Several servers (one per client window) share the file: readers never block
                // the writer, and a writer waits its turn instead of failing at once.
                conn.busy_timeout(Duration::from_secs(10))?;
                let mode: String =
                    conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
                if !mode.eq_ignore_ascii_case("wal") {
                    tracing::debug!("usage store journal mode: {mode}");
                }
                conn.pragma_update(None, "synchronous", "NORMAL")?;
                Db::Sqlite(conn)
            }
            Location::Postgres(url) => {
                let target = super::pg::target(url)?;
                let client = target.config.connect(target.tls)?;
                Db::Postgres(Box::new(client))
            }
        };
        let mut store = Store {
            location: location.clone(),
            db,
        };
        store.migrate()?;
        Ok(store)
    }

    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Applies the migrations this database lacks, one transaction, replicas taking turns (a
    /// write lock on SQLite, an advisory lock on PostgreSQL).
    fn migrate(&mut self) -> Result<()> {
        const TABLE: &str = "CREATE TABLE IF NOT EXISTS usage_schema (version INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)";
        let now = super::time::now_ms();
        match &mut self.db {
            Db::Sqlite(conn) => {
                let tx =
                    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                tx.execute_batch(TABLE)?;
                let have: i64 = tx.query_row(
                    "SELECT COALESCE(MAX(version), 0) FROM usage_schema",
                    [],
                    |r| r.get(0),
                )?;
                for (version, sql, sqlite_sql) in MIGRATIONS.iter().filter(|(v, ..)| *v > have) {
                    tx.execute_batch(sql)
                        .and_then(|()| tx.execute_batch(sqlite_sql))
                        .with_context(|| format!("schema migration {version}"))?;
                    tx.execute(
                        "INSERT INTO usage_schema (version, applied_ms) VALUES (?1, ?2)",
                        rusqlite::params![version, now],
                    )?;
                }
                tx.commit()?;
            }
            Db::Postgres(client) => {
                let mut tx = client.transaction()?;
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
                tx.batch_execute(TABLE)?;
                let have: i64 = tx
                    .query_one(
                        "SELECT COALESCE(MAX(version), 0)::BIGINT FROM usage_schema",
                        &[],
                    )?
                    .get(0);
                for (version, sql, _) in MIGRATIONS.iter().filter(|(v, ..)| *v > have) {
                    tx.batch_execute(sql)
                        .with_context(|| format!("schema migration {version}"))?;
                    tx.execute(
                        "INSERT INTO usage_schema (version, applied_ms) VALUES ($1, $2)",
                        &[&(*version as i32), &now],
                    )?;
                }
                tx.commit()?;
            }
        }
        Ok(())
    }

    /// Inserts `rows` in one transaction; a row whose id is already there is skipped (a batch
    /// delivered twice is stored once). Returns how many were new.
    pub fn insert(&mut self, rows: &[Row]) -> Result<u64> {
        let location = self.location.to_string();
        self.insert_inner(rows).with_context(|| location)
    }

    fn insert_inner(&mut self, rows: &[Row]) -> Result<u64> {
        let mut new = 0u64;
        match &mut self.db {
            Db::Sqlite(conn) => {
                let tx =
                    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                {
                    let mut stmt = tx.prepare_cached(INSERT)?;
                    for r in rows {
                        new += stmt.execute(rusqlite::params![
                            r.id,
                            r.ts,
                            r.kind,
                            r.server_id,
                            r.replica_id,
                            r.subject,
                            r.skill,
                            r.query,
                            r.file,
                            r.success,
                            r.exit_code,
                            r.useful,
                            r.comment,
                            r.version,
                            r.data
                        ])? as u64;
                    }
                }
                tx.commit()?;
            }
            Db::Postgres(client) => {
                let mut tx = client.transaction()?;
                let stmt = tx.prepare(&numbered(INSERT))?;
                for r in rows {
                    new += tx.execute(
                        &stmt,
                        &[
                            &r.id,
                            &r.ts,
                            &r.kind,
                            &r.server_id,
                            &r.replica_id,
                            &r.subject,
                            &r.skill,
                            &r.query,
                            &r.file,
                            &r.success,
                            &r.exit_code,
                            &r.useful,
                            &r.comment,
                            &r.version,
                            &r.data,
                        ],
                    )?;
                }
                tx.commit()?;
            }
        }
        Ok(new)
    }

    /// Deletes the events older than `before_ms`; returns how many.
    pub fn prune(&mut self, before_ms: i64) -> Result<u64> {
        let location = self.location.to_string();
        let deleted = match &mut self.db {
            Db::Sqlite(conn) => conn
                .execute("DELETE FROM usage_events WHERE ts < ?1", [before_ms])
                .map(|n| n as u64)
                .map_err(anyhow::Error::from),
            Db::Postgres(client) => client
                .execute("DELETE FROM usage_events WHERE ts < $1", &[&before_ms])
                .map_err(anyhow::Error::from),
        };
        deleted.with_context(|| location)
    }

    /// Runs a read query written with `?` placeholders (numbered for PostgreSQL). Integer
    /// columns come back as [`Cell::Int`], text as [`Cell::Text`].
    pub fn query(&mut self, sql: &str, params: &[Param]) -> Result<Vec<Vec<Cell>>> {
        let location = self.location.to_string();
        self.query_inner(sql, params).with_context(|| location)
    }

    fn query_inner(&mut self, sql: &str, params: &[Param]) -> Result<Vec<Vec<Cell>>> {
        match &mut self.db {
            Db::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                let columns = stmt.column_count();
                let values: Vec<rusqlite::types::Value> = params
                    .iter()
                    .map(|p| match p {
                        Param::Int(i) => rusqlite::types::Value::Integer(*i),
                        Param::Text(t) => rusqlite::types::Value::Text(t.clone()),
                    })
                    .collect();
                let rows = stmt.query_map(rusqlite::params_from_iter(values), |row| {
                    (0..columns)
                        .map(|i| {
                            Ok(match row.get_ref(i)? {
                                rusqlite::types::ValueRef::Integer(n) => Cell::Int(n),
                                rusqlite::types::ValueRef::Real(f) => Cell::Int(f as i64),
                                rusqlite::types::ValueRef::Text(t) => {
                                    Cell::Text(String::from_utf8_lossy(t).into_owned())
                                }
                                _ => Cell::Null,
                            })
                        })
                        .collect::<rusqlite::Result<Vec<Cell>>>()
                })?;
                Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
            }
            Db::Postgres(client) => {
                let boxed: Vec<Box<dyn postgres::types::ToSql + Sync>> = params
                    .iter()
                    .map(|p| -> Box<dyn postgres::types::ToSql + Sync> {
                        match p {
                            Param::Int(i) => Box::new(*i),
                            Param::Text(t) => Box::new(t.clone()),
                        }
                    })
                    .collect();
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
                    boxed.iter().map(|b| b.as_ref()).collect();
                let rows = client.query(&numbered(sql), &refs)?;
                let mut out = Vec::with_capacity(rows.len());
                for row in rows {
                    let mut cells = Vec::with_capacity(row.len());
                    for (i, column) in row.columns().iter().enumerate() {
                        use postgres::types::Type;
                        let t = column.type_();
                        let cell = if *t == Type::INT8 {
                            row.get::<_, Option<i64>>(i).map_or(Cell::Null, Cell::Int)
                        } else if *t == Type::INT4 {
                            row.get::<_, Option<i32>>(i)
                                .map_or(Cell::Null, |n| Cell::Int(n.into()))
                        } else if *t == Type::BOOL {
                            row.get::<_, Option<bool>>(i)
                                .map_or(Cell::Null, |b| Cell::Int(b.into()))
                        } else {
                            row.get::<_, Option<String>>(i)
                                .map_or(Cell::Null, Cell::Text)
                        };
                        cells.push(cell);
                    }
                    out.push(cells);
                }
                Ok(out)
            }
        }
    }

    /// The SQLite connection (benches fill a store fast through it).
    pub fn sqlite(&mut self) -> Option<&mut rusqlite::Connection> {
        match &mut self.db {
            Db::Sqlite(conn) => Some(conn),
            Db::Postgres(_) => None,
        }
    }
}

/// `?` placeholders as `$1, $2, ...` (the SQL here has no `?` inside string literals).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}
