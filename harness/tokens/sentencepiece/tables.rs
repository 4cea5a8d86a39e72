//! The encoder's lookup tables: piece bytes to id and score rank (an open-addressing table with
//! its own hash), and a trie of the user-defined pieces for the longest match.

use super::*;

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
pub(super) struct Table {
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
    pub(super) fn with_room_for(n: usize) -> Table {
        let cap = (n.saturating_mul(2)).next_power_of_two().max(16);
        Table {
            slots: vec![Slot::default(); cap],
            mask: cap - 1,
        }
    }

    /// The id and score rank of the piece with these bytes, if it is in the table.
    #[inline]
    pub(super) fn find(&self, key: &[u8], bytes: &[u8], entries: &[Entry]) -> Option<(u32, u32)> {
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
    pub(super) fn insert(&mut self, id: u32, bytes: &[u8], entries: &[Entry]) -> bool {
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
pub(super) struct Trie {
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
    pub(super) fn new<'a>(pieces: impl Iterator<Item = (&'a [u8], u32)>) -> Trie {
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
    pub(super) fn starts_with(&self, c: u8) -> bool {
        self.root[c as usize] != 0
    }

    /// The length and id of the longest piece that `b` starts with, or (0, `NONE`).
    pub(super) fn longest(&self, b: &[u8]) -> (usize, u32) {
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
