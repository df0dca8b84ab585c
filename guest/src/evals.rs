//! Trigger evals: a skill's `evals/eval_queries.json` (the Agent Skills format, "Optimizing
//! skill descriptions"), checked, split and run through the router.
//!
//! The rules, each in one place:
//! - **Where** a skill's eval file is ([`Index::eval_file`]): `evals/eval_queries.json` in the
//!   skill's resource folder, whatever its shape: an Agent Skill's own folder; for a
//!   hierarchical `a/b.md` (a category node `a/_index.md` included), `a/b/`. It is a file of the
//!   skill like any other (an asset, in its manifest and limits) and never routing evidence:
//!   nothing of it is indexed.
//! - **What** it holds ([`parse_eval_queries`]): a JSON array of `{"query": string,
//!   "should_trigger": boolean}` objects (other keys are ignored); every problem is reported,
//!   located by entry (0-based) or by line and column for a syntax error.
//! - **The split** ([`split`]): within each `should_trigger` class, the queries sorted by the
//!   SHA-256 of their text (ties by position), the first `round(0.6 n)` are train, the rest
//!   validation, so both sides hold the same share of positives and a query keeps its side
//!   whatever else the file holds.
//! - **The pass rule** ([`Index::evaluate`]): the skill *triggers* on a query when routing the
//!   query (exactly as the `get_skill` tool routes a `context`) matches it, or, with
//!   `accept_ambiguous`, when it is among the ambiguous candidates; a `should_trigger: true`
//!   query passes when the skill triggers, a `false` one when it does not.

use sha2::{Digest as _, Sha256};

use crate::index::check_query;
use crate::model::Error;

/// Where a skill's eval file is, relative to its resource folder.
pub const EVAL_FILE: &str = "evals/eval_queries.json";

/// Largest eval file read, in bytes (about 100 times the 20 queries a skill needs).
pub const MAX_EVAL_FILE_BYTES: u64 = 1024 * 1024;

/// Most queries in one eval file.
pub const MAX_EVAL_QUERIES: usize = 2000;

/// One request of a skill's trigger evals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalQuery {
    pub query: String,
    pub should_trigger: bool,
}

/// What is wrong in an eval file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalProblem {
    /// 0-based index of the entry the problem is about, when it is about one.
    pub entry: Option<u32>,
    /// 1-based line of a syntax error, when known.
    pub line: Option<u32>,
    /// 1-based column of a syntax error, when known.
    pub column: Option<u32>,
    pub message: String,
}

impl std::fmt::Display for EvalProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.entry, self.line, self.column) {
            (Some(e), ..) => write!(f, "entry {e}: {}", self.message),
            (None, Some(l), Some(c)) => write!(f, "line {l}, column {c}: {}", self.message),
            (None, Some(l), None) => write!(f, "line {l}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// Which side of the split a query is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalSplit {
    Train,
    Validation,
}

impl EvalSplit {
    pub fn as_str(self) -> &'static str {
        match self {
            EvalSplit::Train => "train",
            EvalSplit::Validation => "validation",
        }
    }
}

/// How the router answered one query, from the evaluated skill's side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalOutcome {
    /// The evaluated skill was matched.
    Matched,
    /// Another skill was matched (its skill path).
    Other(String),
    /// Several skills are candidates, best first (skill paths).
    Ambiguous(Vec<String>),
    NoMatch,
}

impl EvalOutcome {
    pub fn as_str(&self) -> &'static str {
        match self {
            EvalOutcome::Matched => "matched",
            EvalOutcome::Other(_) => "other",
            EvalOutcome::Ambiguous(_) => "ambiguous",
            EvalOutcome::NoMatch => "no_match",
        }
    }
}

/// One query, run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalResult {
    pub query: String,
    pub should_trigger: bool,
    pub split: EvalSplit,
    pub outcome: EvalOutcome,
    /// 1-based rank of the evaluated skill among the hits routing scored; `None` beyond them.
    pub rank: Option<u32>,
    pub passed: bool,
}

/// Passed and total queries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub passed: u32,
    pub total: u32,
}

impl Tally {
    pub fn add(&mut self, passed: bool) {
        self.total += 1;
        self.passed += u32::from(passed);
    }
}

/// A skill's eval file, run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillEval {
    pub skill_path: String,
    /// In the order of the queries given.
    pub results: Vec<EvalResult>,
    /// Every query.
    pub all: Tally,
    pub train: Tally,
    pub validation: Tally,
}

/// Where a skill's eval file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalFile {
    pub skill_path: String,
    /// The root of the skill.
    pub root: u32,
    /// The file, relative to that root.
    pub path: String,
    /// Whether the root's listing holds it (as a file of this skill).
    pub exists: bool,
}

/// Parse an eval file: a JSON array of `{"query": string, "should_trigger": boolean}`. Every
/// problem is reported (an entry that is not an object, a missing or empty `query`, a
/// `should_trigger` that is not a boolean, a query the router refuses, a query repeated), or
/// the syntax error with its line and column; a file without queries is a problem too.
pub fn parse_eval_queries(bytes: &[u8]) -> Result<Vec<EvalQuery>, Vec<EvalProblem>> {
    let whole = |message: String| {
        vec![EvalProblem {
            entry: None,
            line: None,
            column: None,
            message,
        }]
    };
    if bytes.len() as u64 > MAX_EVAL_FILE_BYTES {
        return Err(whole(format!(
            "the file is {} bytes; an eval file holds at most {MAX_EVAL_FILE_BYTES} bytes",
            bytes.len()
        )));
    }
    let value: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            let line = u32::try_from(e.line()).ok().filter(|&l| l > 0);
            return Err(vec![EvalProblem {
                entry: None,
                column: line.and(u32::try_from(e.column()).ok()),
                line,
                message: format!("not valid JSON: {}", syntax_message(&e)),
            }]);
        }
    };
    let serde_json::Value::Array(entries) = value else {
        return Err(whole(format!(
            "the file holds {}, not an array of {{\"query\": ..., \"should_trigger\": ...}} objects",
            kind(&value)
        )));
    };
    if entries.is_empty() {
        return Err(whole(
            "the array is empty: give queries as {\"query\": \"...\", \"should_trigger\": true|false}"
                .into(),
        ));
    }
    if entries.len() > MAX_EVAL_QUERIES {
        return Err(whole(format!(
            "{} entries; an eval file holds at most {MAX_EVAL_QUERIES} queries",
            entries.len()
        )));
    }
    let mut problems = Vec::new();
    let mut queries = Vec::with_capacity(entries.len());
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let mut problem = |message: String| {
            problems.push(EvalProblem {
                entry: Some(u32::try_from(i).unwrap_or(u32::MAX)),
                line: None,
                column: None,
                message,
            })
        };
        let serde_json::Value::Object(mut fields) = entry else {
            problem(format!(
                "{}, not an object {{\"query\": ..., \"should_trigger\": ...}}",
                kind(&entry)
            ));
            continue;
        };
        let query = match fields.remove("query") {
            None => {
                problem("`query` is missing".into());
                None
            }
            Some(serde_json::Value::String(q)) => match check_query(&q) {
                Ok(()) => Some(q),
                Err(e) => {
                    problem(format!("`query`: {}", message_of(&e)));
                    None
                }
            },
            Some(other) => {
                problem(format!("`query` is {}, not a string", kind(&other)));
                None
            }
        };
        let should_trigger = match fields.remove("should_trigger") {
            None => {
                problem("`should_trigger` is missing (true or false)".into());
                None
            }
            Some(serde_json::Value::Bool(b)) => Some(b),
            Some(other) => {
                problem(format!(
                    "`should_trigger` is {}, not true or false",
                    kind(&other)
                ));
                None
            }
        };
        if let Some(q) = &query {
            if let Some(first) = seen.get(q) {
                problem(format!("the same `query` as entry {first}"));
                continue;
            }
            seen.insert(q.clone(), i);
        }
        if let (Some(query), Some(should_trigger)) = (query, should_trigger) {
            queries.push(EvalQuery {
                query,
                should_trigger,
            });
        }
    }
    if problems.is_empty() {
        Ok(queries)
    } else {
        Err(problems)
    }
}

/// serde_json's message without its own " at line L column C" (the problem carries them).
fn syntax_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// An engine error's message, without the kind prefix.
fn message_of(e: &Error) -> String {
    match e {
        Error::InvalidArgument(m) | Error::InvalidPath(m) | Error::NotFound(m) => m.clone(),
        other => other.to_string(),
    }
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The train/validation split of `queries`, in their order: within each `should_trigger`
/// class, sorted by the SHA-256 of the query text (ties by position), the first
/// `round(0.6 n)` (halves rounded up) are train, the rest validation.
pub fn split(queries: &[EvalQuery]) -> Vec<EvalSplit> {
    let mut sides = vec![EvalSplit::Validation; queries.len()];
    for class in [true, false] {
        let mut members: Vec<([u8; 32], usize)> = queries
            .iter()
            .enumerate()
            .filter(|(_, q)| q.should_trigger == class)
            .map(|(i, q)| (Sha256::digest(q.query.as_bytes()).into(), i))
            .collect();
        members.sort_unstable();
        let train = train_count(members.len());
        for &(_, i) in &members[..train] {
            sides[i] = EvalSplit::Train;
        }
    }
    sides
}

/// `round(0.6 n)`, halves up, in integers: `(6 n + 5) / 10`.
fn train_count(n: usize) -> usize {
    (6 * n + 5) / 10
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(query: &str, should_trigger: bool) -> EvalQuery {
        EvalQuery {
            query: query.into(),
            should_trigger,
        }
    }

    #[test]
    fn the_documented_format_parses() {
        let text = r#"[
          {"query": "I've got a spreadsheet in ~/data/q4.xlsx ... add a profit margin column", "should_trigger": true},
          {"query": "whats the quickest way to convert this json file to yaml", "should_trigger": false, "note": "near miss"}
        ]"#;
        assert_eq!(
            parse_eval_queries(text.as_bytes()).unwrap(),
            vec![
                q(
                    "I've got a spreadsheet in ~/data/q4.xlsx ... add a profit margin column",
                    true
                ),
                q(
                    "whats the quickest way to convert this json file to yaml",
                    false
                ),
            ]
        );
    }

    #[test]
    fn every_problem_is_located_by_entry() {
        let text = r#"[
          {"query": "fine", "should_trigger": true},
          "just a string",
          {"should_trigger": true},
          {"query": "   ", "should_trigger": false},
          {"query": 7, "should_trigger": "yes"},
          {"query": "fine", "should_trigger": false},
          {"query": "no flag"}
        ]"#;
        let problems = parse_eval_queries(text.as_bytes()).unwrap_err();
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            vec![
                "entry 1: a string, not an object {\"query\": ..., \"should_trigger\": ...}",
                "entry 2: `query` is missing",
                "entry 3: `query`: the query is empty",
                "entry 4: `query` is a number, not a string",
                "entry 4: `should_trigger` is a string, not true or false",
                "entry 5: the same `query` as entry 0",
                "entry 6: `should_trigger` is missing (true or false)",
            ]
        );
    }

    #[test]
    fn syntax_errors_carry_line_and_column_and_other_shapes_are_refused() {
        let problems =
            parse_eval_queries(b"[\n  {\"query\": \"a\",\n  \"should_trigger\": tru}\n]")
                .unwrap_err();
        assert_eq!(problems.len(), 1);
        assert_eq!((problems[0].line, problems[0].entry), (Some(3), None));
        assert!(problems[0].column.is_some());
        assert!(
            problems[0].to_string().starts_with("line 3, column "),
            "{}",
            problems[0]
        );
        assert!(
            !problems[0].message.contains(" at line "),
            "{}",
            problems[0]
        );
        for (text, says) in [
            (&b"{}"[..], "the file holds an object, not an array"),
            (b"[]", "the array is empty"),
            (b"", "not valid JSON"),
        ] {
            let p = parse_eval_queries(text).unwrap_err();
            assert!(p[0].message.starts_with(says), "{}", p[0].message);
        }
        let long = format!(
            r#"[{{"query": "{}", "should_trigger": true}}]"#,
            "a ".repeat(600)
        );
        let p = parse_eval_queries(long.as_bytes()).unwrap_err();
        assert!(p[0].message.contains("512 words"), "{}", p[0].message);
        let big = vec![b' '; MAX_EVAL_FILE_BYTES as usize + 1];
        assert!(
            parse_eval_queries(&big).unwrap_err()[0]
                .message
                .contains("at most")
        );
    }

    #[test]
    fn the_split_is_60_40_within_each_class_by_sha256() {
        let queries: Vec<EvalQuery> = (0..10)
            .map(|i| q(&format!("positive {i}"), true))
            .chain((0..5).map(|i| q(&format!("negative {i}"), false)))
            .collect();
        let sides = split(&queries);
        let count = |class: bool, side: EvalSplit| {
            queries
                .iter()
                .zip(&sides)
                .filter(|(q, s)| q.should_trigger == class && **s == side)
                .count()
        };
        assert_eq!(count(true, EvalSplit::Train), 6);
        assert_eq!(count(true, EvalSplit::Validation), 4);
        // round(0.6 * 5) = 3
        assert_eq!(count(false, EvalSplit::Train), 3);
        assert_eq!(count(false, EvalSplit::Validation), 2);
        // The train side is the smallest digests of its class.
        let mut positives: Vec<([u8; 32], EvalSplit)> = queries
            .iter()
            .zip(&sides)
            .filter(|(q, _)| q.should_trigger)
            .map(|(q, s)| (Sha256::digest(q.query.as_bytes()).into(), *s))
            .collect();
        positives.sort_by_key(|p| p.0);
        assert!(positives[..6].iter().all(|(_, s)| *s == EvalSplit::Train));
        // A query keeps its side when the file is reordered.
        let mut reversed = queries.clone();
        reversed.reverse();
        let back: Vec<EvalSplit> = split(&reversed).into_iter().rev().collect();
        assert_eq!(back, sides);
        // Rounding: 1 -> 1 train, 2 -> 1, 3 -> 2, 4 -> 2, 5 -> 3; none -> none.
        assert_eq!(
            (0..=5).map(train_count).collect::<Vec<_>>(),
            vec![0, 1, 1, 2, 2, 3]
        );
    }
}
