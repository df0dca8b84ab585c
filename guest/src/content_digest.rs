//! The `contentDigest` of a skill, as ToolHive's lock file (`toolhive.lock.yaml`) defines it:
//! the skill's files sorted by their `/`-separated path (byte order); for each, the path, a NUL
//! byte, the raw 32-byte SHA-256 of the file's content and a newline are hashed; the answer is
//! `sha256:` and the lowercase hex of that SHA-256. File modes and times are not covered.
//!
//! The files are the ones the engine's manifest lists for the skill (`index.manifest`: the one
//! walk decides what a skill serves); the caller hashes each file's bytes (it reads them) and
//! this module orders and frames them, once, for every caller (`lock`, `lock --check`,
//! `serve --locked`).

use sha2::{Digest as _, Sha256};

/// The SHA-256 of a file's content, as [`content_digest`] takes it.
pub fn file_sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// ToolHive's `contentDigest` over `files` (`(relative path, SHA-256 of the content)`, in any
/// order): `sha256:<64 lowercase hex>`.
pub fn content_digest(files: &[(String, [u8; 32])]) -> String {
    let mut sorted: Vec<&(String, [u8; 32])> = files.iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut hasher = Sha256::new();
    for (path, sha) in sorted {
        hasher.update(path.as_bytes());
        hasher.update([0u8]);
        hasher.update(sha);
        hasher.update(b"\n");
    }
    let digest = hasher.finalize();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn empty_skill_is_the_digest_of_nothing() {
        assert_eq!(
            content_digest(&[]),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn order_of_the_input_does_not_matter_and_paths_sort_by_bytes() {
        let a = ("SKILL.md".to_string(), file_sha256(b"---\nname: a\n---\n"));
        let b = ("scripts/run.sh".to_string(), file_sha256(b"echo hi\n"));
        let c = ("Z.md".to_string(), file_sha256(b""));
        let one = content_digest(&[a.clone(), b.clone(), c.clone()]);
        let two = content_digest(&[b.clone(), c.clone(), a.clone()]);
        assert_eq!(one, two);
        // Byte order: `SKILL.md` < `Z.md` < `scripts/run.sh` (upper case first).
        let mut framed = Vec::new();
        for (p, s) in [&a, &c, &b] {
            framed.extend_from_slice(p.as_bytes());
            framed.push(0);
            framed.extend_from_slice(s);
            framed.push(b'\n');
        }
        assert_eq!(one, format!("sha256:{}", hex(&Sha256::digest(&framed))));
    }

    #[test]
    fn content_path_and_framing_each_change_the_digest() {
        let base = content_digest(&[("SKILL.md".into(), file_sha256(b"x"))]);
        assert_ne!(
            base,
            content_digest(&[("SKILL.md".into(), file_sha256(b"y"))])
        );
        assert_ne!(
            base,
            content_digest(&[("skill.md".into(), file_sha256(b"x"))])
        );
        assert_eq!(base.len(), 7 + 64);
    }
}
