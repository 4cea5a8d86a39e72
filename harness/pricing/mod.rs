//! Price cards: per million tokens, input, cached input, cache write and output, and the
//! context window, for each model toolcost knows.
//!
//! Prices and windows come from a dated snapshot of LiteLLM's maintained
//! `model_prices_and_context_window` table (`fixtures/litellm-prices.json`, [`litellm`]); each
//! card in `fixtures/prices.toml` names its entry there and keeps by hand only what the entry
//! lacks (a cache-write price where the provider charges none, render rules, tokenizer, cache
//! rule and minimum), each with its source, or marked assumed. A card's `date` is the snapshot's,
//! so every cost figure names the date of its prices.

pub mod litellm;

use crate::error::{Error, Result};
use crate::tokens::{CacheRule, RenderModel, Tokenizer};
use serde::{Deserialize, Serialize};

/// One model's card.
#[derive(Debug, Clone, Serialize)]
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
    pub assumed: Vec<String>,
    /// Where the prices and window come from: the snapshot and its entry, and what is kept by
    /// hand with its source.
    pub source: String,
    /// The date of the prices: the snapshot's (or the hand figures' where no entry is named).
    pub date: String,
    /// The LiteLLM entry the prices are read from.
    pub litellm: Option<String>,
}

/// A card as `fixtures/prices.toml` writes it: the LiteLLM entry it reads, and by hand only
/// what that entry lacks.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CardSpec {
    id: String,
    render: String,
    tokenizer: String,
    /// The snapshot entry the prices and window are read from.
    litellm: Option<String>,
    context_window: Option<u64>,
    input: Option<f64>,
    cached_input: Option<f64>,
    /// A cache write by hand: a price, or `"input"` (priced as plain input, where the
    /// provider charges no write surcharge).
    cache_write: Option<HandPrice>,
    output: Option<f64>,
    /// Why the hand figures above are kept by hand (what the snapshot lacks), their source
    /// and the date they were read.
    by_hand: Option<String>,
    min_cacheable: u64,
    cache: String,
    cache_source: String,
    #[serde(default)]
    assumed: Vec<String>,
    /// What else the card rests on (why this entry, the render rules).
    source: String,
}

/// A price kept by hand: dollars per million, or `"input"` (the card's input price).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum HandPrice {
    Usd(f64),
    Rule(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cards {
    model: Vec<CardSpec>,
}

const EMBEDDED: &str = include_str!("../../fixtures/prices.toml");

impl CardSpec {
    /// The card, with prices and window from the snapshot's entry and the hand figures filling
    /// only the fields the entry lacks.
    fn resolve(self, snap: &litellm::Snapshot) -> Result<PriceCard> {
        let id = self.id.clone();
        let entry = match &self.litellm {
            Some(key) => Some(snap.entry(key).ok_or_else(|| {
                Error::input(format!(
                    "price card {id}: the LiteLLM snapshot has no entry `{key}`"
                ))
            })?),
            None => None,
        };
        let mut hand: Vec<&str> = Vec::new();
        let mut pick = |field: &'static str, own: Option<f64>, snapped: Option<f64>| {
            match (own, snapped) {
                (Some(_), Some(_)) => Err(Error::input(format!(
                    "price card {id}: `{field}` is in the LiteLLM snapshot; keep by hand only what it lacks"
                ))),
                (Some(v), None) => {
                    hand.push(field);
                    Ok(v)
                }
                (None, Some(v)) => Ok(v),
                (None, None) => Err(Error::input(format!(
                    "price card {id}: no `{field}` in the LiteLLM snapshot or by hand"
                ))),
            }
        };
        let e = entry.as_ref();
        let input = pick("input", self.input, e.and_then(|e| e.input))?;
        let cached_input = pick(
            "cached_input",
            self.cached_input,
            e.and_then(|e| e.cached_input),
        )?;
        let own_write = match &self.cache_write {
            None => None,
            Some(HandPrice::Usd(v)) => Some(*v),
            Some(HandPrice::Rule(r)) if r == "input" => Some(input),
            Some(HandPrice::Rule(r)) => {
                return Err(Error::input(format!(
                    "price card {id}: cache_write `{r}` is neither a price nor \"input\""
                )))
            }
        };
        let cache_write = pick("cache_write", own_write, e.and_then(|e| e.cache_write))?;
        let output = pick("output", self.output, e.and_then(|e| e.output))?;
        let window = pick(
            "context_window",
            self.context_window.map(|w| w as f64),
            e.and_then(|e| e.context_window.map(|w| w as f64)),
        )? as u64;
        if !hand.is_empty() && self.by_hand.is_none() {
            return Err(Error::input(format!(
                "price card {id}: {} kept by hand without `by_hand` (its source and date)",
                hand.join(", ")
            )));
        }
        let mut source = match &self.litellm {
            Some(key) => format!("{} entry `{key}`", snap.describe()),
            None => "by hand".to_string(),
        };
        if let Some(why) = &self.by_hand {
            source.push_str(&format!("; by hand ({}): {why}", hand.join(", ")));
        }
        source.push_str(&format!("; {}", self.source));
        Ok(PriceCard {
            id: self.id,
            render: self.render,
            tokenizer: self.tokenizer,
            context_window: window,
            input,
            cached_input,
            cache_write,
            output,
            min_cacheable: self.min_cacheable,
            cache: self.cache,
            cache_source: self.cache_source,
            assumed: self.assumed,
            source,
            date: snap.date.clone(),
            litellm: self.litellm,
        })
    }
}

/// Every card of a prices file resolved against a snapshot.
pub fn cards_from(prices_toml: &str, snap: &litellm::Snapshot) -> Result<Vec<PriceCard>> {
    let cards: Cards =
        toml::from_str(prices_toml).map_err(|e| Error::input(format!("price cards: {e}")))?;
    cards.model.into_iter().map(|c| c.resolve(snap)).collect()
}

/// The LiteLLM keys the embedded cards read.
pub fn litellm_keys() -> Vec<String> {
    PriceCard::all()
        .iter()
        .filter_map(|c| c.litellm.clone())
        .collect()
}

pub use crate::provider::Usage;

impl PriceCard {
    /// Every card, parsed once per process (the gateway looks one up per request).
    pub fn all() -> &'static [PriceCard] {
        static CARDS: std::sync::OnceLock<Vec<PriceCard>> = std::sync::OnceLock::new();
        CARDS.get_or_init(|| {
            cards_from(EMBEDDED, litellm::Snapshot::embedded())
                .expect("fixtures/prices.toml and fixtures/litellm-prices.json are valid (tested)")
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
