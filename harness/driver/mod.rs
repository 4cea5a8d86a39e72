//! `toolcost run --scenario FILE`: plays each task on each surface round by round through the
//! gateway, executing every tool call for real against the reference server, and sums the
//! gateway's log rows into one result per task and surface.
//!
//! The model's choices come from a small policy of what a competent model does next (call the
//! tool it can see; search, then call what the search returned; reformulate once after a miss,
//! then give up); the gateway's mock upstream turns each choice into a provider-shaped answer
//! and bills it. Tool results, searches, contracts and receipts come from the running server,
//! so their bytes and tokens are real. The driver speaks Anthropic Messages (claude-cli).

pub mod scenario;
pub mod tasks;

use crate::catalogue::{generate::Generator, profile::Profile, Catalogue};
use crate::client::Client;
use crate::error::{Error, Result};
use crate::gateway::{self, log::LogRow};
use crate::report::Tabular;
use crate::server;
use crate::surface::play::{HttpCall, Method, Move, Output, Phase, Player, Read, Turn};
use crate::surface::{Context, SurfaceKind};
use crate::wire::{self, Format, Request};
use scenario::{Policy, Scenario};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::time::Instant;
use tasks::Task;

const TOKEN: &str = "toolcost-driver";

/// One task on one surface at one N, summed from the gateway's log rows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TaskResult {
    pub scenario: String,
    pub surface: String,
    pub rows: usize,
    pub task: String,
    /// Calls per round the scripted model made: `serial` or `parallel(<cap>)`.
    #[serde(default)]
    pub policy: String,
    /// How the task started: the provider cache and the server state it found.
    #[serde(default)]
    pub start: String,
    pub success: bool,
    pub rounds: usize,
    /// Searches that did not return the needed key.
    pub misses: usize,
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// Request bytes sent through the gateway, all rounds.
    pub wire_bytes: usize,
    pub wall_ms: f64,
    /// Evidence: rounds, calls, misses and success are `simulated` (the driver's scripted model);
    /// the tokens are the log rows' usage source (`estimated:<tokenizer>` or
    /// `calibrated:kimi-est(...)` with the mock, `observed` from a real provider); the cost is
    /// derived from them.
    pub label: String,
    /// What the model answered in its last round.
    #[serde(default)]
    pub answer: String,
}

impl Tabular for TaskResult {
    const COLUMNS: &'static [crate::report::Column] = &[
        crate::report::Column::field("cost_usd").places(8),
        crate::report::Column::field("wall_ms").places(0),
    ];
    const BRIEF: &'static [&'static str] = &[
        "surface",
        "rows",
        "task",
        "policy",
        "success",
        "rounds",
        "misses",
        "input_tokens",
        "cached_input_tokens",
        "cost_usd",
        "wire_bytes",
        "label",
    ];
}

/// Run a scenario; `progress` hears each finished task.
pub async fn run(s: &Scenario, progress: &(dyn Fn(&str) + Sync)) -> Result<Vec<TaskResult>> {
    let mut client = Client::named(&s.client.name)?;
    if client.format != Format::AnthropicMessages {
        return Err(Error::input(format!(
            "the driver plays Anthropic Messages clients; `{}` speaks Chat Completions",
            client.name
        )));
    }
    if let Some(m) = &s.client.model {
        client.wire_model = m.clone();
    }
    let surfaces = s
        .run
        .surfaces
        .iter()
        .map(|x| SurfaceKind::parse(x))
        .collect::<Result<Vec<_>>>()?;
    let dir = tempfile_dir()?;
    let token = match &s.endpoints.token_env {
        Some(name) => crate::error::env_secret("[endpoints] token_env", name)?,
        None => TOKEN.to_string(),
    };
    // With a running server there is one catalogue: the one it serves.
    let sizes: Vec<Option<usize>> = match &s.endpoints.server {
        Some(_) => vec![None],
        None => s.catalogue.rows.iter().map(|&n| Some(n)).collect(),
    };
    let mut out = Vec::new();
    for size in sizes {
        let mut stops = Vec::new();
        let (cat, server_base) = server_for(s, size, &token, &mut stops).await?;
        let (gateway_base, log_path) = gateway_for(
            s,
            &dir.join(format!("gateway-{}.sqlite", cat.tools.len())),
            &mut stops,
        )
        .await?;
        let setup = Setup {
            scenario: s,
            client: &client,
            catalogue: &cat,
            server: &server_base,
            gateway: &gateway_base,
            log: &log_path,
            token: &token,
        };
        for &surface in &surfaces {
            for tname in &s.run.tasks {
                for &policy in &s.run.policies {
                    // A task of one call plays the same under both: once, as serial.
                    let single = tasks::task(tname, s.run.orders, false).calls.len() <= 1;
                    if single
                        && policy == Policy::Parallel
                        && s.run.policies.contains(&Policy::Serial)
                    {
                        continue;
                    }
                    out.push(setup.play(surface, tname, policy).await?);
                    progress(&out.last().map(|r| r.run_id(s)).unwrap_or_default());
                }
            }
        }
        for stop in stops {
            let _ = stop.send(());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(out)
}

type Stop = tokio::sync::oneshot::Sender<()>;

/// The catalogue and the reference server a size plays against: the scenario's running server
/// (its live projection), or one started here on the generated rows.
async fn server_for(
    s: &Scenario,
    size: Option<usize>,
    token: &str,
    stops: &mut Vec<Stop>,
) -> Result<(Catalogue, String)> {
    if let Some(url) = &s.endpoints.server {
        let base = url.trim_end_matches('/').to_string();
        let target = crate::mcp::Target::Http {
            url: format!("{base}/mcp"),
            headers: vec![format!("Authorization: Bearer {token}")],
            timeout: std::time::Duration::from_secs(60),
            opts: crate::mcp::Options::default(),
        };
        return Ok((target.fetch().await?.0, base));
    }
    let n = size.ok_or_else(|| Error::input("a scenario without a server needs catalogue rows"))?;
    let rows: Vec<_> = Generator::new(
        Profile::named(&s.catalogue.profile)?,
        n,
        s.catalogue.seed,
        false,
    )
    .collect();
    let cat = Catalogue::from_rows(format!("{} N={n}", s.catalogue.profile), rows.clone());
    // Reproducible receipt ids: they are in tool results, so their tokens are measured.
    let state = server::state_with(
        &server::Options {
            rows: Some(rows),
            db: None,
            token: Some(token.to_string()),
            allowlist: vec![],
            max_body: server::DEFAULT_MAX_BODY,
        },
        server::Limits::reproducible(),
    )?;
    let (base, stop) = spawn_local(|listener, shutdown| {
        server::run(listener, state, server::DEFAULT_MAX_BODY, shutdown)
    })
    .await?;
    stops.push(stop);
    Ok((cat, base))
}

/// The gateway a size plays through and the log its rows are read from: the scenario's
/// running gateway, or one started here (mock or the scenario's upstream) logging to `log`.
async fn gateway_for(
    s: &Scenario,
    log: &std::path::Path,
    stops: &mut Vec<Stop>,
) -> Result<(String, std::path::PathBuf)> {
    if let (Some(url), Some(log)) = (&s.endpoints.gateway, &s.endpoints.log) {
        return Ok((
            url.trim_end_matches('/').to_string(),
            std::path::PathBuf::from(log),
        ));
    }
    let upstream = match &s.upstream.url {
        Some(u) => gateway::Upstream::Url(u.clone()),
        None => gateway::Upstream::Mock,
    };
    let api_key = match &s.upstream.api_key_env {
        Some(name) => Some(crate::error::env_secret("[upstream] api_key_env", name)?),
        None => None,
    };
    let gw = gateway::Gateway::new(gateway::Options {
        upstream,
        api_key,
        log: log.to_path_buf(),
        timeout: std::time::Duration::from_secs(300),
        max_body: gateway::DEFAULT_MAX_BODY,
        max_response: gateway::DEFAULT_MAX_RESPONSE,
        ca_cert: None,
        log_bodies: false,
    })?;
    let (base, stop) =
        spawn_local(|listener, shutdown| gateway::run(listener, gw, shutdown)).await?;
    stops.push(stop);
    Ok((base, log.to_path_buf()))
}

/// What every task at one size plays against.
struct Setup<'a> {
    scenario: &'a Scenario,
    client: &'a Client,
    catalogue: &'a Catalogue,
    server: &'a str,
    gateway: &'a str,
    log: &'a std::path::Path,
    token: &'a str,
}

impl Setup<'_> {
    /// Play one task on one surface and sum its log rows.
    async fn play(&self, surface: SurfaceKind, tname: &str, policy: Policy) -> Result<TaskResult> {
        let s = self.scenario;
        let n = self.catalogue.tools.len();
        let task = tasks::task(
            tname,
            s.run.orders,
            s.run.phrasing == scenario::Phrasing::Paraphrase,
        );
        let batch = match policy {
            Policy::Serial => 1,
            Policy::Parallel => s.run.parallel_calls,
        };
        let policy_name = policy_label(policy, s.run.parallel_calls);
        let run_id = format!(
            "{}-{}-{n}-{}-{policy_name}",
            s.name,
            surface.name(),
            task.name
        );
        let endpoint = format!("{}/api/dispatch", self.server);
        let ctx = Context {
            catalogue: self.catalogue,
            client: self.client,
            turn: &task.prompt,
            endpoint: &endpoint,
        };
        let started = Instant::now();
        let mut play = Play::new(&ctx, surface, &task, self.server, self.gateway, &run_id, s);
        play.token = self.token.to_string();
        play.batch = batch;
        let outcome = play.play(s.run.max_rounds).await?;
        let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
        let rows = gateway::log::read_all(self.log)?;
        let mut r = summarise(s, surface, n, &task, &run_id, outcome, wall_ms, &rows);
        r.policy = policy_name;
        Ok(r)
    }
}

/// `serial`, or `parallel(<cap>)`.
fn policy_label(policy: Policy, cap: usize) -> String {
    match policy {
        Policy::Serial => "serial".into(),
        Policy::Parallel => format!("parallel({cap})"),
    }
}

impl TaskResult {
    /// The run id the driver tags this task's log rows with.
    pub fn run_id(&self, s: &Scenario) -> String {
        format!(
            "{}-{}-{}-{}-{}",
            s.name, self.surface, self.rows, self.task, self.policy
        )
    }
}

/// Start a server on 127.0.0.1:0; returns its base URL and the handle that stops it.
async fn spawn_local<F, Fut>(serve: F) -> Result<(String, tokio::sync::oneshot::Sender<()>)>
where
    F: FnOnce(
        tokio::net::TcpListener,
        std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
    ) -> Fut,
    Fut: std::future::Future<Output = std::io::Result<()>> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| Error::input(e.to_string()))?;
    let base = format!(
        "http://{}",
        listener
            .local_addr()
            .map_err(|e| Error::input(e.to_string()))?
    );
    let (stop, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve(
        listener,
        Box::pin(async move {
            let _ = rx.await;
        }),
    ));
    Ok((base, stop))
}

fn tempfile_dir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!(
        "toolcost-run-{}-{}",
        std::process::id(),
        crate::clock::now().1
    ));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    Ok(dir)
}

struct Outcome {
    success: bool,
    misses: usize,
    answer: String,
}

#[allow(clippy::too_many_arguments)]
fn summarise(
    s: &Scenario,
    surface: SurfaceKind,
    n: usize,
    task: &Task,
    run_id: &str,
    o: Outcome,
    wall_ms: f64,
    rows: &[LogRow],
) -> TaskResult {
    let mine: Vec<&LogRow> = rows
        .iter()
        .filter(|r| {
            serde_json::from_str::<Value>(&r.metadata)
                .ok()
                .and_then(|m| m["run"].as_str().map(|x| x == run_id))
                .unwrap_or(false)
        })
        .collect();
    TaskResult {
        scenario: s.name.clone(),
        surface: surface.name().into(),
        rows: n,
        task: task.name.clone(),
        success: o.success && mine.iter().all(|r| r.error.is_none()),
        rounds: mine.len(),
        misses: o.misses,
        input_tokens: mine.iter().map(|r| r.input_tokens).sum(),
        cached_input_tokens: mine.iter().map(|r| r.cached_input_tokens).sum(),
        cache_write_tokens: mine.iter().map(|r| r.cache_write_tokens).sum(),
        output_tokens: mine.iter().map(|r| r.output_tokens).sum(),
        cost_usd: mine.iter().map(|r| r.cost_usd).sum(),
        wire_bytes: mine.iter().map(|r| r.request_bytes).sum(),
        wall_ms,
        label: format!(
            "simulated rounds, calls and success; tokens {}; cost derived",
            mine.first()
                .map(|r| r.usage_source.as_str())
                .unwrap_or("none")
        ),
        policy: String::new(),
        start: "cold provider cache; server shared at this N (receipts only)".into(),
        answer: o.answer,
    }
}

/// One task played on one surface: the driver's mechanics around the surface's player.
struct Play<'a> {
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
    /// The reference server's bearer token.
    token: String,
    /// Capability calls per round (the policy).
    batch: usize,
    /// The model's last words.
    answer: String,
}

impl<'a> Play<'a> {
    fn new(
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
            token: TOKEN.to_string(),
            batch: 1,
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
            return json!({"text": self.answer});
        }
        let phase = self.phase;
        let t = turn(
            self.ctx,
            &self.base,
            self.task,
            &self.server,
            phase,
            self.batch,
        );
        let mv = self.player.next(phase, &t);
        self.plan(&mv);
        mv.step(SHELL_TOOL)
    }

    /// Note what a move will do before it is sent: shell requests to run, and the outcome of a
    /// provider-side search (the upstream runs it; the driver knows what it returns).
    fn plan(&mut self, mv: &Move) {
        match mv {
            Move::Shell { requests, .. } => self.pending_shell.push(requests.clone()),
            Move::ProviderSearch { hit, .. } => {
                if let Phase::Discover(a) = self.phase {
                    if *hit {
                        self.phase = Phase::Call(0);
                    } else {
                        self.miss(a);
                    }
                }
            }
            Move::Tool { .. } | Move::Text(_) | Move::Parallel(_) => {}
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

    async fn play(&mut self, max_rounds: usize) -> Result<Outcome> {
        let spec = self.ctx.client.format.spec();
        let path = spec
            .endpoints()
            .iter()
            .find(|e| !e.count_only)
            .map_or("/v1/messages", |e| e.path);
        for round in 1..=max_rounds {
            let final_round = self.phase == Phase::Final;
            let step = self.step();
            let mut req = self.base.clone();
            req.messages_mut().extend(self.history.iter().cloned());
            let client = self.ctx.client;
            spec.place_cache_marks(&mut req.body, &client.cache_marks);
            let meta = json!({"scenario": self.scenario, "surface": self.surface.name(), "n": self.ctx.catalogue.tools.len(),
                              "task": self.task.name, "round": round, "run": self.run_id});
            let resp = self
                .http
                .post(format!("{}{path}", self.gateway))
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
            let content = answer["content"].as_array().cloned().unwrap_or_default();
            self.history
                .push(json!({"role": "assistant", "content": content}));
            if final_round {
                return Ok(Outcome {
                    success: !self.failed,
                    misses: self.misses,
                    answer: std::mem::take(&mut self.answer),
                });
            }
            let mut results = Vec::new();
            for block in content.iter().filter(|b| b["type"] == "tool_use") {
                let (text, refs) = self.execute(block).await?;
                let mut r = wire::tool_result(
                    Format::AnthropicMessages,
                    block["id"].as_str().unwrap_or(""),
                    &text,
                    &refs,
                );
                results.push(r["content"].as_array_mut().unwrap().remove(0));
            }
            if !results.is_empty() {
                self.history
                    .push(json!({"role": "user", "content": results}));
            } else if self.phase != Phase::Final && !matches!(self.phase, Phase::Discover(_)) {
                self.history.push(
                    json!({"role": "user", "content": [{"type": "text", "text": "continue"}]}),
                );
            }
        }
        Ok(Outcome {
            success: false,
            misses: self.misses,
            answer: std::mem::take(&mut self.answer),
        })
    }

    /// Run one tool call for real; returns the result text and any tool references.
    async fn execute(&mut self, block: &Value) -> Result<(String, Vec<String>)> {
        let name = block["name"].as_str().unwrap_or("");
        let input = block["input"].clone();
        let t = turn(
            self.ctx,
            &self.base,
            self.task,
            &self.server,
            self.phase,
            self.batch,
        );
        let local = match self.player.local(name, &input, &t) {
            Some(l) => Some(Ok(l)),
            None => self.player.refuse(name, &t).map(Err),
        };
        match local {
            Some(Ok(l)) => {
                self.apply(l.read);
                return Ok((l.text, l.references));
            }
            Some(Err(refusal)) => return Ok((refusal, Vec::new())),
            None => {}
        }
        if name == SHELL_TOOL {
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
    }
}

/// Seconds between two rounds on the driver's virtual clock: the model's answer and the tool
/// call (assumed; it only matters against the 5-minute cache life).
const ROUND_SECONDS: f64 = 10.0;

/// The client's shell tool, as claude-cli names it.
const SHELL_TOOL: &str = "Bash";
