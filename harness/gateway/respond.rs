//! Provider answer formats: Anthropic Messages and OpenAI Chat Completions, whole or as
//! server-sent events, and each provider's error shape.

use super::mock::Answer;
use crate::wire::Format;
use serde_json::{json, Value};

/// A provider-format error body.
pub fn error_body(format: Format, status: u16, message: &str) -> Value {
    match format {
        Format::AnthropicMessages => {
            let ty = match status {
                400 | 413 | 422 => "invalid_request_error",
                401 => "authentication_error",
                404 => "not_found_error",
                429 => "rate_limit_error",
                529 | 503 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": ty, "message": message}})
        }
        Format::OpenaiChat => {
            let ty = if status < 500 {
                "invalid_request_error"
            } else {
                "server_error"
            };
            json!({"error": {"message": message, "type": ty, "param": null, "code": null}})
        }
    }
}

fn anthropic_usage(a: &Answer) -> Value {
    json!({"input_tokens": a.usage.uncached_input, "cache_creation_input_tokens": a.usage.cache_write,
           "cache_read_input_tokens": a.usage.cached_input, "output_tokens": a.usage.output})
}

fn openai_usage(a: &Answer) -> Value {
    let prompt = a.usage.total_input();
    json!({"prompt_tokens": prompt, "completion_tokens": a.usage.output, "total_tokens": prompt + a.usage.output,
           "prompt_tokens_details": {"cached_tokens": a.usage.cached_input}})
}

fn openai_message(a: &Answer) -> (Value, &'static str) {
    let text: String = a
        .content
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    let calls: Vec<Value> = a
        .content
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| json!({"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": crate::json::compact(&b["input"])}}))
        .collect();
    let mut m = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    if !calls.is_empty() {
        m["tool_calls"] = json!(calls);
    }
    (m, finish)
}

/// The whole answer.
pub fn body(format: Format, model: &str, id: u64, a: &Answer) -> Value {
    match format {
        Format::AnthropicMessages => json!({
            "id": format!("msg_mock_{id}"), "type": "message", "role": "assistant", "model": model,
            "content": a.content, "stop_reason": a.stop_reason, "stop_sequence": null, "usage": anthropic_usage(a),
        }),
        Format::OpenaiChat => {
            let (message, finish) = openai_message(a);
            json!({"id": format!("chatcmpl-mock-{id}"), "object": "chat.completion", "created": crate::clock::now().0, "model": model,
                   "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}], "usage": openai_usage(a)})
        }
    }
}

fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(e) => format!("event: {e}\ndata: {}\n\n", crate::json::compact(data)),
        None => format!("data: {}\n\n", crate::json::compact(data)),
    }
}

/// The answer as server-sent events, in the provider's event grammar.
pub fn events(
    format: Format,
    model: &str,
    id: u64,
    a: &Answer,
    include_usage: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    match format {
        Format::AnthropicMessages => {
            let mut start_usage = anthropic_usage(a);
            start_usage["output_tokens"] = json!(1);
            out.push(sse(Some("message_start"), &json!({"type": "message_start", "message": {
                "id": format!("msg_mock_{id}"), "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": null, "stop_sequence": null, "usage": start_usage}})));
            for (i, b) in a.content.iter().enumerate() {
                match b["type"].as_str() {
                    Some("text") => {
                        out.push(sse(Some("content_block_start"), &json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})));
                        out.push(sse(Some("content_block_delta"), &json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}})));
                    }
                    Some("tool_use") => {
                        out.push(sse(Some("content_block_start"), &json!({"type": "content_block_start", "index": i,
                            "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}})));
                        out.push(sse(Some("content_block_delta"), &json!({"type": "content_block_delta", "index": i,
                            "delta": {"type": "input_json_delta", "partial_json": crate::json::compact(&b["input"])}})));
                    }
                    _ => out.push(sse(
                        Some("content_block_start"),
                        &json!({"type": "content_block_start", "index": i, "content_block": b}),
                    )),
                }
                out.push(sse(
                    Some("content_block_stop"),
                    &json!({"type": "content_block_stop", "index": i}),
                ));
            }
            out.push(sse(Some("message_delta"), &json!({"type": "message_delta", "delta": {"stop_reason": a.stop_reason, "stop_sequence": null},
                "usage": {"output_tokens": a.usage.output}})));
            out.push(sse(Some("message_stop"), &json!({"type": "message_stop"})));
        }
        Format::OpenaiChat => {
            let base = |delta: Value, finish: Value| {
                json!({"id": format!("chatcmpl-mock-{id}"), "object": "chat.completion.chunk",
                "created": crate::clock::now().0, "model": model, "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
            };
            let (message, finish) = openai_message(a);
            out.push(sse(
                None,
                &base(json!({"role": "assistant", "content": ""}), Value::Null),
            ));
            if let Some(t) = message["content"].as_str() {
                out.push(sse(None, &base(json!({"content": t}), Value::Null)));
            }
            for (i, c) in message["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                out.push(sse(None, &base(json!({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                    "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}}]}), Value::Null)));
            }
            out.push(sse(None, &base(json!({}), json!(finish))));
            if include_usage {
                out.push(sse(None, &json!({"id": format!("chatcmpl-mock-{id}"), "object": "chat.completion.chunk", "created": crate::clock::now().0,
                    "model": model, "choices": [], "usage": openai_usage(a)})));
            }
            out.push("data: [DONE]\n\n".to_string());
        }
    }
    out
}

/// Usage read from a provider's answer (whole JSON or the text of an event stream):
/// (total input, cached, cache written, output).
pub fn observed_usage(format: Format, text: &str, streamed: bool) -> Option<(u64, u64, u64, u64)> {
    let mut docs: Vec<Value> = Vec::new();
    if streamed {
        for line in text.lines() {
            if let Some(d) = line.strip_prefix("data:") {
                if let Ok(v) = serde_json::from_str::<Value>(d.trim()) {
                    docs.push(v);
                }
            }
        }
    } else {
        docs.push(serde_json::from_str(text).ok()?);
    }
    let g = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    let mut found = None;
    match format {
        Format::AnthropicMessages => {
            let (mut input, mut cached, mut written, mut output) = (0, 0, 0, 0);
            for d in &docs {
                let u = d.get("usage").or_else(|| d.pointer("/message/usage"));
                if let Some(u) = u {
                    if u.get("input_tokens").is_some() {
                        input = g(u, "input_tokens");
                        cached = g(u, "cache_read_input_tokens");
                        written = g(u, "cache_creation_input_tokens");
                    }
                    output = output.max(g(u, "output_tokens"));
                    found = Some(());
                }
            }
            found.map(|_| (input + cached + written, cached, written, output))
        }
        Format::OpenaiChat => docs
            .iter()
            .rev()
            .find_map(|d| d.get("usage").filter(|u| !u.is_null()))
            .map(|u| {
                (
                    g(u, "prompt_tokens"),
                    u.pointer("/prompt_tokens_details/cached_tokens")
                        .and_then(Value::as_u64)
                        .unwrap_or(0),
                    0,
                    g(u, "completion_tokens"),
                )
            }),
    }
}
