//! `skills-mcp stats`: the usage report over a period (UTC days), as text or one JSON object.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};
use serde::Serialize;

use super::store::{Cell, Param, Store};
use super::time::{DAY_MS, civil, now_ms, parse_date};

/// `skills-mcp stats` options.
#[derive(Debug, Clone, clap::Args)]
pub struct StatsArgs {
    /// The period: the last N days (`7d`, `30d`, today included) or from a UTC date
    /// (`2026-01-31`) to today.
    #[arg(long, value_name = "7d|30d|DATE", default_value = "30d")]
    pub since: String,
    /// Only this skill (its serves, feedback, scripts, and the ambiguous requests naming it).
    #[arg(long, value_name = "PATH")]
    pub skill: Option<String>,
    /// Print one JSON object (period, served, never_served, no_match, ambiguous, feedback,
    /// subjects, scripts, dropped).
    #[arg(long)]
    pub json: bool,
    /// Most rows per list (served, requests, subjects); never-served skills are all listed.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub limit: u32,
    /// The SQLite usage store to read (default: `analytics.store` of the configuration).
    #[arg(long, value_name = "FILE")]
    pub usage_db: Option<String>,
    /// The PostgreSQL usage database to read (default: `analytics.database_url`, or
    /// SKILLS_MCP_DATABASE_URL).
    #[arg(long, value_name = "URL")]
    pub database_url: Option<String>,
}

/// The period of a report: whole UTC days `since..=until`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Period {
    pub since: String,
    pub until: String,
    pub days: i64,
    #[serde(skip)]
    pub first_day: i64,
}

impl Period {
    /// `7d` (the last 7 days, today included) or `YYYY-MM-DD` to today.
    pub fn parse(since: &str, now_ms: i64) -> Result<Period> {
        let today = now_ms.div_euclid(DAY_MS);
        let first_day = if let Some(n) = since.strip_suffix('d') {
            match n.parse::<i64>() {
                Ok(n) if n >= 1 => today - (n - 1),
                _ => bail!(
                    "--since {since:?}: allowed: a number of days (7d, 30d) or a date (YYYY-MM-DD)"
                ),
            }
        } else {
            match parse_date(since) {
                Some(d) if d <= today => d,
                Some(_) => bail!("--since {since:?} is after today ({})", civil(today)),
                None => bail!(
                    "--since {since:?}: allowed: a number of days (7d, 30d) or a date (YYYY-MM-DD)"
                ),
            }
        };
        Ok(Period {
            since: civil(first_day),
            until: civil(today),
            days: today - first_day + 1,
            first_day,
        })
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Served {
    pub skill: String,
    pub count: i64,
    /// Serves per UTC day of the period, oldest first.
    pub per_day: Vec<i64>,
    /// Serves per `metadata.version` served, most first (absent when no serve recorded one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<VersionCount>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct VersionCount {
    /// The version as the skill wrote it (`1.10`).
    pub version: String,
    pub count: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct QueryCount {
    /// The request text; null for requests recorded without it (`record_queries: false`).
    pub query: Option<String>,
    pub count: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Feedback {
    pub skill: String,
    pub helpful: i64,
    pub not_helpful: i64,
    /// The comments, newest first (at most 10).
    pub comments: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SubjectCount {
    pub subject: String,
    pub count: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ExitCount {
    /// null: killed (timeout) or never started.
    pub exit_code: Option<i64>,
    pub count: i64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Script {
    pub skill: String,
    pub file: String,
    pub runs: i64,
    pub failures: i64,
    pub exit_codes: Vec<ExitCount>,
}

/// The report.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    pub period: Period,
    /// Where it was read from (`usage store ...` / `usage database ...`).
    pub store: String,
    pub events: i64,
    pub served: Vec<Served>,
    pub never_served: Vec<String>,
    pub no_match: Vec<QueryCount>,
    pub ambiguous: Vec<QueryCount>,
    pub feedback: Vec<Feedback>,
    pub subjects: Vec<SubjectCount>,
    pub scripts: Vec<Script>,
    /// Events dropped from a full buffer (database down too long) in the period.
    pub dropped: i64,
}

/// Builds the report from `store` for `period`; `index` is the skill paths of the current
/// index (for `never_served`).
pub fn report(
    store: &mut Store,
    period: &Period,
    skill: Option<&str>,
    limit: u32,
    index: &[String],
) -> Result<Report> {
    let from = period.first_day * DAY_MS;
    let to = (period.first_day + period.days) * DAY_MS;
    let range = || vec![Param::Int(from), Param::Int(to)];
    let with_skill = |mut p: Vec<Param>| {
        if let Some(s) = skill {
            p.push(Param::Text(s.to_owned()));
        }
        p
    };
    let skill_clause = if skill.is_some() {
        " AND skill = ?"
    } else {
        ""
    };
    let limit = i64::from(limit.max(1));

    let events = store
        .query(
            &format!("SELECT COUNT(*) FROM usage_events WHERE ts >= ? AND ts < ?{skill_clause}"),
            &with_skill(range()),
        )?
        .first()
        .map_or(0, |r| r[0].int());

    // Served, most first: the count per skill (in the index's skill order, no sort), then the
    // count per day of the listed skills only.
    let served_rows = store.query(
        &format!(
            "SELECT skill, COUNT(*) FROM usage_events \
             WHERE type = 'skill_served' AND ts >= ? AND ts < ?{skill_clause} \
             GROUP BY skill"
        ),
        &with_skill(range()),
    )?;
    // Keyed by text: a row without a skill counts as "" (as its cell reads).
    let mut per_skill: BTreeMap<String, i64> = BTreeMap::new();
    for r in &served_rows {
        *per_skill.entry(r[0].text()).or_default() += r[1].int();
    }
    let mut served: Vec<Served> = per_skill
        .into_iter()
        .map(|(skill, count)| Served {
            skill,
            count,
            per_day: Vec::new(),
            versions: Vec::new(),
        })
        .collect();
    served.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.skill.cmp(&b.skill)));
    let served_set: BTreeSet<&str> = served.iter().map(|s| s.skill.as_str()).collect();
    let never_served: Vec<String> = index
        .iter()
        .filter(|p| skill.is_none_or(|s| s == p.as_str()))
        .filter(|p| !served_set.contains(p.as_str()))
        .cloned()
        .collect();
    served.truncate(limit as usize);
    for s in &mut served {
        let this_skill = if s.skill.is_empty() {
            "(skill = ? OR skill IS NULL)"
        } else {
            "skill = ?"
        };
        let mut p = range();
        p.push(Param::Text(s.skill.clone()));
        // One query per listed skill: its serves per day and per version.
        s.per_day = vec![0; period.days as usize];
        let mut versions: BTreeMap<String, i64> = BTreeMap::new();
        for r in store.query(
            &format!(
                "SELECT ts / {DAY_MS}, version, COUNT(*) FROM usage_events \
                 WHERE type = 'skill_served' AND ts >= ? AND ts < ? AND {this_skill} \
                 GROUP BY ts / {DAY_MS}, version"
            ),
            &p,
        )? {
            let i = r[0].int() - period.first_day;
            if (0..period.days).contains(&i) {
                s.per_day[i as usize] += r[2].int();
            }
            if r[1] != Cell::Null {
                *versions.entry(r[1].text()).or_default() += r[2].int();
            }
        }
        s.versions = versions
            .into_iter()
            .map(|(version, count)| VersionCount { version, count })
            .collect();
        s.versions.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| a.version.cmp(&b.version))
        });
    }

    // Requests that found nothing / several skills, grouped by text.
    let mut queries = |kind: &str| -> Result<Vec<QueryCount>> {
        let (clause, mut params) = match skill {
            // An ambiguous request names its candidates in its data.
            Some(s) if kind == "ambiguous" => (
                " AND data LIKE ?",
                vec![Param::Text(format!(
                    "%{}%",
                    serde_json::Value::String(s.to_owned())
                ))],
            ),
            Some(_) => return Ok(Vec::new()),
            None => ("", Vec::new()),
        };
        let mut p = range();
        p.append(&mut params);
        p.push(Param::Int(limit));
        Ok(store
            .query(
                &format!(
                    "SELECT query, COUNT(*) FROM usage_events \
                     WHERE type = '{kind}' AND ts >= ? AND ts < ?{clause} \
                     GROUP BY query ORDER BY 2 DESC, 1 LIMIT ?"
                ),
                &p,
            )?
            .into_iter()
            .map(|r| QueryCount {
                query: match &r[0] {
                    Cell::Null => None,
                    c => Some(c.text()),
                },
                count: r[1].int(),
            })
            .collect())
    };
    let no_match = queries("no_match")?;
    let ambiguous = queries("ambiguous")?;

    // Feedback per skill, with the latest comments.
    let mut feedback: Vec<Feedback> = store
        .query(
            &format!(
                "SELECT skill, COUNT(*) FILTER (WHERE useful), COUNT(*) FILTER (WHERE NOT useful) \
                 FROM usage_events WHERE type = 'skill_feedback' AND ts >= ? AND ts < ?{skill_clause} \
                 GROUP BY skill ORDER BY 3 DESC, 2 DESC, 1"
            ),
            &with_skill(range()),
        )?
        .into_iter()
        .map(|r| Feedback {
            skill: r[0].text(),
            helpful: r[1].int(),
            not_helpful: r[2].int(),
            comments: Vec::new(),
        })
        .collect();
    let comments = store.query(
        &format!(
            "SELECT skill, comment FROM usage_events WHERE type = 'skill_feedback' \
             AND comment IS NOT NULL AND ts >= ? AND ts < ?{skill_clause} ORDER BY ts DESC LIMIT 1000"
        ),
        &with_skill(range()),
    )?;
    for r in comments {
        let skill = r[0].text();
        if let Some(f) = feedback.iter_mut().find(|f| f.skill == skill)
            && f.comments.len() < 10
        {
            f.comments.push(r[1].text());
        }
    }

    // Scripts: runs, failures, exit codes.
    let script_rows = store.query(
        &format!(
            "SELECT skill, file, exit_code, COUNT(*), COUNT(*) FILTER (WHERE NOT success) \
             FROM usage_events WHERE type = 'script_executed' AND ts >= ? AND ts < ?{skill_clause} \
             GROUP BY skill, file, exit_code"
        ),
        &with_skill(range()),
    )?;
    let mut scripts: BTreeMap<(String, String), Script> = BTreeMap::new();
    for r in script_rows {
        let key = (r[0].text(), r[1].text());
        let s = scripts.entry(key.clone()).or_insert_with(|| Script {
            skill: key.0,
            file: key.1,
            runs: 0,
            failures: 0,
            exit_codes: Vec::new(),
        });
        s.runs += r[3].int();
        s.failures += r[4].int();
        s.exit_codes.push(ExitCount {
            exit_code: match r[2] {
                Cell::Null => None,
                ref c => Some(c.int()),
            },
            count: r[3].int(),
        });
    }
    let mut scripts: Vec<Script> = scripts.into_values().collect();
    for s in &mut scripts {
        s.exit_codes
            .sort_by(|a, b| b.count.cmp(&a.count).then(a.exit_code.cmp(&b.exit_code)));
    }
    scripts.sort_by_key(|s| std::cmp::Reverse(s.runs));

    // On SQLite, `+ts` keeps the period off the index choice: the subjects are counted in the
    // order of usage_events_subject_ts (no sort of every event of the period); PostgreSQL plans
    // its own aggregate.
    let ts = if store.sqlite().is_some() {
        "+ts"
    } else {
        "ts"
    };
    let mut p = with_skill(range());
    p.push(Param::Int(limit));
    let subjects = store
        .query(
            &format!(
                "SELECT subject, COUNT(*) FROM usage_events \
                 WHERE {ts} >= ? AND {ts} < ? AND subject IS NOT NULL{skill_clause} \
                 GROUP BY subject ORDER BY 2 DESC, 1 LIMIT ?"
            ),
            &p,
        )?
        .into_iter()
        .map(|r| SubjectCount {
            subject: r[0].text(),
            count: r[1].int(),
        })
        .collect();

    let dropped = store
        .query(
            "SELECT data FROM usage_events WHERE type = 'events_dropped' AND ts >= ? AND ts < ?",
            &range(),
        )?
        .iter()
        .filter_map(|r| serde_json::from_str::<serde_json::Value>(&r[0].text()).ok())
        .filter_map(|v| v["count"].as_i64())
        .sum();

    Ok(Report {
        period: period.clone(),
        store: store.location().to_string(),
        events,
        served,
        never_served,
        no_match,
        ambiguous,
        feedback,
        subjects,
        scripts,
        dropped,
    })
}

/// A sparkline of `values` at most `width` columns wide (days summed into columns); a blank is 0.
pub fn sparkline(values: &[i64], width: usize) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let per = values.len().div_ceil(width.max(1)).max(1);
    let columns: Vec<i64> = values.chunks(per).map(|c| c.iter().sum()).collect();
    let max = columns.iter().copied().max().unwrap_or(0);
    columns
        .iter()
        .map(|&v| {
            if v <= 0 || max == 0 {
                ' '
            } else {
                BARS[(v * 7 / max).clamp(0, 7) as usize]
            }
        })
        .collect()
}

/// The report as text for a terminal (request texts and comments escaped).
pub fn text(r: &Report) -> String {
    use std::fmt::Write as _;
    let e = crate::logsafe::escape;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Usage {} .. {} ({} days, UTC), {} events, from the {}",
        r.period.since, r.period.until, r.period.days, r.events, r.store
    );
    if r.dropped > 0 {
        let _ = writeln!(
            out,
            "{} events were dropped while the store was unreachable",
            r.dropped
        );
    }
    let section = |out: &mut String, title: &str, empty: bool| {
        let _ = write!(out, "\n{title}\n");
        if empty {
            out.push_str("  (none)\n");
        }
    };
    section(&mut out, "Most served", r.served.is_empty());
    let width = r
        .served
        .iter()
        .map(|s| s.skill.len())
        .max()
        .unwrap_or(0)
        .min(50);
    for s in &r.served {
        let _ = write!(
            out,
            "  {:>6}  {:<width$}  {}",
            s.count,
            e(&s.skill),
            sparkline(&s.per_day, 60)
        );
        if !s.versions.is_empty() {
            let versions: Vec<String> = s
                .versions
                .iter()
                .map(|v| format!("{} x{}", e(&v.version), v.count))
                .collect();
            let _ = write!(out, "  versions {}", versions.join(", "));
        }
        out.push('\n');
    }
    section(
        &mut out,
        &format!("Never served ({})", r.never_served.len()),
        r.never_served.is_empty(),
    );
    for p in r.never_served.iter().take(50) {
        let _ = writeln!(out, "  {}", e(p));
    }
    if r.never_served.len() > 50 {
        let _ = writeln!(
            out,
            "  ... and {} more (--json lists all)",
            r.never_served.len() - 50
        );
    }
    for (title, list) in [
        ("Requests that found nothing", &r.no_match),
        ("Ambiguous requests", &r.ambiguous),
    ] {
        section(&mut out, title, list.is_empty());
        for q in list {
            let text = match &q.query {
                Some(t) => format!("{:?}", e(t)),
                None => "(not recorded)".to_owned(),
            };
            let _ = writeln!(out, "  {:>6}  {text}", q.count);
        }
    }
    section(&mut out, "Feedback", r.feedback.is_empty());
    for f in &r.feedback {
        let _ = writeln!(
            out,
            "  {}  helpful {}  not helpful {}",
            e(&f.skill),
            f.helpful,
            f.not_helpful
        );
        for c in &f.comments {
            let _ = writeln!(out, "      {:?}", e(c));
        }
    }
    section(&mut out, "Scripts", r.scripts.is_empty());
    for s in &r.scripts {
        let codes: Vec<String> = s
            .exit_codes
            .iter()
            .map(|c| match c.exit_code {
                Some(code) => format!("{code}×{}", c.count),
                None => format!("killed×{}", c.count),
            })
            .collect();
        let _ = writeln!(
            out,
            "  {} {}  runs {}  failures {}  exit codes {}",
            e(&s.skill),
            e(&s.file),
            s.runs,
            s.failures,
            codes.join(", ")
        );
    }
    if !r.subjects.is_empty() {
        section(&mut out, "Subjects", false);
        for s in &r.subjects {
            let _ = writeln!(out, "  {:>6}  {}", s.count, e(&s.subject));
        }
    }
    out
}

/// Where `stats` reads: `--database-url`, `--usage-db`, else the configuration's store.
pub fn location(
    args: &StatsArgs,
    config: &crate::analytics::AnalyticsConfig,
) -> Result<super::Location> {
    let env = |k: &str| std::env::var(k).ok();
    if let Some(url) = args
        .database_url
        .as_deref()
        .filter(|u| !u.trim().is_empty())
    {
        return Ok(super::Location::Postgres(url.trim().to_owned()));
    }
    if let Some(path) = args.usage_db.as_deref().filter(|p| !p.trim().is_empty()) {
        return Ok(super::Location::Sqlite(super::expand_home(
            path.trim(),
            &env,
        )));
    }
    match super::location(config, &env) {
        Some(l) => Ok(l),
        None if config.store.trim() == "off" => {
            bail!(
                "the usage store is off (analytics.store: off); give --usage-db FILE or --database-url URL"
            )
        }
        None => bail!(
            "no usage store: neither XDG_STATE_HOME nor HOME is set; give --usage-db FILE or --database-url URL"
        ),
    }
}

/// Now in milliseconds (the report's clock).
pub fn now() -> i64 {
    now_ms()
}
