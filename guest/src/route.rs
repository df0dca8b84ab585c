//! Routing decisions (spec 5.3): min score, ambiguity threshold, max results.

use crate::model::{EngineConfig, RouteOutcome, SearchHit};

/// Decide from hits sorted best first (already filtered by nothing).
pub fn decide(_config: &EngineConfig, _hits: Vec<SearchHit>) -> RouteOutcome {
    todo!("route: decide")
}
