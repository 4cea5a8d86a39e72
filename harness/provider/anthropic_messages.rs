//! Anthropic Messages (`POST /v1/messages`, `POST /v1/messages/count_tokens`): system blocks,
//! `{name, description, input_schema}` tools with `defer_loading`, `tool_use` /
//! `tool_result` blocks with `tool_reference` expansion, usage split into uncached, cache-read
//! and cache-write input, and the `event:`-named stream grammar.

use super::tools::{Frame, ToolEntry};
use super::{
    sse, sse_documents, CacheMark, ClientRead, Endpoint, ObservedUsage, Provider, Reply,
    RequestParts, ToolCall, ToolLimit, UsageReader,
};
use serde_json::{json, Value};

/// Most tools with `defer_loading` in one request (the providers' documentation).
pub const MAX_DEFERRED: usize = 10_000;

pub struct AnthropicMessages;

/// The `tool_choice` types Messages takes.
const TOOL_CHOICES: &[&str] = &["auto", "any", "tool", "none"];

/// The code-execution tool versions that may call tools from code (`allowed_callers`,
/// anthropic-sdk-python 2.14.0 `BetaToolParam`).
pub const CODE_EXECUTION: &[&str] = &[
    "code_execution_20250825",
    "code_execution_20260120",
    "code_execution_20260521",
];

/// What Messages refuses in a body beyond its shape, as the mock answers it (the forward gateway
/// lets the provider say). Rules from Anthropic's docs on mid-conversation system messages and
/// tool changes and on programmatic tool calling (read 2026-12-02 through the stored docs
/// corpus) and the SDK's types; the wording of each message is toolcost's (assumed), the codes
/// named are the docs':
/// - a role other than user, assistant or system;
/// - a system message first, or not right after a user turn (or another system message);
/// - a `tool_addition` / `tool_removal` block outside a system message;
/// - a `tool_reference` that names no declared tool and no tool added earlier
///   (`tool_reference_unresolved`);
/// - a `tool_choice` type of another API (OpenAI's `allowed_tools`);
/// - an `allowed_callers` entry that is neither `direct` nor a code-execution tool in `tools`;
/// - a reply to tool calls made from code that holds anything but `tool_result` blocks.
///
/// `tools`: the entries of the body's `tools` array, where it has one (`None`: the body's own
/// `tools` member, if any, is what was sent).
pub fn refusals(body: &Value, tools: Option<&[ToolEntry]>) -> Result<(), String> {
    let owned = super::tools::tool_values(body, tools);
    let tools: Vec<&Value> = owned.iter().map(|t| t.as_ref()).collect();
    if let Some(choice) = body.pointer("/tool_choice/type").and_then(Value::as_str) {
        if !TOOL_CHOICES.contains(&choice) {
            return Err(format!(
                "tool_choice.type: `{choice}` is not one of auto, any, tool, none"
            ));
        }
    }
    let tool_types: Vec<&str> = tools.iter().filter_map(|t| t["type"].as_str()).collect();
    for (i, t) in tools.iter().enumerate() {
        for caller in t
            .get("allowed_callers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let c = caller.as_str().unwrap_or("");
            if c != "direct" && !(CODE_EXECUTION.contains(&c) && tool_types.contains(&c)) {
                return Err(format!(
                    "tools.{i}.allowed_callers: `{c}` needs that code execution tool in `tools`"
                ));
            }
        }
    }
    let mut known: std::collections::HashSet<&str> =
        tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        let pending = i.checked_sub(1).is_some_and(|p| {
            messages[p]["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(super::called_from_code))
        });
        let only_results = m["content"]
            .as_array()
            .is_some_and(|c| c.iter().all(|b| b["type"] == "tool_result"));
        if pending && role == "user" && !only_results {
            return Err(format!(
                "messages.{i}: while tool calls from code are pending, the reply holds tool_result blocks only"
            ));
        }
        match role {
            "user" | "assistant" => {}
            "system" => {
                let after = i.checked_sub(1).map(|p| messages[p]["role"].as_str());
                if !matches!(after, Some(Some("user" | "system"))) {
                    return Err(format!(
                        "messages.{i}: a system message must follow a user turn"
                    ));
                }
            }
            _ => {
                return Err(format!(
                    "messages.{i}.role: `{role}` is not one of user, assistant, system"
                ))
            }
        }
        for (j, b) in m
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let ty = b["type"].as_str().unwrap_or("");
            if !matches!(ty, "tool_addition" | "tool_removal") {
                continue;
            }
            if role != "system" {
                return Err(format!(
                    "messages.{i}.content.{j}: `{ty}` blocks are accepted only in system messages"
                ));
            }
            match b["tool"]["type"].as_str() {
                Some("tool_reference") => {
                    let name = b["tool"]["name"].as_str().unwrap_or("");
                    if !known.contains(name) {
                        return Err(format!(
                            "messages.{i}.content.{j}: tool_reference_unresolved: no tool named `{name}` is declared in `tools` or added earlier"
                        ));
                    }
                }
                Some("tool_definition") if ty == "tool_addition" => {
                    match b["tool"]["definition"]["name"].as_str() {
                        Some(name) => {
                            known.insert(name);
                        }
                        None => {
                            return Err(format!(
                                "messages.{i}.content.{j}.tool.definition: a definition needs a `name`"
                            ))
                        }
                    }
                }
                // MCP references are resolved against MCP servers the mock does not have.
                Some("mcp_tool_reference" | "mcp_toolset_reference") => {}
                other => {
                    return Err(format!(
                        "messages.{i}.content.{j}.tool.type: `{}` is not a tool change this block takes",
                        other.unwrap_or("(none)")
                    ))
                }
            }
        }
    }
    Ok(())
}

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
            // Claude on Vertex AI: `:rawPredict` and `:streamRawPredict` of the model, and
            // `count-tokens:rawPredict` (the model then in the body).
            Endpoint {
                path: "/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{call}",
                count_only: false,
            },
            Endpoint {
                path: "/v1beta1/projects/{project}/locations/{location}/publishers/anthropic/models/{call}",
                count_only: false,
            },
        ]
    }

    fn route(
        &self,
        endpoint: Endpoint,
        path: &str,
        query: Option<&str>,
    ) -> Result<super::Route, String> {
        let Some(rest) = super::vertex::model_method(path, "anthropic")? else {
            return Ok(super::Route::plain(endpoint));
        };
        let (model, method) = rest.rsplit_once(':').ok_or_else(|| {
            format!("`{path}`: name a method after the model (`:rawPredict`, `:streamRawPredict`)")
        })?;
        let stream = match method {
            "rawPredict" => false,
            "streamRawPredict" => true,
            other => {
                return Err(format!(
                    "`{other}` is not a method the gateway serves for Claude on Vertex AI: rawPredict, streamRawPredict"
                ))
            }
        };
        if model.is_empty() || model.len() > 200 || model.contains('/') {
            return Err(format!("`{model}` is not a model name"));
        }
        let full = match query {
            Some(q) if !q.is_empty() => format!("{path}?{q}"),
            _ => path.to_string(),
        };
        // `count-tokens` counts the request whose model its body names.
        let count_only = model == "count-tokens";
        Ok(super::Route {
            path: full,
            count_only,
            stream: Some(stream && !count_only),
            model: (!count_only).then(|| format!("vertex_ai/{model}")),
            query_key: None,
            bearer: true,
        })
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
                "system",
                Value::Array(
                    r.system
                        .iter()
                        .map(|t| json!({"type": "text", "text": t}))
                        .collect(),
                ),
            ),
            ("messages", Value::Array(vec![r.user])),
        ])
    }

    fn definition_frame(&self) -> &'static Frame {
        &Frame {
            open: "{\"name\":",
            name_to_description: ",\"description\":",
            description_to_schema: ",\"input_schema\":",
            after_schema: "",
            close: "}",
            kind: None,
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

    fn tool_result(&self, id: &str, _name: &str, text: &str, references: &[String]) -> Value {
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
        let mut r = UsageReader::default();
        for d in &docs {
            let Some(usage) = d.get("usage").or_else(|| d.pointer("/message/usage")) else {
                continue;
            };
            if usage.get("input_tokens").is_some() {
                u.input = r.count(usage, "input_tokens");
                u.cached = r.count(usage, "cache_read_input_tokens");
                u.written = r.count(usage, "cache_creation_input_tokens");
            }
            u.output = u.output.max(r.count(usage, "output_tokens"));
            found = Some(());
        }
        found.map(|_| ObservedUsage {
            // Saturating: a hostile upstream's u64::MAX must not wrap; the gateway flags it.
            input: u.input.saturating_add(u.cached).saturating_add(u.written),
            unreadable: r.garbled,
            ..u
        })
    }

    fn auth_header(&self, key: &str) -> (&'static str, String) {
        ("x-api-key", key.to_string())
    }

    fn limits(&self, tools: &[ToolEntry], _max_tools: Option<usize>) -> Vec<String> {
        let deferred = tools.iter().filter(|t| t.as_ref().is_deferred()).count();
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
        if tools.iter().any(|t| t.as_ref().is_namespace()) {
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

    fn place_cache_marks(&self, body: &mut Value, tools: &mut Vec<ToolEntry>, marks: &[CacheMark]) {
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
                CacheMark::Tools => {
                    if let Some(t) = tools.last_mut() {
                        t.set("cache_control", ephemeral());
                    }
                    continue;
                }
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
