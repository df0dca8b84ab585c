//! The skills-mcp engine: every rule about skills, and no I/O.
//!
//! This crate is a plain Rust library (tested natively) and, built for `wasm32-wasip2`, the
//! WebAssembly component described by `wit/engine.wit`. The generated glue lives in
//! `bindings` only; every other module speaks the types of [`model`].

pub mod model;

pub use model::*;

#[cfg(all(target_arch = "wasm32", feature = "component"))]
mod bindings;

pub mod index;
pub mod keyword;
pub mod output;
pub mod rank;
pub mod route;
pub mod synonyms;
pub mod text;
pub mod tiers;
pub mod views;
pub mod walk;

pub use index::Index;
pub use walk::walk_policy;
pub mod access;
pub mod assets;
pub mod bytes;
#[cfg(feature = "cli")]
pub mod cli_args;
pub mod codec;
pub mod content_digest;
pub mod discover;
pub mod evals;
pub mod extension;
pub mod frontmatter;
pub mod nesting;

#[cfg(test)]
pub(crate) mod fuzz;
pub mod paths;
pub mod resolve;
pub mod small_blocks;

pub use paths::validate_relative_path;

/// The component's allocator: Talc instead of the wasm target's default (wasi-libc's
/// dlmalloc), about a third fewer instructions an allocation and free (a search makes a few
/// hundred: the request's slots, the hits' strings), with freed small blocks kept for reuse in
/// front of it ([`small_blocks`]). It grows the linear memory itself, and claims a new region
/// when something else (wasi-libc's own `malloc`) grew it in between.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: small_blocks::SmallBlocks<talc::wasm::WasmDynamicTalc> =
    small_blocks::SmallBlocks::new(talc::wasm::new_wasm_dynamic_allocator());
