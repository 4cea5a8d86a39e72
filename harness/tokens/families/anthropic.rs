//! Claude's tokenizers: the three families counted exactly ([`super::super::claude_exact`],
//! from the piece lists ctok measured) and the two earlier estimators ([`super::super::claude`]),
//! kept for comparison.

use super::{Bpe, Counter, Family, Label, Spec};

const EXACT_SOURCE: &str =
    "the piece lists of PyPI ctok 1.3.0, measured with count_tokens (fixtures/tokenizers/claude/)";

pub static V3: Spec = Spec {
    name: "claude-v3",
    // The earlier family, counted exactly (its estimate is `claude-legacy-est`).
    aliases: &["claude-legacy"],
    source: EXACT_SOURCE,
    licence: "MIT (ctok)",
    label: Label::Estimated,
    counter: Counter::Claude(Family::V3),
    ready: super::always_ready,
};

pub static V4_7: Spec = Spec {
    name: "claude-v4.7",
    aliases: &[],
    source: EXACT_SOURCE,
    licence: "MIT (ctok)",
    label: Label::Estimated,
    counter: Counter::Claude(Family::V4_7),
    ready: super::always_ready,
};

pub static V5: Spec = Spec {
    name: "claude-v5",
    // `claude` is Claude's current tokenizer, counted exactly (its estimate is `claude-est`).
    aliases: &["claude"],
    source: EXACT_SOURCE,
    licence: "MIT (ctok)",
    label: Label::Estimated,
    counter: Counter::Claude(Family::V5),
    ready: super::always_ready,
};

/// The current tokenizer estimated from o200k pretokens, with weights fitted to recorded
/// counts ([`super::super::claude::CURRENT`]).
pub static ESTIMATE: Spec = Spec {
    name: "claude-est",
    aliases: &[],
    source: "o200k_base, weighed by a fit to claude-opus-5 count_tokens of 17 servers",
    licence: "MIT (tiktoken, OpenAI)",
    label: Label::Calibrated(|| {
        "calibrated:claude-est(fit to claude-opus-5 count_tokens of 17 servers, 2026-08)".into()
    }),
    counter: Counter::ClaudeEstimate,
    ready: super::always_ready,
};

/// The earlier tokenizer estimated as cl100k times [`super::super::claude::LEGACY_PER_CL100K`].
pub static LEGACY_ESTIMATE: Spec = Spec {
    name: "claude-legacy-est",
    aliases: &[],
    source: "cl100k_base, scaled by the ratio of seven recorded claude-3-haiku counts",
    licence: "MIT (tiktoken, OpenAI)",
    label: Label::Calibrated(|| {
        format!(
            "calibrated:claude-legacy-est(cl100k x {}, claude-3-haiku counts of 7 servers)",
            super::super::claude::LEGACY_PER_CL100K
        )
    }),
    counter: Counter::Bpe {
        vocab: Bpe::Cl100k,
        scale: super::super::claude::LEGACY_PER_CL100K,
    },
    ready: super::always_ready,
};
