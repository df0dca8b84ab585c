//! The usage store: every analytics event recorded in a database the server owns, and the
//! report `skills-mcp stats` reads from it.
//!
//! - **Where.** SQLite at `$XDG_STATE_HOME/skills-mcp/usage.sqlite3` (else
//!   `~/.local/state/skills-mcp/usage.sqlite3`), created on first use; `analytics.store` (or
//!   `--usage-db`) is another path or `off`. `analytics.database_url` /
//!   `SKILLS_MCP_DATABASE_URL` (`postgres://...`, TLS by `sslmode`, see [`pg`]) replaces the file,
//!   so several replicas write to one database.
//! - **Off the request path.** Recording an event appends one line to a buffer file (a `write`,
//!   no database round trip, so a SIGKILL loses nothing the kernel had); a writer thread moves the
//!   buffer to the database in batches, one transaction each. Event ids are UUIDv7 and the insert
//!   skips an id already stored, so a batch delivered twice (a crash between the commit and the
//!   buffer's trim, two servers sharing the buffer) is stored once.
//! - **Database down.** Events wait in the buffer (at most `analytics.max_buffer_events`; the
//!   oldest are dropped beyond and an `events_dropped` event counts them) and go when it returns.
//!   A corrupt file, a wrong password, a database that disappears: one warning naming the store,
//!   retries with a back-off, the server keeps serving.
//! - **Privacy.** `record_queries`, `record_subjects` (`true`, `hash`, `false`) and
//!   `retention_days` are applied by [`crate::analytics`] before an event reaches any sink, and by
//!   the writer's pruning.
//!
//! The HTTP endpoint sink of [`crate::analytics`] is independent: its own buffer file and
//! delivery, so each sink has its own delivery position.

pub mod pg;
pub mod stats;
pub mod store;
pub mod subject;
pub mod time;

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::Digest as _;

pub use store::{Location, Store};

/// `analytics.record_subjects`: keep the caller's subject, a keyed hash of it, or nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecordSubjects {
    #[default]
    Yes,
    Hash,
    No,
}

impl Serialize for RecordSubjects {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RecordSubjects::Yes => s.serialize_bool(true),
            RecordSubjects::No => s.serialize_bool(false),
            RecordSubjects::Hash => s.serialize_str("hash"),
        }
    }
}

impl<'de> Deserialize<'de> for RecordSubjects {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bool(bool),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Bool(true) => Ok(RecordSubjects::Yes),
            Raw::Bool(false) => Ok(RecordSubjects::No),
            Raw::Text(t) => match t.as_str() {
                "true" => Ok(RecordSubjects::Yes),
                "false" => Ok(RecordSubjects::No),
                "hash" => Ok(RecordSubjects::Hash),
                other => Err(serde::de::Error::custom(format!(
                    "{other:?}; allowed: true, hash, false"
                ))),
            },
        }
    }
}

/// The state folder: `$XDG_STATE_HOME/skills-mcp` (an absolute path), else
/// `$HOME/.local/state/skills-mcp`.
pub fn state_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(x) = env("XDG_STATE_HOME").filter(|x| Path::new(x).is_absolute()) {
        return Some(PathBuf::from(x).join("skills-mcp"));
    }
    env("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".local/state/skills-mcp"))
}

/// Files created 0600 (read and written by their owner alone): they hold request texts and
/// caller subjects. An existing file keeps its mode (see [`make_private`]).
pub(crate) fn private_file() -> OpenOptions {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut options = OpenOptions::new();
    options.mode(0o600);
    options
}

/// The state folder made private, once per start (the server, `stats`): created 0700 by the
/// rule the compiled-engine cache folder follows ([`crate::runtime::prepare_cache_dir`]); one
/// that already exists loses the group and other bits (0700), and so do the files in it (0600:
/// the usage store, its `-wal` and `-shm`, the buffers and their lock files), when they are
/// ours. One warning says what was changed. Only the state folder: a folder the operator named
/// (`--usage-db`, `analytics.store`) keeps its mode, and so does the file named there.
pub fn make_private(dir: &Path) {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let me = rustix::process::geteuid().as_raw();
    let mut changed = Vec::new();
    let mut tighten = |path: &Path, meta: &std::fs::Metadata| {
        let was = meta.mode() & 0o7777;
        if meta.uid() != me || was & 0o077 == 0 {
            return;
        }
        let now = was & !0o077;
        match std::fs::set_permissions(path, std::fs::Permissions::from_mode(now)) {
            Ok(()) => changed.push(format!(
                "{} {was:o} -> {now:o}",
                crate::logsafe::EscapedPath(path)
            )),
            Err(e) => tracing::warn!(
                "usage: cannot make {} private ({was:o} -> {now:o}): {e}",
                crate::logsafe::EscapedPath(path)
            ),
        }
    };
    if let Ok(meta) = std::fs::symlink_metadata(dir)
        && meta.is_dir()
    {
        tighten(dir, &meta);
    }
    if let Err(why) = crate::runtime::prepare_cache_dir(dir) {
        tracing::warn!(
            "usage: the state folder {}: {why}",
            crate::logsafe::EscapedPath(dir)
        );
        return;
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            // Not through a symbolic link: only the files themselves.
            if let Ok(meta) = entry.path().symlink_metadata()
                && meta.is_file()
            {
                tighten(&entry.path(), &meta);
            }
        }
    }
    if !changed.is_empty() {
        tracing::warn!(
            "usage: made private (others could read the usage records): {}",
            changed.join(", ")
        );
    }
}

/// Where the events go for this configuration: None when `analytics.store` is `off` (or no
/// state folder is known for the default file).
pub fn location(
    config: &crate::analytics::AnalyticsConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<Location> {
    let store = config.store.trim();
    if store == "off" {
        return None;
    }
    if !config.database_url.trim().is_empty() {
        return Some(Location::Postgres(config.database_url.trim().to_owned()));
    }
    if store.is_empty() {
        return state_dir(env).map(|d| Location::Sqlite(d.join("usage.sqlite3")));
    }
    Some(Location::Sqlite(expand_home(store, env)))
}

/// A leading `~/` as the home folder.
pub fn expand_home(path: &str, env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    match (path.strip_prefix("~/"), env("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The buffer file of a store: in the state folder (beside the SQLite file when there is none),
/// one per store.
pub fn buffer_path(location: &Location, env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let identity = match location {
        Location::Sqlite(p) => p.display().to_string(),
        Location::Postgres(url) => pg::redact(url),
    };
    let digest = sha2::Sha256::digest(identity.as_bytes());
    let name = format!(
        "usage-buffer-{}.jsonl",
        digest[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let dir = state_dir(env)
        .or_else(|| match location {
            Location::Sqlite(p) => p.parent().map(Path::to_path_buf),
            Location::Postgres(_) => None,
        })
        .unwrap_or_else(std::env::temp_dir);
    dir.join(name)
}

/// The replica id put beside `server_id` on every event: `analytics.replica_id`, else
/// `SKILLS_MCP_REPLICA_ID`, else the host name (a container's own), else `unknown`.
pub fn replica_id(configured: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let pick = |s: Option<String>| s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    pick(Some(configured.to_owned()))
        .or_else(|| pick(env("SKILLS_MCP_REPLICA_ID")))
        .or_else(|| pick(std::fs::read_to_string("/proc/sys/kernel/hostname").ok()))
        .or_else(|| pick(std::fs::read_to_string("/etc/hostname").ok()))
        .or_else(|| pick(env("HOSTNAME")))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// `subject` as recorded under `mode`: itself, `hmac:` + HMAC-SHA256 keyed with `key` (16 bytes
/// in hex; None without a key, so an unkeyed hash that could be reversed by guessing is never
/// written), or None.
pub fn recorded_subject(subject: &str, mode: RecordSubjects, key: &str) -> Option<String> {
    match mode {
        RecordSubjects::Yes => Some(subject.to_owned()),
        RecordSubjects::No => None,
        RecordSubjects::Hash if key.is_empty() => None,
        RecordSubjects::Hash => {
            let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key.as_bytes());
            let tag = ring::hmac::sign(&key, subject.as_bytes());
            Some(format!(
                "hmac:{}",
                tag.as_ref()[..16]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            ))
        }
    }
}

/// The recording side: appends events to the buffer, and a thread delivers them.
pub struct Recorder {
    location: Location,
    buffer: PathBuf,
    max_events: usize,
    retention_days: u32,
    wake: Mutex<Wake>,
    signal: Condvar,
    done: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
}

#[derive(Default)]
struct Wake {
    pending: bool,
    stop: bool,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("location", &self.location.to_string())
            .field("buffer", &self.buffer)
            .finish_non_exhaustive()
    }
}

/// How long the writer lets events gather after the first one before a batch.
const GATHER: Duration = Duration::from_millis(200);
/// The longest wait between two tries while the database is down.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Rows per transaction.
const BATCH: usize = 5_000;

impl Recorder {
    /// Starts the writer thread for `location`; nothing is opened in the caller (a database that
    /// is down does not delay start-up).
    pub fn start(
        location: Location,
        buffer: PathBuf,
        max_events: usize,
        retention_days: u32,
    ) -> Arc<Recorder> {
        let (tx, rx) = std::sync::mpsc::channel();
        let recorder = Arc::new(Recorder {
            location,
            buffer,
            max_events: max_events.max(1),
            retention_days,
            wake: Mutex::new(Wake {
                pending: true,
                stop: false,
            }),
            signal: Condvar::new(),
            done: Mutex::new(Some(rx)),
        });
        let worker = Arc::clone(&recorder);
        let spawned = std::thread::Builder::new()
            .name("usage-writer".into())
            .spawn(move || {
                worker.run();
                let _ = tx.send(());
            });
        if let Err(e) = spawned {
            tracing::warn!("usage: could not start the writer: {e}");
        }
        recorder
    }

    pub fn location(&self) -> &Location {
        &self.location
    }

    pub fn buffer(&self) -> &Path {
        &self.buffer
    }

    /// Appends `event` to the buffer (one `write` under the buffer's lock) and wakes the writer.
    pub fn record(&self, event: &Value) {
        let mut line = event.to_string();
        line.push('\n');
        if let Err(e) = with_lock(&self.buffer, || append(&self.buffer, line.as_bytes())) {
            tracing::warn!(
                "usage: could not buffer an event in {}: {e}",
                self.buffer.display()
            );
        }
        crate::telemetry::metrics().analytics_pending.inc();
        let mut wake = lock(&self.wake);
        wake.pending = true;
        self.signal.notify_one();
    }

    /// Stops the writer after a last delivery (waits up to `wait`). Idempotent.
    pub fn shutdown(&self, wait: Duration) {
        {
            let mut wake = lock(&self.wake);
            wake.stop = true;
            self.signal.notify_one();
        }
        if let Some(rx) = lock(&self.done).take() {
            let _ = rx.recv_timeout(wait);
        }
    }

    fn run(&self) {
        let mut store: Option<Store> = None;
        let mut failing = false;
        let mut backoff = Duration::from_millis(500);
        let mut last_prune: Option<std::time::Instant> = None;
        loop {
            let stop = {
                let mut wake = lock(&self.wake);
                while !wake.pending && !wake.stop {
                    let (w, _) = self
                        .signal
                        .wait_timeout(wake, Duration::from_secs(1))
                        .unwrap_or_else(|e| e.into_inner());
                    wake = w;
                    // A server sharing the buffer may have appended: look every second.
                    if !wake.pending && !wake.stop {
                        wake.pending = self.buffer.metadata().is_ok_and(|m| m.len() > 0);
                    }
                }
                wake.pending = false;
                wake.stop
            };
            if !stop {
                std::thread::sleep(GATHER);
            }
            match self.deliver(&mut store) {
                Ok(sent) => {
                    if failing {
                        tracing::info!(
                            "usage: {} reachable again; {sent} events written",
                            self.location
                        );
                        failing = false;
                    }
                    backoff = Duration::from_millis(500);
                    if self.retention_days > 0
                        && store.is_some()
                        && last_prune.is_none_or(|t| t.elapsed() > Duration::from_secs(3600))
                    {
                        last_prune = Some(std::time::Instant::now());
                        let before = time::now_ms() - i64::from(self.retention_days) * time::DAY_MS;
                        if let Some(s) = store.as_mut()
                            && let Err(e) = s.prune(before)
                        {
                            tracing::warn!("usage: pruning: {e:#}");
                        }
                    }
                }
                Err(e) => {
                    store = None;
                    if !failing {
                        tracing::warn!(
                            "usage: {}; events wait in {} and are written when it works again",
                            crate::logsafe::Escaped(format!("{e:#}")),
                            self.buffer.display()
                        );
                        failing = true;
                    }
                    if stop {
                        return;
                    }
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    lock(&self.wake).pending = true;
                }
            }
            if stop {
                return;
            }
        }
    }

    /// Moves the buffer to the database. Only one writer (of any process sharing the buffer)
    /// delivers at a time; appends go on meanwhile. Returns the events written.
    fn deliver(&self, store: &mut Option<Store>) -> anyhow::Result<usize> {
        let writer_lock = lock_path(&self.buffer, "writer.lock");
        let turn = match open_lock_file(&writer_lock) {
            Ok(f) => f,
            Err(e) => anyhow::bail!("usage buffer {}: {e}", self.buffer.display()),
        };
        match turn.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(0),
            Err(std::fs::TryLockError::Error(e)) => {
                anyhow::bail!("usage buffer {}: {e}", self.buffer.display())
            }
        }
        let bytes = with_lock(&self.buffer, || read_all(&self.buffer))
            .map_err(|e| anyhow::anyhow!("usage buffer {}: {e}", self.buffer.display()))?;
        if bytes.is_empty() {
            if store.is_none() {
                *store = Some(Store::open(&self.location)?);
            }
            return Ok(0);
        }
        let (rows, corrupt) = parse(&bytes);
        if corrupt > 0 {
            tracing::warn!(
                "usage: skipped {corrupt} corrupt line(s) of {}",
                self.buffer.display()
            );
        }
        let result = (|| -> anyhow::Result<()> {
            if store.is_none() {
                *store = Some(Store::open(&self.location)?);
            }
            let s = store.as_mut().expect("opened above");
            for chunk in rows.chunks(BATCH) {
                s.insert(chunk)?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            self.bound()?;
            return Err(e);
        }
        // Written: drop the delivered prefix; lines appended meanwhile stay.
        let delivered = bytes.len() as u64;
        with_lock(&self.buffer, || drop_prefix(&self.buffer, delivered))
            .map_err(|e| anyhow::anyhow!("usage buffer {}: {e}", self.buffer.display()))?;
        settle_pending(rows.len());
        Ok(rows.len())
    }

    /// Keeps at most `max_events` waiting: the oldest beyond are dropped, and an
    /// `events_dropped` event (first in the buffer) counts them.
    fn bound(&self) -> anyhow::Result<()> {
        let max = self.max_events;
        let buffer = &self.buffer;
        let dropped = with_lock(buffer, || {
            let bytes = read_all(buffer)?;
            let lines: Vec<&[u8]> = bytes
                .split(|b| *b == b'\n')
                .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
                .collect();
            if lines.len() <= max {
                return Ok(0);
            }
            let excess = lines.len() - max + 1;
            let mut count = excess as u64;
            for line in &lines[..excess] {
                if let Ok(v) = serde_json::from_slice::<Value>(line)
                    && v.get("type").and_then(Value::as_str) == Some("events_dropped")
                {
                    // An earlier count dropped now: carried over, not counted as an event.
                    count += v["data"]["count"].as_u64().unwrap_or(0);
                    count -= 1;
                }
            }
            let mut out = dropped_event(count).to_string().into_bytes();
            out.push(b'\n');
            for line in &lines[excess..] {
                out.extend_from_slice(line);
                out.push(b'\n');
            }
            replace(buffer, &out)?;
            Ok(excess)
        })
        .map_err(|e| anyhow::anyhow!("usage buffer {}: {e}", buffer.display()))?;
        if dropped > 0 {
            let m = crate::telemetry::metrics();
            m.analytics_dropped.inc_by(dropped as u64);
            settle_pending(dropped);
            tracing::warn!(
                "usage: more than {max} events waiting for {}; dropped the {dropped} oldest",
                self.location
            );
        }
        Ok(())
    }
}

/// `n` events left the buffer (written or dropped): `skills_mcp_analytics_events_pending`
/// counts this process's events still waiting (never below 0: a buffer shared by several
/// servers may deliver another's).
fn settle_pending(n: usize) {
    let pending = &crate::telemetry::metrics().analytics_pending;
    let left = pending.dec_by(i64::try_from(n).unwrap_or(i64::MAX)) - i64::try_from(n).unwrap_or(0);
    if left < 0 {
        pending.inc_by(-left);
    }
}

/// The event counting `count` events dropped from a full buffer.
fn dropped_event(count: u64) -> Value {
    json!({
        "id": uuid::Uuid::now_v7().to_string(),
        "type": "events_dropped",
        "timestamp": crate::analytics::iso8601(std::time::SystemTime::now()),
        "server_id": crate::analytics::server_id(|k| std::env::var(k).ok()),
        "replica_id": replica_id("", &|k| std::env::var(k).ok()),
        "data": {"count": count},
    })
}

/// The rows of the buffer's lines, and how many lines were not events (a line half-written by a
/// crash, damage).
pub fn parse(bytes: &[u8]) -> (Vec<store::Row>, usize) {
    let mut rows = Vec::new();
    let mut corrupt = 0;
    for line in bytes.split(|b| *b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(line)
            .ok()
            .as_ref()
            .and_then(store::Row::from_event)
        {
            Some(row) => rows.push(row),
            None => corrupt += 1,
        }
    }
    (rows, corrupt)
}

fn lock_path(buffer: &Path, suffix: &str) -> PathBuf {
    let mut p = buffer.as_os_str().to_owned();
    p.push(".");
    p.push(suffix);
    PathBuf::from(p)
}

fn open_lock_file(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    private_file()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

/// Runs `f` holding `<buffer>.lock` (appends and trims of every process take turns).
fn with_lock<T>(buffer: &Path, f: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    let file = open_lock_file(&lock_path(buffer, "lock"))?;
    file.lock()?;
    let result = f();
    drop(file);
    result
}

/// Appends `bytes`, after a newline when the file ends with a half-written line.
fn append(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::analytics::append_lines(path, bytes).map(drop)
}

fn read_all(path: &Path) -> std::io::Result<Vec<u8>> {
    match std::fs::read(path) {
        Ok(b) => Ok(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Removes the first `n` bytes (already delivered).
fn drop_prefix(path: &Path, n: u64) -> std::io::Result<()> {
    let bytes = read_all(path)?;
    let rest = bytes.get(n as usize..).unwrap_or_default();
    if rest.is_empty() {
        return private_file()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map(drop);
    }
    replace(path, rest)
}

/// Replaces the file's contents through a temporary file.
fn replace(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    {
        let mut file = private_file()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        file.write_all(contents)?;
        file.sync_data()?;
    }
    std::fs::rename(&tmp, path)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
