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
use crate::surface::{name_list, Context, SearchMethod, SearchSide, SurfaceKind};
use crate::wire::{self, Format, Request};
use scenario::Scenario;
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
    /// The log rows' usage source (`estimated:<tokenizer>` with the mock, `observed` for real).
    pub label: String,
    /// What the model answered in its last round.
    #[serde(default)]
    pub answer: String,
}

impl Tabular for TaskResult {
    fn headers() -> Vec<&'static str> {
        vec![
            "scenario",
            "surface",
            "rows",
            "task",
            "success",
            "rounds",
            "misses",
            "input_tokens",
            "cached_input_tokens",
            "cache_write_tokens",
            "output_tokens",
            "cost_usd",
            "wire_bytes",
            "wall_ms",
            "label",
            "answer",
        ]
    }
    fn cells(&self) -> Vec<String> {
        vec![
            self.scenario.clone(),
            self.surface.clone(),
            self.rows.to_string(),
            self.task.clone(),
            self.success.to_string(),
            self.rounds.to_string(),
            self.misses.to_string(),
            self.input_tokens.to_string(),
            self.cached_input_tokens.to_string(),
            self.cache_write_tokens.to_string(),
            self.output_tokens.to_string(),
            format!("{:.8}", self.cost_usd),
            self.wire_bytes.to_string(),
            format!("{:.0}", self.wall_ms),
            self.label.clone(),
            self.answer.clone(),
        ]
    }
    fn brief_columns() -> Option<Vec<usize>> {
        Some(vec![1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 14])
    }
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
    let mut out = Vec::new();
    let ep = &s.endpoints;
    let token = match &ep.token_env {
        Some(name) => crate::error::env_secret("[endpoints] token_env", name)?,
        None => TOKEN.to_string(),
    };
    // With a running server there is one catalogue: the one it serves.
    let sizes: Vec<Option<usize>> = match &ep.server {
        Some(_) => vec![None],
        None => s.catalogue.rows.iter().map(|&n| Some(n)).collect(),
    };
    for size in sizes {
        let mut stops = Vec::new();
        let (cat, server_base) = match (size, &ep.server) {
            (_, Some(url)) => {
                let target = crate::mcp::Target::Http {
                    url: format!("{}/mcp", url.trim_end_matches('/')),
                    headers: vec![format!("Authorization: Bearer {token}")],
                    timeout: std::time::Duration::from_secs(60),
                };
                (
                    target.fetch().await?.0,
                    url.trim_end_matches('/').to_string(),
                )
            }
            (Some(n), None) => {
                let rows: Vec<_> = Generator::new(
                    Profile::named(&s.catalogue.profile)?,
                    n,
                    s.catalogue.seed,
                    false,
                )
                .collect();
                let cat =
                    Catalogue::from_rows(format!("{} N={n}", s.catalogue.profile), rows.clone());
                let state = server::state(&server::Options {
                    rows: Some(rows),
                    db: None,
                    token: Some(token.clone()),
                    allowlist: vec![],
                    max_body: server::DEFAULT_MAX_BODY,
                })?;
                let (base, stop) = spawn_local(|listener, shutdown| {
                    server::run(listener, state, server::DEFAULT_MAX_BODY, shutdown)
                })
                .await?;
                stops.push(stop);
                (cat, base)
            }
            (None, None) => unreachable!(),
        };
        let n = cat.tools.len();
        let (gateway_base, log_path) = match (&ep.gateway, &ep.log) {
            (Some(url), Some(log)) => (
                url.trim_end_matches('/').to_string(),
                std::path::PathBuf::from(log),
            ),
            _ => {
                let log_path = dir.join(format!("gateway-{n}.sqlite"));
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
                    log: log_path.clone(),
                    timeout: std::time::Duration::from_secs(300),
                    max_body: gateway::DEFAULT_MAX_BODY,
                })?;
                let (base, stop) =
                    spawn_local(|listener, shutdown| gateway::run(listener, gw, shutdown)).await?;
                stops.push(stop);
                (base, log_path)
            }
        };
        let endpoint = format!("{server_base}/api/dispatch");
        for &surface in &surfaces {
            for tname in &s.run.tasks {
                let task = tasks::task(
                    tname,
                    s.run.orders,
                    s.run.phrasing == scenario::Phrasing::Paraphrase,
                );
                let run_id = format!("{}-{}-{n}-{}", s.name, surface.name(), task.name);
                let ctx = Context {
                    catalogue: &cat,
                    client: &client,
                    turn: &task.prompt,
                    endpoint: &endpoint,
                };
                let started = Instant::now();
                let mut play = Play::new(
                    &ctx,
                    surface,
                    &task,
                    &server_base,
                    &gateway_base,
                    &run_id,
                    s,
                );
                play.token = token.clone();
                let outcome = play.play(s.run.max_rounds).await?;
                let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
                let rows = gateway::log::read_all(&log_path)?;
                out.push(summarise(
                    s, surface, n, &task, &run_id, outcome, wall_ms, &rows,
                ));
                progress(&run_id);
            }
        }
        for stop in stops {
            let _ = stop.send(());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(out)
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
        label: mine
            .first()
            .map(|r| r.usage_source.clone())
            .unwrap_or_default(),
        answer: o.answer,
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Discover(u8),
    Contract,
    Call(usize),
    Final,
}

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
    session: Option<name_list::Session>,
    http: reqwest::Client,
    phase: Phase,
    misses: usize,
    failed: bool,
    results: Vec<Value>,
    /// What each Bash call the model makes does, by tool-use id order.
    pending_shell: Vec<Vec<(String, String, Option<String>)>>,
    /// The reference server's bearer token.
    token: String,
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
        let session = (surface == SurfaceKind::NameList).then(|| name_list::Session::new(ctx));
        let base = match &session {
            Some(sess) => sess.request(ctx, Vec::new()).request,
            None => surface.build(ctx).request,
        };
        let phase = match (task.key, surface) {
            (None, _) => Phase::Final,
            (Some(_), SurfaceKind::PerRowMcp) => Phase::Call(0),
            _ => Phase::Discover(0),
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
            session,
            http: reqwest::Client::new(),
            phase,
            misses: 0,
            failed: false,
            results: Vec::new(),
            pending_shell: Vec::new(),
            token: TOKEN.to_string(),
            answer: String::new(),
        }
    }

    fn key(&self) -> &'static str {
        self.task.key.unwrap_or("")
    }

    fn tool_name(&self, key: &str) -> String {
        self.ctx.client.tool_name(&self.ctx.catalogue.server, key)
    }

    fn query(&self, attempt: u8) -> &'static str {
        if attempt == 0 {
            self.task.query
        } else {
            self.task.reformulation
        }
    }

    /// What a competent model does next.
    fn step(&mut self) -> Value {
        let key = self.key();
        let calls = &self.task.calls;
        match self.phase {
            Phase::Final => {
                let text = if self.failed {
                    "I could not find a capability that does this.".to_string()
                } else if self.task.name == "orders" {
                    let total: u64 = self
                        .results
                        .iter()
                        .filter_map(|r| {
                            r["result"]["total_cents"]
                                .as_u64()
                                .or_else(|| r["total_cents"].as_u64())
                        })
                        .sum();
                    format!("The {} orders total {} cents.", calls.len(), total)
                } else {
                    "Done.".to_string()
                };
                self.answer = text.clone();
                json!({"text": text})
            }
            Phase::Call(i) => match self.surface {
                SurfaceKind::CodeMode => {
                    json!({"tool": self.tool_name("execute"), "input": {"code": self.call_program(i)}})
                }
                SurfaceKind::SmallMcp => {
                    json!({"tool": self.tool_name("dispatch"), "input": {"key": key, "body": calls[i]}})
                }
                SurfaceKind::ProtocolOnly => {
                    // The shell runs every remaining call in one command: a loop is honest batching.
                    let url = format!("{}/api/dispatch", self.server);
                    let batch: Vec<(String, String, Option<String>)> = calls[i..]
                        .iter()
                        .map(|a| {
                            (
                                "POST".to_string(),
                                url.clone(),
                                Some(json!({"key": key, "args": a}).to_string()),
                            )
                        })
                        .collect();
                    let command = if batch.len() > 1 {
                        format!("for id in $(seq {} {}); do curl -s -X POST {url} -H \"Authorization: Bearer $TOOLCOST_TOKEN\" -d \"{{\\\"key\\\":\\\"{key}\\\",\\\"args\\\":{{\\\"order_id\\\":\\\"ord_$id\\\"}}}}\"; echo; done", i + 1, calls.len())
                    } else {
                        format!("curl -s -X POST {url} -H \"Authorization: Bearer $TOOLCOST_TOKEN\" -d '{}'", batch[0].2.as_deref().unwrap_or(""))
                    };
                    self.pending_shell.push(batch);
                    json!({"tool": "Bash", "input": {"command": command, "description": "Invoke the capability"}})
                }
                _ => json!({"tool": self.tool_name(key), "input": calls[i]}),
            },
            Phase::Contract => match self.surface {
                SurfaceKind::SmallMcp => {
                    json!({"tool": self.tool_name("read_contract"), "input": {"key": key}})
                }
                _ => {
                    let url = format!("{}/api/dispatch?key={key}&format=markdown", self.server);
                    self.pending_shell
                        .push(vec![("GET".into(), url.clone(), None)]);
                    json!({"tool": "Bash", "input": {"command": format!("curl -s '{url}'"), "description": "Read the contract"}})
                }
            },
            Phase::Discover(a) => {
                let q = self.query(a);
                match self.surface {
                    SurfaceKind::DeferredSearch(method, SearchSide::Provider) => {
                        let search = match method {
                            SearchMethod::Bm25 => json!({"query": q}),
                            SearchMethod::Regex => {
                                json!({"pattern": crate::resolve::regex_for(q)})
                            }
                        };
                        let found = crate::resolve::search_definitions(
                            &self.deferred(),
                            &search,
                            method == SearchMethod::Regex,
                        )
                        .unwrap_or_default();
                        if found.contains(&self.tool_name(key)) {
                            self.phase = Phase::Call(0);
                            json!({"search": search, "then": {"tool": self.tool_name(key), "input": calls[0]}})
                        } else {
                            self.miss(a);
                            json!({"search": search, "then": {"text": "That search did not find it."}})
                        }
                    }
                    SurfaceKind::DeferredSearch(method, SearchSide::Client) => match method {
                        SearchMethod::Bm25 => json!({"tool": "tool_search", "input": {"query": q}}),
                        SearchMethod::Regex => {
                            json!({"tool": "tool_search", "input": {"pattern": crate::resolve::regex_for(q)}})
                        }
                    },
                    SurfaceKind::SmallMcp => {
                        json!({"tool": self.tool_name("search_directory"), "input": {"query": q}})
                    }
                    SurfaceKind::CodeMode => {
                        let code = format!(
                            "const found = await search({}, 5);\nconsole.log(JSON.stringify(found));",
                            Value::from(q)
                        );
                        json!({"tool": self.tool_name("execute"), "input": {"code": code}})
                    }
                    SurfaceKind::NameList => {
                        json!({"tool": name_list::ENABLE_TOOL, "input": {"names": [self.tool_name(key)]}})
                    }
                    _ => {
                        let url =
                            format!("{}/api/dispatch?ask={}", self.server, q.replace(' ', "%20"));
                        self.pending_shell
                            .push(vec![("GET".into(), url.clone(), None)]);
                        json!({"tool": "Bash", "input": {"command": format!("curl -s '{url}'"), "description": "Ask the catalogue"}})
                    }
                }
            }
        }
    }

    /// The program a model writes in code mode to make calls `i..`: a loop that aggregates in
    /// the sandbox for the orders task, one dispatch per call otherwise.
    fn call_program(&self, i: usize) -> String {
        let key = Value::from(self.key());
        let calls = &self.task.calls[i..];
        if self.task.name == "orders" {
            return format!(
                "let total = 0, count = 0;\n\
                 for (let n = {}; n <= {}; n++) {{\n\
                 \x20 const r = await dispatch({key}, {{ order_id: \"ord_\" + n }});\n\
                 \x20 total += r.result.total_cents;\n\
                 \x20 count += 1;\n\
                 }}\n\
                 console.log(JSON.stringify({{ count, total_cents: total }}));",
                i + 1,
                self.task.calls.len()
            );
        }
        let mut code = String::from("const out = [];\n");
        for a in calls {
            code.push_str(&format!(
                "out.push((await dispatch({key}, {})).result);\n",
                crate::json::compact(a)
            ));
        }
        code.push_str("console.log(JSON.stringify(out));");
        code
    }

    /// After a search: `next` if the candidates hold the key, otherwise count a miss.
    fn discovered(&mut self, attempt: u8, answer: &Value, next: Phase) {
        let key = self.key();
        let hit = answer["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["key"] == key);
        if hit {
            self.phase = next;
        } else {
            self.miss(attempt);
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

    fn deferred(&self) -> Vec<(String, String)> {
        self.base
            .tools()
            .iter()
            .filter(|t| wire::is_deferred(t))
            .filter_map(|t| {
                wire::definition_parts(t).map(|(n, d, _)| (n.to_string(), d.to_string()))
            })
            .collect()
    }

    async fn play(&mut self, max_rounds: usize) -> Result<Outcome> {
        for round in 1..=max_rounds {
            let final_round = self.phase == Phase::Final;
            let step = self.step();
            let mut req = self.base.clone();
            req.messages_mut().extend(self.history.iter().cloned());
            let meta = json!({"scenario": self.scenario, "surface": self.surface.name(), "n": self.ctx.catalogue.tools.len(),
                              "task": self.task.name, "round": round, "run": self.run_id});
            let resp = self
                .http
                .post(format!("{}/v1/messages", self.gateway))
                .header("content-type", "application/json")
                .header("x-toolcost-next", crate::json::compact(&step))
                .header("x-toolcost-metadata", crate::json::compact(&meta))
                .body(req.wire())
                .send()
                .await
                .map_err(|e| Error::input(format!("gateway: {e}")))?;
            let status = resp.status();
            let text = resp
                .text()
                .await
                .map_err(|e| Error::input(format!("gateway: {e}")))?;
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
        let key = self.key();
        let prefix = self.tool_name("");
        if name == "tool_search" {
            let regex = input.get("pattern").is_some();
            let found = crate::resolve::search_definitions(&self.deferred(), &input, regex)
                .unwrap_or_default();
            if found.contains(&self.tool_name(key)) {
                self.phase = Phase::Call(0);
            } else if let Phase::Discover(a) = self.phase {
                self.miss(a);
            }
            return Ok((format!("{} tool(s) found", found.len()), found));
        }
        if name == name_list::ENABLE_TOOL {
            let names: Vec<String> = input["names"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(String::from))
                .collect();
            let session = self
                .session
                .as_mut()
                .ok_or_else(|| Error::input("enable_tools outside the name-list surface"))?;
            let outcome = session.enable(&names);
            let refs = session.references(&outcome);
            self.phase = if outcome.enabled.contains(&self.tool_name(key)) {
                Phase::Call(0)
            } else {
                Phase::Final
            };
            return Ok((crate::json::compact(&outcome), refs));
        }
        if name == "Bash" {
            let batch = if self.pending_shell.is_empty() {
                Vec::new()
            } else {
                self.pending_shell.remove(0)
            };
            let mut outputs = Vec::new();
            for (method, url, body) in batch {
                let rb = if method == "GET" {
                    self.http.get(&url)
                } else {
                    self.http
                        .post(&url)
                        .header("content-type", "application/json")
                        .body(body.unwrap_or_default())
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
            let joined = outputs.join("\n");
            match self.phase {
                Phase::Discover(a) => {
                    let v: Value = serde_json::from_str(&joined).unwrap_or(Value::Null);
                    self.discovered(a, &v, Phase::Contract);
                }
                Phase::Contract => self.phase = Phase::Call(0),
                Phase::Call(_) => {
                    for o in &outputs {
                        if let Ok(v) = serde_json::from_str::<Value>(o) {
                            self.results.push(v);
                        }
                    }
                    self.phase = Phase::Final;
                }
                Phase::Final => {}
            }
            return Ok((joined, Vec::new()));
        }
        let Some(tool) = name.strip_prefix(&prefix) else {
            return Ok((format!("no such tool `{name}`"), Vec::new()));
        };
        if let Some(session) = &self.session {
            if session.check_call(name, &self.ctx.client.tools) == name_list::CallCheck::EnableFirst
            {
                return Ok((
                    "enable it first: call enable_tools with this exact name".into(),
                    Vec::new(),
                ));
            }
        }
        let path = match self.surface {
            SurfaceKind::SmallMcp => "/mcp/small",
            SurfaceKind::CodeMode => "/mcp/code",
            _ => "/mcp",
        };
        let mcp_tool = tool;
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": mcp_tool, "arguments": input}});
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
        match (self.phase, self.surface, tool) {
            (Phase::Discover(a), SurfaceKind::SmallMcp, "search_directory") => {
                self.discovered(a, &structured, Phase::Contract)
            }
            (phase, SurfaceKind::CodeMode, "execute") => {
                let printed: Value = structured["error"]
                    .is_null()
                    .then(|| structured["printed"].as_str())
                    .flatten()
                    .and_then(|p| serde_json::from_str(p).ok())
                    .unwrap_or(Value::Null);
                match phase {
                    Phase::Discover(a) => {
                        // The search result names each key's arguments; no contract round.
                        self.discovered(a, &json!({ "candidates": printed }), Phase::Call(0));
                    }
                    Phase::Call(_) => {
                        match printed {
                            Value::Array(items) => self.results.extend(items),
                            Value::Null => self.failed = true,
                            other => self.results.push(other),
                        }
                        self.phase = Phase::Final;
                    }
                    _ => {}
                }
            }
            (Phase::Contract, _, _) => self.phase = Phase::Call(0),
            (Phase::Call(i), _, _) => {
                self.results.push(structured);
                self.phase = if i + 1 < self.task.calls.len() {
                    Phase::Call(i + 1)
                } else {
                    Phase::Final
                };
            }
            _ => {}
        }
        Ok((result_text, Vec::new()))
    }
}
