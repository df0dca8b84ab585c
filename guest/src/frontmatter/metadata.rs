//! `metadata` is a map of strings (the Agent Skills convention): a scalar there keeps the
//! text it was written as. YAML reads a plain `version: 1.10` as the number 1.1, `01` as 1,
//! `true` as a boolean; here such a value becomes the string it spells (`1.10`, `01`,
//! `true`). Quoted scalars and dates are strings already; lists, mappings, `null` and tagged
//! values are left as they are. Only `metadata`'s own values are touched: top-level fields
//! keep YAML's types.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::{Mapping, Value};

/// Give every number or boolean directly under `map`'s `metadata` mapping the source text
/// of its scalar, read again from `yaml` (the text `map` was parsed from). Costs a second
/// parse only when such a value exists (the fast parser never yields one).
pub(super) fn keep_text(yaml: &str, map: &mut Mapping) {
    let Some(Value::Mapping(meta)) = map.get_mut("metadata") else {
        return;
    };
    let keys: Vec<Value> = meta
        .iter()
        .filter(|(_, v)| matches!(v, Value::Number(_) | Value::Bool(_)))
        .map(|(k, _)| k.clone())
        .collect();
    if keys.is_empty() {
        return;
    }
    // The text parsed once already; an error here leaves YAML's values.
    let Ok(texts) = Top(&keys).deserialize(serde_yaml::Deserializer::from_str(yaml)) else {
        return;
    };
    for (k, text) in texts {
        meta.insert(k, Value::String(text));
    }
}

/// The top-level mapping: finds `metadata`, skips the rest.
struct Top<'a>(&'a [Value]);

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = Vec<(Value, String)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = Vec<(Value, String)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a mapping")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(key) = map.next_key::<Value>()? {
            if key.as_str() == Some("metadata") {
                out = map.next_value_seed(Meta(self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(out)
    }
}

/// The `metadata` mapping: the listed keys' values read as strings (their source text).
struct Meta<'a>(&'a [Value]);

impl<'de> DeserializeSeed<'de> for Meta<'_> {
    type Value = Vec<(Value, String)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Meta<'_> {
    type Value = Vec<(Value, String)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a mapping")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(key) = map.next_key::<Value>()? {
            if self.0.contains(&key) {
                let text = map.next_value::<String>()?;
                out.push((key, text));
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(out)
    }
}
