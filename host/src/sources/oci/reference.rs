//! OCI references: `host[:port]/repository[:tag][@sha256:<hex>]`, the registry always named.

use anyhow::{Result, bail};

/// A parsed reference. A reference with neither tag nor digest means the tag `latest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `host` or `host:port`.
    pub registry: String,
    /// `org/name`, lower case.
    pub repository: String,
    pub tag: Option<String>,
    /// `sha256:<64 hex>`.
    pub digest: Option<String>,
}

impl Reference {
    /// Parses `text`, refusing what a registry would not take (and a reference without a
    /// registry host: `ghcr.io/org/skill:1.0`, not `org/skill:1.0`).
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        let (rest, digest) = match text.split_once('@') {
            Some((rest, digest)) => {
                if !is_digest(digest) {
                    bail!("{text:?}: the digest must be sha256: and 64 lowercase hex digits");
                }
                (rest, Some(digest.to_owned()))
            }
            None => (text, None),
        };
        let Some((registry, path)) = rest.split_once('/') else {
            bail!(
                "{text:?} names no registry; give host/repository[:tag], e.g. ghcr.io/org/skill:1.0"
            );
        };
        if !(registry.contains(['.', ':']) || registry == "localhost")
            || registry.is_empty()
            || !registry
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        {
            bail!("{text:?}: {registry:?} is not a registry host; give host/repository[:tag]");
        }
        let (repository, tag) = match path.rsplit_once(':') {
            Some((repo, tag)) if !tag.contains('/') => (repo, Some(tag.to_owned())),
            _ => (path, None),
        };
        let repo_ok = !repository.is_empty()
            && repository.len() <= 255
            && repository.split('/').all(|part| {
                !part.is_empty()
                    && part.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b)
                    })
                    && part.as_bytes()[0].is_ascii_alphanumeric()
            });
        if !repo_ok {
            bail!(
                "{text:?}: repository {repository:?} is not allowed; allowed: lowercase letters, digits, `.`, `_`, `-`, separated by `/`"
            );
        }
        if let Some(tag) = &tag
            && !(tag.len() <= 128
                && tag
                    .as_bytes()
                    .first()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)))
        {
            bail!("{text:?}: tag {tag:?} is not allowed; allowed: up to 128 of A-Z a-z 0-9 . _ -");
        }
        let tag = if tag.is_none() && digest.is_none() {
            Some("latest".to_owned())
        } else {
            tag
        };
        Ok(Self {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag,
            digest,
        })
    }

    /// What to ask the registry for: the digest when given, else the tag.
    pub fn target(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest")
    }

    /// The repository's last segment: a source's default name.
    pub fn last_segment(&self) -> &str {
        self.repository
            .rsplit('/')
            .next()
            .unwrap_or(&self.repository)
    }

    /// The registry's host without the port (for the loopback check).
    pub fn host(&self) -> &str {
        let r = self.registry.as_str();
        if let Some(inner) = r.strip_prefix('[') {
            return inner.split(']').next().unwrap_or(inner);
        }
        r.rsplit_once(':').map_or(r, |(h, _)| h)
    }
}

impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// `sha256:` and 64 lowercase hex digits.
pub fn is_digest(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_name_a_registry_and_a_tag_or_digest() {
        let r = Reference::parse("ghcr.io/stacklok/dockyard/skills/pdf:1.2").unwrap();
        assert_eq!(r.registry, "ghcr.io");
        assert_eq!(r.repository, "stacklok/dockyard/skills/pdf");
        assert_eq!(r.tag.as_deref(), Some("1.2"));
        assert_eq!(r.last_segment(), "pdf");
        let d = format!("sha256:{}", "a".repeat(64));
        let r = Reference::parse(&format!("127.0.0.1:5000/x/y@{d}")).unwrap();
        assert_eq!(r.host(), "127.0.0.1");
        assert_eq!(r.target(), d);
        assert_eq!(r.tag, None);
        assert_eq!(
            Reference::parse("localhost/a").unwrap().tag.as_deref(),
            Some("latest")
        );
        for bad in [
            "org/skill:1",
            "ghcr.io/Org/skill",
            "ghcr.io/a/../b",
            "ghcr.io/a:b c",
            "ghcr.io/a@sha256:12",
            "ghcr.io/",
        ] {
            assert!(Reference::parse(bad).is_err(), "{bad}");
        }
    }
}
