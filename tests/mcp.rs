//! Tests: mcp.
