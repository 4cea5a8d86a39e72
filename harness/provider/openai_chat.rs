//! OpenAI Chat Completions (`POST /v1/chat/completions`): a system message, `{"type":
//! "function", "function": {...}}` tools, `tool_calls` and `role: tool` results, usage with
//! cached tokens inside `prompt_tokens`, and the `data:`-only stream ending in `[DONE]`.

use super::tools::{Frame, ToolEntry};
use super::{
    sse, sse_documents, CacheMark, ClientRead, Endpoint, ObservedUsage, Provider, Reply,
    RequestParts, ToolCall, ToolLimit, UsageReader,
};
use serde_json::{json, Value};

/// Most tools in one request (the providers' documentation).
pub const MAX_TOOLS: usize = 128;

pub struct OpenaiChat;

fn usage(reply: &Reply) -> Value {
    let u = reply.usage;
    let prompt = u.total_input();
    json!({"prompt_tokens": prompt, "completion_tokens": u.output, "total_tokens": prompt + u.output,
           "prompt_tokens_details": {"cached_tokens": u.cached_input, "cache_write_tokens": u.cache_write}})
}

/// The assistant message and finish reason for an answer's Anthropic-form blocks.
fn message(reply: &Reply) -> (Value, &'static str) {
    let text: String = reply
        .content
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    let calls: Vec<Value> = reply
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

impl Provider for OpenaiChat {
    fn name(&self) -> &'static str {
        "openai-chat"
    }

    fn endpoints(&self) -> &'static [Endpoint] {
        &[Endpoint {
            path: "/v1/chat/completions",
            count_only: false,
        }]
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
            ("tools", Value::Null),
            (
                "messages",
                Value::Array(vec![
                    json!({"role": "system", "content": r.system.join("\n\n")}),
                    r.user,
                ]),
            ),
        ])
    }

    fn definition_frame(&self) -> &'static Frame {
        &Frame {
            open: "{\"type\":\"function\",\"function\":{\"name\":",
            name_to_description: ",\"description\":",
            description_to_schema: ",\"parameters\":",
            after_schema: "}",
            close: "}",
            kind: Some("function"),
        }
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
                ("type", "function".into()),
                (
                    "function",
                    super::object([
                        ("name", name.into()),
                        ("description", description.into()),
                        ("parameters", schema),
                    ]),
                ),
            ]),
            defer,
        )
    }

    fn user_message(&self, context: Option<&str>, text: &str) -> Value {
        match context {
            Some(c) => json!({"role": "user", "content": format!("{c}\n\n{text}")}),
            None => json!({"role": "user", "content": text}),
        }
    }

    fn tool_call(&self, id: &str, name: &str, input: Value) -> Value {
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": name, "arguments": crate::json::compact(&input)}}
        ]})
    }

    fn tool_result(&self, id: &str, _name: &str, text: &str, _references: &[String]) -> Value {
        json!({"role": "tool", "tool_call_id": id, "content": text})
    }

    fn read_answer(&self, answer: &Value) -> Result<ClientRead, String> {
        let message = answer
            .pointer("/choices/0/message")
            .filter(|m| m.is_object())
            .ok_or("the answer has no `choices[0].message`")?;
        let calls = message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| ToolCall {
                id: c["id"].as_str().unwrap_or("").to_string(),
                name: c["function"]["name"].as_str().unwrap_or("").to_string(),
                input: super::arguments(&c["function"]["arguments"]),
            })
            .collect();
        Ok(ClientRead {
            items: vec![message.clone()],
            calls,
        })
    }

    fn result_items(&self, results: Vec<Value>) -> Vec<Value> {
        // One `tool` message per result.
        results
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        super::openai_error(status, message)
    }

    fn answer(&self, model: &str, id: u64, reply: Reply) -> Value {
        let (message, finish) = message(&reply);
        json!({"id": format!("chatcmpl-mock-{id}"), "object": "chat.completion", "created": crate::clock::now().0, "model": model,
               "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}], "usage": usage(&reply)})
    }

    fn events(&self, model: &str, id: u64, reply: Reply, request: &Value) -> Vec<String> {
        let include_usage = request
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let mut out = Vec::new();
        let base = |delta: Value, finish: Value| {
            json!({"id": format!("chatcmpl-mock-{id}"), "object": "chat.completion.chunk",
            "created": crate::clock::now().0, "model": model, "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
        };
        let (message, finish) = message(&reply);
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
                "model": model, "choices": [], "usage": usage(&reply)})));
        }
        out.push("data: [DONE]\n\n".to_string());
        out
    }

    fn stream_complete(&self, data: &str) -> bool {
        data.trim() == "[DONE]"
    }

    fn observed_usage(&self, text: &str, streamed: bool) -> Option<ObservedUsage> {
        let docs = if streamed {
            sse_documents(text)
        } else {
            vec![serde_json::from_str(text).ok()?]
        };
        docs.iter()
            .rev()
            .find_map(|d| d.get("usage").filter(|u| !u.is_null()))
            .map(|u| {
                let mut r = UsageReader::default();
                ObservedUsage {
                    input: r.count(u, "prompt_tokens"),
                    cached: r.count_at(u, "/prompt_tokens_details/cached_tokens"),
                    written: r.count_at(u, "/prompt_tokens_details/cache_write_tokens"),
                    output: r.count(u, "completion_tokens"),
                    unreadable: r.garbled,
                }
            })
    }

    fn auth_header(&self, key: &str) -> (&'static str, String) {
        ("authorization", format!("Bearer {key}"))
    }

    fn limits(&self, tools: &[ToolEntry], max_tools: Option<usize>) -> Vec<String> {
        let max = max_tools.unwrap_or(MAX_TOOLS);
        let mut out = Vec::new();
        if tools.len() > max {
            out.push(format!(
                "{} tools exceed OpenAI's limit of {max} per request",
                tools.len()
            ));
        }
        // Tool search and deferred loading exist only in the Responses API (the providers' documentation).
        if tools
            .iter()
            .map(ToolEntry::as_ref)
            .any(|t| t.is_deferred() || t.kind() == Some("tool_search") || t.is_namespace())
        {
            out.push(
                "Chat Completions has no deferred loading or tool search: use the Responses API"
                    .to_string(),
            );
        }
        out
    }

    fn tool_limit(&self) -> ToolLimit {
        ToolLimit {
            tools: MAX_TOOLS,
            label: format!("OpenAI: {MAX_TOOLS} tools per request"),
        }
    }

    fn place_cache_marks(
        &self,
        _body: &mut Value,
        _tools: &mut Vec<ToolEntry>,
        _marks: &[CacheMark],
    ) {
        // Caching is automatic: there is nothing to mark.
    }

    fn default_card(&self) -> &'static str {
        "gpt-4o"
    }
}
