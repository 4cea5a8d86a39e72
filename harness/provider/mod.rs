//! Provider wire formats, one module each: the request body and tool-definition shape, the
//! answer (whole and as server-sent events), usage parsing, the error shape, the auth header,
//! and the limits the provider enforces on a request.
//!
//! [`Format`] names a format; [`Format::spec`] is the one place that maps a name to its module.
//! Adding a format means one file here, one variant and one arm in `spec`; everything else
//! (surfaces, the gateway and its mock upstream, measure, sweep) goes through [`Provider`].

pub(crate) mod anthropic_messages;
pub(crate) mod gemini;
mod openai_chat;
pub(crate) mod openai_responses;
pub mod tools;
mod vertex;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tools::{Frame, ToolEntry, ToolRef};

/// A provider request format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Anthropic Messages: `POST /v1/messages`.
    AnthropicMessages,
    /// OpenAI Chat Completions: `POST /v1/chat/completions`.
    OpenaiChat,
    /// OpenAI Responses: `POST /v1/responses`.
    OpenaiResponses,
    /// Gemini: `POST /v1beta/models/{model}:generateContent` (and `:streamGenerateContent`,
    /// `:countTokens`; `/v1` too).
    Gemini,
}

impl Format {
    /// Every format, in the order the gateway mounts them.
    pub const ALL: [Format; 4] = [
        Format::AnthropicMessages,
        Format::OpenaiChat,
        Format::OpenaiResponses,
        Format::Gemini,
    ];

    /// The module that implements this format.
    pub fn spec(self) -> &'static dyn Provider {
        match self {
            Format::AnthropicMessages => &anthropic_messages::AnthropicMessages,
            Format::OpenaiChat => &openai_chat::OpenaiChat,
            Format::OpenaiResponses => &openai_responses::OpenaiResponses,
            Format::Gemini => &gemini::Gemini,
        }
    }

    /// The format's name in logs and reports (`anthropic-messages`, `openai-chat`,
    /// `openai-responses`, `gemini`).
    pub fn name(self) -> &'static str {
        self.spec().name()
    }
}

/// Token counts of one request, split the way providers bill them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Usage {
    /// Input tokens not read from cache and not written to it.
    pub uncached_input: u64,
    pub cached_input: u64,
    pub cache_write: u64,
    pub output: u64,
}

impl Usage {
    pub fn total_input(&self) -> u64 {
        self.uncached_input
            .saturating_add(self.cached_input)
            .saturating_add(self.cache_write)
    }
}

/// Name, description and schema of a definition in any format (`None` for server tools).
pub fn definition_parts(def: &Value) -> Option<(&str, &str, &Value)> {
    let f = def.get("function").unwrap_or(def);
    let name = f.get("name")?.as_str()?;
    let schema = f
        .get("input_schema")
        .or_else(|| f.get("parameters"))
        .or_else(|| f.get("parametersJsonSchema"))?;
    let desc = f.get("description").and_then(Value::as_str).unwrap_or("");
    Some((name, desc, schema))
}

/// A JSON object of these members, in this order. The values are moved in: `json!` would
/// serialise a copy of each, and a request carries every definition's schema.
fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// A definition, marked for deferred loading when `defer` (the mark goes last, after the
/// format's own fields).
fn deferrable(mut def: Value, defer: bool) -> Value {
    if defer {
        def["defer_loading"] = Value::Bool(true);
    }
    def
}

/// Whether a definition is marked for deferred loading.
pub fn is_deferred(def: &Value) -> bool {
    def.get("defer_loading")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Whether a content block is a tool call the provider's running code made (Anthropic's
/// programmatic tool calling: a `tool_use` whose `caller` is a code-execution tool, not
/// `direct`). Such calls and their results stay out of the model's context.
pub fn called_from_code(block: &Value) -> bool {
    block["type"] == "tool_use"
        && block["caller"]["type"]
            .as_str()
            .is_some_and(|c| c != "direct")
}

/// Whether a tool is a Responses `namespace` group.
pub fn is_namespace(def: &Value) -> bool {
    def["type"] == "namespace"
}

/// A namespace's member tools (empty for anything else).
pub fn namespace_members(def: &Value) -> &[Value] {
    if !is_namespace(def) {
        return &[];
    }
    def.get("tools")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Every deferred function of a tools array, namespaces' deferred members included.
pub fn deferred_definitions(tools: &[ToolEntry]) -> Vec<ToolRef<'_>> {
    tools
        .iter()
        .map(ToolEntry::as_ref)
        .flat_map(|t| match t.is_namespace() {
            true => t.members(),
            false => vec![t],
        })
        .filter(|d| d.is_deferred())
        .collect()
}

/// The namespace a deferred member belongs to, if any.
pub fn namespace_of<'a>(tools: &'a [ToolEntry], name: &str) -> Option<ToolRef<'a>> {
    tools.iter().map(ToolEntry::as_ref).find(|t| {
        t.members()
            .iter()
            .any(|m| m.parts().is_some_and(|p| p.name == name))
    })
}

/// Functions the model sees in full: every non-deferred function, namespace members included
/// (server tools such as `tool_search` are not functions).
pub fn visible_functions(tools: &[ToolEntry]) -> usize {
    tools
        .iter()
        .map(ToolEntry::as_ref)
        .map(|t| match t.is_namespace() {
            true => t.members().iter().filter(|m| !m.is_deferred()).count(),
            false => usize::from(t.parts().is_some() && !t.is_deferred()),
        })
        .sum()
}

/// Where a client puts its prompt-cache marks (formats without marks ignore them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMark {
    /// The last tool definition.
    Tools,
    /// The last system block.
    System,
    /// The last block of the newest message (moves forward as the conversation grows).
    LastMessage,
}

/// One endpoint a format serves: its path and whether it only counts tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    pub path: &'static str,
    /// `count_tokens`: bills the request without answering it.
    pub count_only: bool,
}

/// Where a request goes, read from its URL by [`Provider::route`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The path (and query) to forward it to and to log.
    pub path: String,
    /// Whether it only counts tokens.
    pub count_only: bool,
    /// Whether the answer streams, where the URL says (else the body's `stream` does).
    pub stream: Option<bool>,
    /// The model, where the URL names it (else the body's `model` does).
    pub model: Option<String>,
    /// A key the client put in the query (`?key=`), taken out of `path`.
    pub query_key: Option<String>,
    /// The upstream takes the gateway's key as an OAuth bearer token (`Authorization: Bearer`),
    /// whatever the format's own header: Vertex AI.
    pub bearer: bool,
}

impl Route {
    /// An endpoint answered as it is: its own path, nothing read from the URL.
    pub fn plain(endpoint: Endpoint) -> Route {
        Route {
            path: endpoint.path.to_string(),
            count_only: endpoint.count_only,
            stream: None,
            model: None,
            query_key: None,
            bearer: false,
        }
    }
}

/// A model's answer, whatever the format: content blocks in Anthropic form (`text`,
/// `tool_use`, `server_tool_use`, `tool_search_tool_result`), the stop reason and the usage.
#[derive(Debug, Clone, Copy)]
pub struct Reply<'a> {
    pub content: &'a [Value],
    pub stop_reason: &'a str,
    pub usage: &'a Usage,
    /// Tokens of hidden thinking in `usage.output`.
    pub thoughts: u64,
}

/// Usage read from a provider's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ObservedUsage {
    /// All input tokens, cached and written included.
    pub input: u64,
    pub cached: u64,
    pub written: u64,
    pub output: u64,
    /// A usage member was there but was not a count of tokens (text, a negative number, a
    /// fraction): the figures are not believed ([`UsageReader`]).
    pub unreadable: bool,
}

/// A tool call the client must run, read back from the model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The id its result must name (`tool_use_id`, `tool_call_id` or `call_id`).
    pub id: String,
    pub name: String,
    pub input: Value,
}

/// A model's answer as the client reads it: the items it appends to the conversation (what a
/// real client sends back next round) and the tool calls it must run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientRead {
    pub items: Vec<Value>,
    pub calls: Vec<ToolCall>,
}

/// The error body both OpenAI formats answer with: the same envelope on Chat Completions
/// and Responses.
fn openai_error(status: u16, message: &str) -> Value {
    let ty = if status < 500 {
        "invalid_request_error"
    } else {
        "server_error"
    };
    serde_json::json!({"error": {"message": message, "type": ty, "param": null, "code": null}})
}

/// A tool call's `arguments` text as JSON (text that is not JSON stays a string, as a client
/// would pass it on).
fn arguments(v: &Value) -> Value {
    match v {
        // Text too large to build as a tree stays a string too.
        Value::String(s) if crate::json::check_nodes(s.as_bytes(), "arguments").is_err() => {
            v.clone()
        }
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        Value::Null => Value::Object(Default::default()),
        other => other.clone(),
    }
}

/// A limit drawn as a line in plots: the value and its legend.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolLimit {
    pub tools: usize,
    pub label: String,
}

/// What a provider format is.
pub trait Provider: Sync {
    /// The name in logs and reports.
    fn name(&self) -> &'static str;
    /// The endpoints the gateway mounts for it.
    fn endpoints(&self) -> &'static [Endpoint];
    /// Where a request to one of its endpoints goes: a format whose URL names the model and
    /// the method reads them from it; the others answer the endpoint as it is.
    fn route(
        &self,
        endpoint: Endpoint,
        _path: &str,
        _query: Option<&str>,
    ) -> Result<Route, String> {
        Ok(Route::plain(endpoint))
    }
    /// The path a client posts a round to (the model's, where the URL names it).
    fn call_path(&self, _model: &str, _stream: bool) -> String {
        self.endpoints()
            .iter()
            .find(|e| !e.count_only)
            .map_or("/", |e| e.path)
            .to_string()
    }
    /// The answer of a count-only endpoint.
    fn count_answer(&self, input_tokens: u64) -> Value {
        serde_json::json!({"input_tokens": input_tokens})
    }
    /// What a body's `tools` array is written between, around its entries (`[` and `]`, or
    /// a group that holds them).
    fn tools_wrap(&self) -> (&'static str, &'static str) {
        ("[", "]")
    }
    /// The `tools` array of these entries as a tree: the same JSON as [`Provider::tools_wrap`]
    /// writes around them.
    fn tools_tree(&self, entries: Vec<Value>) -> Value {
        Value::Array(entries)
    }
    /// The body field holding the conversation (`messages`, or the Responses `input` list).
    fn conversation_key(&self) -> &'static str;
    /// Check (and normalise) the shape of a received body beyond `model`: the conversation in
    /// the form this format requires. Normalising never changes what is billed.
    fn check_shape(&self, body: &mut Value) -> Result<(), String>;
    /// The request body of round one, its `tools` key holding the place of the entries
    /// (the request's `with_tools`) as `null`.
    fn request(&self, r: RequestParts) -> Value;
    /// How this format writes a function definition around its name, description and schema:
    /// the same bytes as [`Provider::function_definition`]'s tree.
    fn definition_frame(&self) -> &'static Frame;
    /// A function (tool) definition in this format's shape.
    fn function_definition(
        &self,
        name: &str,
        description: &str,
        schema: Value,
        defer: bool,
    ) -> Value;
    /// The user's turn, after the client's context if it has one.
    fn user_message(&self, context: Option<&str>, text: &str) -> Value;
    /// The assistant's tool call.
    fn tool_call(&self, id: &str, name: &str, input: Value) -> Value;
    /// A tool result of the call `id` to `name`; `references` expand deferred definitions
    /// where the format has them.
    fn tool_result(&self, id: &str, name: &str, text: &str, references: &[String]) -> Value;
    /// Read a whole answer as the client does: the conversation items it appends and the tool
    /// calls it runs (client-executed searches included). An answer without this format's
    /// output field is an error.
    fn read_answer(&self, answer: &Value) -> Result<ClientRead, String>;
    /// The conversation items that carry one round's tool results, each made by `tool_result`
    /// (Anthropic puts them in one user message; OpenAI sends one item each).
    fn result_items(&self, results: Vec<Value>) -> Vec<Value>;
    /// The provider's error body for a status.
    fn error_body(&self, status: u16, message: &str) -> Value;
    /// The whole answer.
    fn answer(&self, model: &str, id: u64, reply: Reply) -> Value;
    /// The answer as server-sent events in the provider's grammar; `request` decides options
    /// such as whether usage rides on the last chunk.
    fn events(&self, model: &str, id: u64, reply: Reply, request: &Value) -> Vec<String>;
    /// A streamed answer as it goes on the wire to a request at `path` (its query included):
    /// the chunks and their content type. Server-sent events unless the format streams
    /// otherwise where the request asks it to.
    fn stream_answer(
        &self,
        model: &str,
        id: u64,
        reply: Reply,
        request: &Value,
        _path: &str,
    ) -> (Vec<String>, &'static str) {
        (self.events(model, id, reply, request), "text/event-stream")
    }
    /// Whether an event's data is the stream's final event (after which the stream is whole).
    fn stream_complete(&self, data: &str) -> bool;
    /// Usage from an answer (whole JSON or the text of an event stream).
    fn observed_usage(&self, text: &str, streamed: bool) -> Option<ObservedUsage>;
    /// The header that carries an API key.
    fn auth_header(&self, key: &str) -> (&'static str, String);
    /// Provider limits a request's tools cross (`max_tools`: the client profile's own cap).
    fn limits(&self, tools: &[ToolEntry], max_tools: Option<usize>) -> Vec<String>;
    /// The tool-count limit drawn in plots.
    fn tool_limit(&self) -> ToolLimit;
    /// Put a client's cache marks on a request body, moving the newest-message mark forward
    /// (a no-op where the format caches without marks).
    fn place_cache_marks(&self, body: &mut Value, tools: &mut Vec<ToolEntry>, marks: &[CacheMark]);
    /// The price card for a model no card names.
    fn default_card(&self) -> &'static str;
}

/// What every round-one request is made of.
pub struct RequestParts<'a> {
    pub model: &'a str,
    pub max_tokens: u32,
    /// The system prompt's parts, in order: Anthropic sends each as its own text block, the
    /// other formats one text of them joined by a blank line.
    pub system: Vec<String>,
    pub user: Value,
}

/// The `messages` array a Messages or Chat Completions body must carry.
fn require_messages(body: &Value) -> Result<(), String> {
    match body.get("messages").and_then(Value::as_array) {
        None => Err("request body has no `messages` array".into()),
        Some(m) if m.is_empty() => Err("`messages` must not be empty".into()),
        Some(_) => Ok(()),
    }
}

/// Read server-sent `data:` lines as JSON documents.
fn sse_documents(text: &str) -> Vec<Value> {
    // Events too large to build as trees, together, are read as no documents.
    if crate::json::check_nodes(text.as_bytes(), "the events").is_err() {
        return Vec::new();
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .collect()
}

/// One server-sent event.
fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(e) => format!("event: {e}\ndata: {}\n\n", crate::json::compact(data)),
        None => format!("data: {}\n\n", crate::json::compact(data)),
    }
}

/// Reads an answer's usage members: one that is absent or `null` counts 0 (a provider leaves
/// out what it did not bill), a whole number of tokens counts as itself (`12.0` included), and
/// anything else counts 0 and marks the usage unreadable, so that no such figure is logged as
/// observed.
#[derive(Debug, Default)]
struct UsageReader {
    garbled: bool,
}

impl UsageReader {
    /// The member `k` of `v`.
    fn count(&mut self, v: &Value, k: &str) -> u64 {
        self.read(v.get(k))
    }

    /// The value at a JSON pointer into `v`.
    fn count_at(&mut self, v: &Value, pointer: &str) -> u64 {
        self.read(v.pointer(pointer))
    }

    fn read(&mut self, v: Option<&Value>) -> u64 {
        let n = match v {
            None | Some(Value::Null) => return 0,
            Some(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f <= u64::MAX as f64)
                    .map(|f| f as u64)
            }),
        };
        self.garbled |= n.is_none();
        n.unwrap_or(0)
    }
}
