//! Who sees which skill (issue 24), the host's half: who the caller of a request is, the
//! operator's rules handed to the engine, and the caller of the request being served.
//!
//! The rule itself is the engine's (`set-access`, `view`, `hidden`): the host never decides
//! whether a skill is visible. It only says who is asking:
//! - over HTTP with authentication, the verified [`Identity`] (its `sub`, groups and scopes);
//! - over stdio, and over HTTP on loopback without authentication, the local operator: the
//!   groups of `access.local`, or `unrestricted` without `access.local`;
//! - unauthenticated on a non-loopback listener (`--public-without-auth`): anonymous (no
//!   subject, no groups, no scopes).
//!
//! Each request runs with its caller in a task-local ([`scope`]); the MCP server picks the
//! caller's view once per request from it ([`current`]), and every surface answers from that
//! view. A request served without a caller set is anonymous (nothing is served unfiltered by
//! mistake).

pub mod check;
mod reload;
pub mod session;

use std::future::Future;

pub use reload::{Reload, on_hangup};
pub use session::SessionOwners;

use crate::catalog::Catalog;
use crate::config::{AccessConfig, Config};
use crate::http_auth::{AuthOptions, Identity};
use crate::runtime::{AccessRule, Caller, CallerIdentity, Severity};

tokio::task_local! {
    static CALLER: Caller;
}

/// Runs `f` with `caller` as the caller of the request.
pub async fn scope<F: Future>(caller: Caller, f: F) -> F::Output {
    CALLER.scope(caller, f).await
}

/// The caller of the request being served; anonymous when none was set.
pub fn current() -> Caller {
    CALLER
        .try_with(Clone::clone)
        .unwrap_or_else(|_| anonymous())
}

/// No subject, no groups, no scopes.
pub fn anonymous() -> Caller {
    Caller::Identity(CallerIdentity {
        subject: None,
        groups: Vec::new(),
        scopes: Vec::new(),
    })
}

/// A verified identity as the engine sees it.
pub fn of_identity(identity: &Identity) -> Caller {
    Caller::Identity(CallerIdentity {
        subject: identity.sub.clone(),
        groups: identity.groups.iter().cloned().collect(),
        scopes: identity.scopes.iter().cloned().collect(),
    })
}

/// The local operator: the groups of `access.local`, or `unrestricted` without it.
pub fn local(access: &AccessConfig) -> Caller {
    match &access.local {
        None => Caller::Unrestricted,
        Some(local) => Caller::Identity(CallerIdentity {
            subject: None,
            groups: local.groups.clone(),
            scopes: Vec::new(),
        }),
    }
}

/// The caller of an rmcp request: the verified identity of an HTTP request; else anonymous
/// on a public listener (`public_http`) for an HTTP request, the local operator otherwise
/// (stdio, loopback HTTP without authentication).
pub fn of_request(
    extensions: &rmcp::model::Extensions,
    access: &AccessConfig,
    public_http: bool,
) -> Caller {
    match extensions.get::<axum::http::request::Parts>() {
        Some(parts) => of_http(parts.extensions.get::<Identity>(), access, public_http),
        None => local(access),
    }
}

/// The caller of an HTTP request: its verified `identity`; without one, anonymous on a public
/// listener (`public_http`), else the local operator (loopback without authentication).
pub fn of_http(identity: Option<&Identity>, access: &AccessConfig, public_http: bool) -> Caller {
    match identity {
        Some(identity) => of_identity(identity),
        None if public_http => anonymous(),
        None => local(access),
    }
}

/// The operator's rules as the engine takes them (same order: finding keys index them).
pub fn rules(access: &AccessConfig) -> Vec<AccessRule> {
    access
        .rules
        .iter()
        .map(|r| AccessRule {
            skills: r.skills.clone(),
            roots: r.roots.clone(),
            groups: r.groups.clone(),
            subjects: r.subjects.clone(),
            scopes: r.scopes.clone(),
        })
        .collect()
}

/// Set the operator's rules on `catalog` and check them (the engine's findings, keyed like the
/// configuration: `access.rules[2].skills[0]`): warnings are logged; with an error nothing
/// changes and the errors come back as one message (start-up stops; a reload is refused).
pub fn apply(catalog: &Catalog, access: &AccessConfig) -> anyhow::Result<()> {
    if access.rules.is_empty() && !catalog.has_access_rules() {
        return Ok(());
    }
    match catalog.set_access(rules(access))? {
        Ok(findings) => {
            // A finding forwarded to MCP clients names a skill file: none under rules.
            crate::logging::forward_skill_events(access.rules.is_empty());
            for f in findings {
                tracing::warn!(
                    "{}: {}",
                    crate::logsafe::Escaped(&f.key),
                    crate::logsafe::Escaped(&f.message)
                );
            }
            Ok(())
        }
        Err(findings) => {
            let errors: Vec<String> = findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .map(|f| format!("{}: {}", f.key, f.message))
                .collect();
            anyhow::bail!(
                "invalid configuration: the access rules are refused: {}",
                errors.join("; ")
            )
        }
    }
}

/// The `serve --http` authentication flags over the configuration: its `auth` section, the
/// groups claim and the scopes the rules name.
pub fn auth_options(flags: &AuthOptions, config: &Config) -> AuthOptions {
    let mut auth = flags.clone();
    auth.config = config.auth.clone();
    auth.groups_claim = config.access.groups_claim.clone();
    auth.rule_scopes = config.access.rule_scopes();
    auth
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LocalAccess;

    #[test]
    fn the_local_operator_holds_access_local_or_sees_everything() {
        let mut access = AccessConfig::default();
        assert_eq!(local(&access), Caller::Unrestricted);
        access.local = Some(LocalAccess {
            groups: vec!["ops".into()],
        });
        assert_eq!(
            local(&access),
            Caller::Identity(CallerIdentity {
                subject: None,
                groups: vec!["ops".into()],
                scopes: vec![],
            })
        );
    }

    #[test]
    fn a_request_without_a_caller_is_anonymous() {
        assert_eq!(current(), anonymous());
    }

    #[test]
    fn stdio_is_local_and_http_without_identity_depends_on_the_listener() {
        let access = AccessConfig::default();
        let stdio = rmcp::model::Extensions::new();
        assert_eq!(of_request(&stdio, &access, true), Caller::Unrestricted);
        let (parts, ()) = axum::http::Request::new(()).into_parts();
        let mut http = rmcp::model::Extensions::new();
        http.insert(parts);
        assert_eq!(of_request(&http, &access, false), Caller::Unrestricted);
        assert_eq!(of_request(&http, &access, true), anonymous());
    }
}
