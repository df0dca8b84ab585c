//! The `refresh` section: the periodic git refresh and the live reload of local roots.

use serde::{Deserialize, Serialize};

use super::check::{Checks, Section};

/// Keeping the index fresh: periodic git refresh and the live reload of local roots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RefreshConfig {
    /// Periodic refresh of a git source.
    pub enabled: bool,
    /// Minutes between two periodic refreshes (at least 1).
    pub interval_minutes: u32,
    /// Watch local roots and rebuild the index when a file changes.
    pub watch: bool,
    /// Quiet time after the last change before a rebuild, in milliseconds (10-60000).
    pub debounce_ms: u64,
    /// Seconds between two periodic refreshes, overriding `interval_minutes` (for tests and
    /// demos; not shown by `example-config`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_seconds: Option<u64>,
}

impl Default for RefreshConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            interval_minutes: 15,
            watch: true,
            debounce_ms: 300,
            interval_seconds: None,
        }
    }
}

impl RefreshConfig {
    /// The period of the periodic git refresh.
    pub fn interval(&self) -> std::time::Duration {
        let secs = self
            .interval_seconds
            .unwrap_or(u64::from(self.interval_minutes) * 60);
        std::time::Duration::from_secs(secs.max(1))
    }
}

impl Section for RefreshConfig {
    fn check(&self, c: &mut Checks) {
        c.at_least(
            "refresh.interval_minutes",
            self.interval_minutes.into(),
            1,
            "a whole number of minutes, at least 1",
        );
        c.within(
            "refresh.debounce_ms",
            self.debounce_ms,
            10..=60_000,
            "a whole number of milliseconds from 10 to 60000",
        );
        c.need(
            self.interval_seconds != Some(0),
            "refresh.interval_seconds",
            0,
            "a whole number of seconds, at least 1",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_seconds_overrides_minutes() {
        let mut r = RefreshConfig::default();
        assert_eq!(r.interval().as_secs(), 15 * 60);
        r.interval_seconds = Some(2);
        assert_eq!(r.interval().as_secs(), 2);
    }

    #[test]
    fn zero_interval_and_short_debounce_are_refused() {
        let r = RefreshConfig {
            interval_minutes: 0,
            debounce_ms: 5,
            interval_seconds: Some(0),
            ..RefreshConfig::default()
        };
        let mut c = Checks::default();
        r.check(&mut c);
        let keys: Vec<String> = c.into_vec().into_iter().map(|i| i.key).collect();
        assert_eq!(
            keys,
            [
                "refresh.interval_minutes",
                "refresh.debounce_ms",
                "refresh.interval_seconds"
            ]
        );
    }
}
