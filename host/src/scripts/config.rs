//! The `scripts` section of the configuration (enabled, timeout, output cap, sandbox knobs);
//! [`crate::config`] embeds it, loads it in layers and checks its ranges.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::check::{Checks, Section};

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

/// `.sh`: a dot followed by letters, digits, `_` or `-`.
fn valid_extension(e: &str) -> bool {
    e.len() >= 2
        && e.starts_with('.')
        && e[1..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl Section for ScriptsConfig {
    fn check(&self, c: &mut Checks) {
        c.at_least(
            "scripts.timeout_seconds",
            self.timeout_seconds,
            1,
            "a whole number of seconds, at least 1",
        );
        c.at_least(
            "scripts.max_output_bytes",
            self.max_output_bytes,
            1,
            "a whole number of bytes, at least 1",
        );
        c.within(
            "scripts.max_concurrent",
            self.max_concurrent,
            1..=1024,
            "a whole number of scripts from 1 to 1024",
        );
        c.within(
            "scripts.kill_grace_seconds",
            self.kill_grace_seconds,
            0..=3600,
            "a whole number of seconds from 0 to 3600",
        );
        for v in &self.env_passthrough {
            c.need(
                !v.is_empty() && !v.contains(['=', '\0']),
                "scripts.env_passthrough",
                format!("{v:?}"),
                "environment variable names",
            );
        }
        for e in &self.allowed_extensions {
            c.need(
                valid_extension(e),
                "scripts.allowed_extensions",
                format!("{e:?}"),
                "extensions such as \".sh\": a dot followed by letters, digits, '_' or '-'",
            );
        }
        for (e, runner) in &self.runners {
            let key = format!("scripts.runners.{e}");
            c.need(
                valid_extension(e),
                &key,
                format!("{e:?}"),
                "keys that are extensions such as \".sh\"",
            );
            c.need(
                !runner.trim().is_empty(),
                &key,
                format!("{runner:?}"),
                "a non-empty command, e.g. \"python3\"",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_are_a_dot_and_a_word() {
        for ok in [".sh", ".tar-gz", ".py_3"] {
            assert!(valid_extension(ok), "{ok}");
        }
        for bad in ["sh", ".", "", "./x", ".a b", ".sh\n"] {
            assert!(!valid_extension(bad), "{bad:?}");
        }
    }

    #[test]
    fn runner_splits_program_and_arguments() {
        let s = ScriptsConfig::default();
        assert_eq!(
            s.runner_for(".ts"),
            Some(("npx".to_string(), vec!["tsx".to_string()]))
        );
        assert!(s.extension_allowed("sh") && s.extension_allowed(".py"));
        assert!(!s.extension_allowed(".rb"));
    }

    #[test]
    fn bad_values_are_named_by_key() {
        let mut s = ScriptsConfig {
            timeout_seconds: 0,
            env_passthrough: vec!["A=B".into()],
            allowed_extensions: vec!["sh".into()],
            ..ScriptsConfig::default()
        };
        s.runners.insert(".rb".into(), " ".into());
        let mut c = Checks::default();
        s.check(&mut c);
        let keys: Vec<String> = c.into_vec().into_iter().map(|i| i.key).collect();
        assert_eq!(
            keys,
            [
                "scripts.timeout_seconds",
                "scripts.env_passthrough",
                "scripts.allowed_extensions",
                "scripts.runners..rb"
            ]
        );
    }
}
