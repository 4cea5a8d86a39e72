//! Qwen3-Coder's chat template, apart from the Qwen 2.5/3 family's: the tools as XML
//! (`<function>`, `<name>`, `<description>`, `<parameters>` with one `<parameter>` block per
//! property; every other key of a property, of the parameters and of the function as its own
//! element, its value as JSON when it is a list or an object and as Python's `str` otherwise), a
//! default system text when the request has tools and none, calls as `<function=...>` /
//! `<parameter=...>` XML, an assistant turn's text written as it came (no reasoning).
//!
//! Checked text for text against the model's own template (`fixtures/open-templates`).

use super::conversation::{Conversation, Role};
use super::qwen::SPECIALS;
use super::{pyjson, Prompt};
use serde_json::Value;

const CODER_SYSTEM: &str =
    "You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks.";
const CODER_TOOLS_HEAD: &str = "\n\n# Tools\n\nYou have access to the following tools:\n\n<tools>";
const CODER_TOOLS_TAIL: &str = "\n</tools>\n\nIf you choose to call a tool ONLY reply in the following format with NO suffix:\n\n<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n<parameter=example_parameter_2>\nvalue_2\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: the tool calling block MUST begin with an opening <tool_call> tag and end with a closing </tool_call> tag.\n- Required parameters MUST be specified\n- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n</IMPORTANT>";

/// The keys of `v` not in `handled`, each as `\n<key>value</key>`.
fn extra_keys(v: &Value, handled: &[&str], p: &mut Prompt) {
    for (k, x) in v.as_object().into_iter().flatten() {
        if !handled.contains(&k.as_str()) {
            p.tools(&format!("\n<{k}>{}</{k}>", pyjson::template_value(x)));
        }
    }
}

fn coder_tool(t: &Value, p: &mut Prompt) {
    let f = t.get("function").unwrap_or(t);
    p.tools(&format!(
        "\n<function>\n<name>{}</name>",
        pyjson::py_str(&f["name"])
    ));
    if let Some(d) = f.get("description") {
        p.tools(&format!(
            "\n<description>{}</description>",
            pyjson::py_str(d).trim()
        ));
    }
    p.tools("\n<parameters>");
    let params = &f["parameters"];
    for (name, field) in params["properties"].as_object().into_iter().flatten() {
        p.tools(&format!("\n<parameter>\n<name>{name}</name>"));
        if let Some(ty) = field.get("type") {
            p.tools(&format!("\n<type>{}</type>", pyjson::py_str(ty)));
        }
        if let Some(d) = field.get("description") {
            p.tools(&format!(
                "\n<description>{}</description>",
                pyjson::py_str(d).trim()
            ));
        }
        extra_keys(field, &["name", "type", "description"], p);
        p.tools("\n</parameter>");
    }
    extra_keys(params, &["type", "properties"], p);
    p.tools("\n</parameters>");
    extra_keys(f, &["type", "name", "description", "parameters"], p);
    p.tools("\n</function>");
}

pub fn coder(c: &Conversation, tools: &[Value], p: &mut Prompt) {
    let opened = match (c.system.is_empty(), tools.is_empty()) {
        (false, _) => {
            p.spelled("<|im_start|>system\n", SPECIALS);
            p.system(&c.system);
            true
        }
        (true, false) => {
            p.spelled("<|im_start|>system\n", SPECIALS);
            p.frame(CODER_SYSTEM);
            true
        }
        (true, true) => false,
    };
    if !tools.is_empty() {
        p.frame(CODER_TOOLS_HEAD);
        for t in tools {
            coder_tool(t, p);
        }
        p.spelled(CODER_TOOLS_TAIL, SPECIALS);
    }
    if opened {
        p.spelled("<|im_end|>\n", SPECIALS);
    }
    for (i, m) in c.messages.iter().enumerate() {
        p.message_starts(c, i);
        match m.role {
            Role::Assistant if !m.calls.is_empty() => {
                p.spelled("<|im_start|>assistant", SPECIALS);
                let text = m.text.trim();
                if !text.is_empty() {
                    p.frame("\n");
                    p.message(text);
                    p.frame("\n");
                }
                for call in &m.calls {
                    super::qwen::xml_call("\n<tool_call>\n", call, p);
                }
                p.spelled("<|im_end|>\n", SPECIALS);
            }
            Role::User | Role::System | Role::Assistant => {
                let role = match m.role {
                    Role::User => "user",
                    Role::System => "system",
                    _ => "assistant",
                };
                p.spelled(&format!("<|im_start|>{role}\n"), SPECIALS);
                p.message(&m.text);
                p.spelled("<|im_end|>\n", SPECIALS);
            }
            Role::Tool => {
                if i > 0 && c.messages[i - 1].role != Role::Tool {
                    p.spelled("<|im_start|>user\n", SPECIALS);
                }
                p.spelled("<tool_response>\n", SPECIALS);
                p.message(&m.text);
                p.spelled("\n</tool_response>\n", SPECIALS);
                if c.messages.get(i + 1).is_none_or(|n| n.role != Role::Tool) {
                    p.spelled("<|im_end|>\n", SPECIALS);
                }
            }
        }
    }
    p.spelled("<|im_start|>assistant\n", SPECIALS);
}
