//! `protocol-only`: zero catalogue definitions; the system prompt names the dispatch
//! endpoint once and the model reaches everything with its built-in shell or fetch tool.

use super::play::{
    self, HttpCall, Local, Method as HttpMethod, Move, Output, Phase, Player, Read, Turn,
};
use super::{Built, Context, Endpoint, Surface};
use crate::resolve::{self, Method};
use serde_json::{json, Value};

pub struct ProtocolOnly;

/// The endpoint instructions appended to the system prompt.
pub fn instructions(endpoint: &str) -> String {
    format!(
        "# Capabilities over HTTP\n\
Beyond your built-in tools, every capability you can use lives in one catalogue behind {endpoint}. \
Reach it with curl from your shell tool, in four steps:\n\
1. Ask: `GET {endpoint}?ask=<what you need, in plain words>` answers with ranked candidates and a `best` key.\n\
2. Read: `GET {endpoint}?key=<KEY>&format=markdown` answers with the contract: what it does, when to use it, its arguments and an example.\n\
3. Invoke: `POST {endpoint}` with the JSON body `{{\"key\": \"<KEY>\", \"args\": {{...}}}}` and the header `Authorization: Bearer $TOOLCOST_TOKEN`.\n\
4. Confirm: the answer carries a receipt id; `GET {endpoint}?receipt=<id>` shows what ran.\n\
Never guess a key: ask first, and read the contract before the first call to a key."
    )
}

impl Surface for ProtocolOnly {
    fn name(&self) -> &'static str {
        "protocol-only"
    }
    fn about(&self) -> &'static str {
        "no definitions; the system prompt names the HTTP dispatch endpoint once"
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
        [44, 160, 44]
    }
    fn build(&self, ctx: &Context) -> Built {
        Built {
            request: ctx.request(Some(&instructions(ctx.endpoint)), Vec::new()),
            definitions_in_context: 0,
            definitions_on_wire: 0,
        }
    }
    fn endpoint(&self) -> Option<Endpoint> {
        // It is served by the HTTP protocol under /api/dispatch, not by an MCP endpoint.
        None
    }
    fn calls_at(&self) -> Option<&'static str> {
        None
    }
    fn discovery(&self) -> Option<(Method, usize)> {
        Some((resolve::Kind::DEFAULT.method(), resolve::TOP))
    }
    fn player(&self, _ctx: &Context) -> Box<dyn Player> {
        Box::new(Shell)
    }
}

/// The model uses its shell: ask, read the contract, then invoke; the calls of a task run in
/// one shell loop, as a model batching lookups would write it.
struct Shell;

fn get(url: String, description: &'static str) -> Move {
    Move::Shell {
        command: format!("curl -s '{url}'"),
        description,
        requests: vec![HttpCall {
            method: HttpMethod::Get,
            url,
            body: None,
        }],
    }
}

impl Player for Shell {
    fn opening(&self) -> Phase {
        Phase::Discover(0)
    }
    fn next(&mut self, phase: Phase, t: &Turn) -> Move {
        let key = t.key;
        match phase {
            Phase::Discover(_) => get(
                format!(
                    "{}/api/dispatch?ask={}",
                    t.server,
                    t.query.replace(' ', "%20")
                ),
                "Ask the catalogue",
            ),
            Phase::Contract | Phase::Final => get(
                format!("{}/api/dispatch?key={key}&format=markdown", t.server),
                "Read the contract",
            ),
            Phase::Call(i) => {
                let url = format!("{}/api/dispatch", t.server);
                let round = t.round_calls(i);
                let requests: Vec<HttpCall> = t.calls[round.clone()]
                    .iter()
                    .map(|a| HttpCall {
                        method: HttpMethod::Post,
                        url: url.clone(),
                        body: Some(json!({"key": key, "args": a}).to_string()),
                    })
                    .collect();
                let command = if requests.len() > 1 {
                    format!("for id in $(seq {} {}); do curl -s -X POST {url} -H \"Authorization: Bearer $TOOLCOST_TOKEN\" -d \"{{\\\"key\\\":\\\"{key}\\\",\\\"args\\\":{{\\\"order_id\\\":\\\"ord_$id\\\"}}}}\"; echo; done", round.start + 1, round.end)
                } else {
                    format!("curl -s -X POST {url} -H \"Authorization: Bearer $TOOLCOST_TOKEN\" -d '{}'", requests[0].body.as_deref().unwrap_or(""))
                };
                Move::Shell {
                    command,
                    description: "Invoke the capability",
                    requests,
                }
            }
        }
    }
    fn local(&mut self, _name: &str, _input: &Value, _t: &Turn) -> Option<Local> {
        None
    }
    fn refuse(&self, _name: &str, _t: &Turn) -> Option<String> {
        None
    }
    fn read(&mut self, phase: Phase, out: Output, t: &Turn) -> Read {
        let Output::Shell(outputs) = out else {
            return Read::Nothing;
        };
        match phase {
            Phase::Discover(_) => {
                let answer: Value =
                    serde_json::from_str(&outputs.join("\n")).unwrap_or(Value::Null);
                Read::Searched {
                    hit: play::holds_key(&answer["candidates"], t.key),
                    next: Phase::Contract,
                }
            }
            Phase::Contract => Read::Contract,
            Phase::Call(_) => Read::Results {
                items: outputs
                    .iter()
                    .filter_map(|o| serde_json::from_str::<Value>(o).ok())
                    .collect(),
                done: outputs.len(),
            },
            Phase::Final => Read::Nothing,
        }
    }
}
