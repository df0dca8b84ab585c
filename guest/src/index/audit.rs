//! Collection health (`skills-mcp audit`, issue 39 part 2): for every skill, the skills that
//! compete with it for the requests meant for it, and what is wrong with the collection.
//!
//! The requests meant for a skill are its eval queries when the caller gives them (the host
//! reads them), else requests derived from its own text ([`Index::audit_requests`]): its name
//! in words, its description (the first 60 words), each sentence of it, its keywords and its
//! first body headings. Each request is searched as
//! `search` does and decided as `route` does ([`route::decision`]: the same scorer,
//! configuration and collection). Another skill *wins* a request when it scores above the
//! skill, and *ties* it when the router lists it among the candidates of an ambiguous outcome
//! (the two cannot be told apart); only skills scoring at least `min_score` count. A
//! competitor's `strength` is the share of the skill's requests it wins or ties. The 3 kept
//! are the closest: among the first [`AUDIT_HITS`] hits of the most of the skill's requests;
//! equally close ones by the requests they win or tie, then by their reach (among the hits of
//! how many skills' requests they are: the broader first), their summed score, then skill path
//! ([`AuditParams`]). They are listed strongest first, each with the words of
//! those requests both skills match (`shared`) and those only one of them matches
//! (`separating`), from the per-field evidence `search --explain` shows ([`Index::explain`]).
//!
//! Findings:
//! - `unreachable`: the skill ranks first (alone or tied at the top score) on none of its
//!   requests;
//! - `hijacker`: the skill ranks first (above the skill they are meant for) on requests meant
//!   for [`HIJACK_MIN_SKILLS`] or more other skills (over-broad);
//! - `duplicate`: its description and another's are near-identical (at least
//!   [`DUPLICATE_SIMILARITY`] of their terms in common), the same skill in two roots or
//!   repositories most often.
//!
//! Skills come worst first: by their findings (unreachable, duplicate, hijacker), then by the
//! strength of their strongest competitor, then by skill path.

use super::*;

/// Most competitors kept per skill.
pub const MAX_COMPETITORS: usize = 3;
/// Hits read per request: the skills ranked below them neither win nor tie.
pub const AUDIT_HITS: u32 = 10;
/// Most requests derived from one skill's text.
pub const MAX_DERIVED_REQUESTS: usize = 20;
/// A skill ranking first on requests of this many other skills is reported as over-broad.
pub const HIJACK_MIN_SKILLS: usize = 5;
/// Share of common description terms (of the union) from which two descriptions are
/// near-identical.
pub const DUPLICATE_SIMILARITY: f64 = 0.9;
/// Words of the description taken as one request.
const DESCRIPTION_WORDS: usize = 60;
/// Words of a sentence taken as one request.
const SENTENCE_WORDS: usize = 30;
/// Fewest words of a sentence taken as a request of its own.
const SENTENCE_MIN_WORDS: usize = 3;
/// Most body headings taken as requests.
const HEADING_REQUESTS: usize = 4;
/// Words of a heading taken as one request.
const HEADING_WORDS: usize = 12;
/// Fewest words of a heading taken as a request.
const HEADING_MIN_WORDS: usize = 2;
/// Headings an index keeps for the audit (more than it takes: some repeat earlier requests).
const KEPT_HEADINGS: usize = 2 * HEADING_REQUESTS;
/// Requests explained per competitor for its `shared` and `separating` words.
const EVIDENCE_REQUESTS: usize = 3;
/// Most `shared` and most `separating` words per competitor.
const EVIDENCE_WORDS: usize = 8;
/// Most skills named in a finding's message.
const NAMED_IN_MESSAGE: usize = 3;

/// Requests given for one skill (its eval queries), used instead of derived ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRequests {
    pub skill_path: String,
    pub requests: Vec<String>,
}

/// A skill that wins or ties requests meant for another.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditCompetitor {
    pub skill_path: String,
    /// Share of the requests meant for the audited skill this one wins or ties (0..=1).
    pub strength: f64,
    /// Request words both skills match, most weighty first.
    pub shared: Vec<String>,
    /// Request words only one of the two matches, most weighty first.
    pub separating: Vec<String>,
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AuditFindingKind {
    /// Never ranks first on its own requests.
    Unreachable,
    /// Its description is near-identical to another skill's.
    Duplicate,
    /// Ranks first on requests meant for many other skills.
    Hijacker,
}

impl AuditFindingKind {
    /// The kind as `--json` and the text report name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unreachable => "unreachable",
            Self::Duplicate => "duplicate",
            Self::Hijacker => "hijacker",
        }
    }

    /// How much it weighs in the report's order (worst first).
    fn weight(self) -> u32 {
        match self {
            Self::Unreachable => 4,
            Self::Duplicate => 3,
            Self::Hijacker => 2,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AuditFinding {
    pub kind: AuditFindingKind,
    pub message: String,
}

/// One skill's audit.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditSkill {
    pub skill_path: String,
    /// How many requests were meant for it.
    pub requests: u32,
    /// Whether they were derived from its text (no requests were given for it).
    pub derived: bool,
    /// At most [`MAX_COMPETITORS`], strongest first.
    pub competitors: Vec<AuditCompetitor>,
    pub findings: Vec<AuditFinding>,
}

/// How an audit names competitors: the shipped choices are [`AuditParams::default`]; the
/// others are kept to measure ideas against them (`eval_batch --audit`, `AUDIT_*` variables;
/// `benches/eval/audit_ideas.sh`).
#[derive(Debug, Clone, PartialEq)]
pub struct AuditParams {
    /// Hits read per request ([`AUDIT_HITS`]).
    pub hits: u32,
    /// Body headings taken as requests ([`HEADING_REQUESTS`]).
    pub headings: usize,
    /// Whether closeness is mutual (only [`Index::audit`], which searches every skill's
    /// requests): 0, no; 1, the requests of the other skill among whose hits this one is
    /// count as close too; 2, they break ties of closeness.
    pub mutual: u8,
    /// Competitors kept ([`MAX_COMPETITORS`]).
    pub keep: usize,
    /// How equally close rivals (among the hits of as many requests) are ordered: 0 (the
    /// shipped one), by requests won or tied, then by their **reach** (the number of skills
    /// among whose requests' hits they are, the broader first), then summed score; 1, by the
    /// summed margin (the skill's own score less the rival's), the smaller first; 2, by reach
    /// alone, then the path (it names one more of the dev requests' thieves, but can drop a
    /// rival that wins requests for a broad near miss: not shipped); 3, by requests won or
    /// tied, then summed score (the first order shipped, without reach).
    /// [`Index::audit_one`] has no reach (it searches one skill's requests): 0 and 2 order
    /// such ties there as 3 does.
    pub order: u8,
    /// Whether each sentence's clauses (split at `,` `:` and brackets) are requests too.
    pub clauses: bool,
}

impl Default for AuditParams {
    fn default() -> Self {
        Self {
            hits: AUDIT_HITS,
            headings: HEADING_REQUESTS,
            mutual: 0,
            keep: MAX_COMPETITORS,
            order: 0,
            clauses: false,
        }
    }
}

/// A skill among the hits of the audited skill's requests, while they are searched.
struct Tally {
    doc: usize,
    /// Requests won or tied.
    count: u32,
    /// Requests among whose first [`AUDIT_HITS`] hits it is (how close it comes).
    near: u32,
    /// Requests of the other skill among whose hits the audited one is (with
    /// [`AuditParams::mutual`]).
    back: u32,
    /// Summed margin: the skill's own score (0 when not among the hits) less this one's.
    margin: f64,
    /// Its reach ([`AuditParams::order`]), when every skill's requests were searched.
    reach: Option<u32>,
    /// Sum of its scores on those (the tie-break: the closer rival first).
    score_sum: f64,
    /// The requests it wins or ties, then those it only comes close on (indices into the
    /// skill's requests), for its evidence: the first when there are some, else the others.
    requests: Vec<u32>,
    /// How many of `requests` it wins or ties.
    won: usize,
}

impl Tally {
    /// Keep of its requests only those its evidence explains ([`Index::evidence`]): the
    /// first [`EVIDENCE_REQUESTS`] it wins or ties, else the first it comes close on.
    fn keep_evidence(&mut self) {
        let kept = if self.won > 0 {
            self.won.min(EVIDENCE_REQUESTS)
        } else {
            1
        };
        self.requests.truncate(kept);
        self.won = self.won.min(kept);
    }

    /// Skill `doc`, met for the first time: nothing counted yet.
    fn new(doc: usize) -> Self {
        Tally {
            doc,
            count: 0,
            near: 0,
            back: 0,
            margin: 0.0,
            reach: None,
            score_sum: 0.0,
            requests: Vec::new(),
            won: 0,
        }
    }
}

/// What searching one skill's requests found.
struct Searched {
    tallies: Vec<Tally>,
    /// The skills that win or tie its requests whose descriptions are near-identical to its
    /// own (its `duplicate` findings), in the order of `tallies` when they were made.
    duplicates: Vec<usize>,
    /// Requests it ranks first on (alone or tied at the top).
    wins: u32,
    /// Skills that ranked first instead, with how often.
    taken_by: Vec<(usize, u32)>,
}

impl Index {
    /// The requests an audit derives from a skill's own text (when no eval queries are given
    /// for it): its name in words, the first 60 words of its description, each sentence of the
    /// description of 3 words or more (its first 30 words), its keywords, and the first 4
    /// headings of its body of 2 words or more (their first 12 words); repeats (ignoring case)
    /// left out, at most [`MAX_DERIVED_REQUESTS`].
    pub fn audit_requests(&self, skill_path: &str) -> Result<Vec<String>, Error> {
        let i = self.find(skill_path)?;
        Ok(derived_requests(&self.docs[i], &AuditParams::default()))
    }

    /// Audit every skill of this index (of a view: the skills its caller sees). `given` are
    /// requests meant for some skills (their eval queries): those replace the derived ones
    /// of that skill; entries for skills not in the index are ignored (a view's hidden skills),
    /// requests `search` refuses (empty, too long) are left out. Worst first (see the module
    /// docs).
    pub fn audit(&self, given: &[SkillRequests]) -> Result<Vec<AuditSkill>, Error> {
        self.audit_with(given, &AuditParams::default())
    }

    /// [`Index::audit`] with other choices than the shipped ones (to measure them).
    pub fn audit_with(
        &self,
        given: &[SkillRequests],
        params: &AuditParams,
    ) -> Result<Vec<AuditSkill>, Error> {
        let part = self.audit_part_with(given, 0, 1, params)?;
        Ok(worst_first(self.merge_audit(
            given,
            vec![part],
            params,
            0,
            1,
        )?))
    }

    /// Part `part` of `parts` of [`Index::audit`] (its skills `s` with `s % parts == part`),
    /// for an audit split over engine instances holding copies of this index: their requests
    /// searched, with what the whole audit needs of them (reach, who ranks first), encoded to
    /// be handed to [`Index::audit_merge`] of any copy. `given`: as for [`Index::audit`].
    pub fn audit_part(
        &self,
        given: &[SkillRequests],
        part: u32,
        parts: u32,
    ) -> Result<Vec<u8>, Error> {
        let params = AuditParams::default();
        Ok(self.audit_part_with(given, part, parts, &params)?.encode())
    }

    /// [`Index::audit`] from the parts [`Index::audit_part`] gave, every part of the same
    /// split of a copy of this index with the same `given` requests: the same answer, byte
    /// for byte, as one [`Index::audit`]. A part of another index, a missing or repeated part
    /// is `invalid-argument`.
    pub fn audit_merge(
        &self,
        given: &[SkillRequests],
        parts: &[Vec<u8>],
    ) -> Result<Vec<AuditSkill>, Error> {
        let parts = self.decode_parts(parts)?;
        Ok(worst_first(self.merge_audit(
            given,
            parts,
            &AuditParams::default(),
            0,
            1,
        )?))
    }

    /// Share `share` of `shares` of [`Index::audit_merge`]'s work, for a merge split over
    /// engine instances (each given every part): the entries of the skills `s` with
    /// `s % shares == share` (their competitors' evidence is most of a merge's cost), encoded
    /// to be handed to [`Index::audit_gather`] of any copy. `invalid-argument` as for
    /// [`Index::audit_merge`], and for `share` not below `shares`.
    pub fn audit_merge_share(
        &self,
        given: &[SkillRequests],
        parts: &[Vec<u8>],
        share: u32,
        shares: u32,
    ) -> Result<Vec<u8>, Error> {
        if share >= shares {
            return Err(Error::InvalidArgument(format!(
                "merge share {share} of {shares}: the share must be below the number of shares"
            )));
        }
        let parts = self.decode_parts(parts)?;
        let entries = self.merge_audit(given, parts, &AuditParams::default(), share, shares)?;
        Ok(part::Share {
            fingerprint: self.audit_fingerprint(),
            share,
            shares,
            entries,
        }
        .encode())
    }

    /// [`Index::audit_merge`] from every share of one split of it
    /// ([`Index::audit_merge_share`]): the same answer, byte for byte. A share of another
    /// index, a missing or repeated share is `invalid-argument`.
    pub fn audit_gather(&self, shares: &[Vec<u8>]) -> Result<Vec<AuditSkill>, Error> {
        self.ready()?;
        let fingerprint = self.audit_fingerprint();
        let shares = shares
            .iter()
            .map(|b| part::Share::decode(b, fingerprint))
            .collect::<Result<Vec<_>, _>>()?;
        let split = shares.first().map_or(1, |s| s.shares);
        let mut seen = vec![false; split as usize];
        for s in &shares {
            if s.shares != split || std::mem::replace(&mut seen[s.share as usize], true) {
                return Err(Error::InvalidArgument(format!(
                    "merge share {} of {}: repeated, or of another split than {split} shares",
                    s.share, s.shares
                )));
            }
        }
        if let Some(missing) = seen.iter().position(|&s| !s) {
            return Err(Error::InvalidArgument(format!(
                "merge share {missing} of {split} is missing"
            )));
        }
        Ok(worst_first(
            shares.into_iter().flat_map(|s| s.entries).collect(),
        ))
    }

    /// Encoded parts ([`Index::audit_part`]) of an audit of this index.
    fn decode_parts(&self, parts: &[Vec<u8>]) -> Result<Vec<part::Part>, Error> {
        self.ready()?;
        let fingerprint = self.audit_fingerprint();
        parts
            .iter()
            .map(|b| part::Part::decode(b, fingerprint))
            .collect()
    }

    /// What identifies this index's skills in an audit's parts (their number and paths).
    fn audit_fingerprint(&self) -> u64 {
        // FNV-1a over the skill paths, each ended by a 0 byte.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for d in &self.docs {
            for &b in d.skill_path.as_bytes().iter().chain(&[0]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        h ^ (self.docs.len() as u64)
    }

    /// The given requests `search` takes, by skill (for a skill given twice, the last of those
    /// that leave some; skills not in this index left out).
    fn given_requests(&self, given: &[SkillRequests]) -> HashMap<usize, Vec<String>> {
        let mut out = HashMap::new();
        for g in given {
            let Some(i) = self.position(&g.skill_path) else {
                continue;
            };
            let wanted = searchable(&g.requests);
            if !wanted.is_empty() {
                out.insert(i, wanted);
            }
        }
        out
    }

    /// The requests meant for skill `s` (taken from `wanted`, [`Index::given_requests`], else
    /// derived from its text), and whether they were derived.
    fn requests_for(
        &self,
        s: usize,
        wanted: &mut HashMap<usize, Vec<String>>,
        params: &AuditParams,
    ) -> (Vec<String>, bool) {
        match wanted.remove(&s) {
            Some(w) => (w, false),
            None => (derived_requests(&self.docs[s], params), true),
        }
    }

    /// Search the requests of part `part` of `parts` of the skills (see [`Index::audit_part`]).
    /// Each skill's tallies are cut to those that may be kept once reach is known (and those
    /// that win or tie, for the `duplicate` findings); the reach is counted before the cut.
    fn audit_part_with(
        &self,
        given: &[SkillRequests],
        part: u32,
        parts: u32,
        params: &AuditParams,
    ) -> Result<part::Part, Error> {
        self.ready()?;
        if parts == 0 || part >= parts {
            return Err(Error::InvalidArgument(format!(
                "audit part {part} of {parts}: the part must be below the number of parts"
            )));
        }
        let n = self.docs.len();
        // (the requests of this part's skills only)
        let mut wanted = self.given_requests(given);
        let mut reach = vec![0u32; n];
        let mut skills = Vec::new();
        for s in (part as usize..n).step_by(parts as usize) {
            let (requests, _) = self.requests_for(s, &mut wanted, params);
            let mut found = self.search_requests(s, &requests, params);
            for t in &found.tallies {
                reach[t.doc] += 1;
            }
            // (closeness counted both ways needs every tally of every skill)
            if params.mutual == 0 {
                cut(&mut found.tallies, params);
            }
            for t in &mut found.tallies {
                t.keep_evidence();
            }
            skills.push((s, found));
        }
        Ok(part::Part {
            fingerprint: self.audit_fingerprint(),
            part,
            parts,
            reach,
            skills,
        })
    }

    /// The entries of share `share` of `shares` of the audit from all its parts (see
    /// [`Index::audit_merge`]): those of the skills `s` with `s % shares == share`, in index
    /// order.
    fn merge_audit(
        &self,
        given: &[SkillRequests],
        parts: Vec<part::Part>,
        params: &AuditParams,
        share: u32,
        shares: u32,
    ) -> Result<Vec<part::Entry>, Error> {
        self.ready()?;
        let n = self.docs.len();
        let split = parts.first().map_or(1, |p| p.parts);
        let mut seen = vec![false; split as usize];
        for p in &parts {
            if p.parts != split || std::mem::replace(&mut seen[p.part as usize], true) {
                return Err(Error::InvalidArgument(format!(
                    "audit part {} of {}: repeated, or of another split than {split} parts",
                    p.part, p.parts
                )));
            }
        }
        if let Some(missing) = seen.iter().position(|&s| !s) {
            return Err(Error::InvalidArgument(format!(
                "audit part {missing} of {split} is missing"
            )));
        }
        let mut reach = vec![0u32; n];
        let mut searched: Vec<Option<Searched>> = (0..n).map(|_| None).collect();
        for p in parts {
            if p.reach.len() != n {
                return Err(Error::InvalidArgument(
                    "an audit part of an index of another size".into(),
                ));
            }
            for (r, c) in reach.iter_mut().zip(&p.reach) {
                *r += c;
            }
            for (s, found) in p.skills {
                searched[s] = Some(found);
            }
        }
        let mut searched: Vec<Searched> = searched
            .into_iter()
            .map(|f| f.ok_or_else(|| Error::InvalidArgument("an audit part lacks a skill".into())))
            .collect::<Result<_, _>>()?;
        if params.mutual > 0 {
            mutual(&mut searched);
            // (the tallies are whole: the reach counts those closeness both ways added)
            reach.fill(0);
            for found in &searched {
                for t in &found.tallies {
                    reach[t.doc] += 1;
                }
            }
        }
        if params.order != 1 && params.order != 3 {
            // Each skill's reach: among the hits of how many skills' requests it is.
            for found in &mut searched {
                for t in &mut found.tallies {
                    t.reach = Some(reach[t.doc]);
                }
            }
        }
        // Who ranks first on requests meant for whom.
        let mut victims: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (s, found) in searched.iter().enumerate() {
            for &(c, _) in &found.taken_by {
                victims[c].push(s);
            }
        }
        let mut wanted = self.given_requests(given);
        let mut out: Vec<part::Entry> = Vec::new();
        for (s, found) in searched.into_iter().enumerate() {
            if s % shares as usize != share as usize {
                continue;
            }
            let (requests, derived) = self.requests_for(s, &mut wanted, params);
            out.push(self.skill_report(s, &requests, derived, found, &victims[s], params));
        }
        Ok(out)
    }

    /// One skill's audit, as [`Index::audit`] gives it, without searching the other skills'
    /// requests (for an editor: one skill's cost, whatever the collection's size): `given`
    /// are the requests meant for it (its eval queries; those `search` refuses left out),
    /// derived from its text when none are left. It has no `hijacker` finding: that one needs
    /// the requests of every other skill.
    pub fn audit_one(&self, skill_path: &str, given: &[String]) -> Result<AuditSkill, Error> {
        self.ready()?;
        let s = self.find(skill_path)?;
        let wanted = searchable(given);
        let params = AuditParams::default();
        let (requests, derived) = if wanted.is_empty() {
            (derived_requests(&self.docs[s], &params), true)
        } else {
            (wanted, false)
        };
        let found = self.search_requests(s, &requests, &params);
        Ok(self
            .skill_report(s, &requests, derived, found, &[], &params)
            .2)
    }

    /// Skill `s`'s audit from what searching its requests found (`victims`: the skills whose
    /// requests it ranks first on), with its weight in the report's order (its findings' and
    /// its strongest competitor's strength).
    fn skill_report(
        &self,
        s: usize,
        requests: &[String],
        derived: bool,
        found: Searched,
        victims: &[usize],
        params: &AuditParams,
    ) -> (u32, f64, AuditSkill) {
        let asked = requests.len();
        let mut findings = Vec::new();
        if asked > 0 && found.wins == 0 {
            findings.push(self.unreachable(asked, &found.taken_by));
        }
        for &d in &found.duplicates {
            if let Some(f) = self.duplicate(s, d) {
                findings.push(f);
            }
        }
        if victims.len() >= HIJACK_MIN_SKILLS {
            findings.push(self.hijacker(victims));
        }
        let tallies = self.closest(found.tallies, params);
        // (the skill's own words of each request explained, and the request prepared, kept
        // for the next competitor: most share the first request they come close on)
        let mut explained = Explained::new(requests);
        let competitors: Vec<AuditCompetitor> = tallies
            .iter()
            .map(|t| {
                let (shared, separating) = self.evidence(s, t, &mut explained);
                AuditCompetitor {
                    skill_path: self.docs[t.doc].skill_path.clone(),
                    strength: f64::from(t.count) / asked.max(1) as f64,
                    shared,
                    separating,
                }
            })
            .collect();
        let weight = findings.iter().map(|f| f.kind.weight()).sum();
        let strongest = competitors.first().map_or(0.0, |c| c.strength);
        (
            weight,
            strongest,
            AuditSkill {
                skill_path: self.docs[s].skill_path.clone(),
                requests: u32::try_from(asked).unwrap_or(u32::MAX),
                derived,
                competitors,
                findings,
            },
        )
    }

    /// The competitors kept of those tallied ([`MAX_COMPETITORS`]): the closest (among the
    /// hits of the most requests; then as [`AuditParams::order`] says: by default the most
    /// requests won or tied, the broader reach, the higher summed score, the skill path),
    /// listed strongest first (most requests won or tied, then closest).
    fn closest(&self, mut tallies: Vec<Tally>, params: &AuditParams) -> Vec<Tally> {
        let path = |t: &Tally| self.docs[t.doc].skill_path.as_str();
        let near = |t: &Tally| {
            if params.mutual == 1 {
                t.near + t.back
            } else {
                t.near
            }
        };
        let closer = |a: &Tally, b: &Tally| {
            let first = near(b).cmp(&near(a));
            let first = if params.mutual == 2 {
                first.then(b.back.cmp(&a.back))
            } else {
                first
            };
            let reach = b.reach.cmp(&a.reach);
            let then = match params.order {
                1 => a.margin.total_cmp(&b.margin),
                2 if a.reach.is_some() => reach,
                3 => b
                    .count
                    .cmp(&a.count)
                    .then(b.score_sum.total_cmp(&a.score_sum)),
                _ => b
                    .count
                    .cmp(&a.count)
                    .then(reach)
                    .then(b.score_sum.total_cmp(&a.score_sum)),
            };
            first.then(then).then_with(|| path(a).cmp(path(b)))
        };
        tallies.sort_by(closer);
        tallies.truncate(params.keep);
        if params.keep > MAX_COMPETITORS {
            return tallies;
        }
        tallies.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| closer(a, b)));
        tallies
    }

    /// Search each request meant for skill `s` and count who wins or ties it, and who comes
    /// close (is among its hits).
    fn search_requests(&self, s: usize, requests: &[String], params: &AuditParams) -> Searched {
        let mut found = Searched {
            tallies: Vec::new(),
            duplicates: Vec::new(),
            wins: 0,
            taken_by: Vec::new(),
        };
        let limit = params.hits.max(self.config.max_results);
        // Where each skill's tally is in `found.tallies`.
        let mut slot: HashMap<usize, usize> = HashMap::new();
        for (j, request) in requests.iter().enumerate() {
            // A request `search` refuses is one nobody wins (derived ones always pass).
            let Ok(hits) = self.scored(request, limit, false) else {
                continue;
            };
            let scores: Vec<f64> = hits.iter().map(|h| h.score).collect();
            let decision = route::decision(&self.config, &scores);
            let own = hits.iter().position(|h| h.doc == s);
            // This skill wins the request when it ranks first (or ties the first's score);
            // else the first takes it.
            match hits.first().filter(|h| h.score >= self.config.min_score) {
                Some(top) if top.doc == s || own.is_some_and(|o| hits[o].score == top.score) => {
                    found.wins += 1;
                }
                Some(top) => match found.taken_by.iter_mut().find(|(d, _)| *d == top.doc) {
                    Some((_, k)) => *k += 1,
                    None => found.taken_by.push((top.doc, 1)),
                },
                None => {}
            }
            // Its competitors on it: the skills that win it (score above this skill) or tie it
            // (the router lists them as candidates of an ambiguous outcome).
            let floor = own.map_or(self.config.min_score, |o| hits[o].score);
            let mut rivals: Vec<usize> = (0..own.unwrap_or(hits.len()))
                .filter(|&i| hits[i].score >= self.config.min_score && hits[i].score > floor)
                .collect();
            if let route::Decision::Ambiguous(candidates) = decision {
                rivals.extend(candidates);
            }
            rivals.sort_unstable();
            rivals.dedup();
            for (i, hit) in hits.iter().enumerate() {
                if hit.doc == s {
                    continue;
                }
                let at = *slot.entry(hit.doc).or_insert(found.tallies.len());
                let t = match found.tallies.get_mut(at) {
                    Some(t) => t,
                    None => {
                        found.tallies.push(Tally::new(hit.doc));
                        found.tallies.last_mut().expect("just pushed")
                    }
                };
                let j = u32::try_from(j).unwrap_or(u32::MAX);
                t.near += 1;
                t.score_sum += hit.score;
                t.margin += own.map_or(0.0, |o| hits[o].score) - hit.score;
                if rivals.binary_search(&i).is_ok() {
                    t.count += 1;
                    t.requests.insert(t.won, j);
                    t.won += 1;
                } else {
                    t.requests.push(j);
                }
            }
        }
        found.duplicates = found
            .tallies
            .iter()
            .filter(|t| t.count > 0 && self.duplicate(s, t.doc).is_some())
            .map(|t| t.doc)
            .collect();
        found
    }

    /// The words of `t`'s requests both skills match and those only one of them matches,
    /// weightiest first, from `explain` of each.
    /// (`explained`: skill `s`'s requests, with what was explained of them so far.)
    fn evidence(
        &self,
        s: usize,
        t: &Tally,
        explained: &mut Explained,
    ) -> (Vec<String>, Vec<String>) {
        let mut shared: Vec<(String, f64)> = Vec::new();
        let mut separating: Vec<(String, f64)> = Vec::new();
        let add = |list: &mut Vec<(String, f64)>, word: &str, c: f64| match list
            .iter_mut()
            .find(|(w, _)| w == word)
        {
            Some((_, total)) => *total += c,
            None => list.push((word.to_owned(), c)),
        };
        // The requests it wins or ties; for one that only comes close, the first it comes
        // close on (every skill has such competitors: their evidence is most of the audit's
        // cost).
        let evidence = if t.won > 0 {
            &t.requests[..t.won.min(EVIDENCE_REQUESTS)]
        } else {
            &t.requests[..t.requests.len().min(1)]
        };
        for &j in evidence {
            let j = j as usize;
            if j >= explained.requests.len() {
                continue;
            }
            if explained.own[j].is_none() {
                explained.own[j] = Some(self.credited(explained, j, s));
            }
            let other = self.credited(explained, j, t.doc);
            let (Some(Some(own)), Some(other)) = (&explained.own[j], other) else {
                continue;
            };
            for (w, c) in own {
                match other.iter().find(|(o, _)| o == w) {
                    Some((_, d)) => add(&mut shared, w, c + d),
                    None => add(&mut separating, w, *c),
                }
            }
            for (w, c) in &other {
                if !own.iter().any(|(o, _)| o == w) {
                    add(&mut separating, w, *c);
                }
            }
        }
        let words = |mut list: Vec<(String, f64)>| -> Vec<String> {
            list.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            list.into_iter()
                .take(EVIDENCE_WORDS)
                .map(|(w, _)| w)
                .collect()
        };
        (words(shared), words(separating))
    }

    /// The words `explain` credits skill `doc` with for request `j` of `explained` ([`None`]
    /// when it cannot explain it): through the ranker's own account of a prepared request
    /// (prepared once for the skill and all its competitors), or `explain` itself for
    /// keyword matching.
    fn credited(&self, explained: &mut Explained, j: usize, doc: usize) -> Option<ExplainedWords> {
        let request = &explained.requests[j];
        match (&self.config.algorithm, &self.search_index) {
            (Algorithm::Ranked, Some(index)) => {
                check_query(request).ok()?;
                let prepared =
                    explained.prepared[j].get_or_insert_with(|| index.prepare_request(request));
                Some(explained_words(&index.explain_terms(prepared, doc)))
            }
            _ => self
                .explain(request, &self.docs[doc].skill_path)
                .ok()
                .map(|e| explained_words(&e.terms)),
        }
    }

    fn unreachable(&self, asked: usize, taken_by: &[(usize, u32)]) -> AuditFinding {
        let mut by: Vec<&(usize, u32)> = taken_by.iter().collect();
        by.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then_with(|| self.docs[a.0].skill_path.cmp(&self.docs[b.0].skill_path))
        });
        let instead = by
            .iter()
            .take(NAMED_IN_MESSAGE)
            .map(|(d, k)| format!("{} ({k})", self.docs[*d].skill_path))
            .collect::<Vec<_>>();
        let message = if instead.is_empty() {
            format!(
                "ranks first on none of the {asked} requests meant for it: no skill reaches the minimum score on them"
            )
        } else {
            format!(
                "ranks first on none of the {asked} requests meant for it; first instead: {}",
                instead.join(", ")
            )
        };
        AuditFinding {
            kind: AuditFindingKind::Unreachable,
            message,
        }
    }

    fn hijacker(&self, victims: &[usize]) -> AuditFinding {
        let mut names: Vec<&str> = victims
            .iter()
            .map(|&v| self.docs[v].skill_path.as_str())
            .collect();
        names.sort_unstable();
        let more = names.len().saturating_sub(NAMED_IN_MESSAGE);
        let mut named = names[..names.len().min(NAMED_IN_MESSAGE)].join(", ");
        if more > 0 {
            named.push_str(&format!(" and {more} more"));
        }
        AuditFinding {
            kind: AuditFindingKind::Hijacker,
            message: format!(
                "ranks first on requests meant for {} other skills ({named}): over-broad; say in its description what it is not for",
                victims.len()
            ),
        }
    }

    /// A finding on skill `s` when its description and `other`'s are near-identical.
    fn duplicate(&self, s: usize, other: usize) -> Option<AuditFinding> {
        let index = self.search_index.as_ref()?;
        let similarity =
            term_similarity(index.description_terms(s), index.description_terms(other))?;
        if similarity < DUPLICATE_SIMILARITY {
            return None;
        }
        let root = |d: usize| {
            self.roots
                .get(self.metas[d].root as usize)
                .map_or("", |r| r.name.as_str())
        };
        let (first, second) = if self.metas[s].root <= self.metas[other].root {
            (s, other)
        } else {
            (other, s)
        };
        let roots = if self.metas[first].root == self.metas[second].root {
            format!("both in root `{}`", root(first))
        } else {
            format!("roots `{}` and `{}`", root(first), root(second))
        };
        Some(AuditFinding {
            kind: AuditFindingKind::Duplicate,
            message: format!(
                "description near-identical to {}'s ({:.0}% of their terms in common; {roots}): keep one, or say how they differ",
                self.docs[other].skill_path,
                similarity * 100.0
            ),
        })
    }
}

/// Leave out the tallies that cannot be among the [`AuditParams::keep`] closest whatever
/// their reach: those behind the keep-th on the part of the order that comes before reach
/// (closeness, then for orders 0 and 3 the requests won or tied). Order kept. (The
/// `duplicate` findings, which look at every skill that wins or ties, are found before:
/// [`Searched::duplicates`].)
fn cut(tallies: &mut Vec<Tally>, params: &AuditParams) {
    if tallies.len() <= params.keep {
        return;
    }
    let key = |t: &Tally| {
        if matches!(params.order, 0 | 3) {
            (t.near, t.count)
        } else {
            (t.near, 0)
        }
    };
    let mut keys: Vec<(u32, u32)> = tallies.iter().map(key).collect();
    keys.sort_unstable_by(|a, b| b.cmp(a));
    let Some(&last) = keys.get(params.keep.saturating_sub(1)) else {
        return;
    };
    tallies.retain(|t| key(t) >= last);
}

/// The audit's entries, worst first: by their findings' weight, then their strongest
/// competitor's strength, then skill path.
fn worst_first(mut entries: Vec<part::Entry>) -> Vec<AuditSkill> {
    entries.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.total_cmp(&a.1))
            .then_with(|| a.2.skill_path.cmp(&b.2.skill_path))
    });
    entries.into_iter().map(|(_, _, a)| a).collect()
}

/// Mutual closeness ([`AuditParams::mutual`]): each skill's tally of another gets how many of
/// the other's requests it is among the hits of (a tally made when it has none).
fn mutual(searched: &mut [Searched]) {
    let mut back: Vec<(usize, usize, u32)> = Vec::new();
    for (s, found) in searched.iter().enumerate() {
        for t in &found.tallies {
            back.push((t.doc, s, t.near));
        }
    }
    for (c, s, near) in back {
        let tallies = &mut searched[c].tallies;
        let at = match tallies.iter().position(|t| t.doc == s) {
            Some(at) => at,
            None => {
                tallies.push(Tally::new(s));
                tallies.len() - 1
            }
        };
        tallies[at].back += near;
    }
}

/// The given requests `search` takes (not empty, not too long); the others are left out.
fn searchable(given: &[String]) -> Vec<String> {
    given
        .iter()
        .filter(|q| check_query(q).is_ok())
        .cloned()
        .collect()
}

/// The requests derived from a skill's text (see [`Index::audit_requests`]).
fn derived_requests(doc: &SearchDoc, params: &AuditParams) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    push_request(
        &mut out,
        &doc.name.replace(['-', '_'], " "),
        SENTENCE_WORDS,
        1,
    );
    push_request(&mut out, &doc.description, DESCRIPTION_WORDS, 1);
    for sentence in sentences(&doc.description) {
        push_request(&mut out, sentence, SENTENCE_WORDS, SENTENCE_MIN_WORDS);
    }
    if params.clauses {
        for sentence in sentences(&doc.description) {
            for clause in sentence.split([',', ':', '(', ')']) {
                push_request(&mut out, clause, SENTENCE_WORDS, SENTENCE_MIN_WORDS);
            }
        }
    }
    push_request(&mut out, &doc.keywords.join(" "), SENTENCE_WORDS, 1);
    // What the body is about, as its first headings say it (one-word ones such as
    // "Overview" say nothing of it).
    let limit = out.len() + params.headings;
    for heading in doc.headings.lines() {
        if out.len() >= limit {
            break;
        }
        push_request(&mut out, heading, HEADING_WORDS, HEADING_MIN_WORDS);
    }
    out
}

/// What an index keeps of a skill's headings once they are analysed (the rest of the text only
/// ranking reads is dropped): the first [`KEPT_HEADINGS`] of [`HEADING_MIN_WORDS`] words or
/// more, each cut to [`HEADING_WORDS`], for [`derived_requests`].
pub(super) fn kept_headings(headings: &str) -> String {
    headings
        .lines()
        .map(|h| h.split_whitespace().take(HEADING_WORDS).collect::<Vec<_>>())
        .filter(|words| words.len() >= HEADING_MIN_WORDS)
        .take(KEPT_HEADINGS)
        .map(|words| words.join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Add the first `max_words` words of `text` as a request: not when it has fewer than
/// `min_words`, repeats one (ignoring case), `search` would refuse it or there are
/// [`MAX_DERIVED_REQUESTS`] already.
fn push_request(out: &mut Vec<String>, text: &str, max_words: usize, min_words: usize) {
    let words: Vec<&str> = text.split_whitespace().take(max_words).collect();
    if words.len() < min_words || out.len() >= MAX_DERIVED_REQUESTS {
        return;
    }
    let request = words.join(" ");
    if check_query(&request).is_ok() && !out.iter().any(|r| r.eq_ignore_ascii_case(&request)) {
        out.push(request);
    }
}

/// The sentences of a text: split after `.`, `!` or `?` followed by white space (not after an
/// abbreviation with dots inside, such as `e.g.`), at `;` and at line breaks.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next_blank = chars.peek().is_none_or(|&(_, n)| n.is_whitespace());
        let word = text[start..i]
            .rsplit(char::is_whitespace)
            .next()
            .unwrap_or("");
        let end = match c {
            '.' => next_blank && !word.contains('.'),
            '!' | '?' => next_blank,
            ';' | '\n' => true,
            _ => false,
        };
        if end {
            let piece = text[start..i].trim();
            if !piece.is_empty() {
                out.push(piece);
            }
            start = i + c.len_utf8();
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

/// The request words `explain` credits, with their contributions ([`explained_words`]).
type ExplainedWords = Vec<(String, f64)>;

/// A skill's requests while its competitors' evidence is gathered: each prepared once for the
/// ranker, and the skill's own words explained for each (`None` until asked for; then `None`
/// again when it could not be explained).
struct Explained<'a> {
    requests: &'a [String],
    prepared: Vec<Option<rank::Prepared>>,
    own: Vec<Option<Option<ExplainedWords>>>,
}

impl<'a> Explained<'a> {
    fn new(requests: &'a [String]) -> Self {
        Self {
            requests,
            prepared: requests.iter().map(|_| None).collect(),
            own: vec![None; requests.len()],
        }
    }
}

/// Each request word `explain` credits, with its total contribution (a word matched through
/// an expansion under the word as written; pairs left out: their words are counted alone).
fn explained_words(terms: &[ExplainTerm]) -> ExplainedWords {
    let mut out: Vec<(String, f64)> = Vec::new();
    for t in terms {
        if t.term.ends_with(" (pair)") {
            continue;
        }
        let word = t.term.split(" ~").next().unwrap_or_default().to_lowercase();
        if word.is_empty() {
            continue;
        }
        match out.iter_mut().find(|(w, _)| *w == word) {
            Some((_, c)) => *c += t.contribution,
            None => out.push((word, t.contribution)),
        }
    }
    out
}

/// Share of distinct terms two term lists have in common (of their union); `None` when either
/// has fewer than 3 distinct terms (too short to call near-identical).
fn term_similarity(a: &[u32], b: &[u32]) -> Option<f64> {
    let set = |t: &[u32]| {
        let mut v = t.to_vec();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (a, b) = (set(a), set(b));
    if a.len() < 3 || b.len() < 3 {
        return None;
    }
    let common = a.iter().filter(|t| b.binary_search(t).is_ok()).count();
    Some(common as f64 / (a.len() + b.len() - common) as f64)
}

mod part;
#[cfg(test)]
mod tests;
