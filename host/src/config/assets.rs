//! The `assets` section: limits of `get_asset`.

use serde::{Deserialize, Serialize};

use super::check::{Checks, Section};

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

impl Section for AssetsConfig {
    fn check(&self, c: &mut Checks) {
        let bytes = "a whole number of bytes, at least 1";
        c.at_least("assets.max_size_bytes", self.max_size_bytes, 1, bytes);
        c.at_least(
            "assets.inline_text_max_bytes",
            self.inline_text_max_bytes,
            1,
            bytes,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_limits_are_refused() {
        let a = AssetsConfig {
            max_size_bytes: 0,
            inline_text_max_bytes: 0,
        };
        let mut c = Checks::default();
        a.check(&mut c);
        assert_eq!(c.into_vec().len(), 2);
    }
}
