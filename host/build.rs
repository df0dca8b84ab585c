//! Builds the engine component (`guest/`, package `skills-engine`) for `wasm32-wasip2` and copies
//! it to `OUT_DIR`, where `runtime.rs` embeds it with `include_bytes!`.
//!
//! Modelled on Spin's `tests/test-components/build.rs`: a plain `cargo build` of the guest in its
//! own target directory (`<workspace>/target/guest`, so it never waits on the lock of the build
//! that runs this script), without the flags meant for the host. For `wasm32-wasip2` a `cdylib`
//! is already a component: no adapter, no post-processing.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";
const ARTIFACT: &str = "skills_engine.wasm";

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir
        .parent()
        .expect("host/ has a parent folder")
        .to_path_buf();
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));

    for watched in [
        "guest/src",
        "guest/Cargo.toml",
        "wit",
        "Cargo.lock",
        "Cargo.toml",
    ] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(watched).display()
        );
    }
    println!("cargo:rerun-if-env-changed=SKILLS_MCP_GUEST_WASM");

    let dest = out_dir.join(ARTIFACT);
    // Escape hatch for packagers: a prebuilt component instead of building one.
    if let Some(prebuilt) = env::var_os("SKILLS_MCP_GUEST_WASM") {
        copy(Path::new(&prebuilt), &dest);
        return;
    }

    let target_dir = workspace.join("target").join("guest");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&workspace)
        .args([
            "build",
            "--package",
            "skills-engine",
            "--release",
            "--target",
            TARGET,
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        // Flags meant for the host build (and wrappers such as clippy-driver) must not reach
        // the wasm build; a fixed target dir keeps it out of the outer build's lock.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER");
    // CARGO_MAKEFLAGS is kept: the nested build then shares the outer build's job slots.
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("could not run `{cmd:?}`: {e}"));
    if !status.success() {
        panic!(
            "building the engine component failed ({status}); command: {cmd:?}\n\
             hint: the `{TARGET}` target is named in rust-toolchain.toml; with rustup it is \
             installed automatically, otherwise run `rustup target add {TARGET}`"
        );
    }
    copy(
        &target_dir.join(TARGET).join("release").join(ARTIFACT),
        &dest,
    );
}

/// Copy the component to `to`, and its SHA-256 beside it (`<to>.sha256`, 32 bytes): what the
/// host's on-disk caches are keyed by, computed once here instead of at every start.
fn copy(from: &Path, to: &Path) {
    use sha2::Digest as _;
    let bytes = std::fs::read(from).unwrap_or_else(|e| {
        panic!(
            "could not read the engine component {}: {e}",
            from.display()
        )
    });
    let digest = sha2::Sha256::digest(&bytes);
    let written = std::fs::write(to, &bytes)
        .and_then(|()| std::fs::write(to.with_extension("sha256"), digest));
    written.unwrap_or_else(|e| {
        panic!(
            "could not copy the engine component {} to {}: {e}",
            from.display(),
            to.display()
        )
    });
}
