//! The `matching` section: how requests are matched to skills. The engine owns matching, so
//! the defaults are the engine crate's ([`skills_engine::model::EngineConfig::DEFAULT`]).

use serde::{Deserialize, Serialize};

use super::check::{Checks, Section, UNIT};

/// How requests are matched to skills (the engine's settings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MatchingConfig {
    /// `ranked` (fielded BM25, the default) or `keywords` (the share of a skill's keywords the
    /// request matches).
    pub algorithm: Algorithm,
    /// Results scoring below this are dropped (0.0-1.0).
    pub min_score: f64,
    /// A gap between the two best scores below this makes a request ambiguous (0.0-1.0).
    pub ambiguity_threshold: f64,
    /// Most candidates returned for an ambiguous request (at least 1).
    pub max_results: u32,
}

impl Default for MatchingConfig {
    fn default() -> Self {
        let d = skills_engine::model::EngineConfig::DEFAULT;
        Self {
            algorithm: match d.algorithm {
                skills_engine::model::Algorithm::Ranked => Algorithm::Ranked,
                skills_engine::model::Algorithm::Keywords => Algorithm::Keywords,
            },
            min_score: d.min_score,
            ambiguity_threshold: d.ambiguity_threshold,
            max_results: d.max_results,
        }
    }
}

/// The ranking algorithm (mirrors the engine's `algorithm` enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    #[default]
    Ranked,
    Keywords,
}

impl Section for MatchingConfig {
    fn check(&self, c: &mut Checks) {
        c.within("matching.min_score", self.min_score, 0.0..=1.0, UNIT);
        c.within(
            "matching.ambiguity_threshold",
            self.ambiguity_threshold,
            0.0..=1.0,
            UNIT,
        );
        c.within(
            "matching.max_results",
            self.max_results,
            1..=1000,
            "a whole number from 1 to 1000",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_engines() {
        let d = skills_engine::model::EngineConfig::default();
        let m = MatchingConfig::default();
        assert_eq!(
            (m.min_score, m.ambiguity_threshold, m.max_results),
            (d.min_score, d.ambiguity_threshold, d.max_results)
        );
        assert_eq!(m.algorithm, Algorithm::Ranked);
    }

    #[test]
    fn out_of_range_values_are_named_by_key() {
        let m = MatchingConfig {
            min_score: 1.5,
            ambiguity_threshold: f64::NAN,
            max_results: 0,
            ..MatchingConfig::default()
        };
        let mut c = Checks::default();
        m.check(&mut c);
        let keys: Vec<String> = c.into_vec().into_iter().map(|i| i.key).collect();
        assert_eq!(
            keys,
            [
                "matching.min_score",
                "matching.ambiguity_threshold",
                "matching.max_results"
            ]
        );
        let mut c = Checks::default();
        MatchingConfig::default().check(&mut c);
        assert!(c.into_vec().is_empty());
    }

    /// The bundled guide to the configuration states the engine's defaults.
    #[test]
    fn the_bundled_configuration_guide_states_the_defaults() {
        let guide = include_str!("../../../skills/using-skills-mcp/references/configuration.md");
        let d = skills_engine::model::EngineConfig::DEFAULT;
        let line = format!(
            "`matching.min_score` ({}), `matching.ambiguity_threshold` ({}), `matching.max_results` ({})",
            d.min_score, d.ambiguity_threshold, d.max_results
        );
        assert!(guide.contains(&line), "{line}");
    }
}
