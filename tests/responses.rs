//! The OpenAI Responses API as a provider format: the gateway's mock answers `/v1/responses`
//! whole and streamed, its usage is the log row's, deferred functions are billed (beyond name
//! and description) only when a tool search loads them, namespaces show only their own name and
//! description, the official openai SDK parses every answer, and `measure` runs every surface
//! for the `openai-responses-agent` client.

mod common;

use serde_json::{json, Value};
use std::time::Duration;
use toolcost::billing::billed_input;
use toolcost::client::Client;
use toolcost::gateway::{log, Upstream};
use toolcost::pricing::PriceCard;
use toolcost::surface::{Context, SurfaceKind, DEFAULT_ENDPOINT};
use toolcost::wire::{Format, Request, ToolEntry};

const CLIENT: &str = "openai-responses-agent";

struct Gw {
    base: String,
    log: std::path::PathBuf,
    _gw: common::TestGateway,
    http: reqwest::Client,
}

async fn start() -> Gw {
    let g = common::start_gateway(Upstream::Mock, |o| o.timeout = Duration::from_secs(5)).await;
    Gw {
        base: g.base.clone(),
        log: g.log.clone(),
        _gw: g,
        http: reqwest::Client::new(),
    }
}

impl Gw {
    async fn post(&self, body: &str, next: Option<&str>) -> (u16, String) {
        let mut rb = self
            .http
            .post(format!("{}/v1/responses", self.base))
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(n) = next {
            rb = rb.header("x-toolcost-next", n);
        }
        let r = rb.send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }
    fn rows(&self) -> Vec<log::LogRow> {
        log::read_all(&self.log).unwrap()
    }
}

fn build(surface: &str, n: usize) -> Request {
    let cat = common::seed_catalogue(n);
    let client = Client::named(CLIENT).unwrap();
    SurfaceKind::parse(surface)
        .unwrap()
        .build(&Context {
            catalogue: &cat,
            client: &client,
            turn: "what time is it",
            endpoint: DEFAULT_ENDPOINT,
        })
        .request
}

fn billed(req: &Request) -> toolcost::billing::Billing {
    let card = PriceCard::named("gpt-5.4").unwrap();
    billed_input(req, card.render_model(), card.tokenizer())
}

#[test]
fn the_client_builds_responses_bodies() {
    let req = build("per-row-mcp", 5);
    assert_eq!(req.format, Format::OpenaiResponses);
    assert!(req.body.get("messages").is_none());
    assert_eq!(req.body["model"], Client::named(CLIENT).unwrap().wire_model);
    assert!(req.body["instructions"]
        .as_str()
        .unwrap()
        .contains("coding agent"));
    let body = req.body_value();
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "shell");
    assert_eq!(tools[1]["name"], "apply_patch");
    assert_eq!(tools[2]["type"], "function");
    assert!(tools[2]["name"]
        .as_str()
        .unwrap()
        .starts_with("mcp__toolcost__"));
    assert!(tools[2].get("parameters").is_some() && tools[2].get("function").is_none());
    // A received body goes through the format's own shape check.
    let parsed = Request::parse(Format::OpenaiResponses, req.wire().as_bytes()).unwrap();
    assert_eq!(parsed.messages().len(), 1);
    let e = Request::parse(Format::OpenaiResponses, br#"{"model":"gpt-5.4"}"#).unwrap_err();
    assert!(e.to_string().contains("input"), "{e}");
    let s = Request::parse(
        Format::OpenaiResponses,
        br#"{"model":"gpt-5.4","input":"hi"}"#,
    )
    .unwrap();
    assert_eq!(s.messages()[0]["content"], "hi");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock_answers_whole_and_streamed_and_the_usage_is_the_log_row() {
    let g = start().await;
    let req = build("per-row-mcp", 40);
    let next = r#"{"tool":"mcp__toolcost__NOW","input":{}}"#;
    let (st, text) = g.post(&req.wire(), Some(next)).await;
    assert_eq!(st, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["object"], "response");
    assert_eq!(v["status"], "completed");
    assert_eq!(v["output"][0]["type"], "function_call");
    assert_eq!(v["output"][0]["name"], "mcp__toolcost__NOW");
    let expected = billed(&req).input_tokens;
    assert_eq!(v["usage"]["input_tokens"], expected);
    assert_eq!(v["usage"]["output_tokens_details"]["reasoning_tokens"], 0);
    let usage = Format::OpenaiResponses
        .spec()
        .observed_usage(&text, false)
        .unwrap();
    let rows = g.rows();
    assert_eq!(rows[0].provider_format, "openai-responses");
    assert_eq!(
        (usage.input, usage.cached, usage.output),
        (
            rows[0].input_tokens,
            rows[0].cached_input_tokens,
            rows[0].output_tokens
        )
    );
    assert_eq!(rows[0].usage_source, "estimated:o200k");

    // The same prefix again, streamed: the automatic cache reads it (128-token steps).
    let mut again = req.clone();
    again.body["stream"] = json!(true);
    let (st, text) = g
        .post(&again.wire(), Some(r#"{"text":"It is nine."}"#))
        .await;
    assert_eq!(st, 200, "{text}");
    let events: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(events.first(), Some(&"response.created"));
    assert_eq!(events.last(), Some(&"response.completed"));
    for e in [
        "response.output_item.added",
        "response.output_text.delta",
        "response.output_item.done",
    ] {
        assert!(events.contains(&e), "{events:?}");
    }
    let usage = Format::OpenaiResponses
        .spec()
        .observed_usage(&text, true)
        .unwrap();
    let r = &g.rows()[1];
    assert!(r.stream);
    assert_eq!(
        (usage.input, usage.cached, usage.output),
        (r.input_tokens, r.cached_input_tokens, r.output_tokens)
    );
    // Cached in the card's steps (128 tokens before gpt-5.6, any length from it on).
    let card = PriceCard::named(&Client::named(CLIENT).unwrap().model).unwrap();
    let step = match card.cache_rule() {
        toolcost::billing::CacheRule::Automatic { step, .. } => step,
        other => panic!("{other:?}"),
    };
    assert!(usage.cached > 0 && usage.cached % step == 0, "{usage:?}");
    assert!(Format::OpenaiResponses
        .spec()
        .stream_complete(text.lines().rfind(|l| l.starts_with("data:")).unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deferred_functions_are_billed_only_when_a_search_loads_them() {
    let g = start().await;
    let req = build("deferred-search", 300);
    assert!(req.tool_refs().any(|t| t.kind() == Some("tool_search")));
    let per_row = billed(&build("per-row-mcp", 300)).input_tokens;
    let b0 = billed(&req);
    assert_eq!(b0.tools_deferred, 300);
    assert!(
        b0.input_tokens < per_row,
        "{} vs {per_row}",
        b0.input_tokens
    );
    let next = r#"{"search":{"query":"current time zone"},"then":{"tool":"mcp__toolcost__NOW","input":{}}}"#;
    let (st, text) = g.post(&req.wire(), Some(next)).await;
    assert_eq!(st, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let out = v["output"].as_array().unwrap();
    let kinds: Vec<&str> = out.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["tool_search_call", "tool_search_output", "function_call"]
    );
    assert_eq!(out[0]["execution"], "server");
    let loaded: Vec<&str> = out[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(loaded.contains(&"mcp__toolcost__NOW"), "{loaded:?}");
    assert!(!loaded.is_empty() && loaded.len() <= 5);
    // The answer bills the search items and the definitions they load, and nothing else.
    let mut with_search = req.clone();
    with_search.messages_mut().extend(out[..2].iter().cloned());
    let b1 = billed(&with_search);
    assert_eq!(v["usage"]["input_tokens"], b1.input_tokens);
    assert_eq!(b1.tools_billed, b0.tools_billed + loaded.len());
    assert!(b1.input_tokens > b0.input_tokens);
    assert_eq!(g.rows()[0].input_tokens, b1.input_tokens);
    // Loaded definitions are appended: everything before the search items is the same prefix.
    assert!(b1.prefix_tokens >= b0.input_tokens - b0.message_tokens);
    // A client-executed search output that only names its functions loads the same ones.
    let mut named = req.clone();
    named
        .messages_mut()
        .push(Format::OpenaiResponses.spec().tool_result(
            "call_1",
            "tool",
            "",
            &loaded.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        ));
    assert_eq!(billed(&named).tools_billed, b1.tools_billed);
}

#[test]
fn a_namespace_shows_only_its_name_and_description() {
    let fmt = Format::OpenaiResponses.spec();
    let member = |i: usize| {
        fmt.function_definition(
            &format!("orders_{i}"),
            "List the open orders of a customer, newest first, with their totals.",
            json!({"type": "object", "properties": {"customer": {"type": "string", "description": "Customer id"}}}),
            true,
        )
    };
    let with = |n: usize| {
        Request::new(
            Format::OpenaiResponses,
            json!({"model": "gpt-5.4", "instructions": "Be brief.", "input": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "tool_search"}, {"type": "namespace", "name": "crm", "description": "Customer records and orders.",
                "tools": (0..n).map(member).collect::<Vec<_>>()}]}),
        )
    };
    let one = billed(&with(1));
    let fifty = billed(&with(50));
    assert_eq!(one.input_tokens, fifty.input_tokens);
    assert_eq!(fifty.tools_deferred, 50);
    // Loose deferred functions keep their names and descriptions billed.
    let mut loose = with(1);
    *loose.tools_mut() = std::iter::once(json!({"type": "tool_search"}))
        .chain((0..50).map(member))
        .map(ToolEntry::Json)
        .collect();
    assert!(billed(&loose).input_tokens > fifty.input_tokens + 50 * 10);
    // 128 loaded functions are the limit; deferred ones are not counted.
    assert!(fmt.limits(loose.tools(), None).is_empty());
    let visible: Vec<ToolEntry> = (0..129)
        .map(|i| fmt.function_definition(&format!("f{i}"), "d", json!({"type": "object"}), false))
        .map(ToolEntry::Json)
        .collect();
    assert_eq!(fmt.limits(&visible, None).len(), 1);
}

#[test]
fn measure_runs_every_surface_for_the_responses_client() {
    let out = assert_cmd::Command::cargo_bin("toolcost")
        .unwrap()
        .args(["measure", "--client", CLIENT, "--rows", "200", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<toolcost::measure::MeasureRow> = serde_json::from_slice(&out.stdout).unwrap();
    let surfaces: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r.surface.as_str()).collect();
    let format = Client::named(CLIENT).unwrap().format;
    assert_eq!(surfaces.len(), SurfaceKind::all_for(format).len());
    let o200k = |s: &str| {
        rows.iter()
            .find(|r| r.surface == s && r.tokenizer == "o200k")
            .unwrap()
    };
    let (deferred, per_row) = (o200k("deferred-search"), o200k("per-row-mcp"));
    assert!(!deferred.refused, "{:?}", deferred.warnings);
    assert!(
        per_row.refused,
        "200 loaded functions are over OpenAI's 128"
    );
    assert!(deferred.input_tokens < per_row.input_tokens);
    assert_eq!(deferred.model, Client::named(CLIENT).unwrap().model);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_openai_sdk_parses_responses_with_tool_search() {
    if !common::python_sdks("openai") {
        return;
    }
    let g = start().await;
    let seen: Vec<Value> =
        serde_json::from_value(common::python_peer("sdk_responses.py", &g.base).await).unwrap();
    let rows = g.rows();
    assert_eq!(
        rows.len(),
        8,
        "one row per request, the refused one included"
    );
    for (i, s) in seen
        .iter()
        .enumerate()
        .filter(|(_, s)| s.get("input").is_some())
    {
        let r = &rows[i];
        assert_eq!(s["input"], r.input_tokens, "request {i}: {s}");
        assert_eq!(s["cached"], r.cached_input_tokens, "request {i}: {s}");
        assert_eq!(s["output"], r.output_tokens, "request {i}: {s}");
        assert_eq!(s["stream"], r.stream);
    }
    // The searched answers bill the loaded definitions: more than the plain text turns.
    assert!(seen[0]["input"].as_u64() > seen[2]["input"].as_u64());
    assert_eq!(seen[4]["error"], 400);
    assert_eq!(rows[4].status, 400);
    // Round two sends the first answer's items back (the search's call and loaded output, the
    // function call) with the function's result: it bills more than the first round's request.
    assert!(
        seen[5]["input"].as_u64() > seen[0]["input"].as_u64(),
        "{seen:?}"
    );
    // Client execution: the client's own tool_search_output loads NOW, which is billed in the
    // next round; the search round itself bills no definition in full.
    assert!(
        seen[7]["input"].as_u64() > seen[6]["input"].as_u64(),
        "{seen:?}"
    );
    assert!(rows[6].stream);
}

/// The class "the mock bills what the provider refuses": Responses bodies OpenAI answers with
/// 400 get a 400 in OpenAI's form, with the reason, and no bill.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_the_provider_refuses_are_refused() {
    let g = start().await;
    let f =
        |name: &str| json!({"type": "function", "name": name, "parameters": {"type": "object"}});
    let user = json!({"role": "user", "content": "hi"});
    for (body, why) in [
        (
            json!({"tools": {"a": 1}, "input": [user]}),
            "must be a list",
        ),
        (
            json!({"tools": [{"name": "x"}], "input": [user]}),
            "needs a `type`",
        ),
        (
            json!({"tools": [{"type": "telepathy"}], "input": [user]}),
            "unknown tool type",
        ),
        (
            json!({"tools": [f("a"), f("a")], "input": [user]}),
            "duplicate function name",
        ),
        (
            json!({"tools": [{"type": "namespace", "name": "n", "description": "d", "tools": 3}], "input": [user]}),
            "must be a list",
        ),
        (
            json!({"tools": [{"type": "namespace", "name": "n", "description": "d", "tools": [{"type": "namespace", "name": "m", "tools": []}]}], "input": [user]}),
            "do not nest",
        ),
        (
            json!({"tools": [f("a"), {"type": "namespace", "name": "n", "description": "d", "tools": [f("a")]}], "input": [user]}),
            "duplicate function name",
        ),
        (
            json!({"input": [{"type": "hologram"}]}),
            "unknown input item type",
        ),
        (
            json!({"input": [{"role": "overlord", "content": "hi"}]}),
            "unknown role",
        ),
        (json!({"input": [7]}), "must be an object"),
        (
            json!({"input": [user, {"type": "function_call_output", "call_id": "nope", "output": "x"}]}),
            "no function call found",
        ),
    ] {
        let mut body = body;
        body["model"] = json!("gpt-5.6");
        let (status, text) = g.post(&body.to_string(), None).await;
        assert_eq!(status, 400, "{body}: {text}");
        assert!(text.contains(why), "{body}: {text}");
        assert!(text.contains("invalid_request_error"), "{text}");
    }
    // A call answered in the same input, or in a previous response, is fine.
    let ok = json!({"model": "gpt-5.6", "input": [user,
        {"type": "function_call", "call_id": "c1", "name": "a", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "x"}]});
    assert_eq!(g.post(&ok.to_string(), None).await.0, 200);
    // The mock answers with a call of `a`; the next request answers it by reference.
    let calls = json!({"model": "gpt-5.6", "tools": [f("a")], "input": [user]});
    let (status, answer) = g
        .post(&calls.to_string(), Some(r#"{"tool": "a", "input": {}}"#))
        .await;
    assert_eq!(status, 200, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    let call = answer["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call")
        .unwrap_or_else(|| panic!("{answer}"));
    let later = json!({"model": "gpt-5.6", "previous_response_id": answer["id"], "tools": [f("a")],
        "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "x"}]});
    assert_eq!(g.post(&later.to_string(), None).await.0, 200);
    // A response the gateway never served is refused, as the API refuses it.
    let unknown = json!({"model": "gpt-5.6", "previous_response_id": "resp_never",
        "input": "go on"});
    let (status, text) = g.post(&unknown.to_string(), None).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("resp_never"), "{text}");
}

/// A continuation is billed with the context it continues: a 3,000-word first turn, then a
/// `previous_response_id` request of two words, costs the first turn's input, its answer and the
/// two words, not the two words alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continuation_is_billed_with_its_prior_context() {
    let g = start().await;
    let words: Vec<String> = (0..3000).map(|i| format!("word{}", i % 97)).collect();
    let first = json!({"model": "gpt-5.6", "input": words.join(" ")});
    let (status, answer) = g.post(&first.to_string(), None).await;
    assert_eq!(status, 200, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    let first_input = answer["usage"]["input_tokens"].as_u64().unwrap();
    assert!(first_input > 3000, "{first_input}");
    let next = json!({"model": "gpt-5.6", "input": "go on",
        "previous_response_id": answer["id"]});
    let (status, text) = g.post(&next.to_string(), None).await;
    assert_eq!(status, 200, "{text}");
    let next_input = serde_json::from_str::<Value>(&text).unwrap()["usage"]["input_tokens"]
        .as_u64()
        .unwrap();
    let alone = json!({"model": "gpt-5.6", "input": "go on"});
    let (_, text) = g.post(&alone.to_string(), None).await;
    let alone_input = serde_json::from_str::<Value>(&text).unwrap()["usage"]["input_tokens"]
        .as_u64()
        .unwrap();
    assert!(
        next_input >= first_input + alone_input,
        "continued {next_input}, first {first_input}, alone {alone_input}"
    );
}
