//! Whether the toolchain that builds this crate has the standard library of the engine's target
//! (`wasm32-wasip2`), and installing it through rustup when it does not.
//!
//! rustup installs the targets of `rust-toolchain.toml` only when it installs the toolchain: on
//! a machine that already had the pinned toolchain, the target is missing and the engine's build
//! would stop with "can't find crate for `std`". `host/build.rs` calls [`ensure`] first. The
//! integration tests include this file too (`tests/wasm_target.rs`) and drive it with a fake
//! `rustc` and `rustup` over a fake sysroot.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What [`ensure`] found or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The target's standard library is in the sysroot.
    Present,
    /// It was missing; `rustup target add` installed it (print this as a `cargo:warning`).
    Installed(String),
}

/// The tools to ask, as cargo gives them to a build script.
#[derive(Debug, Clone, Default)]
pub struct Tools {
    /// The compiler cargo uses (`RUSTC`; `rustc` when unset).
    pub rustc: Option<OsString>,
    /// The toolchain rustup chose for this build (`RUSTUP_TOOLCHAIN`), if any.
    pub toolchain: Option<String>,
    /// The rustup binary (`rustup` on `PATH` when unset).
    pub rustup: Option<OsString>,
}

impl Tools {
    /// From the environment of a build script.
    pub fn from_env() -> Self {
        Self {
            rustc: std::env::var_os("RUSTC"),
            toolchain: std::env::var("RUSTUP_TOOLCHAIN")
                .ok()
                .filter(|t| !t.is_empty()),
            rustup: None,
        }
    }
}

/// Make sure `target`'s standard library is installed for the compiler of `tools`: present,
/// installed now through rustup, or `Err` with one line that names the one command to run.
pub fn ensure(target: &str, tools: &Tools) -> Result<Outcome, String> {
    let rustc = tools.rustc.clone().unwrap_or_else(|| "rustc".into());
    let sysroot = sysroot(&rustc)?;
    if has_target(&sysroot, target) {
        return Ok(Outcome::Present);
    }
    // The toolchain to name: rustup's choice for this build, else the sysroot's folder when it
    // is one of rustup's (`<RUSTUP_HOME>/toolchains/<name>`).
    let toolchain = tools.toolchain.clone().or_else(|| {
        let parent = sysroot.parent()?;
        (parent.file_name()? == "toolchains")
            .then(|| sysroot.file_name()?.to_str().map(str::to_owned))
            .flatten()
    });
    let rustup = tools.rustup.clone().unwrap_or_else(|| "rustup".into());
    let command = match &toolchain {
        Some(t) => format!("rustup target add {target} --toolchain {t}"),
        None => format!("rustup target add {target}"),
    };
    let Some(toolchain) = toolchain else {
        return Err(format!(
            "the Rust standard library for {target} is missing from {} and this toolchain is not \
             managed by rustup; install it (with rustup: `{command}`)",
            sysroot.display()
        ));
    };
    let ran = Command::new(&rustup)
        .args(["target", "add", target, "--toolchain", &toolchain])
        .output();
    match ran {
        Ok(out) if out.status.success() && has_target(&sysroot, target) => {
            Ok(Outcome::Installed(format!(
                "the {target} target was missing from toolchain {toolchain}; installed it with `{command}`"
            )))
        }
        Ok(out) => Err(format!(
            "the {target} target is missing from toolchain {toolchain} and `{command}` failed \
             ({}: {}); run `{command}`",
            out.status,
            last_line(&out.stderr)
        )),
        Err(e) => Err(format!(
            "the {target} target is missing from toolchain {toolchain} and rustup could not be \
             run ({e}); run `{command}`"
        )),
    }
}

/// `rustc --print sysroot`.
fn sysroot(rustc: &OsStr) -> Result<PathBuf, String> {
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("could not run `{} --print sysroot`: {e}", rustc.display()))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || text.is_empty() {
        return Err(format!(
            "`{} --print sysroot` failed ({}): {}",
            rustc.display(),
            out.status,
            last_line(&out.stderr)
        ));
    }
    Ok(PathBuf::from(text))
}

/// Whether `<sysroot>/lib/rustlib/<target>/lib` exists (where rustup puts a target's std).
pub fn has_target(sysroot: &Path, target: &str) -> bool {
    sysroot
        .join("lib")
        .join("rustlib")
        .join(target)
        .join("lib")
        .is_dir()
}

fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_owned()
}
