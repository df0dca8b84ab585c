//! The `scripts` section of the configuration (enabled, timeout, output cap, sandbox knobs);
//! [`crate::config`] embeds it, loads it in layers and checks its ranges.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Settings of `run_script`.
///
/// ```yaml
/// scripts:
///   enabled: true
///   timeout_seconds: 60
///   max_output_bytes: 1048576    # per stream (stdout and stderr each)
///   allowed_extensions: [.sh, .ts, .js, .py]
///   runners:                     # merged over the defaults, key by key
///     ".sh": "bash"
///     ".ts": "npx tsx"
///     ".js": "node"
///     ".py": "python3"
///   max_concurrent: 4            # beyond this, run_script answers "busy"
///   env_passthrough: []          # extra variables of the server's environment scripts may see
///   kill_grace_seconds: 5        # SIGTERM, this long, then SIGKILL (to the process group)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScriptsConfig {
    /// Global kill switch: `false` refuses every `run_script`.
    pub enabled: bool,
    /// Wall-clock limit of one run, in seconds (at least 1).
    pub timeout_seconds: u64,
    /// Most bytes kept of stdout, and of stderr; the rest is read and discarded.
    pub max_output_bytes: u64,
    /// Extensions (`.sh`; the leading dot is optional) a script may have.
    pub allowed_extensions: Vec<String>,
    /// Runner per extension: a program and its leading arguments, split on whitespace (the
    /// configuration loader merges a configured map over the defaults, key by key).
    pub runners: BTreeMap<String, String>,
    /// Most scripts running at once (at least 1).
    pub max_concurrent: usize,
    /// Names of variables of the server's environment passed to scripts, beyond the fixed
    /// `PATH`, `HOME`, `LANG`, `LC_ALL` and `TMPDIR`.
    pub env_passthrough: Vec<String>,
    /// Seconds between SIGTERM and SIGKILL when a script times out.
    pub kill_grace_seconds: u64,
}

impl Default for ScriptsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            timeout_seconds: 60,
            max_output_bytes: 1_048_576,
            allowed_extensions: [".sh", ".ts", ".js", ".py"].map(String::from).to_vec(),
            runners: default_runners(),
            max_concurrent: 4,
            env_passthrough: Vec::new(),
            kill_grace_seconds: 5,
        }
    }
}

fn default_runners() -> BTreeMap<String, String> {
    [
        (".sh", "bash"),
        (".ts", "npx tsx"),
        (".js", "node"),
        (".py", "python3"),
    ]
    .into_iter()
    .map(|(ext, runner)| (ext.to_string(), runner.to_string()))
    .collect()
}

/// `.sh` and `sh` name the same extension.
pub(crate) fn same_extension(configured: &str, ext: &str) -> bool {
    configured.trim().trim_start_matches('.') == ext.trim_start_matches('.')
}

impl ScriptsConfig {
    /// Whether scripts with extension `ext` (with its dot) may run.
    pub fn extension_allowed(&self, ext: &str) -> bool {
        self.allowed_extensions
            .iter()
            .any(|allowed| same_extension(allowed, ext))
    }

    /// The runner for `ext` (with its dot), split into program and leading arguments; `None`
    /// when none is configured (or it is blank).
    pub fn runner_for(&self, ext: &str) -> Option<(String, Vec<String>)> {
        let runner = self
            .runners
            .iter()
            .find(|(configured, _)| same_extension(configured, ext))?
            .1;
        let mut words = runner.split_whitespace().map(String::from);
        let program = words.next()?;
        Some((program, words.collect()))
    }
}
