use super::{Bpe, Counts};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

pub const O200K: u8 = 0;
pub const CL100K: u8 = 1;
/// Llama 4's ranks (o200k's pretokenizer), after the keys of the tokenizers counted whole.
pub const LLAMA4: u8 = 64;
/// The first of six keys: each Claude family, as a message's content and inline.
pub const CLAUDE: u8 = 2;
/// The first key of the tokenizers counted whole (after the six Claude keys): each one's is
/// this plus its place in [`super::Tokenizer::ALL`].
pub const WHOLE: u8 = 8;
/// Shorter texts are cheaper to count than to hash and look up.
const MIN_LEN: usize = 64;
/// Entries per shard: 7/8 of 65,536, the most a table of 65,536 slots holds before it
/// doubles. A catalogue of a million rows keeps most of its definitions' counts.
const SHARD_ENTRIES: usize = (1 << 16) / 8 * 7;

/// Tokenizer, length, and the two halves of the hash (two words rather than one 128-bit
/// integer, whose alignment would make each slot 48 bytes).
type Key = (u8, usize, u64, u64);

fn key(which: u8, text: &str) -> Key {
    let h = xxhash_rust::xxh3::xxh3_128_with_seed(text.as_bytes(), super::super::process_seed());
    (which, text.len(), h as u64, (h >> 64) as u64)
}

/// The table is split in shards by key, so threads counting side by side rarely wait on
/// each other's lock.
const SHARDS: usize = 64;

/// A text's [`Counts`] as four 32-bit words: a remembered text is one piece of a request,
/// far under 2^32 tokens (the gateway takes bodies of at most 256 MB), and the halved value
/// keeps each shard's table small.
type Value = [u32; 4];

fn pack(c: &Counts) -> Option<Value> {
    Some([
        u32::try_from(c.total).ok()?,
        u32::try_from(c.bare_words).ok()?,
        u32::try_from(c.spaced_words).ok()?,
        u32::try_from(c.punctuation).ok()?,
    ])
}

fn unpack(v: &Value) -> Counts {
    Counts {
        total: v[0] as usize,
        bare_words: v[1] as usize,
        spaced_words: v[2] as usize,
        punctuation: v[3] as usize,
    }
}

fn table(key: &Key) -> &'static Mutex<HashMap<Key, Value>> {
    static T: OnceLock<Vec<Mutex<HashMap<Key, Value>>>> = OnceLock::new();
    let shards = T.get_or_init(|| (0..SHARDS).map(|_| Mutex::default()).collect());
    &shards[key.2 as usize % SHARDS]
}

/// Count the pieces among `parts` on the machine's cores, so that assembling them (one
/// pass, in order) finds their counts here.
pub fn warm<'a>(bpe: &Bpe, which: u8, parts: impl Iterator<Item = super::Part<'a>>) {
    let pieces: Vec<&str> = parts
        .filter_map(|p| match p {
            super::Part::Piece(t) if t.len() >= MIN_LEN => Some(t),
            super::Part::Piece(_) | super::Part::Joint(_) => None,
        })
        .collect();
    crate::sync::map_on_cores(&pieces, |t| {
        count(which, t, |t| super::pieces::count(bpe, which, t))
    });
}

pub fn count(which: u8, text: &str, f: impl Fn(&str) -> Counts) -> Counts {
    if text.len() < MIN_LEN {
        return f(text);
    }
    let key = key(which, text);
    let table = table(&key);
    if let Some(v) = crate::sync::lock(table).get(&key) {
        return unpack(v);
    }
    let n = f(text);
    // A count past 32 bits is not remembered (it is made again if asked for again).
    if let Some(v) = pack(&n) {
        let mut t = crate::sync::lock(table);
        if t.len() >= SHARD_ENTRIES {
            t.clear();
        }
        t.insert(key, v);
    }
    n
}
