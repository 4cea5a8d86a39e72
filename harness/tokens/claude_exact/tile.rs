//! The vocabulary of a Claude tokenizer family and the fewest tokens that cover a marked stream.
//!
//! Every piece costs one token, and so does each byte of a character no piece covers (fewer
//! where the vocabulary holds a prefix of its UTF-8 bytes: the byte fallback). The count of a
//! stream is the minimum number of pieces and fallback tokens that tile it, found by dynamic
//! programming over a byte trie of the pieces.
//!
//! No piece holds a word-end marker anywhere but at its end, and whitespace pieces are runs of
//! one whitespace character, so no piece crosses the place just after a word end or where a
//! whitespace run meets anything else: the stream is tiled one segment between such places at a
//! time, and a segment's count is remembered (most text is a few thousand distinct words).

use super::stream::{BOW, CAPS, EOW, SHIFT};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::io::Read;

/// One family's pieces as a byte trie, and its byte-fallback prefixes.
pub struct Vocab {
    /// Child of the root for each first byte (`NONE`: none).
    root: [u32; 256],
    /// Node `i`'s edges are `edge_start[i]..edge_start[i + 1]`, sorted by byte.
    edge_start: Vec<u32>,
    edge_byte: Vec<u8>,
    edge_child: Vec<u32>,
    terminal: Vec<bool>,
    /// Byte strings shorter than a character that are one token (prefixes of UTF-8 sequences).
    byte_prefixes: HashSet<Vec<u8>>,
    pieces: usize,
}

const NONE: u32 = u32::MAX;
const MAGIC: &[u8; 8] = b"tcclaude";

impl Vocab {
    /// Read a family's embedded vocabulary (`fixtures/tokenizers/claude/make.py` writes it).
    pub fn load(gz: &[u8]) -> Vocab {
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(gz)
            .read_to_end(&mut raw)
            .expect("the embedded Claude vocabulary is gzip");
        assert!(
            raw.starts_with(MAGIC),
            "the embedded Claude vocabulary's header"
        );
        let mut pieces: Vec<Vec<u8>> = Vec::new();
        let mut byte_prefixes = HashSet::new();
        let mut at = MAGIC.len();
        while at < raw.len() {
            let kind = raw[at];
            let len = u16::from_le_bytes([raw[at + 1], raw[at + 2]]) as usize;
            let data = raw[at + 3..at + 3 + len].to_vec();
            at += 3 + len;
            match kind {
                0 => pieces.push(data),
                1 => {
                    byte_prefixes.insert(data);
                }
                // A contraction suffix is a piece, and is written glued to its word end.
                _ => {
                    let mut glued = data.clone();
                    glued.push(EOW);
                    pieces.push(data);
                    pieces.push(glued);
                }
            }
        }
        // The markers are pieces of their own in the files; make sure of it.
        for m in [BOW, EOW, SHIFT, CAPS] {
            pieces.push(vec![m]);
        }
        Vocab::build(pieces, byte_prefixes)
    }

    fn build(pieces: Vec<Vec<u8>>, byte_prefixes: HashSet<Vec<u8>>) -> Vocab {
        let mut children: Vec<Vec<(u8, u32)>> = vec![Vec::new()];
        let mut terminal = vec![false];
        let mut distinct = HashSet::new();
        for p in &pieces {
            if p.is_empty() || !distinct.insert(p.as_slice()) {
                continue;
            }
            let mut node = 0usize;
            for &b in p {
                node = match children[node].iter().find(|&&(x, _)| x == b) {
                    Some(&(_, c)) => c as usize,
                    None => {
                        let c = children.len();
                        children.push(Vec::new());
                        terminal.push(false);
                        children[node].push((b, c as u32));
                        c
                    }
                };
            }
            terminal[node] = true;
        }
        let mut root = [NONE; 256];
        for &(b, c) in &children[0] {
            root[b as usize] = c;
        }
        let mut edge_start = Vec::with_capacity(children.len() + 1);
        let mut edge_byte = Vec::new();
        let mut edge_child = Vec::new();
        for list in &mut children {
            list.sort_unstable();
            edge_start.push(edge_byte.len() as u32);
            for &(b, c) in list.iter() {
                edge_byte.push(b);
                edge_child.push(c);
            }
        }
        edge_start.push(edge_byte.len() as u32);
        Vocab {
            root,
            edge_start,
            edge_byte,
            edge_child,
            terminal,
            byte_prefixes,
            pieces: distinct.len(),
        }
    }

    /// How many distinct pieces the vocabulary holds.
    pub fn len(&self) -> usize {
        self.pieces
    }

    #[inline]
    fn child(&self, node: u32, b: u8) -> u32 {
        let (lo, hi) = (
            self.edge_start[node as usize] as usize,
            self.edge_start[node as usize + 1] as usize,
        );
        let bytes = &self.edge_byte[lo..hi];
        let found = match bytes.len() {
            0..=8 => bytes.iter().position(|&x| x == b),
            _ => bytes.binary_search(&b).ok(),
        };
        match found {
            Some(k) => self.edge_child[lo + k],
            None => NONE,
        }
    }

    /// The tokens of one character no piece covers: its UTF-8 bytes, one token each, fewer where
    /// a run of them is a token.
    fn fallback(&self, ch: &[u8]) -> u32 {
        let n = ch.len();
        let mut best = [0u32, u32::MAX, u32::MAX, u32::MAX, u32::MAX];
        for i in 1..=n {
            for j in 0..i {
                if best[j] == u32::MAX {
                    continue;
                }
                if i - j == 1 || self.byte_prefixes.contains(&ch[j..i]) {
                    best[i] = best[i].min(best[j] + 1);
                }
            }
        }
        best[n]
    }

    /// The fewest tokens that tile `seg` (a whole number of characters and markers).
    pub fn tile(&self, seg: &[u8], best: &mut Vec<u32>) -> u32 {
        let n = seg.len();
        best.clear();
        best.resize(n + 1, u32::MAX);
        best[0] = 0;
        let mut s = 0;
        while s < n {
            let here = best[s];
            let width = char_width(seg[s]);
            if here == u32::MAX {
                s += width;
                continue;
            }
            let mut covered = false;
            let mut node = self.root[seg[s] as usize];
            let mut j = s + 1;
            while node != NONE {
                if self.terminal[node as usize] {
                    covered |= j == s + width;
                    if here + 1 < best[j] {
                        best[j] = here + 1;
                    }
                }
                if j == n {
                    break;
                }
                node = self.child(node, seg[j]);
                j += 1;
            }
            if !covered {
                let end = (s + width).min(n);
                let cost = match width {
                    1 => 1,
                    _ => self.fallback(&seg[s..end]),
                };
                if here + cost < best[end] {
                    best[end] = here + cost;
                }
            }
            s += width;
        }
        best[n]
    }
}

/// The bytes of the character (or marker) a byte starts.
#[inline]
fn char_width(b: u8) -> usize {
    match b {
        0..=0x7F | 0xF8..=0xFF => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// Segments at most this long are remembered; longer ones (a run of ideographs, a long number)
/// are tiled each time.
const MEMO_MAX: usize = 64;
/// The remembered segments of a thread, per family, are forgotten past this many.
const MEMO_ENTRIES: usize = 1 << 18;

/// A family's remembered segment counts.
type Memo = HashMap<Box<[u8]>, u32, foldhash::fast::RandomState>;

thread_local! {
    static MEMO: RefCell<[Memo; 3]> = RefCell::new(Default::default());
    static SCRATCH: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Forget this thread's remembered segments (for measuring the tokenizer cold).
pub fn forget() {
    MEMO.with(|m| m.borrow_mut().iter_mut().for_each(HashMap::clear));
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n')
}

/// The tokens of a marked stream: the sum over its segments. The thread's remembered segments
/// and scratch space are taken once for the whole stream, not once a segment.
pub fn count_stream(vocab: &Vocab, which: usize, stream: &[u8]) -> usize {
    MEMO.with(|m| {
        SCRATCH.with(|s| {
            let mut m = m.borrow_mut();
            let mut scratch = s.borrow_mut();
            let table = &mut m[which];
            let mut segment = |seg: &[u8]| -> usize {
                if seg.len() == 1 {
                    return 1;
                }
                if seg.len() > MEMO_MAX {
                    return vocab.tile(seg, &mut scratch) as usize;
                }
                if let Some(&c) = table.get(seg) {
                    return c as usize;
                }
                let c = vocab.tile(seg, &mut scratch);
                if table.len() >= MEMO_ENTRIES {
                    table.clear();
                }
                table.insert(seg.into(), c);
                c as usize
            };
            let mut total = 0usize;
            let mut from = 0;
            let n = stream.len();
            for i in 0..n {
                let b = stream[i];
                let cut_after = b == EOW
                    || (i + 1 < n && stream[i + 1] != b && (is_ws(b) || is_ws(stream[i + 1])));
                if cut_after {
                    total += segment(&stream[from..=i]);
                    from = i + 1;
                }
            }
            if from < n {
                total += segment(&stream[from..]);
            }
            total
        })
    })
}
