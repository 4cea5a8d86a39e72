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
