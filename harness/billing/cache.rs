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
mod tests {
    use super::super::prompt::ToolDigests;
    use super::*;
    use crate::provider::Format;
    use serde_json::json;

    /// A cache never holds more than its bound: expired entries go first; a cache full of live
    /// ones lets go of those that expire soonest and keeps the ones that live longest.
    #[test]
    fn the_cache_is_bounded() {
        let mut c = PromptCache::holding(8);
        let key = |i: u128| (0u128, i);
        let entry = |expires: f64| Entry {
            tokens: 1,
            expires,
            ttl: 300.0,
        };
        for i in 0..100u128 {
            c.keep(key(i), entry(i as f64 + 300.0), i as f64);
            assert!(c.entries.len() <= 8, "{} at {i}", c.entries.len());
        }
        // Every entry live at once: the latest ones are kept.
        let mut c = PromptCache::holding(8);
        for i in 0..100u128 {
            c.keep(key(i), entry(1e9 + i as f64), 0.0);
            assert!(c.entries.len() <= 8);
        }
        assert!(c.entries.contains_key(&key(99)) && c.entries.contains_key(&key(98)));
        assert!(!c.entries.contains_key(&key(0)));
        // Expired ones go before any live one.
        let mut c = PromptCache::holding(4);
        c.keep(key(1), entry(1e9), 0.0);
        for i in 2..5 {
            c.keep(key(i), entry(10.0), 0.0);
        }
        c.keep(key(9), entry(1e9), 20.0);
        assert_eq!(c.entries.len(), 2);
        assert!(c.entries.contains_key(&key(1)) && c.entries.contains_key(&key(9)));
    }

    /// A full cache whose entries share one expiry (one request writes an entry per message
    /// end) frees a quarter of its room at once, so filling it costs one sweep per quarter, not
    /// one per insert.
    #[test]
    fn a_full_cache_frees_a_quarter_at_once() {
        let mut c = PromptCache::holding(400);
        let key = |i: u128| (0u128, i);
        let mut sweeps = 0;
        for i in 0..4_000u128 {
            let before = c.entries.len();
            c.keep(
                key(i),
                Entry {
                    tokens: 1,
                    expires: 1e9,
                    ttl: 300.0,
                },
                0.0,
            );
            if c.entries.len() <= before {
                sweeps += 1;
                assert_eq!(c.entries.len(), 300, "a sweep leaves room for a quarter");
            }
            assert!(c.entries.len() <= 400);
        }
        assert!(sweeps <= 4_000 / 100, "{sweeps} sweeps");
    }

    fn req(messages: Value) -> Request {
        Request::new(
            Format::AnthropicMessages,
            json!({"model": "m", "tools": [{"name": "t", "description": "a tool that does a thing", "input_schema": {"type": "object"}}],
                "system": [{"type": "text", "text": "You are a careful assistant. ".repeat(40), "cache_control": {"type": "ephemeral"}}],
                "messages": messages}),
        )
    }

    /// A key holds no scope text (a client's header of any length costs 32 bytes), and scopes
    /// and models that join to the same bytes still key apart.
    #[test]
    fn keys_hold_no_scope_text() {
        assert_eq!(std::mem::size_of::<Key>(), 32);
        let p = |model: &'static str| Pricing {
            model,
            ..pricing(CacheRule::None, 0)
        };
        let long = "x".repeat(64 * 1024);
        assert_eq!(
            PromptCache::key(&long, &p("m"), 7),
            PromptCache::key(&long, &p("m"), 7)
        );
        assert_ne!(
            PromptCache::key("ab", &p("c"), 7),
            PromptCache::key("a", &p("bc"), 7)
        );
        assert_ne!(
            PromptCache::key("a", &p("m"), 7),
            PromptCache::key("b", &p("m"), 7)
        );
        assert_ne!(
            PromptCache::key("a", &p("m"), 7),
            PromptCache::key("a", &p("m"), 8)
        );
    }

    fn pricing(rule: CacheRule, min: u64) -> Pricing<'static> {
        Pricing {
            rule,
            render: RenderModel::parse("anthropic:claude-4.5").unwrap(),
            tokenizer: Tokenizer::O200k,
            min_cacheable: min,
            model: "m",
        }
    }

    fn first() -> Value {
        json!([{"role": "user", "content": [{"type": "text", "text": "context ".repeat(200)}, {"type": "text", "text": "what time is it", "cache_control": {"type": "ephemeral"}}]}])
    }

    fn second() -> Value {
        json!([{"role": "user", "content": [{"type": "text", "text": "context ".repeat(200)}, {"type": "text", "text": "what time is it"}]},
               {"role": "assistant", "content": [{"type": "tool_use", "id": "1", "name": "t", "input": {}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1", "content": "12:00", "cache_control": {"type": "ephemeral"}}]}])
    }

    /// A prefix's count taken from the whole request's tool side is the count of the request
    /// cut there, tools and all, at every block, with deferred definitions loaded before and
    /// after the cut. (Deferred tools and the Anthropic and Kimi renderings keep the shortcuts
    /// of `tokens_at` out of the way: this is the general path.)
    #[test]
    fn a_prefix_bills_as_the_request_cut_there() {
        let def = |n: &str, defer: bool| {
            let mut d = json!({"name": n, "description": format!("{n} reads the ledger of the day"),
                "input_schema": {"type": "object", "properties": {"q": {"type": "string", "enum": ["a", "b"]}}}});
            if defer {
                d["defer_loading"] = json!(true);
            }
            d
        };
        let reference = |n: &str| {
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1",
                "content": [{"type": "tool_reference", "tool_name": n}]}]})
        };
        let r = Request::new(
            Format::AnthropicMessages,
            json!({"model": "m", "tool_choice": {"type": "any"},
                "tools": [def("a", false), def("b", true), def("c", true), def("d", false)],
                "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind."}],
                "messages": [{"role": "user", "content": [{"type": "text", "text": "find it"}]},
                    reference("b"),
                    // A mid-conversation tool change: a definition by value and a reference.
                    {"role": "system", "content": [{"type": "text", "text": "More tools follow."},
                        {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": def("e", false)}},
                        {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "c"}}]},
                    {"role": "assistant", "content": "ok"},
                    // A call made from running code, and its result: neither is billed.
                    {"role": "assistant", "content": [{"type": "server_tool_use", "id": "s1", "name": "code_execution", "input": {"code": "print(1)"}},
                        {"type": "tool_use", "id": "p1", "name": "a", "input": {"q": "a"}, "caller": {"type": "code_execution_20260120", "tool_id": "s1"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "p1", "content": "a long result ".repeat(20)}]},
                    reference("c")]}),
        );
        for render in ["anthropic:claude-4.6", "kimi", "openai:gpt-4o"] {
            for tokenizer in [Tokenizer::O200k, Tokenizer::Kimi] {
                let render = RenderModel::parse(render).unwrap();
                let p = Pricing {
                    render,
                    tokenizer,
                    ..pricing(CacheRule::Marks, 0)
                };
                let total = billed_input(&r, render, p.tokenizer);
                for b in blocks(&r, &ToolDigests::default()) {
                    let mut cut = truncated(&r, b.at);
                    if !matches!(b.at, Pos::Tool(_)) {
                        *cut.tools_mut() = r.tools().to_vec();
                    }
                    assert_eq!(
                        p.tokens_at(&r, b.at, false, &total),
                        billed_input(&cut, render, p.tokenizer).input_tokens,
                        "{render:?} {tokenizer:?} at {:?}",
                        b.at
                    );
                }
            }
        }
    }

    #[test]
    fn automatic_caching_reads_the_previous_request_whatever_its_marks() {
        let p = pricing(
            CacheRule::Automatic {
                step: 1,
                ttl: 300,
                writes: false,
            },
            0,
        );
        let mut c = PromptCache::default();
        let a = c.bill(&req(first()), &p, "s", 0.0, true).unwrap();
        assert_eq!(a.cached_input, 0);
        let b = c.bill(&req(second()), &p, "s", 10.0, true).unwrap();
        assert_eq!(b.cached_input, a.total_input(), "{a:?} {b:?}");
    }

    #[test]
    fn marks_write_then_read_and_nothing_without_marks() {
        let p = pricing(CacheRule::Marks, 100);
        let mut c = PromptCache::default();
        let a = c.bill(&req(first()), &p, "s", 0.0, true).unwrap();
        assert_eq!(
            (a.cached_input, a.cache_write),
            (0, a.total_input()),
            "the newest-message mark writes the whole prompt"
        );
        let b = c.bill(&req(second()), &p, "s", 10.0, true).unwrap();
        assert_eq!(b.cached_input, a.total_input(), "{b:?}");
        assert_eq!(b.uncached_input, 0, "{b:?}");
        // Without any mark nothing is read or written.
        let mut bare = req(first());
        bare.body["system"][0]
            .as_object_mut()
            .unwrap()
            .remove("cache_control");
        bare.body["messages"][0]["content"][1]
            .as_object_mut()
            .unwrap()
            .remove("cache_control");
        let mut c = PromptCache::default();
        for t in [0.0, 1.0] {
            let u = c.bill(&bare, &p, "s", t, true).unwrap();
            assert_eq!((u.cached_input, u.cache_write), (0, 0));
        }
        // Expired entries are not read; count-only billing changes nothing.
        let mut c = PromptCache::default();
        c.bill(&req(first()), &p, "s", 0.0, false).unwrap();
        let u = c.bill(&req(first()), &p, "s", 1.0, true).unwrap();
        assert_eq!(u.cached_input, 0, "count_tokens must not warm the cache");
        let late = c
            .bill(&req(first()), &p, "s", 1.0 + TTL_5M + 1.0, true)
            .unwrap();
        assert_eq!(late.cached_input, 0, "expired");
    }

    #[test]
    fn below_the_minimum_nothing_is_cached() {
        let p = pricing(CacheRule::Marks, 1_000_000);
        let mut c = PromptCache::default();
        c.bill(&req(first()), &p, "s", 0.0, true).unwrap();
        let u = c.bill(&req(first()), &p, "s", 1.0, true).unwrap();
        assert_eq!((u.cached_input, u.cache_write), (0, 0));
    }
}
