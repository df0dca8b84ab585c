//! Building: registering roots, parsing each file as it arrives, and `finish`.

use super::*;

impl Index {
    /// Register a root; returns the files (relative paths) the host must read.
    ///
    /// Refused (`InvalidArgument`, the index unchanged) after `finish`, during a restore, and
    /// for a listing with an entry that is not a clean relative path or a path listed twice.
    pub fn add_root(&mut self, name: &str, listing: Vec<Entry>) -> Result<Vec<String>, Error> {
        self.check_building("add-root")?;
        let root = u32::try_from(self.roots.len()).unwrap_or(u32::MAX);
        let d = discover::discover(listing, &self.policy)
            .map_err(|why| Error::InvalidArgument(format!("add-root `{name}`: {why}")))?;
        for (path, notes) in d.notes {
            self.report(root, &path).notes.extend(notes);
        }
        let mut to_read = Vec::with_capacity(d.to_read.len());
        for (path, role) in d.to_read {
            self.report(root, &path).role = Some(role.clone());
            self.pending.insert((root, path.clone()), role);
            to_read.push(path);
        }
        Arc::get_mut(&mut self.roots)
            .expect("a building index shares no roots")
            .push(RootData {
                name: name.to_owned(),
                listing: d.listing,
            });
        Ok(to_read)
    }

    /// Parse a batch of files of root `root`.
    ///
    /// Refused as a whole (`InvalidArgument` naming the culprits, nothing parsed) after
    /// `finish`, during a restore, for a root never added, and when a file of the batch was
    /// not asked for by `add_root`, was already supplied, or appears twice in the batch.
    pub fn add_files(&mut self, root: u32, files: Vec<FileData>) -> Result<(), Error> {
        self.check_building("add-files")?;
        if root as usize >= self.roots.len() {
            return Err(Error::InvalidArgument(format!(
                "add-files: no root {root}: {} root(s) were added (ids count from 0 in add-root order)",
                self.roots.len()
            )));
        }
        let mut seen: HashSet<&str> = HashSet::with_capacity(files.len());
        let mut refused: Vec<String> = Vec::new();
        for f in &files {
            let wanted = self.pending.contains_key(&(root, f.path.clone()));
            if !seen.insert(f.path.as_str()) {
                refused.push(format!("`{}` (twice in this batch)", f.path));
            } else if !wanted {
                refused.push(format!("`{}`", f.path));
            }
        }
        if !refused.is_empty() {
            const SHOWN: usize = 5;
            let more = refused.len().saturating_sub(SHOWN);
            refused.truncate(SHOWN);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            return Err(Error::InvalidArgument(format!(
                "add-files for root {root} (`{}`): not asked for by add-root, or already supplied: {}{more}; nothing of this batch was added",
                self.roots[root as usize].name,
                refused.join(", ")
            )));
        }
        for f in files {
            let Some(role) = self.pending.remove(&(root, f.path.clone())) else {
                unreachable!("checked above");
            };
            let mut notes = Vec::new();
            let parsed = self.parse_file(root, &f.path, &role, &f.bytes, &mut notes);
            let report = self.report(root, &f.path);
            report.notes.extend(notes);
            if let Some((mut doc, meta)) = parsed {
                report.skill_path = Some(doc.skill_path.clone());
                let analysed = self
                    .builder
                    .get_or_insert_with(|| rank::Builder::new(Params::default()))
                    .analyse(&doc);
                // Analysed: the text only ranking reads is not kept.
                doc.hints = String::new();
                // The audit derives requests from the first headings.
                doc.headings = audit::kept_headings(&doc.headings);
                doc.body_prefix = String::new();
                self.parsed.push((doc, meta, analysed));
            }
        }
        Ok(())
    }

    /// Parse one skill file; `None` when it is not a (valid) skill, with the reasons in `notes`.
    pub(super) fn parse_file(
        &self,
        root: u32,
        path: &str,
        role: &Role,
        bytes: &[u8],
        notes: &mut Vec<Note>,
    ) -> Option<(SearchDoc, Meta)> {
        let agent = matches!(role, Role::Agent { .. });
        // Findings that make a file "not a skill" are errors for a SKILL.md, warnings for
        // other Markdown (which may legitimately be something else).
        let fatal = if agent {
            Severity::Error
        } else {
            Severity::Warning
        };
        let max = self.policy.max_skill_file_bytes;
        if bytes.len() as u64 > max {
            notes.push(Note::new(
                None,
                Severity::Warning,
                format!(
                    "the file is {} bytes, over the limit of {max} bytes: skipped",
                    bytes.len()
                ),
            ));
            return None;
        }
        let text = frontmatter::decode(bytes, notes);
        let block = match frontmatter::split(&text) {
            Split::None { .. } => {
                if agent {
                    notes.push(Note::new(
                        Some(1),
                        Severity::Error,
                        "no frontmatter: a SKILL.md must start with a `---` fenced YAML block holding at least `description`; the skill is skipped",
                    ));
                }
                return None;
            }
            Split::Unclosed { open_line } => {
                notes.push(Note::new(
                    Some(open_line),
                    fatal,
                    format!(
                        "the frontmatter opened on line {open_line} is never closed by a `---` line; the file is skipped"
                    ),
                ));
                return None;
            }
            Split::Found(block) => block,
        };
        if block.leading_blank_lines > 0 {
            notes.push(Note::new(
                Some(1),
                Severity::Warning,
                format!(
                    "{} blank line(s) before the opening `---`: accepted, but other tools may not see the frontmatter",
                    block.leading_blank_lines
                ),
            ));
        }
        let map = match frontmatter::parse(&block, notes) {
            Ok(map) => map,
            Err(mut e) => {
                e.severity = fatal;
                e.message.push_str("; the file is skipped");
                notes.push(e);
                return None;
            }
        };
        let fm_line = |key: &str| frontmatter::key_line(&block, key).or(Some(block.open_line));

        // Skill path and shape.
        let skill_path = match role {
            Role::Agent { folder } if folder.is_empty() => {
                root_skill_path(&self.roots[root as usize].name, &map)
            }
            Role::Agent { folder } => folder.clone(),
            Role::Hierarchical => paths::skill_path_of_md(path),
        };
        let category = !agent && {
            let stem = paths::file_name(&skill_path);
            stem == "_root" || stem == "_index"
        };

        // description (required).
        let description = match frontmatter::get(&map, "description") {
            None => Err("no `description`".to_owned()),
            Some(v) => match frontmatter::scalar_string(v) {
                None => Err(format!(
                    "`description` must be text, found a {}",
                    frontmatter::kind_name(v)
                )),
                Some(s) if s.trim().is_empty() => Err("`description` is empty".to_owned()),
                Some(s) => Ok(s.trim().to_owned()),
            },
        };
        let description = match description {
            Ok(d) => d,
            Err(why) => {
                let message = if agent {
                    format!(
                        "{why} in the frontmatter: a skill needs a description; the skill is skipped"
                    )
                } else {
                    format!(
                        "{why} in the frontmatter: not a skill (a hierarchical skill needs `description` and `keywords`)"
                    )
                };
                notes.push(Note::new(fm_line("description"), fatal, message));
                return None;
            }
        };
        if agent && description.chars().count() > DESCRIPTION_MAX_CHARS {
            notes.push(Note::new(
                fm_line("description"),
                Severity::Warning,
                format!(
                    "`description` is {} characters; the Agent Skills format allows at most {DESCRIPTION_MAX_CHARS} and some clients reject longer ones",
                    description.chars().count()
                ),
            ));
        }

        // keywords (required for hierarchical non-category skills).
        let keywords = frontmatter::get(&map, "keywords")
            .or_else(|| metadata(&map).and_then(|m| frontmatter::get(m, "keywords")))
            .map(frontmatter::string_list)
            .unwrap_or_default();
        if !agent && !category && keywords.is_empty() {
            notes.push(Note::new(
                fm_line("keywords"),
                Severity::Warning,
                "no `keywords` (a non-empty list) in the frontmatter: not a skill (a hierarchical skill needs `description` and `keywords`; only `_root.md` and `_index.md` may omit `keywords`)",
            ));
            return None;
        }

        // name.
        let given_name = frontmatter::get(&map, "name").and_then(|v| {
            let s = frontmatter::scalar_string(v);
            if s.is_none() {
                notes.push(Note::new(
                    fm_line("name"),
                    Severity::Warning,
                    format!(
                        "`name` must be text, found a {}; the default name is used",
                        frontmatter::kind_name(v)
                    ),
                ));
            }
            s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
        });
        let explicit_name = given_name.is_some();
        let name = match (role, given_name) {
            (_, Some(n)) => n,
            (Role::Agent { .. }, None) => {
                let n = paths::file_name(&skill_path).to_owned();
                notes.push(Note::new(
                    Some(block.open_line),
                    Severity::Warning,
                    format!("no `name` in the frontmatter: the folder name `{n}` is used"),
                ));
                n
            }
            (Role::Hierarchical, None) => default_hierarchical_name(&skill_path),
        };
        if let Role::Agent { folder } = role {
            let folder_name = (!folder.is_empty()).then(|| paths::file_name(folder));
            for problem in name_problems(&name, folder_name, &skill_path) {
                notes.push(Note::new(fm_line("name"), Severity::Warning, problem));
            }
        }

        // inherit, priority.
        let inherit = match frontmatter::get(&map, "inherit") {
            None => true,
            Some(v) => match frontmatter::boolean(v) {
                Some(b) => b,
                None => {
                    notes.push(Note::new(
                        fm_line("inherit"),
                        Severity::Warning,
                        "`inherit` should be `true` or `false`; `true` is used",
                    ));
                    true
                }
            },
        };
        let priority = match frontmatter::get(&map, "priority") {
            None => 0,
            Some(v) => frontmatter::integer(v).unwrap_or_else(|| {
                notes.push(Note::new(
                    fm_line("priority"),
                    Severity::Warning,
                    "`priority` should be a whole number; 0 is used",
                ));
                0
            }),
        };

        // Resource folder, assets and scripts.
        let listing = &self.roots[root as usize].listing;
        let resource_dir = match role {
            Role::Agent { folder } => Some(folder.clone()),
            Role::Hierarchical => {
                let dir = paths::resource_dir_of_md(path);
                listing.is_dir(dir).then(|| dir.to_owned())
            }
        };
        let (assets, scripts) = self.own_assets(
            listing,
            role,
            path,
            resource_dir.as_deref(),
            &map,
            &block,
            notes,
        );

        let body = block.body;
        let doc = SearchDoc {
            skill_path,
            name,
            description,
            keywords,
            hints: hints(&map),
            headings: frontmatter::headings(body, HEADINGS_MAX_BYTES),
            body_prefix: frontmatter::prefix(frontmatter::trim_body(body), BODY_PREFIX_BYTES)
                .to_owned(),
            priority,
        };
        let meta = Meta {
            shape: if agent {
                SkillShape::AgentSkill
            } else {
                SkillShape::Hierarchical
            },
            root,
            file: path.to_owned(),
            resource_dir,
            inherit,
            explicit_name,
            parent: None,
            frontmatter_json: {
                // kept for the index's life: no growth slack
                let mut json = frontmatter::to_json(&map);
                json.shrink_to_fit();
                json
            },
            version: frontmatter::version(&map),
            assets,
            scripts,
        };
        Some((doc, meta))
    }

    /// Spec 7.1 for one skill (see [`crate::assets`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn own_assets(
        &self,
        listing: &Listing,
        role: &Role,
        path: &str,
        resource_dir: Option<&str>,
        map: &Mapping,
        block: &Block<'_>,
        notes: &mut Vec<Note>,
    ) -> (Vec<AssetInfo>, Vec<AssetInfo>) {
        let assets_v = frontmatter::get(map, "assets");
        let scripts_v = frontmatter::get(map, "scripts");
        let Some(dir) = resource_dir else {
            let declared = [("assets", assets_v), ("scripts", scripts_v)];
            for (key, v) in declared {
                if let Some(Value::Sequence(items)) = v
                    && !items.is_empty()
                {
                    notes.push(Note::new(
                        frontmatter::key_line(block, key),
                        Severity::Warning,
                        format!(
                            "{} {key} declared, but the resource folder `{}/` does not exist; they are ignored",
                            items.len(),
                            paths::resource_dir_of_md(path)
                        ),
                    ));
                }
            }
            return (Vec::new(), Vec::new());
        };
        let size_of = |f: &str| listing.size(&paths::join(dir, f));
        let assets = assets::declared_assets(
            assets_v,
            &DeclContext {
                line: frontmatter::key_line(block, "assets"),
                size_of: &size_of,
            },
            notes,
        );
        let scripts = assets::declared_scripts(
            scripts_v,
            &DeclContext {
                line: frontmatter::key_line(block, "scripts"),
                size_of: &size_of,
            },
            notes,
        );
        match role {
            Role::Agent { folder } => {
                assets::folder_assets(&listing.folder_files(folder, path), assets, scripts)
            }
            Role::Hierarchical => (assets, scripts),
        }
    }

    /// Resolve parents, shadowing and search structures. Once: a second `finish`, or one
    /// during a restore, is `InvalidArgument`.
    pub fn finish(&mut self) -> Result<(), Error> {
        self.check_building("finish")?;
        for ((root, path), _) in std::mem::take(&mut self.pending) {
            self.report(root, &path).notes.push(Note::new(
                None,
                Severity::Warning,
                "add-root asked for this file but its bytes were never supplied; skipped",
            ));
        }
        let builder = self
            .builder
            .take()
            .unwrap_or_else(|| rank::Builder::new(Params::default()));
        let all = std::mem::take(&mut self.parsed);
        // Spec 4.1: a hierarchical file inside the resource folder of a (kept) hierarchical
        // skill of the same root is one of its resources, not a skill. Shallowest first, so
        // that a folder's owner is decided before the files inside it.
        // (Root and depth computed once per file; a total order: (root, file) is unique.)
        let mut order: Vec<(u32, usize, usize)> = all
            .iter()
            .enumerate()
            .map(|(i, (_, m, _))| (m.root, paths::depth(&m.file), i))
            .collect();
        order.sort_unstable_by(|a, b| {
            (a.0, a.1)
                .cmp(&(b.0, b.1))
                .then_with(|| bytes::cmp_str(&all[a.2].1.file, &all[b.2].1.file))
                .then(a.2.cmp(&b.2))
        });
        let mut slots: Vec<Option<_>> = all.into_iter().map(Some).collect();
        let all: Vec<_> = order
            .iter()
            .filter_map(|&(_, _, i)| slots[i].take())
            .collect();
        let mut resource_dirs: HashSet<(u32, String)> = HashSet::new();
        let mut kept = Vec::with_capacity(all.len());
        for (doc, meta, analysed) in all {
            if meta.shape == SkillShape::Hierarchical {
                let owner = paths::ancestors(&meta.file)
                    .find(|a| {
                        !a.is_empty() && resource_dirs.contains(&(meta.root, (*a).to_owned()))
                    })
                    .map(str::to_owned);
                if let Some(dir) = owner {
                    let report = self.report(meta.root, &meta.file);
                    report.skill_path = None;
                    report.notes.push(Note::new(
                        None,
                        Severity::Info,
                        format!(
                            "inside the resource folder `{dir}/` of the skill `{dir}`: a resource of that skill, not a skill"
                        ),
                    ));
                    continue;
                }
                if let Some(dir) = &meta.resource_dir {
                    resource_dirs.insert((meta.root, dir.clone()));
                }
            }
            kept.push((doc, meta, analysed));
        }
        let a = assemble(&self.roots, kept, builder);
        for (root, file, note) in a.notes {
            self.report(root, &file).notes.push(note);
        }
        self.extension = OnceLock::from(a.extension);
        self.search_index = Some(a.search);
        self.docs = a.docs;
        self.metas = a.metas;
        self.finished = true;
        Ok(())
    }
}

/// What the build makes of the skill files that passed the resource-folder rule: shadowing
/// across roots, parents, duplicate names, the Skills extension's names, and the search
/// structures. `finish` runs it over every such file; a view (`view`) over the visible ones,
/// so that a view is exactly the index of its files.
pub(super) struct Assembled {
    pub(super) docs: Vec<SearchDoc>,
    pub(super) metas: Vec<Meta>,
    pub(super) search: SearchIndex,
    pub(super) extension: ExtensionMap,
    /// Findings on files, (root, file, finding), in the order made.
    pub(super) notes: Vec<(u32, String, Note)>,
}

/// See [`Assembled`]; `builder` analysed the documents of `all`.
pub(super) fn assemble(
    roots: &[RootData],
    mut all: Vec<(SearchDoc, Meta, Analysed)>,
    builder: rank::Builder,
) -> Assembled {
    let mut notes: Vec<(u32, String, Note)> = Vec::new();
    // Shadowing: per skill path, the latest root wins; within a root, an Agent Skills
    // folder wins, then the first file in byte order.
    all.sort_by(|(da, ma, _), (db, mb, _)| {
        bytes::cmp_str(&da.skill_path, &db.skill_path)
            .then(mb.root.cmp(&ma.root))
            .then((ma.shape != SkillShape::AgentSkill).cmp(&(mb.shape != SkillShape::AgentSkill)))
            .then_with(|| bytes::cmp_str(&ma.file, &mb.file))
    });
    let mut docs: Vec<SearchDoc> = Vec::with_capacity(all.len());
    let mut metas: Vec<Meta> = Vec::with_capacity(all.len());
    let mut analysed: Vec<Analysed> = Vec::with_capacity(all.len());
    for (doc, meta, a) in all {
        if let Some(winner) = docs
            .last()
            .filter(|w| bytes::eq_str(&w.skill_path, &doc.skill_path))
        {
            let w = metas.last().expect("parallel vectors");
            let (wroot, wfile, p) = (w.root, w.file.clone(), winner.skill_path.clone());
            if w.root != meta.root {
                let wname = roots[wroot as usize].name.clone();
                let lname = roots[meta.root as usize].name.clone();
                notes.push((meta.root, meta.file.clone(), Note::new(
                    None,
                    Severity::Warning,
                    format!(
                        "shadowed by root {wroot} (`{wname}`) file `{wfile}`, which defines the same skill path `{p}` and takes precedence"
                    ),
                )));
                notes.push((wroot, wfile.clone(), Note::new(
                    None,
                    Severity::Info,
                    format!(
                        "shadows root {} (`{lname}`) file `{}`, which defines the same skill path `{p}`",
                        meta.root, meta.file
                    ),
                )));
            } else {
                notes.push((
                    meta.root,
                    meta.file.clone(),
                    Note::new(
                        None,
                        Severity::Warning,
                        format!("duplicate skill path `{p}`: `{wfile}` defines it too and is used"),
                    ),
                ));
            }
            continue;
        }
        docs.push(doc);
        metas.push(meta);
        analysed.push(a);
    }
    // Parents (missing intermediates walked over).
    for i in 0..docs.len() {
        let parent = paths::resolve_parent(&docs[i].skill_path, |p| {
            docs.binary_search_by(|d| bytes::cmp_str(&d.skill_path, p))
                .is_ok()
        });
        metas[i].parent = parent.and_then(|p| {
            docs.binary_search_by(|d| bytes::cmp_str(&d.skill_path, &p))
                .ok()
        });
    }
    // Duplicate names (Agent Skills names, and names given explicitly).
    let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (d, m)) in docs.iter().zip(&metas).enumerate() {
        if m.shape == SkillShape::AgentSkill || m.explicit_name {
            by_name.entry(d.name.to_lowercase()).or_default().push(i);
        }
    }
    for (name, group) in by_name.into_iter().filter(|(_, g)| g.len() > 1) {
        for &i in &group {
            let others: Vec<String> = group
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| format!("`{}`", docs[j].skill_path))
                .collect();
            let (root, file) = (metas[i].root, metas[i].file.clone());
            notes.push((root, file, Note::new(
                None,
                Severity::Warning,
                format!(
                    "the name `{name}` is also used by {}; asking for this name is ambiguous, use the skill path",
                    others.join(", ")
                ),
            )));
        }
    }
    // The Skills extension's names (see `crate::extension`): renamed and left-out skills.
    let map = ExtensionMap::new(
        docs.iter()
            .zip(&metas)
            .map(|(d, m)| (d.skill_path.as_str(), content::extension_size(roots, m))),
    );
    for (i, m) in metas.iter().enumerate() {
        if let Some(note) = extension_note(map.ext_path(i), map.kinds[i], &docs[i].skill_path) {
            notes.push((m.root, m.file.clone(), note));
        }
    }
    let search = builder.build(
        analysed,
        docs.iter().map(|d| d.skill_path.clone()).collect(),
        docs.iter().map(|d| d.priority).collect(),
    );
    Assembled {
        docs,
        metas,
        search,
        extension: map,
        notes,
    }
}

/// The finding on a skill's place in the Skills extension, if any: renamed (`ext` from a
/// derived name: info) or left out (`why`: warning). The index build and an editor's check
/// against a collection say it alike.
pub(super) fn extension_note(
    ext: Result<&str, &str>,
    kind: Option<Kind>,
    skill_path: &str,
) -> Option<Note> {
    match (ext, kind) {
        (Ok(ext), Some(Kind::Derived)) => Some(Note::new(
            None,
            Severity::Info,
            format!(
                "the Skills extension lists it as `skill://{ext}/SKILL.md` (name `{}`): its last path segment is not a valid skill name; the tools serve it as `{skill_path}`",
                extension::name_of(ext),
            ),
        )),
        (Err(why), _) => Some(Note::new(
            None,
            Severity::Warning,
            format!(
                "left out of the Skills extension (`skills/list`, `skill://` resources): {why}; the tools still serve it as `{skill_path}`"
            ),
        )),
        _ => None,
    }
}

/// The `metadata` mapping of a frontmatter, if it is one.
pub(super) fn metadata(map: &Mapping) -> Option<&Mapping> {
    match frontmatter::get(map, "metadata") {
        Some(Value::Mapping(m)) => Some(m),
        _ => None,
    }
}

/// Routing hints: the [`HINT_KEYS`] fields (top level, then inside `metadata`), one per line,
/// at most [`HINTS_MAX_BYTES`].
pub(super) fn hints(map: &Mapping) -> String {
    let mut out = String::new();
    let sources = std::iter::once(map).chain(metadata(map));
    for m in sources {
        for key in HINT_KEYS {
            if let Some(v) = frontmatter::get(m, key) {
                let items = frontmatter::string_list(v);
                if items.is_empty() {
                    continue;
                }
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&items.join(", "));
            }
        }
    }
    frontmatter::prefix(&out, HINTS_MAX_BYTES).to_owned()
}

/// The skill path of a root-level `SKILL.md` (see the module docs).
pub(super) fn root_skill_path(root_name: &str, map: &Mapping) -> String {
    let from_root = root_name
        .split(['/', '\\'])
        .map(str::trim)
        .rfind(|s| !s.is_empty() && *s != "." && *s != "..");
    if let Some(s) = from_root {
        return s.to_owned();
    }
    frontmatter::get(map, "name")
        .and_then(frontmatter::scalar_string)
        .map(|s| resolve::agent_name(&s))
        .unwrap_or_else(|| "skill".into())
}

/// The default name of a hierarchical skill: its last path segment; `_index` -> its folder's
/// name (`_index` at the top level).
pub(super) fn default_hierarchical_name(skill_path: &str) -> String {
    let last = paths::file_name(skill_path);
    if last == "_index" {
        let folder = paths::parent_dir(skill_path);
        if !folder.is_empty() {
            return paths::file_name(folder).to_owned();
        }
    }
    last.to_owned()
}

/// Agent Skills `name` rules, as messages (empty when the name is valid): the naming rule
/// ([`extension::name_problems`]), and a name equal to its folder's; when it differs, the name
/// the Skills extension serves instead ([`extension::served_name`]).
pub(super) fn name_problems(name: &str, folder: Option<&str>, skill_path: &str) -> Vec<String> {
    let mut out = extension::name_problems(name);
    if let Some(folder) = folder
        && folder != name
    {
        let served = match extension::served_name(skill_path) {
            Ok(served) => format!("the Skills extension names it `{served}`"),
            Err(why) => format!("the Skills extension cannot name it: {why}"),
        };
        out.push(format!(
            "`name` `{name}` differs from its folder name `{folder}`; the Agent Skills format expects them equal ({served})"
        ));
    }
    out
}
