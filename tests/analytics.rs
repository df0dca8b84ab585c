//! Tests: analytics.
