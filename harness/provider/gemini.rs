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
    count, sse, sse_documents, CacheMark, ClientRead, Endpoint, ObservedUsage, Provider, Reply,
    RequestParts, Route, ToolCall, ToolLimit,
};
use serde_json::{json, Map, Value};

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

/// The keys of the protocol written in snake_case by some clients, and their camelCase. Only
/// keys at protocol positions are read this way (see [`camel_case`]): a schema's property
/// names and a call's arguments are the user's own and keep their spelling.
const SNAKE: &[(&str, &str)] = &[
    ("system_instruction", "systemInstruction"),
    ("tool_config", "toolConfig"),
    ("function_calling_config", "functionCallingConfig"),
    ("allowed_function_names", "allowedFunctionNames"),
    ("generation_config", "generationConfig"),
    ("safety_settings", "safetySettings"),
    ("cached_content", "cachedContent"),
    ("function_declarations", "functionDeclarations"),
    ("parameters_json_schema", "parametersJsonSchema"),
    ("response_json_schema", "responseJsonSchema"),
    ("function_call", "functionCall"),
    ("function_response", "functionResponse"),
    ("inline_data", "inlineData"),
    ("file_data", "fileData"),
    ("executable_code", "executableCode"),
    ("code_execution_result", "codeExecutionResult"),
    ("thought_signature", "thoughtSignature"),
    ("generate_content_request", "generateContentRequest"),
    ("google_search", "googleSearch"),
    ("code_execution", "codeExecution"),
    ("max_output_tokens", "maxOutputTokens"),
];

/// An object's protocol keys in camelCase (a key already in camelCase wins over its snake
/// twin).
fn camel_case(o: &mut Map<String, Value>) {
    for (snake, camel) in SNAKE {
        if let Some(v) = o.remove(*snake) {
            if !o.contains_key(*camel) {
                o.insert((*camel).to_string(), v);
            }
        }
    }
}

/// A body's protocol keys in camelCase: the body, its system instruction, tool config, each
/// content and part, each tool and declaration.
fn normalise(body: &mut Map<String, Value>) {
    camel_case(body);
    // countTokens takes a whole generateContent request in `generateContentRequest`.
    if let Some(Value::Object(mut inner)) = body.remove("generateContentRequest") {
        camel_case(&mut inner);
        for (k, v) in inner {
            body.insert(k, v);
        }
    }
    if let Some(Value::Object(tc)) = body.get_mut("toolConfig") {
        camel_case(tc);
        if let Some(Value::Object(fc)) = tc.get_mut("functionCallingConfig") {
            camel_case(fc);
        }
    }
    // Google's parser takes one Content where a list is due, one Part where parts are, and a
    // bare string as the system instruction; they are read as the list and Content they stand
    // for.
    if let Some(c @ Value::Object(_)) = body.get_mut("contents") {
        *c = Value::Array(vec![std::mem::take(c)]);
    }
    if let Some(Value::String(text)) = body.get("systemInstruction") {
        let si = json!({"parts": [{"text": text}]});
        body.insert("systemInstruction".into(), si);
    }
    let parts = |content: &mut Value| {
        if let Some(p @ Value::Object(_)) = content.get_mut("parts") {
            *p = Value::Array(vec![std::mem::take(p)]);
        }
        for part in content
            .get_mut("parts")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(p) = part.as_object_mut() {
                camel_case(p);
            }
        }
    };
    for content in body
        .get_mut("contents")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        parts(content);
    }
    if let Some(si) = body.get_mut("systemInstruction") {
        parts(si);
    }
    for tool in body
        .get_mut("tools")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let Some(t) = tool.as_object_mut() else {
            continue;
        };
        camel_case(t);
        for d in t
            .get_mut("functionDeclarations")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(d) = d.as_object_mut() {
                camel_case(d);
            }
        }
    }
}

/// The declarations of every `functionDeclarations` group, in order, as entries of their own;
/// a tool of another kind (`googleSearch`, `codeExecution`) stays one entry.
fn flatten_tools(body: &mut Map<String, Value>) -> Result<(), String> {
    let Some(tools) = body.get_mut("tools") else {
        return Ok(());
    };
    let Value::Array(groups) = std::mem::take(tools) else {
        return Err("`tools` must be a list of Tool objects".into());
    };
    let mut out = Vec::new();
    for (i, g) in groups.into_iter().enumerate() {
        let Value::Object(mut g) = g else {
            return Err(format!("tools[{i}]: a Tool must be an object"));
        };
        match g.remove("functionDeclarations") {
            Some(Value::Array(decls)) => {
                if let Some(j) = decls
                    .iter()
                    .position(|d| !d.get("name").is_some_and(Value::is_string))
                {
                    return Err(format!(
                        "tools[{i}].functionDeclarations[{j}]: a FunctionDeclaration needs a `name` string"
                    ));
                }
                out.extend(decls);
                if !g.is_empty() {
                    out.push(Value::Object(g));
                }
            }
            Some(_) => {
                return Err(format!(
                    "tools[{i}].functionDeclarations: must be a list of FunctionDeclaration objects"
                ))
            }
            None => out.push(Value::Object(g)),
        }
    }
    body.insert("tools".into(), Value::Array(out));
    Ok(())
}

/// Keywords the OpenAPI-subset `parameters` schema refuses (a request with one is refused
/// whole). From Google's `Schema` reference (the fields it lists; read 2026-12-03) and public
/// 400 reports of the refusals (docs/notes/gemini.md). `parametersJsonSchema` takes JSON Schema
/// as it is and is not checked.
const SUBSET_REFUSES: &[&str] = &[
    "$ref",
    "$defs",
    "definitions",
    "$schema",
    "$id",
    "const",
    "oneOf",
    "allOf",
    "not",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "propertyNames",
    "patternProperties",
    "unevaluatedProperties",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "contains",
    "prefixItems",
];

/// What the OpenAPI-subset schema at `path` refuses, if anything: a keyword it lacks, a list of
/// types, an enum of something other than strings. Walks at most `budget` nodes.
pub fn subset_fault(schema: &Value, path: &str, budget: &mut usize) -> Option<String> {
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let o = schema.as_object()?;
    if let Some(k) = o.keys().find(|k| SUBSET_REFUSES.contains(&k.as_str())) {
        return Some(format!(
            "{path}: `{k}` is not a field of Gemini's Schema (send JSON Schema in `parametersJsonSchema` instead)"
        ));
    }
    if o.get("type").is_some_and(Value::is_array) {
        return Some(format!(
            "{path}.type: a list of types is not accepted (use `nullable` or `anyOf`)"
        ));
    }
    if let Some(e) = o.get("enum").and_then(Value::as_array) {
        if e.iter().any(|v| !v.is_string()) {
            return Some(format!("{path}.enum: enum values must be strings"));
        }
    }
    let children = o
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.iter().map(|(k, v)| (format!("properties.{k}"), v)))
        .chain(o.get("items").map(|v| ("items".to_string(), v)))
        .chain(
            o.get("anyOf")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, v)| (format!("anyOf[{i}]"), v)),
        );
    for (k, child) in children {
        if let Some(f) = subset_fault(child, &format!("{path}.{k}"), budget) {
            return Some(f);
        }
    }
    None
}

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

/// Whether a function name is one Gemini takes: a letter or `_` first, then letters, digits,
/// `_ . : -`, at most [`MAX_NAME`] characters.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first
        && name.len() <= MAX_NAME
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
}

/// The modes `functionCallingConfig.mode` takes.
const MODES: &[&str] = &["MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"];

/// What Gemini refuses in a body beyond its shape and its declarations' limits, as the mock
/// answers it (the forward gateway lets Google say): a `functionCallingConfig.mode` it does not
/// have, `allowedFunctionNames` with a mode other than ANY, or naming a function no declaration
/// has (Gemini API reference, `FunctionCallingConfig`, read 2026-12-04: the names "should only
/// be set when the Mode is ANY", and they name declared functions); two declarations with one
/// name. The wording is toolcost's.
pub fn refusals(body: &Value, tools: &[ToolEntry]) -> Result<(), String> {
    let mut names = std::collections::HashSet::new();
    for (i, t) in tools.iter().enumerate() {
        if let Some(n) = t.as_ref().name() {
            if !names.insert(n) {
                return Err(format!(
                    "tools.functionDeclarations[{i}]: `{n}` is declared twice"
                ));
            }
        }
    }
    let Some(fc) = body.pointer("/toolConfig/functionCallingConfig") else {
        return Ok(());
    };
    let mode = fc.get("mode").and_then(Value::as_str).unwrap_or("AUTO");
    if !MODES.contains(&mode) {
        return Err(format!(
            "toolConfig.functionCallingConfig.mode: `{mode}` is not one of AUTO, ANY, NONE, VALIDATED"
        ));
    }
    if let Some(allowed) = fc.get("allowedFunctionNames") {
        let list = allowed
            .as_array()
            .ok_or("toolConfig.functionCallingConfig.allowedFunctionNames must be a list")?;
        if mode != "ANY" && !list.is_empty() {
            return Err(format!(
                "toolConfig.functionCallingConfig.allowedFunctionNames is taken only with mode ANY, not `{mode}`"
            ));
        }
        for n in list {
            let n = n.as_str().unwrap_or("");
            if !names.contains(n) {
                return Err(format!(
                    "toolConfig.functionCallingConfig.allowedFunctionNames: `{n}` is not a declared function"
                ));
            }
        }
    }
    Ok(())
}

/// The parts of an answer's Anthropic-form blocks: text and function calls.
fn parts(reply: &Reply) -> Vec<Value> {
    reply
        .content
        .iter()
        .filter_map(|b| match b["type"].as_str() {
            Some("text") => Some(json!({"text": b["text"]})),
            Some("tool_use") => Some(
                json!({"functionCall": {"id": b["id"], "name": b["name"], "args": b["input"]}}),
            ),
            _ => None,
        })
        .collect()
}

/// `usageMetadata` of an answer (`output`: the candidates' tokens so far).
fn usage(reply: &Reply, output: u64) -> Value {
    let u = reply.usage;
    let prompt = u.total_input();
    let mut m = json!({"promptTokenCount": prompt, "candidatesTokenCount": output,
                       "totalTokenCount": prompt.saturating_add(output)});
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
        ]
    }

    fn route(&self, _endpoint: Endpoint, path: &str, query: Option<&str>) -> Result<Route, String> {
        let rest = VERSIONS
            .iter()
            .find_map(|v| path.strip_prefix(&format!("/{v}/models/")))
            .ok_or_else(|| format!("`{path}` is not a Gemini model method"))?;
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
            model: Some(model.to_string()),
            query_key: key,
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
                json!({"role": "user", "parts": [{"text": r.system}]}),
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
        json!({"candidates": [{"content": {"role": "model", "parts": parts(&reply)},
                               "finishReason": finish(&reply), "index": 0}],
               "usageMetadata": usage(&reply, reply.usage.output),
               "modelVersion": model, "responseId": format!("mock-{id}")})
    }

    fn events(&self, model: &str, id: u64, reply: Reply, _request: &Value) -> Vec<String> {
        // One event per part; usage rides on every event, the last holding the totals and the
        // finish reason.
        let parts = parts(&reply);
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
            out.push(sse(
                None,
                &json!({"candidates": [candidate], "usageMetadata": usage(&reply, output),
                        "modelVersion": model, "responseId": format!("mock-{id}")}),
            ));
        }
        out
    }

    fn stream_complete(&self, data: &str) -> bool {
        // Only a candidate's own finish reason ends the stream (a call's arguments may hold a
        // key of that name): read where it is, in an event that mentions it at all.
        data.contains("\"finishReason\"")
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
            .map(|u| ObservedUsage {
                // Results of Google's own tools are billed as input, thoughts as output.
                input: count(u, "promptTokenCount")
                    .saturating_add(count(u, "toolUsePromptTokenCount")),
                cached: count(u, "cachedContentTokenCount"),
                written: 0,
                output: count(u, "candidatesTokenCount")
                    .saturating_add(count(u, "thoughtsTokenCount")),
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
                "function name `{bad}` is not one Gemini takes: a letter or `_` first, then letters, digits, `_ . : -`, at most {MAX_NAME} characters"
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
mod tests {
    use super::*;

    #[test]
    fn snake_case_bodies_read_as_camel_case_and_groups_flatten() {
        let mut body = json!({
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "system_instruction": {"parts": [{"text": "be brief"}]},
            "tools": [{"function_declarations": [{"name": "a", "description": "d",
                        "parameters_json_schema": {"type": "object", "properties": {"snake_case_arg": {"type": "string"}}}}]},
                      {"functionDeclarations": [{"name": "b"}]},
                      {"google_search": {}}],
        });
        Gemini.check_shape(&mut body).unwrap();
        assert!(body.get("systemInstruction").is_some());
        let tools = body["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 3);
        assert_eq!(tools[0]["name"], "a");
        // The user's property names keep their spelling.
        assert!(tools[0]["parametersJsonSchema"]["properties"]
            .get("snake_case_arg")
            .is_some());
        assert_eq!(tools[1]["name"], "b");
        assert!(tools[2].get("googleSearch").is_some());
    }

    #[test]
    fn what_googles_parser_takes_is_read_as_the_list_it_stands_for() {
        let mut body = json!({
            "contents": {"role": "user", "parts": {"text": "hi"}},
            "systemInstruction": "be brief",
            "tool_config": {"function_calling_config": {"mode": "ANY", "allowed_function_names": ["a"]}},
        });
        Gemini.check_shape(&mut body).unwrap();
        assert_eq!(body["contents"][0]["parts"][0]["text"], "hi");
        assert_eq!(body["systemInstruction"]["parts"][0]["text"], "be brief");
        assert_eq!(
            body["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"][0],
            "a"
        );
        let mut nameless = json!({"contents": [{"parts": []}], "tools": [{"functionDeclarations": [{"description": "x"}]}]});
        assert!(Gemini
            .check_shape(&mut nameless)
            .unwrap_err()
            .contains("needs a `name`"));
        let mut legacy = json!({"contents": [{"role": "function", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]});
        assert!(Gemini.check_shape(&mut legacy).is_ok());
        // A call's arguments may hold a key named finishReason: not the end of the stream.
        assert!(!Gemini.stream_complete(r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"finishReason":"x"}}}]}}]}"#));
        assert!(Gemini.stream_complete(r#"{"candidates":[{"finishReason":"STOP"}]}"#));
        assert!(!Gemini.stream_complete(r#"{"candidates":[{"finishReason":null}]}"#));
        // A stream without alt=sse is one JSON array; its last usage holds the totals.
        let array = r#"[{"usageMetadata":{"promptTokenCount":3}},{"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}]"#;
        assert_eq!(Gemini.observed_usage(array, false).unwrap().output, 2);
    }

    #[test]
    fn count_tokens_takes_a_whole_request() {
        let mut body = json!({"generateContentRequest": {"model": "models/m",
            "contents": [{"parts": [{"text": "x"}]}], "tools": [{"functionDeclarations": [{"name": "f"}]}]}});
        Gemini.check_shape(&mut body).unwrap();
        assert_eq!(body["tools"][0]["name"], "f");
        assert_eq!(body["contents"][0]["parts"][0]["text"], "x");
    }

    #[test]
    fn bad_shapes_are_refused() {
        for (body, why) in [
            (json!({}), "no `contents`"),
            (json!({"contents": []}), "must not be empty"),
            (
                json!({"contents": [{"role": "assistant", "parts": []}]}),
                "not one of user, model",
            ),
            (
                json!({"contents": [{"role": "user"}]}),
                "needs a `parts` list",
            ),
            (
                json!({"contents": [{"parts": []}], "tools": {"a": 1}}),
                "list of Tool objects",
            ),
        ] {
            let mut b = body;
            let e = Gemini.check_shape(&mut b).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn routes_read_model_method_and_key() {
        let e = Gemini.endpoints()[0];
        let r = Gemini
            .route(
                e,
                "/v1beta/models/gemini-3.5-flash:streamGenerateContent",
                Some("alt=sse&key=SECRET"),
            )
            .unwrap();
        assert_eq!(r.model.as_deref(), Some("gemini-3.5-flash"));
        assert_eq!(r.stream, Some(true));
        assert!(!r.count_only);
        assert_eq!(
            r.path,
            "/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(r.query_key.as_deref(), Some("SECRET"));
        // A key's name spelled with escapes is still the key, and never stays in the path.
        let r = Gemini
            .route(
                e,
                "/v1beta/models/m:generateContent",
                Some("%6Bey=A%2Bb&alt=sse"),
            )
            .unwrap();
        assert_eq!(r.query_key.as_deref(), Some("A%2Bb"));
        assert_eq!(r.path, "/v1beta/models/m:generateContent?alt=sse");
        let c = Gemini
            .route(e, "/v1/models/gemini-3.5-flash:countTokens", None)
            .unwrap();
        assert!(c.count_only);
        for bad in [
            "/v1beta/models/gemini-3.5-flash",
            "/v1beta/models/m:embedContent",
            "/v1beta/models/:generateContent",
        ] {
            assert!(Gemini.route(e, bad, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_subset_schema_refusals_and_names() {
        let mut budget = 100;
        let ok = json!({"type": "OBJECT", "properties": {"a": {"type": "STRING", "enum": ["x"]}}});
        assert_eq!(subset_fault(&ok, "f", &mut budget), None);
        for (bad, why) in [
            (json!({"type": "object", "$defs": {}}), "`$defs`"),
            (
                json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
                "list of types",
            ),
            (
                json!({"type": "object", "properties": {"a": {"enum": [1, 2]}}}),
                "must be strings",
            ),
            (json!({"type": "array", "items": {"oneOf": []}}), "`oneOf`"),
        ] {
            let mut budget = 100;
            let f = subset_fault(&bad, "f", &mut budget).unwrap();
            assert!(f.contains(why), "{f}");
        }
        assert!(valid_name("mcp__server__tool.v2:x-y"));
        assert!(!valid_name("9lives"));
        assert!(!valid_name("has space"));
        assert!(!valid_name(&"a".repeat(129)));
    }

    #[test]
    fn function_calling_config_is_checked() {
        let tools: Vec<ToolEntry> = [json!({"name": "a"}), json!({"name": "b"})]
            .into_iter()
            .map(ToolEntry::Json)
            .collect();
        let with = |fc: Value| json!({"toolConfig": {"functionCallingConfig": fc}});
        assert!(refusals(
            &with(json!({"mode": "ANY", "allowedFunctionNames": ["a"]})),
            &tools
        )
        .is_ok());
        assert!(refusals(&with(json!({"mode": "NONE"})), &tools).is_ok());
        for (fc, why) in [
            (json!({"mode": "SOMETIMES"}), "not one of"),
            (
                json!({"mode": "AUTO", "allowedFunctionNames": ["a"]}),
                "only with mode ANY",
            ),
            (
                json!({"mode": "ANY", "allowedFunctionNames": ["c"]}),
                "not a declared",
            ),
        ] {
            let e = refusals(&with(fc), &tools).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
        let twice: Vec<ToolEntry> = [json!({"name": "a"}), json!({"name": "a"})]
            .into_iter()
            .map(ToolEntry::Json)
            .collect();
        assert!(refusals(&json!({}), &twice).unwrap_err().contains("twice"));
    }

    #[test]
    fn usage_reads_cumulative_stream_and_thoughts() {
        let text = "data: {\"candidates\":[],\"usageMetadata\":{\"promptTokenCount\":10}}\n\n\
                    data: {\"candidates\":[{\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":10,\"cachedContentTokenCount\":4,\"candidatesTokenCount\":3,\"thoughtsTokenCount\":2,\"toolUsePromptTokenCount\":5}}\n\n";
        let u = Gemini.observed_usage(text, true).unwrap();
        assert_eq!(
            u,
            ObservedUsage {
                input: 15,
                cached: 4,
                written: 0,
                output: 5
            }
        );
    }
}
