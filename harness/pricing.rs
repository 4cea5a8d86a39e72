//! Price cards: per million tokens, input, cached input, cache write and output, for each
//! model toolcost knows, with the source and date of each figure (`fixtures/prices.toml`).

use crate::error::{Error, Result};
use crate::tokens::{CacheRule, RenderModel, Tokenizer};
use serde::{Deserialize, Serialize};

/// One model's card.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PriceCard {
    pub id: String,
    /// How the provider renders tools: `anthropic:<family>`, `openai:<model>` or `kimi`.
    pub render: String,
    /// The tokenizer that best stands in for the model's own.
    pub tokenizer: String,
    pub context_window: u64,
    /// USD per million input tokens not read from cache.
    pub input: f64,
    /// USD per million cached input tokens read.
    pub cached_input: f64,
    /// USD per million tokens written to the cache.
    pub cache_write: f64,
    /// USD per million output tokens.
    pub output: f64,
    /// Minimum prefix the provider caches, in tokens.
    pub min_cacheable: u64,
    /// How the provider caches prompts: `marks` (only at `cache_control`),
    /// `automatic:<step>:<ttl seconds>`, or `none` (see `tokens::cache`).
    pub cache: String,
    /// Where the cache rule and minimum come from, and when they were read.
    pub cache_source: String,
    /// Constants of this card that no published source gives: they show in the label of
    /// every figure that uses the card.
    #[serde(default)]
    pub assumed: Vec<String>,
    pub source: String,
    pub date: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cards {
    model: Vec<PriceCard>,
}

const EMBEDDED: &str = include_str!("../fixtures/prices.toml");

pub use crate::provider::Usage;

impl PriceCard {
    /// Every card, parsed once per process (the gateway looks one up per request).
    pub fn all() -> &'static [PriceCard] {
        static CARDS: std::sync::OnceLock<Vec<PriceCard>> = std::sync::OnceLock::new();
        CARDS.get_or_init(|| {
            let cards: Cards =
                toml::from_str(EMBEDDED).expect("fixtures/prices.toml is valid (tested)");
            cards.model
        })
    }

    pub fn named(id: &str) -> Result<PriceCard> {
        let all = Self::all();
        all.iter()
            .find(|c| c.id == id.trim())
            .cloned()
            .ok_or_else(|| Error::Unknown {
                kind: "model",
                name: id.to_string(),
                expected: all
                    .iter()
                    .map(|c| c.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    pub fn render_model(&self) -> RenderModel {
        RenderModel::parse(&self.render).unwrap_or_else(|| {
            panic!(
                "price card {} has an unknown render `{}`",
                self.id, self.render
            )
        })
    }

    pub fn cache_rule(&self) -> CacheRule {
        CacheRule::parse(&self.cache).unwrap_or_else(|| {
            panic!(
                "price card {} has an unknown cache rule `{}`",
                self.id, self.cache
            )
        })
    }

    /// `; assumed: a, b` for a label when the card has assumed constants.
    pub fn assumed_note(&self) -> String {
        if self.assumed.is_empty() {
            String::new()
        } else {
            format!("; assumed: {}", self.assumed.join(", "))
        }
    }

    pub fn tokenizer(&self) -> Tokenizer {
        Tokenizer::parse(&self.tokenizer).expect("price card tokenizer is valid (tested)")
    }

    /// Dollars for a usage.
    pub fn cost(&self, u: &Usage) -> f64 {
        (u.uncached_input as f64 * self.input
            + u.cached_input as f64 * self.cached_input
            + u.cache_write as f64 * self.cache_write
            + u.output as f64 * self.output)
            / 1e6
    }

    /// Steady-state usage of a turn whose prefix is already cached (the recorded turns were):
    /// the prefix is read from cache when it reaches the minimum cacheable length, the rest is
    /// uncached input.
    pub fn warm_usage(&self, input: u64, prefix: u64, output: u64) -> Usage {
        let cached = if prefix >= self.min_cacheable {
            prefix.min(input)
        } else {
            0
        };
        Usage {
            uncached_input: input - cached,
            cached_input: cached,
            cache_write: 0,
            output,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_card_parses_and_renders() {
        for c in PriceCard::all() {
            c.render_model();
            c.tokenizer();
            c.cache_rule();
            assert!(
                c.input > 0.0 && c.output > 0.0 && !c.source.is_empty(),
                "{}",
                c.id
            );
        }
    }

    #[test]
    fn kimi_card_reproduces_the_recorded_dollars_from_the_published_split() {
        // FACTS section 1: 143,664 cached / 5,523 uncached / 72 output -> $0.02852109.
        let k = PriceCard::named("kimi-k2.7-code").unwrap();
        let u = Usage {
            uncached_input: 5_523,
            cached_input: 143_664,
            cache_write: 0,
            output: 72,
        };
        assert!((k.cost(&u) - 0.02852109).abs() < 1e-12);
    }
}
