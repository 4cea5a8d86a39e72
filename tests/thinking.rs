//! Thinking carried back through the gateway: a Gemini 3 request on the Developer API that
//! returns an earlier answer's `thoughtSignature` is billed that answer's thoughts again (from
//! what the gateway saw of the answer), on the mock and forwarding; on Vertex AI it is not; a
//! signature the gateway never saw is flagged, never billed as nothing. Network: 127.0.0.1 on
//! port 0 only.

mod common;
#[path = "support/upstream.rs"]
mod upstream;

use serde_json::{json, Value};
use std::time::Duration;
use toolcost::gateway::{log, Upstream};
use upstream::{End, Reply};

const DEV: &str = "/v1beta/models/gemini-3-flash:generateContent";
const DEV_STREAM: &str = "/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse";
const VERTEX: &str =
    "/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-3-flash:generateContent";

async fn post(base: &str, path: &str, body: &Value, next: Option<&str>) -> (u16, Value) {
    let mut rb = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(n) = next {
        rb = rb.header("x-toolcost-next", n);
    }
    let r = rb.send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap_or_default();
    // A stream's events are read as the last one's document.
    let v = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .next()
            .unwrap_or(Value::Null)
    });
    (status, v)
}

/// The log's rows once there are `n` complete ones (a bounded wait).
async fn rows(log_path: &std::path::Path, n: usize) -> Vec<log::LogRow> {
    for _ in 0..200 {
        let rows = log::read_all(log_path).unwrap_or_default();
        if rows.len() >= n && rows.iter().all(|r| r.usage_source != log::IN_FLIGHT) {
            return rows;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    log::read_all(log_path).unwrap_or_default()
}

fn question() -> Value {
    json!({"role": "user", "parts": [{"text": "What is the weather in Paris today?"}]})
}

/// The second request of a conversation: the first answer's model turn, signature and all,
/// then the call's result.
fn second(signature: &str) -> Value {
    json!({"contents": [
        question(),
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                                     "thoughtSignature": signature}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"temp": 21}}}]}],
        "tools": [{"functionDeclarations": [{"name": "get_weather", "description": "Weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]}]})
}

fn first() -> Value {
    let mut b = second("x");
    b["contents"] = json!([question()]);
    b
}

/// Google's sentinel: a signature that carries no thinking, the same body otherwise.
const SKIP: &str = "skip_thought_signature_validator";

fn signature_of(answer: &Value) -> String {
    answer["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
        .as_str()
        .unwrap_or_else(|| panic!("an answer that thought is signed: {answer}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mock_bills_a_returned_signature_its_answers_thoughts_and_vertex_does_not() {
    let g = common::start_gateway(Upstream::Mock, |_| {}).await;
    let think = r#"{"tool": "get_weather", "input": {"city": "Paris"}, "thoughts": 640}"#;
    let mut n = 0;
    for (path, rebilled) in [(DEV, 640), (DEV_STREAM, 640), (VERTEX, 0)] {
        let (st, answer) = post(&g.base, path, &first(), Some(think)).await;
        assert_eq!(st, 200, "{answer}");
        let sig = signature_of(&answer);
        // The same body with the sentinel in the signature's place: what the text bills.
        let (st, _) = post(&g.base, path, &second(SKIP), None).await;
        assert_eq!(st, 200);
        let (st, _) = post(&g.base, path, &second(&sig), None).await;
        assert_eq!(st, 200);
        n += 3;
        let rows = rows(&g.log, n).await;
        let [first_row, plain, returned] = &rows[n - 3..] else {
            panic!("three rows")
        };
        assert!(
            first_row.output_tokens >= 640,
            "thinking is output: {first_row:?}"
        );
        assert_eq!(
            returned.input_tokens,
            plain.input_tokens + rebilled,
            "{path}: {returned:?}"
        );
        let label = returned.estimate_label.clone().unwrap_or_default();
        assert_eq!(
            label.contains("+640 thought tokens"),
            rebilled > 0,
            "{label}"
        );
    }
    // A signature the gateway never issued: flagged, and billed as the text alone.
    let (st, _) = post(&g.base, DEV, &second("bm90LXNlZW4="), None).await;
    assert_eq!(st, 200);
    let rows = rows(&g.log, n + 1).await;
    let meta: Value = serde_json::from_str(&rows[n].metadata).unwrap();
    let warning = meta["toolcost_warning"].as_str().unwrap_or("");
    assert!(warning.contains("did not see"), "{warning}");
}

fn answer_with_thoughts(sig: &str, thoughts: u64) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": sig}]},
            "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 12,
                          "thoughtsTokenCount": thoughts, "totalTokenCount": 62 + thoughts}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarding_bills_the_thoughts_the_upstream_reported_whole_or_streamed() {
    let up = upstream::serve(|r| {
        let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let turns = body["contents"].as_array().map_or(0, Vec::len);
        if turns > 1 {
            return Reply::json(200, r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"21 C"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":900,"candidatesTokenCount":3,"totalTokenCount":903}}"#);
        }
        let streamed = r.path.contains("alt=sse");
        let sig = if streamed { "c3RyZWFtZWQ=" } else { "d2hvbGU=" };
        let answer = answer_with_thoughts(sig, 777);
        if !streamed {
            return Reply::json(200, &answer.to_string());
        }
        // The signature in the first event, the thoughts in the last one's usage.
        let mut head = answer.clone();
        head["usageMetadata"] = json!({"promptTokenCount": 50, "candidatesTokenCount": 0, "totalTokenCount": 50});
        head["candidates"][0].as_object_mut().unwrap().remove("finishReason");
        let mut tail = answer;
        tail["candidates"][0]["content"]["parts"] = json!([{"text": ""}]);
        Reply::Stream {
            status: 200,
            content_type: "text/event-stream".into(),
            chunks: [head, tail]
                .iter()
                .map(|e| (Duration::ZERO, format!("data: {e}\r\n\r\n").into_bytes()))
                .collect(),
            end: End::Clean,
        }
    })
    .await;
    let g = common::start_gateway(Upstream::Url(up), |_| {}).await;
    let mut n = 0;
    for (path, sig) in [(DEV, "d2hvbGU="), (DEV_STREAM, "c3RyZWFtZWQ=")] {
        let (st, _) = post(&g.base, path, &first(), None).await;
        assert_eq!(st, 200);
        let (st, _) = post(&g.base, DEV, &second(SKIP), None).await;
        assert_eq!(st, 200);
        let (st, _) = post(&g.base, DEV, &second(sig), None).await;
        assert_eq!(st, 200);
        n += 3;
        let rows = rows(&g.log, n).await;
        let (plain, returned) = (&rows[n - 2], &rows[n - 1]);
        assert_eq!(
            returned.estimated_input_tokens,
            plain.estimated_input_tokens.map(|t| t + 777),
            "{path}: {returned:?}"
        );
        assert!(returned
            .estimate_label
            .as_deref()
            .unwrap_or("")
            .contains("+777 thought tokens"));
    }
}

/// Responses: reasoning items sent back in the current tool chain (by hand, or kept by a
/// `previous_response_id` chain) are billed the reasoning their answer reported; after a new
/// user message they are dropped and bill nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_reasoning_in_the_tool_chain_is_billed_again() {
    let g = common::start_gateway(Upstream::Mock, |_| {}).await;
    let tools = json!([{"type": "function", "name": "get_weather", "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]);
    let q = json!({"role": "user", "content": "What is the weather in Paris today?"});
    let think = r#"{"tool": "get_weather", "input": {"city": "Paris"}, "thoughts": 450}"#;
    let (st, answer) = post(
        &g.base,
        "/v1/responses",
        &json!({"model": "gpt-5.4", "input": [q], "tools": tools}),
        Some(think),
    )
    .await;
    assert_eq!(st, 200, "{answer}");
    assert_eq!(
        answer["usage"]["output_tokens_details"]["reasoning_tokens"],
        450
    );
    let output = answer["output"].as_array().unwrap().clone();
    let reasoning = output[0].clone();
    assert_eq!(reasoning["type"], "reasoning");
    let call = output[1].clone();
    let result =
        json!({"type": "function_call_output", "call_id": call["call_id"], "output": "21 C"});
    let by_hand = |items: Vec<Value>| json!({"model": "gpt-5.4", "input": items, "tools": tools});
    let bodies = [
        // What the text bills: the chain without its reasoning.
        by_hand(vec![q.clone(), call.clone(), result.clone()]),
        // The chain as the SDK sends it back: billed 450 more.
        by_hand(vec![
            q.clone(),
            reasoning.clone(),
            call.clone(),
            result.clone(),
        ]),
        // The same, by previous_response_id: the gateway holds the chain, reasoning and all.
        json!({"model": "gpt-5.4", "previous_response_id": answer["id"], "input": [result], "tools": tools}),
        // After a new user message the earlier reasoning is dropped.
        by_hand(vec![
            q.clone(),
            reasoning.clone(),
            call.clone(),
            result.clone(),
            json!({"role": "user", "content": "and tomorrow?"}),
        ]),
        by_hand(vec![
            q.clone(),
            call.clone(),
            result.clone(),
            json!({"role": "user", "content": "and tomorrow?"}),
        ]),
    ];
    for b in &bodies {
        let (st, text) = post(&g.base, "/v1/responses", b, None).await;
        assert_eq!(st, 200, "{text}");
    }
    let rows = rows(&g.log, 1 + bodies.len()).await;
    let input: Vec<u64> = rows[1..].iter().map(|r| r.input_tokens).collect();
    assert_eq!(input[1], input[0] + 450, "{input:?}");
    assert_eq!(input[2], input[1], "{input:?}");
    assert_eq!(input[3], input[4], "{input:?}");
}
