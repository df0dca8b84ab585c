//! The ranker's one-pass analyser: words to numbered terms (stemmed, abbreviations mapped,
//! compounds and phrases joined) through a word -> term cache, with the byte-level helpers that
//! keep it cheap in wasm (folded hashing, 8-bytes-at-a-time compares, a byte-class table).

use super::*;

/// One term produced by [`analyze`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The stemmed term.
    pub term: String,
    /// The word as written (lowercased), for display.
    pub surface: String,
    /// Position of the word in the text (compound joins share their first part's position).
    pub position: u32,
    /// Whether the term is a join of a compound's parts (`pre-training` -> `pretraining`) or a
    /// phrase abbreviation, rather than a word of the text.
    pub joined: bool,
}

/// A phrase (its stemmed words) and its abbreviation.
pub(super) type Phrase = (&'static [&'static str], &'static str);

/// Phrases of [`crate::synonyms::PHRASES`] grouped by their last word.
pub(super) fn phrase_groups() -> &'static [(&'static str, Vec<Phrase>)] {
    static GROUPS: OnceLock<Vec<(&'static str, Vec<Phrase>)>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let mut groups: Vec<(&'static str, Vec<Phrase>)> = Vec::new();
        for (words, abbr) in crate::synonyms::PHRASES {
            if let Some(last) = words.last() {
                match groups.iter_mut().find(|(l, _)| l == last) {
                    Some((_, g)) => g.push((*words, *abbr)),
                    None => groups.push((*last, vec![(*words, *abbr)])),
                }
            }
        }
        groups
    })
}

/// Per last word of a phrase, the index of its group in [`phrase_groups`].
pub(super) fn phrase_group_index() -> &'static FxHashMap<&'static str, u32> {
    static INDEX: OnceLock<FxHashMap<&'static str, u32>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index = FxHashMap::default();
        for (g, (last, _)) in phrase_groups().iter().enumerate() {
            index.entry(*last).or_insert(g as u32);
        }
        index
    })
}

/// [`crate::synonyms::canonical`] through a hash table (the first entry of an alias wins, as
/// in the table's linear search).
pub(super) fn canonical(word: &str) -> Option<&'static str> {
    static INDEX: OnceLock<FxHashMap<&'static str, &'static str>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            let mut index = FxHashMap::default();
            for (alias, canon) in crate::synonyms::ALIASES {
                index.entry(*alias).or_insert(*canon);
            }
            index
        })
        .get(word)
        .copied()
}

/// The hash of a string in [`Interner`] tables.
pub(super) fn hash_str(s: &str) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    h.write(s.as_bytes());
    h.finish()
}

/// Distinct strings numbered in order of first appearance, stored once (one buffer, end
/// offsets, a hash table of ids).
#[derive(Default, Clone)]
pub struct Interner {
    text: String,
    ends: Vec<u32>,
    table: HashTable<u32>,
}

impl std::fmt::Debug for Interner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interner")
            .field("len", &self.len())
            .field("bytes", &self.text.len())
            .finish()
    }
}

/// String `id` of an interner's buffer and end offsets.
#[inline]
pub(super) fn slice<'a>(text: &'a str, ends: &[u32], id: u32) -> &'a str {
    let i = id as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &text[start..ends[i] as usize]
}

impl Interner {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// String number `id`.
    #[inline]
    pub fn get(&self, id: u32) -> &str {
        slice(&self.text, &self.ends, id)
    }

    /// Forget every string (keeping the memory).
    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
        self.table.clear();
    }

    /// The number of `s`, if interned.
    pub fn find(&self, s: &str) -> Option<u32> {
        self.table
            .find(hash_str(s), |&id| self.get(id) == s)
            .copied()
    }

    /// The number of `s`, and whether it is new.
    pub fn intern(&mut self, s: &str) -> (u32, bool) {
        let Self { text, ends, table } = self;
        match table.entry(
            hash_str(s),
            |&id| slice(text, ends, id) == s,
            |&id| hash_str(slice(text, ends, id)),
        ) {
            hash_table::Entry::Occupied(e) => (*e.get(), false),
            hash_table::Entry::Vacant(v) => {
                let id = u32::try_from(ends.len())
                    .ok()
                    .filter(|&id| id < JOINED)
                    .expect("fewer than 2^31 strings");
                text.push_str(s);
                ends.push(u32::try_from(text.len()).expect("less than 4 GiB of text"));
                v.insert(id);
                (id, true)
            }
        }
    }
}

/// No term (a dropped word) / no phrase group.
pub(super) const NONE: u32 = u32::MAX;

/// The flag of a join in [`Analyzer::run_pieces_terms`] (term numbers stay below it).
pub const JOINED: u32 = 1 << 31;

/// The hash of a word in [`WordCache`]: [`word_hash_folded`] without folding.
#[inline]
pub(super) fn word_hash(b: &[u8]) -> u64 {
    word_hash_folded::<false>(b)
}

/// Every byte with `0x20` set when `FOLD` (on ASCII letters and digits, that is lowercasing:
/// digits have the bit already).
#[inline(always)]
pub(super) const fn fold_mask<const FOLD: bool>() -> u64 {
    if FOLD { 0x2020_2020_2020_2020 } else { 0 }
}

/// The hash of a word: its length, its 8-byte blocks and its last 0 to 8 bytes (read as at
/// most two overlapping 4-byte loads), each folded in with an odd multiply, then a final
/// xor-shift-multiply mix (a bijection, so two words of the same length and first blocks
/// differing in their tail never share a hash). A few instructions for a short word, and no
/// byte-by-byte loop.
///
/// With `FOLD`, every byte is read with `0x20` set: for a word of ASCII letters and digits,
/// the hash of its lowercase form, without making that form.
#[inline(always)]
pub(super) fn word_hash_folded<const FOLD: bool>(b: &[u8]) -> u64 {
    const K0: u64 = 0x9e37_79b9_7f4a_7c15;
    const K1: u64 = 0xa076_1d64_78bd_642f;
    #[inline(always)]
    pub(super) fn le32(b: &[u8]) -> u64 {
        u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    let m = fold_mask::<FOLD>();
    let mut h = (b.len() as u64).wrapping_mul(K0);
    let mut rest = b;
    while rest.len() > 8 {
        let (block, tail) = rest.split_at(8);
        h = (h ^ ((le32(block) | le32(&block[4..]) << 32) | m))
            .wrapping_mul(K1)
            .rotate_left(29);
        rest = tail;
    }
    let n = rest.len();
    let v = if n >= 4 {
        (le32(rest) | le32(&rest[n - 4..]) << 32) | m
    } else if n > 0 {
        (u64::from(rest[0]) | u64::from(rest[n / 2]) << 8 | u64::from(rest[n - 1]) << 16)
            | (m & 0x20_2020)
    } else {
        0
    };
    h = (h ^ v).wrapping_mul(K1);
    h ^= h >> 32;
    h = h.wrapping_mul(K0);
    h ^ (h >> 29)
}

/// A slot of [`WordCache`]: a word (a range of its text), the low 32 bits of its hash, its
/// term. `len == EMPTY`: a free slot.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    hash: u32,
    start: u32,
    len: u32,
    term: u32,
}

/// [`Slot::len`] of a free slot.
pub(super) const EMPTY: u32 = u32::MAX;

pub(super) const FREE: Slot = Slot {
    hash: 0,
    start: 0,
    len: EMPTY,
    term: NONE,
};

/// Lowercase words seen, each with its term (`NONE`: dropped), so that a word seen before
/// costs one hash lookup (no lowercasing, stop word test, alias lookup or stemming again).
///
/// An open-addressing table with linear probing (at most 3/4 full): a slot's home is given
/// by the high half of the word's hash, and a probe compares the stored low half, then the
/// length, before the bytes (one 16-byte slot read per probe, neighbours in the same cache
/// line, no control bytes).
#[derive(Default, Clone)]
pub(super) struct WordCache {
    /// The words, concatenated.
    text: Vec<u8>,
    /// A power of two of slots (or none).
    slots: Vec<Slot>,
    /// Words held.
    len: usize,
}

impl std::fmt::Debug for WordCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordCache")
            .field("len", &self.len)
            .field("bytes", &self.text.len())
            .finish()
    }
}

impl WordCache {
    /// The home slot of a hash in a table of `mask + 1` slots.
    #[inline(always)]
    pub(super) fn home(hash: u64, mask: usize) -> usize {
        (hash >> 32) as usize & mask
    }

    /// The term of `word` (whose [`word_hash_folded::<FOLD>`] is `hash`), if seen; with
    /// `FOLD`, `word` (ASCII letters and digits) is compared in lowercase.
    #[inline(always)]
    pub(super) fn find<const FOLD: bool>(&self, hash: u64, word: &[u8]) -> Option<u32> {
        let slots = &self.slots[..];
        if slots.is_empty() {
            return None;
        }
        let mask = slots.len() - 1;
        let mut i = Self::home(hash, mask);
        loop {
            let s = slots[i];
            if s.hash == hash as u32 && s.len as usize == word.len() {
                let start = s.start as usize;
                if let Some(stored) = self.text.get(start..start + word.len())
                    && same_bytes_folded::<FOLD>(stored, word)
                {
                    return Some(s.term);
                }
            } else if s.len == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Record `word` (lowercase, not seen yet, hash `hash`) and its term.
    pub(super) fn insert(&mut self, hash: u64, word: &[u8], term: u32) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let start = self.text.len();
        u32::try_from(start + word.len()).expect("less than 4 GiB of words");
        self.text.extend_from_slice(word);
        self.place(
            Slot {
                hash: hash as u32,
                start: start as u32,
                len: word.len() as u32,
                term,
            },
            hash,
        );
        self.len += 1;
    }

    /// Put `slot` (of hash `hash`) in the first free slot from its home.
    pub(super) fn place(&mut self, slot: Slot, hash: u64) {
        let mask = self.slots.len() - 1;
        let mut i = Self::home(hash, mask);
        while self.slots[i].len != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    /// Forget every word (keeping the memory, unless a long text made it large).
    pub(super) fn clear(&mut self) {
        self.text.clear();
        self.len = 0;
        if self.slots.len() > 1024 {
            self.slots = Vec::new();
        } else {
            self.slots.fill(FREE);
        }
    }

    /// Twice the slots (at least 64), every word placed again (its hash made again from
    /// its text).
    #[cold]
    pub(super) fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(64);
        let old = std::mem::replace(&mut self.slots, vec![FREE; n]);
        for s in old {
            if s.len != EMPTY {
                let hash = word_hash(&self.text[s.start as usize..(s.start + s.len) as usize]);
                self.place(s, hash);
            }
        }
    }
}

impl WordCache {
    /// Every word and its term, in the order they were recorded.
    pub(super) fn entries(&self) -> impl Iterator<Item = (&str, u32)> {
        let mut held: Vec<Slot> = self
            .slots
            .iter()
            .copied()
            .filter(|s| s.len != EMPTY)
            .collect();
        held.sort_unstable_by_key(|s| s.start);
        held.into_iter().map(|s| {
            let b = &self.text[s.start as usize..(s.start + s.len) as usize];
            // (recorded from `&str`s, whole)
            (std::str::from_utf8(b).unwrap_or_default(), s.term)
        })
    }
}

/// The last (at most 4) word terms of the current text, oldest first.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Recent {
    terms: [u32; 4],
    len: usize,
}

impl Recent {
    pub(super) fn clear(&mut self) {
        self.len = 0;
    }

    #[inline]
    pub(super) fn push(&mut self, term: u32) {
        if self.len == self.terms.len() {
            self.terms.copy_within(1.., 0);
            self.terms[self.len - 1] = term;
        } else {
            self.terms[self.len] = term;
            self.len += 1;
        }
    }

    pub(super) fn as_slice(&self) -> &[u32] {
        &self.terms[..self.len]
    }
}

/// The ranker's analyser: identifier splitting, compounds, abbreviations, stop words, stemming.
///
/// - words are split as in [`split_identifiers`];
/// - a compound of 2 or 3 parts (`fine-tune`, `pre_training`, `DataFrame`) also yields the join
///   of its parts (`finetune`, `pretraining`, `dataframe`), so spelling variants meet;
/// - stop words (EN + FR + request filler, [`is_rank_stop_word`]) and bare numbers are dropped
///   (except inside a join);
/// - an alias of [`crate::synonyms::ALIASES`] is replaced by its canonical word (`k8s` ->
///   `kubernetes`), and a phrase of [`crate::synonyms::PHRASES`] also yields its abbreviation
///   (`pull requests` -> `pr`), marked `joined` like compound joins;
/// - every word is stemmed ([`stem`]).
///
/// Terms are numbered (in order of first appearance, [`Analyzer::term`] gives their text), and
/// the analyser memoises each distinct lowercase word's term number, so analysing a whole
/// catalogue stems each distinct word once and costs one hash lookup per word. Duplicates are
/// kept (term frequencies matter to the ranker).
///
/// The text is read in one pass over its bytes: ASCII chunks (the usual case) are split with a
/// byte-class table as the bytes go by and looked up in place (lowercased first only when they
/// hold capitals); a chunk holding a non-ASCII character other than whitespace is split
/// character by character ([`split_chunk`]).
#[derive(Debug, Default, Clone)]
pub struct Analyzer {
    /// Lowercase words seen, and their terms.
    words: WordCache,
    /// A collection's words, whose terms are taken from there ([`Analyzer::set_known`]).
    known: Option<std::sync::Arc<KnownWords>>,
    /// Terms.
    terms: Interner,
    /// Per term: the index of its group in [`phrase_groups`] (`NONE`: ends no phrase).
    term_phrases: Vec<u32>,
    /// Scratch: a lowercased part, the lowercased parts of non-ASCII runs of the current
    /// chunk, a join.
    buf: String,
    ubuf: String,
    joined: String,
    recent: Recent,
}

/// The chunk being read (see [`Analyzer::piece`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Chunk {
    /// Position of its first part.
    first_pos: u32,
    /// Number of parts so far.
    parts: usize,
    /// Its first parts (for the join): a range of the text (ASCII, not lowercased yet), or
    /// of `Analyzer::ubuf` (flag set).
    first: [(usize, usize, bool); 3],
    /// Characters in its first parts.
    chars: usize,
}

impl Chunk {
    pub(super) fn at(position: u32) -> Self {
        Self {
            first_pos: position,
            parts: 0,
            first: [(0, 0, false); 3],
            chars: 0,
        }
    }
}

impl Analyzer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Back to a new analyser's state (its terms numbered from 0 again), keeping its memory.
    pub fn reset(&mut self) {
        self.words.clear();
        self.terms.clear();
        self.term_phrases.clear();
        self.buf.clear();
        self.ubuf.clear();
        self.joined.clear();
        self.recent.clear();
    }

    /// Take the terms of the words of `known` from there (`None`: stem every word).
    pub fn set_known(&mut self, known: Option<std::sync::Arc<KnownWords>>) {
        self.known = known;
    }

    /// Every lowercase word analysed so far and its term (`None`: dropped), in the order
    /// they were first seen.
    pub fn words(&self) -> impl Iterator<Item = (&str, Option<u32>)> {
        self.words
            .entries()
            .map(|(w, t)| (w, (t != NONE).then_some(t)))
    }

    /// Record that lowercase `word` analyses to the term of text `term` (`None`: dropped), as
    /// an analysis by the same rules found (a word already seen is left as it is).
    pub fn remember_word(&mut self, word: &str, term: Option<&str>) {
        let hash = word_hash(word.as_bytes());
        if self.words.find::<false>(hash, word.as_bytes()).is_none() {
            let term = term.map_or(NONE, |t| self.intern_term(t));
            self.words.insert(hash, word.as_bytes(), term);
        }
    }

    /// Number of distinct terms produced so far.
    pub fn terms_len(&self) -> usize {
        self.terms.len()
    }

    /// The text of term `id`.
    pub fn term(&self, id: u32) -> &str {
        self.terms.get(id)
    }

    /// The number of term `term` (added if new).
    pub fn intern_term(&mut self, term: &str) -> u32 {
        let (id, new) = self.terms.intern(term);
        if new {
            let group = phrase_group_index().get(term).copied();
            self.term_phrases.push(group.unwrap_or(NONE));
        }
        id
    }

    /// The term of a lowercase word (`NONE`: dropped).
    #[inline(always)]
    pub(super) fn word_term(&mut self, word: &str) -> u32 {
        let hash = word_hash(word.as_bytes());
        match self.words.find::<false>(hash, word.as_bytes()) {
            Some(term) => term,
            None => self.new_word(hash, word),
        }
    }

    /// [`Analyzer::word_term`] of the lowercase form of `word`, made of ASCII letters and
    /// digits (in any case): looked up without lowercasing it first.
    #[inline(always)]
    pub(super) fn ascii_word_term(&mut self, word: &str) -> u32 {
        let hash = word_hash_folded::<true>(word.as_bytes());
        match self.words.find::<true>(hash, word.as_bytes()) {
            Some(term) => term,
            None => self.new_ascii_word(hash, word),
        }
    }

    /// [`Analyzer::new_word`] of the lowercase form of `word` (ASCII letters and digits).
    #[inline(never)]
    pub(super) fn new_ascii_word(&mut self, hash: u64, word: &str) -> u32 {
        let mut lower = std::mem::take(&mut self.buf);
        lower.clear();
        lower.push_str(word);
        lower.make_ascii_lowercase();
        let term = self.new_word(hash, &lower);
        self.buf = lower;
        term
    }

    /// [`Analyzer::word_term`] of a word not seen yet.
    #[inline(never)]
    pub(super) fn new_word(&mut self, hash: u64, word: &str) -> u32 {
        if let Some(known) = self.known.take() {
            let term = known
                .term(hash, word)
                .map(|t| t.map_or(NONE, |t| self.intern_term(t)));
            self.known = Some(known);
            if let Some(term) = term {
                self.words.insert(hash, word.as_bytes(), term);
                return term;
            }
        }
        let term = if word.bytes().all(|b| b.is_ascii_digit()) || is_rank_stop_word(word) {
            NONE
        } else {
            let canon = canonical(word).unwrap_or(word);
            self.intern_term(&stem(canon))
        };
        self.words.insert(hash, word.as_bytes(), term);
        term
    }

    /// Analyse `text`, calling `emit(term, surface, position, joined)` for every term.
    pub fn run(&mut self, text: &str, emit: impl FnMut(u32, &str, u32, bool)) {
        self.run_pieces([text], emit);
    }

    /// [`Analyzer::run`] over the pieces joined by whitespace (without joining them).
    pub fn run_pieces<'a>(
        &mut self,
        pieces: impl IntoIterator<Item = &'a str>,
        emit: impl FnMut(u32, &str, u32, bool),
    ) {
        self.run_inner::<true>(pieces, emit);
    }

    /// [`Analyzer::run_pieces`] for callers that only want the terms: every term appended
    /// to `out`, with [`JOINED`] set when it is a join (the same terms in the same order).
    pub fn run_pieces_terms<'a>(
        &mut self,
        pieces: impl IntoIterator<Item = &'a str>,
        out: &mut Vec<u32>,
    ) {
        self.run_inner::<false>(pieces, |term, _, _, joined| {
            out.push(term | if joined { JOINED } else { 0 });
        });
    }

    /// [`Analyzer::run_pieces`]; without `SURFACE`, the surface given to `emit` for a part
    /// of ASCII letters and digits is the part as written (not lowercased).
    #[inline(always)]
    pub(super) fn run_inner<'a, const SURFACE: bool>(
        &mut self,
        pieces: impl IntoIterator<Item = &'a str>,
        mut emit: impl FnMut(u32, &str, u32, bool),
    ) {
        let mut position = 0u32;
        self.recent.clear();
        for piece in pieces {
            self.piece::<SURFACE>(piece, &mut position, &mut emit);
        }
    }

    /// The terms of one piece, in one pass over its bytes.
    ///
    /// The text is a sequence of whitespace-delimited chunks (as `split_whitespace` finds
    /// them), each a sequence of runs of letters and digits (`char::is_alphanumeric`)
    /// separated by other characters, each run split into parts at case changes
    /// ([`split_camel`]). A part is emitted as soon as it ends: runs are independent, and a
    /// case change found on ASCII characters is one by the Unicode rules too, so that only
    /// the part being read when a non-ASCII letter or digit turns up is read again
    /// character by character ([`Analyzer::unicode_run`]). The join of a chunk's parts is
    /// emitted at its end.
    pub(super) fn piece<const SURFACE: bool>(
        &mut self,
        text: &str,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) {
        let b = text.as_bytes();
        let n = b.len();
        let mut chunk = Chunk::at(*position);
        let mut i = 0;
        while i < n {
            let c = CLASSES[b[i] as usize];
            if c & ALNUM != 0 {
                i = self.ascii_run::<SURFACE>(text, i, &mut chunk, position, emit);
            } else if c & HIGH == 0 {
                if c & SPACE != 0 {
                    self.end_chunk(text, &mut chunk, position, emit);
                }
                i += 1;
            } else {
                let ch = text[i..].chars().next().unwrap_or(' ');
                if ch.is_whitespace() {
                    self.end_chunk(text, &mut chunk, position, emit);
                    i += ch.len_utf8();
                } else if ch.is_alphanumeric() {
                    i = self.unicode_run(text, i, &mut chunk, position, emit);
                } else {
                    i += ch.len_utf8();
                }
            }
        }
        self.end_chunk(text, &mut chunk, position, emit);
    }

    /// The parts of the run of ASCII letters and digits at `text[i]`; returns where the run
    /// ends. When it goes on with a non-ASCII letter or digit, the part being read and the
    /// rest of the run are read by [`Analyzer::unicode_run`].
    #[inline(always)]
    pub(super) fn ascii_run<const SURFACE: bool>(
        &mut self,
        text: &str,
        i: usize,
        chunk: &mut Chunk,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) -> usize {
        let b = text.as_bytes();
        let n = b.len();
        let class = |i: usize| CLASSES[b[i] as usize];
        let mut part = i;
        let mut upper = class(i) & UPPER != 0;
        let mut j = i + 1;
        loop {
            j = lower_run_end(b, j);
            if j >= n {
                break;
            }
            let c = class(j);
            if c & UPPER != 0 {
                // lower -> upper, or the last capital of an acronym before a lowercase
                // letter (`XMLHttp` -> `XML`, `Http`)
                let p = class(j - 1);
                if p & LOWER != 0
                    || (p & UPPER != 0
                        && j + 1 < n
                        && class(j + 1) & LOWER != 0
                        && !(b[j + 1] == b's' && run_ends_at(text, j + 2)))
                {
                    self.ascii_part::<SURFACE>(text, part, j, upper, chunk, position, emit);
                    part = j;
                }
                upper = true;
                j += 1;
            } else {
                if c & HIGH != 0 && text[j..].chars().next().is_some_and(char::is_alphanumeric) {
                    return self.unicode_run(text, part, chunk, position, emit);
                }
                break;
            }
        }
        let end = ascii_acronym_end(b, part, j);
        self.ascii_part::<SURFACE>(text, part, end, upper, chunk, position, emit);
        j
    }

    /// The parts of the run of letters and digits (Unicode) starting at `text[i]` (a part
    /// boundary), split by [`split_camel`]; returns where the run ends.
    #[inline(never)]
    pub(super) fn unicode_run(
        &mut self,
        text: &str,
        i: usize,
        chunk: &mut Chunk,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) -> usize {
        let end = text[i..]
            .char_indices()
            .find(|(_, c)| !c.is_alphanumeric())
            .map_or(text.len(), |(k, _)| i + k);
        // Lowercase parts go to `ubuf`, where they stay until the chunk's join is made.
        let mut ubuf = std::mem::take(&mut self.ubuf);
        split_camel(&text[i..end], |part| {
            let start = ubuf.len();
            if part.is_ascii() {
                ubuf.push_str(part);
                ubuf[start..].make_ascii_lowercase();
            } else {
                ubuf.push_str(&part.to_lowercase());
            }
            let word = &ubuf[start..];
            let chars = word.chars().count();
            let term = self.word_term(word);
            self.part(
                term,
                word,
                chunk,
                (start, ubuf.len(), true),
                chars,
                position,
                emit,
            );
        });
        self.ubuf = ubuf;
        end
    }

    /// Part `text[a..b]` of a run of ASCII letters and digits (`upper`: it holds capitals).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ascii_part<const SURFACE: bool>(
        &mut self,
        text: &str,
        a: usize,
        b: usize,
        upper: bool,
        chunk: &mut Chunk,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) {
        if SURFACE && upper {
            let mut lower = std::mem::take(&mut self.buf);
            lower.clear();
            lower.push_str(&text[a..b]);
            lower.make_ascii_lowercase();
            let term = self.word_term(&lower);
            self.part(term, &lower, chunk, (a, b, false), b - a, position, emit);
            self.buf = lower;
        } else {
            // the part as written: lowercase already, or looked up folded (no surface wanted)
            let word = &text[a..b];
            let term = self.ascii_word_term(word);
            self.part(term, word, chunk, (a, b, false), b - a, position, emit);
        }
    }

    /// One part of the current chunk: `word` (`chars` characters; lowercase unless the
    /// caller wants no surface), whose term is `term`, found at `at` (a range of the text, or
    /// of `ubuf` when its flag is set).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn part(
        &mut self,
        term: u32,
        word: &str,
        chunk: &mut Chunk,
        at: (usize, usize, bool),
        chars: usize,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) {
        if term != NONE {
            emit(term, word, *position, false);
            let group = self.term_phrases[term as usize];
            if group != NONE {
                self.phrases(group, *position, emit);
            }
            self.recent.push(term);
        }
        *position += 1;
        if chunk.parts < chunk.first.len() {
            chunk.first[chunk.parts] = at;
            chunk.chars += chars;
        }
        chunk.parts += 1;
    }

    /// The end of a chunk: the join of its parts when there are 2 or 3 (of at most 24
    /// characters); then a new chunk starts.
    #[inline(always)]
    pub(super) fn end_chunk(
        &mut self,
        text: &str,
        chunk: &mut Chunk,
        position: &mut u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) {
        if chunk.parts == 0 {
            return;
        }
        if chunk.parts >= 2 {
            self.join(text, chunk, emit);
        }
        if !self.ubuf.is_empty() {
            self.ubuf.clear();
        }
        // (`first` is only read up to `parts`)
        chunk.parts = 0;
        chunk.chars = 0;
        chunk.first_pos = *position;
    }

    /// The join of the parts of `chunk` when there are 2 or 3, of at most 24 characters.
    #[inline(never)]
    pub(super) fn join(
        &mut self,
        text: &str,
        chunk: &Chunk,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) {
        if chunk.parts > 3 || chunk.chars > 24 {
            return;
        }
        let mut joined = std::mem::take(&mut self.joined);
        joined.clear();
        for &(a, b, in_ubuf) in &chunk.first[..chunk.parts] {
            if in_ubuf {
                joined.push_str(&self.ubuf[a..b]);
            } else {
                let start = joined.len();
                joined.push_str(&text[a..b]);
                joined[start..].make_ascii_lowercase();
            }
        }
        let term = self.word_term(&joined);
        if term != NONE {
            emit(term, &joined, chunk.first_pos, true);
        }
        self.joined = joined;
    }

    /// The abbreviations of the phrases of group `group` that the recent terms end (the
    /// group's last word is the term just emitted at `position`).
    pub(super) fn phrases(
        &mut self,
        group: u32,
        position: u32,
        emit: &mut impl FnMut(u32, &str, u32, bool),
    ) {
        let recent = self.recent;
        let recent = recent.as_slice();
        for (words, abbr) in &phrase_groups()[group as usize].1 {
            let n = words.len() - 1;
            if recent.len() >= n
                && recent[recent.len() - n..]
                    .iter()
                    .zip(words.iter())
                    .all(|(&x, y)| self.terms.get(x) == *y)
            {
                let id = self.intern_term(abbr);
                emit(id, abbr, position, true);
            }
        }
    }
}

/// Whether `a` and `b` (of the same length) are equal: [`same_bytes_folded`] without folding.
#[cfg(test)]
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    same_bytes_folded::<false>(a, b)
}

/// Whether `a` and `b` (of the same length) are equal, every byte of `b` read with `0x20` set
/// when `FOLD` ([`fold_mask`]): words of at most 16 bytes are compared with at most four
/// overlapping loads instead of a call to `memcmp`.
#[inline(always)]
pub(super) fn same_bytes_folded<const FOLD: bool>(a: &[u8], b: &[u8]) -> bool {
    #[inline(always)]
    pub(super) fn le64(b: &[u8]) -> u64 {
        u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
    #[inline(always)]
    pub(super) fn le32(b: &[u8]) -> u32 {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    let m = fold_mask::<FOLD>();
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        if n > 16 {
            if !FOLD {
                return a == b;
            }
            let mut k = 0;
            while k + 8 < n {
                if le64(&a[k..]) != le64(&b[k..]) | m {
                    return false;
                }
                k += 8;
            }
        }
        le64(a) == le64(b) | m && le64(&a[n - 8..]) == le64(&b[n - 8..]) | m
    } else if n >= 4 {
        let m = m as u32;
        le32(a) == le32(b) | m && le32(&a[n - 4..]) == le32(&b[n - 4..]) | m
    } else {
        let m = m as u8;
        n == 0 || (a[0] == b[0] | m && a[n / 2] == b[n / 2] | m && a[n - 1] == b[n - 1] | m)
    }
}

/// The end of the stretch of ASCII lowercase letters and digits of `b` at `j`: the first
/// index at or after `j` holding another byte (or `b.len()`). Eight bytes at a time (SWAR),
/// then byte by byte near the end of `b`.
#[inline(always)]
pub(super) fn lower_run_end(b: &[u8], mut j: usize) -> usize {
    const L: u64 = 0x0101_0101_0101_0101;
    const H: u64 = 0x8080_8080_8080_8080;
    while let Some(block) = b[j..].first_chunk::<8>() {
        let x = u64::from_le_bytes(*block);
        // Per byte (high bit cleared, so that no sum carries into the next byte): whether
        // it is at least `a` and not past `z`, or at least `0` and not past `9`.
        let y = x & !H;
        let lower = y.wrapping_add(L * (0x80 - 0x61)) & !y.wrapping_add(L * (0x80 - 0x7b));
        let digit = y.wrapping_add(L * (0x80 - 0x30)) & !y.wrapping_add(L * (0x80 - 0x3a));
        let other = !((lower | digit) & !x) & H;
        if other != 0 {
            return j + (other.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while j < b.len() && CLASSES[b[j] as usize] & (LOWER | DIGIT) != 0 {
        j += 1;
    }
    j
}

/// Byte classes of [`CLASSES`].
pub(super) const ALNUM: u8 = 1;
pub(super) const UPPER: u8 = 2;
pub(super) const LOWER: u8 = 4;
pub(super) const SPACE: u8 = 8;
/// Not ASCII.
pub(super) const HIGH: u8 = 16;
pub(super) const DIGIT: u8 = 32;

/// The class bits of each byte (ASCII letters, digits and whitespace as `char` sees them).
pub(super) static CLASSES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b >= 0x80 {
            HIGH
        } else if b.is_ascii_uppercase() {
            ALNUM | UPPER
        } else if b.is_ascii_lowercase() {
            ALNUM | LOWER
        } else if b.is_ascii_digit() {
            ALNUM | DIGIT
        } else if matches!(b, 9..=13 | 32) {
            // `char::is_whitespace` on ASCII (vertical tab included)
            SPACE
        } else {
            0
        };
        i += 1;
    }
    t
};

/// The terms of one text, as [`analyze`] gives them, without a `String` per term: an
/// analyser, its terms and their surfaces kept for the next text (see [`with_terms`]).
#[derive(Debug, Default)]
pub struct TermList {
    analyzer: Analyzer,
    /// The surfaces, concatenated.
    surfaces: String,
    /// Per term: its number in `analyzer`, the end of its surface in `surfaces`, whether it is
    /// a join.
    items: Vec<(u32, u32, bool)>,
}

impl TermList {
    /// Analyse `text` (what was there before is forgotten).
    pub fn analyze(&mut self, text: &str) {
        let Self {
            analyzer,
            surfaces,
            items,
        } = self;
        analyzer.reset();
        surfaces.clear();
        items.clear();
        analyzer.run(text, |term, surface, _, joined| {
            surfaces.push_str(surface);
            items.push((term, surfaces.len() as u32, joined));
        });
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The stemmed term number `i`.
    #[inline]
    pub fn term(&self, i: usize) -> &str {
        self.analyzer.term(self.items[i].0)
    }

    /// Term number `i` as written (lowercased).
    #[inline]
    pub fn surface(&self, i: usize) -> &str {
        let start = if i == 0 {
            0
        } else {
            self.items[i - 1].1 as usize
        };
        &self.surfaces[start..self.items[i].1 as usize]
    }

    /// Whether term number `i` is a join (see [`Term::joined`]).
    #[inline]
    pub fn joined(&self, i: usize) -> bool {
        self.items[i].2
    }
}

/// `f` of the terms of `text` ([`TermList`]), analysed with an analyser kept between calls
/// on this thread (its memory only: every text is analysed from scratch), the terms of the
/// words of `known` taken from there ([`Analyzer::set_known`]).
pub fn with_terms<R>(
    text: &str,
    known: Option<&std::sync::Arc<KnownWords>>,
    f: impl FnOnce(&TermList) -> R,
) -> R {
    thread_local! {
        static TERMS: std::cell::RefCell<TermList> = std::cell::RefCell::default();
    }
    let analyze = |list: &mut TermList| {
        list.analyzer.set_known(known.cloned());
        list.analyze(text);
        list.analyzer.set_known(None);
    };
    TERMS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut list) => {
            analyze(&mut list);
            f(&list)
        }
        // (called again from within `f`: a list of its own)
        Err(_) => {
            let mut list = TermList::default();
            analyze(&mut list);
            f(&list)
        }
    })
}

/// [`Analyzer::run`] collected into a list (one-off use).
pub fn analyze(text: &str) -> Vec<Term> {
    let mut analyzer = Analyzer::new();
    let mut out = Vec::new();
    analyzer.run(text, |term, surface, position, joined| {
        out.push((term, surface.to_string(), position, joined));
    });
    out.into_iter()
        .map(|(term, surface, position, joined)| Term {
            term: analyzer.term(term).to_string(),
            surface,
            position,
            joined,
        })
        .collect()
}
