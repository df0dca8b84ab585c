//! The tools: one `#[tool]` method each, plus the texts that tell a model when
//! to call them.
//!
//! Arguments are `Parameters<T>` with `#[serde(deny_unknown_fields)]`; a malformed call becomes a
//! tool error naming the argument (see `SkillsServer::call_tool`). Errors the model can act on
//! are `Err(String)` (a result with `isError: true`).

use base64::Engine as _;
use rmcp::{
    Json,
    handler::server::wrapper::Parameters,
    model::{CallToolResult, ContentBlock},
    tool, tool_router,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{SkillsServer, View, engine_kind, extension, message};
pub use crate::catalog::SkillNode;
use crate::runtime::{AssetInfo, EngineErrorKind, Execution, RouteOutcome, SearchHit};

/// The server instructions (the catalogue is appended).
pub const INSTRUCTIONS: &str = "\
This server holds skills: instructions written for specific kinds of tasks (with templates, \
references and scripts). Use them instead of guessing.
- Before starting a task, call get_skill with `context` = one or two sentences about the task \
(goal, technologies, constraints). On a match, follow the returned `content`. On `ambiguous`, \
pick a candidate and call get_skill again with its `skill_path`. On `no_match`, go on without one.
- To browse, or when the catalogue below lists only categories, call search_skills with a few \
keywords, then get_skill with the chosen `skill_path`. list_skills shows the skill tree.
- A skill lists `assets` and `scripts`; fetch one with get_asset {skill_path, file}. Run scripts \
yourself (execution: claude) unless a skill says execution: server.
- Skills reload by themselves when their files change; refresh_skills forces a reindex.
- After using a skill, report_usage {skill_path, useful, comment} tells its authors whether it \
helped.
";

const GET_SKILL: &str = "\
Load the skill for a task: expert instructions to follow, with inherited rules and the files it \
provides. Call it before any non-trivial task a skill may cover.
Give either `context` (a sentence or two about the task: goal, technologies; the server picks \
the best skill) or `skill_path` (a skill path or name from the list below or from search_skills, \
loaded directly).
Answers: {\"no_match\": true} (carry on without a skill); {\"ambiguous\": true, \"candidates\": \
[...]} (call again with a candidate's skill_path); or the skill: `content` (follow it), `assets` \
and `scripts` (fetch with get_asset), `inherited_assets`, `inherited_scripts` (with `from`).";

const SEARCH_SKILLS: &str = "\
Search the skills by meaning of a few keywords; returns the best matches, best first, with \
skill_path, name, description, score (0-1 for the default ranking) and the skill:// uri. Use it \
when get_skill is ambiguous, finds nothing, or to browse a large catalogue; then load one with \
get_skill {skill_path}. `limit`: 1-50, default 10.";

const LIST_SKILLS: &str = "\
The skill tree (folders and skills), optionally below `path` (e.g. \"ui\" or \"ui/react\"). Each \
node: name, path, description, keywords, assetCount, scriptCount, children. Use it to browse; \
load a skill with get_skill {skill_path}.";

const GET_ASSET: &str = "\
Read one file a skill provides (an asset, a template, a reference or a script) by `skill_path` \
and `file` (as listed by get_skill, relative to the skill's folder; inherited files are found in \
the parent skills). Text comes back in `content`, binary files in `content_base64` with \
`mime_type`; `resolved_from` names the skill the file was inherited from.";

const REFRESH_SKILLS: &str = "\
Reindex the skills from their folders now and report how many there are. Changes on disk are \
normally picked up by themselves within a second; call this after editing skills if one seems \
missing or stale. Skills from git repositories are fetched first (answer with commit_hash, \
files_changed, last_sync).";

const REPORT_USAGE: &str = "\
Tell the skill's authors whether a skill helped: `skill_path` (as get_skill returned it), \
`useful` (true or false) and an optional `comment` (what was missing, wrong or good). Call it \
once after finishing a task that used a skill.";

const RUN_SCRIPT: &str = "\
Run a script that a skill declares with `execution: server`, on the server, and return \
{success, exit_code, stdout, stderr, duration_ms, script}. `skill_path` and `file` as get_skill \
lists them (inherited scripts too); `args`: an object of the declared argument names (required \
ones must be there), given to the script as SKILL_ARG_<NAME> environment variables; `cwd`: an \
existing directory on the server's machine (default: the skill's folder); paths in args are \
read there. No shell, no stdin, a clean environment; output is capped and the script is killed \
at the timeout (exit_code 137). Scripts declared `execution: claude` are refused: fetch them \
with get_asset and run them yourself.";

/// Most results `search_skills` returns.
pub const MAX_SEARCH_LIMIT: u32 = 50;
/// Results `search_skills` returns by default.
pub const DEFAULT_SEARCH_LIMIT: u32 = 10;
/// Suggestions offered for an unknown skill.
const SUGGESTIONS: u32 = 5;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetSkillParams {
    /// One or two sentences about the task (goal, technologies, constraints): the server routes
    /// it to the best skill.
    #[serde(default)]
    pub context: Option<String>,
    /// A skill path (e.g. `ui/react/auth`) or a skill name, to load that skill directly.
    #[serde(default)]
    pub skill_path: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchSkillsParams {
    /// A few words about what is needed.
    pub query: String,
    /// How many results, 1-50 (default 10).
    #[serde(default)]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSkillsParams {
    /// Only the subtree below this path (a folder or a skill path), e.g. `ui`.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetAssetParams {
    /// The skill the file belongs to (or inherits it).
    pub skill_path: String,
    /// The file, relative to the skill's folder, as get_skill lists it.
    pub file: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefreshSkillsParams {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportUsageParams {
    /// The skill the feedback is about (its skill path, as get_skill returned it).
    pub skill_path: String,
    /// Whether the skill helped with the task.
    pub useful: bool,
    /// What was missing, wrong or good.
    #[serde(default)]
    pub comment: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunScriptParams {
    /// The skill the script belongs to (or inherits it).
    pub skill_path: String,
    /// The script, relative to the skill's folder, as get_skill lists it (e.g. `scripts/check.sh`).
    pub file: String,
    /// Named arguments (the script's declared `args`), each passed as SKILL_ARG_<NAME>.
    #[serde(default)]
    pub args: std::collections::BTreeMap<String, ScriptArgValue>,
    /// Working directory on the server's machine (an existing directory); default: the
    /// skill's folder.
    #[serde(default)]
    pub cwd: Option<String>,
}

/// An argument value: a string (numbers and booleans are taken as their text).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ScriptArgValue {
    Text(String),
    Number(serde_json::Number),
    Bool(bool),
}

impl ScriptArgValue {
    fn into_text(self) -> String {
        match self {
            Self::Text(s) => s,
            Self::Number(n) => n.to_string(),
            Self::Bool(b) => b.to_string(),
        }
    }
}

/// One asset or script of a skill.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AssetView {
    pub file: String,
    pub description: String,
    #[serde(rename = "type")]
    pub asset_type: String,
    /// `claude` (fetch and run it yourself) or `server` (run_script); scripts only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<String>,
    /// Declared arguments; scripts only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<ScriptArgView>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// The skill it is inherited from (inherited files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ScriptArgView {
    pub name: String,
    pub description: String,
    pub required: bool,
}

impl From<&AssetInfo> for AssetView {
    fn from(a: &AssetInfo) -> Self {
        Self {
            file: a.file.clone(),
            description: a.description.clone(),
            asset_type: a.asset_type.clone(),
            execution: a.script.as_ref().map(|s| {
                match s.execution {
                    Execution::Claude => "claude",
                    Execution::Server => "server",
                }
                .to_string()
            }),
            args: a.script.as_ref().map(|s| {
                s.args
                    .iter()
                    .map(|x| ScriptArgView {
                        name: x.name.clone(),
                        description: x.description.clone(),
                        required: x.required,
                    })
                    .collect()
            }),
            size_bytes: a.size,
            from: a.from.clone(),
        }
    }
}

/// A ranked candidate.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Candidate {
    pub skill_path: String,
    pub name: String,
    pub score: f64,
    pub description: String,
    pub matched_keywords: Vec<String>,
}

impl From<&SearchHit> for Candidate {
    fn from(h: &SearchHit) -> Self {
        Self {
            skill_path: h.skill_path.clone(),
            name: h.name.clone(),
            score: round(h.score),
            description: h.description.clone(),
            matched_keywords: h.matched.clone(),
        }
    }
}

/// A loaded skill (single match).
#[derive(Debug, Serialize, JsonSchema)]
pub struct SkillMatch {
    pub skill_path: String,
    pub name: String,
    /// Present when the skill was routed from a context.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_keywords: Option<Vec<String>>,
    pub content: String,
    pub assets: Vec<AssetView>,
    pub scripts: Vec<AssetView>,
    pub inherited_assets: Vec<AssetView>,
    pub inherited_scripts: Vec<AssetView>,
    /// The skill's SKILL.md in the Skills extension (absent when the extension leaves it out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Its `metadata.version`, for the usage event (not part of the answer).
    #[serde(skip)]
    pub version: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchResult {
    pub skill_path: String,
    pub name: String,
    pub description: String,
    pub score: f64,
    /// The skill's SKILL.md in the Skills extension (absent when the extension leaves it out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The skill's `metadata.version`, as written (absent when it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchResults {
    pub query: String,
    pub results: Vec<SearchResult>,
}

/// `search_skills`' answer: exactly what `Json<SearchResults>` gives (the results as structured
/// content, and the same JSON, compact, with its keys in order, as text). The text is written
/// straight from the results (not from a `serde_json::Value`, a tree of maps walked a second
/// time) by [`skills_engine::output::push_search_answer`] (the writer of `search --batch`
/// too), into a buffer of about the right size; the structured content is built from the
/// results' own strings (moved, not copied through `serde_json::to_value`).
pub struct SearchAnswer(pub SearchResults);

impl SearchAnswer {
    /// The text of the answer: as `serde_json::to_value(&results)?.to_string()` writes it (a
    /// `Value`'s object keys are sorted, so the fields are written in that order here).
    fn text(&self) -> String {
        let r = &self.0;
        // The strings, some escapes and each result's keys and score.
        let size = r.query.len()
            + 32
            + r.results
                .iter()
                .map(|h| {
                    h.description.len()
                        + h.name.len()
                        + h.skill_path.len()
                        + h.uri.as_ref().map_or(0, String::len)
                        + h.version.as_ref().map_or(0, |v| v.len() + 12)
                        + 96
                })
                .sum::<usize>();
        let mut out = Vec::with_capacity(size + size / 8);
        skills_engine::output::push_search_answer(
            &mut out,
            None,
            &r.query,
            r.results.iter().map(|h| skills_engine::output::HitFields {
                description: &h.description,
                name: &h.name,
                score: h.score,
                skill_path: &h.skill_path,
                uri: h.uri.as_deref(),
                version: h.version.as_deref(),
            }),
        );
        // Only whole UTF-8 strings and ASCII were written.
        String::from_utf8(out).expect("JSON text is UTF-8")
    }

    /// The structured content: what `serde_json::to_value(results)` gives, the strings moved.
    fn value(self) -> serde_json::Value {
        use serde_json::{Map, Value};
        let SearchResults { query, results } = self.0;
        let results = results
            .into_iter()
            .map(|h| {
                let mut m = Map::new();
                m.insert("skill_path".into(), Value::String(h.skill_path));
                m.insert("name".into(), Value::String(h.name));
                m.insert("description".into(), Value::String(h.description));
                m.insert("score".into(), Value::from(h.score));
                if let Some(uri) = h.uri {
                    m.insert("uri".into(), Value::String(uri));
                }
                if let Some(version) = h.version {
                    m.insert("version".into(), Value::String(version));
                }
                Value::Object(m)
            })
            .collect();
        let mut m = Map::new();
        m.insert("query".into(), Value::String(query));
        m.insert("results".into(), Value::Array(results));
        Value::Object(m)
    }
}

impl rmcp::handler::server::tool::IntoCallToolResult for SearchAnswer {
    fn into_call_tool_result(self) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let text = self.text();
        let value = self.value();
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(value);
        Ok(result.into())
    }
}

/// The content of an asset.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AssetContent {
    pub skill_path: String,
    pub file: String,
    /// Text content (text files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Base64 content (binary files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_base64: Option<String>,
    pub size_bytes: u64,
    #[serde(rename = "type")]
    pub asset_type: String,
    /// Binary files only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The skill the file was inherited from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_from: Option<String>,
}

/// The answer of `refresh_skills` (local and git mode).
#[derive(Debug, Serialize, JsonSchema)]
pub struct RefreshResult {
    pub success: bool,
    /// `local`, or `git` when git sources are configured.
    pub mode: String,
    /// Git mode: the commit served (of the first git source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_hash: Option<String>,
    /// Git mode: files changed by this refresh.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_changed: Option<u64>,
    pub skills_reindexed: u64,
    /// Git mode: the last successful sync (ISO 8601, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_sync: Option<String>,
    pub message: String,
    /// Git mode with several git sources: each one's state.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<crate::sources::SourceStatus>,
}

fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// A JSON answer: structured content and the same JSON as text.
fn json_result(value: serde_json::Value) -> CallToolResult {
    let mut result = CallToolResult::structured(value.clone());
    result.content = vec![ContentBlock::text(
        serde_json::to_string_pretty(&value).unwrap_or_default(),
    )];
    result
}

/// An engine error as a message for the model; "did you mean" for unknown skills.
pub(crate) fn describe(view: &View, error: &anyhow::Error, what: &str) -> String {
    let text = message(error);
    match engine_kind(error) {
        Some(EngineErrorKind::NotFound(m)) => {
            let suggestions = view.catalog.suggest(what, SUGGESTIONS).unwrap_or_default();
            if suggestions.is_empty() || m.to_lowercase().contains("did you mean") {
                text
            } else {
                format!("{text}. Did you mean: {}?", suggestions.join(", "))
            }
        }
        _ => text,
    }
}

/// The non-empty, trimmed value of an optional string argument.
fn given(arg: &Option<String>) -> Option<&str> {
    arg.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

fn load(view: &View, path_or_name: &str, hit: Option<&SearchHit>) -> Result<SkillMatch, String> {
    let info = view
        .catalog
        .get(path_or_name)
        .map_err(|e| format!("skill_path: {}", describe(view, &e, path_or_name)))?;
    let resolved = view
        .catalog
        .resolve(&info.skill_path)
        .map_err(|e| format!("loading {}: {}", info.skill_path, message(&e)))?;
    let views = |list: &[AssetInfo]| list.iter().map(AssetView::from).collect::<Vec<_>>();
    Ok(SkillMatch {
        skill_path: info.skill_path.clone(),
        name: info.name.clone(),
        score: hit.map(|h| round(h.score)),
        matched_keywords: hit.map(|h| h.matched.clone()),
        content: resolved.content,
        assets: views(&resolved.assets),
        scripts: views(&resolved.scripts),
        inherited_assets: views(&resolved.inherited_assets),
        inherited_scripts: views(&resolved.inherited_scripts),
        uri: extension::uri_of(view, &info.skill_path),
        version: info.version.clone(),
    })
}

#[tool_router(router = tool_router, vis = "pub(crate)")]
impl SkillsServer {
    #[tool(
        name = "get_skill",
        description = GET_SKILL,
        annotations(title = "Get the skill for a task", read_only_hint = true, open_world_hint = false)
    )]
    async fn get_skill(
        &self,
        Parameters(p): Parameters<GetSkillParams>,
    ) -> Result<CallToolResult, String> {
        let context = given(&p.context).map(str::to_string);
        let path = given(&p.skill_path).map(str::to_string);
        if context.is_none() && path.is_none() {
            return Err(
                "give `context` (a sentence about the task) or `skill_path` (a skill path or name); both are missing or empty"
                    .into(),
            );
        }
        self.blocking(move |server, view| {
            let analytics = &server.services().analytics;
            if let Some(path) = path {
                let skill = load(view, &path, None)?;
                // Asked for by path: a full score, the context if one was given too.
                let context = context.as_deref().unwrap_or_default();
                analytics.skill_served(
                    context,
                    &skill.skill_path,
                    skill.version.as_deref(),
                    1.0,
                    &[] as &[&str],
                    false,
                );
                return Ok(json_result(serde_json::to_value(skill).unwrap_or_default()));
            }
            let context = context.unwrap_or_default();
            let outcome = view
                .catalog
                .route(&context)
                .map_err(|e| format!("context: {}", message(&e)))?;
            let value = match outcome {
                RouteOutcome::NoMatch => {
                    analytics.no_match(&context);
                    serde_json::json!({
                        "no_match": true,
                        "message": "No skill matches the given context.",
                    })
                }
                RouteOutcome::Ambiguous(hits) => {
                    analytics.track_with(|| crate::analytics::EventData::Ambiguous {
                        context: context.clone(),
                        candidates: hits.iter().map(|h| h.skill_path.clone()).collect(),
                    });
                    serde_json::json!({
                        "ambiguous": true,
                        "candidates": hits.iter().map(Candidate::from).collect::<Vec<_>>(),
                        "message": "Multiple skills match. Specify your need or pick a skill_path.",
                    })
                }
                RouteOutcome::Matched(hit) => {
                    let skill = load(view, &hit.skill_path, Some(&hit))?;
                    analytics.skill_served(
                        &context,
                        &hit.skill_path,
                        hit.version.as_deref(),
                        hit.score,
                        &hit.matched,
                        false,
                    );
                    serde_json::to_value(skill).unwrap_or_default()
                }
            };
            Ok(json_result(value))
        })
        .await
    }

    #[tool(
        name = "search_skills",
        description = SEARCH_SKILLS,
        annotations(title = "Search skills", read_only_hint = true, open_world_hint = false),
        // What `Json<SearchResults>` would declare.
        output_schema = rmcp::handler::server::tool::schema_for_output::<SearchResults>()
    )]
    async fn search_skills(
        &self,
        Parameters(p): Parameters<SearchSkillsParams>,
    ) -> Result<SearchAnswer, String> {
        let query = p.query.trim().to_string();
        if query.is_empty() {
            return Err("query: must not be empty; give a few words about what is needed".into());
        }
        let limit = p.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
        if !(1..=MAX_SEARCH_LIMIT).contains(&limit) {
            return Err(format!(
                "limit: {limit} is out of range; allowed: 1 to {MAX_SEARCH_LIMIT} (default {DEFAULT_SEARCH_LIMIT})"
            ));
        }
        self.searching(move |_, view| {
            let hits = view
                .catalog
                .search_brief(&query, limit)
                .map_err(|e| format!("query: {}", message(&e)))?;
            let results = hits
                .into_iter()
                .map(|h| SearchResult {
                    uri: extension::uri_of(view, &h.skill_path),
                    skill_path: h.skill_path,
                    name: h.name,
                    description: h.description,
                    score: round(h.score),
                    version: h.version,
                })
                .collect();
            Ok(SearchAnswer(SearchResults { query, results }))
        })
        .await
    }

    #[tool(
        name = "list_skills",
        description = LIST_SKILLS,
        annotations(title = "List skills", read_only_hint = true, open_world_hint = false)
    )]
    async fn list_skills(
        &self,
        Parameters(p): Parameters<ListSkillsParams>,
    ) -> Result<Json<SkillNode>, String> {
        let path = given(&p.path).map(|s| s.trim_matches('/').to_string());
        self.blocking(move |_, view| {
            let nodes = view.catalog.tree(path.as_deref()).map_err(|e| {
                format!(
                    "path: {}",
                    describe(view, &e, path.as_deref().unwrap_or(""))
                )
            })?;
            if nodes.is_empty() {
                return Ok(Json(SkillNode::folder(path.unwrap_or_default())));
            }
            Ok(Json(SkillNode::from_tree(&nodes, 0)))
        })
        .await
    }

    #[tool(
        name = "get_asset",
        description = GET_ASSET,
        annotations(title = "Read a skill's file", read_only_hint = true, open_world_hint = false)
    )]
    async fn get_asset(
        &self,
        Parameters(p): Parameters<GetAssetParams>,
    ) -> Result<Json<AssetContent>, String> {
        let skill_path = p.skill_path.trim().to_string();
        if skill_path.is_empty() {
            return Err("skill_path: must not be empty".into());
        }
        if p.file.is_empty() {
            return Err("file: must not be empty; give the file as get_skill lists it".into());
        }
        let file = p.file;
        let max = self.config().assets.max_size_bytes;
        self.blocking(move |server, view| {
            let info = view
                .catalog
                .get(&skill_path)
                .map_err(|e| format!("skill_path: {}", describe(view, &e, &skill_path)))?;
            let location = view
                .catalog
                .locate_asset(&info.skill_path, &file)
                .map_err(|e| match engine_kind(&e) {
                    Some(EngineErrorKind::InvalidPath(m)) => {
                        format!("file: rejected ({m}); give a path inside the skill's folder")
                    }
                    _ => format!("file: {}", message(&e)),
                })?;
            if let Some(size) = location.asset.size
                && size > max
            {
                return Err(format!(
                    "file: {} is {size} bytes, over the limit of {max} bytes (assets.max_size_bytes)",
                    location.asset.file
                ));
            }
            let bytes = view
                .catalog
                .read_file(location.root, &location.path, max)
                .map_err(|e| match engine_kind(&e) {
                    Some(EngineErrorKind::TooLarge(s)) => format!(
                        "file: {} is {} bytes, over the limit of {} bytes (assets.max_size_bytes)",
                        location.asset.file, s.size, s.limit
                    ),
                    _ => format!(
                        "file: {} is declared but cannot be read: {}",
                        location.asset.file,
                        message(&e)
                    ),
                })?;
            let size_bytes = bytes.len() as u64;
            let text = if location.asset.is_binary {
                None
            } else {
                String::from_utf8(bytes.clone()).ok()
            };
            server.services().analytics.asset_served(
                &info.skill_path,
                &location.asset.file,
                &location.asset.asset_type,
                location.asset.from.is_some(),
                size_bytes,
            );
            let (content, content_base64, mime_type) = match text {
                Some(t) => (Some(t), None, None),
                None => (
                    None,
                    Some(base64::engine::general_purpose::STANDARD.encode(&bytes)),
                    Some(location.asset.mime_type.clone()),
                ),
            };
            Ok(Json(AssetContent {
                skill_path: info.skill_path.clone(),
                file: location.asset.file.clone(),
                content,
                content_base64,
                size_bytes,
                asset_type: location.asset.asset_type.clone(),
                mime_type,
                resolved_from: location.asset.from.clone(),
            }))
        })
        .await
    }

    #[tool(
        name = "refresh_skills",
        description = REFRESH_SKILLS,
        annotations(
            title = "Reindex skills",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn refresh_skills(
        &self,
        Parameters(_p): Parameters<RefreshSkillsParams>,
    ) -> Result<Json<RefreshResult>, String> {
        let analytics = &self.services().analytics;
        if let Some(git) = self.services().git.clone() {
            // Fetches every git source, then always reindexes (its callback rebuilds and notifies).
            let r = git.force_refresh().await;
            analytics.refresh(
                "git",
                r.success,
                r.commit_hash.as_deref(),
                r.files_changed,
                r.skills_reindexed,
            );
            let message = r
                .message
                .clone()
                .unwrap_or_else(|| "Synced the git sources and reindexed.".into());
            return Ok(Json(RefreshResult {
                success: r.success,
                mode: "git".into(),
                commit_hash: r.commit_hash,
                files_changed: r.files_changed,
                skills_reindexed: r.skills_reindexed.unwrap_or(0) as u64,
                last_sync: r.last_sync,
                message,
                sources: r.sources,
            }));
        }
        let count = self
            .reindex()
            .await
            .map_err(|e| format!("reindexing failed: {e:#}"))?;
        analytics.refresh("local", true, None, None, Some(count));
        Ok(Json(RefreshResult {
            success: true,
            mode: "local".into(),
            commit_hash: None,
            files_changed: None,
            skills_reindexed: count as u64,
            last_sync: None,
            message: "Reindexed from local directory (no git sync configured).".into(),
            sources: Vec::new(),
        }))
    }

    #[tool(
        name = "report_usage",
        description = REPORT_USAGE,
        annotations(
            title = "Report whether a skill helped",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn report_usage(
        &self,
        Parameters(p): Parameters<ReportUsageParams>,
    ) -> Result<Json<crate::analytics::UsageRecorded>, String> {
        let skill_path = p.skill_path.trim().to_string();
        if skill_path.is_empty() {
            return Err("skill_path: must not be empty; give the skill's path".into());
        }
        let comment = given(&p.comment).map(str::to_string);
        self.blocking(move |server, view| {
            let info = view
                .catalog
                .get(&skill_path)
                .map_err(|e| format!("skill_path: {}", describe(view, &e, &skill_path)))?;
            let analytics = &server.services().analytics;
            Ok(Json(analytics.report_usage(
                &info.skill_path,
                p.useful,
                comment.as_deref(),
            )))
        })
        .await
    }

    #[tool(
        name = "run_script",
        description = RUN_SCRIPT,
        annotations(
            title = "Run a skill's server script",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn run_script(
        &self,
        Parameters(p): Parameters<RunScriptParams>,
    ) -> Result<Json<crate::scripts::RunResponse>, String> {
        let Some(runner) = self.services().scripts.clone() else {
            return Err("run_script is not available on this server".into());
        };
        let request = crate::scripts::RunRequest {
            skill_path: p.skill_path.trim().to_string(),
            file: p.file,
            args: p
                .args
                .into_iter()
                .map(|(name, value)| (name, value.into_text()))
                .collect(),
            cwd: given(&p.cwd).map(std::path::PathBuf::from),
        };
        let outcome = runner
            .run_with_catalog(&self.caller_catalog(), request)
            .await
            .map_err(|e| e.to_string())?;
        let e = &outcome.event;
        self.services().analytics.script_executed(
            &e.skill_path,
            &e.file,
            &e.execution_mode,
            e.success,
            Some(e.exit_code),
            e.duration_ms,
            &e.args_provided,
        );
        Ok(Json(outcome.response))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::handler::server::tool::IntoCallToolResult as _;

    fn results(query: &str, n: usize) -> SearchResults {
        let texts = [
            "plain",
            "quotes \" and \\ backslashes",
            "control \u{1} \n \t characters",
            "unicode é 日本 🦀 \u{2028}",
            "",
            "every control: \u{0}\u{7}\u{8}\u{b}\u{c}\r\u{1f} del \u{7f} end",
            "a longer plain text to cross several eight-byte words\"at\\odd\tplaces\"",
            "\"\"\"\"\"\"\"\"\"\\",
        ];
        let scores = [
            0.6769,
            1.0,
            0.0,
            1e-7,
            123456.789,
            f64::NAN,
            f64::INFINITY,
            -0.5,
        ];
        SearchResults {
            query: query.into(),
            results: (0..n)
                .map(|i| SearchResult {
                    skill_path: format!("owner__repo/skills/{}-{i}", texts[i % texts.len()]),
                    name: texts[(i + 1) % texts.len()].into(),
                    description: texts[(i + 2) % texts.len()].repeat(i + 1),
                    score: round(scores[i % scores.len()]),
                    uri: (i % 3 != 1).then(|| format!("skill://x/{i}/SKILL.md")),
                    version: (i % 4 == 2).then(|| format!("1.{i}0")),
                })
                .collect(),
        }
    }

    #[test]
    fn the_search_answer_is_what_json_gives() {
        for (query, n) in [
            ("react login form", 10),
            ("", 0),
            ("q \"x\" é\n", 1),
            ("many", 50),
        ] {
            let complete = |r: rmcp::model::CallToolResponse| match r {
                rmcp::model::CallToolResponse::Complete(r) => r,
                _ => panic!("not a complete result"),
            };
            let fast = complete(
                SearchAnswer(results(query, n))
                    .into_call_tool_result()
                    .unwrap(),
            );
            let json = complete(Json(results(query, n)).into_call_tool_result().unwrap());
            assert_eq!(
                serde_json::to_string(&fast).unwrap(),
                serde_json::to_string(&json).unwrap(),
                "{query:?} {n}"
            );
        }
    }
}
