//! A finished index as a few sections of bytes, and back: what a host keeps in an on-disk index
//! cache so that a restart with unchanged roots skips reading, parsing and analysing.
//!
//! Sections (each a postcard value, see [`crate::codec`]): a header (format, number of roots,
//! reports and skills), one per root (name and compact listing), the file reports, the skills'
//! [`SearchDoc`]s, their `Meta`s, then the [`SearchIndex::PARTS`] parts of the search index.
//! Neither side holds a whole snapshot: a host writes each section as it is made and gives them
//! back one at a time, so restoring needs about the finished index's memory plus one section.
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
use crate::rank::{SearchDoc, SearchIndex};

/// Names this format; bump [`VERSION`] whenever a snapshotted type changes.
const MAGIC: &str = "skills-engine index snapshot";
const VERSION: u32 = 2;

/// The first section.
#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    magic: String,
    version: u32,
    roots: u32,
    reports: u64,
    skills: u64,
}

/// A restore under way: what the sections read so far gave.
#[derive(Debug)]
pub(super) struct Restoring {
    count: u32,
    next: u32,
    roots: Vec<RootData>,
    reports: BTreeMap<(u32, bytes::Key), Report>,
    docs: Vec<SearchDoc>,
    metas: Vec<Meta>,
    search: SearchIndex,
    expect_reports: u64,
    expect_skills: u64,
}

/// Number of sections of a snapshot of `roots` roots.
fn section_count(roots: u32) -> u32 {
    1 + roots + 3 + SearchIndex::PARTS
}

impl Index {
    /// Number of sections [`Index::snapshot_section`] gives; `NotReady` before `finish`.
    pub fn snapshot_sections(&self) -> Result<u32, Error> {
        self.ready()?;
        if self.access.is_none() {
            return Err(Error::InvalidArgument(
                "snapshot-sections: a view has no snapshot; snapshot the full index".into(),
            ));
        }
        Ok(section_count(self.roots.len() as u32))
    }

    /// Section `n` of this finished index's snapshot.
    pub fn snapshot_section(&self, n: u32) -> Result<Vec<u8>, Error> {
        let count = self.snapshot_sections()?;
        let roots = self.roots.len() as u32;
        let search = self.search_index.as_ref().ok_or(Error::NotReady)?;
        Ok(match n {
            0 => encode(&Header {
                magic: MAGIC.to_owned(),
                version: VERSION,
                roots,
                reports: self.reports.len() as u64,
                skills: self.docs.len() as u64,
            }),
            n if n <= roots => encode(&self.roots[n as usize - 1]),
            n if n == roots + 1 => {
                let reports: Vec<(u32, &str, &Report)> = self
                    .reports
                    .iter()
                    .map(|((root, path), r)| (*root, path.0.as_str(), r))
                    .collect();
                encode(&reports)
            }
            n if n == roots + 2 => encode(&self.docs),
            n if n == roots + 3 => encode(&self.metas),
            n if n < count => search.encode_part(n - roots - 4),
            _ => {
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
            if section_count(h.roots) != count {
                return Err(format!(
                    "{count} sections given for a snapshot of {}",
                    section_count(h.roots)
                ));
            }
            self.restoring = Some(Box::new(Restoring {
                count,
                next: 1,
                roots: Vec::with_capacity(h.roots as usize),
                reports: BTreeMap::new(),
                docs: Vec::new(),
                metas: Vec::new(),
                search: SearchIndex::default(),
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
        let roots = r.count - SearchIndex::PARTS - 4;
        if n <= roots {
            r.roots.push(decode(bytes)?);
        } else if n == roots + 1 {
            let reports: Vec<(u32, String, Report)> = decode(bytes)?;
            r.reports = reports
                .into_iter()
                .map(|(root, path, rep)| ((root, bytes::Key(path)), rep))
                .collect();
        } else if n == roots + 2 {
            r.docs = decode(bytes)?;
        } else if n == roots + 3 {
            r.metas = decode(bytes)?;
        } else {
            r.search.decode_part(n - roots - 4, bytes)?;
        }
        if n + 1 == count {
            let r = *self.restoring.take().expect("checked above");
            check(&r)?;
            self.roots = Arc::new(r.roots);
            self.reports = r.reports;
            self.docs = r.docs;
            self.metas = r.metas;
            // (the typo candidates' signatures are derived, not stored)
            self.search_index = Some(r.search.with_derived());
            self.finished = true;
        }
        Ok(())
    }
}

/// Whether the sections of a complete restore fit together.
fn check(r: &Restoring) -> Result<(), String> {
    let n = r.docs.len();
    if r.reports.len() as u64 != r.expect_reports || n as u64 != r.expect_skills {
        return Err("fewer reports or skills than the header says".into());
    }
    if r.metas.len() != n || r.search.len() != n {
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
    r.search.check()
}
