//! Request bodies: a [`Request`] is the exact body a client sends, in one of the provider
//! formats of [`crate::provider`]; its compact JSON text is the wire bytes.

use crate::catalogue::Tool;
use crate::error::{Error, Result};
use crate::json;
use serde_json::Value;

pub use crate::provider::tools::{
    DefText, Definition, Namespace, Parts, Schema, ToolEntry, ToolRef, Tools,
};
pub use crate::provider::{
    called_from_code, deferred_definitions, definition_parts, is_deferred, is_namespace,
    namespace_members, Format,
};

/// One request body, built by a surface for one round. Its `tools` array is held apart from
/// the rest of the body ([`Tools`]): where the body has one, the `tools` key keeps its place in
/// `body` (as `null`) and the entries are written there when the body is.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub format: Format,
    /// The body, but for the entries of its `tools` array.
    pub body: Value,
    tools: Tools,
    /// Whether `body`'s `tools` stands for `tools` (a body whose `tools` is not an array keeps
    /// it as it is).
    placed: bool,
}

impl Request {
    /// A request from a whole body: its `tools` array, if it has one, becomes entries.
    pub fn new(format: Format, mut body: Value) -> Request {
        let tools = match body.get_mut("tools") {
            Some(t @ Value::Array(_)) => match std::mem::take(t) {
                Value::Array(items) => Some(items.into_iter().map(ToolEntry::Json).collect()),
                _ => None,
            },
            _ => None,
        };
        let placed = tools.is_some();
        Request {
            format,
            body,
            tools: Tools::new(tools.unwrap_or_default()),
            placed,
        }
    }

    /// A request from a body whose `tools` key holds the place of `tools` (the provider's
    /// [`crate::provider::Provider::request`] writes it so).
    pub fn with_tools(format: Format, body: Value, tools: Vec<ToolEntry>) -> Request {
        debug_assert!(body.get("tools").is_some_and(Value::is_null));
        Request {
            format,
            body,
            tools: Tools::new(tools),
            placed: true,
        }
    }

    /// The bytes on the wire.
    pub fn wire(&self) -> String {
        if !self.placed {
            return json::compact(&self.body);
        }
        let mut out = Vec::with_capacity(self.wire_bytes());
        self.write(&mut out).expect("writing to memory");
        String::from_utf8(out).expect("JSON text is UTF-8")
    }

    /// Write the body's compact JSON, its tools' entries in their place.
    pub fn write(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let Some(members) = self.body.as_object().filter(|_| self.placed) else {
            return Ok(serde_json::to_writer(out, &self.body)?);
        };
        debug_assert!(
            self.body.get("tools").is_some_and(Value::is_null),
            "a placed body's `tools` is the place of its entries"
        );
        out.write_all(b"{")?;
        for (i, (k, v)) in members.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut *out, k)?;
            out.write_all(b":")?;
            match k == "tools" {
                true => {
                    let (open, close) = self.wrap();
                    out.write_all(open.as_bytes())?;
                    for (j, t) in self.tools.iter().enumerate() {
                        if j > 0 {
                            out.write_all(b",")?;
                        }
                        t.write(out, true)?;
                    }
                    out.write_all(close.as_bytes())?;
                }
                false => serde_json::to_writer(&mut *out, v)?,
            }
        }
        out.write_all(b"}")
    }

    pub fn wire_bytes(&self) -> usize {
        let body = json::compact_len(&self.body);
        match self.placed {
            // `null` stands where the array goes.
            true => {
                let (open, close) = self.wrap();
                body - 4 + open.len() + close.len() + tools_len(self.tools.as_slice())
            }
            false => body,
        }
    }

    /// What the `tools` entries are written between: the format's group around them, or a
    /// bare list when there are none.
    fn wrap(&self) -> (&'static str, &'static str) {
        match self.tools.as_slice().is_empty() {
            true => ("[", "]"),
            false => self.format.spec().tools_wrap(),
        }
    }

    /// The `tools` entries, built-ins and catalogue definitions alike.
    pub fn tools(&self) -> &[ToolEntry] {
        self.tools.as_slice()
    }

    /// The entries of the body's `tools` array, where it has one (`None`: the body's `tools`
    /// member, if any, is not an array and stays in `body` as it was sent).
    pub fn tools_placed(&self) -> Option<&[ToolEntry]> {
        self.placed.then(|| self.tools.as_slice())
    }

    /// The `tools` entries as readers see them.
    pub fn tool_refs(&self) -> impl Iterator<Item = ToolRef<'_>> {
        self.tools.iter()
    }

    /// The `tools` entries, to change (copied first if another request shares them). A body
    /// that had no `tools` array gets one.
    pub fn tools_mut(&mut self) -> &mut Vec<ToolEntry> {
        if !self.placed {
            if let Some(m) = self.body.as_object_mut() {
                m.insert("tools".into(), Value::Null);
                self.placed = true;
            }
        }
        self.tools.make_mut()
    }

    /// Put the client's cache marks on the request, moving the newest-message mark forward
    /// (the format's [`crate::provider::Provider::place_cache_marks`]).
    pub fn place_cache_marks(&mut self, marks: &[crate::provider::CacheMark]) {
        if marks.is_empty() {
            return;
        }
        let spec = self.format.spec();
        // A body without a `tools` array keeps what it has: its tools are not touched.
        let mut none = Vec::new();
        let tools = match self.placed {
            true => self.tools.make_mut(),
            false => &mut none,
        };
        spec.place_cache_marks(&mut self.body, tools, marks);
    }

    /// Keep the first `n` tools (a prompt-cache prefix that ends among them), sharing them.
    pub fn truncate_tools(&mut self, n: usize) {
        self.tools.truncate(n);
    }

    /// Take the `tools` key and its entries out of the body.
    pub fn remove_tools(&mut self) {
        if self.placed {
            if let Some(m) = self.body.as_object_mut() {
                m.shift_remove("tools");
            }
            self.placed = false;
        }
        self.tools = Tools::default();
    }

    /// The whole body as one JSON tree, tools included: for the rare reader that needs it.
    pub fn body_value(&self) -> std::borrow::Cow<'_, Value> {
        if !self.placed {
            return std::borrow::Cow::Borrowed(&self.body);
        }
        let mut body = self.body.clone();
        let entries: Vec<Value> = self.tools.iter().map(|t| t.value().into_owned()).collect();
        body["tools"] = match entries.is_empty() {
            true => Value::Array(entries),
            false => self.format.spec().tools_tree(entries),
        };
        std::borrow::Cow::Owned(body)
    }

    /// The conversation (`messages`, or the Responses `input` items), empty if absent.
    pub fn messages(&self) -> &[Value] {
        self.body
            .get(self.format.spec().conversation_key())
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The conversation, appended to in later rounds.
    pub fn messages_mut(&mut self) -> &mut Vec<Value> {
        self.body[self.format.spec().conversation_key()]
            .as_array_mut()
            .expect("every request has a conversation")
    }

    /// Parse a body received from a client, checking its format's required shape.
    pub fn parse(format: Format, body: &[u8]) -> Result<Request> {
        Request::parse_routed(format, body, None)
    }

    /// [`Request::parse`] for a body whose URL names its model (Gemini's): the model is put in
    /// the body, where every reader of a request finds it (the URL's wins over any `model`
    /// the body names).
    pub fn parse_routed(format: Format, body: &[u8], model: Option<&str>) -> Result<Request> {
        crate::json::check_nodes(body, "request body").map_err(Error::input)?;
        let mut body: Value = serde_json::from_slice(body).map_err(|e| {
            Error::input(format!("request body: {}", crate::json::why_unreadable(&e)))
        })?;
        if !body.is_object() {
            return Err(Error::input("request body is not a JSON object"));
        }
        format.spec().check_shape(&mut body).map_err(Error::input)?;
        if let (Some(m), Some(o)) = (model, body.as_object_mut()) {
            o.insert("model".into(), Value::String(m.to_string()));
        }
        if !body.get("model").is_some_and(Value::is_string) {
            return Err(Error::input("request body has no `model` string"));
        }
        Ok(Request::new(format, body))
    }
}

/// Bytes of a `tools` array of these entries, counted without writing it; a long one on all
/// cores.
fn tools_len(tools: &[ToolEntry]) -> usize {
    let inner: usize = match tools.len() >= 1024 {
        true => crate::sync::map_on_cores(tools, |t| t.as_ref().compact_len())
            .into_iter()
            .sum(),
        false => tools.iter().map(|t| t.as_ref().compact_len()).sum(),
    };
    inner + tools.len().saturating_sub(1)
}

/// An MCP tool as the client presents it to the model, renamed by the client's rule.
pub fn tool_definition(format: Format, name: &str, tool: &Tool, defer: bool) -> Value {
    let (description, schema) = tool.definition_parts();
    function_definition(format, name, &description, schema, defer)
}

/// A function definition in the format's shape.
pub fn function_definition(
    format: Format,
    name: &str,
    description: &str,
    schema: Value,
    defer: bool,
) -> Value {
    format
        .spec()
        .function_definition(name, description, schema, defer)
}

/// The user's turn, after the client's context if it has one.
pub fn user_message(format: Format, context: Option<&str>, text: &str) -> Value {
    format.spec().user_message(context, text)
}

/// The assistant's tool call, in the format's shape.
pub fn tool_call(format: Format, id: &str, name: &str, input: Value) -> Value {
    format.spec().tool_call(id, name, input)
}

/// A tool result; `references` become `tool_reference` blocks where the format has them, which
/// expand deferred definitions in place.
pub fn tool_result(
    format: Format,
    id: &str,
    name: &str,
    text: &str,
    references: &[String],
) -> Value {
    format.spec().tool_result(id, name, text, references)
}

/// Anthropic's mid-conversation tool change: a `role: "system"` message of `tool_addition`
/// blocks, each carrying a definition by value (`tool_definition`). The tools are offered from
/// this point of the conversation on; `tools` and the prefix before it stay as they were
/// (anthropic-sdk-python 2.14.0: `BetaSystemMessageParam`, `BetaRequestToolAdditionBlockParam`,
/// and its tool runner's `add_tools`, which sends exactly this after the tool results). A
/// definition by value needs the `inline-tools-2026-09-15` beta; the older
/// `mid-conversation-tool-changes-2026-07-01` takes references only (Anthropic's docs on
/// mid-conversation tool changes, read 2026-12-02).
pub fn tool_addition_message(definitions: Vec<Value>) -> Value {
    let blocks: Vec<Value> = definitions
        .into_iter()
        .map(|d| serde_json::json!({"type": "tool_addition", "tool": {"type": "tool_definition", "definition": d}}))
        .collect();
    serde_json::json!({"role": "system", "content": blocks})
}

/// The Responses API's mid-conversation tool change: an `additional_tools` input item (role
/// `developer`, the only one it takes) whose tools are available from this item on
/// (openai-python 3.57.0: `AdditionalTools` in `ResponseInputItemParam`).
pub fn additional_tools_item(definitions: Vec<Value>) -> Value {
    serde_json::json!({"type": "additional_tools", "role": "developer", "tools": definitions})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Marks go on the tools a body has; a body whose `tools` is absent, `null` or not an array
    /// is written as it was sent, and a placed body's bytes are its tree's.
    #[test]
    fn marks_leave_a_body_without_a_tools_array_as_it_was() {
        let marks = [
            crate::provider::CacheMark::Tools,
            crate::provider::CacheMark::System,
        ];
        for tools in [
            None,
            Some(json!(null)),
            Some(json!({"a": 1})),
            Some(json!("x")),
        ] {
            let mut body = json!({"model": "m", "system": [{"type": "text", "text": "s"}],
                "messages": [{"role": "user", "content": "hi"}]});
            if let Some(t) = &tools {
                body["tools"] = t.clone();
            }
            let mut req = Request::new(Format::AnthropicMessages, body.clone());
            assert_eq!(req.wire(), json::compact(&body));
            req.place_cache_marks(&marks);
            let mut marked = body.clone();
            marked["system"][0]["cache_control"] = json!({"type": "ephemeral"});
            assert_eq!(req.wire(), json::compact(&marked), "{tools:?}");
            assert_eq!(req.wire_bytes(), req.wire().len());
        }
        let body = json!({"model": "m", "tools": [{"name": "a", "description": "d",
            "input_schema": {"type": "object"}}], "messages": [{"role": "user", "content": "hi"}]});
        let mut req = Request::new(Format::AnthropicMessages, body.clone());
        req.place_cache_marks(&marks);
        let mut marked = body;
        marked["tools"][0]["cache_control"] = json!({"type": "ephemeral"});
        assert_eq!(req.wire(), json::compact(&marked));
        assert_eq!(req.wire_bytes(), req.wire().len());
        assert_eq!(req.body_value().as_ref(), &marked);
    }

    /// A format whose tools array is a group around the entries (Gemini's) writes and builds
    /// the same JSON.
    #[test]
    fn the_tools_group_written_and_built_as_a_tree_agree() {
        let body = json!({"contents": [{"parts": [{"text": "x"}]}], "tools": null});
        let entries: Vec<ToolEntry> = [
            json!({"name": "a"}),
            json!({"name": "b", "description": "d"}),
        ]
        .into_iter()
        .map(ToolEntry::Json)
        .collect();
        let req = Request::with_tools(Format::Gemini, body, entries);
        let written: Value = serde_json::from_str(&req.wire()).unwrap();
        assert_eq!(written, *req.body_value());
        assert_eq!(written["tools"][0]["functionDeclarations"][1]["name"], "b");
        assert_eq!(req.wire().len(), req.wire_bytes());
    }
}
