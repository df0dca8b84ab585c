//! Tests: git.
