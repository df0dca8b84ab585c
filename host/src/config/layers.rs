//! Layering: the built-in defaults, each root's `config.yaml`, `--config FILE`, the
//! environment, in that order (see [`crate::config`] for the precedence). This room reads and
//! merges layers; each section checks its own values ([`super::Section`]); what a skills root
//! may set is [`super::root_layer`]'s rule; which folders are roots is [`super::roots`]'s.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result, bail};
use serde_yaml::{Mapping, Value};

use super::{Config, Invalid, ROOT_CONFIG_FILE, RootSpec, resolve_roots, root_layer};

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
        root_layer::restrict(&layer.source, &mut layer.value, &below, &mut warnings);
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
            bail!("invalid configuration in {}: {bad}", layer.source);
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

pub(super) fn absolute(cwd: &Path, path: &Path) -> PathBuf {
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
            let bad = Invalid {
                key: key.join("."),
                value: serde_yaml::to_string(&value)
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
                allowed: e.to_string(),
            };
            return format!("invalid configuration in {}: {bad}", layer.source);
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
        let n: u32 = minutes
            .trim()
            .parse()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| {
                let bad = Invalid {
                    key: "REFRESH_INTERVAL_MINUTES".into(),
                    value: format!("{minutes:?}"),
                    allowed: "a whole number of minutes, at least 1".into(),
                };
                anyhow::anyhow!("invalid configuration in the environment: {bad}")
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
pub(super) fn merge(base: Value, over: Value) -> Value {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(s: &str) -> Value {
        serde_yaml::from_str(s).unwrap()
    }

    #[test]
    fn merge_is_key_by_key_for_mappings_and_whole_for_the_rest() {
        let base = yaml("a: {x: 1, y: 2}\nlist: [1, 2]\nn: 1");
        let over = yaml("a: {y: 3, z: 4}\nlist: [9]");
        assert_eq!(
            merge(base, over),
            yaml("a: {x: 1, y: 3, z: 4}\nlist: [9]\nn: 1")
        );
    }

    #[test]
    fn unknown_keys_are_reported_with_their_dotted_path() {
        let known = serde_yaml::to_value(Config::default()).unwrap();
        let input = yaml("matching: {min_score: 0.3, typo: 1}\nnope: {a: 1}");
        let mut seen = Vec::new();
        unknown_keys(&input, &known, "", &mut |k| seen.push(k));
        assert_eq!(seen, ["matching.typo", "nope"]);
    }

    #[test]
    fn the_environment_sets_its_keys_and_refuses_a_bad_interval() {
        let env: HashMap<String, String> = [
            ("ANALYTICS_ENDPOINT", "https://e.example/x"),
            ("REFRESH_INTERVAL_MINUTES", "5"),
            ("SKILLS_BRANCH", "dev"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let layer = env_layer(&env).unwrap().unwrap();
        assert_eq!(
            layer.value,
            yaml(
                "analytics: {enabled: true, endpoint: 'https://e.example/x'}\n\
                 refresh: {enabled: true, interval_minutes: 5}\nsources: {branch: dev}"
            )
        );
        assert!(env_layer(&HashMap::new()).unwrap().is_none());
        let bad: HashMap<String, String> =
            [("REFRESH_INTERVAL_MINUTES".to_string(), "0".to_string())].into();
        let e = env_layer(&bad).err().unwrap().to_string();
        assert_eq!(
            e,
            "invalid configuration in the environment: REFRESH_INTERVAL_MINUTES = \"0\"; \
             allowed: a whole number of minutes, at least 1"
        );
    }

    #[test]
    fn a_layer_is_a_mapping_and_a_wrong_type_is_located() {
        assert_eq!(parse_layer("f".into(), "").unwrap().value, yaml("{}"));
        let e = parse_layer("f".into(), "[1]").err().unwrap().to_string();
        assert!(e.contains("the top level is a list"), "{e}");
        let layer = parse_layer("f.yaml".into(), "matching:\n  max_results: many").unwrap();
        let err = serde_yaml::from_value::<Config>(layer.value.clone()).unwrap_err();
        let msg = type_error(&layer, &err);
        assert!(
            msg.starts_with(
                "invalid configuration in f.yaml: matching.max_results = many; allowed: "
            ),
            "{msg}"
        );
    }
}
