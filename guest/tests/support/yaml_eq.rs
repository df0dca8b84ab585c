//! Equality of YAML values with mapping key order (`serde_yaml::Mapping`'s `==` ignores it),
//! shared by the frontmatter unit tests and `tests/frontmatter_simple.rs`.

use serde_yaml::Value;

/// `a` and `b` are equal, mapping key order included; a tagged value is never equal.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Mapping(x), Value::Mapping(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((ka, va), (kb, vb))| same(ka, kb) && same(va, vb))
        }
        (Value::Sequence(x), Value::Sequence(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Tagged(_), _) | (_, Value::Tagged(_)) => false,
        _ => a == b,
    }
}
