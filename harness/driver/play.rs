//! One task played on one surface: the driver's mechanics (rounds through the gateway, tool
//! calls run for real against the reference server, the phase of the task) around the
//! surface's scripted player, which decides every move.

use super::tasks::Task;
use super::{Outcome, Scenario, TOKEN};
use crate::error::{Error, Result};
use crate::surface::play::{HttpCall, Method, Move, Output, Phase, Player, Read, Turn};
use crate::surface::{Context, SurfaceKind};
use crate::wire::{self, Request};
use serde_json::{json, Value};

/// One task played on one surface: the driver's mechanics around the surface's player.
pub(super) struct Play<'a> {
    ctx: &'a Context<'a>,
    surface: SurfaceKind,
    task: &'a Task,
    server: String,
    gateway: String,
    run_id: String,
    scenario: String,
    base: Request,
    history: Vec<Value>,
    player: Box<dyn Player>,
    http: reqwest::Client,
    phase: Phase,
    misses: usize,
    failed: bool,
    results: Vec<Value>,
    /// The requests each shell call the model makes runs, in call order.
    pending_shell: Vec<Vec<HttpCall>>,
    /// Conversation items that go after this round's results (a tool change).
    follow: Vec<Value>,
    /// The reference server's bearer token.
    pub(super) token: String,
    /// Capability calls per round (the policy).
    pub(super) batch: usize,
    /// The resolver a client's own search tool runs ([`Turn::resolver`]).
    pub(super) resolver: crate::resolve::Method,
    /// The model's last words.
    answer: String,
}

impl<'a> Play<'a> {
    pub(super) fn new(
        ctx: &'a Context<'a>,
        surface: SurfaceKind,
        task: &'a Task,
        server: &str,
        gateway: &str,
        run_id: &str,
        s: &Scenario,
    ) -> Play<'a> {
        let player = surface.player(ctx);
        let base = surface.build(ctx).request;
        let phase = match task.key {
            None => Phase::Final,
            Some(_) => player.opening(),
        };
        Play {
            ctx,
            surface,
            task,
            server: server.into(),
            gateway: gateway.into(),
            run_id: run_id.into(),
            scenario: s.name.clone(),
            base,
            history: Vec::new(),
            player,
            http: crate::net::client(&crate::net::Options::default()).unwrap_or_default(),
            phase,
            misses: 0,
            failed: false,
            results: Vec::new(),
            pending_shell: Vec::new(),
            follow: Vec::new(),
            token: TOKEN.to_string(),
            batch: 1,
            resolver: crate::resolve::Kind::DEFAULT.method(),
            answer: String::new(),
        }
    }

    /// The model's final words: a short answer of the length a model writes (the recorded
    /// turns emitted 72 and 74 output tokens), scripted like the rest.
    fn final_text(&self) -> String {
        let key = self.task.key.unwrap_or("");
        if self.failed {
            return "I searched the catalogue twice and found no capability that does this, so I did not call anything. If you know the capability's key, or another word for what you need, tell me and I will look again.".to_string();
        }
        if self.task.name == "orders" {
            let total: u64 = self
                .results
                .iter()
                .filter_map(|r| {
                    r["result"]["total_cents"]
                        .as_u64()
                        .or_else(|| r["total_cents"].as_u64())
                })
                .sum();
            return format!(
                "The {} orders total {} cents. I looked each order up by its id with {key} and added the totals; every lookup left a receipt on the server, so you can check what ran. Tell me if you want the orders broken down.",
                self.task.calls.len(),
                total
            );
        }
        if key.is_empty() {
            return "I have no clock or calendar of my own, and no capability was needed for this turn, so I cannot give you the exact time. If you connect a capability that tells the time, I will call it and answer with the time in your zone.".to_string();
        }
        format!(
            "Done: I called {key} and it answered without an error. The call left a receipt on the server, so you can confirm exactly what ran and with which arguments. Tell me if you want me to do anything else with the result."
        )
    }

    /// What a competent model does next, as the step the mock upstream answers with.
    fn step(&mut self) -> Value {
        if self.phase == Phase::Final {
            self.answer = self.final_text();
            let mut step = json!({"text": self.answer});
            if let Some(Value::Object(extra)) = self.player.closing(&self.results) {
                step.as_object_mut().expect("object").extend(extra);
            }
            return step;
        }
        let phase = self.phase;
        let t = turn(
            self.ctx,
            &self.base,
            self.task,
            &self.server,
            phase,
            self.batch,
            self.resolver,
        );
        let mv = self.player.next(phase, &t);
        self.plan(&mv);
        mv.step(&self.ctx.client.shell)
    }

    /// Note what a move will do before it is sent: shell requests to run, and the outcome of a
    /// provider-side search (the upstream runs it; the driver knows what it returns).
    fn plan(&mut self, mv: &Move) {
        self.pending_shell
            .extend(mv.shell_calls(&self.ctx.client.shell));
        match mv {
            Move::ProviderSearch { hit, .. } => {
                if let Phase::Discover(a) = self.phase {
                    if *hit {
                        self.phase = Phase::Call(0);
                    } else {
                        self.miss(a);
                    }
                }
            }
            Move::Shell { .. }
            | Move::Tool { .. }
            | Move::Text(_)
            | Move::Parallel(_)
            | Move::Program { .. } => {}
        }
    }

    /// Move the task on from a result.
    fn apply(&mut self, read: Read) {
        match (read, self.phase) {
            (Read::Searched { hit: true, next }, _) => self.phase = next,
            (Read::Searched { hit: false, .. }, Phase::Discover(a)) => self.miss(a),
            (Read::Searched { hit: false, .. }, _) => {}
            (Read::Contract, _) => self.phase = Phase::Call(0),
            (Read::Results { items, done }, phase) => {
                self.results.extend(items);
                self.phase = match phase {
                    Phase::Call(i) if i + done.max(1) < self.task.calls.len() => {
                        Phase::Call(i + done.max(1))
                    }
                    Phase::Call(_) | Phase::Discover(_) | Phase::Contract | Phase::Final => {
                        Phase::Final
                    }
                };
            }
            (Read::Failed, _) => {
                self.failed = true;
                self.phase = Phase::Final;
            }
            (Read::Nothing, _) => {}
        }
    }

    fn miss(&mut self, attempt: u8) {
        self.misses += 1;
        if attempt == 0 {
            self.phase = Phase::Discover(1);
        } else {
            self.failed = true;
            self.phase = Phase::Final;
        }
    }

    pub(super) async fn play(&mut self, max_rounds: usize) -> Result<Outcome> {
        let spec = self.ctx.client.format.spec();
        let path = spec.call_path(&self.ctx.client.wire_model, false);
        for round in 1..=max_rounds {
            let final_round = self.phase == Phase::Final;
            let step = self.step();
            let mut req = self
                .player
                .request(self.ctx)
                .unwrap_or_else(|| self.base.clone());
            req.messages_mut().extend(self.history.iter().cloned());
            let client = self.ctx.client;
            req.place_cache_marks(&client.cache_marks);
            let meta = json!({"scenario": self.scenario, "surface": self.surface.name(), "n": self.ctx.catalogue.tools.len(),
                              "task": self.task.name, "round": round, "run": self.run_id});
            let mut post = self.http.post(format!("{}{path}", self.gateway));
            for (name, value) in self.surface.headers() {
                post = post.header(*name, *value);
            }
            let resp = post
                .header("content-type", "application/json")
                .header("x-toolcost-next", crate::json::compact(&step))
                .header("x-toolcost-metadata", crate::json::compact(&meta))
                .header("x-toolcost-cache-scope", &self.run_id)
                .header(
                    "x-toolcost-clock",
                    format!("{}", round as f64 * ROUND_SECONDS),
                )
                .body(req.wire())
                .send()
                .await
                .map_err(|e| Error::input(format!("gateway: {e}")))?;
            let status = resp.status();
            let text = resp
                .text()
                .await
                .map_err(|e| Error::input(format!("gateway: {e}")))?;
            if status.as_u16() == 400 {
                // The provider refuses the request (a limit crossed): the task fails there,
                // and its row says why.
                let why = serde_json::from_str::<Value>(&text)
                    .ok()
                    .and_then(|v| {
                        v.pointer("/error/message")
                            .and_then(Value::as_str)
                            .map(String::from)
                    })
                    .unwrap_or(text);
                return Ok(Outcome {
                    success: false,
                    misses: self.misses,
                    answer: format!("refused by the provider in round {round}: {why}"),
                });
            }
            if !status.is_success() {
                return Err(Error::input(format!(
                    "the gateway answered HTTP {status} in round {round}: {text}"
                )));
            }
            let answer: Value = serde_json::from_str(&text)
                .map_err(|e| Error::input(format!("gateway answer: {e}")))?;
            let read = spec
                .read_answer(&answer)
                .map_err(|e| Error::input(format!("gateway answer in round {round}: {e}")))?;
            self.history.extend(read.items);
            if final_round {
                return Ok(Outcome {
                    success: !self.failed,
                    misses: self.misses,
                    answer: std::mem::take(&mut self.answer),
                });
            }
            let mut results = Vec::new();
            for call in &read.calls {
                let (text, refs) = self.execute(&call.name, &call.input).await?;
                results.push(wire::tool_result(
                    self.ctx.client.format,
                    &call.id,
                    &call.name,
                    &text,
                    &refs,
                ));
            }
            if !results.is_empty() {
                self.history.extend(spec.result_items(results));
                self.history.append(&mut self.follow);
            } else if self.phase != Phase::Final && !matches!(self.phase, Phase::Discover(_)) {
                self.history
                    .push(wire::user_message(self.ctx.client.format, None, "continue"));
            }
        }
        Ok(Outcome {
            success: false,
            misses: self.misses,
            answer: std::mem::take(&mut self.answer),
        })
    }

    /// Run one tool call for real; returns the result text and any tool references.
    async fn execute(&mut self, name: &str, input: &Value) -> Result<(String, Vec<String>)> {
        let input = input.clone();
        let t = turn(
            self.ctx,
            &self.base,
            self.task,
            &self.server,
            self.phase,
            self.batch,
            self.resolver,
        );
        let local = match self.player.local(name, &input, &t) {
            Some(l) => Some(Ok(l)),
            None => self.player.refuse(name, &t).map(Err),
        };
        match local {
            Some(Ok(l)) => {
                self.follow.extend(l.follow);
                self.apply(l.read);
                return Ok((l.text, l.references));
            }
            Some(Err(refusal)) => return Ok((refusal, Vec::new())),
            None => {}
        }
        if name == self.ctx.client.shell.tool {
            let outputs = self.run_shell().await?;
            self.read(Output::Shell(&outputs));
            return Ok((outputs.join("\n"), Vec::new()));
        }
        let prefix = self.ctx.client.tool_name(&self.ctx.catalogue.server, "");
        let (Some(tool), Some(path)) = (name.strip_prefix(&prefix), self.surface.calls_at()) else {
            return Ok((format!("no such tool `{name}`"), Vec::new()));
        };
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": input}});
        let text = self
            .http
            .post(format!("{}{path}", self.server))
            .bearer_auth(&self.token)
            .body(call.to_string())
            .send()
            .await
            .map_err(|e| Error::input(e.to_string()))?
            .text()
            .await
            .unwrap_or_default();
        let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let result_text = v
            .pointer("/result/content/0/text")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or(text);
        let structured = v
            .pointer("/result/structuredContent")
            .cloned()
            .unwrap_or(Value::Null);
        self.read(Output::Mcp {
            tool,
            structured: &structured,
        });
        Ok((result_text, Vec::new()))
    }

    /// Let the player read a result, and move the task on.
    fn read(&mut self, out: Output) {
        let phase = self.phase;
        let t = turn(
            self.ctx,
            &self.base,
            self.task,
            &self.server,
            phase,
            self.batch,
            self.resolver,
        );
        let read = self.player.read(phase, out, &t);
        self.apply(read);
    }

    /// Run the requests of the oldest pending shell call against the server.
    async fn run_shell(&mut self) -> Result<Vec<String>> {
        let batch = if self.pending_shell.is_empty() {
            Vec::new()
        } else {
            self.pending_shell.remove(0)
        };
        let mut outputs = Vec::new();
        for call in batch {
            let rb = match call.method {
                Method::Get => self.http.get(&call.url),
                Method::Post => self
                    .http
                    .post(&call.url)
                    .header("content-type", "application/json")
                    .body(call.body.unwrap_or_default()),
            };
            let text = rb
                .bearer_auth(&self.token)
                .send()
                .await
                .map_err(|e| Error::input(e.to_string()))?
                .text()
                .await
                .unwrap_or_default();
            outputs.push(text);
        }
        Ok(outputs)
    }
}

/// What the player sees of a task in a phase. A free function, so that the player can be
/// borrowed mutably beside it.
fn turn<'b>(
    ctx: &'b Context<'b>,
    base: &'b Request,
    task: &'b Task,
    server: &'b str,
    phase: Phase,
    batch: usize,
    resolver: crate::resolve::Method,
) -> Turn<'b> {
    let attempt = match phase {
        Phase::Discover(a) => a,
        Phase::Contract | Phase::Call(_) | Phase::Final => 0,
    };
    Turn {
        ctx,
        base,
        task: &task.name,
        key: task.key.unwrap_or(""),
        calls: &task.calls,
        query: if attempt == 0 {
            task.query
        } else {
            task.reformulation
        },
        server,
        batch,
        resolver,
    }
}

/// Seconds between two rounds on the driver's virtual clock: the model's answer and the tool
/// call (assumed; it only matters against the 5-minute cache life).
const ROUND_SECONDS: f64 = 10.0;
