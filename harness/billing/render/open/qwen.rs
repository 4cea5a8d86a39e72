//! Qwen's chat templates (`<|im_start|>{role}\n...<|im_end|>\n` turns).
//!
//! - Qwen 2.5 and Qwen 3: the tools are a system turn (the request's system text first), one
//!   JSON line per tool (the whole `{"type": "function", ...}` entry, Python's spaced
//!   separators) inside `<tools>`, then the call format; a call is a `<tool_call>` JSON line,
//!   results of consecutive tool messages share one user turn as `<tool_response>` blocks. Qwen
//!   2.5 adds a default system text where the request has none.
//! - QwQ: Qwen 2.5's form without its default system text, earlier thinking cut.
//! - Qwen 3.5 and 3.6: the tools first, then the request's system text; calls as
//!   `<function=...>` / `<parameter=...>` XML; the generation prompt opens `<think>`.
//!
//! Special tokens: `<|im_start|>`, `<|im_end|>`, `<tool_call>`, `</tool_call>`,
//! `<tool_response>`, `</tool_response>`, `<think>`, `</think>` (one each).

use super::conversation::{Conversation, Role};
use super::{after_last_user, pyjson, Prompt};
use serde_json::Value;

pub(super) const SPECIALS: &[&str] = &[
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
];

const QWEN25_SYSTEM: &str = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";

const QWEN3_TOOLS_HEAD: &str = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>";
const QWEN3_TOOLS_TAIL: &str = "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n";

const QWEN35_TOOLS_HEAD: &str = "# Tools\n\nYou have access to the following functions:\n\n<tools>";
const QWEN35_TOOLS_TAIL: &str = "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n</IMPORTANT>";

fn tool_lines(tools: &[Value], p: &mut Prompt) {
    for t in tools {
        p.tools("\n");
        p.tools(&pyjson::dumps(t, pyjson::SPACED));
    }
}

pub fn qwen3(c: &Conversation, tools: &[Value], default_system: bool, p: &mut Prompt) {
    let system = match (c.system.is_empty(), default_system) {
        (true, true) => Some(QWEN25_SYSTEM),
        (true, false) => None,
        (false, _) => Some(c.system.as_str()),
    };
    json_head(system, tools, p);
    // Qwen 2.5's template knows no reasoning: an assistant turn is its text as it came.
    let history = match default_system {
        true => History::AsSent,
        false => History::Thinking,
    };
    turns(c, p, false, history);
    p.spelled("<|im_start|>assistant\n", SPECIALS);
}

/// QwQ: Qwen 2.5's tools and calls without its default system text (with tools, the system
/// turn opens on an empty one), an earlier answer cut after its last `</think>`, and a
/// generation prompt that opens `<think>`.
pub fn qwq(c: &Conversation, tools: &[Value], p: &mut Prompt) {
    let system = match tools.is_empty() && c.system.is_empty() {
        true => None,
        false => Some(c.system.as_str()),
    };
    json_head(system, tools, p);
    turns(c, p, false, History::CutAtThink);
    p.spelled("<|im_start|>assistant\n<think>\n", SPECIALS);
}

/// A call as Qwen 3.5 and Qwen3-Coder write it, after `lead` (which opens `<tool_call>`):
/// `<function=NAME>`, a `<parameter=...>` block per argument, and the closing tags.
pub(super) fn xml_call(lead: &str, call: &super::conversation::Call, p: &mut Prompt) {
    p.spelled(&format!("{lead}<function="), SPECIALS);
    p.message(&call.name);
    p.frame(">\n");
    for (name, v) in call.arguments.as_object().into_iter().flatten() {
        p.frame("<parameter=");
        p.message(name);
        p.frame(">\n");
        p.message(&pyjson::template_value(v));
        p.frame("\n</parameter>\n");
    }
    p.spelled("</function>\n</tool_call>", SPECIALS);
}

/// The Qwen 2.5 / 3 system turn: the system text, then the tools as JSON lines and the call
/// format; without tools, the system text alone.
fn json_head(system: Option<&str>, tools: &[Value], p: &mut Prompt) {
    if !tools.is_empty() {
        p.spelled("<|im_start|>system\n", SPECIALS);
        if let Some(s) = system {
            p.system(s);
            p.frame("\n\n");
        }
        p.spelled(QWEN3_TOOLS_HEAD, SPECIALS);
        tool_lines(tools, p);
        p.spelled(QWEN3_TOOLS_TAIL, SPECIALS);
    } else if let Some(s) = system {
        p.spelled("<|im_start|>system\n", SPECIALS);
        p.system(s);
        p.spelled("<|im_end|>\n", SPECIALS);
    }
}

/// What a template writes of an assistant turn's reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum History {
    /// Qwen 3 and 3.5: reasoning in think blocks, by each one's rule.
    Thinking,
    /// Qwen 2.5: the text as it came.
    AsSent,
    /// QwQ: an earlier turn's text after its last `</think>`; the last turn's as it came.
    CutAtThink,
}

pub fn qwen35(c: &Conversation, tools: &[Value], p: &mut Prompt) {
    let system = c.system.trim();
    if !tools.is_empty() {
        p.spelled("<|im_start|>system\n", SPECIALS);
        p.spelled(QWEN35_TOOLS_HEAD, SPECIALS);
        tool_lines(tools, p);
        p.spelled(QWEN35_TOOLS_TAIL, SPECIALS);
        if !system.is_empty() {
            p.frame("\n\n");
            p.system(system);
        }
        p.spelled("<|im_end|>\n", SPECIALS);
    } else if !system.is_empty() {
        p.spelled("<|im_start|>system\n", SPECIALS);
        p.system(system);
        p.spelled("<|im_end|>\n", SPECIALS);
    }
    turns(c, p, true, History::Thinking);
    p.spelled("<|im_start|>assistant\n<think>\n", SPECIALS);
}

fn turns(c: &Conversation, p: &mut Prompt, xml_calls: bool, history: History) {
    let thinking = history == History::Thinking;
    for (i, m) in c.messages.iter().enumerate() {
        p.message_starts(c, i);
        match m.role {
            Role::User | Role::System => {
                let role = if m.role == Role::User {
                    "user"
                } else {
                    "system"
                };
                p.spelled(&format!("<|im_start|>{role}\n"), SPECIALS);
                p.message(if xml_calls { m.text.trim() } else { &m.text });
                p.spelled("<|im_end|>\n", SPECIALS);
            }
            Role::Assistant => {
                p.spelled("<|im_start|>assistant\n", SPECIALS);
                let (reasoning, text) = match history {
                    History::Thinking => m.think_split(),
                    History::AsSent => (String::new(), m.text.clone()),
                    History::CutAtThink if i + 1 == c.messages.len() => {
                        (String::new(), m.text.clone())
                    }
                    History::CutAtThink => (
                        String::new(),
                        m.text
                            .rsplit("</think>")
                            .next()
                            .unwrap_or("")
                            .trim_start_matches('\n')
                            .to_string(),
                    ),
                };
                // QwQ opens a call on a new line when the turn sent any text, cut or not.
                let has_text = match history {
                    History::CutAtThink => !m.text.is_empty(),
                    History::Thinking | History::AsSent => !text.is_empty(),
                };
                let reasoning = match xml_calls {
                    true => reasoning.trim(),
                    false => reasoning.trim_matches('\n'),
                };
                // Qwen 3 writes reasoning after the last user turn only (and an empty block in
                // the turn that ends the prompt); Qwen 3.5 there always, and before it wherever
                // the turn has reasoning.
                let thinks = thinking
                    && match xml_calls {
                        true => after_last_user(c, i) || !reasoning.is_empty(),
                        false => {
                            after_last_user(c, i)
                                && (!reasoning.is_empty() || i + 1 == c.messages.len())
                        }
                    };
                if thinks {
                    p.spelled("<think>\n", SPECIALS);
                    p.message(reasoning);
                    p.spelled("\n</think>\n\n", SPECIALS);
                }
                p.message(&text);
                for (k, call) in m.calls.iter().enumerate() {
                    match xml_calls {
                        false => {
                            if k > 0 || has_text {
                                p.frame("\n");
                            }
                            p.spelled("<tool_call>\n{\"name\": \"", SPECIALS);
                            p.message(&call.name);
                            p.frame("\", \"arguments\": ");
                            p.message(&call.arguments_json());
                            p.spelled("}\n</tool_call>", SPECIALS);
                        }
                        true => {
                            let lead = match (k, text.trim().is_empty()) {
                                (0, true) => "",
                                (0, false) => "\n\n",
                                _ => "\n",
                            };
                            xml_call(&format!("{lead}<tool_call>\n"), call, p);
                        }
                    }
                }
                p.spelled("<|im_end|>\n", SPECIALS);
            }
            Role::Tool => {
                let first = i == 0 || c.messages[i - 1].role != Role::Tool;
                let last = i + 1 == c.messages.len() || c.messages[i + 1].role != Role::Tool;
                if first {
                    p.spelled("<|im_start|>user", SPECIALS);
                }
                p.spelled("\n<tool_response>\n", SPECIALS);
                p.message(if xml_calls { m.text.trim() } else { &m.text });
                p.spelled("\n</tool_response>", SPECIALS);
                if last {
                    p.spelled("<|im_end|>\n", SPECIALS);
                }
            }
        }
    }
}
