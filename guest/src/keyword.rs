//! Keyword matching, exactly as the original functional specification defines it: a skill
//! scores the fraction of its keywords that the request's words match.
//!
//! Selected with `matching.algorithm: keywords`. Scores are the spec's: the fraction of a
//! skill's keywords that the request matched, plus `priority * 0.001`.

use crate::rank::{Scored, SearchDoc};
use crate::text::tokenize;
use std::cmp::Ordering;

/// Whether a request token matches a keyword (both lowercase).
///
/// Exact match always counts. Otherwise either contains the other (bidirectional substring),
/// except that when the token or the keyword is shorter than 3 characters only an exact match
/// counts ("short token protection": `go` does not match `golang`, `js` does not match
/// `json`). The spec's pseudo-code says "both < 3 chars" but its table (`go` vs `golang`: no)
/// and its prose require the stricter reading used here. Lengths are counted in characters.
pub fn token_matches(token: &str, keyword: &str) -> bool {
    if token == keyword {
        return true;
    }
    if token.chars().count() < 3 || keyword.chars().count() < 3 {
        return false;
    }
    token.contains(keyword) || keyword.contains(token)
}

/// Score one skill's keywords against query tokens: (score, matched keywords).
///
/// `base = matched keywords / total keywords`, `score = base + priority * 0.001`.
/// Keywords are lowercased (and trimmed); a keyword matched by several tokens counts once.
/// No keywords: score `priority * 0.001` with nothing matched (callers drop it).
pub fn score(tokens: &[String], keywords: &[String], priority: i32) -> (f64, Vec<String>) {
    let mut matched = Vec::new();
    let mut total = 0usize;
    for kw in keywords {
        let kw = kw.trim().to_lowercase();
        if kw.is_empty() {
            continue;
        }
        total += 1;
        if tokens.iter().any(|t| token_matches(t, &kw)) {
            matched.push(kw);
        }
    }
    let base = if total == 0 {
        0.0
    } else {
        matched.len() as f64 / total as f64
    };
    (base + f64::from(priority) * 0.001, matched)
}

/// Keywords derived for a skill that declares none: the tokens of its name and
/// description (the name's `-`/`_` separated parts included).
pub fn derived_keywords(doc: &SearchDoc) -> Vec<String> {
    let name_parts = doc.name.replace(['-', '_'], " ");
    let mut text = String::with_capacity(doc.name.len() * 2 + doc.description.len() + 2);
    text.push_str(&doc.name);
    text.push(' ');
    text.push_str(&name_parts);
    text.push(' ');
    text.push_str(&doc.description);
    tokenize(&text)
}

/// Keyword matching over all documents, best first (ties by priority, then skill path).
///
/// - A skill with `keywords` is scored by [`score`] exactly as the spec says.
/// - A skill without keywords (most real `SKILL.md` files) still matches on the words of its
///   name and description: its keywords are [`derived_keywords`], and since that list is long
///   its base score is the fraction of the *query* tokens that match one of them (rather than
///   the fraction of the derived keywords matched, which would be tiny); plus
///   `priority * 0.001` as usual. `matched` lists the derived keywords that matched.
///
/// Documents whose base score is 0 (nothing matched) are dropped. At most `limit` results.
pub fn search(docs: &[SearchDoc], query: &str, limit: usize) -> Vec<Scored> {
    let tokens = tokenize(query);
    if tokens.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<Scored> = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        let has_keywords = doc.keywords.iter().any(|k| !k.trim().is_empty());
        let (score, matched) = if has_keywords {
            score(&tokens, &doc.keywords, doc.priority)
        } else {
            let derived = derived_keywords(doc);
            let hit = tokens
                .iter()
                .filter(|t| derived.iter().any(|kw| token_matches(t, kw)))
                .count();
            let matched: Vec<String> = derived
                .into_iter()
                .filter(|kw| tokens.iter().any(|t| token_matches(t, kw)))
                .collect();
            let base = hit as f64 / tokens.len() as f64;
            (base + f64::from(doc.priority) * 0.001, matched)
        };
        if matched.is_empty() {
            continue;
        }
        out.push(Scored {
            doc: i,
            score,
            matched,
        });
    }
    out.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| docs[b.doc].priority.cmp(&docs[a.doc].priority))
            .then_with(|| docs[a.doc].skill_path.cmp(&docs[b.doc].skill_path))
    });
    out.truncate(limit);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn spec_table() {
        assert!(token_matches("react", "react"));
        assert!(token_matches("authentication", "auth"));
        assert!(token_matches("auth", "authentication"));
        assert!(token_matches("react", "reactjs"));
        assert!(!token_matches("go", "golang"));
        assert!(token_matches("ts", "ts"));
        assert!(!token_matches("js", "json"));
    }

    #[test]
    fn score_is_fraction_plus_priority() {
        let tokens = tokenize("Create a React component for the authentication");
        let (sc, m) = score(&tokens, &s(&["react", "auth", "component", "hooks"]), 0);
        assert!((sc - 0.75).abs() < 1e-12);
        assert_eq!(m, s(&["react", "auth", "component"]));
        let (sc, _) = score(&tokens, &s(&["react", "auth", "component", "hooks"]), 5);
        assert!((sc - 0.755).abs() < 1e-12);
        let (sc, m) = score(&tokens, &s(&["vue"]), -2);
        assert!((sc + 0.002).abs() < 1e-12);
        assert!(m.is_empty());
    }

    #[test]
    fn keywords_lowercased_and_counted_once() {
        let tokens = s(&["react", "reactjs"]);
        let (sc, m) = score(&tokens, &s(&["React", "Vue"]), 0);
        assert!((sc - 0.5).abs() < 1e-12);
        assert_eq!(m, s(&["react"]));
        let (sc, m) = score(&tokens, &[], 0);
        assert_eq!(sc, 0.0);
        assert!(m.is_empty());
    }

    fn doc(path: &str, name: &str, desc: &str, kws: &[&str], priority: i32) -> SearchDoc {
        SearchDoc {
            skill_path: path.into(),
            name: name.into(),
            description: desc.into(),
            keywords: s(kws),
            priority,
            ..Default::default()
        }
    }

    #[test]
    fn search_orders_and_ties() {
        let docs = vec![
            doc("b/auth", "auth", "API authentication", &["auth", "api"], 0),
            doc("a/auth", "auth", "API authentication", &["auth", "api"], 0),
            doc("ui/react", "react", "React UI", &["react", "auth"], 1),
            doc("misc", "misc", "Nothing", &["cooking"], 9),
        ];
        let r = search(&docs, "react auth", 10);
        let order: Vec<usize> = r.iter().map(|x| x.doc).collect();
        // ui/react: 1.0 + 0.001; the two auth skills 0.5 each, tied: path order.
        assert_eq!(order, vec![2, 1, 0]);
        assert!((r[0].score - 1.001).abs() < 1e-12);
        assert_eq!(search(&docs, "react auth", 1).len(), 1);
        assert!(search(&docs, "the of", 10).is_empty());
    }

    #[test]
    fn search_derives_keywords_from_name_and_description() {
        let docs = vec![
            doc(
                "pdf",
                "pdf-tools",
                "Extract text and tables from PDF files",
                &[],
                0,
            ),
            doc("xlsx", "xlsx", "Spreadsheet editing", &[], 0),
        ];
        let r = search(&docs, "extract tables from a pdf", 10);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].doc, 0);
        // query tokens: extract, tables, pdf -> all three match.
        assert!((r[0].score - 1.0).abs() < 1e-12);
        let r = search(&docs, "pdf weather", 10);
        assert!((r[0].score - 0.5).abs() < 1e-12);
    }
}
