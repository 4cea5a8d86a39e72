//! `small-mcp`: a fixed handful of generic MCP tools (dispatch plus discovery) whose bytes
//! do not change with the catalogue.

use super::play::{self, Local, Move, Output, Phase, Player, Read, Turn};
use super::{Built, Calls, Context, Endpoint, Listing, Surface};
use crate::catalogue::Tool;
use crate::resolve::{self, Method};
use crate::wire;
use serde_json::{json, Value};

pub struct SmallMcp;

/// `/mcp/small`: four generic tools whose bytes never change.
pub const ENDPOINT: Endpoint = Endpoint {
    path: "/mcp/small",
    server_name: "toolcost-small",
    instructions: "Search the directory, read a contract, then dispatch by key. The tools never change; the catalogue behind them does.",
    calls: Calls::Generic,
    tools: Listing::Fixed(tools),
};

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

impl Surface for SmallMcp {
    fn name(&self) -> &'static str {
        "small-mcp"
    }
    fn about(&self) -> &'static str {
        "four generic MCP tools: dispatch {key, body}, search_directory, read_contract, read_receipt"
    }
    fn in_all(&self) -> bool {
        true
    }
    fn lacks(&self, _format: crate::wire::Format) -> Option<String> {
        None
    }
    fn headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    fn colour(&self) -> [u8; 3] {
        [31, 119, 180]
    }
    fn build(&self, ctx: &Context) -> Built {
        let defs = tools()
            .iter()
            .map(|t| {
                let name = ctx.client.tool_name(&ctx.catalogue.server, &t.name);
                wire::tool_definition(ctx.client.format, &name, t, false).into()
            })
            .collect();
        Built {
            request: ctx.request(None, defs),
            definitions_in_context: 0,
            definitions_on_wire: 0,
        }
    }
    fn endpoint(&self) -> Option<Endpoint> {
        Some(ENDPOINT)
    }
    fn calls_at(&self) -> Option<&'static str> {
        Some(ENDPOINT.path)
    }
    fn discovery(&self) -> Option<(Method, usize)> {
        Some((resolve::Kind::DEFAULT.method(), resolve::TOP))
    }
    fn player(&self, _ctx: &Context) -> Box<dyn Player> {
        Box::new(Generic)
    }
}

/// The model searches the directory, reads the contract, then dispatches one call a round.
struct Generic;

impl Player for Generic {
    fn opening(&self) -> Phase {
        Phase::Discover(0)
    }
    fn next(&mut self, phase: Phase, t: &Turn) -> Move {
        match phase {
            Phase::Discover(_) => Move::Tool {
                name: t.tool_name("search_directory"),
                input: json!({"query": t.query}),
            },
            Phase::Contract | Phase::Final => Move::Tool {
                name: t.tool_name("read_contract"),
                input: json!({"key": t.key}),
            },
            Phase::Call(i) => t.each(i, |j| Move::Tool {
                name: t.tool_name("dispatch"),
                input: json!({"key": t.key, "body": t.calls[j]}),
            }),
        }
    }
    fn local(&mut self, _name: &str, _input: &Value, _t: &Turn) -> Option<Local> {
        None
    }
    fn refuse(&self, _name: &str, _t: &Turn) -> Option<String> {
        None
    }
    fn read(&mut self, phase: Phase, out: Output, t: &Turn) -> Read {
        match (phase, out) {
            (
                Phase::Discover(_),
                Output::Mcp {
                    tool: "search_directory",
                    structured,
                },
            ) => Read::Searched {
                hit: play::holds_key(&structured["candidates"], t.key),
                next: Phase::Contract,
            },
            (_, Output::Mcp { structured, .. }) => play::one_result(phase, structured, t),
            (_, Output::Shell(_)) => Read::Nothing,
        }
    }
}
