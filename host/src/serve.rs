//! The one start-up of `skills-mcp serve`, whatever the transport.
//!
//! [`run`] owns everything a serving process does besides speaking a transport: the start-up
//! lines (configuration warnings, each root, escaped so that a folder name cannot forge a log
//! line), the async runtime, analytics, the shared [`Services`], the index build, the git
//! reindex hook and periodic refresh, live reload (file watching), the stop signals, and the
//! flush of analytics on the way out. A transport ([`stdio`], [`http`]) only says how MCP is
//! spoken once the server exists, as rmcp's `counter_stdio.rs` and `counter_streamhttp.rs` are
//! thin layers over one server.

pub mod drain;
pub mod http;
pub mod stdio;

use std::{future::Future, pin::Pin, sync::Arc, time::Duration};

use anyhow::{Context as _, Result};
use tokio::sync::oneshot;

use crate::{
    config::{Loaded, RootSource},
    logsafe::Escaped,
    mcp::{Findings, Services, SkillsServer},
    sources::Sources,
};

/// A future the transport awaits: resolves when the process is asked to stop (SIGINT,
/// SIGTERM), after the start-up has logged it.
pub type Stop = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The index being built: resolves to it once it is (or to why it could not be).
pub type Index = oneshot::Receiver<Result<Built>>;

/// The index built: the server, and what the start-up line says of the build.
pub struct Built {
    pub server: SkillsServer,
    /// `N skills indexed in T ms[ (from the index cache)]; engine compiled in T ms` (or loaded
    /// from the compiled-engine cache): the index's time and the engine's, apart.
    indexed: String,
}

impl Built {
    /// Say that the transport now serves with the index:
    /// `N skills indexed in T ms; engine compiled in T ms; {ready}`.
    /// Called by the transport once requests reach the index (not before: a client or a test
    /// waiting for the line must not get "not ready" after it).
    pub fn serving(&self, ready: &str) {
        tracing::info!("{}; {ready}", self.indexed);
        // Start-up is over (the index, the watches, the usage store): what it freed goes back,
        // and the code only it ran leaves the resident set.
        crate::allocator::release_freed();
        crate::allocator::release_clean_file_pages();
    }
}

/// How MCP is spoken; [`run`] does the rest.
pub trait Transport {
    /// Called inside the runtime before the index is built (bind a socket, say where): an error
    /// stops the start-up before any indexing work.
    fn prepare(&mut self) -> Result<()> {
        Ok(())
    }

    /// Whether requests without a verified identity come from strangers (HTTP on a
    /// non-loopback address: anonymous callers) rather than the local operator.
    fn public(&self) -> bool {
        false
    }

    /// Serve until the client goes away, `stop` resolves, or the index fails.
    fn serve(self, index: Index, stop: Stop) -> impl Future<Output = Result<()>>;
}

/// Log what the operator should see before anything is served: configuration warnings, then
/// each root and where it came from. Every value is escaped: root names and the file names in
/// warnings come from the disk, and a newline or an escape sequence in them must not start a
/// line of its own.
pub fn announce(loaded: &Loaded) {
    for w in &loaded.warnings {
        tracing::warn!("{}", Escaped(w));
    }
    for (i, root) in loaded.roots.iter().enumerate() {
        tracing::info!("root {i}: {} ({:?})", Escaped(root.name()), root.source);
    }
}

/// Serve `loaded` over `transport` until it ends or SIGINT / SIGTERM; analytics are flushed
/// on the way out. `git`: the git sources, already synced ([`crate::sources::start_blocking`]),
/// reindexed on update and refreshed every `refresh.interval` when `refresh.enabled`.
/// `reload`: what SIGHUP reads again ([`crate::access::Reload`]).
pub fn run<T: Transport>(
    loaded: &Loaded,
    git: Option<Arc<Sources>>,
    mut transport: T,
    reload: Option<crate::access::Reload>,
) -> Result<()> {
    announce(loaded);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    {
        let _in_runtime = runtime.enter();
        transport.prepare()?;
        // Metrics on a listener of their own, whatever the transport (docs/operations.md).
        if !loaded.config.server.metrics_listen.trim().is_empty() {
            crate::telemetry::listener::start(&loaded.config.server)?;
        }
    }
    let analytics = {
        let _in_runtime = runtime.enter();
        crate::analytics::Analytics::start(loaded.config.analytics.clone())
    };
    let services = Services {
        analytics: analytics.clone(),
        git: git.clone(),
        public_http: transport.public(),
        ..Services::default()
    };
    let result = runtime.block_on(async {
        let (index_tx, index) = oneshot::channel();
        let built = {
            let loaded = loaded.clone();
            tokio::task::spawn_blocking(move || build(&loaded, services))
        };
        // The local roots' watches are placed beside the build (a walk of every folder), and
        // serving waits for both: a change made once the server answers, or while the index
        // was being built after its folder was watched, is never missed.
        let watching = watch_roots(loaded);
        // Once the index exists: the git reindex hook, the periodic refresh and live reload,
        // kept alive while serving.
        let background = {
            let loaded = loaded.clone();
            async move {
                let built = match built.await {
                    Ok(Ok(built)) => built,
                    Ok(Err(e)) => {
                        let _ = index_tx.send(Err(e));
                        return std::future::pending().await;
                    }
                    Err(e) => {
                        let _ = index_tx.send(Err(anyhow::anyhow!("building the index: {e}")));
                        return std::future::pending().await;
                    }
                };
                let watching = match watching {
                    Some(w) => w.await.ok().flatten(),
                    None => None,
                };
                let server = built.server.clone();
                let _ = index_tx.send(Ok(built));
                if let Some(reload) = reload {
                    let roots = loaded.roots.clone();
                    tokio::spawn(crate::access::on_hangup(server.clone(), reload, roots));
                }
                let _fresh = keep_fresh(&loaded, git, server, watching);
                std::future::pending::<()>().await
            }
        };
        let stop: Stop = Box::pin(async {
            let signal = drain::stop_signal().await;
            tracing::info!("{signal}; stopping");
        });
        let served = tokio::select! {
            served = transport.serve(index, stop) => served,
            () = background => unreachable!("the background never ends"),
        };
        // No event is lost: what is queued is sent (or kept in the buffer file for next time).
        analytics.shutdown().await;
        served
    });
    // Do not wait for a thread still blocked reading stdin after a signal.
    runtime.shutdown_timeout(Duration::from_secs(1));
    // The spans still queued are sent before the process ends.
    crate::telemetry::trace::shutdown();
    result
}

/// Index the roots: the findings logged in one summary line ([`Findings::Summary`]); the
/// transport says when it serves with the index ([`Built::serving`]).
fn build(loaded: &Loaded, services: Services) -> Result<Built> {
    let (server, built, engine) = crate::mcp::open_timed(loaded, services)?;
    server.log_findings(Findings::Summary);
    let cached = if server.catalog().stats().from_cache {
        " (from the index cache)"
    } else {
        ""
    };
    let indexed = format!(
        "{} skills indexed in {} ms{cached}; {engine}",
        server.catalog().len().unwrap_or(0),
        built.as_millis()
    );
    Ok(Built { server, indexed })
}

/// What keeps the index fresh; dropping it stops the periodic refresh and live reload.
struct Fresh {
    _periodic: Option<tokio::task::JoinHandle<()>>,
    _watch: Option<crate::mcp::WatchGuard>,
}

/// Watch the local roots (`refresh.watch`; git roots are immutable snapshots, followed by the
/// git refresh instead) off the async threads: `None` when live reload is off. A root that
/// cannot be watched turns live reload off with a warning; the server serves all the same.
fn watch_roots(loaded: &Loaded) -> Option<tokio::task::JoinHandle<Option<crate::mcp::Watching>>> {
    if !loaded.config.refresh.watch {
        return None;
    }
    let paths = loaded
        .roots
        .iter()
        .filter(|r| {
            !matches!(
                r.source,
                RootSource::Git | RootSource::Oci | RootSource::Index
            )
        })
        .map(|r| r.path.clone())
        .collect();
    Some(tokio::task::spawn_blocking(
        move || match crate::mcp::start_watching(paths) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!("live reload is off: {}", Escaped(format!("{e:#}")));
                None
            }
        },
    ))
}

/// Hook the git sources' updates to a reindex, start their periodic refresh
/// (`refresh.enabled`), and reload on the changes `watching` sees (from [`watch_roots`]).
fn keep_fresh(
    loaded: &Loaded,
    git: Option<Arc<Sources>>,
    server: SkillsServer,
    watching: Option<crate::mcp::Watching>,
) -> Fresh {
    let refresh = &loaded.config.refresh;
    let periodic = git.and_then(|git| {
        let rebuild = server.clone();
        git.set_reindex(crate::sources::reindex_fn(move |_roots| {
            let server = rebuild.clone();
            async move { server.reindex().await }
        }));
        refresh
            .enabled
            .then(|| git.spawn_periodic(refresh.interval()))
    });
    let debounce = Duration::from_millis(refresh.debounce_ms);
    let watch = watching.map(|w| w.reload(server, debounce));
    Fresh {
        _periodic: periodic,
        _watch: watch,
    }
}
