//! DeepSeek's chat formats. Turns are `<｜User｜>` and `<｜Assistant｜>` (full-width bars and
//! `▁`, special tokens), an assistant turn closed by `<｜end▁of▁sentence｜>`; the prompt opens
//! with `<｜begin▁of▁sentence｜>` and the system text.
//!
//! - V3 and V3.1: DeepSeek's own templates do not declare tools; the form servers use
//!   (vLLM's DeepSeek-V3 tool template) appends a `<tools>` block of JSON lines to the system
//!   text (R1: vLLM's R1 tool template, JSON fences after an instruction) and writes calls as `<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}` with the
//!   arguments in a JSON fence, results in `<｜tool▁outputs▁begin｜>`.
//! - V3.2 and V4 (DeepSeek's `encoding_dsv4`): tools appended to the system text as "## Tools"
//!   with one JSON schema per line, calls as `｜DSML｜` XML (plain text), results as a user
//!   turn's `<tool_result>`. DeepSeek's API bills its V4 models a little under this (+1 to +5%
//!   on three recorded requests of an open-source suite, with each schema compact and without
//!   `strict`, as here): an estimate.

use super::conversation::{Conversation, Role};
use super::{pyjson, Prompt};
use serde_json::Value;

const SPECIALS: &[&str] = &[
    "<｜begin▁of▁sentence｜>",
    "<｜end▁of▁sentence｜>",
    "<｜User｜>",
    "<｜Assistant｜>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁outputs▁begin｜>",
    "<｜tool▁outputs▁end｜>",
    "<｜tool▁output▁begin｜>",
    "<｜tool▁output▁end｜>",
    "<｜tool▁sep｜>",
    "<think>",
    "</think>",
];

/// The V3 tool template's text as it renders: Jinja keeps the indentation before each `{{`
/// (`lstrip_blocks` strips it only before block tags) and the newlines after its expressions,
/// so the prompt carries runs of spaces a server bills. Each piece below is what one output
/// expression writes, with the whitespace the template leaves around it.
const V3_TOOLS_HEAD: &str = "    \n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>";
const V3_TOOLS_TAIL: &str = "    \n</tools>\n\n\n\n    For function call returns, you should first print <｜tool▁calls▁begin｜>\n\n    For each function call, you should return object like:\n\n    <｜tool▁call▁begin｜>function<｜tool▁sep｜><function_name>\n```json\n<function_arguments_in_json_format>\n```<｜tool▁call▁end｜>\n\n    At the end of function call returns, you should print <｜tool▁calls▁end｜><｜end▁of▁sentence｜>";

/// V3 and V3.1 as vLLM's DeepSeek-V3 tool template renders them (checked text for text
/// against it, `fixtures/open-templates`): the system messages joined by a blank line wherever
/// they stand, user turns as they came, an assistant turn's text then its calls, results in an
/// outputs block that the next assistant turn closes (a user turn does not), and the
/// generation prompt only after an assistant turn.
pub fn v3(c: &Conversation, tools: &[Value], p: &mut Prompt) {
    tool_template(c, tools, p, false)
}

/// R1 as vLLM's DeepSeek-R1 tool template renders it (adapted from SGLang's): the V3 turns,
/// with the tools in the system text as JSON fences after an instruction, an earlier answer's
/// text cut after its last `</think>`, a plain answer without indentation, and a generation
/// prompt without a newline.
pub fn r1(c: &Conversation, tools: &[Value], p: &mut Prompt) {
    tool_template(c, tools, p, true)
}

const R1_TOOLS_HEAD: &str = "You are a helpful assistant with tool calling capabilities. When a tool call is needed, you MUST use the following format to issue the call:\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>FUNCTION_NAME\n```json\n{\"param1\": \"value1\", \"param2\": \"value2\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>\n\nMake sure the JSON is valid.## Tools\n\n### Function\n\nYou have the following functions available:\n\n";

/// vLLM's DeepSeek V3 (`r1` false) and R1 tool templates, which share their turns.
fn tool_template(c: &Conversation, tools: &[Value], p: &mut Prompt, r1: bool) {
    if !r1 {
        p.frame("\n\n");
    }
    p.spelled("<｜begin▁of▁sentence｜>", SPECIALS);
    if !r1 {
        p.frame("\n");
    }
    // The first system text only when there is one (the others as they are).
    let systems: Vec<&str> = c
        .systems()
        .enumerate()
        .filter(|(i, s)| *i > 0 || !s.is_empty())
        .map(|(_, s)| s)
        .collect();
    p.system(&systems.join("\n\n"));
    if !tools.is_empty() {
        match r1 {
            false => {
                p.spelled(V3_TOOLS_HEAD, SPECIALS);
                for t in tools {
                    p.tools("\n");
                    p.tools(&pyjson::dumps(t, pyjson::SPACED));
                }
                p.spelled(V3_TOOLS_TAIL, SPECIALS);
            }
            true => {
                p.frame("\n\n");
                p.spelled(R1_TOOLS_HEAD, SPECIALS);
                for t in tools {
                    p.frame("\n```json\n");
                    p.tools(&pyjson::dumps(t, pyjson::SPACED));
                    p.frame("\n```\n");
                }
            }
        }
    }
    // R1 keeps an assistant turn's text after its last `</think>`.
    let answer = |m: &super::conversation::Message| -> String {
        match r1 {
            true => m.text.rsplit("</think>").next().unwrap_or("").to_string(),
            false => m.text.clone(),
        }
    };
    let (mut in_outputs, mut first_output, mut last_user) = (false, true, false);
    for (i, m) in c.messages.iter().enumerate() {
        p.message_starts(c, i);
        match m.role {
            Role::System => {}
            Role::User => {
                // A user turn ends an outputs block without closing it.
                (in_outputs, last_user) = (false, true);
                p.spelled("<｜User｜>", SPECIALS);
                p.message(&m.text);
                p.spelled("<｜Assistant｜>", SPECIALS);
            }
            Role::Assistant if !m.calls.is_empty() => {
                last_user = false;
                if in_outputs {
                    p.frame("            ");
                    p.spelled("<｜tool▁outputs▁end｜>", SPECIALS);
                }
                (in_outputs, first_output) = (false, true);
                for (k, call) in m.calls.iter().enumerate() {
                    match k {
                        0 => {
                            p.frame(&" ".repeat(20));
                            p.message(&answer(m));
                            p.spelled("<｜tool▁calls▁begin｜>", SPECIALS);
                        }
                        _ => p.frame(&format!("{}\n", " ".repeat(16))),
                    }
                    p.spelled("<｜tool▁call▁begin｜>function<｜tool▁sep｜>", SPECIALS);
                    p.message(&call.name);
                    p.frame("\n```json\n");
                    p.message(&call.arguments_json());
                    p.spelled("\n```<｜tool▁call▁end｜>", SPECIALS);
                }
                p.frame("        ");
                p.spelled("<｜tool▁calls▁end｜><｜end▁of▁sentence｜>", SPECIALS);
            }
            Role::Assistant => {
                last_user = false;
                // R1 writes a plain answer unindented unless it closes the results.
                if !r1 || in_outputs {
                    p.frame("            ");
                }
                if in_outputs {
                    p.spelled("<｜tool▁outputs▁end｜>", SPECIALS);
                    in_outputs = false;
                }
                p.message(&answer(m));
                p.spelled("<｜end▁of▁sentence｜>", SPECIALS);
            }
            Role::Tool => {
                (in_outputs, last_user) = (true, false);
                p.frame("            ");
                match first_output {
                    true => p.spelled("<｜tool▁outputs▁begin｜>", SPECIALS),
                    false => p.frame("\n"),
                }
                first_output = false;
                p.spelled("<｜tool▁output▁begin｜>", SPECIALS);
                p.message(&m.text);
                p.spelled("<｜tool▁output▁end｜>", SPECIALS);
            }
        }
    }
    if in_outputs {
        p.frame("    ");
        p.spelled("<｜tool▁outputs▁end｜>", SPECIALS);
        p.frame("\n");
    }
    if !r1 {
        p.frame("\n");
    }
    if !last_user && !in_outputs {
        if !r1 {
            p.frame("    ");
        }
        p.spelled("<｜Assistant｜>", SPECIALS);
        if !r1 {
            p.frame("\n");
        }
    }
}

const DSML: &str = "｜DSML｜";

fn v4_tools_header() -> String {
    let d = DSML;
    format!(
        "## Tools\n\nYou have access to a set of tools to help answer the user's question. You can invoke tools by writing a \"<{d}tool_calls>\" block like the following:\n\n<{d}tool_calls>\n<{d}invoke name=\"$TOOL_NAME\">\n<{d}parameter name=\"$PARAMETER_NAME\" string=\"true|false\">$PARAMETER_VALUE</{d}parameter>\n...\n</{d}invoke>\n<{d}invoke name=\"$TOOL_NAME2\">\n...\n</{d}invoke>\n</{d}tool_calls>\n\nString parameters should be specified as is and set `string=\"true\"`. For all other types (numbers, booleans, arrays, objects), pass the value in JSON format and set `string=\"false\"`.\n\nIf thinking_mode is enabled (triggered by <think>), you MUST output your complete reasoning inside <think>...</think> BEFORE any tool calls or final response.\n\nOtherwise, output directly after </think> with tool calls or final response.\n\n### Available Tool Schemas\n\n"
    )
}

const V4_TOOLS_FOOTER: &str =
    "\nYou MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls.\n";

pub fn v4(c: &Conversation, tools: &[Value], p: &mut Prompt) {
    p.spelled("<｜begin▁of▁sentence｜>", SPECIALS);
    p.system(&c.system);
    if !tools.is_empty() {
        if !c.system.is_empty() {
            p.frame("\n\n");
        }
        p.spelled(&v4_tools_header(), SPECIALS);
        for t in tools {
            let mut f = t["function"].clone();
            if let Some(o) = f.as_object_mut() {
                o.remove("strict");
            }
            p.tools(&pyjson::dumps(&f, pyjson::COMPACT));
            p.tools("\n");
        }
        p.spelled(V4_TOOLS_FOOTER, SPECIALS);
    }
    let mut in_user = false;
    for (i, m) in c.messages.iter().enumerate() {
        p.message_starts(c, i);
        match m.role {
            Role::User | Role::System | Role::Tool => {
                match in_user {
                    true => p.frame("\n\n"),
                    false => p.spelled("<｜User｜>", SPECIALS),
                }
                in_user = true;
                if m.role == Role::Tool {
                    p.frame("<tool_result>");
                    p.message(&m.text);
                    p.frame("</tool_result>");
                } else {
                    p.message(&m.text);
                }
            }
            Role::Assistant => {
                in_user = false;
                // Non-thinking: an assistant turn opens with `</think>`.
                p.spelled("<｜Assistant｜></think>", SPECIALS);
                p.message(&m.text);
                if !m.calls.is_empty() {
                    p.frame(&format!("\n\n<{DSML}tool_calls>\n"));
                    for call in &m.calls {
                        p.frame(&format!("<{DSML}invoke name=\""));
                        p.message(&call.name);
                        p.frame("\">\n");
                        let args = call.arguments.as_object();
                        for (k, v) in args.into_iter().flatten() {
                            p.frame(&format!("<{DSML}parameter name=\""));
                            p.message(k);
                            match v {
                                Value::String(s) => {
                                    p.frame("\" string=\"true\">");
                                    p.message(s);
                                }
                                other => {
                                    p.frame("\" string=\"false\">");
                                    p.message(&pyjson::dumps(other, pyjson::SPACED));
                                }
                            }
                            p.frame(&format!("</{DSML}parameter>\n"));
                        }
                        if args.is_none_or(|a| a.is_empty()) {
                            p.frame("\n");
                        }
                        p.frame(&format!("</{DSML}invoke>\n"));
                    }
                    p.frame(&format!("</{DSML}tool_calls>"));
                }
                p.spelled("<｜end▁of▁sentence｜>", SPECIALS);
            }
        }
    }
    p.spelled("<｜Assistant｜></think>", SPECIALS);
}
