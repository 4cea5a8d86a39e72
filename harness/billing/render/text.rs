//! The text of a request body a provider bills as prose: its system text and each message's
//! text, tool calls and results included.

use crate::json;
use crate::wire;
use serde_json::Value;
use std::borrow::Cow;

/// All system text: Anthropic's `system` (string or blocks), the Responses `instructions`, or
/// OpenAI's system messages. Borrowed where it is one string already (a name list's system
/// prompt can be hundreds of megabytes).
pub fn system_text(body: &Value) -> Cow<'_, str> {
    // Gemini's `systemInstruction` is a Content: its parts' text.
    if let Some(si) = body.get("systemInstruction") {
        let mut out = String::new();
        parts_text(si, &mut out);
        return Cow::Owned(out);
    }
    match body.get("system").or_else(|| body.get("instructions")) {
        Some(Value::String(s)) => Cow::Borrowed(s),
        Some(Value::Array(blocks)) => {
            let mut texts = blocks.iter().filter_map(|b| b["text"].as_str());
            match (texts.next(), texts.next()) {
                (None, _) => Cow::Borrowed(""),
                (Some(one), None) => Cow::Borrowed(one),
                (Some(_), Some(_)) => Cow::Owned(
                    blocks
                        .iter()
                        .filter_map(|b| b["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
            }
        }
        _ => Cow::Owned(
            body.get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|m| m["role"] == "system")
                .map(message_text)
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    }
}

/// The ids of the tool calls running code made in a conversation.
pub(super) fn calls_from_code(messages: &[Value]) -> std::collections::HashSet<&str> {
    messages
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| wire::called_from_code(b))
        .filter_map(|b| b["id"].as_str())
        .collect()
}

/// [`message_text`] without the calls in `from_code` and their results.
pub(super) fn message_text_beside(
    m: &Value,
    from_code: &std::collections::HashSet<&str>,
) -> String {
    let Some(blocks) = m["content"].as_array() else {
        return message_text(m);
    };
    let kept: Vec<&Value> = blocks
        .iter()
        .filter(|b| {
            let id = match b["type"].as_str() {
                Some("tool_use") => b["id"].as_str(),
                Some("tool_result") => b["tool_use_id"].as_str(),
                _ => None,
            };
            !id.is_some_and(|id| from_code.contains(id))
        })
        .collect();
    let mut out = String::new();
    for b in kept {
        block_text(b, &mut out);
    }
    out
}

/// The text a message contributes: text blocks, tool calls' names and inputs, tool results
/// (and the Responses items: function calls and their outputs, tool-search calls).
pub fn message_text(m: &Value) -> String {
    let mut out = String::new();
    match m["type"].as_str() {
        Some("function_call") => {
            out.push_str(m["name"].as_str().unwrap_or(""));
            out.push_str(m["arguments"].as_str().unwrap_or(""));
        }
        Some("function_call_output") => match &m["output"] {
            Value::String(s) => out.push_str(s),
            Value::Array(parts) => {
                for p in parts {
                    block_text(p, &mut out);
                }
            }
            _ => {}
        },
        Some("tool_search_call") => out.push_str(&json::compact(&m["arguments"])),
        _ => {}
    }
    match &m["content"] {
        Value::String(s) => out.push_str(s),
        Value::Array(blocks) => {
            for b in blocks {
                block_text(b, &mut out);
            }
        }
        _ => {}
    }
    parts_text(m, &mut out);
    for call in m
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.push_str(
            call.pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or(""),
        );
        out.push_str(
            call.pointer("/function/arguments")
                .and_then(Value::as_str)
                .unwrap_or(""),
        );
    }
    out
}

/// The text of a Gemini Content's parts: text, and each function call's name and arguments and
/// each response's name and content, as compact JSON.
fn parts_text(content: &Value, out: &mut String) {
    for p in content
        .get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(t) = p.get("text").and_then(Value::as_str) {
            out.push_str(t);
        }
        for (key, payload) in [("functionCall", "args"), ("functionResponse", "response")] {
            if let Some(c) = p.get(key) {
                out.push_str(c["name"].as_str().unwrap_or(""));
                out.push_str(&json::compact(&c[payload]));
            }
        }
    }
}

/// Media parts in a conversation, which no text count covers: images, documents, audio and
/// files, as Anthropic blocks (`image`, `document`, in tool results too), Chat Completions
/// parts (`image_url`, `input_audio`, `file`), Responses parts (`input_image`, `input_file`,
/// `input_audio`, in function outputs too, and a computer call's screenshot) and Gemini parts
/// (`inlineData`, `fileData`, in a function response's parts too).
/// Providers bill them by their size or duration, which toolcost does not read; an estimate of
/// a request that holds some says how many it left out ([`MEDIA_NOT_COUNTED`]).
pub fn media_parts(messages: &[Value]) -> usize {
    fn in_blocks(blocks: &Value) -> usize {
        blocks
            .as_array()
            .into_iter()
            .flatten()
            .map(|b| match b["type"].as_str() {
                Some(
                    "image" | "document" | "image_url" | "input_audio" | "file" | "input_image"
                    | "input_file",
                ) => 1,
                Some("tool_result") => in_blocks(&b["content"]),
                _ => 0,
            })
            .sum()
    }
    /// Gemini parts: inline or file data, in a function response's own parts too. A received
    /// body is read in camelCase; a built one may not have been.
    fn in_parts(parts: Option<&Value>) -> usize {
        parts
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| {
                let data = ["inlineData", "fileData", "inline_data", "file_data"]
                    .iter()
                    .any(|k| p.get(k).is_some());
                let response = ["functionResponse", "function_response"]
                    .iter()
                    .filter_map(|k| p.get(k))
                    .map(|r| in_parts(r.get("parts")))
                    .sum::<usize>();
                usize::from(data) + response
            })
            .sum()
    }
    messages
        .iter()
        .map(|m| {
            // A computer-use screenshot: the Responses `computer_call_output`'s one image.
            let screenshot = usize::from(m["type"] == "computer_call_output");
            in_blocks(&m["content"])
                + in_blocks(&m["output"])
                + in_parts(m.get("parts"))
                + screenshot
        })
        .sum()
}

/// How the label of a count ends, after the number of media parts it left out.
pub const MEDIA_NOT_COUNTED: &str = "media part(s) not counted";

fn block_text(b: &Value, out: &mut String) {
    match b["type"].as_str() {
        Some("text") | Some("input_text") | Some("output_text") => {
            out.push_str(b["text"].as_str().unwrap_or(""))
        }
        Some("tool_use") | Some("server_tool_use") => {
            out.push_str(b["name"].as_str().unwrap_or(""));
            out.push_str(&json::compact(&b["input"]));
        }
        Some("code_execution_tool_result") => {
            out.push_str(b["content"]["stdout"].as_str().unwrap_or(""));
            out.push_str(b["content"]["stderr"].as_str().unwrap_or(""));
        }
        Some("tool_result") => match &b["content"] {
            Value::String(s) => out.push_str(s),
            Value::Array(inner) => {
                for i in inner {
                    block_text(i, out);
                }
            }
            _ => {}
        },
        _ => {}
    }
}
