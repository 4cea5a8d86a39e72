//! `code-mode`: one tool that runs the model's code against a typed dispatch API in a
//! sandbox. Its description is the API, which does not change with the catalogue.

use super::{Built, Context};
use crate::catalogue::Tool;
use crate::wire;
use serde_json::json;

/// The execute tool's description: what the sandbox offers, as TypeScript declarations.
pub const API: &str = "Run a JavaScript program in a sandbox and return what it prints with console.log. \
The sandbox has no filesystem, no network and no timers; it reaches the capability catalogue only through these functions:\n\
```ts\n\
/** Ranked candidates for a plain-words intent, best first. */\n\
declare function search(query: string, limit?: number): Promise<Array<{ key: string; summary: string; args: string[] }>>;\n\
/** The contract of one capability: arguments with their JSON Schema, an example, the runner. */\n\
declare function contract(key: string): Promise<{ key: string; what: string; when: string; schema: object; example: object }>;\n\
/** Invoke a capability; throws on a refused call. Each call writes a receipt. */\n\
declare function dispatch(key: string, args?: Record<string, unknown>): Promise<{ ok: boolean; result: unknown; receipt: string }>;\n\
```\n\
Loop, filter and aggregate inside the program and print only what the user needs: one call can do many lookups. \
Programs stop after 5 seconds or 64 MB.";

/// The execute tool's input schema.
fn schema() -> serde_json::Value {
    json!({"type": "object", "properties": {"code": {"type": "string", "description": "JavaScript source; top-level await is allowed"}}, "required": ["code"]})
}

/// The execute tool as the reference server's `/mcp/code` lists it.
pub fn tool() -> Tool {
    Tool::from_value(json!({"name": "execute", "description": API, "inputSchema": schema()}))
        .expect("static tool")
}

pub fn build(ctx: &Context) -> Built {
    let name = ctx.client.tool_name(&ctx.catalogue.server, "execute");
    let def = wire::function_definition(ctx.client.format, &name, API, schema(), false);
    Built {
        request: ctx.request(None, vec![def]),
        definitions_in_context: 0,
        definitions_on_wire: 0,
    }
}
