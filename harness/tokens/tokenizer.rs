//! Tokenizers. o200k_base and cl100k_base are OpenAI's vocabularies, counted one pretoken at a
//! time ([`super::bpe`], the same counts as tiktoken); `kimi-est` is o200k scaled by one constant fitted from the
//! recorded figures, because the recorded model's tokenizer is not distributable here;
//! `claude-est` and `claude-legacy-est` estimate Claude's two tokenizer generations from
//! recorded counts ([`super::claude`]).

use super::bpe::Bpe;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Kimi tokens per o200k token, fitted so that the per-row projection of the `seed-2026-07`
/// catalogue at N=856, rendered as Kimi function declarations with `mcp__toolcost__` names,
/// costs the recorded slope of 157.846 input tokens per definition (FACTS.md section 1:
/// (149,187 - 14,071) / 856 = 157.8458), divided by that projection's 122.65 o200k tokens per
/// definition. It is fitted on definition text and applied to all text, so every figure it
/// produces is labelled `calibrated`; its error on other text is not known (the recorded
/// model's tokenizer is not available to measure it). `toolcost reproduce` re-fits it and prints
/// both; a test fails when the generator drifts from it by more than 0.5%.
pub const KIMI_PER_O200K: f64 = 1.2870;

/// A tokenizer toolcost can count with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Tokenizer {
    #[serde(rename = "o200k")]
    O200k,
    #[serde(rename = "cl100k")]
    Cl100k,
    /// o200k x [`KIMI_PER_O200K`]
    #[serde(rename = "kimi-est")]
    KimiEst,
    /// Claude's current tokenizer (Opus 4.7 and later), estimated from o200k pretokens with
    /// weights fitted to recorded counts ([`super::claude::CURRENT`]).
    #[serde(rename = "claude-est")]
    ClaudeEst,
    /// Claude's earlier tokenizer (Claude 3 to the 4.6 models): cl100k x
    /// [`super::claude::LEGACY_PER_CL100K`].
    #[serde(rename = "claude-legacy-est")]
    ClaudeLegacyEst,
}

impl Tokenizer {
    pub const NAMES: [&'static str; 5] = [
        "o200k",
        "cl100k",
        "kimi-est",
        "claude-est",
        "claude-legacy-est",
    ];

    pub fn parse(name: &str) -> Result<Tokenizer> {
        match name.trim() {
            "o200k" | "o200k_base" => Ok(Tokenizer::O200k),
            "cl100k" | "cl100k_base" => Ok(Tokenizer::Cl100k),
            "kimi-est" | "kimi" => Ok(Tokenizer::KimiEst),
            "claude-est" | "claude" => Ok(Tokenizer::ClaudeEst),
            "claude-legacy-est" | "claude-legacy" => Ok(Tokenizer::ClaudeLegacyEst),
            other => Err(Error::unknown("tokenizer", other, &Self::NAMES)),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::O200k => "o200k",
            Tokenizer::Cl100k => "cl100k",
            Tokenizer::KimiEst => "kimi-est",
            Tokenizer::ClaudeEst => "claude-est",
            Tokenizer::ClaudeLegacyEst => "claude-legacy-est",
        }
    }

    /// The evidence label of a figure counted with this tokenizer.
    pub fn label(self) -> String {
        match self {
            Tokenizer::KimiEst => format!("calibrated:kimi-est(o200k x {KIMI_PER_O200K})"),
            Tokenizer::ClaudeEst => {
                "calibrated:claude-est(fit to claude-opus-5 count_tokens of 17 servers, 2026-08)"
                    .into()
            }
            Tokenizer::ClaudeLegacyEst => format!(
                "calibrated:claude-legacy-est(cl100k x {}, claude-3-haiku counts of 7 servers)",
                super::claude::LEGACY_PER_CL100K
            ),
            Tokenizer::O200k | Tokenizer::Cl100k => format!("estimated:{}", self.name()),
        }
    }

    /// Tokens in a text. Estimates stay fractional until a total is rounded.
    pub fn count(self, text: &str) -> f64 {
        match self {
            Tokenizer::ClaudeEst => claude_count(text),
            _ => self.scale(self.count_base(text)),
        }
    }

    /// Tokens of `open`, then `pieces` separated by `sep`, then `close` (a JSON array of
    /// definitions, say): the same figure as counting the joined text, without building it.
    /// `open`, `sep` and `close` are punctuation (see [`Part::Joint`]).
    pub fn count_joined<'a>(
        self,
        open: &'a str,
        pieces: impl Iterator<Item = &'a str> + Clone,
        sep: &'a str,
        close: &'a str,
    ) -> f64 {
        let parts = std::iter::once(Part::Joint(open))
            .chain(pieces.enumerate().flat_map(move |(i, p)| {
                let joint = (i > 0).then_some(Part::Joint(sep));
                joint.into_iter().chain(std::iter::once(Part::Piece(p)))
            }))
            .chain(std::iter::once(Part::Joint(close)));
        self.count_parts(parts)
    }

    /// Tokens of the text the parts make, one after another: the same figure as counting that
    /// text whole, assembled from the pieces' own counts (each remembered, so a piece several
    /// texts share is counted once) and each join counted exactly. Where the pieces do not fit
    /// the rule of [`Part`] the whole text is built and counted instead.
    pub fn count_parts<'a>(self, parts: impl Iterator<Item = Part<'a>> + Clone) -> f64 {
        if self == Tokenizer::ClaudeEst {
            // The estimate reads whole pretokens, so it is made from the joined text.
            return claude_count(&joined(parts));
        }
        let bpe = self.bpe();
        let which = self.memo_key();
        let whole = WHOLE.with(std::cell::Cell::get);
        let assembled = match whole {
            true => None,
            false => {
                if parts.clone().nth(WARM_PARTS - 1).is_some() {
                    memo::warm(bpe, which, parts.clone());
                }
                join::assemble(bpe, which, parts.clone())
            }
        };
        let n = assembled.unwrap_or_else(|| {
            let text = joined(parts);
            match whole {
                true => bpe.count(text.as_str()),
                false => memo::count(which, &text, |t| pieces::count(bpe, which, t)),
            }
        });
        self.scale(n)
    }

    /// The whole-number count of the underlying BPE (o200k for the Kimi estimate).
    fn count_base(self, text: &str) -> usize {
        let bpe = self.bpe();
        match WHOLE.with(std::cell::Cell::get) {
            true => bpe.count(text),
            false => memo::count(self.memo_key(), text, |t| {
                pieces::count(bpe, self.memo_key(), t)
            }),
        }
    }

    fn scale(self, n: usize) -> f64 {
        match self {
            Tokenizer::KimiEst => n as f64 * KIMI_PER_O200K,
            Tokenizer::ClaudeLegacyEst => n as f64 * super::claude::LEGACY_PER_CL100K,
            Tokenizer::O200k | Tokenizer::Cl100k | Tokenizer::ClaudeEst => n as f64,
        }
    }

    /// The BPE this tokenizer counts with. Each is loaded the first time it is asked for, so a
    /// command that counts with one never loads the other.
    fn bpe(self) -> &'static Bpe {
        match self {
            Tokenizer::O200k | Tokenizer::KimiEst | Tokenizer::ClaudeEst => Bpe::o200k(),
            Tokenizer::Cl100k | Tokenizer::ClaudeLegacyEst => Bpe::cl100k(),
        }
    }

    fn memo_key(self) -> u8 {
        match self {
            Tokenizer::O200k | Tokenizer::KimiEst | Tokenizer::ClaudeEst => memo::O200K,
            Tokenizer::Cl100k | Tokenizer::ClaudeLegacyEst => memo::CL100K,
        }
    }
}

/// The text the parts make, one after another.
fn joined<'a>(parts: impl Iterator<Item = Part<'a>>) -> String {
    let mut text = String::new();
    for p in parts {
        match p {
            Part::Piece(t) | Part::Joint(t) => text.push_str(t),
        }
    }
    text
}

/// The current-Claude estimate of a text, remembered like a BPE count (its bits under a key of
/// its own).
fn claude_count(text: &str) -> f64 {
    let est = |t: &str| super::claude::CURRENT.tokens(&super::claude::features(t));
    // The memo keeps an f64's bits in a usize: only where a usize holds them.
    match WHOLE.with(std::cell::Cell::get) || usize::BITS < 64 {
        true => est(text),
        false => {
            f64::from_bits(memo::count(memo::CLAUDE, text, |t| est(t).to_bits() as usize) as u64)
        }
    }
}

/// The o200k tokens of a text's pretokens by kind ([`pieces::Kinds`]).
pub(super) fn o200k_kinds(text: &str) -> pieces::Kinds {
    pieces::kinds(Bpe::o200k(), text)
}

/// A text of at least this many parts has its pieces counted on all cores before it is
/// assembled (an assumed threshold: a few hundred definitions' worth).
const WARM_PARTS: usize = 512;

thread_local! {
    /// Set inside [`counting_whole`]: count every text whole, remembering nothing.
    static WHOLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` with every count on this thread made from the whole text, nothing assembled from
/// pieces and nothing remembered: the reference the assembled counts are tested against.
pub fn counting_whole<T>(f: impl FnOnce() -> T) -> T {
    let before = WHOLE.with(|w| w.replace(true));
    let out = f();
    WHOLE.with(|w| w.set(before));
    out
}

/// [`crate::sync::map_on_cores`] for counting work: inside [`counting_whole`], the workers
/// count whole too.
pub fn on_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    match WHOLE.with(std::cell::Cell::get) {
        true => crate::sync::map_on_cores(items, |x| counting_whole(|| f(x))),
        false => crate::sync::map_on_cores(items, f),
    }
}

/// One part of a text counted from its parts ([`Tokenizer::count_parts`]).
///
/// The pretokenizers of o200k and cl100k start a new pretoken after a letter or digit that is
/// followed by punctuation, and a run of punctuation is one pretoken that ends only where the
/// punctuation does. So when each piece that has something before it begins with a pretoken of
/// ASCII punctuation alone (`{"`), and each piece that has something after it ends in ASCII
/// punctuation after an ASCII letter or digit (`..."string"}}`), the pretokens of the whole
/// text are those of the pieces, except at each join, where the left piece's last pretoken, the
/// joint and the right piece's first pretoken are one. BPE counts each pretoken on its own, so
/// the whole count is the pieces' counts with each join's pretokens counted again as one. Each
/// merged pretoken is checked with the pretokenizer itself; a piece that does not fit (a space
/// or a non-ASCII character at an edge, a piece that is all punctuation) sends the count back to
/// the whole text. Tests compare the two on generated and captured catalogues.
#[derive(Debug, Clone, Copy)]
pub enum Part<'a> {
    /// Text counted on its own and remembered.
    Piece(&'a str),
    /// ASCII punctuation between pieces (`[`, `,`, `}`), possibly empty.
    Joint(&'a str),
}

mod join {
    use super::{memo, pieces, Bpe, Part};
    use std::borrow::Cow;

    fn punct(s: &str) -> bool {
        s.bytes().all(|b| b.is_ascii_punctuation())
    }

    /// The last pretoken of a piece: its trailing run of ASCII punctuation, when an ASCII letter
    /// or digit comes before it.
    fn last_run(text: &str) -> Option<&str> {
        let start = text.len()
            - text
                .bytes()
                .rev()
                .take_while(u8::is_ascii_punctuation)
                .count();
        let before = *text.as_bytes().get(start.checked_sub(1)?)?;
        (before.is_ascii_alphanumeric() && start < text.len()).then(|| &text[start..])
    }

    /// The first pretoken of a piece, when it is ASCII punctuation alone and not the whole piece.
    fn first_run<'a>(bpe: &'a Bpe, which: u8, text: &'a str) -> Option<&'a str> {
        let first = pieces::split(bpe, which, text).next()?;
        (!first.is_empty() && first.len() < text.len() && punct(first)).then_some(first)
    }

    /// Tokens of `a`, `b` and `c` as one pretoken, or `None` where the pretokenizer does not
    /// keep them together.
    fn merged(bpe: &Bpe, which: u8, a: &str, b: &str, c: &str) -> Option<usize> {
        let text = format!("{a}{b}{c}");
        let mut split = pieces::split(bpe, which, &text);
        (split.next() == Some(text.as_str()) && split.next().is_none())
            .then(|| bpe.count_piece(text.as_bytes()))
    }

    /// The left side of a join: the last pretoken of `q` (whose first `taken` bytes an earlier
    /// join took), the joint, and the first pretoken of `p` (`None`: nothing follows), counted
    /// as one; with the tokens to take off `q`'s and `p`'s own counts.
    fn join(
        bpe: &Bpe,
        which: u8,
        q: Option<(&str, usize)>,
        joint: &str,
        p: Option<&str>,
    ) -> Option<(usize, usize, usize)> {
        let one = |s: &str| bpe.count_piece(s.as_bytes());
        let last = match q {
            Some((q, taken)) => {
                let l = last_run(q)?;
                (taken + l.len() <= q.len()).then_some(l)?
            }
            None => "",
        };
        let first = match p {
            Some(p) => first_run(bpe, which, p)?,
            None => "",
        };
        Some((
            merged(bpe, which, last, joint, first)?,
            one(last) + one(first),
            first.len(),
        ))
    }

    /// The count of the parts' text; `None` where a joint is not punctuation. A join that does
    /// not fit the rule glues its two pieces into one, counted whole.
    pub fn assemble<'a>(
        bpe: &Bpe,
        which: u8,
        parts: impl Iterator<Item = Part<'a>>,
    ) -> Option<usize> {
        let count = |t: &str| memo::count(which, t, |t| pieces::count(bpe, which, t));
        let mut total = 0usize;
        let mut joint = String::new();
        // The piece not yet counted (glued from several where joins did not fit), and the length
        // of its first pretoken where the join before it took it.
        let mut cur: Option<(Cow<'a, str>, usize)> = None;
        for part in parts {
            let p = match part {
                Part::Joint(j) if punct(j) => {
                    joint.push_str(j);
                    continue;
                }
                Part::Joint(_) => return None,
                Part::Piece(p) => p,
            };
            let q = cur.take();
            let left = q.as_ref().map(|(q, taken)| (q.as_ref(), *taken));
            cur = Some(
                match (left.is_some() || !joint.is_empty())
                    .then(|| join(bpe, which, left, &joint, Some(p)))
                {
                    // Nothing before it.
                    None => (Cow::Borrowed(p), 0),
                    Some(Some((m, minus, taken))) => {
                        total = (total + q.as_ref().map_or(0, |(q, _)| count(q.as_ref())) + m)
                            .checked_sub(minus)?;
                        (Cow::Borrowed(p), taken)
                    }
                    Some(None) => match q {
                        Some((q, taken)) => (Cow::Owned(format!("{q}{joint}{p}")), taken),
                        None => (Cow::Owned(format!("{joint}{p}")), 0),
                    },
                },
            );
            joint.clear();
        }
        Some(match cur {
            None => pieces::count(bpe, which, joint.as_str()),
            Some((q, _)) if joint.is_empty() => total + count(q.as_ref()),
            Some((q, taken)) => match join(bpe, which, Some((q.as_ref(), taken)), &joint, None) {
                Some((m, minus, _)) => (total + count(q.as_ref()) + m).checked_sub(minus)?,
                None => total + count(&format!("{q}{joint}")),
            },
        })
    }
}

/// Counts of pretokens, remembered. A text's count is the sum of its pretokens' counts (BPE
/// merges never cross a pretoken), and catalogue text is made of few distinct pretokens
/// (`":"`, `"type`, ` the`, ...) repeated many times, so most are looked up rather than
/// encoded. Short pretokens only (longer ones rarely repeat), per thread, and the table is
/// emptied at its bound, so memory stays flat whatever is counted. Keys are compared whole:
/// a lookup can only find the pretoken's own count. The table hashes with foldhash rather than
/// SipHash: counting 20 MB of definition text took 11% less time with it (255 ms against 285 ms,
/// one run each on this project's 2-core machine); a text written to collide in it slows its
/// own count down, and the table stays bounded and is emptied at its bound.
mod pieces {
    use super::super::pretoken::Pattern;
    use super::Bpe;
    use std::cell::RefCell;
    use std::collections::HashMap;

    type Table = HashMap<Box<str>, u32, foldhash::fast::RandomState>;

    /// Longer pretokens are encoded every time.
    const MAX_LEN: usize = 24;
    const MAX_ENTRIES: usize = 1 << 16;

    thread_local! {
        static TABLES: [RefCell<Table>; 2] = Default::default();
    }

    /// The pretokens of `text` under the tokenizer `which` names.
    pub fn split<'a>(bpe: &'a Bpe, which: u8, text: &'a str) -> impl Iterator<Item = &'a str> {
        let pattern = match which {
            super::memo::O200K => Pattern::O200k,
            super::memo::CL100K => Pattern::Cl100k,
            other => unreachable!("tokenizer key {other} has no pretokenizer"),
        };
        debug_assert_eq!(bpe.pattern(), pattern);
        super::super::pretoken::split(pattern, text)
    }

    /// The BPE count of `text` (o200k or cl100k by `which`), equal to `bpe.count(text)`.
    pub fn count(bpe: &Bpe, which: u8, text: &str) -> usize {
        TABLES.with(|tables| {
            let mut table = tables[which as usize].borrow_mut();
            split(bpe, which, text)
                .map(|p| pretoken(&mut table, bpe, p))
                .sum()
        })
    }

    /// o200k tokens of a text's pretokens by kind.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Kinds {
        /// Pretokens with a letter that do not start with a space.
        pub bare_words: usize,
        /// Pretokens with a letter that start with one.
        pub spaced_words: usize,
        /// Pretokens with no letter, no digit and something other than whitespace.
        pub punctuation: usize,
    }

    /// The o200k tokens of the pretokens of `text` by kind.
    pub fn kinds(bpe: &Bpe, text: &str) -> Kinds {
        let which = super::memo::O200K;
        TABLES.with(|tables| {
            let mut table = tables[which as usize].borrow_mut();
            let mut k = Kinds::default();
            for p in split(bpe, which, text) {
                let slot = if p.chars().any(char::is_alphabetic) {
                    match p.starts_with(' ') {
                        true => &mut k.spaced_words,
                        false => &mut k.bare_words,
                    }
                } else if p.chars().any(char::is_numeric) || p.trim().is_empty() {
                    continue;
                } else {
                    &mut k.punctuation
                };
                *slot += pretoken(&mut table, bpe, p);
            }
            k
        })
    }

    /// One pretoken's count, looked up or encoded and remembered.
    fn pretoken(table: &mut Table, bpe: &Bpe, p: &str) -> usize {
        if p.len() > MAX_LEN {
            return bpe.count_piece(p.as_bytes());
        }
        if let Some(&n) = table.get(p) {
            return n as usize;
        }
        let n = bpe.count_piece(p.as_bytes());
        if table.len() >= MAX_ENTRIES {
            table.clear();
        }
        table.insert(p.into(), n as u32);
        n
    }
}

/// Counts of texts, remembered: each distinct text is tokenized once per tokenizer. A
/// definition is carried by several surfaces and by every round of a task (150 rounds of 5 MB
/// on the per-row surface at N=8,560), and a request's total is assembled from its
/// definitions' counts, so a count is looked up far more often than it is made. Keys are the
/// text's length and its 128-bit XXH3 hash under a seed drawn for each process (a text is read
/// once to make its key, and a catalogue cannot be written to make two texts share one); each
/// shard is emptied before its table would grow past 65,536 slots of 40 bytes, so the memo
/// stays under about 170 MB whatever is counted.
mod memo {
    use super::Bpe;
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};

    pub const O200K: u8 = 0;
    pub const CL100K: u8 = 1;
    /// The current-Claude estimate (an f64's bits), not a BPE count.
    pub const CLAUDE: u8 = 2;
    /// Shorter texts are cheaper to count than to hash and look up.
    const MIN_LEN: usize = 64;
    /// Entries per shard: 7/8 of 65,536, the most a table of 65,536 slots holds before it
    /// doubles. A catalogue of a million rows keeps most of its definitions' counts.
    const SHARD_ENTRIES: usize = (1 << 16) / 8 * 7;

    /// Tokenizer, length, and the two halves of the hash (two words rather than one 128-bit
    /// integer, whose alignment would make each slot 48 bytes).
    type Key = (u8, usize, u64, u64);

    fn key(which: u8, text: &str) -> Key {
        let h =
            xxhash_rust::xxh3::xxh3_128_with_seed(text.as_bytes(), super::super::process_seed());
        (which, text.len(), h as u64, (h >> 64) as u64)
    }

    /// The table is split in shards by key, so threads counting side by side rarely wait on
    /// each other's lock.
    const SHARDS: usize = 64;

    fn table(key: &Key) -> &'static Mutex<HashMap<Key, usize>> {
        static T: OnceLock<Vec<Mutex<HashMap<Key, usize>>>> = OnceLock::new();
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

    pub fn count(which: u8, text: &str, f: impl Fn(&str) -> usize) -> usize {
        if text.len() < MIN_LEN {
            return f(text);
        }
        let key = key(which, text);
        let table = table(&key);
        if let Some(n) = crate::sync::lock(table).get(&key) {
            return *n;
        }
        let n = f(text);
        let mut t = crate::sync::lock(table);
        if t.len() >= SHARD_ENTRIES {
            t.clear();
        }
        t.insert(key, n);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work spread over the cores inside [`counting_whole`] counts whole too, so the whole
    /// counts that assembled ones are tested against are not assembled themselves.
    #[test]
    fn workers_count_whole_inside_counting_whole() {
        let items: Vec<u32> = (0..500).collect();
        let whole = || WHOLE.with(std::cell::Cell::get);
        assert!(counting_whole(|| on_cores(&items, |_| whole()))
            .into_iter()
            .all(|w| w));
        assert!(on_cores(&items, |_| whole()).into_iter().all(|w| !w));
    }

    /// Remembered pretoken counts are each pretoken's own: a pretoken and the same bytes with a
    /// NUL after them, or one byte more, never share a count, for pretokens of 1 to 28 bytes
    /// (on both sides of the longest one remembered, 24).
    #[test]
    fn remembered_pretoken_counts_are_their_own() {
        let words = [
            "a",
            "a\0",
            "a\0\0",
            "\0",
            "zq",
            "zqzqzqzqzqzqzqz",
            "zqzqzqzqzqzqzqzq",
        ];
        let mut rng = crate::rng::Rng::new(3);
        for which in [Tokenizer::O200k, Tokenizer::Cl100k] {
            let bpe = which.bpe();
            for _ in 0..3_000 {
                let n = rng.below(6);
                let text: String = (0..n)
                    .map(|_| {
                        let w = *rng.pick(&words);
                        let k = rng.below(28);
                        match rng.chance(0.5) {
                            true => w.to_string(),
                            false => "x".repeat(k),
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                assert_eq!(
                    pieces::count(bpe, which.memo_key(), &text),
                    bpe.count(text.as_str()),
                    "{text:?}"
                );
            }
        }
    }
}
