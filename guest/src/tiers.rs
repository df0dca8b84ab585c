//! The catalogue text that a host puts in its server instructions and tool descriptions, by
//! catalogue size: a rule about how skills are presented, so the engine owns it and hosts print
//! what they get.
//!
//! Given every skill's path, name and description, produce a block of text that fits a character
//! budget. The tier is chosen by the number of skills: up to [`FULL_MAX`] skills, paths and
//! descriptions; up to [`COMPACT_MAX`], paths and short descriptions; beyond, categories (first
//! path segment) with counts and a pointer to `search_skills`. When a tier's text does not fit
//! the budget, the next tier is used, and the last one is cut with a note, so the result never
//! exceeds the budget.

/// Up to this many skills, the catalogue lists paths with full descriptions.
pub const FULL_MAX: usize = 80;
/// Up to this many skills, paths with short descriptions.
pub const COMPACT_MAX: usize = 300;
/// Length of a short description, in characters.
pub const SHORT_DESCRIPTION: usize = 80;
/// Longest description kept in the full tier, in characters.
pub const FULL_DESCRIPTION: usize = 200;

/// One skill as the catalogue shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    pub skill_path: &'a str,
    pub name: &'a str,
    pub description: &'a str,
}

/// Which form the catalogue took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// Paths and descriptions.
    Full,
    /// Paths and short descriptions.
    Compact,
    /// Paths only.
    Names,
    /// Categories with counts.
    Categories,
}

/// The tier a catalogue of `n` skills gets before any budget applies.
pub fn tier_for(n: usize) -> Tier {
    if n <= FULL_MAX {
        Tier::Full
    } else if n <= COMPACT_MAX {
        Tier::Compact
    } else {
        Tier::Categories
    }
}

/// The catalogue text and the tier used; `budget` is in characters (not bytes).
///
/// An empty catalogue gives a line saying so.
pub fn catalogue(entries: &[Entry<'_>], budget: usize) -> (String, Tier) {
    if entries.is_empty() {
        return (cut("No skills are installed.".into(), budget), Tier::Full);
    }
    let order = [Tier::Full, Tier::Compact, Tier::Names, Tier::Categories];
    let start = order
        .iter()
        .position(|t| *t == tier_for(entries.len()))
        .unwrap_or(0);
    for tier in &order[start..] {
        let text = render(entries, *tier);
        if chars(&text) <= budget {
            return (text, *tier);
        }
    }
    (
        cut(render(entries, Tier::Categories), budget),
        Tier::Categories,
    )
}

fn render(entries: &[Entry<'_>], tier: Tier) -> String {
    let n = entries.len();
    let mut out = String::new();
    match tier {
        Tier::Full | Tier::Compact => {
            let limit = if tier == Tier::Full {
                FULL_DESCRIPTION
            } else {
                SHORT_DESCRIPTION
            };
            out.push_str(&format!("Available skills ({n}):\n"));
            for e in entries {
                out.push_str(&format!(
                    "- {}: {}\n",
                    label(e),
                    shorten(e.description, limit)
                ));
            }
        }
        Tier::Names => {
            out.push_str(&format!(
                "Available skills ({n}; call search_skills to see descriptions): "
            ));
            let labels: Vec<String> = entries.iter().map(label).collect();
            out.push_str(&labels.join(", "));
            out.push('\n');
        }
        Tier::Categories => {
            let mut cats: Vec<(String, usize)> = Vec::new();
            for e in entries {
                let cat = match e.skill_path.split_once('/') {
                    Some((first, _)) => first.to_string(),
                    None => "(top level)".to_string(),
                };
                match cats.iter_mut().find(|(c, _)| *c == cat) {
                    Some((_, count)) => *count += 1,
                    None => cats.push((cat, 1)),
                }
            }
            cats.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            out.push_str(&format!(
                "{n} skills in {} categories; call search_skills with a few words about the task to find one. Categories: ",
                cats.len()
            ));
            let parts: Vec<String> = cats.iter().map(|(c, k)| format!("{c} ({k})")).collect();
            out.push_str(&parts.join(", "));
            out.push('\n');
        }
    }
    out
}

/// The skill path, with the name when it differs from the last path segment.
fn label(e: &Entry<'_>) -> String {
    let last = e.skill_path.rsplit('/').next().unwrap_or(e.skill_path);
    if e.name.is_empty() || e.name == last {
        e.skill_path.to_string()
    } else {
        format!("{} ({})", e.skill_path, e.name)
    }
}

/// One line, at most `limit` characters, cut at a word boundary with an ellipsis.
pub fn shorten(text: &str, limit: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if chars(&one_line) <= limit {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(limit.saturating_sub(1)).collect();
    if let Some(space) = cut.rfind(' ')
        && space > limit / 2
    {
        cut.truncate(space);
    }
    let trimmed = cut.trim_end_matches([' ', ',', ';', ':', '.']).to_string();
    format!("{trimmed}…")
}

/// `text` cut to at most `budget` characters, ending with a note when cut.
fn cut(text: String, budget: usize) -> String {
    if chars(&text) <= budget {
        return text;
    }
    let note = " … (cut; call search_skills)";
    let keep = budget.saturating_sub(chars(note));
    let mut out: String = text.chars().take(keep).collect();
    if chars(note) <= budget {
        out.push_str(note);
    }
    out
}

/// Length in characters.
pub fn chars(s: &str) -> usize {
    s.chars().count()
}

/// The catalogue text of a finished index, and its tier; `budget` is in characters.
pub fn index_catalogue(
    index: &crate::index::Index,
    budget: usize,
) -> Result<(String, Tier), crate::model::Error> {
    index.ready()?;
    let n = index.len();
    let descriptions = tier_for(n) != Tier::Categories;
    let entries: Vec<Entry<'_>> = (0..n)
        .filter_map(|i| index.summary(i))
        .map(|(skill_path, name, description)| Entry {
            skill_path,
            name,
            description: if descriptions { description } else { "" },
        })
        .collect();
    Ok(catalogue(&entries, budget))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_follow_the_size_and_fit_the_budget() {
        let paths: Vec<(String, String)> = (0..3000)
            .map(|i| (format!("cat{}/skill-{i}", i % 5), format!("skill-{i}")))
            .collect();
        let description = "word ".repeat(100);
        let entries = |n: usize| -> Vec<Entry<'_>> {
            paths[..n]
                .iter()
                .map(|(skill_path, name)| Entry {
                    skill_path,
                    name,
                    description: &description,
                })
                .collect()
        };
        assert_eq!(catalogue(&entries(10), 100_000).1, Tier::Full);
        assert_eq!(catalogue(&entries(100), 100_000).1, Tier::Compact);
        assert_eq!(catalogue(&entries(400), 100_000).1, Tier::Categories);
        for n in [0, 1, 10, 80, 81, 300, 301, 3000] {
            for budget in [50, 500, 1800, 24_000] {
                let (text, _) = catalogue(&entries(n), budget);
                assert!(chars(&text) <= budget, "{n} skills, budget {budget}");
            }
        }
        let (text, _) = catalogue(&entries(400), 100_000);
        assert!(
            text.contains("search_skills") && text.contains("cat0 (80)"),
            "{text}"
        );
        assert_eq!(shorten("a b c", 80), "a b c");
        assert!(chars(&shorten(&"long words ".repeat(30), 80)) <= 80);
    }

    #[test]
    fn an_unfinished_index_has_no_catalogue() {
        let index = crate::index::Index::default();
        assert_eq!(
            index_catalogue(&index, 100),
            Err(crate::model::Error::NotReady)
        );
    }
}
