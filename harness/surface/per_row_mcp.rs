//! `per-row-mcp`: one MCP tool per enabled, planner-visible row, every definition in context.

use super::{Built, Context};

pub fn build(ctx: &Context) -> Built {
    let defs = ctx.catalogue_definitions(false);
    let n = defs.len();
    Built {
        request: ctx.request(None, defs),
        definitions_in_context: n,
        definitions_on_wire: n,
    }
}
