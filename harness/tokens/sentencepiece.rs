//! SentencePiece byte-pair encoding, reimplemented offline for Gemma-style models.
//!
//! This follows the encoding half of SentencePiece, Google's tokenizer (an Apache-2.0 project),
//! for models of type BPE. It is written here from the published algorithm, not taken from
//! SentencePiece's code, and its ids are checked against the `sentencepiece` package from PyPI
//! (0.2.3) on the Gemma 3 model (`tokenizer.gemma3`, 262,144 pieces).
//!
//! What encoding does, in order:
//!
//! 1. Read the model file, a `ModelProto` protocol buffer: the pieces (text, score, type), the
//!    trainer's settings (model type, byte fallback) and the normaliser's settings.
//! 2. Normalise the text. Only normalisers that leave the text as it is are taken (no
//!    precompiled character map, no dummy prefix, no removal of extra whitespace); the one
//!    change left is that each space becomes U+2581 ('▁') when spaces are escaped.
//! 3. Cut the text into symbols: where a user-defined piece starts, the longest one becomes a
//!    symbol that is never merged; anywhere else one UTF-8 character is a symbol.
//! 4. Merge: while two neighbouring symbols join into a piece of the vocabulary (normal,
//!    user-defined or unused), join the pair whose piece has the highest score, the leftmost
//!    pair on a tie. A heap of candidate pairs, checked when taken out, keeps this
//!    O(n log n).
//! 5. Undo merges into unused pieces: such a symbol is split back into the two parts it was
//!    last seen being formed from, again and again until no part is unused.
//! 6. Map each symbol to its id. One that is no piece becomes its UTF-8 bytes as `<0xXX>`
//!    pieces when the model has byte fallback, or else the unknown id (a run of unknown symbols
//!    gives one unknown id).
//!
//! Two things make a text fall into parts that merge independently, which keeps the heap small
//! and in cache: frozen symbols (for Gemma: whitespace runs, newlines, tabs, markup tags), and
//! two neighbouring characters that no piece holds side by side (for Gemma, any character but
//! `▁` and `>` before a `▁`, so text merges about a word at a time). Neither changes the
//! result, since no merge can cross such a place. Models with unused pieces are merged in one
//! go instead, since which split an unused piece is undone into depends on the order of the
//! whole text's merges.
//!
//! Two details of the reference, found by comparing with it, are followed here: a score of
//! -0.0 ranks below 0.0 (the two do not tie), and a model that gives two pieces the same text
//! is refused even when their types differ.
//!
//! For Gemma 3 the loaded model takes about 15 MB (mostly the table of 262,144 pieces), and
//! loading it takes a few tens of milliseconds.
//!
//! A text of more than 1 GiB is cut at a character boundary into parts of at most 1 GiB, each
//! encoded on its own; only there can the result differ from the reference's.

use std::borrow::Cow;
use std::collections::{BinaryHeap, HashMap};

/// Piece types, numbered as in `sentencepiece_model.proto`.
const NORMAL: u8 = 1;
const UNKNOWN: u8 = 2;
const CONTROL: u8 = 3;
const USER_DEFINED: u8 = 4;
const UNUSED: u8 = 5;
const BYTE: u8 = 6;

/// Model types, numbered as in `sentencepiece_model.proto`.
const MODEL_TYPES: [&str; 4] = ["UNIGRAM", "BPE", "WORD", "CHAR"];
const BPE: i32 = 2;

/// SentencePiece refuses a model with a piece this long or longer.
const MAX_PIECE_BYTES: usize = 8000;

/// No symbol (the end of a list of neighbours).
const NONE: u32 = u32::MAX;

/// Texts are encoded in parts of at most this many bytes, so that every offset of the
/// normalised text (up to three times as long) fits in 32 bits.
const MAX_PART: usize = 1 << 30;

/// A SentencePiece BPE model, ready to encode text.
pub struct SentencePiece {
    /// Every piece's bytes, one after another, in id order.
    bytes: Vec<u8>,
    /// Each piece by id.
    entries: Vec<Entry>,
    /// The pieces that merges may form (normal, user-defined and unused), by their bytes.
    mergeable: Table,
    /// The other pieces (control, unknown and byte), by their bytes.
    reserved: Table,
    /// The user-defined pieces, for finding the longest one that starts at a place.
    user_defined: Trie,
    /// The id of `<0xXX>` for each byte.
    byte_ids: [u32; 256],
    /// The id of the unknown piece.
    unk_id: u32,
    /// Whether unknown symbols are spelled out as byte pieces.
    byte_fallback: bool,
    /// Whether spaces become U+2581.
    escape_whitespaces: bool,
    /// Whether any piece is of the unused type (then merges run over the whole text at once).
    has_unused: bool,
    /// The length in bytes of the longest mergeable piece: no longer pair needs a lookup.
    longest_mergeable: usize,
    /// For two neighbours that are each an ASCII character or U+2581 (see [`small_index`]):
    /// the id + 1 (0: none) and score rank of the piece they join into, indexed by
    /// `left * SMALL + right`. Most first lookups in a text are of such pairs, and this table
    /// (133 KB) answers them from cache where the big one would not.
    small_pairs: Vec<(u32, u32)>,
    /// Whether some mergeable piece holds these two characters side by side (indexed like
    /// `small_pairs`). Where a text has two that no piece holds, no merge can cross between
    /// them, so the text is merged in two independent parts there. For Gemma 3 only `▁` and
    /// `>` ever come right before a `▁` inside a piece, so text is merged about a word at a
    /// time, which keeps the heap small and in cache.
    joinable: Vec<bool>,
    /// The mergeable piece of each character numbered by [`small_index`], or `NONE`.
    small_ids: [u32; SMALL],
}

/// The number of characters that [`small_index`] numbers: ASCII, then U+2581.
const SMALL: usize = 129;

/// A number below [`SMALL`] for a symbol that is one ASCII character or U+2581.
#[inline]
fn small_index(sym: &[u8]) -> Option<usize> {
    match *sym {
        [c] if c < 0x80 => Some(c as usize),
        [0xE2, 0x96, 0x81] => Some(128),
        _ => None,
    }
}

/// One piece of the vocabulary.
#[derive(Clone, Copy)]
struct Entry {
    /// Where its bytes start in `SentencePiece::bytes`.
    start: u32,
    /// How many bytes it has.
    len: u32,
    /// Its score as an unsigned number in the same order (see [`score_rank`]).
    rank: u32,
    /// Its type (`NORMAL` ... `BYTE`).
    kind: u8,
}

impl SentencePiece {
    /// Reads a serialised `ModelProto` (the bytes of a `.model` file) and checks that it is a
    /// model this code encodes exactly: BPE, with a normaliser that leaves text unchanged apart
    /// from turning spaces into U+2581. Any other model, or a file that is cut short or not a
    /// model at all, gives an error that says why.
    pub fn from_model_proto(bytes: &[u8]) -> Result<SentencePiece, String> {
        let raw = parse_model(bytes)?;
        raw.check_supported()?;
        build(&raw)
    }

    /// The ids of a text, as SentencePiece's `encode` gives them (no BOS or EOS added).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Ids(Vec::with_capacity(text.len() / 3 + 1));
        self.run(text, &mut ids);
        ids.0
    }

    /// How many ids [`encode`](Self::encode) gives for a text, without keeping them.
    pub fn count(&self, text: &str) -> usize {
        let mut n = Count(0);
        self.run(text, &mut n);
        n.0
    }

    /// The number of pieces in the vocabulary (every id is below it).
    pub fn vocab_size(&self) -> usize {
        self.entries.len()
    }

    /// The bytes of the piece with this id.
    #[cfg(test)]
    fn piece(&self, id: u32) -> &[u8] {
        let e = &self.entries[id as usize];
        &self.bytes[e.start as usize..(e.start + e.len) as usize]
    }

    /// The id a symbol's bytes map to at the end: the piece with those bytes (of any type),
    /// else the unknown id.
    fn final_id(&self, piece: &[u8]) -> u32 {
        self.mergeable
            .find(piece, &self.bytes, &self.entries)
            .or_else(|| self.reserved.find(piece, &self.bytes, &self.entries))
            .map_or(self.unk_id, |(id, _)| id)
    }

    /// The id a symbol maps to at the end, given the mergeable piece it is known to be
    /// (`NONE` if not known).
    #[inline]
    fn sym_id(&self, piece: &[u8], known: u32) -> u32 {
        if known != NONE {
            known
        } else {
            self.final_id(piece)
        }
    }

    /// Encodes a text into `sink`, part by part (see [`MAX_PART`]).
    fn run<S: Sink>(&self, text: &str, sink: &mut S) {
        let mut out = Out {
            sink,
            prev_unknown: false,
        };
        let mut scratch = Scratch::default();
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = rest.len().min(MAX_PART);
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            let (now, later) = rest.split_at(cut);
            self.run_part(now, &mut out, &mut scratch);
            rest = later;
        }
    }

    /// Encodes one part of a text: normalises it, then merges it stretch by stretch, cut at
    /// frozen symbols and between neighbours no piece joins (or all at once when the model
    /// has unused pieces).
    fn run_part<S: Sink>(&self, text: &str, out: &mut Out<S>, scratch: &mut Scratch) {
        let norm = self.normalize(text);
        let b: &[u8] = &norm;
        if self.has_unused {
            self.merge_span(b, 0, b.len(), true, scratch, out);
            return;
        }
        let (mut stretch, mut pos) = (0, 0);
        // The small index (see `small_index`) of the character before `pos`, if it has one.
        let mut prev_small: Option<usize> = None;
        while pos < b.len() {
            let c = b[pos];
            if self.user_defined.starts_with(c) {
                let (m, id) = self.user_defined.longest(&b[pos..]);
                if m > 0 {
                    if stretch < pos {
                        self.merge_span(b, stretch, pos, false, scratch, out);
                    }
                    let piece = &b[pos..pos + m];
                    self.emit(piece, self.sym_id(piece, id), out);
                    pos += m;
                    stretch = pos;
                    prev_small = None;
                    continue;
                }
            }
            let len = one_char_len(c).min(b.len() - pos);
            let small = small_index(&b[pos..pos + len]);
            if let (Some(x), Some(y)) = (prev_small, small) {
                if !self.joinable[x * SMALL + y] {
                    // No piece holds these two characters side by side, so no merge crosses
                    // between them: what comes before is merged on its own.
                    self.merge_span(b, stretch, pos, false, scratch, out);
                    stretch = pos;
                }
            }
            prev_small = small;
            pos += len;
        }
        if stretch < b.len() {
            self.merge_span(b, stretch, b.len(), false, scratch, out);
        }
    }

    /// The normalised text: the text itself, with each space turned into U+2581 when the
    /// model escapes whitespace.
    fn normalize<'t>(&self, text: &'t str) -> Cow<'t, [u8]> {
        let b = text.as_bytes();
        if !self.escape_whitespaces || !b.contains(&b' ') {
            return Cow::Borrowed(b);
        }
        let spaces = b.iter().filter(|&&c| c == b' ').count();
        let mut v = Vec::with_capacity(b.len() + 2 * spaces);
        let mut first = true;
        for run in b.split(|&c| c == b' ') {
            if !first {
                v.extend_from_slice("\u{2581}".as_bytes());
            }
            first = false;
            v.extend_from_slice(run);
        }
        Cow::Owned(v)
    }

    /// Cuts `b[from..to]` into symbols, merges them and writes their ids. With `whole`, the
    /// span may hold user-defined pieces, which become frozen symbols; without it, the span
    /// has none and every symbol starts as one character.
    fn merge_span<S: Sink>(
        &self,
        b: &[u8],
        from: usize,
        to: usize,
        whole: bool,
        sc: &mut Scratch,
        out: &mut Out<S>,
    ) {
        if from >= to {
            return;
        }
        let first_len = one_char_len(b[from]).min(to - from);
        if !whole && first_len == to - from {
            // A single character: nothing to merge.
            let piece = &b[from..to];
            let known = small_index(piece).map_or(NONE, |x| self.small_ids[x]);
            self.emit(piece, self.sym_id(piece, known), out);
            return;
        }
        let syms = &mut sc.syms;
        syms.clear();
        let mut pos = from;
        while pos < to {
            let mut len = one_char_len(b[pos]).min(to - pos);
            let mut id = small_index(&b[pos..pos + len]).map_or(NONE, |x| self.small_ids[x]);
            let mut frozen = false;
            if whole && self.user_defined.starts_with(b[pos]) {
                let (m, ud) = self.user_defined.longest(&b[pos..to]);
                if m > 0 {
                    len = m;
                    id = ud;
                    frozen = true;
                }
            }
            let i = syms.len() as u32;
            syms.push(Sym {
                start: pos as u32,
                len: len as u32,
                prev: if i == 0 { NONE } else { i - 1 },
                next: i + 1,
                id,
                frozen,
            });
            pos += len;
        }
        if let Some(last) = syms.last_mut() {
            last.next = NONE;
        }
        sc.rev.clear();

        let mut cands = std::mem::take(&mut sc.cands);
        cands.clear();
        for right in 1..syms.len() as u32 {
            if let Some(c) = self.pair(b, syms, right - 1, right, &mut sc.rev) {
                cands.push(c);
            }
        }
        let mut heap = BinaryHeap::from(cands);
        while let Some(top) = heap.pop() {
            let left = !(top.key as u32);
            let l = syms[left as usize];
            // A pair whose sides have changed since it was found is stale: then the left
            // side is gone, or its length plus its right neighbour's is no longer the pair's
            // (lengths only grow, and the left side grows only by taking in its neighbour).
            if l.len == 0 || l.next == NONE {
                continue;
            }
            let right = l.next;
            let r = syms[right as usize];
            if r.len == 0 || l.len + r.len != top.size {
                continue;
            }
            syms[left as usize].len = top.size;
            syms[left as usize].id = top.id;
            syms[left as usize].next = r.next;
            if r.next != NONE {
                syms[r.next as usize].prev = left;
            }
            syms[right as usize].len = 0;
            if let Some(c) = self.pair(b, syms, l.prev, left, &mut sc.rev) {
                heap.push(c);
            }
            if let Some(c) = self.pair(b, syms, left, r.next, &mut sc.rev) {
                heap.push(c);
            }
        }
        sc.cands = heap.into_vec();

        let mut i = if syms.is_empty() { NONE } else { 0 };
        while i != NONE {
            let s = syms[i as usize];
            if self.has_unused {
                self.emit_resegmented(b, s.start, s.len, &sc.rev, &mut sc.stack, out);
            } else {
                let piece = &b[s.start as usize..(s.start + s.len) as usize];
                self.emit(piece, self.sym_id(piece, s.id), out);
            }
            i = s.next;
        }
    }

    /// The candidate merge of two neighbouring symbols, if neither is frozen and together
    /// they are a mergeable piece. When that piece is unused, remembers how it was formed.
    #[inline]
    fn pair(
        &self,
        b: &[u8],
        syms: &[Sym],
        left: u32,
        right: u32,
        rev: &mut HashMap<u32, u32>,
    ) -> Option<Cand> {
        if left == NONE || right == NONE {
            return None;
        }
        let (l, r) = (&syms[left as usize], &syms[right as usize]);
        if l.frozen || r.frozen {
            return None;
        }
        let size = l.len + r.len;
        if size as usize > self.longest_mergeable {
            return None;
        }
        let start = l.start as usize;
        let key = &b[start..start + size as usize];
        let small = match small_index(&key[..l.len as usize]) {
            Some(x) => small_index(&key[l.len as usize..]).map(|y| self.small_pairs[x * SMALL + y]),
            None => None,
        };
        let (id, rank) = match small {
            Some((0, _)) => return None,
            Some((id1, rank)) => (id1 - 1, rank),
            None => self.mergeable.find(key, &self.bytes, &self.entries)?,
        };
        if self.has_unused && self.entries[id as usize].kind == UNUSED {
            rev.insert(id, l.len);
        }
        Some(Cand {
            key: (u64::from(rank) << 32) | u64::from(!left),
            size,
            id,
        })
    }

    /// Writes a merged symbol, splitting unused pieces back into the parts they were last
    /// formed from, left part first.
    fn emit_resegmented<S: Sink>(
        &self,
        b: &[u8],
        start: u32,
        len: u32,
        rev: &HashMap<u32, u32>,
        stack: &mut Vec<(u32, u32)>,
        out: &mut Out<S>,
    ) {
        stack.clear();
        stack.push((start, len));
        while let Some((s, l)) = stack.pop() {
            let piece = &b[s as usize..(s + l) as usize];
            let id = self.final_id(piece);
            if self.entries[id as usize].kind == UNUSED {
                if let Some(&k) = rev.get(&id) {
                    if k > 0 && k < l {
                        stack.push((s + k, l - k));
                        stack.push((s, k));
                        continue;
                    }
                }
            }
            self.emit(piece, id, out);
        }
    }

    /// Writes one final symbol's id: an unknown one as its bytes' pieces with byte fallback,
    /// or else as the unknown id, once for a run of unknown symbols.
    #[inline]
    fn emit<S: Sink>(&self, piece: &[u8], id: u32, out: &mut Out<S>) {
        let unknown = id == self.unk_id;
        if unknown && self.byte_fallback {
            out.sink.put_bytes(piece, &self.byte_ids);
        } else if !(unknown && out.prev_unknown) {
            out.sink.put(id);
        }
        out.prev_unknown = unknown;
    }
}

/// Where ids go: kept, or only counted.
trait Sink {
    fn put(&mut self, id: u32);
    fn put_bytes(&mut self, bytes: &[u8], byte_ids: &[u32; 256]) {
        for &c in bytes {
            self.put(byte_ids[c as usize]);
        }
    }
}

/// Keeps the ids.
struct Ids(Vec<u32>);

impl Sink for Ids {
    fn put(&mut self, id: u32) {
        self.0.push(id);
    }
}

/// Counts the ids.
struct Count(usize);

impl Sink for Count {
    fn put(&mut self, _: u32) {
        self.0 += 1;
    }
    fn put_bytes(&mut self, bytes: &[u8], _: &[u32; 256]) {
        self.0 += bytes.len();
    }
}

/// The sink, and whether the last symbol written was unknown.
struct Out<'a, S> {
    sink: &'a mut S,
    prev_unknown: bool,
}

/// Buffers reused from one stretch of a text to the next.
#[derive(Default)]
struct Scratch {
    syms: Vec<Sym>,
    cands: Vec<Cand>,
    /// For each unused piece formed: the length of the left part it was last formed from.
    rev: HashMap<u32, u32>,
    stack: Vec<(u32, u32)>,
}

/// A symbol: a stretch of the normalised text, linked to its neighbours. A symbol merged into
/// its left neighbour keeps its place with length 0.
#[derive(Clone, Copy)]
struct Sym {
    start: u32,
    len: u32,
    prev: u32,
    next: u32,
    /// The mergeable piece it is, if known (`NONE`: to be looked up).
    id: u32,
    frozen: bool,
}

/// A candidate merge of a symbol with its right neighbour. `key` orders the heap: the piece's
/// score rank above, the left symbol's index inverted below, so that the highest score comes
/// out first and, among equal scores, the leftmost pair. `size` is the merged length, by which
/// a stale pair is recognised; `id` is the piece.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Cand {
    key: u64,
    size: u32,
    id: u32,
}

/// A score as an unsigned number in the same order. -0.0 ranks below 0.0: that is what the
/// reference does (a piece scored -0.0 loses to one scored 0.0 instead of tying with it), and
/// Gemma 3 has one piece, `▁t`, scored -0.0 among user-defined pieces scored 0.0.
fn score_rank(score: f32) -> u32 {
    let bits = score.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The length of the UTF-8 character that starts with this byte, judged by its top four bits
/// as SentencePiece does (a stray continuation byte counts as one).
#[inline]
fn one_char_len(first: u8) -> usize {
    match first >> 4 {
        0xC | 0xD => 2,
        0xE => 3,
        0xF => 4,
        _ => 1,
    }
}

/// The first seven bytes of a key and its length (up to 255) in one word, the part of a key
/// that a table slot holds. Two keys of at most seven bytes are equal exactly when their heads
/// are.
#[inline]
fn head(key: &[u8]) -> u64 {
    let n = key.len().min(7);
    let mut w = [0u8; 8];
    w[..n].copy_from_slice(&key[..n]);
    w[7] = key.len().min(255) as u8;
    u64::from_le_bytes(w)
}

/// A fast non-cryptographic hash of a key from its head and, past seven bytes, the rest
/// (FxHash-style multiply and rotate, eight bytes at a time), with a final mix so that the low
/// bits depend on every byte.
#[inline]
fn hash_key(head: u64, key: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = head.wrapping_mul(K);
    if key.len() > 7 {
        let mut chunks = key[7..].chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            h = (h.rotate_left(5) ^ w).wrapping_mul(K);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
    }
    h ^= h >> 32;
    h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^ (h >> 29)
}

/// An open-addressing table from piece bytes to ids, probed linearly, at most half full (so
/// a probe always ends at an empty slot).
struct Table {
    slots: Vec<Slot>,
    mask: usize,
}

/// One slot: the piece's head (see [`head`]), its id + 1 (0: empty) and its score rank. A key
/// of at most seven bytes is matched and ranked from the slot alone, which is what most
/// lookups during merging need; a longer one also has its remaining bytes compared.
#[derive(Clone, Copy, Default)]
struct Slot {
    head: u64,
    id1: u32,
    rank: u32,
}

impl Table {
    fn with_room_for(n: usize) -> Table {
        let cap = (n.saturating_mul(2)).next_power_of_two().max(16);
        Table {
            slots: vec![Slot::default(); cap],
            mask: cap - 1,
        }
    }

    /// The id and score rank of the piece with these bytes, if it is in the table.
    #[inline]
    fn find(&self, key: &[u8], bytes: &[u8], entries: &[Entry]) -> Option<(u32, u32)> {
        let hd = head(key);
        let mut i = hash_key(hd, key) as usize & self.mask;
        loop {
            let s = self.slots[i];
            if s.id1 == 0 {
                return None;
            }
            if s.head == hd {
                let id = s.id1 - 1;
                if key.len() <= 7 {
                    return Some((id, s.rank));
                }
                let e = &entries[id as usize];
                if bytes[e.start as usize..(e.start + e.len) as usize][7..] == key[7..] {
                    return Some((id, s.rank));
                }
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Adds a piece; false if one with the same bytes is already there.
    fn insert(&mut self, id: u32, bytes: &[u8], entries: &[Entry]) -> bool {
        let e = &entries[id as usize];
        let key = &bytes[e.start as usize..(e.start + e.len) as usize];
        let hd = head(key);
        let mut i = hash_key(hd, key) as usize & self.mask;
        loop {
            let s = self.slots[i];
            if s.id1 == 0 {
                break;
            }
            if s.head == hd {
                let o = &entries[(s.id1 - 1) as usize];
                if &bytes[o.start as usize..(o.start + o.len) as usize] == key {
                    return false;
                }
            }
            i = (i + 1) & self.mask;
        }
        self.slots[i] = Slot {
            head: hd,
            id1: id + 1,
            rank: e.rank,
        };
        true
    }
}

/// A byte trie of the user-defined pieces, for the longest one at the start of a text.
struct Trie {
    /// The node reached by each first byte (0: no piece starts with it).
    root: [u32; 256],
    /// Nodes by index; node 0 is the root.
    nodes: Vec<TrieNode>,
    /// Every node's outgoing edges (byte, child), each node's sorted by byte.
    edges: Vec<(u8, u32)>,
}

struct TrieNode {
    first_edge: u32,
    edge_count: u32,
    /// The id of the piece that ends here, or `NONE`.
    piece: u32,
}

impl Trie {
    fn new<'a>(pieces: impl Iterator<Item = (&'a [u8], u32)>) -> Trie {
        let mut kids: Vec<Vec<(u8, u32)>> = vec![Vec::new()];
        let mut terminal = vec![NONE];
        for (p, id) in pieces {
            let mut n = 0usize;
            for &c in p {
                n = match kids[n].iter().find(|e| e.0 == c) {
                    Some(&(_, child)) => child as usize,
                    None => {
                        let child = kids.len();
                        kids.push(Vec::new());
                        terminal.push(NONE);
                        kids[n].push((c, child as u32));
                        child
                    }
                };
            }
            terminal[n] = id;
        }
        let mut root = [0u32; 256];
        for &(c, child) in &kids[0] {
            root[c as usize] = child;
        }
        let mut nodes = Vec::with_capacity(kids.len());
        let mut edges = Vec::new();
        for (k, t) in kids.iter_mut().zip(terminal) {
            k.sort_unstable();
            nodes.push(TrieNode {
                first_edge: edges.len() as u32,
                edge_count: k.len() as u32,
                piece: t,
            });
            edges.extend_from_slice(k);
        }
        Trie { root, nodes, edges }
    }

    /// Whether some piece starts with this byte.
    #[inline]
    fn starts_with(&self, c: u8) -> bool {
        self.root[c as usize] != 0
    }

    /// The length and id of the longest piece that `b` starts with, or (0, `NONE`).
    fn longest(&self, b: &[u8]) -> (usize, u32) {
        let Some(&first) = b.first() else {
            return (0, NONE);
        };
        let mut n = self.root[first as usize] as usize;
        if n == 0 {
            return (0, NONE);
        }
        let mut best = (0, NONE);
        if self.nodes[n].piece != NONE {
            best = (1, self.nodes[n].piece);
        }
        for (i, &c) in b.iter().enumerate().skip(1) {
            let node = &self.nodes[n];
            let from = node.first_edge as usize;
            let edges = &self.edges[from..from + node.edge_count as usize];
            match edges.binary_search_by_key(&c, |e| e.0) {
                Ok(k) => n = edges[k].1 as usize,
                Err(_) => break,
            }
            if self.nodes[n].piece != NONE {
                best = (i + 1, self.nodes[n].piece);
            }
        }
        best
    }
}

/// A model as read from the file, before checking.
struct RawModel<'a> {
    pieces: Vec<RawPiece<'a>>,
    /// `TrainerSpec.model_type` (UNIGRAM = 1 unless set).
    model_type: i32,
    treat_whitespace_as_suffix: bool,
    byte_fallback: bool,
    /// `NormalizerSpec.name`, for messages.
    normalizer_name: Vec<u8>,
    charsmap_len: usize,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
}

struct RawPiece<'a> {
    text: &'a [u8],
    score: f32,
    kind: u8,
}

impl RawModel<'_> {
    /// Refuses models whose encoding this code would not reproduce.
    fn check_supported(&self) -> Result<(), String> {
        if self.model_type != BPE {
            let name = MODEL_TYPES
                .get((self.model_type - 1) as usize)
                .copied()
                .unwrap_or("unknown");
            return Err(format!(
                "the SentencePiece model is of type {name}; only BPE models (such as Gemma's) are supported"
            ));
        }
        let only = "only Gemma-style models (identity normaliser, no dummy prefix, whitespace kept) are supported";
        if self.charsmap_len > 0 {
            return Err(format!(
                "the SentencePiece model's normaliser ({:?}) rewrites text with a character map; {only}",
                String::from_utf8_lossy(&self.normalizer_name)
            ));
        }
        if self.add_dummy_prefix {
            return Err(format!(
                "the SentencePiece model adds a dummy space prefix; {only}"
            ));
        }
        if self.remove_extra_whitespaces {
            return Err(format!(
                "the SentencePiece model removes extra whitespace; {only}"
            ));
        }
        if self.treat_whitespace_as_suffix {
            return Err(format!(
                "the SentencePiece model treats whitespace as a suffix; {only}"
            ));
        }
        Ok(())
    }
}

/// Builds the encoder from a checked model, refusing what SentencePiece refuses when it loads
/// a model (empty, overlong or repeated pieces, no unknown piece, bad byte pieces).
fn build(raw: &RawModel) -> Result<SentencePiece, String> {
    let n = raw.pieces.len();
    if n >= (u32::MAX / 2) as usize {
        return Err("the SentencePiece model has too many pieces".into());
    }
    let total: usize = raw.pieces.iter().map(|p| p.text.len()).sum();
    if total >= u32::MAX as usize {
        return Err("the SentencePiece model's pieces are too long in all".into());
    }
    let show = |t: &[u8]| format!("{:?}", String::from_utf8_lossy(t));
    let mut bytes = Vec::with_capacity(total);
    let mut entries = Vec::with_capacity(n);
    let mut n_mergeable = 0;
    let mut unk_id = None;
    let mut has_unused = false;
    let mut longest_mergeable = 0;
    let mut byte_found = [false; 256];
    for (id, p) in raw.pieces.iter().enumerate() {
        if p.text.is_empty() {
            return Err(format!("the SentencePiece model's piece {id} is empty"));
        }
        if p.text.len() >= MAX_PIECE_BYTES {
            return Err(format!(
                "the SentencePiece model's piece {id} is too long ({} bytes)",
                p.text.len()
            ));
        }
        if p.text.contains(&0) {
            return Err(format!(
                "the SentencePiece model's piece {id} holds a NUL character"
            ));
        }
        if p.score.is_nan() {
            return Err(format!(
                "the SentencePiece model's piece {id} ({}) has a score that is not a number",
                show(p.text)
            ));
        }
        match p.kind {
            NORMAL | USER_DEFINED | UNUSED => {
                n_mergeable += 1;
                longest_mergeable = longest_mergeable.max(p.text.len());
                has_unused |= p.kind == UNUSED;
            }
            // Control pieces (padding, BOS, EOS) are looked up but never come out of text.
            CONTROL => {}
            UNKNOWN => {
                if unk_id.is_some() {
                    return Err("the SentencePiece model has more than one unknown piece".into());
                }
                unk_id = Some(id as u32);
            }
            BYTE => {
                if !raw.byte_fallback {
                    return Err(format!(
                        "the SentencePiece model has byte piece {} but no byte fallback",
                        show(p.text)
                    ));
                }
                match byte_of_piece(p.text) {
                    Some(c) => byte_found[c as usize] = true,
                    None => {
                        return Err(format!(
                            "the SentencePiece model's byte piece {} is malformed",
                            show(p.text)
                        ))
                    }
                }
            }
            _ => {}
        }
        entries.push(Entry {
            start: bytes.len() as u32,
            len: p.text.len() as u32,
            rank: score_rank(p.score),
            kind: p.kind,
        });
        bytes.extend_from_slice(p.text);
    }
    let unk_id = unk_id.ok_or("the SentencePiece model has no unknown piece")?;
    if raw.byte_fallback && byte_found.contains(&false) {
        return Err("the SentencePiece model has byte fallback but not all 256 byte pieces".into());
    }

    let mut mergeable = Table::with_room_for(n_mergeable);
    let mut reserved = Table::with_room_for(n - n_mergeable);
    for id in 0..n as u32 {
        let table = match entries[id as usize].kind {
            NORMAL | USER_DEFINED | UNUSED => &mut mergeable,
            _ => &mut reserved,
        };
        if !table.insert(id, &bytes, &entries) {
            let e = &entries[id as usize];
            let text = &bytes[e.start as usize..(e.start + e.len) as usize];
            return Err(format!(
                "the SentencePiece model defines piece {} twice",
                show(text)
            ));
        }
    }
    for e in &entries {
        if !matches!(e.kind, NORMAL | USER_DEFINED | UNUSED) {
            let text = &bytes[e.start as usize..(e.start + e.len) as usize];
            if mergeable.find(text, &bytes, &entries).is_some() {
                return Err(format!(
                    "the SentencePiece model defines piece {} twice",
                    show(text)
                ));
            }
        }
    }

    let user_defined = Trie::new(
        raw.pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind == USER_DEFINED)
            .map(|(id, p)| (p.text, id as u32)),
    );
    let mut sp = SentencePiece {
        bytes,
        entries,
        mergeable,
        reserved,
        user_defined,
        byte_ids: [unk_id; 256],
        unk_id,
        byte_fallback: raw.byte_fallback,
        escape_whitespaces: raw.escape_whitespaces,
        has_unused,
        longest_mergeable,
        small_pairs: vec![(0, 0); SMALL * SMALL],
        joinable: vec![false; SMALL * SMALL],
        small_ids: [NONE; SMALL],
    };

    // The tables for ASCII characters and U+2581.
    let small_char = |i: usize| -> &'static [u8] {
        const ASCII: [u8; 128] = {
            let mut a = [0u8; 128];
            let mut i = 0;
            while i < 128 {
                a[i] = i as u8;
                i += 1;
            }
            a
        };
        if i < 0x80 {
            &ASCII[i..i + 1]
        } else {
            "\u{2581}".as_bytes()
        }
    };
    for x in 0..SMALL {
        if let Some((id, _)) = sp.mergeable.find(small_char(x), &sp.bytes, &sp.entries) {
            sp.small_ids[x] = id;
        }
        for y in 0..SMALL {
            let key = [small_char(x), small_char(y)].concat();
            if let Some((id, rank)) = sp.mergeable.find(&key, &sp.bytes, &sp.entries) {
                sp.small_pairs[x * SMALL + y] = (id + 1, rank);
            }
        }
    }
    for e in &sp.entries {
        if !matches!(e.kind, NORMAL | USER_DEFINED | UNUSED) {
            continue;
        }
        let piece = &sp.bytes[e.start as usize..(e.start + e.len) as usize];
        let (mut prev, mut pos) = (None, 0);
        while pos < piece.len() {
            let len = one_char_len(piece[pos]).min(piece.len() - pos);
            let small = small_index(&piece[pos..pos + len]);
            if let (Some(x), Some(y)) = (prev, small) {
                sp.joinable[x * SMALL + y] = true;
            }
            prev = small;
            pos += len;
        }
    }

    for c in 0..256usize {
        sp.byte_ids[c] = sp.final_id(format!("<0x{c:02X}>").as_bytes());
    }
    Ok(sp)
}

/// The byte a piece `<0xXX>` stands for (upper-case hex digits, as SentencePiece writes them).
fn byte_of_piece(t: &[u8]) -> Option<u8> {
    let hex = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    match t {
        [b'<', b'0', b'x', h, l, b'>'] => Some(hex(*h)? << 4 | hex(*l)?),
        _ => None,
    }
}

/// Reads a serialised `ModelProto`. Fields this code does not use are skipped by their wire
/// type; a repeated singular field keeps its last value and repeated sub-messages are merged,
/// as protocol buffers do; an enum value outside the enum leaves the field as it was.
fn parse_model(bytes: &[u8]) -> Result<RawModel<'_>, String> {
    let mut m = RawModel {
        pieces: Vec::new(),
        model_type: 1,
        treat_whitespace_as_suffix: false,
        byte_fallback: false,
        normalizer_name: Vec::new(),
        charsmap_len: 0,
        add_dummy_prefix: true,
        remove_extra_whitespaces: true,
        escape_whitespaces: true,
    };
    let mut r = Wire {
        buf: bytes,
        pos: 0,
        base: 0,
    };
    while !r.at_end() {
        let (field, wire) = r.key()?;
        match (field, wire) {
            (1, 2) => {
                let mut p = r.message()?;
                let mut piece = RawPiece {
                    text: &[],
                    score: 0.0,
                    kind: NORMAL,
                };
                while !p.at_end() {
                    match p.key()? {
                        (1, 2) => piece.text = p.bytes()?,
                        (2, 5) => piece.score = f32::from_bits(p.fixed32()?),
                        (3, 0) => {
                            let v = p.varint()? as i32;
                            if (1..=6).contains(&v) {
                                piece.kind = v as u8;
                            }
                        }
                        (_, w) => p.skip(w)?,
                    }
                }
                m.pieces.push(piece);
            }
            (2, 2) => {
                let mut t = r.message()?;
                while !t.at_end() {
                    match t.key()? {
                        (3, 0) => {
                            let v = t.varint()? as i32;
                            if (1..=4).contains(&v) {
                                m.model_type = v;
                            }
                        }
                        (24, 0) => m.treat_whitespace_as_suffix = t.varint()? != 0,
                        (35, 0) => m.byte_fallback = t.varint()? != 0,
                        (_, w) => t.skip(w)?,
                    }
                }
            }
            (3, 2) => {
                let mut s = r.message()?;
                while !s.at_end() {
                    match s.key()? {
                        (1, 2) => m.normalizer_name = s.bytes()?.to_vec(),
                        (2, 2) => m.charsmap_len = s.bytes()?.len(),
                        (3, 0) => m.add_dummy_prefix = s.varint()? != 0,
                        (4, 0) => m.remove_extra_whitespaces = s.varint()? != 0,
                        (5, 0) => m.escape_whitespaces = s.varint()? != 0,
                        (_, w) => s.skip(w)?,
                    }
                }
            }
            (_, w) => r.skip(w)?,
        }
    }
    Ok(m)
}

/// A reader of protocol-buffer wire format over a byte slice; every read is bounds-checked.
struct Wire<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Where `buf` starts in the whole file, for messages.
    base: usize,
}

impl<'a> Wire<'a> {
    fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn cut_short(&self, what: &str) -> String {
        format!(
            "the SentencePiece model file is cut short or corrupt: {what} at byte {} runs past its end",
            self.base + self.pos
        )
    }

    fn varint(&mut self) -> Result<u64, String> {
        let at = self.pos;
        let mut v = 0u64;
        for i in 0..10 {
            let Some(&c) = self.buf.get(self.pos) else {
                self.pos = at;
                return Err(self.cut_short("a number"));
            };
            self.pos += 1;
            v |= u64::from(c & 0x7f) << (7 * i);
            if c < 0x80 {
                return Ok(v);
            }
        }
        Err(format!(
            "the SentencePiece model file is corrupt: a number at byte {} is longer than 10 bytes",
            self.base + at
        ))
    }

    /// A field's number and wire type.
    fn key(&mut self) -> Result<(u64, u8), String> {
        let at = self.base + self.pos;
        let k = self.varint()?;
        if k >> 3 == 0 {
            return Err(format!(
                "the SentencePiece model file is corrupt (not a model?): field number 0 at byte {at}"
            ));
        }
        Ok((k >> 3, (k & 7) as u8))
    }

    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let at = self.pos;
        let len = self.varint()?;
        if len > (self.buf.len() - self.pos) as u64 {
            self.pos = at;
            return Err(self.cut_short("a length-delimited field"));
        }
        let s = &self.buf[self.pos..self.pos + len as usize];
        self.pos += len as usize;
        Ok(s)
    }

    /// A length-delimited field, as a reader of its own.
    fn message(&mut self) -> Result<Wire<'a>, String> {
        let b = self.bytes()?;
        Ok(Wire {
            buf: b,
            pos: 0,
            base: self.base + self.pos - b.len(),
        })
    }

    fn fixed(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.buf.len() - self.pos < n {
            return Err(self.cut_short("a fixed-size field"));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn fixed32(&mut self) -> Result<u32, String> {
        let s = self.fixed(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// Skips a field of this wire type.
    fn skip(&mut self, wire: u8) -> Result<(), String> {
        match wire {
            0 => self.varint().map(drop),
            1 => self.fixed(8).map(drop),
            2 => self.bytes().map(drop),
            5 => self.fixed(4).map(drop),
            3 | 4 => Err(format!(
                "the SentencePiece model file uses protocol-buffer groups (byte {}), which no SentencePiece model has",
                self.base + self.pos
            )),
            _ => Err(format!(
                "the SentencePiece model file is corrupt (not a model?): wire type {wire} before byte {}",
                self.base + self.pos
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // ---- Writing a ModelProto by hand ----

    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn key(out: &mut Vec<u8>, field: u64, wire: u64) {
        varint(out, field << 3 | wire);
    }

    fn field_bytes(out: &mut Vec<u8>, field: u64, b: &[u8]) {
        key(out, field, 2);
        varint(out, b.len() as u64);
        out.extend_from_slice(b);
    }

    fn field_varint(out: &mut Vec<u8>, field: u64, v: u64) {
        key(out, field, 0);
        varint(out, v);
    }

    struct Spec {
        model_type: u64,
        byte_fallback: bool,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        charsmap: &'static [u8],
        escape_whitespaces: bool,
        normalizer: bool,
    }

    fn gemma_like() -> Spec {
        Spec {
            model_type: 2,
            byte_fallback: true,
            add_dummy_prefix: false,
            remove_extra_whitespaces: false,
            charsmap: b"",
            escape_whitespaces: true,
            normalizer: true,
        }
    }

    /// A model with `<unk>` (id 0), the 256 byte pieces if byte fallback is on (ids 1..=256),
    /// then the given pieces.
    fn model(spec: &Spec, pieces: &[(&str, f32, u64)]) -> Vec<u8> {
        let mut all: Vec<(String, f32, u64)> = vec![("<unk>".into(), 0.0, 2)];
        if spec.byte_fallback {
            for c in 0..256 {
                all.push((format!("<0x{c:02X}>"), 0.0, 6));
            }
        }
        all.extend(pieces.iter().map(|&(p, s, t)| (p.to_string(), s, t)));
        let mut out = Vec::new();
        for (p, s, t) in &all {
            let mut m = Vec::new();
            field_bytes(&mut m, 1, p.as_bytes());
            key(&mut m, 2, 5);
            m.extend_from_slice(&s.to_bits().to_le_bytes());
            if *t != 1 {
                field_varint(&mut m, 3, *t);
            }
            field_bytes(&mut out, 1, &m);
        }
        let mut t = Vec::new();
        field_varint(&mut t, 3, spec.model_type);
        field_varint(&mut t, 4, all.len() as u64);
        field_varint(&mut t, 35, spec.byte_fallback as u64);
        field_varint(&mut t, 40, 0);
        field_bytes(&mut out, 2, &t);
        if spec.normalizer {
            let mut n = Vec::new();
            field_bytes(&mut n, 1, b"identity");
            field_bytes(&mut n, 2, spec.charsmap);
            field_varint(&mut n, 3, spec.add_dummy_prefix as u64);
            field_varint(&mut n, 4, spec.remove_extra_whitespaces as u64);
            field_varint(&mut n, 5, spec.escape_whitespaces as u64);
            field_bytes(&mut out, 3, &n);
        }
        out
    }

    /// The pieces of an encoding, written as text (byte pieces as `<0xXX>`).
    fn pieces(sp: &SentencePiece, text: &str) -> Vec<String> {
        let ids = sp.encode(text);
        assert_eq!(
            ids.len(),
            sp.count(text),
            "count and encode disagree on {text:?}"
        );
        ids.iter()
            .map(|&id| String::from_utf8_lossy(sp.piece(id)).into_owned())
            .collect()
    }

    fn load(pieces: &[(&str, f32, u64)]) -> SentencePiece {
        SentencePiece::from_model_proto(&model(&gemma_like(), pieces)).unwrap()
    }

    // ---- Encoding ----

    #[test]
    fn merges_highest_score_first() {
        let sp = load(&[
            ("a", -10.0, 1),
            ("b", -10.0, 1),
            ("c", -10.0, 1),
            ("bc", -1.0, 1),
            ("ab", -2.0, 1),
            ("abc", -3.0, 1),
        ]);
        // "bc" wins over "ab"; then "a"+"bc" is "abc".
        assert_eq!(pieces(&sp, "abc"), ["abc"]);
        // Without "abc" reachable: "ab" + "c"? "bc" is taken first, leaving "a", "bc".
        assert_eq!(pieces(&sp, "abcc"), ["abc", "c"]);
        assert_eq!(pieces(&sp, "cab"), ["c", "ab"]);
        assert_eq!(sp.vocab_size(), 1 + 256 + 6);
    }

    #[test]
    fn ties_go_to_the_leftmost_pair() {
        let sp = load(&[("a", -5.0, 1), ("aa", -1.0, 1)]);
        assert_eq!(pieces(&sp, "aaa"), ["aa", "a"]);
        assert_eq!(pieces(&sp, "aaaaa"), ["aa", "aa", "a"]);
        // Two different pieces of equal score: the left one is made first.
        let sp = load(&[
            ("x", -5.0, 1),
            ("y", -5.0, 1),
            ("xy", -1.0, 1),
            ("yx", -1.0, 1),
        ]);
        assert_eq!(pieces(&sp, "xyx"), ["xy", "x"]);
        assert_eq!(pieces(&sp, "yxy"), ["yx", "y"]);
    }

    #[test]
    fn negative_zero_ranks_below_zero() {
        // "pq" scores -0.0 and "qr" 0.0: the reference merges "qr" (no tie), while two
        // scores of -0.0 do tie and the leftmost pair wins.
        let three = |pq: f32, qr: f32| {
            load(&[
                ("p", -5.0, 1),
                ("q", -5.0, 1),
                ("r", -5.0, 1),
                ("pq", pq, 1),
                ("qr", qr, 1),
            ])
        };
        assert_eq!(pieces(&three(-0.0, 0.0), "pqr"), ["p", "qr"]);
        assert_eq!(pieces(&three(0.0, -0.0), "pqr"), ["pq", "r"]);
        assert_eq!(pieces(&three(-0.0, -0.0), "pqr"), ["pq", "r"]);
        assert_eq!(pieces(&three(1e-45, 0.0), "pqr"), ["pq", "r"]);
        assert_eq!(pieces(&three(-1.5, -1.4), "pqr"), ["p", "qr"]);
    }

    #[test]
    fn stale_pairs_are_skipped() {
        // "bc" then "abc" must not be merged from a stale "ab".
        let sp = load(&[
            ("a", -9.0, 1),
            ("b", -9.0, 1),
            ("c", -9.0, 1),
            ("d", -9.0, 1),
            ("ab", -3.0, 1),
            ("bc", -1.0, 1),
            ("cd", -2.0, 1),
            ("abcd", -4.0, 1),
        ]);
        // bc first: a, bc, d; then no "abc" or "bcd": stays.
        assert_eq!(pieces(&sp, "abcd"), ["a", "bc", "d"]);
    }

    #[test]
    fn spaces_become_lower_one_eighth_block() {
        let sp = load(&[
            ("\u{2581}", -1.0, 1),
            ("\u{2581}a", -0.5, 1),
            ("a", -2.0, 1),
        ]);
        assert_eq!(pieces(&sp, "a a"), ["a", "\u{2581}a"]);
        assert_eq!(pieces(&sp, "\u{2581}a"), ["\u{2581}a"]);
        let mut spec = gemma_like();
        spec.escape_whitespaces = false;
        let sp = SentencePiece::from_model_proto(&model(
            &spec,
            &[(" a", -0.5, 1), ("a", -1.0, 1), (" ", -1.0, 1)],
        ))
        .unwrap();
        assert_eq!(pieces(&sp, "a a"), ["a", " a"]);
    }

    #[test]
    fn pieces_may_span_a_space() {
        // "a▁b" holds "a" before "▁", so the text is not cut there and "a b" merges whole;
        // "c▁" is no piece, so "c b" is cut before the space.
        let sp = load(&[
            ("a", -9.0, 1),
            ("b", -9.0, 1),
            ("c", -9.0, 1),
            ("\u{2581}", -9.0, 1),
            ("a\u{2581}", -2.0, 1),
            ("a\u{2581}b", -1.0, 1),
            ("\u{2581}b", -3.0, 1),
        ]);
        assert_eq!(pieces(&sp, "a b"), ["a\u{2581}b"]);
        assert_eq!(pieces(&sp, "c b"), ["c", "\u{2581}b"]);
        assert_eq!(pieces(&sp, "ca bc"), ["c", "a\u{2581}b", "c"]);
    }

    #[test]
    fn user_defined_pieces_are_frozen_and_longest_first() {
        let sp = load(&[
            ("<b>", 0.0, 4),
            ("<br>", 0.0, 4),
            ("\n", 0.0, 4),
            ("\n\n", 0.0, 4),
            ("x", -1.0, 1),
            ("x<", -0.1, 1),
            (">x", -0.1, 1),
            ("b", -1.0, 1),
            ("r", -1.0, 1),
            ("<", -1.0, 1),
            (">", -1.0, 1),
            ("<b", -0.05, 1),
        ]);
        assert_eq!(pieces(&sp, "x<b>x"), ["x", "<b>", "x"]);
        assert_eq!(pieces(&sp, "x<br>x"), ["x", "<br>", "x"]);
        // "<b" is no user-defined piece: merged normally (it outscores "x<"), then ">x".
        assert_eq!(pieces(&sp, "x<bx>x"), ["x", "<b", "x", ">x"]);
        assert_eq!(pieces(&sp, "\n\n\nx"), ["\n\n", "\n", "x"]);
        assert_eq!(pieces(&sp, "x\n\nx"), ["x", "\n\n", "x"]);
    }

    #[test]
    fn unknown_characters_fall_back_to_bytes() {
        let sp = load(&[("a", -1.0, 1)]);
        assert_eq!(pieces(&sp, "aé"), ["a", "<0xC3>", "<0xA9>"]);
        assert_eq!(
            sp.encode("\u{1F600}"),
            [1 + 0xF0, 1 + 0x9F, 1 + 0x98, 1 + 0x80]
        );
        assert_eq!(sp.encode(""), Vec::<u32>::new());
        assert_eq!(sp.count(""), 0);
    }

    #[test]
    fn without_byte_fallback_a_run_of_unknowns_is_one_unk() {
        let mut spec = gemma_like();
        spec.byte_fallback = false;
        let sp = SentencePiece::from_model_proto(&model(&spec, &[("a", -1.0, 1)])).unwrap();
        assert_eq!(sp.encode("éé a"), [0, 1]);
        assert_eq!(sp.encode("aéa"), [1, 0, 1]);
        assert_eq!(sp.count("ééaéé"), 3);
    }

    #[test]
    fn unused_pieces_are_split_back() {
        // "abc" is unused: it is still merged ("ab" + "c"), then split back into them.
        let sp = load(&[
            ("a", -9.0, 1),
            ("b", -9.0, 1),
            ("c", -9.0, 1),
            ("ab", -1.0, 1),
            ("abc", -0.5, 5),
        ]);
        assert!(sp.has_unused);
        assert_eq!(pieces(&sp, "abc"), ["ab", "c"]);
        assert_eq!(pieces(&sp, "abcab"), ["ab", "c", "ab"]);
        // Unused inside unused: both undone.
        let sp = load(&[
            ("a", -9.0, 1),
            ("b", -9.0, 1),
            ("c", -9.0, 1),
            ("ab", -1.0, 5),
            ("abc", -0.5, 5),
        ]);
        assert_eq!(pieces(&sp, "abc"), ["a", "b", "c"]);
    }

    #[test]
    fn control_pieces_are_not_matched_in_text() {
        let sp = load(&[
            ("<s>", 0.0, 3),
            ("<", -1.0, 1),
            ("s", -1.0, 1),
            (">", -1.0, 1),
        ]);
        assert_eq!(pieces(&sp, "<s>"), ["<", "s", ">"]);
    }

    #[test]
    fn long_runs_take_linear_log_time() {
        let sp = load(&[("a", -1.0, 1), ("aa", -0.5, 1), ("aaaa", -0.25, 1)]);
        let text = "a".repeat(200_001);
        assert_eq!(sp.count(&text), 50_001);
    }

    // ---- Refusals ----

    #[test]
    fn refuses_other_models() {
        let mut spec = gemma_like();
        spec.model_type = 1;
        let e = SentencePiece::from_model_proto(&model(&spec, &[]))
            .err()
            .unwrap();
        assert!(e.contains("UNIGRAM") && e.contains("only BPE"), "{e}");

        let mut spec = gemma_like();
        spec.add_dummy_prefix = true;
        let e = SentencePiece::from_model_proto(&model(&spec, &[]))
            .err()
            .unwrap();
        assert!(e.contains("dummy") && e.contains("Gemma-style"), "{e}");

        let mut spec = gemma_like();
        spec.remove_extra_whitespaces = true;
        let e = SentencePiece::from_model_proto(&model(&spec, &[]))
            .err()
            .unwrap();
        assert!(e.contains("extra whitespace"), "{e}");

        let mut spec = gemma_like();
        spec.charsmap = b"\x04\0\0\0abcdxyz";
        let e = SentencePiece::from_model_proto(&model(&spec, &[]))
            .err()
            .unwrap();
        assert!(e.contains("character map"), "{e}");

        // No normaliser spec at all: the defaults add a dummy prefix.
        let mut spec = gemma_like();
        spec.normalizer = false;
        assert!(SentencePiece::from_model_proto(&model(&spec, &[])).is_err());
    }

    #[test]
    fn refuses_bad_vocabularies() {
        let dup = SentencePiece::from_model_proto(&model(
            &gemma_like(),
            &[("a", 0.0, 1), ("a", -1.0, 4)],
        ));
        assert!(dup.err().unwrap().contains("twice"));
        // Also across types (the reference refuses this too).
        let dup =
            SentencePiece::from_model_proto(&model(&gemma_like(), &[("a", 0.0, 1), ("a", 0.0, 3)]));
        assert!(dup.err().unwrap().contains("twice"));
        let nan = SentencePiece::from_model_proto(&model(&gemma_like(), &[("a", f32::NAN, 1)]));
        assert!(nan.is_err());
        let empty = SentencePiece::from_model_proto(&model(&gemma_like(), &[("", 0.0, 1)]));
        assert!(empty.err().unwrap().contains("empty"));
        let bad_byte =
            SentencePiece::from_model_proto(&model(&gemma_like(), &[("<0xzz>", 0.0, 6)]));
        assert!(bad_byte.is_err());
        let mut spec = gemma_like();
        spec.byte_fallback = false;
        let stray_byte = SentencePiece::from_model_proto(&model(&spec, &[("<0x41>", 0.0, 6)]));
        assert!(stray_byte.is_err());
        // No unknown piece.
        let mut out = Vec::new();
        let mut t = Vec::new();
        field_varint(&mut t, 3, 2);
        field_bytes(&mut out, 2, &t);
        let mut n = Vec::new();
        field_varint(&mut n, 3, 0);
        field_varint(&mut n, 4, 0);
        field_bytes(&mut out, 3, &n);
        let e = SentencePiece::from_model_proto(&out).err().unwrap();
        assert!(e.contains("no unknown"), "{e}");
    }

    #[test]
    fn truncated_and_garbage_files_are_errors_not_panics() {
        let good = model(
            &gemma_like(),
            &[("a", -1.0, 1), ("ab", -0.5, 1), ("<b>", 0.0, 4)],
        );
        assert!(SentencePiece::from_model_proto(&good).is_ok());
        for cut in 0..good.len() {
            // A cut may land between fields and still read as a (refused or smaller) model.
            let _ = SentencePiece::from_model_proto(&good[..cut]);
        }
        let e = SentencePiece::from_model_proto(&good[..good.len() - 3])
            .err()
            .unwrap();
        assert!(e.contains("cut short"), "{e}");
        assert!(SentencePiece::from_model_proto(b"").is_err());
        assert!(SentencePiece::from_model_proto(b"\x00\x01").is_err());
        assert!(SentencePiece::from_model_proto(&[0xff; 20]).is_err());
        assert!(SentencePiece::from_model_proto(b"\x0a\xff\xff\xff\xff\x0f").is_err());

        // Random bytes and random corruptions of a good model.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..3000 {
            let len = (next() % 64) as usize;
            let junk: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let _ = SentencePiece::from_model_proto(&junk);
            let mut bent = good.clone();
            for _ in 0..1 + next() % 4 {
                let i = (next() as usize) % bent.len();
                bent[i] = next() as u8;
            }
            if let Ok(sp) = SentencePiece::from_model_proto(&bent) {
                let _ = sp.encode("ab <b> a\u{e9}");
            }
        }
    }

    #[test]
    fn unknown_fields_and_repeats_follow_protobuf_rules() {
        let mut m = model(&gemma_like(), &[("a", -1.0, 1), ("aa", -0.5, 1)]);
        // An unknown field of every wire type at the top level.
        field_varint(&mut m, 99, 12345);
        key(&mut m, 98, 1);
        m.extend_from_slice(&[0; 8]);
        key(&mut m, 97, 5);
        m.extend_from_slice(&[0; 4]);
        field_bytes(&mut m, 96, b"whatever");
        // A second normaliser spec is merged into the first; its escape setting wins.
        let mut n = Vec::new();
        field_varint(&mut n, 5, 0);
        field_bytes(&mut m, 3, &n);
        let sp = SentencePiece::from_model_proto(&m).unwrap();
        assert!(!sp.escape_whitespaces);
        assert_eq!(sp.count("aaa"), 2);
    }
}
