//! Prompts: every skill is a prompt (named by its skill path) returning its resolved content, so a
//! user can invoke a skill by hand; and [`LOAD_PROMPT`], whose `skill` argument completes to skill
//! paths and names (`completion/complete`).

use rmcp::{
    ErrorData,
    model::{
        CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptResult, JsonObject,
        ListPromptsResult, Prompt, PromptArgument, PromptMessage, Reference, Role,
    },
};

use super::View;

/// Longest prompt description, in characters.
const PROMPT_DESCRIPTION: u32 = 300;

/// The prompt that loads any skill by name, with completion of the name.
pub const LOAD_PROMPT: &str = "load_skill";
/// Its argument.
pub const SKILL_ARG: &str = "skill";
/// The optional argument of every skill prompt.
pub const CONTEXT_ARG: &str = "context";
/// Prompts per `prompts/list` page.
pub const PAGE: usize = 100;

fn context_arg() -> PromptArgument {
    PromptArgument::new(CONTEXT_ARG)
        .with_description("What you are working on (optional); added before the skill.")
        .with_required(false)
}

fn load_prompt() -> Prompt {
    Prompt::new(
        LOAD_PROMPT,
        Some("Load a skill by path or name (completion lists the skills)."),
        Some(vec![
            PromptArgument::new(SKILL_ARG)
                .with_description("Skill path or name.")
                .with_required(true),
            context_arg(),
        ]),
    )
    .with_title("Load a skill")
}

/// `prompts/list`: the load prompt, then a prompt per skill.
pub(crate) fn list(view: &View, cursor: Option<&str>) -> Result<ListPromptsResult, ErrorData> {
    let start = match cursor {
        None | Some("") => 0,
        Some(c) => c.parse::<usize>().map_err(|_| {
            ErrorData::invalid_params(
                format!("cursor: {c:?} is not a cursor this server gave"),
                None,
            )
        })?,
    };
    let total = view.skills.len() + 1;
    let end = (start + PAGE).min(total);
    // The skills of this page (prompt i > 0 is skill i - 1), descriptions included.
    let first = start.max(1) - 1;
    let skills = if end > first + 1 {
        view.catalog
            .summaries(first as u32, (end - 1 - first) as u32)
            .map_err(|e| ErrorData::internal_error(format!("listing the skills: {e:#}"), None))?
    } else {
        Vec::new()
    };
    let mut prompts = Vec::new();
    if start == 0 && end > 0 {
        prompts.push(load_prompt());
    }
    for s in
        (first..end.saturating_sub(1)).filter_map(|i| super::summary_of(view, &skills, first, i))
    {
        prompts.push(
            Prompt::new(
                s.skill_path.clone(),
                Some(shorten(view, &s.description)),
                Some(vec![context_arg()]),
            )
            .with_title(s.name.clone()),
        );
    }
    let mut result = ListPromptsResult::with_all_items(prompts);
    if end < total {
        result.next_cursor = Some(end.to_string());
    }
    Ok(result)
}

fn argument(args: Option<&JsonObject>, name: &str) -> Option<String> {
    args?
        .get(name)
        .and_then(|v| v.as_str())
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// `prompts/get`: the resolved content of the skill.
pub(crate) fn get(
    view: &View,
    name: &str,
    args: Option<&JsonObject>,
) -> Result<GetPromptResult, ErrorData> {
    let target = if name == LOAD_PROMPT {
        argument(args, SKILL_ARG).ok_or_else(|| {
            ErrorData::invalid_params(format!("argument `{SKILL_ARG}` is required"), None)
        })?
    } else {
        name.to_string()
    };
    let info = view
        .catalog
        .get(&target)
        .map_err(|e| ErrorData::invalid_params(super::tools::describe(view, &e, &target), None))?;
    let resolved = view.catalog.resolve(&info.skill_path).map_err(|e| {
        ErrorData::internal_error(format!("loading {}: {e}", info.skill_path), None)
    })?;
    let mut text = String::new();
    if let Some(context) = argument(args, CONTEXT_ARG) {
        text.push_str(&format!("Task: {context}\n\n"));
    }
    text.push_str(&format!(
        "Follow the skill `{}` below.\n\n{}",
        info.skill_path, resolved.content
    ));
    let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
    result.description = Some(shorten(view, &info.description));
    Ok(result)
}

/// `completion/complete`: skill paths and names for the `skill` argument of the load prompt.
pub(crate) fn complete(
    view: &View,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let empty = || Ok(CompleteResult::new(CompletionInfo::default()));
    let Reference::Prompt(prompt) = &request.r#ref else {
        return empty();
    };
    if prompt.name != LOAD_PROMPT || request.argument.name != SKILL_ARG {
        return empty();
    }
    let typed = request.argument.value.to_lowercase();
    let mut starts = Vec::new();
    let mut contains = Vec::new();
    for s in &view.skills {
        let path = s.skill_path.to_lowercase();
        let name = s.name.to_lowercase();
        if path.starts_with(&typed) || name.starts_with(&typed) {
            starts.push(s.skill_path.clone());
        } else if path.contains(&typed) || name.contains(&typed) {
            contains.push(s.skill_path.clone());
        }
    }
    starts.extend(contains);
    let total = starts.len();
    starts.truncate(CompletionInfo::MAX_VALUES);
    let has_more = total > starts.len();
    let info = CompletionInfo::with_pagination(starts, Some(total as u32), has_more)
        .map_err(|e| ErrorData::internal_error(e, None))?;
    Ok(CompleteResult::new(info))
}

/// A prompt's description: the skill's, shortened by the engine's rule for listings (the whole
/// description, should the engine fail).
fn shorten(view: &View, description: &str) -> String {
    view.catalog
        .shorten(description, PROMPT_DESCRIPTION)
        .unwrap_or_else(|_| description.to_string())
}
