//! The skill catalog as [`ScriptCatalog`]: the engine's answers, located on disk.

use std::path::PathBuf;

use super::cascade::{
    ArgDecl, Execution, FoundSkill, LocatedScript, LookupError, ScriptCatalog, ScriptDecl,
};
use crate::catalog::Catalog;
use crate::runtime::{EngineError, EngineErrorKind, Execution as EngineExecution};

/// A typed engine error anywhere in the chain, else `Other` with the whole message.
fn lookup_error(e: anyhow::Error) -> LookupError {
    let kind = e
        .chain()
        .find_map(|cause| cause.downcast_ref::<EngineError>())
        .map(|EngineError(kind)| kind.clone());
    match kind {
        Some(EngineErrorKind::NotFound(m)) => LookupError::NotFound(m),
        Some(EngineErrorKind::InvalidPath(m)) => LookupError::InvalidPath(m),
        _ => LookupError::Other(format!("{e:#}")),
    }
}

impl Catalog {
    fn root_dir(&self, root: u32) -> Result<PathBuf, LookupError> {
        let spec = self.roots().get(root as usize).ok_or_else(|| {
            LookupError::Other(format!("the engine named an unknown root {root}"))
        })?;
        Ok(spec
            .path
            .canonicalize()
            .unwrap_or_else(|_| spec.path.clone()))
    }
}

impl ScriptCatalog for Catalog {
    fn skill(&self, skill_path: &str) -> Result<FoundSkill, LookupError> {
        let info = self.get(skill_path).map_err(lookup_error)?;
        let root = self.root_dir(info.root)?;
        Ok(FoundSkill {
            skill_path: info.skill_path,
            resource_dir: info.resource_dir.map(|dir| root.join(dir)),
        })
    }

    fn locate(&self, skill_path: &str, file: &str) -> Result<LocatedScript, LookupError> {
        let location = self.locate_asset(skill_path, file).map_err(lookup_error)?;
        let root_dir = self.root_dir(location.root)?;
        let path = root_dir.join(&location.path);
        // The file is `<resource folder>/<asset.file>`: its folder is that many levels up.
        let depth = location.asset.file.split('/').count();
        let resource_dir = path
            .ancestors()
            .nth(depth)
            .map(PathBuf::from)
            .unwrap_or_else(|| root_dir.clone());
        let asset = location.asset;
        Ok(LocatedScript {
            file: asset.file,
            script: asset.script.map(|script| ScriptDecl {
                execution: match script.execution {
                    EngineExecution::Server => Execution::Server,
                    EngineExecution::Claude => Execution::Client,
                },
                args: script
                    .args
                    .into_iter()
                    .map(|arg| ArgDecl {
                        name: arg.name,
                        description: arg.description,
                        required: arg.required,
                    })
                    .collect(),
            }),
            from: asset.from,
            size: asset.size,
            root_dir,
            path,
            resource_dir,
        })
    }
}
