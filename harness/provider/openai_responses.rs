//! OpenAI Responses (`POST /v1/responses`): `instructions` for the system text, an `input` list
//! of items (messages, `function_call`, `function_call_output`, `tool_search_call`,
//! `tool_search_output`), flat `{"type": "function", "name", ...}` tools with `defer_loading`,
//! `{"type": "tool_search"}` and `{"type": "namespace", ...}` groups, an answer whose `output`
//! is a list of items, the `event:`-named `response.*` stream ending in `response.completed`,
//! and usage with cached input and reasoning output tokens.
//!
//! Rules modelled, from OpenAI's tool-search guide
//! (developers.openai.com/api/docs/guides/tools-tool-search, read 2026-11-30 through the stored
//! docs corpus) and the openai Python SDK 3.57.0 types:
//! - Tool search is on with `{"type": "tool_search"}` in `tools` and `defer_loading: true` on
//!   functions, on the functions inside a namespace (not on the namespace itself), or on an MCP
//!   server tool. The model sees the name and description of each searchable function, and of
//!   a namespace or MCP server only its name and description; loaded definitions are injected
//!   at the end of the context so the cache survives (the render model, `billing::render`).
//! - `tool_search_call` / `tool_search_output` items carry `execution` (`server` or `client`);
//!   the output's `tools` are the loaded definitions.
//! - OpenAI's limit of 128 tools per request (the providers' documentation, the same limit as Chat
//!   Completions) is modelled as counting the functions the model sees in full: deferred
//!   functions, namespaces' deferred members and the `tool_search` tool itself are not counted.
//!   The guide states no separate cap on deferred functions (it recommends fewer than 10
//!   functions per namespace), so none is modelled; this is an assumption, not a published rule.
//! - Tool search needs gpt-5.4 or later; the limit is not checked here (limits see tools, not
//!   the model), the client profile uses the gpt-5.4 card.

use super::tools::{Frame, ToolEntry};
use super::{
    sse, sse_documents, CacheMark, ClientRead, Endpoint, ObservedUsage, Provider, Reply,
    RequestParts, ToolCall, ToolLimit, UsageReader,
};
use serde_json::{json, Value};

/// Most fully visible functions in one request (the providers' documentation).
pub const MAX_TOOLS: usize = 128;

pub struct OpenaiResponses;

/// Tool types the Responses API takes in `tools` (openai-python 3.57.0 `ToolParam`).
const TOOL_TYPES: &[&str] = &[
    "function",
    "namespace",
    "tool_search",
    "mcp",
    "web_search",
    "web_search_preview",
    "file_search",
    "code_interpreter",
    "computer_use_preview",
    "image_generation",
    "local_shell",
    "shell",
    "apply_patch",
    "custom",
];

/// Input item types the Responses API takes (openai-python 3.57.0 `ResponseInputItemParam`);
/// an item without `type` is a message.
const ITEM_TYPES: &[&str] = &[
    "message",
    "function_call",
    "function_call_output",
    "tool_search_call",
    "tool_search_output",
    "reasoning",
    "item_reference",
    "custom_tool_call",
    "custom_tool_call_output",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "web_search_call",
    "file_search_call",
    "computer_call",
    "computer_call_output",
    "code_interpreter_call",
    "image_generation_call",
    "local_shell_call",
    "local_shell_call_output",
    "shell_call",
    "shell_call_output",
    "apply_patch_call",
    "apply_patch_call_output",
    "additional_tools",
];

/// The roles a message item may have.
const ROLES: &[&str] = &["user", "assistant", "system", "developer"];

/// What the Responses API refuses in a body, as the mock answers it (the forward gateway passes
/// bodies on as they are and lets the provider say): the faults of `tools` and of `input`.
/// `tools`: the entries of the body's `tools` array, where it has one (`None`: the body's own
/// `tools` member, if any, is what was sent).
pub fn refusals(body: &Value, tools: Option<&[ToolEntry]>) -> Result<(), String> {
    let listed = super::tools::tool_values(body, tools);
    match tools {
        Some(_) => check_tool_list(listed.iter().map(|t| t.as_ref()))?,
        None => check_tools(body.get("tools"))?,
    }
    let continues =
        body.get("previous_response_id").is_some() || body.get("conversation").is_some();
    check_input(&body["input"], continues)?;
    check_allowed(body, &listed)
}

/// An `allowed_tools` choice may name only functions the request defines (in `tools`,
/// namespaces' members included, or in an `additional_tools` item); its `mode` is `auto` or
/// `required` (openai-python 3.57.0 `ToolChoiceAllowedParam`; the message is toolcost's).
fn check_allowed(body: &Value, tools: &[std::borrow::Cow<Value>]) -> Result<(), String> {
    let Some(choice) = body
        .get("tool_choice")
        .filter(|c| c["type"] == "allowed_tools")
    else {
        return Ok(());
    };
    if !matches!(choice["mode"].as_str(), Some("auto" | "required")) {
        return Err("tool_choice.mode: expected `auto` or `required`".into());
    }
    let added = body
        .get("input")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "additional_tools")
        .flat_map(|i| i["tools"].as_array().into_iter().flatten());
    let mut names = std::collections::HashSet::new();
    for t in tools.iter().map(|t| t.as_ref()).chain(added) {
        match super::is_namespace(t) {
            true => names.extend(
                super::namespace_members(t)
                    .iter()
                    .filter_map(|m| m["name"].as_str()),
            ),
            false => names.extend(t["name"].as_str()),
        }
    }
    let listed = choice["tools"]
        .as_array()
        .ok_or("tool_choice.tools: expected a list of tools")?;
    for (i, t) in listed.iter().enumerate() {
        if t["type"] == "function" {
            let name = t["name"].as_str().unwrap_or("");
            if !names.contains(name) {
                return Err(format!(
                    "tool_choice.tools[{i}]: no function named `{name}` is defined in this request"
                ));
            }
        }
    }
    Ok(())
}

/// What the Responses API refuses in `tools`: not a list, a tool without a known `type`, a
/// function without a name, a namespace whose `tools` is not a list of functions (namespaces
/// do not nest), and two functions with one name.
fn check_tools(tools: Option<&Value>) -> Result<(), String> {
    let Some(tools) = tools else { return Ok(()) };
    let list = tools
        .as_array()
        .ok_or("`tools` must be a list of tool objects")?;
    check_tool_list(list.iter())
}

/// [`check_tools`] of a list's items.
fn check_tool_list<'a>(list: impl Iterator<Item = &'a Value>) -> Result<(), String> {
    let mut names = std::collections::HashSet::new();
    let mut function = |t: &Value, at: &str| -> Result<(), String> {
        let name = t
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or(format!("{at}: a function needs a `name` string"))?;
        if !names.insert(name.to_string()) {
            return Err(format!("{at}: duplicate function name `{name}`"));
        }
        Ok(())
    };
    for (i, t) in list.enumerate() {
        let at = format!("tools[{i}]");
        let ty = t
            .get("type")
            .and_then(Value::as_str)
            .ok_or(format!("{at}: a tool needs a `type` string"))?;
        if !TOOL_TYPES.contains(&ty) {
            return Err(format!("{at}: unknown tool type `{ty}`"));
        }
        match ty {
            "function" => function(t, &at)?,
            "namespace" => {
                let members = t
                    .get("tools")
                    .and_then(Value::as_array)
                    .ok_or(format!("{at}: a namespace's `tools` must be a list"))?;
                for (j, m) in members.iter().enumerate() {
                    let mat = format!("{at}.tools[{j}]");
                    match m.get("type").and_then(Value::as_str) {
                        Some("function") => function(m, &mat)?,
                        Some("namespace") => return Err(format!("{mat}: namespaces do not nest")),
                        _ => return Err(format!("{mat}: a namespace holds functions only")),
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// What the Responses API refuses in `input`: an item that is not an object, an unknown item
/// type, a message with an unknown role, and a `function_call_output` whose `call_id` no
/// earlier `function_call` made (unless the call is in a previous response).
fn check_input(input: &Value, continues: bool) -> Result<(), String> {
    let mut calls = std::collections::HashSet::new();
    for (i, item) in input.as_array().into_iter().flatten().enumerate() {
        let at = format!("input[{i}]");
        let obj = item
            .as_object()
            .ok_or(format!("{at}: an input item must be an object"))?;
        let ty = match obj.get("type") {
            None => "message",
            Some(Value::String(t)) => t.as_str(),
            Some(_) => return Err(format!("{at}: `type` must be a string")),
        };
        if !ITEM_TYPES.contains(&ty) {
            return Err(format!("{at}: unknown input item type `{ty}`"));
        }
        match ty {
            "message" => {
                let role = obj.get("role").and_then(Value::as_str).unwrap_or("");
                if !ROLES.contains(&role) {
                    return Err(format!(
                        "{at}: unknown role `{role}`; expected user, assistant, system or developer"
                    ));
                }
            }
            "additional_tools" => {
                if obj.get("role").and_then(Value::as_str) != Some("developer") {
                    return Err(format!(
                        "{at}: an additional_tools item takes role `developer` only"
                    ));
                }
                check_tools(Some(obj.get("tools").unwrap_or(&Value::Null)))
                    .map_err(|e| format!("{at}.{e}"))?;
            }
            "function_call" => {
                if let Some(id) = obj.get("call_id").and_then(Value::as_str) {
                    calls.insert(id.to_string());
                }
            }
            "function_call_output" => {
                let id = obj
                    .get("call_id")
                    .and_then(Value::as_str)
                    .ok_or(format!("{at}: a function_call_output needs a `call_id`"))?;
                if !continues && !calls.contains(id) {
                    return Err(format!(
                        "{at}: no function call found for function call output with call_id {id}"
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn usage(reply: &Reply) -> Value {
    let u = reply.usage;
    let input = u.total_input();
    json!({"input_tokens": input,
           "input_tokens_details": {"cached_tokens": u.cached_input, "cache_write_tokens": u.cache_write},
           "output_tokens": u.output, "output_tokens_details": {"reasoning_tokens": reply.thoughts.min(u.output)},
           "total_tokens": input + u.output})
}

/// The answer's output items for content blocks in Anthropic form (`text`, `tool_use`) and
/// Responses items the mock made itself (`tool_search_call`, `tool_search_output`); an answer
/// that thought starts with its reasoning item (the mock's own id and encrypted content).
fn output_items(reply: &Reply, id: u64) -> Vec<Value> {
    let content = reply.content;
    let mut out = Vec::new();
    if reply.thoughts > 0 {
        use base64::Engine;
        out.push(
            json!({"type": "reasoning", "id": format!("rs_mock_{id}"), "summary": [],
            "encrypted_content": base64::engine::general_purpose::STANDARD
                .encode(format!("toolcost-mock-reasoning-{id}"))}),
        );
    }
    for (i, b) in content.iter().enumerate() {
        match b["type"].as_str() {
            Some("text") => out.push(json!({"type": "message", "id": format!("msg_mock_{id}_{i}"),
                "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": b["text"], "annotations": [], "logprobs": []}]})),
            Some("tool_use") => out.push(json!({"type": "function_call", "id": format!("fc_mock_{id}_{i}"),
                "call_id": b["id"], "name": b["name"], "arguments": crate::json::compact(&b["input"]),
                "status": "completed"})),
            Some("tool_search_call") | Some("tool_search_output") => out.push(b.clone()),
            // Anthropic's own search blocks have no Responses form; the mock makes Responses
            // items for a Responses request, so these do not occur.
            _ => {}
        }
    }
    out
}

fn response(model: &str, id: u64, status: &str, output: Vec<Value>, usage: Value) -> Value {
    json!({"id": format!("resp_mock_{id}"), "object": "response", "created_at": crate::clock::now().0,
           "status": status, "model": model, "output": output, "parallel_tool_calls": true,
           "tool_choice": "auto", "tools": [], "error": null, "incomplete_details": null,
           "usage": usage})
}

impl Provider for OpenaiResponses {
    fn name(&self) -> &'static str {
        "openai-responses"
    }

    fn endpoints(&self) -> &'static [Endpoint] {
        &[Endpoint {
            path: "/v1/responses",
            count_only: false,
        }]
    }

    fn conversation_key(&self) -> &'static str {
        "input"
    }

    fn check_shape(&self, body: &mut Value) -> Result<(), String> {
        // `input` is a list of items, or one string (a user message): the string form is read
        // as that one-item list.
        match body.get("input") {
            Some(Value::String(s)) => {
                let item = json!([{"role": "user", "content": s}]);
                body["input"] = item;
            }
            Some(Value::Array(items)) if items.is_empty() => {
                return Err("`input` must not be empty".into())
            }
            Some(Value::Array(_)) => {}
            _ => return Err("request body has no `input` list or string".into()),
        }
        Ok(())
    }

    fn request(&self, r: RequestParts) -> Value {
        super::object([
            ("model", r.model.into()),
            ("instructions", r.system.join("\n\n").into()),
            ("max_output_tokens", r.max_tokens.into()),
            ("tools", Value::Null),
            ("input", Value::Array(vec![r.user])),
        ])
    }

    fn definition_frame(&self) -> &'static Frame {
        &Frame {
            open: "{\"type\":\"function\",\"name\":",
            name_to_description: ",\"description\":",
            description_to_schema: ",\"parameters\":",
            after_schema: ",\"strict\":false",
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
            // `strict` is a required (nullable) field of the SDK's `FunctionToolParam`
            // (openai-python 3.57.0); catalogue schemas are not written for strict mode, so it
            // is sent, and off.
            super::object([
                ("type", "function".into()),
                ("name", name.into()),
                ("description", description.into()),
                ("parameters", schema),
                ("strict", false.into()),
            ]),
            defer,
        )
    }

    fn user_message(&self, context: Option<&str>, text: &str) -> Value {
        let mut parts: Vec<Value> = context
            .map(|c| json!({"type": "input_text", "text": c}))
            .into_iter()
            .collect();
        parts.push(json!({"type": "input_text", "text": text}));
        json!({"type": "message", "role": "user", "content": parts})
    }

    fn tool_call(&self, id: &str, name: &str, input: Value) -> Value {
        json!({"type": "function_call", "call_id": id, "name": name, "arguments": crate::json::compact(&input)})
    }

    fn tool_result(&self, id: &str, _name: &str, text: &str, references: &[String]) -> Value {
        if references.is_empty() {
            return json!({"type": "function_call_output", "call_id": id, "output": text});
        }
        // A client-executed search answers with its own `tool_search_output`; the loaded
        // functions are named here and expanded from the request's deferred definitions by the
        // render model (a real client sends them in full).
        json!({"type": "tool_search_output", "call_id": id, "execution": "client", "status": "completed",
               "tools": references.iter().map(|r| json!({"type": "function", "name": r})).collect::<Vec<_>>()})
    }

    fn read_answer(&self, answer: &Value) -> Result<ClientRead, String> {
        let output = answer
            .get("output")
            .and_then(Value::as_array)
            .ok_or("the answer has no `output` list")?;
        // Function calls, and tool searches the client executes itself, are the client's to
        // run; a server-executed search is already answered inside `output`.
        let calls = output
            .iter()
            .filter_map(|item| match item["type"].as_str() {
                Some("function_call") => Some(ToolCall {
                    id: item["call_id"].as_str().unwrap_or("").to_string(),
                    name: item["name"].as_str().unwrap_or("").to_string(),
                    input: super::arguments(&item["arguments"]),
                }),
                Some("tool_search_call") if item["execution"] == "client" => Some(ToolCall {
                    id: item["call_id"].as_str().unwrap_or("").to_string(),
                    name: "tool_search".to_string(),
                    input: super::arguments(&item["arguments"]),
                }),
                _ => None,
            })
            .collect();
        // Every output item goes back as input (a client that does not use
        // `previous_response_id` sends the whole conversation each round).
        Ok(ClientRead {
            items: output.clone(),
            calls,
        })
    }

    fn result_items(&self, results: Vec<Value>) -> Vec<Value> {
        // One `function_call_output` or `tool_search_output` item per result.
        results
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        super::openai_error(status, message)
    }

    fn answer(&self, model: &str, id: u64, reply: Reply) -> Value {
        response(
            model,
            id,
            "completed",
            output_items(&reply, id),
            usage(&reply),
        )
    }

    fn events(&self, model: &str, id: u64, reply: Reply, _request: &Value) -> Vec<String> {
        let mut out = Vec::new();
        let mut seq = 0u64;
        let mut ev = |out: &mut Vec<String>, mut data: Value| {
            data["sequence_number"] = json!(seq);
            seq += 1;
            let name = data["type"].as_str().unwrap_or("").to_string();
            out.push(sse(Some(&name), &data));
        };
        let items = output_items(&reply, id);
        let start = response(model, id, "in_progress", Vec::new(), Value::Null);
        ev(
            &mut out,
            json!({"type": "response.created", "response": start.clone()}),
        );
        ev(
            &mut out,
            json!({"type": "response.in_progress", "response": start}),
        );
        for (i, item) in items.iter().enumerate() {
            let item_id = item["id"].clone();
            match item["type"].as_str() {
                Some("message") => {
                    let text = item["content"][0]["text"].clone();
                    let mut empty = item.clone();
                    empty["content"] = json!([]);
                    empty["status"] = json!("in_progress");
                    let part = json!({"type": "output_text", "text": "", "annotations": [], "logprobs": []});
                    ev(
                        &mut out,
                        json!({"type": "response.output_item.added", "output_index": i, "item": empty}),
                    );
                    ev(
                        &mut out,
                        json!({"type": "response.content_part.added", "item_id": item_id, "output_index": i, "content_index": 0, "part": part}),
                    );
                    ev(
                        &mut out,
                        json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": i, "content_index": 0, "delta": text, "logprobs": []}),
                    );
                    ev(
                        &mut out,
                        json!({"type": "response.output_text.done", "item_id": item_id, "output_index": i, "content_index": 0, "text": text, "logprobs": []}),
                    );
                    ev(
                        &mut out,
                        json!({"type": "response.content_part.done", "item_id": item_id, "output_index": i, "content_index": 0, "part": item["content"][0]}),
                    );
                }
                Some("function_call") => {
                    let mut empty = item.clone();
                    empty["arguments"] = json!("");
                    empty["status"] = json!("in_progress");
                    ev(
                        &mut out,
                        json!({"type": "response.output_item.added", "output_index": i, "item": empty}),
                    );
                    ev(
                        &mut out,
                        json!({"type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": i, "delta": item["arguments"]}),
                    );
                    ev(
                        &mut out,
                        json!({"type": "response.function_call_arguments.done", "item_id": item_id, "output_index": i, "name": item["name"], "arguments": item["arguments"]}),
                    );
                }
                _ => ev(
                    &mut out,
                    json!({"type": "response.output_item.added", "output_index": i, "item": item}),
                ),
            }
            ev(
                &mut out,
                json!({"type": "response.output_item.done", "output_index": i, "item": item}),
            );
        }
        ev(
            &mut out,
            json!({"type": "response.completed", "response": response(model, id, "completed", items, usage(&reply))}),
        );
        out
    }

    fn stream_complete(&self, data: &str) -> bool {
        // The terminal events of a Responses stream.
        [
            "\"response.completed\"",
            "\"response.incomplete\"",
            "\"response.failed\"",
        ]
        .iter()
        .any(|t| data.contains(t))
    }

    fn observed_usage(&self, text: &str, streamed: bool) -> Option<ObservedUsage> {
        let docs = if streamed {
            sse_documents(text)
        } else {
            vec![serde_json::from_str(text).ok()?]
        };
        docs.iter()
            .rev()
            .find_map(|d| {
                d.get("usage")
                    .or_else(|| d.pointer("/response/usage"))
                    .filter(|u| !u.is_null())
            })
            .map(|u| {
                let mut r = UsageReader::default();
                ObservedUsage {
                    input: r.count(u, "input_tokens"),
                    cached: r.count_at(u, "/input_tokens_details/cached_tokens"),
                    // gpt-5.6 and later bill and report cache writes (inside input_tokens).
                    written: r.count_at(u, "/input_tokens_details/cache_write_tokens"),
                    // Reasoning tokens are inside output_tokens (billed as output).
                    output: r.count(u, "output_tokens"),
                    unreadable: r.garbled,
                }
            })
    }

    fn auth_header(&self, key: &str) -> (&'static str, String) {
        ("authorization", format!("Bearer {key}"))
    }

    fn limits(&self, tools: &[ToolEntry], max_tools: Option<usize>) -> Vec<String> {
        let max = max_tools.unwrap_or(MAX_TOOLS);
        let visible = super::visible_functions(tools);
        let mut out = Vec::new();
        if visible > max {
            out.push(format!(
                "{visible} functions the model sees in full exceed OpenAI's limit of {max} per request (deferred functions not counted)"
            ));
        }
        out
    }

    fn tool_limit(&self) -> ToolLimit {
        ToolLimit {
            tools: MAX_TOOLS,
            label: format!("OpenAI: {MAX_TOOLS} loaded functions per request"),
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
        "gpt-5.4"
    }
}
