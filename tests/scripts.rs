//! Tests: scripts.
