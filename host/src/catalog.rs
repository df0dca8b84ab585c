//! Skill roots opened as cap-std directories, walked and read (in parallel) to build engine indexes; the current index snapshot, swapped atomically.
//!
//! [`Catalog`] is the thread-safe facade the CLI and the MCP server call. An index build
//! (`Catalog::open`, [`Catalog::rebuild`]):
//! 1. opens every root once as a cap-std [`Dir`] (a missing or unreadable root is a located
//!    error for that root; the others keep serving);
//! 2. walks each root following the engine's `walk-policy` (symlinks are reported, never
//!    followed), hands the listing to `add-root`, reads the files the engine asks for through
//!    the `Dir` with a size cap on a few threads, and passes them in `add-files` batches of
//!    bounded size, then calls `finish`;
//! 3. swaps the new snapshot in: readers keep the previous one until they are done with it.
//!
//! If the engine traps on a batch, the build starts over with that batch's files one by one, and
//! a file that still makes it trap is left out with an error in the reports. A trap during a
//! query fails that query only: the next call re-instantiates the engine and rebuilds the
//! snapshot's index from the same roots.
//!
//! The engine runs all calls of one snapshot in one instance, one call at a time: the methods
//! block (an async caller should use `spawn_blocking`).

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Instant;

use anyhow::{Context as _, anyhow};
use base64::Engine as _;
use cap_std::fs::Dir;
use serde_json::{Value, json};

mod build;
mod walk;

pub(crate) use walk::{ReadError, read_capped};

use build::*;
use walk::*;

/// Parts of an audit split over engine instances ([`Catalog::audit_parallel`]), per
/// instance: taken from a shared counter, so that the instances finish together.
const AUDIT_PARTS_PER_THREAD: u32 = 8;

/// Encoded audit parts (`index.audit-part`), each with its number.
type NumberedParts = Vec<(u32, Vec<u8>)>;

use skills_engine::model::ChildKind;
use skills_engine::walk::Child;

use crate::index_cache::{self, FileStamp, ListingPrint};
use crate::runtime::{AccessFinding, AccessRule, Caller, HiddenSkill};
use crate::runtime::{
    AssetInfo, AssetLocation, Catalogue, Diagnostic, DraftRanking, EngineConfig, EngineError,
    EngineErrorKind, Entry, Explanation, ExtensionSkill, FileData, FileReport, FileSource, Guest,
    GuestTrap, IndexHandle, ManifestFile, NoFiles, ResolvedSkill, RouteOutcome, Runtime,
    RuntimeOptions, SearchHit, ServedSkillMd, Severity, SizeError, SkillCheck, SkillInfo,
    SkillSummary, TreeNode, WalkPolicy,
};
use crate::runtime::{AuditSkill, SkillRequests};
use crate::runtime::{EvalFile, EvalProblem, EvalQuery, SkillEval};
use crate::single_flight::SingleFlight;

/// Default largest asset served (`assets.max_size_bytes`).
pub const DEFAULT_MAX_ASSET_BYTES: u64 = 1024 * 1024;
/// Most retries of a build whose engine trapped on some file.
const MAX_BUILD_ATTEMPTS: usize = 12;

/// A skill root: a directory of skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootSpec {
    /// How the root is named in the host's messages.
    pub name: String,
    pub path: PathBuf,
    /// The name given to `add-root`: what access rules' `roots:` name (the configured root's
    /// or git source's `name`).
    pub engine_name: String,
}

impl RootSpec {
    /// A root named after its path.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        Self {
            name: path.display().to_string(),
            engine_name: path.display().to_string(),
            path,
        }
    }

    /// The root with `name` given to `add-root`.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.engine_name = name.into();
        self
    }
}

/// How a catalog builds and serves.
#[derive(Debug, Clone)]
pub struct CatalogOptions {
    pub engine: EngineConfig,
    pub runtime: RuntimeOptions,
    /// Largest asset [`Catalog::read_asset`] serves unless told otherwise.
    pub max_asset_bytes: u64,
    /// Largest total of file bytes in one `add-files` batch (the guest's memory stays small;
    /// default: the walk policy's `max-batch-bytes`).
    pub batch_bytes: u64,
    /// Threads reading files during a build.
    pub read_threads: usize,
    /// Folder of the on-disk index cache ([`crate::index_cache`]); `None`: every open builds.
    pub index_cache: Option<PathBuf>,
}

impl Default for CatalogOptions {
    fn default() -> Self {
        Self {
            engine: EngineConfig::default(),
            runtime: RuntimeOptions::default(),
            max_asset_bytes: DEFAULT_MAX_ASSET_BYTES,
            batch_bytes: skills_engine::walk::MAX_BATCH_BYTES,
            read_threads: std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .clamp(1, 4),
            index_cache: None,
        }
    }
}

/// What an index build found.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct BuildStats {
    /// Skills in the index.
    pub skills: u32,
    /// Roots configured, and how many could be opened.
    pub roots: usize,
    pub roots_ok: usize,
    /// Entries listed, files read and their bytes.
    pub entries: usize,
    pub files_read: usize,
    pub bytes_read: u64,
    /// Files left out because the engine trapped on them.
    pub files_excluded: usize,
    /// Build time in milliseconds.
    pub millis: u64,
    /// Whether the index came from the on-disk index cache (nothing was read or parsed).
    pub from_cache: bool,
}

/// The bytes of an asset, with where they came from.
#[derive(Debug, Clone)]
pub struct AssetContent {
    pub skill_path: String,
    pub location: AssetLocation,
    pub bytes: Vec<u8>,
}

/// The thread-safe facade over the skill roots and the engine (cheap to clone). A catalog
/// taken with [`Catalog::view_as`] answers every call as its caller sees the skills (the
/// engine's `view`); otherwise it answers over the full index.
#[derive(Clone)]
pub struct Catalog {
    inner: Arc<Inner>,
    /// Whose view every call answers from (`None`: the full index).
    caller: Option<Arc<Caller>>,
}

struct Inner {
    runtime: Runtime,
    options: CatalogOptions,
    roots: Vec<RootSpec>,
    current: RwLock<Arc<Snapshot>>,
    /// Rebuilds: one at a time, at most one queued ([`crate::single_flight`]).
    rebuilds: SingleFlight<Result<BuildStats, Arc<anyhow::Error>>>,
    /// The operator's access rules and their version: an engine instance whose index has an
    /// older version gets them (`set-access`) before its next call, whatever built it (start-up,
    /// rebuild, the index cache, a restart after a trap).
    access: RwLock<AccessRules>,
}

/// The access rules in force, and their version (0: none set yet).
#[derive(Default)]
struct AccessRules {
    version: u64,
    rules: Arc<Vec<AccessRule>>,
}

/// Most views one engine instance keeps open (a caller's handle is reused by its next calls).
const MAX_VIEWS: usize = 64;

/// One built index and the roots it was built from.
struct Snapshot {
    /// Which rebuild made it (0: the first build).
    number: u64,
    roots: Arc<Roots>,
    stats: BuildStats,
    /// Findings of the host (root errors, unreadable or oversized files, excluded files).
    host_reports: Vec<FileReport>,
    /// Files left out because the engine trapped on them (kept out of recovery rebuilds too).
    excluded: BTreeSet<(u32, String)>,
    live: Mutex<Option<Live>>,
}

/// An engine instance holding the snapshot's index.
struct Live {
    guest: Guest,
    index: IndexHandle,
    /// The version of the access rules set on `index` (0: none), and whether the engine took
    /// them (a view is refused when it did not: nothing is served unfiltered).
    access_version: u64,
    access_ok: bool,
    /// Views taken on `index`, by caller, most recently used last.
    views: Vec<(Caller, IndexHandle)>,
}

impl Live {
    pub(super) fn new(guest: Guest, index: IndexHandle) -> Self {
        Self {
            guest,
            index,
            access_version: 0,
            access_ok: true,
            views: Vec::new(),
        }
    }

    /// Drop every view handle (the rules changed, or too many callers).
    fn drop_views(&mut self) {
        for (_, view) in std::mem::take(&mut self.views) {
            let _ = self.guest.drop_index(view);
        }
    }

    /// Bring the index's rules to `rules` (version `version`) if it has older ones.
    fn sync_access(&mut self, version: u64, rules: &[AccessRule]) {
        if self.access_version == version {
            return;
        }
        self.drop_views();
        self.access_ok = match self.guest.set_access(self.index, rules) {
            Ok(findings) => {
                let errors: Vec<&AccessFinding> = findings
                    .iter()
                    .filter(|f| f.severity == Severity::Error)
                    .collect();
                for f in &errors {
                    tracing::error!(
                        "access rules on the rebuilt index: {}: {}",
                        crate::logsafe::Escaped(&f.key),
                        crate::logsafe::Escaped(&f.message)
                    );
                }
                errors.is_empty()
            }
            Err(e) => {
                tracing::error!(
                    "setting the access rules failed: {}",
                    crate::logsafe::Escaped(format!("{e:#}"))
                );
                false
            }
        };
        self.access_version = version;
    }

    /// The handle `caller` reads through: the index itself without rules, else its view
    /// (taken once per caller and kept).
    fn handle_for(&mut self, caller: Option<&Caller>, rules: bool) -> anyhow::Result<IndexHandle> {
        let Some(caller) = caller.filter(|_| rules) else {
            return Ok(self.index);
        };
        if matches!(caller, Caller::Unrestricted) {
            return Ok(self.index);
        }
        if !self.access_ok {
            anyhow::bail!(
                "the access rules could not be applied to the current index; nothing is served to callers under rules until they are"
            );
        }
        if let Some(k) = self.views.iter().position(|(c, _)| c == caller) {
            let entry = self.views.remove(k);
            let handle = entry.1;
            self.views.push(entry);
            return Ok(handle);
        }
        if self.views.len() >= MAX_VIEWS {
            let (_, oldest) = self.views.remove(0);
            let _ = self.guest.drop_index(oldest);
        }
        let handle = self.guest.view(self.index, caller)?;
        self.views.push((caller.clone(), handle));
        Ok(handle)
    }
}

/// The opened roots of one build: what the engine's `files.read` reads through.
struct Roots {
    dirs: Vec<Option<Dir>>,
    /// The engine's walk policy, for listing the roots again and batching files.
    policy: skills_engine::WalkPolicy,
    /// Largest file `files.read` returns.
    max_file_bytes: u64,
}

impl FileSource for Roots {
    fn read(&self, root: u32, path: &str) -> Result<Vec<u8>, String> {
        let dir = self
            .dirs
            .get(root as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| format!("root {root} is not available"))?;
        read_capped(dir, path, self.max_file_bytes).map_err(|e| format!("{path}: {e}"))
    }
}

impl Catalog {
    /// Open `roots` (later roots take precedence) and build the first index.
    pub fn open(roots: Vec<RootSpec>, options: CatalogOptions) -> anyhow::Result<Self> {
        let runtime = Runtime::new(options.runtime.clone())?;
        // The code that ran to get here (arguments, configuration, the engine's set-up) is not
        // resident beside the index; nor, after it, the code that built or restored it, and
        // what the build freed goes back.
        crate::allocator::release_clean_file_pages();
        let snapshot = build_snapshot(&runtime, &options, &roots)?;
        crate::allocator::release_freed();
        crate::allocator::release_clean_file_pages();
        Ok(Self {
            inner: Arc::new(Inner {
                runtime,
                options,
                roots,
                current: RwLock::new(Arc::new(snapshot)),
                rebuilds: SingleFlight::new(),
                access: RwLock::new(AccessRules::default()),
            }),
            caller: None,
        })
    }

    /// This catalog as `caller` sees the skills: every call answers from the engine's view
    /// for that caller (the full index for `unrestricted`, or while no rule is set).
    pub fn view_as(&self, caller: Caller) -> Self {
        Self {
            inner: self.inner.clone(),
            caller: match caller {
                Caller::Unrestricted => None,
                c => Some(Arc::new(c)),
            },
        }
    }

    /// How many engine instances work split over [`Self::replica`]s may use: one a CPU, at
    /// most 4 (`eval`, `audit`).
    pub fn replica_threads() -> usize {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 4)
    }

    /// A second engine instance holding a copy of the current index (copied through its
    /// snapshot sections, as the index cache restores one: the same answers), under the same
    /// access rules and caller: for work split over threads (`eval`), each thread calling its
    /// own instance. It is not rebuilt with this catalog: a one-shot command's helper.
    pub fn replica(&self) -> anyhow::Result<Self> {
        let snapshot = self.snapshot();
        let builder = Builder {
            runtime: &self.inner.runtime,
            options: &self.inner.options,
            names: &self.inner.roots,
        };
        let (mut guest, index) = builder.new_index(&snapshot.roots)?;
        // Section by section: one section held at a time.
        self.with_live(&snapshot, |live| {
            let count = live.guest.snapshot_sections(live.index)?;
            for n in 0..count {
                let bytes = live.guest.snapshot_section(live.index, n)?;
                guest.restore_section(index, n, count, &bytes)?;
            }
            Ok(())
        })
        .context("copying the index into a second engine instance")?;
        let access = {
            let access = self.inner.access.read().unwrap_or_else(|e| e.into_inner());
            AccessRules {
                version: access.version,
                rules: access.rules.clone(),
            }
        };
        Ok(Self {
            inner: Arc::new(Inner {
                runtime: self.inner.runtime.clone(),
                options: self.inner.options.clone(),
                roots: self.inner.roots.clone(),
                current: RwLock::new(Arc::new(Snapshot {
                    number: snapshot.number,
                    roots: snapshot.roots.clone(),
                    stats: snapshot.stats.clone(),
                    host_reports: snapshot.host_reports.clone(),
                    excluded: snapshot.excluded.clone(),
                    live: Mutex::new(Some(Live::new(guest, index))),
                })),
                rebuilds: SingleFlight::new(),
                access: RwLock::new(access),
            }),
            caller: self.caller.clone(),
        })
    }

    /// Whose view this catalog answers from (`None`: the full index).
    pub fn caller(&self) -> Option<&Caller> {
        self.caller.as_deref()
    }

    /// Whether access rules are set (views differ from the full index).
    pub fn has_access_rules(&self) -> bool {
        !self
            .inner
            .access
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .rules
            .is_empty()
    }

    /// Set the operator's access rules and check them against the current index. With an
    /// error among the findings nothing changes (the rules in force stay) and the findings
    /// come back as `Err`; otherwise the rules apply from the next call on (every later index
    /// gets them too) and the warnings come back.
    pub fn set_access(
        &self,
        rules: Vec<AccessRule>,
    ) -> anyhow::Result<Result<Vec<AccessFinding>, Vec<AccessFinding>>> {
        let snapshot = self.snapshot();
        // The index the rules are checked on is this snapshot's (made live if needed).
        self.with_live(&snapshot, |live| {
            let mut access = self.inner.access.write().unwrap_or_else(|e| e.into_inner());
            live.sync_access(access.version, &access.rules);
            let findings = live.guest.set_access(live.index, &rules)?;
            if findings.iter().any(|f| f.severity == Severity::Error) {
                return Ok(Err(findings));
            }
            live.drop_views();
            access.version += 1;
            access.rules = Arc::new(rules);
            live.access_version = access.version;
            live.access_ok = true;
            Ok(Ok(findings))
        })
    }

    /// The skills `caller` may not see under the rules in force, with the rules selecting each.
    pub fn hidden(&self, caller: &Caller) -> anyhow::Result<Vec<HiddenSkill>> {
        let snapshot = self.snapshot();
        self.with_live(&snapshot, |live| {
            let access = self.inner.access.read().unwrap_or_else(|e| e.into_inner());
            live.sync_access(access.version, &access.rules);
            live.guest.hidden(live.index, caller)
        })
    }

    /// The roots, in precedence order (lowest first); a root's index is its `root` id.
    pub fn roots(&self) -> &[RootSpec] {
        &self.inner.roots
    }

    pub fn options(&self) -> &CatalogOptions {
        &self.inner.options
    }

    /// Statistics of the current index.
    pub fn stats(&self) -> BuildStats {
        self.snapshot().stats.clone()
    }

    /// Rebuild the index from the roots and swap it in atomically; concurrent callers keep
    /// using the previous index meanwhile. One rebuild runs at a time and at most one is queued:
    /// a caller arriving during a rebuild shares the result of the next one, which starts after
    /// it arrived (a storm of callers costs at most two rebuilds). Blocking: call it off the
    /// async threads, or use [`Self::rebuild_async`].
    pub fn rebuild(&self) -> anyhow::Result<BuildStats> {
        rebuilt(self.request_rebuild().blocking_recv())
    }

    /// [`Self::rebuild`], awaited (no thread waits for the rebuild).
    pub async fn rebuild_async(&self) -> anyhow::Result<BuildStats> {
        rebuilt(self.request_rebuild().await)
    }

    /// Which rebuild made the index served now (0: the first build); it changes with every
    /// rebuild swapped in.
    pub fn generation(&self) -> u64 {
        self.snapshot().number
    }

    /// Join the next rebuild; the caller finding none running starts the thread that makes them.
    fn request_rebuild(
        &self,
    ) -> tokio::sync::oneshot::Receiver<Result<BuildStats, Arc<anyhow::Error>>> {
        let joined = self.inner.rebuilds.join(());
        if let Some((mut flight, ())) = joined.start {
            let inner = self.inner.clone();
            let spawned = std::thread::Builder::new()
                .name("skills-index-rebuild".into())
                .spawn(move || {
                    loop {
                        let result = Self::rebuild_now(&inner, flight.run_number());
                        if flight.finish(result).is_none() {
                            break;
                        }
                    }
                });
            // Without a thread the flight is dropped: its callers see the rebuild fail.
            if let Err(e) = spawned {
                tracing::error!("could not start the rebuild thread: {e}");
            }
        }
        joined.result
    }

    /// One rebuild, swapped in (the flight's worker makes them one at a time).
    fn rebuild_now(inner: &Inner, number: u64) -> Result<BuildStats, Arc<anyhow::Error>> {
        let mut snapshot =
            build_snapshot(&inner.runtime, &inner.options, &inner.roots).map_err(Arc::new)?;
        snapshot.number = number;
        let stats = snapshot.stats.clone();
        let previous = std::mem::replace(
            &mut *inner.current.write().unwrap_or_else(|e| e.into_inner()),
            Arc::new(snapshot),
        );
        // The previous index is freed here unless a reader still holds it (then by its
        // last reader), not kept until the next rebuild.
        drop(previous);
        tracing::debug!(
            "rebuild {number}: {} skills in {} ms",
            stats.skills,
            stats.millis
        );
        Ok(stats)
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        self.inner
            .current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Run `f` on the current index as this catalog's caller sees it (the rules in force set
    /// on it first); restart the engine first if a trap killed it.
    fn with_index<R>(
        &self,
        f: impl FnOnce(&mut Guest, IndexHandle) -> anyhow::Result<R>,
    ) -> anyhow::Result<R> {
        let snapshot = self.snapshot();
        self.with_live(&snapshot, |live| {
            let (version, rules) = {
                let access = self.inner.access.read().unwrap_or_else(|e| e.into_inner());
                (access.version, access.rules.clone())
            };
            live.sync_access(version, &rules);
            let handle = live.handle_for(self.caller.as_deref(), !rules.is_empty())?;
            f(&mut live.guest, handle)
        })
    }

    /// Run `f` on the live engine instance of `snapshot`; restart it first if a trap killed
    /// it, and drop it after a call that trapped.
    fn with_live<R>(
        &self,
        snapshot: &Snapshot,
        f: impl FnOnce(&mut Live) -> anyhow::Result<R>,
    ) -> anyhow::Result<R> {
        let mut live = lock(&snapshot.live);
        if live.is_none() {
            let mut excluded = snapshot.excluded.clone();
            let mut reports = Vec::new();
            let built = Builder {
                runtime: &self.inner.runtime,
                options: &self.inner.options,
                names: &self.inner.roots,
            }
            .build(
                &snapshot.roots,
                &relist(&snapshot.roots),
                &mut excluded,
                &mut reports,
            )
            .context("restarting the skills engine")?;
            *live = Some(built.live);
        }
        let Some(l) = live.as_mut() else {
            unreachable!("just set")
        };
        let result = f(l);
        if l.guest.is_poisoned() {
            // The next call gets a fresh instance with the index rebuilt from the roots.
            *live = None;
        }
        result
    }

    /// Make the next engine call trap (its deadline is 0), to exercise recovery in tests.
    #[doc(hidden)]
    pub fn trap_next_call(&self) -> anyhow::Result<()> {
        self.with_index(|g, _| {
            g.trap_next_call();
            Ok(())
        })
    }

    /// Check a relative file argument with the engine's rules; returns it as the engine uses it.
    pub fn validate_relative_path(&self, path: &str) -> anyhow::Result<String> {
        self.with_index(|g, _| g.validate_relative_path(path))
    }

    /// Number of skills.
    pub fn len(&self) -> anyhow::Result<u32> {
        self.with_index(|g, i| g.len(i))
    }

    pub fn is_empty(&self) -> anyhow::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Every skill, sorted by skill path.
    pub fn skills(&self) -> anyhow::Result<Vec<SkillInfo>> {
        self.with_index(|g, i| g.skills(i))
    }

    /// Skills `start..start + count` in skill-path order with what listings show (path, name,
    /// description): a page of [`Self::skills`] without the rest of each skill.
    pub fn summaries(&self, start: u32, count: u32) -> anyhow::Result<Vec<SkillSummary>> {
        self.with_index(|g, i| g.summaries(i, start, count))
    }

    /// The catalogue as text within `budget` characters (the engine picks the tier).
    pub fn catalogue(&self, budget: u32) -> anyhow::Result<Catalogue> {
        self.with_index(|g, i| g.catalogue(i, budget))
    }

    /// `text` on one line, at most `limit` characters, as listings shorten descriptions.
    pub fn shorten(&self, text: &str, limit: u32) -> anyhow::Result<String> {
        self.with_index(|g, _| g.shorten(text, limit))
    }

    /// One skill by path or unique name; a not-found error carries suggestions.
    pub fn get(&self, path_or_name: &str) -> anyhow::Result<SkillInfo> {
        self.with_index(|g, i| g.get(i, path_or_name))
    }

    /// Closest skill paths to a mistyped one.
    pub fn suggest(&self, path_or_name: &str, limit: u32) -> anyhow::Result<Vec<String>> {
        self.with_index(|g, i| g.suggest(i, path_or_name, limit))
    }

    /// Ranked results, best first.
    pub fn search(&self, query: &str, limit: u32) -> anyhow::Result<Vec<SearchHit>> {
        self.with_index(|g, i| g.search(i, query, limit))
    }

    /// [`Catalog::search`] without the words each hit matched (`matched` is empty): for a
    /// list of results that does not show them.
    pub fn search_brief(&self, query: &str, limit: u32) -> anyhow::Result<Vec<SearchHit>> {
        self.with_index(|g, i| g.search_brief(i, query, limit))
    }

    /// Why `skill_path` scores what it does for `query`.
    pub fn explain(&self, query: &str, skill_path: &str) -> anyhow::Result<Explanation> {
        self.with_index(|g, i| g.explain(i, query, skill_path))
    }

    /// The collection audit (of this catalog's view): every skill's competitors and findings,
    /// worst first; `requests` replace the derived requests of the skills they name.
    pub fn audit(&self, requests: &[SkillRequests]) -> anyhow::Result<Vec<AuditSkill>> {
        self.with_index(|g, i| g.audit(i, requests))
    }

    /// The collection audit ([`Self::audit`]) split over `threads` engine instances: this
    /// one and [`Self::replica`]s. The skills are split into [`AUDIT_PARTS_PER_THREAD`]
    /// parts an instance, which the instances take from a shared counter as they finish one
    /// (an instance that drew costlier skills does not hold the others up), each searching
    /// the requests of its part's skills against the whole index (`index.audit-part`, with
    /// [`crate::audit::part_timeout`] as its limit); then every instance merges a share of
    /// the skills from all the parts (`index.audit-merge-share`: their competitors' evidence is
    /// most of a merge), and this one gathers the shares (`index.audit-gather`): the same
    /// answer as [`Self::audit`].
    pub fn audit_parallel(
        &self,
        requests: &[SkillRequests],
        threads: usize,
    ) -> anyhow::Result<Vec<AuditSkill>> {
        let threads = u32::try_from(threads.max(1)).unwrap_or(1);
        if threads == 1 {
            return self.audit(requests);
        }
        let skills = self.len()?;
        let parts = threads
            .saturating_mul(AUDIT_PARTS_PER_THREAD)
            .min(skills)
            .max(threads);
        let limit = crate::audit::part_timeout(skills, parts);
        let next = std::sync::atomic::AtomicU32::new(0);
        let work = |catalog: &Catalog| -> anyhow::Result<NumberedParts> {
            let mut done = Vec::new();
            loop {
                let p = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if p >= parts {
                    return Ok(done);
                }
                let part = catalog.with_index(|g, i| {
                    g.with_call_timeout(limit, |g| g.audit_part(i, requests, p, parts))
                });
                match part {
                    Ok(part) => done.push((p, part)),
                    Err(e) => {
                        // (the other instances take no further part)
                        next.store(parts, std::sync::atomic::Ordering::Relaxed);
                        return Err(e);
                    }
                }
            }
        };
        // This instance starts its parts once the copies are made: a copy reads this one's
        // index, which its long calls would hold.
        let copied = std::sync::Barrier::new(threads as usize);
        let (mut encoded, replicas) =
            std::thread::scope(|scope| -> anyhow::Result<(NumberedParts, Vec<Catalog>)> {
                let helpers: Vec<_> = (1..threads)
                    .map(|_| {
                        let (copied, work) = (&copied, &work);
                        scope.spawn(move || {
                            let replica = self.replica();
                            copied.wait();
                            let replica = replica?;
                            let done = work(&replica)?;
                            anyhow::Ok((done, replica))
                        })
                    })
                    .collect();
                copied.wait();
                let mut encoded = work(self)?;
                let mut replicas = Vec::new();
                for h in helpers {
                    let (done, replica) =
                        h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?;
                    encoded.extend(done);
                    replicas.push(replica);
                }
                Ok((encoded, replicas))
            })?;
        encoded.sort_unstable_by_key(|(p, _)| *p);
        let encoded: Vec<Vec<u8>> = encoded.into_iter().map(|(_, bytes)| bytes).collect();
        // The merge, a share an instance (the competitors' evidence is most of it), every
        // instance given every part; the shares gathered by this one.
        let merge = |catalog: &Catalog, share: u32| {
            catalog.with_index(|g, i| g.audit_merge_share(i, requests, &encoded, share, threads))
        };
        let shares = std::thread::scope(|scope| -> anyhow::Result<Vec<Vec<u8>>> {
            let helpers: Vec<_> = replicas
                .iter()
                .zip(1..)
                .map(|(replica, share)| scope.spawn(move || merge(replica, share)))
                .collect();
            let mut shares = vec![merge(self, 0)?];
            for h in helpers {
                shares.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?);
            }
            Ok(shares)
        })?;
        drop(replicas);
        drop(encoded);
        self.with_index(|g, i| g.audit_gather(i, &shares))
    }

    /// One skill's audit (of this catalog's view; no `hijacker` finding): `requests` are
    /// those meant for it (its eval queries), none: derived from its text.
    pub fn audit_one(&self, skill_path: &str, requests: &[String]) -> anyhow::Result<AuditSkill> {
        self.with_index(|g, i| g.audit_one(i, skill_path, requests))
    }

    /// The requests an audit derives from a skill's own text.
    pub fn audit_requests(&self, skill_path: &str) -> anyhow::Result<Vec<String>> {
        self.with_index(|g, i| g.audit_requests(i, skill_path))
    }

    /// Route a free-text request: no match, ambiguous, or one skill.
    pub fn route(&self, context: &str) -> anyhow::Result<RouteOutcome> {
        self.with_index(|g, i| g.route(i, context))
    }

    /// Content with inheritance applied, and all assets and scripts.
    pub fn resolve(&self, skill_path: &str) -> anyhow::Result<ResolvedSkill> {
        self.with_index(|g, i| g.resolve(i, skill_path))
    }

    /// Which file an asset or script request refers to (the path is checked first).
    pub fn locate_asset(&self, skill_path: &str, file: &str) -> anyhow::Result<AssetLocation> {
        self.with_index(|g, i| {
            g.validate_relative_path(file)?;
            g.locate_asset(i, skill_path, file)
        })
    }

    /// Locate an asset and read it (at most `max_bytes`, default the catalog's limit).
    /// Errors: invalid path, unknown skill or asset, declared but missing, too large (with
    /// sizes; an [`EngineError`] with `too-large`).
    pub fn read_asset(
        &self,
        skill_path: &str,
        file: &str,
        max_bytes: Option<u64>,
    ) -> anyhow::Result<AssetContent> {
        let location = self.locate_asset(skill_path, file)?;
        let limit = max_bytes.unwrap_or(self.inner.options.max_asset_bytes);
        let bytes = self
            .read_file(location.root, &location.path, limit)
            .with_context(|| format!("reading {file:?} of the skill {skill_path:?}"))?;
        Ok(AssetContent {
            skill_path: skill_path.to_string(),
            location,
            bytes,
        })
    }

    /// Read a file of a root (a manifest entry, an asset) with a size limit. A missing file
    /// is a `not-found` [`EngineError`], an oversized one `too-large`.
    pub fn read_file(&self, root: u32, path: &str, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
        let snapshot = self.snapshot();
        let name = self
            .inner
            .roots
            .get(root as usize)
            .map_or_else(|| format!("#{root}"), |r| r.name.clone());
        let dir = snapshot
            .roots
            .dirs
            .get(root as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| anyhow!("the skill root {name} is not available"))?;
        match read_capped(dir, path, max_bytes) {
            Ok(bytes) => Ok(bytes),
            Err(ReadError::TooLarge { size, limit }) => {
                Err(anyhow!(EngineError(EngineErrorKind::TooLarge(SizeError {
                    path: path.to_string(),
                    size,
                    limit,
                }))))
            }
            Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(anyhow!(EngineError(EngineErrorKind::NotFound(format!(
                    "{path} is declared but missing on disk (root {name})"
                )))))
            }
            Err(e) => Err(anyhow!(EngineError(EngineErrorKind::ReadFailed(format!(
                "{path} (root {name}): {e}"
            ))))),
        }
    }

    /// The entries of root `root` listed now, as an index build lists them (the engine's walk
    /// policy; symlinks reported, never followed): what an editor hands `check-skill`. Empty
    /// when the root is not available.
    pub fn listing(&self, root: u32) -> Vec<Entry> {
        let snapshot = self.snapshot();
        match snapshot
            .roots
            .dirs
            .get(root as usize)
            .and_then(Option::as_ref)
        {
            Some(dir) => walk(dir, root, &snapshot.roots.policy).entries,
            None => Vec::new(),
        }
    }

    /// The skill tree (flattened; node 0 is its root), optionally below `path`.
    pub fn tree(&self, path: Option<&str>) -> anyhow::Result<Vec<TreeNode>> {
        self.with_index(|g, i| g.tree(i, path))
    }

    /// Every file of a skill, `SKILL.md` first.
    pub fn manifest(&self, skill_path: &str) -> anyhow::Result<Vec<ManifestFile>> {
        self.with_index(|g, i| g.manifest(i, skill_path))
    }

    /// Check one skill file from its bytes with `check-skill` against this catalogue's index
    /// (what editors run): `path` relative to its root, `listing` the entries of its folder
    /// when known (may be empty; their sizes count toward the Skills extension's limits). The
    /// check says what `skills/list` does with the file in this collection.
    pub fn check_skill(
        &self,
        path: &str,
        bytes: &[u8],
        listing: &[Entry],
    ) -> anyhow::Result<SkillCheck> {
        self.with_index(|g, i| g.check_skill_in(i, path, bytes, listing))
    }

    /// Rank the draft skill file `path` (relative to its root) holding `bytes` among this
    /// collection, for each request, as a rebuilt index would (what editors run); at most
    /// `limit` skills ranked above it per request.
    pub fn score_draft(
        &self,
        path: &str,
        bytes: &[u8],
        requests: &[String],
        limit: u32,
    ) -> anyhow::Result<DraftRanking> {
        self.with_index(|g, i| g.score_draft(i, path, bytes, requests, limit))
    }

    /// Parse and check an eval file: its queries, or every problem, located.
    pub fn parse_eval_queries(
        &self,
        bytes: &[u8],
    ) -> anyhow::Result<Result<Vec<EvalQuery>, Vec<EvalProblem>>> {
        self.with_index(|g, _| g.parse_eval_queries(bytes))
    }

    /// Where a skill's eval file is (`evals/eval_queries.json` in its resource folder), and
    /// whether it exists.
    pub fn eval_file(&self, skill_path: &str) -> anyhow::Result<EvalFile> {
        self.with_index(|g, i| g.eval_file(i, skill_path))
    }

    /// The eval files that exist, one per skill that has one, sorted by skill path.
    pub fn eval_files(&self) -> anyhow::Result<Vec<EvalFile>> {
        self.with_index(|g, i| g.eval_files(i))
    }

    /// Run eval queries for a skill, each routed as `get_skill` routes a `context`.
    pub fn evaluate(
        &self,
        skill_path: &str,
        queries: &[EvalQuery],
        accept_ambiguous: bool,
    ) -> anyhow::Result<SkillEval> {
        self.with_index(|g, i| g.evaluate(i, skill_path, queries, accept_ambiguous))
    }

    /// Editors: run eval queries for the draft skill file `path` (relative to its root)
    /// holding `bytes`, as if it were in this collection (replacing the skill of its path).
    pub fn evaluate_draft(
        &self,
        path: &str,
        bytes: &[u8],
        queries: &[EvalQuery],
        accept_ambiguous: bool,
    ) -> anyhow::Result<SkillEval> {
        self.with_index(|g, i| g.evaluate_draft(i, path, bytes, queries, accept_ambiguous))
    }

    /// Every skill the Skills extension lists (with its path there), sorted by that path.
    pub fn extension_skills(&self) -> anyhow::Result<Vec<ExtensionSkill>> {
        self.with_index(|g, i| g.extension_skills(i))
    }

    /// The `SKILL.md` the Skills extension serves for a skill (by skill path), with its
    /// frontmatter as JSON.
    pub fn extension_skill_md(&self, skill_path: &str) -> anyhow::Result<ServedSkillMd> {
        self.with_index(|g, i| g.extension_skill_md(i, skill_path))
    }

    /// Every examined file with its findings, the host's included (root errors, unreadable,
    /// oversized or left-out files), sorted by root and path.
    pub fn reports(&self) -> anyhow::Result<Vec<FileReport>> {
        let snapshot = self.snapshot();
        let engine = self.with_index(|g, i| g.reports(i))?;
        let host: Vec<_> = snapshot
            .host_reports
            .iter()
            .map(crate::output::report)
            .collect();
        Ok(skills_engine::output::merge_reports(
            engine.iter().map(crate::output::report).collect(),
            &host,
        )
        .into_iter()
        .map(crate::output::report_back)
        .collect())
    }
}

impl Catalog {
    /// The findings of [`Self::reports`] alone (the engine's, then the host's for the same
    /// file), sorted by root and path.
    pub fn diagnostics(&self) -> anyhow::Result<Vec<Diagnostic>> {
        let snapshot = self.snapshot();
        let mut all = self.with_index(|g, i| g.diagnostics(i))?;
        all.extend(
            snapshot
                .host_reports
                .iter()
                .flat_map(|r| r.diagnostics.iter().cloned()),
        );
        // Stable: the engine's findings stay first for the same file.
        all.sort_by(|a, b| (a.root, &a.path).cmp(&(b.root, &b.path)));
        Ok(all)
    }
}

/// A rebuild's outcome as its callers see it.
fn rebuilt(
    received: Result<
        Result<BuildStats, Arc<anyhow::Error>>,
        tokio::sync::oneshot::error::RecvError,
    >,
) -> anyhow::Result<BuildStats> {
    match received {
        Ok(Ok(stats)) => Ok(stats),
        Ok(Err(e)) => Err(anyhow!("{e:#}")),
        Err(_) => Err(anyhow!("the rebuild failed (its thread stopped)")),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The JSON answers of the tools (`get_skill`, `list_skills`, `get_asset`), shared by
/// the CLI and the MCP server.
impl Catalog {
    /// `get_skill`: `no_match`, `ambiguous` with candidates, or the match with its
    /// content, assets, scripts and inherited ones.
    pub fn get_skill_json(&self, context: &str) -> anyhow::Result<Value> {
        use skills_engine::output as o;
        match self.route(context)? {
            RouteOutcome::NoMatch => Ok(o::no_match_json()),
            RouteOutcome::Ambiguous(hits) => Ok(o::ambiguous_json(&crate::output::hits(hits))),
            RouteOutcome::Matched(hit) => {
                let resolved = self.resolve(&hit.skill_path)?;
                Ok(o::matched_json(
                    &crate::output::hit(hit),
                    &crate::output::resolved(&resolved),
                ))
            }
        }
    }

    /// `get_skill` by skill path (`get --path`): the skill's resolved content and files, in the
    /// shape of a match without `score` and `matched_keywords`.
    pub fn skill_json(&self, skill_path: &str) -> anyhow::Result<Value> {
        let skill = self.get(skill_path)?;
        let resolved = self.resolve(&skill.skill_path)?;
        Ok(skills_engine::output::skill_json(&crate::output::resolved(
            &resolved,
        )))
    }

    /// `list_skills`: the recursive tree of `SkillNode`s (`name`, `path`, `description`,
    /// `keywords`, `assetCount`, `scriptCount`, `is_skill`, `version` when the skill has one,
    /// `children`). Without a path, the top-level
    /// nodes; with one, a one-element list holding that subtree.
    pub fn list_json(&self, path: Option<&str>) -> anyhow::Result<Value> {
        let nodes = self.tree(path)?;
        let Some(root) = nodes.first() else {
            return Ok(json!([]));
        };
        let top: Vec<SkillNode> = if path.is_none() && root.skill.is_none() && root.path.is_empty()
        {
            let children = root.children.iter().map(|&c| c as usize);
            children
                .filter(|&c| c < nodes.len() && c != 0)
                .map(|c| SkillNode::from_tree(&nodes, c))
                .collect()
        } else {
            vec![SkillNode::from_tree(&nodes, 0)]
        };
        Ok(serde_json::to_value(top)?)
    }

    /// `get_asset`: `content` (text) or `content_base64` + `mime_type` (binary, or text
    /// that is not UTF-8), `size_bytes`, `type`, and `resolved_from` when inherited.
    pub fn asset_json(
        &self,
        skill_path: &str,
        file: &str,
        max_bytes: Option<u64>,
    ) -> anyhow::Result<Value> {
        let asset = self.read_asset(skill_path, file, max_bytes)?;
        let info = &asset.location.asset;
        let mut out = serde_json::Map::new();
        out.insert("skill_path".into(), json!(skill_path));
        out.insert("file".into(), json!(info.file));
        let text = if info.is_binary {
            None
        } else {
            std::str::from_utf8(&asset.bytes).ok()
        };
        match text {
            Some(text) => {
                out.insert("content".into(), json!(text));
            }
            None => {
                out.insert(
                    "content_base64".into(),
                    json!(base64::engine::general_purpose::STANDARD.encode(&asset.bytes)),
                );
            }
        }
        out.insert("size_bytes".into(), json!(asset.bytes.len()));
        out.insert("type".into(), json!(info.asset_type));
        if text.is_none() {
            out.insert("mime_type".into(), json!(info.mime_type));
        }
        if let Some(from) = &info.from {
            out.insert("resolved_from".into(), json!(from));
        }
        Ok(Value::Object(out))
    }
}

/// An asset (`file`, `description`, `type`) or script (`file`, `description`, `execution`,
/// `args`) of a `get_skill` answer, with `from` when inherited.
pub fn asset_info_json(asset: &AssetInfo) -> Value {
    skills_engine::output::asset_info_json(&crate::output::asset(asset))
}

/// A node of the skill tree, as `list_skills` and `list --json` print it: the one builder of
/// that shape.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct SkillNode {
    pub name: String,
    pub path: String,
    /// Whether this node is a skill (otherwise a folder).
    pub is_skill: bool,
    pub description: String,
    pub keywords: Vec<String>,
    #[serde(rename = "assetCount")]
    pub asset_count: u32,
    #[serde(rename = "scriptCount")]
    pub script_count: u32,
    /// The skill's `metadata.version`, as written (absent when it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub children: Vec<SkillNode>,
}

impl SkillNode {
    /// An empty folder node at `path` (an empty subtree).
    pub fn folder(path: String) -> Self {
        SkillNode {
            name: String::new(),
            path,
            is_skill: false,
            description: String::new(),
            keywords: Vec::new(),
            asset_count: 0,
            script_count: 0,
            version: None,
            children: Vec::new(),
        }
    }

    /// Node `i` of the engine's flattened tree, recursively.
    pub fn from_tree(nodes: &[TreeNode], i: usize) -> Self {
        Self::node(nodes, i, 0)
    }

    /// Depth-bounded, and a child index out of range or pointing at itself is skipped, against
    /// a malformed tree.
    fn node(nodes: &[TreeNode], i: usize, depth: usize) -> Self {
        let Some(n) = nodes.get(i) else {
            return SkillNode::folder(String::new());
        };
        let children = if depth > 256 {
            Vec::new()
        } else {
            n.children
                .iter()
                .map(|&c| c as usize)
                .filter(|&c| c < nodes.len() && c != i)
                .map(|c| Self::node(nodes, c, depth + 1))
                .collect()
        };
        let mut node = SkillNode::folder(n.path.clone());
        node.name = n.name.clone();
        node.children = children;
        if let Some(s) = &n.skill {
            node.is_skill = true;
            node.description = s.description.clone();
            node.keywords = s.keywords.clone();
            node.asset_count = s.asset_count;
            node.script_count = s.script_count;
            node.version = s.version.clone();
        }
        node
    }
}
