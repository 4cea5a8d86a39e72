//! The Gemini API (`POST /{v1,v1beta}/models/{model}:generateContent`,
//! `:streamGenerateContent?alt=sse`, `:countTokens`): the model in the path, a
//! `systemInstruction`, `contents` of `user` and `model` turns made of `text`, `functionCall` and
//! `functionResponse` parts, `tools[].functionDeclarations` (`parameters` in Gemini's
//! OpenAPI-subset schema, or `parametersJsonSchema`), `toolConfig.functionCallingConfig`, usage
//! in `usageMetadata`, a stream of `data:` events with no end marker (the event with a
//! `finishReason` is the last), and Google's error envelope.
//!
//! Rules from Google's public API reference (ai.google.dev/api: generate-content, tokens,
//! caching; read 2026-12-03) and from what the official clients send (`google-genai` 3.6.1 on
//! PyPI, Gemini CLI 0.61.0 on npm, observed against a stub on 127.0.0.1): see
//! docs/notes/gemini.md. The Python client writes function declarations in snake_case inside
//! an otherwise camelCase body, and Google's parser takes both; [`Provider::check_shape`]
//! reads both into camelCase.
//!
//! A request's entries are its function declarations, one by one: every `functionDeclarations`
//! group of a received body is read into one list (other tool kinds, such as `googleSearch`,
//! stay entries of their own), and a body toolcost builds writes them back as one group.

use super::tools::{Frame, ToolEntry};
use super::{
    sse, sse_documents, CacheMark, ClientRead, Endpoint, ObservedUsage, Provider, Reply,
    RequestParts, Route, ToolCall, ToolLimit, UsageReader,
};
use serde_json::{json, Value};

mod body;
mod rules;
use body::{flatten_tools, normalise};
pub use rules::{name_rule, refusals, subset_fault, valid_name};

/// Most function declarations in one request (Gemini API function-calling docs, read
/// 2026-12-03: "up to 512").
pub const MAX_DECLARATIONS: usize = 512;

/// Longest function name (Gemini API reference, `FunctionDeclaration.name`, read 2026-12-03).
pub const MAX_NAME: usize = 128;

pub struct Gemini;

/// The API versions a client may name; `google-genai` 3.x sends `v1`, 1.x and the Gemini CLI
/// `v1beta`.
const VERSIONS: [&str; 2] = ["v1beta", "v1"];

/// The methods of a model the gateway serves: (method, count only, streamed).
const METHODS: [(&str, bool, bool); 3] = [
    ("generateContent", false, false),
    ("streamGenerateContent", false, true),
    ("countTokens", true, false),
];

/// A query component with its `%XX` escapes decoded (`+` is a space); bytes that are not UTF-8
/// are replaced.
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
        match (
            b[i],
            b.get(i + 1).and_then(|&c| hex(c)),
            b.get(i + 2).and_then(|&c| hex(c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push(h * 16 + l);
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The parts of an answer's Anthropic-form blocks: text and function calls.
fn parts(reply: &Reply, id: u64) -> Vec<Value> {
    let mut parts: Vec<Value> = reply
        .content
        .iter()
        .filter_map(|b| match b["type"].as_str() {
            Some("text") => Some(json!({"text": b["text"]})),
            Some("tool_use") => Some(
                json!({"functionCall": {"id": b["id"], "name": b["name"], "args": b["input"]}}),
            ),
            _ => None,
        })
        .collect();
    // An answer that thought carries its signature on its first part, as Gemini 3 writes it
    // (the mock's own, unique to the answer).
    if reply.thoughts > 0 {
        if let Some(first) = parts.first_mut() {
            use base64::Engine;
            first["thoughtSignature"] = json!(base64::engine::general_purpose::STANDARD
                .encode(format!("toolcost-mock-thought-{id}")));
        }
    }
    parts
}

/// `usageMetadata` of an answer (`output`: the candidates' tokens so far).
/// The streamed answer's responses: one per part; usage rides on every one, the last holding
/// the totals and the finish reason.
fn responses(model: &str, id: u64, reply: Reply) -> Vec<Value> {
    let parts = parts(&reply, id);
    let n = parts.len().max(1);
    let mut out = Vec::new();
    for i in 0..n {
        let last = i + 1 == n;
        let mut candidate = json!({"content": {"role": "model",
            "parts": parts.get(i).map(|p| vec![p.clone()]).unwrap_or_default()}, "index": 0});
        if last {
            candidate["finishReason"] = json!(finish(&reply));
        }
        let output = if last { reply.usage.output } else { 0 };
        out.push(
            json!({"candidates": [candidate], "usageMetadata": usage(&reply, output),
                "modelVersion": model, "responseId": format!("mock-{id}")}),
        );
    }
    out
}

fn usage(reply: &Reply, output: u64) -> Value {
    let u = reply.usage;
    let prompt = u.total_input();
    // Thoughts are counted apart from the candidates' tokens; the total holds both.
    let thoughts = reply.thoughts.min(output);
    let mut m = json!({"promptTokenCount": prompt, "candidatesTokenCount": output - thoughts,
                       "totalTokenCount": prompt.saturating_add(output)});
    if thoughts > 0 {
        m["thoughtsTokenCount"] = json!(thoughts);
    }
    if u.cached_input > 0 {
        m["cachedContentTokenCount"] = json!(u.cached_input);
    }
    m
}

/// Gemini's finish reason for an answer: the model stopped, or it asked for calls (Gemini says
/// `STOP` for both).
fn finish(_reply: &Reply) -> &'static str {
    "STOP"
}

impl Provider for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn endpoints(&self) -> &'static [Endpoint] {
        &[
            Endpoint {
                path: "/v1beta/models/{call}",
                count_only: false,
            },
            Endpoint {
                path: "/v1/models/{call}",
                count_only: false,
            },
            // Vertex AI: the same methods under a project and a location.
            Endpoint {
                path: "/v1/projects/{project}/locations/{location}/publishers/google/models/{call}",
                count_only: false,
            },
            Endpoint {
                path: "/v1beta1/projects/{project}/locations/{location}/publishers/google/models/{call}",
                count_only: false,
            },
        ]
    }

    fn route(&self, _endpoint: Endpoint, path: &str, query: Option<&str>) -> Result<Route, String> {
        // Vertex AI names the model after its project, location and publisher; its model is
        // counted and priced by Vertex AI's rules (`vertex_ai/` before the id).
        let vertex = super::vertex::model_method(path, "google")?;
        let rest = match vertex {
            Some(rest) => rest,
            None => VERSIONS
                .iter()
                .find_map(|v| path.strip_prefix(&format!("/{v}/models/")))
                .ok_or_else(|| format!("`{path}` is not a Gemini model method"))?,
        };
        let (model, method) = rest.rsplit_once(':').ok_or_else(|| {
            format!("`{path}`: name a method after the model (`:generateContent`, `:streamGenerateContent`, `:countTokens`)")
        })?;
        let &(_, count_only, stream) = METHODS
            .iter()
            .find(|(m, _, _)| *m == method)
            .ok_or_else(|| {
                format!(
                    "`{method}` is not a method the gateway serves: generateContent, streamGenerateContent, countTokens"
                )
            })?;
        if model.is_empty() || model.len() > 200 || model.contains('/') {
            return Err(format!("`{model}` is not a model name"));
        }
        // The client's key travels in `key=`; the rest of the query (`alt=sse`) is kept.
        let mut key = None;
        let mut kept = Vec::new();
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            // The name as a server reads it, percent-escapes decoded (`%6Bey` is `key`).
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            match percent_decoded(name) == "key" {
                true => key = Some(value.to_string()),
                false => kept.push(pair),
            }
        }
        let path = match kept.is_empty() {
            true => path.to_string(),
            false => format!("{path}?{}", kept.join("&")),
        };
        Ok(Route {
            path,
            count_only,
            stream: Some(stream),
            model: Some(match vertex {
                Some(_) => format!("vertex_ai/{model}"),
                None => model.to_string(),
            }),
            query_key: key,
            bearer: vertex.is_some(),
        })
    }

    fn call_path(&self, model: &str, stream: bool) -> String {
        match stream {
            true => format!("/v1beta/models/{model}:streamGenerateContent?alt=sse"),
            false => format!("/v1beta/models/{model}:generateContent"),
        }
    }

    fn count_answer(&self, input_tokens: u64) -> Value {
        json!({"totalTokens": input_tokens,
               "promptTokensDetails": [{"modality": "TEXT", "tokenCount": input_tokens}]})
    }

    fn tools_wrap(&self) -> (&'static str, &'static str) {
        ("[{\"functionDeclarations\":[", "]}]")
    }

    fn tools_tree(&self, entries: Vec<Value>) -> Value {
        json!([{"functionDeclarations": entries}])
    }

    fn conversation_key(&self) -> &'static str {
        "contents"
    }

    fn check_shape(&self, body: &mut Value) -> Result<(), String> {
        let o = body
            .as_object_mut()
            .ok_or("request body is not a JSON object")?;
        normalise(o);
        flatten_tools(o)?;
        let contents = match o.get("contents") {
            Some(Value::Array(c)) => c,
            Some(_) => return Err("`contents` must be a list of Content objects".into()),
            None => return Err("request body has no `contents` list".into()),
        };
        if contents.is_empty() {
            return Err("`contents` must not be empty".into());
        }
        for (i, c) in contents.iter().enumerate() {
            // `function` is the role older clients give function responses (Google's REST
            // samples still send it).
            match &c["role"] {
                Value::Null => {}
                Value::String(r) if matches!(r.as_str(), "user" | "model" | "function") => {}
                r => {
                    return Err(format!(
                        "contents[{i}].role: `{r}` is not one of user, model"
                    ))
                }
            }
            if !c["parts"].is_array() {
                return Err(format!("contents[{i}]: a Content needs a `parts` list"));
            }
        }
        Ok(())
    }

    fn request(&self, r: RequestParts) -> Value {
        // The model is in the path ([`Provider::call_path`]), not the body.
        super::object([
            ("contents", Value::Array(vec![r.user])),
            (
                "systemInstruction",
                json!({"role": "user", "parts": [{"text": r.system.join("\n\n")}]}),
            ),
            ("tools", Value::Null),
            ("generationConfig", json!({"maxOutputTokens": r.max_tokens})),
        ])
    }

    fn definition_frame(&self) -> &'static Frame {
        &Frame {
            open: "{\"name\":",
            name_to_description: ",\"description\":",
            description_to_schema: ",\"parametersJsonSchema\":",
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
        // Gemini has no deferred loading: the mark is carried (and refused by `limits`).
        super::deferrable(
            super::object([
                ("name", name.into()),
                ("description", description.into()),
                ("parametersJsonSchema", schema),
            ]),
            defer,
        )
    }

    fn user_message(&self, context: Option<&str>, text: &str) -> Value {
        let mut parts: Vec<Value> = context.map(|c| json!({"text": c})).into_iter().collect();
        parts.push(json!({"text": text}));
        json!({"role": "user", "parts": parts})
    }

    fn tool_call(&self, id: &str, name: &str, input: Value) -> Value {
        json!({"role": "model", "parts": [{"functionCall": {"id": id, "name": name, "args": input}}]})
    }

    fn tool_result(&self, id: &str, name: &str, text: &str, _references: &[String]) -> Value {
        json!({"role": "user", "parts": [{"functionResponse": {"id": id, "name": name, "response": {"output": text}}}]})
    }

    fn read_answer(&self, answer: &Value) -> Result<ClientRead, String> {
        let content = answer
            .pointer("/candidates/0/content")
            .filter(|c| c.is_object())
            .ok_or("the answer has no `candidates[0].content`")?;
        let calls = content["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("functionCall"))
            .map(|c| {
                let name = c["name"].as_str().unwrap_or("").to_string();
                ToolCall {
                    // A call without an id is answered by its name.
                    id: c["id"].as_str().unwrap_or(&name).to_string(),
                    name,
                    input: super::arguments(&c["args"]),
                }
            })
            .collect();
        Ok(ClientRead {
            items: vec![content.clone()],
            calls,
        })
    }

    fn result_items(&self, results: Vec<Value>) -> Vec<Value> {
        // Every response of a round goes back in one user turn.
        let parts: Vec<Value> = results
            .into_iter()
            .flat_map(|r| r["parts"].as_array().cloned().unwrap_or_default())
            .collect();
        match parts.is_empty() {
            true => Vec::new(),
            false => vec![json!({"role": "user", "parts": parts})],
        }
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        let s = match status {
            400 | 413 | 422 => "INVALID_ARGUMENT",
            401 => "UNAUTHENTICATED",
            403 => "PERMISSION_DENIED",
            404 => "NOT_FOUND",
            429 => "RESOURCE_EXHAUSTED",
            499 => "CANCELLED",
            503 => "UNAVAILABLE",
            504 => "DEADLINE_EXCEEDED",
            _ => "INTERNAL",
        };
        json!({"error": {"code": status, "message": message, "status": s}})
    }

    fn answer(&self, model: &str, id: u64, reply: Reply) -> Value {
        json!({"candidates": [{"content": {"role": "model", "parts": parts(&reply, id)},
                               "finishReason": finish(&reply), "index": 0}],
               "usageMetadata": usage(&reply, reply.usage.output),
               "modelVersion": model, "responseId": format!("mock-{id}")})
    }

    fn events(&self, model: &str, id: u64, reply: Reply, _request: &Value) -> Vec<String> {
        responses(model, id, reply)
            .iter()
            .map(|r| sse(None, r))
            .collect()
    }

    fn stream_answer(
        &self,
        model: &str,
        id: u64,
        reply: Reply,
        request: &Value,
        path: &str,
    ) -> (Vec<String>, &'static str) {
        // The query as `route` reads it: names and values percent-decoded.
        let query = path.split_once('?').map_or("", |(_, q)| q);
        let sse = query.split('&').any(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            percent_decoded(name) == "alt" && percent_decoded(value) == "sse"
        });
        if sse {
            return (self.events(model, id, reply, request), "text/event-stream");
        }
        // Without `alt=sse` the stream is one JSON array of the same responses (there is
        // always one), sent a response at a time.
        let mut chunks: Vec<String> = responses(model, id, reply)
            .iter()
            .enumerate()
            .map(|(i, r)| {
                format!(
                    "{}{}",
                    if i == 0 { "[" } else { "," },
                    crate::json::compact(r)
                )
            })
            .collect();
        chunks.push("]".into());
        (chunks, "application/json")
    }

    fn stream_complete(&self, data: &str) -> bool {
        // Only a candidate's own finish reason ends the stream (a call's arguments may hold a
        // key of that name): read where it is, in an event that mentions it at all.
        data.contains("\"finishReason\"")
            && crate::json::check_nodes(data.as_bytes(), "an event").is_ok()
            && serde_json::from_str::<Value>(data).is_ok_and(|v| {
                v["candidates"]
                    .as_array()
                    .is_some_and(|cs| cs.iter().any(|c| c["finishReason"].is_string()))
            })
    }

    fn observed_usage(&self, text: &str, streamed: bool) -> Option<ObservedUsage> {
        let docs = match streamed {
            true => sse_documents(text),
            // A stream asked for without `alt=sse` comes back as one JSON array of the events.
            false => match serde_json::from_str(text).ok()? {
                Value::Array(events) => events,
                one => vec![one],
            },
        };
        // Usage is cumulative: the last event that carries it holds the totals.
        docs.iter()
            .rev()
            .find_map(|d| d.get("usageMetadata").filter(|u| u.is_object()))
            .map(|u| {
                let mut r = UsageReader::default();
                ObservedUsage {
                    // Results of Google's own tools are billed as input, thoughts as output.
                    input: r
                        .count(u, "promptTokenCount")
                        .saturating_add(r.count(u, "toolUsePromptTokenCount")),
                    cached: r.count(u, "cachedContentTokenCount"),
                    written: 0,
                    output: r
                        .count(u, "candidatesTokenCount")
                        .saturating_add(r.count(u, "thoughtsTokenCount")),
                    unreadable: r.garbled,
                }
            })
    }

    fn auth_header(&self, key: &str) -> (&'static str, String) {
        ("x-goog-api-key", key.to_string())
    }

    fn limits(&self, tools: &[ToolEntry], max_tools: Option<usize>) -> Vec<String> {
        let max = max_tools.unwrap_or(MAX_DECLARATIONS).min(MAX_DECLARATIONS);
        // A declaration is an entry with a name (one without parameters takes no arguments);
        // Google's own tools (`googleSearch`) have none.
        let functions: Vec<_> = tools
            .iter()
            .map(ToolEntry::as_ref)
            .filter(|t| t.name().is_some())
            .collect();
        let mut out = Vec::new();
        if functions.len() > max {
            out.push(format!(
                "{} function declarations exceed Gemini's limit of {max} per request",
                functions.len()
            ));
        }
        if tools.iter().any(|t| {
            let t = t.as_ref();
            t.is_deferred() || t.is_namespace() || t.kind() == Some("tool_search")
        }) {
            out.push(
                "Gemini has no deferred loading, namespaces or hosted tool search: every declaration is sent in full"
                    .to_string(),
            );
        }
        if let Some(bad) = functions
            .iter()
            .filter_map(|f| f.name())
            .find(|n| !valid_name(n))
        {
            out.push(format!(
                "function name `{bad}` is not one Gemini takes: {}",
                name_rule()
            ));
        }
        // The OpenAPI-subset `parameters` (JSON trees only: toolcost's own definitions are
        // written as `parametersJsonSchema`).
        for t in tools {
            let t = t.as_ref();
            let Some(params) = t.get("parameters") else {
                continue;
            };
            let mut budget = 10_000;
            let name = t.name().unwrap_or("(unnamed)").to_string();
            if let Some(f) = subset_fault(&params, &format!("{name}.parameters"), &mut budget) {
                out.push(f);
                break;
            }
        }
        out
    }

    fn tool_limit(&self) -> ToolLimit {
        ToolLimit {
            tools: MAX_DECLARATIONS,
            label: format!("Gemini: {MAX_DECLARATIONS} function declarations"),
        }
    }

    fn place_cache_marks(
        &self,
        _body: &mut Value,
        _tools: &mut Vec<ToolEntry>,
        _marks: &[CacheMark],
    ) {
        // Implicit caching: there is nothing to mark.
    }

    fn default_card(&self) -> &'static str {
        "gemini-3.5-flash"
    }
}

#[cfg(test)]
mod tests;
