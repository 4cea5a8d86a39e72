//! A request's conversation in the shape the open-weight chat templates take (OpenAI Chat
//! messages): a system text, then messages of four roles, assistant messages carrying their tool
//! calls, tool messages their results. Every wire format reads into it: Chat Completions as it
//! is, Anthropic's `tool_use` / `tool_result` blocks, the Responses items, Gemini's Contents
//! (what a gateway in front of an open model converts them to before the template renders).

use crate::json;
use crate::wire::{Format, Request};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One tool call in an assistant message.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub id: String,
    pub name: String,
    /// The arguments as an object (a JSON text the client sent parsed into one).
    pub arguments: Value,
    /// The arguments' text where the client sent them as text (Chat Completions, Responses):
    /// templates that write the arguments as they came write this.
    pub sent: Option<String>,
}

impl Call {
    /// The arguments as a server's template writes them: the object, as Python's `json.dumps`
    /// writes it (servers parse the text a client sends before the template sees it); text
    /// that is not a JSON object as it came.
    pub fn arguments_json(&self) -> String {
        match &self.arguments {
            v @ Value::Object(_) => super::pyjson::dumps(v, super::pyjson::SPACED),
            _ => self.arguments_text(),
        }
    }

    /// The arguments as the client sent them, or as compact JSON.
    pub fn arguments_text(&self) -> String {
        match (&self.sent, &self.arguments) {
            (Some(s), _) => s.clone(),
            (None, Value::String(s)) => s.clone(),
            (None, v) => json::compact(v),
        }
    }
}

/// The arguments' text as the client sent it; an empty text is none (servers read it as `{}`).
fn sent(v: &Value) -> Option<String> {
    v.as_str()
        .filter(|s| !s.trim().is_empty())
        .map(String::from)
}

/// One message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub text: String,
    pub calls: Vec<Call>,
    /// A tool message's call id, and the name of the tool it answers (from the call).
    pub call_id: String,
    pub tool: String,
    /// A `name` the client gave the message itself (Chat Completions only).
    pub name: String,
    /// An assistant message's reasoning, where the client sends it back.
    pub reasoning: String,
}

impl Message {
    /// The reasoning and the text of an assistant message as the Qwen and GLM templates read
    /// it: its own reasoning where the client sent it apart, else what its text holds before
    /// `</think>` (a client that replays reasoning as think tags), the rest being the text.
    pub fn think_split(&self) -> (String, String) {
        if !self.reasoning.is_empty() || !self.text.contains("</think>") {
            return (self.reasoning.clone(), self.text.clone());
        }
        let (before, after) = self.text.split_once("</think>").unwrap_or(("", &self.text));
        let after = self.text.rsplit("</think>").next().unwrap_or(after);
        let reasoning = before
            .trim_end_matches('\n')
            .rsplit("<think>")
            .next()
            .unwrap_or("")
            .trim_start_matches('\n');
        (
            reasoning.to_string(),
            after.trim_start_matches('\n').to_string(),
        )
    }

    fn new(role: Role, text: String) -> Message {
        Message {
            role,
            text,
            calls: Vec::new(),
            call_id: String::new(),
            tool: String::new(),
            name: String::new(),
            reasoning: String::new(),
        }
    }
}

/// A request's system text and messages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    pub system: String,
    pub messages: Vec<Message>,
    /// Index of the last user message, if any (templates write turns after it otherwise).
    pub last_user: Option<usize>,
}

impl Conversation {
    /// The system text and each later system message's, in order: what the templates that join
    /// them (DeepSeek V3, Mistral before version 7) join.
    pub fn systems(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.system.as_str()).chain(
            self.messages
                .iter()
                .filter(|m| m.role == Role::System)
                .map(|m| m.text.as_str()),
        )
    }
}

/// The text of a content value: a string, or the text of its parts (every format's text part
/// has `text`).
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                _ => p["text"].as_str(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => json::compact(other),
    }
}

/// A call's arguments as servers hand them to a template: a JSON text parsed, and an empty or
/// absent one as `{}` (vLLM's preparation of a Chat Completions request, read 2026-12-07).
fn arguments(v: &Value) -> Value {
    match v {
        Value::String(s) if s.trim().is_empty() => Value::Object(Default::default()),
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        Value::Null => Value::Object(Default::default()),
        other => other.clone(),
    }
}

/// Read a request's conversation.
pub fn read(req: &Request) -> Conversation {
    let body = &req.body;
    let mut c = Conversation::default();
    // Chat Completions' system text is its first message's ([`chat`] reads it); the other
    // formats name theirs apart.
    if req.format != Format::OpenaiChat {
        c.system = super::super::text::system_text(body).into_owned();
    }
    match req.format {
        Format::OpenaiChat => chat(req.messages(), &mut c),
        Format::AnthropicMessages => anthropic(req.messages(), &mut c),
        Format::OpenaiResponses => responses(body, &mut c),
        Format::Gemini => gemini(req.messages(), &mut c),
    }
    c.last_user = c.messages.iter().rposition(|m| m.role == Role::User);
    c
}

fn chat(messages: &[Value], c: &mut Conversation) {
    let mut names = std::collections::HashMap::new();
    // The first message, when it is a system (or developer) message, is the system text, as
    // every template takes it; a later one stays where it stands, for each template to place
    // (in place, joined to the first, or refused).
    let system = |m: &Value| matches!(m["role"].as_str(), Some("system" | "developer"));
    c.system = match messages.first() {
        Some(m) if system(m) => content_text(&m["content"]),
        _ => String::new(),
    };
    for (i, m) in messages.iter().enumerate() {
        let role = match m["role"].as_str() {
            Some("system" | "developer") if i == 0 => continue,
            Some("system" | "developer") => Role::System,
            Some("assistant") => Role::Assistant,
            Some("tool" | "function") => Role::Tool,
            _ => Role::User,
        };
        let mut msg = Message::new(role, content_text(&m["content"]));
        msg.call_id = m["tool_call_id"].as_str().unwrap_or("").to_string();
        msg.name = m["name"].as_str().unwrap_or("").to_string();
        msg.tool = names.get(&msg.call_id).cloned().unwrap_or_default();
        msg.reasoning = m["reasoning_content"]
            .as_str()
            .or_else(|| m["reasoning"].as_str())
            .unwrap_or("")
            .to_string();
        for call in m["tool_calls"].as_array().into_iter().flatten() {
            if let (Some(id), Some(n)) = (
                call["id"].as_str(),
                call.pointer("/function/name").and_then(Value::as_str),
            ) {
                names.insert(id.to_string(), n.to_string());
            }
            msg.calls.push(Call {
                id: call["id"].as_str().unwrap_or("").to_string(),
                name: call
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                arguments: arguments(call.pointer("/function/arguments").unwrap_or(&Value::Null)),
                sent: call.pointer("/function/arguments").and_then(sent),
            });
        }
        c.messages.push(msg);
    }
}

fn anthropic(messages: &[Value], c: &mut Conversation) {
    let mut names = std::collections::HashMap::new();
    for m in messages {
        let assistant = m["role"] == "assistant";
        if m["role"] == "system" {
            c.messages
                .push(Message::new(Role::System, content_text(&m["content"])));
            continue;
        }
        let blocks: Vec<Value> = match &m["content"] {
            Value::String(s) => vec![serde_json::json!({"type": "text", "text": s})],
            Value::Array(b) => b.clone(),
            _ => Vec::new(),
        };
        let mut text = Vec::new();
        let mut msg = Message::new(
            if assistant {
                Role::Assistant
            } else {
                Role::User
            },
            String::new(),
        );
        for b in &blocks {
            match b["type"].as_str() {
                Some("text") => text.push(b["text"].as_str().unwrap_or("").to_string()),
                Some("thinking") => msg.reasoning.push_str(b["thinking"].as_str().unwrap_or("")),
                Some("tool_use") => {
                    let id = b["id"].as_str().unwrap_or("").to_string();
                    let name = b["name"].as_str().unwrap_or("").to_string();
                    names.insert(id.clone(), name.clone());
                    msg.calls.push(Call {
                        id,
                        name,
                        arguments: arguments(&b["input"]),
                        sent: None,
                    });
                }
                Some("tool_result") => {
                    let id = b["tool_use_id"].as_str().unwrap_or("").to_string();
                    let mut r = Message::new(Role::Tool, content_text(&b["content"]));
                    r.tool = names.get(&id).cloned().unwrap_or_default();
                    r.call_id = id;
                    c.messages.push(r);
                }
                _ => {}
            }
        }
        msg.text = text.join("\n");
        if !msg.text.is_empty() || !msg.calls.is_empty() || assistant {
            c.messages.push(msg);
        }
    }
}

fn responses(body: &Value, c: &mut Conversation) {
    let items: Vec<Value> = match &body["input"] {
        Value::String(s) => vec![serde_json::json!({"role": "user", "content": s})],
        Value::Array(a) => a.clone(),
        _ => Vec::new(),
    };
    let mut names = std::collections::HashMap::new();
    for it in &items {
        match it["type"].as_str() {
            Some("function_call") => {
                let id = it["call_id"].as_str().unwrap_or("").to_string();
                let name = it["name"].as_str().unwrap_or("").to_string();
                names.insert(id.clone(), name.clone());
                let call = Call {
                    id,
                    name,
                    arguments: arguments(&it["arguments"]),
                    sent: sent(&it["arguments"]),
                };
                // Calls in a row are one assistant message.
                match c.messages.last_mut() {
                    Some(m) if m.role == Role::Assistant => m.calls.push(call),
                    _ => {
                        let mut m = Message::new(Role::Assistant, String::new());
                        m.calls.push(call);
                        c.messages.push(m);
                    }
                }
            }
            Some("function_call_output") => {
                let id = it["call_id"].as_str().unwrap_or("").to_string();
                let mut r = Message::new(Role::Tool, content_text(&it["output"]));
                r.tool = names.get(&id).cloned().unwrap_or_default();
                r.call_id = id;
                c.messages.push(r);
            }
            Some("reasoning") => {}
            _ => {
                let role = match it["role"].as_str() {
                    Some("system" | "developer") => continue,
                    Some("assistant") => Role::Assistant,
                    _ => Role::User,
                };
                c.messages
                    .push(Message::new(role, content_text(&it["content"])));
            }
        }
    }
}

fn gemini(contents: &[Value], c: &mut Conversation) {
    let mut n = 0;
    for content in contents {
        let model = content["role"] == "model";
        let mut msg = Message::new(
            if model { Role::Assistant } else { Role::User },
            String::new(),
        );
        let mut text = Vec::new();
        for p in content["parts"].as_array().into_iter().flatten() {
            if let Some(t) = p["text"].as_str() {
                match p["thought"].as_bool() == Some(true) {
                    true => msg.reasoning.push_str(t),
                    false => text.push(t.to_string()),
                }
            }
            if let Some(call) = p.get("functionCall") {
                n += 1;
                msg.calls.push(Call {
                    id: call["id"]
                        .as_str()
                        .map_or_else(|| format!("call_{n}"), String::from),
                    name: call["name"].as_str().unwrap_or("").to_string(),
                    arguments: arguments(&call["args"]),
                    sent: None,
                });
            }
            if let Some(r) = p.get("functionResponse") {
                let mut m = Message::new(Role::Tool, json::compact(&r["response"]));
                m.tool = r["name"].as_str().unwrap_or("").to_string();
                m.call_id = r["id"].as_str().unwrap_or("").to_string();
                c.messages.push(m);
            }
        }
        msg.text = text.join("");
        if !msg.text.is_empty() || !msg.calls.is_empty() {
            c.messages.push(msg);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The same exchange in Anthropic's and OpenAI Chat's shapes reads the same.
    #[test]
    fn every_format_reads_into_one_shape() {
        let anthropic = Request::new(
            Format::AnthropicMessages,
            json!({"model": "m", "system": "Be brief.", "messages": [
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "21C"}]}]}),
        );
        let chat = Request::new(
            Format::OpenaiChat,
            json!({"model": "m", "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "21C"}]}),
        );
        let (a, c) = (read(&anthropic), read(&chat));
        assert_eq!(a.system, "Be brief.");
        assert_eq!(a.system, c.system);
        let shape = |c: &Conversation| {
            c.messages
                .iter()
                .map(|m| (m.role, m.text.clone(), m.calls.len(), m.call_id.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(shape(&a), shape(&c));
        assert_eq!(a.messages[1].calls[0].arguments, json!({"city": "Paris"}));
        assert_eq!(a.messages[2].tool, "get_weather");
        assert_eq!(c.messages[2].tool, "get_weather");
    }
}
