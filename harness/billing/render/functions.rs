//! The tools block of a Claude prompt: how Anthropic renders `tools` into what the model reads.
//!
//! Anthropic does not publish it. Counted with the exact Claude tokenizer, the recorded tools
//! deltas of 23 real MCP servers (`fixtures/claude-counts`, 17 fitted, and
//! `fixtures/claude-counts-heldout`, 6 kept out; claude-opus-5, 2026-08/09) are explained to the
//! token, every one of them, by this rendering plus one constant (the tool-use prompt, 277
//! tokens):
//!
//! ```text
//! <functions>
//! <function>{"description": "...", "name": "...", "parameters": {...}}</function>
//! ...
//! </functions>
//! ```
//!
//! each definition as JSON with its keys sorted at every depth, `", "` and `": "` between items
//! and keys, and non-ASCII text left as it is. `toolcost claude-counts` shows the candidates
//! tried (compact, spaced and indented JSON, the order as given, the block or not) and how each
//! fits.

use crate::wire::ToolRef;
use serde_json::Value;

/// The text before the definitions, between them, and after them.
pub const OPEN: &str = "<functions>";
pub const BETWEEN: &str = "\n";
pub const CLOSE: &str = "</functions>";

/// One definition as the block carries it: an empty description is left out, and on the v3
/// family (`ascii`) text that is not ASCII is escaped as `\uXXXX` (recorded: a description with an
/// emoji bills its escapes on claude-sonnet-4-0; claude-opus-5 bills it as written). A server
/// tool (no name, description and schema of a function) is written as it was sent, sorted the
/// same way.
pub fn function(d: ToolRef, ascii: bool) -> String {
    let mut out = String::from("<function>");
    match d.parts() {
        Some(p) => {
            let schema = p.schema.value();
            out.push('{');
            if !p.description.is_empty() {
                out.push_str("\"description\": ");
                push_text(p.description, ascii, &mut out);
                out.push_str(", ");
            }
            out.push_str("\"name\": ");
            push_text(p.name, ascii, &mut out);
            out.push_str(", \"parameters\": ");
            push_json_as(&schema, true, true, ascii, &mut out);
            out.push('}');
        }
        None => push_json_as(&d.value(), true, true, ascii, &mut out),
    }
    out.push_str("</function>");
    out
}

/// JSON with sorted keys and spaced separators.
pub fn push_sorted(v: &Value, out: &mut String) {
    push_json(v, true, true, out)
}

/// JSON with its keys sorted or as given, and `", "` / `": "` separators or compact ones.
pub fn push_json(v: &Value, sort: bool, spaced: bool, out: &mut String) {
    push_json_as(v, sort, spaced, false, out)
}

/// [`push_json`], with text that is not ASCII escaped when `ascii` is set.
pub fn push_json_as(v: &Value, sort: bool, spaced: bool, ascii: bool, out: &mut String) {
    let (item, key) = match spaced {
        true => (", ", ": "),
        false => (",", ":"),
    };
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            if sort {
                keys.sort_unstable();
            }
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(item);
                }
                push_text(k, ascii, out);
                out.push_str(key);
                push_json_as(&m[k.as_str()], sort, spaced, ascii, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(item);
                }
                push_json_as(x, sort, spaced, ascii, out);
            }
            out.push(']');
        }
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => push_text(s, ascii, out),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
    }
}

/// A number as a Python-style serializer writes it: integers as they are, floats in their
/// shortest form, positional from 1e-4 up to 1e16 (with `.0` when whole) and otherwise with an
/// exponent that has its sign and two digits at least (`1e-05`, `1.5e+16`).
fn number(n: &serde_json::Number) -> String {
    let Some(f) = n.as_f64().filter(|_| n.is_f64()) else {
        return n.to_string();
    };
    if !f.is_finite() {
        return n.to_string();
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        let s = format!("{f}");
        return match s.contains('.') {
            true => s,
            false => s + ".0",
        };
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

fn push_text(s: &str, ascii: bool, out: &mut String) {
    // serde_json escapes what a Python serializer escapes with non-ASCII kept: the quote, the
    // backslash and the controls below U+0020.
    let quoted = serde_json::to_string(s).expect("a string serializes");
    if !ascii || s.is_ascii() {
        out.push_str(&quoted);
        return;
    }
    // As Python's `ensure_ascii`: each UTF-16 unit past ASCII as a lower-case `\uxxxx`.
    for c in quoted.chars() {
        match c.is_ascii() {
            true => out.push(c),
            false => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_descriptions_are_left_out_and_ascii_escapes() {
        let d = json!({"name": "n", "description": "", "input_schema": {"type": "object", "title": "caf\u{e9} \u{1f4dc}"}});
        assert_eq!(
            function(ToolRef::Json(&d), true),
            "<function>{\"name\": \"n\", \"parameters\": {\"title\": \"caf\\u00e9 \\ud83d\\udcdc\", \"type\": \"object\"}}</function>"
        );
        assert!(function(ToolRef::Json(&d), false).contains("caf\u{e9} \u{1f4dc}"));
    }

    #[test]
    fn floats_are_written_as_python_writes_them() {
        for (v, want) in [
            (json!(1.0), "1.0"),
            (json!(1), "1"),
            (json!(0.5), "0.5"),
            (json!(1e-5), "1e-05"),
            (json!(0.0001), "0.0001"),
            (json!(1.5e16), "1.5e+16"),
            (json!(-2.5e-7), "-2.5e-07"),
            (json!(123456.789), "123456.789"),
        ] {
            let mut s = String::new();
            push_sorted(&v, &mut s);
            assert_eq!(s, want);
        }
    }

    #[test]
    fn definitions_render_sorted_and_spaced() {
        let d = json!({"name": "get", "description": "Get \"it\"\n", "input_schema":
            {"type": "object", "properties": {"b": {"type": "number", "minimum": 1e-5}, "a": {}}}});
        assert_eq!(
            function(ToolRef::Json(&d), false),
            "<function>{\"description\": \"Get \\\"it\\\"\\n\", \"name\": \"get\", \"parameters\": \
             {\"properties\": {\"a\": {}, \"b\": {\"minimum\": 1e-05, \"type\": \"number\"}}, \
             \"type\": \"object\"}}</function>"
        );
    }
}
