//! Static bearer tokens: lines `TOKEN [SCOPE...] [sub=NAME] [groups=A,B]` from a file or an
//! environment variable. Only a token's SHA-256 is kept.

use std::{
    collections::{BTreeSet, HashMap},
    path::Path,
};

use anyhow::{Context as _, Result, bail};
use sha2::{Digest as _, Sha256};

use super::{AuthConfig, MIN_TOKEN_LEN, ScopeNames};

/// One static token: its hash, never the token.
pub(super) struct StaticToken {
    pub(super) hash: [u8; 32],
    pub(super) scopes: BTreeSet<String>,
    /// Where it was configured, e.g. `tokens.txt:3` (never the token).
    pub(super) label: String,
    /// `sub=NAME`: the subject access rules know the holder by.
    pub(super) sub: Option<String>,
    /// `groups=A,B`: the groups access rules know the holder by.
    pub(super) groups: BTreeSet<String>,
}

/// The static tokens configured in `c`: its token file, then its tokens variable (read from
/// `env`, or this process's environment when `None`). A scope in `known` (the scopes named in
/// access rules) may be granted besides the three of `scopes`.
pub(super) fn load_tokens(
    c: &AuthConfig,
    env: Option<&HashMap<String, String>>,
    scopes: &ScopeNames,
    known: &[String],
) -> Result<Vec<StaticToken>> {
    let mut static_tokens = Vec::new();
    if !c.tokens_file.trim().is_empty() {
        let path = Path::new(c.tokens_file.trim());
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the token file {}", path.display()))?;
        parse_tokens(
            &text,
            &path.display().to_string(),
            scopes,
            known,
            &mut static_tokens,
        )?;
    }
    if !c.tokens_env.is_empty() {
        let value = match env {
            Some(env) => env.get(&c.tokens_env).cloned(),
            None => std::env::var(&c.tokens_env).ok(),
        };
        if let Some(value) = value.filter(|v| !v.trim().is_empty()) {
            let text = value.replace(';', "\n");
            parse_tokens(
                &text,
                &format!("${}", c.tokens_env),
                scopes,
                known,
                &mut static_tokens,
            )?;
        }
    }
    Ok(static_tokens)
}

/// Parse static token lines into `out`. `source` names where they come from in errors (with
/// the line number); a token is never shown. A line without scopes grants the three of
/// `scopes` (never one of `known`, which a line must name).
fn parse_tokens(
    text: &str,
    source: &str,
    scopes: &ScopeNames,
    known: &[String],
    out: &mut Vec<StaticToken>,
) -> Result<()> {
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let token = words.next().unwrap_or_default();
        if token.len() < MIN_TOKEN_LEN {
            bail!(
                "{source}:{n}: the token is shorter than {MIN_TOKEN_LEN} characters; allowed: a random token of at least {MIN_TOKEN_LEN} characters (e.g. `openssl rand -hex 32`)"
            );
        }
        if !token.bytes().all(is_token_char) {
            bail!("{source}:{n}: the token has a character outside A-Z a-z 0-9 - . _ ~ + / =");
        }
        let mut granted = BTreeSet::new();
        let mut sub = None;
        let mut groups = BTreeSet::new();
        for word in words {
            if let Some(name) = word.strip_prefix("sub=") {
                if sub.is_some() {
                    bail!("{source}:{n}: `sub=` is given twice; allowed: one `sub=NAME`");
                }
                if name.is_empty() {
                    bail!("{source}:{n}: `sub=` is empty; allowed: `sub=NAME`");
                }
                sub = Some(name.to_string());
                continue;
            }
            if let Some(list) = word.strip_prefix("groups=") {
                if !groups.is_empty() {
                    bail!("{source}:{n}: `groups=` is given twice; allowed: one `groups=A,B`");
                }
                if list.split(',').any(str::is_empty) {
                    bail!(
                        "{source}:{n}: `groups=` has an empty group name; allowed: `groups=A,B` (names separated by commas)"
                    );
                }
                groups.extend(list.split(',').map(str::to_string));
                continue;
            }
            if !scopes.all().contains(&word) && !known.iter().any(|k| k == word) {
                let mut allowed: Vec<&str> = scopes.all().to_vec();
                allowed.extend(known.iter().map(String::as_str));
                bail!(
                    "{source}:{n}: unknown scope `{word}`; allowed: {}, `sub=NAME`, `groups=A,B`",
                    allowed.join(", ")
                );
            }
            granted.insert(word.to_string());
        }
        if granted.is_empty() {
            granted = scopes.all().iter().map(|s| s.to_string()).collect();
        }
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if out.iter().any(|t| t.hash == hash) {
            bail!("{source}:{n}: the same token is configured twice");
        }
        out.push(StaticToken {
            hash,
            scopes: granted,
            label: format!("{source}:{n}"),
            sub,
            groups,
        });
    }
    Ok(())
}

/// The identity one token line gives (`skills-mcp access check --token-file-line`): its
/// scopes, `sub=` and `groups=`, checked as the token file's lines are.
pub fn identity_of_line(
    line: &str,
    scopes: &ScopeNames,
    known: &[String],
) -> Result<super::Identity> {
    let mut out = Vec::new();
    parse_tokens(line, "--token-file-line", scopes, known, &mut out)?;
    let Some(t) = out.pop() else {
        bail!("--token-file-line: no token on the line");
    };
    Ok(super::Identity {
        subject: t.sub.clone().unwrap_or_else(|| t.label.clone()),
        scopes: t.scopes,
        kind: super::IdentityKind::Static,
        sub: t.sub,
        groups: t.groups,
    })
}

/// RFC 6750 `b64token` characters.
fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "tok-a-0123456789abcdef";
    const B: &str = "tok-b-0123456789abcdef";

    fn parse(text: &str) -> Result<Vec<StaticToken>> {
        let mut out = Vec::new();
        parse_tokens(
            text,
            "tokens.txt",
            &ScopeNames::default(),
            &["skills:hr".to_string()],
            &mut out,
        )?;
        Ok(out)
    }

    fn scopes(t: &StaticToken) -> Vec<&str> {
        t.scopes.iter().map(String::as_str).collect()
    }

    #[test]
    fn lines_give_hashes_scopes_and_labels() {
        let text = format!("# comment\n\n  {A}  \n{B} skills:read   skills:run\n");
        let tokens = parse(&text).unwrap();
        assert_eq!(tokens.len(), 2);
        // No scope: every scope.
        assert_eq!(
            scopes(&tokens[0]),
            ["skills:read", "skills:refresh", "skills:run"]
        );
        assert_eq!(scopes(&tokens[1]), ["skills:read", "skills:run"]);
        assert_eq!(tokens[0].label, "tokens.txt:3");
        assert_eq!(tokens[1].label, "tokens.txt:4");
        let hash: [u8; 32] = Sha256::digest(A.as_bytes()).into();
        assert_eq!(tokens[0].hash, hash);
    }

    #[test]
    fn bad_lines_are_located_and_never_show_the_token() {
        let cases = [
            (
                format!("{A}\nshort-token\n"),
                "tokens.txt:2: the token is shorter than 16",
            ),
            (
                format!("{A}x\u{e9}y\n"),
                "tokens.txt:1: the token has a character outside",
            ),
            (
                format!("{A} skills:write\n"),
                "tokens.txt:1: unknown scope `skills:write`; allowed: skills:read, skills:run, skills:refresh, skills:hr, `sub=NAME`, `groups=A,B`",
            ),
            (
                format!("{A} skills:read\n#\n{A}\n"),
                "tokens.txt:3: the same token is configured twice",
            ),
        ];
        for (text, want) in cases {
            let err = format!("{:#}", parse(&text).err().expect(want));
            assert!(
                err.starts_with(want),
                "{err:?} does not start with {want:?}"
            );
            assert!(!err.contains(A), "{err:?} shows the token");
        }
    }

    #[test]
    fn sub_and_groups_name_the_holder_and_a_rule_scope_is_known() {
        let text = format!("{A} sub=alice\n{B} skills:read skills:hr groups=finance,hr sub=bob\n");
        let tokens = parse(&text).unwrap();
        // Without scopes: the three built-in ones only, not the rule's `skills:hr`.
        assert_eq!(
            scopes(&tokens[0]),
            ["skills:read", "skills:refresh", "skills:run"]
        );
        assert_eq!(tokens[0].sub.as_deref(), Some("alice"));
        assert!(tokens[0].groups.is_empty());
        assert_eq!(scopes(&tokens[1]), ["skills:hr", "skills:read"]);
        assert_eq!(tokens[1].sub.as_deref(), Some("bob"));
        let groups: Vec<&str> = tokens[1].groups.iter().map(String::as_str).collect();
        assert_eq!(groups, ["finance", "hr"]);
    }

    #[test]
    fn a_malformed_field_is_located() {
        for (line, want) in [
            (format!("{A} sub="), "tokens.txt:2: `sub=` is empty"),
            (
                format!("{A} sub=a sub=b"),
                "tokens.txt:2: `sub=` is given twice",
            ),
            (
                format!("{A} groups=a,,b"),
                "tokens.txt:2: `groups=` has an empty group name",
            ),
            (
                format!("{A} groups="),
                "tokens.txt:2: `groups=` has an empty group name",
            ),
            (
                format!("{A} groups=a groups=b"),
                "tokens.txt:2: `groups=` is given twice",
            ),
            (
                format!("{A} team=x"),
                "tokens.txt:2: unknown scope `team=x`",
            ),
        ] {
            let err = format!("{:#}", parse(&format!("# c\n{line}\n")).err().expect(want));
            assert!(
                err.starts_with(want),
                "{err:?} does not start with {want:?}"
            );
            assert!(!err.contains(A), "{err:?} shows the token");
        }
    }

    #[test]
    fn every_rfc6750_token_character_is_accepted() {
        let token = "Az09-._~+/=Az09-._~+/=";
        let tokens = parse(token).unwrap();
        assert_eq!(tokens.len(), 1);
    }

    #[test]
    fn the_variable_and_the_file_are_both_read() {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), format!("{A} skills:read\n")).unwrap();
        let config = AuthConfig {
            tokens_file: file.path().display().to_string(),
            tokens_env: "TOKENS".into(),
            ..AuthConfig::default()
        };
        let env = HashMap::from([("TOKENS".to_string(), format!("{B} skills:run; # c"))]);
        let tokens = load_tokens(&config, Some(&env), &ScopeNames::default(), &[]).unwrap();
        assert_eq!(tokens.len(), 2);
        assert_eq!(tokens[0].label, format!("{}:1", file.path().display()));
        assert_eq!(tokens[1].label, "$TOKENS:1");
        assert_eq!(scopes(&tokens[1]), ["skills:run"]);
    }
}
