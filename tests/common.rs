//! Tests: common.
