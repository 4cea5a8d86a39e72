//! GLM's chat templates (Z.ai): `[gMASK]<sop>`, then turns opened by `<|system|>`, `<|user|>`,
//! `<|assistant|>`, `<|observation|>` and closed by the next (no end-of-turn token). The tools
//! are a system turn: one JSON line per tool (the whole entry, Python's spaced separators)
//! inside `<tools>`, then the call format. Calls are `<tool_call>{name}` with `<arg_key>` /
//! `<arg_value>` pairs (a string value as it is, anything else as JSON).
//!
//! - GLM-4.5 and 4.6: newlines after each turn's opening and around calls and results, an
//!   earlier assistant turn's empty `<think></think>`.
//! - GLM-4.7 and the 5.x models (the 4.7 template; 5.x's is assumed the same where its
//!   published descriptions agree): no newlines between turns, `</think>` alone before an
//!   earlier assistant turn, and the generation prompt opens `<think>`. Cerebras' zai-glm-4.7
//!   billed exactly this on the two recorded requests an open-source suite holds (17 and 35).
//!
//! Special tokens: `[gMASK]`, `<sop>`, the four role tokens, `<think>`, `</think>`,
//! `<tool_call>`, `</tool_call>`, `<tool_response>`, `</tool_response>`, `<arg_key>`,
//! `</arg_key>`, `<arg_value>`, `</arg_value>`.

use super::conversation::{Conversation, Role};
use super::{after_last_user, pyjson, Prompt};
use serde_json::Value;

const SPECIALS: &[&str] = &[
    "[gMASK]",
    "<sop>",
    "<|system|>",
    "<|user|>",
    "<|assistant|>",
    "<|observation|>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
];

const TOOLS_HEAD: &str = "<|system|>\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n";
const TAIL_45: &str = "</tools>\n\nFor each function call, output the function name and arguments within the following XML format:\n<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}</arg_value>\n<arg_key>{arg-key-2}</arg_key>\n<arg_value>{arg-value-2}</arg_value>\n...\n</tool_call>";
const TAIL_47: &str = "</tools>\n\nFor each function call, output the function name and arguments within the following XML format:\n<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>{arg-value-1}</arg_value><arg_key>{arg-key-2}</arg_key><arg_value>{arg-value-2}</arg_value>...</tool_call>";

pub fn render(c: &Conversation, tools: &[Value], compact: bool, p: &mut Prompt) {
    let nl = if compact { "" } else { "\n" };
    p.spelled("[gMASK]<sop>", SPECIALS);
    if !tools.is_empty() {
        p.spelled(TOOLS_HEAD, SPECIALS);
        for t in tools {
            p.tools(&pyjson::dumps(t, pyjson::SPACED));
            p.tools("\n");
        }
        p.spelled(if compact { TAIL_47 } else { TAIL_45 }, SPECIALS);
    }
    if !c.system.is_empty() {
        p.spelled(&format!("<|system|>{nl}"), SPECIALS);
        p.system(&c.system);
    }
    for (i, m) in c.messages.iter().enumerate() {
        p.message_starts(c, i);
        match m.role {
            Role::User | Role::System => {
                let role = if m.role == Role::User {
                    "<|user|>"
                } else {
                    "<|system|>"
                };
                p.spelled(&format!("{role}{nl}"), SPECIALS);
                p.message(&m.text);
            }
            Role::Assistant => {
                p.spelled("<|assistant|>", SPECIALS);
                let (reasoning, text) = m.think_split();
                let reasoning = reasoning.trim();
                match (after_last_user(c, i) && !reasoning.is_empty(), compact) {
                    (true, _) => {
                        p.spelled(&format!("{nl}<think>"), SPECIALS);
                        p.message(reasoning);
                        p.spelled("</think>", SPECIALS);
                    }
                    (false, true) => p.spelled("</think>", SPECIALS),
                    (false, false) => p.spelled("\n<think></think>", SPECIALS),
                }
                let text = text.trim();
                if !text.is_empty() {
                    p.frame(nl);
                    p.message(text);
                }
                for call in &m.calls {
                    p.spelled(&format!("{nl}<tool_call>"), SPECIALS);
                    p.message(&call.name);
                    p.frame(nl);
                    for (k, v) in call.arguments.as_object().into_iter().flatten() {
                        p.spelled("<arg_key>", SPECIALS);
                        p.message(k);
                        p.spelled(&format!("</arg_key>{nl}<arg_value>"), SPECIALS);
                        match v {
                            Value::String(s) => p.message(s),
                            other => p.message(&pyjson::dumps(other, pyjson::SPACED)),
                        }
                        p.spelled(&format!("</arg_value>{nl}"), SPECIALS);
                    }
                    p.spelled("</tool_call>", SPECIALS);
                }
            }
            Role::Tool => {
                if i == 0 || c.messages[i - 1].role != Role::Tool {
                    p.spelled("<|observation|>", SPECIALS);
                }
                p.spelled(&format!("{nl}<tool_response>{nl}"), SPECIALS);
                p.message(&m.text);
                p.spelled(&format!("{nl}</tool_response>"), SPECIALS);
            }
        }
    }
    match compact {
        true => p.spelled("<|assistant|><think>", SPECIALS),
        false => p.spelled("<|assistant|>", SPECIALS),
    }
}
