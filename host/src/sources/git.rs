//! Git sources: clone, fetch, recover, with the system git; several sources, subpaths, local
//! folders. Each is a [`crate::sources::Source`]: a bare repository tracking one remote branch
//! beside the source's per-commit snapshots (see `repo.rs` and [`crate::sources::snapshots`]).

mod command;
mod config;
mod repo;

use std::path::PathBuf;

pub use config::{
    DEFAULT_BRANCH, DEFAULT_TOKEN_ENV, GitConfig, GitSourceConfig, LocalSourceConfig, SourceConfig,
};

pub(crate) use config::expand_home;
pub(crate) use repo::Repo;

/// The root path a git source is served from, known before any I/O (see
/// [`crate::sources::Sources::roots`]): `<content_dir>/<name>-<hash>/current`.
pub fn root_path(git: &GitConfig, source: &GitSourceConfig) -> PathBuf {
    repo::checkout_dir(&git.content_dir(), source).join("current")
}
