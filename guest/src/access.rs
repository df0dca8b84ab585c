//! Who sees which skill: the operator's access rules, evaluated in one place.
//!
//! A rule selects skills (by glob over skill paths, or by the name of the root or git source they
//! come from) and names who may see them (groups, subjects, scopes). A skill that no rule selects
//! is visible to every caller; a skill that some rule selects is visible only to a caller that one
//! of those rules admits. A caller is admitted by a rule when it holds any listed group, is a
//! listed subject, or holds a listed scope.
//!
//! Globs work on `/`-separated segments: `*` matches any run of characters within one segment,
//! `?` one character, and a whole segment `**` any number of segments, none included, so
//! `finance/**` selects `finance` itself and everything under it.
//!
//! The rules are pure data here; the host reads them from the operator's configuration (never
//! from a root) and hands them over with the caller it authenticated.

/// One access rule, as the operator wrote it (`access.rules[i]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rule {
    /// Globs over skill paths (`finance/**`).
    pub skills: Vec<String>,
    /// Names of roots or git sources.
    pub roots: Vec<String>,
    /// Callers holding any of these groups are admitted.
    pub groups: Vec<String>,
    /// Callers with one of these subjects are admitted.
    pub subjects: Vec<String>,
    /// Callers holding any of these scopes are admitted.
    pub scopes: Vec<String>,
}

/// Who is asking.
#[derive(Clone, Copy, Debug)]
pub enum Caller<'a> {
    /// The local operator with no `access.local` configured: sees every skill.
    Unrestricted,
    /// An identity: a verified token, the local operator holding `access.local`'s groups, or an
    /// anonymous caller (no subject, no groups, no scopes).
    Identity {
        subject: Option<&'a str>,
        groups: &'a [String],
        scopes: &'a [String],
    },
}

impl Caller<'_> {
    /// The caller nobody authenticated.
    pub const ANONYMOUS: Caller<'static> = Caller::Identity {
        subject: None,
        groups: &[],
        scopes: &[],
    };
}

/// A skill as the rules see it: its path and the name of the root it is served from.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    pub path: &'a str,
    pub root: &'a str,
}

/// Why a skill is hidden from a caller: the first rule that selects it (none admits the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hidden {
    pub rule: usize,
}

impl Rule {
    /// Whether this rule selects the skill.
    pub fn selects(&self, skill: Subject<'_>) -> bool {
        self.roots.iter().any(|r| r == skill.root)
            || self.skills.iter().any(|g| glob_matches(g, skill.path))
    }

    /// Whether this rule admits the caller.
    pub fn admits(&self, caller: Caller<'_>) -> bool {
        match caller {
            Caller::Unrestricted => true,
            Caller::Identity {
                subject,
                groups,
                scopes,
            } => {
                subject.is_some_and(|s| self.subjects.iter().any(|x| x == s))
                    || groups.iter().any(|g| self.groups.contains(g))
                    || scopes.iter().any(|s| self.scopes.contains(s))
            }
        }
    }

    fn admits_nobody(&self) -> bool {
        self.groups.is_empty() && self.subjects.is_empty() && self.scopes.is_empty()
    }
}

/// Whether `caller` may see `skill` under `rules`: `Ok` when visible, else the first rule that
/// selects it (for `access check` to name).
pub fn decide(rules: &[Rule], caller: Caller<'_>, skill: Subject<'_>) -> Result<(), Hidden> {
    if matches!(caller, Caller::Unrestricted) {
        return Ok(());
    }
    let mut first = None;
    for (i, rule) in rules.iter().enumerate() {
        if rule.selects(skill) {
            if rule.admits(caller) {
                return Ok(());
            }
            first.get_or_insert(i);
        }
    }
    match first {
        Some(rule) => Err(Hidden { rule }),
        None => Ok(()),
    }
}

/// A problem with the rules, located by its configuration key (`access.rules[2].skills[0]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub key: String,
    pub error: bool,
    pub message: String,
}

/// Checks the rules against the skills and root names being served: a rule that selects nothing
/// or admits nobody, a malformed glob, an unknown root name. Errors make the rules unusable
/// (start-up stops, a reload is refused); warnings are logged.
pub fn check(rules: &[Rule], skills: &[Subject<'_>], roots: &[&str]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("access.rules[{i}]");
        if rule.skills.is_empty() && rule.roots.is_empty() {
            out.push(Finding {
                key: at.clone(),
                error: true,
                message: "selects no skill: give it `skills` (path globs) or `roots` (names)"
                    .into(),
            });
        }
        if rule.admits_nobody() {
            out.push(Finding {
                key: at.clone(),
                error: false,
                message: "admits nobody (no groups, subjects or scopes): the skills it selects are hidden from every caller".into(),
            });
        }
        for (j, glob) in rule.skills.iter().enumerate() {
            let key = format!("{at}.skills[{j}]");
            if let Err(why) = check_glob(glob) {
                out.push(Finding {
                    key,
                    error: true,
                    message: format!("{glob:?} is not a skill path glob: {why}"),
                });
            } else if !skills.iter().any(|s| glob_matches(glob, s.path)) {
                out.push(Finding {
                    key,
                    error: false,
                    message: format!("{glob:?} selects no skill"),
                });
            }
        }
        for (j, name) in rule.roots.iter().enumerate() {
            if !roots.contains(&name.as_str()) {
                out.push(Finding {
                    key: format!("{at}.roots[{j}]"),
                    error: true,
                    message: format!(
                        "no root or git source is named {name:?} (known: {})",
                        roots.join(", ")
                    ),
                });
            }
        }
    }
    out
}

/// Why a glob is refused: empty, absolute, with an empty segment, `.`/`..`, or a backslash.
pub fn check_glob(glob: &str) -> Result<(), &'static str> {
    if glob.is_empty() {
        return Err("it is empty");
    }
    if glob.starts_with('/') {
        return Err("skill paths are relative (no leading `/`)");
    }
    if glob.contains('\\') {
        return Err("segments are separated by `/`, not `\\`");
    }
    for seg in glob.split('/') {
        match seg {
            "" => return Err("it has an empty segment (`//` or a trailing `/`)"),
            "." | ".." => return Err("`.` and `..` segments never match a skill path"),
            s if s.contains("**") && s != "**" => {
                return Err("`**` must be a whole segment (`a/**/b`)");
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether `path` matches `glob` (see the module documentation for the syntax).
pub fn glob_matches(glob: &str, path: &str) -> bool {
    let pat: Vec<&str> = glob.split('/').collect();
    let segs: Vec<&str> = path.split('/').collect();
    match_segments(&pat, &segs)
}

fn match_segments(pat: &[&str], segs: &[&str]) -> bool {
    match pat.split_first() {
        None => segs.is_empty(),
        Some((&"**", rest)) => (0..=segs.len()).any(|skip| match_segments(rest, &segs[skip..])),
        Some((p, rest)) => match segs.split_first() {
            Some((s, more)) => {
                match_segment(p.as_bytes(), s.as_bytes()) && match_segments(rest, more)
            }
            None => false,
        },
    }
}

/// `*` and `?` within one segment, by characters (so `?` matches one UTF-8 character).
fn match_segment(pat: &[u8], text: &[u8]) -> bool {
    let text: Vec<char> = String::from_utf8_lossy(text).chars().collect();
    let pat: Vec<char> = String::from_utf8_lossy(pat).chars().collect();
    let (mut p, mut t) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while t < text.len() {
        if p < pat.len() && (pat[p] == '?' || pat[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pat.len() && pat[p] == '*' {
            star = Some(p);
            mark = t;
            p += 1;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            t = mark;
        } else {
            return false;
        }
    }
    pat[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn globs() {
        assert!(glob_matches("finance/**", "finance"));
        assert!(glob_matches("finance/**", "finance/_index"));
        assert!(glob_matches("finance/**", "finance/tax/vat"));
        assert!(!glob_matches("finance/**", "financeX/a"));
        assert!(!glob_matches("finance/**", "hr/finance"));
        assert!(glob_matches("**/runbook-*", "ops/sec/runbook-ddos"));
        assert!(glob_matches("**/runbook-*", "runbook-a"));
        assert!(!glob_matches("**/runbook-*", "ops/runbook"));
        assert!(glob_matches("a/*/c", "a/b/c"));
        assert!(!glob_matches("a/*/c", "a/b/b/c"));
        assert!(glob_matches("a/**/c", "a/c"));
        assert!(glob_matches("a/**/c", "a/x/y/c"));
        assert!(glob_matches("s?ill", "skill"));
        assert!(glob_matches("é?", "éa"));
        assert!(glob_matches("*", "anything"));
        assert!(!glob_matches("*", "a/b"));
        assert!(glob_matches("**", "a/b"));
        assert!(glob_matches("a*b*c", "aXXbYYc"));
        assert!(!glob_matches("a*b*c", "aXXbYY"));
        assert!(glob_matches("exact/path", "exact/path"));
        assert!(!glob_matches("exact/path", "exact/path/deeper"));
    }

    #[test]
    fn glob_checks() {
        assert!(check_glob("finance/**").is_ok());
        assert!(check_glob("").is_err());
        assert!(check_glob("/abs").is_err());
        assert!(check_glob("a//b").is_err());
        assert!(check_glob("a/").is_err());
        assert!(check_glob("a/../b").is_err());
        assert!(check_glob("a\\b").is_err());
        assert!(check_glob("a/b**").is_err());
    }

    fn rules() -> Vec<Rule> {
        vec![
            Rule {
                skills: v(&["finance/**"]),
                groups: v(&["finance"]),
                ..Rule::default()
            },
            Rule {
                roots: v(&["hr-handbook"]),
                subjects: v(&["alice"]),
                scopes: v(&["skills:hr"]),
                ..Rule::default()
            },
            Rule {
                skills: v(&["finance/audit/**"]),
                groups: v(&["auditors"]),
                ..Rule::default()
            },
        ]
    }

    fn skill<'a>(path: &'a str, root: &'a str) -> Subject<'a> {
        Subject { path, root }
    }

    #[test]
    fn decisions() {
        let rules = rules();
        let fin = v(&["finance"]);
        let aud = v(&["auditors"]);
        let hr = v(&["skills:hr"]);
        let finance = Caller::Identity {
            subject: Some("bob"),
            groups: &fin,
            scopes: &[],
        };
        let auditor = Caller::Identity {
            subject: Some("carol"),
            groups: &aud,
            scopes: &[],
        };
        let alice = Caller::Identity {
            subject: Some("alice"),
            groups: &[],
            scopes: &[],
        };
        let hr_scope = Caller::Identity {
            subject: None,
            groups: &[],
            scopes: &hr,
        };
        let open = skill("ui/react/auth", "main");
        let ledger = skill("finance/ledger", "main");
        let audit = skill("finance/audit/checklist", "main");
        let leave = skill("leave", "hr-handbook");

        // Not selected by any rule: everyone sees it.
        for c in [finance, auditor, alice, hr_scope, Caller::ANONYMOUS] {
            assert_eq!(decide(&rules, c, open), Ok(()));
        }
        assert_eq!(decide(&rules, finance, ledger), Ok(()));
        assert_eq!(decide(&rules, auditor, ledger), Err(Hidden { rule: 0 }));
        assert_eq!(
            decide(&rules, Caller::ANONYMOUS, ledger),
            Err(Hidden { rule: 0 })
        );
        // Selected by two rules: either admits.
        assert_eq!(decide(&rules, finance, audit), Ok(()));
        assert_eq!(decide(&rules, auditor, audit), Ok(()));
        assert_eq!(decide(&rules, alice, audit), Err(Hidden { rule: 0 }));
        // By root name; a subject or a scope admits.
        assert_eq!(decide(&rules, alice, leave), Ok(()));
        assert_eq!(decide(&rules, hr_scope, leave), Ok(()));
        assert_eq!(decide(&rules, finance, leave), Err(Hidden { rule: 1 }));
        // The unrestricted local operator sees everything.
        for s in [open, ledger, audit, leave] {
            assert_eq!(decide(&rules, Caller::Unrestricted, s), Ok(()));
        }
        // A subject never matches when the caller has none.
        let nobody = Rule {
            skills: v(&["x"]),
            subjects: v(&[""]),
            ..Rule::default()
        };
        assert!(!nobody.admits(Caller::ANONYMOUS));
    }

    #[test]
    fn findings_name_their_keys() {
        let mut rules = rules();
        rules.push(Rule {
            skills: v(&["nothing/**", "bad//glob"]),
            roots: v(&["nope"]),
            ..Rule::default()
        });
        rules.push(Rule {
            groups: v(&["g"]),
            ..Rule::default()
        });
        let skills = [
            skill("finance/ledger", "main"),
            skill("leave", "hr-handbook"),
        ];
        let found = check(&rules, &skills, &["main", "hr-handbook"]);
        let keys: Vec<(&str, bool)> = found.iter().map(|f| (f.key.as_str(), f.error)).collect();
        assert_eq!(
            keys,
            vec![
                ("access.rules[2].skills[0]", false), // finance/audit/** selects nothing here
                ("access.rules[3]", false),           // admits nobody
                ("access.rules[3].skills[0]", false), // selects nothing
                ("access.rules[3].skills[1]", true),  // malformed
                ("access.rules[3].roots[0]", true),   // unknown root
                ("access.rules[4]", true),            // no selector
            ]
        );
        assert!(found[4].message.contains("known: main, hr-handbook"));
    }
}
