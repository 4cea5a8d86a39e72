//! Requests that continue an earlier one: a Responses request naming a `previous_response_id`
//! or a `conversation` is billed with the context it continues (OpenAI bills the earlier input
//! and output again as input). The gateway keeps the context of every Responses answer it
//! served or forwarded, so a continuation is counted as the whole request the provider bills;
//! one it does not know is flagged, never counted as if the earlier context were empty.
//!
//! What a request points to that the gateway cannot see at all (a stored `prompt` of the
//! Responses API, a Gemini `cachedContent`) is flagged the same way. Thinking sent back is
//! [`super::thoughts`]' to read.

use crate::wire::{Format, Request};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// Most contexts kept, and the most bytes of them: past either the oldest go first. A context
/// is kept as its compact JSON text, so the bytes counted are the bytes held (a parsed tree
/// would take some 20 to 55 times as much).
const MAX_ENTRIES: usize = 4096;
const MAX_BYTES: usize = 256 << 20;
/// The largest context kept: the gateway serves at most [`super::MAX_INFLIGHT_BYTES`] of
/// bodies at once, and a continuation's context counts as part of its body.
const MAX_CONTEXT_BYTES: usize = 16 << 20;

/// The contexts of the answers this gateway has seen, by response id (and by conversation).
#[derive(Default)]
pub struct Continuations {
    store: Mutex<Store>,
}

#[derive(Default)]
struct Store {
    items: HashMap<String, Arc<str>>,
    order: VecDeque<String>,
    bytes: usize,
}

impl Store {
    /// Make `key` the most recently used: contexts go least recently used first, so a long
    /// conversation that keeps being continued is never the one let go (at most
    /// [`MAX_ENTRIES`] keys are looked through).
    fn touch(&mut self, key: &str) {
        if let Some(at) = self.order.iter().position(|k| k == key) {
            self.order.remove(at);
        }
        self.order.push_back(key.to_string());
    }
}

/// A request read against what the gateway knows of the context it continues.
pub enum Read {
    /// It continues nothing.
    Alone,
    /// It continues a context the gateway kept: the whole request as the provider bills it,
    /// and the bytes of the context it was given (they count as part of its body).
    Continued(Request, usize),
    /// It points to context the gateway does not have: why, for the row.
    Unknown(String),
    /// It names a conversation the gateway has not seen (made elsewhere, or before a restart):
    /// new to the provider too, or holding items the gateway cannot see. Why, for the row.
    UnseenConversation(String),
}

impl Continuations {
    /// What `req` continues.
    pub fn read(&self, req: &Request) -> Read {
        match req.format {
            Format::OpenaiResponses => self.responses(req),
            Format::Gemini => match req.body.get("cachedContent").and_then(Value::as_str) {
                Some(name) => Read::Unknown(format!(
                    "uses cached content `{}`, which this gateway cannot see: its tokens are not in the estimate",
                    short(name)
                )),
                // Thought signatures sent back are [`super::thoughts`]' to read.
                None => Read::Alone,
            },
            Format::AnthropicMessages | Format::OpenaiChat => Read::Alone,
        }
    }

    fn responses(&self, req: &Request) -> Read {
        let previous = req.body.get("previous_response_id").and_then(Value::as_str);
        let conversation = conversation_id(&req.body);
        if req.body.get("prompt").is_some_and(|p| !p.is_null()) {
            return Read::Unknown(
                "uses a stored prompt, which this gateway cannot see: its tokens are not in the estimate"
                    .into(),
            );
        }
        let key = match (previous, conversation) {
            (Some(id), _) => format!("response:{id}"),
            (None, Some(c)) => format!("conversation:{c}"),
            (None, None) => return Read::Alone,
        };
        let known = {
            let mut s = crate::sync::lock(&self.store);
            let hit = s.items.get(&key).cloned();
            if hit.is_some() {
                s.touch(&key);
            }
            hit
        };
        match (known, previous) {
            (Some(text), _) => {
                // Written here from a Vec of items: it reads back as one.
                let items: Vec<Value> = serde_json::from_str(&text).unwrap_or_default();
                Read::Continued(
                    with_input(req, prepend(items, &req.body["input"])),
                    text.len(),
                )
            }
            // A conversation the gateway has not seen may be new (made empty by the
            // Conversations API) or hold items made elsewhere; a response it has not seen is
            // unknown.
            (None, None) => Read::UnseenConversation(format!(
                "continues conversation `{}`, which this gateway has not seen: any earlier items in it are not in the estimate",
                short(conversation.unwrap_or_default())
            )),
            (None, Some(id)) => Read::Unknown(format!(
                "continues response `{}`, which this gateway did not serve: its earlier context is not in the estimate",
                short(id)
            )),
        }
    }

    /// Keep the context of an answer to `req` (the whole request, as continued): its input and
    /// the answer's output items, under the answer's id and the request's conversation.
    pub fn remember(&self, req: &Request, answer: &Value) {
        if req.format != Format::OpenaiResponses {
            return;
        }
        let mut items = input_items(&req.body["input"]);
        items.extend(
            answer["output"]
                .as_array()
                .into_iter()
                .flatten()
                // Reasoning items stay: the provider keeps them in the chain, and bills those
                // of the current tool chain (see [`super::thoughts`]).
                .cloned(),
        );
        let text: Arc<str> = crate::json::compact(&Value::Array(items)).into();
        let size = text.len();
        if size > MAX_CONTEXT_BYTES {
            return;
        }
        let mut keys = Vec::new();
        if let Some(id) = answer["id"].as_str() {
            keys.push(format!("response:{id}"));
        }
        if let Some(c) = conversation_id(&req.body) {
            keys.push(format!("conversation:{c}"));
        }
        let mut s = crate::sync::lock(&self.store);
        for key in keys {
            if let Some(old) = s.items.insert(key.clone(), text.clone()) {
                s.bytes -= old.len();
            }
            s.touch(&key);
            s.bytes += size;
        }
        while s.items.len() > MAX_ENTRIES || s.bytes > MAX_BYTES {
            let Some(oldest) = s.order.pop_front() else {
                break;
            };
            if let Some(gone) = s.items.remove(&oldest) {
                s.bytes -= gone.len();
            }
        }
    }
}

/// A conversation's id: a string, or an object's `id`.
fn conversation_id(body: &Value) -> Option<&str> {
    match body.get("conversation")? {
        Value::String(s) => Some(s),
        other => other["id"].as_str(),
    }
}

/// A Responses `input` as items: a string is one user message.
fn input_items(input: &Value) -> Vec<Value> {
    match input {
        Value::String(s) => vec![serde_json::json!({"role": "user", "content": s})],
        Value::Array(items) => items.clone(),
        _ => Vec::new(),
    }
}

fn prepend(earlier: Vec<Value>, input: &Value) -> Vec<Value> {
    let mut all = earlier;
    all.extend(input_items(input));
    all
}

/// `req` with this input and without what pointed to earlier context.
fn with_input(req: &Request, input: Vec<Value>) -> Request {
    let mut body = req.body.clone();
    if let Some(o) = body.as_object_mut() {
        o.remove("previous_response_id");
        o.remove("conversation");
        o.insert("input".into(), Value::Array(input));
    }
    match req.tools_placed() {
        Some(t) => Request::with_tools(req.format, body, t.to_vec()),
        None => Request::new(req.format, body),
    }
}

/// An id as a row shows it: at most 80 characters.
fn short(id: &str) -> String {
    id.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn responses(body: Value) -> Request {
        Request::new(Format::OpenaiResponses, body)
    }

    #[test]
    fn a_continuation_carries_what_it_continues() {
        let c = Continuations::default();
        let first = responses(json!({"model": "gpt-5.4", "input": "long question"}));
        c.remember(
            &first,
            &json!({"id": "resp_1", "output": [{"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "long answer"}]}]}),
        );
        let next = responses(json!({"model": "gpt-5.4", "input": "and then?",
            "previous_response_id": "resp_1"}));
        let Read::Continued(whole, _) = c.read(&next) else {
            panic!("the first answer is known")
        };
        assert!(whole.body.get("previous_response_id").is_none());
        let input = whole.body["input"].as_array().unwrap();
        assert_eq!(input.len(), 3);
        assert_eq!(input[0]["content"], "long question");
        assert_eq!(input[2]["content"], "and then?");
        let unknown =
            responses(json!({"model": "m", "input": "x", "previous_response_id": "resp_9"}));
        assert!(matches!(c.read(&unknown), Read::Unknown(w) if w.contains("resp_9")));
        let alone = responses(json!({"model": "m", "input": "x"}));
        assert!(matches!(c.read(&alone), Read::Alone));
    }

    #[test]
    fn the_store_is_bounded() {
        let c = Continuations::default();
        let r = responses(json!({"model": "m", "input": "x"}));
        for i in 0..(MAX_ENTRIES + 10) {
            c.remember(&r, &json!({"id": format!("resp_{i}"), "output": []}));
        }
        assert!(crate::sync::lock(&c.store).items.len() <= MAX_ENTRIES);
        let old = responses(json!({"model": "m", "input": "y", "previous_response_id": "resp_0"}));
        assert!(matches!(c.read(&old), Read::Unknown(_)));
    }

    /// The store lets go of the least recently used context: a conversation continued while
    /// others fill the store stays, and the keys' order holds each key once.
    #[test]
    fn a_context_in_use_is_kept() {
        let c = Continuations::default();
        let conv = responses(json!({"model": "m", "input": "x", "conversation": "conv_live"}));
        let other = responses(json!({"model": "m", "input": "x"}));
        c.remember(&conv, &json!({"id": "resp_first", "output": []}));
        for i in 0..(2 * MAX_ENTRIES) {
            c.remember(&other, &json!({"id": format!("resp_{i}"), "output": []}));
            if i % 1000 == 0 {
                assert!(matches!(c.read(&conv), Read::Continued(..)), "at {i}");
            }
        }
        assert!(matches!(c.read(&conv), Read::Continued(..)));
        let s = crate::sync::lock(&c.store);
        assert_eq!(s.order.len(), s.items.len());
    }
}
