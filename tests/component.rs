//! Tests: component.
//!
//! The embedded engine (`skills_mcp::runtime::COMPONENT`) is a valid component whose exports
//! match `wit/` exactly and whose imports are WASI and our own `files` interface only.

use std::collections::BTreeMap;
use std::path::Path;

use skills_mcp::runtime::COMPONENT;
use wit_parser::{Resolve, Type, TypeDefKind, WorldId, WorldItem};

const WORLD: &str = "skills-engine";
const FILES_IMPORT: &str = "skills-mcp:engine/files@0.1.0";
const ENGINE_EXPORT: &str = "skills-mcp:engine/engine@0.1.0";
/// Records shared by the engine and its host: types only.
const TYPES: &str = "skills-mcp:engine/types@0.1.0";

/// `wit/` parsed, and its world.
fn contract() -> (Resolve, WorldId) {
    let mut resolve = Resolve::default();
    let wit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
    let (pkg, _) = resolve.push_dir(&wit).expect("parse wit/");
    let world = resolve
        .select_world(&[pkg], Some(WORLD))
        .expect("the skills-engine world");
    (resolve, world)
}

/// The embedded component decoded back to WIT.
fn decoded() -> (Resolve, WorldId) {
    match wit_component::decode(COMPONENT).expect("decode the embedded component") {
        wit_component::DecodedWasm::Component(resolve, world) => (resolve, world),
        wit_component::DecodedWasm::WitPackage(..) => panic!("a WIT package, not a component"),
    }
}

/// A type written out structurally (aliases followed, names kept), so that types from two
/// different `Resolve`s compare.
fn render(resolve: &Resolve, ty: &Type) -> String {
    match ty {
        Type::Bool => "bool".into(),
        Type::U8 => "u8".into(),
        Type::U16 => "u16".into(),
        Type::U32 => "u32".into(),
        Type::U64 => "u64".into(),
        Type::S8 => "s8".into(),
        Type::S16 => "s16".into(),
        Type::S32 => "s32".into(),
        Type::S64 => "s64".into(),
        Type::F32 => "f32".into(),
        Type::F64 => "f64".into(),
        Type::Char => "char".into(),
        Type::String => "string".into(),
        Type::ErrorContext => "error-context".into(),
        Type::Id(id) => {
            let def = &resolve.types[*id];
            let name = def.name.clone().unwrap_or_default();
            let opt = |t: &Option<Type>| t.as_ref().map_or("_".into(), |t| render(resolve, t));
            let body = match &def.kind {
                TypeDefKind::Type(inner) => return render(resolve, inner),
                TypeDefKind::Record(r) => format!(
                    "record{{{}}}",
                    r.fields
                        .iter()
                        .map(|f| format!("{}:{}", f.name, render(resolve, &f.ty)))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                TypeDefKind::Variant(v) => format!(
                    "variant{{{}}}",
                    v.cases
                        .iter()
                        .map(|c| format!("{}({})", c.name, opt(&c.ty)))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                TypeDefKind::Enum(e) => format!(
                    "enum{{{}}}",
                    e.cases
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                TypeDefKind::Flags(f) => format!(
                    "flags{{{}}}",
                    f.flags
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                TypeDefKind::Tuple(t) => format!(
                    "tuple<{}>",
                    t.types
                        .iter()
                        .map(|t| render(resolve, t))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                TypeDefKind::Option(t) => format!("option<{}>", render(resolve, t)),
                TypeDefKind::Result(r) => format!("result<{},{}>", opt(&r.ok), opt(&r.err)),
                TypeDefKind::List(t) => format!("list<{}>", render(resolve, t)),
                TypeDefKind::Resource => "resource".into(),
                TypeDefKind::Handle(wit_parser::Handle::Own(t)) => {
                    format!("own<{}>", render(resolve, &Type::Id(*t)))
                }
                TypeDefKind::Handle(wit_parser::Handle::Borrow(t)) => {
                    format!("borrow<{}>", render(resolve, &Type::Id(*t)))
                }
                other => format!("{other:?}"),
            };
            if name.is_empty() {
                body
            } else {
                format!("{name}={body}")
            }
        }
    }
}

/// Every function of every exported (or imported) interface of a world, written out.
fn interfaces(
    resolve: &Resolve,
    world: WorldId,
    exports: bool,
) -> BTreeMap<String, BTreeMap<String, String>> {
    let w = &resolve.worlds[world];
    let items = if exports { &w.exports } else { &w.imports };
    let mut out = BTreeMap::new();
    for (key, item) in items {
        let name = resolve.name_world_key(key);
        let functions = match item {
            WorldItem::Interface { id, .. } => resolve.interfaces[*id]
                .functions
                .iter()
                .map(|(fname, f)| {
                    let params = f
                        .params
                        .iter()
                        .map(|p| format!("{}:{}", p.name, render(resolve, &p.ty)))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let result = f
                        .result
                        .as_ref()
                        .map_or("()".into(), |t| render(resolve, t));
                    (fname.clone(), format!("({params}) -> {result}"))
                })
                .collect(),
            WorldItem::Function(f) => BTreeMap::from([(f.name.clone(), "function".into())]),
            WorldItem::Type { .. } => BTreeMap::new(),
        };
        out.insert(name, functions);
    }
    out
}

#[test]
fn the_embedded_component_validates() {
    let mut validator = wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all());
    validator
        .validate_all(COMPONENT)
        .expect("the embedded component is valid");
    assert!(wasmparser::Parser::is_component(COMPONENT));
}

#[test]
fn exports_match_the_wit_contract() {
    let (want_resolve, want_world) = contract();
    let (got_resolve, got_world) = decoded();
    let want = interfaces(&want_resolve, want_world, true);
    let got = interfaces(&got_resolve, got_world, true);
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        vec![ENGINE_EXPORT],
        "wit/ exports one interface"
    );
    assert_eq!(got, want, "the component's exports differ from wit/");
    // The resource and every one of its methods are there.
    let engine = &got[ENGINE_EXPORT];
    for f in [
        "get-walk-policy",
        "validate-relative-path",
        "[constructor]index",
        "[method]index.add-root",
        "[method]index.add-files",
        "[method]index.finish",
        "[method]index.search",
        "[method]index.route",
        "[method]index.resolve",
        "[method]index.locate-asset",
        "[method]index.reports",
    ] {
        assert!(engine.contains_key(f), "missing export {f}");
    }
}

#[test]
fn the_files_import_matches_the_wit_contract() {
    let (want_resolve, want_world) = contract();
    let (got_resolve, got_world) = decoded();
    let want = interfaces(&want_resolve, want_world, false);
    let got = interfaces(&got_resolve, got_world, false);
    assert_eq!(got.get(FILES_IMPORT), want.get(FILES_IMPORT));
    assert!(got.contains_key(FILES_IMPORT), "imports: {:?}", got.keys());
}

/// The names the component imports and exports at its top level.
fn top_level_names() -> (Vec<String>, Vec<String>) {
    let (mut imports, mut exports) = (Vec::new(), Vec::new());
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(COMPONENT) {
        match payload.expect("parse the component") {
            wasmparser::Payload::ModuleSection { .. }
            | wasmparser::Payload::ComponentSection { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::ComponentImportSection(reader) if depth == 0 => {
                for import in reader {
                    imports.push(import.expect("an import").name.name.to_string());
                }
            }
            wasmparser::Payload::ComponentExportSection(reader) if depth == 0 => {
                for export in reader {
                    exports.push(export.expect("an export").name.name.to_string());
                }
            }
            _ => {}
        }
    }
    (imports, exports)
}

#[test]
fn imports_are_wasi_and_our_files_interface_only() {
    let (imports, exports) = top_level_names();
    assert!(imports.iter().any(|i| i == FILES_IMPORT), "{imports:?}");
    let foreign: Vec<&String> = imports
        .iter()
        .filter(|i| !i.starts_with("wasi:") && i.as_str() != FILES_IMPORT && i.as_str() != TYPES)
        .collect();
    assert!(foreign.is_empty(), "unexpected imports: {foreign:?}");
    // Our `types` interface may be imported for its type definitions only: no functions.
    let (resolve, world) = decoded();
    let types = interfaces(&resolve, world, false);
    if let Some(functions) = types.get(TYPES) {
        assert!(functions.is_empty(), "{functions:?}");
    }
    // The WASI interfaces are the ones Rust's std links in; at run time they get no
    // capability: no preopened directory, no environment, no network.
    assert_eq!(exports, vec![ENGINE_EXPORT.to_string()]);
}

/// The digest `build.rs` computed (which the on-disk caches are keyed by) is the embedded
/// component's.
#[test]
fn the_component_digest_is_the_embedded_components() {
    use sha2::Digest as _;
    let digest: [u8; 32] = sha2::Sha256::digest(skills_mcp::runtime::COMPONENT).into();
    assert_eq!(&digest, skills_mcp::runtime::component_digest());
}
