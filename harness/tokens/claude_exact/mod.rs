//! Claude's tokenizer, counted exactly and offline.
//!
//! Anthropic publishes no tokenizer for its current models. The ctok project (PyPI `ctok`
//! 1.3.0, MIT) measured one: for each family a vocabulary of pieces, each shown with
//! `count_tokens` to cost one token, and the rules by which the API rewrites text into a stream
//! of word, case and byte markers before tiling it with the fewest pieces. toolcost takes the
//! piece lists from that package (`fixtures/tokenizers/claude/`, with its licence) and counts
//! with its own implementation of the rules ([`normalise`], [`stream`], [`tile`]), checked
//! against the recorded counts of `../shared/claude-counts-text` (1,741 documents, each family).
//!
//! The families and the models they serve (routing as ctok's measurements give it; a model
//! outside them is assumed to be on the family of its generation):
//! - [`Family::V3`]: Claude 3 through the 4.6 models (Opus 4.5/4.6, Sonnet 4.x, Haiku 4.5),
//!   measured on claude-opus-4-5;
//! - [`Family::V4_7`]: Claude Opus 4.7, measured on claude-opus-4-7;
//! - [`Family::V5`]: Opus 4.8 and later, the 5.x models: the v4.7 vocabulary in a six-token
//!   frame with no word start at its end, measured on claude-opus-5, where trailing ASCII
//!   whitespace of a message is free.

mod chars;
mod normalise;
mod stream;
mod tile;

use serde::Serialize;
use std::sync::OnceLock;
use tile::Vocab;

/// Texts are counted in parts of about this many bytes (see [`Family::body_tokens`]).
const CHUNK_BYTES: usize = 16 * 1024;
/// A text of this many parts or more is counted on every core.
const PARALLEL_PARTS: usize = 32;

/// `text` cut after newlines followed by a byte that is ASCII and not whitespace, into parts of
/// at least `at_least` bytes (the last may be shorter). An empty text has no parts.
fn cut_after_newlines(text: &str, at_least: usize) -> Vec<&str> {
    let b = text.as_bytes();
    let mut parts = Vec::new();
    let mut from = 0;
    let mut i = at_least;
    while i < b.len() {
        match memchr::memchr(b'\n', &b[i..]) {
            None => break,
            Some(k) => {
                let p = i + k + 1;
                if p < b.len() && b[p].is_ascii() && !b[p].is_ascii_whitespace() {
                    parts.push(&text[from..p]);
                    from = p;
                    i = p + at_least;
                } else {
                    i = p;
                }
            }
        }
    }
    if from < b.len() {
        parts.push(&text[from..]);
    }
    parts
}

/// A Claude tokenizer family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Family {
    #[serde(rename = "claude-v3")]
    V3,
    #[serde(rename = "claude-v4.7")]
    V4_7,
    #[serde(rename = "claude-v5")]
    V5,
}

const V3_PIECES: &[u8] = include_bytes!("../../../fixtures/tokenizers/claude/v3.pieces.gz");
const V4_7_PIECES: &[u8] = include_bytes!("../../../fixtures/tokenizers/claude/v4_7.pieces.gz");

impl Family {
    pub const ALL: [Family; 3] = [Family::V3, Family::V4_7, Family::V5];

    pub fn name(self) -> &'static str {
        match self {
            Family::V3 => "claude-v3",
            Family::V4_7 => "claude-v4.7",
            Family::V5 => "claude-v5",
        }
    }

    /// The model whose recorded counts the family is checked against.
    pub fn measured_on(self) -> &'static str {
        match self {
            Family::V3 => "claude-opus-4-5",
            Family::V4_7 => "claude-opus-4-7",
            Family::V5 => "claude-opus-5",
        }
    }

    /// The family of a Claude model id (`claude-opus-4-5-20251101`, `anthropic/claude-sonnet-5-5`,
    /// `claude-3-5-haiku`): by the generation its name gives. None for an id that names no
    /// Claude generation.
    pub fn of_model(model: &str) -> Option<Family> {
        let id = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        // Bedrock names its models `anthropic.claude-...`.
        let id = id.strip_prefix("anthropic.").unwrap_or(&id);
        let rest = id.strip_prefix("claude-")?;
        // The version is the first run of numbers joined by `-` or `.` (a date is not one).
        let mut nums: Vec<u32> = Vec::new();
        for part in rest.split(['-', '.', '@']) {
            match part.parse::<u32>() {
                Ok(n) if n < 100 => nums.push(n),
                _ if nums.is_empty() => continue,
                _ => break,
            }
        }
        let major = *nums.first()?;
        let minor = nums.get(1).copied().unwrap_or(0);
        Some(match (major, minor) {
            (0..=3, _) => Family::V3,
            (4, 0..=6) => Family::V3,
            (4, 7) => Family::V4_7,
            _ => Family::V5,
        })
    }

    fn vocab(self) -> &'static Vocab {
        static V3: OnceLock<Vocab> = OnceLock::new();
        static V47: OnceLock<Vocab> = OnceLock::new();
        match self {
            Family::V3 => V3.get_or_init(|| Vocab::load(V3_PIECES)),
            Family::V4_7 | Family::V5 => V47.get_or_init(|| Vocab::load(V4_7_PIECES)),
        }
    }

    fn memo_slot(self) -> usize {
        match self {
            Family::V3 => 0,
            Family::V4_7 => 1,
            Family::V5 => 2,
        }
    }

    fn rules(self) -> stream::Rules {
        match self {
            Family::V3 => stream::Rules {
                frame_bow: true,
                allcaps_min: Some(4),
            },
            Family::V4_7 | Family::V5 => stream::Rules {
                frame_bow: self == Family::V4_7,
                allcaps_min: None,
            },
        }
    }

    /// Curly quotes fold to ASCII before tokenizing (v3 only).
    fn folds_quotes(self) -> bool {
        self == Family::V3
    }

    /// The tokens a request of one user message adds to its text's: the message frame. Measured
    /// from the recorded one-message counts (recorded minus content is this constant on every
    /// document; a test re-derives it).
    pub fn message_frame(self) -> usize {
        match self {
            Family::V3 => 7,
            Family::V4_7 => 11,
            Family::V5 => 6,
        }
    }

    /// What `count_tokens` answers for a request of one user message with this text.
    pub fn message_tokens(self, text: &str) -> usize {
        self.message_frame() + self.content_tokens(text)
    }

    /// The tokens of a text as the content of one message, its frame left out.
    pub fn content_tokens(self, text: &str) -> usize {
        // Trailing ASCII whitespace of a message is free on the v5 frame.
        let raw = match self {
            Family::V5 => text.trim_end_matches([' ', '\t', '\n', '\r', '\x0B', '\x0C']),
            Family::V3 | Family::V4_7 => text,
        };
        let norm = normalise::normalise(raw, self.folds_quotes());
        let body = norm.trim_end_matches('\n');
        let trailing_newlines = norm.len() - body.len();
        self.body_tokens(body, Some(raw.starts_with(' '))) + self.newline_tail(trailing_newlines)
    }

    /// The tokens of a text that stands inside a longer one, just after a newline, with more
    /// after it (a tool definition in the tools block): no message edge applies, neither the
    /// frame's word start nor the free trailing whitespace. A text that starts with whitespace
    /// would join the newline before it; it is counted as if it did not.
    pub fn inline_tokens(self, text: &str) -> usize {
        let norm = normalise::normalise(text, self.folds_quotes());
        self.body_tokens(&norm, None)
    }

    /// The tokens of normalised text: at the head of a message (`head`: whether the raw text
    /// began with a space) or inside one (None). A long text is cut after a newline that a
    /// character other than whitespace follows: no piece and no marker rule reaches across such
    /// a place (the newline run is its own segment, and a run beside it sees a newline, not a
    /// space, either way), so the parts count as the whole does, side by side on every core
    /// when there are many.
    fn body_tokens(self, body: &str, head: Option<bool>) -> usize {
        self.body_tokens_in(body, head, CHUNK_BYTES)
    }

    fn body_tokens_in(self, body: &str, head: Option<bool>, chunk: usize) -> usize {
        let parts = cut_after_newlines(body, chunk);
        let count = |(i, part): &(usize, &str)| {
            let rules = match (i, head) {
                (0, Some(_)) => self.rules(),
                _ => stream::Rules {
                    frame_bow: false,
                    ..self.rules()
                },
            };
            let mut out = Vec::with_capacity(part.len() + part.len() / 4 + 8);
            stream::stream(part, rules, *i == 0 && head == Some(true), &mut out);
            tile::count_stream(self.vocab(), self.memo_slot(), &out)
        };
        let parts: Vec<(usize, &str)> = parts.into_iter().enumerate().collect();
        if parts.is_empty() {
            // An empty message still pays its frame's word start.
            return match head {
                Some(_) => self.empty_body(),
                None => 0,
            };
        }
        match parts.len() >= PARALLEL_PARTS {
            true => crate::sync::map_on_cores(&parts, count).into_iter().sum(),
            false => parts.iter().map(count).sum(),
        }
    }

    /// What a message whose text normalises to nothing counts beyond its frame.
    fn empty_body(self) -> usize {
        let mut out = Vec::new();
        stream::stream("", self.rules(), false, &mut out);
        tile::count_stream(self.vocab(), self.memo_slot(), &out)
    }

    /// What a message's final run of `n` newlines costs: the frame follows the content with two
    /// newlines of its own, one token, and a piece can span into them, so the run tiled is
    /// `n + 2` newlines of which the frame's token is one.
    fn newline_tail(self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let run = vec![b'\n'; n + 2];
        tile::count_stream(self.vocab(), self.memo_slot(), &run) - 1
    }

    /// Forget the segment counts this thread remembered (a benchmark's cold runs).
    pub fn forget_remembered() {
        tile::forget();
    }

    /// Pieces in the family's vocabulary.
    pub fn pieces(self) -> usize {
        self.vocab().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_take_their_families() {
        for (m, f) in [
            ("claude-3-5-haiku-20241022", Family::V3),
            ("claude-opus-4-5", Family::V3),
            ("claude-sonnet-4-6", Family::V3),
            ("claude-haiku-4-5-20251001", Family::V3),
            ("claude-opus-4-7", Family::V4_7),
            ("anthropic/claude-opus-4.7", Family::V4_7),
            ("claude-opus-4-8", Family::V5),
            ("claude-opus-5", Family::V5),
            ("claude-sonnet-5-5", Family::V5),
            ("claude-fable-5-1", Family::V5),
            ("anthropic.claude-sonnet-4-20250514-v1:0", Family::V3),
        ] {
            assert_eq!(Family::of_model(m), Some(f), "{m}");
        }
        assert_eq!(Family::of_model("gpt-4o"), None);
        assert_eq!(Family::of_model("claude-instant"), None);
    }

    /// A text cut into parts after newlines counts as the whole does, on every family, for
    /// lines of words, punctuation, contractions, spaces, tabs, capitals and other scripts.
    #[test]
    fn parts_count_as_the_whole() {
        let words = [
            "the",
            "Quick",
            "NASA",
            "it's",
            "  ",
            "\t",
            "{\"a\": 1}",
            "x_y",
            "42",
            "naïve",
            "中文",
            "'s",
            "(",
            ")",
            "—",
            " ",
            "\n",
            "\n\n",
            "ü\u{301}",
            "😀",
            "Ωμέγα",
        ];
        let mut rng = crate::rng::Rng::new(5);
        for _ in 0..300 {
            let n = 1 + rng.below(120);
            let text: String = (0..n)
                .map(|_| *rng.pick(&words))
                .collect::<Vec<_>>()
                .join(" ");
            for f in Family::ALL {
                for head in [Some(true), Some(false), None] {
                    let whole = f.body_tokens_in(&text, head, usize::MAX);
                    for chunk in [1, 7, 40] {
                        assert_eq!(
                            f.body_tokens_in(&text, head, chunk),
                            whole,
                            "{f:?} {head:?} {chunk} {text:?}"
                        );
                    }
                }
            }
        }
    }

    /// Any text counts without a panic, and its parts count as the whole: random characters
    /// from every plane (controls, marks, surrogate neighbours, private use, noncharacters,
    /// the marker bytes' own code points), with newlines among them.
    #[test]
    fn any_text_counts_and_its_parts_agree() {
        let mut rng = crate::rng::Rng::new(9);
        let ranges: [(u32, u32); 9] = [
            (0x00, 0x7F),
            (0x80, 0x2FF),
            (0x300, 0x36F),
            (0x0900, 0x0DFF),
            (0x2000, 0x33FF),
            (0xD7A0, 0xD7FF),
            (0xE000, 0xF8FF),
            (0xFDD0, 0xFFFF),
            (0x1F300, 0x1FAFF),
        ];
        for _ in 0..400 {
            let n = 1 + rng.below(80);
            let mut text = String::new();
            for _ in 0..n {
                let (lo, hi) = *rng.pick(&ranges);
                let c = char::from_u32(lo + rng.below((hi - lo + 1) as usize) as u32);
                match (rng.chance(0.1), c) {
                    (true, _) => text.push('\n'),
                    (false, Some(c)) => text.push(c),
                    (false, None) => {}
                }
            }
            for f in Family::ALL {
                let whole = f.body_tokens_in(&text, Some(text.starts_with(' ')), usize::MAX);
                assert_eq!(
                    f.body_tokens_in(&text, Some(text.starts_with(' ')), 3),
                    whole,
                    "{f:?} {text:?}"
                );
                assert!(f.message_tokens(&text) >= f.message_frame());
                f.inline_tokens(&text);
            }
        }
    }

    /// The published examples: "hello, world" is 10 on v3 and on v5, 15 on v4.7.
    #[test]
    fn short_texts_count_as_recorded() {
        assert_eq!(Family::V3.message_tokens("hello, world"), 10);
        assert_eq!(Family::V4_7.message_tokens("hello, world"), 15);
        assert_eq!(Family::V5.message_tokens("hello, world"), 10);
    }
}
