//! SIGHUP: the operator's configuration and the token file read again, without a restart.
//!
//! What takes effect: the `access` section (its rules checked by the engine first) and the
//! static tokens (file and variable; rotated tokens, new `sub=`/`groups=`, the scopes new
//! rules name). A configuration that does not load, a token file that does not parse, or rules
//! the engine refuses: the reload is refused as a whole, its errors logged, and the old
//! configuration and tokens keep serving. Any other section that changed (and a changed list
//! of roots) is named in a warning: it takes effect after a restart.

use std::sync::Arc;

use anyhow::{Context as _, Result};

use crate::config::{Config, LoadOptions, Loaded, RootSpec};
use crate::http_auth::{AuthOptions, Authenticator};
use crate::logsafe::Escaped;
use crate::mcp::SkillsServer;

/// What a reload reads again: the configuration as the start-up loaded it, and the
/// authentication flags (with the authenticator whose tokens it replaces) over HTTP.
#[derive(Clone)]
pub struct Reload {
    /// How the configuration was loaded (`--config`, roots flags, environment).
    pub options: LoadOptions,
    /// The `serve --http` authentication flags and the authenticator in use.
    pub auth: Option<(AuthOptions, Arc<Authenticator>)>,
    /// The `serve` flags that override keys of the configuration (`--usage-db`,
    /// `--metrics-listen`), applied to the configuration read again as they were at start-up,
    /// so a reload neither drops them nor reports them as changed.
    pub overrides: Arc<dyn Fn(&mut Config) + Send + Sync>,
}

impl Reload {
    /// Read everything again and apply what can change now (see the module docs). `Ok` names
    /// what was applied; an error means nothing changed.
    pub fn apply(&self, server: &SkillsServer, roots: &[RootSpec]) -> Result<String> {
        let mut loaded: Loaded =
            crate::config::load(&self.options).context("reading the configuration")?;
        (self.overrides)(&mut loaded.config);
        let prepared = match &self.auth {
            Some((flags, auth)) => {
                let opts = crate::access::auth_options(flags, &loaded.config);
                Some((
                    auth,
                    auth.prepare_tokens(&opts).context("reading the tokens")?,
                ))
            }
            None => None,
        };
        server.set_access(loaded.config.access.clone())?;
        let mut done = format!("{} access rule(s)", loaded.config.access.rules.len());
        if let Some((auth, tokens)) = prepared {
            let n = auth.install_tokens(tokens);
            done.push_str(&format!(", {n} static token(s)"));
        }
        for section in restart_only(server.config(), &loaded.config) {
            tracing::warn!(
                "reload: `{section}` changed; it takes effect after a restart (only `access` and the tokens are reloaded)"
            );
        }
        let paths = |r: &[RootSpec]| -> Vec<_> { r.iter().map(|r| r.path.clone()).collect() };
        if paths(roots) != paths(&loaded.roots) {
            tracing::warn!("reload: the skill roots changed; they take effect after a restart");
        }
        Ok(done)
    }
}

/// The sections of `new` that differ from `old`, other than `access` (reloaded) and `auth`
/// (its tokens are reloaded; its other keys are named when they changed).
fn restart_only(old: &Config, new: &Config) -> Vec<String> {
    let a = serde_yaml::to_value(old).unwrap_or_default();
    let b = serde_yaml::to_value(new).unwrap_or_default();
    let (Some(a), Some(b)) = (a.as_mapping(), b.as_mapping()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in b {
        let name = key.as_str().unwrap_or_default();
        if a.get(key) == Some(value) {
            continue;
        }
        if name == "access" {
            // The rules are reloaded; the JWT groups claim is read by the authenticator,
            // made once at start-up.
            if old.access.groups_claim != new.access.groups_claim {
                out.push("access.groups_claim".to_string());
            }
            continue;
        }
        if name == "auth"
            && let (Some(oa), Some(na)) = (a.get(key), value.as_mapping())
        {
            for (k, v) in na {
                let sub = k.as_str().unwrap_or_default();
                if !matches!(sub, "tokens_file" | "tokens_env") && oa.get(k) != Some(v) {
                    out.push(format!("auth.{sub}"));
                }
            }
            continue;
        }
        out.push(name.to_string());
    }
    out
}

/// Reload on every SIGHUP until the process ends (Unix; elsewhere nothing).
pub async fn on_hangup(server: SkillsServer, reload: Reload, roots: Vec<RootSpec>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut hangups) = signal(SignalKind::hangup()) else {
            tracing::warn!("SIGHUP cannot be caught: reload by SIGHUP is off");
            return;
        };
        while hangups.recv().await.is_some() {
            tracing::info!("SIGHUP: reading the configuration and the tokens again");
            let (server, reload, roots) = (server.clone(), reload.clone(), roots.clone());
            let outcome = tokio::task::spawn_blocking(move || reload.apply(&server, &roots)).await;
            match outcome {
                Ok(Ok(done)) => tracing::info!("reload: applied ({done})"),
                Ok(Err(e)) => tracing::error!(
                    "reload refused, the previous configuration keeps serving: {}",
                    Escaped(format!("{e:#}"))
                ),
                Err(e) => tracing::error!("reload failed: {e}"),
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (server, reload, roots);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_that_need_a_restart_are_named() {
        let old = Config::default();
        let mut new = Config::default();
        new.access.rules.push(Default::default());
        new.auth.tokens_file = "t.txt".into();
        assert!(restart_only(&old, &new).is_empty());
        new.refresh.debounce_ms = old.refresh.debounce_ms + 1;
        new.auth.resource_url = "https://x.example/mcp".into();
        assert_eq!(restart_only(&old, &new), ["refresh", "auth.resource_url"]);
        // the rules reload, the JWT groups claim does not
        new.access.groups_claim = "realm_access.roles".into();
        let named = restart_only(&old, &new);
        assert_eq!(named.len(), 3, "{named:?}");
        assert!(
            named.iter().any(|s| s == "access.groups_claim"),
            "{named:?}"
        );
    }
}
