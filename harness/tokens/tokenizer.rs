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
        let whole = WHOLE.with(std::cell::Cell::get);
        if whole && self == Tokenizer::ClaudeEst {
            return claude_count(&joined(parts));
        }
        let bpe = self.bpe();
        let which = self.memo_key();
        let assembled = match whole {
            true => None,
            false => {
                if parts.clone().nth(WARM_PARTS - 1).is_some() {
                    memo::warm(bpe, which, parts.clone());
                }
                join::assemble(bpe, which, parts.clone())
            }
        };
        let counts = assembled.unwrap_or_else(|| {
            let text = joined(parts.clone());
            match whole {
                true => Counts {
                    total: bpe.count(text.as_str()),
                    ..Counts::default()
                },
                false => memo::count(which, &text, |t| pieces::count(bpe, which, t)),
            }
        });
        match self {
            // The estimate reads the o200k pretokens by kind, which add up across pieces as
            // their tokens do.
            Tokenizer::ClaudeEst => {
                let bytes = parts
                    .map(|p| match p {
                        Part::Piece(t) | Part::Joint(t) => t.len(),
                    })
                    .sum();
                claude_estimate(bytes, &counts)
            }
            Tokenizer::O200k
            | Tokenizer::Cl100k
            | Tokenizer::KimiEst
            | Tokenizer::ClaudeLegacyEst => self.scale(counts.total),
        }
    }

    /// The whole-number count of the underlying BPE (o200k for the Kimi estimate).
    fn count_base(self, text: &str) -> usize {
        let bpe = self.bpe();
        match WHOLE.with(std::cell::Cell::get) {
            true => bpe.count(text),
            false => {
                memo::count(self.memo_key(), text, |t| {
                    pieces::count(bpe, self.memo_key(), t)
                })
                .total
            }
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

/// A text cut at its first and last clean boundaries (an ASCII letter or digit, then a space
/// and an ASCII letter; see [`Part`]): the pieces before, between and after, which count as the
/// text does when counted one after another. Prose in a description is nearly all between, and
/// is the same text whichever rendering carries it, so it is counted once. A text with fewer
/// than two such boundaries is all in the first piece.
pub fn clean_cuts(text: &str) -> [&str; 3] {
    let b = text.as_bytes();
    let at = |i: usize| {
        i > 0
            && b[i - 1].is_ascii_alphanumeric()
            && b[i] == b' '
            && b.get(i + 1).is_some_and(u8::is_ascii_alphabetic)
    };
    let first = (1..b.len()).find(|&i| at(i));
    let last = (1..b.len()).rev().find(|&i| at(i));
    match (first, last) {
        (Some(i), Some(j)) if i < j => [&text[..i], &text[i..j], &text[j..]],
        _ => [text, "", ""],
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

/// The current-Claude estimate of a text: from its o200k pretokens by kind, remembered with its
/// o200k count.
fn claude_count(text: &str) -> f64 {
    let counts = match WHOLE.with(std::cell::Cell::get) {
        true => o200k_kinds(text),
        false => memo::count(memo::O200K, text, |t| {
            pieces::count(Bpe::o200k(), memo::O200K, t)
        }),
    };
    claude_estimate(text.len(), &counts)
}

/// The current-Claude estimate of a text of `bytes` bytes whose o200k pretokens count `counts`.
fn claude_estimate(bytes: usize, counts: &Counts) -> f64 {
    super::claude::CURRENT.tokens(&super::claude::Features {
        bytes: bytes as f64,
        bare_word_tokens: counts.bare_words as f64,
        spaced_word_tokens: counts.spaced_words as f64,
        punctuation_tokens: counts.punctuation as f64,
    })
}

/// The o200k tokens of a text's pretokens, in all and by kind ([`Counts`]).
pub(super) fn o200k_kinds(text: &str) -> Counts {
    pieces::count(Bpe::o200k(), memo::O200K, text)
}

/// A text's tokens, and how many of them are in pretokens of each kind the current-Claude
/// estimate reads (pretokens with a digit, or of whitespace alone, are in the total only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub total: usize,
    /// In pretokens with a letter that do not start with a space.
    pub bare_words: usize,
    /// In pretokens with a letter that start with one.
    pub spaced_words: usize,
    /// In pretokens with no letter, no digit and something other than whitespace.
    pub punctuation: usize,
}

impl Counts {
    /// Tokens of pretokens of punctuation alone (what a join merges or takes apart).
    fn punctuation(n: usize) -> Counts {
        Counts {
            total: n,
            punctuation: n,
            ..Counts::default()
        }
    }

    fn plus(self, o: Counts) -> Counts {
        Counts {
            total: self.total + o.total,
            bare_words: self.bare_words + o.bare_words,
            spaced_words: self.spaced_words + o.spaced_words,
            punctuation: self.punctuation + o.punctuation,
        }
    }

    fn minus(self, o: Counts) -> Option<Counts> {
        Some(Counts {
            total: self.total.checked_sub(o.total)?,
            bare_words: self.bare_words.checked_sub(o.bare_words)?,
            spaced_words: self.spaced_words.checked_sub(o.spaced_words)?,
            punctuation: self.punctuation.checked_sub(o.punctuation)?,
        })
    }
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
/// Two pieces with nothing between them also meet cleanly where the left one ends in an ASCII
/// letter or digit and the right one starts with a space and an ASCII letter: there both
/// patterns end one pretoken and start the next, so the two counts simply add ([`clean_cuts`]
/// finds such places).
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
    use super::{memo, pieces, Bpe, Counts, Part};
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

    /// Whether two pieces meet where both patterns end one pretoken and start the next:
    /// `left` ends in an ASCII letter or digit, and `right` starts with a space and an ASCII
    /// letter. The pretoken that ends the letter or digit run cannot take the space (no rule
    /// goes on from a letter or digit into whitespace, and the contractions need an
    /// apostrophe), and one starts at the space whatever came before it (no rule looks back),
    /// so the text's pretokens are the two pieces' own.
    pub fn clean(left: &str, right: &str) -> bool {
        let r = right.as_bytes();
        left.as_bytes()
            .last()
            .is_some_and(u8::is_ascii_alphanumeric)
            && r.first() == Some(&b' ')
            && r.get(1).is_some_and(u8::is_ascii_alphabetic)
    }

    /// The count of the parts' text; `None` where a joint is not punctuation. A join that does
    /// not fit the rule glues its two pieces into one, counted whole.
    pub fn assemble<'a>(
        bpe: &Bpe,
        which: u8,
        parts: impl Iterator<Item = Part<'a>>,
    ) -> Option<Counts> {
        let count = |t: &str| memo::count(which, t, |t| pieces::count(bpe, which, t));
        let mut total = Counts::default();
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
            if let Some((q, _)) = q.as_ref().filter(|(q, _)| joint.is_empty() && clean(q, p)) {
                // A clean boundary: the left piece's count stands as it is.
                total = total.plus(count(q));
                cur = Some((Cow::Borrowed(p), 0));
                continue;
            }
            let left = q.as_ref().map(|(q, taken)| (q.as_ref(), *taken));
            cur = Some(
                match (left.is_some() || !joint.is_empty())
                    .then(|| join(bpe, which, left, &joint, Some(p)))
                {
                    // Nothing before it.
                    None => (Cow::Borrowed(p), 0),
                    Some(Some((m, minus, taken))) => {
                        let q = q
                            .as_ref()
                            .map_or(Counts::default(), |(q, _)| count(q.as_ref()));
                        total = total
                            .plus(q)
                            .plus(Counts::punctuation(m))
                            .minus(Counts::punctuation(minus))?;
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
            Some((q, _)) if joint.is_empty() => total.plus(count(q.as_ref())),
            Some((q, taken)) => match join(bpe, which, Some((q.as_ref(), taken)), &joint, None) {
                Some((m, minus, _)) => total
                    .plus(count(q.as_ref()))
                    .plus(Counts::punctuation(m))
                    .minus(Counts::punctuation(minus))?,
                None => total.plus(count(&format!("{q}{joint}"))),
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
    use super::{Bpe, Counts};
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

    /// The BPE count of `text` (o200k or cl100k by `which`), equal to `bpe.count(text)`, and
    /// its tokens by the kind of pretoken they are in.
    pub fn count(bpe: &Bpe, which: u8, text: &str) -> Counts {
        TABLES.with(|tables| {
            let mut table = tables[which as usize].borrow_mut();
            let mut c = Counts::default();
            for p in split(bpe, which, text) {
                let (n, kind) = pretoken(&mut table, bpe, p);
                c.total += n;
                match kind {
                    Kind::BareWord => c.bare_words += n,
                    Kind::SpacedWord => c.spaced_words += n,
                    Kind::Punctuation => c.punctuation += n,
                    Kind::Other => {}
                }
            }
            c
        })
    }

    /// What a pretoken holds, for the current-Claude estimate.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kind {
        /// A letter, and no space first.
        BareWord,
        /// A letter after a space.
        SpacedWord,
        /// No letter, no digit and something other than whitespace.
        Punctuation,
        /// A digit (and no letter), or whitespace alone.
        Other,
    }

    fn kind_of(p: &str) -> Kind {
        if p.chars().any(char::is_alphabetic) {
            match p.starts_with(' ') {
                true => Kind::SpacedWord,
                false => Kind::BareWord,
            }
        } else if p.chars().any(char::is_numeric) || p.trim().is_empty() {
            Kind::Other
        } else {
            Kind::Punctuation
        }
    }

    /// One pretoken's count and kind, looked up or made and remembered (packed in the table as
    /// the count times four plus the kind).
    fn pretoken(table: &mut Table, bpe: &Bpe, p: &str) -> (usize, Kind) {
        const KINDS: [Kind; 4] = [
            Kind::BareWord,
            Kind::SpacedWord,
            Kind::Punctuation,
            Kind::Other,
        ];
        if p.len() > MAX_LEN {
            return (bpe.count_piece(p.as_bytes()), kind_of(p));
        }
        if let Some(&v) = table.get(p) {
            return ((v >> 2) as usize, KINDS[(v & 3) as usize]);
        }
        let (n, kind) = (bpe.count_piece(p.as_bytes()), kind_of(p));
        if table.len() >= MAX_ENTRIES {
            table.clear();
        }
        let code = KINDS.iter().position(|k| *k == kind).unwrap_or(3) as u32;
        // A pretoken of at most MAX_LEN bytes has at most that many tokens.
        table.insert(p.into(), (n as u32) << 2 | code);
        (n, kind)
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
    use super::{Bpe, Counts};
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};

    pub const O200K: u8 = 0;
    pub const CL100K: u8 = 1;
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
                    pieces::count(bpe, which.memo_key(), &text).total,
                    bpe.count(text.as_str()),
                    "{text:?}"
                );
            }
        }
    }

    /// A text cut into pieces at clean boundaries (a letter or digit, then a space and a
    /// letter) and at JSON punctuation counts as the whole text does, under every tokenizer,
    /// the current-Claude estimate included; a cut that is not clean (inside a word, before a
    /// second space) is glued and counted whole, with the same result.
    #[test]
    fn pieces_cut_at_clean_boundaries_count_as_the_whole() {
        let words = [
            "the",
            "Quick",
            "fox",
            "jumps",
            "x2",
            "42",
            "naïve",
            "don't",
            "{\"a\":",
            "\"b\"}",
            "UPPER",
            "camelCase",
            "snake_case",
            "·",
            "\u{1f600}",
            "over",
            "\n",
            "a.",
            "b,",
        ];
        let mut rng = crate::rng::Rng::new(17);
        for _ in 0..1500 {
            let n = 1 + rng.below(14);
            let text: String = (0..n)
                .map(|i| {
                    let sep = match rng.below(5) {
                        0 => "",
                        1 => "  ",
                        _ => " ",
                    };
                    format!("{}{}", if i == 0 { "" } else { sep }, rng.pick(&words))
                })
                .collect();
            // Cut at every byte boundary that is a char boundary, some of the time.
            let mut cuts = vec![0];
            for i in 1..text.len() {
                if text.is_char_boundary(i) && rng.chance(0.3) {
                    cuts.push(i);
                }
            }
            cuts.push(text.len());
            let pieces: Vec<&str> = cuts.windows(2).map(|w| &text[w[0]..w[1]]).collect();
            for tok in [
                Tokenizer::O200k,
                Tokenizer::Cl100k,
                Tokenizer::KimiEst,
                Tokenizer::ClaudeEst,
                Tokenizer::ClaudeLegacyEst,
            ] {
                let parts = pieces.iter().map(|p| Part::Piece(p));
                let assembled = tok.count_parts(parts);
                let whole = counting_whole(|| tok.count(&text));
                assert!(
                    (assembled - whole).abs() < 1e-9,
                    "{tok:?} {pieces:?}: {assembled} against {whole}"
                );
            }
        }
    }
}
