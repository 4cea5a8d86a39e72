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
//!    precompiled character map, no removal of extra whitespace); what is left is that each
//!    space becomes U+2581 ('▁') when spaces are escaped, and that a model with a dummy prefix
//!    (Mistral's, Llama 2's) puts one space before a text that is not empty.
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

pub use model::TextSettings;
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
    /// Whether a text that is not empty gets one space before it.
    add_dummy_prefix: bool,
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
        model::read(bytes)
    }

    /// Reads a vocabulary in the plain-text form `splintr`'s vocabulary crates ship
    /// (`piece score [type]` per line, the piece in base64), with the model file's settings
    /// that the form does not carry.
    pub fn from_text(bytes: &[u8], settings: &TextSettings) -> Result<SentencePiece, String> {
        model::read_text(bytes, settings)
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
        let mut first = true;
        while !rest.is_empty() {
            let mut cut = rest.len().min(MAX_PART);
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            let (now, later) = rest.split_at(cut);
            self.run_part(now, first, &mut out, &mut scratch);
            rest = later;
            first = false;
        }
    }

    /// Encodes one part of a text: normalises it, then merges it stretch by stretch, cut at
    /// frozen symbols and between neighbours no piece joins (or all at once when the model
    /// has unused pieces).
    fn run_part<S: Sink>(&self, text: &str, first: bool, out: &mut Out<S>, scratch: &mut Scratch) {
        let norm = self.normalize(text, first && self.add_dummy_prefix);
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

    /// The normalised text: the text itself, after one space when `prefix` (a dummy prefix on
    /// a text that is not empty), with each space turned into U+2581 when the model escapes
    /// whitespace.
    fn normalize<'t>(&self, text: &'t str, prefix: bool) -> Cow<'t, [u8]> {
        let b = text.as_bytes();
        let prefix = prefix && !b.is_empty();
        if !self.escape_whitespaces {
            return match prefix {
                true => Cow::Owned([b" ", b].concat()),
                false => Cow::Borrowed(b),
            };
        }
        if !prefix && !b.contains(&b' ') {
            return Cow::Borrowed(b);
        }
        let spaces = b.iter().filter(|&&c| c == b' ').count();
        let mut v = Vec::with_capacity(b.len() + 2 * spaces + 3);
        if prefix {
            v.extend_from_slice("\u{2581}".as_bytes());
        }
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

mod model;
mod tables;
use tables::{Table, Trie};

#[cfg(test)]
mod tests;
