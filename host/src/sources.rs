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
pub mod index;
pub mod lock;
pub mod oci;
pub mod pins;
pub(crate) mod snapshots;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

pub use git::{
    DEFAULT_BRANCH, DEFAULT_TOKEN_ENV, GitConfig, GitSourceConfig, LocalSourceConfig, SourceConfig,
    root_path,
};

use crate::single_flight::SingleFlight;
use snapshots::{Snapshots, short};

/// A boxed future, as [`Source::fetch`] returns (the trait is used as `dyn Source`).
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// `fetch`, a blocking fetch (an OCI registry's or an index's HTTP), run on tokio's blocking
/// threads: a [`Source::fetch`] or [`Source::fetch_pinned`] of a blocking client.
pub(crate) fn blocking<'a, T: Send + 'static>(
    fetch: impl FnOnce() -> Result<T> + Send + 'static,
) -> BoxFuture<'a, Result<T>> {
    Box::pin(async move {
        tokio::task::spawn_blocking(fetch)
            .await
            .map_err(|e| anyhow!("the fetch stopped: {e}"))?
    })
}

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
    /// The source's `name` (what access rules, the lock file and `sources rollback` call it).
    fn name(&self) -> &str {
        self.label()
    }
    /// How the lock file records `revision` of this source: its `digest` (git: the commit;
    /// OCI: `sha256:<hex>`) and its `resolvedReference`. A new kind of source (an index) says
    /// here what it pins.
    fn lock_reference(&self, revision: &str) -> LockReference {
        LockReference {
            digest: revision.to_owned(),
            resolved_reference: format!("{}@{revision}", self.label()),
        }
    }
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
    /// Brings exactly `pin` (a revision: `sources rollback`, the lock file) into a complete,
    /// checked snapshot, and says where the remote is now when it could ask (to report an
    /// upstream that moved; never followed). Called with the lock held.
    fn fetch_pinned<'a>(
        &'a self,
        served: Option<&'a str>,
        pin: &'a str,
    ) -> BoxFuture<'a, Result<Pinned>> {
        let _ = served;
        Box::pin(async move {
            bail!(
                "a {} source cannot be pinned (to {})",
                self.kind(),
                short(pin)
            )
        })
    }
}

/// What [`Source::fetch_pinned`] made: the pinned snapshot, and the remote's revision now (when
/// it could be read).
#[derive(Debug, Clone)]
pub(crate) struct Pinned {
    pub(crate) fetched: Fetched,
    pub(crate) upstream: Option<String>,
}

/// What a lock file entry pins of a source (see [`Source::lock_reference`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockReference {
    pub digest: String,
    pub resolved_reference: String,
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
        let fetched = match snapshots.wanted() {
            Some(pin) => {
                let pinned = source.fetch_pinned(old.as_deref(), &pin).await?;
                report_upstream(source, &pin, pinned.upstream.as_deref());
                pinned.fetched
            }
            None => source.fetch(old.as_deref()).await?,
        };
        let root = enforce_lock(source, &fetched.revision, fetched.root)?;
        snapshots.swap(&fetched.revision, root)?;
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

/// The folder to serve for `revision` of a source at `root`: `root` itself, unless the source
/// is locked to that revision and some of its skills disagree with the lock file (their
/// `contentDigest` differs, or the lock does not list them): then a view without those skills,
/// each refusal logged (an error, forwarded to MCP clients as `notifications/message`) naming
/// the source, the skill, the lock file and both digests. The other skills keep serving.
fn enforce_lock(source: &dyn Source, revision: &str, root: PathBuf) -> Result<PathBuf> {
    let snapshots = source.snapshots();
    let state = snapshots.state();
    let Some(locked) = state.locked.filter(|l| l.revision == revision) else {
        return Ok(root);
    };
    if let Some((from, view)) = &state.view
        && *from == root
        && view.is_dir()
    {
        return Ok(view.clone());
    }
    let (kind, label, name) = (source.kind(), source.label(), source.name());
    let hashed = lock::hashed_skills(&root, locked.options.clone())
        .with_context(|| format!("checking {label} against {}", locked.lock_file.display()))?;
    let mut leave_out = Vec::new();
    for (skill, files) in &hashed {
        let why = match locked.skills.iter().find(|s| s.name == skill.name) {
            Some(l) if l.content_digest == skill.content_digest => continue,
            Some(l) => format!(
                "its content {} disagrees with the locked {}",
                skill.content_digest, l.content_digest
            ),
            None => "it is not in the lock".to_owned(),
        };
        tracing::error!(
            "{kind}: {label} ({name}): skill {} at {}: {why} ({}); not served",
            crate::logsafe::Escaped(&skill.name),
            short(revision),
            locked.lock_file.display()
        );
        leave_out.extend(files.iter().cloned());
    }
    for l in &locked.skills {
        if !hashed.iter().any(|(s, _)| s.name == l.name) {
            tracing::warn!(
                "{kind}: {label} ({name}): the locked skill {} is not in {}",
                crate::logsafe::Escaped(&l.name),
                short(revision)
            );
        }
    }
    let from = root.clone();
    let view = if leave_out.is_empty() {
        root
    } else {
        leave_out.sort();
        snapshots.view(revision, &root, &leave_out)?
    };
    // Checked once per folder served: a refresh that finds it again serves the same view.
    snapshots.update_state(|s| s.view = Some((from, view.clone())));
    Ok(view)
}

/// Logs (once per upstream revision) that a pinned source's remote moved elsewhere: reported,
/// not followed.
fn report_upstream(source: &dyn Source, pin: &str, upstream: Option<&str>) {
    let snapshots = source.snapshots();
    let Some(upstream) = upstream.filter(|u| *u != pin) else {
        return;
    };
    if snapshots.state().reported_upstream.as_deref() == Some(upstream) {
        return;
    }
    let why = if snapshots.state().locked.is_some() {
        "the lock file pins it; `skills-mcp lock --update NAME` moves the pin"
    } else {
        "pinned by `skills-mcp sources rollback`; `skills-mcp sources unpin NAME` follows the remote"
    };
    tracing::warn!(
        "{}: {} ({}): the remote moved to {}; serving {} ({why})",
        source.kind(),
        source.label(),
        source.name(),
        short(upstream),
        short(pin)
    );
    snapshots.update_state(|s| s.reported_upstream = Some(upstream.to_owned()));
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
        // An OCI or index source's token: only the variable the source names, never the git
        // sources' token.
        let token_of = |var: Option<&str>| {
            var.and_then(&env)
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
        };
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
                    let token = token_of(config.token_env.as_deref());
                    Entry::Remote(Box::new(oci::OciSource::new(
                        config,
                        &content_dir,
                        insecure_registries,
                        token,
                        git.timeout(),
                    )?))
                }
                SourceConfig::Index {
                    config,
                    origins,
                    insecure,
                } => {
                    let token = token_of(config.token_env.as_deref());
                    Entry::Remote(Box::new(index::IndexSource::new(
                        config,
                        &content_dir,
                        origins,
                        insecure,
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

    /// [`Self::new`] with the tokens of this process's environment, `github_token` for the git
    /// sources that use the default token variable.
    pub fn from_process(
        sources: &[SourceConfig],
        git: &GitConfig,
        github_token: Option<String>,
    ) -> Result<Self> {
        Self::new(sources, git, |var| {
            if var == DEFAULT_TOKEN_ENV {
                github_token.clone()
            } else {
                std::env::var(var).ok()
            }
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
            let locked = source
                .snapshots()
                .state()
                .locked
                .map(|l| l.revision.clone());
            if fetch == Fetch::IfMissing
                && let Some(revision) = &cached
                && (locked.is_none() || locked.as_ref() == Some(revision))
            {
                if let (Some(_), Some(root)) = (&locked, source.snapshots().state().root) {
                    let served = enforce_lock(source, revision, root)
                        .and_then(|root| source.snapshots().swap(revision, root));
                    if let Err(e) = served {
                        source.snapshots().unserve();
                        let msg = format!("error: {label}: {e:#}; its skills are not served");
                        tracing::error!(
                            "{kind}: {}",
                            crate::logsafe::Escaped(msg.trim_start_matches("error: "))
                        );
                        problems.push(msg);
                    }
                }
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
                    // A locked source serves its locked revision or nothing.
                    let cached = match (&locked, cached) {
                        (Some(locked), Some(c)) if *locked != c => {
                            source.snapshots().unserve();
                            None
                        }
                        (_, c) => c,
                    };
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

    /// The lock file entry of every remote source, from the snapshot it serves (see
    /// [`lock`]); a source with nothing served yet is an error naming it.
    pub fn lock_entries(
        &self,
        options: &crate::catalog::CatalogOptions,
    ) -> Result<Vec<lock::LockedSource>> {
        let mut out = Vec::new();
        for source in self.remotes() {
            let state = source.snapshots().state();
            let (Some(revision), Some(root)) = (state.revision, state.root) else {
                bail!(
                    "{} source {} has no snapshot to lock{}",
                    source.kind(),
                    source.label(),
                    state
                        .last_error
                        .map(|e| format!(" ({e})"))
                        .unwrap_or_default()
                );
            };
            let skills = lock::skill_digests(&root, options.clone())
                .with_context(|| format!("{}: {}", source.kind(), source.label()))?;
            let reference = source.lock_reference(&revision);
            let single = (source.kind() == "oci" && skills.len() == 1).then(|| skills[0].clone());
            out.push(lock::LockedSource {
                name: source.name().to_owned(),
                kind: source.kind().to_owned(),
                source: source.label().to_owned(),
                resolved_reference: reference.resolved_reference,
                digest: reference.digest,
                content_digest: single.as_ref().map(|s| s.content_digest.clone()),
                version: single.and_then(|s| s.version),
                skills,
            });
        }
        Ok(out)
    }

    /// The remote source named `name` (its `name`), or an error listing the names.
    fn named(&self, name: &str) -> Result<&dyn Source> {
        self.remotes().find(|r| r.name() == name).ok_or_else(|| {
            anyhow!(
                "no remote source is named {name:?} (configured: {})",
                self.remote_names().join(", ")
            )
        })
    }

    /// `None` when a remote source is named `name`; else the message saying that none is,
    /// with the configured names (a verb's usage error).
    pub fn unknown(&self, name: &str) -> Option<String> {
        self.named(name).err().map(|e| e.to_string())
    }

    /// `sources rollback NAME`: serves the revision the source served before the current one
    /// and pins it (`PIN` in its folder), so that every refresh, of this process and of every
    /// replica sharing the folder, keeps it until [`Self::unpin`]. Returns the revisions
    /// (from, to).
    pub async fn rollback(&self, name: &str) -> Result<(Option<String>, String)> {
        let source = self.named(name)?;
        let snapshots = source.snapshots();
        let _lock = snapshots.begin(source.lock_wait()).await?;
        let current = load_cached(source);
        let previous = snapshots.previous().ok_or_else(|| {
            anyhow!(
                "{name}: no previous revision is recorded (a source rolls back to the revision it served before its last update)"
            )
        })?;
        let tree = snapshots.tree(&previous);
        if !tree.is_dir() {
            bail!(
                "{name}: the snapshot of the previous revision {} is no longer on disk",
                short(&previous)
            );
        }
        let root = source.resolve_root(&tree)?;
        snapshots.set_pin(Some(&previous))?;
        snapshots.swap(&previous, root)?;
        tracing::info!(
            "{}: {} ({name}): rolled back to {} and pinned",
            source.kind(),
            source.label(),
            short(&previous)
        );
        Ok((current, previous))
    }

    /// `sources unpin NAME`: removes the pin; the next refresh follows the remote. Returns the
    /// revision that was pinned.
    pub async fn unpin(&self, name: &str) -> Result<Option<String>> {
        let source = self.named(name)?;
        let snapshots = source.snapshots();
        let _lock = snapshots.begin(source.lock_wait()).await?;
        let pin = snapshots.pin();
        snapshots.set_pin(None)?;
        Ok(pin)
    }

    /// Serves exactly the revisions of `lock` (`serve --locked`): each remote source is pinned
    /// to its entry's `digest`, before any `sources rollback` pin. A source the lock does not
    /// name, or names with another kind or a digest that is no revision, is an error.
    pub fn apply_lock(
        &self,
        lock: &lock::LockFile,
        path: &Path,
        options: &crate::catalog::CatalogOptions,
    ) -> Result<()> {
        for source in self.remotes() {
            let name = source.name();
            let entry = lock.source(name).ok_or_else(|| {
                anyhow!(
                    "the lock file {} has no entry for the {} source {name:?} (run `skills-mcp lock`)",
                    path.display(),
                    source.kind()
                )
            })?;
            let revision = entry.digest.trim_start_matches("sha256:");
            if entry.kind != source.kind() || !snapshots::is_revision(revision) {
                bail!(
                    "the lock file {}: the entry {name:?} ({} {}) does not pin a {} source",
                    path.display(),
                    entry.kind,
                    entry.digest,
                    source.kind()
                );
            }
            let locked = Arc::new(snapshots::Locked {
                revision: revision.to_owned(),
                skills: entry.skills.clone(),
                lock_file: path.to_path_buf(),
                options: options.clone(),
            });
            source.snapshots().update_state(|s| s.locked = Some(locked));
        }
        Ok(())
    }

    /// Every remote source: name, kind, label, the revision served (as a previous run left it
    /// when this process has not synced), the pin and the previous revision.
    pub fn describe(&self) -> Vec<pins::SourceInfo> {
        self.remotes()
            .map(|source| {
                let snapshots = source.snapshots();
                let revision = snapshots.state().revision.or_else(|| load_cached(source));
                pins::SourceInfo {
                    name: source.name().to_owned(),
                    kind: source.kind().to_owned(),
                    source: source.label().to_owned(),
                    revision,
                    pinned: snapshots.pin(),
                    previous: snapshots.previous(),
                }
            })
            .collect()
    }

    /// The names of the remote sources, in precedence order.
    pub fn remote_names(&self) -> Vec<String> {
        self.remotes().map(|r| r.name().to_owned()).collect()
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
/// `None` when no remote source is configured; problems are printed, never fatal. With `lock`
/// (the lock file, its path, the catalogue's options), every source serves its locked revision
/// ([`Sources::apply_lock`]).
pub fn start_blocking(
    sources: Vec<SourceConfig>,
    git: &GitConfig,
    github_token: Option<String>,
    fetch: Fetch,
    lock: Option<(lock::LockFile, PathBuf, crate::catalog::CatalogOptions)>,
) -> Result<Option<Arc<Sources>>> {
    if sources.is_empty() {
        return Ok(None);
    }
    let sync = Sources::from_process(&sources, git, github_token)?;
    if let Some((lock, path, options)) = lock {
        sync.apply_lock(&lock, &path, &options)?;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(sync.initialize_with(fetch));
    Ok(Some(Arc::new(sync)))
}
