//! `code-mode`: one tool that runs the model's code against a typed dispatch API in a
//! sandbox. Its description is the API, which does not change with the catalogue.

use super::play::{Local, Move, Output, Phase, Player, Read, Turn};
use super::{Built, Calls, Context, Endpoint, Listing, Surface};
use crate::catalogue::Tool;
use crate::resolve::{self, Method};
use crate::wire;
use serde_json::{json, Value};

pub struct CodeMode;

/// `/mcp/code`: the one `execute` tool.
pub const ENDPOINT: Endpoint = Endpoint {
    path: "/mcp/code",
    server_name: "toolcost-code",
    instructions: "Write one program that searches, reads contracts and dispatches; loops run inside one call. The tool never changes; the catalogue behind it does.",
    calls: Calls::Program,
    tools: Listing::Fixed(|| vec![tool()]),
};

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

impl Surface for CodeMode {
    fn name(&self) -> &'static str {
        "code-mode"
    }
    fn about(&self) -> &'static str {
        "one execute tool whose description is a typed search/contract/dispatch API"
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
        [23, 190, 207]
    }
    fn build(&self, ctx: &Context) -> Built {
        let name = ctx.client.tool_name(&ctx.catalogue.server, "execute");
        let def = wire::function_definition(ctx.client.format, &name, API, schema(), false);
        Built {
            request: ctx.request(None, vec![def.into()]),
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
        Some((resolve::Kind::DEFAULT.method(), 5))
    }
    fn player(&self, _ctx: &Context) -> Box<dyn Player> {
        Box::new(Programs { last_batch: 0 })
    }
}

/// The model writes a search program, then programs that make the calls, as many per program
/// as the policy allows (a loop that aggregates inside the sandbox for the orders task).
struct Programs {
    /// Calls the last program made.
    last_batch: usize,
}

/// The program a model writes to make the round's calls from `i`.
fn call_program(t: &Turn, i: usize) -> String {
    let key = Value::from(t.key);
    let round = t.round_calls(i);
    if t.task == "orders" {
        return format!(
            "let total = 0, count = 0;\n\
             for (let n = {}; n <= {}; n++) {{\n\
             \x20 const r = await dispatch({key}, {{ order_id: \"ord_\" + n }});\n\
             \x20 total += r.result.total_cents;\n\
             \x20 count += 1;\n\
             }}\n\
             console.log(JSON.stringify({{ count, total_cents: total }}));",
            round.start + 1,
            round.end
        );
    }
    let mut code = String::from("const out = [];\n");
    for a in &t.calls[round] {
        code.push_str(&format!(
            "out.push((await dispatch({key}, {})).result);\n",
            crate::json::compact(a)
        ));
    }
    code.push_str("console.log(JSON.stringify(out));");
    code
}

/// What a program printed, parsed; null when it failed or printed nothing parseable.
fn printed(structured: &Value) -> Value {
    structured["error"]
        .is_null()
        .then(|| structured["printed"].as_str())
        .flatten()
        .and_then(|p| serde_json::from_str(p).ok())
        .unwrap_or(Value::Null)
}

impl Player for Programs {
    fn opening(&self) -> Phase {
        Phase::Discover(0)
    }
    fn next(&mut self, phase: Phase, t: &Turn) -> Move {
        let code = match phase {
            Phase::Discover(_) => format!(
                "const found = await search({}, 5);\nconsole.log(JSON.stringify(found));",
                Value::from(t.query)
            ),
            Phase::Call(i) => {
                self.last_batch = t.round_calls(i).len();
                call_program(t, i)
            }
            Phase::Contract | Phase::Final => call_program(t, 0),
        };
        Move::Tool {
            name: t.tool_name("execute"),
            input: json!({"code": code}),
        }
    }
    fn local(&mut self, _name: &str, _input: &Value, _t: &Turn) -> Option<Local> {
        None
    }
    fn refuse(&self, _name: &str, _t: &Turn) -> Option<String> {
        None
    }
    fn read(&mut self, phase: Phase, out: Output, t: &Turn) -> Read {
        let Output::Mcp {
            tool: "execute",
            structured,
        } = out
        else {
            return Read::Nothing;
        };
        match (phase, printed(structured)) {
            // The search result names each key's arguments: no contract round.
            (Phase::Discover(_), found) => Read::Searched {
                hit: super::play::holds_key(&found, t.key),
                next: Phase::Call(0),
            },
            (Phase::Call(_), Value::Array(items)) => Read::Results {
                items,
                done: self.last_batch,
            },
            (Phase::Call(_), Value::Null) => Read::Failed,
            (Phase::Call(_), other) => Read::Results {
                items: vec![other],
                done: self.last_batch,
            },
            (Phase::Contract | Phase::Final, _) => Read::Nothing,
        }
    }
}
