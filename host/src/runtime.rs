//! The wasmtime runtime: one engine, the embedded component compiled once, bounded stores, trap recovery.
