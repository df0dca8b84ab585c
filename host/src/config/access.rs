//! The `access` section: who sees which skill. Operator configuration only (a root's or git
//! source's `config.yaml` cannot set it, see [`super::root_layer`]). The rules themselves are
//! checked by the engine (`set-access`, findings keyed `access.rules[2].skills[0]`); this
//! section checks only what the host reads: the groups claim and the shape of each list.

use serde::{Deserialize, Serialize};

use super::check::{Checks, Section};

/// `access`: the groups claim of JWTs, the local operator's groups, the rules.
///
/// ```yaml
/// access:
///   groups_claim: groups        # the JWT claim holding groups (a dotted path reaches a nested one)
///   local: { groups: [] }       # what the local operator (stdio, loopback without auth) has
///   rules:
///     - skills: ["finance/**"]  # globs over skill paths
///       groups: [finance]
///     - roots: [hr-handbook]    # a root or git source, by name
///       subjects: [alice]
///       scopes: [skills:hr]
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AccessConfig {
    /// The JWT claim holding a caller's groups: a list or a space-separated string; a dotted
    /// path (`realm_access.roles`) reaches a nested claim.
    pub groups_claim: String,
    /// What the local operator (stdio, HTTP on loopback without authentication) holds; `None`:
    /// it sees every skill.
    pub local: Option<LocalAccess>,
    /// The rules: a skill no rule selects is visible to every caller; a skill some rule
    /// selects only to the callers one of those rules admits.
    pub rules: Vec<AccessRuleConfig>,
}

impl Default for AccessConfig {
    fn default() -> Self {
        Self {
            groups_claim: "groups".into(),
            local: None,
            rules: Vec::new(),
        }
    }
}

/// `access.local`: the groups of the local operator.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocalAccess {
    pub groups: Vec<String>,
}

/// One rule, `access.rules[i]`: which skills (`skills` globs, `roots` names) and who is
/// admitted (any of `groups`, `subjects`, `scopes`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AccessRuleConfig {
    /// Globs over skill paths; `finance/**` selects `finance` and everything below it.
    pub skills: Vec<String>,
    /// Names of roots and git sources (their `name`).
    pub roots: Vec<String>,
    pub groups: Vec<String>,
    pub subjects: Vec<String>,
    pub scopes: Vec<String>,
}

impl AccessConfig {
    /// Every scope the rules name, in order of first appearance: known scopes for token lines
    /// and listed in the resource metadata.
    pub fn rule_scopes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for scope in self.rules.iter().flat_map(|r| &r.scopes) {
            if !out.contains(scope) {
                out.push(scope.clone());
            }
        }
        out
    }
}

impl Section for AccessConfig {
    fn check(&self, c: &mut Checks) {
        let claim = self.groups_claim.trim();
        c.need(
            !claim.is_empty() && claim.split('.').all(|k| !k.is_empty()),
            "access.groups_claim",
            format!("{:?}", self.groups_claim),
            "a claim name, or a dotted path to a nested claim (e.g. realm_access.roles)",
        );
        let word = "a non-empty name without spaces or control characters";
        let plain =
            |s: &str| !s.is_empty() && !s.chars().any(|ch| ch.is_whitespace() || ch.is_control());
        if let Some(local) = &self.local {
            for (j, g) in local.groups.iter().enumerate() {
                c.need(
                    plain(g),
                    &format!("access.local.groups[{j}]"),
                    format!("{g:?}"),
                    word,
                );
            }
        }
        for (i, rule) in self.rules.iter().enumerate() {
            for (field, list) in [
                ("skills", &rule.skills),
                ("roots", &rule.roots),
                ("groups", &rule.groups),
                ("subjects", &rule.subjects),
                ("scopes", &rule.scopes),
            ] {
                for (j, v) in list.iter().enumerate() {
                    c.need(
                        plain(v),
                        &format!("access.rules[{i}].{field}[{j}]"),
                        format!("{v:?}"),
                        word,
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_reads_and_checks_its_shape() {
        let c: AccessConfig = serde_yaml::from_str(
            "groups_claim: realm_access.roles\nlocal: {groups: [ops]}\nrules:\n  - skills: ['finance/**']\n    groups: [finance]\n    scopes: [skills:fin]\n  - roots: [hr]\n    scopes: [skills:fin, skills:hr]\n",
        )
        .unwrap();
        assert_eq!(c.local.as_ref().unwrap().groups, ["ops"]);
        assert_eq!(c.rule_scopes(), ["skills:fin", "skills:hr"]);
        let mut checks = Checks::default();
        c.check(&mut checks);
        assert!(checks.into_vec().is_empty());

        let bad = AccessConfig {
            groups_claim: "a..b".into(),
            rules: vec![AccessRuleConfig {
                groups: vec!["fin ance".into()],
                ..AccessRuleConfig::default()
            }],
            ..AccessConfig::default()
        };
        let mut checks = Checks::default();
        bad.check(&mut checks);
        let keys: Vec<String> = checks.into_vec().into_iter().map(|i| i.key).collect();
        assert_eq!(keys, ["access.groups_claim", "access.rules[0].groups[0]"]);
        // An unknown key in a rule is an error (a typo would silently widen the rule).
        assert!(serde_yaml::from_str::<AccessConfig>("rules: [{group: [x]}]").is_err());
    }
}
