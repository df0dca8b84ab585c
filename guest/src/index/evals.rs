//! The index's side of trigger evals (see [`crate::evals`]): where a skill's eval file is,
//! and running eval queries through the router.

use super::*;
use crate::evals::{
    EVAL_FILE, EvalFile, EvalOutcome, EvalQuery, EvalResult, EvalSplit, SkillEval, Tally, split,
};
use crate::rank::{Draft, WithDraft};

impl Index {
    /// Where the eval file of the skill `skill_path` is (see the module docs), whether or not
    /// it exists: for an editor to save one.
    pub fn eval_file(&self, skill_path: &str) -> Result<EvalFile, Error> {
        let i = self.find(skill_path)?;
        Ok(self.eval_file_of(i))
    }

    /// [`Index::eval_file`] of skill `i`: `evals/eval_queries.json` in its resource folder
    /// (an Agent Skill's folder; `a/b/` for a hierarchical `a/b.md`, existing or not), a file
    /// of the skill when the listing holds it there and no nested Agent Skill owns it.
    fn eval_file_of(&self, i: usize) -> EvalFile {
        let m = &self.metas[i];
        let (folder, owner) = match m.shape {
            SkillShape::AgentSkill => {
                let folder = m.resource_dir.as_deref().unwrap_or_default();
                (folder, Some(folder))
            }
            SkillShape::Hierarchical => (paths::resource_dir_of_md(&m.file), None),
        };
        let path = paths::join(folder, EVAL_FILE);
        let listing = &self.roots[m.root as usize].listing;
        let exists = listing.size(&path).is_some() && listing.owner(&path) == owner;
        EvalFile {
            skill_path: self.docs[i].skill_path.clone(),
            root: m.root,
            path,
            exists,
        }
    }

    /// The eval files of every skill that has one, sorted by skill path.
    pub fn eval_files(&self) -> Result<Vec<EvalFile>, Error> {
        self.ready()?;
        Ok((0..self.len())
            .map(|i| self.eval_file_of(i))
            .filter(|f| f.exists)
            .collect())
    }

    /// Route `context` exactly as [`Index::route`] does (the same hits, order and scores, and
    /// the same decision), and give the rank of the skill `skill_path` among the hits scored.
    pub fn route_ranked(
        &self,
        context: &str,
        skill_path: &str,
    ) -> Result<(RouteOutcome, Option<u32>), Error> {
        let i = self.find(skill_path)?;
        self.route_rank_of(context, i)
    }

    /// [`Index::route_ranked`] of skill number `i`: only the hits the outcome holds are made
    /// (their names and descriptions copied), not all the candidates scored.
    fn route_rank_of(&self, context: &str, i: usize) -> Result<(RouteOutcome, Option<u32>), Error> {
        let scored = self.route_scored(context, false)?;
        let rank = scored
            .iter()
            .position(|s| s.doc == i)
            .map(|p| u32::try_from(p + 1).unwrap_or(u32::MAX));
        let scores: Vec<f64> = scored.iter().map(|s| s.score).collect();
        let mut scored: Vec<Option<rank::Scored>> = scored.into_iter().map(Some).collect();
        let outcome = route::decide_with(&self.config, &scores, |k| {
            self.hit(scored[k].take().expect("a hit"))
        });
        Ok((outcome, rank))
    }

    /// Run `queries` for the skill `skill_path`: each routed as [`Index::route`] routes a
    /// context (one search a query), with the split and the pass rule of [`crate::evals`].
    pub fn evaluate(
        &self,
        skill_path: &str,
        queries: &[EvalQuery],
        accept_ambiguous: bool,
    ) -> Result<SkillEval, Error> {
        let i = self.find(skill_path)?;
        let skill_path = &self.docs[i].skill_path;
        run(skill_path, queries, accept_ambiguous, |q| {
            self.route_rank_of(q, i)
        })
    }

    /// Editors: [`Index::evaluate`] for the draft skill file `path` holding `bytes` (as for
    /// [`Index::score_draft`]), as if it had been added to this collection (replacing the skill
    /// of its skill path, if any): every query routed as a rebuilt index would route it, the
    /// skill evaluated being the draft. The `ranked` algorithm only.
    pub fn evaluate_draft(
        &self,
        path: &str,
        bytes: &[u8],
        queries: &[EvalQuery],
        accept_ambiguous: bool,
    ) -> Result<SkillEval, Error> {
        let (doc, search) = self.draft_doc(path, bytes)?;
        let draft = Draft::new(&doc, search);
        let with: WithDraft<'_> = search.with_draft(&draft, self.position(&doc.skill_path));
        let limit = ROUTE_CANDIDATES.max(self.config.max_results as usize);
        run(&doc.skill_path, queries, accept_ambiguous, |q| {
            check_query(q)?;
            let hits: Vec<SearchHit> = with
                .search(q, limit)
                .into_iter()
                .map(|(d, score)| {
                    // (the draft's version does not matter to its rank)
                    let (d, version) = if d == with.draft_number() {
                        (&doc, None)
                    } else {
                        (&self.docs[d], self.metas[d].version.clone())
                    };
                    SearchHit {
                        skill_path: d.skill_path.clone(),
                        name: d.name.clone(),
                        description: d.description.clone(),
                        score,
                        matched: Vec::new(),
                        version,
                    }
                })
                .collect();
            Ok(ranked_outcome(&self.config, hits, &doc.skill_path))
        })
    }
}

/// Routing's decision on `hits` (best first), and the rank of `skill_path` among them.
pub(super) fn ranked_outcome(
    config: &EngineConfig,
    hits: Vec<SearchHit>,
    skill_path: &str,
) -> (RouteOutcome, Option<u32>) {
    let rank = hits
        .iter()
        .position(|h| h.skill_path == skill_path)
        .map(|p| u32::try_from(p + 1).unwrap_or(u32::MAX));
    (route::decide(config, hits), rank)
}

/// Run `queries` for `skill_path`, `route` giving each query's routing outcome and the skill's
/// rank: the outcome from the skill's side, the split and the pass rule.
fn run(
    skill_path: &str,
    queries: &[EvalQuery],
    accept_ambiguous: bool,
    mut route: impl FnMut(&str) -> Result<(RouteOutcome, Option<u32>), Error>,
) -> Result<SkillEval, Error> {
    let mut eval = SkillEval {
        skill_path: skill_path.to_owned(),
        results: Vec::with_capacity(queries.len()),
        all: Tally::default(),
        train: Tally::default(),
        validation: Tally::default(),
    };
    for (q, side) in queries.iter().zip(split(queries)) {
        let (outcome, rank) = route(&q.query)?;
        let outcome = match outcome {
            RouteOutcome::NoMatch => EvalOutcome::NoMatch,
            RouteOutcome::Matched(h) if h.skill_path == skill_path => EvalOutcome::Matched,
            RouteOutcome::Matched(h) => EvalOutcome::Other(h.skill_path),
            RouteOutcome::Ambiguous(hits) => {
                EvalOutcome::Ambiguous(hits.into_iter().map(|h| h.skill_path).collect())
            }
        };
        let triggers = match &outcome {
            EvalOutcome::Matched => true,
            EvalOutcome::Ambiguous(c) => accept_ambiguous && c.iter().any(|p| p == skill_path),
            EvalOutcome::Other(_) | EvalOutcome::NoMatch => false,
        };
        let passed = triggers == q.should_trigger;
        eval.all.add(passed);
        match side {
            EvalSplit::Train => eval.train.add(passed),
            EvalSplit::Validation => eval.validation.add(passed),
        }
        eval.results.push(EvalResult {
            query: q.query.clone(),
            should_trigger: q.should_trigger,
            split: side,
            outcome,
            rank,
            passed,
        });
    }
    Ok(eval)
}

#[cfg(test)]
mod tests {
    use super::super::tests::Mem;
    use super::*;
    use crate::evals::parse_eval_queries;

    const EVALS: &str = r#"[
      {"query": "fill in the fields of this pdf form", "should_trigger": true},
      {"query": "merge two pdf files into one", "should_trigger": true},
      {"query": "convert this spreadsheet to csv", "should_trigger": false}
    ]"#;

    /// Agent Skills, a hierarchical skill, a category node, a root-level skill folder's
    /// neighbour, and a nested Agent Skill inside `pdf/` whose eval file is its own.
    fn collection(with_evals: bool) -> Mem {
        let mut files: Vec<(&str, &str)> = vec![
            (
                "pdf/SKILL.md",
                "---\nname: pdf\ndescription: Fill PDF forms, merge and split PDF files\n---\nUse pypdf.\n",
            ),
            (
                "pdf/extra/SKILL.md",
                "---\nname: extra\ndescription: Extract tables from PDF documents\n---\nTables.\n",
            ),
            (
                "xlsx/SKILL.md",
                "---\nname: xlsx\ndescription: Spreadsheets - formulas, charts, convert to csv\n---\nUse openpyxl.\n",
            ),
            (
                "ui/_index.md",
                "---\ndescription: User interface rules\n---\nUI.\n",
            ),
            (
                "ui/forms.md",
                "---\ndescription: Web forms with validation\nkeywords: [forms, validation]\n---\nForms.\n",
            ),
        ];
        if with_evals {
            files.extend([
                ("pdf/evals/eval_queries.json", EVALS),
                ("pdf/extra/evals/eval_queries.json", "[]"),
                ("ui/_index/evals/eval_queries.json", "[]"),
                ("ui/forms/evals/eval_queries.json", "[]"),
            ]);
        }
        Mem::default().root("skills", &files)
    }

    #[test]
    fn the_eval_file_is_in_the_resource_folder_whatever_the_shape() {
        let idx = collection(true).index();
        let at = |p: &str| {
            let f = idx.eval_file(p).unwrap();
            (f.path, f.exists)
        };
        assert_eq!(at("pdf"), ("pdf/evals/eval_queries.json".into(), true));
        assert_eq!(
            at("pdf/extra"),
            ("pdf/extra/evals/eval_queries.json".into(), true)
        );
        assert_eq!(
            at("ui/_index"),
            ("ui/_index/evals/eval_queries.json".into(), true)
        );
        assert_eq!(
            at("ui/forms"),
            ("ui/forms/evals/eval_queries.json".into(), true)
        );
        let all: Vec<String> = idx
            .eval_files()
            .unwrap()
            .into_iter()
            .map(|f| f.skill_path)
            .collect();
        assert_eq!(all, vec!["pdf", "pdf/extra", "ui/_index", "ui/forms"]);
        // Without the files: the same places, for an editor to create them.
        let idx = collection(false).index();
        assert_eq!(
            at_of(&idx, "ui/forms"),
            ("ui/forms/evals/eval_queries.json".into(), false)
        );
        assert_eq!(
            at_of(&idx, "xlsx"),
            ("xlsx/evals/eval_queries.json".into(), false)
        );
        assert!(idx.eval_files().unwrap().is_empty());
        assert!(matches!(idx.eval_file("nope"), Err(Error::NotFound(_))));
        // A root that is one skill folder: the root's own `evals/`.
        let idx = Mem::default()
            .root(
                "team/solo",
                &[
                    (
                        "SKILL.md",
                        "---\ndescription: One skill alone\n---\nAlone.\n",
                    ),
                    ("evals/eval_queries.json", EVALS),
                ],
            )
            .index();
        assert_eq!(
            at_of(&idx, "solo"),
            ("evals/eval_queries.json".into(), true)
        );
    }

    fn at_of(idx: &Index, p: &str) -> (String, bool) {
        let f = idx.eval_file(p).unwrap();
        (f.path, f.exists)
    }

    #[test]
    fn an_eval_file_is_a_file_of_the_skill_and_changes_no_ranking() {
        let (with, without) = (collection(true).index(), collection(false).index());
        let manifest: Vec<String> = with
            .manifest("pdf")
            .unwrap()
            .into_iter()
            .map(|f| f.relative)
            .collect();
        assert_eq!(manifest, vec!["SKILL.md", "evals/eval_queries.json"]);
        for request in [
            "fill in the fields of this pdf form",
            "merge two pdf files into one",
            "convert this spreadsheet to csv",
            "web forms validation",
            "user interface",
            "extract tables",
            "eval queries should trigger",
        ] {
            assert_eq!(
                with.search(request, 10).unwrap(),
                without.search(request, 10).unwrap(),
                "{request}"
            );
            assert_eq!(with.route(request), without.route(request), "{request}");
        }
    }

    #[test]
    fn each_query_is_routed_as_route_routes_it_with_the_rank() {
        let idx = collection(true).index();
        let queries = parse_eval_queries(EVALS.as_bytes()).unwrap();
        let eval = idx.evaluate("pdf", &queries, false).unwrap();
        assert_eq!(eval.skill_path, "pdf");
        for r in &eval.results {
            let routed = idx.route(&r.query).unwrap();
            let hits = idx.search(&r.query, 50).unwrap();
            let rank = hits
                .iter()
                .position(|h| h.skill_path == "pdf")
                .map(|p| p as u32 + 1);
            assert_eq!(r.rank, rank, "{}", r.query);
            let expected = match routed {
                RouteOutcome::NoMatch => EvalOutcome::NoMatch,
                RouteOutcome::Matched(h) if h.skill_path == "pdf" => EvalOutcome::Matched,
                RouteOutcome::Matched(h) => EvalOutcome::Other(h.skill_path),
                RouteOutcome::Ambiguous(c) => {
                    EvalOutcome::Ambiguous(c.into_iter().map(|h| h.skill_path).collect())
                }
            };
            assert_eq!(r.outcome, expected, "{}", r.query);
        }
        assert_eq!(eval.results[0].outcome, EvalOutcome::Matched);
        assert_eq!(eval.results[0].rank, Some(1));
        assert_eq!(eval.results[2].outcome, EvalOutcome::Other("xlsx".into()));
        assert_eq!(eval.results[2].rank, None);
        assert!(eval.results.iter().all(|r| r.passed));
        assert_eq!((eval.all.passed, eval.all.total), (3, 3));
        assert_eq!(eval.train.total + eval.validation.total, 3);
        assert!(matches!(
            idx.evaluate("nope", &queries, false),
            Err(Error::NotFound(_))
        ));
    }

    #[test]
    fn the_pass_rule_with_and_without_accept_ambiguous() {
        // Two skills that share every word: every request for them is ambiguous.
        let idx = Mem::default()
            .root(
                "skills",
                &[
                    (
                        "alpha/SKILL.md",
                        "---\ndescription: Rotate log files nightly\n---\nLogs.\n",
                    ),
                    (
                        "beta/SKILL.md",
                        "---\ndescription: Rotate log files nightly\n---\nLogs.\n",
                    ),
                ],
            )
            .index();
        let queries = vec![
            EvalQuery {
                query: "rotate log files".into(),
                should_trigger: true,
            },
            EvalQuery {
                query: "rotate the nightly log files please".into(),
                should_trigger: false,
            },
            EvalQuery {
                query: "bake sourdough bread".into(),
                should_trigger: false,
            },
        ];
        let strict = idx.evaluate("alpha", &queries, false).unwrap();
        assert!(matches!(strict.results[0].outcome, EvalOutcome::Ambiguous(ref c) if c.len() == 2));
        assert_eq!(
            strict.results.iter().map(|r| r.passed).collect::<Vec<_>>(),
            vec![false, true, true]
        );
        assert_eq!(strict.results[2].outcome, EvalOutcome::NoMatch);
        let lenient = idx.evaluate("alpha", &queries, true).unwrap();
        assert_eq!(
            lenient.results.iter().map(|r| r.passed).collect::<Vec<_>>(),
            vec![true, false, true]
        );
        assert_eq!((lenient.all.passed, lenient.all.total), (2, 3));
    }

    #[test]
    fn a_draft_is_evaluated_as_the_rebuilt_index_would_route_it() {
        let mem = collection(true);
        let idx = mem.index();
        let queries = parse_eval_queries(EVALS.as_bytes()).unwrap();
        let pdf = "---\nname: pdf\ndescription: Fill PDF forms, merge and split PDF files\n---\nUse pypdf.\n";
        // The file as it is: the same answer as the index's.
        assert_eq!(
            idx.evaluate_draft("pdf/SKILL.md", pdf.as_bytes(), &queries, false)
                .unwrap(),
            idx.evaluate("pdf", &queries, false).unwrap()
        );
        // A description about spreadsheets: the pdf queries flip, and the spreadsheet one now
        // routes to the draft, as a rebuilt index routes it.
        let draft = "---\nname: pdf\ndescription: Spreadsheets to csv, convert this spreadsheet\n---\nUse pandas.\n";
        let e = idx
            .evaluate_draft("pdf/SKILL.md", draft.as_bytes(), &queries, false)
            .unwrap();
        let rebuilt = {
            let mut files: Vec<(String, String)> = vec![
                ("pdf/SKILL.md".into(), draft.into()),
                (
                    "xlsx/SKILL.md".into(),
                    "---\nname: xlsx\ndescription: Spreadsheets - formulas, charts, convert to csv\n---\nUse openpyxl.\n".into(),
                ),
                (
                    "pdf/extra/SKILL.md".into(),
                    "---\nname: extra\ndescription: Extract tables from PDF documents\n---\nTables.\n".into(),
                ),
                (
                    "ui/_index.md".into(),
                    "---\ndescription: User interface rules\n---\nUI.\n".into(),
                ),
                (
                    "ui/forms.md".into(),
                    "---\ndescription: Web forms with validation\nkeywords: [forms, validation]\n---\nForms.\n".into(),
                ),
            ];
            files.sort();
            let refs: Vec<(&str, &str)> = files
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            Mem::default().root("skills", &refs).index()
        };
        assert_eq!(e, rebuilt.evaluate("pdf", &queries, false).unwrap());
        assert!(!e.results[0].passed && !e.results[1].passed, "{e:#?}");
        // Not a skill, or the keywords algorithm: refused.
        assert!(matches!(
            idx.evaluate_draft("pdf/SKILL.md", b"no frontmatter", &queries, false),
            Err(Error::InvalidArgument(_))
        ));
    }
}
