//! Lean views of a finished [`Index`] for hosts that page through listings: a page of skills
//! with only what listings show (the findings without the files that have none are
//! [`Index::diagnostics`]).
//!
//! A host serving thousands of skills asks for these instead of `skills` and `reports`, so
//! neither it nor the engine copies every skill's frontmatter or every examined file.

use crate::index::Index;

/// A skill as listings show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSummary {
    pub skill_path: String,
    pub name: String,
    pub description: String,
}

/// Skills `start..start + count` in skill-path order (fewer at the end, none past it).
pub fn summaries(index: &Index, start: usize, count: usize) -> Vec<SkillSummary> {
    let end = start.saturating_add(count).min(index.len());
    (start..end)
        .filter_map(|i| index.summary(i))
        .map(|(skill_path, name, description)| SkillSummary {
            skill_path: skill_path.to_string(),
            name: name.to_string(),
            description: description.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Diagnostic, Entry, EntryKind, FileData};

    fn index() -> Index {
        let files = [
            (
                "a/SKILL.md",
                "---\nname: a\ndescription: First skill.\n---\nbody\n",
            ),
            (
                "b/SKILL.md",
                "---\nname: b\ndescription: Second skill.\n---\nbody\n",
            ),
            ("c/SKILL.md", "---\nname: c\n---\nno description\n"),
        ];
        let mut index = Index::default();
        let mut listing = Vec::new();
        for (path, text) in files {
            let dir = path.split('/').next().unwrap_or_default().to_string();
            listing.push(Entry {
                path: dir,
                kind: EntryKind::Directory,
                size: 0,
            });
            listing.push(Entry {
                path: path.to_string(),
                kind: EntryKind::File,
                size: text.len() as u64,
            });
        }
        let wanted = index.add_root("r", listing).expect("a valid listing");
        let data = files
            .iter()
            .filter(|(p, _)| wanted.iter().any(|w| w == p))
            .map(|(p, t)| FileData {
                path: p.to_string(),
                bytes: t.as_bytes().to_vec(),
            })
            .collect();
        index.add_files(0, data).expect("the files asked for");
        index.finish().expect("finished once");
        index
    }

    #[test]
    fn summaries_page_through_the_skills_in_order() {
        let index = index();
        let all: Vec<String> = index.skills().into_iter().map(|s| s.skill_path).collect();
        let mut paged = Vec::new();
        let mut start = 0;
        loop {
            let page = summaries(&index, start, 2);
            if page.is_empty() {
                break;
            }
            start += page.len();
            paged.extend(page.into_iter().map(|s| s.skill_path));
        }
        assert_eq!(paged, all);
        let first = &summaries(&index, 0, 1)[0];
        let info = index.get(&first.skill_path).expect("skill");
        assert_eq!(
            (first.name.as_str(), first.description.as_str()),
            (info.name.as_str(), info.description.as_str())
        );
        assert!(summaries(&index, 99, 5).is_empty());
        assert!(summaries(&index, 1, usize::MAX).len() == all.len() - 1);
    }

    #[test]
    fn diagnostics_are_the_findings_of_the_reports() {
        let index = index();
        let flat: Vec<Diagnostic> = index
            .reports()
            .into_iter()
            .flat_map(|r| r.diagnostics)
            .collect();
        assert!(!flat.is_empty());
        assert_eq!(index.diagnostics(), flat);
    }
}
