//! MCP `tools/list` captures: a `{"tools": [...]}` result, or a whole JSON-RPC response.
//!
//! Each tool's JSON text is kept as the server wrote it (whitespace removed), because
//! re-serialising through typed structs drops or reorders fields.

use super::{Catalogue, DefText, Row, RowSchema, Runner, Tool};
use crate::json;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

#[derive(Deserialize)]
struct ToolsResult<'a> {
    #[serde(borrow)]
    tools: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    tools: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
}

/// Parse a capture into tools, keeping each one's bytes (and no parsed tree).
pub fn parse(text: &str) -> Result<Vec<Tool>, String> {
    Ok(read(text)?.into_iter().map(|d| d.tool).collect())
}

/// Parse a capture into a catalogue ([`catalogue`]), each tool parsed once.
pub fn parse_catalogue(source: String, server: String, text: &str) -> Result<Catalogue, String> {
    let (tools, rows) = read(text)?
        .into_iter()
        .map(|d| {
            let row = row(&server, d.tool.name.clone(), &d.summary, d.schema);
            (d.tool, row)
        })
        .unzip();
    Ok(Catalogue {
        source,
        server,
        rows,
        tools,
    })
}

/// One captured tool: its text, and what its row is made of.
struct Described {
    tool: Tool,
    /// The description as docstring lines ([`describe`]).
    summary: String,
    schema: Option<RowSchema>,
}

fn read(text: &str) -> Result<Vec<Described>, String> {
    const HINT: &str = "expected a tools/list result ({\"tools\": [...]}) or a JSON-RPC response whose result has `tools`";
    let envelope: Envelope = serde_json::from_str(text)
        .map_err(|e| format!("{}; {HINT}", crate::json::why_unreadable(&e)))?;
    let raws = match (envelope.tools, envelope.result) {
        (Some(tools), _) => tools,
        (None, Some(result)) => {
            let r: ToolsResult = serde_json::from_str(result.get())
                .map_err(|e| format!("`result` is not a tools/list result ({e}); {HINT}"))?;
            r.tools
        }
        (None, None) => return Err(format!("no `tools` array; {HINT}")),
    };
    // Each tool is parsed on its own, on the machine's cores; the first bad one (in order) is
    // the one reported. The parsed tree gives up its parts and is dropped: the tool keeps its
    // text alone.
    let numbered: Vec<(usize, &RawValue)> = raws.into_iter().enumerate().collect();
    crate::sync::map_on_cores(&numbered, |&(i, raw)| {
        let value: Value = serde_json::from_str(raw.get())
            .map_err(|e| format!("tool {i}: {}", crate::json::why_unreadable(&e)))?;
        let description = match value.get("description") {
            Some(Value::String(d)) => d.clone(),
            _ => String::new(),
        };
        let (name, summary, schema) = describe(value).map_err(|e| match e {
            Odd::NotAnObject => format!("tool {i} is not an object; {HINT}"),
            Odd::NoName => format!("tool {i}: a tool definition has no string `name`"),
        })?;
        // The schema becomes text here, on the thread that parsed it, so that no tool's tree
        // outlives its own parse: the peak holds the texts, not every tree at once.
        // The definitions made from the tool share the row's schema text (a tool without
        // one is shown with the empty object schema, as `Tool::definition_parts` reads it).
        let schema = schema.as_ref().map(RowSchema::new);
        let shown = match &schema {
            Some(s) => s.shared_text(),
            None => json::compact(&super::empty_schema()).into(),
        };
        let text = DefText::from_compact(&description, shown);
        let minified = json::minify(raw.get());
        // A text that is exactly `{"name","description","inputSchema"}` of its parts is not
        // kept twice: the tool writes it again from them if it is asked for.
        let tool = match Tool::composes(&name, &text, &minified) {
            true => Tool::composed(name, text),
            false => Tool::with_text(name, minified, text),
        };
        Ok(Described {
            tool,
            summary,
            schema,
        })
    })
    .into_iter()
    .collect()
}

/// Why a captured definition is not a tool.
enum Odd {
    NotAnObject,
    NoName,
}

/// A definition's name, its description as docstring lines and its input schema (moved out of
/// the tree, which is then dropped). The first non-blank line is the row's `# WHAT:` (a
/// description that opens with a blank line, common in real servers, keeps its first line of
/// text); the rest, on one line, is `# MORE:`, so that a resolver reads the whole description
/// while the summary stays one line.
fn describe(value: Value) -> Result<(String, String, Option<Value>), Odd> {
    let Value::Object(mut m) = value else {
        return Err(Odd::NotAnObject);
    };
    let name = match m.swap_remove("name") {
        Some(Value::String(n)) => n,
        _ => return Err(Odd::NoName),
    };
    let description = m.get("description").and_then(Value::as_str).unwrap_or("");
    let mut lines = description
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty());
    let mut docs = format!("# WHAT: {}", lines.next().unwrap_or(""));
    let more: Vec<&str> = lines.flat_map(str::split_whitespace).collect();
    if !more.is_empty() {
        docs.push_str("\n# MORE: ");
        docs.push_str(&more.join(" "));
    }
    Ok((name, docs, m.swap_remove("inputSchema")))
}

/// The row that describes a captured tool.
fn row(server: &str, key: String, docs: &str, schema: Option<RowSchema>) -> Row {
    Row {
        key,
        runner: Runner::Fn,
        target: None,
        auth: None,
        content: docs.to_string(),
        category: Some(server.to_string()),
        planner_rank: 100,
        enabled: true,
        planner_visible: true,
        input_schema: schema,
    }
}

/// `owner__server.tools.json` -> `server`.
pub fn server_name_from_file(file: &str) -> String {
    let stem = file.split('.').next().unwrap_or(file);
    stem.rsplit("__").next().unwrap_or(stem).to_string()
}

/// A catalogue whose projection is the captured tools, unchanged, and whose rows describe them.
pub fn catalogue(source: String, server: String, tools: Vec<Tool>) -> Catalogue {
    let rows = crate::sync::map_on_cores(&tools, |t| {
        // A tool's text was checked to be a named object when it was made.
        let value = serde_json::from_str(t.raw()).unwrap_or(Value::Null);
        let (summary, schema) = match describe(value) {
            Ok((_, summary, schema)) => (summary, schema),
            Err(_) => ("# WHAT: ".to_string(), None),
        };
        row(
            &server,
            t.name.clone(),
            &summary,
            schema.as_ref().map(RowSchema::new),
        )
    });
    Catalogue {
        source,
        server,
        rows,
        tools,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_shapes_and_keeps_bytes() {
        let bare = r#"{"tools": [ {"name": "a", "execution": {"taskSupport": "forbidden"}, "inputSchema": {"type": "object"}} ]}"#;
        let rpc = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{bare}}}"#);
        for text in [bare.to_string(), rpc] {
            let tools = parse(&text).unwrap();
            assert_eq!(
                tools[0].raw(),
                r#"{"name":"a","execution":{"taskSupport":"forbidden"},"inputSchema":{"type":"object"}}"#
            );
        }
    }

    /// The rows made from one parse of a capture (a file) are the rows made again from its
    /// tools' text (a live listing), odd definitions included.
    #[test]
    fn both_ways_of_making_a_captures_rows_agree() {
        let text = r#"{"tools": [
            {"name": "a", "description": "first line\nsecond", "inputSchema": {"type": "object", "properties": {"x": {"type": "number", "maximum": 1e2}}}},
            {"name": "b"},
            {"name": "c", "description": 7, "inputSchema": null},
            {"inputSchema": ["x"], "name": "d", "description": "tab\t\u00e9"},
            {"name": "e", "description": "", "inputSchema": "s"}
        ]}"#;
        let once = parse_catalogue("s".into(), "srv".into(), text).unwrap();
        let again = catalogue("s".into(), "srv".into(), parse(text).unwrap());
        assert_eq!(once.rows, again.rows);
        assert_eq!(once.tools, again.tools);
        assert_eq!(once.rows[0].content, "# WHAT: first line\n# MORE: second");
        assert_eq!(once.rows[1].input_schema, None);
        assert_eq!(
            once.rows[3].input_schema.as_ref().map(RowSchema::text),
            Some(r#"["x"]"#)
        );
    }

    #[test]
    fn rejects_what_is_not_a_tools_list() {
        assert!(
            parse(r#"{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}"#)
                .unwrap_err()
                .contains("tools")
        );
        assert!(parse(r#"{"tools": [1]}"#)
            .unwrap_err()
            .contains("not an object"));
        assert!(parse("{nope").unwrap_err().contains("not JSON"));
        assert!(parse(r#"{"tools":[{"description":"x"}]}"#)
            .unwrap_err()
            .contains("name"));
    }
}
