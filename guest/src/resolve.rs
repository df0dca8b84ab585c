//! Content resolution and names derived from skill paths.
//!
//! Aggregation format, inferred from the reference example: each skill of the chain (root
//! first) is a section
//!
//! ```text
//! === <HEADER> (from <file>) ===
//!
//! <content>
//! ```
//!
//! and sections are joined by one blank line (`"\n\n"`); the result has no trailing newline.
//! `<file>` is the skill file relative to its root, as on disk (`ui/react/auth.md`,
//! `pdf/SKILL.md`). Each `<content>` is the file's body with the blank lines before its first
//! text line and all trailing whitespace removed ([`crate::frontmatter::trim_body`]). With
//! `inherit: false` the result is the skill's own trimmed body alone: no header.

use crate::frontmatter;

/// Spec 6.2 header of a skill path: `_root` -> `GLOBAL RULES`; otherwise uppercase, `/` ->
/// ` > `, `_INDEX` segments removed, whitespace normalised (runs collapsed, trimmed). A path
/// left empty by the removal (a top-level `_index`) keeps its uppercase spelling `_INDEX`.
pub fn header(skill_path: &str) -> String {
    if skill_path == "_root" {
        return "GLOBAL RULES".into();
    }
    let upper = skill_path.to_uppercase();
    let segments: Vec<String> = upper
        .split('/')
        .filter(|s| *s != "_INDEX")
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .collect();
    if segments.is_empty() {
        return upper.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    segments.join(" > ")
}

/// One skill of a resolved chain.
pub struct Section<'a> {
    pub skill_path: &'a str,
    /// The skill file relative to its root.
    pub file: &'a str,
    /// The file's body (untrimmed).
    pub body: &'a str,
}

/// Spec 6.2: the sections of `chain` (root first), formatted and joined (see the module docs).
pub fn aggregate(chain: &[Section<'_>]) -> String {
    let mut out = String::new();
    for (i, s) in chain.iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        out.push_str("=== ");
        out.push_str(&header(s.skill_path));
        out.push_str(" (from ");
        out.push_str(s.file);
        out.push_str(") ===\n\n");
        out.push_str(frontmatter::trim_body(s.body));
    }
    out
}

/// An Agent Skills name derived from a skill path: its last segment (`_index` -> the folder's
/// name, `_root` -> `root`), lowercased, every run of characters outside `a-z0-9` turned into
/// one `-`, no leading or trailing `-`, at most 64 characters; `skill` if nothing is left.
pub fn agent_name(skill_path: &str) -> String {
    let mut segments: Vec<&str> = skill_path.split('/').collect();
    let mut last = segments.pop().unwrap_or("");
    if last == "_index" {
        last = segments.pop().unwrap_or("index");
    }
    if last == "_root" {
        last = "root";
    }
    let mut name = String::new();
    for c in last.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let mut name = name.trim_end_matches('-').to_owned();
    if name.len() > 64 {
        name.truncate(64);
        name = name.trim_end_matches('-').to_owned();
    }
    if name.is_empty() {
        "skill".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_6_2_header_formatting() {
        assert_eq!(header("_root"), "GLOBAL RULES");
        assert_eq!(header("ui/_index"), "UI");
        assert_eq!(header("ui/react/_index"), "UI > REACT");
        assert_eq!(header("ui/react/auth"), "UI > REACT > AUTH");
        assert_eq!(header("no-inherit"), "NO-INHERIT");
        assert_eq!(header("my  docs/ big\tthing "), "MY DOCS > BIG THING");
        assert_eq!(header("_index"), "_INDEX");
        assert_eq!(header("straße/ök"), "STRASSE > ÖK");
    }

    #[test]
    fn spec_6_2_aggregation_format() {
        let chain = [
            Section {
                skill_path: "_root",
                file: "_root.md",
                body: "\nGlobal rules\n",
            },
            Section {
                skill_path: "ui/_index",
                file: "ui/_index.md",
                body: "UI rules",
            },
            Section {
                skill_path: "ui/react/_index",
                file: "ui/react/_index.md",
                body: "\n\nReact rules\n\n",
            },
            Section {
                skill_path: "ui/react/auth",
                file: "ui/react/auth.md",
                body: "Auth rules\n\n- one\n- two\n",
            },
        ];
        assert_eq!(
            aggregate(&chain),
            "=== GLOBAL RULES (from _root.md) ===\n\nGlobal rules\n\n\
             === UI (from ui/_index.md) ===\n\nUI rules\n\n\
             === UI > REACT (from ui/react/_index.md) ===\n\nReact rules\n\n\
             === UI > REACT > AUTH (from ui/react/auth.md) ===\n\nAuth rules\n\n- one\n- two"
        );
        let agent = [Section {
            skill_path: "tools/pdf",
            file: "tools/pdf/SKILL.md",
            body: "# PDF\n",
        }];
        assert_eq!(
            aggregate(&agent),
            "=== TOOLS > PDF (from tools/pdf/SKILL.md) ===\n\n# PDF"
        );
    }

    #[test]
    fn agent_names_from_paths() {
        assert_eq!(agent_name("ui/react/auth"), "auth");
        assert_eq!(agent_name("ui/_index"), "ui");
        assert_eq!(agent_name("_index"), "index");
        assert_eq!(agent_name("_root"), "root");
        assert_eq!(agent_name("docs/My_Cool  Skill!"), "my-cool-skill");
        assert_eq!(agent_name("x/--a--b--"), "a-b");
        assert_eq!(agent_name("x/日本"), "skill");
        assert_eq!(agent_name(&"a".repeat(80)).len(), 64);
    }
}
