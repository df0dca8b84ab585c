//! `skills-mcp audit`: collection health (issue 39, part 2). For every skill the caller sees,
//! the skills that win or tie the requests meant for it and the findings (unreachable skills,
//! near-identical descriptions, over-broad "hijackers"), worst first. The audit is the
//! engine's (`index.audit-part` on one engine instance a CPU, each holding a copy of the
//! caller's view, then `index.audit-merge`); this verb opens the roots as `serve` does, hands
//! it each skill's eval queries (read and parsed as `eval` does) and prints the answer.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::runtime::SkillRequests;

/// `skills-mcp audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Who the audit is for: it sees the skills this caller sees (the flags of `access check`;
    /// none: `--local`, what a stdio client sees).
    #[command(flatten)]
    pub caller: crate::cli::CallerArgs,
    /// Print JSON: `{"skills": [{"skill", "competitors": [{"skill", "strength", "shared",
    /// "separating"}], "findings": [{"kind", "message"}]}]}`, worst first.
    #[arg(long)]
    pub json: bool,
}

/// How long one of the audit's engine calls may run at least: each searches the requests of a
/// share of the skills, or merges them, where the engine's usual limit is meant for serving
/// one request.
pub const AUDIT_CALL_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// What one part of an audit may take per pair of one of its skills and one skill of the
/// collection (each of its skills' requests, up to 20, is searched against every skill):
/// about 10 times what a pair takes on 2 loaded cores (50,000 generated skills, 2026-11-29),
/// room for a machine busy with other work.
const PART_TIME_PER_PAIR: Duration = Duration::from_micros(2);

/// The limit of one `index.audit-part` call, part of `parts` over `skills` skills: it grows
/// with the part's work (its skills times the collection's), so a big but healthy audit is
/// not stopped, and is never below [`AUDIT_CALL_TIMEOUT`]; a limit still, so that no
/// collection keeps an engine instance busy for ever.
pub fn part_timeout(skills: u32, parts: u32) -> Duration {
    let per_part = u64::from(skills).div_ceil(u64::from(parts.max(1)));
    let pairs = per_part.saturating_mul(u64::from(skills));
    let nanos = PART_TIME_PER_PAIR.as_nanos() as u64;
    AUDIT_CALL_TIMEOUT.max(Duration::from_nanos(pairs.saturating_mul(nanos)))
}

/// The requests meant for each skill that has an eval file: its `should_trigger: true` queries
/// (read and parsed as `eval` does). A file that cannot be read or is malformed is a located
/// warning on stderr, and that skill's requests are derived from its text. A skill hidden from
/// the caller is left to the engine, which ignores requests for skills not in the view.
fn eval_requests(catalog: &Catalog) -> anyhow::Result<Vec<SkillRequests>> {
    let mut out = Vec::new();
    for f in crate::eval::every_eval_file(catalog)? {
        let parsed = match f.bytes {
            Ok(b) => crate::eval::parse(catalog, &b)?,
            Err(messages) => Err(messages),
        };
        match parsed {
            Ok(queries) => out.push(SkillRequests {
                skill_path: f.skill,
                requests: queries
                    .into_iter()
                    .filter(|q| q.should_trigger)
                    .map(|q| q.query)
                    .collect(),
            }),
            Err(messages) => {
                for m in messages {
                    eprintln!(
                        "skills-mcp: warning: {}: {} (skill {}; its audit requests are derived from its text)",
                        crate::logsafe::Escaped(&f.file),
                        crate::logsafe::Escaped(&m),
                        f.skill
                    );
                }
            }
        }
    }
    Ok(out)
}

/// Audit what the caller sees and print the report.
pub fn run(catalog: &Catalog, config: &Config, args: &AuditArgs) -> anyhow::Result<ExitCode> {
    crate::access::apply(catalog, &config.access)?;
    let caller =
        crate::access::check::caller(&args.caller, config, crate::cli::DefaultCaller::Local)?;
    // The skills shared out over engine instances, one a CPU (the same answer as one).
    let skills: Vec<_> = catalog
        .view_as(caller)
        .audit_parallel(&eval_requests(catalog)?, Catalog::replica_threads())?
        .into_iter()
        .map(crate::output::audit_skill)
        .collect();
    let text = if args.json {
        skills_engine::output::pretty(&skills_engine::output::audit_json(&skills))
    } else {
        skills_engine::output::audit_text(&skills)
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A part's limit is the floor for a small collection, grows with the part's work (its
    /// skills times the collection's) past it, shrinks as the parts get more, and stays finite.
    #[test]
    fn a_part_limit_grows_with_the_collection() {
        assert_eq!(part_timeout(2_620, 16), AUDIT_CALL_TIMEOUT);
        assert_eq!(part_timeout(0, 0), AUDIT_CALL_TIMEOUT);
        let big = part_timeout(200_000, 16);
        assert_eq!(big, Duration::from_micros(2 * 12_500 * 200_000));
        assert!(part_timeout(400_000, 16) > big * 3);
        assert!(part_timeout(200_000, 32) < big);
        assert!(part_timeout(u32::MAX, 1) < Duration::MAX);
    }
}
