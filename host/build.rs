//! Builds the engine component (`guest/`, package `skills-engine`) for `wasm32-wasip2` and copies
//! it to `OUT_DIR`, where `runtime.rs` embeds it with `include_bytes!`.
//!
//! Modelled on Spin's `tests/test-components/build.rs`: a plain `cargo build` of the guest in its
//! own target directory (`<workspace>/target/guest`, so it never waits on the lock of the build
//! that runs this script), without the flags meant for the host. Its own flags (the target
//! features of every `wasm32-wasip2` build) are in `.cargo/config.toml`, which that nested cargo
//! reads as `npm --prefix js run build` does. For `wasm32-wasip2` a `cdylib` is already a
//! component: no adapter, no post-processing.
//!
//! Before that, the `wasm32-wasip2` target is checked and installed through rustup when it is
//! missing (`build/wasm_target.rs`). It also lists the bundled `skills/` folder into
//! `OUT_DIR/bundled_skills.rs` (`include_bytes!` of every file and a digest over them), which
//! `host/src/bundled.rs` embeds so that an installed binary serves them from anywhere, and the
//! browser editor's static files (`js/editor/`) into `OUT_DIR/editor_files.rs` the same way,
//! which `host/src/editor.rs` serves (no Node in the build: the files are served as written).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "build/wasm_target.rs"]
mod wasm_target;

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
        // The wasm32-wasip2 rustflags (target features) of every wasm build.
        ".cargo/config.toml",
    ] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(watched).display()
        );
    }
    println!("cargo:rerun-if-env-changed=SKILLS_MCP_GUEST_WASM");
    println!(
        "cargo:rerun-if-changed={}",
        manifest_dir.join("build").display()
    );

    bundle_folder(
        &workspace.join("skills"),
        &out_dir.join("bundled_skills.rs"),
        "BUNDLED",
        "bundled `skills/`",
    );
    // The browser editor's page, script and styles, which `skills-mcp editor` serves.
    bundle_folder(
        &workspace.join("js/editor"),
        &out_dir.join("editor_files.rs"),
        "EDITOR",
        "browser editor's `js/editor/`",
    );

    let dest = out_dir.join(ARTIFACT);
    // Escape hatch for packagers: a prebuilt component instead of building one.
    if let Some(prebuilt) = env::var_os("SKILLS_MCP_GUEST_WASM") {
        copy(Path::new(&prebuilt), &dest);
        return;
    }

    match wasm_target::ensure(TARGET, &wasm_target::Tools::from_env()) {
        Ok(wasm_target::Outcome::Present) => {}
        Ok(wasm_target::Outcome::Installed(note)) => println!("cargo:warning={note}"),
        Err(line) => {
            // One line, shown by cargo as `error: ...`; the build stops after this script.
            println!("cargo::error={line}");
            return;
        }
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
        panic!("building the engine component failed ({status}); command: {cmd:?}");
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
    let written = write_if_changed(to, &bytes)
        .and_then(|()| write_if_changed(&to.with_extension("sha256"), &digest));
    written.unwrap_or_else(|e| {
        panic!(
            "could not copy the engine component {} to {}: {e}",
            from.display(),
            to.display()
        )
    });
}

/// Write `dest`: the files of a folder (the bundled `skills/`, the editor's `js/editor/`) as
/// `<NAME>_FILES` (relative path with `/` separators, `include_bytes!` of the file), sorted by
/// path, and `<NAME>_DIGEST`, the SHA-256 (hex) over every path and content (it names the
/// folder the bundled skills are unpacked into).
fn bundle_folder(folder: &Path, dest: &Path, name: &str, what: &str) {
    use sha2::Digest as _;
    println!("cargo:rerun-if-changed={}", folder.display());
    let mut files = Vec::new();
    if folder.is_dir() {
        walk(folder, "", &mut files);
    }
    files.sort();
    let mut hasher = sha2::Sha256::new();
    let mut list = String::new();
    for (rel, abs) in &files {
        let bytes = std::fs::read(abs)
            .unwrap_or_else(|e| panic!("could not read the {what} file {}: {e}", abs.display()));
        hasher.update((rel.len() as u64).to_le_bytes());
        hasher.update(rel.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
        list.push_str(&format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            abs.display().to_string()
        ));
    }
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let code = format!(
        "/// SHA-256 over the {what} files' paths and contents.\n\
         pub const {name}_DIGEST: &str = {digest:?};\n\
         /// The {what} files: relative path, content.\n\
         pub static {name}_FILES: &[(&str, &[u8])] = &[\n{list}];\n"
    );
    write_if_changed(dest, code.as_bytes())
        .unwrap_or_else(|e| panic!("could not write {}: {e}", dest.display()));
}

/// Every regular file below `dir` (symbolic links are not followed), with its relative path.
fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("could not list {}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("could not list {}: {e}", dir.display()));
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            panic!(
                "bundled skill file name is not UTF-8: {}",
                entry.path().display()
            );
        };
        let rel = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}/{name}")
        };
        let kind = entry
            .file_type()
            .unwrap_or_else(|e| panic!("could not stat {}: {e}", entry.path().display()));
        if kind.is_dir() {
            walk(&entry.path(), &rel, out);
        } else if kind.is_file() {
            out.push((rel, entry.path()));
        }
    }
}

/// Write `bytes` to `path` unless it already holds them: an unchanged file keeps its time, so
/// the crate that embeds it is not compiled again for nothing.
fn write_if_changed(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    std::fs::write(path, bytes)
}
