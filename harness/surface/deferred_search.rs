//! `deferred-search`: every per-row definition on the wire with `defer_loading`, plus a search
//! tool. None is billed until a search returns it (for OpenAI, name and description stay
//! billed and only the schema is deferred; the render model applies that rule).

use super::{Built, Context, SearchMethod, SearchSide};
use crate::wire::{self, Format};
use serde_json::{json, Value};

/// Anthropic's provider-side tool-search tool types (FACTS section 3).
pub const ANTHROPIC_REGEX: &str = "tool_search_tool_regex_20251119";
pub const ANTHROPIC_BM25: &str = "tool_search_tool_bm25_20251119";

pub fn build(ctx: &Context, method: SearchMethod, side: SearchSide) -> Built {
    let mut tools = vec![search_tool(ctx.client.format, method, side)];
    let defs = ctx.catalogue_definitions(true);
    let n = defs.len();
    tools.extend(defs);
    Built {
        request: ctx.request(None, tools),
        definitions_in_context: 0,
        definitions_on_wire: n,
    }
}

fn search_tool(format: Format, method: SearchMethod, side: SearchSide) -> Value {
    match (format, side) {
        (Format::AnthropicMessages, SearchSide::Provider) => match method {
            SearchMethod::Regex => {
                json!({"type": ANTHROPIC_REGEX, "name": "tool_search_tool_regex"})
            }
            SearchMethod::Bm25 => json!({"type": ANTHROPIC_BM25, "name": "tool_search_tool_bm25"}),
        },
        (Format::OpenaiChat, SearchSide::Provider) => json!({"type": "tool_search"}),
        (_, SearchSide::Client) => {
            let (desc, schema) = match method {
                SearchMethod::Regex => (
                    "Search the deferred tools by regular expression over their names and descriptions. Returns references to at most five matching tools, which become callable in the next step. Use this before calling any tool you have not seen in full.",
                    json!({"type": "object", "properties": {"pattern": {"type": "string", "description": "Regular expression, at most 200 characters, matched case-insensitively"}}, "required": ["pattern"]}),
                ),
                SearchMethod::Bm25 => (
                    "Search the deferred tools with keywords. Returns references to at most five matching tools, which become callable in the next step. Use this before calling any tool you have not seen in full.",
                    json!({"type": "object", "properties": {"query": {"type": "string", "description": "Keywords describing the capability you need"}, "max_results": {"type": "integer", "description": "How many tools to return, 1 to 5"}}, "required": ["query"]}),
                ),
            };
            wire::function_definition(format, "tool_search", desc, schema, false)
        }
    }
}
