//! What a skill holds: its inherited content, assets, the tree of skills, manifests and
//! the Skills extension views.

use super::*;

impl Index {
    /// The chain of skill `i` for inheritance: root first, `i` last (just `i` when it does
    /// not inherit).
    pub(super) fn chain(&self, i: usize) -> Vec<usize> {
        let mut chain = vec![i];
        if self.metas[i].inherit {
            chain.extend(self.ancestors(i));
        }
        chain.reverse();
        chain
    }

    pub(super) fn read_text(&self, files: &dyn Files, i: usize) -> Result<String, Error> {
        let m = &self.metas[i];
        let bytes = files.read(m.root, &m.file).map_err(|e| {
            Error::ReadFailed(format!(
                "cannot read `{}` of root {} (`{}`): {e}",
                m.file, m.root, self.roots[m.root as usize].name
            ))
        })?;
        Ok(frontmatter::decode(&bytes, &mut Vec::new()))
    }

    /// Content with inheritance applied (format in [`crate::resolve`]), and own and
    /// inherited assets and scripts.
    pub fn resolve(&self, files: &dyn Files, skill_path: &str) -> Result<ResolvedSkill, Error> {
        let i = self.find(skill_path)?;
        let chain = self.chain(i);
        let texts: Vec<String> = chain
            .iter()
            .map(|&j| self.read_text(files, j))
            .collect::<Result<_, _>>()?;
        let content = if self.metas[i].inherit {
            let sections: Vec<Section<'_>> = chain
                .iter()
                .zip(&texts)
                .map(|(&j, text)| Section {
                    skill_path: &self.docs[j].skill_path,
                    file: &self.metas[j].file,
                    body: frontmatter::body_of(text),
                })
                .collect();
            resolve::aggregate(&sections)
        } else {
            frontmatter::trim_body(frontmatter::body_of(&texts[0])).to_owned()
        };
        let from = |j: usize| (j != i).then(|| self.docs[j].skill_path.as_str());
        let (inherited_assets, inherited_scripts) = if self.metas[i].inherit {
            (
                assets::inherit(
                    chain
                        .iter()
                        .map(|&j| (from(j), self.metas[j].assets.as_slice())),
                ),
                assets::inherit(
                    chain
                        .iter()
                        .map(|&j| (from(j), self.metas[j].scripts.as_slice())),
                ),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(ResolvedSkill {
            skill_path: self.docs[i].skill_path.clone(),
            content,
            assets: self.metas[i].assets.clone(),
            scripts: self.metas[i].scripts.clone(),
            inherited_assets,
            inherited_scripts,
        })
    }

    /// Spec 7.5: which file an asset or script request refers to. The skill must exist, the
    /// file argument must be a clean relative path; then the skill's own assets and scripts,
    /// then (with `inherit: true`) each ancestor's, nearest first.
    pub fn locate_asset(&self, skill_path: &str, file: &str) -> Result<AssetLocation, Error> {
        let i = self.find(skill_path)?;
        paths::validate_relative(file).map_err(Error::InvalidPath)?;
        let mut looked = vec![i];
        if self.metas[i].inherit {
            looked.extend(self.ancestors(i));
        }
        for &j in &looked {
            let m = &self.metas[j];
            if let Some(a) = m.assets.iter().chain(&m.scripts).find(|a| a.file == file) {
                let mut asset = a.clone();
                asset.from = (j != i).then(|| self.docs[j].skill_path.clone());
                let dir = m.resource_dir.as_deref().unwrap_or_default();
                return Ok(AssetLocation {
                    asset,
                    root: m.root,
                    path: paths::join(dir, file),
                });
            }
        }
        let names: Vec<&str> = looked
            .iter()
            .map(|&j| self.docs[j].skill_path.as_str())
            .collect();
        Err(Error::NotFound(format!(
            "no asset or script `{}` in skill `{skill_path}` (looked in: {})",
            crate::paths::echo(file),
            names.join(", ")
        )))
    }

    /// The skill tree, flattened, node 0 the root of the returned subtree.
    ///
    /// Nodes are folders of skill paths. A folder node carries the skill at its own path, or
    /// else its category skill `<folder>/_index` (which then does not appear as a separate
    /// `_index` child); the root node (name `""`, or `_root` when it carries it) carries
    /// `_root`. Folders without a skill are plain nodes (path = folder path). Children are
    /// sorted by name. `path` selects a subtree by folder path (`ui`) or skill path
    /// (`api/_index`, `_root`); anything else is `NotFound`.
    pub fn tree(&self, path: Option<&str>) -> Result<Vec<TreeNode>, Error> {
        self.ready()?;
        struct Node {
            name: String,
            folder: String,
            skill: Option<usize>,
            children: BTreeMap<String, usize>,
        }
        let mut nodes = vec![Node {
            name: String::new(),
            folder: String::new(),
            skill: None,
            children: BTreeMap::new(),
        }];
        let mut by_folder: HashMap<String, usize> = HashMap::from([(String::new(), 0)]);
        fn ensure(
            nodes: &mut Vec<Node>,
            by_folder: &mut HashMap<String, usize>,
            folder: &str,
        ) -> usize {
            if let Some(&n) = by_folder.get(folder) {
                return n;
            }
            let parent = ensure(nodes, by_folder, paths::parent_dir(folder));
            let name = paths::file_name(folder).to_owned();
            let n = nodes.len();
            nodes.push(Node {
                name: name.clone(),
                folder: folder.to_owned(),
                skill: None,
                children: BTreeMap::new(),
            });
            nodes[parent].children.insert(name, n);
            by_folder.insert(folder.to_owned(), n);
            n
        }
        let is_category = |p: &str| p == "_root" || p.ends_with("/_index");
        for (i, d) in self.docs.iter().enumerate() {
            if !is_category(&d.skill_path) {
                let n = ensure(&mut nodes, &mut by_folder, &d.skill_path);
                nodes[n].skill = Some(i);
            }
        }
        let mut by_skill: HashMap<usize, usize> = HashMap::new();
        for (i, d) in self.docs.iter().enumerate() {
            if !is_category(&d.skill_path) {
                continue;
            }
            let folder = if d.skill_path == "_root" {
                ""
            } else {
                paths::parent_dir(&d.skill_path)
            };
            let n = ensure(&mut nodes, &mut by_folder, folder);
            if nodes[n].skill.is_none() {
                nodes[n].skill = Some(i);
                if n == 0 {
                    nodes[0].name = "_root".into();
                }
            } else {
                // The folder already carries a skill of its own path: a literal child.
                let c = nodes.len();
                nodes.push(Node {
                    name: paths::file_name(&d.skill_path).to_owned(),
                    folder: d.skill_path.clone(),
                    skill: Some(i),
                    children: BTreeMap::new(),
                });
                let name = nodes[c].name.clone();
                nodes[n].children.insert(name, c);
                by_skill.insert(i, c);
            }
        }
        for (n, node) in nodes.iter().enumerate() {
            if let Some(i) = node.skill {
                by_skill.entry(i).or_insert(n);
            }
        }
        let start = match path.map(|p| p.trim().trim_end_matches('/')) {
            None | Some("") => 0,
            Some(p) => self
                .position(p)
                .and_then(|i| by_skill.get(&i).copied())
                .or_else(|| by_folder.get(p).copied())
                .ok_or_else(|| self.not_found(p))?,
        };
        // Flatten in pre-order from `start`.
        let mut out: Vec<TreeNode> = Vec::new();
        let mut stack = vec![(start, None::<usize>)];
        while let Some((n, parent)) = stack.pop() {
            let idx = out.len();
            let node = &nodes[n];
            out.push(TreeNode {
                name: node.name.clone(),
                path: node
                    .skill
                    .map_or_else(|| node.folder.clone(), |i| self.docs[i].skill_path.clone()),
                skill: node.skill.map(|i| self.info(i)),
                children: Vec::new(),
            });
            if let Some(p) = parent {
                out[p].children.push(u32::try_from(idx).unwrap_or(u32::MAX));
            }
            for &c in node.children.values().rev() {
                stack.push((c, Some(idx)));
            }
        }
        Ok(out)
    }

    /// Every file of a skill (see the module docs for the layout).
    pub fn manifest(&self, skill_path: &str) -> Result<Vec<ManifestFile>, Error> {
        let i = self.find(skill_path)?;
        let m = &self.metas[i];
        Ok(manifest_files(&self.roots, m)
            .map(|(relative, path, size)| ManifestFile {
                relative: relative.to_owned(),
                root: m.root,
                path: path.to_owned(),
                size,
            })
            .collect())
    }

    /// Where the Skills extension lists each skill (see [`crate::extension`]).
    pub fn extension_map(&self) -> &ExtensionMap {
        self.extension.get_or_init(|| {
            ExtensionMap::new(
                self.docs
                    .iter()
                    .zip(&self.metas)
                    .map(|(d, m)| (d.skill_path.as_str(), extension_size(&self.roots, m))),
            )
        })
    }

    /// Every skill the Skills extension lists, sorted by ext path (empty before `finish`).
    pub fn extension_skills(&self) -> Vec<ExtensionSkill> {
        self.extension_map()
            .listed
            .iter()
            .map(|(ext, i)| ExtensionSkill {
                skill_path: self.docs[*i].skill_path.clone(),
                ext_path: ext.clone(),
                name: extension::name_of(ext).to_owned(),
            })
            .collect()
    }

    /// The `SKILL.md` the Skills extension serves for a skill, with its frontmatter (see
    /// [`crate::extension`]). For an Agent Skills folder: the file itself when its frontmatter
    /// already says the extension's name (and a description), else the file with those lines
    /// set; for a hierarchical skill: its frontmatter with the name set, and the resolved
    /// content as body. A skill the extension leaves out is `invalid-argument` saying why.
    pub fn extension_skill_md(
        &self,
        files: &dyn Files,
        skill_path: &str,
    ) -> Result<ServedSkillMd, Error> {
        let i = self.find(skill_path)?;
        let ext_path = self.extension_map().ext_path(i).map_err(|why| {
            Error::InvalidArgument(format!(
                "the skill `{skill_path}` is not served by the Skills extension: {why}"
            ))
        })?;
        let name = extension::name_of(ext_path);
        let m = &self.metas[i];
        let bytes = files.read(m.root, &m.file).map_err(|e| {
            Error::ReadFailed(format!("cannot read `{}` of root {}: {e}", m.file, m.root))
        })?;
        let mut notes = Vec::new();
        let text = frontmatter::decode(&bytes, &mut notes);
        let Split::Found(block) = frontmatter::split(&text) else {
            return Err(Error::Other(format!(
                "`{}` has no frontmatter any more (changed since it was indexed?)",
                m.file
            )));
        };
        let clean = frontmatter::clean_yaml(&block, &mut notes);
        let (yaml, map, changed) =
            extension::fix_frontmatter(&clean, name, &self.docs[i].description)
                .map_err(|why| Error::Other(format!("`{}`: {why}", m.file)))?;
        let frontmatter_json = frontmatter::to_json(&map);
        let bytes = match m.shape {
            // Served as written when a reader that is not ours finds the same frontmatter.
            SkillShape::AgentSkill
                if !changed
                    && notes.is_empty()
                    && block.leading_blank_lines == 0
                    && matches!(clean, std::borrow::Cow::Borrowed(_)) =>
            {
                bytes
            }
            SkillShape::AgentSkill => format!("---\n{yaml}---\n{}", block.body).into_bytes(),
            SkillShape::Hierarchical => {
                let resolved = self.resolve(files, skill_path)?;
                let mut out = format!("---\n{yaml}---\n\n{}", resolved.content);
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                out.into_bytes()
            }
        };
        Ok(ServedSkillMd {
            ext_path: ext_path.to_owned(),
            name: name.to_owned(),
            bytes,
            frontmatter_json,
        })
    }
}

/// Files of a manifest: `(relative, path, size)`.
type ManifestFiles<'a> = Box<dyn Iterator<Item = (&'a str, &'a str, u64)> + 'a>;

/// The files of the skill `m` as its manifest lists them, `(relative, path, size)`, in order: for
/// an Agent Skills folder its `SKILL.md` then the folder's other files, for a hierarchical file
/// the file itself then its resource folder's files that no Agent Skills folder owns.
fn manifest_files<'a>(
    roots: &'a [RootData],
    m: &'a Meta,
) -> impl Iterator<Item = (&'a str, &'a str, u64)> + 'a {
    let listing = &roots[m.root as usize].listing;
    let size = listing.size(&m.file).unwrap_or(0);
    let (first, folder): (&str, ManifestFiles<'a>) = match m.shape {
        SkillShape::AgentSkill => {
            let folder = m.resource_dir.as_deref().unwrap_or_default();
            (
                "SKILL.md",
                Box::new(
                    listing
                        .folder_entries(folder, &m.file)
                        .map(move |(p, s)| (paths::strip_dir(p, folder), p, s)),
                ),
            )
        }
        SkillShape::Hierarchical => (
            paths::file_name(&m.file),
            match m.resource_dir.as_deref() {
                Some(dir) => Box::new(
                    listing
                        .unowned_files_under(dir)
                        .map(move |(p, s)| (paths::strip_dir(p, dir), p, s)),
                ),
                None => Box::new(std::iter::empty()),
            },
        ),
    };
    std::iter::once((first, m.file.as_str(), size)).chain(folder)
}

/// What the Skills extension serves of the skill `m`, for its limits
/// ([`extension::over_limits`]): its `SKILL.md` (for a hierarchical skill generated, counted at
/// the size of its file) and every other file of its manifest.
pub(super) fn extension_size(roots: &[RootData], m: &Meta) -> extension::Size {
    let skill_md = roots[m.root as usize].listing.size(&m.file).unwrap_or(0);
    manifest_files(roots, m)
        .filter(|(relative, ..)| *relative != "SKILL.md")
        .fold(
            extension::Size {
                files: 1,
                bytes: skill_md,
            },
            |size, (.., bytes)| extension::Size {
                files: size.files + 1,
                bytes: size.bytes + bytes,
            },
        )
}
