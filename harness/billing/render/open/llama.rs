//! Llama's JSON tool format, tools in the first user message (the default of Meta's Llama 3.1
//! to 3.3 template, `tools_in_user_message`, and of vLLM's Llama 4 JSON template): each tool's
//! whole entry as JSON indented four spaces, after an instruction to answer with a JSON call;
//! a call is `{"name": ..., "parameters": ...}`, a result an `ipython` turn (its text as a JSON string).
//!
//! - Llama 3.x: `<|begin_of_text|>`, headers `<|start_header_id|>{role}<|end_header_id|>\n\n`,
//!   turns closed by `<|eot_id|>`; a system turn always, with "Environment: ipython" when tools
//!   are declared and the knowledge and (assumed) date lines; a string result is written as a
//!   JSON string (the template's `tojson` of an iterable).
//! - Llama 4: headers `<|header_start|>{role}<|header_end|>\n\n`, turns closed by `<|eot|>`, a
//!   result by `<|eom|>`; the system turn only with a system message; a turn's text as it came,
//!   and an assistant turn's text beside its calls, every call one after another. Providers add their
//!   own prompt (Together billed 616 for one small tool where this writes about 130): an
//!   estimate, on o200k for want of Llama 4's vocabulary.

use super::conversation::{Conversation, Role};
use super::{pyjson, Prompt};
use serde_json::Value;

const SPECIALS: &[&str] = &[
    "<|begin_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|header_start|>",
    "<|header_end|>",
    "<|eot|>",
    "<|eom|>",
];

const INSTRUCTION: &str = "Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}.Do not use variables.\n\n";

pub fn render(c: &Conversation, tools: &[Value], llama4: bool, p: &mut Prompt) {
    let header = |role: &str| match llama4 {
        true => format!("<|header_start|>{role}<|header_end|>\n\n"),
        false => format!("<|start_header_id|>{role}<|end_header_id|>\n\n"),
    };
    let eot = if llama4 { "<|eot|>" } else { "<|eot_id|>" };
    p.spelled("<|begin_of_text|>", SPECIALS);
    // Llama 3.x writes a system turn always; vLLM's Llama 4 template only for a system message.
    if !llama4 || !c.system.is_empty() {
        p.spelled(&header("system"), SPECIALS);
        if !tools.is_empty() {
            p.frame("Environment: ipython\n");
        }
        if !llama4 {
            p.frame("Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n");
        }
        p.system(c.system.trim());
        p.spelled(eot, SPECIALS);
    }
    let tools_turn = |p: &mut Prompt, text: &str| {
        p.spelled(&header("user"), SPECIALS);
        p.frame(INSTRUCTION);
        for t in tools {
            let style = pyjson::Style {
                indent: Some(4),
                ..pyjson::SPACED
            };
            p.tools(&pyjson::dumps(t, style));
            p.frame("\n\n");
        }
        p.message(text.trim());
        p.spelled(eot, SPECIALS);
    };
    // Tools with no message to hold them (the template refuses: see [`refusal`]) are written in
    // an empty turn, so that what the definitions cost is still measured.
    if c.messages.is_empty() && !tools.is_empty() {
        tools_turn(p, "");
    }
    for (i, m) in c.messages.iter().enumerate() {
        p.message_starts(c, i);
        // The tools go in the first message after the system one, whatever its role, written
        // as a user turn with its text trimmed.
        if i == 0 && !tools.is_empty() {
            tools_turn(p, &m.text);
            continue;
        }
        match m.role {
            Role::User | Role::System | Role::Assistant if m.calls.is_empty() => {
                let role = match m.role {
                    Role::User => "user",
                    Role::System => "system",
                    _ => "assistant",
                };
                p.spelled(&header(role), SPECIALS);
                // Llama 3.x trims a turn's text; the Llama 4 template writes it as it came.
                p.message(if llama4 { &m.text } else { m.text.trim() });
                p.spelled(eot, SPECIALS);
            }
            Role::User | Role::System | Role::Assistant => {
                p.spelled(&header("assistant"), SPECIALS);
                // Llama 4 writes the text beside the calls and every call, one after another;
                // Llama 3.x takes one call (it refuses more) and no text.
                let calls = match llama4 {
                    true => {
                        p.message(&m.text);
                        &m.calls[..]
                    }
                    false => &m.calls[..1],
                };
                for call in calls {
                    p.frame("{\"name\": \"");
                    p.message(&call.name);
                    p.frame("\", \"parameters\": ");
                    p.message(&pyjson::dumps(&call.arguments, pyjson::SPACED));
                    p.frame("}");
                }
                p.spelled(eot, SPECIALS);
            }
            Role::Tool => {
                p.spelled(&header("ipython"), SPECIALS);
                // A string is iterable to Jinja: both templates write it as a JSON string.
                p.message(&pyjson::dumps(
                    &Value::String(m.text.clone()),
                    pyjson::SPACED,
                ));
                p.spelled(if llama4 { "<|eom|>" } else { eot }, SPECIALS);
            }
        }
    }
    p.spelled(&header("assistant"), SPECIALS);
}

/// Why Llama's template refuses a conversation, if it does: tools with no message to put
/// them in, and (Llama 3.x) more than one call in a turn.
pub fn refusal(c: &Conversation, tools: &[Value], llama4: bool) -> Option<String> {
    if !tools.is_empty() && c.messages.is_empty() {
        return Some(
            "Cannot put tools in the first user message when there's no first user message!".into(),
        );
    }
    (!llama4 && c.messages.iter().any(|m| m.calls.len() > 1))
        .then(|| "This model only supports single tool-calls at once!".into())
}
