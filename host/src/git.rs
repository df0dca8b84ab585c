//! Skills from git repositories: clone, fetch, recover, periodic refresh, with the system git;
//! several sources, subpaths, local folders and update checks.
//!
//! [`GitSync`] owns the configured sources in precedence order. Each git source is a bare
//! repository tracking one remote branch plus immutable per-commit snapshots (see `repo.rs`), so
//! the folder a source serves never changes under a reader: a refresh that moves the branch
//! produces a new folder and the caller's index is rebuilt over the new roots ([`GitSync::roots`]),
//! then swapped in. The caller supplies that rebuild as a [`Reindex`] callback: this module knows
//! nothing of the catalog.
//!
//! Failures: network down at start-up serves the cached snapshot with a warning; a failed first
//! clone is an error for that source only (the others are served, and each refresh retries); a
//! damaged repository is re-cloned; a force-pushed branch is followed. Tokens never leave the git
//! child's environment (see `command.rs`).

mod command;
mod config;
mod repo;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

pub use config::{
    DEFAULT_BRANCH, DEFAULT_TOKEN_ENV, GitConfig, GitSourceConfig, LocalSourceConfig, SourceConfig,
};

use repo::{Repo, short};

use crate::single_flight::SingleFlight;

/// One folder to index, with a name for diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRoot {
    /// `git:<url>#<branch>` or `local:<path>`.
    pub name: String,
    pub path: PathBuf,
}

/// The root path a git source is served from, known before any I/O (see [`GitSync::roots`]):
/// `<content_dir>/<name>-<hash>/current`.
pub fn root_path(git: &GitConfig, source: &GitSourceConfig) -> PathBuf {
    repo::checkout_dir(&git.content_dir(), source).join("current")
}

/// A future returned by a [`Reindex`] callback.
pub type ReindexFuture = Pin<Box<dyn Future<Output = Result<usize>> + Send>>;

/// Rebuilds the caller's index over the given roots (all sources, in precedence order) and returns
/// the number of skills indexed.
pub type Reindex = Arc<dyn Fn(Vec<SourceRoot>) -> ReindexFuture + Send + Sync>;

/// Wraps an async closure as a [`Reindex`].
pub fn reindex_fn<F, Fut>(f: F) -> Reindex
where
    F: Fn(Vec<SourceRoot>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<usize>> + Send + 'static,
{
    Arc::new(move |roots| Box::pin(f(roots)))
}

/// The answer of a refresh in git mode (`success`, the commit served, files changed, skills
/// reindexed, last sync), plus `message` when something went wrong and `sources` when more than one git
/// source is configured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RefreshResponse {
    pub success: bool,
    /// Commit served by the first git source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_hash: Option<String>,
    /// Files changed by this refresh, over all git sources (`git diff --name-only old new`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_changed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills_reindexed: Option<usize>,
    /// Last successful sync (ISO 8601, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_sync: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceStatus>,
    /// Some source moved to another commit (not serialised).
    #[serde(skip)]
    pub changed: bool,
}

/// The state of one git source.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SourceStatus {
    /// `<url>#<branch>`, without credentials.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_hash: Option<String>,
    #[serde(default)]
    pub files_changed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_sync: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

enum Source {
    Local(PathBuf),
    Git(Box<Repo>),
}

/// The configured skill sources and their synchronisation.
pub struct GitSync {
    sources: Vec<Source>,
    /// Refreshes: one at a time, at most one queued (a forced one when any of its callers
    /// forced it), by the rule of the catalogue's rebuilds ([`crate::single_flight`]).
    refreshes: SingleFlight<RefreshResponse, bool>,
    reindex: Mutex<Option<Reindex>>,
}

impl std::fmt::Debug for GitSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitSync")
            .field("sources", &self.labels())
            .finish_non_exhaustive()
    }
}

impl GitSync {
    /// The sources, in precedence order, with tokens read through `env` (each git source's
    /// `token_env`, default `GITHUB_TOKEN`). No I/O happens here.
    pub fn new(
        sources: &[SourceConfig],
        git: &GitConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self> {
        let content_dir = git.content_dir();
        let mut out = Vec::with_capacity(sources.len());
        for source in sources {
            out.push(match source {
                SourceConfig::Local(local) => Source::Local(config::expand_home(&local.path)),
                SourceConfig::Git(g) => {
                    let token = env(g.token_env()).filter(|t| !t.trim().is_empty());
                    let repo = Repo::new(
                        g,
                        &content_dir,
                        token.as_deref().map(str::trim),
                        git.timeout(),
                    )?;
                    if out
                        .iter()
                        .any(|s| matches!(s, Source::Git(r) if r.dir() == repo.dir()))
                    {
                        bail!("git source {} is configured twice", repo.label);
                    }
                    Source::Git(Box::new(repo))
                }
            });
        }
        Ok(Self {
            sources: out,
            refreshes: SingleFlight::new(),
            reindex: Mutex::new(None),
        })
    }

    /// Whether any source is a git repository.
    pub fn has_git(&self) -> bool {
        self.repos().next().is_some()
    }

    fn repos(&self) -> impl Iterator<Item = &Repo> {
        self.sources.iter().filter_map(|s| match s {
            Source::Git(r) => Some(&**r),
            Source::Local(_) => None,
        })
    }

    fn labels(&self) -> Vec<String> {
        self.sources
            .iter()
            .map(|s| match s {
                Source::Git(r) => format!("git:{}", r.label),
                Source::Local(p) => format!("local:{}", p.display()),
            })
            .collect()
    }

    /// Sets the index rebuild run after a refresh (replacing any previous one).
    pub fn set_reindex(&self, reindex: Reindex) {
        *self.reindex.lock().unwrap_or_else(|e| e.into_inner()) = Some(reindex);
    }

    /// First sync of every git source: the cached snapshot is picked up, then the remote is
    /// fetched (or cloned). Failures are logged to stderr and returned; they are never fatal: a
    /// source without any snapshot serves nothing until a refresh succeeds.
    pub async fn initialize(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for repo in self.repos() {
            let cached = repo.load_cached();
            match repo.sync().await {
                Ok(outcome) => {
                    if let Some(old) = outcome.old.as_deref().filter(|_| outcome.changed()) {
                        tracing::info!(
                            "git: {}: updated {} -> {} ({} files changed)",
                            repo.label,
                            short(old),
                            short(&outcome.new),
                            outcome.files_changed
                        );
                    } else {
                        tracing::info!("git: {}: at {}", repo.label, short(&outcome.new));
                    }
                }
                Err(e) => {
                    let msg = match &cached {
                        Some(commit) => format!(
                            "warning: could not update {} ({e:#}); serving the cached commit {}",
                            repo.label,
                            short(commit)
                        ),
                        None => format!(
                            "error: could not clone {} ({e:#}); its skills are unavailable until a \
                             refresh succeeds",
                            repo.label
                        ),
                    };
                    // The level is the event's; the text keeps it for the tool answers.
                    let text = crate::logsafe::Escaped(
                        msg.trim_start_matches("warning: ")
                            .trim_start_matches("error: "),
                    );
                    if cached.is_some() {
                        tracing::warn!("git: {text}");
                    } else {
                        tracing::error!("git: {text}");
                    }
                    problems.push(msg);
                }
            }
        }
        problems
    }

    /// The folders to index, in precedence order: local folders as configured; for a git source,
    /// its `current` link (Unix), a path that stays the same across refreshes and leads to the
    /// snapshot served. Before a source's first successful sync the path does not exist yet: an
    /// index build reports it missing and picks it up once a refresh has cloned the repository.
    pub fn roots(&self) -> Vec<SourceRoot> {
        self.sources
            .iter()
            .filter_map(|s| match s {
                Source::Local(path) => Some(SourceRoot {
                    name: format!("local:{}", path.display()),
                    path: path.clone(),
                }),
                Source::Git(repo) => Some(SourceRoot {
                    name: format!("git:{}", repo.label),
                    path: if cfg!(unix) {
                        repo.current_path()
                    } else {
                        repo.state().root?
                    },
                }),
            })
            .collect()
    }

    /// The folder each git source serves right now (`trees/<commit>/<subpath>`), if any.
    pub fn current_roots(&self) -> Vec<Option<PathBuf>> {
        self.repos().map(|r| r.state().root).collect()
    }

    /// The state of every git source.
    pub fn status(&self) -> Vec<SourceStatus> {
        self.repos()
            .map(|repo| {
                let state = repo.state();
                SourceStatus {
                    source: repo.label.clone(),
                    commit_hash: state.commit,
                    files_changed: 0,
                    last_sync: state.last_sync.map(crate::analytics::iso8601),
                    error: state.last_error,
                }
            })
            .collect()
    }

    /// The folder holding the repository and snapshots of each git source (for diagnostics).
    pub fn checkout_dirs(&self) -> Vec<PathBuf> {
        self.repos().map(|r| r.dir().to_path_buf()).collect()
    }

    /// The exact `git fetch` command (program, arguments, environment) a refresh of git source
    /// `index` runs, for inspection: nothing secret may appear in its arguments.
    #[doc(hidden)]
    pub fn fetch_command(&self, index: usize) -> Option<std::process::Command> {
        self.repos().nth(index).map(Repo::fetch_command)
    }

    /// `refresh_skills` in git mode: syncs every git source, then always rebuilds the index.
    /// During a refresh this joins the next one (see [`Self::refresh`]).
    pub async fn force_refresh(self: &Arc<Self>) -> RefreshResponse {
        self.refresh(true).await
    }

    /// One periodic check: syncs every git source and rebuilds the index only when a source
    /// moved. During a refresh this joins the next one (see [`Self::refresh`]).
    pub async fn refresh_if_changed(self: &Arc<Self>) -> RefreshResponse {
        self.refresh(false).await
    }

    /// One refresh at a time, at most one queued: a caller arriving during a refresh shares the
    /// next one's answer (forced when any of its callers forced it), which starts after it
    /// arrived. The refreshes run in a task of their own, so a caller that gives up does not
    /// cut one in half.
    async fn refresh(self: &Arc<Self>, force: bool) -> RefreshResponse {
        let joined = self.refreshes.join(force);
        if let Some((mut flight, mut force)) = joined.start {
            let this = Arc::clone(self);
            tokio::spawn(async move {
                loop {
                    let response = this.refresh_locked(force).await;
                    match flight.finish(response) {
                        Some(next) => force = next,
                        None => break,
                    }
                }
            });
        }
        joined.result.await.unwrap_or_else(|_| RefreshResponse {
            success: false,
            message: Some("refresh failed: the refresh task stopped".into()),
            ..RefreshResponse::default()
        })
    }

    async fn refresh_locked(&self, force: bool) -> RefreshResponse {
        let mut response = RefreshResponse {
            success: true,
            ..RefreshResponse::default()
        };
        let mut files_changed = 0;
        let mut errors = Vec::new();
        for repo in self.repos() {
            let mut status = SourceStatus {
                source: repo.label.clone(),
                ..SourceStatus::default()
            };
            match repo.sync().await {
                Ok(outcome) => {
                    if outcome.changed() {
                        response.changed = true;
                        tracing::info!(
                            "git: {}: {} -> {} ({} files changed)",
                            repo.label,
                            outcome.old.as_deref().map(short).unwrap_or("(none)"),
                            short(&outcome.new),
                            outcome.files_changed
                        );
                    }
                    files_changed += outcome.files_changed;
                    status.files_changed = outcome.files_changed;
                }
                Err(e) => {
                    let msg = format!("{e:#}");
                    tracing::warn!(
                        "git: {}; serving the previous commit",
                        crate::logsafe::Escaped(&msg)
                    );
                    errors.push(msg.clone());
                    status.error = Some(msg);
                }
            }
            let state = repo.state();
            status.commit_hash = state.commit;
            status.last_sync = state.last_sync.map(crate::analytics::iso8601);
            response.sources.push(status);
        }
        response.files_changed = Some(files_changed);
        response.commit_hash = response.sources.first().and_then(|s| s.commit_hash.clone());
        response.last_sync = self
            .repos()
            .filter_map(|r| r.state().last_sync)
            .max()
            .map(crate::analytics::iso8601);
        if response.sources.len() < 2 {
            response.sources.clear();
        }

        if force || response.changed {
            let reindex = self
                .reindex
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            if let Some(reindex) = reindex {
                match reindex(self.roots()).await {
                    Ok(n) => {
                        response.skills_reindexed = Some(n);
                        if response.changed {
                            tracing::info!("git: reindexed {n} skills");
                        }
                    }
                    Err(e) => errors.push(format!("reindexing failed: {e:#}")),
                }
            }
        }
        if !errors.is_empty() {
            response.success = false;
            response.message = Some(errors.join("; "));
        }
        response
    }

    /// Runs [`GitSync::refresh_if_changed`] every `every` (the first run one period from now) until
    /// the returned task is aborted or the `GitSync` is dropped.
    pub fn spawn_periodic(self: &Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        let weak: Weak<Self> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(this) = weak.upgrade() else {
                    return;
                };
                // The refresh runs in a task of its own: aborting the timer never interrupts it.
                this.refresh_if_changed().await;
            }
        })
    }
}

/// The git sources (`sources.repo`, then each of `sources.repos`) cloned or fetched before the
/// server indexes anything (on a runtime of its own: call it outside any async context), with
/// `github_token` for the sources that use the default token variable. `None` when no git
/// source is configured; problems are printed, never fatal.
pub fn start_blocking(
    sources: Vec<GitSourceConfig>,
    git: &GitConfig,
    github_token: Option<String>,
) -> Result<Option<Arc<GitSync>>> {
    let sources: Vec<SourceConfig> = sources.into_iter().map(SourceConfig::Git).collect();
    if sources.is_empty() {
        return Ok(None);
    }
    let token = github_token;
    let sync = GitSync::new(&sources, git, |var| {
        if var == DEFAULT_TOKEN_ENV {
            token.clone()
        } else {
            std::env::var(var).ok()
        }
    })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(sync.initialize());
    Ok(Some(Arc::new(sync)))
}
