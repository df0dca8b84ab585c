//! `skills-mcp audit`: collection health (issue 39, part 2). For every skill the caller sees,
//! the skills that win or tie the requests meant for it and the findings (unreachable skills,
//! near-identical descriptions, over-broad "hijackers"), worst first. The audit is the
//! engine's (`index.audit`, over the caller's view); this verb opens the roots as `serve` does
//! and prints the answer.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::catalog::Catalog;
use crate::config::Config;

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

/// How long the audit's one engine call may run: it searches every skill's requests (about a
/// minute for 50,000 skills), where the engine's usual limit is meant for serving one request.
pub const AUDIT_CALL_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// Audit what the caller sees and print the report.
pub fn run(catalog: &Catalog, config: &Config, args: &AuditArgs) -> anyhow::Result<ExitCode> {
    crate::access::apply(catalog, &config.access)?;
    let caller =
        crate::access::check::caller(&args.caller, config, crate::cli::DefaultCaller::Local)?;
    let skills: Vec<_> = catalog
        .view_as(caller)
        .audit(&[])?
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
