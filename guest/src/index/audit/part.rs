//! One part of an audit split over engine instances ([`Index::audit_part`]): the searched
//! skills of the part and its counts, encoded as bytes the host hands back, unread, to
//! [`Index::audit_merge`] (little-endian integers and floats, lists led by their length).

use super::*;

/// One part of an audit: what searching the requests of its skills found.
pub(super) struct Part {
    /// Of the index the part was searched on ([`Index::audit_fingerprint`]).
    pub fingerprint: u64,
    pub part: u32,
    pub parts: u32,
    /// For each skill of the index, among the hits of how many of this part's skills'
    /// requests it is.
    pub reach: Vec<u32>,
    /// The part's skills (index positions) and what searching their requests found.
    pub skills: Vec<(usize, Searched)>,
}

/// The first bytes of an encoded part (and its format's version).
const MAGIC: &[u8; 8] = b"audit\x00\x00\x02";

impl Part {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.0.extend_from_slice(MAGIC);
        w.u64(self.fingerprint);
        w.u32(self.part);
        w.u32(self.parts);
        w.len(self.reach.len());
        for &r in &self.reach {
            w.u32(r);
        }
        w.len(self.skills.len());
        for (s, found) in &self.skills {
            w.len(*s);
            w.u32(found.wins);
            w.len(found.taken_by.len());
            for &(d, k) in &found.taken_by {
                w.len(d);
                w.u32(k);
            }
            w.len(found.duplicates.len());
            for &d in &found.duplicates {
                w.len(d);
            }
            w.len(found.tallies.len());
            for t in &found.tallies {
                w.len(t.doc);
                w.u32(t.count);
                w.u32(t.near);
                w.u32(t.back);
                w.f64(t.margin);
                w.f64(t.score_sum);
                w.len(t.won);
                w.len(t.requests.len());
                for &j in &t.requests {
                    w.u32(j);
                }
            }
        }
        w.0
    }

    /// A part [`Part::encode`] made on an index whose fingerprint is `fingerprint`; anything
    /// else is `invalid-argument`.
    pub fn decode(bytes: &[u8], fingerprint: u64) -> Result<Self, Error> {
        let bad = |what: &str| Error::InvalidArgument(format!("not a part of this audit: {what}"));
        let mut r = Reader(bytes);
        if r.take(MAGIC.len()).ok_or_else(|| bad("too short"))? != MAGIC {
            return Err(bad("not an encoded audit part"));
        }
        let read = |r: &mut Reader| -> Option<Part> {
            let found_print = r.u64()?;
            if found_print != fingerprint {
                return None;
            }
            let part = r.u32()?;
            let parts = r.u32()?;
            let reach = (0..r.len()?).map(|_| r.u32()).collect::<Option<Vec<_>>>()?;
            let mut skills = Vec::new();
            for _ in 0..r.len()? {
                let s = r.len()?;
                let wins = r.u32()?;
                let taken_by = (0..r.len()?)
                    .map(|_| Some((r.len()?, r.u32()?)))
                    .collect::<Option<Vec<_>>>()?;
                let duplicates = (0..r.len()?).map(|_| r.len()).collect::<Option<Vec<_>>>()?;
                let mut tallies = Vec::new();
                for _ in 0..r.len()? {
                    let mut t = Tally::new(r.len()?);
                    t.count = r.u32()?;
                    t.near = r.u32()?;
                    t.back = r.u32()?;
                    t.margin = r.f64()?;
                    t.score_sum = r.f64()?;
                    t.won = r.len()?;
                    t.requests = (0..r.len()?).map(|_| r.u32()).collect::<Option<_>>()?;
                    tallies.push(t);
                }
                skills.push((
                    s,
                    Searched {
                        tallies,
                        duplicates,
                        wins,
                        taken_by,
                    },
                ));
            }
            r.0.is_empty().then_some(Part {
                fingerprint,
                part,
                parts,
                reach,
                skills,
            })
        };
        let part = read(&mut r).ok_or_else(|| bad("of another index, or damaged"))?;
        let n = part.reach.len();
        let in_index = |d: usize| d < n;
        let sound = part.part < part.parts
            && part.skills.iter().all(|(s, f)| {
                in_index(*s)
                    && f.taken_by.iter().all(|&(d, _)| in_index(d))
                    && f.duplicates.iter().all(|&d| in_index(d))
                    && f.tallies
                        .iter()
                        .all(|t| in_index(t.doc) && t.won <= t.requests.len())
            });
        if !sound {
            return Err(bad("a skill out of the index"));
        }
        Ok(part)
    }
}

/// One share of an audit's merge ([`Index::audit_merge_share`]): the entries of its skills,
/// each with its weight in the report's order.
pub(super) struct Share {
    pub fingerprint: u64,
    pub share: u32,
    pub shares: u32,
    pub entries: Vec<Entry>,
}

/// A skill's entry of the audit and what orders the report: its findings' weight and its
/// strongest competitor's strength.
pub(super) type Entry = (u32, f64, AuditSkill);

/// The first bytes of an encoded share (and its format's version).
const SHARE_MAGIC: &[u8; 8] = b"auditsh\x01";

impl Share {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.0.extend_from_slice(SHARE_MAGIC);
        w.u64(self.fingerprint);
        w.u32(self.share);
        w.u32(self.shares);
        w.len(self.entries.len());
        for (weight, strongest, a) in &self.entries {
            w.u32(*weight);
            w.f64(*strongest);
            w.str(&a.skill_path);
            w.u32(a.requests);
            w.u32(u32::from(a.derived));
            w.len(a.competitors.len());
            for c in &a.competitors {
                w.str(&c.skill_path);
                w.f64(c.strength);
                for words in [&c.shared, &c.separating] {
                    w.len(words.len());
                    for word in words {
                        w.str(word);
                    }
                }
            }
            w.len(a.findings.len());
            for f in &a.findings {
                w.u32(match f.kind {
                    AuditFindingKind::Unreachable => 0,
                    AuditFindingKind::Duplicate => 1,
                    AuditFindingKind::Hijacker => 2,
                });
                w.str(&f.message);
            }
        }
        w.0
    }

    /// A share [`Share::encode`] made on an index whose fingerprint is `fingerprint`;
    /// anything else is `invalid-argument`.
    pub fn decode(bytes: &[u8], fingerprint: u64) -> Result<Self, Error> {
        let bad = || Error::InvalidArgument("not a share of this audit's merge".into());
        let mut r = Reader(bytes);
        if r.take(SHARE_MAGIC.len()) != Some(SHARE_MAGIC.as_slice()) {
            return Err(bad());
        }
        let read = |r: &mut Reader| -> Option<Share> {
            if r.u64()? != fingerprint {
                return None;
            }
            let share = r.u32()?;
            let shares = r.u32()?;
            let mut entries = Vec::new();
            for _ in 0..r.len()? {
                let weight = r.u32()?;
                let strongest = r.f64()?;
                let skill_path = r.str()?;
                let requests = r.u32()?;
                let derived = match r.u32()? {
                    0 => false,
                    1 => true,
                    _ => return None,
                };
                let mut competitors = Vec::new();
                for _ in 0..r.len()? {
                    let skill_path = r.str()?;
                    let strength = r.f64()?;
                    let shared = (0..r.len()?).map(|_| r.str()).collect::<Option<_>>()?;
                    let separating = (0..r.len()?).map(|_| r.str()).collect::<Option<_>>()?;
                    competitors.push(AuditCompetitor {
                        skill_path,
                        strength,
                        shared,
                        separating,
                    });
                }
                let mut findings = Vec::new();
                for _ in 0..r.len()? {
                    let kind = match r.u32()? {
                        0 => AuditFindingKind::Unreachable,
                        1 => AuditFindingKind::Duplicate,
                        2 => AuditFindingKind::Hijacker,
                        _ => return None,
                    };
                    findings.push(AuditFinding {
                        kind,
                        message: r.str()?,
                    });
                }
                entries.push((
                    weight,
                    strongest,
                    AuditSkill {
                        skill_path,
                        requests,
                        derived,
                        competitors,
                        findings,
                    },
                ));
            }
            (r.0.is_empty() && share < shares).then_some(Share {
                fingerprint,
                share,
                shares,
                entries,
            })
        };
        read(&mut r).ok_or_else(bad)
    }
}

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A length or an index (as 32 bits: an index holds fewer skills).
    fn len(&mut self, v: usize) {
        self.u32(u32::try_from(v).unwrap_or(u32::MAX));
    }
    fn str(&mut self, v: &str) {
        self.len(v.len());
        self.0.extend_from_slice(v.as_bytes());
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn f64(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn len(&mut self) -> Option<usize> {
        self.u32().map(|v| v as usize)
    }
    fn str(&mut self) -> Option<String> {
        let n = self.len()?;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
}
