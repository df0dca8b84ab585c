//! Server-side script execution in a sandbox: no shell, clean environment, process-group
//! timeout, capped output.
//!
//! [`ScriptRunner`] is what the MCP tool `run_script` and the CLI verb `run` call:
//! [`ScriptRunner::run`] takes the catalog (anything implementing [`ScriptCatalog`]: the engine
//! decides what is declared, inherited and a valid path) and a [`RunRequest`], runs the
//! validation cascade ([`plan`]), then the script, and answers the spec's JSON
//! ([`RunResponse`]) plus the `script_executed` analytics data ([`ScriptExecuted`]).
//!
//! Sandbox, beyond the spec:
//! - the runner is resolved on the script's `PATH` and spawned directly (no shell); the script
//!   is opened through its root's cap-std sandbox at spawn time and the runner is given that
//!   open file (a symlink named like the script to `/proc/self/fd/N`, N inherited by the child
//!   alone), so swapping a folder for a symlink after the checks cannot redirect it; arguments
//!   travel only as `SKILL_ARG_<NAME>` variables;
//! - the environment is cleared: only `PATH`, `HOME`, `LANG`, `LC_ALL`, `TMPDIR`, the
//!   configured pass-through names and the arguments reach the script;
//! - the script leads its own process group. On timeout the group gets SIGTERM, then after
//!   `kill_grace_seconds` SIGKILL; when the script exits, whatever it left running in its
//!   group is SIGKILLed; if the request is cancelled, the group is SIGKILLed;
//! - stdout and stderr each keep `max_output_bytes`; the rest is read and discarded;
//! - at most `max_concurrent` runs at once; beyond, a "busy" error at once (no queue).
//!
//! Not contained: a script that starts a new session (`setsid`) leaves the group and survives
//! the kill (reading its output stops one second after the group is gone); no filesystem or
//! network isolation: the trust model trusts the repository's declared scripts.

mod adapter;
mod cascade;
mod config;
mod exec;

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

pub use cascade::{
    ArgDecl, Execution, FoundSkill, LocatedScript, LookupError, RunRequest, ScriptCatalog,
    ScriptDecl, ScriptError, ScriptPlan, arg_env_name, plan,
};
pub use config::ScriptsConfig;
pub(crate) use config::same_extension;
pub use exec::TIMEOUT_EXIT_CODE;

/// The response of `run_script`, serialised as is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunResponse {
    /// Exit code 0, and not killed.
    pub success: bool,
    /// The script's exit code; 128 + signal when a signal ended it; 137 after a timeout.
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
    pub duration_ms: u64,
    /// The script file, relative to its resource folder.
    pub script: String,
}

/// The data of the `script_executed` analytics event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptExecuted {
    pub skill_path: String,
    pub file: String,
    /// Always `server` (only server scripts are executed).
    pub execution_mode: String,
    pub success: bool,
    pub exit_code: i32,
    pub duration_ms: u64,
    /// Names of the arguments given (not their values).
    pub args_provided: Vec<String>,
}

/// A finished run: the response, what the analytics event needs, and details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOutcome {
    pub response: RunResponse,
    pub event: ScriptExecuted,
    /// Killed at the timeout.
    pub timed_out: bool,
    /// Bytes the script wrote to stdout and stderr in all (kept or not).
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// The skill the script is inherited from, if any.
    pub from: Option<String>,
}

/// Runs declared server scripts: configuration, the server environment scripts may draw
/// from, and the concurrency slots. Cheap to clone (clones share the slots).
#[derive(Debug, Clone)]
pub struct ScriptRunner {
    config: Arc<ScriptsConfig>,
    /// Log refusals on stderr (the CLI reports them itself).
    log_refusals: bool,
    host_env: Arc<Vec<(OsString, OsString)>>,
    slots: Arc<Semaphore>,
}

impl ScriptRunner {
    /// A runner drawing from this process's environment (snapshotted now).
    pub fn new(config: ScriptsConfig) -> Self {
        Self::with_env(config, std::env::vars_os())
    }

    /// A runner drawing from `host_env` instead of this process's environment.
    pub fn with_env(
        config: ScriptsConfig,
        host_env: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Self {
        let slots = Arc::new(Semaphore::new(config.max_concurrent.max(1)));
        Self {
            config: Arc::new(config),
            log_refusals: true,
            host_env: Arc::new(host_env.into_iter().collect()),
            slots,
        }
    }

    /// Do not log refusals (the caller reports them); executions are still logged.
    pub fn without_refusal_logs(mut self) -> Self {
        self.log_refusals = false;
        self
    }

    pub fn config(&self) -> &ScriptsConfig {
        &self.config
    }

    /// The validation cascade alone.
    pub fn plan(
        &self,
        catalog: &(impl ScriptCatalog + ?Sized),
        request: &RunRequest,
    ) -> Result<ScriptPlan, ScriptError> {
        plan(&self.config, catalog, request, &self.host_env)
    }

    /// Validate, then run. Logs the outcome (or refusal) on stderr.
    pub async fn run(
        &self,
        catalog: &(impl ScriptCatalog + ?Sized),
        request: &RunRequest,
    ) -> Result<ScriptOutcome, ScriptError> {
        let planned = self.plan(catalog, request);
        match planned {
            Ok(planned) => self.execute(planned).await,
            Err(e) => {
                if self.log_refusals {
                    log_refusal(request, &e);
                }
                Err(e)
            }
        }
    }

    /// [`ScriptRunner::run`] against the skill catalog, for async callers (the MCP tool, the
    /// CLI): the catalog's engine calls block, so the cascade runs on a blocking thread.
    pub async fn run_with_catalog(
        &self,
        catalog: &crate::catalog::Catalog,
        request: RunRequest,
    ) -> Result<ScriptOutcome, ScriptError> {
        let (runner, catalog, req) = (self.clone(), catalog.clone(), request.clone());
        let planned = tokio::task::spawn_blocking(move || runner.plan(&catalog, &req))
            .await
            .map_err(|e| ScriptError::Catalog(format!("the validation task failed: {e}")))?;
        match planned {
            Ok(planned) => self.execute(planned).await,
            Err(e) => {
                if self.log_refusals {
                    log_refusal(&request, &e);
                }
                Err(e)
            }
        }
    }

    /// Run a planned script, if a slot is free.
    pub async fn execute(&self, plan: ScriptPlan) -> Result<ScriptOutcome, ScriptError> {
        let limit = self.config.max_concurrent.max(1);
        let Ok(_slot) = self.slots.try_acquire() else {
            tracing::warn!(
                "run_script busy: skill={:?} file={:?} ({limit} running)",
                plan.skill_path,
                plan.file
            );
            return Err(ScriptError::Busy { limit });
        };
        let max_output = usize::try_from(self.config.max_output_bytes).unwrap_or(usize::MAX);
        let limits = exec::Limits {
            timeout: Duration::from_secs(self.config.timeout_seconds.max(1)),
            grace: Duration::from_secs(self.config.kill_grace_seconds),
            max_output,
        };
        // Counted in `skills_mcp_scripts_running` while it runs, then by outcome in
        // `skills_mcp_script_exits_total`; traced as a `script run` span.
        let metrics = crate::telemetry::metrics();
        let running = crate::telemetry::metrics::GaugeGuard::new(&metrics.scripts_running);
        let span = crate::child_span!("script run");
        let finished = tracing::Instrument::instrument(exec::execute(&plan, limits), span).await;
        drop(running);
        metrics.script_exit(match &finished {
            Err(_) => "error",
            Ok(f) if f.timed_out => "timeout",
            Ok(f) if f.exit_code == 0 => "ok",
            Ok(f) if f.exit_code > 128 => "killed",
            Ok(_) => "failed",
        });
        let finished = match finished {
            Ok(finished) => finished,
            Err(e) => {
                tracing::warn!(
                    "run_script failed: skill={:?} file={:?}: {}",
                    plan.skill_path,
                    plan.file,
                    crate::logsafe::Escaped(e.to_string())
                );
                return Err(e);
            }
        };

        let mut stderr = finished.stderr.text(max_output);
        if finished.timed_out {
            stderr.push_str(exec::TIMEOUT_MARKER);
        }
        let duration_ms = u64::try_from(finished.duration.as_millis()).unwrap_or(u64::MAX);
        let success = finished.exit_code == 0 && !finished.timed_out;
        let response = RunResponse {
            success,
            exit_code: finished.exit_code,
            stdout: finished.stdout.text(max_output),
            stderr,
            duration_ms,
            script: plan.file.clone(),
        };
        tracing::info!(
            "run_script: skill={:?} file={:?}{} args={:?} exit={} duration_ms={}{} \
             stdout_bytes={} stderr_bytes={}",
            plan.skill_path,
            plan.file,
            plan.from
                .as_deref()
                .map(|from| format!(" from={from:?}"))
                .unwrap_or_default(),
            plan.arg_names,
            finished.exit_code,
            duration_ms,
            if finished.timed_out { " timed_out" } else { "" },
            finished.stdout.total,
            finished.stderr.total,
        );
        let event = ScriptExecuted {
            skill_path: plan.skill_path.clone(),
            file: plan.file.clone(),
            execution_mode: "server".into(),
            success,
            exit_code: finished.exit_code,
            duration_ms,
            args_provided: plan.arg_names.clone(),
        };
        Ok(ScriptOutcome {
            response,
            event,
            timed_out: finished.timed_out,
            stdout_bytes: finished.stdout.total,
            stderr_bytes: finished.stderr.total,
            from: plan.from,
        })
    }
}

fn log_refusal(request: &RunRequest, e: &ScriptError) {
    tracing::warn!(
        "run_script refused: skill={:?} file={:?} error={}: {}",
        request.skill_path,
        request.file,
        e.code(),
        crate::logsafe::Escaped(e.to_string())
    );
}

/// A `--arg NAME=VALUE` of the CLI verb `run` (split at the first `=`).
pub fn parse_cli_arg(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some(("", _)) => Err(format!("{s:?}: the argument name is empty")),
        Some((name, value)) => Ok((name.to_string(), value.to_string())),
        None => Err(format!("{s:?}: expected NAME=VALUE")),
    }
}

/// The CLI verb `run`: validate and run the script, print the `run_script` JSON on stdout.
/// Exit code 0 when the script succeeded, 1 when it failed, timed out or was refused, 2 when
/// the request itself is malformed (path traversal, arguments, cwd).
pub fn cli_run(
    catalog: &crate::catalog::Catalog,
    config: ScriptsConfig,
    request: RunRequest,
) -> anyhow::Result<std::process::ExitCode> {
    use std::io::Write as _;
    use std::process::ExitCode;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let runner = ScriptRunner::new(config).without_refusal_logs();
    match runtime.block_on(runner.run_with_catalog(catalog, request)) {
        Ok(outcome) => {
            let mut out = std::io::stdout().lock();
            serde_json::to_writer_pretty(&mut out, &outcome.response)?;
            writeln!(out)?;
            Ok(ExitCode::from(if outcome.response.success { 0 } else { 1 }))
        }
        Err(e) => {
            eprintln!(
                "skills-mcp: error: {} [{}]",
                crate::logsafe::Escaped(e.to_string()),
                e.code()
            );
            let usage = matches!(
                e,
                ScriptError::PathTraversal { .. }
                    | ScriptError::MissingArgs { .. }
                    | ScriptError::InvalidArgs(_)
                    | ScriptError::BadCwd { .. }
            );
            Ok(ExitCode::from(if usage { 2 } else { 1 }))
        }
    }
}
