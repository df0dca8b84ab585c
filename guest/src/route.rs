//! Routing decisions: min score, ambiguity threshold, max results.
//!
//! The same rule applies to both algorithms; only the score scale differs. With the default
//! `ranked` algorithm scores are normalised to 0..=1 (see [`crate::rank`]), so `min_score` is
//! "how much of the request the skill accounts for" and `ambiguity_threshold` a gap on that
//! scale.

use crate::model::{EngineConfig, RouteOutcome, SearchHit};
use std::cmp::Ordering;

/// A routing decision by position in the list of hits it was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    NoMatch,
    Matched(usize),
    /// The candidates, best first.
    Ambiguous(Vec<usize>),
}

/// The routing rule, over the hits' scores (best first, as a search lists them):
///
/// 1. drop hits scoring below `min_score`;
/// 2. sort by score, best first (stable: equal scores keep the caller's order);
/// 3. none left: `NoMatch`; one: `Matched`; two or more: `Ambiguous` with the best
///    `max_results` (at least 1, so an ambiguous answer is never empty) when `score[0] - score[1] < ambiguity_threshold`, else
///    `Matched` with the best.
pub fn decision(config: &EngineConfig, scores: &[f64]) -> Decision {
    let mut kept: Vec<usize> = (0..scores.len())
        .filter(|&i| scores[i] >= config.min_score && !scores[i].is_nan())
        .collect();
    kept.sort_by(|&a, &b| scores[b].partial_cmp(&scores[a]).unwrap_or(Ordering::Equal));
    match kept.len() {
        0 => Decision::NoMatch,
        1 => Decision::Matched(kept[0]),
        _ => {
            if scores[kept[0]] - scores[kept[1]] < config.ambiguity_threshold {
                kept.truncate((config.max_results as usize).max(1));
                Decision::Ambiguous(kept)
            } else {
                Decision::Matched(kept[0])
            }
        }
    }
}

/// Decide from hits sorted best first (already filtered by nothing), by [`decision`].
pub fn decide(config: &EngineConfig, hits: Vec<SearchHit>) -> RouteOutcome {
    let scores: Vec<f64> = hits.iter().map(|h| h.score).collect();
    let mut hits: Vec<Option<SearchHit>> = hits.into_iter().map(Some).collect();
    decide_with(config, &scores, |i| hits[i].take().expect("a hit"))
}

/// [`decide`] from the hits' scores (best first) alone: `hit(i)` makes the `i`-th hit, called
/// only for those the outcome holds (each once).
pub fn decide_with(
    config: &EngineConfig,
    scores: &[f64],
    mut hit: impl FnMut(usize) -> SearchHit,
) -> RouteOutcome {
    match decision(config, scores) {
        Decision::NoMatch => RouteOutcome::NoMatch,
        Decision::Matched(i) => RouteOutcome::Matched(hit(i)),
        Decision::Ambiguous(is) => RouteOutcome::Ambiguous(is.into_iter().map(hit).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, score: f64) -> SearchHit {
        SearchHit {
            skill_path: path.into(),
            name: path.into(),
            description: String::new(),
            score,
            matched: vec![],
            version: None,
        }
    }

    fn paths(o: &RouteOutcome) -> Vec<String> {
        match o {
            RouteOutcome::NoMatch => vec![],
            RouteOutcome::Matched(h) => vec![h.skill_path.clone()],
            RouteOutcome::Ambiguous(v) => v.iter().map(|h| h.skill_path.clone()).collect(),
        }
    }

    #[test]
    fn no_match_when_empty_or_below_min() {
        let c = EngineConfig::default();
        assert_eq!(decide(&c, vec![]), RouteOutcome::NoMatch);
        assert_eq!(
            decide(&c, vec![hit("a", 0.19), hit("b", 0.05)]),
            RouteOutcome::NoMatch
        );
    }

    #[test]
    fn single_survivor_matches() {
        let c = EngineConfig::default();
        let o = decide(&c, vec![hit("a", 0.5), hit("b", 0.1)]);
        assert!(matches!(o, RouteOutcome::Matched(_)));
        assert_eq!(paths(&o), vec!["a"]);
        // min_score is inclusive
        let o = decide(&c, vec![hit("a", 0.2)]);
        assert_eq!(paths(&o), vec!["a"]);
    }

    #[test]
    fn clear_winner_matches() {
        let c = EngineConfig::default();
        let o = decide(&c, vec![hit("b", 0.4), hit("a", 0.9), hit("c", 0.3)]);
        assert!(matches!(o, RouteOutcome::Matched(_)));
        assert_eq!(paths(&o), vec!["a"]);
    }

    #[test]
    fn close_scores_are_ambiguous_up_to_max_results() {
        let c = EngineConfig::default();
        let o = decide(
            &c,
            vec![
                hit("a", 0.55),
                hit("b", 0.5),
                hit("c", 0.48),
                hit("d", 0.47),
                hit("e", 0.1),
            ],
        );
        assert!(matches!(o, RouteOutcome::Ambiguous(_)));
        assert_eq!(paths(&o), vec!["a", "b", "c"]);
        let c1 = EngineConfig {
            max_results: 1,
            ..EngineConfig::default()
        };
        assert_eq!(
            paths(&decide(&c1, vec![hit("a", 0.55), hit("b", 0.5)])),
            vec!["a"]
        );
        let c0 = EngineConfig {
            max_results: 0,
            ..EngineConfig::default()
        };
        // never an empty ambiguous answer
        let o = decide(&c0, vec![hit("a", 0.55), hit("b", 0.5)]);
        assert!(matches!(o, RouteOutcome::Ambiguous(ref v) if v.len() == 1));
    }

    #[test]
    fn gap_equal_to_threshold_is_not_ambiguous() {
        let c = EngineConfig {
            ambiguity_threshold: 0.25,
            ..EngineConfig::default()
        };
        let o = decide(&c, vec![hit("a", 0.75), hit("b", 0.5)]);
        assert!(matches!(o, RouteOutcome::Matched(_)));
    }

    #[test]
    fn spec_example_is_ambiguous() {
        let c = EngineConfig::default();
        let o = decide(&c, vec![hit("ui/react/auth", 0.55), hit("api/auth", 0.5)]);
        assert_eq!(paths(&o), vec!["ui/react/auth", "api/auth"]);
    }
}
