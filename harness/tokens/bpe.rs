//! The o200k_base and cl100k_base byte-pair encodings, counted one pretoken at a time.
//!
//! A pretoken's tokens are what byte-pair merging makes of its bytes: start from single bytes
//! and, while two neighbouring parts join into a token, join the pair whose joined bytes have
//! the lowest rank (the leftmost such pair on a tie). Every byte is a token of both
//! vocabularies, so the count is the number of parts left.
//!
//! The vocabularies are OpenAI's published files (`fixtures/tokenizers/`, with their source,
//! licence and checksums), embedded compressed and read the first time each is used into one
//! byte array, its offsets and an open-addressing table of ranks: about 5 MB for o200k_base,
//! where bpe-openai's automata held about 67 MB (and cl100k_base 2.5 MB against 31 MB), which
//! decided the memory of every large job. The counts are checked against bpe-openai's and
//! tiktoken's on generated, captured and random text (tests here and in `tests/tokens.rs`).

use super::pretoken::{self, Pattern};
use std::io::Read;
use std::sync::OnceLock;

/// A vocabulary: each token's bytes by rank, and a table from bytes to rank.
pub struct Bpe {
    pattern: Pattern,
    /// Every token's bytes, in rank order.
    bytes: Box<[u8]>,
    /// Where token `r` starts in `bytes`; one more entry holds the end.
    starts: Box<[u32]>,
    /// Open addressing by hash of the bytes: rank + 1, or 0 for an empty slot. At most half
    /// full, so a lookup of bytes that are no token ends at an empty slot after a few probes.
    slots: Box<[u32]>,
}

/// The compressed vocabularies (`fixtures/tokenizers/make.py` writes them).
const O200K: &[u8] = include_bytes!("../../fixtures/tokenizers/o200k_base.tokens.gz");
const CL100K: &[u8] = include_bytes!("../../fixtures/tokenizers/cl100k_base.tokens.gz");
/// The files' first bytes.
const MAGIC: &[u8; 8] = b"tcbpe1\n\0";

/// Pieces at most this long are merged by scanning for the lowest pair (cheaper for the short
/// pretokens that are nearly all of any text); longer ones through a heap, so that a hostile
/// pretoken of a million bytes takes time in proportion to its length, not its square.
const SCAN_UPTO: usize = 48;

impl Bpe {
    /// o200k_base, read the first time it is asked for.
    pub fn o200k() -> &'static Bpe {
        static V: OnceLock<Bpe> = OnceLock::new();
        V.get_or_init(|| Bpe::load(O200K, Pattern::O200k))
    }

    /// cl100k_base, read the first time it is asked for.
    pub fn cl100k() -> &'static Bpe {
        static V: OnceLock<Bpe> = OnceLock::new();
        V.get_or_init(|| Bpe::load(CL100K, Pattern::Cl100k))
    }

    /// The pretokenizer pattern that goes with the vocabulary.
    pub fn pattern(&self) -> Pattern {
        self.pattern
    }

    /// Read an embedded vocabulary. Its bytes are this build's own, checked by tests, so a
    /// malformed one is a broken build (a panic), not an input error.
    fn load(gz: &[u8], pattern: Pattern) -> Bpe {
        let mut data = Vec::new();
        flate2::read::GzDecoder::new(gz)
            .read_to_end(&mut data)
            .expect("the embedded vocabulary is gzip");
        assert_eq!(&data[..8], MAGIC, "the embedded vocabulary's header");
        let n = u32::from_le_bytes(data[8..12].try_into().expect("four bytes")) as usize;
        let mut tokens = Vec::with_capacity(n);
        let mut at = 12;
        for _ in 0..n {
            let len = data[at] as usize;
            tokens.push(&data[at + 1..at + 1 + len]);
            at += 1 + len;
        }
        assert_eq!(at, data.len(), "the embedded vocabulary's length");
        Bpe::from_tokens(&tokens, pattern).expect("the embedded vocabulary's tokens are distinct")
    }

    /// A vocabulary from a tiktoken rank file (each line a token's bytes in base64, a space and
    /// its rank; ranks run from 0 in order), with the pretokenizer `pattern`.
    pub fn from_tiktoken(text: &[u8], pattern: Pattern) -> Result<Bpe, String> {
        use base64::Engine;
        let mut tokens = Vec::new();
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            let mut fields = line.split(|&b| b == b' ');
            let (Some(b64), Some(rank), None) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(format!("line {}: not `<base64> <rank>`", i + 1));
            };
            let token = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|e| format!("line {}: {e}", i + 1))?;
            if std::str::from_utf8(rank).ok() != Some(tokens.len().to_string().as_str()) {
                return Err(format!("line {}: ranks must run from 0 in order", i + 1));
            }
            tokens.push(token);
        }
        let refs: Vec<&[u8]> = tokens.iter().map(Vec::as_slice).collect();
        Bpe::from_tokens(&refs, pattern)
    }

    /// A vocabulary of these tokens, in rank order. Every single byte must be a token (the
    /// count is the parts left after merging), and no token may appear twice.
    fn from_tokens(tokens: &[&[u8]], pattern: Pattern) -> Result<Bpe, String> {
        let n = tokens.len();
        if n == 0 || n >= u32::MAX as usize / 2 {
            return Err(format!("{n} tokens"));
        }
        let mut bytes = Vec::with_capacity(tokens.iter().map(|t| t.len()).sum());
        let mut starts = Vec::with_capacity(n + 1);
        for t in tokens {
            if t.is_empty() || t.len() > 255 {
                return Err(format!("a token of {} bytes", t.len()));
            }
            starts.push(bytes.len() as u32);
            bytes.extend_from_slice(t);
        }
        starts.push(bytes.len() as u32);
        let mut v = Bpe {
            pattern,
            bytes: bytes.into_boxed_slice(),
            starts: starts.into_boxed_slice(),
            slots: vec![0; (2 * n).next_power_of_two()].into_boxed_slice(),
        };
        for rank in 0..n as u32 {
            match v.probe(v.token(rank)) {
                Ok(_) => return Err(format!("token {rank} appears twice")),
                Err(slot) => v.slots[slot] = rank + 1,
            }
        }
        if let Some(b) = (0..=255u8).find(|&b| v.rank(&[b]).is_none()) {
            return Err(format!("the byte {b:#04x} is not a token"));
        }
        Ok(v)
    }

    fn token(&self, rank: u32) -> &[u8] {
        &self.bytes[self.starts[rank as usize] as usize..self.starts[rank as usize + 1] as usize]
    }

    /// `Ok(rank)` of `bytes`, or `Err(slot)`: the empty slot where it would go.
    fn probe(&self, bytes: &[u8]) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let mut i = xxhash_rust::xxh3::xxh3_64(bytes) as usize & mask;
        loop {
            match self.slots[i] {
                0 => return Err(i),
                r if self.token(r - 1) == bytes => return Ok(r - 1),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// The rank of a token, `None` for bytes that are not one.
    fn rank(&self, bytes: &[u8]) -> Option<u32> {
        self.probe(bytes).ok()
    }

    /// Tokens of a whole text: its pretokens' counts, summed.
    pub fn count(&self, text: &str) -> usize {
        pretoken::split(self.pattern, text)
            .map(|p| self.count_piece(p.as_bytes()))
            .sum()
    }

    /// Tokens of one pretoken.
    pub fn count_piece(&self, piece: &[u8]) -> usize {
        match piece.len() {
            0 => 0,
            1 => 1,
            _ if self.rank(piece).is_some() => 1,
            n if n <= SCAN_UPTO => self.merge_scanning(piece),
            _ => self.merge_with_heap(piece),
        }
    }

    /// The merge, finding the lowest pair by a scan each round. `ends[i]` is where the part
    /// starting at `starts[i]` ends; `pairs[i]` is the rank of part `i` joined with part
    /// `i + 1`.
    fn merge_scanning(&self, piece: &[u8]) -> usize {
        let mut starts: Vec<usize> = (0..piece.len()).collect();
        let pair = |starts: &[usize], i: usize| -> u32 {
            let end = starts.get(i + 2).copied().unwrap_or(piece.len());
            match starts.get(i + 1) {
                Some(_) => self.rank(&piece[starts[i]..end]).unwrap_or(u32::MAX),
                None => u32::MAX,
            }
        };
        let mut pairs: Vec<u32> = (0..starts.len()).map(|i| pair(&starts, i)).collect();
        loop {
            let (mut best, mut at) = (u32::MAX, usize::MAX);
            for (i, &r) in pairs.iter().enumerate() {
                if r < best {
                    (best, at) = (r, i);
                }
            }
            if best == u32::MAX {
                return starts.len();
            }
            starts.remove(at + 1);
            pairs.remove(at + 1);
            pairs[at] = pair(&starts, at);
            if at > 0 {
                pairs[at - 1] = pair(&starts, at - 1);
            }
        }
    }

    /// The same merge for a long piece: parts in a linked list, candidate pairs in a heap
    /// ordered by rank then position, stale ones skipped when they come up. Positions are held
    /// as 32-bit numbers where they fit (about 17 bytes of bookkeeping per byte of the piece).
    fn merge_with_heap(&self, piece: &[u8]) -> usize {
        match u32::try_from(piece.len()) {
            Ok(n) if n < u32::MAX - 1 => self.merge_linked::<u32>(piece),
            _ => self.merge_linked::<usize>(piece),
        }
    }

    fn merge_linked<I: Position>(&self, piece: &[u8]) -> usize {
        use std::cmp::Reverse;
        let n = piece.len();
        // Parts are named by their first byte: `next[i]` is the next part's first byte (`n`
        // after the last, GONE once part `i` is merged into the one before it), `prev[i]` the
        // previous one's (NONE before the first).
        let (gone, none) = (I::MAX, I::MAX.less_one());
        let mut next: Vec<I> = (1..=n).map(I::of).collect();
        let mut prev: Vec<I> = (0..n)
            .map(|i| if i == 0 { none } else { I::of(i - 1) })
            .collect();
        let mut pair = vec![u32::MAX; n];
        let rank_of = |start: usize, next: &[I]| -> u32 {
            let second = next[start].at();
            match second < n {
                true => self
                    .rank(&piece[start..next[second].at()])
                    .unwrap_or(u32::MAX),
                false => u32::MAX,
            }
        };
        let mut heap = std::collections::BinaryHeap::with_capacity(n);
        for (i, p) in pair.iter_mut().enumerate() {
            *p = rank_of(i, &next);
            if *p != u32::MAX {
                heap.push(Reverse((*p, I::of(i))));
            }
        }
        let mut parts = n;
        while let Some(Reverse((r, i))) = heap.pop() {
            let i = i.at();
            if next[i] == gone || pair[i] != r {
                continue;
            }
            // Join part `i` with the one after it.
            let later = next[i].at();
            next[i] = next[later];
            next[later] = gone;
            if next[i].at() < n {
                let after = next[i].at();
                prev[after] = I::of(i);
            }
            parts -= 1;
            pair[i] = rank_of(i, &next);
            if pair[i] != u32::MAX {
                heap.push(Reverse((pair[i], I::of(i))));
            }
            if prev[i] != none {
                let before = prev[i].at();
                pair[before] = rank_of(before, &next);
                if pair[before] != u32::MAX {
                    heap.push(Reverse((pair[before], I::of(before))));
                }
            }
        }
        parts
    }
}

/// A position in a piece, held as narrow as the piece allows.
trait Position: Copy + Ord {
    const MAX: Self;
    fn of(i: usize) -> Self;
    fn at(self) -> usize;
    fn less_one(self) -> Self;
}

impl Position for u32 {
    const MAX: u32 = u32::MAX;
    fn of(i: usize) -> u32 {
        i as u32
    }
    fn at(self) -> usize {
        self as usize
    }
    fn less_one(self) -> u32 {
        self - 1
    }
}

impl Position for usize {
    const MAX: usize = usize::MAX;
    fn of(i: usize) -> usize {
        i
    }
    fn at(self) -> usize {
        self
    }
    fn less_one(self) -> usize {
        self - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each vocabulary reads back every token at its rank.
    #[test]
    fn every_token_is_found_at_its_rank() {
        for v in [Bpe::o200k(), Bpe::cl100k()] {
            let n = v.starts.len() - 1;
            assert!(n > 100_000);
            for r in 0..n as u32 {
                assert_eq!(v.rank(v.token(r)), Some(r));
            }
            assert_eq!(v.rank(b"\xff\xfe toolcost-not-a-token"), None);
        }
    }

    /// Both merges give bpe-openai's count for each pretoken of generated and random text,
    /// short pieces and long ones alike.
    #[test]
    fn merges_count_as_bpe_openai_does() {
        let theirs = [bpe_openai::o200k_base(), bpe_openai::cl100k_base()];
        let ours = [Bpe::o200k(), Bpe::cl100k()];
        let mut rng = crate::rng::Rng::new(5);
        let alphabet: &[&str] = &[
            "a",
            "e",
            "th",
            "ing",
            "Z",
            "Q",
            "0",
            "1",
            "_",
            "-",
            "/",
            ".",
            "{",
            "\"",
            "é",
            "日",
            "\u{1f600}",
            "aa",
            "ab",
            "ba",
            "ZZ",
        ];
        for _ in 0..4000 {
            let len = rng.below(90);
            let piece: String = (0..len).map(|_| *rng.pick(alphabet)).collect();
            for (v, t) in ours.iter().zip(theirs) {
                let b = piece.as_bytes();
                let want = t.bpe.count(b);
                assert_eq!(v.count_piece(b), want, "{piece:?}");
                if b.len() > 1 {
                    assert_eq!(v.merge_scanning(b), want, "scan {piece:?}");
                    assert_eq!(v.merge_with_heap(b), want, "heap {piece:?}");
                    assert_eq!(v.merge_linked::<usize>(b), want, "wide heap {piece:?}");
                }
            }
        }
        // A long run of one byte, and text counted whole.
        let long = "a".repeat(100_000);
        for (v, t) in ours.iter().zip(theirs) {
            assert_eq!(v.count_piece(long.as_bytes()), t.bpe.count(long.as_bytes()));
            let text = "The quick brown fox: {\"type\":\"object\"} naïve 12345 \u{1f600}!!";
            assert_eq!(v.count(text), t.count(text));
        }
    }
}
