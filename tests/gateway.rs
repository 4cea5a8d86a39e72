//! The gateway: the mock upstream's accounting, both formats whole and streamed, forward mode
//! against a stand-in provider, faults, and the log under load and under kill.

mod common;

use axum::routing::post;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use toolcost::billing::billed_input;
use toolcost::client::Client;
use toolcost::gateway::{log, Upstream};
use toolcost::pricing::PriceCard;
use toolcost::surface::{Context, SurfaceKind, DEFAULT_ENDPOINT};
use toolcost::wire::{self, Format, Request};

struct Gw {
    base: String,
    log: std::path::PathBuf,
    _gw: common::TestGateway,
    http: reqwest::Client,
}

async fn start(upstream: Upstream, timeout: Duration) -> Gw {
    let g = common::start_gateway(upstream, |o| o.timeout = timeout).await;
    Gw {
        base: g.base.clone(),
        log: g.log.clone(),
        _gw: g,
        http: reqwest::Client::new(),
    }
}

impl Gw {
    async fn post(&self, path: &str, body: &str, headers: &[(&str, &str)]) -> (u16, String) {
        let mut rb = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_string());
        for (k, v) in headers {
            rb = rb.header(*k, *v);
        }
        let r = rb.send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }
    fn rows(&self) -> Vec<log::LogRow> {
        log::read_all(&self.log).unwrap()
    }
}

fn turn(client: &str, n: usize) -> Request {
    let cat = common::seed_catalogue(n);
    let client = Client::named(client).unwrap();
    SurfaceKind::PER_ROW_MCP
        .build(&Context {
            catalogue: &cat,
            client: &client,
            turn: "what time is it",
            endpoint: DEFAULT_ENDPOINT,
        })
        .request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock_bills_like_the_render_model_and_logs_one_row() {
    let g = start(Upstream::Mock, Duration::from_secs(5)).await;
    let req = turn("claude-cli", 50);
    let meta = r#"{"scenario":"t","surface":"per-row-mcp","n":50,"task":"now","round":1}"#;
    let next = r#"{"tool":"mcp__toolcost__NOW","input":{}}"#;
    let (st, text) = g
        .post(
            "/v1/messages",
            &req.wire(),
            &[("x-toolcost-metadata", meta), ("x-toolcost-next", next)],
        )
        .await;
    assert_eq!(st, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["content"][0]["name"], "mcp__toolcost__NOW");
    assert_eq!(v["stop_reason"], "tool_use");
    // The client's own model's card (its wire model names it).
    let card = PriceCard::named(
        &toolcost::client::Client::named("claude-cli")
            .unwrap()
            .wire_model,
    )
    .unwrap();
    let expected = billed_input(&req, card.render_model(), card.tokenizer()).input_tokens;
    assert_eq!(
        v["usage"]["input_tokens"].as_u64().unwrap()
            + v["usage"]["cache_read_input_tokens"].as_u64().unwrap()
            + v["usage"]["cache_creation_input_tokens"].as_u64().unwrap(),
        expected
    );
    let rows = g.rows();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(
        (r.input_tokens, r.request_bytes, r.response_bytes),
        (expected, req.wire_bytes(), text.len())
    );
    assert_eq!(r.usage_source, card.tokenizer().label());
    assert_eq!(r.metadata, meta);
    assert!(
        (r.cost_usd
            - card.cost(&toolcost::pricing::Usage {
                uncached_input: v["usage"]["input_tokens"].as_u64().unwrap(),
                cached_input: v["usage"]["cache_read_input_tokens"].as_u64().unwrap(),
                cache_write: v["usage"]["cache_creation_input_tokens"].as_u64().unwrap(),
                output: r.output_tokens,
            }))
        .abs()
            < 1e-12
    );

    // Round two resends the prefix: it is read from the cache.
    let mut req2 = req.clone();
    req2.messages_mut().push(wire::tool_call(
        Format::AnthropicMessages,
        "toolu_1",
        "mcp__toolcost__NOW",
        json!({}),
    ));
    req2.messages_mut().push(wire::tool_result(
        Format::AnthropicMessages,
        "toolu_1",
        "tool",
        r#"{"utc":"2026-07-25T09:00:00Z"}"#,
        &[],
    ));
    let (_, text) = g.post("/v1/messages", &req2.wire(), &[]).await;
    let v: Value = serde_json::from_str(&text).unwrap();
    let prefix = billed_input(
        &Request::new(Format::AnthropicMessages, req.body_value().into_owned()),
        card.render_model(),
        card.tokenizer(),
    )
    .input_tokens;
    assert_eq!(v["usage"]["cache_read_input_tokens"], prefix);
    assert_eq!(g.rows()[1].cached_input_tokens, prefix);

    let (_, counted) = g.post("/v1/messages/count_tokens", &req.wire(), &[]).await;
    let counted: Value = serde_json::from_str(&counted).unwrap();
    assert_eq!(counted["input_tokens"], expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_in_both_formats() {
    let g = start(Upstream::Mock, Duration::from_secs(5)).await;
    let mut req = turn("claude-cli", 10);
    req.body["stream"] = json!(true);
    let (st, text) = g
        .post(
            "/v1/messages",
            &req.wire(),
            &[("x-toolcost-next", r#"{"text":"It is nine."}"#)],
        )
        .await;
    assert_eq!(st, 200);
    let events: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(
        events,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert!(g.rows()[0].stream);

    let mut oreq = turn("openai-agent", 10);
    oreq.body["stream"] = json!(true);
    oreq.body["stream_options"] = json!({"include_usage": true});
    let (_, text) = g
        .post(
            "/v1/chat/completions",
            &oreq.wire(),
            &[("x-toolcost-next", r#"{"tool":"toolcost__NOW","input":{}}"#)],
        )
        .await;
    assert!(text.trim_end().ends_with("data: [DONE]"));
    let usage = Format::OpenaiChat
        .spec()
        .observed_usage(&text, true)
        .unwrap();
    assert_eq!(usage.input, g.rows()[1].input_tokens);
    let (_, whole) = g
        .post(
            "/v1/chat/completions",
            &turn("openai-agent", 10).wire(),
            &[],
        )
        .await;
    let v: Value = serde_json::from_str(&whole).unwrap();
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert!(v["usage"]["prompt_tokens"].as_u64().unwrap() > 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_side_search_expands_only_what_it_returns() {
    let g = start(Upstream::Mock, Duration::from_secs(5)).await;
    let cat = common::seed_catalogue(300);
    let client = Client::named("claude-cli").unwrap();
    let mut client = client;
    client.wire_model = "claude-sonnet-4.5".into();
    let req = SurfaceKind::parse("deferred-search")
        .unwrap()
        .build(&Context {
            catalogue: &cat,
            client: &client,
            turn: "what time is it",
            endpoint: DEFAULT_ENDPOINT,
        })
        .request;
    let next = r#"{"search":{"query":"current time zone"},"then":{"tool":"mcp__toolcost__NOW","input":{}}}"#;
    let (st, text) = g
        .post("/v1/messages", &req.wire(), &[("x-toolcost-next", next)])
        .await;
    assert_eq!(st, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let refs: Vec<&str> = v["content"][1]["content"]["tool_references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tool_name"].as_str().unwrap())
        .collect();
    assert!(refs.contains(&"mcp__toolcost__NOW"), "{refs:?}");
    assert!(refs.len() <= 5);
    // The next round carries the references: exactly those definitions are billed.
    let mut req2 = req.clone();
    req2.messages_mut()
        .push(json!({"role": "assistant", "content": v["content"]}));
    let render = PriceCard::named("claude-sonnet-4.5")
        .unwrap()
        .render_model();
    let b = billed_input(&req2, render, toolcost::tokens::Tokenizer::O200k);
    assert_eq!(b.tools_billed, 9 + 1 + refs.len());
}

/// A stand-in provider on loopback: answers with known usage, echoes the request's bytes in a
/// header, and misbehaves on request.
async fn provider() -> String {
    async fn messages(
        headers: axum::http::HeaderMap,
        body: axum::body::Bytes,
    ) -> axum::response::Response {
        use axum::response::IntoResponse;
        let v: Value = serde_json::from_slice(&body).unwrap();
        let sha = format!("{:x}", sha2_digest(&body));
        let mode = headers
            .get("x-mode")
            .and_then(|m| m.to_str().ok())
            .unwrap_or("ok")
            .to_string();
        let usage = json!({"input_tokens": 1234, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 0, "output_tokens": 56});
        match mode.as_str() {
            "500" => (
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                r#"{"type":"error","error":{"type":"api_error","message":"boom"}}"#,
            )
                .into_response(),
            "slow" => {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "{}".into_response()
            }
            "garbage" => ([("content-type", "application/json")], "<html>not json").into_response(),
            // A valid answer of more tiny JSON nodes than the gateway builds a tree of.
            "fan" => (
                [("content-type", "application/json")],
                fan(toolcost::json::MAX_NODES + 1),
            )
                .into_response(),
            // The first events, then nothing for a minute: a stream still going when the
            // gateway is killed.
            "hold" => {
                let head = axum::body::Bytes::from(format!(
                    "event: message_start\ndata: {}\n\nevent: ping\ndata: {{\"type\":\"ping\"}}\n\n",
                    json!({"type": "message_start", "message": {"usage": {"input_tokens": 1234, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 0, "output_tokens": 1}}})
                ));
                let chunks = futures_util::stream::unfold(0, move |i| {
                    let head = head.clone();
                    async move {
                        match i {
                            0 => Some((Ok::<_, std::io::Error>(head), 1)),
                            _ => {
                                tokio::time::sleep(Duration::from_secs(60)).await;
                                None
                            }
                        }
                    }
                });
                let mut r = axum::response::Response::new(axum::body::Body::from_stream(chunks));
                r.headers_mut()
                    .insert("content-type", "text/event-stream".parse().unwrap());
                r
            }
            "cut" => {
                let first = axum::body::Bytes::from("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n");
                let chunks = futures_util::stream::unfold(0, move |i| {
                    let first = first.clone();
                    async move {
                        match i {
                            0 => Some((Ok::<_, std::io::Error>(first), 1)),
                            1 => {
                                tokio::time::sleep(Duration::from_millis(200)).await;
                                Some((Err(std::io::Error::other("cut")), 2))
                            }
                            _ => None,
                        }
                    }
                });
                let mut r = axum::response::Response::new(axum::body::Body::from_stream(chunks));
                r.headers_mut()
                    .insert("content-type", "text/event-stream".parse().unwrap());
                r
            }
            _ if v["stream"] == true => {
                let text = format!(
                    "event: message_start\ndata: {}\n\nevent: message_delta\ndata: {}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
                    json!({"type": "message_start", "message": {"usage": {"input_tokens": 1234, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
                    json!({"type": "message_delta", "usage": {"output_tokens": 56}})
                );
                (
                    [
                        ("content-type", "text/event-stream"),
                        ("x-request-sha", sha.as_str()),
                    ],
                    text,
                )
                    .into_response()
            }
            _ => (
                [
                    ("content-type", "application/json"),
                    ("x-request-sha", sha.as_str()),
                ],
                json!({"id": "msg_1", "type": "message", "content": [], "usage": usage})
                    .to_string(),
            )
                .into_response(),
        }
    }
    let app = axum::Router::new().route("/v1/messages", post(messages));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

fn sha2_digest(b: &[u8]) -> u128 {
    use sha2::Digest;
    let d = sha2::Sha256::digest(b);
    u128::from_be_bytes(d[..16].try_into().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forward_mode_passes_bytes_and_logs_observed_usage() {
    let up = provider().await;
    let g = start(Upstream::Url(up), Duration::from_secs(2)).await;
    let body = turn("claude-cli", 20).wire();
    let r = g
        .http
        .post(format!("{}/v1/messages", g.base))
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.headers()["x-request-sha"].to_str().unwrap(),
        format!("{:x}", sha2_digest(body.as_bytes())),
        "bytes arrive unchanged"
    );
    let _ = r.text().await.unwrap();
    let row = &g.rows()[0];
    assert_eq!(
        (
            row.input_tokens,
            row.cached_input_tokens,
            row.output_tokens,
            row.usage_source.as_str()
        ),
        (5234, 4000, 56, "observed")
    );
    let card = PriceCard::named(
        &toolcost::client::Client::named("claude-cli")
            .unwrap()
            .wire_model,
    )
    .unwrap();
    assert!(
        (row.cost_usd
            - card.cost(&toolcost::pricing::Usage {
                uncached_input: 1234,
                cached_input: 4000,
                cache_write: 0,
                output: 56
            }))
        .abs()
            < 1e-12
    );

    let mut streamed: Value = serde_json::from_str(&body).unwrap();
    streamed["stream"] = json!(true);
    let (st, text) = g.post("/v1/messages", &streamed.to_string(), &[]).await;
    assert_eq!(st, 200);
    assert!(text.ends_with("data: {\"type\":\"message_stop\"}\n\n"));
    let row = &g.rows()[1];
    assert_eq!(
        (
            row.input_tokens,
            row.output_tokens,
            row.stream,
            row.error.clone()
        ),
        (5234, 56, true, None)
    );
}

/// Forward mode logs toolcost's estimate beside the provider's usage whether the estimate was
/// made on the request's own task (a small body) or on a blocking thread (a large one): each
/// is what the mock upstream bills for the same request after the same requests before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forward_mode_estimates_small_and_large_bodies_like_the_mock() {
    let up = provider().await;
    let fwd = start(Upstream::Url(up), Duration::from_secs(5)).await;
    let mock = start(Upstream::Mock, Duration::from_secs(5)).await;
    let small = |text: &str| {
        json!({"model": "kimi-k2.7-code", "max_tokens": 64,
               "messages": [{"role": "user", "content": text}]})
        .to_string()
    };
    let bodies = [
        small("what time is it"),
        turn("claude-cli", 300).wire(),
        small("and the date?"),
    ];
    assert!(bodies[0].len() < 16 * 1024 && bodies[1].len() > 64 * 1024);
    for b in &bodies {
        assert_eq!(fwd.post("/v1/messages", b, &[]).await.0, 200);
        assert_eq!(mock.post("/v1/messages", b, &[]).await.0, 200);
    }
    let (f, m) = (fwd.rows(), mock.rows());
    assert_eq!((f.len(), m.len()), (3, 3));
    for (f, m) in f.iter().zip(&m) {
        assert_eq!(f.usage_source, "observed");
        assert_eq!(f.estimated_input_tokens, Some(m.input_tokens));
        assert_eq!(f.estimated_cached_input_tokens, Some(m.cached_input_tokens));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_are_clear_logged_and_survived() {
    let up = provider().await;
    let g = start(Upstream::Url(up), Duration::from_secs(1)).await;
    let body = turn("claude-cli", 5).wire();
    let (st, t) = g.post("/v1/messages", &body, &[("x-mode", "500")]).await;
    assert_eq!(st, 500);
    assert!(t.contains("boom"));
    let (st, t) = g.post("/v1/messages", &body, &[("x-mode", "slow")]).await;
    assert_eq!(st, 504);
    assert_eq!(
        serde_json::from_str::<Value>(&t).unwrap()["error"]["type"],
        "api_error"
    );
    let (st, t) = g
        .post("/v1/messages", &body, &[("x-mode", "garbage")])
        .await;
    assert_eq!(st, 502, "{t}");
    let (st, t) = g.post("/v1/messages", &body, &[("x-mode", "cut")]).await;
    assert_eq!(st, 200);
    assert!(t.contains("event: error"), "{t}");
    let (st, _) = g.post("/v1/messages", "{not json", &[]).await;
    assert_eq!(st, 400);
    let (st, _) = g.post("/v1/messages", &body, &[]).await;
    assert_eq!(st, 200, "the gateway keeps serving");
    let rows = g.rows();
    assert_eq!(rows.len(), 6);
    let errors: Vec<bool> = rows.iter().map(|r| r.error.is_some()).collect();
    assert_eq!(errors, [true, true, true, true, true, false]);

    let dead = start(
        Upstream::Url("http://127.0.0.1:9".into()),
        Duration::from_secs(1),
    )
    .await;
    let (st, t) = dead
        .post("/v1/chat/completions", &turn("openai-agent", 5).wire(), &[])
        .await;
    assert_eq!(st, 502);
    assert_eq!(
        serde_json::from_str::<Value>(&t).unwrap()["error"]["type"],
        "server_error"
    );
    assert_eq!(dead.rows()[0].status, 502);
}

/// A Messages body whose `messages` array holds `n` zeros: `n` JSON nodes in about `2n` bytes.
fn fan(n: usize) -> String {
    let mut s = String::with_capacity(2 * n + 64);
    s.push_str(r#"{"model":"claude-sonnet-4.6","max_tokens":1,"messages":["#);
    for i in 0..n {
        s.push_str(if i == 0 { "0" } else { ",0" });
    }
    s.push_str("]}");
    s
}

/// A body of tiny JSON nodes would take some 50 times its size as a tree: a client's such body
/// and an upstream's such answer are both refused before they are parsed, in words that say
/// why, and the gateway goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_of_too_many_json_nodes_are_refused_unparsed() {
    let g = start(Upstream::Mock, Duration::from_secs(5)).await;
    let (st, t) = g
        .post("/v1/messages", &fan(toolcost::json::MAX_NODES + 1), &[])
        .await;
    assert_eq!(st, 400, "{t}");
    assert!(t.contains("more than 16777216 JSON values"), "{t}");
    let (st, _) = g
        .post("/v1/messages", &turn("claude-cli", 5).wire(), &[])
        .await;
    assert_eq!(st, 200, "the gateway keeps serving");

    let up = provider().await;
    let g = start(Upstream::Url(up), Duration::from_secs(5)).await;
    let body = turn("claude-cli", 5).wire();
    let (st, t) = g.post("/v1/messages", &body, &[("x-mode", "fan")]).await;
    assert_eq!(st, 502, "{t}");
    assert!(t.contains("the upstream's answer holds more than"), "{t}");
    let (st, _) = g.post("/v1/messages", &body, &[]).await;
    assert_eq!(st, 200, "the gateway keeps serving");
}

/// Images, documents and inline data are billed by their size, which no text count sees: the
/// mock's count of a request that holds them says how many it left out, in every format.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn media_parts_left_out_of_a_count_are_named_in_its_label() {
    let g = start(Upstream::Mock, Duration::from_secs(5)).await;
    let png = json!({"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="});
    let anthropic = json!({"model": "claude-sonnet-4.6", "max_tokens": 16, "messages": [
        {"role": "user", "content": [{"type": "image", "source": png}, {"type": "text", "text": "what is this?"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "look", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "image", "source": png}, {"type": "text", "text": "a screenshot"}]}]}
    ]});
    let (st, t) = g.post("/v1/messages", &anthropic.to_string(), &[]).await;
    assert_eq!(st, 200, "{t}");
    let chat = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]});
    let (st, t) = g.post("/v1/chat/completions", &chat.to_string(), &[]).await;
    assert_eq!(st, 200, "{t}");
    let plain = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]});
    let (st, t) = g
        .post("/v1/chat/completions", &plain.to_string(), &[])
        .await;
    assert_eq!(st, 200, "{t}");
    let rows = g.rows();
    let labels: Vec<(&str, Option<&str>)> = rows
        .iter()
        .map(|r| (r.usage_source.as_str(), r.estimate_label.as_deref()))
        .collect();
    assert!(
        labels[0].0.ends_with("; 2 media part(s) not counted"),
        "{labels:?}"
    );
    assert_eq!(Some(labels[0].0), labels[0].1, "{labels:?}");
    assert!(
        labels[1].0.ends_with("; 1 media part(s) not counted"),
        "{labels:?}"
    );
    assert!(!labels[2].0.contains("media"), "{labels:?}");
    // Gemini's inline and file data (snake_case too), read from `contents`.
    let parts = json!([
        {"inline_data": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/f.pdf"}},
        {"text": "summarise"}
    ]);
    let media = toolcost::billing::render::media_parts(&[json!({"role": "user", "parts": parts})]);
    assert_eq!(media, 2);
    // A function response's own parts, and a Responses screenshot.
    let response = json!({"role": "user", "parts": [{"functionResponse": {"name": "shot",
        "response": {}, "parts": [{"inlineData": {"mimeType": "image/png", "data": "AA=="}}]}}]});
    let screenshot = json!({"type": "computer_call_output", "call_id": "c1",
        "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AA=="}});
    let text = json!({"type": "function_call_output", "call_id": "c2", "output": "done"});
    assert_eq!(
        toolcost::billing::render::media_parts(&[response, screenshot, text]),
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn five_thousand_requests_leave_five_thousand_rows() {
    let g = Arc::new(start(Upstream::Mock, Duration::from_secs(5)).await);
    let body =
        json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}).to_string();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let (g, next, body) = (g.clone(), next.clone(), body.clone());
        tasks.push(tokio::spawn(async move {
            while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < 5_000 {
                let (st, _) = g.post("/v1/chat/completions", &body, &[]).await;
                assert_eq!(st, 200);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(g.rows().len(), 5_000);
}

#[test]
fn a_killed_gateway_leaves_a_readable_log() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("log.sqlite");
    let gateway = common::serve(&["gateway", "--log", log_path.to_str().unwrap()], &[]);
    let client = reqwest::blocking::Client::new();
    for _ in 0..20 {
        let r = client
            .post(format!("{}/v1/chat/completions", gateway.base))
            .body(r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}"#)
            .send()
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    gateway.kill();
    assert_eq!(log::read_all(&log_path).unwrap().len(), 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_sdks_parse_every_answer_and_match_the_log() {
    if !common::python_sdks("anthropic, openai") {
        return;
    }
    let g = start(Upstream::Mock, Duration::from_secs(5)).await;
    let seen: Vec<Value> =
        serde_json::from_value(common::python_peer("sdk_gateway.py", &g.base).await).unwrap();
    let rows = g.rows();
    assert_eq!(
        rows.len(),
        6,
        "one row per request, the refused one included"
    );
    for (i, s) in seen
        .iter()
        .enumerate()
        .filter(|(_, s)| s.get("input").is_some())
    {
        let r = &rows[i];
        assert_eq!(s["input"], r.input_tokens, "request {i}: {s}");
        assert_eq!(s["output"], r.output_tokens, "request {i}: {s}");
        assert_eq!(s["stream"], r.stream);
    }
    assert_eq!(seen[2]["count_tokens"], rows[2].input_tokens);
    assert_eq!(seen[5]["error"], 400);
    assert_eq!(rows[5].status, 400);
}

/// Messages, count_tokens and Chat Completions refuse what the providers refuse in `tools`:
/// not a list, an entry that is no object or has no name, two tools with one name (as the
/// Responses API already did).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_format_refuses_malformed_tools() {
    let gw = common::start_gateway(toolcost::gateway::Upstream::Mock, |_| {}).await;
    let http = reqwest::Client::new();
    let anthropic = |tools: serde_json::Value| {
        serde_json::json!({"model": "claude-sonnet-5-5", "max_tokens": 16, "tools": tools,
            "messages": [{"role": "user", "content": "hi"}]})
    };
    let chat = |tools: serde_json::Value| {
        serde_json::json!({"model": "gpt-5.6", "tools": tools,
            "messages": [{"role": "user", "content": "hi"}]})
    };
    let schema = serde_json::json!({"type": "object", "properties": {}});
    let a_tool =
        |name: &str| serde_json::json!({"name": name, "description": "d", "input_schema": schema});
    let c_tool = |name: &str| serde_json::json!({"type": "function", "function": {"name": name, "parameters": schema}});
    let cases = [
        (
            "/v1/messages",
            anthropic(serde_json::json!("tools")),
            "must be a list",
        ),
        (
            "/v1/messages",
            anthropic(serde_json::json!({"name": "x"})),
            "must be a list",
        ),
        (
            "/v1/messages",
            anthropic(serde_json::json!([{"description": "no name", "input_schema": schema}])),
            "needs a non-empty `name`",
        ),
        (
            "/v1/messages",
            anthropic(serde_json::json!([a_tool("x"), a_tool("x")])),
            "unique",
        ),
        (
            "/v1/messages/count_tokens",
            anthropic(serde_json::json!([a_tool("x"), a_tool("x")])),
            "unique",
        ),
        (
            "/v1/messages/count_tokens",
            anthropic(serde_json::json!("tools")),
            "must be a list",
        ),
        (
            "/v1/chat/completions",
            chat(serde_json::json!("tools")),
            "must be a list",
        ),
        (
            "/v1/chat/completions",
            chat(serde_json::json!([{"type": "function", "function": {"parameters": schema}}])),
            "needs a non-empty `name`",
        ),
        (
            "/v1/chat/completions",
            chat(serde_json::json!([c_tool("y"), c_tool("y")])),
            "unique",
        ),
    ];
    for (path, body, says) in cases {
        let r = http
            .post(format!("{}{path}", gw.base))
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = r.status();
        let text = r.text().await.unwrap();
        assert_eq!(status, 400, "{path} {body}: {text}");
        assert!(text.contains(says), "{path} {body}: {text}");
    }
    // The well-formed bodies pass.
    for (path, body) in [
        (
            "/v1/messages",
            anthropic(serde_json::json!([a_tool("x"), a_tool("y")])),
        ),
        (
            "/v1/chat/completions",
            chat(serde_json::json!([c_tool("x"), c_tool("y")])),
        ),
    ] {
        let r = http
            .post(format!("{}{path}", gw.base))
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
    }
}

/// A gateway killed (SIGKILL) while a stream is still going leaves a row with the input tokens
/// the client already saw in `message_start`, not 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_by_kill_keeps_the_tokens_the_client_saw() {
    let up = provider().await;
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("log.sqlite");
    let log_arg = log_path.to_str().unwrap().to_string();
    let gateway = tokio::task::spawn_blocking(move || {
        common::serve(&["gateway", "--log", &log_arg, "--upstream", &up], &[])
    })
    .await
    .unwrap();
    let body = json!({"model": "claude-sonnet-5-5", "max_tokens": 16, "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let mut r = reqwest::Client::new()
        .post(format!("{}/v1/messages", gateway.base))
        .header("x-mode", "hold")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let mut seen = String::new();
    while !seen.contains("message_start") {
        let chunk = tokio::time::timeout(Duration::from_secs(20), r.chunk())
            .await
            .expect("the first event within 20 s")
            .unwrap()
            .expect("more of the stream");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("\"input_tokens\":1234"), "{seen}");
    tokio::task::spawn_blocking(move || gateway.kill())
        .await
        .unwrap();
    let rows = log::read_all(&log_path).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].input_tokens, 5234, "{:?}", rows[0]);
    assert_eq!(rows[0].usage_source, log::IN_FLIGHT);
}

/// The official google-genai SDK, unchanged but for its base URL, through the mock gateway:
/// generate with two function declarations (a call, then its response sent back), stream and
/// count_tokens parse, each row's tokens are what the SDK read, and each row's cost is the
/// card's cost of its usage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_google_genai_sdk_generates_streams_and_counts_through_the_gateway() {
    if !common::python_sdks("google.genai") {
        return;
    }
    let g = start(Upstream::Mock, Duration::from_secs(5)).await;
    let seen: Vec<Value> =
        serde_json::from_value(common::python_peer("sdk_gemini.py", &g.base).await).unwrap();
    let rows = g.rows();
    assert_eq!(
        rows.len(),
        5,
        "one row per request, the refused one included"
    );
    let card = toolcost::pricing::PriceCard::named("gemini-3.5-flash").unwrap();
    for (i, s) in seen
        .iter()
        .enumerate()
        .filter(|(_, s)| s.get("input").is_some())
    {
        let r = &rows[i];
        assert_eq!(r.provider_format, "gemini");
        assert_eq!(r.model, "gemini-3.5-flash");
        assert_eq!(s["input"], r.input_tokens, "request {i}: {s}");
        assert_eq!(s["cached"], r.cached_input_tokens, "request {i}: {s}");
        assert_eq!(s["output"], r.output_tokens, "request {i}: {s}");
        assert_eq!(s["stream"], r.stream);
        let usage = toolcost::pricing::Usage {
            uncached_input: r.input_tokens - r.cached_input_tokens - r.cache_write_tokens,
            cached_input: r.cached_input_tokens,
            cache_write: r.cache_write_tokens,
            output: r.output_tokens,
        };
        assert!(
            (card.cost(&usage) - r.cost_usd).abs() < 1e-12,
            "request {i}"
        );
        assert!(r.input_tokens > 0 && r.cost_usd > 0.0);
    }
    // The function's response was billed: the second request carries more than the first.
    assert!(rows[1].input_tokens > rows[0].input_tokens);
    assert_eq!(seen[3]["count_tokens"], rows[3].input_tokens);
    assert!(rows[3].path.ends_with(":countTokens"));
    assert_eq!(seen[4]["error"], 400);
    assert_eq!(seen[4]["status"], "INVALID_ARGUMENT");
    assert_eq!(rows[4].status, 400);
}

/// A stand-in Gemini API on loopback: answers each method with known usage and says, in
/// headers, the path, query and key it was called with.
async fn gemini_provider() -> String {
    async fn call(
        uri: axum::http::Uri,
        headers: axum::http::HeaderMap,
        _body: axum::body::Bytes,
    ) -> axum::response::Response {
        use axum::response::IntoResponse;
        let usage = json!({"promptTokenCount": 5234, "cachedContentTokenCount": 4000,
                           "candidatesTokenCount": 50, "thoughtsTokenCount": 6, "totalTokenCount": 5290});
        let seen = [
            ("x-seen-path", uri.path().to_string()),
            ("x-seen-query", uri.query().unwrap_or("").to_string()),
            (
                "x-seen-key",
                headers
                    .get("x-goog-api-key")
                    .and_then(|k| k.to_str().ok())
                    .unwrap_or("")
                    .to_string(),
            ),
        ];
        let mut r = match uri.path().rsplit_once(':').map(|(_, m)| m) {
            Some("streamGenerateContent") => {
                let first = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "It"}]}}],
                                   "usageMetadata": {"promptTokenCount": 5234}});
                let last = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": " is."}]}, "finishReason": "STOP"}],
                                  "usageMetadata": usage});
                ([("content-type", "text/event-stream")], format!("data: {first}\r\n\r\ndata: {last}\r\n\r\n")).into_response()
            }
            Some("countTokens") => ([("content-type", "application/json")], json!({"totalTokens": 5234}).to_string()).into_response(),
            _ => ([("content-type", "application/json")],
                  json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}],
                         "usageMetadata": usage}).to_string()).into_response(),
        };
        for (k, v) in seen {
            r.headers_mut().insert(k, v.parse().unwrap());
        }
        r
    }
    let app = axum::Router::new()
        .route("/v1beta/models/{call}", post(call))
        .route("/v1/models/{call}", post(call));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// Forward mode on Gemini: the model's path and `alt=sse` reach the provider, the client's key
/// (header or `?key=`) is replaced by the gateway's and never logged, and the rows carry the
/// observed usage (thoughts billed as output) with the card's cost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_forwards_by_model_path_with_the_gateways_key() {
    let up = gemini_provider().await;
    let g = common::start_gateway(Upstream::Url(up.clone()), |o| {
        o.api_key = Some("gateway-key".into())
    })
    .await;
    let http = reqwest::Client::new();
    let body = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
    let send = |path: &str, header_key: bool| {
        let mut rb = http
            .post(format!("{}{path}", g.base))
            .header("content-type", "application/json")
            .body(body);
        if header_key {
            rb = rb.header("x-goog-api-key", "client-key");
        }
        rb.send()
    };
    let r = send(
        "/v1beta/models/gemini-3.5-flash:generateContent?key=client-key",
        false,
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["x-seen-path"],
        "/v1beta/models/gemini-3.5-flash:generateContent"
    );
    assert_eq!(r.headers()["x-seen-query"], "");
    assert_eq!(r.headers()["x-seen-key"], "gateway-key");
    let r = send(
        "/v1/models/gemini-3.5-flash:streamGenerateContent?alt=sse",
        true,
    )
    .await
    .unwrap();
    assert_eq!(r.headers()["x-seen-query"], "alt=sse");
    assert_eq!(r.headers()["x-seen-key"], "gateway-key");
    assert!(r.text().await.unwrap().contains("finishReason"));
    let r = send("/v1beta/models/gemini-3.5-flash:countTokens", true)
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let rows = log::read_all(&g.log).unwrap();
    assert_eq!(rows.len(), 3);
    let card = PriceCard::named("gemini-3.5-flash").unwrap();
    for r in &rows[..2] {
        assert_eq!(
            (r.provider_format.as_str(), r.model.as_str()),
            ("gemini", "gemini-3.5-flash")
        );
        assert_eq!(
            (r.input_tokens, r.cached_input_tokens, r.output_tokens),
            (5234, 4000, 56)
        );
        assert_eq!(r.usage_source, "observed");
        assert!(!r.path.contains("key"), "{}", r.path);
        let u = toolcost::pricing::Usage {
            uncached_input: 1234,
            cached_input: 4000,
            cache_write: 0,
            output: 56,
        };
        assert!((r.cost_usd - card.cost(&u)).abs() < 1e-12);
    }
    assert!(rows[1].stream && rows[1].error.is_none(), "{:?}", rows[1]);
    // Without a key of its own the gateway passes the client's `?key=` on.
    let g2 = common::start_gateway(Upstream::Url(up), |_| {}).await;
    let r = http
        .post(format!(
            "{}/v1beta/models/gemini-3.5-flash:generateContent?key=client-key",
            g2.base
        ))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-seen-query"], "key=client-key");
    // A method the gateway does not serve is refused in Gemini's shape.
    let r = http
        .post(format!(
            "{}/v1beta/models/gemini-3.5-flash:embedContent",
            g2.base
        ))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let e: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
    assert_eq!(e["error"]["status"], "NOT_FOUND");
}

/// An upstream that takes connections and never answers: the row of a request the upstream
/// timed out on never holds the client's `?key=`, and a client that leaves before the upstream
/// said anything still leaves a row (the upstream may bill the request).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_upstream_leaves_rows_without_the_clients_key() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up = format!("http://{}", silent.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });
    let g = start(Upstream::Url(up), Duration::from_secs(1)).await;
    let body = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
    let (status, text) = g
        .post(
            "/v1beta/models/gemini-3.5-flash:generateContent?key=SECRET%2Bkey",
            body,
            &[],
        )
        .await;
    assert_eq!(status, 504, "{text}");
    assert!(!text.contains("SECRET"), "{text}");
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let _ = impatient
        .post(format!("{}/v1/messages", g.base))
        .body(turn("claude-cli", 2).wire())
        .send()
        .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let rows = g.rows();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for r in &rows {
        let all = format!("{r:?}");
        assert!(!all.contains("SECRET"), "{all}");
    }
    assert_eq!(rows[1].status, 499, "{:?}", rows[1]);
}

/// A path the gateway does not serve, or a method other than POST on one it does, is answered
/// with JSON an SDK reads (`error.message`), naming what is served, and logs no row.
#[tokio::test]
async fn unserved_paths_and_methods_are_answered_in_json() {
    let g = start(Upstream::Mock, Duration::from_secs(5)).await;
    let (status, body) = g.post("/v2/nothing", "{}", &[]).await;
    assert_eq!(status, 404);
    let e: Value = serde_json::from_str(&body).expect("JSON, not plain text");
    let message = e["error"]["message"].as_str().unwrap();
    assert!(message.contains("/v2/nothing"), "{message}");
    assert!(message.contains("/v1/messages"), "{message}");
    assert_eq!(e["type"], "error");
    let r = g
        .http
        .get(format!("{}/v1/chat/completions", g.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 405);
    let e: Value = serde_json::from_str(&r.text().await.unwrap()).expect("JSON");
    assert!(e["error"]["message"].as_str().unwrap().contains("GET"));
    assert!(g.rows().is_empty());
}

/// The mock streams Gemini as the API does: server-sent events with `alt=sse`, and without it
/// one JSON array of the same responses, whose last holds the finish reason and the usage.
#[tokio::test]
async fn gemini_streams_are_events_with_alt_sse_and_an_array_without() {
    let g = start(Upstream::Mock, Duration::from_secs(5)).await;
    let body = r#"{"contents":[{"role":"user","parts":[{"text":"what time is it"}]}]}"#;
    let get = |path: &'static str| {
        g.http
            .post(format!("{}{path}", g.base))
            .header("content-type", "application/json")
            .header("x-goog-api-key", "k")
            .body(body)
            .send()
    };
    let r = get("/v1beta/models/gemini-3.5-flash:streamGenerateContent")
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
    let array: Value = serde_json::from_str(&r.text().await.unwrap()).expect("one JSON array");
    let last = array.as_array().unwrap().last().unwrap().clone();
    assert!(last["candidates"][0]["finishReason"].is_string(), "{last}");
    assert!(last["usageMetadata"]["promptTokenCount"].as_u64().unwrap() > 0);
    let r = get("/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse")
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let text = r.text().await.unwrap();
    assert!(text.starts_with("data: "), "{text}");
    // Both were billed alike.
    let rows = g.rows();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].input_tokens, rows[1].input_tokens);
}

/// Round five's F1: a connection that announces a 64 MB body and sends 1 KB takes none of the
/// in-flight allowance (other requests are answered meanwhile) and is answered 408 and closed
/// once it stalls. And an attack of this test's own: a connection that drips its body a byte at
/// a time is cut off the same way, and a stalled upload that announces nothing does not block
/// either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_or_dripping_upload_blocks_nothing_and_is_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let g = common::start_gateway(Upstream::Mock, |o| {
        o.body_idle = Duration::from_millis(600);
    })
    .await;
    let addr = g.base.trim_start_matches("http://").to_string();
    let head = |len: &str| {
        format!(
            "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n{len}\r\n"
        )
    };
    let mut stalled = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stalled
        .write_all(head("content-length: 67108864\r\n").as_bytes())
        .await
        .unwrap();
    stalled.write_all(&vec![b' '; 1024]).await.unwrap();
    let mut chunked = tokio::net::TcpStream::connect(&addr).await.unwrap();
    chunked
        .write_all(head("transfer-encoding: chunked\r\n").as_bytes())
        .await
        .unwrap();
    chunked.write_all(b"400\r\n").await.unwrap();
    chunked.write_all(&vec![b' '; 1024]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Others are answered while both hang.
    let body = json!({"model": "claude-sonnet-4.6", "max_tokens": 16,
        "messages": [{"role": "user", "content": "what time is it"}]});
    for _ in 0..3 {
        let r = reqwest::Client::new()
            .post(format!("{}/v1/messages", g.base))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }
    // Then each stalled upload is answered 408 and its connection closed.
    for mut conn in [stalled, chunked] {
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut answer))
            .await
            .expect("the gateway closes a stalled upload")
            .unwrap();
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 408"), "{text}");
        assert!(
            text.to_ascii_lowercase().contains("connection: close"),
            "{text}"
        );
    }
    // A drip: one byte every 100 ms never reaches the minimum rate.
    let mut drip = tokio::net::TcpStream::connect(&addr).await.unwrap();
    drip.write_all(head("content-length: 100000\r\n").as_bytes())
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let mut answer = [0u8; 12];
    loop {
        if drip.write_all(b" ").await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        if let Ok(Ok(n)) =
            tokio::time::timeout(Duration::from_millis(1), drip.peek(&mut answer)).await
        {
            if n > 0 {
                break;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the drip was never cut off"
        );
    }
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), drip.read_to_end(&mut answer)).await;
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 408"));
}
