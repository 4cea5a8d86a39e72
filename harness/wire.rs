//! Provider request formats: Anthropic Messages and OpenAI Chat Completions.
//!
//! A [`Request`] is the exact body a client sends; its compact JSON text is the wire bytes.

use crate::catalogue::Tool;
use crate::error::{Error, Result};
use crate::json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// The request format a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `POST /v1/messages`
    AnthropicMessages,
    /// `POST /v1/chat/completions`
    OpenaiChat,
}

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

    /// Messages, appended to in later rounds.
    pub fn messages_mut(&mut self) -> &mut Vec<Value> {
        self.body["messages"]
            .as_array_mut()
            .expect("every request has messages")
    }

    /// Parse a body received from a client, checking its format's required shape.
    pub fn parse(format: Format, body: &[u8]) -> Result<Request> {
        let body: Value = serde_json::from_slice(body)
            .map_err(|e| Error::input(format!("request body is not JSON: {e}")))?;
        match body.get("messages").and_then(Value::as_array) {
            None => return Err(Error::input("request body has no `messages` array")),
            Some(m) if m.is_empty() => return Err(Error::input("`messages` must not be empty")),
            Some(_) => {}
        }
        if !body.get("model").is_some_and(Value::is_string) {
            return Err(Error::input("request body has no `model` string"));
        }
        Ok(Request { format, body })
    }
}

/// An MCP tool as the client presents it to the model, renamed by the client's rule.
pub fn tool_definition(format: Format, name: &str, tool: &Tool, defer: bool) -> Value {
    function_definition(format, name, tool.description(), tool.input_schema(), defer)
}

/// A function definition in the format's shape.
pub fn function_definition(
    format: Format,
    name: &str,
    description: &str,
    schema: Value,
    defer: bool,
) -> Value {
    let mut def = Map::new();
    match format {
        Format::AnthropicMessages => {
            def.insert("name".into(), json!(name));
            def.insert("description".into(), json!(description));
            def.insert("input_schema".into(), schema);
            if defer {
                def.insert("defer_loading".into(), json!(true));
            }
        }
        Format::OpenaiChat => {
            def.insert("type".into(), json!("function"));
            def.insert(
                "function".into(),
                json!({"name": name, "description": description, "parameters": schema}),
            );
            if defer {
                def.insert("defer_loading".into(), json!(true));
            }
        }
    }
    Value::Object(def)
}

/// Name, description and schema of a definition in either format (`None` for server tools).
pub fn definition_parts(def: &Value) -> Option<(&str, &str, &Value)> {
    let f = def.get("function").unwrap_or(def);
    let name = f.get("name")?.as_str()?;
    let schema = f.get("input_schema").or_else(|| f.get("parameters"))?;
    let desc = f.get("description").and_then(Value::as_str).unwrap_or("");
    Some((name, desc, schema))
}

/// Whether a definition is marked for deferred loading.
pub fn is_deferred(def: &Value) -> bool {
    def.get("defer_loading")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The user's turn, after the client's context if it has one: text blocks (Anthropic) or
/// plain string content (OpenAI).
pub fn user_message(format: Format, context: Option<&str>, text: &str) -> Value {
    match format {
        Format::AnthropicMessages => {
            let mut blocks: Vec<Value> = context
                .map(|c| json!({"type": "text", "text": c}))
                .into_iter()
                .collect();
            blocks.push(json!({"type": "text", "text": text}));
            json!({"role": "user", "content": blocks})
        }
        Format::OpenaiChat => match context {
            Some(c) => json!({"role": "user", "content": format!("{c}\n\n{text}")}),
            None => json!({"role": "user", "content": text}),
        },
    }
}

/// The assistant's tool call, in the format's shape.
pub fn tool_call(format: Format, id: &str, name: &str, input: Value) -> Value {
    match format {
        Format::AnthropicMessages => {
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
        }
        Format::OpenaiChat => json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": name, "arguments": json::compact(&input)}}
        ]}),
    }
}

/// A tool result; `references` become `tool_reference` blocks (Anthropic) that expand
/// deferred definitions in place.
pub fn tool_result(format: Format, id: &str, text: &str, references: &[String]) -> Value {
    match format {
        Format::AnthropicMessages => {
            let mut content = vec![json!({"type": "text", "text": text})];
            content.extend(
                references
                    .iter()
                    .map(|r| json!({"type": "tool_reference", "tool_name": r})),
            );
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content}]})
        }
        Format::OpenaiChat => json!({"role": "tool", "tool_call_id": id, "content": text}),
    }
}
