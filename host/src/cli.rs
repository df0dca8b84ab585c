//! The command line: serve, search, get, list, asset, validate and friends.
//!
//! Every verb opens a [`Catalog`] over the skill roots and prints what it answers: JSON in the
//! shapes of the MCP tools' answers where a tool has one, short human text otherwise. Results go
//! to stdout; logs and errors go to stderr. Exit codes: 0 ok, 1 validation errors or nothing
//! found, 2 usage (bad arguments, bad paths).

use std::io::{BufRead as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use serde_json::Value;
/// The arguments of the verbs the stock-WASI command shares, defined once in the engine crate.
pub use skills_engine::cli_args::{AlgorithmArg, GetArgs, SearchArgs, ValidateArgs};

use crate::catalog::{Catalog, RootSpec};
use crate::runtime::{EngineError, EngineErrorKind, TreeNode};

/// Exit code of a usage error (clap's own errors use it too).
pub(crate) const EXIT_USAGE: u8 = 2;
/// Exit code of validation errors and of requests that found nothing.
pub(crate) const EXIT_FAILURE: u8 = 1;

/// Serve Markdown skills to AI agents over MCP, or query them from the shell.
#[derive(Debug, Parser)]
#[command(name = "skills-mcp", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options every verb understands.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// A skill root (repeatable; later roots take precedence). Also `SKILLS_DIR`, a path list
    /// (`:`-separated on Unix), whose roots come before the `--root` ones; both come after the
    /// standard folders that exist (~/.claude/skills, ~/.agents/skills, ./.claude/skills,
    /// ./.agents/skills, ./skills) and `sources` of the configuration. With none of these: the
    /// skills bundled in the binary. A root that is not a directory is skipped with a warning.
    #[arg(long = "root", value_name = "DIR", global = true)]
    pub roots: Vec<PathBuf>,

    /// Do not add the standard folders (~/.claude/skills, ./skills, ...) to the roots: serve
    /// only `--root`, `SKILLS_DIR` and the configured sources.
    #[arg(long, global = true)]
    pub no_default_roots: bool,

    /// How requests are matched to skills.
    #[arg(long, value_enum, global = true, value_name = "NAME")]
    pub algorithm: Option<AlgorithmArg>,

    /// A configuration file (YAML, see `example-config`); it overrides the `config.yaml` of the
    /// roots and is overridden by environment variables and flags.
    #[arg(long = "config", value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,

    /// How much is logged to stderr: this program's messages at this level and up, other
    /// libraries' at warning at most. Overrides `RUST_LOG` (which takes any `tracing` filter,
    /// e.g. `RUST_LOG=warn` or `RUST_LOG=skills_mcp=debug,rmcp=info`). Default: info.
    #[arg(long, value_enum, global = true, value_name = "LEVEL")]
    pub log_level: Option<crate::logging::LogLevel>,

    /// How log lines look on stderr: `text` (`skills-mcp: warning: ...`) or `json` (one JSON
    /// object per line, for a log collector).
    #[arg(
        long,
        value_enum,
        global = true,
        value_name = "FORMAT",
        default_value = "text"
    )]
    pub log_format: crate::logging::LogFormat,
}

/// The verbs.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the MCP server: on stdio (the default when no verb is given), or over HTTP with
    /// --http.
    Serve(Box<ServeArgs>),
    /// Rank skills against a query.
    Search(SearchArgs),
    /// Route a free-text request to a skill and print the outcome as JSON: `no_match`,
    /// `ambiguous` with candidates, or the matched skill with its resolved content, assets and
    /// scripts; exits 1 on no match.
    Get(GetArgs),
    /// Print the skill tree (with --json: name, path, description, keywords, counts, children).
    List(ListArgs),
    /// Print an asset or script of a skill as JSON (text `content`, or `content_base64` and
    /// `mime_type`).
    Asset(AssetArgs),
    /// Check every file of the roots; exits 1 when a file has errors.
    Validate(ValidateArgs),
    /// Print the full default configuration, a comment on every key.
    ExampleConfig,
    /// Run a script declared `execution: server` and print its outcome as JSON (exit code,
    /// stdout, stderr, duration); exits 1 when it fails or is refused, 2 on a malformed request.
    Run(RunArgs),
    /// Print a shell completion script (e.g. `skills-mcp completions bash >
    /// ~/.local/share/bash-completion/completions/skills-mcp`).
    Completions(CompletionsArgs),
    /// Print the manual page as roff (`skills-mcp man | man -l -`).
    Man,
    /// Report usage from the usage store: the most served skills (with a per-day sparkline),
    /// skills never served, requests that found nothing or were ambiguous, feedback, scripts,
    /// subjects.
    Stats(crate::usage::stats::StatsArgs),
    /// Ask a running `serve --http` whether it is ready (GET URL, 2 s timeout): prints the
    /// answer, exits 0 on 200 and 1 otherwise. For container health checks (no curl needed).
    Health(HealthArgs),
    /// Access rules: `access check` prints which skills a caller (--subject, --groups,
    /// --scopes, --token-file-line, --local) sees and which rule hides each of the others.
    Access(crate::access::check::AccessArgs),
    /// The skill editor in your browser, on the configured roots: a tree of skills, the live
    /// lint, served name and rank of a draft, and saving (loopback only; the URL printed
    /// carries a per-run secret). See docs/editor.md.
    Editor(crate::editor::EditorArgs),
    /// Trigger evals: route each skill's `evals/eval_queries.json` queries exactly as the
    /// `get_skill` tool routes a `context` and report which pass (a table, --json, --junit
    /// FILE); exits 1 when a skill is below --min-pass-rate, an eval file is malformed or none
    /// was found.
    Eval(crate::eval::EvalArgs),
    /// Collection health: for every skill, the skills that win or tie the requests meant for it
    /// (at most 3, strongest first, with the words they share and those that separate them), and
    /// the findings: unreachable skills, near-identical descriptions, over-broad skills; worst
    /// first. Sees what a caller sees (the flags of `access check`; default `--local`).
    Audit(crate::audit::AuditArgs),
    /// Publish a skill folder as a signed OCI artifact in ToolHive's layout (reproducible: the
    /// same folder gives the same digest): `push PATH REF [--key FILE]`. See docs/sources.md.
    Push(crate::sources::oci::push::PushArgs),
    /// Write the lock file: every remote source's revision (git commit, OCI manifest digest)
    /// and each of its skills' contentDigest (`--lock FILE`; `--check` exits 1 naming each
    /// drifted source and skill; `--update [NAME]` moves pins). See docs/sources.md.
    Lock(crate::sources::lock::LockArgs),
    /// Remote sources: `sources list` (revision served, pin), `sources rollback NAME` (serve
    /// the previous revision and pin it, for every replica sharing the content folder),
    /// `sources unpin NAME`. See docs/sources.md.
    Sources(crate::sources::pins::SourcesArgs),
}

/// Who is asking, for the verbs that answer as the server would answer a caller (`access check`,
/// `eval`): flags, one line of a token file, the local operator, or anonymous.
#[derive(Debug, Clone, Default, Args)]
pub struct CallerArgs {
    /// The caller's subject (a JWT's `sub`, a token line's `sub=`).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["token_file_line", "anonymous"])]
    pub subject: Option<String>,
    /// The caller's groups, comma-separated.
    #[arg(
        long,
        value_name = "A,B",
        value_delimiter = ',',
        conflicts_with_all = ["token_file_line", "anonymous"]
    )]
    pub groups: Vec<String>,
    /// The caller's scopes, comma-separated.
    #[arg(
        long,
        value_name = "A,B",
        value_delimiter = ',',
        conflicts_with_all = ["token_file_line", "anonymous"]
    )]
    pub scopes: Vec<String>,
    /// A line of the token file (`TOKEN [SCOPE...] [sub=NAME] [groups=A,B]`): the caller that
    /// token is. Pass it through a file or variable, not a shell history, for a real token.
    #[arg(long, value_name = "LINE", conflicts_with = "anonymous")]
    pub token_file_line: Option<String>,
    /// The local operator (`access.local`: stdio and loopback without authentication).
    #[arg(long, conflicts_with_all = ["subject", "groups", "scopes", "token_file_line", "anonymous"])]
    pub local: bool,
    /// A caller without identity (no subject, groups or scopes).
    #[arg(long)]
    pub anonymous: bool,
}

/// Whom [`CallerArgs`] without a caller flag describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultCaller {
    /// `access check`: a caller without identity.
    Anonymous,
    /// `eval`: the local operator, what a stdio client is.
    Local,
}

#[derive(Debug, Args)]
pub struct HealthArgs {
    /// The probe to ask: /readyz (ready to serve) or /healthz (alive).
    #[arg(
        long,
        value_name = "URL",
        default_value = "http://127.0.0.1:8080/readyz"
    )]
    pub url: String,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Clone, Default, Args)]
pub struct ServeArgs {
    /// Serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio (default ADDR:
    /// `server.listen` of the configuration, 127.0.0.1:8080). See docs/http.md.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "")]
    pub http: Option<String>,
    /// Allow --http on a non-loopback address without authentication: anyone who can reach
    /// it can use the server.
    #[arg(long)]
    pub public_without_auth: bool,
    /// Seconds between SIGTERM and closing the listener, /readyz answering 503 meanwhile
    /// (default: `server.shutdown_delay_seconds`, 5; 0: close at once).
    #[arg(long, value_name = "SECONDS")]
    pub shutdown_delay: Option<u64>,
    /// Also accept this Host header at /mcp (repeatable; e.g. the name clients use).
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub allowed_hosts: Vec<String>,
    /// Also accept this Origin at /mcp (repeatable; e.g. https://app.example.com).
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// Authentication of HTTP clients (static bearer tokens, OAuth JWT access tokens).
    #[command(flatten)]
    pub auth: crate::http_auth::AuthOptions,
    /// Where usage is recorded: a SQLite file, or `off` (default: `analytics.store`,
    /// $XDG_STATE_HOME/skills-mcp/usage.sqlite3).
    #[arg(long, value_name = "FILE|off")]
    pub usage_db: Option<String>,
    /// Serve Prometheus metrics at http://ADDR/metrics on a listener of its own (a port alone
    /// is loopback; default: `server.metrics_listen`, off). See docs/operations.md.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,
    /// Serve exactly the revisions of the lock file (`sources.locked`): a remote that moved is
    /// reported, not followed; a skill whose content disagrees with the lock is not served.
    #[arg(long)]
    pub locked: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The skill path.
    pub skill_path: String,
    /// The script, relative to the skill's resource folder (inherited scripts included).
    pub file: String,
    /// An argument, given to the script as the variable SKILL_ARG_<NAME> (repeatable).
    #[arg(long = "arg", value_name = "NAME=VALUE", value_parser = crate::scripts::parse_cli_arg)]
    pub args: Vec<(String, String)>,
    /// Working directory of the script (default: the skill's resource folder).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only the subtree below this path (e.g. `ui` or `api/_index`).
    pub path: Option<String>,
    /// Print the tree as JSON (name, path, description, keywords, assetCount, scriptCount,
    /// children).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AssetArgs {
    /// The skill path.
    pub skill_path: String,
    /// The file, relative to the skill's resource folder (inherited files included).
    pub file: String,
    /// Largest asset printed, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::catalog::DEFAULT_MAX_ASSET_BYTES)]
    pub max_bytes: u64,
}

/// Entry point of the `skills-mcp` binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    let json_logs = cli.global.log_format == crate::logging::LogFormat::Json;
    crate::logging::init(cli.global.log_level, cli.global.log_format);
    crate::harden::at_start();
    match run(cli) {
        Ok(code) => code,
        // The reader went away (`skills-mcp list | head`): nothing left to tell anyone.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let message = crate::logsafe::Escaped(format!("{e:#}"));
            // The closing error is the command's answer, shown whatever the log level; a log
            // collector reading JSON lines gets it as one.
            if json_logs {
                tracing::error!("{message}");
            } else {
                eprintln!("skills-mcp: error: {message}");
            }
            ExitCode::from(exit_code_of(&e))
        }
    }
}

/// Whether `e` comes from writing to a closed stdout.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(|j| j.io_error_kind())
                .is_some_and(|k| k == std::io::ErrorKind::BrokenPipe)
    })
}

/// Exit code for a failed command: bad input is a usage error, anything else a failure.
fn exit_code_of(e: &anyhow::Error) -> u8 {
    match e.downcast_ref::<EngineError>().map(|e| &e.0) {
        Some(EngineErrorKind::InvalidPath(_) | EngineErrorKind::InvalidArgument(_)) => EXIT_USAGE,
        _ => EXIT_FAILURE,
    }
}

/// Run a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let global = &cli.global;
    match cli
        .command
        .unwrap_or_else(|| Command::Serve(Box::default()))
    {
        Command::Serve(args) => serve(global, &args),
        Command::ExampleConfig => {
            std::io::stdout()
                .lock()
                .write_all(crate::config::example_config().as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions(args) => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(
                args.shell,
                &mut command,
                "skills-mcp",
                &mut std::io::stdout().lock(),
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            let command = <Cli as clap::CommandFactory>::command();
            clap_mangen::Man::new(command).render(&mut std::io::stdout().lock())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Search(args) => search(&open(global, &[])?.0, &args),
        Command::Get(args) => get(&open(global, &[])?.0, &args),
        Command::List(args) => list(&open(global, &[])?.0, &args),
        Command::Asset(args) => asset(&open(global, &[])?.0, &args),
        Command::Validate(args) => validate(&open(global, &args.roots)?.0, &args),
        Command::Run(args) => {
            let (catalog, config) = open(global, &[])?;
            let request = crate::scripts::RunRequest {
                skill_path: args.skill_path,
                file: args.file,
                args: args.args.into_iter().collect(),
                cwd: args.cwd,
            };
            crate::scripts::cli_run(&catalog, config.scripts, request)
        }
        Command::Stats(args) => stats(global, &args),
        Command::Health(args) => health(&args),
        Command::Push(args) => {
            let (loaded, _git) = load(global, None)?;
            crate::sources::oci::push::run(&args, crate::mcp::catalog_options(&loaded.config))
        }
        Command::Sources(args) => {
            let (loaded, _git) = load(global, None)?;
            crate::sources::pins::run(&args, &loaded.config)
        }
        Command::Lock(args) => {
            let (loaded, _git) = load(global, None)?;
            crate::sources::lock::run(&args, global.config.as_deref(), &loaded.config)
        }
        Command::Eval(args) => {
            let (catalog, config) = open(global, &[])?;
            crate::eval::run(&catalog, &config, &args)
        }
        Command::Editor(args) => {
            // The address first: a refused one opens nothing.
            let addr = crate::editor::listen_addr(&args.listen)?;
            let (catalog, loaded) = open_loaded(global)?;
            crate::editor::run(addr, catalog, &loaded.config, &loaded.roots, &args)
        }
        Command::Audit(args) => {
            let (catalog, loaded) = open_loaded_with(global, |options| {
                let timeout = &mut options.runtime.call_timeout;
                *timeout = (*timeout).max(crate::audit::AUDIT_CALL_TIMEOUT);
            })?;
            crate::audit::run(&catalog, &loaded.config, &args)
        }
        Command::Access(args) => match &args.command {
            crate::access::check::AccessCommand::Check(check) => {
                let (catalog, config) = open(global, &[])?;
                crate::access::check::run(&catalog, &config, check)
            }
        },
    }
}

/// `health`: GET the probe, print its answer; 0 on 200, 1 otherwise (unreachable included).
fn health(args: &HealthArgs) -> anyhow::Result<ExitCode> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_secs(2)))
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let mut response = agent
        .get(&args.url)
        .call()
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.url))?;
    let status = response.status();
    let body = response
        .body_mut()
        .with_config()
        .limit(4096)
        .read_to_string()
        .unwrap_or_default();
    println!("{} {}", status.as_u16(), body.trim());
    Ok(if status == 200 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILURE)
    })
}

/// How every verb (and a reload) loads the configuration: this process's environment and the
/// global flags.
fn load_options(global: &GlobalArgs) -> crate::config::LoadOptions {
    let mut options =
        crate::config::LoadOptions::from_process(global.config.clone(), global.roots.clone());
    options.no_default_roots = global.no_default_roots;
    options
}

/// `serve`: the configuration (see [`crate::config`] for the precedence; `--algorithm` is a flag,
/// so it wins), then the MCP server on stdio, or over HTTP (`--http` or `server.transport`).
fn serve(global: &GlobalArgs, args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let flags = crate::http::HttpFlags {
        listen: args.http.clone().filter(|a| !a.is_empty()),
        public_without_auth: args.public_without_auth,
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
        shutdown_delay_seconds: args.shutdown_delay,
    };
    let http_flags = flags.shutdown_delay_seconds.is_some()
        || flags.public_without_auth
        || !flags.allowed_hosts.is_empty()
        || !flags.allowed_origins.is_empty();
    let (mut loaded, git) = load_with(global, Some(crate::sources::Fetch::Always), args.locked)?;
    let (usage_db, metrics_listen) = (args.usage_db.clone(), args.metrics_listen.clone());
    let overrides = Arc::new(move |config: &mut crate::config::Config| {
        if let Some(store) = &usage_db {
            config.analytics.store = store.clone();
        }
        if let Some(addr) = &metrics_listen {
            config.server.metrics_listen = addr.clone();
        }
    });
    overrides(&mut loaded.config);
    let mut reload = crate::access::Reload {
        options: load_options(global),
        auth: None,
        overrides,
    };
    let http =
        args.http.is_some() || loaded.config.server.transport == crate::http::Transport::Http;
    if !http {
        if http_flags {
            anyhow::bail!(
                "--public-without-auth, --allowed-host, --allowed-origin and --shutdown-delay need --http"
            );
        }
        crate::serve::run(&loaded, git, crate::serve::stdio::Stdio, Some(reload))?;
    } else {
        let config = flags.apply(&loaded.config.server);
        let auth = crate::access::auth_options(&args.auth, &loaded.config);
        let authenticator = crate::http_auth::Authenticator::from_options(&auth)?.map(Arc::new);
        let replica = crate::usage::replica_id(&loaded.config.analytics.replica_id, &|k| {
            std::env::var(k).ok()
        });
        let http =
            crate::serve::http::Http::new(config, authenticator.clone()).with_replica(&replica);
        reload.auth = authenticator.map(|a| (args.auth.clone(), a));
        crate::serve::run(&loaded, git, http, Some(reload))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The configuration every verb uses, as `serve` does: defaults < each root's `config.yaml` <
/// `--config FILE` < environment < flags, with the roots it resolves (standard folders,
/// `sources`, `SKILLS_DIR`, `--root`; the bundled folder when none). Remote sources (git, OCI)
/// are fetched first as `fetch` says (`serve`: always; the one-shot verbs: only a source with no
/// snapshot on disk yet; their cache is used when the network is down), so their skills are
/// searchable from the shell too; `None`: not at all.
fn load(
    global: &GlobalArgs,
    fetch: Option<crate::sources::Fetch>,
) -> anyhow::Result<(
    crate::config::Loaded,
    Option<std::sync::Arc<crate::sources::Sources>>,
)> {
    load_with(global, fetch, false)
}

/// [`load`]; `locked` (`serve --locked`, or `sources.locked`): the remote sources serve exactly
/// the revisions of the lock file.
fn load_with(
    global: &GlobalArgs,
    fetch: Option<crate::sources::Fetch>,
    locked: bool,
) -> anyhow::Result<(
    crate::config::Loaded,
    Option<std::sync::Arc<crate::sources::Sources>>,
)> {
    let options = load_options(global);
    let mut loaded = crate::config::load(&options)?;
    // Git sources are cloned or fetched before indexing; then their config.yaml exists to read.
    let git = if let Some(fetch) = fetch {
        let lock = if locked || loaded.config.sources.locked {
            let path = crate::sources::lock::lock_path(
                None,
                loaded.config.sources.lock_file.as_deref(),
                global.config.as_deref(),
            );
            let lock = crate::sources::lock::LockFile::read(&path)
                .context("serving locked (`--locked`, `sources.locked`)")?;
            Some((lock, path, crate::mcp::catalog_options(&loaded.config)))
        } else {
            None
        };
        crate::sources::start_blocking(
            loaded.config.sources.remote_sources(),
            &loaded.config.git,
            loaded.config.github_token.clone(),
            fetch,
            lock,
        )?
    } else {
        None
    };
    if git.is_some() {
        loaded = crate::config::load(&options)?;
    }
    if let Some(algorithm) = global.algorithm {
        loaded.config.matching.algorithm = match algorithm {
            AlgorithmArg::Ranked => crate::config::Algorithm::Ranked,
            AlgorithmArg::Keywords => crate::config::Algorithm::Keywords,
        };
    }
    Ok((loaded, git))
}

/// Open a catalog with the configuration of [`load`]; `explicit_roots` (from `validate ROOT...`)
/// replace the configured roots (and no git source is fetched). Configuration warnings go to
/// stderr.
fn open(
    global: &GlobalArgs,
    explicit_roots: &[PathBuf],
) -> anyhow::Result<(Catalog, crate::config::Config)> {
    if explicit_roots.is_empty() {
        let (catalog, loaded) = open_loaded(global)?;
        return Ok((catalog, loaded.config));
    }
    let (loaded, _git) = load(global, None)?;
    for warning in &loaded.warnings {
        tracing::warn!("{}", crate::logsafe::Escaped(warning));
    }
    let roots = explicit_roots.iter().cloned().map(RootSpec::new).collect();
    let catalog = Catalog::open(roots, crate::mcp::catalog_options(&loaded.config))?;
    Ok((catalog, loaded.config))
}

/// [`open`] over the configured roots (git sources fetched first), with the configuration and
/// the roots it resolved (where each came from).
fn open_loaded(global: &GlobalArgs) -> anyhow::Result<(Catalog, crate::config::Loaded)> {
    open_loaded_with(global, |_| {})
}

/// [`open_loaded`], with the catalog's options adjusted by `adjust` (a verb's own limits).
fn open_loaded_with(
    global: &GlobalArgs,
    adjust: impl FnOnce(&mut crate::catalog::CatalogOptions),
) -> anyhow::Result<(Catalog, crate::config::Loaded)> {
    let (loaded, _git) = load(global, Some(crate::sources::Fetch::IfMissing))?;
    for warning in &loaded.warnings {
        tracing::warn!("{}", crate::logsafe::Escaped(warning));
    }
    let mut options = crate::mcp::catalog_options(&loaded.config);
    adjust(&mut options);
    let catalog = Catalog::open(crate::mcp::catalog_roots(&loaded.roots), options)?;
    Ok((catalog, loaded))
}

/// `stats`: the usage report of the configured store (or `--usage-db` / `--database-url`);
/// `never_served` compares with the current index.
fn stats(global: &GlobalArgs, args: &crate::usage::stats::StatsArgs) -> anyhow::Result<ExitCode> {
    use crate::usage::stats;
    let period = stats::Period::parse(&args.since, stats::now())?;
    let (catalog, config) = open(global, &[])?;
    let location = stats::location(args, &config.analytics)?;
    // The store in the state folder: that folder and its files private before it is opened.
    if let crate::usage::Location::Sqlite(file) = &location
        && let Some(state) = crate::usage::state_dir(&|k| std::env::var(k).ok())
        && file.parent() == Some(state.as_path())
    {
        crate::usage::make_private(&state);
    }
    let index: Vec<String> = catalog
        .tree(None)?
        .into_iter()
        .filter(|n| n.skill.is_some())
        .map(|n| n.path)
        .collect();
    let mut store = crate::usage::Store::open(&location)?;
    let report = stats::report(
        &mut store,
        &period,
        args.skill.as_deref(),
        args.limit,
        &index,
    )?;
    if args.json {
        print_json(&serde_json::to_value(&report)?)?;
    } else {
        std::io::stdout()
            .lock()
            .write_all(stats::text(&report).as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_json(value: &Value) -> anyhow::Result<()> {
    std::io::stdout()
        .lock()
        .write_all(skills_engine::output::pretty(value).as_bytes())?;
    Ok(())
}

fn search(catalog: &Catalog, args: &SearchArgs) -> anyhow::Result<ExitCode> {
    use skills_engine::output as o;
    if args.batch {
        return search_batch(catalog, args.limit);
    }
    let query = args.query.as_deref().unwrap_or_default();
    let hits = catalog.search(query, args.limit)?;
    let explanations = if args.explain {
        hits.iter()
            .map(|h| {
                catalog
                    .explain(query, &h.skill_path)
                    .map(|e| crate::output::explanation(&e))
            })
            .collect::<anyhow::Result<Vec<_>>>()?
    } else {
        Vec::new()
    };
    let hits = crate::output::hits(hits);
    let text = if args.json {
        o::search_json(query, &hits, &explanations)
    } else {
        if hits.is_empty() {
            eprintln!("no skill matches {query:?}");
        }
        o::search_text(&hits, &explanations)
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// One JSON line per stdin line (blank lines are skipped); an engine error for one query is
/// reported in its line (`"error"`) and the batch goes on.
fn search_batch(catalog: &Catalog, limit: u32) -> anyhow::Result<ExitCode> {
    let mut stdin = std::io::BufReader::new(std::io::stdin().lock());
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut line = String::new();
    loop {
        // The answers so far are written out before waiting for more input: a caller sending
        // one query at a time gets each answer at once, a piped list is written in blocks.
        if stdin.buffer().is_empty() {
            out.flush()?;
        }
        line.clear();
        if stdin
            .read_line(&mut line)
            .context("reading queries from stdin")?
            == 0
        {
            break;
        }
        let query = line.trim();
        if query.is_empty() {
            continue;
        }
        let answer = match catalog.search_brief(query, limit) {
            Ok(hits) => skills_engine::output::batch_line(query, Ok(&crate::output::hits(hits))),
            Err(e) => skills_engine::output::batch_line(query, Err(&format!("{e:#}"))),
        };
        writeln!(out, "{answer}")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn get(catalog: &Catalog, args: &GetArgs) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.path {
        print_json(&catalog.skill_json(path)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let context = args.context.as_deref().unwrap_or_default();
    let value = catalog.get_skill_json(context)?;
    print_json(&value)?;
    if value.get("no_match").is_some() {
        return Ok(ExitCode::from(EXIT_FAILURE));
    }
    Ok(ExitCode::SUCCESS)
}

fn list(catalog: &Catalog, args: &ListArgs) -> anyhow::Result<ExitCode> {
    if args.json {
        print_json(&catalog.list_json(args.path.as_deref())?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let nodes = catalog.tree(args.path.as_deref())?;
    let mut out = std::io::stdout().lock();
    if let Some(root) = nodes.first() {
        if args.path.is_none() && root.skill.is_none() && root.path.is_empty() {
            for &c in &root.children {
                print_tree(&mut out, &nodes, c as usize, 0)?;
            }
        } else {
            print_tree(&mut out, &nodes, 0, 0)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `name  (path)  description  [n assets, m scripts]`, with ` version V` after the name when
/// the skill has one; children indented by two spaces.
fn print_tree(
    out: &mut impl std::io::Write,
    nodes: &[TreeNode],
    i: usize,
    depth: usize,
) -> anyhow::Result<()> {
    let Some(node) = nodes.get(i) else {
        return Ok(());
    };
    let indent = "  ".repeat(depth);
    match &node.skill {
        Some(s) => {
            let mut files = Vec::new();
            if s.asset_count > 0 {
                files.push(format!("{} assets", s.asset_count));
            }
            if s.script_count > 0 {
                files.push(format!("{} scripts", s.script_count));
            }
            let files = if files.is_empty() {
                String::new()
            } else {
                format!("  [{}]", files.join(", "))
            };
            let version = s
                .version
                .as_deref()
                .map_or(String::new(), |v| format!(" version {v}"));
            writeln!(
                out,
                "{indent}{}{version}  ({})  {}{files}",
                node.name,
                node.path,
                one_line(&s.description)
            )?;
        }
        None => writeln!(out, "{indent}{}/", node.name)?,
    }
    if depth < 256 {
        for &c in &node.children {
            if c as usize != i {
                print_tree(out, nodes, c as usize, depth + 1)?;
            }
        }
    }
    Ok(())
}

fn asset(catalog: &Catalog, args: &AssetArgs) -> anyhow::Result<ExitCode> {
    print_json(&catalog.asset_json(&args.skill_path, &args.file, Some(args.max_bytes))?)?;
    Ok(ExitCode::SUCCESS)
}

fn validate(catalog: &Catalog, args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let reports: Vec<_> = catalog
        .reports()?
        .iter()
        .map(crate::output::report)
        .map(escaped_report)
        .collect();
    let roots: Vec<String> = catalog
        .roots()
        .iter()
        .map(|r| r.path.display().to_string())
        .collect();
    let v =
        skills_engine::output::validate_text(&reports, &roots, args.quiet, catalog.stats().skills);
    std::io::stdout().lock().write_all(v.text.as_bytes())?;
    Ok(if v.has_errors {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

use skills_engine::output::one_line;

/// A report with its paths and messages escaped: they come from file names and skill files, and
/// a control character in one must not reach the terminal raw.
fn escaped_report(mut report: skills_engine::FileReport) -> skills_engine::FileReport {
    report.path = crate::logsafe::escape(&report.path);
    for d in &mut report.diagnostics {
        d.path = crate::logsafe::escape(&d.path);
        d.message = crate::logsafe::escape(&d.message);
    }
    report
}
