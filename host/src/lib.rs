//! skills-mcp: the native host around the skills engine component.
//!
//! The engine (`guest/`, built to a WASI component and embedded in this binary) holds every
//! rule about skills; this crate holds the I/O: filesystem through cap-std, the MCP transport,
//! processes, git, HTTP and configuration.

pub mod access;
pub mod allocator;
pub mod analytics;
pub mod audit;
pub mod bundled;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod editor;
pub mod eval;
pub mod harden;
pub mod http;
pub mod http_auth;
pub mod http_body;
pub mod index_cache;
pub mod jsonrpc;
pub mod logging;
pub mod logsafe;
pub mod mcp;
pub mod output;
pub mod runtime;
pub mod scripts;
pub mod serve;
pub mod single_flight;
pub mod sources;
pub mod telemetry;
pub mod usage;
