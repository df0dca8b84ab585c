//! The wasmtime runtime: one engine, the embedded component compiled once, bounded stores, trap recovery.
//!
//! This module narrows wasmtime to what the host uses. The engine component (`guest/`, built by
//! `build.rs` and embedded as [`COMPONENT`]) is compiled once per process (and cached on disk,
//! keyed by the component's hash and the engine's compatibility hash), linked once into an
//! `InstancePre`, and instantiated cheaply per [`Guest`]. Every store has a memory limit, an
//! epoch deadline per call (a ticker thread advances the epoch) and an empty WASI context: no
//! preopened directories, no environment, no network. A trap fails the call that caused it
//! and poisons that [`Guest`]; the owner (the catalog) builds a fresh one for the next call.

use std::collections::VecDeque;
use std::fmt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use wasmtime::component::{Component, HasSelf, Linker, ResourceAny, ResourceTable};
use wasmtime::{Config, Engine, Store, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// The engine component, built from `guest/` for `wasm32-wasip2` by `build.rs`.
pub static COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/skills_engine.wasm"));

/// The one `bindgen!` of the host: typed access to the `skills-engine` world of `wit/`.
mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "skills-engine",
        additional_derives: [PartialEq, serde::Serialize],
    });
}

pub use bindings::skills_mcp::engine::types::{
    AccessFinding, AccessRule, Caller, CallerIdentity, HiddenSkill,
};
pub use bindings::skills_mcp::engine::types::{
    Algorithm, AssetInfo, AssetLocation, Catalogue, CatalogueTier, Diagnostic, EngineConfig, Entry,
    EntryKind, Error as EngineErrorKind, Execution, ExplainTerm, Explanation, ExtensionSkill,
    FileData, FileReport, ManifestFile, ResolvedSkill, RouteOutcome, ScriptArg, ScriptInfo,
    SearchHit, ServedSkillMd, Severity, SizeError, SkillInfo, SkillShape, SkillSummary, TreeNode,
    WalkPolicy,
};

use bindings::SkillsEngine;
use bindings::SkillsEnginePre;
pub use bindings::exports::skills_mcp::engine::engine::{
    AuditCompetitor, AuditFinding, AuditFindingKind, AuditSkill, EvalFile, EvalOutcome,
    EvalProblem, EvalQuery, EvalResult, EvalSplit, SkillEval, SkillRequests,
};
pub use bindings::exports::skills_mcp::engine::engine::{DraftRanking, SkillCheck};

impl Default for EngineConfig {
    /// The engine crate's defaults ([`skills_engine::model::EngineConfig::DEFAULT`]).
    fn default() -> Self {
        let d = skills_engine::model::EngineConfig::DEFAULT;
        Self {
            algorithm: match d.algorithm {
                skills_engine::model::Algorithm::Ranked => Algorithm::Ranked,
                skills_engine::model::Algorithm::Keywords => Algorithm::Keywords,
            },
            min_score: d.min_score,
            ambiguity_threshold: d.ambiguity_threshold,
            max_results: d.max_results,
        }
    }
}

/// Period of the epoch ticker thread.
const TICK: Duration = Duration::from_millis(10);
/// Cached compiled engines unused for this long are removed.
const CACHE_MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);
/// Most bytes of the guest's stderr (panic messages) kept per call.
const STDERR_TAIL: usize = 8 * 1024;

/// Limits of the stores the runtime creates.
#[derive(Debug, Clone)]
pub struct RuntimeOptions {
    /// Largest linear memory of a guest instance, in bytes.
    pub memory_limit: usize,
    /// Longest a single call into the guest may run before it is interrupted.
    pub call_timeout: Duration,
    /// Folder for the compiled component; `None` compiles in memory on every start.
    /// Only the first runtime of a process decides (the component is compiled once).
    pub cache_dir: Option<PathBuf>,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        Self {
            memory_limit: 512 * 1024 * 1024,
            call_timeout: Duration::from_secs(20),
            cache_dir: default_cache_dir(),
        }
    }
}

/// `$SKILLS_MCP_CACHE_DIR`, else `$XDG_CACHE_HOME/skills-mcp`, else `$HOME/.cache/skills-mcp`
/// (`%LOCALAPPDATA%\skills-mcp` on Windows); `SKILLS_MCP_CACHE_DIR=""` disables the cache.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SKILLS_MCP_CACHE_DIR") {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    // The XDG spec says a relative `XDG_CACHE_HOME` is invalid and must be ignored.
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .or_else(|| {
            if cfg!(windows) {
                std::env::var_os("LOCALAPPDATA").map(PathBuf::from)
            } else {
                std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .filter(|h| h.is_absolute())
                    .map(|h| h.join(".cache"))
            }
        })?;
    Some(base.join("skills-mcp"))
}

/// Reads files on the engine's behalf (the imported `files.read`).
pub trait FileSource: Send + Sync {
    /// Bytes of `path` (relative to root `root`), or why it could not be read.
    fn read(&self, root: u32, path: &str) -> Result<Vec<u8>, String>;
}

/// A [`FileSource`] with no files (for calls that never read).
pub struct NoFiles;

impl FileSource for NoFiles {
    fn read(&self, _root: u32, path: &str) -> Result<Vec<u8>, String> {
        Err(format!("{path}: no files are available here"))
    }
}

/// A typed failure reported by the engine (the WIT `error` variant).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineError(pub EngineErrorKind);

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            EngineErrorKind::NotFound(m) => write!(f, "not found: {m}"),
            EngineErrorKind::InvalidPath(m) => write!(f, "invalid path: {m}"),
            EngineErrorKind::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            EngineErrorKind::TooLarge(e) => write!(
                f,
                "{} is {} bytes, over the limit of {} bytes",
                e.path, e.size, e.limit
            ),
            EngineErrorKind::ReadFailed(m) => write!(f, "read failed: {m}"),
            EngineErrorKind::NotReady => write!(f, "the index is not finished"),
            EngineErrorKind::Other(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for EngineError {}

/// The engine trapped (panicked, ran out of time or memory): the call failed and the instance
/// that ran it is unusable.
#[derive(Debug, Clone)]
pub struct GuestTrap {
    /// What the host was asking for.
    pub call: String,
    /// The trap, in words.
    pub reason: String,
    /// What the guest wrote to stderr during the call (its panic message), if anything.
    pub guest_message: Option<String>,
}

impl fmt::Display for GuestTrap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the skills engine failed during `{}`: {}",
            self.call, self.reason
        )?;
        if let Some(m) = &self.guest_message {
            write!(f, " ({m})")?;
        }
        Ok(())
    }
}

impl std::error::Error for GuestTrap {}

/// Convert a wasmtime error (not a trap) to anyhow, keeping its chain as text.
fn wt(e: wasmtime::Error) -> anyhow::Error {
    anyhow::Error::from_boxed(e.into_boxed_dyn_error())
}

/// What every runtime of the process shares: the engine, the compiled component and the
/// linked `InstancePre`.
struct Shared {
    engine: Engine,
    pre: SkillsEnginePre<State>,
    start: EngineStart,
}

/// How this process got its engine ready (once): compiled, or loaded from the compiled-engine
/// cache, and how long that took (wasmtime's set-up, the compile or load, the linking).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineStart {
    pub from_cache: bool,
    pub duration: Duration,
}

impl fmt::Display for EngineStart {
    /// `engine compiled in T ms` / `engine loaded from the compiled-engine cache in T ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = if self.from_cache {
            "loaded from the compiled-engine cache"
        } else {
            "compiled"
        };
        write!(f, "engine {how} in {} ms", self.duration.as_millis())
    }
}

static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();

fn shared(cache_dir: Option<&Path>) -> anyhow::Result<&'static Shared> {
    SHARED
        .get_or_init(|| Shared::new(cache_dir).map_err(|e| format!("{e:#}")))
        .as_ref()
        .map_err(|e| anyhow!("cannot start the skills engine: {e}"))
}

impl Shared {
    fn new(cache_dir: Option<&Path>) -> anyhow::Result<Self> {
        let started = std::time::Instant::now();
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        // Operator's switch for profiling the engine with `perf`: wasmtime writes
        // /tmp/perf-PID.map, naming the compiled wasm functions (docs/performance.md).
        if std::env::var_os("SKILLS_MCP_PERFMAP").is_some_and(|v| v == "1") {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config)
            .map_err(wt)
            .context("configuring wasmtime")?;
        let (component, from_cache) = load_component(&engine, cache_dir)?;

        let mut linker = Linker::<State>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(wt)
            .context("linking WASI")?;
        SkillsEngine::add_to_linker::<State, HasSelf<State>>(&mut linker, |s| s)
            .map_err(wt)
            .context("linking the files interface")?;
        let pre = linker
            .instantiate_pre(&component)
            .map_err(wt)
            .context("linking the engine component")?;
        let pre = SkillsEnginePre::new(pre)
            .map_err(wt)
            .context("the engine component does not match wit/")?;

        let ticker = engine.clone();
        std::thread::Builder::new()
            .name("skills-engine-epoch".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(TICK);
                    ticker.increment_epoch();
                }
            })
            .context("starting the epoch ticker")?;
        let start = EngineStart {
            from_cache,
            duration: started.elapsed(),
        };
        Ok(Self { engine, pre, start })
    }
}

/// Compile [`COMPONENT`], or load the artifact a previous run of this very binary cached.
///
/// The artifact is native code, so it runs only when it is exactly what we wrote: the cache
/// folder is ours (created 0700; owned by us and not writable by others), the file is ours
/// (owned by us, a regular file not writable by others), its SHA-256 equals the one in its side
/// file (`<name>.sha256`, written after it), and that side file names the embedded component's
/// SHA-256. The file that is checked is the file that is loaded (kept open in between, and
/// mapped rather than copied on Linux: see [`Artifact::load`]).
/// On any mismatch the component is compiled (with one warning) and the cache rewritten.
/// Also says whether it came from the cache.
fn load_component(engine: &Engine, cache_dir: Option<&Path>) -> anyhow::Result<(Component, bool)> {
    let compile = || {
        Component::new(engine, COMPONENT)
            .map(|c| (c, false))
            .map_err(wt)
            .context("compiling the engine component")
    };
    let Some(dir) = cache_dir else {
        return compile();
    };
    if let Err(why) = prepare_cache_dir(dir) {
        tracing::warn!(
            "not using the compiled-engine cache {}: {why}; compiling in memory",
            crate::logsafe::EscapedPath(dir)
        );
        return compile();
    }
    let file = dir.join(cache_file_name(engine));
    match verified_artifact(&file) {
        Ok(Some(artifact)) => {
            // SAFETY: `deserialize_file` trusts its input to be a well-formed artifact produced
            // by `Component::serialize` of a compatible engine, not modified while it is mapped.
            // The file mapped is the one whose SHA-256 was just found to match the side file
            // this function wrote after serializing it (the same open file: `/proc/self/fd`),
            // in a cache folder and file owned by us and writable by no one else, and the side
            // file names the embedded component's digest (its name carries the engine's
            // `precompile_compatibility_hash`). Wasmtime also checks the artifact's header.
            // Damage (flipped bytes, truncation, another file swapped in) fails the digest and
            // is never loaded. Artifacts are only ever replaced by a rename, never written in
            // place. Anyone able to forge both files as us could replace this binary.
            #[allow(unsafe_code)]
            let loaded = unsafe { artifact.load(engine) };
            match loaded {
                Ok(component) => {
                    // Mark it as in use, so pruning (by age) spares it.
                    for used in [file.clone(), side_file(&file)] {
                        if let Ok(f) = std::fs::File::options().append(true).open(&used) {
                            let _ = f.set_modified(std::time::SystemTime::now());
                        }
                    }
                    return Ok((component, true));
                }
                Err(e) => tracing::warn!(
                    "ignoring the cached engine {}: {}; compiling it again",
                    crate::logsafe::EscapedPath(&file),
                    crate::logsafe::Escaped(format!("{e}"))
                ),
            }
        }
        // Nothing cached yet (or a cache of an older skills-mcp without a side file).
        Ok(None) => {}
        Err(why) => tracing::warn!(
            "ignoring the cached engine {}: {why}; compiling it again",
            crate::logsafe::EscapedPath(&file)
        ),
    }
    let (component, _) = compile()?;
    if let Err(e) = store_artifact(&component, dir, &file) {
        tracing::warn!(
            "could not cache the compiled engine in {}: {}",
            crate::logsafe::EscapedPath(dir),
            crate::logsafe::Escaped(format!("{e:#}"))
        );
    }
    Ok((component, false))
}

/// The side file holding `<sha256 of the artifact> <sha256 of the embedded component>`.
fn side_file(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".sha256");
    file.with_file_name(name)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Create the cache folder (0700) when missing; refuse one that is not ours or that others
/// may write to.
pub(crate) fn prepare_cache_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create it: {e}"))?;
    }
    let meta = std::fs::metadata(dir).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_dir() {
        return Err("it is not a directory".into());
    }
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(format!(
            "it is owned by uid {}, not by us (uid {me})",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "others may write to it (mode {:o})",
            meta.mode() & 0o7777
        ));
    }
    Ok(())
}

/// A compiled-engine artifact that passed every check, still open.
struct Artifact {
    file: std::fs::File,
}

impl Artifact {
    /// Load the component. On Linux the checked file is mapped (through `/proc/self/fd`, so
    /// it is the very file checked): the code is shared with the page cache and with every
    /// other server of this user, and only the pages it runs are resident; elsewhere its bytes
    /// are read and copied.
    ///
    /// # Safety
    ///
    /// As [`Component::deserialize_file`]: the file holds an artifact this engine serialized and
    /// is not modified while mapped.
    #[allow(unsafe_code)]
    unsafe fn load(self, engine: &Engine) -> wasmtime::Result<Component> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd as _;
            let path = format!("/proc/self/fd/{}", self.file.as_raw_fd());
            // SAFETY: the caller's contract.
            unsafe { Component::deserialize_file(engine, path) }
        }
        #[cfg(not(target_os = "linux"))]
        {
            use std::io::{Read as _, Seek as _};
            let mut file = self.file;
            let mut bytes = Vec::new();
            file.rewind()?;
            file.read_to_end(&mut bytes)?;
            // SAFETY: the caller's contract.
            unsafe { Component::deserialize(engine, &bytes) }
        }
    }
}

/// The artifact, open, when it passes every check; `Ok(None)` when there is no artifact or no
/// side file yet; `Err(why)` when something is there that must not be loaded. Its digest is
/// computed while reading it in chunks (it is not held in memory).
fn verified_artifact(file: &Path) -> Result<Option<Artifact>, String> {
    use sha2::Digest as _;
    use std::io::Read as _;
    use std::os::unix::fs::MetadataExt as _;
    let mut f = match std::fs::File::open(file) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot open it: {e}")),
    };
    let side = match std::fs::read_to_string(side_file(file)) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read its digest file: {e}")),
    };
    let meta = f.metadata().map_err(|e| format!("cannot read it: {e}"))?;
    let me = rustix::process::geteuid().as_raw();
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.uid() != me {
        return Err(format!(
            "it is owned by uid {}, not by us (uid {me})",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "others may write to it (mode {:o})",
            meta.mode() & 0o7777
        ));
    }
    let mut fields = side.split_whitespace();
    let (Some(want), Some(component)) = (fields.next(), fields.next()) else {
        return Err("its digest file is damaged".into());
    };
    if component != hex(component_digest()) {
        return Err("its digest file names another engine component".into());
    }
    let mut hasher = sha2::Sha256::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match f.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => hasher.update(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("cannot read it: {e}")),
        }
    }
    if hex(&hasher.finalize()) != want {
        return Err(format!(
            "its SHA-256 does not match {} (the file is damaged or was replaced)",
            side_file(file)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ));
    }
    Ok(Some(Artifact { file: f }))
}

/// SHA-256 of the embedded [`COMPONENT`] (computed by `build.rs`): what on-disk caches of the
/// engine and of its output are keyed by.
pub fn component_digest() -> &'static [u8; 32] {
    static DIGEST: &[u8; 32] = include_bytes!(concat!(env!("OUT_DIR"), "/skills_engine.sha256"));
    DIGEST
}

fn cache_file_name(engine: &Engine) -> String {
    use std::hash::{Hash, Hasher};
    let digest = component_digest();
    let component: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("engine-{component}-{:016x}.cwasm", hasher.finish())
}

fn store_artifact(component: &Component, dir: &Path, file: &Path) -> anyhow::Result<()> {
    use sha2::Digest as _;
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let bytes = component.serialize().map_err(wt)?;
    let write = |path: &Path, data: &[u8]| -> std::io::Result<()> {
        let tmp = dir.join(format!(
            ".{}-{}.tmp",
            path.file_name().unwrap_or_default().to_string_lossy(),
            std::process::id()
        ));
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::File::options()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(data)?;
        drop(f);
        std::fs::rename(&tmp, path)
    };
    // The artifact first, then its digest: a reader that sees the new digest sees the new file.
    write(file, &bytes)?;
    let digest = format!(
        "{} {}\n",
        hex(&sha2::Sha256::digest(&bytes)),
        hex(component_digest())
    );
    write(&side_file(file), digest.as_bytes())?;
    // Artifacts of other builds unused for a while are dead weight (best effort; recent ones
    // may belong to another installed build of skills-mcp that is still in use).
    let stale = std::time::SystemTime::now() - CACHE_MAX_AGE;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t < stale);
            let artifact = name.ends_with(".cwasm") || name.ends_with(".cwasm.sha256");
            if name.starts_with("engine-") && artifact && old {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    Ok(())
}

/// The data of a store: an empty WASI context, the limits and the host's files.
struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    limits: StoreLimits,
    files: Arc<dyn FileSource>,
    stderr: TailBuffer,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl bindings::skills_mcp::engine::types::Host for State {}

impl bindings::skills_mcp::engine::files::Host for State {
    fn read(&mut self, root: u32, path: String) -> Result<Vec<u8>, String> {
        self.files.read(root, &path)
    }
}

/// The guest's stderr: only its last [`STDERR_TAIL`] bytes are kept (panic messages).
#[derive(Clone, Default)]
struct TailBuffer(Arc<Mutex<VecDeque<u8>>>);

impl TailBuffer {
    fn take(&self) -> Option<String> {
        let mut buf = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let bytes: Vec<u8> = buf.drain(..).collect();
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        (!text.is_empty()).then(|| text.replace('\n', " | "))
    }
}

impl tokio::io::AsyncWrite for TailBuffer {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let mut buf = self.0.lock().unwrap_or_else(|e| e.into_inner());
        buf.extend(data);
        let excess = buf.len().saturating_sub(STDERR_TAIL);
        buf.drain(..excess);
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl wasmtime_wasi::cli::IsTerminal for TailBuffer {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl wasmtime_wasi::cli::StdoutStream for TailBuffer {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// A handle to the process-wide engine with this runtime's limits.
#[derive(Clone)]
pub struct Runtime {
    shared: &'static Shared,
    options: RuntimeOptions,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// The engine (compiled on first use in the process) with these limits.
    pub fn new(options: RuntimeOptions) -> anyhow::Result<Self> {
        let shared = shared(options.cache_dir.as_deref())?;
        Ok(Self { shared, options })
    }

    pub fn options(&self) -> &RuntimeOptions {
        &self.options
    }

    /// How the process's engine was made ready (the first runtime of the process did it).
    pub fn engine_start(&self) -> EngineStart {
        self.shared.start
    }

    /// A fresh instance of the engine reading files through `files`.
    pub fn instantiate(&self, files: Arc<dyn FileSource>) -> anyhow::Result<Guest> {
        let stderr = TailBuffer::default();
        let mut wasi = WasiCtx::builder();
        wasi.stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        let state = State {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            limits: StoreLimitsBuilder::new()
                .memory_size(self.options.memory_limit)
                .trap_on_grow_failure(true)
                .build(),
            files,
            stderr,
        };
        let mut store = Store::new(&self.shared.engine, state);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        let deadline = deadline_ticks(self.options.call_timeout);
        store.set_epoch_deadline(deadline);
        let mut guest = Guest {
            store,
            bindings: None,
            deadline,
            timeout: self.options.call_timeout,
            poisoned: None,
            trap_next_call: false,
        };
        let instance = guest.call("instantiate", |store, _| {
            self.shared.pre.instantiate(store).map(Some)
        });
        guest.bindings = instance?;
        Ok(guest)
    }
}

/// One instance of the engine in its own store. Calls are sequential (`&mut self`).
pub struct Guest {
    store: Store<State>,
    bindings: Option<SkillsEngine>,
    deadline: u64,
    timeout: Duration,
    /// Set by a trap: the reason every later call fails.
    poisoned: Option<GuestTrap>,
    trap_next_call: bool,
}

/// The epoch deadline of a call limit (in [`TICK`]s, at least one).
fn deadline_ticks(timeout: Duration) -> u64 {
    u64::try_from((timeout.as_millis() / TICK.as_millis()).max(1)).unwrap_or(u64::MAX)
}

/// An index resource living in a [`Guest`].
#[derive(Debug, Clone, Copy)]
pub struct IndexHandle(ResourceAny);

type CallResult<T> = Result<T, EngineErrorKind>;

impl Guest {
    /// Whether a trap made this instance unusable.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.is_some()
    }

    /// Run `f` with `timeout` as the limit of each call it makes, instead of the instance's
    /// own (a long one-shot call, such as a part of a big audit).
    pub fn with_call_timeout<R>(&mut self, timeout: Duration, f: impl FnOnce(&mut Self) -> R) -> R {
        let own = (self.deadline, self.timeout);
        (self.deadline, self.timeout) = (deadline_ticks(timeout), timeout);
        let r = f(self);
        (self.deadline, self.timeout) = own;
        r
    }

    /// Make the next call trap at once (epoch deadline 0), to exercise recovery in tests.
    #[doc(hidden)]
    pub fn trap_next_call(&mut self) {
        self.trap_next_call = true;
    }

    /// Run one call with a fresh deadline; a trap poisons the instance.
    fn call<R>(
        &mut self,
        what: &str,
        f: impl FnOnce(&mut Store<State>, Option<&SkillsEngine>) -> wasmtime::Result<R>,
    ) -> anyhow::Result<R> {
        if let Some(trap) = &self.poisoned {
            return Err(anyhow!(trap.clone()))
                .context(format!("the engine instance is unusable, `{what}` refused"));
        }
        let deadline = if std::mem::take(&mut self.trap_next_call) {
            0
        } else {
            self.deadline
        };
        self.store.set_epoch_deadline(deadline);
        let _ = self.store.data().stderr.take();
        let result = f(&mut self.store, self.bindings.as_ref());
        match result {
            Ok(r) => Ok(r),
            Err(e) => {
                let reason = match e.downcast_ref::<wasmtime::Trap>() {
                    Some(wasmtime::Trap::Interrupt) => {
                        format!("it ran longer than {:?} and was stopped", self.timeout)
                    }
                    Some(wasmtime::Trap::StackOverflow) => "it ran out of stack".to_string(),
                    Some(wasmtime::Trap::UnreachableCodeReached) => "it panicked".to_string(),
                    Some(trap) => format!("it trapped: {trap}"),
                    None => {
                        // Context layers (the wasm backtrace) first; the cause is last.
                        let cause = e.root_cause().to_string();
                        let cause = cause.lines().next().unwrap_or("unknown error").to_string();
                        if cause.contains("memory") {
                            format!("it ran out of memory ({cause})")
                        } else {
                            cause
                        }
                    }
                };
                let trap = GuestTrap {
                    call: what.to_string(),
                    reason,
                    guest_message: self.store.data().stderr.take(),
                };
                self.poisoned = Some(trap.clone());
                // The instance is replaced before the next call (a restart of the engine).
                crate::telemetry::metrics().engine_restarts.inc();
                Err(anyhow!(trap))
            }
        }
    }

    fn engine_call<R>(
        &mut self,
        what: &str,
        f: impl FnOnce(
            &mut Store<State>,
            &bindings::exports::skills_mcp::engine::engine::Guest,
        ) -> wasmtime::Result<R>,
    ) -> anyhow::Result<R> {
        self.call(what, |store, bindings| {
            let bindings = bindings.ok_or_else(|| wasmtime::format_err!("not instantiated"))?;
            f(store, bindings.skills_mcp_engine_engine())
        })
    }

    /// `what` is written only for an error (a search's query is not formatted when it succeeds).
    fn typed<R>(
        &mut self,
        what: impl std::fmt::Display,
        r: anyhow::Result<CallResult<R>>,
    ) -> anyhow::Result<R> {
        let _ = self;
        r?.map_err(|e| anyhow!(EngineError(e)))
            .with_context(|| what.to_string())
    }

    /// How the host must walk a root.
    pub fn walk_policy(&mut self) -> anyhow::Result<WalkPolicy> {
        self.engine_call("get-walk-policy", |s, e| e.call_get_walk_policy(s))
    }

    /// Check a relative file argument (`..`, absolute, backslash, NUL, empty segment).
    pub fn validate_relative_path(&mut self, path: &str) -> anyhow::Result<String> {
        let r = self.engine_call("validate-relative-path", |s, e| {
            e.call_validate_relative_path(s, path)
        });
        self.typed(format_args!("checking the path {path:?}"), r)
    }

    /// `text` on one line, at most `limit` characters (the engine's rule for listings).
    pub fn shorten(&mut self, text: &str, limit: u32) -> anyhow::Result<String> {
        self.engine_call("shorten", |s, e| e.call_shorten(s, text, limit))
    }

    /// Editors' check of one skill file from its bytes (`check-skill`): the findings an index
    /// build gives it and the name the Skills extension serves it under.
    pub fn check_skill(
        &mut self,
        config: &EngineConfig,
        path: &str,
        bytes: &[u8],
        listing: &[Entry],
    ) -> anyhow::Result<SkillCheck> {
        let r = self.engine_call("check-skill", |s, e| {
            e.call_check_skill(s, *config, path, bytes, listing)
        });
        self.typed(format_args!("checking the skill file {path:?}"), r)
    }

    /// Parse and check an eval file (`evals/eval_queries.json`): its queries, or every
    /// problem, located by entry or by line and column.
    pub fn parse_eval_queries(
        &mut self,
        bytes: &[u8],
    ) -> anyhow::Result<Result<Vec<EvalQuery>, Vec<EvalProblem>>> {
        self.engine_call("parse-eval-queries", |s, e| {
            e.call_parse_eval_queries(s, bytes)
        })
    }

    /// A new, empty index.
    pub fn new_index(&mut self, config: &EngineConfig) -> anyhow::Result<IndexHandle> {
        self.engine_call("index", |s, e| e.index().call_constructor(s, *config))
            .map(IndexHandle)
    }

    /// Drop an index (its guest-side destructor runs).
    pub fn drop_index(&mut self, index: IndexHandle) -> anyhow::Result<()> {
        self.call("index.drop", |s, _| index.0.resource_drop(s))
    }

    pub fn add_root(
        &mut self,
        index: IndexHandle,
        name: &str,
        listing: &[Entry],
    ) -> anyhow::Result<Vec<String>> {
        let r = self.engine_call("index.add-root", |s, e| {
            e.index().call_add_root(s, index.0, name, listing)
        });
        self.typed(format_args!("registering the root {name:?}"), r)
    }

    pub fn add_files(
        &mut self,
        index: IndexHandle,
        root: u32,
        files: &[FileData],
    ) -> anyhow::Result<()> {
        let r = self.engine_call("index.add-files", |s, e| {
            e.index().call_add_files(s, index.0, root, files)
        });
        self.typed(format_args!("adding files of root {root}"), r)
    }

    pub fn finish(&mut self, index: IndexHandle) -> anyhow::Result<()> {
        let r = self.engine_call("index.finish", |s, e| e.index().call_finish(s, index.0));
        self.typed("finishing the index", r)
    }

    pub fn len(&mut self, index: IndexHandle) -> anyhow::Result<u32> {
        let r = self.engine_call("index.len", |s, e| e.index().call_len(s, index.0));
        self.typed("counting the skills", r)
    }

    pub fn skills(&mut self, index: IndexHandle) -> anyhow::Result<Vec<SkillInfo>> {
        let r = self.engine_call("index.skills", |s, e| e.index().call_skills(s, index.0));
        self.typed("listing the skills", r)
    }

    /// Skills `start..start + count` in skill-path order, as listings show them.
    pub fn summaries(
        &mut self,
        index: IndexHandle,
        start: u32,
        count: u32,
    ) -> anyhow::Result<Vec<SkillSummary>> {
        let r = self.engine_call("index.summaries", |s, e| {
            e.index().call_summaries(s, index.0, start, count)
        });
        self.typed("listing the skills", r)
    }

    /// The catalogue text within `budget` characters, and its tier.
    pub fn catalogue(&mut self, index: IndexHandle, budget: u32) -> anyhow::Result<Catalogue> {
        let r = self.engine_call("index.catalogue", |s, e| {
            e.index().call_catalogue(s, index.0, budget)
        });
        self.typed("writing the catalogue", r)
    }

    pub fn get(&mut self, index: IndexHandle, path_or_name: &str) -> anyhow::Result<SkillInfo> {
        let r = self.engine_call("index.get", |s, e| {
            e.index().call_get(s, index.0, path_or_name)
        });
        self.typed(format_args!("looking up the skill {path_or_name:?}"), r)
    }

    pub fn suggest(
        &mut self,
        index: IndexHandle,
        path_or_name: &str,
        limit: u32,
    ) -> anyhow::Result<Vec<String>> {
        let r = self.engine_call("index.suggest", |s, e| {
            e.index().call_suggest(s, index.0, path_or_name, limit)
        });
        self.typed(format_args!("suggesting skills for {path_or_name:?}"), r)
    }

    pub fn search(
        &mut self,
        index: IndexHandle,
        query: &str,
        limit: u32,
    ) -> anyhow::Result<Vec<SearchHit>> {
        let r = self.engine_call("index.search", |s, e| {
            e.index().call_search(s, index.0, query, limit)
        });
        self.typed(format_args!("searching for {query:?}"), r)
    }

    /// [`Guest::search`] without the words each hit matched (`matched` is empty).
    pub fn search_brief(
        &mut self,
        index: IndexHandle,
        query: &str,
        limit: u32,
    ) -> anyhow::Result<Vec<SearchHit>> {
        let r = self.engine_call("index.search-brief", |s, e| {
            e.index().call_search_brief(s, index.0, query, limit)
        });
        self.typed(format_args!("searching for {query:?}"), r)
    }

    pub fn explain(
        &mut self,
        index: IndexHandle,
        query: &str,
        skill_path: &str,
    ) -> anyhow::Result<Explanation> {
        let r = self.engine_call("index.explain", |s, e| {
            e.index().call_explain(s, index.0, query, skill_path)
        });
        self.typed(format_args!("explaining {skill_path:?} for {query:?}"), r)
    }

    pub fn route(&mut self, index: IndexHandle, context: &str) -> anyhow::Result<RouteOutcome> {
        let r = self.engine_call("index.route", |s, e| {
            e.index().call_route(s, index.0, context)
        });
        self.typed(format_args!("routing {context:?}"), r)
    }

    pub fn resolve(
        &mut self,
        index: IndexHandle,
        skill_path: &str,
    ) -> anyhow::Result<ResolvedSkill> {
        let r = self.engine_call("index.resolve", |s, e| {
            e.index().call_resolve(s, index.0, skill_path)
        });
        self.typed(format_args!("resolving the skill {skill_path:?}"), r)
    }

    pub fn locate_asset(
        &mut self,
        index: IndexHandle,
        skill_path: &str,
        file: &str,
    ) -> anyhow::Result<AssetLocation> {
        let r = self.engine_call("index.locate-asset", |s, e| {
            e.index().call_locate_asset(s, index.0, skill_path, file)
        });
        self.typed(
            format_args!("locating {file:?} of the skill {skill_path:?}"),
            r,
        )
    }

    pub fn tree(
        &mut self,
        index: IndexHandle,
        path: Option<&str>,
    ) -> anyhow::Result<Vec<TreeNode>> {
        let r = self.engine_call("index.tree", |s, e| e.index().call_tree(s, index.0, path));
        self.typed(
            &match path {
                Some(p) => format!("listing the skill tree below {p:?}"),
                None => "listing the skill tree".to_string(),
            },
            r,
        )
    }

    pub fn manifest(
        &mut self,
        index: IndexHandle,
        skill_path: &str,
    ) -> anyhow::Result<Vec<ManifestFile>> {
        let r = self.engine_call("index.manifest", |s, e| {
            e.index().call_manifest(s, index.0, skill_path)
        });
        self.typed(
            format_args!("listing the files of the skill {skill_path:?}"),
            r,
        )
    }

    /// `check-skill` against the finished `index`: the findings, and the Skills extension's
    /// verdict in that collection (listed under its ext path, or left out and why).
    pub fn check_skill_in(
        &mut self,
        index: IndexHandle,
        path: &str,
        bytes: &[u8],
        listing: &[Entry],
    ) -> anyhow::Result<SkillCheck> {
        let r = self.engine_call("index.check-skill", |s, e| {
            e.index().call_check_skill(s, index.0, path, bytes, listing)
        });
        self.typed(format_args!("checking the skill file {path:?}"), r)
    }

    /// `score-draft`: the draft skill file `path` holding `bytes`, ranked among the finished
    /// `index` for each request as if it had been added to it.
    pub fn score_draft(
        &mut self,
        index: IndexHandle,
        path: &str,
        bytes: &[u8],
        requests: &[String],
        limit: u32,
    ) -> anyhow::Result<DraftRanking> {
        let r = self.engine_call("index.score-draft", |s, e| {
            e.index()
                .call_score_draft(s, index.0, path, bytes, requests, limit)
        });
        self.typed(format_args!("ranking the draft {path:?}"), r)
    }

    /// Where the eval file of a skill is (`evals/eval_queries.json` in its resource folder),
    /// and whether it exists.
    pub fn eval_file(&mut self, index: IndexHandle, skill_path: &str) -> anyhow::Result<EvalFile> {
        let r = self.engine_call("index.eval-file", |s, e| {
            e.index().call_eval_file(s, index.0, skill_path)
        });
        self.typed(
            format_args!("locating the eval file of the skill {skill_path:?}"),
            r,
        )
    }

    /// The eval files that exist, one per skill that has one, sorted by skill path.
    pub fn eval_files(&mut self, index: IndexHandle) -> anyhow::Result<Vec<EvalFile>> {
        let r = self.engine_call("index.eval-files", |s, e| {
            e.index().call_eval_files(s, index.0)
        });
        self.typed("listing the eval files", r)
    }

    /// Run eval queries for a skill, each routed as `route` routes a context.
    pub fn evaluate(
        &mut self,
        index: IndexHandle,
        skill_path: &str,
        queries: &[EvalQuery],
        accept_ambiguous: bool,
    ) -> anyhow::Result<SkillEval> {
        let r = self.engine_call("index.evaluate", |s, e| {
            e.index()
                .call_evaluate(s, index.0, skill_path, queries, accept_ambiguous)
        });
        self.typed(
            format_args!("running the eval queries of the skill {skill_path:?}"),
            r,
        )
    }

    /// Editors: run eval queries for a draft skill file as if it were in the collection.
    pub fn evaluate_draft(
        &mut self,
        index: IndexHandle,
        path: &str,
        bytes: &[u8],
        queries: &[EvalQuery],
        accept_ambiguous: bool,
    ) -> anyhow::Result<SkillEval> {
        let r = self.engine_call("index.evaluate-draft", |s, e| {
            e.index()
                .call_evaluate_draft(s, index.0, path, bytes, queries, accept_ambiguous)
        });
        self.typed(
            format_args!("running the eval queries of the draft {path:?}"),
            r,
        )
    }

    /// The collection audit: every skill's competitors and findings, worst first.
    pub fn audit(
        &mut self,
        index: IndexHandle,
        requests: &[SkillRequests],
    ) -> anyhow::Result<Vec<AuditSkill>> {
        let r = self.engine_call("index.audit", |s, e| {
            e.index().call_audit(s, index.0, requests)
        });
        self.typed("auditing the skills", r)
    }

    /// Part `part` of `parts` of the collection audit (`index.audit-part`), for
    /// `audit_merge_share`.
    pub fn audit_part(
        &mut self,
        index: IndexHandle,
        requests: &[SkillRequests],
        part: u32,
        parts: u32,
    ) -> anyhow::Result<Vec<u8>> {
        let r = self.engine_call("index.audit-part", |s, e| {
            e.index().call_audit_part(s, index.0, requests, part, parts)
        });
        self.typed(
            format_args!("auditing part {part} of {parts} of the skills"),
            r,
        )
    }

    /// Share `share` of `shares` of merging the collection audit's parts
    /// (`index.audit-merge-share`), for `audit_gather`.
    pub fn audit_merge_share(
        &mut self,
        index: IndexHandle,
        requests: &[SkillRequests],
        parts: &[Vec<u8>],
        share: u32,
        shares: u32,
    ) -> anyhow::Result<Vec<u8>> {
        let r = self.engine_call("index.audit-merge-share", |s, e| {
            e.index()
                .call_audit_merge_share(s, index.0, requests, parts, share, shares)
        });
        self.typed(
            format_args!("merging share {share} of {shares} of the audit"),
            r,
        )
    }

    /// The collection audit from all the shares of its merge (`index.audit-gather`).
    pub fn audit_gather(
        &mut self,
        index: IndexHandle,
        shares: &[Vec<u8>],
    ) -> anyhow::Result<Vec<AuditSkill>> {
        let r = self.engine_call("index.audit-gather", |s, e| {
            e.index().call_audit_gather(s, index.0, shares)
        });
        self.typed("gathering the shares of the audit", r)
    }

    /// One skill's audit (no `hijacker` finding), at one skill's cost.
    pub fn audit_one(
        &mut self,
        index: IndexHandle,
        skill_path: &str,
        requests: &[String],
    ) -> anyhow::Result<AuditSkill> {
        let r = self.engine_call("index.audit-one", |s, e| {
            e.index().call_audit_one(s, index.0, skill_path, requests)
        });
        self.typed(format_args!("auditing {skill_path:?}"), r)
    }

    /// The requests an audit derives from a skill's text.
    pub fn audit_requests(
        &mut self,
        index: IndexHandle,
        skill_path: &str,
    ) -> anyhow::Result<Vec<String>> {
        let r = self.engine_call("index.audit-requests", |s, e| {
            e.index().call_audit_requests(s, index.0, skill_path)
        });
        self.typed(format_args!("deriving the requests of {skill_path:?}"), r)
    }

    /// Every skill the Skills extension lists, sorted by ext path.
    pub fn extension_skills(&mut self, index: IndexHandle) -> anyhow::Result<Vec<ExtensionSkill>> {
        self.engine_call("index.extension-skills", |s, e| {
            e.index().call_extension_skills(s, index.0)
        })
    }

    /// The `SKILL.md` the Skills extension serves for a skill, with its frontmatter.
    pub fn extension_skill_md(
        &mut self,
        index: IndexHandle,
        skill_path: &str,
    ) -> anyhow::Result<ServedSkillMd> {
        let r = self.engine_call("index.extension-skill-md", |s, e| {
            e.index().call_extension_skill_md(s, index.0, skill_path)
        });
        self.typed(format_args!("rendering SKILL.md of {skill_path:?}"), r)
    }

    /// Set the operator's access rules on an index and check them (errors among the findings:
    /// the engine keeps the earlier rules).
    pub fn set_access(
        &mut self,
        index: IndexHandle,
        rules: &[AccessRule],
    ) -> anyhow::Result<Vec<AccessFinding>> {
        let r = self.engine_call("index.set-access", |s, e| {
            e.index().call_set_access(s, index.0, rules)
        });
        self.typed("setting the access rules", r)
    }

    /// The index as `caller` sees it: a new handle (drop it with [`Self::drop_index`]).
    pub fn view(&mut self, index: IndexHandle, caller: &Caller) -> anyhow::Result<IndexHandle> {
        let r = self.engine_call("index.view", |s, e| e.index().call_view(s, index.0, caller));
        self.typed("taking the caller's view", r).map(IndexHandle)
    }

    /// The skills `caller` may not see, with the rules that select each.
    pub fn hidden(
        &mut self,
        index: IndexHandle,
        caller: &Caller,
    ) -> anyhow::Result<Vec<HiddenSkill>> {
        let r = self.engine_call("index.hidden", |s, e| {
            e.index().call_hidden(s, index.0, caller)
        });
        self.typed("listing the hidden skills", r)
    }

    pub fn reports(&mut self, index: IndexHandle) -> anyhow::Result<Vec<FileReport>> {
        let r = self.engine_call("index.reports", |s, e| e.index().call_reports(s, index.0));
        self.typed("listing the findings", r)
    }

    /// The findings of [`Self::reports`] alone, in the same order.
    pub fn diagnostics(&mut self, index: IndexHandle) -> anyhow::Result<Vec<Diagnostic>> {
        let r = self.engine_call("index.diagnostics", |s, e| {
            e.index().call_diagnostics(s, index.0)
        });
        self.typed("listing the findings", r)
    }

    /// Number of sections of the finished index's snapshot (see [`crate::index_cache`]).
    pub fn snapshot_sections(&mut self, index: IndexHandle) -> anyhow::Result<u32> {
        let r = self.engine_call("index.snapshot-sections", |s, e| {
            e.index().call_snapshot_sections(s, index.0)
        });
        self.typed("snapshotting the index", r)
    }

    /// Section `n` of the finished index's snapshot.
    pub fn snapshot_section(&mut self, index: IndexHandle, n: u32) -> anyhow::Result<Vec<u8>> {
        let r = self.engine_call("index.snapshot-section", |s, e| {
            e.index().call_snapshot_section(s, index.0, n)
        });
        self.typed("snapshotting the index", r)
    }

    /// Read section `n` of `count` of a snapshot into a new index.
    pub fn restore_section(
        &mut self,
        index: IndexHandle,
        n: u32,
        count: u32,
        bytes: &[u8],
    ) -> anyhow::Result<()> {
        let r = self.engine_call("index.restore-section", |s, e| {
            e.index().call_restore_section(s, index.0, n, count, bytes)
        });
        self.typed("restoring the index", r)
    }
}
