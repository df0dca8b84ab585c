//! Scoring a request over any collection ([`Statistics`]): slots and their alternatives, BM25F,
//! pairs, normalisation, and the one order of results.

use super::*;

/// The longest prefix of `s` of at most `max` bytes ending on a character boundary.
pub fn truncate_utf8(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `ln(1 + (N - df + 0.5) / (df + 0.5))`: positive even for a term every document has.
pub fn idf_of(n_docs: usize, df: usize) -> f64 {
    let n = n_docs as f64;
    let df = df as f64;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// tf~ of a posting, given its document's field norms.
pub(super) fn pseudo_tf(norm: &[f64; NUM_FIELDS], tf: &[u16; NUM_FIELDS]) -> f64 {
    norm.iter()
        .zip(tf)
        .filter(|(_, tf)| **tf != 0)
        .map(|(n, tf)| f64::from(*tf) * n)
        .sum()
}

/// [`pseudo_tf`] when the only non-zero frequency is `tf`, in a field of norm `norm` (the
/// same sum of one term, so the same bits).
#[inline]
pub(super) fn pseudo_tf_one(norm: f64, tf: u8) -> f64 {
    std::iter::once(f64::from(tf) * norm).sum()
}

/// The set of characters of `s`, each as bit `code point % 64` (typo candidates are compared
/// by these before [`within_one_edit`]).
pub(super) fn char_signature(s: &str) -> u64 {
    s.chars().fold(0, |m, c| m | 1 << (u32::from(c) % 64))
}

/// Whether `a` and `b` are at most one edit apart (insertion, deletion, substitution or
/// transposition of adjacent characters).
pub fn within_one_edit(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        return one_edit(a.as_bytes(), b.as_bytes());
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    one_edit(&a, &b)
}

pub(super) fn one_edit<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    let (la, lb) = (a.len(), b.len());
    if la.abs_diff(lb) > 1 {
        return false;
    }
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if prefix == la && prefix == lb {
        return true;
    }
    let (ra, rb) = (&a[prefix..], &b[prefix..]);
    if la == lb {
        // substitution or transposition
        ra[1..] == rb[1..]
            || (ra.len() >= 2 && ra[0] == rb[1] && ra[1] == rb[0] && ra[2..] == rb[2..])
    } else if la > lb {
        ra[1..] == *rb
    } else {
        *ra == rb[1..]
    }
}

impl SearchIndex {
    /// Text of term `t`.
    pub(super) fn term(&self, t: u32) -> &str {
        self.vocab.get(t)
    }

    /// Number of term `text`, if indexed.
    pub(super) fn term_id(&self, text: &str) -> Option<u32> {
        if !self.term_table.is_empty() {
            return self.find_term(text);
        }
        let n = self.vocab.ends.len() as u32;
        let mut lo = 0u32;
        let mut hi = n;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match crate::bytes::cmp_str(self.term(mid), text) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The first term not less than `text`.
    pub(super) fn term_lower_bound(&self, text: &str) -> u32 {
        let mut lo = 0u32;
        let mut hi = self.vocab.ends.len() as u32;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if crate::bytes::cmp_str(self.term(mid), text) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Postings range of term `t`.
    pub(super) fn range(&self, t: u32) -> std::ops::Range<usize> {
        self.offsets[t as usize] as usize..self.offsets[t as usize + 1] as usize
    }

    /// Position of `doc` in term `t`'s postings.
    pub(super) fn find_posting(&self, t: u32, doc: usize) -> Option<usize> {
        self.docs.find(self.range(t), doc)
    }

    /// Per-field frequencies of posting `i` of term `t`.
    /// (The bytes before it are stepped over from the term's first posting, or from the
    /// nearest [`TF_SKIP`]-th posting after it: a term of many postings costs at most
    /// [`TF_SKIP`] steps, not one per posting before this one.)
    pub(super) fn posting_tf(&self, t: u32, i: usize) -> [u16; NUM_FIELDS] {
        let first = self.offsets[t as usize] as usize;
        let (mut at, mut pos) = (first, self.tf_offsets[t as usize] as usize);
        let block = i / TF_SKIP;
        if block * TF_SKIP > first {
            let skips = self.tf_skips.get_or_init(|| self.tf_skip_table());
            if let Some(&p) = skips.get(block).filter(|&&p| p as usize >= pos) {
                (at, pos) = (block * TF_SKIP, p as usize);
            }
        }
        for _ in at..i {
            pos += packed_tf_len(&self.tf_bytes[pos..]);
        }
        decode_tf(&self.tf_bytes, &mut pos)
    }

    /// [`SearchIndex::tf_skips`]: the terms' packed frequencies follow each other in
    /// `tf_bytes` as their postings do in `docs` (term by term, each by document).
    fn tf_skip_table(&self) -> Vec<u32> {
        let total = self.offsets.last().map_or(0, |&n| n as usize);
        let mut out = Vec::with_capacity(total / TF_SKIP + 1);
        let mut pos = 0usize;
        for g in 0..total {
            if pos >= self.tf_bytes.len() {
                break;
            }
            if g % TF_SKIP == 0 {
                out.push(pos as u32);
            }
            // (bytes that end inside a posting end the table: the postings after them are
            // found from their term's first)
            let Some(len) = checked_tf_len(&self.tf_bytes[pos..]) else {
                break;
            };
            pos += len;
        }
        out
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn len(&self) -> usize {
        self.n_docs
    }

    pub fn is_empty(&self) -> bool {
        self.n_docs == 0
    }

    /// Number of distinct terms indexed.
    pub fn vocabulary_len(&self) -> usize {
        self.vocab.ends.len()
    }
}

/// The slot of request term `term` (written `surface`; `joined`: a join, not a word) in
/// collection `s`, and the term's number if indexed.
fn slot<S: Statistics>(s: &S, term: &str, surface: &str, joined: bool) -> (Slot, Option<u32>) {
    let p = s.params();
    let mut alts = Vec::with_capacity(8);
    let n = term.chars().count();
    let prefix_min = (n >= p.prefix_min_len && p.prefix_factor > 0.0).then_some(p.prefix_min_len);
    // (expansions first, then the exact term put before them: it comes first)
    let known = s.lookup(term, prefix_min, |id| {
        alts.push(Alt {
            term: id,
            kind: "prefix",
            idf: p.prefix_factor,
        });
    });
    if let Some(id) = known {
        alts.insert(
            0,
            Alt {
                term: id,
                kind: "exact",
                idf: 1.0,
            },
        );
    }
    if known.is_none() && n >= p.typo_min_len && p.typo_factor > 0.0 {
        let l = term.len();
        s.each_typo_near(term, l.saturating_sub(2)..=l + 2, |id| {
            if within_one_edit(s.term(id), term) {
                alts.push(Alt {
                    term: id,
                    kind: "typo",
                    idf: p.typo_factor,
                });
            }
        });
    }
    let idf = known.map_or_else(|| s.unseen_idf(), |id| s.idf(id));
    for alt in &mut alts {
        // never more idf than the request term's own: a prefix or typo expansion to a rare
        // word must not outweigh the word itself (`alt.idf` holds the factor so far)
        alt.idf *= s.idf(alt.term).min(idf);
    }
    let slot = Slot {
        surface: surface.to_owned(),
        weight: if joined { p.joined_weight } else { 1.0 },
        idf,
        word: !joined,
        known: known.is_some(),
        alts,
    };
    (slot, known)
}

/// Analyse a request once against collection `s`: its slots (one per distinct analysed
/// term), its pairs and the ceiling of its raw score.
#[inline(never)]
pub(super) fn prepare<S: Statistics>(s: &S, query: &str) -> Query {
    with_terms(query, s.known_words(), |terms| query_of(s, terms))
}

/// [`prepare`] of the analysed request `terms`.
fn query_of<S: Statistics>(s: &S, terms: &TermList) -> Query {
    // each distinct request term looked up once, for its slot and its pairs
    let mut ids: Vec<Option<u32>> = Vec::with_capacity(terms.len());
    let mut slots: Vec<Slot> = Vec::with_capacity(terms.len());
    // (the first occurrence of each distinct term: a scan of those seen for a short request,
    // a hash table past that)
    let mut firsts: Vec<usize> = Vec::new();
    let mut table: Option<rustc_hash::FxHashMap<&str, usize>> = None;
    for i in 0..terms.len() {
        let term = terms.term(i);
        let seen = match &table {
            Some(table) => table.get(term).copied(),
            None => firsts.iter().copied().find(|&j| terms.term(j) == term),
        };
        if let Some(j) = seen {
            ids.push(ids[j]);
            continue;
        }
        let (slot, id) = slot(s, term, terms.surface(i), terms.joined(i));
        ids.push(id);
        slots.push(slot);
        match &mut table {
            Some(table) => {
                table.insert(term, i);
            }
            None => {
                firsts.push(i);
                if firsts.len() > 32 {
                    table = Some(firsts.iter().map(|&j| (terms.term(j), j)).collect());
                }
            }
        }
    }
    let pairs = pairs(s, terms, &ids);
    let max = slots.iter().map(|s| s.weight * s.idf).sum();
    let words = slots.iter().filter(|s| s.word).count();
    Query {
        slots,
        pairs,
        max,
        words,
    }
}

/// A slot's share of a document's raw score: the best of its alternatives `best`, and whether
/// one of them is in a describing field.
#[inline]
pub(super) fn add_slot(slot: &Slot, best: f64, describes: bool, total: &mut f64, words: &mut u32) {
    *total += slot.weight * best;
    *words += slot_words(slot, describes);
}

/// What a match of `slot` adds to a matched word count ([`finalise`]), in a describing field
/// or not.
#[inline]
pub(super) fn slot_words(slot: &Slot, describes: bool) -> u32 {
    // (a product, not a branch: the flag is a coin toss in the postings loops)
    u32::from(slot.word) * (1 + u32::from(describes) * (DESCRIBING_WORD - 1))
}

/// Bit of slot `i` in a mask of matched slots (none past the 64th).
#[inline]
pub(super) fn slot_bit(i: usize) -> u64 {
    if i < 64 { 1 << i } else { 0 }
}

/// One posting of a slot's alternative for a document: keep the slot's best contribution `c`
/// and whether one is in a describing field (`m`); true for the slot's first posting of the
/// document.
#[inline]
pub(super) fn keep_best(best: &mut f64, describes: &mut bool, c: f64, m: bool) -> bool {
    let first = *best == 0.0;
    if c > *best {
        *best = c;
    }
    *describes |= m;
    first
}

/// Raw scores (before normalisation) and matched word counts of every document of `s`.
pub(super) fn raw_scores<S: Statistics>(s: &S, q: &Query) -> (Vec<f64>, Vec<u32>) {
    let n = s.doc_bound();
    let mut total = vec![0.0f64; n];
    let mut words = vec![0u32; n];
    let mut best = vec![0.0f64; n];
    let mut describes = vec![false; n];
    let mut touched: Vec<u32> = Vec::new();
    for slot in &q.slots {
        for alt in &slot.alts {
            let idf = alt.idf;
            s.each_posting(alt.term, |d, m, sat| {
                if keep_best(&mut best[d], &mut describes[d], idf * f64::from(sat), m) {
                    touched.push(d as u32);
                }
            });
        }
        for &d in &touched {
            let d = d as usize;
            add_slot(slot, best[d], describes[d], &mut total[d], &mut words[d]);
            best[d] = 0.0;
            describes[d] = false;
        }
        touched.clear();
    }
    (total, words)
}

/// Score of a document: `(score, coverage, evidence factor, sort key)`. `raw` is the sum of
/// its slot scores, `pair` that of the pairs it holds, `words` counts the request words it
/// matched, plus [`DESCRIBING_WORD`] - 1 for each matched in a describing field.
///
/// Coverage is `(raw + pair) / max`, capped at 1; the sort key is the same value uncapped
/// (times the evidence factor), so that the rare skills past the cap keep their order.
pub(super) fn finalise(
    params: &Params,
    q: &Query,
    raw: f64,
    pair: f64,
    words: u32,
) -> (f64, f64, f64, f64) {
    let describing = words / DESCRIBING_WORD;
    let all = describing + words % DESCRIBING_WORD;
    // (comparisons, not `f64::max`/`min`: in WebAssembly those are calls; the same values
    // for the numbers compared here, never NaN)
    let share = if q.max > 0.0 {
        let s = (raw + pair) / q.max;
        if s > 0.0 { s } else { 0.0 }
    } else {
        0.0
    };
    let coverage = if share < 1.0 { share } else { 1.0 };
    let evidence = if q.words >= 2 && (all <= 1 || describing == 0) {
        params.single_word_factor
    } else {
        1.0
    };
    (coverage * evidence, coverage, evidence, share * evidence)
}

/// Score and sort key of document `d` (raw score `raw`, matched words `words`) with the
/// bonus of the request pairs it holds, when it holds one: pairs need two request words
/// matched in describing fields.
pub(super) fn with_pairs<S: Statistics>(
    s: &S,
    q: &Query,
    pairs: &mut PairScorer,
    raw: f64,
    words: u32,
    d: usize,
) -> Option<(f64, f64)> {
    if q.pairs.is_empty() || q.max <= 0.0 || words / DESCRIBING_WORD < 2 {
        return None;
    }
    let pair = pairs.score(s, q, d);
    (pair > 0.0).then(|| {
        let (score, _, _, key) = finalise(s.params(), q, raw, pair, words);
        (score, key)
    })
}

/// The order of results: sort key (higher first), then priority (higher first), then skill
/// path. `a` and `b` are (document, sort key).
#[inline]
pub(super) fn order<S: Statistics>(s: &S, a: (usize, f64), b: (usize, f64)) -> Ordering {
    b.1.partial_cmp(&a.1)
        .unwrap_or(Ordering::Equal)
        .then_with(|| s.priority(b.0).cmp(&s.priority(a.0)))
        // (8 bytes at a time: wasi-libc's `memcmp` costs about 20 instructions a byte in the
        // component, and skills of equal keys, copies in several packs, are frequent)
        .then_with(|| crate::bytes::cmp_str(s.path(a.0), s.path(b.0)))
}

/// Every document of `s` matching `q`, in document order: (document, score normalised to
/// 0..=1), and each document's sort key. Pair bonuses are added to those that could then be
/// among the `limit` best (exact: the others stay below them whatever they hold).
pub(super) fn score_all<S: Statistics>(
    s: &S,
    q: &Query,
    limit: usize,
) -> (Vec<(usize, f64)>, Vec<f64>) {
    if q.slots.is_empty() || limit == 0 {
        return (Vec::new(), Vec::new());
    }
    let params = s.params();
    let (raw, words) = raw_scores(s, q);
    let mut out: Vec<(usize, f64)> = Vec::new();
    let mut key = vec![0.0f64; raw.len()];
    for (d, (&r, &w)) in raw.iter().zip(&words).enumerate() {
        if r > 0.0 {
            let (score, _, _, k) = finalise(params, q, r, 0.0, w);
            key[d] = k;
            out.push((d, score));
        }
    }
    if !q.pairs.is_empty() && q.max > 0.0 {
        // A skill gains at most `bound` from pairs: only those that could then reach the
        // `limit` best are looked at.
        let bound: f64 = q.pairs.iter().map(|p| p.weight).sum::<f64>() / q.max;
        let threshold = if out.len() > limit {
            let mut keys: Vec<f64> = out.iter().map(|s| key[s.0]).collect();
            let (_, kth, _) = keys.select_nth_unstable_by(limit - 1, |a, b| {
                b.partial_cmp(a).unwrap_or(Ordering::Equal)
            });
            *kth
        } else {
            f64::NEG_INFINITY
        };
        let mut pairs = PairScorer::new(q);
        for o in &mut out {
            let d = o.0;
            if key[d] + bound < threshold {
                continue;
            }
            if let Some((score, k)) = with_pairs(s, q, &mut pairs, raw[d], words[d], d) {
                o.1 = score;
                key[d] = k;
            }
        }
    }
    (out, key)
}

/// The `limit` first of `scored` ([`score_all`]'s documents and keys) in [`order`].
pub(super) fn best<S: Statistics>(
    s: &S,
    mut scored: Vec<(usize, f64)>,
    key: &[f64],
    limit: usize,
) -> Vec<(usize, f64)> {
    let cmp = |a: &(usize, f64), b: &(usize, f64)| order(s, (a.0, key[a.0]), (b.0, key[b.0]));
    if scored.len() > limit {
        if limit == 0 {
            return Vec::new();
        }
        scored.select_nth_unstable_by(limit - 1, cmp);
        scored.truncate(limit);
    }
    scored.sort_by(cmp);
    scored
}

/// The documents of `s` matching `q`, best first ([`order`]), at most `limit`: (document,
/// score normalised to 0..=1).
pub(super) fn rank<S: Statistics>(s: &S, q: &Query, limit: usize) -> Vec<(usize, f64)> {
    let (scored, key) = score_all(s, q, limit);
    best(s, scored, &key, limit)
}

/// [`matched`] when the matched slots are known (`mask`, [`slot_bit`]): without a look-up
/// when the request has at most 64 slots.
pub(super) fn matched_of<S: Statistics>(s: &S, q: &Query, doc: usize, mask: u64) -> Vec<String> {
    if q.slots.len() > 64 {
        return matched(s, q, doc);
    }
    // (sized at once: one allocation a hit)
    let mut words = Vec::with_capacity(mask.count_ones() as usize);
    words.extend(
        q.slots
            .iter()
            .enumerate()
            .filter(|&(i, _)| mask & slot_bit(i) != 0)
            .map(|(_, slot)| slot.surface.clone()),
    );
    words
}

/// The request words (as written) `doc` matched, directly or through an expansion.
pub(super) fn matched<S: Statistics>(s: &S, q: &Query, doc: usize) -> Vec<String> {
    q.slots
        .iter()
        .filter(|slot| slot.alts.iter().any(|a| s.has_term(a.term, doc)))
        .map(|slot| slot.surface.clone())
        .collect()
}

impl SearchIndex {
    /// Best first, scores normalised to 0..=1, at most `limit`.
    ///
    /// Ties are broken by priority (higher first), then skill path. Documents matching no
    /// request term are not returned. `matched` lists the request words (as written) the skill
    /// matched, directly or through an expansion.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Scored> {
        self.search_with(query, limit, true)
    }

    /// [`SearchIndex::search`], the matched words only when `words` (else `matched` is empty:
    /// finding them costs a seventh of a search through the component).
    pub fn search_with(&self, query: &str, limit: usize, words: bool) -> Vec<Scored> {
        let q = prepare(self, query);
        self.top_k(&q, limit, words)
    }

    /// The terms of document `doc`'s description, in order (stop words left out), as numbers
    /// of this index's vocabulary: what near-identical descriptions are compared on.
    pub fn description_terms(&self, doc: usize) -> &[u32] {
        if doc >= self.n_docs {
            return &[];
        }
        let seq = Statistics::seq(self, doc);
        seq.iter()
            .position(|&t| t == SEQ_BREAK)
            .map_or(&[], |i| &seq[i + 1..])
    }
}
