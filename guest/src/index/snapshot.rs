//! A finished index as a few sections of bytes, and back: what a host keeps in an on-disk index
//! cache so that a restart with unchanged roots skips reading, parsing and analysing.
//!
//! Sections (postcard values, see [`crate::codec`]): a header (format, number of roots, reports,
//! skills and search index parts), one per root (name and compact listing), the file reports,
//! the skills' [`SearchDoc`]s and their `Meta`s ([`ITEMS`] to a section), then the
//! [`SearchIndex::parts`] of the search index (its large arrays as raw chunks of at most
//! [`crate::rank::CHUNK_BYTES`]). Neither side holds a whole snapshot, nor one large section: a
//! host writes each section as it is made and gives them back one at a time, so restoring needs
//! about the finished index's memory plus one small section (at 50,000 skills the largest is a
//! root's listing).
//!
//! The matching configuration is not part of a snapshot (it applies to queries only): a
//! restored index answers with the configuration it was created with. A snapshot is only valid
//! for the engine that wrote it; a host keys its cache by the component.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Index, Meta, Report, RootData};
use crate::bytes;
use crate::codec::{decode, encode};
use crate::model::Error;
use crate::rank::{PartsReader, SearchDoc, SearchIndex};

/// Names this format; bump [`VERSION`] whenever a snapshotted type changes.
const MAGIC: &str = "skills-engine index snapshot";
const VERSION: u32 = 6;

/// Most file reports, skills' documents or skills' metadata in one section: no section holds
/// all of them, so a restore never has a large section's bytes beside what it decodes (tiny in
/// unit tests, so that their indexes span several).
const ITEMS: usize = if cfg!(test) { 3 } else { 2048 };

/// The first section.
#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    magic: String,
    version: u32,
    roots: u32,
    reports: u64,
    skills: u64,
    /// Sections of the search index ([`SearchIndex::parts`]).
    search_parts: u32,
}

/// A restore under way: what the sections read so far gave.
#[derive(Debug)]
pub(super) struct Restoring {
    count: u32,
    next: u32,
    layout: Layout,
    roots: Vec<RootData>,
    reports: BTreeMap<(u32, bytes::Key), Report>,
    docs: Vec<SearchDoc>,
    metas: Vec<Meta>,
    search: PartsReader,
    expect_reports: u64,
    expect_skills: u64,
}

/// Where each kind of section lies in a snapshot: the header, then `roots` sections, then the
/// reports', documents' and metadata's [`ITEMS`]-sized chunks, then the search index's parts.
#[derive(Debug, Clone, Copy)]
struct Layout {
    roots: u32,
    reports: u32,
    docs: u32,
    search: u32,
}

/// What section `n` holds.
enum Section {
    Header,
    Root(usize),
    Reports(usize),
    Docs(usize),
    Metas(usize),
    Search(u32),
}

fn chunks(items: u64) -> u32 {
    u32::try_from(items.div_ceil(ITEMS as u64)).unwrap_or(u32::MAX)
}

impl Layout {
    fn new(roots: u32, reports: u64, skills: u64, search: u32) -> Self {
        Self {
            roots,
            reports: chunks(reports),
            docs: chunks(skills),
            search,
        }
    }

    fn count(&self) -> u32 {
        1u32.saturating_add(self.roots)
            .saturating_add(self.reports)
            .saturating_add(self.docs.saturating_mul(2))
            .saturating_add(self.search)
    }

    fn section(&self, n: u32) -> Option<Section> {
        let mut k = n;
        if k == 0 {
            return Some(Section::Header);
        }
        k -= 1;
        for (len, make) in [
            (self.roots, Section::Root as fn(usize) -> Section),
            (self.reports, Section::Reports),
            (self.docs, Section::Docs),
            (self.docs, Section::Metas),
        ] {
            if k < len {
                return Some(make(k as usize));
            }
            k -= len;
        }
        (k < self.search).then_some(Section::Search(k))
    }
}

/// The items of chunk `c` of `items`.
fn chunk<T>(items: &[T], c: usize) -> &[T] {
    let start = (c * ITEMS).min(items.len());
    &items[start..(start + ITEMS).min(items.len())]
}

impl Index {
    fn layout(&self) -> Result<Layout, Error> {
        let search = self.search_index.as_ref().ok_or(Error::NotReady)?;
        Ok(Layout::new(
            self.roots.len() as u32,
            self.reports.len() as u64,
            self.docs.len() as u64,
            search.parts(),
        ))
    }

    /// Number of sections [`Index::snapshot_section`] gives; `NotReady` before `finish`.
    pub fn snapshot_sections(&self) -> Result<u32, Error> {
        self.ready()?;
        if self.access.is_none() {
            return Err(Error::InvalidArgument(
                "snapshot-sections: a view has no snapshot; snapshot the full index".into(),
            ));
        }
        Ok(self.layout()?.count())
    }

    /// Section `n` of this finished index's snapshot.
    pub fn snapshot_section(&self, n: u32) -> Result<Vec<u8>, Error> {
        let count = self.snapshot_sections()?;
        let layout = self.layout()?;
        let search = self.search_index.as_ref().ok_or(Error::NotReady)?;
        Ok(match layout.section(n) {
            Some(Section::Header) => encode(&Header {
                magic: MAGIC.to_owned(),
                version: VERSION,
                roots: layout.roots,
                reports: self.reports.len() as u64,
                skills: self.docs.len() as u64,
                search_parts: layout.search,
            }),
            Some(Section::Root(r)) => encode(&self.roots[r]),
            Some(Section::Reports(c)) => {
                let reports: Vec<(u32, &str, &Report)> = self
                    .reports
                    .iter()
                    .skip(c * ITEMS)
                    .take(ITEMS)
                    .map(|((root, path), r)| (*root, path.0.as_str(), r))
                    .collect();
                encode(&reports)
            }
            Some(Section::Docs(c)) => encode(chunk(&self.docs, c)),
            Some(Section::Metas(c)) => encode(chunk(&self.metas, c)),
            Some(Section::Search(k)) => search.encode_part(k),
            None => {
                return Err(Error::InvalidArgument(format!(
                    "no snapshot section {n}: the snapshot has {count}"
                )));
            }
        })
    }

    /// Read section `n` of `count` of a snapshot into this new index, in order from 0; after
    /// the last one the index is finished, as the one that wrote the snapshot. Any failure
    /// (another format, damaged bytes, a section out of order, an index that is not new)
    /// drops the sections read so far, leaves the index as it was and says which section.
    pub fn restore_section(&mut self, n: u32, count: u32, bytes: &[u8]) -> Result<(), Error> {
        let result = self.try_restore(n, count, bytes);
        if let Err(e) = result {
            // Sections go to `restoring` only, and into the index once all fit together: the
            // index itself is as it was.
            self.restoring = None;
            return Err(Error::InvalidArgument(format!(
                "index snapshot, section {n} of {count}: {e}"
            )));
        }
        Ok(())
    }

    fn try_restore(&mut self, n: u32, count: u32, bytes: &[u8]) -> Result<(), String> {
        if n == 0 {
            let fresh = self.roots.is_empty()
                && self.reports.is_empty()
                && self.parsed.is_empty()
                && !self.finished
                && self.restoring.is_none();
            if !fresh {
                return Err("a snapshot restores into a new index only".into());
            }
            let h: Header = decode(bytes)?;
            if h.magic != MAGIC || h.version != VERSION {
                return Err(format!(
                    "not a snapshot of this engine (format {:?} version {})",
                    h.magic, h.version
                ));
            }
            let layout = Layout::new(h.roots, h.reports, h.skills, h.search_parts);
            if layout.count() != count {
                return Err(format!(
                    "{count} sections given for a snapshot of {}",
                    layout.count()
                ));
            }
            // Reserved at their final size (bounded: a count is only a claim until checked).
            let skills = usize::try_from(h.skills).unwrap_or(usize::MAX).min(1 << 20);
            self.restoring = Some(Box::new(Restoring {
                count,
                next: 1,
                layout,
                roots: Vec::with_capacity(h.roots.min(1024) as usize),
                reports: BTreeMap::new(),
                docs: Vec::with_capacity(skills),
                metas: Vec::with_capacity(skills),
                search: PartsReader::default(),
                expect_reports: h.reports,
                expect_skills: h.skills,
            }));
            return Ok(());
        }
        let r = self
            .restoring
            .as_mut()
            .ok_or("section 0 (the header) must come first")?;
        if !self.roots.is_empty() || !self.parsed.is_empty() {
            return Err("roots were added to the index during the restore".into());
        }
        if n != r.next || count != r.count {
            return Err(format!("expected section {} of {}", r.next, r.count));
        }
        r.next += 1;
        match r.layout.section(n) {
            None | Some(Section::Header) => return Err(format!("no section {n}")),
            Some(Section::Root(_)) => r.roots.push(decode(bytes)?),
            Some(Section::Reports(_)) => {
                let reports: Vec<(u32, String, Report)> = decode(bytes)?;
                for (root, path, rep) in reports {
                    r.reports.insert((root, bytes::Key(path)), rep);
                }
            }
            Some(Section::Docs(_)) => r.docs.extend(decode::<Vec<SearchDoc>>(bytes)?),
            Some(Section::Metas(_)) => r.metas.extend(decode::<Vec<Meta>>(bytes)?),
            Some(Section::Search(k)) => {
                r.search.part(k, bytes)?;
                if k == 0 && r.search.parts() != Some(r.layout.search) {
                    return Err("the search index has another number of parts".into());
                }
            }
        }
        if n + 1 == count {
            let mut r = *self.restoring.take().expect("checked above");
            if !r.search.complete() {
                return Err("the search index is incomplete".into());
            }
            let search = std::mem::take(&mut r.search).finish();
            check(&r, &search)?;
            self.roots = Arc::new(r.roots);
            self.reports = r.reports;
            self.docs = r.docs;
            self.metas = r.metas;
            // (the typo candidates' signatures are derived, not stored)
            self.search_index = Some(search.with_derived());
            self.finished = true;
        }
        Ok(())
    }
}

/// Whether the sections of a complete restore fit together.
fn check(r: &Restoring, search: &SearchIndex) -> Result<(), String> {
    let n = r.docs.len();
    if r.reports.len() as u64 != r.expect_reports || n as u64 != r.expect_skills {
        return Err("fewer reports or skills than the header says".into());
    }
    if r.metas.len() != n || search.len() != n {
        return Err("skills, their metadata and the search index disagree".into());
    }
    let roots = r.roots.len() as u32;
    let metas_ok = r
        .metas
        .iter()
        .all(|m| m.root < roots && m.parent.is_none_or(|p| p < n));
    let reports_ok = r.reports.keys().all(|(root, _)| *root < roots);
    let sorted = r
        .docs
        .windows(2)
        .all(|w| bytes::cmp_str(&w[0].skill_path, &w[1].skill_path).is_lt());
    if !metas_ok || !reports_ok || !sorted {
        return Err("a root or skill number out of range, or skills out of order".into());
    }
    search.check()
}
