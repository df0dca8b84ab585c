//! `skills-mcp eval`: trigger evals. Each skill's `evals/eval_queries.json` (where the engine
//! says it is), or `--skill PATH FILE`, is read here and handed to the engine, which checks it,
//! splits it and routes every query exactly as the `get_skill` tool routes a `context`, for a
//! caller (default: the local operator, what a stdio client is). This module reads files and
//! prints: a table, `--json`, `--junit FILE`.
//!
//! Exit codes: 0 when every evaluated skill meets `--min-pass-rate`; 1 when one does not, when an
//! eval file is malformed (the others still run) or when nothing was evaluated; 2 for a usage
//! error.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::cli::{CallerArgs, DefaultCaller};
use crate::config::Config;
use crate::runtime::{EvalOutcome, EvalQuery, EvalResult, EvalSplit, SkillEval};

/// `skills-mcp eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Evaluate this one file for this one skill (a skill path or unique name) instead of every
    /// skill's `evals/eval_queries.json`.
    #[arg(long, num_args = 2, value_names = ["PATH", "FILE"])]
    pub skill: Option<Vec<String>>,
    /// Count a query as triggering the skill when routing finds it ambiguous and the skill is
    /// among the candidates (by default only a match triggers).
    #[arg(long)]
    pub accept_ambiguous: bool,
    /// The share of a skill's queries (train and validation) that must pass, 0 to 1.
    #[arg(long, value_name = "RATE", default_value_t = 1.0, value_parser = parse_rate)]
    pub min_pass_rate: f64,
    /// Print one JSON object (`skills` with each query's outcome; `passed`, `total`).
    #[arg(long)]
    pub json: bool,
    /// Also write a JUnit XML report (a testsuite per skill, a testcase per query) to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Who asks (default: --local, the local operator, what a stdio client is).
    #[command(flatten)]
    pub caller: CallerArgs,
}

fn parse_rate(s: &str) -> Result<f64, String> {
    let rate: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number; give a share from 0 to 1 (0.9 = 90%)"))?;
    if !(0.0..=1.0).contains(&rate) {
        return Err(format!(
            "{rate} is out of range; give a share from 0 to 1 (0.9 = 90%)"
        ));
    }
    Ok(rate)
}

/// An eval file that could not be run, located.
struct Problem {
    skill: String,
    file: String,
    message: String,
}

/// What a run found.
#[derive(Default)]
struct Report {
    evals: Vec<SkillEval>,
    hidden: Vec<String>,
    problems: Vec<Problem>,
}

/// Run the verb.
pub fn run(catalog: &Catalog, config: &Config, args: &EvalArgs) -> anyhow::Result<ExitCode> {
    crate::access::apply(catalog, &config.access)?;
    let caller = crate::access::check::caller(&args.caller, config, DefaultCaller::Local)?;
    let hidden: BTreeSet<String> = if catalog.has_access_rules() {
        catalog
            .hidden(&caller)?
            .into_iter()
            .map(|h| h.path)
            .collect()
    } else {
        BTreeSet::new()
    };
    let view = catalog.view_as(caller);
    let mut files: Vec<ReadEvalFile> = Vec::new();
    if let Some(given) = &args.skill {
        let [skill, file] = given.as_slice() else {
            anyhow::bail!("--skill takes a skill path and a file");
        };
        let skill = catalog.get(skill)?.skill_path;
        let path = Path::new(file);
        let bytes = match read_capped(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                eprintln!("skills-mcp: error: --skill {skill} {file}: {e}");
                return Ok(ExitCode::from(crate::cli::EXIT_USAGE));
            }
        };
        files.push(ReadEvalFile {
            skill,
            file: file.clone(),
            bytes: Ok(bytes),
        });
    } else {
        files = every_eval_file(catalog)?;
    }
    let mut report = Report::default();
    let ran = run_files(&view, files, &hidden, args.accept_ambiguous)?;
    for r in ran {
        match r {
            Ran::Hidden(skill) => report.hidden.push(skill),
            Ran::Problems(problems) => report.problems.extend(problems),
            Ran::Eval(e) => report.evals.push(e),
            Ran::Queries(..) => unreachable!("every parsed file was run"),
        }
    }

    for p in &report.problems {
        eprintln!(
            "skills-mcp: error: {}: {} (skill {})",
            crate::logsafe::Escaped(&p.file),
            crate::logsafe::Escaped(&p.message),
            p.skill
        );
    }
    let nothing = report.evals.is_empty();
    if nothing && report.problems.is_empty() {
        let why = if report.hidden.is_empty() {
            "no eval file found: write evals/eval_queries.json in a skill's folder (see docs/authoring.md), or use --skill PATH FILE"
        } else {
            "nothing to evaluate: every skill with an eval file is hidden from this caller"
        };
        eprintln!("skills-mcp: error: {why}");
    }
    if let Some(path) = &args.junit {
        std::fs::write(path, junit(&report, args.min_pass_rate))
            .map_err(|e| anyhow::anyhow!("writing the JUnit report {}: {e}", path.display()))?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&to_json(&report))?)?;
    } else {
        write!(out, "{}", table(&report, args.min_pass_rate))?;
    }
    let below = report.evals.iter().any(|e| !meets(e, args.min_pass_rate));
    Ok(if below || nothing || !report.problems.is_empty() {
        ExitCode::from(crate::cli::EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

/// One skill's eval file, read (not yet parsed).
pub(crate) struct ReadEvalFile {
    pub skill: String,
    /// The file as shown in messages (its root joined with its path).
    pub file: String,
    /// Its bytes, or why it could not be read.
    pub bytes: Result<Vec<u8>, Vec<String>>,
}

/// Every skill's eval file where the engine says it is (`index.eval-files`), read through the
/// catalog with the eval file's size cap: the one reader of `eval` and `audit`.
pub(crate) fn every_eval_file(catalog: &Catalog) -> anyhow::Result<Vec<ReadEvalFile>> {
    Ok(catalog
        .eval_files()?
        .into_iter()
        .map(|f| {
            let file = catalog.roots().get(f.root as usize).map_or_else(
                || f.path.clone(),
                |r| r.path.join(&f.path).display().to_string(),
            );
            let bytes = catalog
                .read_file(f.root, &f.path, skills_engine::evals::MAX_EVAL_FILE_BYTES)
                .map_err(|e| vec![format!("{e:#}")]);
            ReadEvalFile {
                skill: f.skill_path,
                file,
                bytes,
            }
        })
        .collect())
}

/// Parse an eval file with the engine's `parse-eval-queries`: its queries, or every problem,
/// located (`entry 3: ...`, `line 2, column 5: ...`).
pub(crate) fn parse(
    catalog: &Catalog,
    bytes: &[u8],
) -> anyhow::Result<Result<Vec<EvalQuery>, Vec<String>>> {
    Ok(catalog
        .parse_eval_queries(bytes)?
        .map_err(|problems| problems.iter().map(located).collect()))
}

/// What became of one eval file.
enum Ran {
    Hidden(String),
    Problems(Vec<Problem>),
    Eval(SkillEval),
    /// Parsed, to be run: the skill and its queries.
    Queries(String, Vec<EvalQuery>),
}

/// Fewer queries than this run on one engine instance: another costs a copy of the index,
/// about what 250-500 queries cost (100 ms on the 2,620-skill corpus).
const PARALLEL_QUERIES: usize = 256;

/// Run every file on `view`, in order: each
/// checked (hidden from the caller, unreadable, malformed) and parsed, then its queries run.
/// With [`PARALLEL_QUERIES`] or more queries and more than one CPU, the skills are shared out
/// over up to 4 threads (one a CPU), each calling its own engine instance holding a copy of
/// the index ([`Catalog::replica`]): the same answers, in the same order.
fn run_files(
    view: &Catalog,
    files: Vec<ReadEvalFile>,
    hidden: &BTreeSet<String>,
    accept_ambiguous: bool,
) -> anyhow::Result<Vec<Ran>> {
    let mut ran: Vec<Ran> = files
        .into_iter()
        .map(|f| parse_file(view, f, hidden))
        .collect::<anyhow::Result<_>>()?;
    let pending: Vec<usize> = (0..ran.len())
        .filter(|&i| matches!(ran[i], Ran::Queries(..)))
        .collect();
    let queries: usize = ran
        .iter()
        .map(|r| match r {
            Ran::Queries(_, q) => q.len(),
            _ => 0,
        })
        .sum();
    let threads = if queries < PARALLEL_QUERIES {
        1
    } else {
        Catalog::replica_threads().min(pending.len())
    };
    let evaluate = |catalog: &Catalog, r: &Ran| -> anyhow::Result<SkillEval> {
        let Ran::Queries(skill, queries) = r else {
            unreachable!("only parsed files are pending")
        };
        catalog.evaluate(skill, queries, accept_ambiguous)
    };
    let mut done: Vec<(usize, SkillEval)> = Vec::with_capacity(pending.len());
    if threads <= 1 {
        for &i in &pending {
            done.push((i, evaluate(view, &ran[i])?));
        }
    } else {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let work = |catalog: &Catalog| -> anyhow::Result<Vec<(usize, SkillEval)>> {
            let started = std::time::Instant::now();
            let mut done = Vec::new();
            loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = pending.get(k) else {
                    tracing::debug!(
                        "eval: {} skills on one engine instance in {} ms",
                        done.len(),
                        started.elapsed().as_millis()
                    );
                    return Ok(done);
                };
                done.push((i, evaluate(catalog, &ran[i])?));
            }
        };
        std::thread::scope(|scope| -> anyhow::Result<()> {
            // (the copies are made on their threads while this one already runs queries)
            let helpers: Vec<_> = (1..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let started = std::time::Instant::now();
                        let replica = view.replica()?;
                        tracing::debug!(
                            "eval: the index copied into another engine instance in {} ms",
                            started.elapsed().as_millis()
                        );
                        work(&replica)
                    })
                })
                .collect();
            let mut results = vec![work(view)];
            for h in helpers {
                results.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
            for r in results {
                done.extend(r?);
            }
            Ok(())
        })?;
    }
    for (i, e) in done {
        ran[i] = Ran::Eval(e);
    }
    Ok(ran)
}

/// One eval file checked and parsed: hidden from the caller, unreadable or malformed (located
/// problems), or its queries.
fn parse_file(
    catalog: &Catalog,
    ReadEvalFile { skill, file, bytes }: ReadEvalFile,
    hidden: &BTreeSet<String>,
) -> anyhow::Result<Ran> {
    if hidden.contains(&skill) {
        return Ok(Ran::Hidden(skill));
    }
    let parsed = match bytes {
        Ok(b) => parse(catalog, &b)?,
        Err(messages) => Err(messages),
    };
    Ok(match parsed {
        Ok(queries) => Ran::Queries(skill, queries),
        Err(messages) => Ran::Problems(
            messages
                .into_iter()
                .map(|message| Problem {
                    skill: skill.clone(),
                    file: file.clone(),
                    message,
                })
                .collect(),
        ),
    })
}

/// Read a file given on the command line, refusing one larger than an eval file may be.
fn read_capped(path: &Path) -> Result<Vec<u8>, String> {
    let limit = skills_engine::evals::MAX_EVAL_FILE_BYTES;
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a file".into());
    }
    if meta.len() > limit {
        return Err(format!(
            "{} bytes; an eval file holds at most {limit} bytes",
            meta.len()
        ));
    }
    std::fs::read(path).map_err(|e| e.to_string())
}

/// `entry 3: ...` or `line 2, column 5: ...`.
pub(crate) fn located(p: &crate::runtime::EvalProblem) -> String {
    match (p.entry, p.line, p.column) {
        (Some(e), ..) => format!("entry {e}: {}", p.message),
        (None, Some(l), Some(c)) => format!("line {l}, column {c}: {}", p.message),
        (None, Some(l), None) => format!("line {l}: {}", p.message),
        _ => p.message.clone(),
    }
}

/// Whether a skill meets the pass rate (all its queries counted).
fn meets(e: &SkillEval, min: f64) -> bool {
    f64::from(e.passed) >= min * f64::from(e.total) - 1e-9
}

/// Whether the skill triggered on a query (its outcome and whether it passed say it).
fn triggered(r: &EvalResult) -> bool {
    r.passed == r.should_trigger
}

/// `"matched"`, `"other"`, `"ambiguous"` or `"no_match"`.
fn outcome_name(o: &EvalOutcome) -> &'static str {
    match o {
        EvalOutcome::Matched => "matched",
        EvalOutcome::Other(_) => "other",
        EvalOutcome::Ambiguous(_) => "ambiguous",
        EvalOutcome::NoMatch => "no_match",
    }
}

fn split_name(s: EvalSplit) -> &'static str {
    match s {
        EvalSplit::Train => "train",
        EvalSplit::Validation => "validation",
    }
}

/// The skill matched instead of this one, or the best other candidate.
fn won_instead<'a>(skill: &str, r: &'a EvalResult) -> Option<&'a str> {
    match &r.outcome {
        EvalOutcome::Other(p) => Some(p),
        EvalOutcome::Ambiguous(c) => c.iter().map(String::as_str).find(|p| *p != skill),
        EvalOutcome::Matched | EvalOutcome::NoMatch => None,
    }
}

/// One skill's eval, as `--json` prints it (and the editor shows it as you type):
/// `{"skill", "passed", "total", "train", "validation", "queries": [...]}`.
pub fn skill_json(e: &SkillEval) -> Value {
    let queries: Vec<Value> = e
        .results
        .iter()
        .map(|r| {
            let winner = match &r.outcome {
                EvalOutcome::Matched => Some(e.skill_path.as_str()),
                EvalOutcome::Other(p) => Some(p.as_str()),
                _ => None,
            };
            let mut q = json!({
                "query": r.query,
                "should_trigger": r.should_trigger,
                "split": split_name(r.split),
                "outcome": outcome_name(&r.outcome),
                "winner": winner,
                "rank": r.rank,
                "passed": r.passed,
            });
            if let EvalOutcome::Ambiguous(c) = &r.outcome {
                q["candidates"] = json!(c);
            }
            q
        })
        .collect();
    json!({
        "skill": e.skill_path,
        "passed": e.passed,
        "total": e.total,
        "train": {"passed": e.train_passed, "total": e.train_total},
        "validation": {"passed": e.validation_passed, "total": e.validation_total},
        "queries": queries,
    })
}

/// The JSON answer: `{"skills": [...], "passed", "total", "hidden", "errors"}`.
fn to_json(report: &Report) -> Value {
    let skills: Vec<Value> = report.evals.iter().map(skill_json).collect();
    let errors: Vec<Value> = report
        .problems
        .iter()
        .map(|p| json!({"skill": p.skill, "file": p.file, "message": p.message}))
        .collect();
    json!({
        "skills": skills,
        "passed": report.evals.iter().map(|e| e.passed).sum::<u32>(),
        "total": report.evals.iter().map(|e| e.total).sum::<u32>(),
        "hidden": report.hidden,
        "errors": errors,
    })
}

/// `n/d`.
fn frac(n: u32, d: u32) -> String {
    format!("{n}/{d}")
}

/// The readable report: a row per skill, its failed queries, then a summary.
fn table(report: &Report, min: f64) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let head = [
        "skill",
        "passed",
        "rate",
        "recall",
        "false triggers",
        "train",
        "validation",
        "won instead",
    ];
    let mut rows: Vec<[String; 8]> = Vec::new();
    for e in &report.evals {
        let (mut pos, mut hit, mut neg, mut fired) = (0, 0, 0, 0);
        let mut winners: BTreeMap<&str, u32> = BTreeMap::new();
        for r in &e.results {
            if r.should_trigger {
                pos += 1;
                hit += u32::from(triggered(r));
                if !r.passed {
                    *winners
                        .entry(won_instead(&e.skill_path, r).unwrap_or("(no match)"))
                        .or_default() += 1;
                }
            } else {
                neg += 1;
                fired += u32::from(triggered(r));
            }
        }
        let mut winners: Vec<(&str, u32)> = winners.into_iter().collect();
        winners.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let won = winners
            .iter()
            .map(|(w, n)| format!("{w} ({n})"))
            .collect::<Vec<_>>()
            .join(", ");
        rows.push([
            e.skill_path.clone(),
            frac(e.passed, e.total),
            format!(
                "{:.0}%",
                100.0 * f64::from(e.passed) / f64::from(e.total.max(1))
            ),
            frac(hit, pos),
            frac(fired, neg),
            frac(e.train_passed, e.train_total),
            frac(e.validation_passed, e.validation_total),
            if won.is_empty() { "-".into() } else { won },
        ]);
    }
    if !rows.is_empty() {
        let mut widths = head.map(str::len);
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[&str]| {
            let mut l = String::new();
            for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
                if i + 1 == cells.len() {
                    l.push_str(cell);
                } else {
                    let _ = write!(l, "{cell:<w$}  ");
                }
            }
            l.trim_end().to_owned() + "\n"
        };
        out.push_str(&line(&head));
        for row in &rows {
            out.push_str(&line(&row.each_ref().map(String::as_str)));
        }
    }
    for e in &report.evals {
        let failed: Vec<&EvalResult> = e.results.iter().filter(|r| !r.passed).collect();
        if failed.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{}: {} failed", e.skill_path, failed.len());
        for r in failed {
            let expected = if r.should_trigger {
                "should trigger"
            } else {
                "should not trigger"
            };
            let got = match &r.outcome {
                EvalOutcome::Matched => "matched".to_owned(),
                EvalOutcome::Other(p) => format!("{p} matched"),
                EvalOutcome::Ambiguous(c) => format!("ambiguous: {}", c.join(", ")),
                EvalOutcome::NoMatch => "no match".to_owned(),
            };
            let rank = r
                .rank
                .map_or_else(|| "unranked".to_owned(), |n| format!("rank {n}"));
            let _ = writeln!(
                out,
                "  FAIL [{}] {expected}: {:?} -> {got} ({rank})",
                split_name(r.split),
                r.query
            );
        }
    }
    if !report.hidden.is_empty() {
        let _ = writeln!(
            out,
            "\nhidden from this caller, not evaluated: {}",
            report.hidden.join(", ")
        );
    }
    let meeting = report.evals.iter().filter(|e| meets(e, min)).count();
    let passed: u32 = report.evals.iter().map(|e| e.passed).sum();
    let total: u32 = report.evals.iter().map(|e| e.total).sum();
    let malformed: BTreeSet<&str> = report.problems.iter().map(|p| p.file.as_str()).collect();
    let _ = write!(
        out,
        "\n{} skill{} evaluated: {meeting} meet{} --min-pass-rate {min}, {} below; {passed}/{total} queries passed",
        report.evals.len(),
        if report.evals.len() == 1 { "" } else { "s" },
        if meeting == 1 { "s" } else { "" },
        report.evals.len() - meeting,
    );
    if !malformed.is_empty() {
        let _ = write!(
            out,
            "; {} eval file{} could not be run (see the errors)",
            malformed.len(),
            if malformed.len() == 1 { "" } else { "s" }
        );
    }
    out.push('\n');
    out
}

/// Text for XML: the five special characters escaped, characters XML 1.0 cannot hold dropped.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// The JUnit XML report: a testsuite per skill (a testcase per query, a failure for each that
/// did not pass), one per malformed eval file (an error), one per hidden skill (skipped).
fn junit(report: &Report, min: f64) -> String {
    use std::fmt::Write as _;
    let mut suites = String::new();
    let (mut tests, mut failures, mut errors, mut skipped) = (0u32, 0u32, 0usize, 0usize);
    for e in &report.evals {
        let failed = e.total - e.passed;
        tests += e.total;
        failures += failed;
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" errors=\"0\" skipped=\"0\">",
            xml(&e.skill_path),
            e.total
        );
        let _ = writeln!(
            suites,
            "    <properties><property name=\"meets-min-pass-rate\" value=\"{}\"/><property name=\"train\" value=\"{}/{}\"/><property name=\"validation\" value=\"{}/{}\"/></properties>",
            meets(e, min),
            e.train_passed,
            e.train_total,
            e.validation_passed,
            e.validation_total
        );
        for r in &e.results {
            let class = format!("{}.{}", e.skill_path, split_name(r.split));
            let _ = write!(
                suites,
                "    <testcase classname=\"{}\" name=\"{}\"",
                xml(&class),
                xml(&r.query)
            );
            if r.passed {
                suites.push_str("/>\n");
                continue;
            }
            let expected = if r.should_trigger {
                "should trigger"
            } else {
                "should not trigger"
            };
            let got = match &r.outcome {
                EvalOutcome::Matched => format!("{} matched", e.skill_path),
                EvalOutcome::Other(p) => format!("{p} matched"),
                EvalOutcome::Ambiguous(c) => format!("ambiguous: {}", c.join(", ")),
                EvalOutcome::NoMatch => "no match".into(),
            };
            let rank = r
                .rank
                .map_or_else(|| "unranked".to_owned(), |n| format!("rank {n}"));
            let _ = writeln!(
                suites,
                ">\n      <failure message=\"{}\" type=\"{}\"/>\n    </testcase>",
                xml(&format!("{expected}; {got} ({} {rank})", e.skill_path)),
                outcome_name(&r.outcome)
            );
        }
        suites.push_str("  </testsuite>\n");
    }
    let mut by_file: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for p in &report.problems {
        by_file
            .entry((p.skill.as_str(), p.file.as_str()))
            .or_default()
            .push(p.message.as_str());
    }
    for ((skill, file), messages) in &by_file {
        errors += 1;
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n    <testcase classname=\"{}\" name=\"{}\">\n      <error message=\"{}\" type=\"malformed\">{}</error>\n    </testcase>\n  </testsuite>",
            xml(skill),
            xml(skill),
            xml(file),
            xml(messages.first().copied().unwrap_or_default()),
            xml(&messages.join("\n"))
        );
    }
    for skill in &report.hidden {
        skipped += 1;
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{0}\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\">\n    <testcase classname=\"{0}\" name=\"hidden from this caller\"><skipped/></testcase>\n  </testsuite>",
            xml(skill)
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"skills-mcp eval\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n{suites}</testsuites>\n",
        tests as usize + errors + skipped
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_text_is_escaped_and_cleaned() {
        assert_eq!(
            xml("a<b & \"c\" 'd'>\u{1}\te"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;\te"
        );
    }

    #[test]
    fn the_pass_rate_is_a_share() {
        assert_eq!(parse_rate("0.9"), Ok(0.9));
        assert!(parse_rate("90").unwrap_err().contains("out of range"));
        assert!(parse_rate("x").unwrap_err().contains("not a number"));
    }
}
