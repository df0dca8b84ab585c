//! `skills-mcp access check`: which skills a caller sees under the operator's rules, and which
//! rule hides each of the others, for an operator to test rules before deploying them. The
//! answer is the engine's (`view`, `hidden`), over the same index `serve` builds.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::runtime::{Caller, CallerIdentity};

/// `skills-mcp access ...`.
#[derive(Debug, Args)]
pub struct AccessArgs {
    #[command(subcommand)]
    pub command: AccessCommand,
}

/// The `access` verbs.
#[derive(Debug, Subcommand)]
pub enum AccessCommand {
    /// Print which skills a caller sees and which rule hides each of the others (the
    /// configuration's `access.rules`; `--config FILE`).
    Check(CheckArgs),
}

/// `access check`: the caller, and the output form.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Who asks (no flag: anonymous).
    #[command(flatten)]
    pub caller: crate::cli::CallerArgs,
    /// Print JSON (`caller`, `visible`, `hidden` with each skill's `rules`).
    #[arg(long)]
    pub json: bool,
}

/// The caller `args` describe, with no caller flag `default`: `access check` takes anonymous,
/// `eval` (and the authoring verbs) the local operator, what a stdio client is.
pub fn caller(
    args: &crate::cli::CallerArgs,
    config: &Config,
    default: crate::cli::DefaultCaller,
) -> anyhow::Result<Caller> {
    let identity_flags = args.subject.is_some()
        || !args.groups.is_empty()
        || !args.scopes.is_empty()
        || args.token_file_line.is_some();
    if args.local
        || (!identity_flags && !args.anonymous && default == crate::cli::DefaultCaller::Local)
    {
        return Ok(super::local(&config.access));
    }
    if let Some(line) = &args.token_file_line {
        let identity = crate::http_auth::identity_of_line(
            line,
            &config.auth.scopes,
            &config.access.rule_scopes(),
        )?;
        return Ok(super::of_identity(&identity));
    }
    Ok(Caller::Identity(CallerIdentity {
        subject: args.subject.clone().filter(|s| !s.is_empty()),
        groups: args
            .groups
            .iter()
            .filter(|g| !g.is_empty())
            .cloned()
            .collect(),
        scopes: args
            .scopes
            .iter()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect(),
    }))
}

/// Print what `caller` sees and what is hidden from it.
pub fn run(catalog: &Catalog, config: &Config, args: &CheckArgs) -> anyhow::Result<ExitCode> {
    super::apply(catalog, &config.access)?;
    let caller = caller(&args.caller, config, crate::cli::DefaultCaller::Anonymous)?;
    let visible: Vec<String> = catalog
        .view_as(caller.clone())
        .skills()?
        .into_iter()
        .map(|s| s.skill_path)
        .collect();
    let hidden = if catalog.has_access_rules() {
        catalog.hidden(&caller)?
    } else {
        Vec::new()
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let hidden: Vec<_> = hidden
            .iter()
            .map(|h| json!({"path": h.path, "rules": h.rules}))
            .collect();
        let value = json!({"caller": describe(&caller), "visible": visible, "hidden": hidden});
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "caller: {}", describe(&caller))?;
    writeln!(out, "visible ({}):", visible.len())?;
    for path in &visible {
        writeln!(out, "  {path}")?;
    }
    writeln!(out, "hidden ({}):", hidden.len())?;
    for h in &hidden {
        let rules: Vec<String> = h
            .rules
            .iter()
            .map(|i| format!("access.rules[{i}]"))
            .collect();
        writeln!(out, "  {}  (selected by {})", h.path, rules.join(", "))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `unrestricted`, or `subject=... groups=... scopes=...`.
pub fn describe(caller: &Caller) -> String {
    match caller {
        Caller::Unrestricted => "unrestricted (the local operator without access.local)".into(),
        Caller::Identity(i) => format!(
            "subject={} groups={} scopes={}",
            i.subject.as_deref().unwrap_or("-"),
            list(&i.groups),
            list(&i.scopes)
        ),
    }
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "-".into()
    } else {
        items.join(",")
    }
}
