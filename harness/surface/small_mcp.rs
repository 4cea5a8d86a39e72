//! `small-mcp`: a fixed handful of generic MCP tools (dispatch plus discovery) whose bytes
//! do not change with the catalogue.

use super::{Built, Context};
use crate::catalogue::Tool;
use crate::wire;
use serde_json::json;

/// The small surface's `tools/list`, as the reference server serves it.
pub fn tools() -> Vec<Tool> {
    [
        json!({"name": "dispatch", "description": "Invoke one capability of the catalogue by its key. Find the key with search_directory and read its contract first; body carries the arguments the contract names.", "inputSchema": {"type": "object", "properties": {"key": {"type": "string", "description": "Capability key, exactly as search_directory returned it"}, "body": {"type": "object", "description": "Arguments for the capability, as its contract describes"}}, "required": ["key"]}}),
        json!({"name": "search_directory", "description": "Search the capability catalogue in plain words. Returns up to 12 candidates, best first, each with its key, a one-line summary and example arguments.", "inputSchema": {"type": "object", "properties": {"query": {"type": "string", "description": "What you want to do, in plain words"}, "limit": {"type": "integer", "description": "Most candidates to return, 1 to 12"}}, "required": ["query"]}}),
        json!({"name": "read_contract", "description": "Read the full contract of one capability: what it does, when to use it, its arguments with their schema, an example call and the credential it needs.", "inputSchema": {"type": "object", "properties": {"key": {"type": "string", "description": "Capability key"}}, "required": ["key"]}}),
        json!({"name": "read_receipt", "description": "Read the receipt of an earlier dispatch: what ran, with which arguments, whether it succeeded and what it returned.", "inputSchema": {"type": "object", "properties": {"id": {"type": "string", "description": "Receipt id returned by dispatch"}}, "required": ["id"]}}),
    ]
    .into_iter()
    .map(|v| Tool::from_value(v).expect("static tool"))
    .collect()
}

pub fn build(ctx: &Context) -> Built {
    let defs = tools()
        .iter()
        .map(|t| {
            let name = ctx.client.tool_name(&ctx.catalogue.server, &t.name);
            wire::tool_definition(ctx.client.format, &name, t, false)
        })
        .collect();
    Built {
        request: ctx.request(None, defs),
        definitions_in_context: 0,
        definitions_on_wire: 0,
    }
}
