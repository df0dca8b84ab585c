//! Turning a tool call whose arguments do not fit the input schema into a message that names the
//! argument (a tool error the model can fix, rather than a protocol error it never sees).

use rmcp::model::JsonObject;
use serde_json::Value;

/// How rmcp starts the message of arguments that do not deserialize.
pub const DESERIALIZE_PREFIX: &str = "failed to deserialize parameters:";

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn fits(v: &Value, ty: &str) -> bool {
    match ty {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    }
}

/// Why `args` do not fit `schema` (the tool's input schema), argument by argument; `fallback`
/// (the deserializer's message) when no rule below finds the cause.
pub fn explain(tool: &str, schema: &JsonObject, args: &JsonObject, fallback: &str) -> String {
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut problems = Vec::new();
    for name in &required {
        if !args.contains_key(*name) {
            problems.push(format!("missing required argument `{name}`"));
        }
    }
    for (name, value) in args {
        let Some(prop) = props.get(name) else {
            let mut known: Vec<&String> = props.keys().collect();
            known.sort();
            let known: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
            problems.push(format!(
                "unknown argument `{name}` (allowed: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
            continue;
        };
        let types: Vec<&str> = match prop.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() && !types.iter().any(|t| fits(value, t)) {
            let wanted: Vec<&str> = types.iter().copied().filter(|t| *t != "null").collect();
            let shown = serde_json::to_string(value).unwrap_or_default();
            let shown: String = shown.chars().take(60).collect();
            problems.push(format!(
                "argument `{name}` must be {}, got {} ({shown})",
                wanted.join(" or "),
                json_type(value)
            ));
        } else if (value.is_u64() || value.is_i64())
            && types.contains(&"integer")
            && let Some(min) = prop.get("minimum").and_then(Value::as_f64)
            && value.as_f64().is_some_and(|v| v < min)
        {
            problems.push(format!(
                "argument `{name}` must be at least {min}, got {value}"
            ));
        }
    }
    if problems.is_empty() {
        let fallback = fallback.trim_start_matches(DESERIALIZE_PREFIX).trim();
        format!("invalid arguments for {tool}: {fallback}")
    } else {
        format!("invalid arguments for {tool}: {}", problems.join("; "))
    }
}
