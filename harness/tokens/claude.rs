//! Claude's token counts, estimated. Anthropic publishes no tokenizer for its current models,
//! so toolcost models how Claude's count differs from o200k's on the same text and fits the
//! model's few constants to what Claude's own `count_tokens` recorded.
//!
//! The model reads a text as o200k pretokens and weighs four things: its UTF-8 bytes, the o200k
//! tokens of words that start without a space (identifiers, JSON keys, a word after a quote or
//! a newline), the o200k tokens of words that start with one (prose), and the o200k tokens of
//! punctuation (JSON structure). On tool definitions Claude splits identifiers and punctuation
//! much finer than o200k does, while prose comes out close to o200k's count: one scale factor
//! over o200k leaves about +-10% per server, these four leave under 2% on average
//! (`toolcost claude-counts` prints the table).
//!
//! - **Current tokenizer** (Claude Opus 4.7 and later: the 5.x models): [`CURRENT`], fitted by
//!   least squares on the recorded `tools` deltas of 17 real MCP servers on `claude-opus-5`
//!   (`fixtures/claude-counts/`), with the one-time tool prompt set so that a single minimal
//!   tool adds the recorded 328 tokens, and the request framing so that a "." message counts
//!   the recorded 7.
//! - **Earlier tokenizer** (Claude 3 to Sonnet 4.6 and Haiku 4.5): cl100k x [`LEGACY_PER_CL100K`],
//!   the ratio of seven recorded claude-3-haiku counts to cl100k's (no per-text records exist
//!   to fit more).

use crate::error::{Error, Result};
use serde::Serialize;

/// The weights of the current-tokenizer estimate: tokens per byte, per o200k token of a word
/// that starts without a space, per o200k token of a word that starts with one, and per o200k
/// token of punctuation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Weights {
    pub per_byte: f64,
    pub per_bare_word_token: f64,
    pub per_spaced_word_token: f64,
    pub per_punctuation_token: f64,
}

/// What the estimate reads of a text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Features {
    pub bytes: f64,
    /// o200k tokens of word pretokens that do not start with a space.
    pub bare_word_tokens: f64,
    /// o200k tokens of word pretokens that start with a space.
    pub spaced_word_tokens: f64,
    /// o200k tokens of pretokens of punctuation (no letter, no digit, not only whitespace).
    pub punctuation_tokens: f64,
}

impl std::ops::AddAssign for Features {
    fn add_assign(&mut self, o: Features) {
        self.bytes += o.bytes;
        self.bare_word_tokens += o.bare_word_tokens;
        self.spaced_word_tokens += o.spaced_word_tokens;
        self.punctuation_tokens += o.punctuation_tokens;
    }
}

impl std::ops::Sub for Features {
    type Output = Features;
    fn sub(self, o: Features) -> Features {
        Features {
            bytes: self.bytes - o.bytes,
            bare_word_tokens: self.bare_word_tokens - o.bare_word_tokens,
            spaced_word_tokens: self.spaced_word_tokens - o.spaced_word_tokens,
            punctuation_tokens: self.punctuation_tokens - o.punctuation_tokens,
        }
    }
}

impl Features {
    fn as_row(&self) -> [f64; K] {
        [
            self.bytes,
            self.bare_word_tokens,
            self.spaced_word_tokens,
            self.punctuation_tokens,
        ]
    }
}

impl Weights {
    /// The estimate for a text with these features.
    pub fn tokens(&self, f: &Features) -> f64 {
        self.per_byte * f.bytes
            + self.per_bare_word_token * f.bare_word_tokens
            + self.per_spaced_word_token * f.spaced_word_tokens
            + self.per_punctuation_token * f.punctuation_tokens
    }
}

/// The current tokenizer's weights: the least-squares fit that `toolcost claude-counts`
/// re-derives from `fixtures/claude-counts/` (recorded 2026-08-16/19 on claude-opus-5; a test
/// fails when the committed constants drift from the re-fit).
pub const CURRENT: Weights = Weights {
    per_byte: 0.15332,
    per_bare_word_token: 1.7085,
    per_spaced_word_token: 0.6654,
    per_punctuation_token: 0.8954,
};

/// Recorded on claude-opus-5 (2026-08, `fixtures/claude-counts/README.md`): the tokens one
/// minimal tool adds to a request, the tool-use prompt included.
pub const RECORDED_MINIMAL_TOOL: f64 = 328.0;
/// Recorded likewise: a request of one "." user message and no tools.
pub const RECORDED_DOT_MESSAGE: f64 = 7.0;

/// The minimal tool of the probe, projected as Anthropic bills it. The recorded probe's exact
/// definition is not published: a name, an empty description and an empty object schema is
/// assumed.
pub const MINIMAL_TOOL: &str =
    r#"{"name":"probe","description":"","input_schema":{"type":"object","properties":{}}}"#;

/// The current models' one-time tool prompt: what one minimal tool adds, less that tool's own
/// estimate (so it depends on the fit: calibrated).
pub fn current_tool_prompt() -> f64 {
    RECORDED_MINIMAL_TOOL - CURRENT.tokens(&features(MINIMAL_TOOL))
}

/// The current models' request framing: what a "." message counts, less the estimate of ".".
pub fn current_framing() -> f64 {
    RECORDED_DOT_MESSAGE - CURRENT.tokens(&features("."))
}

/// Earlier Claude tokens per cl100k token: 27,367 / 22,215, the sum of seven npm servers'
/// definitions counted by claude-3-haiku's `count_tokens` against cl100k of the same text
/// (published 2026-01-15; figures in `fixtures/claude-counts/README.md`). Per server the ratio
/// runs from 1.18 to 1.26. The recorded text was pretty-printed JSON sent as a message; that
/// the ratio holds for the compact definitions toolcost counts is assumed.
pub const LEGACY_PER_CL100K: f64 = 1.2319;

/// The features of a text: its bytes, its o200k word tokens by how the word starts, and its
/// o200k punctuation tokens.
pub fn features(text: &str) -> Features {
    let k = super::tokenizer::o200k_kinds(text);
    Features {
        bytes: text.len() as f64,
        bare_word_tokens: k.bare_words as f64,
        spaced_word_tokens: k.spaced_words as f64,
        punctuation_tokens: k.punctuation as f64,
    }
}

/// How many weights the estimate has.
const K: usize = 4;

/// One recorded count to fit to: the features of what was counted and the count.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub features: Features,
    pub recorded: f64,
}

/// Fit the weights by least squares to `samples` of tool deltas, each a server's definitions
/// plus the one-time tool prompt, with the prompt tied to the probe: a minimal tool
/// (`minimal`) adds `probe` tokens, so each sample is fitted as
/// `recorded - probe = w . (features - minimal)`.
pub fn fit(samples: &[Sample], minimal: &Features, probe: f64) -> Result<Weights> {
    let rows: Vec<([f64; K], f64)> = samples
        .iter()
        .map(|s| ((s.features - *minimal).as_row(), s.recorded - probe))
        .collect();
    let w = least_squares(&rows)
        .ok_or_else(|| Error::input("claude fit: the samples do not determine the weights"))?;
    Ok(Weights {
        per_byte: w[0],
        per_bare_word_token: w[1],
        per_spaced_word_token: w[2],
        per_punctuation_token: w[3],
    })
}

/// Least squares by the normal equations, solved by Gaussian elimination with partial
/// pivoting; `None` when they are singular. The columns are scaled to unit size first, so the
/// bytes column (tens of thousands) and the token columns sit on one footing.
fn least_squares(rows: &[([f64; K], f64)]) -> Option<[f64; K]> {
    if rows.len() < K {
        return None;
    }
    let mut scale = [0f64; K];
    for (x, _) in rows {
        for j in 0..K {
            scale[j] = scale[j].max(x[j].abs());
        }
    }
    if scale.iter().any(|s| *s == 0.0 || !s.is_finite()) {
        return None;
    }
    let mut a = [[0f64; K + 1]; K];
    for (x, y) in rows {
        let xs: Vec<f64> = (0..K).map(|j| x[j] / scale[j]).collect();
        for i in 0..K {
            for j in 0..K {
                a[i][j] += xs[i] * xs[j];
            }
            a[i][K] += xs[i] * y;
        }
    }
    for c in 0..K {
        let p = (c..K).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() < 1e-12 {
            return None;
        }
        a.swap(c, p);
        let pivot = a[c];
        for (r, row) in a.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                for (v, pv) in row.iter_mut().zip(pivot.iter()).skip(c) {
                    *v -= f * pv;
                }
            }
        }
    }
    let mut w = [0f64; K];
    for i in 0..K {
        w[i] = a[i][K] / a[i][i] / scale[i];
    }
    w.iter().all(|v| v.is_finite()).then_some(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The solver recovers exact weights from data they generate.
    #[test]
    fn least_squares_recovers_known_weights() {
        let w = [0.2, 2.5, 0.6, 0.9];
        let rows: Vec<([f64; K], f64)> = (1..20)
            .map(|i| {
                let x = [
                    1000.0 * i as f64 + 7.0 * (i * i) as f64,
                    50.0 * i as f64 + (i % 3) as f64 * 11.0,
                    80.0 * (20 - i) as f64,
                    30.0 * (i % 5) as f64 + 2.0 * i as f64,
                ];
                (x, w.iter().zip(&x).map(|(a, b)| a * b).sum())
            })
            .collect();
        let got = least_squares(&rows).unwrap();
        for j in 0..K {
            assert!((got[j] - w[j]).abs() < 1e-9, "{got:?}");
        }
    }

    /// Too few or degenerate rows are refused, not answered with NaN.
    #[test]
    fn least_squares_refuses_what_it_cannot_solve() {
        assert!(least_squares(&[([1.0, 2.0, 3.0, 4.0], 1.0)]).is_none());
        let same = vec![([1.0, 2.0, 3.0, 4.0], 1.0); 6];
        assert!(least_squares(&same).is_none());
        assert!(least_squares(&vec![([0.0, 2.0, 3.0, 4.0], 1.0); 6]).is_none());
    }

    /// Prose reads as spaced words, identifiers as bare ones, punctuation as neither.
    #[test]
    fn features_split_words_by_how_they_start() {
        let f = features("the quick fox");
        assert_eq!(f.bytes, 13.0);
        assert_eq!(f.bare_word_tokens, 1.0);
        assert_eq!(f.spaced_word_tokens, 2.0);
        assert_eq!(f.punctuation_tokens, 0.0);
        let g = features("{\"a\":1}");
        assert_eq!(g.spaced_word_tokens, 0.0);
        assert_eq!(g.bare_word_tokens, 1.0);
        assert!(g.punctuation_tokens >= 2.0);
        assert_eq!(features("").bytes, 0.0);
    }

    /// The probe constants come out as recorded: 328 for the minimal tool, 7 for the message.
    #[test]
    fn one_time_constants_reproduce_the_probes() {
        let tool = current_tool_prompt() + CURRENT.tokens(&features(MINIMAL_TOOL));
        assert!((tool - 328.0).abs() < 1e-9);
        assert!(current_tool_prompt() > 250.0 && current_tool_prompt() < 328.0);
        assert!((current_framing() + CURRENT.tokens(&features(".")) - 7.0).abs() < 1e-9);
    }
}
