//! The conversation of an Anthropic request as Claude reads it: turns of text in which tool calls
//! and their results are written out.
//!
//! Found by test against the recorded whole requests (`fixtures/claude-requests`; the renderings
//! tried are in `toolcost claude-counts --requests`):
//! - messages of one role in a row are one turn; a turn after the first costs its role's marker
//!   ([`super::claude::turn_tokens`]), and a last assistant turn is the frame's own;
//! - a call is written in the assistant's turn as an `antml:`-prefixed XML block, one `invoke` per
//!   call and one `parameter` per input key, a string as it is and anything else as JSON;
//! - results are not a user turn: they continue the assistant's turn right after its calls, one
//!   result as its text inside `<function_results>`, several each in a `<result>` with the tool's
//!   name and an `<output>` (or `<error>`);
//! - a result that loads deferred tools (`tool_reference`) carries their definitions as a tools
//!   block.

use crate::billing::render::functions;
use crate::wire::ToolRef;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Who speaks a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    User,
    Assistant,
    System,
}

/// One turn: who speaks it and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub speaker: Speaker,
    pub text: String,
    /// Tool calls written in it.
    pub calls: usize,
}

/// What a turn is made of, in order: the joins between kinds are part of the rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Calls,
    Results,
}

fn join(prev: Kind, next: Kind) -> &'static str {
    match (prev, next) {
        (Kind::Text, Kind::Text) | (Kind::Calls, Kind::Text) => "\n\n",
        (Kind::Calls, Kind::Results)
        | (Kind::Results, Kind::Results)
        | (Kind::Calls, Kind::Calls)
        | (Kind::Text, Kind::Results) => "\n",
        (Kind::Text, Kind::Calls) | (Kind::Results, Kind::Text) | (Kind::Results, Kind::Calls) => {
            ""
        }
    }
}

/// The text of `<`: written apart so that no tag below is a literal in this file.
const LT: &str = "<";
const NS: &str = "antml:";

/// What the turns need from the rest of the request.
pub struct Context<'a> {
    /// The deferred definitions a `tool_reference` can load, by name.
    pub deferred: &'a HashMap<&'a str, ToolRef<'a>>,
    /// Calls made from running code (and so their results): not in the model's context.
    pub from_code: &'a HashSet<&'a str>,
    /// Whether definitions escape non-ASCII text (the v3 family's rendering).
    pub ascii: bool,
}

/// The turns of a conversation.
pub fn turns(messages: &[Value], cx: &Context) -> Vec<Turn> {
    // Each turn: who speaks it, its parts in order, and its calls.
    type Building = (Speaker, Vec<(Kind, String)>, usize);
    let mut out: Vec<Building> = Vec::new();
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut add = |speaker: Speaker, kind: Kind, text: String, calls: usize| match out.last_mut() {
        Some((s, parts, n)) if *s == speaker => {
            parts.push((kind, text));
            *n += calls;
        }
        _ => out.push((speaker, vec![(kind, text)], calls)),
    };
    for m in messages {
        let speaker = match m["role"].as_str() {
            Some("assistant") | Some("model") => Speaker::Assistant,
            Some("system") => Speaker::System,
            _ => Speaker::User,
        };
        let blocks = match &m["content"] {
            Value::String(s) => {
                add(speaker, Kind::Text, s.clone(), 0);
                continue;
            }
            Value::Array(b) => b,
            _ => continue,
        };
        let mut texts: Vec<&str> = Vec::new();
        let mut calls: Vec<&Value> = Vec::new();
        let mut results: Vec<&Value> = Vec::new();
        for b in blocks {
            let id = |k: &str| b[k].as_str().is_some_and(|id| cx.from_code.contains(id));
            match b["type"].as_str() {
                Some("text") => {
                    let t = b["text"].as_str().unwrap_or("");
                    if !t.trim().is_empty() {
                        texts.push(t);
                    }
                }
                Some("tool_use") | Some("server_tool_use") | Some("mcp_tool_use") if !id("id") => {
                    if let (Some(id), Some(name)) = (b["id"].as_str(), b["name"].as_str()) {
                        names.insert(id, name);
                    }
                    calls.push(b);
                }
                Some("tool_result") | Some("mcp_tool_result") if !id("tool_use_id") => {
                    results.push(b)
                }
                _ => {}
            }
        }
        if !results.is_empty() {
            add(
                Speaker::Assistant,
                Kind::Results,
                results_text(&results, &names, cx),
                0,
            );
        }
        if !texts.is_empty() {
            add(speaker, Kind::Text, texts.join("\n\n"), 0);
        }
        if !calls.is_empty() {
            let n = calls.len();
            add(speaker, Kind::Calls, calls_text(&calls), n);
        }
    }
    out.into_iter()
        .map(|(speaker, parts, calls)| {
            let mut text = String::new();
            let mut prev: Option<Kind> = None;
            for (kind, t) in parts {
                if let Some(p) = prev {
                    text.push_str(join(p, kind));
                }
                text.push_str(&t);
                prev = Some(kind);
            }
            Turn {
                speaker,
                text,
                calls,
            }
        })
        .collect()
}

/// The calls of one assistant message.
fn calls_text(calls: &[&Value]) -> String {
    let mut s = format!("{LT}{NS}function_calls>\n");
    for c in calls {
        let name = c["name"].as_str().unwrap_or("");
        s.push_str(&format!("{LT}{NS}invoke name=\"{name}\">\n"));
        if let Some(input) = c["input"].as_object() {
            for (k, v) in input {
                let value = match v {
                    Value::String(t) => t.clone(),
                    other => spaced(other),
                };
                s.push_str(&format!(
                    "{LT}{NS}parameter name=\"{k}\">{value}{LT}/{NS}parameter>\n"
                ));
            }
        }
        s.push_str(&format!("{LT}/{NS}invoke>\n"));
    }
    s.push_str(&format!("{LT}/{NS}function_calls>"));
    s
}

/// JSON as a Python serializer writes it by default: `", "` and `": "`, keys as given.
fn spaced(v: &Value) -> String {
    let mut s = String::new();
    functions::push_json(v, false, true, &mut s);
    s
}

/// The results of one user message.
fn results_text(results: &[&Value], names: &HashMap<&str, &str>, cx: &Context) -> String {
    let open = format!("{LT}function_results>\n");
    let close = format!("{LT}/function_results>");
    if let [one] = results {
        return format!("{open}{}\n{close}", result_content(one, cx));
    }
    let mut s = open;
    for r in results {
        let name = r["tool_use_id"]
            .as_str()
            .and_then(|id| names.get(id))
            .copied()
            .unwrap_or("");
        let tag = match r["is_error"].as_bool() {
            Some(true) => "error",
            _ => "output",
        };
        s.push_str(&format!(
            "{LT}result>\n{LT}name>{name}{LT}/name>\n{LT}{tag}>{}\n{LT}/{tag}>\n{LT}/result>\n",
            result_content(r, cx)
        ));
    }
    s.push_str(&close);
    s
}

/// A result's text: a string, or its blocks' text one per line, with the definitions a
/// `tool_reference` loads written as a tools block. Media blocks are not text (the count says
/// how many it left out).
fn result_content(r: &Value, cx: &Context) -> String {
    match &r["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            let mut lines: Vec<String> = Vec::new();
            for b in blocks {
                match b["type"].as_str() {
                    Some("text") => lines.push(b["text"].as_str().unwrap_or("").to_string()),
                    Some("tool_reference") => {
                        let def = b["tool_name"].as_str().and_then(|n| cx.deferred.get(n));
                        if let Some(d) = def {
                            lines.push(format!(
                                "{}\n{}\n{}",
                                functions::OPEN,
                                functions::function(*d, cx.ascii),
                                functions::CLOSE
                            ));
                        }
                    }
                    _ => {}
                }
            }
            lines.join("\n")
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cx_turns(messages: Value) -> Vec<Turn> {
        let deferred = HashMap::new();
        let from_code = HashSet::new();
        let cx = Context {
            deferred: &deferred,
            from_code: &from_code,
            ascii: true,
        };
        turns(messages.as_array().unwrap(), &cx)
    }

    /// A call and its result are one assistant turn after the user's; same-role messages merge.
    #[test]
    fn results_continue_the_assistant_turn() {
        let t = cx_turns(json!([
            {"role": "user", "content": "Weather?"},
            {"role": "user", "content": [{"type": "text", "text": "In Paris."}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris", "days": 2}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Sunny"}]}
        ]));
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].text, "Weather?\n\nIn Paris.");
        assert_eq!(t[1].speaker, Speaker::Assistant);
        assert_eq!(t[1].calls, 1);
        let want = format!(
            "Looking.{LT}{NS}function_calls>\n{LT}{NS}invoke name=\"get_weather\">\n\
             {LT}{NS}parameter name=\"city\">Paris{LT}/{NS}parameter>\n\
             {LT}{NS}parameter name=\"days\">2{LT}/{NS}parameter>\n{LT}/{NS}invoke>\n\
             {LT}/{NS}function_calls>\n{LT}function_results>\nSunny\n{LT}/function_results>"
        );
        assert_eq!(t[1].text, want);
    }

    /// Several results each carry the name of the call they answer, an error its own tag.
    #[test]
    fn several_results_are_named() {
        let t = cx_turns(json!([
            {"role": "user", "content": "Go"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "one", "input": {}},
                {"type": "tool_use", "id": "b", "name": "two", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "x"}]},
                {"type": "tool_result", "tool_use_id": "b", "content": "y", "is_error": true}]},
            {"role": "user", "content": "Thanks"}
        ]));
        assert_eq!(t.len(), 3);
        assert!(t[1].text.contains(&format!(
            "{LT}name>one{LT}/name>\n{LT}output>x\n{LT}/output>"
        )));
        assert!(t[1]
            .text
            .contains(&format!("{LT}name>two{LT}/name>\n{LT}error>y\n{LT}/error>")));
        assert_eq!(t[2].speaker, Speaker::User);
    }
}
