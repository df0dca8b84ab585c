//! Assets and scripts: declarations read from the frontmatter, binary
//! detection and MIME types, the undeclared files of Agent Skills folders, and inheritance.
//!
//! - Declarations (`assets: [{file, description, type}]`, `scripts: [{file, description,
//!   execution, args: [{name, description, required}]}]`) are relative to the skill's resource
//!   folder. Defaults: `type: other`, `execution: claude`, `args: []`,
//!   `required: true`. A scripts entry without `type` gets `type: script`. A declaration whose
//!   `file` is missing or fails [`crate::paths::validate_relative`] is skipped with a warning.
//! - Binary detection is by extension only, exactly the list of `BINARY_EXTENSIONS`; MIME types follow the
//!   7.2 table for binary files (others: `application/octet-stream`). Text files get a text
//!   MIME type from a short table of obvious ones, `text/plain` otherwise.
//! - In an Agent Skills folder every file is a resource: files nobody declared are listed too,
//!   typed by their top folder (`scripts/` -> a `script` run by the client, `references/` ->
//!   `reference`, `assets/` -> `asset`, anything else -> `other`); a declaration of the same
//!   file overrides the undeclared entry.

use serde_yaml::{Mapping, Value};

use crate::frontmatter::{self, Note};
use crate::model::{AssetInfo, Execution, ScriptArg, ScriptInfo, Severity};
use crate::paths;

/// Spec 7.2: the binary extensions (nothing else is binary).
pub const BINARY_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "svg", "ico", "webp", "pdf", "zip", "woff", "woff2",
];

/// Spec 7.2 binary detection: by extension only.
pub fn is_binary(file: &str) -> bool {
    paths::extension(file).is_some_and(|e| BINARY_EXTENSIONS.contains(&e.as_str()))
}

/// The MIME type of `file`: a fixed table for the binary files (`application/octet-stream`
/// for the others), a small table of obvious text types, else `text/plain`.
pub fn mime_type(file: &str) -> &'static str {
    let ext = paths::extension(file).unwrap_or_default();
    if is_binary(file) {
        return match ext.as_str() {
            "png" => "image/png",
            "jpg" | "jpeg" => "image/jpeg",
            "gif" => "image/gif",
            "svg" => "image/svg+xml",
            "pdf" => "application/pdf",
            "zip" => "application/zip",
            "woff" => "font/woff",
            "woff2" => "font/woff2",
            _ => "application/octet-stream",
        };
    }
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "js" | "mjs" | "cjs" => "text/javascript",
        "json" => "application/json",
        "xml" => "application/xml",
        "yaml" | "yml" => "application/yaml",
        "sh" | "bash" => "text/x-shellscript",
        "py" => "text/x-python",
        _ => "text/plain",
    }
}

/// A new asset record for `file` (relative to the resource folder).
pub fn asset(file: &str, description: &str, asset_type: &str, size: Option<u64>) -> AssetInfo {
    AssetInfo {
        file: file.to_owned(),
        description: description.to_owned(),
        asset_type: asset_type.to_owned(),
        is_binary: is_binary(file),
        mime_type: mime_type(file).to_owned(),
        size,
        from: None,
        script: None,
    }
}

/// Where a declaration list came from, for located warnings.
pub struct DeclContext<'a> {
    /// File line of the list's key (`assets:` / `scripts:`), when found.
    pub line: Option<u32>,
    /// Size of `file` in the resource folder, `None` when it does not exist.
    pub size_of: &'a dyn Fn(&str) -> Option<u64>,
}

fn entry_file<'v>(
    item: &'v Value,
    what: &str,
    index: usize,
    ctx: &DeclContext<'_>,
    notes: &mut Vec<Note>,
) -> Option<(String, Option<&'v Mapping>)> {
    let (file, map) = match item {
        Value::String(s) => (Some(s.clone()), None),
        Value::Mapping(m) => (
            frontmatter::get(m, "file").and_then(frontmatter::scalar_string),
            Some(m),
        ),
        Value::Tagged(t) => return entry_file(&t.value, what, index, ctx, notes),
        other => {
            notes.push(Note::new(
                ctx.line,
                Severity::Warning,
                format!(
                    "{what} entry {} is a {}, not a mapping with `file`; it is skipped",
                    index + 1,
                    frontmatter::kind_name(other)
                ),
            ));
            return None;
        }
    };
    let Some(file) = file.map(|f| f.trim().to_owned()).filter(|f| !f.is_empty()) else {
        notes.push(Note::new(
            ctx.line,
            Severity::Warning,
            format!("{what} entry {} has no `file`; it is skipped", index + 1),
        ));
        return None;
    };
    if let Err(why) = paths::validate_relative(&file) {
        notes.push(Note::new(
            ctx.line,
            Severity::Warning,
            format!("{what} entry {} is skipped: {why}", index + 1),
        ));
        return None;
    }
    Some((file, map))
}

fn text_field(map: Option<&Mapping>, key: &str) -> Option<String> {
    map.and_then(|m| frontmatter::get(m, key))
        .and_then(frontmatter::scalar_string)
}

fn items<'a>(
    value: Option<&'a Value>,
    what: &str,
    ctx: &DeclContext<'_>,
    notes: &mut Vec<Note>,
) -> &'a [Value] {
    match value {
        None => &[],
        Some(Value::Sequence(items)) => items,
        Some(other) => {
            notes.push(Note::new(
                ctx.line,
                Severity::Warning,
                format!(
                    "`{what}` should be a list, found a {}; it is ignored",
                    frontmatter::kind_name(other)
                ),
            ));
            &[]
        }
    }
}

/// The size of a declared file, or `None` with a warning when it is not in the resource folder.
fn declared_size(
    file: &str,
    kind: &str,
    ctx: &DeclContext<'_>,
    notes: &mut Vec<Note>,
) -> Option<u64> {
    let size = (ctx.size_of)(file);
    if size.is_none() {
        notes.push(Note::new(
            ctx.line,
            Severity::Warning,
            format!("declared {kind} `{file}` does not exist in the skill's resource folder"),
        ));
    }
    size
}

/// Spec 7.1: the declared `assets` (a missing file gets `size: None` and a warning).
pub fn declared_assets(
    value: Option<&Value>,
    ctx: &DeclContext<'_>,
    notes: &mut Vec<Note>,
) -> Vec<AssetInfo> {
    let mut out: Vec<AssetInfo> = Vec::new();
    for (i, item) in items(value, "assets", ctx, notes).iter().enumerate() {
        let Some((file, map)) = entry_file(item, "assets", i, ctx, notes) else {
            continue;
        };
        let size = declared_size(&file, "asset", ctx, notes);
        let a = asset(
            &file,
            &text_field(map, "description").unwrap_or_default(),
            &text_field(map, "type").unwrap_or_else(|| "other".into()),
            size,
        );
        push_unique(&mut out, a);
    }
    out
}

/// Spec 7.1: the declared `scripts`, with `execution` and `args`.
pub fn declared_scripts(
    value: Option<&Value>,
    ctx: &DeclContext<'_>,
    notes: &mut Vec<Note>,
) -> Vec<AssetInfo> {
    let mut out: Vec<AssetInfo> = Vec::new();
    for (i, item) in items(value, "scripts", ctx, notes).iter().enumerate() {
        let Some((file, map)) = entry_file(item, "scripts", i, ctx, notes) else {
            continue;
        };
        let size = declared_size(&file, "script", ctx, notes);
        let execution = match text_field(map, "execution") {
            None => Execution::Claude,
            Some(e) => match e.trim().to_ascii_lowercase().as_str() {
                "server" => Execution::Server,
                "claude" | "client" => Execution::Claude,
                other => {
                    notes.push(Note::new(
                        ctx.line,
                        Severity::Warning,
                        format!(
                            "script `{file}` has unknown execution `{other}` (expected `server` or `claude`); using `claude`"
                        ),
                    ));
                    Execution::Claude
                }
            },
        };
        let args_value = map.and_then(|m| frontmatter::get(m, "args"));
        let mut args = Vec::new();
        for (j, a) in items(args_value, "args", ctx, notes).iter().enumerate() {
            let (name, amap) = match a {
                Value::Mapping(m) => (
                    frontmatter::get(m, "name").and_then(frontmatter::scalar_string),
                    Some(m),
                ),
                other => (frontmatter::scalar_string(other), None),
            };
            let Some(name) = name.filter(|n| !n.trim().is_empty()) else {
                notes.push(Note::new(
                    ctx.line,
                    Severity::Warning,
                    format!(
                        "script `{file}` argument {} has no `name`; it is skipped",
                        j + 1
                    ),
                ));
                continue;
            };
            args.push(ScriptArg {
                name: name.trim().to_owned(),
                description: text_field(amap, "description").unwrap_or_default(),
                required: amap
                    .and_then(|m| frontmatter::get(m, "required"))
                    .and_then(frontmatter::boolean)
                    .unwrap_or(true),
            });
        }
        let mut s = asset(
            &file,
            &text_field(map, "description").unwrap_or_default(),
            &text_field(map, "type").unwrap_or_else(|| "script".into()),
            size,
        );
        s.script = Some(ScriptInfo { execution, args });
        push_unique(&mut out, s);
    }
    out
}

/// Keep the last declaration of a file at the first one's position.
fn push_unique(list: &mut Vec<AssetInfo>, a: AssetInfo) {
    match list.iter_mut().find(|x| x.file == a.file) {
        Some(slot) => *slot = a,
        None => list.push(a),
    }
}

/// The type of an undeclared file of an Agent Skills folder, from its top folder; `true` when
/// it is a script.
pub fn undeclared_type(relative: &str) -> (&'static str, bool) {
    match relative.split('/').next().unwrap_or("") {
        "scripts" if relative.contains('/') => ("script", true),
        "references" if relative.contains('/') => ("reference", false),
        "assets" if relative.contains('/') => ("asset", false),
        _ => ("other", false),
    }
}

/// The own assets and scripts of an Agent Skills folder: the declared ones first (in
/// declaration order), then every other file of the folder (`files`: relative path and size,
/// sorted), typed by [`undeclared_type`]. A file declared in either list is not repeated.
pub fn folder_assets(
    files: &[(String, u64)],
    declared_assets: Vec<AssetInfo>,
    declared_scripts: Vec<AssetInfo>,
) -> (Vec<AssetInfo>, Vec<AssetInfo>) {
    let mut assets = declared_assets;
    let mut scripts = declared_scripts;
    let declared: std::collections::HashSet<String> = assets
        .iter()
        .chain(&scripts)
        .map(|a| a.file.clone())
        .collect();
    for (rel, size) in files {
        if declared.contains(rel) {
            continue;
        }
        let (ty, is_script) = undeclared_type(rel);
        let mut a = asset(rel, "", ty, Some(*size));
        if is_script {
            a.script = Some(ScriptInfo {
                execution: Execution::Claude,
                args: Vec::new(),
            });
            scripts.push(a);
        } else {
            assets.push(a);
        }
    }
    (assets, scripts)
}

/// Spec 7.3: merge the chain's lists root -> leaf into a map keyed by `file`; later (more
/// specific) entries overwrite earlier ones, in place. Each entry's `from` is the skill it
/// came from, `None` for the last element of the chain (the skill itself). Returns the
/// entries that come from an ancestor (the "inherited" list), in first-seen order.
pub fn inherit<'a>(
    chain: impl IntoIterator<Item = (Option<&'a str>, &'a [AssetInfo])>,
) -> Vec<AssetInfo> {
    let mut merged: Vec<AssetInfo> = Vec::new();
    for (from, list) in chain {
        for a in list {
            let mut a = a.clone();
            a.from = from.map(str::to_owned);
            push_unique(&mut merged, a);
        }
    }
    merged.retain(|a| a.from.is_some());
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(s: &str) -> Value {
        serde_yaml::from_str(s).unwrap()
    }

    fn ctx<'a>(size_of: &'a dyn Fn(&str) -> Option<u64>) -> DeclContext<'a> {
        DeclContext {
            line: Some(7),
            size_of,
        }
    }

    #[test]
    fn spec_7_2_binary_and_mime_table() {
        let table = [
            ("a.png", true, "image/png"),
            ("a.jpg", true, "image/jpeg"),
            ("a.JPEG", true, "image/jpeg"),
            ("a.gif", true, "image/gif"),
            ("assets/auth-flow.svg", true, "image/svg+xml"),
            ("a.ico", true, "application/octet-stream"),
            ("a.webp", true, "application/octet-stream"),
            ("a.pdf", true, "application/pdf"),
            ("a.zip", true, "application/zip"),
            ("a.woff", true, "font/woff"),
            ("a.woff2", true, "font/woff2"),
            ("a.ts", false, "text/plain"),
            ("a.tsx", false, "text/plain"),
            ("a.js", false, "text/javascript"),
            ("a.sh", false, "text/x-shellscript"),
            ("a.yaml", false, "application/yaml"),
            ("a.json", false, "application/json"),
            ("AuthProvider.tsx.template", false, "text/plain"),
            ("a.env.example", false, "text/plain"),
            ("README.md", false, "text/markdown"),
            ("Makefile", false, "text/plain"),
            ("a.png.txt", false, "text/plain"),
        ];
        for (file, binary, mime) in table {
            assert_eq!(is_binary(file), binary, "{file}");
            assert_eq!(mime_type(file), mime, "{file}");
        }
    }

    #[test]
    fn spec_4_2_defaults_for_assets_and_scripts() {
        let mut notes = Vec::new();
        let size = |f: &str| (f != "missing.txt").then_some(10);
        let assets = declared_assets(
            Some(&yaml(
                "[{file: a.tsx}, {file: b.png, description: Logo, type: image}]",
            )),
            &ctx(&size),
            &mut notes,
        );
        assert_eq!(assets[0], asset("a.tsx", "", "other", Some(10)));
        assert_eq!(assets[1].asset_type, "image");
        assert_eq!(assets[1].description, "Logo");
        assert!(assets[1].is_binary);
        assert_eq!(assets[1].mime_type, "image/png");
        let scripts = declared_scripts(
            Some(&yaml(
                "[{file: s.sh}, {file: t.py, execution: server, args: [{name: env}, {name: dry, description: Dry run, required: false}]}]",
            )),
            &ctx(&size),
            &mut notes,
        );
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(
            scripts[0].script,
            Some(ScriptInfo {
                execution: Execution::Claude,
                args: vec![]
            })
        );
        assert_eq!(scripts[0].asset_type, "script");
        let s1 = scripts[1].script.as_ref().unwrap();
        assert_eq!(s1.execution, Execution::Server);
        assert_eq!(
            s1.args,
            vec![
                ScriptArg {
                    name: "env".into(),
                    description: String::new(),
                    required: true
                },
                ScriptArg {
                    name: "dry".into(),
                    description: "Dry run".into(),
                    required: false
                },
            ]
        );
        // No declarations at all.
        assert!(declared_assets(None, &ctx(&size), &mut notes).is_empty());
        assert!(declared_scripts(None, &ctx(&size), &mut notes).is_empty());
    }

    #[test]
    fn traversal_and_malformed_declarations_are_skipped_with_warnings() {
        let mut notes = Vec::new();
        let size = |_: &str| Some(1);
        let assets = declared_assets(
            Some(&yaml(
                "[{file: ../secret}, {file: /etc/passwd}, {description: no file}, 42, {file: ok.txt}]",
            )),
            &ctx(&size),
            &mut notes,
        );
        assert_eq!(assets.len(), 1);
        assert_eq!(assets[0].file, "ok.txt");
        assert_eq!(notes.len(), 4);
        assert!(
            notes
                .iter()
                .all(|n| n.severity == Severity::Warning && n.line == Some(7))
        );
        assert!(
            notes[0].message.contains("path traversal"),
            "{}",
            notes[0].message
        );
        assert!(notes[1].message.contains("absolute"));
        assert!(notes[2].message.contains("no `file`"));
        let mut notes = Vec::new();
        declared_scripts(
            Some(&yaml("[{file: x.sh, execution: cloud}]")),
            &ctx(&size),
            &mut notes,
        );
        assert!(notes[0].message.contains("unknown execution `cloud`"));
        let mut notes = Vec::new();
        assert!(declared_assets(Some(&yaml("a.txt")), &ctx(&size), &mut notes).is_empty());
        assert!(notes[0].message.contains("should be a list"));
    }

    #[test]
    fn declared_but_missing_has_no_size() {
        let mut notes = Vec::new();
        let size = |_: &str| None;
        let a = declared_assets(Some(&yaml("[gone.txt]")), &ctx(&size), &mut notes);
        assert_eq!(a[0].size, None);
        assert!(notes[0].message.contains("does not exist"));
    }

    #[test]
    fn folder_files_are_typed_by_top_folder_and_declarations_win() {
        let files = vec![
            ("LICENSE.txt".to_string(), 5),
            ("assets/logo.png".to_string(), 6),
            ("references/api.md".to_string(), 7),
            ("scripts/deploy.sh".to_string(), 8),
            ("scripts/helper.py".to_string(), 9),
        ];
        let mut declared = asset("scripts/deploy.sh", "Deploy", "script", Some(8));
        declared.script = Some(ScriptInfo {
            execution: Execution::Server,
            args: vec![],
        });
        let (assets, scripts) = folder_assets(&files, vec![], vec![declared]);
        let a: Vec<(&str, &str)> = assets
            .iter()
            .map(|a| (a.file.as_str(), a.asset_type.as_str()))
            .collect();
        assert_eq!(
            a,
            vec![
                ("LICENSE.txt", "other"),
                ("assets/logo.png", "asset"),
                ("references/api.md", "reference")
            ]
        );
        assert_eq!(scripts.len(), 2);
        assert_eq!(scripts[0].file, "scripts/deploy.sh");
        assert_eq!(
            scripts[0].script.as_ref().unwrap().execution,
            Execution::Server
        );
        assert_eq!(scripts[1].file, "scripts/helper.py");
        assert_eq!(scripts[1].asset_type, "script");
        assert_eq!(scripts[1].size, Some(9));
        assert_eq!(
            scripts[1].script.as_ref().unwrap().execution,
            Execution::Claude
        );
        assert_eq!(undeclared_type("scripts"), ("other", false));
    }

    #[test]
    fn spec_7_3_inheritance_overrides_by_file_and_sets_from() {
        let root = vec![asset("global.css", "root css", "other", Some(1))];
        let ui = vec![asset("design-tokens.json", "", "other", Some(1))];
        let react = vec![asset(
            "component-base.tsx",
            "react base",
            "template",
            Some(1),
        )];
        let auth = vec![
            asset("AuthProvider.tsx", "", "template", Some(1)),
            asset("component-base.tsx", "auth base", "template", Some(1)),
        ];
        let inherited = inherit([
            (Some("_root"), root.as_slice()),
            (Some("ui/_index"), ui.as_slice()),
            (Some("ui/react/_index"), react.as_slice()),
            (None, auth.as_slice()),
        ]);
        let got: Vec<(&str, Option<&str>)> = inherited
            .iter()
            .map(|a| (a.file.as_str(), a.from.as_deref()))
            .collect();
        // component-base.tsx is overridden by the skill itself: not inherited.
        assert_eq!(
            got,
            vec![
                ("global.css", Some("_root")),
                ("design-tokens.json", Some("ui/_index"))
            ]
        );
        // Without the override, the nearest ancestor wins.
        let inherited = inherit([
            (Some("_root"), react.as_slice()),
            (Some("ui/react/_index"), react.as_slice()),
            (None, &[][..]),
        ]);
        assert_eq!(inherited.len(), 1);
        assert_eq!(inherited[0].from.as_deref(), Some("ui/react/_index"));
        assert_eq!(inherited[0].description, "react base");
    }
}
