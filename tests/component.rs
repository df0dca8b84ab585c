//! Tests: component.
