//! Anthropic Messages (`POST /v1/messages`, `POST /v1/messages/count_tokens`): system blocks,
//! `{name, description, input_schema}` tools with `defer_loading`, `tool_use` /
//! `tool_result` blocks with `tool_reference` expansion, usage split into uncached, cache-read
//! and cache-write input, and the `event:`-named stream grammar.

use super::{
    count, sse, sse_documents, CacheMark, ClientRead, Endpoint, ObservedUsage, Provider, Reply,
    RequestParts, ToolCall, ToolLimit,
};
use serde_json::{json, Value};

/// Most tools with `defer_loading` in one request (FACTS section 3).
pub const MAX_DEFERRED: usize = 10_000;

pub struct AnthropicMessages;

fn usage(reply: &Reply) -> Value {
    let u = reply.usage;
    json!({"input_tokens": u.uncached_input, "cache_creation_input_tokens": u.cache_write,
           "cache_read_input_tokens": u.cached_input, "output_tokens": u.output})
}

impl Provider for AnthropicMessages {
    fn name(&self) -> &'static str {
        "anthropic-messages"
    }

    fn endpoints(&self) -> &'static [Endpoint] {
        &[
            Endpoint {
                path: "/v1/messages",
                count_only: false,
            },
            Endpoint {
                path: "/v1/messages/count_tokens",
                count_only: true,
            },
        ]
    }

    fn conversation_key(&self) -> &'static str {
        "messages"
    }

    fn check_shape(&self, body: &mut Value) -> Result<(), String> {
        super::require_messages(body)
    }

    fn request(&self, r: RequestParts) -> Value {
        super::object([
            ("model", r.model.into()),
            ("max_tokens", r.max_tokens.into()),
            ("tools", Value::Array(r.tools)),
            ("system", json!([{"type": "text", "text": r.system}])),
            ("messages", Value::Array(vec![r.user])),
        ])
    }

    fn function_definition(
        &self,
        name: &str,
        description: &str,
        schema: Value,
        defer: bool,
    ) -> Value {
        super::deferrable(
            super::object([
                ("name", name.into()),
                ("description", description.into()),
                ("input_schema", schema),
            ]),
            defer,
        )
    }

    fn user_message(&self, context: Option<&str>, text: &str) -> Value {
        let mut blocks: Vec<Value> = context
            .map(|c| json!({"type": "text", "text": c}))
            .into_iter()
            .collect();
        blocks.push(json!({"type": "text", "text": text}));
        json!({"role": "user", "content": blocks})
    }

    fn tool_call(&self, id: &str, name: &str, input: Value) -> Value {
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
    }

    fn tool_result(&self, id: &str, text: &str, references: &[String]) -> Value {
        let mut content = vec![json!({"type": "text", "text": text})];
        content.extend(
            references
                .iter()
                .map(|r| json!({"type": "tool_reference", "tool_name": r})),
        );
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content}]})
    }

    fn read_answer(&self, answer: &Value) -> Result<ClientRead, String> {
        let content = answer
            .get("content")
            .and_then(Value::as_array)
            .ok_or("the answer has no `content` array")?;
        let calls = content
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| ToolCall {
                id: b["id"].as_str().unwrap_or("").to_string(),
                name: b["name"].as_str().unwrap_or("").to_string(),
                input: b["input"].clone(),
            })
            .collect();
        Ok(ClientRead {
            items: vec![json!({"role": "assistant", "content": content})],
            calls,
        })
    }

    fn result_items(&self, results: Vec<Value>) -> Vec<Value> {
        // Every result of a round goes back in one user message.
        let blocks: Vec<Value> = results
            .into_iter()
            .flat_map(|r| match r.get("content").and_then(Value::as_array) {
                Some(c) => c.clone(),
                None => Vec::new(),
            })
            .collect();
        match blocks.is_empty() {
            true => Vec::new(),
            false => vec![json!({"role": "user", "content": blocks})],
        }
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
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

    fn answer(&self, model: &str, id: u64, reply: Reply) -> Value {
        json!({
            "id": format!("msg_mock_{id}"), "type": "message", "role": "assistant", "model": model,
            "content": reply.content, "stop_reason": reply.stop_reason, "stop_sequence": null, "usage": usage(&reply),
        })
    }

    fn events(&self, model: &str, id: u64, reply: Reply, _request: &Value) -> Vec<String> {
        let mut out = Vec::new();
        let mut start_usage = usage(&reply);
        start_usage["output_tokens"] = json!(1);
        out.push(sse(Some("message_start"), &json!({"type": "message_start", "message": {
            "id": format!("msg_mock_{id}"), "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": start_usage}})));
        for (i, b) in reply.content.iter().enumerate() {
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
        out.push(sse(Some("message_delta"), &json!({"type": "message_delta", "delta": {"stop_reason": reply.stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": reply.usage.output}})));
        out.push(sse(Some("message_stop"), &json!({"type": "message_stop"})));
        out
    }

    fn stream_complete(&self, data: &str) -> bool {
        data.contains("\"message_stop\"")
    }

    fn observed_usage(&self, text: &str, streamed: bool) -> Option<ObservedUsage> {
        let docs = if streamed {
            sse_documents(text)
        } else {
            vec![serde_json::from_str(text).ok()?]
        };
        let mut found = None;
        let mut u = ObservedUsage::default();
        for d in &docs {
            let Some(usage) = d.get("usage").or_else(|| d.pointer("/message/usage")) else {
                continue;
            };
            if usage.get("input_tokens").is_some() {
                u.input = count(usage, "input_tokens");
                u.cached = count(usage, "cache_read_input_tokens");
                u.written = count(usage, "cache_creation_input_tokens");
            }
            u.output = u.output.max(count(usage, "output_tokens"));
            found = Some(());
        }
        found.map(|_| ObservedUsage {
            // Saturating: a hostile upstream's u64::MAX must not wrap; the gateway flags it.
            input: u.input.saturating_add(u.cached).saturating_add(u.written),
            ..u
        })
    }

    fn auth_header(&self, key: &str) -> (&'static str, String) {
        ("x-api-key", key.to_string())
    }

    fn limits(&self, tools: &[Value], _max_tools: Option<usize>) -> Vec<String> {
        let deferred = tools.iter().filter(|t| super::is_deferred(t)).count();
        let mut out = Vec::new();
        if deferred > MAX_DEFERRED {
            out.push(format!(
                "{deferred} deferred tools exceed Anthropic's limit of {MAX_DEFERRED}"
            ));
        }
        if deferred > 0 && deferred == tools.len() {
            out.push("every tool is deferred: at least one tool must be loaded".to_string());
        }
        // Tool types of another provider's API are refused (400), as any unknown type is.
        if tools.iter().any(super::is_namespace) {
            out.push(
                "Anthropic Messages has no `namespace` tool type: namespaces exist only in the OpenAI Responses API"
                    .to_string(),
            );
        }
        out
    }

    fn tool_limit(&self) -> ToolLimit {
        ToolLimit {
            tools: MAX_DEFERRED,
            label: format!(
                "Anthropic: {},{:03} deferred tools",
                MAX_DEFERRED / 1000,
                MAX_DEFERRED % 1000
            ),
        }
    }

    fn place_cache_marks(&self, body: &mut Value, marks: &[CacheMark]) {
        let ephemeral = || json!({"type": "ephemeral"});
        // The newest-message mark moves: clear the marks earlier rounds left on messages.
        if let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) {
            for m in messages.iter_mut() {
                if let Some(blocks) = m.get_mut("content").and_then(Value::as_array_mut) {
                    for b in blocks {
                        if let Some(o) = b.as_object_mut() {
                            o.remove("cache_control");
                        }
                    }
                }
            }
        }
        for mark in marks {
            let target = match mark {
                CacheMark::Tools => body
                    .get_mut("tools")
                    .and_then(Value::as_array_mut)
                    .and_then(|t| t.last_mut()),
                CacheMark::System => body
                    .get_mut("system")
                    .and_then(Value::as_array_mut)
                    .and_then(|s| s.last_mut()),
                CacheMark::LastMessage => body
                    .get_mut("messages")
                    .and_then(Value::as_array_mut)
                    .and_then(|m| m.last_mut())
                    .and_then(|m| m.get_mut("content"))
                    .and_then(Value::as_array_mut)
                    .and_then(|c| c.last_mut()),
            };
            if let Some(o) = target.and_then(Value::as_object_mut) {
                o.insert("cache_control".into(), ephemeral());
            }
        }
    }

    fn default_card(&self) -> &'static str {
        // claude-sonnet-4-5 reaches end of life on 2026-11-30 (the anthropic Python SDK
        // 2.14.0's DEPRECATED_MODELS); claude-sonnet-4-6 is current there.
        "claude-sonnet-4.6"
    }
}
