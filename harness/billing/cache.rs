//! Prompt caching as each provider bills it (the providers' documentation).
//!
//! - [`CacheRule::Marks`] (Anthropic): nothing is read or written unless the request asks for
//!   it with `cache_control` on a block (tools, system, message content; at most four) or the
//!   top-level `cache_control` (automatic caching: the breakpoint goes on the last block). Each
//!   breakpoint whose prefix reaches the model's minimum writes an entry that lives for its TTL
//!   (`5m`, refreshed on every read, or `1h`). A hit is looked for at each breakpoint and up to
//!   20 blocks before it; the longest hit is read at the read price, the prefix from there to the
//!   last breakpoint is written at the write price, and only what follows the last breakpoint is
//!   billed as plain input.
//! - [`CacheRule::Automatic`] (OpenAI; Kimi by assumption): every request of at least the
//!   minimum is cached; a later request reads the longest prefix it shares with an earlier one,
//!   at message granularity, rounded down to the rule's step (128 tokens for OpenAI). Nothing
//!   is charged for writing, except under a rule `with writes` (gpt-5.6 and later): there the
//!   part of a prompt of at least the minimum that was not read is written, at the card's
//!   cache-write price (one implicit breakpoint at the end of the prompt).
//! - [`CacheRule::None`]: no caching.
//!
//! Time is whatever the caller says it is (seconds), so the driver can run on a virtual clock
//! and stay deterministic. Entries are kept per scope (an API key's organisation, or one task).

use super::prompt::{blocks, truncated, ttl_of, Digest, Pos};
use super::{billed_input, billed_with, RenderModel};
use crate::provider::Usage;
use crate::tokens::Tokenizer;
use crate::wire::Request;
use serde_json::Value;
use std::collections::HashMap;

/// Blocks before a breakpoint where a hit is still looked for (Anthropic's lookback).
pub const LOOKBACK_BLOCKS: usize = 20;
/// The most `cache_control` marks one Anthropic request may carry.
pub const MAX_BREAKPOINTS: usize = 4;
/// Anthropic's default TTL and its long one, in seconds.
pub const TTL_5M: f64 = 300.0;
pub const TTL_1H: f64 = 3600.0;

/// How a provider caches prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheRule {
    /// Only at `cache_control` marks.
    Marks,
    /// Automatically, in steps of `step` tokens, entries living `ttl` seconds; `writes`: the
    /// provider bills what it writes.
    Automatic {
        step: u64,
        ttl: u64,
        writes: bool,
    },
    None,
}

impl CacheRule {
    /// Parse a card's `cache` field: `marks`, `automatic:<step>:<ttl seconds>[:writes]` or
    /// `none`.
    pub fn parse(spec: &str) -> Option<CacheRule> {
        let mut parts = spec.split(':');
        match parts.next()? {
            "marks" => Some(CacheRule::Marks),
            "none" => Some(CacheRule::None),
            "automatic" => {
                let step = parts.next()?.parse().ok()?;
                let ttl = parts.next()?.parse().ok()?;
                let writes = match parts.next() {
                    None => false,
                    Some("writes") => true,
                    Some(_) => return None,
                };
                (step > 0 && parts.next().is_none()).then_some(CacheRule::Automatic {
                    step,
                    ttl,
                    writes,
                })
            }
            _ => None,
        }
    }
}

/// What a request reads and writes, and why a request is refused.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheError {
    TooManyBreakpoints(usize),
    /// A longer TTL after a shorter one.
    TtlOrder,
}

impl std::fmt::Display for CacheError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheError::TooManyBreakpoints(n) => write!(
                f,
                "A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {n}."
            ),
            CacheError::TtlOrder => f.write_str(
                "a cache_control breakpoint with ttl 1h must not come after one with ttl 5m",
            ),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    tokens: u64,
    expires: f64,
    ttl: f64,
}

/// The cache of one provider: entries per (scope, model, prefix), at most [`MAX_ENTRIES`]
/// of them, so a gateway that runs for weeks holds a bounded cache ([`PromptCache::keep`]).
#[derive(Debug)]
pub struct PromptCache {
    entries: HashMap<Key, Entry>,
    most: usize,
}

impl Default for PromptCache {
    fn default() -> PromptCache {
        PromptCache::holding(MAX_ENTRIES)
    }
}

/// An entry's key: the 128-bit hash of its scope and model (under the process's seed, so the
/// header a client sends cannot be written to share another scope's key), and the prefix's own
/// digest. The scope is a request header any client chooses: it is never kept, so 40,000
/// distinct scopes of 8 KB cost what 40,000 short ones do.
type Key = (u128, Digest);

/// Entries a cache holds at most (an assumed bound: 48 bytes of key and value each, about 17 MB
/// in all with the table's slack, whatever the scopes' lengths; a provider's own
/// cache is far larger, but a prefix lives five minutes or an hour, and a measurement's
/// traffic reuses few of them).
pub const MAX_ENTRIES: usize = 1 << 18;

/// What one request is billed for on its input side.
pub struct Pricing<'a> {
    pub rule: CacheRule,
    pub render: RenderModel,
    pub tokenizer: Tokenizer,
    pub min_cacheable: u64,
    /// The model the cache is kept for.
    pub model: &'a str,
}

impl Pricing<'_> {
    /// Tokens of the prefix that ends at `at`, without counting the whole prefix again where
    /// the request's own count already holds it: the whole request, everything up to the end
    /// of the system prompt (Anthropic order), or whole messages off the end (no tool
    /// references among them, so nothing expands there). Otherwise the request cut there,
    /// billed: a cut in the system prompt or the conversation keeps every tool and the
    /// `tool_choice`, so its definitions bill as in the whole request (`total`), loaded where
    /// the kept messages load them; only a cut among the tools counts definitions again.
    fn tokens_at(&self, req: &Request, at: Pos, last: bool, total: &super::Billing) -> u64 {
        if last {
            return total.input_tokens;
        }
        let messages = req.messages();
        let system_blocks = match req
            .body
            .get("system")
            .or_else(|| req.body.get("instructions"))
        {
            Some(Value::Array(b)) => b.len(),
            Some(_) => 1,
            None => 0,
        };
        match at {
            // (A chat template frames the conversation and ends with a generation prompt:
            // its prefix is the request cut there, billed.)
            Pos::System(i)
                if i + 1 == system_blocks
                    && total.tools_deferred == 0
                    && !matches!(self.render, RenderModel::Open(_)) =>
            {
                return total.input_tokens - total.message_tokens
            }
            Pos::Message(m, b)
                if matches!(self.render, RenderModel::Openai { .. })
                    && messages.get(m).is_some_and(|msg| {
                        !msg["content"].is_array()
                            || msg["content"].as_array().is_some_and(|c| c.len() == b + 1)
                    })
                    // Later items that load definitions, and calls made from code (whose
                    // results are not billed), are billed by the full walk.
                    && !messages[m + 1..]
                        .iter()
                        .any(super::render::loads_definitions)
                    && !messages.iter().any(|x| {
                        x["content"]
                            .as_array()
                            .is_some_and(|c| c.iter().any(crate::wire::called_from_code))
                    }) =>
            {
                // System messages are billed in place beside a top-level system prompt, as
                // `billed_with` bills them.
                let in_place = system_blocks > 0
                    || req.body.get("system").is_some()
                    || req.body.get("instructions").is_some();
                let later: f64 = messages[m + 1..]
                    .iter()
                    .filter(|x| in_place || x["role"] != "system")
                    .map(|x| {
                        // The framing `billed_with` gives each message: 3 and its role.
                        3.0 + self.tokenizer.count(x["role"].as_str().unwrap_or(""))
                            + self.tokenizer.count(&super::render::message_text(x))
                    })
                    .sum();
                return total.input_tokens.saturating_sub(later.round() as u64);
            }
            Pos::Tool(_) | Pos::System(_) | Pos::Message(..) => {}
        }
        let mut cut = truncated(req, at);
        // A template renders the tools it is given: a cut after them keeps them all.
        if matches!(self.render, RenderModel::Open(_)) && !matches!(at, Pos::Tool(_)) {
            *cut.tools_mut() = req.tools().to_vec();
        }
        match at {
            Pos::Tool(_) => billed_input(&cut, self.render, self.tokenizer).input_tokens,
            Pos::System(_) | Pos::Message(..) => {
                let tools = total.tools.clone().expanding(
                    req.tools(),
                    cut.messages(),
                    self.render,
                    self.tokenizer,
                );
                billed_with(&cut, self.render, self.tokenizer, &tools).input_tokens
            }
        }
    }
}

impl PromptCache {
    /// An empty cache of at most `most` entries.
    pub fn holding(most: usize) -> PromptCache {
        PromptCache {
            entries: HashMap::new(),
            most: most.max(1),
        }
    }

    /// Keep `entry` under `key`. A full cache first lets go of what has expired by `now`, then,
    /// if it is still full, of the quarter of its entries that would expire soonest (what the
    /// provider would lose first), so each insert costs its share of one sweep.
    fn keep(&mut self, key: Key, entry: Entry, now: f64) {
        if self.entries.len() >= self.most && !self.entries.contains_key(&key) {
            self.entries.retain(|_, e| e.expires > now);
            if self.entries.len() >= self.most {
                // Evict down to three quarters of the bound, soonest to expire first, so that a
                // full cache sweeps once per quarter of its size, not once per insert (many
                // entries share one expiry: a request writes one per message end).
                let mut expiries: Vec<f64> = self.entries.values().map(|e| e.expires).collect();
                let cut = (self.most / 4).max(1).min(expiries.len() - 1);
                let (_, at, _) = expiries.select_nth_unstable_by(cut, f64::total_cmp);
                let at = *at;
                let target = self.most - cut;
                let need = self.entries.len() + 1 - target.min(self.entries.len());
                let before = self.entries.values().filter(|e| e.expires < at).count();
                let mut at_cut = need.saturating_sub(before);
                // Entries that expire before the cut go, and at the cut as many as still must.
                self.entries.retain(|_, e| match e.expires.total_cmp(&at) {
                    std::cmp::Ordering::Less => false,
                    std::cmp::Ordering::Equal if at_cut > 0 => {
                        at_cut -= 1;
                        false
                    }
                    _ => true,
                });
            }
        }
        self.entries.insert(key, entry);
    }

    /// Bill the input side of a request at time `now` (seconds) in `scope`. With `commit`
    /// false (count_tokens) nothing is read into or written to the cache.
    pub fn bill(
        &mut self,
        req: &Request,
        p: &Pricing,
        scope: &str,
        now: f64,
        commit: bool,
    ) -> Result<Usage, CacheError> {
        let full = billed_input(req, p.render, p.tokenizer);
        self.bill_billed(req, p, scope, now, commit, &full)
    }

    /// [`PromptCache::bill`] for a request whose [`billed_input`] under `p` the caller already
    /// holds (`full`), so it is not counted again.
    pub fn bill_billed(
        &mut self,
        req: &Request,
        p: &Pricing,
        scope: &str,
        now: f64,
        commit: bool,
        full: &super::Billing,
    ) -> Result<Usage, CacheError> {
        let total = full.input_tokens;
        let none = Usage {
            uncached_input: total,
            ..Usage::default()
        };
        match p.rule {
            CacheRule::None => Ok(none),
            CacheRule::Marks => self.bill_marks(req, p, scope, now, commit, full),
            CacheRule::Automatic { step, ttl, writes } => Ok(self.bill_automatic(
                req,
                p,
                scope,
                now,
                commit,
                full,
                (step, ttl as f64, writes),
            )),
        }
    }

    fn key(scope: &str, p: &Pricing, h: Digest) -> Key {
        let mut owner = xxhash_rust::xxh3::Xxh3::with_seed(super::process_seed());
        // The lengths first, so no two (scope, model) pairs write the same bytes.
        owner.update(&(scope.len() as u64).to_le_bytes());
        owner.update(scope.as_bytes());
        owner.update(p.model.as_bytes());
        (owner.digest128(), h)
    }

    fn live(&self, scope: &str, p: &Pricing, h: Digest, now: f64) -> Option<Entry> {
        self.entries
            .get(&Self::key(scope, p, h))
            .copied()
            .filter(|e| e.expires > now)
    }

    fn bill_marks(
        &mut self,
        req: &Request,
        p: &Pricing,
        scope: &str,
        now: f64,
        commit: bool,
        full: &super::Billing,
    ) -> Result<Usage, CacheError> {
        let total = full.input_tokens;
        let mut bl = blocks(req, &full.tools.digests);
        if req.body.get("cache_control").is_some() {
            // Automatic caching: the breakpoint sits on the last block.
            if let Some(last) = bl.last_mut() {
                last.mark = last.mark.or(ttl_of(&req.body));
            }
        }
        let marks: Vec<usize> = (0..bl.len()).filter(|&i| bl[i].mark.is_some()).collect();
        if marks.len() > MAX_BREAKPOINTS {
            return Err(CacheError::TooManyBreakpoints(marks.len()));
        }
        if marks.windows(2).any(|w| bl[w[0]].mark < bl[w[1]].mark) {
            return Err(CacheError::TtlOrder);
        }
        if marks.is_empty() {
            return Ok(Usage {
                uncached_input: total,
                ..Usage::default()
            });
        }
        // The longest live prefix at a breakpoint or up to 20 blocks before one.
        let mut read: Option<(usize, Entry)> = None;
        for &m in &marks {
            for i in (m.saturating_sub(LOOKBACK_BLOCKS)..=m).rev() {
                if let Some(e) = self.live(scope, p, bl[i].hash, now) {
                    if read.is_none_or(|(r, _)| i > r) {
                        read = Some((i, e));
                    }
                    break;
                }
            }
        }
        let cached = read.map_or(0, |(_, e)| e.tokens.min(total));
        let mut written_to = cached;
        let mut writes = Vec::new();
        for &m in marks.iter().filter(|&&m| read.is_none_or(|(r, _)| m > r)) {
            let tokens = p
                .tokens_at(req, bl[m].at, m + 1 == bl.len(), full)
                .min(total);
            if tokens >= p.min_cacheable.max(1) {
                writes.push((m, tokens));
                written_to = written_to.max(tokens);
            }
        }
        if commit {
            if let Some((i, e)) = read {
                self.keep(
                    Self::key(scope, p, bl[i].hash),
                    Entry {
                        expires: now + e.ttl,
                        ..e
                    },
                    now,
                );
            }
            for (m, tokens) in writes {
                let ttl = bl[m].mark.unwrap_or(TTL_5M);
                self.keep(
                    Self::key(scope, p, bl[m].hash),
                    Entry {
                        tokens,
                        expires: now + ttl,
                        ttl,
                    },
                    now,
                );
            }
        }
        let written = written_to - cached;
        Ok(Usage {
            uncached_input: total - cached - written,
            cached_input: cached,
            cache_write: written,
            output: 0,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn bill_automatic(
        &mut self,
        req: &Request,
        p: &Pricing,
        scope: &str,
        now: f64,
        commit: bool,
        full: &super::Billing,
        (step, ttl, writes): (u64, f64, bool),
    ) -> Usage {
        let total = full.input_tokens;
        // Prefixes at message granularity: tools and system first, then each whole message.
        let bl = blocks(req, &full.tools.digests);
        let mut ends: Vec<usize> = Vec::new();
        for (i, b) in bl.iter().enumerate() {
            let next_is_new_message = match (b.at, bl.get(i + 1).map(|n| n.at)) {
                (Pos::Message(m, _), Some(Pos::Message(n, _))) => m != n,
                (Pos::Message(..), None) => true,
                (Pos::Tool(_) | Pos::System(_), Some(Pos::Message(..)) | None) => true,
                (Pos::Tool(_) | Pos::System(_), Some(Pos::Tool(_) | Pos::System(_))) => false,
                (Pos::Message(..), Some(Pos::Tool(_) | Pos::System(_))) => true,
            };
            if next_is_new_message {
                ends.push(i);
            }
        }
        let hit = ends
            .iter()
            .rev()
            .find_map(|&i| self.live(scope, p, bl[i].hash, now).map(|e| (i, e)));
        // The prefix's tokens are counted when it is read: the same text in this request.
        let prefix = hit.map(|(i, _)| {
            p.tokens_at(req, bl[i].at, i + 1 == bl.len(), full)
                .min(total)
        });
        let cached = match prefix {
            Some(t) if total >= p.min_cacheable && t >= p.min_cacheable => (t / step) * step,
            _ => 0,
        };
        if commit && total >= p.min_cacheable {
            for &i in &ends {
                self.keep(
                    Self::key(scope, p, bl[i].hash),
                    Entry {
                        tokens: 0,
                        expires: now + ttl,
                        ttl,
                    },
                    now,
                );
            }
        }
        let written = match writes && total >= p.min_cacheable {
            true => total - cached,
            false => 0,
        };
        Usage {
            uncached_input: total - cached - written,
            cached_input: cached,
            cache_write: written,
            output: 0,
        }
    }
}

#[cfg(test)]
mod tests;
