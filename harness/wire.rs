//! Request bodies: a [`Request`] is the exact body a client sends, in one of the provider
//! formats of [`crate::provider`]; its compact JSON text is the wire bytes.

use crate::catalogue::Tool;
use crate::error::{Error, Result};
use crate::json;
use serde_json::Value;

pub use crate::provider::{
    deferred_definitions, definition_parts, is_deferred, is_namespace, namespace_members, Format,
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
