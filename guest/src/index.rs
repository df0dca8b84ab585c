//! The skill index: built from root listings and file bytes, then queried.
//!
//! Build protocol (mirrors the WIT `index` resource): `new`, then per root `add_root` (which
//! says which files to read) and `add_files`, then `finish`. Bodies are not kept; queries
//! that need them read through a [`Files`] implementation.

use crate::model::*;

/// A skill index (see the module docs for the build protocol).
#[derive(Debug, Default)]
pub struct Index {
    config: EngineConfig,
}

impl Index {
    pub fn new(config: EngineConfig) -> Self {
        Self { config }
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Register a root; returns the files (relative paths) the host must read.
    pub fn add_root(&mut self, _name: &str, _listing: Vec<Entry>) -> Vec<String> {
        todo!("index: add_root")
    }

    /// Parse a batch of files of root `root`.
    pub fn add_files(&mut self, _root: u32, _files: Vec<FileData>) {
        todo!("index: add_files")
    }

    /// Resolve parents, shadowing and search structures.
    pub fn finish(&mut self) {
        todo!("index: finish")
    }

    pub fn len(&self) -> usize {
        todo!("index: len")
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn skills(&self) -> Vec<SkillInfo> {
        todo!("index: skills")
    }

    pub fn get(&self, _path_or_name: &str) -> Result<SkillInfo, Error> {
        todo!("index: get")
    }

    pub fn suggest(&self, _path_or_name: &str, _limit: u32) -> Vec<String> {
        todo!("index: suggest")
    }

    pub fn search(&self, _query: &str, _limit: u32) -> Result<Vec<SearchHit>, Error> {
        todo!("index: search")
    }

    pub fn explain(&self, _query: &str, _skill_path: &str) -> Result<Explanation, Error> {
        todo!("index: explain")
    }

    pub fn route(&self, _context: &str) -> Result<RouteOutcome, Error> {
        todo!("index: route")
    }

    pub fn resolve(&self, _files: &dyn Files, _skill_path: &str) -> Result<ResolvedSkill, Error> {
        todo!("index: resolve")
    }

    pub fn locate_asset(&self, _skill_path: &str, _file: &str) -> Result<AssetLocation, Error> {
        todo!("index: locate_asset")
    }

    pub fn tree(&self, _path: Option<&str>) -> Result<Vec<TreeNode>, Error> {
        todo!("index: tree")
    }

    pub fn manifest(&self, _skill_path: &str) -> Result<Vec<ManifestFile>, Error> {
        todo!("index: manifest")
    }

    pub fn skill_md(&self, _files: &dyn Files, _skill_path: &str) -> Result<Vec<u8>, Error> {
        todo!("index: skill_md")
    }

    pub fn reports(&self) -> Vec<FileReport> {
        todo!("index: reports")
    }
}

/// How hosts must walk a root.
pub fn walk_policy() -> WalkPolicy {
    WalkPolicy {
        skip_dir_names: vec![".git".into(), "node_modules".into()],
        max_depth: 32,
        max_entries: 200_000,
        max_skill_file_bytes: 4 * 1024 * 1024,
    }
}
