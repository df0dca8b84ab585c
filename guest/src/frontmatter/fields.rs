//! Typed fields read leniently from the YAML (strings, lists, booleans, integers) and
//! the file line of a key.

use super::*;

/// A mapping key as a JSON object key: strings as-is, scalars in their YAML spelling,
/// anything else as its JSON text.
pub fn key_string(k: &Value) -> String {
    match k {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Tagged(t) => key_string(&t.value),
        other => {
            let mut s = String::new();
            write_value(other, &mut s);
            s
        }
    }
}

/// Look up a string key in a frontmatter mapping; `null` counts as absent.
pub fn get<'a>(map: &'a Mapping, key: &str) -> Option<&'a Value> {
    match map.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Tagged(t)) => Some(&t.value),
        Some(v) => Some(v),
    }
}

/// A scalar as a string: strings as-is, numbers and booleans in their YAML spelling; `null`,
/// lists and mappings give `None`.
pub fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Tagged(t) => scalar_string(&t.value),
        _ => None,
    }
}

/// A list of strings, leniently: a YAML list (scalar items kept, trimmed, empty ones and
/// nested lists/mappings dropped), or a single string split on commas, or a single scalar.
pub fn string_list(v: &Value) -> Vec<String> {
    match v {
        Value::Sequence(items) => items
            .iter()
            .filter_map(scalar_string)
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
        Value::String(s) => s
            .split(',')
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
            .collect(),
        Value::Tagged(t) => string_list(&t.value),
        other => scalar_string(other)
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .into_iter()
            .collect(),
    }
}

/// A boolean, leniently: YAML booleans, and the strings `true`/`false`/`yes`/`no`
/// (any case). Anything else: `None`.
pub fn boolean(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Some(true),
            "false" | "no" | "off" => Some(false),
            _ => None,
        },
        Value::Tagged(t) => boolean(&t.value),
        _ => None,
    }
}

/// An integer, leniently: integers, floats (truncated toward zero, saturating) and numeric
/// strings. Anything else: `None`.
pub fn integer(v: &Value) -> Option<i32> {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(i.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
            } else if n.as_u64().is_some() {
                Some(i32::MAX)
            } else {
                n.as_f64().filter(|f| f.is_finite()).map(|f| f as i32)
            }
        }
        Value::String(s) => {
            let s = s.trim();
            s.parse::<i64>()
                .ok()
                .map(|i| i.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
                .or_else(|| {
                    s.parse::<f64>()
                        .ok()
                        .filter(|f| f.is_finite())
                        .map(|f| f as i32)
                })
        }
        Value::Tagged(t) => integer(&t.value),
        _ => None,
    }
}

/// The file line of top-level key `key` in the frontmatter of `block`, if it can be found
/// (a line starting with `key:` or a quoted `"key":`).
pub fn key_line(block: &Block<'_>, key: &str) -> Option<u32> {
    bytes::lines(block.yaml).enumerate().find_map(|(i, line)| {
        let rest = line
            .strip_prefix(key)
            .or_else(|| {
                line.strip_prefix('"')
                    .and_then(|l| l.strip_prefix(key))
                    .and_then(|l| l.strip_prefix('"'))
            })
            .or_else(|| {
                line.strip_prefix('\'')
                    .and_then(|l| l.strip_prefix(key))
                    .and_then(|l| l.strip_prefix('\''))
            })?;
        rest.trim_start()
            .starts_with(':')
            .then(|| block.open_line + 1 + i as u32)
    })
}

/// A skill's version: `metadata.version` (the Agent Skills convention), as the text it was
/// written as (see [`parse`]), trimmed; `None` when absent, empty or not a scalar. A
/// top-level `version` is not read (the specification puts it under `metadata`).
pub fn version(map: &Mapping) -> Option<String> {
    let Some(Value::Mapping(meta)) = get(map, "metadata") else {
        return None;
    };
    get(meta, "version")
        .and_then(scalar_string)
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}
