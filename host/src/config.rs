//! Configuration: defaults, `config.yaml`, environment variables and flags, with a documented
//! precedence; and the list of skill roots.
//!
//! # Precedence (lowest first; a later layer overrides an earlier one key by key)
//!
//! 1. the built-in defaults ([`Config::default`], printed by `skills-mcp example-config`);
//! 2. `config.yaml` at each content root, in root order (a later root overrides an earlier one).
//!    A skills root (a git source's included) is content, not configuration of the server: it
//!    may set `matching`, lower the script and asset limits, turn scripts off and narrow the
//!    allowed extensions; any other known key (`scripts.env_passthrough`, `scripts.runners`,
//!    `analytics`, `sources`, `git`, `refresh`, a raised limit) is ignored there with a warning
//!    naming the file and the key (see `restrict_root_layer`);
//! 3. the file given with `--config FILE`;
//! 4. environment variables: `ANALYTICS_ENDPOINT` (sets `analytics.endpoint` and
//!    `analytics.enabled: true`), `REFRESH_INTERVAL_MINUTES` (sets `refresh.interval_minutes` and
//!    `refresh.enabled: true`), `SKILLS_REPO` (`sources.repo`), `SKILLS_BRANCH` (`sources.branch`),
//!    `GITHUB_TOKEN` (kept in memory only, never in a file);
//! 5. command-line flags (`--root DIR`).
//!
//! Mappings merge key by key (so `scripts.runners` in a file adds to the default runners);
//! any other value (a list, a number) replaces the lower layer's value whole.
//!
//! Unknown keys are warned about (stderr) and ignored. A value of the wrong type or out of range
//! stops start-up with a message naming the layer, the key, the value and what is allowed.
//!
//! # Roots (lowest precedence first)
//!
//! `~/.claude/skills`, `~/.agents/skills`, `./.claude/skills`, `./.agents/skills`, `./skills`
//! (each only when it is a directory, and only while `sources.default_roots` is true and
//! `--no-default-roots` is not given), then the
//! git sources (`sources.repo`, then each of `sources.repos`; see [`crate::git`]), then each
//! entry of `sources.roots`, then each entry of `SKILLS_DIR` (a path list: `:`-separated on Unix),
//! then each `--root DIR`, in order. A named root that is not a directory is skipped with a
//! warning, and is an error when no root is left. The bundled skills (embedded in the binary,
//! see [`crate::bundled`]) are used only when none of those gives or names a root. The same directory listed twice keeps its last (highest) place. The engine gives
//! a skill path found in a later root precedence over the same path in an earlier one.
//!
//! # Composition
//!
//! [`Config`] is a composition of section structs, each with serde defaults, so a module can own
//! its section (define the struct next to its code and put a field here).

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_yaml::{Mapping, Value};

/// The name of the configuration file looked up at each content root.
pub const ROOT_CONFIG_FILE: &str = "config.yaml";

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Config {
    pub matching: MatchingConfig,
    pub refresh: RefreshConfig,
    pub scripts: ScriptsConfig,
    pub assets: AssetsConfig,
    pub analytics: AnalyticsConfig,
    pub sources: SourcesConfig,
    pub git: GitConfig,
    /// How `serve` listens (stdio or HTTP); ignored in a root's `config.yaml`.
    pub server: crate::http::HttpConfig,
    /// Authentication of HTTP clients (operator only: ignored in a root's `config.yaml`).
    pub auth: AuthConfig,
    /// `GITHUB_TOKEN`, from the environment only (never read from or written to a file).
    #[serde(skip)]
    pub github_token: Option<String>,
}

/// How requests are matched to skills (the engine's settings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MatchingConfig {
    /// `ranked` (fielded BM25, the default) or `keywords` (the share of a skill's keywords the
    /// request matches).
    pub algorithm: Algorithm,
    /// Results scoring below this are dropped (0.0-1.0).
    pub min_score: f64,
    /// A gap between the two best scores below this makes a request ambiguous (0.0-1.0).
    pub ambiguity_threshold: f64,
    /// Most candidates returned for an ambiguous request (at least 1).
    pub max_results: u32,
}

impl Default for MatchingConfig {
    fn default() -> Self {
        Self {
            algorithm: Algorithm::Ranked,
            min_score: 0.2,
            ambiguity_threshold: 0.1,
            max_results: 3,
        }
    }
}

/// The ranking algorithm (mirrors the engine's `algorithm` enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    #[default]
    Ranked,
    Keywords,
}

/// Keeping the index fresh: periodic git refresh and the live reload of local roots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RefreshConfig {
    /// Periodic refresh of a git source.
    pub enabled: bool,
    /// Minutes between two periodic refreshes (at least 1).
    pub interval_minutes: u32,
    /// Watch local roots and rebuild the index when a file changes.
    pub watch: bool,
    /// Quiet time after the last change before a rebuild, in milliseconds (10-60000).
    pub debounce_ms: u64,
    /// Seconds between two periodic refreshes, overriding `interval_minutes` (for tests and
    /// demos; not shown by `example-config`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_seconds: Option<u64>,
}

impl Default for RefreshConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            interval_minutes: 15,
            watch: true,
            debounce_ms: 300,
            interval_seconds: None,
        }
    }
}

impl RefreshConfig {
    /// The period of the periodic git refresh.
    pub fn interval(&self) -> std::time::Duration {
        let secs = self
            .interval_seconds
            .unwrap_or(u64::from(self.interval_minutes) * 60);
        std::time::Duration::from_secs(secs.max(1))
    }
}

/// Server-side script execution (`run_script`): the section is owned by [`crate::scripts`].
pub use crate::scripts::ScriptsConfig;

/// Asset reading limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AssetsConfig {
    /// Largest asset `get_asset` returns, in bytes (at least 1).
    pub max_size_bytes: u64,
    /// Largest text asset returned inline, in bytes (at least 1).
    pub inline_text_max_bytes: u64,
}

impl Default for AssetsConfig {
    fn default() -> Self {
        Self {
            max_size_bytes: 1_048_576,
            inline_text_max_bytes: 10_240,
        }
    }
}

/// Usage analytics: the section is owned by [`crate::analytics`].
pub use crate::analytics::AnalyticsConfig;

/// Authentication over HTTP: the section is owned by [`crate::http_auth`].
pub use crate::http_auth::AuthConfig;

/// Where git sources are checked out: the section is owned by [`crate::git`].
pub use crate::git::{GitConfig, GitSourceConfig};

/// Where skills come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SourcesConfig {
    /// Use the standard roots (`~/.claude/skills`, `~/.agents/skills`, `./.claude/skills`,
    /// `./.agents/skills`, `./skills`) when they exist.
    pub default_roots: bool,
    /// More roots, after the standard ones (relative paths are relative to the working directory).
    pub roots: Vec<PathBuf>,
    /// Git URL of a skills repository (empty: no git source).
    pub repo: String,
    /// Branch of `repo` to track.
    pub branch: String,
    /// Folder of `repo` holding the skills (default: `skills/` when the branch has it, else the
    /// repository root).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subpath: Option<String>,
    /// More git repositories (`url`, `branch`, `subpath`, `token_env`), after `repo`.
    pub repos: Vec<GitSourceConfig>,
}

impl Default for SourcesConfig {
    fn default() -> Self {
        Self {
            default_roots: true,
            roots: Vec::new(),
            repo: String::new(),
            branch: "main".into(),
            subpath: None,
            repos: Vec::new(),
        }
    }
}

impl SourcesConfig {
    /// The git sources, lowest precedence first: `repo` (when set), then `repos`.
    pub fn git_sources(&self) -> Vec<GitSourceConfig> {
        let primary = (!self.repo.trim().is_empty()).then(|| GitSourceConfig {
            url: self.repo.trim().to_string(),
            branch: self.branch.trim().to_string(),
            subpath: self.subpath.clone(),
            token_env: None,
        });
        primary
            .into_iter()
            .chain(self.repos.iter().cloned())
            .collect()
    }
}

/// One value that is not allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// Dotted key, e.g. `matching.min_score`.
    pub key: String,
    /// The value as written.
    pub value: String,
    /// What is allowed.
    pub allowed: String,
}

impl Config {
    /// Every value that is out of range, by key.
    pub fn check(&self) -> Vec<Invalid> {
        let mut bad = Vec::new();
        let mut need = |ok: bool, key: &str, value: String, allowed: &str| {
            if !ok {
                bad.push(Invalid {
                    key: key.into(),
                    value,
                    allowed: allowed.into(),
                });
            }
        };
        let m = &self.matching;
        let unit = "a number from 0.0 to 1.0";
        need(
            (0.0..=1.0).contains(&m.min_score),
            "matching.min_score",
            m.min_score.to_string(),
            unit,
        );
        need(
            (0.0..=1.0).contains(&m.ambiguity_threshold),
            "matching.ambiguity_threshold",
            m.ambiguity_threshold.to_string(),
            unit,
        );
        need(
            (1..=1000).contains(&m.max_results),
            "matching.max_results",
            m.max_results.to_string(),
            "a whole number from 1 to 1000",
        );
        let r = &self.refresh;
        need(
            r.interval_minutes >= 1,
            "refresh.interval_minutes",
            r.interval_minutes.to_string(),
            "a whole number of minutes, at least 1",
        );
        need(
            (10..=60_000).contains(&r.debounce_ms),
            "refresh.debounce_ms",
            r.debounce_ms.to_string(),
            "a whole number of milliseconds from 10 to 60000",
        );
        let s = &self.scripts;
        need(
            s.timeout_seconds >= 1,
            "scripts.timeout_seconds",
            s.timeout_seconds.to_string(),
            "a whole number of seconds, at least 1",
        );
        need(
            s.max_output_bytes >= 1,
            "scripts.max_output_bytes",
            s.max_output_bytes.to_string(),
            "a whole number of bytes, at least 1",
        );
        need(
            (1..=1024).contains(&s.max_concurrent),
            "scripts.max_concurrent",
            s.max_concurrent.to_string(),
            "a whole number of scripts from 1 to 1024",
        );
        need(
            s.kill_grace_seconds <= 3600,
            "scripts.kill_grace_seconds",
            s.kill_grace_seconds.to_string(),
            "a whole number of seconds from 0 to 3600",
        );
        for v in &s.env_passthrough {
            need(
                !v.is_empty() && !v.contains(['=', '\0']),
                "scripts.env_passthrough",
                format!("{v:?}"),
                "environment variable names",
            );
        }
        for e in &s.allowed_extensions {
            need(
                valid_extension(e),
                "scripts.allowed_extensions",
                format!("{e:?}"),
                "extensions such as \".sh\": a dot followed by letters, digits, '_' or '-'",
            );
        }
        for (e, runner) in &s.runners {
            need(
                valid_extension(e),
                &format!("scripts.runners.{e}"),
                format!("{e:?}"),
                "keys that are extensions such as \".sh\"",
            );
            need(
                !runner.trim().is_empty(),
                &format!("scripts.runners.{e}"),
                format!("{runner:?}"),
                "a non-empty command, e.g. \"python3\"",
            );
        }
        let a = &self.assets;
        need(
            a.max_size_bytes >= 1,
            "assets.max_size_bytes",
            a.max_size_bytes.to_string(),
            "a whole number of bytes, at least 1",
        );
        need(
            a.inline_text_max_bytes >= 1,
            "assets.inline_text_max_bytes",
            a.inline_text_max_bytes.to_string(),
            "a whole number of bytes, at least 1",
        );
        let an = &self.analytics;
        need(
            an.endpoint.is_empty()
                || an.endpoint.starts_with("http://")
                || an.endpoint.starts_with("https://"),
            "analytics.endpoint",
            format!("{:?}", an.endpoint),
            "an http:// or https:// URL, or \"\"",
        );
        need(
            !(an.enabled && an.endpoint.is_empty()),
            "analytics.enabled",
            "true".into(),
            "true only with a non-empty analytics.endpoint",
        );
        need(
            !self.sources.branch.trim().is_empty(),
            "sources.branch",
            format!("{:?}", self.sources.branch),
            "a non-empty branch name",
        );
        if !self.sources.repo.trim().is_empty()
            && let Err(e) = self.sources.git_sources()[0].validate()
        {
            need(
                false,
                "sources.repo",
                format!("{:?}", self.sources.repo),
                &e,
            );
        }
        need(
            self.refresh.interval_seconds != Some(0),
            "refresh.interval_seconds",
            "0".into(),
            "a whole number of seconds, at least 1",
        );
        for (key, value) in [
            (
                "analytics.flush_interval_seconds",
                an.flush_interval_seconds,
            ),
            ("analytics.max_buffer_events", an.max_buffer_events as u64),
            ("analytics.timeout_seconds", an.timeout_seconds),
            ("git.timeout_seconds", self.git.timeout_seconds),
        ] {
            need(
                value >= 1,
                key,
                value.to_string(),
                "a whole number, at least 1",
            );
        }
        for (key, value, allowed) in self.server.check() {
            need(false, &key, value, &allowed);
        }
        bad
    }
}

fn valid_extension(e: &str) -> bool {
    e.len() >= 2
        && e.starts_with('.')
        && e[1..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Where a root came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootSource {
    /// The `skills/` folder shipped with skills-mcp (used only when nothing else is configured).
    Bundled,
    /// `~/.claude/skills`, `~/.agents/skills`, `./.claude/skills`, `./.agents/skills` or `./skills`.
    Standard,
    /// A git source (`sources.repo`, `sources.repos`): its checkout, which may not exist yet.
    Git,
    /// `sources.roots` of the configuration.
    Config,
    /// The `SKILLS_DIR` environment variable.
    Env,
    /// A `--root DIR` flag.
    Flag,
}

/// One skill root, in precedence order (the first has the lowest precedence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootSpec {
    /// The directory as given (made absolute).
    pub path: PathBuf,
    pub source: RootSource,
}

impl RootSpec {
    /// A short, stable display name (the path).
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// What [`load`] needs from the world; [`LoadOptions::from_process`] fills it from the process.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// `--config FILE`.
    pub config_file: Option<PathBuf>,
    /// `--root DIR` flags, in order.
    pub roots: Vec<PathBuf>,
    /// The environment variables (only the ones listed in the module docs are read).
    pub env: HashMap<String, String>,
    /// Working directory (for `./skills` and relative paths).
    pub cwd: PathBuf,
    /// Home directory (for `~/.claude/skills`), if any.
    pub home: Option<PathBuf>,
    /// A folder to serve when no root is given (tests; `None` in the binary).
    pub bundled: Option<PathBuf>,
    /// Serve the skills embedded in the binary when no root is given and `bundled` is `None`
    /// ([`crate::bundled`]; unpacked only then).
    pub embedded_bundle: bool,
    /// `--no-default-roots`: skip the standard folders whatever `sources.default_roots` says.
    pub no_default_roots: bool,
}

/// The environment variables the configuration reads.
pub const ENV_VARS: [&str; 8] = [
    "ANALYTICS_ENDPOINT",
    "SKILLS_MCP_DATABASE_URL",
    "SKILLS_MCP_SUBJECT_KEY",
    "REFRESH_INTERVAL_MINUTES",
    "SKILLS_DIR",
    "SKILLS_REPO",
    "SKILLS_BRANCH",
    "GITHUB_TOKEN",
];

impl LoadOptions {
    /// Options from this process: its environment, working and home directories, and the
    /// skills embedded in the binary as the fallback root.
    pub fn from_process(config_file: Option<PathBuf>, roots: Vec<PathBuf>) -> Self {
        let env = ENV_VARS
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        Self {
            config_file,
            roots,
            env,
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            home: std::env::home_dir(),
            bundled: None,
            embedded_bundle: true,
            no_default_roots: false,
        }
    }
}

/// The skills embedded in the binary, unpacked read-only into the cache folder and checked (see
/// [`crate::bundled`]); `None`, with a warning, when they cannot be unpacked.
pub fn bundled_skills_dir() -> Option<PathBuf> {
    match crate::bundled::dir() {
        Ok(dir) => dir,
        Err(e) => {
            tracing::warn!(
                "the bundled skills are not available: {}",
                crate::logsafe::Escaped(format!("{e:#}"))
            );
            None
        }
    }
}

/// The outcome of [`load`].
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    /// Skill roots, lowest precedence first.
    pub roots: Vec<RootSpec>,
    /// Things worth telling the user (unknown keys, ignored sections); print them to stderr.
    pub warnings: Vec<String>,
    /// The layers applied, lowest first (e.g. `defaults`, `/skills/config.yaml`, `environment`).
    pub layers: Vec<String>,
}

/// One layer of configuration: where it came from and its YAML.
struct Layer {
    source: String,
    value: Value,
}

/// Load the configuration and resolve the roots (see the module docs for the precedence).
pub fn load(opts: &LoadOptions) -> Result<Loaded> {
    let mut warnings = Vec::new();
    let defaults = serde_yaml::to_value(Config::default()).expect("defaults serialize");

    // The --config file and the environment are read first: they say which roots exist.
    let file_layer = match &opts.config_file {
        Some(path) => {
            let path = absolute(&opts.cwd, path);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading the configuration file {}", path.display()))?;
            Some(parse_layer(path.display().to_string(), &text)?)
        }
        None => None,
    };
    let env_layer = env_layer(&opts.env)?;

    // Sources as known without the roots' own files.
    let mut acc = defaults.clone();
    for layer in file_layer.iter().chain(env_layer.iter()) {
        acc = merge(acc, layer.value.clone());
        if let Err(e) = serde_yaml::from_value::<Config>(acc.clone()) {
            bail!("{}", type_error(layer, &e));
        }
    }
    let early: Config = from_value(&acc, "the configuration")?;
    let roots = resolve_roots(opts, &early, &mut warnings)?;

    // Now every layer, in order.
    let mut layers = vec![Layer {
        source: "defaults".into(),
        value: defaults,
    }];
    for root in &roots {
        let file = root.path.join(ROOT_CONFIG_FILE);
        if !file.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        let mut layer = parse_layer(file.display().to_string(), &text)?;
        // What the layers below (defaults, earlier roots) say: a root may only tighten it.
        let below = layers
            .iter()
            .fold(Value::Null, |acc, l| merge(acc, l.value.clone()));
        restrict_root_layer(&mut layer, &below, &mut warnings);
        layers.push(layer);
    }
    layers.extend(file_layer);
    layers.extend(env_layer);

    let mut acc = Value::Null;
    let mut names = Vec::new();
    for layer in layers {
        acc = merge(acc, layer.value.clone());
        let config: Config = match serde_yaml::from_value(acc.clone()) {
            Ok(c) => c,
            Err(e) => bail!("{}", type_error(&layer, &e)),
        };
        if layer.source != "defaults" {
            let known = serde_yaml::to_value(&config).expect("config serializes");
            unknown_keys(&layer.value, &known, "", &mut |key| {
                warnings.push(format!("{}: unknown key `{key}` ignored", layer.source))
            });
        }
        if let Some(bad) = config.check().into_iter().next() {
            bail!(
                "invalid configuration in {}: {} = {}; allowed: {}",
                layer.source,
                bad.key,
                bad.value,
                bad.allowed
            );
        }
        names.push(layer.source);
    }
    let mut config: Config = from_value(&acc, "the configuration")?;
    config.github_token = opts
        .env
        .get("GITHUB_TOKEN")
        .filter(|t| !t.is_empty())
        .cloned();
    Ok(Loaded {
        config,
        roots,
        warnings,
        layers: names,
    })
}

fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

fn parse_layer(source: String, text: &str) -> Result<Layer> {
    // The engine's linear nesting bound, before serde_yaml's quadratic time on deep nesting.
    if let Err(deep) = skills_engine::nesting::check(text, skills_engine::nesting::MAX_DEPTH) {
        bail!("invalid configuration in {source}: {deep}; flatten it");
    }
    let value: Value = serde_yaml::from_str(text)
        .map_err(|e| anyhow::anyhow!("invalid configuration in {source}: {e}"))?;
    let value = match value {
        Value::Null => Value::Mapping(Mapping::new()),
        Value::Mapping(m) => Value::Mapping(m),
        other => bail!(
            "invalid configuration in {source}: the top level is {}; allowed: a mapping of sections (matching, refresh, scripts, assets, analytics, sources)",
            kind(&other)
        ),
    };
    Ok(Layer { source, value })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// A message for a value of the wrong type in `layer`: the first key whose value alone does not
/// deserialize, its value, and what serde expected.
fn type_error(layer: &Layer, error: &serde_yaml::Error) -> String {
    let defaults = serde_yaml::to_value(Config::default()).expect("defaults serialize");
    let mut leaves = Vec::new();
    leaves_of(&layer.value, &mut Vec::new(), &mut leaves);
    for (path, value) in leaves {
        let mut single = value.clone();
        for key in path.iter().rev() {
            let mut m = Mapping::new();
            m.insert(key.clone(), single);
            single = Value::Mapping(m);
        }
        if let Err(e) = serde_yaml::from_value::<Config>(merge(defaults.clone(), single)) {
            let key: Vec<String> = path
                .iter()
                .map(|k| {
                    serde_yaml::to_string(k)
                        .unwrap_or_default()
                        .trim()
                        .to_string()
                })
                .collect();
            let shown = serde_yaml::to_string(&value).unwrap_or_default();
            return format!(
                "invalid configuration in {}: {} = {}; allowed: {}",
                layer.source,
                key.join("."),
                shown.trim(),
                e
            );
        }
    }
    format!("invalid configuration in {}: {error}", layer.source)
}

fn leaves_of(v: &Value, path: &mut Vec<Value>, out: &mut Vec<(Vec<Value>, Value)>) {
    match v {
        Value::Mapping(m) if !m.is_empty() => {
            for (k, child) in m {
                path.push(k.clone());
                leaves_of(child, path, out);
                path.pop();
            }
        }
        other => out.push((path.clone(), other.clone())),
    }
}

fn from_value(v: &Value, source: &str) -> Result<Config> {
    serde_yaml::from_value(v.clone()).map_err(|e| {
        // serde_yaml names the key path (`matching.min_score: invalid type: ...`).
        anyhow::anyhow!("invalid configuration in {source}: {e}")
    })
}

/// Keys of a root's `config.yaml` that a skills root may set, whatever their value: how its
/// skills are matched.
const ROOT_MAY_SET: [&str; 4] = [
    "matching.algorithm",
    "matching.min_score",
    "matching.ambiguity_threshold",
    "matching.max_results",
];

/// Limits a root may lower (never raise) below what the defaults and earlier roots say.
const ROOT_MAY_LOWER: [&str; 6] = [
    "scripts.timeout_seconds",
    "scripts.max_output_bytes",
    "scripts.max_concurrent",
    "scripts.kill_grace_seconds",
    "assets.max_size_bytes",
    "assets.inline_text_max_bytes",
];

/// The sections a root's `config.yaml` is filtered in: there, a known key not allowed above is
/// the operator's alone (`--config FILE`, the environment, flags).
const FILTERED_SECTIONS: [&str; 9] = [
    "server",
    "auth",
    "matching",
    "refresh",
    "scripts",
    "assets",
    "analytics",
    "sources",
    "git",
];

/// A skills root is content, not configuration of the server: drop from `layer` (a root's
/// `config.yaml`) every key that only the operator may set, with a warning naming the file and
/// the key. A root may set `matching`, lower the script and asset limits, turn scripts off
/// (`scripts.enabled: false`) and narrow `scripts.allowed_extensions`; everything else
/// (`scripts.env_passthrough`, `scripts.runners`, `analytics`, `sources`, `git`, `refresh`, a
/// raised limit) is ignored. Unknown keys are left for the unknown-key warning; values of the
/// wrong type are left for the type check (which names the file).
fn restrict_root_layer(layer: &mut Layer, below: &Value, warnings: &mut Vec<String>) {
    let Value::Mapping(top) = &mut layer.value else {
        return;
    };
    let known = serde_yaml::to_value(Config::default()).expect("defaults serialize");
    let file = crate::logsafe::escape(&layer.source);
    let mut refused = |key: String, why: String| {
        warnings.push(format!(
            "{file}: `{}` ignored: {why} (a skills root is content and cannot configure the \
             server; the operator sets it with --config FILE, the environment or a flag)",
            crate::logsafe::escape(&key)
        ));
    };
    for section in FILTERED_SECTIONS {
        let Some(Value::Mapping(keys)) = top.get_mut(section) else {
            if top.contains_key(section) && !matches!(top.get(section), Some(Value::Null)) {
                // Not a mapping: only a whole-section value, always operator-only here.
                top.remove(section);
                refused(
                    section.to_string(),
                    "only the operator configures it".into(),
                );
            }
            continue;
        };
        let names: Vec<Value> = keys.keys().cloned().collect();
        for name in names {
            let Some(name_str) = name.as_str().map(str::to_string) else {
                continue;
            };
            let key = format!("{section}.{name_str}");
            let is_known = known.get(section).and_then(|s| s.get(&name)).is_some()
                || key == "refresh.interval_seconds"
                || key == "sources.subpath";
            if !is_known {
                continue; // reported as an unknown key
            }
            let value = keys.get(&name).cloned().unwrap_or(Value::Null);
            let current = below.get(section).and_then(|s| s.get(&name));
            let verdict: Result<(), String> = if ROOT_MAY_SET.contains(&key.as_str()) {
                Ok(())
            } else if ROOT_MAY_LOWER.contains(&key.as_str()) {
                match (value.as_u64(), current.and_then(Value::as_u64)) {
                    (Some(v), Some(now)) if v > now => Err(format!(
                        "a skills root may only lower this limit ({v} is above {now})"
                    )),
                    _ => Ok(()),
                }
            } else if key == "scripts.enabled" {
                match value.as_bool() {
                    Some(true) => Err("a skills root may only turn scripts off".into()),
                    _ => Ok(()),
                }
            } else if key == "scripts.allowed_extensions" {
                let now: Vec<&str> = current
                    .and_then(Value::as_sequence)
                    .map(|s| s.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let wider = value.as_sequence().is_some_and(|exts| {
                    exts.iter()
                        .filter_map(Value::as_str)
                        .any(|e| !now.iter().any(|n| crate::scripts::same_extension(n, e)))
                });
                if wider {
                    Err("a skills root may only narrow the allowed extensions".into())
                } else {
                    Ok(())
                }
            } else {
                Err("only the operator configures it".into())
            };
            if let Err(why) = verdict {
                keys.remove(&name);
                refused(key, why);
            }
        }
        if keys.is_empty() {
            top.remove(section);
        }
    }
}

/// The environment as a layer.
fn env_layer(env: &HashMap<String, String>) -> Result<Option<Layer>> {
    let mut root = Mapping::new();
    let mut set = |section: &str, key: &str, value: Value| {
        let entry = root
            .entry(Value::String(section.into()))
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if let Value::Mapping(m) = entry {
            m.insert(Value::String(key.into()), value);
        }
    };
    if let Some(endpoint) = env.get("ANALYTICS_ENDPOINT").filter(|v| !v.is_empty()) {
        set("analytics", "enabled", Value::Bool(true));
        set("analytics", "endpoint", Value::String(endpoint.clone()));
    }
    // The usage store's database and subject key (secrets: the environment, not a file).
    for (var, key) in [
        ("SKILLS_MCP_DATABASE_URL", "database_url"),
        ("SKILLS_MCP_SUBJECT_KEY", "subject_key"),
    ] {
        if let Some(value) = env.get(var).filter(|v| !v.trim().is_empty()) {
            set("analytics", key, Value::String(value.trim().to_owned()));
        }
    }
    if let Some(minutes) = env
        .get("REFRESH_INTERVAL_MINUTES")
        .filter(|v| !v.is_empty())
    {
        let n: u32 = minutes.trim().parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
            anyhow::anyhow!(
                "invalid configuration in the environment: REFRESH_INTERVAL_MINUTES = {minutes:?}; allowed: a whole number of minutes, at least 1"
            )
        })?;
        set("refresh", "enabled", Value::Bool(true));
        set("refresh", "interval_minutes", Value::Number(n.into()));
    }
    if let Some(repo) = env.get("SKILLS_REPO").filter(|v| !v.is_empty()) {
        set("sources", "repo", Value::String(repo.clone()));
    }
    if let Some(branch) = env.get("SKILLS_BRANCH").filter(|v| !v.is_empty()) {
        set("sources", "branch", Value::String(branch.clone()));
    }
    Ok((!root.is_empty()).then(|| Layer {
        source: "the environment".into(),
        value: Value::Mapping(root),
    }))
}

/// `over` merged onto `base`: mappings key by key, anything else replaced.
fn merge(base: Value, over: Value) -> Value {
    match (base, over) {
        (Value::Mapping(mut b), Value::Mapping(o)) => {
            for (k, v) in o {
                let merged = match b.remove(&k) {
                    Some(old) => merge(old, v),
                    None => v,
                };
                b.insert(k, merged);
            }
            Value::Mapping(b)
        }
        (_, over) => over,
    }
}

/// Report every key of `input` that `known` (the parsed configuration, serialized) lacks.
fn unknown_keys(input: &Value, known: &Value, prefix: &str, report: &mut dyn FnMut(String)) {
    let (Value::Mapping(input), Value::Mapping(known)) = (input, known) else {
        return;
    };
    for (k, v) in input {
        let name = match k {
            Value::String(s) => s.clone(),
            other => serde_yaml::to_string(other)
                .unwrap_or_default()
                .trim()
                .to_string(),
        };
        let key = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}.{name}")
        };
        match known.get(k) {
            None => report(key),
            Some(kv) => unknown_keys(v, kv, &key, report),
        }
    }
}

/// The skill roots, lowest precedence first (see the module docs).
///
/// Standard roots are used when they exist; `sources.roots`, `SKILLS_DIR` entries and `--root`
/// flags that are not directories are skipped with a warning (pushed on `warnings`), and are an
/// error when no root is left; a git source's root is its checkout's path, which exists once
/// cloned. The bundled folder is used only when nothing else gives (or names) a root.
pub fn resolve_roots(
    opts: &LoadOptions,
    config: &Config,
    warnings: &mut Vec<String>,
) -> Result<Vec<RootSpec>> {
    let sources = &config.sources;
    let mut roots = Vec::new();
    if sources.default_roots && !opts.no_default_roots {
        let mut standard = Vec::new();
        if let Some(home) = &opts.home {
            standard.push(home.join(".claude").join("skills"));
            standard.push(home.join(".agents").join("skills"));
        }
        standard.push(opts.cwd.join(".claude").join("skills"));
        standard.push(opts.cwd.join(".agents").join("skills"));
        standard.push(opts.cwd.join("skills"));
        for path in standard {
            if path.is_dir() {
                roots.push(RootSpec {
                    path,
                    source: RootSource::Standard,
                });
            }
        }
    }
    for git in sources.git_sources() {
        roots.push(RootSpec {
            path: crate::git::root_path(&config.git, &git),
            source: RootSource::Git,
        });
    }
    let explicit = sources
        .roots
        .iter()
        .map(|p| (p.clone(), RootSource::Config, "sources.roots"))
        .chain(
            opts.env
                .get("SKILLS_DIR")
                .filter(|v| !v.is_empty())
                .map(|v| std::env::split_paths(v).collect::<Vec<_>>())
                .unwrap_or_default()
                .into_iter()
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| (p, RootSource::Env, "SKILLS_DIR")),
        )
        .chain(
            opts.roots
                .iter()
                .map(|p| (p.clone(), RootSource::Flag, "--root")),
        );
    let mut missing = Vec::new();
    for (path, source, from) in explicit {
        let path = absolute(&opts.cwd, &path);
        if !path.is_dir() {
            missing.push(format!(
                "{from}: {} is not a directory; allowed: an existing directory of skills",
                path.display()
            ));
            continue;
        }
        roots.push(RootSpec { path, source });
    }
    if roots.is_empty() && !missing.is_empty() {
        bail!("no skill root to serve: {}", missing.join("; "));
    }
    warnings.extend(missing.into_iter().map(|m| format!("{m} (skipped)")));
    if roots.is_empty() {
        let bundled = match &opts.bundled {
            Some(dir) => Some(dir.clone()),
            None if opts.embedded_bundle => bundled_skills_dir(),
            None => None,
        };
        if let Some(bundled) = bundled.filter(|d| d.is_dir()) {
            roots.push(RootSpec {
                path: bundled,
                source: RootSource::Bundled,
            });
        }
    }
    // The same directory twice keeps its last place.
    let keys: Vec<PathBuf> = roots
        .iter()
        .map(|r| r.path.canonicalize().unwrap_or_else(|_| r.path.clone()))
        .collect();
    let mut out = Vec::new();
    for (i, root) in roots.into_iter().enumerate() {
        if !keys[i + 1..].contains(&keys[i]) {
            out.push(root);
        }
    }
    Ok(out)
}

/// The full default configuration, a comment on every key (`skills-mcp example-config`).
pub const EXAMPLE_CONFIG: &str = r#"# skills-mcp configuration (every value below is the default).
#
# Pass it with `--config FILE`. A skills root's own `config.yaml` is content, not configuration
# of the server: there only `matching`, lower script and asset limits, `scripts.enabled: false`
# and a narrower `scripts.allowed_extensions` apply; any other key is ignored with a warning.
# Precedence, lowest first: defaults < config.yaml of each root (in root order)
#   < --config FILE < environment variables < command-line flags.
# Environment: ANALYTICS_ENDPOINT, REFRESH_INTERVAL_MINUTES, SKILLS_DIR, SKILLS_REPO,
#   SKILLS_BRANCH, GITHUB_TOKEN. Unknown keys are warned about and ignored.

# How a request is matched to skills.
matching:
  # Ranking: `ranked` (fielded BM25 with stemming, scores 0..1) or `keywords` (the
  # keyword-overlap scoring of the original spec).
  algorithm: ranked
  # Results scoring below this are dropped (0.0-1.0).
  min_score: 0.2
  # When the two best scores are closer than this, the request is ambiguous (0.0-1.0).
  ambiguity_threshold: 0.1
  # Most candidates returned for an ambiguous request (1-1000).
  max_results: 3

# Keeping the index fresh.
refresh:
  # Periodically pull the git source (when `sources.repo` is set) and reindex.
  enabled: true
  # Minutes between two periodic refreshes (at least 1).
  interval_minutes: 15
  # Watch local roots and reindex when a file changes (live reload).
  watch: true
  # Quiet time after the last change before reindexing, in milliseconds (10-60000).
  debounce_ms: 300

# Server-side scripts (`run_script`; only scripts declared `execution: server`).
scripts:
  # Global switch for running scripts on the server.
  enabled: true
  # Seconds before a script's process group is killed (at least 1).
  timeout_seconds: 60
  # Cap on each of stdout and stderr, in bytes.
  max_output_bytes: 1048576
  # Extensions a script may have.
  allowed_extensions:
    - .sh
    - .ts
    - .js
    - .py
  # Program (and arguments) that runs a script, by extension; no shell is involved.
  runners:
    # JavaScript.
    .js: node
    # Python.
    .py: python3
    # Shell scripts.
    .sh: bash
    # TypeScript.
    .ts: npx tsx
  # Most scripts running at once; beyond, run_script answers "busy" (1-1024).
  max_concurrent: 4
  # Variables of the server's environment passed to scripts, besides PATH, HOME, LANG, LC_ALL
  # and TMPDIR (nothing else of the server's environment reaches a script).
  env_passthrough: []
  # Seconds between SIGTERM and SIGKILL to the script's process group at the timeout.
  kill_grace_seconds: 5

# Assets served by `get_asset`.
assets:
  # Largest asset returned, in bytes.
  max_size_bytes: 1048576
  # Largest text asset returned inline, in bytes.
  inline_text_max_bytes: 10240

# Usage analytics (events are POSTed in batches; a local JSONL file buffers failures).
analytics:
  # Send events (needs an endpoint; ANALYTICS_ENDPOINT sets both).
  enabled: false
  # http:// or https:// URL of the endpoint.
  endpoint: ""
  # Seconds between two batches.
  flush_interval_seconds: 30
  # Events not delivered yet wait here (JSONL), and are sent with the next batch.
  buffer_path: ~/.skills-mcp/analytics-buffer.jsonl
  # Most events kept waiting; the oldest are dropped beyond, and the count is reported.
  max_buffer_events: 10000
  # Seconds a POST may take.
  timeout_seconds: 10
  # The usage store, read by `skills-mcp stats` (independent of the endpoint above).
  # A SQLite file ("" = $XDG_STATE_HOME/skills-mcp/usage.sqlite3), or off.
  store: ""
  # postgres://user:password@host/db?sslmode=verify-full: several replicas write to one
  # database instead of the file (SKILLS_MCP_DATABASE_URL sets it).
  database_url: ""
  # Keep the request text of no_match, ambiguous and skill_served events.
  record_queries: true
  # The caller's authenticated subject on events: true, hash (keyed with subject_key), false.
  record_subjects: true
  # The secret of record_subjects: hash (SKILLS_MCP_SUBJECT_KEY sets it).
  subject_key: ""
  # Events older than this many days are deleted from the store (0 keeps everything).
  retention_days: 90
  # Put beside server_id on events ("" = SKILLS_MCP_REPLICA_ID, else the host name).
  replica_id: ""

# Where skills come from.
sources:
  # Use ~/.claude/skills, ~/.agents/skills, ./.claude/skills, ./.agents/skills and ./skills
  # when they exist.
  default_roots: true
  # More skill roots, after the standard ones (SKILLS_DIR and --root come after these).
  roots: []
  # Git URL of a skills repository (SKILLS_REPO); empty for none.
  repo: ""
  # Branch of the repository to track (SKILLS_BRANCH).
  branch: main
  # Folder of the repository holding the skills (default: skills/ when it exists, else the root).
  # subpath: skills
  # More git repositories, after `repo`, each with url, branch, subpath and token_env (the
  # variable holding its token; default GITHUB_TOKEN). Tokens never go in a file.
  repos: []

# Git checkouts (one folder per source; skills are served from an immutable snapshot per commit).
git:
  # Where checkouts live.
  content_dir: ~/.skills-mcp/content
  # Seconds a git command (clone, fetch) may take before it is stopped.
  timeout_seconds: 120

# How `serve` speaks MCP (ignored in a root's config.yaml). See docs/http.md.
server:
  # `stdio` (the default) or `http` (as `serve --http`).
  transport: stdio
  # Address `serve --http` listens on (IP:PORT, localhost:PORT or :PORT).
  listen: 127.0.0.1:8080
  # Host header values accepted (names or name:port; "*" accepts any). Others get 403.
  allowed_hosts:
    - localhost
    - 127.0.0.1
    - ::1
  # Origin values accepted (scheme://host[:port], `:*` for any port). Others get 403;
  # requests without an Origin (not from a browser) are accepted.
  allowed_origins:
    - http://localhost:*
    - http://127.0.0.1:*
    - http://[::1]:*
    - https://localhost:*
    - https://127.0.0.1:*
    - https://[::1]:*
  # Listen on a non-loopback address without authentication (open to everyone).
  public_without_auth: false
  # Largest request body, in bytes (413 beyond; at least 1024).
  max_body_bytes: 1048576
  # Seconds to read a request and produce its response head (504 beyond).
  request_timeout_seconds: 30
  # Most requests handled at once; beyond, 503 at once (never a queue).
  max_in_flight: 256
  # Seconds a connection may take to send its headers, or stay idle, before it is closed.
  header_read_timeout_seconds: 10
  # Seconds a shutdown (SIGTERM, SIGINT) waits for requests in flight.
  shutdown_grace_seconds: 10
  # Sessions and SSE streams for clients older than 2026-07-28; false: every request is
  # answered statelessly (any replica answers any request).
  sessions: true

# Authentication of HTTP clients (serve --http); ignored in a root's config.yaml. Flags
# (--auth-tokens-file, --auth-tokens-env, --resource-url, --oauth-issuer, --oauth-jwks) override it.
auth:
  # File of static bearer tokens, one per line: `TOKEN [SCOPE...]` (no scope: every scope).
  tokens_file: ""
  # Environment variable holding static tokens (same lines, separated by newlines or `;`).
  tokens_env: SKILLS_MCP_AUTH_TOKENS
  # This server's public URL (the audience of JWTs, the `resource` of the metadata).
  resource_url: ""
  # OAuth 2.1 resource server: JWT access tokens of these authorization servers.
  oauth:
    # Issuer identifiers of the accepted authorization servers (empty: OAuth off).
    issuers: []
    # Their signing keys: a JWKS file or an http(s) URL.
    jwks: ""
    # Minutes after which the key set is fetched again (in the background).
    jwks_refresh_minutes: 15
    # Least seconds between two fetches caused by a token with an unknown `kid`.
    jwks_min_refresh_seconds: 30
    # Seconds a JWKS fetch may take.
    jwks_timeout_seconds: 10
    # Clock skew allowed on `exp` and `nbf`, in seconds (0-300).
    leeway_seconds: 60
  # Names of the scopes tokens carry.
  scopes:
    # Reading skills: tools, resources, prompts, skills/*.
    read: skills:read
    # Running scripts (`run_script`).
    run: skills:run
    # Refreshing sources (`refresh_skills`).
    refresh: skills:refresh
  # Largest request body the scope check reads, in bytes (larger: 413).
  max_body_bytes: 4194304
"#;
