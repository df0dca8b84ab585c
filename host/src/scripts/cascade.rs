//! The validation cascade of `run_script` (each check in a fixed order), as a function of the
//! configuration, what the catalog says about the request, and the request itself.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::config::ScriptsConfig;

/// A request to run a script, as the MCP tool and the CLI verb receive it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunRequest {
    /// Skill path (or unique name) of the skill the script is run for.
    pub skill_path: String,
    /// The script, relative to the skill's resource folder (or an ancestor's, when inherited).
    pub file: String,
    /// Named arguments; each becomes `SKILL_ARG_<NAME>` in the script's environment.
    pub args: BTreeMap<String, String>,
    /// Working directory; default: the skill's resource folder.
    pub cwd: Option<PathBuf>,
}

/// Where a declared script may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Execution {
    /// `execution: claude` (the default): the client fetches it with `get_asset`.
    Client,
    /// `execution: server`: `run_script` may run it.
    Server,
}

/// A declared script argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgDecl {
    pub name: String,
    pub description: String,
    pub required: bool,
}

/// A script declaration, as the engine resolved it from frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptDecl {
    pub execution: Execution,
    pub args: Vec<ArgDecl>,
}

/// A skill the catalog found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSkill {
    /// Its canonical skill path (the request may have used a name).
    pub skill_path: String,
    /// Its resource folder, absolute, when it has one.
    pub resource_dir: Option<PathBuf>,
}

/// The file a script request refers to, after the engine's chain lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedScript {
    /// The file, relative to the resource folder holding it (normalised by the engine).
    pub file: String,
    /// Set when the file is declared as a script; `None` for a plain asset or an undeclared
    /// file (e.g. an Agent Skills folder's `scripts/x.sh` with no declaration).
    pub script: Option<ScriptDecl>,
    /// The skill it is inherited from; `None` when it is the requested skill's own.
    pub from: Option<String>,
    /// Size on disk when the index was built; `None` when the file is missing.
    pub size: Option<u64>,
    /// The skill root holding the file, absolute.
    pub root_dir: PathBuf,
    /// The file, absolute.
    pub path: PathBuf,
    /// The resource folder the file is relative to, absolute.
    pub resource_dir: PathBuf,
}

/// Why the catalog could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    /// No such skill (from `skill`) or no such asset or script (from `locate`).
    NotFound(String),
    /// The file argument was rejected (`..`, absolute, backslash, NUL, empty segment).
    InvalidPath(String),
    /// Anything else (index not ready, engine failure).
    Other(String),
}

/// What `run_script` needs from the skill catalog. The catalog facade implements it; tests
/// may fake it. The host never re-implements the engine's rules: both answers come from it.
pub trait ScriptCatalog {
    /// The skill by path or unique name.
    fn skill(&self, skill_path: &str) -> Result<FoundSkill, LookupError>;
    /// The engine's `locate-asset` (path validation, then chain lookup).
    fn locate(&self, skill_path: &str, file: &str) -> Result<LocatedScript, LookupError>;
}

/// Every refusal of `run_script`, each with its own message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptError {
    /// `scripts.enabled` is false.
    Disabled,
    SkillNotFound {
        skill_path: String,
        detail: String,
    },
    PathTraversal {
        file: String,
        detail: String,
    },
    NotDeclared {
        skill_path: String,
        file: String,
        /// The file exists as a (non-script) asset of the skill.
        is_asset: bool,
    },
    /// Declared with `execution: claude`.
    ClientSide {
        skill_path: String,
        file: String,
    },
    MissingArgs {
        file: String,
        /// `name (description)` of every missing required argument.
        missing: Vec<String>,
    },
    InvalidArgs(String),
    ExtensionNotAllowed {
        file: String,
        allowed: Vec<String>,
    },
    FileMissing {
        file: String,
        path: PathBuf,
    },
    NoRunner {
        file: String,
        extension: String,
    },
    RunnerNotFound {
        runner: String,
        extension: String,
    },
    BadCwd {
        cwd: PathBuf,
        reason: String,
    },
    /// `scripts.max_concurrent` scripts are already running.
    Busy {
        limit: usize,
    },
    SpawnFailed(String),
    Catalog(String),
}

impl ScriptError {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Disabled => "scripts_disabled",
            Self::SkillNotFound { .. } => "skill_not_found",
            Self::PathTraversal { .. } => "path_traversal",
            Self::NotDeclared { .. } => "script_not_declared",
            Self::ClientSide { .. } => "client_side_script",
            Self::MissingArgs { .. } => "missing_args",
            Self::InvalidArgs(_) => "invalid_args",
            Self::ExtensionNotAllowed { .. } => "extension_not_allowed",
            Self::FileMissing { .. } => "file_missing",
            Self::NoRunner { .. } => "no_runner",
            Self::RunnerNotFound { .. } => "runner_not_found",
            Self::BadCwd { .. } => "invalid_cwd",
            Self::Busy { .. } => "busy",
            Self::SpawnFailed(_) => "spawn_failed",
            Self::Catalog(_) => "catalog_error",
        }
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Disabled => write!(
                f,
                "script execution is disabled globally (scripts.enabled: false in config.yaml)"
            ),
            Self::SkillNotFound { skill_path, detail } => {
                write!(f, "skill not found: {skill_path:?}")?;
                if !detail.is_empty() {
                    write!(f, " ({detail})")?;
                }
                Ok(())
            }
            Self::PathTraversal { file, detail } => write!(
                f,
                "path traversal rejected: {file:?} must be a relative path inside the skill's \
                 resource folder, without `..` or a leading `/` ({detail})"
            ),
            Self::NotDeclared {
                skill_path,
                file,
                is_asset,
            } => {
                if *is_asset {
                    write!(
                        f,
                        "script not declared: {file:?} is a file of skill {skill_path:?} but is \
                         not declared as a script; only scripts declared in the frontmatter \
                         `scripts:` list with `execution: server` can be run"
                    )
                } else {
                    write!(
                        f,
                        "script not declared: skill {skill_path:?} (and its parents) declare no \
                         script {file:?} in their frontmatter"
                    )
                }
            }
            Self::ClientSide { skill_path, file } => write!(
                f,
                "this script runs on the client: fetch it with get_asset (skill_path \
                 {skill_path:?}, file {file:?}) and run it yourself; only scripts declared with \
                 `execution: server` run on the server"
            ),
            Self::MissingArgs { file, missing } => write!(
                f,
                "missing required arguments for {file:?}: {}",
                missing.join(", ")
            ),
            Self::InvalidArgs(why) => write!(f, "invalid arguments: {why}"),
            Self::ExtensionNotAllowed { file, allowed } => write!(
                f,
                "extension not allowed: {file:?}; allowed extensions are {} \
                 (scripts.allowed_extensions)",
                allowed.join(", ")
            ),
            Self::FileMissing { file, path } => write!(
                f,
                "script file missing: {file:?} is declared but {} does not exist (or is not a \
                 regular file)",
                path.display()
            ),
            Self::NoRunner { file, extension } => write!(
                f,
                "no runner configured for {extension} scripts ({file:?}); set \
                 scripts.runners[\"{extension}\"] in config.yaml"
            ),
            Self::RunnerNotFound { runner, extension } => write!(
                f,
                "runner {runner:?} for {extension} scripts was not found on PATH (or is not \
                 executable)"
            ),
            Self::BadCwd { cwd, reason } => {
                write!(f, "invalid cwd {}: {reason}", cwd.display())
            }
            Self::Busy { limit } => write!(
                f,
                "busy: {limit} scripts are already running (scripts.max_concurrent); try again \
                 when one has finished"
            ),
            Self::SpawnFailed(why) => write!(f, "could not start the script: {why}"),
            Self::Catalog(why) => write!(f, "skill catalog error: {why}"),
        }
    }
}

impl std::error::Error for ScriptError {}

/// A request that passed the cascade: everything needed to spawn it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptPlan {
    /// Canonical path of the requested skill.
    pub skill_path: String,
    /// The script, as the engine normalised it (the response's `script`).
    pub file: String,
    /// The skill the script is inherited from, if any.
    pub from: Option<String>,
    /// The script, absolute (as checked; the runner is given the file opened through the
    /// root's sandbox at spawn time, not this path).
    pub script_path: PathBuf,
    /// The skill root holding the script, canonical: the sandbox the script is opened through.
    pub root_dir: PathBuf,
    /// The runner program, resolved on the script's PATH.
    pub program: PathBuf,
    /// The runner's leading arguments; the script path follows them.
    pub program_args: Vec<String>,
    pub cwd: PathBuf,
    /// The script's whole environment.
    pub env: Vec<(OsString, OsString)>,
    /// Names of the arguments given (never their values: they may be secrets).
    pub arg_names: Vec<String>,
}

/// Variables always passed through from the server's environment, when set.
const BASE_VARS: [&str; 5] = ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"];
/// PATH of a script when the server has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Most bytes of argument names and values together (Linux limits one variable to 128 KiB).
const MAX_ARGS_BYTES: usize = 96 * 1024;

/// `SKILL_ARG_<NAME>`: the name uppercased, every character outside `[A-Z0-9_]` replaced by
/// `_`. `None` for an empty name.
pub fn arg_env_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let upper: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_uppercase();
            if c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Some(format!("SKILL_ARG_{upper}"))
}

/// Run the validation cascade, in the spec's order: enabled, skill exists, path traversal,
/// declared, `execution: server`, required arguments, extension, file exists, runner; then
/// the request's own checks (argument names, cwd). `host_env` is the server's environment,
/// from which only the allowed variables are taken.
pub fn plan(
    config: &ScriptsConfig,
    catalog: &(impl ScriptCatalog + ?Sized),
    request: &RunRequest,
    host_env: &[(OsString, OsString)],
) -> Result<ScriptPlan, ScriptError> {
    // 1. Global kill switch: before touching the catalog.
    if !config.enabled {
        return Err(ScriptError::Disabled);
    }

    // 2. The skill exists.
    let skill = catalog.skill(&request.skill_path).map_err(|e| match e {
        LookupError::NotFound(detail) | LookupError::InvalidPath(detail) => {
            ScriptError::SkillNotFound {
                skill_path: request.skill_path.clone(),
                detail,
            }
        }
        LookupError::Other(why) => ScriptError::Catalog(why),
    })?;

    // 3-4. Path traversal (the engine validates the path), then declared in frontmatter.
    let located = catalog
        .locate(&skill.skill_path, &request.file)
        .map_err(|e| match e {
            LookupError::InvalidPath(detail) => ScriptError::PathTraversal {
                file: request.file.clone(),
                detail,
            },
            LookupError::NotFound(_) => ScriptError::NotDeclared {
                skill_path: skill.skill_path.clone(),
                file: request.file.clone(),
                is_asset: false,
            },
            LookupError::Other(why) => ScriptError::Catalog(why),
        })?;
    let Some(decl) = &located.script else {
        return Err(ScriptError::NotDeclared {
            skill_path: skill.skill_path.clone(),
            file: located.file.clone(),
            is_asset: true,
        });
    };

    // 5. Runs on the server.
    if decl.execution != Execution::Server {
        return Err(ScriptError::ClientSide {
            skill_path: skill.skill_path.clone(),
            file: located.file.clone(),
        });
    }

    // 6. Required arguments (all of the missing ones listed). A declared name and a given one
    //    match when they map to the same variable (`client-id` and `client_id`).
    let given = arg_env_vars(&request.args)?;
    let missing: Vec<String> = decl
        .args
        .iter()
        .filter(|arg| arg.required)
        .filter(|arg| {
            arg_env_name(&arg.name).is_none_or(|var| !given.iter().any(|(v, _, _)| *v == var))
        })
        .map(|arg| {
            if arg.description.is_empty() {
                arg.name.clone()
            } else {
                format!("{} ({})", arg.name, arg.description)
            }
        })
        .collect();
    if !missing.is_empty() {
        return Err(ScriptError::MissingArgs {
            file: located.file.clone(),
            missing,
        });
    }

    // 7. Extension allowed.
    let extension = extension_of(&located.file);
    if !extension
        .as_deref()
        .is_some_and(|ext| config.extension_allowed(ext))
    {
        return Err(ScriptError::ExtensionNotAllowed {
            file: located.file.clone(),
            allowed: config.allowed_extensions.clone(),
        });
    }
    let extension = extension.unwrap_or_default();

    // 8. The file exists: in the index, and still on disk, a regular file inside its root.
    let file_missing = || ScriptError::FileMissing {
        file: located.file.clone(),
        path: located.path.clone(),
    };
    if located.size.is_none() {
        return Err(file_missing());
    }
    let script_path = checked_script_path(&located).ok_or_else(file_missing)?;
    let root_dir = located
        .root_dir
        .canonicalize()
        .map_err(|_| file_missing())?;

    // 9. A runner is configured, and found.
    let Some((runner, runner_args)) = config.runner_for(&extension) else {
        return Err(ScriptError::NoRunner {
            file: located.file.clone(),
            extension,
        });
    };
    let env = script_env(config, host_env, &given);
    let path_var = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| DEFAULT_PATH.into());
    let program = find_program(&runner, &path_var).ok_or_else(|| ScriptError::RunnerNotFound {
        runner: runner.clone(),
        extension: extension.clone(),
    })?;

    // The working directory.
    let cwd = match &request.cwd {
        Some(cwd) => checked_cwd(cwd)?,
        None => skill
            .resource_dir
            .clone()
            .filter(|dir| dir.is_dir())
            .unwrap_or_else(|| located.resource_dir.clone()),
    };

    Ok(ScriptPlan {
        skill_path: skill.skill_path,
        file: located.file.clone(),
        from: located.from.clone(),
        script_path,
        root_dir,
        program,
        program_args: runner_args,
        cwd,
        env,
        arg_names: request.args.keys().cloned().collect(),
    })
}

/// `(variable, name, value)` for every given argument; refuses empty names, two names for one
/// variable, NUL bytes and oversized arguments.
fn arg_env_vars(
    args: &BTreeMap<String, String>,
) -> Result<Vec<(String, String, String)>, ScriptError> {
    let mut vars: Vec<(String, String, String)> = Vec::with_capacity(args.len());
    let mut bytes = 0;
    for (name, value) in args {
        let var = arg_env_name(name)
            .ok_or_else(|| ScriptError::InvalidArgs("an argument name is empty".into()))?;
        if let Some((_, other, _)) = vars.iter().find(|(v, _, _)| *v == var) {
            return Err(ScriptError::InvalidArgs(format!(
                "arguments {other:?} and {name:?} would both be passed as {var}"
            )));
        }
        if name.contains('\0') || value.contains('\0') {
            return Err(ScriptError::InvalidArgs(format!(
                "argument {name:?} contains a NUL byte"
            )));
        }
        bytes += var.len() + value.len() + 2;
        if bytes > MAX_ARGS_BYTES {
            return Err(ScriptError::InvalidArgs(format!(
                "arguments exceed {MAX_ARGS_BYTES} bytes in total"
            )));
        }
        vars.push((var, name.clone(), value.clone()));
    }
    Ok(vars)
}

/// The script's environment: the base variables and the pass-through list (when set in the
/// server's environment), then the arguments. Nothing else of the server's.
fn script_env(
    config: &ScriptsConfig,
    host_env: &[(OsString, OsString)],
    args: &[(String, String, String)],
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    let wanted = BASE_VARS
        .iter()
        .copied()
        .chain(config.env_passthrough.iter().map(String::as_str));
    for name in wanted {
        if env.iter().any(|(k, _)| k == name) {
            continue;
        }
        if let Some((k, v)) = host_env.iter().rev().find(|(k, _)| k == name) {
            env.push((k.clone(), v.clone()));
        }
    }
    if !env.iter().any(|(k, _)| k == "PATH") {
        env.push(("PATH".into(), DEFAULT_PATH.into()));
    }
    for (var, _, value) in args {
        env.retain(|(k, _)| k != var.as_str());
        env.push((var.into(), value.into()));
    }
    env
}

/// The extension of the file name (`.sh`), if it has one.
fn extension_of(file: &str) -> Option<String> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let dot = name.rfind('.').filter(|&i| i > 0 && i + 1 < name.len())?;
    Some(name[dot..].to_string())
}

/// The script's canonical path, if it is a regular file inside its root (no symlink leads out).
fn checked_script_path(located: &LocatedScript) -> Option<PathBuf> {
    let path = located.path.canonicalize().ok()?;
    let root = located.root_dir.canonicalize().ok()?;
    (path.starts_with(&root) && path.metadata().ok()?.is_file()).then_some(path)
}

fn checked_cwd(cwd: &Path) -> Result<PathBuf, ScriptError> {
    let bad = |reason: &str| ScriptError::BadCwd {
        cwd: cwd.to_path_buf(),
        reason: reason.to_string(),
    };
    let dir = cwd
        .canonicalize()
        .map_err(|e| bad(&format!("it does not exist ({e})")))?;
    if !dir.is_dir() {
        return Err(bad("it is not a directory"));
    }
    Ok(dir)
}

/// `program` itself when it holds a `/`, else the first executable `PATH` entry of that name.
pub(crate) fn find_program(program: &str, path_var: &std::ffi::OsStr) -> Option<PathBuf> {
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(path_var)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}
