//! Today's models priced the way their providers bill them: any model the LiteLLM snapshot
//! prices, its long-context tiers, paid OpenAI cache writes through the mock and the official
//! SDK, the closest names for an unknown model, and OpenAI's own recorded token counts.

mod common;

use serde_json::{json, Value};
use std::process::Command;
use toolcost::billing::{billed_input, RenderModel};
use toolcost::gateway::Upstream;
use toolcost::pricing::{PriceCard, Usage};
use toolcost::tokens::Tokenizer;
use toolcost::wire::{Format, Request};

fn toolcost() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolcost"))
}

/// The committed snapshot's raw entry, per-token prices as LiteLLM writes them.
fn raw(key: &str) -> Value {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let all: Value =
        serde_json::from_slice(&std::fs::read(root.join("fixtures/litellm-prices.json")).unwrap())
            .unwrap();
    all[key].clone()
}

fn per_million(v: &Value) -> f64 {
    v.as_f64().unwrap() * 1e6
}

/// Today's models measure, and a cold turn costs its tokens at the snapshot's prices.
#[test]
fn todays_models_are_priced_from_the_snapshot() {
    for m in [
        "claude-sonnet-5-5",
        "claude-opus-5-5",
        "claude-fable-5-1",
        "gpt-5.5",
        "gpt-5.6",
    ] {
        let out = toolcost()
            .args([
                "measure",
                "--rows",
                "20",
                "--surface",
                "protocol-only",
                "--json",
                "--model",
                m,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{m}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        assert!(!rows.is_empty());
        let card = PriceCard::named(m).unwrap();
        let e = raw(m);
        assert!(
            (card.input - per_million(&e["input_cost_per_token"])).abs() < 1e-9,
            "{m}"
        );
        assert!((card.output - per_million(&e["output_cost_per_token"])).abs() < 1e-9);
        let read = per_million(&e["cache_read_input_token_cost"]);
        assert!((card.cached_input - read).abs() < 1e-9, "{m}");
        let cold = Usage {
            uncached_input: 12_345,
            output: 67,
            ..Usage::default()
        };
        let want = (12_345.0 * per_million(&e["input_cost_per_token"])
            + 67.0 * per_million(&e["output_cost_per_token"]))
            / 1e6;
        assert!((card.cost(&cold) - want).abs() < 1e-12, "{m}");
        assert!(
            card.assumed.iter().any(|a| a.contains("as ")),
            "{m}: {:?}",
            card.assumed
        );
    }
    // Cache reads at the provider's own ratio, not 0.1x everywhere.
    let ratio = |m: &str| {
        let c = PriceCard::named(m).unwrap();
        c.cached_input / c.input
    };
    assert!((ratio("claude-sonnet-5-5") - 0.05).abs() < 1e-9);
    assert!((ratio("claude-opus-5-5") - 0.05).abs() < 1e-9);
    assert!((ratio("claude-fable-5-1") - 0.025).abs() < 1e-9);
    // Ids as the APIs take them, dated or with a provider prefix, resolve to their entry.
    assert_eq!(
        PriceCard::named("claude-opus-4-6-20260205")
            .unwrap()
            .litellm
            .as_deref(),
        Some("claude-opus-4-6-20260205")
    );
    assert!(PriceCard::named("anthropic/claude-sonnet-5-5").is_ok());
    // Each generation counts with its tokenizer family: v3 to 4.6, v4.7, v5 from 4.8.
    for (model, family) in [
        ("claude-opus-4-6", "claude-v3"),
        ("claude-haiku-4-5", "claude-v3"),
        ("claude-opus-4-7", "claude-v4.7"),
        ("claude-sonnet-5-5", "claude-v5"),
        ("claude-opus-5", "claude-v5"),
    ] {
        assert_eq!(
            PriceCard::named(model).unwrap().tokenizer,
            family,
            "{model}"
        );
    }
    // An id the table prices itself keeps its own prices, though it contains a card's name.
    let dated = PriceCard::named("gpt-4o-2024-05-13").unwrap();
    assert!(
        (dated.input - per_million(&raw("gpt-4o-2024-05-13")["input_cost_per_token"])).abs() < 1e-9
    );
    assert_ne!(dated.input, PriceCard::named("gpt-4o").unwrap().input);
    // A deployment path is priced at its own entry, not the first-party one.
    let azure = PriceCard::named("azure/eu/gpt-4o").unwrap();
    assert!(
        (azure.input - per_million(&raw("azure/eu/gpt-4o")["input_cost_per_token"])).abs() < 1e-9
    );
    assert_eq!(azure.inherits.as_deref(), Some("gpt-4o"));
    // gpt-4 and gpt-3.5 count with cl100k, as their generation does.
    assert_eq!(PriceCard::named("gpt-4-turbo").unwrap().tokenizer, "cl100k");
    // The card names stay aliases.
    assert_eq!(
        PriceCard::named("claude-sonnet-4.6").unwrap().id,
        "claude-sonnet-4.6"
    );
}

/// Past a long-context threshold the whole request is billed at the tier's rates; at the
/// threshold, at the base rates.
#[test]
fn long_context_tiers_bill_the_whole_request() {
    for (m, above, field) in [
        (
            "gpt-5.6",
            272_000u64,
            "input_cost_per_token_above_272k_tokens",
        ),
        ("gpt-5.5", 272_000, "input_cost_per_token_above_272k_tokens"),
        (
            "claude-haiku-5-5",
            100_000,
            "input_cost_per_token_above_100k_tokens",
        ),
    ] {
        let card = PriceCard::named(m).unwrap();
        let e = raw(m);
        let at = |n: u64| {
            card.cost(&Usage {
                uncached_input: n,
                ..Usage::default()
            })
        };
        let base = per_million(&e["input_cost_per_token"]);
        let tier = per_million(&e[field]);
        assert!((at(above) - above as f64 * base / 1e6).abs() < 1e-12, "{m}");
        assert!(
            (at(above + 1) - (above + 1) as f64 * tier / 1e6).abs() < 1e-12,
            "{m}"
        );
        assert!(tier > base);
        assert!(card.tier_note(above + 1).contains("tier above"), "{m}");
        assert!(card.tier_note(above).is_empty());
    }
}

/// An unknown model is one line naming the closest known ones.
#[test]
fn an_unknown_model_names_the_closest() {
    let out = toolcost()
        .args(["measure", "--rows", "5", "--model", "claude-sonet-5-5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("closest") && err.contains("claude-sonnet-5-5"),
        "{err}"
    );
    let long = "x".repeat(5000);
    let e = PriceCard::named(&long).unwrap_err().to_string();
    assert!(e.len() < 1000, "the error does not echo a huge name");
}

/// `prices show` prints every tier and what the card inherits; `prices list` filters by
/// provider.
#[test]
fn prices_show_and_list() {
    let out = toolcost()
        .args(["prices", "show", "gpt-5.6"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("above 272000 input tokens"), "{text}");
    assert!(text.contains("inherits from the gpt-5.4 card"), "{text}");
    assert!(text.contains("cache write held 12h"), "{text}");
    let out = toolcost()
        .args(["prices", "list", "--provider", "anthropic", "--json"])
        .output()
        .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        rows.iter()
            .any(|r| r["model"] == "claude-sonnet-5-5" && r["provider"] == "anthropic"),
        "{rows:?}"
    );
    assert!(
        rows.iter().all(|r| r["provider"] == "anthropic"),
        "{rows:?}"
    );
}

/// gpt-5.6's first request with a cacheable prefix pays the write price, its repeat the read
/// price, through the mock gateway with the official openai SDK; each log row's cost is the
/// card's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpt_5_6_pays_for_cache_writes_through_the_sdk() {
    if !common::python_sdks("openai") {
        return;
    }
    let gw = common::start_gateway(Upstream::Mock, |_| {}).await;
    let v = common::python_peer("sdk_cache_writes.py", &gw.base).await;
    let (first, again) = (&v[0], &v[1]);
    let n = |r: &Value, k: &str| r[k].as_u64().unwrap();
    assert!(n(first, "written") > 1024, "{v}");
    assert_eq!(n(first, "cached"), 0, "{v}");
    assert!(n(again, "cached") > 1024, "{v}");
    assert!(n(again, "written") < n(first, "written"), "{v}");
    let card = PriceCard::named("gpt-5.6").unwrap();
    let rows = toolcost::gateway::log::read_all(&gw.log).unwrap();
    assert_eq!(rows.len(), 2);
    for (row, r) in rows.iter().zip([first, again]) {
        let u = Usage {
            uncached_input: n(r, "input") - n(r, "cached") - n(r, "written"),
            cached_input: n(r, "cached"),
            cache_write: n(r, "written"),
            output: n(r, "output"),
        };
        assert!((row.cost_usd - card.cost(&u)).abs() < 1e-12, "{row:?}");
    }
    assert!(card.cache_write > card.input);
}

/// OpenAI's recorded counts (the cookbook "How to count tokens with tiktoken", figures from the
/// API): the get_current_weather tools with a system and a user message bill 101 prompt tokens
/// on gpt-4o and 105 on gpt-4; a lone "Once upon a time," 12 on gpt-4o-mini.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_recorded_counts_hold_exactly() {
    let tools = json!([{"type": "function", "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {"type": "object", "properties": {
            "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
            "unit": {"type": "string", "description": "The unit of temperature to return", "enum": ["celsius", "fahrenheit"]}},
            "required": ["location"]}}}]);
    let messages = json!([
        {"role": "system", "content": "You are a helpful assistant that can answer to questions about the weather."},
        {"role": "user", "content": "What's the weather like in San Francisco?"}]);
    let req = |model: &str, with_tools: bool, messages: &Value| {
        let mut body = json!({"model": model, "messages": messages});
        if with_tools {
            body["tools"] = tools.clone();
        }
        Request::new(Format::OpenaiChat, body)
    };
    let gpt4 = RenderModel::parse("openai:gpt-4").unwrap();
    assert_eq!(
        billed_input(&req("gpt-4", true, &messages), gpt4, Tokenizer::Cl100k).input_tokens,
        105
    );
    // Through the mock gateway, as a client would see it.
    let gw = common::start_gateway(Upstream::Mock, |_| {}).await;
    let http = reqwest::Client::new();
    let prompt = |body: Value| {
        let http = http.clone();
        let url = format!("{}/v1/chat/completions", gw.base);
        async move {
            let r = http.post(url).body(body.to_string()).send().await.unwrap();
            let v: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
            v["usage"]["prompt_tokens"].as_u64().unwrap()
        }
    };
    assert_eq!(
        prompt(req("gpt-4o", true, &messages).body_value().into_owned()).await,
        101
    );
    let once = json!([{"role": "user", "content": "Once upon a time,"}]);
    assert_eq!(
        prompt(req("gpt-4o-mini", false, &once).body_value().into_owned()).await,
        12
    );
}

/// A model id that differs from a table key only in case is priced as that key, not as a
/// cheaper entry its undated or lower-cased form also names: for every chat entry of the table,
/// its upper-case spelling resolves to the same prices as the key itself.
#[test]
fn case_variants_price_their_own_entry() {
    let dated = PriceCard::named("GPT-4o-2024-05-13").unwrap();
    assert_eq!(dated.litellm.as_deref(), Some("gpt-4o-2024-05-13"));
    let own = PriceCard::named("gpt-4o-2024-05-13").unwrap();
    assert_eq!((dated.input, dated.output), (own.input, own.output));
    let table: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/litellm-prices.json")).unwrap();
    let mut checked = 0;
    for key in table.as_object().unwrap().keys() {
        let Some(plain) = PriceCard::lookup(key) else {
            continue;
        };
        let upper = key.to_uppercase();
        if upper == *key {
            continue;
        }
        let shouted = PriceCard::lookup(&upper).unwrap_or_else(|| panic!("{upper} is not priced"));
        assert_eq!(
            (shouted.input, shouted.cached_input, shouted.output),
            (plain.input, plain.cached_input, plain.output),
            "{upper} against {key}"
        );
        checked += 1;
    }
    assert!(checked > 500, "{checked}");
}

/// Prefixes that change what a model costs are refused with the reason, not dropped: a
/// subscription's (per seat, not per token), one the table does not know, and a deployment
/// path of several segments; a provider prefix the table knows still names the model.
#[test]
fn prefixes_that_change_the_price_are_refused() {
    for (id, says) in [
        ("github_copilot/claude-opus-5", "subscription"),
        ("chatgpt/gpt-5.4", "subscription"),
        ("evil/gpt-4o", "not a provider prefix"),
        ("azure/westeurope/gpt-4o", "not a provider prefix"),
    ] {
        let err = PriceCard::named(id).unwrap_err().to_string();
        assert!(err.contains(says), "{id}: {err}");
        assert!(PriceCard::lookup(id).is_none(), "{id}");
    }
    assert!(PriceCard::named("anthropic/claude-sonnet-5-5").is_ok());
    assert!(PriceCard::named("openai/gpt-5.6").is_ok());
}

/// Gemini cards come from the table by API id, with and without the `gemini/` prefix: the hand
/// cards' prices are the Developer API entry's, a model no hand card names gets a card made from
/// its own entry with the Flash or Pro card's rules, the Pro tier above 200K input tokens bills
/// the whole request, and cache reads have their own price.
#[test]
fn gemini_cards_by_api_id_with_tiers_and_cache_reads() {
    for (id, key) in [
        ("gemini-3.5-flash", "gemini/gemini-3.5-flash"),
        ("gemini/gemini-3.5-flash", "gemini/gemini-3.5-flash"),
        ("gemini-3.1-pro-preview", "gemini/gemini-3.1-pro-preview"),
        (
            "gemini/gemini-3.1-pro-preview",
            "gemini/gemini-3.1-pro-preview",
        ),
        ("gemini-3.6-flash", "gemini-3.6-flash"),
        (
            "gemini/gemini-3.1-flash-lite",
            "gemini/gemini-3.1-flash-lite",
        ),
    ] {
        let card = PriceCard::named(id).unwrap();
        let e = raw(key);
        // Each renders by its own generation's rules, on the Developer API.
        assert!(
            card.render.starts_with("gemini:gemini-3"),
            "{id}: {}",
            card.render
        );
        assert_eq!(card.tokenizer, "gemma3", "{id}");
        assert!(
            (card.input - per_million(&e["input_cost_per_token"])).abs() < 1e-9,
            "{id}"
        );
        assert!(
            (card.output - per_million(&e["output_cost_per_token"])).abs() < 1e-9,
            "{id}"
        );
        assert!(
            (card.cached_input - per_million(&e["cache_read_input_token_cost"])).abs() < 1e-9,
            "{id}"
        );
        assert!(card.cached_input < card.input, "{id}");
    }
    assert_eq!(
        PriceCard::named("gemini-3.6-flash")
            .unwrap()
            .inherits
            .as_deref(),
        Some("gemini-3.5-flash")
    );
    let pro = PriceCard::named("gemini-3.1-pro-preview").unwrap();
    let e = raw("gemini/gemini-3.1-pro-preview");
    let tier = per_million(&e["input_cost_per_token_above_200k_tokens"]);
    let at = |n: u64| {
        pro.cost(&Usage {
            uncached_input: n,
            ..Usage::default()
        })
    };
    assert!((at(200_000) - 200_000.0 * pro.input / 1e6).abs() < 1e-12);
    assert!((at(200_001) - 200_001.0 * tier / 1e6).abs() < 1e-12);
    assert!(tier > pro.input);
}
