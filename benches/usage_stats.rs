//! `skills-mcp stats` over a large SQLite usage store: the report must answer in under 1 s over
//! 1,000,000 events.
//!
//! ```text
//! cargo bench -p skills-mcp --bench usage_stats            # 1,000,000 events, 5 timed runs
//! cargo bench -p skills-mcp --bench usage_stats -- --test  # 20,000 events, once (CI)
//! ```
//!
//! The store is filled with a realistic mix over the last 90 days (2,000 skills served on a
//! skewed distribution, requests that found nothing or were ambiguous among 5,000 texts,
//! feedback, scripts, assets, 50 subjects), then the report of the last 30 and 90 days is
//! timed (the same [`skills_mcp::usage::stats::report`] the command prints).

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;

use skills_mcp::usage::stats::{Period, report};
use skills_mcp::usage::store::Row;
use skills_mcp::usage::time::{DAY_MS, now_ms};
use skills_mcp::usage::{Location, Store};

/// The row insert of the store (`Store::insert`'s columns, in order).
const INSERT: &str = "INSERT INTO usage_events (id, ts, type, server_id, replica_id, subject, skill, query, file, success, exit_code, useful, comment, data) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Skewed towards 0 (a few skills get most serves).
    fn skewed(&mut self, n: u64) -> u64 {
        let a = self.below(n);
        let b = self.below(n);
        a.min(b).min(self.below(n))
    }
}

fn main() {
    let test = support::test_mode();
    let events: usize = if test { 20_000 } else { 1_000_000 };
    let reps = if test { 1 } else { 5 };
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("usage.sqlite3");
    let mut store = Store::open(&Location::Sqlite(db.clone())).expect("open the store");

    let started = Instant::now();
    let now = now_ms();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // One transaction and one prepared statement for the whole fill (the server's writer batches
    // through `Store::insert`; the rows are the same), with a page cache big enough for the
    // indexes so that random timestamps do not thrash it.
    let conn = store.sqlite().expect("a SQLite store");
    conn.pragma_update(None, "cache_size", -512_000)
        .expect("cache size");
    let tx = conn.transaction().expect("begin");
    let mut insert = tx.prepare(INSERT).expect("prepare");
    for i in 0..events {
        let ts = now - (rng.below(90 * DAY_MS as u64) as i64);
        let skill = format!(
            "area-{}/skill-{}",
            rng.skewed(2_000) % 40,
            rng.skewed(2_000)
        );
        let subject = Some(format!("static:client-{}", rng.skewed(50)));
        let kind = match rng.below(100) {
            0..70 => "skill_served",
            70..80 => "no_match",
            80..85 => "ambiguous",
            85..90 => "skill_feedback",
            90..95 => "script_executed",
            _ => "asset_served",
        };
        let query = format!("request number {}", rng.skewed(5_000));
        let mut row = Row {
            id: format!("{i:016x}"),
            ts,
            kind: kind.to_owned(),
            server_id: "dev-bench".into(),
            replica_id: "bench".into(),
            subject,
            skill: None,
            query: None,
            file: None,
            success: None,
            exit_code: None,
            useful: None,
            comment: None,
            version: None,
            data: "{}".into(),
        };
        match kind {
            "skill_served" => {
                row.skill = Some(skill);
                row.query = Some(query);
                row.version = Some(format!("1.{}", i % 3));
            }
            "no_match" => row.query = Some(query),
            "ambiguous" => {
                row.data = format!("{{\"candidates\":[\"{skill}\"]}}");
                row.query = Some(query);
            }
            "skill_feedback" => {
                row.skill = Some(skill);
                row.useful = Some(rng.below(4) != 0);
                row.comment = (rng.below(10) == 0).then(|| "could be clearer".to_owned());
            }
            "script_executed" => {
                row.skill = Some(skill);
                row.file = Some(format!("scripts/run-{}.sh", rng.below(3)));
                let code = [0, 0, 0, 1, 2][rng.below(5) as usize];
                row.success = Some(code == 0);
                row.exit_code = Some(code);
            }
            _ => {
                row.skill = Some(skill);
                row.file = Some("assets/template.md".into());
            }
        }
        insert
            .execute(rusqlite::params![
                row.id,
                row.ts,
                row.kind,
                row.server_id,
                row.replica_id,
                row.subject,
                row.skill,
                row.query,
                row.file,
                row.success,
                row.exit_code,
                row.useful,
                row.comment,
                row.data
            ])
            .expect("insert");
    }
    drop(insert);
    tx.commit().expect("commit");
    // The report reads the database file, not a long write-ahead log.
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .expect("checkpoint");
    let fill = started.elapsed();
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0)
        + std::fs::metadata(dir.path().join("usage.sqlite3-wal"))
            .map(|m| m.len())
            .unwrap_or(0);
    println!(
        "usage store: {events} events written in {:.1} s ({} MB)",
        fill.as_secs_f64(),
        size / 1_000_000
    );

    let index: Vec<String> = (0..2_000)
        .map(|i| format!("area-{}/skill-{i}", i % 40))
        .collect();
    for since in ["30d", "90d"] {
        let period = Period::parse(since, now_ms()).expect("period");
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..reps {
            // A fresh connection each time, as `skills-mcp stats` has.
            let mut store = Store::open(&Location::Sqlite(db.clone())).expect("open");
            let t = Instant::now();
            let r = report(&mut store, &period, None, 50, &index).expect("report");
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            last = Some(r);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        let r = last.expect("one run");
        println!(
            "stats --since {since}: {median:.0} ms (median of {reps}) over {} events in the period; {} served skills, {} never served, {} no_match texts",
            r.events,
            r.served.len(),
            r.never_served.len(),
            r.no_match.len()
        );
        assert!(r.events > 0 && !r.served.is_empty());
        if !test {
            assert!(
                median < 1000.0,
                "stats over {events} events took {median:.0} ms"
            );
        }
    }
}
