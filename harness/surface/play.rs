//! How the driver's scripted model plays a task on a surface. The driver owns the mechanics
//! (rounds, the gateway, running HTTP and MCP calls for real, the log rows); each surface's
//! [`Player`] owns the decisions: which move the model makes in each phase of a task, which tools
//! the client runs itself, and how a result moves the task on.
//!
//! Everything here is `simulated`: a competent model's choices, scripted.

use super::Context;
use crate::client::{Shell, ShellForm};
use crate::wire::{self, Request};
use serde_json::{json, Value};

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Searching; the attempt (0, then 1 after a miss).
    Discover(u8),
    /// Reading the found row's contract.
    Contract,
    /// Making call `i` of the task.
    Call(usize),
    /// Answering the user.
    Final,
}

/// What the scripted model knows when it plans a move.
pub struct Turn<'a> {
    pub ctx: &'a Context<'a>,
    /// Round one's request: its deferred definitions are what a search sees.
    pub base: &'a Request,
    /// The task's name (`now`, `orders`, ...).
    pub task: &'a str,
    /// The row the task needs.
    pub key: &'static str,
    /// The arguments of every call the task makes.
    pub calls: &'a [Value],
    /// The words of the current search attempt.
    pub query: &'static str,
    /// The reference server's base URL.
    pub server: &'a str,
    /// Capability calls the model makes in one round (1 under the serial policy).
    pub batch: usize,
    /// The resolver a client's own search tool runs over the deferred definitions.
    pub resolver: crate::resolve::Method,
}

impl Turn<'_> {
    /// The name the model sees for a catalogue tool.
    pub fn tool_name(&self, key: &str) -> String {
        self.ctx.client.tool_name(&self.ctx.catalogue.server, key)
    }

    /// Name and description of every deferred definition in round one's request, namespaces'
    /// members included.
    pub fn deferred(&self) -> Vec<(String, String)> {
        wire::deferred_definitions(self.base.tools())
            .into_iter()
            .filter_map(|t| {
                t.parts()
                    .map(|p| (p.name.to_string(), p.description.to_string()))
            })
            .collect()
    }

    /// The calls of one round from call `i`: at most `batch`, never past the last.
    pub fn round_calls(&self, i: usize) -> std::ops::Range<usize> {
        i.min(self.calls.len())..(i + self.batch.max(1)).min(self.calls.len())
    }

    /// Direct calls of the task's row by its tool name from call `i`: one, or several in
    /// parallel.
    pub fn call_row(&self, i: usize) -> Move {
        self.each(i, |j| Move::Tool {
            name: self.tool_name(self.key),
            input: self.calls[j].clone(),
        })
    }

    /// One tool call per call of the round from `i`, in parallel when there are several.
    pub fn each(&self, i: usize, call: impl Fn(usize) -> Move) -> Move {
        let mut moves: Vec<Move> = self.round_calls(i).map(call).collect();
        match moves.len() {
            1 => moves.remove(0),
            _ => Move::Parallel(moves),
        }
    }
}

/// An HTTP method a shell command uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

/// One HTTP request a shell command makes against the reference server.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpCall {
    pub method: Method,
    pub url: String,
    pub body: Option<String>,
}

/// What the model does in a round.
#[derive(Debug, Clone, PartialEq)]
pub enum Move {
    /// Call a tool by the name it sees.
    Tool { name: String, input: Value },
    /// Run a shell command with the client's shell tool; `requests` is what it does.
    Shell {
        command: String,
        description: &'static str,
        requests: Vec<HttpCall>,
    },
    /// A provider-side tool search the upstream runs, then `then` in the same answer.
    ProviderSearch {
        search: Value,
        /// Whether the search returns the task's row.
        hit: bool,
        then: Box<Move>,
    },
    /// Plain text (after a provider-side search that missed).
    Text(String),
    /// Several tool calls in one answer (parallel tool use).
    Parallel(Vec<Move>),
    /// A program the provider runs in its code-execution tool, calling tools from the code
    /// (Anthropic's programmatic tool calling): `code` starts it (`None`: the running program
    /// goes on), `calls` are the tool calls it makes in this round.
    Program {
        code: Option<String>,
        calls: Vec<Move>,
    },
}

impl Move {
    /// The step as the gateway's mock reads it from `x-toolcost-next`; a shell move is written
    /// in the client's shell tool's form.
    pub fn step(&self, shell: &Shell) -> Value {
        match self {
            Move::Tool { name, input } => json!({"tool": name, "input": input}),
            Move::Shell {
                command,
                description,
                requests,
            } => match shell.form {
                ShellForm::CommandText => {
                    json!({"tool": shell.tool, "input": {"command": command, "description": description}})
                }
                ShellForm::Argv => {
                    json!({"tool": shell.tool, "input": {"command": ["bash", "-lc", command]}})
                }
                ShellForm::HttpRequest => {
                    let calls: Vec<Value> = requests
                        .iter()
                        .map(|r| json!({"tool": shell.tool, "input": http_input(r)}))
                        .collect();
                    match calls.len() {
                        1 => calls.into_iter().next().unwrap_or_default(),
                        _ => json!({ "tools": calls }),
                    }
                }
            },
            Move::ProviderSearch { search, then, .. } => {
                json!({"search": search, "then": then.step(shell)})
            }
            Move::Text(text) => json!({"text": text}),
            Move::Parallel(moves) => {
                json!({"tools": moves.iter().map(|m| m.step(shell)).collect::<Vec<_>>()})
            }
            Move::Program { code, calls } => json!({"program": {"code": code,
                "tools": calls.iter().map(|m| m.step(shell)).collect::<Vec<_>>()}}),
        }
    }

    /// The client's shell calls this move makes, each with the HTTP requests it runs, in call
    /// order: one call for a command line, one per request for an `http_request` tool.
    pub fn shell_calls(&self, shell: &Shell) -> Vec<Vec<HttpCall>> {
        match self {
            Move::Shell { requests, .. } => match shell.form {
                ShellForm::CommandText | ShellForm::Argv => vec![requests.clone()],
                ShellForm::HttpRequest => requests.iter().map(|r| vec![r.clone()]).collect(),
            },
            Move::ProviderSearch { then, .. } => then.shell_calls(shell),
            Move::Parallel(moves) | Move::Program { calls: moves, .. } => {
                moves.iter().flat_map(|m| m.shell_calls(shell)).collect()
            }
            Move::Tool { .. } | Move::Text(_) => Vec::new(),
        }
    }
}

/// An HTTP request as an `http_request` tool's input; the bearer token is the variable the
/// instructions name (the client puts in the real one, as a shell would).
fn http_input(r: &HttpCall) -> Value {
    match r.method {
        Method::Get => json!({"method": "GET", "url": r.url}),
        Method::Post => json!({"method": "POST", "url": r.url,
            "headers": {"Content-Type": "application/json", "Authorization": "Bearer $TOOLCOST_TOKEN"},
            "body": r.body.clone().unwrap_or_default()}),
    }
}

/// What came back from a move's tool call.
pub enum Output<'a> {
    /// The shell's output, one text per request.
    Shell(&'a [String]),
    /// An MCP `tools/call` result: the tool's name on the server and its structured content.
    Mcp {
        tool: &'a str,
        structured: &'a Value,
    },
}

/// A tool the client runs itself, answered.
pub struct Local {
    /// The tool result's text.
    pub text: String,
    /// Definitions the result expands (`tool_reference`).
    pub references: Vec<String>,
    /// Conversation items the client sends after this round's results (a provider's
    /// mid-conversation tool change).
    pub follow: Vec<Value>,
    pub read: Read,
}

/// How a result moves the task on.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    /// A search (or an enable) answered: `hit` whether it found the task's row; on a hit the
    /// task goes to `next`, on a miss it reformulates once, then gives up.
    Searched { hit: bool, next: Phase },
    /// The contract was read: the calls come next.
    Contract,
    /// Results of `done` calls (a parallel call's one result reads `done: 1`).
    Results { items: Vec<Value>, done: usize },
    /// The calls failed (a program that errored): the task fails.
    Failed,
    /// Nothing that moves the task.
    Nothing,
}

/// The scripted model on one surface, for one task.
pub trait Player: Send {
    /// The phase a task that needs a row starts in.
    fn opening(&self) -> Phase;
    /// The move in a phase (never called in `Final`).
    fn next(&mut self, phase: Phase, t: &Turn) -> Move;
    /// Run a tool the client runs itself; `None` when `name` is not one.
    fn local(&mut self, name: &str, input: &Value, t: &Turn) -> Option<Local>;
    /// Why the client would refuse a call to `name` now, if it would.
    fn refuse(&self, name: &str, t: &Turn) -> Option<String>;
    /// How a result moves the task on.
    fn read(&mut self, phase: Phase, out: Output, t: &Turn) -> Read;
    /// This round's request before the conversation so far is appended, where the player's
    /// state changes it (the name list appending enabled definitions); `None`: round one's.
    fn request(&self, _ctx: &Context) -> Option<Request> {
        None
    }
    /// What the final answer carries besides its text, as step fields (a program's output,
    /// which the provider puts before the text); `results` are the task's results so far.
    fn closing(&self, _results: &[Value]) -> Option<Value> {
        None
    }
}

/// Whether a list of candidates (`[{ "key": ... }]`) holds the task's row.
pub fn holds_key(candidates: &Value, key: &str) -> bool {
    candidates
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["key"] == key)
}

/// The result of one MCP call in phase `Call(i)`.
pub fn one_result(phase: Phase, structured: &Value, _t: &Turn) -> Read {
    match phase {
        Phase::Call(_) => Read::Results {
            items: vec![structured.clone()],
            done: 1,
        },
        Phase::Contract => Read::Contract,
        Phase::Discover(_) | Phase::Final => Read::Nothing,
    }
}
