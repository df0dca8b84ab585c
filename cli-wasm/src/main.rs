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
//! with `std::fs` (that is `wasi:filesystem`) following the engine's walk policy, hands the
//! listing and the files the engine asks for to [`skills_engine::Index`], and prints the
//! answers with [`skills_engine::output`], the very functions `skills-mcp` prints with. Every
//! rule about skills stays in the engine crate. See `docs/wasi.md`.

use std::io::{BufRead as _, Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use skills_engine::model::{
    Algorithm, Diagnostic, EngineConfig, Entry, EntryKind, Error, FileData, FileReport, Files,
    RouteOutcome, Severity, WalkPolicy,
};
use skills_engine::{Index, output};

/// Most bytes of files in one `add_files` batch (as the native host).
const BATCH_BYTES: u64 = 256 * 1024;
/// Most files in one `add_files` batch.
const BATCH_FILES: usize = 256;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AlgorithmArg {
    /// Fielded BM25 with stemming; scores normalised to 0..1 (the default).
    Ranked,
    /// Keyword matching: a skill scores the fraction of its keywords that the request's words
    /// match.
    Keywords,
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

#[derive(Debug, Args)]
struct SearchArgs {
    /// The query (omit with --batch).
    #[arg(required_unless_present = "batch", conflicts_with = "batch")]
    query: Option<String>,
    /// Most results.
    #[arg(long, short = 'n', default_value_t = 10)]
    limit: u32,
    /// Print JSON: {"query":..,"results":[{"skill_path","name","score","description"},..]}.
    #[arg(long)]
    json: bool,
    /// Show why each result scores what it does.
    #[arg(long)]
    explain: bool,
    /// Read one query per line on stdin; write one JSON line per query.
    #[arg(long)]
    batch: bool,
}

#[derive(Debug, Args)]
struct GetArgs {
    /// A free-text description of the task.
    #[arg(required_unless_present = "path", conflicts_with = "path")]
    context: Option<String>,
    /// Print this skill instead of routing a request.
    #[arg(long, value_name = "SKILL_PATH")]
    path: Option<String>,
}

#[derive(Debug, Args)]
struct ValidateArgs {
    /// Roots to check (default: the --root ones).
    #[arg(id = "check_roots", value_name = "ROOT")]
    roots: Vec<PathBuf>,
    /// Print only files with findings (and the summary).
    #[arg(long, short)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
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
        config.algorithm = match a {
            AlgorithmArg::Ranked => Algorithm::Ranked,
            AlgorithmArg::Keywords => Algorithm::Keywords,
        };
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
                let line = match catalog.index.search(query, args.limit) {
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
                walk(dir, root, &policy, &mut host_reports)
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
            let mut batch = Vec::new();
            let mut bytes = 0;
            for path in wanted {
                let size = sizes.get(&path).copied().unwrap_or(0);
                if !batch.is_empty() && (bytes + size > BATCH_BYTES || batch.len() >= BATCH_FILES) {
                    index.add_files(root, std::mem::take(&mut batch))?;
                    bytes = 0;
                }
                match read_capped(dir, &path, policy.max_skill_file_bytes) {
                    Ok(b) => {
                        bytes += b.len() as u64;
                        batch.push(FileData { path, bytes: b });
                    }
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

/// A host finding about one file (or a whole root, with an empty path).
fn host_report(root: u32, path: &str, severity: Severity, message: String) -> FileReport {
    FileReport {
        root,
        path: path.to_string(),
        skill_path: None,
        worst: Some(severity),
        diagnostics: vec![Diagnostic {
            root,
            path: path.to_string(),
            line: None,
            severity,
            message,
        }],
    }
}

/// Why a path read from a folder cannot be given to the engine (which refuses a listing with a
/// path that is not a clean `/`-separated relative path); `None`: it can.
fn unlistable(path: &str) -> Option<&'static str> {
    let b = path.as_bytes();
    if path.contains('\\') {
        Some("the name contains a backslash, which skill paths do not allow")
    } else if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        Some("the name starts like a drive letter (`c:`), which skill paths do not allow")
    } else {
        None
    }
}

/// Walk `dir` depth-first, entries sorted by name, as the engine's walk policy says. Symlinks
/// are listed, never entered.
fn walk(
    dir: &std::path::Path,
    root: u32,
    policy: &WalkPolicy,
    issues: &mut Vec<FileReport>,
) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    let max_entries = policy.max_entries as usize;
    let (mut too_deep, mut truncated) = (false, false);
    let mut stack: Vec<(String, u32)> = vec![(String::new(), 0)];
    while let Some((prefix, depth)) = stack.pop() {
        let listed = std::fs::read_dir(if prefix.is_empty() {
            dir.to_path_buf()
        } else {
            dir.join(&prefix)
        });
        let entries = match listed {
            Ok(entries) => entries,
            Err(e) => {
                issues.push(host_report(
                    root,
                    &prefix,
                    Severity::Error,
                    format!("cannot list this folder: {e}"),
                ));
                continue;
            }
        };
        let mut children = Vec::new();
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    issues.push(host_report(
                        root,
                        &prefix,
                        Severity::Warning,
                        format!("cannot read a folder entry: {e}"),
                    ));
                    continue;
                }
            };
            let name = entry.file_name();
            let Some(name) = name.to_str().map(str::to_owned) else {
                issues.push(host_report(
                    root,
                    &prefix,
                    Severity::Warning,
                    format!("skipped {name:?}: the name is not UTF-8"),
                ));
                continue;
            };
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            if let Some(why) = unlistable(&path) {
                issues.push(host_report(
                    root,
                    &prefix,
                    Severity::Warning,
                    format!("skipped {name:?}: {why}"),
                ));
                continue;
            }
            let file_type = match entry.file_type() {
                Ok(t) => t,
                Err(e) => {
                    issues.push(host_report(
                        root,
                        &path,
                        Severity::Warning,
                        format!("skipped: cannot stat: {e}"),
                    ));
                    continue;
                }
            };
            if file_type.is_symlink() {
                children.push((name, path, EntryKind::Symlink, 0));
            } else if file_type.is_dir() {
                if !policy.skip_dir_names.contains(&name) {
                    children.push((name, path, EntryKind::Directory, 0));
                }
            } else if file_type.is_file() {
                let size = entry.metadata().map_or(0, |m| m.len());
                children.push((name, path, EntryKind::File, size));
            }
        }
        children.sort_by(|a, b| a.0.cmp(&b.0));
        let mut subdirs = Vec::new();
        for (_, path, kind, size) in children {
            if out.len() >= max_entries {
                truncated = true;
                break;
            }
            if kind == EntryKind::Directory {
                if depth < policy.max_depth {
                    subdirs.push((path.clone(), depth + 1));
                } else {
                    too_deep = true;
                }
            }
            out.push(Entry { path, kind, size });
        }
        stack.extend(subdirs.into_iter().rev());
        if truncated {
            break;
        }
    }
    if truncated {
        issues.push(host_report(
            root,
            "",
            Severity::Warning,
            format!("listing stopped at {max_entries} entries; the rest of the root is skipped"),
        ));
    }
    if too_deep {
        issues.push(host_report(
            root,
            "",
            Severity::Warning,
            format!(
                "folders deeper than {} levels were not entered",
                policy.max_depth
            ),
        ));
    }
    out
}

/// Why a file could not be read.
enum ReadError {
    TooLarge { size: u64, limit: u64 },
    Refused(&'static str),
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

/// Read `path` (a clean relative path from the engine) below `dir` if it is a regular file of
/// at most `limit` bytes; a symlink is never followed. The runtime's preopen keeps every
/// access inside the mounted folders.
fn read_capped(dir: &std::path::Path, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
    let full = dir.join(path);
    let meta = std::fs::symlink_metadata(&full).map_err(ReadError::Io)?;
    if meta.file_type().is_symlink() {
        return Err(ReadError::Refused("is a symlink (not followed)"));
    }
    if !meta.is_file() {
        return Err(ReadError::Refused("is not a regular file"));
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
