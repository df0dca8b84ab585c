//! Where skills come from besides local folders: remote sources (git repositories), each
//! fetched into a verified snapshot folder that is swapped in atomically ([`snapshots`]),
//! refreshed on one schedule and by `refresh_skills`, and kept serving its last good snapshot
//! when a fetch or a check fails (logged, counted in `/metrics`, and forwarded to MCP clients
//! as `notifications/message`, this module being one of [`crate::logging::CLIENT_TARGETS`]).
//!
//! One notion of a source: the [`Source`] trait says how a kind of source fetches a revision
//! into a snapshot; everything else (the lock, the swap, the state, metrics, the refresh
//! schedule, one refresh at a time) is here and in [`snapshots`], once, for every kind.
//!
//! [`Sources`] owns the configured sources in precedence order. A refresh that moves a source
//! produces a new folder and the caller's index is rebuilt over the new roots
//! ([`Sources::roots`]), then swapped in. The caller supplies that rebuild as a [`Reindex`]
//! callback: this module knows nothing of the catalog.
//!
//! Git: network down at start-up serves the cached snapshot with a warning; a failed first
//! clone is an error for that source only (the others are served, and each refresh retries); a
//! damaged repository is re-cloned; a force-pushed branch is followed. Tokens never leave the git
//! child's environment (see `git/command.rs`).

pub mod git;
pub mod oci;
pub(crate) mod snapshots;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};

pub use git::{
    DEFAULT_BRANCH, DEFAULT_TOKEN_ENV, GitConfig, GitSourceConfig, LocalSourceConfig, SourceConfig,
    root_path,
};

use crate::single_flight::SingleFlight;
use snapshots::{Snapshots, short};

/// A boxed future, as [`Source::fetch`] returns (the trait is used as `dyn Source`).
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a fetch made: the revision now on the remote, its snapshot's folder to serve (below
/// `trees/<revision>`, complete and checked), and how many files differ from the revision served.
#[derive(Debug, Clone)]
pub(crate) struct Fetched {
    pub(crate) revision: String,
    pub(crate) root: PathBuf,
    pub(crate) files_changed: u64,
}

/// One kind of remote source. An implementation only fetches: [`sync`] holds the source's lock
/// around [`Source::fetch`], then swaps the snapshot in, and records the outcome.
pub(crate) trait Source: Send + Sync + std::fmt::Debug {
    /// `git`, `oci`: the `kind` of metrics and logs.
    fn kind(&self) -> &'static str;
    /// How logs and answers name the source (no credentials).
    fn label(&self) -> &str;
    /// The source's snapshot folder.
    fn snapshots(&self) -> &Snapshots;
    /// How long to wait for another process syncing the same folder.
    fn lock_wait(&self) -> Duration;
    /// The folder served in the snapshot at `tree` (`trees/<revision>`).
    fn resolve_root(&self, tree: &Path) -> Result<PathBuf> {
        Ok(tree.to_path_buf())
    }
    /// `text` without the source's secrets.
    fn redact(&self, text: &str) -> String {
        text.to_owned()
    }
    /// The command a fetch runs, for inspection (git: nothing secret in its arguments).
    fn fetch_command(&self) -> Option<std::process::Command> {
        None
    }
    /// Brings the remote's revision into a complete, checked snapshot (reusing it when it is
    /// already on disk); `served` is the revision served now. Called with the lock held.
    fn fetch<'a>(&'a self, served: Option<&'a str>) -> BoxFuture<'a, Result<Fetched>>;
}

/// When a start-up fetches a remote source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    /// Always (`serve`: it starts from the remote's current revision).
    Always,
    /// Only when no snapshot is on disk (the one-shot verbs read the last one).
    IfMissing,
}

/// What a successful sync did.
#[derive(Debug, Clone)]
pub(crate) struct SyncOutcome {
    pub(crate) old: Option<String>,
    pub(crate) new: String,
    pub(crate) files_changed: u64,
}

impl SyncOutcome {
    pub(crate) fn changed(&self) -> bool {
        self.old.as_deref() != Some(self.new.as_str())
    }
}

/// Picks up the snapshot a previous run served, if still complete on disk.
fn load_cached(source: &dyn Source) -> Option<String> {
    source
        .snapshots()
        .load_cached(&format!("{}: {}", source.kind(), source.label()), |tree| {
            source.resolve_root(tree)
        })
}

/// Brings `source` up to date and swaps its new snapshot in; on error the previous snapshot
/// stays served. Counted per source in `skills_mcp_source_syncs_total` (a git source's also in
/// `skills_mcp_git_syncs_total`), traced as a `<kind> sync` span.
pub(crate) async fn sync(source: &dyn Source) -> Result<SyncOutcome> {
    use tracing::Instrument as _;
    let span = match source.kind() {
        "git" => crate::child_span!("git sync", git.source = source.label()),
        _ => crate::child_span!(
            "source sync",
            source.kind = source.kind(),
            source.name = source.label()
        ),
    };
    let result = async {
        let snapshots = source.snapshots();
        let _lock = snapshots.begin(source.lock_wait()).await?;
        let old = snapshots.state().revision;
        let fetched = source.fetch(old.as_deref()).await?;
        snapshots.swap(&fetched.revision, fetched.root)?;
        Ok::<_, anyhow::Error>(SyncOutcome {
            old,
            new: fetched.revision,
            files_changed: fetched.files_changed,
        })
    }
    .instrument(span)
    .await;
    let metrics = crate::telemetry::metrics();
    let snapshots = source.snapshots();
    match &result {
        Ok(outcome) => {
            metrics.source_sync(
                source.kind(),
                source.label(),
                if outcome.changed() {
                    "updated"
                } else {
                    "unchanged"
                },
            );
            snapshots.update_state(|s| {
                s.last_sync = Some(SystemTime::now());
                s.last_error = None;
            });
        }
        Err(e) => {
            metrics.source_sync(source.kind(), source.label(), "failed");
            let msg = source.redact(&format!("{e:#}"));
            snapshots.update_state(|s| s.last_error = Some(msg));
        }
    }
    result.map_err(|e| anyhow!(source.redact(&format!("{e:#}"))))
}

/// One folder to index, with a name for diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRoot {
    /// `git:<url>#<branch>`, `local:<path>` (`<kind>:<label>`).
    pub name: String,
    pub path: PathBuf,
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

enum Entry {
    Local(PathBuf),
    Remote(Box<dyn Source>),
}

/// The configured skill sources and their synchronisation.
pub struct Sources {
    sources: Vec<Entry>,
    /// Refreshes: one at a time, at most one queued (a forced one when any of its callers
    /// forced it), by the rule of the catalogue's rebuilds ([`crate::single_flight`]).
    refreshes: SingleFlight<RefreshResponse, bool>,
    reindex: Mutex<Option<Reindex>>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("sources", &self.labels())
            .finish_non_exhaustive()
    }
}

impl Sources {
    /// The sources, in precedence order, with tokens read through `env` (each git source's
    /// `token_env`, default `GITHUB_TOKEN`). No I/O happens here.
    pub fn new(
        sources: &[SourceConfig],
        git: &GitConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self> {
        let content_dir = git.content_dir();
        let mut out: Vec<Entry> = Vec::with_capacity(sources.len());
        for source in sources {
            out.push(match source {
                SourceConfig::Local(local) => Entry::Local(git::expand_home(&local.path)),
                SourceConfig::Git(g) => {
                    let token = env(g.token_env()).filter(|t| !t.trim().is_empty());
                    let repo = git::Repo::new(
                        g,
                        &content_dir,
                        token.as_deref().map(str::trim),
                        git.timeout(),
                    )?;
                    Entry::Remote(Box::new(repo))
                }
                SourceConfig::Oci {
                    config,
                    insecure_registries,
                } => {
                    // Only the variable the source names: never the git sources' token.
                    let token = config
                        .token_env
                        .as_deref()
                        .and_then(&env)
                        .map(|t| t.trim().to_owned())
                        .filter(|t| !t.is_empty());
                    Entry::Remote(Box::new(oci::OciSource::new(
                        config,
                        &content_dir,
                        insecure_registries,
                        token,
                        git.timeout(),
                    )?))
                }
            });
            if let Some(Entry::Remote(new)) = out.last() {
                let dir = new.snapshots().dir();
                let twice = out[..out.len() - 1]
                    .iter()
                    .any(|e| matches!(e, Entry::Remote(r) if r.snapshots().dir() == dir));
                if twice {
                    bail!("{} source {} is configured twice", new.kind(), new.label());
                }
            }
        }
        Ok(Self {
            sources: out,
            refreshes: SingleFlight::new(),
            reindex: Mutex::new(None),
        })
    }

    /// Whether any source is remote (git).
    pub fn has_git(&self) -> bool {
        self.remotes().next().is_some()
    }

    fn remotes(&self) -> impl Iterator<Item = &dyn Source> {
        self.sources.iter().filter_map(|s| match s {
            Entry::Remote(r) => Some(&**r),
            Entry::Local(_) => None,
        })
    }

    fn labels(&self) -> Vec<String> {
        self.sources
            .iter()
            .map(|s| match s {
                Entry::Remote(r) => format!("{}:{}", r.kind(), r.label()),
                Entry::Local(p) => format!("local:{}", p.display()),
            })
            .collect()
    }

    /// Sets the index rebuild run after a refresh (replacing any previous one).
    pub fn set_reindex(&self, reindex: Reindex) {
        *self.reindex.lock().unwrap_or_else(|e| e.into_inner()) = Some(reindex);
    }

    /// First sync of every remote source: the cached snapshot is picked up, then the remote is
    /// fetched (or cloned). Failures are logged to stderr and returned; they are never fatal: a
    /// source without any snapshot serves nothing until a refresh succeeds.
    pub async fn initialize(&self) -> Vec<String> {
        self.initialize_with(Fetch::Always).await
    }

    /// [`Self::initialize`], fetching only the sources without a snapshot on disk when `fetch`
    /// is [`Fetch::IfMissing`] (the one-shot verbs: they read the last snapshot).
    pub async fn initialize_with(&self, fetch: Fetch) -> Vec<String> {
        let mut problems = Vec::new();
        for source in self.remotes() {
            let (kind, label) = (source.kind(), source.label());
            let cached = load_cached(source);
            if fetch == Fetch::IfMissing && cached.is_some() {
                continue;
            }
            match sync(source).await {
                Ok(outcome) => {
                    if let Some(old) = outcome.old.as_deref().filter(|_| outcome.changed()) {
                        tracing::info!(
                            "{kind}: {label}: updated {} -> {} ({} files changed)",
                            short(old),
                            short(&outcome.new),
                            outcome.files_changed
                        );
                    } else {
                        tracing::info!("{kind}: {label}: at {}", short(&outcome.new));
                    }
                }
                Err(e) => {
                    let msg = match &cached {
                        Some(revision) => format!(
                            "warning: could not update {label} ({e:#}); serving the cached {} {}",
                            if kind == "git" { "commit" } else { "revision" },
                            short(revision)
                        ),
                        None => format!(
                            "error: could not {} {label} ({e:#}); its skills are unavailable until a \
                             refresh succeeds",
                            if kind == "git" { "clone" } else { "fetch" },
                        ),
                    };
                    // The level is the event's; the text keeps it for the tool answers.
                    let text = crate::logsafe::Escaped(
                        msg.trim_start_matches("warning: ")
                            .trim_start_matches("error: "),
                    );
                    if cached.is_some() {
                        tracing::warn!("{kind}: {text}");
                    } else {
                        tracing::error!("{kind}: {text}");
                    }
                    problems.push(msg);
                }
            }
        }
        problems
    }

    /// The folders to index, in precedence order: local folders as configured; for a remote
    /// source, its `current` link (Unix), a path that stays the same across refreshes and leads
    /// to the snapshot served. Before a source's first successful sync the path does not exist
    /// yet: an index build reports it missing and picks it up once a refresh has fetched it.
    pub fn roots(&self) -> Vec<SourceRoot> {
        self.sources
            .iter()
            .filter_map(|s| match s {
                Entry::Local(path) => Some(SourceRoot {
                    name: format!("local:{}", path.display()),
                    path: path.clone(),
                }),
                Entry::Remote(source) => Some(SourceRoot {
                    name: format!("{}:{}", source.kind(), source.label()),
                    path: if cfg!(unix) {
                        source.snapshots().current_path()
                    } else {
                        source.snapshots().state().root?
                    },
                }),
            })
            .collect()
    }

    /// The folder each remote source serves right now (`trees/<revision>/...`), if any.
    pub fn current_roots(&self) -> Vec<Option<PathBuf>> {
        self.remotes().map(|r| r.snapshots().state().root).collect()
    }

    /// The state of every remote source.
    pub fn status(&self) -> Vec<SourceStatus> {
        self.remotes()
            .map(|source| {
                let state = source.snapshots().state();
                SourceStatus {
                    source: source.label().to_owned(),
                    commit_hash: state.revision,
                    files_changed: 0,
                    last_sync: state.last_sync.map(crate::analytics::iso8601),
                    error: state.last_error,
                }
            })
            .collect()
    }

    /// The folder holding the snapshots (and a git source's repository) of each remote source
    /// (for diagnostics).
    pub fn checkout_dirs(&self) -> Vec<PathBuf> {
        self.remotes()
            .map(|r| r.snapshots().dir().to_path_buf())
            .collect()
    }

    /// The exact `git fetch` command (program, arguments, environment) a refresh of git source
    /// `index` runs, for inspection: nothing secret may appear in its arguments.
    #[doc(hidden)]
    pub fn fetch_command(&self, index: usize) -> Option<std::process::Command> {
        self.remotes().nth(index).and_then(Source::fetch_command)
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
        for source in self.remotes() {
            let mut status = SourceStatus {
                source: source.label().to_owned(),
                ..SourceStatus::default()
            };
            match sync(source).await {
                Ok(outcome) => {
                    if outcome.changed() {
                        response.changed = true;
                        tracing::info!(
                            "{}: {}: {} -> {} ({} files changed)",
                            source.kind(),
                            source.label(),
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
                        "{}: {}; serving the previous {}",
                        source.kind(),
                        crate::logsafe::Escaped(&msg),
                        if source.kind() == "git" {
                            "commit"
                        } else {
                            "revision"
                        }
                    );
                    errors.push(msg.clone());
                    status.error = Some(msg);
                }
            }
            let state = source.snapshots().state();
            status.commit_hash = state.revision;
            status.last_sync = state.last_sync.map(crate::analytics::iso8601);
            response.sources.push(status);
        }
        response.files_changed = Some(files_changed);
        response.commit_hash = response.sources.first().and_then(|s| s.commit_hash.clone());
        response.last_sync = self
            .remotes()
            .filter_map(|r| r.snapshots().state().last_sync)
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

    /// Runs [`Sources::refresh_if_changed`] every `every` (the first run one period from now) until
    /// the returned task is aborted or the `Sources` is dropped.
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

/// The remote sources (git: `sources.repo`, then each of `sources.repos`; then `sources.oci`)
/// fetched (always, or only when missing: `fetch`) before the server indexes anything (on a runtime of its own: call it outside any
/// async context), with `github_token` for the git sources that use the default token variable.
/// `None` when no remote source is configured; problems are printed, never fatal.
pub fn start_blocking(
    sources: Vec<SourceConfig>,
    git: &GitConfig,
    github_token: Option<String>,
    fetch: Fetch,
) -> Result<Option<Arc<Sources>>> {
    if sources.is_empty() {
        return Ok(None);
    }
    let token = github_token;
    let sync = Sources::new(&sources, git, |var| {
        if var == DEFAULT_TOKEN_ENV {
            token.clone()
        } else {
            std::env::var(var).ok()
        }
    })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(sync.initialize_with(fetch));
    Ok(Some(Arc::new(sync)))
}
