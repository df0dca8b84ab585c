//! Configuration: defaults, `config.yaml`, environment variables and flags, with a documented
//! precedence; and the list of skill roots.
//!
//! # Precedence (lowest first; a later layer overrides an earlier one key by key)
//!
//! 1. the built-in defaults ([`Config::default`], printed by `skills-mcp example-config`);
//! 2. `config.yaml` at each content root, in root order (a later root overrides an earlier one).
//!    A skills root (a git source's included) is content, not configuration of the server: it
//!    may set `matching`, lower the script and asset limits, turn scripts off and narrow the
//!    allowed extensions; any other known key (`scripts.env_passthrough`, `scripts.runners`,
//!    `analytics`, `sources`, `git`, `refresh`, a raised limit) is ignored there with a warning
//!    naming the file and the key (see [`root_layer`]);
//! 3. the file given with `--config FILE`;
//! 4. environment variables: `ANALYTICS_ENDPOINT` (sets `analytics.endpoint` and
//!    `analytics.enabled: true`), `REFRESH_INTERVAL_MINUTES` (sets `refresh.interval_minutes` and
//!    `refresh.enabled: true`), `SKILLS_REPO` (`sources.repo`), `SKILLS_BRANCH` (`sources.branch`),
//!    `GITHUB_TOKEN` (kept in memory only, never in a file);
//! 5. command-line flags (`--root DIR`).
//!
//! Mappings merge key by key (so `scripts.runners` in a file adds to the default runners);
//! any other value (a list, a number) replaces the lower layer's value whole.
//!
//! Unknown keys are warned about (stderr) and ignored. A value of the wrong type or out of range
//! stops start-up with a message naming the layer, the key, the value and what is allowed.
//!
//! # Roots (lowest precedence first)
//!
//! `~/.claude/skills`, `~/.agents/skills`, `./.claude/skills`, `./.agents/skills`, `./skills`
//! (each only when it is a directory, and only while `sources.default_roots` is true and
//! `--no-default-roots` is not given), then the
//! git sources (`sources.repo`, then each of `sources.repos`; see [`crate::sources`]), then each
//! entry of `sources.roots`, then each entry of `SKILLS_DIR` (a path list: `:`-separated on Unix),
//! then each `--root DIR`, in order. A named root that is not a directory is skipped with a
//! warning, and is an error when no root is left. The bundled skills (embedded in the binary,
//! see [`crate::bundled`]) are used only when none of those gives or names a root. The same directory listed twice keeps its last (highest) place. The engine gives
//! a skill path found in a later root precedence over the same path in an earlier one.
//!
//! # Composition
//!
//! [`Config`] is a composition of section structs, each with serde defaults, so a module can own
//! its section (define the struct next to its code and put a field here). Every section checks
//! its own values in one shape ([`Section::check`] pushing an [`Invalid`] with its dotted key);
//! the loader ([`layers`]) only layers, and stops at the first value a section refuses.
//!
//! Rooms: [`check`] (the one error shape), [`matching`], [`refresh`], [`assets`], [`sources`]
//! (the sections owned here), [`layers`] (files, environment, precedence), [`root_layer`] (what
//! a skills root may set), [`roots`] (which folders are served), [`example`] (the commented
//! defaults).

mod access;
mod assets;
pub mod check;
mod example;
mod layers;
mod matching;
mod refresh;
mod root_layer;
mod roots;
mod sources;

use serde::{Deserialize, Serialize};

pub use access::{AccessConfig, AccessRuleConfig, LocalAccess};
pub use assets::AssetsConfig;
pub use check::{Checks, Invalid, Section};
pub use example::example_config;
pub use layers::{ENV_VARS, LoadOptions, Loaded, load};
pub use matching::{Algorithm, MatchingConfig};
pub use refresh::RefreshConfig;
pub use roots::{RootSource, RootSpec, bundled_skills_dir, check_root_name, resolve_roots};
pub use sources::{RootEntry, SourcesConfig};

/// Server-side script execution (`run_script`): the section is owned by [`crate::scripts`].
pub use crate::scripts::ScriptsConfig;

/// Usage analytics: the section is owned by [`crate::analytics`].
pub use crate::analytics::AnalyticsConfig;

/// Authentication over HTTP: the section is owned by [`crate::http_auth`].
pub use crate::http_auth::AuthConfig;

/// Where git sources are checked out: the section is owned by [`crate::sources`].
pub use crate::sources::{GitConfig, GitSourceConfig};

/// The name of the configuration file looked up at each content root.
pub const ROOT_CONFIG_FILE: &str = "config.yaml";

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Config {
    pub matching: MatchingConfig,
    pub refresh: RefreshConfig,
    pub scripts: ScriptsConfig,
    pub assets: AssetsConfig,
    pub analytics: AnalyticsConfig,
    pub sources: SourcesConfig,
    pub git: GitConfig,
    /// How `serve` listens (stdio or HTTP); ignored in a root's `config.yaml`.
    pub server: crate::http::config::HttpConfig,
    /// Authentication of HTTP clients (operator only: ignored in a root's `config.yaml`).
    pub auth: AuthConfig,
    /// Who sees which skill (operator only: ignored in a root's `config.yaml`).
    pub access: AccessConfig,
    /// `GITHUB_TOKEN`, from the environment only (never read from or written to a file).
    #[serde(skip)]
    pub github_token: Option<String>,
}

impl Config {
    /// Every value that is out of range, by key: each section's own [`Section::check`], in
    /// the order of the sections.
    pub fn check(&self) -> Vec<Invalid> {
        let mut checks = Checks::default();
        self.matching.check(&mut checks);
        self.refresh.check(&mut checks);
        self.scripts.check(&mut checks);
        self.assets.check(&mut checks);
        self.analytics.check(&mut checks);
        self.sources.check(&mut checks);
        self.git.check(&mut checks);
        self.server.check(&mut checks);
        self.access.check(&mut checks);
        checks.into_vec()
    }
}
