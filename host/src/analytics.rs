//! Usage analytics: event tracking, batched HTTP publishing, a bounded JSONL fallback buffer,
//! and `report_usage` feedback.
//!
//! Every tool call becomes an event `{type, timestamp, server_id, data}` (plus an `id`, see below)
//! queued in memory. Every `flush_interval_seconds` the publisher appends the queued events to the
//! JSONL buffer file, then POSTs `{"events": [everything in the buffer]}` to the endpoint and
//! empties the buffer once the endpoint answers 2xx. When the endpoint is down the events simply
//! stay in the buffer and go with the next successful POST; [`Analytics::shutdown`] does a last
//! flush, so stopping the server (stdin closed, SIGINT, SIGTERM) loses nothing.
//!
//! Beyond the spec:
//! - **Durable before sent.** Events reach the buffer file before the POST, so a crash during a
//!   POST loses nothing either (the spec appends only after a failure).
//! - **At-least-once delivery.** A POST can reach the endpoint while its response is lost (timeout,
//!   connection reset, crash before the buffer is emptied); the events are then sent again with the
//!   next batch. Each event carries a unique `id` so the receiver can drop duplicates.
//! - **Bounded.** The buffer keeps at most `max_buffer_events` events (the in-memory queue too);
//!   the oldest are dropped first, logged, and counted in a `{"dropped": N}` line of the buffer that
//!   the next successful POST reports as `"dropped": N` beside `events`.
//! - **Damage-tolerant.** A corrupt or half-written buffer line (a crash mid-append) is skipped
//!   with a warning on stderr and removed; the rest is delivered.
//! - **Shared safely.** Servers sharing the buffer file take turns through `<buffer>.lock`.
//! - **Free when off.** Disabled analytics have no task and no buffer; every tracking call is one
//!   branch (the typed helpers build nothing before it).
//!
//! HTTP goes through `ureq` 3 (blocking, rustls with ring and the webpki roots, so https works
//! without system TLS libraries), on tokio's blocking pool with a timeout; redirects are not
//! followed (a POST is not replayed elsewhere) and any non-2xx answer is a failure.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead as _, BufReader, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The `analytics:` section of the configuration.
///
/// ```yaml
/// analytics:
///   enabled: false
///   endpoint: ""                 # http(s) URL; empty keeps events in the buffer file only
///   flush_interval_seconds: 30
///   buffer_path: ~/.skills-mcp/analytics-buffer.jsonl
///   max_buffer_events: 10000     # oldest dropped (and counted) beyond this
///   timeout_seconds: 10          # per POST
///   # The usage store (crate::usage), independent of the endpoint:
///   store: ""                    # "" = $XDG_STATE_HOME/skills-mcp/usage.sqlite3; a path; off
///   database_url: ""             # postgres://... replaces the SQLite file
///   record_queries: true
///   record_subjects: true        # true | hash | false
///   subject_key: ""              # the secret of `hash`
///   retention_days: 90           # 0 keeps everything
///   replica_id: ""               # default: SKILLS_MCP_REPLICA_ID, else the host name
/// ```
/// `ANALYTICS_ENDPOINT` sets `enabled: true` and the endpoint; `SKILLS_MCP_DATABASE_URL` sets
/// `database_url`, `SKILLS_MCP_SUBJECT_KEY` sets `subject_key`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnalyticsConfig {
    pub enabled: bool,
    pub endpoint: String,
    pub flush_interval_seconds: u64,
    /// JSONL file keeping events not delivered yet (a leading `~/` is the home folder).
    pub buffer_path: PathBuf,
    pub max_buffer_events: usize,
    pub timeout_seconds: u64,
    // The usage store (see crate::usage); `enabled`/`endpoint` concern the HTTP sink only.
    /// The SQLite file: "" for the default under the XDG state folder, a path, or `off`.
    pub store: String,
    /// `postgres://...`: the events go to this database instead of the SQLite file.
    pub database_url: String,
    /// Keep the request text of `no_match`, `ambiguous` and `skill_served` events.
    pub record_queries: bool,
    /// The caller's subject on events: as is, keyed hash, or not at all.
    pub record_subjects: crate::usage::RecordSubjects,
    /// The secret keying `record_subjects: hash`.
    pub subject_key: String,
    /// Events older than this many days are pruned from the store (0: never).
    pub retention_days: u32,
    /// Put beside `server_id` on every event (default: `SKILLS_MCP_REPLICA_ID`, else the host
    /// name).
    pub replica_id: String,
}

impl Default for AnalyticsConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            endpoint: String::new(),
            flush_interval_seconds: 30,
            buffer_path: PathBuf::from("~/.skills-mcp/analytics-buffer.jsonl"),
            max_buffer_events: 10_000,
            timeout_seconds: 10,
            store: String::new(),
            database_url: String::new(),
            record_queries: true,
            record_subjects: crate::usage::RecordSubjects::default(),
            subject_key: String::new(),
            retention_days: 90,
            replica_id: String::new(),
        }
    }
}

impl AnalyticsConfig {
    /// Applies `ANALYTICS_ENDPOINT`: a non-empty value enables analytics with that endpoint.
    pub fn apply_env(&mut self, env: impl Fn(&str) -> Option<String>) {
        if let Some(endpoint) = env("ANALYTICS_ENDPOINT").filter(|v| !v.trim().is_empty()) {
            self.enabled = true;
            self.endpoint = endpoint.trim().to_owned();
        }
    }

    /// The buffer file, a leading `~/` expanded.
    pub fn buffer_path(&self) -> PathBuf {
        match self.buffer_path.to_str() {
            Some(s) if s.starts_with("~/") => std::env::home_dir()
                .unwrap_or_else(|| PathBuf::from("."))
                .join(&s[2..]),
            _ => self.buffer_path.clone(),
        }
    }
}

impl crate::config::check::Section for AnalyticsConfig {
    fn check(&self, c: &mut crate::config::check::Checks) {
        c.need(
            self.endpoint.is_empty()
                || self.endpoint.starts_with("http://")
                || self.endpoint.starts_with("https://"),
            "analytics.endpoint",
            format!("{:?}", self.endpoint),
            "an http:// or https:// URL, or \"\"",
        );
        c.need(
            !(self.enabled && self.endpoint.is_empty()),
            "analytics.enabled",
            "true",
            "true only with a non-empty analytics.endpoint",
        );
        let whole = "a whole number, at least 1";
        c.at_least(
            "analytics.flush_interval_seconds",
            self.flush_interval_seconds,
            1,
            whole,
        );
        c.at_least(
            "analytics.max_buffer_events",
            self.max_buffer_events as u64,
            1,
            whole,
        );
        c.at_least("analytics.timeout_seconds", self.timeout_seconds, 1, whole);
    }
}

/// The event types and their data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum EventData {
    /// `get_skill` found nothing.
    NoMatch { context: String },
    /// `get_skill` found several close candidates.
    Ambiguous {
        context: String,
        candidates: Vec<String>,
    },
    /// `get_skill` returned a skill.
    SkillServed {
        context: String,
        skill_path: String,
        score: f64,
        matched_keywords: Vec<String>,
        was_ambiguous: bool,
        /// The served skill's `metadata.version`, as written; absent when it has none.
        #[serde(skip_serializing_if = "Option::is_none")]
        version: Option<String>,
    },
    /// `get_asset` returned content.
    AssetServed {
        skill_path: String,
        file: String,
        asset_type: String,
        is_inherited: bool,
        size_bytes: u64,
    },
    /// `run_script` completed.
    ScriptExecuted {
        skill_path: String,
        file: String,
        execution_mode: String,
        success: bool,
        /// `None` when the script was killed (timeout) or never started.
        exit_code: Option<i32>,
        duration_ms: u64,
        /// Names of the arguments given (never their values).
        args_provided: Vec<String>,
    },
    /// `report_usage` was called.
    SkillFeedback {
        skill_path: String,
        useful: bool,
        comment: Option<String>,
    },
    /// `refresh_skills` was called.
    Refresh {
        /// `git` or `local`.
        mode: String,
        success: bool,
        commit_hash: Option<String>,
        files_changed: Option<u64>,
        skills_reindexed: Option<usize>,
    },
}

/// What a flush did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlushReport {
    /// Events delivered by this flush (0 when there was nothing to send or the POST failed).
    pub sent: usize,
    /// Events left in the buffer file.
    pub buffered: usize,
    /// The dropped count reported to the endpoint by this flush.
    pub dropped_reported: u64,
    /// Corrupt buffer lines skipped by this flush.
    pub corrupt_skipped: usize,
    /// Why the POST failed.
    pub error: Option<String>,
}

/// The `report_usage` answer: whether the feedback was recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UsageRecorded {
    pub recorded: bool,
    pub message: String,
}

/// The tracker and publisher. Cheap to clone; a disabled one holds nothing.
#[derive(Clone, Default)]
pub struct Analytics {
    /// The HTTP endpoint sink.
    inner: Option<Arc<Inner>>,
    /// The usage store's recorder (see [`crate::usage`]), opened by [`Analytics::start`].
    usage: Option<Arc<crate::usage::Recorder>>,
    /// What every event carries; present whenever a sink is.
    stamp: Option<Arc<Stamp>>,
}

/// Fields put on every event (`id`, `timestamp`, `server_id`, `replica_id`, `subject`), and the
/// privacy switches applied before any sink sees it.
struct Stamp {
    server_id: String,
    replica_id: String,
    record_queries: bool,
    record_subjects: crate::usage::RecordSubjects,
    subject_key: String,
}

impl Stamp {
    fn new(config: &AnalyticsConfig) -> Self {
        let env = |k: &str| std::env::var(k).ok();
        Stamp {
            server_id: server_id(env),
            replica_id: crate::usage::replica_id(&config.replica_id, &env),
            record_queries: config.record_queries,
            record_subjects: config.record_subjects,
            subject_key: config.subject_key.clone(),
        }
    }

    /// Adds the common fields (a UUIDv7 id, unique across replicas) and applies the switches.
    fn apply(&self, map: &mut Map<String, Value>) {
        map.insert("id".into(), Value::String(uuid::Uuid::now_v7().to_string()));
        map.insert(
            "timestamp".into(),
            Value::String(iso8601(SystemTime::now())),
        );
        map.insert("server_id".into(), Value::String(self.server_id.clone()));
        map.insert("replica_id".into(), Value::String(self.replica_id.clone()));
        if let Some(subject) = crate::usage::subject::current().and_then(|s| {
            crate::usage::recorded_subject(&s, self.record_subjects, &self.subject_key)
        }) {
            map.insert("subject".into(), Value::String(subject));
        }
        if !self.record_queries
            && let Some(Value::Object(data)) = map.get_mut("data")
        {
            data.remove("context");
        }
    }
}

impl std::fmt::Debug for Analytics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Some(i) => f
                .debug_struct("Analytics")
                .field("endpoint", &i.config.endpoint)
                .field("buffer", &i.buffer_path)
                .field("usage", &self.usage)
                .finish_non_exhaustive(),
            None if self.usage.is_some() => f
                .debug_struct("Analytics")
                .field("usage", &self.usage)
                .finish_non_exhaustive(),
            None => f.write_str("Analytics(disabled)"),
        }
    }
}

struct Inner {
    config: AnalyticsConfig,
    buffer_path: PathBuf,
    queue: Mutex<VecDeque<Value>>,
    /// Events dropped from the in-memory queue, not yet written to the buffer's count.
    queue_dropped: AtomicU64,
    flush_lock: tokio::sync::Mutex<()>,
    closed: AtomicBool,
    failing: AtomicBool,
    timer: Mutex<Option<tokio::task::JoinHandle<()>>>,
    agent: ureq::Agent,
}

impl Analytics {
    /// Analytics that do nothing.
    pub fn disabled() -> Self {
        Self::default()
    }

    /// The HTTP endpoint sink for `config`, without the periodic flush (call
    /// [`Analytics::flush`] yourself, or use [`Analytics::start`]) and without the usage store.
    /// Disabled config gives [`Analytics::disabled`].
    pub fn new(config: AnalyticsConfig) -> Self {
        if !config.enabled {
            return Self::disabled();
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(config.timeout_seconds.max(1))))
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("skills-mcp/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Self {
            usage: None,
            stamp: Some(Arc::new(Stamp::new(&config))),
            inner: Some(Arc::new(Inner {
                buffer_path: config.buffer_path(),
                config,
                queue: Mutex::new(VecDeque::new()),
                queue_dropped: AtomicU64::new(0),
                flush_lock: tokio::sync::Mutex::new(()),
                closed: AtomicBool::new(false),
                failing: AtomicBool::new(false),
                timer: Mutex::new(None),
                agent,
            })),
        }
    }

    /// The server's analytics: [`Analytics::new`] plus a task flushing every
    /// `flush_interval_seconds` (needs a tokio runtime), and the usage store unless
    /// `analytics.store` is `off` (see [`crate::usage`]). Stop it with [`Analytics::shutdown`].
    pub fn start(config: AnalyticsConfig) -> Self {
        let mut this = Self::new(config.clone());
        let env = |k: &str| std::env::var(k).ok();
        if let Some(location) = crate::usage::location(&config, &env) {
            if let Some(state) = crate::usage::state_dir(&env) {
                crate::usage::make_private(&state);
            }
            let buffer = crate::usage::buffer_path(&location, &env);
            tracing::info!("usage: recording to the {location}");
            this.usage = Some(crate::usage::Recorder::start(
                location,
                buffer,
                config.max_buffer_events,
                config.retention_days,
            ));
            if this.stamp.is_none() {
                this.stamp = Some(Arc::new(Stamp::new(&config)));
            }
        }
        if let Some(inner) = &this.inner {
            let every = Duration::from_secs(inner.config.flush_interval_seconds.max(1));
            let weak: Weak<Inner> = Arc::downgrade(inner);
            let task = tokio::spawn(async move {
                let mut ticks =
                    tokio::time::interval_at(tokio::time::Instant::now() + every, every);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    ticks.tick().await;
                    let Some(inner) = weak.upgrade() else { return };
                    Analytics {
                        inner: Some(inner),
                        ..Analytics::default()
                    }
                    .flush()
                    .await;
                }
            });
            *lock(&inner.timer) = Some(task);
        }
        this
    }

    pub fn is_enabled(&self) -> bool {
        self.stamp.is_some()
    }

    /// The `server_id` put on events (`dev-{USER|USERNAME}`), when enabled.
    pub fn server_id(&self) -> Option<&str> {
        self.stamp.as_ref().map(|s| s.server_id.as_str())
    }

    /// The usage store's recorder, when one is on.
    pub fn usage(&self) -> Option<&crate::usage::Recorder> {
        self.usage.as_deref()
    }

    /// Stamps an event and hands it to every sink.
    fn emit(&self, mut map: Map<String, Value>) {
        let Some(stamp) = &self.stamp else { return };
        stamp.apply(&mut map);
        if let Some(usage) = &self.usage {
            let event = Value::Object(map);
            usage.record(&event);
            let Value::Object(m) = event else { return };
            map = m;
        }
        if let Some(inner) = &self.inner {
            inner.enqueue(map);
        }
    }

    /// The buffer file, when enabled.
    pub fn buffer_path(&self) -> Option<&Path> {
        self.inner.as_ref().map(|i| i.buffer_path.as_path())
    }

    /// Queues an event.
    pub fn track(&self, data: EventData) {
        self.track_with(|| data);
    }

    /// Queues the event `make` builds; `make` runs only when analytics are enabled.
    pub fn track_with(&self, make: impl FnOnce() -> EventData) {
        if self.stamp.is_none() {
            return;
        }
        let data = make();
        let value = serde_json::to_value(&data).unwrap_or(Value::Null);
        if let Value::Object(map) = value {
            self.emit(map);
        }
    }

    /// Queues an event of any type with any data (an object).
    pub fn track_raw(&self, event_type: &str, data: Value) {
        if self.stamp.is_none() {
            return;
        }
        let mut map = Map::new();
        map.insert("type".into(), Value::String(event_type.to_owned()));
        map.insert("data".into(), data);
        self.emit(map);
    }

    /// `no_match`.
    pub fn no_match(&self, context: &str) {
        self.track_with(|| EventData::NoMatch {
            context: context.to_owned(),
        });
    }

    /// `ambiguous`.
    pub fn ambiguous<S: AsRef<str>>(&self, context: &str, candidates: &[S]) {
        self.track_with(|| EventData::Ambiguous {
            context: context.to_owned(),
            candidates: candidates.iter().map(|c| c.as_ref().to_owned()).collect(),
        });
    }

    /// `skill_served` (`version`: the served skill's `metadata.version`).
    pub fn skill_served<S: AsRef<str>>(
        &self,
        context: &str,
        skill_path: &str,
        version: Option<&str>,
        score: f64,
        matched_keywords: &[S],
        was_ambiguous: bool,
    ) {
        self.track_with(|| EventData::SkillServed {
            version: version.map(str::to_owned),
            context: context.to_owned(),
            skill_path: skill_path.to_owned(),
            score,
            matched_keywords: matched_keywords
                .iter()
                .map(|k| k.as_ref().to_owned())
                .collect(),
            was_ambiguous,
        });
    }

    /// `asset_served`.
    pub fn asset_served(
        &self,
        skill_path: &str,
        file: &str,
        asset_type: &str,
        is_inherited: bool,
        size_bytes: u64,
    ) {
        self.track_with(|| EventData::AssetServed {
            skill_path: skill_path.to_owned(),
            file: file.to_owned(),
            asset_type: asset_type.to_owned(),
            is_inherited,
            size_bytes,
        });
    }

    /// `script_executed` (`args_provided`: argument names, never values).
    #[allow(clippy::too_many_arguments)]
    pub fn script_executed<S: AsRef<str>>(
        &self,
        skill_path: &str,
        file: &str,
        execution_mode: &str,
        success: bool,
        exit_code: Option<i32>,
        duration_ms: u64,
        args_provided: &[S],
    ) {
        self.track_with(|| EventData::ScriptExecuted {
            skill_path: skill_path.to_owned(),
            file: file.to_owned(),
            execution_mode: execution_mode.to_owned(),
            success,
            exit_code,
            duration_ms,
            args_provided: args_provided
                .iter()
                .map(|a| a.as_ref().to_owned())
                .collect(),
        });
    }

    /// `skill_feedback`.
    pub fn skill_feedback(&self, skill_path: &str, useful: bool, comment: Option<&str>) {
        self.track_with(|| EventData::SkillFeedback {
            skill_path: skill_path.to_owned(),
            useful,
            comment: comment.map(str::to_owned),
        });
    }

    /// `refresh`.
    pub fn refresh(
        &self,
        mode: &str,
        success: bool,
        commit_hash: Option<&str>,
        files_changed: Option<u64>,
        skills_reindexed: Option<usize>,
    ) {
        self.track_with(|| EventData::Refresh {
            mode: mode.to_owned(),
            success,
            commit_hash: commit_hash.map(str::to_owned),
            files_changed,
            skills_reindexed,
        });
    }

    /// `report_usage` for a skill the caller has checked exists: logs the feedback to
    /// stderr, tracks `skill_feedback` and returns the answer.
    pub fn report_usage(
        &self,
        skill_path: &str,
        useful: bool,
        comment: Option<&str>,
    ) -> UsageRecorded {
        match comment {
            Some(c) => {
                tracing::info!(
                    "feedback: {}: useful={useful} comment={c:?}",
                    crate::logsafe::Escaped(skill_path)
                )
            }
            None => tracing::info!(
                "feedback: {}: useful={useful}",
                crate::logsafe::Escaped(skill_path)
            ),
        }
        self.skill_feedback(skill_path, useful, comment);
        UsageRecorded {
            recorded: true,
            message: format!("Feedback recorded for {skill_path}"),
        }
    }

    /// Events queued in memory (not yet written to the buffer).
    pub fn pending(&self) -> usize {
        self.inner.as_ref().map_or(0, |i| lock(&i.queue).len())
    }

    /// Writes the queued events to the buffer and sends the whole buffer (see the module docs).
    /// Flushes never overlap; a disabled tracker returns at once.
    pub async fn flush(&self) -> FlushReport {
        let Some(inner) = &self.inner else {
            return FlushReport::default();
        };
        let _turn = inner.flush_lock.lock().await;
        let new: Vec<Value> = lock(&inner.queue).drain(..).collect();
        let dropped = inner.queue_dropped.swap(0, Ordering::AcqRel);
        let worker = Arc::clone(inner);
        match tokio::task::spawn_blocking(move || worker.flush_blocking(new, dropped)).await {
            Ok(report) => report,
            Err(e) => FlushReport {
                error: Some(format!("analytics flush failed: {e}")),
                ..FlushReport::default()
            },
        }
    }

    /// Stops the periodic flush and flushes one last time; events tracked afterwards are written
    /// straight to the buffer file (sent by the next run). The usage store's writer writes what
    /// is buffered and stops (waiting at most 10 s). Idempotent. Call it when the server stops
    /// (stdin closed, SIGINT, SIGTERM).
    pub async fn shutdown(&self) -> FlushReport {
        if let Some(usage) = self.usage.clone() {
            let _ =
                tokio::task::spawn_blocking(move || usage.shutdown(Duration::from_secs(10))).await;
        }
        let Some(inner) = &self.inner else {
            return FlushReport::default();
        };
        inner.closed.store(true, Ordering::Release);
        if let Some(task) = lock(&inner.timer).take() {
            task.abort();
        }
        self.flush().await
    }
}

impl Inner {
    fn enqueue(&self, map: Map<String, Value>) {
        let event = Value::Object(map);
        if self.closed.load(Ordering::Acquire) {
            // After shutdown there is no flush left to run: keep the event on disk.
            if let Err(e) = self.with_buffer_lock(|| self.append(&[event], 0)) {
                tracing::warn!("analytics: could not buffer an event after shutdown: {e}");
            }
            return;
        }
        let mut queue = lock(&self.queue);
        queue.push_back(event);
        let max = self.config.max_buffer_events.max(1);
        if queue.len() > max {
            let excess = queue.len() - max;
            queue.drain(..excess);
            drop(queue);
            self.queue_dropped
                .fetch_add(excess as u64, Ordering::AcqRel);
            crate::telemetry::metrics()
                .analytics_dropped
                .inc_by(excess as u64);
            tracing::warn!(
                "analytics: more than {max} events waiting; dropped the {excess} oldest"
            );
        }
    }

    fn flush_blocking(&self, new: Vec<Value>, dropped: u64) -> FlushReport {
        match self.with_buffer_lock(|| self.flush_locked(&new, dropped)) {
            Ok(report) => report,
            Err(e) => {
                // The buffer is unusable (permissions, disk full): put the events back in memory.
                let mut queue = lock(&self.queue);
                for event in new.into_iter().rev() {
                    queue.push_front(event);
                }
                self.queue_dropped.fetch_add(dropped, Ordering::AcqRel);
                let msg = format!("analytics buffer {}: {e}", self.buffer_path.display());
                tracing::warn!("analytics: {}", crate::logsafe::Escaped(&msg));
                FlushReport {
                    error: Some(msg),
                    ..FlushReport::default()
                }
            }
        }
    }

    /// Runs `f` holding `<buffer>.lock` (servers sharing the buffer take turns).
    fn with_buffer_lock<T>(&self, f: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
        if let Some(dir) = self
            .buffer_path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir)?;
        }
        let mut lock_path = self.buffer_path.clone().into_os_string();
        lock_path.push(".lock");
        let lock_file = crate::usage::private_file()
            .create(true)
            .truncate(false)
            .write(true)
            .open(PathBuf::from(lock_path))?;
        lock_file.lock()?;
        let result = f();
        drop(lock_file);
        result
    }

    fn flush_locked(&self, new: &[Value], dropped_now: u64) -> std::io::Result<FlushReport> {
        let mut report = FlushReport::default();
        if !new.is_empty() || dropped_now > 0 {
            self.append(new, dropped_now)?;
        }
        let contents = read_buffer(&self.buffer_path)?;
        let mut events = contents.events;
        let mut dropped = contents.dropped;
        report.corrupt_skipped = contents.corrupt;
        if contents.corrupt > 0 {
            tracing::warn!(
                "analytics: skipped {} corrupt line(s) of {}",
                contents.corrupt,
                self.buffer_path.display()
            );
        }
        let max = self.config.max_buffer_events.max(1);
        let excess = events.len().saturating_sub(max);
        if excess > 0 {
            events.drain(..excess);
            dropped += excess as u64;
            crate::telemetry::metrics()
                .analytics_dropped
                .inc_by(excess as u64);
            tracing::warn!(
                "analytics: buffer over {max} events; dropped the {excess} oldest \
                 ({dropped} dropped since the last delivery)"
            );
        }
        if excess > 0 || contents.corrupt > 0 || contents.dropped_lines > 1 {
            self.rewrite(&events, dropped)?;
        }
        report.buffered = events.len();
        if self.config.endpoint.is_empty() || (events.is_empty() && dropped == 0) {
            return Ok(report);
        }

        let mut payload = Map::new();
        let count = events.len();
        payload.insert("events".into(), Value::Array(events));
        if dropped > 0 {
            payload.insert("dropped".into(), json!(dropped));
        }
        let body = serde_json::to_vec(&Value::Object(payload)).unwrap_or_default();
        match self.post(&body) {
            Ok(()) => {
                crate::usage::private_file()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(&self.buffer_path)?;
                if self.failing.swap(false, Ordering::AcqRel) {
                    tracing::info!("analytics: endpoint reachable again; delivered {count} events");
                }
                report.sent = count;
                report.buffered = 0;
                report.dropped_reported = dropped;
            }
            Err(e) => {
                if !self.failing.swap(true, Ordering::AcqRel) {
                    tracing::warn!(
                        "analytics: {}; keeping {count} events in {} for the next try",
                        crate::logsafe::Escaped(e.to_string()),
                        self.buffer_path.display()
                    );
                }
                report.error = Some(e);
            }
        }
        Ok(report)
    }

    /// POSTs `body`; Ok only for a 2xx answer.
    fn post(&self, body: &[u8]) -> Result<(), String> {
        let endpoint = &self.config.endpoint;
        match self
            .agent
            .post(endpoint)
            .header("Content-Type", "application/json")
            .send(body)
        {
            Ok(mut response) => {
                let status = response.status();
                // Read the (small) answer so the connection can be reused.
                let _ = response
                    .body_mut()
                    .with_config()
                    .limit(64 * 1024)
                    .read_to_vec();
                if status.is_success() {
                    Ok(())
                } else {
                    Err(format!("endpoint {endpoint} answered {status}"))
                }
            }
            Err(e) => Err(format!("could not reach {endpoint}: {e}")),
        }
    }

    /// Appends events (and a dropped count) as JSON lines, after a newline if the file ends with a
    /// half-written line.
    fn append(&self, events: &[Value], dropped: u64) -> std::io::Result<()> {
        let mut out = Vec::new();
        if dropped > 0 {
            out.extend_from_slice(json!({ "dropped": dropped }).to_string().as_bytes());
            out.push(b'\n');
        }
        for event in events {
            out.extend_from_slice(event.to_string().as_bytes());
            out.push(b'\n');
        }
        append_lines(&self.buffer_path, &out)?.sync_data()
    }

    /// Replaces the buffer with `events` (and the dropped count), through a temporary file.
    fn rewrite(&self, events: &[Value], dropped: u64) -> std::io::Result<()> {
        let mut tmp = self.buffer_path.clone().into_os_string();
        tmp.push(format!(".tmp-{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        {
            let mut file = crate::usage::private_file()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&tmp)?;
            let mut out = Vec::new();
            if dropped > 0 {
                out.extend_from_slice(json!({ "dropped": dropped }).to_string().as_bytes());
                out.push(b'\n');
            }
            for event in events {
                out.extend_from_slice(event.to_string().as_bytes());
                out.push(b'\n');
            }
            file.write_all(&out)?;
            file.sync_data()?;
        }
        std::fs::rename(&tmp, &self.buffer_path)
    }
}

struct BufferContents {
    events: Vec<Value>,
    dropped: u64,
    dropped_lines: usize,
    corrupt: usize,
}

/// Appends `bytes` (whole JSON lines) to a buffer file, after a newline when the file ends with
/// a half-written line; returns the file for a caller that syncs it. The analytics sink and the
/// usage store's buffer both append through here.
pub(crate) fn append_lines(path: &Path, bytes: &[u8]) -> std::io::Result<std::fs::File> {
    let mut file = crate::usage::private_file()
        .create(true)
        .append(true)
        .read(true)
        .open(path)?;
    let mut out = Vec::with_capacity(bytes.len() + 1);
    let len = file.metadata()?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            out.push(b'\n');
        }
    }
    out.extend_from_slice(bytes);
    file.write_all(&out)?;
    Ok(file)
}

/// Reads the buffer: event lines (objects with a string `type`), dropped-count lines
/// (`{"dropped": N}`), and anything else counted as corrupt.
fn read_buffer(path: &Path) -> std::io::Result<BufferContents> {
    let mut contents = BufferContents {
        events: Vec::new(),
        dropped: 0,
        dropped_lines: 0,
        corrupt: 0,
    };
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(contents),
        Err(e) => return Err(e),
    };
    for line in BufReader::new(file).split(b'\n') {
        let line = line?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(&line) {
            Ok(Value::Object(map)) if map.get("type").is_some_and(Value::is_string) => {
                contents.events.push(Value::Object(map));
            }
            Ok(Value::Object(map)) if map.len() == 1 && map.contains_key("dropped") => {
                match map.get("dropped").and_then(Value::as_u64) {
                    Some(n) => {
                        contents.dropped += n;
                        contents.dropped_lines += 1;
                    }
                    None => contents.corrupt += 1,
                }
            }
            _ => contents.corrupt += 1,
        }
    }
    Ok(contents)
}

/// `dev-{USER}` (or `USERNAME` on Windows), `dev-unknown` when neither is set.
pub fn server_id(env: impl Fn(&str) -> Option<String>) -> String {
    let user = env("USER")
        .filter(|u| !u.is_empty())
        .or_else(|| env("USERNAME").filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "unknown".to_owned());
    format!("dev-{user}")
}

/// `t` as ISO 8601 in UTC with milliseconds: `2026-02-18T14:30:00.000Z`.
pub fn iso8601(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
