//! MCP `tools/list` captures: a `{"tools": [...]}` result, or a whole JSON-RPC response.
//!
//! Each tool's JSON text is kept as the server wrote it (whitespace removed), because
//! re-serialising through typed structs drops or reorders fields.

use super::{Catalogue, Row, Runner, Tool};
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

/// Parse a capture into tools, keeping each one's bytes.
pub fn parse(text: &str) -> Result<Vec<Tool>, String> {
    const HINT: &str = "expected a tools/list result ({\"tools\": [...]}) or a JSON-RPC response whose result has `tools`";
    let envelope: Envelope =
        serde_json::from_str(text).map_err(|e| format!("malformed JSON ({e}); {HINT}"))?;
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
    // the one reported.
    let numbered: Vec<(usize, &RawValue)> = raws.into_iter().enumerate().collect();
    crate::sync::map_on_cores(&numbered, |&(i, raw)| {
        let value: Value = serde_json::from_str(raw.get()).map_err(|e| format!("tool {i}: {e}"))?;
        if !value.is_object() {
            return Err(format!("tool {i} is not an object; {HINT}"));
        }
        Tool::with_raw(value, json::minify(raw.get())).map_err(|e| format!("tool {i}: {e}"))
    })
    .into_iter()
    .collect()
}

/// `owner__server.tools.json` -> `server`.
pub fn server_name_from_file(file: &str) -> String {
    let stem = file.split('.').next().unwrap_or(file);
    stem.rsplit("__").next().unwrap_or(stem).to_string()
}

/// A catalogue whose projection is the captured tools, unchanged, and whose rows describe them.
pub fn catalogue(source: String, server: String, tools: Vec<Tool>) -> Catalogue {
    let rows = crate::sync::map_on_cores(&tools, |t| Row {
        key: t.name.clone(),
        runner: Runner::Fn,
        target: None,
        auth: None,
        content: format!("# WHAT: {}", t.description().lines().next().unwrap_or("")),
        category: Some(server.clone()),
        planner_rank: 100,
        enabled: true,
        planner_visible: true,
        input_schema: t.value().get("inputSchema").cloned(),
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
                tools[0].raw,
                r#"{"name":"a","execution":{"taskSupport":"forbidden"},"inputSchema":{"type":"object"}}"#
            );
        }
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
        assert!(parse("{nope").unwrap_err().contains("malformed JSON"));
        assert!(parse(r#"{"tools":[{"description":"x"}]}"#)
            .unwrap_err()
            .contains("name"));
    }
}
