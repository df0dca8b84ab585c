//! `skills-engine-cli`: the skills-mcp engine as a stock-WASI command.
//!
//! Built for `wasm32-wasip2`, this program is a component that exports `wasi:cli/run` and
//! imports nothing but WASI, so any component runtime runs it with nothing of ours but the
//! `.wasm`:
//!
//! ```sh
//! wasmtime run --dir ./skills::/skills skills-engine-cli.wasm search "react form"
//! ```
//!
//! It is a host of the engine like the native `skills-mcp`, and as thin: it walks each root
//! with the engine crate's walk ([`skills_engine::walk`], the very rules `skills-mcp` walks
//! by) over `std::fs` (that is `wasi:filesystem`), hands the listing and the files the engine
//! asks for to [`skills_engine::Index`] in the walk's batches, and prints the answers with
//! [`skills_engine::output`], the very functions `skills-mcp` prints with. Its `search`, `get`
//! and `validate` arguments are `skills-mcp`'s own ([`skills_engine::cli_args`]). Every rule
//! about skills stays in the engine crate. See `docs/wasi.md`.

use std::io::{BufRead as _, Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
use skills_engine::cli_args::{AlgorithmArg, GetArgs, SearchArgs, VALIDATE_ROOTS, ValidateArgs};
use skills_engine::model::{
    ChildKind, EngineConfig, Error, FileData, FileReport, Files, RouteOutcome, Severity,
};
use skills_engine::walk::{Child, Folders, host_report};
use skills_engine::{Index, output};

/// The root used when no `--root` is given: mount it with `--dir ./skills::/skills`.
const DEFAULT_ROOT: &str = "/skills";

/// Search, route and check Markdown skills with the skills-mcp engine, under any WASI runtime.
#[derive(Debug, Parser)]
#[command(name = "skills-engine-cli", version, about, max_term_width = 100)]
struct Cli {
    /// A skill root, as the runtime mounts it (repeatable; later roots take precedence).
    /// Default: /skills.
    #[arg(long = "root", value_name = "DIR", global = true)]
    roots: Vec<PathBuf>,
    /// Accepted for compatibility with `skills-mcp`; this command has no standard folders.
    #[arg(long, global = true)]
    no_default_roots: bool,
    /// How requests are matched to skills.
    #[arg(long, value_enum, global = true, value_name = "NAME")]
    algorithm: Option<AlgorithmArg>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Rank skills against a query.
    Search(SearchArgs),
    /// Route a free-text request to a skill and print the outcome as JSON: `no_match`,
    /// `ambiguous` with candidates, or the matched skill with its resolved content, assets and
    /// scripts; exits 1 on no match.
    Get(GetArgs),
    /// Check every file of the roots; exits 1 when a file has errors.
    Validate(ValidateArgs),
}

/// The command line: [`Cli`], with `validate`'s roots explained for this command.
fn parse() -> Result<Cli, clap::Error> {
    let command = Cli::command().mut_subcommand("validate", |v| {
        v.mut_arg(VALIDATE_ROOTS, |a| {
            a.help("Roots to check (default: the --root ones)")
        })
    });
    Cli::from_arg_matches_mut(&mut command.try_get_matches()?)
}

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(Failure::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("skills-engine-cli: error: {e}");
            ExitCode::from(match e {
                Failure::Engine(Error::InvalidArgument(_) | Error::InvalidPath(_)) => 2,
                _ => 1,
            })
        }
    }
}

/// Why a command failed.
enum Failure {
    Engine(Error),
    Io(std::io::Error),
    Usage(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Engine(e) => write!(f, "{e}"),
            Failure::Io(e) => write!(f, "{e}"),
            Failure::Usage(m) => write!(f, "{m}"),
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Engine(e)
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Io(e)
    }
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    let mut roots = cli.roots.clone();
    if let Command::Validate(args) = &cli.command
        && !args.roots.is_empty()
    {
        roots = args.roots.clone();
    }
    if roots.is_empty() {
        roots.push(PathBuf::from(DEFAULT_ROOT));
    }
    let mut config = EngineConfig::default();
    if let Some(a) = cli.algorithm {
        config.algorithm = a.into();
    }
    let catalog = Catalog::open(roots, config)?;
    let mut out = std::io::stdout().lock();
    match cli.command {
        Command::Search(args) if args.batch => {
            for line in std::io::stdin().lock().lines() {
                let line = line?;
                let query = line.trim();
                if query.is_empty() {
                    continue;
                }
                let line = match catalog.index.search_brief(query, args.limit) {
                    Ok(hits) => output::batch_line(query, Ok(&hits)),
                    Err(e) => output::batch_line(query, Err(&e.to_string())),
                };
                writeln!(out, "{line}")?;
                out.flush()?;
            }
        }
        Command::Search(args) => {
            let query = args.query.as_deref().unwrap_or_default();
            let hits = catalog.index.search(query, args.limit)?;
            let explanations = if args.explain {
                hits.iter()
                    .map(|h| catalog.index.explain(query, &h.skill_path))
                    .collect::<Result<Vec<_>, _>>()?
            } else {
                Vec::new()
            };
            let text = if args.json {
                output::search_json(query, &hits, &explanations)
            } else {
                if hits.is_empty() {
                    eprintln!("no skill matches {query:?}");
                }
                output::search_text(&hits, &explanations)
            };
            out.write_all(text.as_bytes())?;
        }
        Command::Get(args) => {
            if let Some(path) = &args.path {
                let skill = catalog.index.get(path)?;
                let resolved = catalog.index.resolve(&catalog, &skill.skill_path)?;
                out.write_all(output::pretty(&output::skill_json(&resolved)).as_bytes())?;
                return Ok(ExitCode::SUCCESS);
            }
            let context = args.context.as_deref().unwrap_or_default();
            let (value, found) = match catalog.index.route(context)? {
                RouteOutcome::NoMatch => (output::no_match_json(), false),
                RouteOutcome::Ambiguous(hits) => (output::ambiguous_json(&hits), true),
                RouteOutcome::Matched(hit) => {
                    let resolved = catalog.index.resolve(&catalog, &hit.skill_path)?;
                    (output::matched_json(&hit, &resolved), true)
                }
            };
            out.write_all(output::pretty(&value).as_bytes())?;
            if !found {
                return Ok(ExitCode::from(1));
            }
        }
        Command::Validate(args) => {
            let reports = output::merge_reports(catalog.index.reports(), &catalog.host_reports);
            let roots: Vec<String> = catalog
                .roots
                .iter()
                .map(|r| r.display().to_string())
                .collect();
            let skills = u32::try_from(catalog.index.len()).unwrap_or(u32::MAX);
            let v = output::validate_text(&reports, &roots, args.quiet, skills);
            out.write_all(v.text.as_bytes())?;
            if v.has_errors {
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The roots, their finished index, and the host's own findings (unreadable or oversized files,
/// walk limits).
struct Catalog {
    roots: Vec<PathBuf>,
    index: Index,
    host_reports: Vec<FileReport>,
    max_file_bytes: u64,
}

impl Files for Catalog {
    fn read(&self, root: u32, path: &str) -> Result<Vec<u8>, String> {
        let dir = self
            .roots
            .get(root as usize)
            .ok_or_else(|| format!("root {root} is not available"))?;
        read_capped(dir, path, self.max_file_bytes).map_err(|e| format!("{path}: {e}"))
    }
}

impl Catalog {
    /// Walk every root, index it (later roots take precedence) and finish the index.
    fn open(roots: Vec<PathBuf>, config: EngineConfig) -> Result<Self, Failure> {
        let policy = skills_engine::walk_policy();
        let mut index = Index::new(config);
        let mut host_reports = Vec::new();
        let mut usable = 0;
        for (i, dir) in roots.iter().enumerate() {
            let root = i as u32;
            let name = dir.display().to_string();
            let entries = if dir.is_dir() {
                usable += 1;
                let listing = skills_engine::walk::walk(&mut StdFolders { dir }, root, &policy);
                host_reports.extend(listing.findings);
                listing.entries.into_iter().map(|(e, _)| e).collect()
            } else {
                eprintln!(
                    "skills-engine-cli: root {name}: cannot open the skill root {name} (is it mounted? e.g. --dir ./skills::/skills)"
                );
                host_reports.push(host_report(
                    root,
                    "",
                    Severity::Error,
                    format!("cannot open the skill root {name}"),
                ));
                Vec::new()
            };
            let sizes: std::collections::HashMap<String, u64> =
                entries.iter().map(|e| (e.path.clone(), e.size)).collect();
            let wanted = index.add_root(&name, entries)?;
            let batches = skills_engine::walk::batches(
                &wanted,
                |p| sizes.get(p).copied().unwrap_or(0),
                |_| false,
                policy.max_batch_bytes,
                &policy,
            );
            for paths in batches {
                let mut batch = Vec::new();
                for path in paths {
                    match read_capped(dir, &path, policy.max_skill_file_bytes) {
                        Ok(bytes) => batch.push(FileData { path, bytes }),
                        Err(ReadError::TooLarge { size, limit }) => host_reports.push(host_report(
                            root,
                            &path,
                            Severity::Error,
                            format!("skipped: {size} bytes, over the limit of {limit} bytes"),
                        )),
                        Err(e) => host_reports.push(host_report(
                            root,
                            &path,
                            Severity::Error,
                            format!("skipped: cannot read: {e}"),
                        )),
                    }
                }
                if !batch.is_empty() {
                    index.add_files(root, batch)?;
                }
            }
        }
        if usable == 0 {
            return Err(Failure::Usage(
                "no skill root could be opened: mount one (e.g. `--dir ./skills::/skills`) and name it with --root".into(),
            ));
        }
        index.finish()?;
        Ok(Self {
            roots,
            index,
            host_reports,
            max_file_bytes: policy.max_skill_file_bytes,
        })
    }
}

/// A root's folders as `std::fs` (that is, `wasi:filesystem`) lists them; the runtime's
/// preopen keeps every access inside the mounted folders.
struct StdFolders<'a> {
    dir: &'a std::path::Path,
}

impl Folders for StdFolders<'_> {
    type Meta = ();

    fn list(&mut self, path: &str) -> skills_engine::walk::Listed<()> {
        let entries = std::fs::read_dir(if path.is_empty() {
            self.dir.to_path_buf()
        } else {
            self.dir.join(path)
        })
        .map_err(|e| e.to_string())?;
        Ok(entries
            .map(|entry| {
                let entry = entry.map_err(|e| e.to_string())?;
                let name = entry.file_name();
                let Some(name) = name.to_str().map(str::to_owned) else {
                    return Ok(Child {
                        name: Err(format!("{name:?}")),
                        kind: Err(String::new()),
                        size: 0,
                        meta: None,
                    });
                };
                let kind = entry.file_type().map_err(|e| e.to_string()).map(|t| {
                    if t.is_symlink() {
                        ChildKind::Symlink
                    } else if t.is_dir() {
                        ChildKind::Directory
                    } else if t.is_file() {
                        ChildKind::File
                    } else {
                        // WASI's standard library says no more than this on stable Rust.
                        ChildKind::Special("a special file (a FIFO, socket or device)".into())
                    }
                });
                let size = match kind {
                    Ok(ChildKind::File) => entry.metadata().map_or(0, |m| m.len()),
                    _ => 0,
                };
                Ok(Child {
                    name: Ok(name),
                    kind,
                    size,
                    meta: None,
                })
            })
            .collect())
    }
}

/// Why a file could not be read.
enum ReadError {
    TooLarge { size: u64, limit: u64 },
    Refused(String),
    Io(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::TooLarge { size, limit } => {
                write!(f, "{size} bytes, over the limit of {limit} bytes")
            }
            ReadError::Refused(why) => write!(f, "{why}"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Read `path` below `dir` if it is a clean relative path (the walk's check, as `skills-mcp`)
/// and a regular file of at most `limit` bytes; a symlink is never followed. The runtime's
/// preopen keeps every access inside the mounted folders.
fn read_capped(dir: &std::path::Path, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
    skills_engine::walk::check_read_path(path).map_err(ReadError::Refused)?;
    let full = dir.join(path);
    let meta = std::fs::symlink_metadata(&full).map_err(ReadError::Io)?;
    if meta.file_type().is_symlink() {
        return Err(ReadError::Refused("is a symlink (not followed)".into()));
    }
    if !meta.is_file() {
        return Err(ReadError::Refused("is not a regular file".into()));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(&full)
        .map_err(ReadError::Io)?
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}
