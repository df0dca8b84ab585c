//! The MCP server (rmcp): tools, resources, prompts and the Skills extension, whatever the
//! transport (the start-up and the transports are [`crate::serve`]'s).
//!
//! Everything here is protocol plumbing: every rule about skills is asked of the engine through
//! the catalogue ([`crate::catalog`]), and every log line goes to stderr (stdout is the
//! protocol).
//!
//! # Layout
//! - this module: [`SkillsServer`] (the `ServerHandler`), per-snapshot derived data ([`View`]),
//!   change notifications;
//! - `tools`: the tools, one `#[tool]` method each;
//! - `extension`: the Skills extension (`skills/list`, `skills/get`), `resources/*` and the
//!   `skill://` URI mapping;
//! - `prompts`: every skill as a prompt, and completion;
//! - `reload`: the file watcher and debounced rebuilds;
//!
//! # Adding a tool (scripts, analytics, git)
//! Add one `#[tool(...)]` method to the `#[tool_router] impl SkillsServer` block in
//! `mcp/tools.rs` (its input is `Parameters<T>` with `T: Deserialize + JsonSchema`, with
//! `#[serde(deny_unknown_fields)]`; errors the model should read are `Err(String)`). Shared state
//! it needs goes in [`Services`] as an `Option<Arc<...>>` field, filled in by the start-up
//! ([`crate::serve::run`]) and by tests through [`SkillsServer::with_services`].

mod arguments;
pub(crate) mod discovery;
mod extension;
mod prompts;
mod reload;
mod search_thread;
mod tools;

use std::{
    collections::HashSet,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use anyhow::{Context as _, Result};
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, tool::ToolCallContext},
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
        CompleteResult, ContentBlock, ErrorCode, GetPromptRequestParams, GetPromptResponse,
        GetSkillRequestParams, GetSkillResult, Implementation, ListPromptsResult,
        ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
        PaginatedRequestParams, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
        ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
        SubscriptionFilter,
    },
    service::{NotificationContext, Peer, RequestContext, SubscriptionContext},
};
use tokio::sync::broadcast;

use crate::{
    catalog::{Catalog, CatalogOptions, RootSpec as CatalogRoot},
    config::{self, Config, Loaded},
    runtime::{
        Algorithm, EngineConfig, EngineError, EngineErrorKind, ExtensionSkill, Severity,
        SkillSummary,
    },
};

pub use reload::{WatchGuard, Watching, start_watching};

/// Shared state of other features (scripts, analytics, git), each optional.
///
/// Add a field `pub name: Option<Arc<Thing>>` here; [`crate::serve::run`] fills it in.
#[derive(Default, Clone)]
#[non_exhaustive]
pub struct Services {
    /// `run_script`'s runner (its concurrency slots are shared by every call); when absent,
    /// [`SkillsServer::with_services`] makes one from the `scripts` section.
    pub scripts: Option<Arc<crate::scripts::ScriptRunner>>,
    /// Usage analytics: every tool tracks its event here (disabled unless configured).
    pub analytics: crate::analytics::Analytics,
    /// The git sources, when configured: `refresh_skills` syncs them (git mode).
    pub git: Option<Arc<crate::sources::Sources>>,
    /// Served over HTTP on a non-loopback address: a request without a verified identity is
    /// anonymous (on loopback, and over stdio, it is the local operator; see [`crate::access`]).
    pub public_http: bool,
}

/// The MCP server: cheap to clone (all state behind one `Arc`).
#[derive(Clone)]
pub struct SkillsServer {
    inner: Arc<Inner>,
    /// Shared by the clones (one per request and more): a clone copies no tool description.
    tool_router: Arc<ToolRouter<Self>>,
}

struct Inner {
    catalog: Catalog,
    config: Arc<Config>,
    /// Bumped by every change of the access rules (the views follow it and the catalogue's
    /// [`Catalog::generation`]).
    generation: AtomicU64,
    /// The last catalogue generation whose findings were logged and whose change was notified
    /// (one caller does it for each rebuild, whoever shared it).
    announced: AtomicU64,
    services: Services,
    /// Derived data for the catalogue's current snapshot.
    view: Mutex<Option<Arc<View>>>,
    /// Derived data of callers' views under access rules (most recently used last).
    caller_views: Mutex<Vec<(crate::runtime::Caller, Arc<View>)>>,
    /// The `access` section in force (replaced by a reload).
    access: std::sync::RwLock<Arc<config::AccessConfig>>,
    /// One message per catalogue change (for `subscriptions/listen`).
    changes: broadcast::Sender<()>,
    /// Peers of `initialize` sessions, told about changes with list-changed notifications.
    peers: tokio::sync::Mutex<Vec<Peer<RoleServer>>>,
    /// Diagnostics already printed (so a rebuild prints only new ones).
    reported: Mutex<HashSet<String>>,
    /// Sessions whose log events are forwarded (`notifications/message`), with their level.
    log_clients: Mutex<Vec<(Peer<RoleServer>, crate::logging::ClientLevel)>>,
    /// Where searches run ([`SkillsServer::searching`]).
    searches: search_thread::SearchThread,
}

/// What the server derives from one catalogue snapshot (built on first use after a change).
pub(crate) struct View {
    /// The catalogue (its current index answers).
    pub catalog: Catalog,
    /// The access rules' and the catalogue's generations this view was made at.
    pub generation: (u64, u64),
    /// Every skill's path and name, sorted by skill path (the rest of a skill is asked of the
    /// engine when a request needs it: pages of descriptions, one skill's frontmatter).
    pub skills: Vec<Listed>,
    /// The server instructions, catalogue included.
    pub instructions: String,
    /// The `get_skill` description, catalogue included (under 2,048 characters).
    pub get_skill_description: String,
    /// Every skill the Skills extension lists, with its path there, sorted by that path (the
    /// engine decides both).
    pub ext: Vec<ExtensionSkill>,
    /// The hash of each `ext` entry's skill path and its index, ordered (a search result's URI
    /// is found by bisection).
    pub ext_by_skill: Vec<(u64, u32)>,
    /// Skills extension entries built so far.
    pub extension: extension::Cache,
    /// The discovery index of this view, once asked for.
    pub discovery: discovery::Cache,
}

/// A skill as the server keeps it for listings and lookups.
pub(crate) struct Listed {
    pub skill_path: String,
    pub name: String,
}

/// The summary of `view.skills[i]` from a page the engine gave for the skills from `first` on;
/// asked again by path when the catalogue changed since the view was made (the page no longer
/// lines up), `None` when the skill is gone.
pub(crate) fn summary_of(
    view: &View,
    page: &[SkillSummary],
    first: usize,
    i: usize,
) -> Option<SkillSummary> {
    let listed = view.skills.get(i)?;
    match i.checked_sub(first).and_then(|k| page.get(k)) {
        Some(s) if s.skill_path == listed.skill_path => Some(s.clone()),
        _ => view.catalog.get(&listed.skill_path).ok().and_then(|info| {
            (info.skill_path == listed.skill_path).then_some(SkillSummary {
                skill_path: info.skill_path,
                name: info.name,
                description: info.description,
            })
        }),
    }
}

/// Callers whose views' derived data is kept.
const CALLER_VIEWS: usize = 64;

/// Skills asked of the engine per call when listing them all.
const SUMMARY_PAGE: u32 = 1024;

/// Most characters of the catalogue part of the server instructions.
pub const INSTRUCTIONS_CATALOGUE_BUDGET: usize = 24_000;
/// Longest tool description (one widely used client cuts descriptions there).
pub const MAX_TOOL_DESCRIPTION: usize = 2_047;

/// How [`SkillsServer::log_findings`] tells the engine's findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Findings {
    /// Every finding, at its level (live reload: a few at a time, worth each a line).
    Each,
    /// Errors one by one; warnings and shadowing counted in one line, listed at debug level.
    Summary,
}

/// What a file's findings are, for the start-up summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum FindingKind {
    Error,
    Warning,
    Shadowed,
}

/// The files with findings, by kind (a file counts once per kind).
#[derive(Default)]
struct FindingCounts(std::collections::BTreeSet<(FindingKind, u32, String)>);

impl FindingCounts {
    fn add(&mut self, root: u32, path: &str, kind: FindingKind) {
        self.0.insert((kind, root, path.to_owned()));
    }

    /// `N files have findings (E with errors, W with warnings, S shadowed); ...`, or `None`
    /// when there are none.
    fn line(&self) -> Option<String> {
        let files: std::collections::BTreeSet<(u32, &str)> =
            self.0.iter().map(|(_, r, p)| (*r, p.as_str())).collect();
        if files.is_empty() {
            return None;
        }
        let count = |kind| self.0.iter().filter(|(k, _, _)| *k == kind).count();
        let kinds: Vec<String> = [
            (FindingKind::Error, "with errors (listed above)"),
            (FindingKind::Warning, "with warnings"),
            (FindingKind::Shadowed, "shadowed by a later root"),
        ]
        .into_iter()
        .map(|(kind, what)| (count(kind), what))
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        Some(format!(
            "{} skill files have findings: {}; `skills-mcp validate` lists them \
             (`--log-level debug` logs each here)",
            files.len(),
            kinds.join(", ")
        ))
    }
}

impl SkillsServer {
    /// A server over `catalog` (already built) with `config`. Call it where blocking is allowed
    /// (not on an async thread): it asks the engine for the catalogue.
    pub fn new(catalog: Catalog, config: Config) -> Self {
        Self::with_services(catalog, config, Services::default())
    }

    /// A server with the shared state of other features.
    pub fn with_services(catalog: Catalog, config: Config, mut services: Services) -> Self {
        if services.scripts.is_none() {
            let runner = crate::scripts::ScriptRunner::new(config.scripts.clone());
            services.scripts = Some(Arc::new(runner));
        }
        let (changes, _) = broadcast::channel(16);
        let access = Arc::new(config.access.clone());
        let server = Self {
            inner: Arc::new(Inner {
                catalog,
                config: Arc::new(config),
                generation: AtomicU64::new(0),
                announced: AtomicU64::new(0),
                services,
                view: Mutex::new(None),
                caller_views: Mutex::new(Vec::new()),
                access: std::sync::RwLock::new(access),
                changes,
                peers: tokio::sync::Mutex::new(Vec::new()),
                reported: Mutex::new(HashSet::new()),
                log_clients: Mutex::new(Vec::new()),
                searches: search_thread::SearchThread::start().expect("starting the search thread"),
            }),
            tool_router: Arc::new(Self::tool_router()),
        };
        // The first view now, off the async threads (`get_info` never computes one).
        server.view();
        server
    }

    pub fn catalog(&self) -> &Catalog {
        &self.inner.catalog
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// `name` as a metric label: the tool's name when the server has that tool, else
    /// `_OTHER` (a client cannot grow the label set).
    pub fn tool_label(&self, name: &str) -> std::borrow::Cow<'static, str> {
        match self.tool_router.get(name) {
            Some(tool) => tool.name.clone(),
            None => crate::telemetry::metrics::OTHER.into(),
        }
    }

    pub fn services(&self) -> &Services {
        &self.inner.services
    }

    /// The generations a view made now is made at (the access rules', the catalogue's).
    fn generation(&self) -> (u64, u64) {
        (
            self.inner.generation.load(Ordering::SeqCst),
            self.inner.catalog.generation(),
        )
    }

    /// The view of the current snapshot (rebuilt when the catalogue changed).
    pub(crate) fn view(&self) -> Arc<View> {
        let generation = self.generation();
        let mut guard = self.inner.view.lock().expect("view lock");
        if let Some(view) = guard.as_ref()
            && view.generation == generation
        {
            return view.clone();
        }
        let view = Arc::new(View::new(
            self.inner.catalog.clone(),
            generation,
            &self.tool_router,
        ));
        *guard = Some(view.clone());
        view
    }

    /// The view `caller` reads: the full one for `unrestricted` or without rules, else the
    /// caller's (its catalogue a [`Catalog::view_as`], derived data computed once per caller
    /// and catalogue change, kept for the most recent callers).
    pub(crate) fn view_for(&self, caller: &crate::runtime::Caller) -> Arc<View> {
        if matches!(caller, crate::runtime::Caller::Unrestricted)
            || !self.inner.catalog.has_access_rules()
        {
            return self.view();
        }
        let generation = self.generation();
        let mut views = self.inner.caller_views.lock().expect("views lock");
        views.retain(|(_, v)| v.generation == generation);
        if let Some(k) = views.iter().position(|(c, _)| c == caller) {
            let entry = views.remove(k);
            let view = entry.1.clone();
            views.push(entry);
            return view;
        }
        let view = Arc::new(View::new(
            self.inner.catalog.view_as(caller.clone()),
            generation,
            &self.tool_router,
        ));
        if views.len() >= CALLER_VIEWS {
            views.remove(0);
        }
        views.push((caller.clone(), view.clone()));
        view
    }

    /// The catalogue as the caller of the current request sees it ([`crate::access::current`]).
    pub(crate) fn caller_catalog(&self) -> Catalog {
        self.inner.catalog.view_as(crate::access::current())
    }

    /// The caller of a request (see [`crate::access::of_request`]).
    pub(crate) fn caller_of(&self, extensions: &rmcp::model::Extensions) -> crate::runtime::Caller {
        let access = self.access();
        crate::access::of_request(extensions, &access, self.inner.services.public_http)
    }

    /// Under access rules, the server instructions (catalogue included) as the caller of a
    /// request sees them; `None` without rules (then [`ServerHandler::get_info`]'s are theirs).
    async fn caller_instructions(&self, extensions: &rmcp::model::Extensions) -> Option<String> {
        if !self.inner.catalog.has_access_rules() {
            return None;
        }
        let caller = self.caller_of(extensions);
        Some(crate::access::scope(caller, self.blocking(|_, v| v.instructions.clone())).await)
    }

    /// The `access` section in force.
    pub fn access(&self) -> Arc<config::AccessConfig> {
        self.inner
            .access
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Apply a new `access` section (a reload): its rules are checked by the engine first; with
    /// an error nothing changes and the error comes back. Blocking.
    pub fn set_access(&self, access: config::AccessConfig) -> Result<()> {
        crate::access::apply(&self.inner.catalog, &access)?;
        *self.inner.access.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(access);
        self.inner.generation.fetch_add(1, Ordering::SeqCst);
        self.view();
        Ok(())
    }

    /// Run `f` on the view of the current request's caller ([`crate::access::current`]), off
    /// the async threads (engine calls block). The one place a request's view is picked.
    pub(crate) async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&SkillsServer, &View) -> T + Send + 'static,
    ) -> T {
        tokio::task::spawn_blocking(self.on_view(f))
            .await
            .expect("an engine call panicked")
    }

    /// As [`Self::blocking`], for a search: on the server's search thread, in arrival order
    /// ([`search_thread`]).
    pub(crate) async fn searching<T: Send + 'static>(
        &self,
        f: impl FnOnce(&SkillsServer, &View) -> T + Send + 'static,
    ) -> T {
        self.inner.searches.run(self.on_view(f)).await
    }

    /// `f` as a call for another thread: the request's caller, usage subject and span taken
    /// along, `f` given the caller's view there.
    fn on_view<T>(
        &self,
        f: impl FnOnce(&SkillsServer, &View) -> T + Send + 'static,
    ) -> impl FnOnce() -> T + Send + 'static {
        let server = self.clone();
        let subject = crate::usage::subject::current();
        // A child of the request's span when traces are exported.
        let span = crate::child_span!("index read");
        let caller = crate::access::current();
        move || {
            let _span = span.enter();
            crate::usage::subject::in_blocking(subject, || {
                let view = server.view_for(&caller);
                f(&server, &view)
            })
        }
    }

    /// Rebuild the index (off the async threads), then tell every client: the one call a git
    /// refresh, the file watcher, `refresh_skills` or any other feature makes after files under
    /// the roots changed. Callers arriving during a rebuild share the next one
    /// ([`Catalog::rebuild`]); each rebuild's findings are logged and its change notified once.
    /// Returns the number of skills.
    pub async fn reindex(&self) -> Result<usize> {
        let stats = self.inner.catalog.rebuild_async().await?;
        let generation = self.inner.catalog.generation();
        if self.inner.announced.fetch_max(generation, Ordering::SeqCst) < generation {
            let server = self.clone();
            tokio::task::spawn_blocking(move || {
                server.view();
                server.log_reports();
                // The previous index and its view are freed by now: give their memory back
                // (an idle server would keep it otherwise), and the code only a rebuild runs.
                crate::allocator::release_freed();
                crate::allocator::release_clean_file_pages();
            })
            .await
            .context("logging the rebuilt index's findings panicked")?;
            self.notify_changed().await;
        }
        Ok(stats.skills as usize)
    }

    /// The log level of `peer`'s session, forwarding the server's client-facing log events to
    /// it from the first call on (warning and above until `logging/setLevel` says otherwise).
    fn log_client(&self, peer: &Peer<RoleServer>) -> crate::logging::ClientLevel {
        let same = |other: &Peer<RoleServer>| match (peer.peer_info(), other.peer_info()) {
            (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
            _ => false,
        };
        let mut clients = self.inner.log_clients.lock().expect("log clients lock");
        clients.retain(|(p, _)| !p.is_transport_closed());
        if let Some((_, level)) = clients.iter().find(|(p, _)| same(p)) {
            return level.clone();
        }
        let level = crate::logging::forward_to(peer.clone());
        clients.push((peer.clone(), level.clone()));
        level
    }

    /// Log the engine's findings not logged before: warnings, errors and shadowing, one event
    /// each (`root/path:line: message`), so that an MCP client with the `logging` capability
    /// sees a skill that breaks during live reload.
    pub fn log_reports(&self) {
        self.log_findings(Findings::Each);
    }

    /// Log the engine's findings not logged before, as `how` says: every one at its level, or
    /// (at start-up, where a large corpus has hundreds) errors one by one and the rest counted
    /// in one summary line, each of them at debug level.
    pub fn log_findings(&self, how: Findings) {
        let catalog = &self.inner.catalog;
        let mut seen = self.inner.reported.lock().expect("reported lock");
        let diagnostics = match catalog.diagnostics() {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(
                    "no validation reports: {}",
                    crate::logsafe::Escaped(format!("{e:#}"))
                );
                return;
            }
        };
        let mut summary = FindingCounts::default();
        for d in &diagnostics {
            let shadowing = d.message.to_ascii_lowercase().contains("shadow");
            if d.severity == Severity::Info && !shadowing {
                continue;
            }
            let line = d.line.map(|l| format!(":{l}")).unwrap_or_default();
            // Paths and messages come from skill files: escaped, so they cannot forge lines.
            let text = format!(
                "{}/{}{line}: {}",
                crate::logsafe::Escaped(
                    catalog
                        .roots()
                        .get(d.root as usize)
                        .map_or_else(|| format!("root {}", d.root), |r| r.name.clone())
                ),
                crate::logsafe::Escaped(&d.path),
                crate::logsafe::Escaped(&d.message)
            );
            if !seen.insert(format!("{:?} {text}", d.severity)) {
                continue;
            }
            match (how, d.severity) {
                (_, Severity::Error) => {
                    summary.add(d.root, &d.path, FindingKind::Error);
                    tracing::error!("{text}");
                }
                (Findings::Each, Severity::Warning) => tracing::warn!("{text}"),
                (Findings::Each, Severity::Info) => tracing::info!("{text}"),
                (Findings::Summary, severity) => {
                    let kind = if shadowing {
                        FindingKind::Shadowed
                    } else {
                        FindingKind::Warning
                    };
                    summary.add(d.root, &d.path, kind);
                    match severity {
                        Severity::Warning => tracing::debug!("warning: {text}"),
                        _ => tracing::debug!("{text}"),
                    }
                }
            }
        }
        if how == Findings::Summary
            && let Some(line) = summary.line()
        {
            tracing::warn!("{line}");
        }
    }

    /// Tell every client that skills, prompts, resources and tool descriptions changed.
    pub async fn notify_changed(&self) {
        let _ = self.inner.changes.send(());
        let mut peers = self.inner.peers.lock().await;
        let mut alive = Vec::with_capacity(peers.len());
        for peer in peers.drain(..) {
            let sent = async {
                peer.notify_resource_list_changed().await?;
                peer.notify_prompt_list_changed().await?;
                peer.notify_tool_list_changed().await
            }
            .await;
            if sent.is_ok() {
                alive.push(peer);
            }
        }
        *peers = alive;
    }

    /// Serve one connection (any rmcp transport) until it closes.
    pub async fn serve_transport<T, E, A>(self, transport: T) -> Result<()>
    where
        T: rmcp::transport::IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running = crate::telemetry::Observed::new(self)
            .serve(transport)
            .await
            .context("starting the MCP session")?;
        running.waiting().await.context("serving MCP")?;
        Ok(())
    }
}

/// The engine's own failure inside an error, if it is one.
pub(crate) fn engine_kind(e: &anyhow::Error) -> Option<&EngineErrorKind> {
    e.downcast_ref::<EngineError>().map(|e| &e.0)
}

/// The message of an error for a client: the engine's message, or the whole chain.
pub(crate) fn message(e: &anyhow::Error) -> String {
    match e.downcast_ref::<EngineError>() {
        Some(engine) => engine.to_string(),
        None => format!("{e:#}"),
    }
}

/// Every skill's path and name, as the view keeps them.
fn list_skills(catalog: &Catalog) -> anyhow::Result<Vec<Listed>> {
    let total = catalog.len()?;
    let mut listed = Vec::with_capacity(total as usize);
    let mut start = 0;
    while start < total {
        let page = catalog.summaries(start, SUMMARY_PAGE)?;
        if page.is_empty() {
            break;
        }
        start += page.len() as u32;
        listed.extend(page.into_iter().map(|s| Listed {
            skill_path: s.skill_path,
            name: s.name,
        }));
    }
    Ok(listed)
}

/// The engine's catalogue text within `budget` characters; empty (with an error on stderr)
/// when the engine cannot give it.
fn catalogue(catalog: &Catalog, budget: usize) -> String {
    let budget = u32::try_from(budget).unwrap_or(u32::MAX);
    catalog
        .catalogue(budget)
        .map(|c| c.text)
        .unwrap_or_else(|e| {
            tracing::error!("writing the catalogue failed: {e:#}");
            String::new()
        })
}

impl View {
    fn new(catalog: Catalog, generation: (u64, u64), router: &ToolRouter<SkillsServer>) -> Self {
        let skills = list_skills(&catalog).unwrap_or_else(|e| {
            tracing::error!(
                "listing the skills failed: {}",
                crate::logsafe::Escaped(format!("{e:#}"))
            );
            Vec::new()
        });
        let instructions = format!(
            "{}\n{}",
            tools::INSTRUCTIONS,
            catalogue(&catalog, INSTRUCTIONS_CATALOGUE_BUDGET)
        );
        let base = router
            .get("get_skill")
            .and_then(|t| t.description.as_deref().map(str::to_string))
            .unwrap_or_default();
        let budget = MAX_TOOL_DESCRIPTION.saturating_sub(base.chars().count() + 2);
        let get_skill_description = format!("{base}\n\n{}", catalogue(&catalog, budget));
        let ext = catalog.extension_skills().unwrap_or_else(|e| {
            tracing::error!("listing the Skills extension's skills failed: {e:#}");
            Vec::new()
        });
        let ext_by_skill = extension::by_skill_path(&ext);
        Self {
            catalog,
            generation,
            skills,
            ext,
            ext_by_skill,
            instructions,
            get_skill_description,
            extension: extension::Cache::default(),
            discovery: discovery::Cache::default(),
        }
    }
}

impl ServerHandler for SkillsServer {
    #[allow(deprecated)] // `enable_logging`: rmcp marks MCP logging deprecated (SEP-2577).
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_completions()
            .enable_skills_with_directory_read()
            .enable_logging()
            .build();
        // The latest view's (never computed here: engine calls must not run on async threads).
        // Under access rules the catalogue is the caller's: `initialize` and `server/discover`
        // put it in; without a caller, none.
        let instructions = if self.inner.catalog.has_access_rules() {
            tools::INSTRUCTIONS.to_string()
        } else {
            self.inner
                .view
                .lock()
                .expect("view lock")
                .as_ref()
                .map_or_else(
                    || tools::INSTRUCTIONS.to_string(),
                    |v| v.instructions.clone(),
                )
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("skills-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions)
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        if let Some(instructions) = self.caller_instructions(&context.extensions).await {
            result.instructions = Some(instructions);
        }
        Ok(result)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::DiscoverResult, ErrorData> {
        let mut result = rmcp::model::DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        );
        if let Some(instructions) = self.caller_instructions(&context.extensions).await {
            result.instructions = Some(instructions);
        }
        Ok(result)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.log_client(&context.peer);
        let mut peers = self.inner.peers.lock().await;
        // Sessions come and go over HTTP: forget the closed ones here, not only at a change.
        peers.retain(|p| !p.is_transport_closed());
        peers.push(context.peer);
    }

    #[allow(deprecated)] // MCP logging: deprecated by SEP-2577 in rmcp, still what clients use.
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_client(&context.peer).set(request.level);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        accepted.resources_list_changed = requested.resources_list_changed;
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.inner.changes.subscribe();
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                change = changes.recv() => {
                    if let Err(broadcast::error::RecvError::Closed) = change {
                        return Ok(());
                    }
                    let sink = context.sink();
                    let accepted = context.accepted().clone();
                    if accepted.resources_list_changed == Some(true) {
                        let _ = sink.notify_resource_list_changed().await;
                    }
                    if accepted.prompts_list_changed == Some(true) {
                        let _ = sink.notify_prompt_list_changed().await;
                    }
                    if accepted.tools_list_changed == Some(true) {
                        let _ = sink.notify_tool_list_changed().await;
                    }
                }
            }
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.caller_of(&context.extensions);
        let view = crate::access::scope(
            caller,
            self.blocking(|_, v| v.get_skill_description.clone()),
        )
        .await;
        let tools = self
            .tool_router
            .list_all()
            .into_iter()
            .map(|mut tool| {
                if tool.name == "get_skill" {
                    tool.description = Some(view.clone().into());
                }
                tool
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tool_router.get(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let arguments = request.arguments.clone().unwrap_or_default();
        // The caller's authenticated subject, for the events this call records.
        let subject = crate::usage::subject::of_request(&context.extensions);
        let caller = self.caller_of(&context.extensions);
        let tcc = ToolCallContext::new(self, request, context);
        let explain = |message: &str| {
            let schema = self
                .tool_router
                .get(&name)
                .map(|t| t.input_schema.as_ref().clone())
                .unwrap_or_default();
            let text = arguments::explain(&name, &schema, &arguments, message);
            CallToolResult::error(vec![ContentBlock::text(text)])
        };
        let call = crate::access::scope(caller, self.tool_router.call(tcc));
        match crate::usage::subject::scope(subject, call).await {
            // rmcp answers arguments that do not deserialize with serde's message; name the
            // argument instead (still a tool error, for the model to fix).
            Ok(CallToolResponse::Complete(result))
                if result.is_error == Some(true)
                    && result.content.len() == 1
                    && result.content[0]
                        .as_text()
                        .is_some_and(|t| t.text.starts_with(arguments::DESERIALIZE_PREFIX)) =>
            {
                let message = result.content[0]
                    .as_text()
                    .map(|t| t.text.clone())
                    .unwrap_or_default();
                Ok(explain(&message).into())
            }
            Err(e) if e.code == ErrorCode::INVALID_PARAMS && self.tool_router.has_route(&name) => {
                Ok(explain(&e.message).into())
            }
            other => other,
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let caller = self.caller_of(&context.extensions);
        crate::access::scope(
            caller,
            self.blocking(move |_, v| extension::list_resources(v, cursor.as_deref())),
        )
        .await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let caller = self.caller_of(&context.extensions);
        crate::access::scope(
            caller,
            self.blocking(move |_, v| extension::read_resource(v, &request.uri)),
        )
        .await
        .map(Into::into)
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let caller = self.caller_of(&context.extensions);
        crate::access::scope(
            caller,
            self.blocking(move |_, v| extension::list_skills(v, cursor.as_deref())),
        )
        .await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let caller = self.caller_of(&context.extensions);
        crate::access::scope(
            caller,
            self.blocking(move |_, v| extension::get_skill(v, &request.uri)),
        )
        .await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let caller = self.caller_of(&context.extensions);
        crate::access::scope(
            caller,
            self.blocking(move |_, v| {
                extension::read_directory(v, &request.uri, request.cursor.as_deref())
            }),
        )
        .await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let caller = self.caller_of(&context.extensions);
        crate::access::scope(
            caller,
            self.blocking(move |_, v| prompts::list(v, cursor.as_deref())),
        )
        .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let caller = self.caller_of(&context.extensions);
        crate::access::scope(
            caller,
            self.blocking(move |_, v| prompts::get(v, &request.name, request.arguments.as_ref())),
        )
        .await
        .map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let caller = self.caller_of(&context.extensions);
        crate::access::scope(
            caller,
            self.blocking(move |_, v| prompts::complete(v, &request)),
        )
        .await
    }
}

/// Index the roots of `loaded` and make a server over them (findings are printed to stderr).
pub fn open(loaded: &Loaded) -> Result<SkillsServer> {
    open_with(loaded, Services::default())
}

/// [`open`] with the shared state of other features.
pub fn open_with(loaded: &Loaded, services: Services) -> Result<SkillsServer> {
    let (server, _, _) = open_timed(loaded, services)?;
    server.log_reports();
    Ok(server)
}

/// [`open_with`] without logging the findings, and how long the index build
/// (`Catalog::open`) took.
/// The engine is made ready first (compiled, or loaded from the compiled-engine cache), so the
/// time of the build is the index's alone; both are returned.
pub(crate) fn open_timed(
    loaded: &Loaded,
    services: Services,
) -> Result<(SkillsServer, Duration, crate::runtime::EngineStart)> {
    let options = catalog_options(&loaded.config);
    let engine = crate::runtime::Runtime::new(options.runtime.clone())?.engine_start();
    let started = std::time::Instant::now();
    let catalog =
        Catalog::open(catalog_roots(&loaded.roots), options).context("indexing the skill roots")?;
    crate::access::apply(&catalog, &loaded.config.access)?;
    let built = started.elapsed();
    let server = SkillsServer::with_services(catalog, loaded.config.clone(), services);
    Ok((server, built, engine))
}

/// The catalogue's roots for the configured ones (same order).
pub fn catalog_roots(roots: &[config::RootSpec]) -> Vec<CatalogRoot> {
    roots
        .iter()
        .map(|r| CatalogRoot::new(r.path.clone()).named(r.root_name.clone()))
        .collect()
}

/// The catalogue's options for a configuration (matching and asset limits).
pub fn catalog_options(config: &Config) -> CatalogOptions {
    let m = &config.matching;
    CatalogOptions {
        engine: EngineConfig {
            algorithm: match m.algorithm {
                config::Algorithm::Ranked => Algorithm::Ranked,
                config::Algorithm::Keywords => Algorithm::Keywords,
            },
            min_score: m.min_score,
            ambiguity_threshold: m.ambiguity_threshold,
            max_results: m.max_results,
        },
        max_asset_bytes: config.assets.max_size_bytes,
        index_cache: crate::index_cache::default_dir(),
        ..CatalogOptions::default()
    }
}
