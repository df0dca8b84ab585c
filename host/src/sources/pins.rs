//! `skills-mcp sources`: the remote sources with their revision and pin (`sources list`), and
//! rollback as a pin (`sources rollback NAME`, `sources unpin NAME`).
//!
//! A pin is the file `PIN` in the source's folder below `git.content_dir`: every refresh of
//! every process sharing that folder serves the pinned revision (git checks out that commit,
//! OCI pulls that manifest digest) and reports, without following, a remote that moved. A
//! fleet whose replicas do not share the folder pins through the lock file instead
//! (`serve --locked`). Neither verb reaches the remote: rollback serves the previous snapshot,
//! which is kept on disk.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use serde::Serialize;

use super::snapshots::short;

/// `skills-mcp sources`.
#[derive(Debug, Args)]
pub struct SourcesArgs {
    #[command(subcommand)]
    pub command: SourcesCommand,
}

#[derive(Debug, Subcommand)]
pub enum SourcesCommand {
    /// Every remote source: name, kind, revision served, pin, source.
    List {
        /// As JSON (`name`, `kind`, `source`, `revision`, `pinned`, `previous`).
        #[arg(long)]
        json: bool,
    },
    /// Serve the revision the source served before its last update and pin it, for every
    /// replica sharing `git.content_dir`, until `sources unpin NAME`.
    Rollback {
        /// The source's `name`.
        name: String,
    },
    /// Remove the source's pin: the next refresh follows the remote again.
    Unpin {
        /// The source's `name`.
        name: String,
    },
}

/// One remote source, as `sources list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceInfo {
    pub name: String,
    pub kind: String,
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<String>,
}

/// Runs `sources ...` over the configured remote sources.
pub fn run(args: &SourcesArgs, config: &crate::config::Config) -> Result<ExitCode> {
    let remote = config.sources.remote_sources();
    let sources = super::Sources::from_process(&remote, &config.git, config.github_token.clone())?;
    let usage = |message: String| {
        eprintln!("skills-mcp: error: {}", crate::logsafe::Escaped(message));
        Ok(ExitCode::from(crate::cli::EXIT_USAGE))
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut out = std::io::stdout().lock();
    match &args.command {
        SourcesCommand::List { json } => {
            let list = sources.describe();
            if *json {
                out.write_all(
                    skills_engine::output::pretty(&serde_json::to_value(&list)?).as_bytes(),
                )?;
            } else if list.is_empty() {
                eprintln!("no remote source is configured");
            }
            for s in list.iter().filter(|_| !*json) {
                writeln!(
                    out,
                    "{}  {}  {}{}  {}",
                    s.name,
                    s.kind,
                    s.revision.as_deref().map_or("(none)", short),
                    s.pinned
                        .as_deref()
                        .map_or(String::new(), |p| format!("  pinned {}", short(p))),
                    s.source
                )?;
            }
        }
        SourcesCommand::Rollback { name } => {
            if let Some(message) = sources.unknown(name) {
                return usage(message);
            }
            let (from, to) = runtime.block_on(sources.rollback(name))?;
            writeln!(
                out,
                "{name}: rolled back from {} to {} and pinned (`skills-mcp sources unpin {name}` follows the remote again)",
                from.as_deref().map_or("(none)", short),
                short(&to)
            )?;
        }
        SourcesCommand::Unpin { name } => {
            if let Some(message) = sources.unknown(name) {
                return usage(message);
            }
            match runtime.block_on(sources.unpin(name))? {
                Some(pin) => writeln!(
                    out,
                    "{name}: unpinned (was {}); the next refresh follows the remote",
                    short(&pin)
                )?,
                None => writeln!(out, "{name}: not pinned")?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
