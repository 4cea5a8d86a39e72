//! Prompt caching through the gateway's mock, as each provider does it: nothing without marks,
//! writes then reads at marks above the model's minimum, `count_tokens` without side effects,
//! refusals in the provider's own format, and the name list's prefix kept across enables.

mod common;

use serde_json::{json, Value};
use toolcost::catalogue::{generate::Generator, profile::Profile, Catalogue};
use toolcost::client::Client;
use toolcost::gateway::Upstream;
use toolcost::surface::name_list::Session;
use toolcost::surface::{Context, DEFAULT_ENDPOINT};
use toolcost::wire::Request;

struct Gw {
    base: String,
    _gw: common::TestGateway,
    http: reqwest::Client,
}

async fn start() -> Gw {
    let g = common::start_gateway(Upstream::Mock, |_| {}).await;
    Gw {
        base: g.base.clone(),
        _gw: g,
        http: reqwest::Client::new(),
    }
}

impl Gw {
    /// Post a body at a virtual time in a scope; the status and the answer.
    async fn post(&self, path: &str, body: &Value, scope: &str, t: f64) -> (u16, Value) {
        let r = self
            .http
            .post(format!("{}{path}", self.base))
            .header("x-toolcost-cache-scope", scope)
            .header("x-toolcost-clock", t.to_string())
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (
            status,
            serde_json::from_str(&r.text().await.unwrap()).unwrap(),
        )
    }
}

fn usage(v: &Value) -> (u64, u64, u64) {
    let u = &v["usage"];
    let g = |k: &str| u[k].as_u64().unwrap_or(0);
    (
        g("input_tokens"),
        g("cache_creation_input_tokens"),
        g("cache_read_input_tokens"),
    )
}

/// A Messages body for Sonnet 4.5 whose system prompt is well above its 1,024-token minimum.
fn body(marked: bool) -> Value {
    let mut system =
        json!({"type": "text", "text": "Follow the house rules for every answer. ".repeat(300)});
    if marked {
        system["cache_control"] = json!({"type": "ephemeral"});
    }
    json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "system": [system],
           "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_caches_only_at_marks_and_count_tokens_changes_nothing() {
    let g = start().await;
    // No marks: the repeat reads and writes nothing.
    let (_, a) = g.post("/v1/messages", &body(false), "bare", 0.0).await;
    let (_, b) = g.post("/v1/messages", &body(false), "bare", 1.0).await;
    assert_eq!((usage(&a).1, usage(&a).2), (0, 0));
    assert_eq!((usage(&b).1, usage(&b).2), (0, 0));
    // count_tokens in a fresh scope, then the marked request: still a cold write.
    let (status, count) = g
        .post("/v1/messages/count_tokens", &body(true), "marked", 0.0)
        .await;
    assert_eq!(status, 200);
    let (_, first) = g.post("/v1/messages", &body(true), "marked", 1.0).await;
    let (input, written, read) = usage(&first);
    assert!(written > 1024, "{first}");
    assert_eq!(read, 0, "count_tokens must not warm the cache");
    assert_eq!(
        count["input_tokens"].as_u64().unwrap(),
        input + written + read
    );
    let (_, again) = g.post("/v1/messages", &body(true), "marked", 2.0).await;
    assert_eq!(
        usage(&again).2,
        written,
        "the repeat reads the marked prefix"
    );
    assert_eq!(usage(&again).1, 0);
    // Past the 5-minute life the entry is gone.
    let (_, late) = g
        .post("/v1/messages", &body(true), "marked", 2.0 + 301.0)
        .await;
    assert_eq!(usage(&late).2, 0, "{late}");
    // Another scope (another organisation, another task) starts cold.
    let (_, other) = g.post("/v1/messages", &body(true), "other", 3.0).await;
    assert_eq!(usage(&other).2, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_limits_are_the_providers_400s() {
    let g = start().await;
    let mut all_deferred = body(false);
    all_deferred["tools"] = json!([{"name": "a", "description": "x", "input_schema": {"type": "object"}, "defer_loading": true}]);
    let (status, err) = g.post("/v1/messages", &all_deferred, "s", 0.0).await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"]["type"], "invalid_request_error");
    let tools: Vec<Value> = (0..129)
        .map(|i| json!({"type": "function", "function": {"name": format!("f{i}"), "description": "x", "parameters": {"type": "object"}}}))
        .collect();
    let chat =
        json!({"model": "gpt-4o", "tools": tools, "messages": [{"role": "user", "content": "hi"}]});
    let (status, err) = g.post("/v1/chat/completions", &chat, "s", 0.0).await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"]["type"], "invalid_request_error");
}

/// Three enables through the gateway: in hidden mode (claude-cli on a Sonnet card) each
/// round reads the whole previous round from the cache; in append mode (openai-agent) the
/// tools array changes with each enable and the cached prefix stops at the cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_name_list_keeps_its_prefix_in_hidden_mode_and_append_mode_breaks_it() {
    let g = start().await;
    let rows: Vec<_> =
        Generator::new(Profile::named("seed-2026-07").unwrap(), 80, 1, false).collect();
    let cat = Catalogue::from_rows("t", rows);
    for (client_name, model, path) in [
        ("claude-cli", "claude-sonnet-4-5", "/v1/messages"),
        ("openai-agent", "gpt-4o", "/v1/chat/completions"),
    ] {
        let mut client = Client::named(client_name).unwrap();
        client.wire_model = model.into();
        let ctx = Context {
            catalogue: &cat,
            client: &client,
            turn: "what time is it",
            endpoint: DEFAULT_ENDPOINT,
        };
        let mut session = Session::new(&ctx);
        let names: Vec<String> = cat
            .tools
            .iter()
            .rev()
            .take(3)
            .map(|t| client.tool_name(&cat.server, &t.name))
            .collect();
        let mut history: Vec<Value> = Vec::new();
        let mut previous_total = 0;
        let mut reads = Vec::new();
        for (k, name) in names.iter().enumerate() {
            let mut req: Request = session.request(&ctx, history.clone()).request;
            req.place_cache_marks(&client.cache_marks);
            let (status, answer) = g
                .post(path, &req.body_value(), client_name, k as f64 * 10.0)
                .await;
            assert_eq!(status, 200, "{answer}");
            let (read, total) = match client_name {
                "claude-cli" => {
                    let (i, w, r) = usage(&answer);
                    (r, i + w + r)
                }
                _ => (
                    answer["usage"]["prompt_tokens_details"]["cached_tokens"]
                        .as_u64()
                        .unwrap(),
                    answer["usage"]["prompt_tokens"].as_u64().unwrap(),
                ),
            };
            reads.push((read, previous_total));
            previous_total = total;
            // The model enables the next name; the result goes back as a tool result.
            let outcome = session.enable(std::slice::from_ref(name));
            let refs = session.references(&outcome);
            let id = format!("call_{k}");
            history.push(toolcost::wire::tool_call(
                client.format,
                &id,
                "enable_tools",
                json!({"names": [name]}),
            ));
            history.push(toolcost::wire::tool_result(
                client.format,
                &id,
                "tool",
                &toolcost::json::compact(&outcome),
                &refs,
            ));
        }
        match client_name {
            "claude-cli" => {
                for (k, (read, prev)) in reads.iter().enumerate().skip(1) {
                    assert_eq!(read, prev, "round {k} reads all of round {}", k - 1);
                }
            }
            _ => {
                for (k, (read, prev)) in reads.iter().enumerate().skip(2) {
                    assert!(
                        read < prev,
                        "round {k}: an appended definition changes the tools, so the cache stops there"
                    );
                }
            }
        }
    }
}

/// The same rules as the official Python SDKs see them (skipped outside CI when the packages
/// are missing; `.ci/run` installs them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_sdks_see_the_cache_and_the_refusals() {
    if !common::python_sdks("anthropic, openai") {
        return;
    }
    let g = start().await;
    let v = common::python_peer("sdk_caching.py", &g.base).await;
    for r in v["bare"].as_array().unwrap() {
        assert_eq!((&r["write"], &r["read"]), (&json!(0), &json!(0)), "{v}");
    }
    let first = &v["marked_first"];
    assert!(first["write"].as_u64().unwrap() > 1024, "{v}");
    assert_eq!(first["read"], 0);
    let total = |r: &Value| {
        r["input"].as_u64().unwrap() + r["write"].as_u64().unwrap() + r["read"].as_u64().unwrap()
    };
    assert_eq!(v["count_tokens"].as_u64().unwrap(), total(first));
    let repeat = &v["marked_repeat"];
    assert_eq!(
        repeat["read"], first["write"],
        "read at 0.1x what was written: {v}"
    );
    assert_eq!(repeat["write"], 0);
    assert_eq!(
        v["all_deferred"],
        json!({"status": 400, "type": "invalid_request_error"})
    );
    assert_eq!(v["chat_129"]["status"], 400, "{v}");
}
