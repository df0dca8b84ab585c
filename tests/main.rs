//! The one integration-test binary: a module per area, all through the real component and the
//! real binary.

mod access;
mod analytics;
mod answers;
mod audit;
mod cli;
mod common;
mod component;
mod editor;
mod eval;
mod fleet;
mod git;
mod http;
mod http_auth;
mod index;
mod index_cache;
mod inputs;
mod install;
mod lock;
mod logs;
mod mcp;
mod oci;
mod oci_auth;
mod oci_keys;
mod protocol;
mod runtime;
mod scripts;
mod security;
mod skills_extension;
mod telemetry;
mod usage;
mod versions;
