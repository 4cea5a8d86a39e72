//! The registry of tokenizers: [`Tokenizer`] names each one toolcost counts with, and
//! [`Tokenizer::spec`] finds its [`Spec`] in its family's file ([`super::families`]): OpenAI's
//! o200k_base and cl100k_base, counted one pretoken at a time ([`super::bpe`], the same counts
//! as tiktoken); Claude's three families exactly ([`super::claude_exact`]) and their two earlier
//! estimators ([`super::claude`]); Gemma 3's SentencePiece ([`super::gemma3`]); and the
//! open-weight families (Kimi, DeepSeek, Qwen, GLM, Llama 3, Mistral). Everything a tokenizer
//! is asked (its name, label, whether it can count here, a text's tokens) is read from its
//! spec; how a text is counted (remembered, assembled from pieces, on every core) is here.

use super::bpe::Bpe;
use super::claude_exact::Family;
use super::families::{self, Counter, Label, Spec};
use crate::error::{Error, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A tokenizer toolcost can count with (its spec: [`Tokenizer::spec`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tokenizer {
    O200k,
    Cl100k,
    Kimi,
    Deepseek,
    Qwen,
    Glm,
    Llama3,
    /// Llama 4's vocabulary, where it is installed ([`super::llama4`]).
    Llama4,
    Mistral,
    /// Mistral's SentencePiece vocabulary: v1 and v2, v3, v7 (they differ in user-defined
    /// pieces only).
    MistralSpm1,
    MistralSpm3,
    MistralSpm7,
    ClaudeV5,
    ClaudeV4_7,
    ClaudeV3,
    /// Claude's current tokenizer estimated from o200k pretokens (kept for comparison).
    ClaudeEst,
    /// Claude's earlier tokenizer estimated from cl100k (kept for comparison).
    ClaudeLegacyEst,
    /// The Gemma 3 SentencePiece vocabulary, standing in for Gemini's.
    Gemma3,
}

impl Tokenizer {
    /// Every tokenizer, in the order `--help` and errors list them.
    pub const ALL: [Tokenizer; 18] = [
        Tokenizer::O200k,
        Tokenizer::Cl100k,
        Tokenizer::Kimi,
        Tokenizer::Deepseek,
        Tokenizer::Qwen,
        Tokenizer::Glm,
        Tokenizer::Llama3,
        Tokenizer::Llama4,
        Tokenizer::Mistral,
        Tokenizer::MistralSpm1,
        Tokenizer::MistralSpm3,
        Tokenizer::MistralSpm7,
        Tokenizer::ClaudeV5,
        Tokenizer::ClaudeV4_7,
        Tokenizer::ClaudeV3,
        Tokenizer::ClaudeEst,
        Tokenizer::ClaudeLegacyEst,
        Tokenizer::Gemma3,
    ];

    /// The registry: each tokenizer's spec, in its family's file.
    pub fn spec(self) -> &'static Spec {
        use families::*;
        match self {
            Tokenizer::O200k => &openai::O200K,
            Tokenizer::Cl100k => &openai::CL100K,
            Tokenizer::Kimi => &kimi::SPEC,
            Tokenizer::Deepseek => &deepseek::SPEC,
            Tokenizer::Qwen => &qwen::SPEC,
            Tokenizer::Glm => &glm::SPEC,
            Tokenizer::Llama3 => &llama::SPEC,
            Tokenizer::Llama4 => &llama::LLAMA4,
            Tokenizer::Mistral => &mistral::SPEC,
            Tokenizer::MistralSpm1 => &mistral::SPM_V1,
            Tokenizer::MistralSpm3 => &mistral::SPM_V3,
            Tokenizer::MistralSpm7 => &mistral::SPM_V7,
            Tokenizer::ClaudeV5 => &anthropic::V5,
            Tokenizer::ClaudeV4_7 => &anthropic::V4_7,
            Tokenizer::ClaudeV3 => &anthropic::V3,
            Tokenizer::ClaudeEst => &anthropic::ESTIMATE,
            Tokenizer::ClaudeLegacyEst => &anthropic::LEGACY_ESTIMATE,
            Tokenizer::Gemma3 => &gemma::GEMMA3,
        }
    }

    /// Every tokenizer's name.
    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|t| t.name()).collect()
    }

    /// The tokenizer a name or alias names.
    pub fn parse(name: &str) -> Result<Tokenizer> {
        let name = name.trim();
        if name == "kimi-est" {
            return Err(Error::input(
                "kimi-est (o200k times a fitted constant) is gone: Kimi is counted with its own vocabulary, `kimi`",
            ));
        }
        Self::ALL
            .into_iter()
            .find(|t| t.spec().name == name || t.spec().aliases.contains(&name))
            .ok_or_else(|| Error::unknown("tokenizer", name, &Self::names()))
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The Claude tokenizer family this tokenizer counts exactly, if it is one.
    pub fn claude_family(self) -> Option<Family> {
        match self.spec().counter {
            Counter::Claude(f) => Some(f),
            Counter::Bpe { .. }
            | Counter::ClaudeEstimate
            | Counter::Splintr(_)
            | Counter::Whole(_) => None,
        }
    }

    /// Whether the tokenizer can count here: every one can, Gemma 3 too (embedded) unless
    /// `TOOLCOST_GEMMA3` names a model file that is missing or not the expected one (the error
    /// says so).
    pub fn ready(self) -> Result<()> {
        (self.spec().ready)()
    }

    /// The exact tokenizer of a Claude family.
    pub fn of_claude_family(f: Family) -> Tokenizer {
        match f {
            Family::V3 => Tokenizer::ClaudeV3,
            Family::V4_7 => Tokenizer::ClaudeV4_7,
            Family::V5 => Tokenizer::ClaudeV5,
        }
    }

    /// Tokens of a text inside a longer one, just after a newline (a definition in a tools
    /// block): for Claude's tokenizers without the message edges [`Tokenizer::count`] applies;
    /// for the others the same as [`Tokenizer::count`].
    pub fn count_inline(self, text: &str) -> f64 {
        match self.claude_family() {
            Some(f) => claude_exact_count(f, text, true) as f64,
            None => self.count(text),
        }
    }

    /// The evidence label of a figure counted with this tokenizer.
    pub fn label(self) -> String {
        match self.spec().label {
            Label::Estimated => format!("estimated:{}", self.name()),
            Label::Calibrated(label) => label(),
        }
    }

    /// Tokens in a text. Estimates stay fractional until a total is rounded.
    pub fn count(self, text: &str) -> f64 {
        match self.spec().counter {
            Counter::Bpe { vocab, scale } => count_bpe(vocab, text) as f64 * scale,
            Counter::ClaudeEstimate => claude_count(text),
            Counter::Claude(f) => claude_exact_count(f, text, false) as f64,
            // A long text is counted a segment at a time ([`segments`]): the encoder's working
            // memory is one segment's, and the figure is the whole text's.
            Counter::Splintr(vocab) if text.len() > SEGMENT_BYTES => segments(text, SEGMENT_BYTES)
                .map(|s| whole_count(self.memo_key(), s, |t| vocab.count(t)))
                .sum::<usize>()
                as f64,
            Counter::Splintr(vocab) => {
                whole_count(self.memo_key(), text, |t| vocab.count(t)) as f64
            }
            Counter::Whole(count) => whole_count(self.memo_key(), text, count) as f64,
        }
    }

    /// Tokens of a text as a server that renders a chat template counts the prompt it made:
    /// the vocabulary's added tokens spelled in the text (`<think>` typed by a user, say) are
    /// one token each, as Hugging Face tokenizers match them, and the text between them is
    /// counted as [`Tokenizer::count`] counts it. Only the open families' vocabularies have
    /// added tokens here; every other tokenizer counts as `count` does.
    pub fn count_served(self, text: &str) -> f64 {
        let Counter::Splintr(vocab) = self.spec().counter else {
            return self.count(text);
        };
        let Some(specials) = vocab.specials() else {
            return self.count(text);
        };
        let (mut n, mut at) = (0.0, 0);
        for m in specials.find_iter(text) {
            n += self.count(&text[at..m.start()]) + 1.0;
            at = m.end();
        }
        match at {
            0 => self.count(text),
            _ => n + self.count(&text[at..]),
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
    /// the rule of [`Part`] the whole text is built and counted instead. Only the byte-pair
    /// encodings' counts add across a join the way [`Part`] needs; the others' parts are
    /// counted as the text they make (remembered whole).
    pub fn count_parts<'a>(self, parts: impl Iterator<Item = Part<'a>> + Clone) -> f64 {
        let whole = counting_whole_now();
        let (vocab, scale) = match self.spec().counter {
            Counter::Bpe { vocab, scale } => (vocab, scale),
            Counter::ClaudeEstimate if !whole => (families::Bpe::O200k, 1.0),
            Counter::ClaudeEstimate => return claude_count(&joined(parts)),
            Counter::Claude(_) | Counter::Splintr(_) | Counter::Whole(_) => {
                return self.count(&joined(parts))
            }
        };
        let (bpe, which) = bpe_of(vocab);
        let assembled = match whole {
            true => None,
            false => {
                if parts.clone().nth(WARM_PARTS - 1).is_some() {
                    memo::warm(bpe, which, parts.clone());
                }
                match parts.clone().nth(join::ON_CORES_FROM - 1).is_some() {
                    true => join::assemble_on_cores(bpe, which, &parts.clone().collect::<Vec<_>>()),
                    false => join::assemble(bpe, which, parts.clone()),
                }
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
        match self.spec().counter {
            // The estimate reads the o200k pretokens by kind, which add up across pieces as
            // their tokens do.
            Counter::ClaudeEstimate => {
                let bytes = parts
                    .map(|p| match p {
                        Part::Piece(t) | Part::Joint(t) => t.len(),
                    })
                    .sum();
                claude_estimate(bytes, &counts)
            }
            Counter::Bpe { .. } | Counter::Claude(_) | Counter::Splintr(_) | Counter::Whole(_) => {
                counts.total as f64 * scale
            }
        }
    }

    /// The memo key of a tokenizer counted whole: one of its own, after the fixed ones.
    fn memo_key(self) -> u8 {
        let i = Self::ALL
            .iter()
            .position(|&t| t == self)
            .expect("every tokenizer is in Tokenizer::ALL");
        memo::WHOLE + i as u8
    }
}

// The keys of the tokenizers counted whole stay below the BPE keys that come after them.
const _: () = assert!(memo::WHOLE as usize + Tokenizer::ALL.len() <= memo::LLAMA4 as usize);

impl Serialize for Tokenizer {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Tokenizer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Tokenizer::parse(&name).map_err(serde::de::Error::custom)
    }
}

/// The BPE of a vocabulary and its memo key. Each is loaded the first time it is asked for,
/// so a command that counts with one never loads the other.
fn bpe_of(vocab: families::Bpe) -> (&'static Bpe, u8) {
    match vocab {
        families::Bpe::O200k => (Bpe::o200k(), memo::O200K),
        families::Bpe::Cl100k => (Bpe::cl100k(), memo::CL100K),
        families::Bpe::Llama4 => (super::llama4::bpe(), memo::LLAMA4),
    }
}

/// The whole-number count of a byte-pair encoding, remembered.
fn count_bpe(vocab: families::Bpe, text: &str) -> usize {
    let (bpe, which) = bpe_of(vocab);
    match counting_whole_now() {
        true => bpe.count(text),
        false => memo::count(which, text, |t| pieces::count(bpe, which, t)).total,
    }
}

/// A text cut at its first and last clean boundaries (an ASCII letter or digit, then a space
/// and an ASCII letter; see [`Part`]): the pieces before, between and after, which count as the
/// text does when counted one after another. Prose in a description is nearly all between, and
/// is the same text whichever rendering carries it, so it is counted once. A text with fewer
/// than two such boundaries is all in the first piece.
pub fn clean_cuts(text: &str) -> [&str; 3] {
    let b = text.as_bytes();
    let at = |i: usize| clean_at(b, i);
    let first = (1..b.len()).find(|&i| at(i));
    let last = (1..b.len()).rev().find(|&i| at(i));
    match (first, last) {
        (Some(i), Some(j)) if i < j => [&text[..i], &text[i..j], &text[j..]],
        _ => [text, "", ""],
    }
}

/// Whether `b` parts cleanly before byte `i` (`0 < i`): an ASCII letter or digit, then a space
/// and an ASCII letter, where both pretokenizers end one pretoken and start the next.
fn clean_at(b: &[u8], i: usize) -> bool {
    i > 0
        && b[i - 1].is_ascii_alphanumeric()
        && b[i] == b' '
        && b.get(i + 1).is_some_and(u8::is_ascii_alphabetic)
}

/// Texts longer than this are counted a segment at a time by the `splintr` vocabularies (an
/// assumed size: large enough that cutting costs nothing, small enough that an encoder's
/// per-byte working memory stays in the tens of megabytes).
const SEGMENT_BYTES: usize = 1 << 20;

/// A text cut at clean boundaries ([`clean_at`]) into segments of at most `max` bytes, each cut
/// as late as the limit allows. Every pretokenizer here ends one pretoken and starts the next
/// at such a place, so the segments' counts add up to the text's (a test holds each `splintr`
/// vocabulary and Gemma's to that; Mistral's SentencePiece adds its dummy prefix to each
/// segment, so it cuts its own way). A stretch with no clean boundary in `max` bytes runs on to the next
/// one: it is counted whole, as it must be to be exact.
fn segments(text: &str, max: usize) -> impl Iterator<Item = &str> {
    let b = text.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= b.len() {
            return None;
        }
        let from = start;
        let end = match b.len() - from <= max {
            true => b.len(),
            false => {
                let limit = from + max;
                (from + 1..=limit)
                    .rev()
                    .find(|&i| clean_at(b, i))
                    .or_else(|| (limit + 1..b.len()).find(|&i| clean_at(b, i)))
                    .unwrap_or(b.len())
            }
        };
        start = end;
        Some(&text[from..end])
    })
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
    let counts = match counting_whole_now() {
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

/// A text's tokens on a Claude family, as a message's content or (`inline`) inside a longer
/// text; remembered as the BPE counts are.
fn claude_exact_count(f: Family, text: &str, inline: bool) -> usize {
    // No text, no tokens (an empty message still pays its frame: [`Family::message_tokens`]).
    if text.is_empty() {
        return 0;
    }
    let count = |t: &str| match inline {
        true => f.inline_tokens(t),
        false => f.content_tokens(t),
    };
    if counting_whole_now() {
        return count(text);
    }
    let which = memo::CLAUDE + 2 * f as u8 + u8::from(inline);
    memo::count(which, text, |t| Counts {
        total: count(t),
        ..Counts::default()
    })
    .total
}

/// Tokens of a text under a tokenizer counted whole, remembered under its key `which`.
fn whole_count(which: u8, text: &str, count: impl Fn(&str) -> usize) -> usize {
    if text.is_empty() {
        return 0;
    }
    if counting_whole_now() {
        return count(text);
    }
    memo::count(which, text, |t| Counts {
        total: count(t),
        ..Counts::default()
    })
    .total
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

/// Whether this thread counts whole ([`counting_whole`]): nothing is remembered or looked up.
pub(crate) fn counting_whole_now() -> bool {
    WHOLE.with(std::cell::Cell::get)
}

/// [`crate::sync::map_on_cores`] for counting work: inside [`counting_whole`], the workers
/// count whole too.
pub fn on_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    match counting_whole_now() {
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

mod join;

/// Counts of pretokens, remembered. A text's count is the sum of its pretokens' counts (BPE
/// merges never cross a pretoken), and catalogue text is made of few distinct pretokens
/// (`":"`, `"type`, ` the`, ...) repeated many times, so most are looked up rather than
/// encoded. Short pretokens only (longer ones rarely repeat), per thread, and the table is
/// emptied at its bound, so memory stays flat whatever is counted. Keys are compared whole:
/// a lookup can only find the pretoken's own count. The table hashes with foldhash rather than
/// SipHash: counting 20 MB of definition text took 11% less time with it (255 ms against 285 ms,
/// one run each on this project's 2-core machine); a text written to collide in it slows its
/// own count down, and the table stays bounded and is emptied at its bound.
mod pieces;

/// Counts of texts, remembered: each distinct text is tokenized once per tokenizer. A
/// definition is carried by several surfaces and by every round of a task (150 rounds of 5 MB
/// on the per-row surface at N=8,560), and a request's total is assembled from its
/// definitions' counts, so a count is looked up far more often than it is made. Keys are the
/// text's length and its 128-bit XXH3 hash under a seed drawn for each process (a text is read
/// once to make its key, and a catalogue cannot be written to make two texts share one); each
/// shard is emptied before its table would grow past 65,536 slots of 40 bytes, so the memo
/// stays under about 170 MB whatever is counted.
mod memo;

#[cfg(test)]
mod tests;
