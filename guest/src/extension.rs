//! The Skills extension's view of the index (SEP-2640): under which path and name each skill is
//! listed, and the frontmatter of the `SKILL.md` served for it. These are rules about skills, so
//! they live here; a host serves what they say.
//!
//! # Paths and names
//! A skill is listed as `skill://<ext-path>/SKILL.md`, and the last segment of `<ext-path>` is
//! its `name`, which satisfies the Agent Skills naming rule ([`is_valid_name`]: 1-64 characters
//! of `a-z`, `0-9` and `-`, no leading, trailing or double `-`). [`candidate`] is the one rule
//! that decides it, and [`served_name`] its name part: the extension's map, the served
//! `SKILL.md`, `check-skill` (what editors show), the index's name findings and, through the
//! `name` of `extension-skill`, the host all take the name from there. The ext path of a skill
//! is:
//! - for the category nodes, their folder: `<dir>/_index` -> `<dir>` (`api/_index` is
//!   `skill://api/SKILL.md`, name `api`); `_root` -> `root`; a top-level `_index` -> `index`;
//! - for any other skill, its skill path;
//! - when the last segment is still not a valid name, a derived one ([`derive_name`]): lowercased,
//!   each run of other characters one `-`, no `-` at either end, at most 64 characters
//!   (`capsule_crm-automation` -> `capsule-crm-automation`, `-21risk-automation` ->
//!   `21risk-automation`). When nothing is left (`日本`) the skill is left out.
//!
//! A name depends only on the skill's own path, so it is stable across reloads. One ext path
//! serves one skill: a skill listed under its own skill path wins over a category node, which
//! wins over a derived name, then the smaller skill path wins ([`precedence`]); the others are left
//! out of the extension with a warning that `validate` shows. Left out of the extension only:
//! the tools serve every skill by its skill path.
//!
//! # Limits
//! A skill with more than [`MAX_FILES`] files or [`MAX_BYTES`] bytes (all its files together)
//! is left out too ([`over_limits`], with its figures), and takes no ext path from another. Its
//! files are those of its manifest as the listing gives them (sizes included): for an Agent
//! Skills folder its `SKILL.md` and the folder's other files, for a hierarchical file the
//! generated `SKILL.md` (counted at the size of the file it is made from), the file itself and
//! its resource folder's files ([`Size`]).
//!
//! # Served frontmatter
//! The entry's `frontmatter` and the served `SKILL.md` come from one text ([`fix_frontmatter`]):
//! the file's own frontmatter with `name` set to the extension name (and `description` set to the
//! skill's description when the file's is not a non-empty string); everything else is kept as
//! written. The entry's frontmatter is that text parsed, so both say the same thing.

use serde_yaml::{Mapping, Value};

use crate::frontmatter::{self, Block};

/// Longest skill name (Agent Skills).
pub const NAME_MAX: usize = 64;

/// Most files a skill may have to be listed (its `SKILL.md` included).
pub const MAX_FILES: u64 = 512;
/// Most bytes a skill's files may total to be listed (16 MiB).
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// What the extension would serve of a skill: how many files, how many bytes in all (see the
/// module docs, "Limits").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Size {
    pub files: u64,
    pub bytes: u64,
}

/// Why a skill of `size` is left out, or `None` when it is within [`MAX_FILES`] and
/// [`MAX_BYTES`].
pub fn over_limits(size: Size) -> Option<String> {
    if size.files > MAX_FILES {
        return Some(format!(
            "it has {} files, over the limit of {MAX_FILES}",
            size.files
        ));
    }
    if size.bytes > MAX_BYTES {
        return Some(format!(
            "its files total {} bytes, over the limit of {MAX_BYTES} (16 MiB)",
            size.bytes
        ));
    }
    None
}

/// The order in which the skills asking for one ext path take it, the first winning: by how
/// each came by it (its own path, a category node, a derived name), then by skill path.
pub fn precedence(kind: Kind, skill_path: &str) -> (Kind, &str) {
    (kind, skill_path)
}

/// Why a skill is left out when another holds the ext path it asks for.
pub fn held_by(ext_path: &str, winner: &str) -> String {
    format!("`skill://{ext_path}/SKILL.md` is the skill `{winner}`")
}

/// The Agent Skills naming rule: 1-64 characters of `a-z`, `0-9` and `-`, no leading, trailing
/// or consecutive `-`.
pub fn is_valid_name(s: &str) -> bool {
    name_problems(s).is_empty()
}

/// What in `name` breaks the Agent Skills naming rule, one message per broken part (empty when
/// `name` is valid): the rule [`is_valid_name`] applies, worded for an author.
pub fn name_problems(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let len = name.chars().count();
    if len == 0 {
        out.push("`name` is empty".to_owned());
    }
    if len > NAME_MAX {
        out.push(format!(
            "`name` is {len} characters; the Agent Skills format allows at most {NAME_MAX}"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        out.push(format!(
            "`name` `{name}` should use only lowercase letters a-z, digits and `-` (Agent Skills format)"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        out.push(format!("`name` `{name}` should not start or end with `-`"));
    }
    if name.contains("--") {
        out.push(format!("`name` `{name}` should not contain `--`"));
    }
    out
}

/// A valid name made from `segment`: lowercased, every run of characters outside `a-z0-9` one
/// `-`, no `-` at either end, at most [`NAME_MAX`] characters; `None` when nothing is left.
pub fn derive_name(segment: &str) -> Option<String> {
    let mut name = String::new();
    for c in segment.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let mut name = name.trim_end_matches('-').to_owned();
    if name.len() > NAME_MAX {
        name.truncate(NAME_MAX);
        name = name.trim_end_matches('-').to_owned();
    }
    (!name.is_empty()).then_some(name)
}

/// How a skill came by its ext path; the lower wins a collision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Its own skill path.
    Own,
    /// A category node (`_root`, `_index`) under its folder's name.
    Category,
    /// A name derived from a last segment that is not a valid name.
    Derived,
}

/// The ext path a skill asks for (before collisions), or why it has none.
pub fn candidate(skill_path: &str) -> Result<(String, Kind), String> {
    let (parent, last) = match skill_path.rsplit_once('/') {
        Some((p, l)) => (Some(p), l),
        None => (None, skill_path),
    };
    let (parent, last, kind) = match (parent, last) {
        (None, "_root") => (None, "root", Kind::Category),
        (None, "_index") => (None, "index", Kind::Category),
        (Some(p), "_index") => match p.rsplit_once('/') {
            Some((pp, l)) => (Some(pp), l, Kind::Category),
            None => (None, p, Kind::Category),
        },
        (p, l) => (p, l, Kind::Own),
    };
    let join = |name: &str| match parent {
        Some(p) => format!("{p}/{name}"),
        None => name.to_owned(),
    };
    if is_valid_name(last) {
        return Ok((join(last), kind));
    }
    match derive_name(last) {
        Some(name) => Ok((join(&name), Kind::Derived)),
        None => Err(format!(
            "`{last}` is not a valid skill name (1-64 of a-z, 0-9 and single `-`) and none can be derived from it"
        )),
    }
}

/// The `name` the Skills extension serves for the skill at `skill_path` (the last segment of its
/// [`candidate`] ext path), or why it has none. Within an index, a skill whose ext path another
/// skill wins is left out ([`ExtensionMap`]); a listed skill is always served under this name.
pub fn served_name(skill_path: &str) -> Result<String, String> {
    candidate(skill_path).map(|(ext, _)| name_of(&ext).to_owned())
}

/// Where the extension lists each skill of an index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtensionMap {
    /// `(ext path, skill)` of every listed skill, sorted by ext path (byte order).
    pub listed: Vec<(String, usize)>,
    /// Per skill (in the index's order): its position in `listed`, or why it is left out.
    pub by_skill: Vec<Result<usize, String>>,
    /// Per skill: how it came by its ext path (`None` when left out).
    pub kinds: Vec<Option<Kind>>,
    /// `(position in listed, skill)` of the skills that asked for a listed ext path and lost
    /// it, sorted: who would take it if its holder went (see [`ExtensionMap::holder`]).
    pub losers: Vec<(usize, usize)>,
}

impl ExtensionMap {
    /// The map for `skills`: each one's skill path and [`Size`] (any order; indices are
    /// positions in it).
    pub fn new<'a>(skills: impl ExactSizeIterator<Item = (&'a str, Size)>) -> Self {
        let n = skills.len();
        let mut by_skill: Vec<Result<usize, String>> = Vec::with_capacity(n);
        let mut kinds = vec![None; n];
        let mut wanted: Vec<(String, Kind, &str, usize)> = Vec::with_capacity(n);
        for (i, (path, size)) in skills.enumerate() {
            let asked = match over_limits(size) {
                Some(why) => Err(why),
                None => candidate(path),
            };
            match asked {
                Ok((ext, kind)) => {
                    by_skill.push(Ok(0));
                    wanted.push((ext, kind, path, i));
                }
                Err(why) => by_skill.push(Err(why)),
            }
        }
        // Per ext path, the winner first.
        wanted.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| precedence(a.1, a.2).cmp(&precedence(b.1, b.2)))
        });
        let mut listed: Vec<(String, usize)> = Vec::with_capacity(wanted.len());
        let mut losers = Vec::new();
        let mut winner_path = "";
        for (ext, kind, path, i) in wanted {
            if let Some((last, _)) = listed.last()
                && *last == ext
            {
                by_skill[i] = Err(held_by(&ext, winner_path));
                losers.push((listed.len() - 1, i));
                continue;
            }
            by_skill[i] = Ok(listed.len());
            kinds[i] = Some(kind);
            winner_path = path;
            listed.push((ext, i));
        }
        Self {
            listed,
            by_skill,
            kinds,
            losers,
        }
    }

    /// The skill listed under `ext_path`.
    pub fn skill_at(&self, ext_path: &str) -> Option<usize> {
        self.listed
            .binary_search_by(|(e, _)| e.as_str().cmp(ext_path))
            .ok()
            .map(|k| self.listed[k].1)
    }

    /// The skill that holds `ext_path` once the skill at `skill_path` is taken away (an
    /// editor's draft replaces it), by the rule of [`ExtensionMap::new`]: the listed one, or
    /// when that is the one taken away, the best of those it beat. `paths` gives a skill's
    /// path by its index.
    pub fn holder<'p>(
        &self,
        ext_path: &str,
        skill_path: &str,
        paths: impl Fn(usize) -> &'p str,
    ) -> Option<(Kind, usize)> {
        let k = self
            .listed
            .binary_search_by(|(e, _)| e.as_str().cmp(ext_path))
            .ok()?;
        let winner = self.listed[k].1;
        if paths(winner) != skill_path {
            return self.kinds[winner].map(|kind| (kind, winner));
        }
        let at = self.losers.partition_point(|&(l, _)| l < k);
        self.losers[at..]
            .iter()
            .take_while(|&&(l, _)| l == k)
            .filter_map(|&(_, i)| Some((candidate(paths(i)).ok()?.1, i)))
            .min_by(|a, b| precedence(a.0, paths(a.1)).cmp(&precedence(b.0, paths(b.1))))
    }

    /// The ext path of skill `i`, or why it is left out.
    pub fn ext_path(&self, i: usize) -> Result<&str, &str> {
        match self.by_skill.get(i) {
            Some(Ok(k)) => Ok(self.listed[*k].0.as_str()),
            Some(Err(why)) => Err(why.as_str()),
            None => Err("no such skill"),
        }
    }
}

/// The last segment of an ext path: the skill's name.
pub fn name_of(ext_path: &str) -> &str {
    ext_path.rsplit('/').next().unwrap_or(ext_path)
}

/// Parse a frontmatter YAML text as the engine does.
fn parse(yaml: &str) -> Option<Mapping> {
    let block = Block {
        yaml,
        open_line: 0,
        leading_blank_lines: 0,
        body: "",
        body_line: 0,
    };
    frontmatter::parse(&block, &mut Vec::new()).ok()
}

/// A scalar for a name: plain when YAML reads it as that string, else double-quoted.
fn name_scalar(name: &str) -> String {
    let plain = name.starts_with(|c: char| c.is_ascii_lowercase())
        && !matches!(
            name,
            "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
        );
    if plain {
        name.to_owned()
    } else {
        serde_json::to_string(name).unwrap_or_default()
    }
}

/// `yaml` with the top-level `key` line (and its continuation lines) replaced by
/// `key: <scalar>`, or that line put first when there is no such line.
fn set_key(yaml: &str, key: &str, scalar: &str) -> String {
    let lines: Vec<&str> = yaml.split_inclusive('\n').collect();
    let starts = |l: &str| {
        l.strip_prefix(key)
            .and_then(|r| r.strip_prefix(':'))
            .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t', '\n']))
    };
    let new_line = format!("{key}: {scalar}\n");
    let Some(i) = lines.iter().position(|l| starts(l)) else {
        return format!("{new_line}{yaml}");
    };
    let mut j = i + 1;
    while j < lines.len() {
        let l = lines[j];
        let continues = l.trim().is_empty()
            || l.starts_with([' ', '\t'])
            || (l.starts_with('-') && !l.starts_with("---"));
        if !continues {
            break;
        }
        j += 1;
    }
    while j > i + 1 && lines[j - 1].trim().is_empty() {
        j -= 1;
    }
    let mut out = String::with_capacity(yaml.len() + new_line.len());
    lines[..i].iter().for_each(|l| out.push_str(l));
    out.push_str(&new_line);
    lines[j..].iter().for_each(|l| out.push_str(l));
    out
}

fn is_nonempty_string(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(s)) if !s.is_empty())
}

/// Does `fixed` say `name` and a non-empty description, and agree with `original` on every
/// other field?
fn fixed_ok(original: &Mapping, fixed: &Mapping, name: &str) -> bool {
    let others = |m: &Mapping| -> Vec<(Value, Value)> {
        m.iter()
            .filter(|(k, _)| !matches!(k.as_str(), Some("name" | "description")))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    frontmatter::get(fixed, "name").and_then(Value::as_str) == Some(name)
        && is_nonempty_string(frontmatter::get(fixed, "description"))
        && (!is_nonempty_string(frontmatter::get(original, "description"))
            || frontmatter::get(original, "description") == frontmatter::get(fixed, "description"))
        && others(original) == others(fixed)
}

/// The frontmatter text the extension serves for a skill whose frontmatter is `yaml` (already
/// cleaned of characters YAML forbids), and that text parsed: `name` set to `name`,
/// `description` set to `description` when `yaml` has no non-empty string one, every other
/// field as written. `changed` is false when `yaml` already said so (it is returned as is). The
/// lines are edited in place when that gives the right mapping, else the mapping is written out
/// again as YAML. The text ends with a newline (or is empty).
pub fn fix_frontmatter(
    yaml: &str,
    name: &str,
    description: &str,
) -> Result<(String, Mapping, bool), String> {
    let original = parse(yaml).ok_or("its frontmatter does not parse")?;
    let name_ok = frontmatter::get(&original, "name").and_then(Value::as_str) == Some(name);
    let desc_ok = is_nonempty_string(frontmatter::get(&original, "description"));
    if name_ok && desc_ok {
        return Ok((yaml.to_owned(), original, false));
    }
    let mut text = if yaml.is_empty() || yaml.ends_with('\n') {
        yaml.to_owned()
    } else {
        format!("{yaml}\n")
    };
    if !desc_ok {
        let quoted = serde_json::to_string(description).map_err(|e| e.to_string())?;
        text = set_key(&text, "description", &quoted);
    }
    if !name_ok {
        text = set_key(&text, "name", &name_scalar(name));
    }
    if let Some(fixed) = parse(&text).filter(|f| fixed_ok(&original, f, name)) {
        return Ok((text, fixed, true));
    }
    // Written out again (comments and layout are lost, the values kept).
    let mut map = Mapping::new();
    map.insert("name".into(), name.into());
    for (k, v) in &original {
        if k.as_str() != Some("name") {
            map.insert(k.clone(), v.clone());
        }
    }
    if !desc_ok {
        map.insert("description".into(), description.into());
    }
    let text = serde_yaml::to_string(&Value::Mapping(map)).map_err(|e| e.to_string())?;
    match parse(&text).filter(|f| fixed_ok(&original, f, name)) {
        Some(fixed) => Ok((text, fixed, true)),
        None => Err(format!(
            "its frontmatter cannot be written with the name `{name}`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naming_rule() {
        for ok in ["a", "pdf", "x-1", "21risk-automation", &"a".repeat(64)] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            "_root",
            "_index",
            "-a",
            "a-",
            "a--b",
            "A",
            "a_b",
            "a.b",
            &"a".repeat(65),
        ] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn candidates() {
        let c = candidate;
        assert_eq!(c("ui/react/auth"), Ok(("ui/react/auth".into(), Kind::Own)));
        assert_eq!(c("api/_index"), Ok(("api".into(), Kind::Category)));
        assert_eq!(
            c("ui/react/_index"),
            Ok(("ui/react".into(), Kind::Category))
        );
        assert_eq!(c("_root"), Ok(("root".into(), Kind::Category)));
        assert_eq!(c("_index"), Ok(("index".into(), Kind::Category)));
        assert_eq!(
            c("-21risk-automation"),
            Ok(("21risk-automation".into(), Kind::Derived))
        );
        assert_eq!(
            c("x/capsule_crm-automation"),
            Ok(("x/capsule-crm-automation".into(), Kind::Derived))
        );
        assert_eq!(c("My_Dir/_index"), Ok(("my-dir".into(), Kind::Derived)));
        assert_eq!(c("a/_root"), Ok(("a/root".into(), Kind::Derived)));
        assert!(c("x/日本").is_err());
        for p in ["a/b", "_root", "api/_index", "Weird Name!", "-x-"] {
            let (ext, _) = candidate(p).unwrap();
            assert!(is_valid_name(name_of(&ext)), "{p} -> {ext}");
        }
    }

    #[test]
    fn served_names_are_the_last_segment_of_the_ext_path() {
        for (path, name) in [
            ("api/_index", "api"),
            ("_root", "root"),
            ("_index", "index"),
            ("ui/react/_index", "react"),
            ("ui/react/auth", "auth"),
            ("tools/pdf", "pdf"),
            ("x/capsule_crm-automation", "capsule-crm-automation"),
            ("My_Dir/_index", "my-dir"),
        ] {
            assert_eq!(served_name(path).as_deref(), Ok(name), "{path}");
        }
        assert!(served_name("x/日本").is_err());
    }

    #[test]
    fn name_problems_name_each_broken_part() {
        assert!(name_problems("pdf-tools").is_empty());
        assert_eq!(name_problems("").len(), 1);
        assert_eq!(name_problems("-Bad--").len(), 3);
        assert!(name_problems(&"a".repeat(65))[0].contains("at most 64"));
        for bad in ["", "A", "a_b", "-a", "a--b", &"a".repeat(65)] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn collisions_keep_one_skill_per_path() {
        let paths = [
            "api",
            "api/_index",
            "docker-hub-automation",
            "docker_hub-automation",
            "ui/_index",
            "x/日本",
            "zz_top",
        ];
        let map = ExtensionMap::new(paths.iter().map(|p| (*p, Size::default())));
        assert_eq!(map.ext_path(0), Ok("api"));
        assert!(map.ext_path(1).unwrap_err().contains("is the skill `api`"));
        assert_eq!(map.ext_path(2), Ok("docker-hub-automation"));
        assert!(map.ext_path(3).is_err());
        assert_eq!(map.ext_path(4), Ok("ui"));
        assert!(map.ext_path(5).is_err());
        assert_eq!(map.ext_path(6), Ok("zz-top"));
        let exts: Vec<&str> = map.listed.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(exts, ["api", "docker-hub-automation", "ui", "zz-top"]);
        assert_eq!(map.skill_at("ui"), Some(4));
        assert_eq!(map.skill_at("ui/_index"), None);
        // Order of the input does not matter.
        let reversed = ExtensionMap::new(paths.iter().rev().map(|p| (*p, Size::default())));
        assert_eq!(reversed.skill_at("api"), Some(paths.len() - 1));
    }

    #[test]
    fn a_skill_over_a_limit_is_left_out_and_takes_no_path() {
        let at = |files, bytes| Size { files, bytes };
        assert_eq!(over_limits(at(MAX_FILES, MAX_BYTES)), None);
        assert_eq!(
            over_limits(at(MAX_FILES + 1, 10)).as_deref(),
            Some("it has 513 files, over the limit of 512")
        );
        assert_eq!(
            over_limits(at(3, MAX_BYTES + 1)).as_deref(),
            Some("its files total 16777217 bytes, over the limit of 16777216 (16 MiB)")
        );
        // `docker-hub-automation` is too large: `docker_hub-automation` takes its URI.
        let skills = [
            ("docker-hub-automation", at(600, 1)),
            ("docker_hub-automation", at(2, 100)),
        ];
        let map = ExtensionMap::new(skills.into_iter());
        assert_eq!(
            map.ext_path(0),
            Err("it has 600 files, over the limit of 512")
        );
        assert_eq!(map.ext_path(1), Ok("docker-hub-automation"));
        assert_eq!(map.kinds[1], Some(Kind::Derived));
        assert!(map.losers.is_empty());
    }

    #[test]
    fn the_holder_of_a_path_once_a_skill_is_taken_away() {
        let paths = [
            "docker-hub-automation",
            "docker_hub-automation",
            "docker__hub-automation",
            "x/_index",
            "x",
        ];
        let map = ExtensionMap::new(paths.iter().map(|p| (*p, Size::default())));
        let path = |i: usize| paths[i];
        // The listed one, unless it is the one taken away; then the best it beat.
        assert_eq!(
            map.holder("docker-hub-automation", "zzz", path),
            Some((Kind::Own, 0))
        );
        assert_eq!(
            map.holder("docker-hub-automation", "docker_hub-automation", path),
            Some((Kind::Own, 0))
        );
        assert_eq!(
            map.holder("docker-hub-automation", "docker-hub-automation", path),
            Some((Kind::Derived, 2)),
            "`docker__hub-automation` < `docker_hub-automation`"
        );
        assert_eq!(map.holder("x", "x", path), Some((Kind::Category, 3)));
        assert_eq!(map.holder("x", "x/_index", path), Some((Kind::Own, 4)));
        assert_eq!(map.holder("nothing", "x", path), None);
        // Alone in its path: nobody once it goes.
        let one = ExtensionMap::new([("a", Size::default())].into_iter());
        assert_eq!(one.holder("a", "a", |_| "a"), None);
    }

    #[test]
    fn frontmatter_fixes_name_in_place() {
        let yaml = "# comment\nname: capsule_crm-automation\ndescription: \"Capsule: CRM\"\nrequires:\n  mcp: [rube]\n";
        let (text, map, changed) =
            fix_frontmatter(yaml, "capsule-crm-automation", "unused").unwrap();
        assert!(changed);
        assert_eq!(
            text,
            "# comment\nname: capsule-crm-automation\ndescription: \"Capsule: CRM\"\nrequires:\n  mcp: [rube]\n"
        );
        assert_eq!(
            map.get("description").unwrap().as_str(),
            Some("Capsule: CRM")
        );
        // Already right: unchanged.
        let (same, _, changed) = fix_frontmatter(&text, "capsule-crm-automation", "x").unwrap();
        assert!(!changed);
        assert_eq!(same, text);
    }

    #[test]
    fn frontmatter_gets_a_name_when_it_has_none() {
        let yaml = "description: Auth rules\nkeywords: [auth, login]\n";
        let (text, map, _) = fix_frontmatter(yaml, "auth", "Auth rules").unwrap();
        assert_eq!(text, format!("name: auth\n{yaml}"));
        assert_eq!(map.len(), 3);
        // A name YAML would read as another type is quoted.
        let (text, map, _) = fix_frontmatter(yaml, "true", "x").unwrap();
        assert!(text.starts_with("name: \"true\"\n"));
        assert_eq!(map.get("name").unwrap().as_str(), Some("true"));
        let (_, map, _) = fix_frontmatter(yaml, "123", "x").unwrap();
        assert_eq!(map.get("name").unwrap().as_str(), Some("123"));
    }

    #[test]
    fn frontmatter_multiline_and_odd_names_are_replaced() {
        let yaml = "name: >\n  folded\n  name\ndescription: d\nlist:\n- a\n- b\n";
        let (text, map, _) = fix_frontmatter(yaml, "good", "d").unwrap();
        assert_eq!(text, "name: good\ndescription: d\nlist:\n- a\n- b\n");
        assert_eq!(map.get("list").unwrap().as_sequence().unwrap().len(), 2);
        let yaml = "name:\n- a\n- b\ndescription: d\n";
        let (text, _, _) = fix_frontmatter(yaml, "good", "d").unwrap();
        assert_eq!(text, "name: good\ndescription: d\n");
        // A quoted key is not found by line: written out again, values kept.
        let yaml = "\"name\": Bad Name\ndescription: d\nn: 1\n";
        let (_, map, _) = fix_frontmatter(yaml, "good", "d").unwrap();
        assert_eq!(map.get("name").unwrap().as_str(), Some("good"));
        assert_eq!(map.get("n").unwrap().as_u64(), Some(1));
    }

    #[test]
    fn frontmatter_description_made_a_string() {
        let yaml = "name: a\ndescription: 42\n";
        let (text, map, _) = fix_frontmatter(yaml, "a", "42").unwrap();
        assert_eq!(text, "name: a\ndescription: \"42\"\n");
        assert_eq!(map.get("description").unwrap().as_str(), Some("42"));
    }
}
