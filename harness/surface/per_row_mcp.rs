//! `per-row-mcp`: one MCP tool per enabled, planner-visible row, every definition in context.
//! The model sees the row's tool and calls it directly; the reference server serves the
//! projection at `/mcp`.

use super::play::{self, Local, Move, Output, Phase, Player, Read, Turn};
use super::{Built, Calls, Context, Endpoint, Listing, Surface};
use crate::resolve::Method;
use serde_json::Value;

pub struct PerRowMcp;

/// `/mcp`: the per-row projection, byte for byte.
pub const ENDPOINT: Endpoint = Endpoint {
    path: "/mcp",
    server_name: "toolcost",
    instructions: "One tool per capability row. Tools change while you are connected; the server sends notifications/tools/list_changed.",
    calls: Calls::ByKey,
    tools: Listing::Projection,
};

impl Surface for PerRowMcp {
    fn name(&self) -> &'static str {
        "per-row-mcp"
    }
    fn about(&self) -> &'static str {
        "one MCP tool definition per enabled, planner-visible row"
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
        [214, 39, 40]
    }
    fn build(&self, ctx: &Context) -> Built {
        every_definition_in_context(ctx, ctx.catalogue_definitions(false))
    }
    fn endpoint(&self) -> Option<Endpoint> {
        Some(ENDPOINT)
    }
    fn calls_at(&self) -> Option<&'static str> {
        Some(ENDPOINT.path)
    }
    fn discovery(&self) -> Option<(Method, usize)> {
        None
    }
    fn player(&self, _ctx: &Context) -> Box<dyn Player> {
        Box::new(DirectCalls)
    }
}

/// A request that carries `defs` in full, every one in the model's context.
pub fn every_definition_in_context(ctx: &Context, defs: Vec<crate::wire::ToolEntry>) -> Built {
    let n = defs.len();
    Built {
        request: ctx.request(None, defs),
        definitions_in_context: n,
        definitions_on_wire: n,
    }
}

/// The model sees every row's tool: it calls the row, one call a round.
pub struct DirectCalls;

impl Player for DirectCalls {
    fn opening(&self) -> Phase {
        Phase::Call(0)
    }
    fn next(&mut self, phase: Phase, t: &Turn) -> Move {
        match phase {
            Phase::Call(i) => t.call_row(i),
            Phase::Discover(_) | Phase::Contract | Phase::Final => t.call_row(0),
        }
    }
    fn local(&mut self, _name: &str, _input: &Value, _t: &Turn) -> Option<Local> {
        None
    }
    fn refuse(&self, _name: &str, _t: &Turn) -> Option<String> {
        None
    }
    fn read(&mut self, phase: Phase, out: Output, t: &Turn) -> Read {
        match out {
            Output::Mcp { structured, .. } => play::one_result(phase, structured, t),
            Output::Shell(_) => Read::Nothing,
        }
    }
}
