//! The frontmatter as a JSON object string, key order kept.

use super::*;

/// The frontmatter as a JSON object string, key order kept (see the module docs).
pub fn to_json(map: &Mapping) -> String {
    let mut out = String::new();
    write_mapping(map, &mut out);
    out
}

pub(super) fn write_json_str(s: &str, out: &mut String) {
    out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()));
}

pub(super) fn write_value(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_json_str(s, out),
        Value::Sequence(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Mapping(m) => write_mapping(m, out),
        Value::Tagged(t) => write_value(&t.value, out),
    }
}

pub(super) fn write_number(n: &serde_yaml::Number, out: &mut String) {
    if let Some(i) = n.as_i64() {
        out.push_str(&i.to_string());
    } else if let Some(u) = n.as_u64() {
        out.push_str(&u.to_string());
    } else if let Some(f) = n.as_f64() {
        match serde_json::Number::from_f64(f) {
            Some(j) => out.push_str(&j.to_string()),
            // NaN and infinities have no JSON form: keep YAML's spelling as a string.
            None => write_json_str(&n.to_string(), out),
        }
    } else {
        write_json_str(&n.to_string(), out);
    }
}

pub(super) fn write_mapping(m: &Mapping, out: &mut String) {
    // Later duplicates (after key stringification) win, at the first key's position.
    let mut entries: Vec<(String, &Value)> = Vec::with_capacity(m.len());
    for (k, v) in m {
        let key = key_string(k);
        match entries.iter_mut().find(|(existing, _)| *existing == key) {
            Some(slot) => slot.1 = v,
            None => entries.push((key, v)),
        }
    }
    out.push('{');
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_str(k, out);
        out.push(':');
        write_value(v, out);
    }
    out.push('}');
}
