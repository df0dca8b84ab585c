//! The one integration-test binary: a module per area, all through the real component and the
//! real binary.

mod analytics;
mod cli;
mod common;
mod component;
mod git;
mod http_auth;
mod index_cache;
mod mcp;
mod runtime;
mod scripts;
