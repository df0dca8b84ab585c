//! The one shape of a configuration error: the dotted key, the value as written and what is
//! allowed. Every section checks itself ([`Section::check`]) by pushing these on [`Checks`]; the
//! loader names the layer the value came from.

use std::fmt;

/// One value that is not allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// Dotted key, e.g. `matching.min_score`.
    pub key: String,
    /// The value as written.
    pub value: String,
    /// What is allowed.
    pub allowed: String,
}

impl fmt::Display for Invalid {
    /// `key = value; allowed: what`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} = {}; allowed: {}",
            self.key, self.value, self.allowed
        )
    }
}

/// The values a section refused, in the order it checked them.
#[derive(Debug, Default)]
pub struct Checks(Vec<Invalid>);

impl Checks {
    /// Records `key = value` as not allowed unless `ok`.
    pub fn need(&mut self, ok: bool, key: &str, value: impl fmt::Display, allowed: &str) {
        if !ok {
            self.0.push(Invalid {
                key: key.into(),
                value: value.to_string(),
                allowed: allowed.into(),
            });
        }
    }

    /// Records `key` as not allowed unless `value` is at least `min`.
    pub fn at_least(&mut self, key: &str, value: u64, min: u64, allowed: &str) {
        self.need(value >= min, key, value, allowed);
    }

    /// Records `key` as not allowed unless `value` lies in `range`.
    pub fn within<T>(
        &mut self,
        key: &str,
        value: T,
        range: std::ops::RangeInclusive<T>,
        allowed: &str,
    ) where
        T: PartialOrd + fmt::Display,
    {
        let ok = range.contains(&value);
        self.need(ok, key, value, allowed);
    }

    /// The refused values.
    pub fn into_vec(self) -> Vec<Invalid> {
        self.0
    }
}

/// A section of the configuration that checks its own values.
pub trait Section {
    /// Pushes on `checks` every value of this section that is out of range, keyed by its full
    /// dotted path (`matching.min_score`).
    fn check(&self, checks: &mut Checks);
}

/// Well-formed numbers as allowed messages say them.
pub const UNIT: &str = "a number from 0.0 to 1.0";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_value_reads_key_value_allowed() {
        let mut c = Checks::default();
        c.need(false, "a.b", 7, "at most 6");
        c.need(true, "a.c", 1, "anything");
        c.within("a.d", 0.5, 0.0..=1.0, UNIT);
        c.within("a.e", 2.0, 0.0..=1.0, UNIT);
        c.at_least("a.f", 0, 1, "at least 1");
        let bad = c.into_vec();
        let shown: Vec<String> = bad.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "a.b = 7; allowed: at most 6",
                "a.e = 2; allowed: a number from 0.0 to 1.0",
                "a.f = 0; allowed: at least 1"
            ]
        );
    }
}
