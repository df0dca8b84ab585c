//! One index build: listings to `add-root`, files in bounded `add-files` batches, `finish`;
//! a batch that traps is retried file by file and a file that still traps is left out.

use super::*;

/// A build that could not complete.
pub(super) enum BuildFailure {
    /// The engine trapped on an `add-files` batch.
    Batch {
        root: u32,
        files: Vec<String>,
        trap: anyhow::Error,
    },
    Other(anyhow::Error),
}

impl From<anyhow::Error> for BuildFailure {
    fn from(e: anyhow::Error) -> Self {
        BuildFailure::Other(e)
    }
}

/// A freshly built index in its own engine instance.
pub(super) struct Built {
    pub(super) live: Live,
    pub(super) stats: BuildStats,
    pub(super) host_reports: Vec<FileReport>,
}

/// Everything a build needs besides the roots.
pub(super) struct Builder<'a> {
    pub(super) runtime: &'a Runtime,
    pub(super) options: &'a CatalogOptions,
    pub(super) names: &'a [RootSpec],
}

impl Builder<'_> {
    /// Build, retrying around files that make the engine trap.
    pub(super) fn build(
        &self,
        roots: &Arc<Roots>,
        listings: &[Listing],
        excluded: &mut BTreeSet<(u32, String)>,
        excluded_reports: &mut Vec<FileReport>,
    ) -> anyhow::Result<Built> {
        let mut isolate: BTreeSet<(u32, String)> = BTreeSet::new();
        let mut last = None;
        for _ in 0..MAX_BUILD_ATTEMPTS {
            match self.build_once(roots, listings, excluded, &isolate) {
                Ok(built) => return Ok(built),
                Err(BuildFailure::Other(e)) => return Err(e),
                Err(BuildFailure::Batch { root, files, trap }) => {
                    if let [file] = files.as_slice() {
                        tracing::warn!(
                            "leaving out {}/{}: {}",
                            crate::logsafe::Escaped(&self.names[root as usize].name),
                            crate::logsafe::Escaped(file),
                            crate::logsafe::Escaped(format!("{trap:#}"))
                        );
                        excluded_reports.push(host_report(
                            root,
                            file,
                            Severity::Error,
                            format!("left out: the engine failed on this file: {trap:#}"),
                        ));
                        excluded.insert((root, file.clone()));
                    } else {
                        isolate.extend(files.into_iter().map(|f| (root, f)));
                    }
                    last = Some(trap);
                }
            }
        }
        Err(last.unwrap_or_else(|| anyhow!("the index build failed")))
            .context("building the index: the engine kept failing")
    }

    fn build_once(
        &self,
        roots: &Arc<Roots>,
        listings: &[Listing],
        excluded: &BTreeSet<(u32, String)>,
        isolate: &BTreeSet<(u32, String)>,
    ) -> Result<Built, BuildFailure> {
        let started = Instant::now();
        let (mut guest, index) = self.new_index(roots)?;
        let mut stats = BuildStats {
            roots: self.names.len(),
            roots_ok: roots.dirs.iter().filter(|d| d.is_some()).count(),
            ..BuildStats::default()
        };
        let mut host_reports = Vec::new();
        for (i, spec) in self.names.iter().enumerate() {
            let root = i as u32;
            let listing = &listings[i];
            stats.entries += listing.entries.len();
            let wanted = guest
                .add_root(index, &spec.engine_name, &listing.entries)
                .with_context(|| format!("registering the root {}", spec.name))?;
            let Some(dir) = roots.dirs[i].as_ref() else {
                continue;
            };
            let sizes: std::collections::HashMap<&str, u64> = listing
                .entries
                .iter()
                .map(|e| (e.path.as_str(), e.size))
                .collect();
            let wanted: Vec<String> = wanted
                .into_iter()
                .filter(|p| !excluded.contains(&(root, p.clone())))
                .collect();
            let batches = self.batches(root, &wanted, &sizes, isolate, &roots.policy);
            let mut failure = None;
            read_batches(
                dir,
                &batches,
                roots.max_file_bytes,
                self.options.read_threads,
                |batch, read| {
                    if failure.is_some() {
                        return;
                    }
                    let mut data = Vec::with_capacity(read.len());
                    for (path, result) in batch.iter().zip(read) {
                        match result {
                            Ok(bytes) => {
                                stats.files_read += 1;
                                stats.bytes_read += bytes.len() as u64;
                                data.push(FileData {
                                    path: path.clone(),
                                    bytes,
                                });
                            }
                            Err(ReadError::TooLarge { size, limit }) => {
                                host_reports.push(host_report(
                                    root,
                                    path,
                                    Severity::Error,
                                    format!(
                                        "skipped: {size} bytes, over the limit of {limit} bytes"
                                    ),
                                ));
                            }
                            Err(e) => host_reports.push(host_report(
                                root,
                                path,
                                Severity::Error,
                                format!("skipped: cannot read: {e}"),
                            )),
                        }
                    }
                    if data.is_empty() {
                        return;
                    }
                    if let Err(e) = guest.add_files(index, root, &data) {
                        failure = Some(if e.downcast_ref::<GuestTrap>().is_some() {
                            BuildFailure::Batch {
                                root,
                                files: batch.to_vec(),
                                trap: e,
                            }
                        } else {
                            BuildFailure::Other(e)
                        });
                    }
                },
            );
            if let Some(f) = failure {
                return Err(f);
            }
        }
        guest.finish(index)?;
        stats.skills = guest.len(index)?;
        stats.files_excluded = excluded.len();
        stats.millis = started.elapsed().as_millis() as u64;
        Ok(Built {
            live: Live::new(guest, index),
            stats,
            host_reports,
        })
    }

    /// A new engine instance reading through `roots`, with a new, empty index.
    pub(super) fn new_index(&self, roots: &Arc<Roots>) -> anyhow::Result<(Guest, IndexHandle)> {
        let files: Arc<dyn FileSource> = roots.clone();
        let mut guest = self
            .runtime
            .instantiate(files)
            .context("starting the engine")?;
        let index = guest.new_index(&self.options.engine)?;
        Ok((guest, index))
    }

    /// The index of a walk of `entries` entries from its on-disk cache file, in a new
    /// instance.
    fn restore(
        &self,
        roots: &Arc<Roots>,
        entries: usize,
        cached: index_cache::Cached,
    ) -> anyhow::Result<Built> {
        let started = Instant::now();
        let (mut guest, index) = self.new_index(roots)?;
        cached.restore(&mut guest, index)?;
        let stats = BuildStats {
            skills: guest.len(index)?,
            roots: self.names.len(),
            roots_ok: roots.dirs.iter().filter(|d| d.is_some()).count(),
            entries,
            millis: started.elapsed().as_millis() as u64,
            from_cache: true,
            ..BuildStats::default()
        };
        Ok(Built {
            live: Live::new(guest, index),
            stats,
            host_reports: Vec::new(),
        })
    }

    /// Split `wanted` into batches as the engine crate's walk says (bounded bytes and files);
    /// isolated files travel alone.
    fn batches(
        &self,
        root: u32,
        wanted: &[String],
        sizes: &std::collections::HashMap<&str, u64>,
        isolate: &BTreeSet<(u32, String)>,
        policy: &skills_engine::WalkPolicy,
    ) -> Vec<Vec<String>> {
        skills_engine::walk::batches(
            wanted,
            |p| sizes.get(p).copied().unwrap_or(0),
            |p| isolate.contains(&(root, p.to_owned())),
            self.options.batch_bytes,
            policy,
        )
    }
}

/// Build (or restore from the index cache) the snapshot of `specs`: counted in
/// `skills_mcp_index_build_duration_seconds` and `skills_mcp_skills_indexed`, traced as an
/// `index build` span.
pub(super) fn build_snapshot(
    runtime: &Runtime,
    options: &CatalogOptions,
    specs: &[RootSpec],
) -> anyhow::Result<Snapshot> {
    let span = crate::child_span!("index build");
    let _in_span = span.enter();
    let started = Instant::now();
    let snapshot = snapshot(runtime, options, specs)?;
    crate::telemetry::metrics().index_built(snapshot.stats.skills as usize, started.elapsed());
    Ok(snapshot)
}

/// The roots of one build, walked, and where the index of that walk is cached.
struct Walked {
    roots: Arc<Roots>,
    listings: Vec<Listing>,
    host_reports: Vec<FileReport>,
    key: Option<index_cache::Key>,
}

impl Walked {
    fn new(options: &CatalogOptions, specs: &[RootSpec], policy: &WalkPolicy) -> Self {
        let walked_at = std::time::SystemTime::now();
        let (roots, listings, host_reports) = open_roots(specs, policy);
        let key = options.index_cache.as_deref().map(|dir| {
            let prints = specs
                .iter()
                .zip(&listings)
                .zip(&roots.dirs)
                .map(|((spec, l), dir)| {
                    (
                        spec.engine_name.as_str(),
                        spec.path.as_path(),
                        dir.as_ref().map(|_| &l.print),
                    )
                });
            index_cache::Key::new(dir, prints, walked_at)
        });
        Self {
            roots,
            listings,
            host_reports,
            key,
        }
    }
}

fn snapshot(
    runtime: &Runtime,
    options: &CatalogOptions,
    specs: &[RootSpec],
) -> anyhow::Result<Snapshot> {
    let policy = runtime
        .instantiate(Arc::new(NoFiles))
        .and_then(|mut g| g.walk_policy())
        .context("asking the engine for its walk policy")?;
    let mut walked = Walked::new(options, specs, &policy);
    let builder = Builder {
        runtime,
        options,
        names: specs,
    };
    let cache_warning = |key: &index_cache::Key, e: anyhow::Error| {
        tracing::warn!(
            target: "skills_mcp::index_cache",
            "ignoring the index cache {}: {}; rebuilding it",
            crate::logsafe::EscapedPath(key.file()),
            crate::logsafe::Escaped(format!("{e:#}"))
        )
    };
    if let Some(key) = &walked.key {
        match key.open() {
            Ok(Some(cached)) => {
                // The cache holds this very walk's index: the listings are not needed beside
                // it (a damaged file walks again), nor the walk's code and freed buffers.
                let entries = walked.listings.iter().map(|l| l.entries.len()).sum();
                walked.listings = Vec::new();
                crate::allocator::release_freed();
                crate::allocator::release_clean_file_pages();
                match builder.restore(&walked.roots, entries, cached) {
                    Ok(built) => {
                        return Ok(Snapshot {
                            number: 0,
                            roots: walked.roots,
                            stats: built.stats,
                            host_reports: walked.host_reports,
                            excluded: BTreeSet::new(),
                            live: Mutex::new(Some(built.live)),
                        });
                    }
                    Err(e) => {
                        cache_warning(key, e);
                        walked = Walked::new(options, specs, &policy);
                    }
                }
            }
            Ok(None) => {}
            Err(e) => cache_warning(key, e),
        }
    }
    let Walked {
        roots,
        listings,
        mut host_reports,
        key,
    } = walked;
    let mut excluded = BTreeSet::new();
    let mut excluded_reports = Vec::new();
    let mut built = builder.build(&roots, &listings, &mut excluded, &mut excluded_reports)?;
    if let Some(key) = &key
        && key.settled()
        && excluded.is_empty()
        && built.host_reports.is_empty()
        && let Err(e) = key.store(&mut built.live.guest, built.live.index)
    {
        tracing::warn!(
            target: "skills_mcp::index_cache",
            "could not write the index cache {}: {}",
            crate::logsafe::EscapedPath(key.file()),
            crate::logsafe::Escaped(format!("{e:#}"))
        );
    }
    host_reports.extend(built.host_reports);
    host_reports.extend(excluded_reports);
    Ok(Snapshot {
        number: 0,
        roots,
        stats: built.stats,
        host_reports,
        excluded,
        live: Mutex::new(Some(built.live)),
    })
}
