//! Request bodies: a [`Request`] is the exact body a client sends, in one of the provider
//! formats of [`crate::provider`]; its compact JSON text is the wire bytes.

use crate::catalogue::Tool;
use crate::error::{Error, Result};
use crate::json;
use serde_json::Value;

pub use crate::provider::{
    called_from_code, deferred_definitions, definition_parts, is_deferred, is_namespace,
    namespace_members, Format,
};

/// One request body, built by a surface for one round.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub format: Format,
    pub body: Value,
}

impl Request {
    /// The bytes on the wire.
    pub fn wire(&self) -> String {
        json::compact(&self.body)
    }

    pub fn wire_bytes(&self) -> usize {
        json::compact_len(&self.body)
    }

    pub fn tools(&self) -> &[Value] {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
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
        let mut body: Value = serde_json::from_slice(body)
            .map_err(|e| Error::input(format!("request body is not JSON: {e}")))?;
        if !body.is_object() {
            return Err(Error::input("request body is not a JSON object"));
        }
        format.spec().check_shape(&mut body).map_err(Error::input)?;
        if !body.get("model").is_some_and(Value::is_string) {
            return Err(Error::input("request body has no `model` string"));
        }
        Ok(Request { format, body })
    }
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
pub fn tool_result(format: Format, id: &str, text: &str, references: &[String]) -> Value {
    format.spec().tool_result(id, text, references)
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
