//! What a skills root's own `config.yaml` may set. A skills root is content, not configuration
//! of the server: it may tune matching and tighten limits, never widen what the server does.

use serde_yaml::Value;

use super::Config;

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
const FILTERED_SECTIONS: [&str; 10] = [
    "server",
    "auth",
    "access",
    "matching",
    "refresh",
    "scripts",
    "assets",
    "analytics",
    "sources",
    "git",
];

/// A skills root is content, not configuration of the server: drop from `value` (the YAML of
/// `source`, a root's
/// `config.yaml`) every key that only the operator may set, with a warning naming the file and
/// the key. A root may set `matching`, lower the script and asset limits, turn scripts off
/// (`scripts.enabled: false`) and narrow `scripts.allowed_extensions`; everything else
/// (`scripts.env_passthrough`, `scripts.runners`, `analytics`, `sources`, `git`, `refresh`, a
/// raised limit) is ignored. Unknown keys are left for the unknown-key warning; values of the
/// wrong type are left for the type check (which names the file).
pub(super) fn restrict(source: &str, value: &mut Value, below: &Value, warnings: &mut Vec<String>) {
    let Value::Mapping(top) = value else {
        return;
    };
    let known = serde_yaml::to_value(Config::default()).expect("defaults serialize");
    let file = crate::logsafe::escape(source);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn restricted(text: &str) -> (Value, Vec<String>) {
        let mut value: Value = serde_yaml::from_str(text).unwrap();
        let below = serde_yaml::to_value(Config::default()).unwrap();
        let mut warnings = Vec::new();
        restrict("/r/config.yaml", &mut value, &below, &mut warnings);
        (value, warnings)
    }

    #[test]
    fn a_root_may_tune_matching_and_tighten_limits() {
        let text = "matching: {min_score: 0.5}\nscripts: {enabled: false, timeout_seconds: 5, \
                    allowed_extensions: [.sh]}";
        let (value, warnings) = restricted(text);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(value, serde_yaml::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn a_root_cannot_widen_what_the_server_does() {
        let (value, warnings) = restricted(
            "scripts: {enabled: true, timeout_seconds: 9999, allowed_extensions: [.rb], \
             runners: {.rb: ruby}}\nanalytics: {enabled: true}\nserver: \"x\"\nmatching: {typo: 1}",
        );
        // Only the unknown key is left, for the unknown-key warning.
        assert_eq!(
            value,
            serde_yaml::from_str::<Value>("matching: {typo: 1}").unwrap()
        );
        let keys: Vec<&str> = warnings
            .iter()
            .map(|w| w.split('`').nth(1).unwrap_or_default())
            .collect();
        assert_eq!(
            keys,
            [
                "server",
                "scripts.enabled",
                "scripts.timeout_seconds",
                "scripts.allowed_extensions",
                "scripts.runners",
                "analytics.enabled"
            ]
        );
        assert!(warnings[0].starts_with("/r/config.yaml: `server` ignored"));
    }
}
