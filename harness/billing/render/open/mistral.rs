//! Mistral's instruct format, as `mistral-common` (1.13) writes it for its tokenizer versions:
//! `<s>`, each user turn `[INST]{text}[/INST]`, an assistant turn's text or calls closed by
//! `</s>`, the tools as `[AVAILABLE_TOOLS]` + a JSON list (Python's spaced separators, `strict`
//! left out) + `[/AVAILABLE_TOOLS]` before the last user turn (version 13: the first). Each
//! text between control tokens is encoded on its own, as mistral-common does (with
//! SentencePiece, each gets its own dummy prefix); from v2 an assistant's text loses its
//! trailing spaces.
//!
//! - v1 (Mistral 7B v0.1 and v0.2, Mixtral 8x7B): no control tokens but `<s>` and `</s>`; each
//!   user turn is the text `[INST] {text} [/INST]`, the system text before the first user
//!   turn's. mistral-common refuses tools and calls at v1: a request with them is written as
//!   v2 writes it (assumed: what an API serving these models with tools bills is not
//!   published).
//! - v2 (Small and Large 2402): as v3, but calls and results before the last user turn are
//!   left out, calls carry no ids and a result is `[{"name": ..., "content": ...}]`.
//! - v3 (NeMo, Pixtral, Mistral 7B v0.3, Mixtral): the system text before the last user
//!   turn's text; calls as one `[TOOL_CALLS]` JSON list with ids; results as
//!   `{"content": ..., "call_id": ...}`.
//! - v7 (Small 3.0/3.1, Large 2411, Medium): `[SYSTEM_PROMPT]`; results `[TOOL_RESULTS]{id}
//!   [TOOL_CONTENT]{content}[/TOOL_RESULTS]`.
//! - v11 (Small 3.2, Devstral, Magistral): calls `[TOOL_CALLS]{name}[CALL_ID]{id}[ARGS]{json}`.
//! - v13 (Ministral 3, Medium 3, Large 3): calls `[TOOL_CALLS]{name}[ARGS]{json}`, results
//!   without ids. Which model has which version is assumed from Mistral's release notes.
//!
//! Mistral's API billed this rendering exactly on the recorded requests an open-source suite
//! holds (pixtral-12b with a tool: 65 of 65; mistral-small through OpenRouter: 135 against 134).

use super::conversation::{Conversation, Role};
use super::{pyjson, Prompt};
use serde_json::Value;

const SPECIALS: &[&str] = &[
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
    "[ARGS]",
    "[CALL_ID]",
];

pub fn render(c: &Conversation, tools: &[Value], version: u8, p: &mut Prompt) {
    let tooled = !tools.is_empty()
        || c.messages
            .iter()
            .any(|m| m.role == Role::Tool || !m.calls.is_empty());
    if version == 1 && !tooled {
        return render_v1(c, p);
    }
    let version = version.max(2);
    // Before version 7 every system message is one system text, joined by blank lines and
    // written in the last user turn; from 7 each is a system prompt where it stands.
    let joined = joined_system(c);
    p.spelled("<s>", SPECIALS);
    if version >= 7 && !c.system.is_empty() {
        p.spelled("[SYSTEM_PROMPT]", SPECIALS);
        p.system(&c.system);
        p.spelled("[/SYSTEM_PROMPT]", SPECIALS);
    }
    let users: Vec<usize> = c
        .messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User)
        .map(|(i, _)| i)
        .collect();
    let tools_before = match version >= 13 {
        true => users.first().copied(),
        false => users.last().copied(),
    };
    let last_user = c.last_user;
    // At v2, calls and results before the last user turn are not written.
    let dropped = |i: usize| version == 2 && last_user.is_some_and(|u| i < u);
    let mut i = 0;
    while i < c.messages.len() {
        let m = &c.messages[i];
        if Some(i) == tools_before && !tools.is_empty() {
            let list: Vec<Value> = tools
                .iter()
                .map(|t| {
                    let mut t = t.clone();
                    if let Some(f) = t.get_mut("function").and_then(Value::as_object_mut) {
                        f.remove("strict");
                    }
                    t
                })
                .collect();
            p.spelled("[AVAILABLE_TOOLS]", SPECIALS);
            p.tools(&pyjson::dumps(&Value::Array(list), pyjson::SPACED));
            p.spelled("[/AVAILABLE_TOOLS]", SPECIALS);
        }
        p.message_starts(c, i);
        match m.role {
            Role::System if version < 7 => {}
            Role::System => {
                p.spelled("[SYSTEM_PROMPT]", SPECIALS);
                p.system(&m.text);
                p.spelled("[/SYSTEM_PROMPT]", SPECIALS);
            }
            Role::User => {
                p.spelled("[INST]", SPECIALS);
                if version < 7 && Some(i) == last_user && !joined.is_empty() {
                    p.system(&joined);
                    p.frame("\n\n");
                }
                p.message(&m.text);
                p.spelled("[/INST]", SPECIALS);
            }
            Role::Assistant if !m.calls.is_empty() && dropped(i) => {}
            Role::Assistant => {
                p.message(m.text.trim_end_matches(' '));
                match version {
                    ..=7 if !m.calls.is_empty() => {
                        let list: Vec<Value> = m
                            .calls
                            .iter()
                            .map(|c| match version {
                                2 => serde_json::json!({"name": c.name, "arguments": c.arguments}),
                                _ => serde_json::json!({"name": c.name, "arguments": c.arguments, "id": c.id}),
                            })
                            .collect();
                        p.spelled("[TOOL_CALLS]", SPECIALS);
                        p.message(&pyjson::dumps(&Value::Array(list), pyjson::SPACED));
                    }
                    _ => {
                        for call in &m.calls {
                            p.spelled("[TOOL_CALLS]", SPECIALS);
                            p.message(&call.name);
                            if version < 13 {
                                p.spelled("[CALL_ID]", SPECIALS);
                                p.message(&call.id);
                            }
                            p.spelled("[ARGS]", SPECIALS);
                            p.message(&pyjson::dumps(&call.arguments, pyjson::SPACED));
                        }
                    }
                }
                p.spelled("</s>", SPECIALS);
            }
            Role::Tool if dropped(i) => {}
            Role::Tool => {
                p.spelled("[TOOL_RESULTS]", SPECIALS);
                match version {
                    ..=2 => {
                        let content = serde_json::from_str::<Value>(&m.text)
                            .unwrap_or_else(|_| Value::String(m.text.clone()));
                        let r = serde_json::json!([{"name": m.tool, "content": content}]);
                        p.message(&pyjson::dumps(&r, pyjson::SPACED));
                    }
                    3..=6 => {
                        let content = serde_json::from_str::<Value>(&m.text)
                            .unwrap_or_else(|_| Value::String(m.text.clone()));
                        let r = serde_json::json!({"content": content, "call_id": m.call_id});
                        p.message(&pyjson::dumps(&r, pyjson::SPACED));
                    }
                    7..=12 => {
                        p.message(&m.call_id);
                        p.spelled("[TOOL_CONTENT]", SPECIALS);
                        p.message(&m.text);
                    }
                    _ => p.message(&m.text),
                }
                p.spelled("[/TOOL_RESULTS]", SPECIALS);
            }
        }
        i += 1;
    }
}

/// The system text and every later system message, joined by blank lines.
fn joined_system(c: &Conversation) -> String {
    c.systems()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Version 1: `[INST]` and `[/INST]` are text, the system text before the first user turn's.
fn render_v1(c: &Conversation, p: &mut Prompt) {
    p.spelled("<s>", SPECIALS);
    let first_user = c.messages.iter().position(|m| m.role == Role::User);
    let joined = joined_system(c);
    for (i, m) in c.messages.iter().enumerate() {
        p.message_starts(c, i);
        match m.role {
            Role::System => {}
            Role::User => {
                p.frame("[INST] ");
                if Some(i) == first_user && !joined.is_empty() {
                    p.system(&joined);
                    p.frame("\n\n");
                }
                p.message(&m.text);
                p.frame(" [/INST]");
            }
            Role::Assistant => {
                // Encoded on its own after the user turn's text: its dummy prefix is a space
                // (no piece of the vocabulary spans `]` and a space, so the count is the same).
                if !m.text.is_empty() {
                    p.frame(" ");
                }
                p.message(&m.text);
                p.spelled("</s>", SPECIALS);
            }
            // A conversation with results is written as v2 writes it (see `render`).
            Role::Tool => {}
        }
    }
}

/// Why mistral-common 1.13.1 refuses a conversation, if it does (its own messages, checked
/// against it in `fixtures/open-templates`): before version 7 an assistant turn with both text
/// and calls; from version 3 a call id that is not nine ASCII letters and digits.
pub fn refusal(c: &Conversation, version: u8) -> Option<String> {
    for m in c.messages.iter().filter(|m| m.role == Role::Assistant) {
        if version < 7 && !m.text.is_empty() && !m.calls.is_empty() {
            return Some(
                "Assistant message must have either content or tool_calls, but not both.".into(),
            );
        }
        if version >= 3 {
            let bad = m.calls.iter().find(|call| {
                call.id.len() != 9 || !call.id.bytes().all(|b| b.is_ascii_alphanumeric())
            });
            if let Some(call) = bad {
                return Some(format!(
                    "Tool call id was {} but must be a-z, A-Z, 0-9, with a length of 9.",
                    call.id
                ));
            }
        }
    }
    None
}
