//! Price cards: per million tokens, input, cached input, cache write and output, and the
//! context window, for each model toolcost knows.
//!
//! Prices and windows come from a dated snapshot of LiteLLM's maintained
//! `model_prices_and_context_window` table (`fixtures/litellm-prices.json`, [`litellm`]); each
//! card in `fixtures/prices.toml` names its entry there and keeps by hand only what the entry
//! lacks (a cache-write price where the provider charges none, render rules, tokenizer, cache
//! rule and minimum), each with its source, or marked assumed. A card's `date` is the snapshot's,
//! so every cost figure names the date of its prices.

pub mod family;
pub mod litellm;

use crate::billing::{CacheRule, RenderModel};
use crate::error::{Error, Result};
use crate::tokens::Tokenizer;
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
    /// `automatic:<step>:<ttl seconds>`, or `none` (see `billing::cache`).
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
    /// Long-context tiers from the entry, by threshold: once a request's input passes a
    /// tier's `above`, the whole request is billed at the tier's rates (as the providers bill).
    pub tiers: Vec<Tier>,
    /// A cache write that lives longer than the default (Anthropic's 1 hour, OpenAI's 12
    /// hours), priced on its own: the TTL and USD per million.
    pub cache_write_long: Option<(String, f64)>,
    /// The card this one takes what the price table does not say from (render rules,
    /// tokenizer, cache rule and minimum), for a model priced from the table alone.
    pub inherits: Option<String>,
}

/// One long-context tier: every rate once a request's input passes `above` tokens. A rate the
/// table does not give for the tier is the base rate scaled as the tier scales input.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tier {
    pub above: u64,
    pub input: f64,
    pub cached_input: f64,
    pub cache_write: f64,
    pub output: f64,
}

/// The rates a request is billed at: the base ones or a tier's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub input: f64,
    pub cached_input: f64,
    pub cache_write: f64,
    pub output: f64,
    /// The tier's threshold, when a tier applies.
    pub above: Option<u64>,
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
        let (tiers, cache_write_long) = match e {
            Some(e) => extras(e, input, cached_input, cache_write, output),
            None => (Vec::new(), None),
        };
        Ok(PriceCard {
            tiers,
            cache_write_long,
            inherits: None,
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

/// The tiers and long cache write of an entry, with the base rates a tier's missing rates are
/// scaled from.
fn extras(
    e: &litellm::Entry,
    input: f64,
    cached_input: f64,
    cache_write: f64,
    output: f64,
) -> (Vec<Tier>, Option<(String, f64)>) {
    let tiers = e
        .tiers
        .iter()
        .filter_map(|t| {
            let tin = t.input?;
            let k = if input > 0.0 { tin / input } else { 1.0 };
            Some(Tier {
                above: t.above,
                input: tin,
                cached_input: t.cached_input.unwrap_or(cached_input * k),
                cache_write: t.cache_write.unwrap_or(cache_write * k),
                output: t.output.unwrap_or(output * k),
            })
        })
        .collect();
    (
        tiers,
        e.cache_write_long.map(|(ttl, p)| (ttl.to_string(), p)),
    )
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

/// The smallest context window taken as a chat model's (every model a card prices has at least
/// this many; a table that says fewer is broken).
pub const MIN_CONTEXT_WINDOW: u64 = 1024;

/// The cards a price snapshot makes (the hand cards, and one for each of `models`, the client
/// profiles' default models), each checked: its entry is a chat model's, not every price is
/// zero, a cache write costs no less than a cache read (in every tier), and the window is a
/// real one. A snapshot that fails any of these is refused whole, with every reason.
pub fn cards_of_snapshot(snap: &litellm::Snapshot, models: &[String]) -> Result<Vec<PriceCard>> {
    let mut cards = cards_from(EMBEDDED, snap)?;
    for m in models {
        if cards.iter().any(|c| &c.id == m) {
            continue;
        }
        match family::derive(m, snap) {
            Some(c) => cards.push(c),
            None => {
                return Err(Error::input(format!(
                    "the new price table cannot price {m} (a client profile's default model)"
                )))
            }
        }
    }
    let mut faults = Vec::new();
    for c in &cards {
        if let Some(k) = &c.litellm {
            if !snap.is_chat(k) {
                faults.push(format!(
                    "{}: entry `{k}` is no longer a chat model with input and output prices",
                    c.id
                ));
            }
        }
        let mut rates = vec![("", c.input, c.cached_input, c.cache_write, c.output)];
        for t in &c.tiers {
            rates.push((
                "above a tier",
                t.input,
                t.cached_input,
                t.cache_write,
                t.output,
            ));
        }
        for (at, input, read, write, output) in rates {
            if input <= 0.0 && output <= 0.0 {
                faults.push(format!("{}: every price is zero{at}", c.id));
            }
            if write + 1e-12 < read {
                faults.push(format!(
                    "{}: a cache write ({write}) costs less than a cache read ({read}){at}",
                    c.id
                ));
            }
        }
        if c.context_window < MIN_CONTEXT_WINDOW {
            faults.push(format!(
                "{}: a context window of {} tokens (a chat model has at least {MIN_CONTEXT_WINDOW})",
                c.id, c.context_window
            ));
        }
    }
    match faults.is_empty() {
        true => Ok(cards),
        false => Err(Error::input(format!(
            "the new price table would make cards no one can bill with: {}; the snapshot is left as it was",
            faults.join("; ")
        ))),
    }
}

/// Every price of a card, by name: base rates, each tier's, the long cache write and the window.
pub fn card_figures(c: &PriceCard) -> Vec<(String, f64)> {
    let mut out = vec![
        ("input".to_string(), c.input),
        ("cached_input".to_string(), c.cached_input),
        ("cache_write".to_string(), c.cache_write),
        ("output".to_string(), c.output),
        ("context_window".to_string(), c.context_window as f64),
    ];
    if let Some((ttl, p)) = &c.cache_write_long {
        out.push((format!("cache_write_{ttl}"), *p));
    }
    for t in &c.tiers {
        for (f, v) in [
            ("input", t.input),
            ("cached_input", t.cached_input),
            ("cache_write", t.cache_write),
            ("output", t.output),
        ] {
            out.push((format!("{f}_above_{}", t.above), v));
        }
    }
    out
}

/// Providers whose models are used under a per-seat subscription: the table lists them, but a
/// per-token price means nothing for them.
const SUBSCRIPTIONS: [&str; 2] = ["github_copilot", "chatgpt"];

impl PriceCard {
    /// Every card, parsed once per process (the gateway looks one up per request).
    pub fn all() -> &'static [PriceCard] {
        static CARDS: std::sync::OnceLock<Vec<PriceCard>> = std::sync::OnceLock::new();
        CARDS.get_or_init(|| {
            cards_from(EMBEDDED, litellm::Snapshot::embedded())
                .expect("fixtures/prices.toml and fixtures/litellm-prices.json are valid (tested)")
        })
    }

    /// The card of a model, by the id a provider's API takes (`claude-sonnet-5-5`, `gpt-5.6`,
    /// `claude-opus-4-6-20260205`) or a hand card's name (`claude-sonnet-4.6`): a hand card
    /// first, then any chat model the LiteLLM snapshot prices, with what the table does not
    /// say inherited from the nearest hand card of its provider ([`family::derive`]). A name
    /// neither knows is refused with the closest names.
    pub fn named(id: &str) -> Result<PriceCard> {
        Self::resolved(id).map_err(|why| {
            let shown: String = id.trim().chars().take(100).collect();
            Error::input(match why {
                Some(reason) => format!("model `{shown}`: {reason}"),
                None => format!(
                    "unknown model `{shown}`: no price card or LiteLLM entry prices it (closest: {}; `toolcost prices list` lists them all)",
                    family::closest(id.trim(), litellm::Snapshot::embedded()).join(", ")
                ),
            })
        })
    }

    /// [`PriceCard::named`] without the error: `None` for a model nothing prices. What a name
    /// resolves to is kept (up to a bound): the gateway looks a model up on every request.
    pub fn lookup(id: &str) -> Option<PriceCard> {
        Self::resolved(id).ok()
    }

    /// A model's card, or why there is none (None: nothing knows the name).
    fn resolved(id: &str) -> std::result::Result<PriceCard, Option<String>> {
        let id = id.trim();
        if let Some(c) = Self::all().iter().find(|c| c.id == id) {
            return Ok(c.clone());
        }
        if id.is_empty() || id.len() > 200 {
            return Err(None);
        }
        type Made =
            std::collections::HashMap<String, std::result::Result<PriceCard, Option<String>>>;
        static MADE: std::sync::OnceLock<std::sync::Mutex<Made>> = std::sync::OnceLock::new();
        let made = MADE.get_or_init(Default::default);
        if let Some(c) = crate::sync::lock(made).get(id) {
            return c.clone();
        }
        let card = Self::resolve(id);
        let mut m = crate::sync::lock(made);
        if m.len() >= 1024 {
            m.clear();
        }
        m.insert(id.to_string(), card.clone());
        card
    }

    /// [`PriceCard::lookup`] past a hand card's exact name, in this order: the table's own entry
    /// for the id as given, or for its one spelling that differs only in case
    /// (`GPT-4o-2024-05-13` is `gpt-4o-2024-05-13`, with prices of its own, not `gpt-4o`); a hand
    /// card under another spelling (`claude-sonnet-4-5` for `claude-sonnet-4.5`); and only then
    /// the name without a provider prefix the table knows (`anthropic/claude-sonnet-5-5`) or
    /// without a date, or a card made from the table. A prefix the table does not know
    /// (`evil/gpt-4o`), one of several segments (`azure/westeurope/gpt-4o`: a deployment whose
    /// rates the table does not give) or a subscription's (`github_copilot/`, `chatgpt/`: billed
    /// per seat, not per token) is refused with the reason rather than priced as the bare model.
    fn resolve(id: &str) -> std::result::Result<PriceCard, Option<String>> {
        let snap = litellm::Snapshot::embedded();
        if let Some((provider, _)) = id.split_once('/') {
            if SUBSCRIPTIONS.contains(&provider.to_ascii_lowercase().as_str()) {
                return Err(Some(format!(
                    "`{provider}/` models are used under a subscription billed per seat, not per token; toolcost prices API use: name the provider's API model (the part after `{provider}/`)"
                )));
            }
        }
        let own_key = snap
            .key_for(id)
            .filter(|k| snap.is_chat(k))
            .map(str::to_string);
        if let Some(k) = &own_key {
            // A hand card written for the entry's very id, or over that very entry, is the
            // entry's card.
            if let Some(c) = Self::all().iter().find(|c| c.id == *k) {
                return Ok(c.clone());
            }
            if let Some(c) = Self::all().iter().find(|c| c.litellm.as_deref() == Some(k)) {
                return Ok(c.clone());
            }
            if let Some(c) = family::derive_key(id, k, snap) {
                return Ok(c);
            }
        }
        let norm = |s: &str| s.to_lowercase().replace('.', "-");
        let hand = |key: &str| {
            Self::all()
                .iter()
                .find(|c| {
                    norm(&c.id) == norm(key)
                        || c.litellm.as_deref().is_some_and(|l| norm(l) == norm(key))
                })
                .cloned()
        };
        if let Some(c) = hand(id) {
            return Ok(c);
        }
        let segments: Vec<&str> = id.split('/').collect();
        if segments.len() > 1 {
            let prefix = &segments[..segments.len() - 1];
            if prefix.len() > 1 || !snap.knows_provider(&prefix[0].to_ascii_lowercase()) {
                return Err(Some(format!(
                    "the price table has no entry for it, and `{}/` is not a provider prefix it knows (a deployment or region has rates of its own); name the model as the table does (`toolcost prices list`)",
                    prefix.join("/")
                )));
            }
        }
        if let Some(c) = family::candidates(id).iter().find_map(|k| hand(k)) {
            return Ok(c);
        }
        family::derive(id, snap).ok_or(None)
    }

    /// The rates a request of `input` tokens is billed at.
    pub fn rates(&self, input: u64) -> Rates {
        match self.tiers.iter().rev().find(|t| input > t.above) {
            Some(t) => Rates {
                input: t.input,
                cached_input: t.cached_input,
                cache_write: t.cache_write,
                output: t.output,
                above: Some(t.above),
            },
            None => Rates {
                input: self.input,
                cached_input: self.cached_input,
                cache_write: self.cache_write,
                output: self.output,
                above: None,
            },
        }
    }

    /// `; tier above 272K input tokens` for a cost label, when a request of `input` tokens is
    /// billed at a tier.
    pub fn tier_note(&self, input: u64) -> String {
        match self.rates(input).above {
            Some(a) => format!("; tier above {}K input tokens", a / 1000),
            None => String::new(),
        }
    }

    /// The card's provider, from its render: `anthropic`, `openai`, `gemini`, `vertex`, or an
    /// open-weight family (`kimi`, `qwen`, ...).
    pub fn provider(&self) -> &str {
        let (kind, arg) = self.render.split_once(':').unwrap_or((&self.render, ""));
        match kind {
            "open" => arg.split(['-', '.']).next().unwrap_or(kind),
            _ => kind,
        }
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

    /// Dollars for a usage, at the tier its total input falls in.
    pub fn cost(&self, u: &Usage) -> f64 {
        let r = self.rates(u.total_input());
        (u.uncached_input as f64 * r.input
            + u.cached_input as f64 * r.cached_input
            + u.cache_write as f64 * r.cache_write
            + u.output as f64 * r.output)
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
        // the published measurement: 143,664 cached / 5,523 uncached / 72 output -> $0.02852109.
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
