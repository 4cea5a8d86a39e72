//! `toolcost run --scenario FILE`: plays each task on each surface round by round through the
//! gateway, executing every tool call for real against the reference server, and sums the
//! gateway's log rows into one result per task and surface.
//!
//! The model's choices come from a small policy of what a competent model does next (call the
//! tool it can see; search, then call what the search returned; reformulate once after a miss,
//! then give up); the gateway's mock upstream turns each choice into a provider-shaped answer
//! and bills it. Tool results, searches, contracts and receipts come from the running server,
//! so their bytes and tokens are real. The driver speaks every provider format its client
//! profiles speak (claude-cli on Anthropic Messages, openai-agent on Chat Completions,
//! openai-responses-agent on the Responses API); a request the provider would refuse (deferral
//! on Chat Completions, more tools than it takes) fails its task with the provider's reason.

mod play;
pub mod scenario;
pub mod tasks;

use crate::catalogue::{generate::Generator, profile::Profile, Catalogue};
use crate::client::Client;
use crate::error::{Error, Result};
use crate::gateway::{self, log::LogRow};
use crate::report::Tabular;
use crate::resolve::Method;
use crate::server;
use crate::surface::{Context, SurfaceKind};
use play::Play;
use scenario::{Policy, Scenario};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Instant;

const TOKEN: &str = "toolcost-driver";

/// How a task's answer begins when the client's API format lacks the surface (nothing sent).
pub const UNAVAILABLE: &str = "not available in the client's API format: ";

/// One task on one surface at one N, summed from the gateway's log rows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TaskResult {
    pub scenario: String,
    /// The client profile that played it.
    #[serde(default)]
    pub client: String,
    pub surface: String,
    pub rows: usize,
    pub task: String,
    /// Calls per round the scripted model made: `serial` or `parallel(<cap>)`.
    #[serde(default)]
    pub policy: String,
    /// The resolver the surface's searches ran (the client's own, or the server's or
    /// provider's as `search-eval` models it); empty on a surface that does not search.
    #[serde(default)]
    pub resolver: String,
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
    /// The task's wall time. Not written to the CSV or JSON: a timing differs run to run, and
    /// would make every regenerated report differ from the committed one.
    #[serde(skip)]
    pub wall_ms: f64,
    /// Evidence: rounds, calls, misses and success are `simulated` (the driver's scripted model);
    /// the tokens are the log rows' usage source (`estimated:<tokenizer>` or
    /// `estimated:<tokenizer>` with the mock, `observed` from a real provider); the cost is
    /// derived from them.
    pub label: String,
    /// What the model answered in its last round.
    #[serde(default)]
    pub answer: String,
}

impl TaskResult {
    /// The surface as tables and charts name it: a client's own search played with a
    /// resolver other than the default says which (`deferred-search-client (hybrid)`).
    pub fn surface_shown(&self) -> String {
        let default = crate::resolve::Kind::DEFAULT.method();
        match self.surface == SurfaceKind::DEFERRED_SEARCH_CLIENT.name()
            && !self.resolver.is_empty()
            && Method::parse(&self.resolver).map(Method::runs).ok() != Some(default)
        {
            true => format!("{} ({})", self.surface, self.resolver),
            false => self.surface.clone(),
        }
    }
}

impl Tabular for TaskResult {
    const COLUMNS: &'static [crate::report::Column] =
        &[crate::report::Column::field("cost_usd").places(8)];
    const BRIEF: &'static [&'static str] = &[
        "client",
        "surface",
        "rows",
        "task",
        "policy",
        "resolver",
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
    let clients = s
        .client_names()
        .into_iter()
        .map(|c| s.client(c))
        .collect::<Result<Vec<_>>>()?;
    // A model whose tokenizer is installed apart (Llama 4's) must have it before anything is
    // played: the mock bills every round with it.
    for c in &clients {
        crate::pricing::PriceCard::named(&c.model)?
            .tokenizer()
            .ready()?;
    }
    let surfaces = s
        .run
        .surfaces
        .iter()
        .map(|x| SurfaceKind::parse(x))
        .collect::<Result<Vec<_>>>()?;
    let mut resolvers = s.client_resolvers()?;
    // A resolver that needs the optional embedding model is left out, with a note, where the
    // model is not installed: the other resolvers and surfaces still play.
    if resolvers.iter().any(|m| m.semantic()) {
        if let Err(e) = crate::embed::Encoder::shared() {
            let names: Vec<&str> = resolvers
                .iter()
                .filter(|m| m.semantic())
                .map(|m| m.name())
                .collect();
            eprintln!(
                "toolcost: note: leaving out the client resolver(s) {} of deferred-search-client: {e}",
                names.join(", ")
            );
            resolvers.retain(|m| !m.semantic());
            if resolvers.is_empty() {
                resolvers.push(crate::resolve::Kind::DEFAULT.method());
            }
        }
    }
    let kept = s.run.log_dir.as_ref().map(std::path::PathBuf::from);
    let dir = match &kept {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| {
                crate::error::Error::input(format!(
                    "{}: cannot make the log folder: {e}",
                    d.display()
                ))
            })?;
            d.clone()
        }
        None => tempfile_dir()?,
    };
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
        let mut played = Vec::new();
        for client in &clients {
            let setup = Setup {
                scenario: s,
                client,
                catalogue: &cat,
                server: &server_base,
                gateway: &gateway_base,
                token: &token,
            };
            for &surface in &surfaces {
                // A client's own search is played with each resolver named; every other
                // surface searches (if at all) as it always does.
                let searches: Vec<Option<Method>> =
                    match surface == SurfaceKind::DEFERRED_SEARCH_CLIENT {
                        true => resolvers.iter().copied().map(Some).collect(),
                        false => vec![None],
                    };
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
                        for &search in &searches {
                            let p = setup.play(surface, tname, policy, search).await?;
                            progress(&p.run_id);
                            played.push(p);
                        }
                    }
                }
            }
        }
        // The log is read once per size, after its tasks: each task's rows by its run id.
        let rows = gateway::log::read_all(&log_path)?;
        let by_run = rows_by_run(&rows);
        let n = cat.tools.len();
        out.extend(played.into_iter().map(|p| {
            let mine = by_run.get(p.run_id.as_str()).map_or(&[][..], Vec::as_slice);
            summarise(s, n, p, mine)
        }));
        for stop in stops {
            let _ = stop.send(());
        }
    }
    if kept.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
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
        // Kept logs carry each request's body, for `toolcost replay`.
        log_bodies: s.run.log_dir.is_some(),
        body_idle: gateway::BODY_IDLE,
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
    token: &'a str,
}

impl Setup<'_> {
    /// Play one task on one surface; its log rows are summed once the size's tasks are done.
    /// `search`: the resolver of a client's own search, on the surface that has one.
    async fn play(
        &self,
        surface: SurfaceKind,
        tname: &str,
        policy: Policy,
        search: Option<Method>,
    ) -> Result<Played> {
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
        let resolver = search.or(surface.discovery().map(|(m, _)| m));
        let run_id = format!(
            "{}-{}-{}-{n}-{}-{policy_name}{}",
            s.name,
            self.client.name,
            surface.name(),
            task.name,
            search.map(|m| format!("-{}", m.name())).unwrap_or_default()
        );
        let endpoint = format!("{}/api/dispatch", self.server);
        let ctx = Context {
            catalogue: self.catalogue,
            client: self.client,
            turn: &task.prompt,
            endpoint: &endpoint,
        };
        let started = Instant::now();
        if let Some(why) = surface.lacks(self.client.format) {
            // The client's API format has no such mechanism: nothing is sent.
            return Ok(Played {
                client: self.client.name.clone(),
                surface,
                task: task.name,
                run_id,
                policy: policy_name,
                resolver,
                outcome: Outcome {
                    success: false,
                    misses: 0,
                    answer: format!("{UNAVAILABLE}{why}"),
                },
                wall_ms: 0.0,
            });
        }
        let mut play = Play::new(&ctx, surface, &task, self.server, self.gateway, &run_id, s);
        play.token = self.token.to_string();
        play.batch = batch;
        if let Some(m) = search {
            play.resolver = m;
        }
        let outcome = play.play(s.run.max_rounds).await?;
        let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok(Played {
            client: self.client.name.clone(),
            surface,
            task: task.name,
            run_id,
            policy: policy_name,
            resolver,
            outcome,
            wall_ms,
        })
    }
}

/// A task played, waiting for its log rows.
struct Played {
    client: String,
    surface: SurfaceKind,
    task: String,
    run_id: String,
    policy: String,
    resolver: Option<Method>,
    outcome: Outcome,
    wall_ms: f64,
}

/// Log rows by the run id in their metadata (rows without one are left out).
fn rows_by_run(rows: &[LogRow]) -> std::collections::HashMap<String, Vec<&LogRow>> {
    let mut out: std::collections::HashMap<String, Vec<&LogRow>> = Default::default();
    for r in rows {
        let run = serde_json::from_str::<Value>(&r.metadata)
            .ok()
            .and_then(|m| m["run"].as_str().map(String::from));
        if let Some(run) = run {
            out.entry(run).or_default().push(r);
        }
    }
    out
}

/// `serial`, or `parallel(<cap>)`.
fn policy_label(policy: Policy, cap: usize) -> String {
    match policy {
        Policy::Serial => "serial".into(),
        Policy::Parallel => format!("parallel({cap})"),
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

/// A folder of this run's own: named by the process, the clock and a count of the runs this
/// process made, and made new (never one that is there already, which another run could be
/// using and would remove when it ends).
fn tempfile_dir() -> Result<std::path::PathBuf> {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let mut tries = 0;
    loop {
        let dir = std::env::temp_dir().join(format!(
            "toolcost-run-{}-{}-{}",
            std::process::id(),
            crate::clock::now().1,
            RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 100 => tries += 1,
            Err(e) => return Err(Error::io(&dir, e)),
        }
    }
}

struct Outcome {
    success: bool,
    misses: usize,
    answer: String,
}

/// One task's result, summed from its log rows.
fn summarise(s: &Scenario, n: usize, p: Played, mine: &[&LogRow]) -> TaskResult {
    let o = p.outcome;
    TaskResult {
        scenario: s.name.clone(),
        client: p.client,
        surface: p.surface.name().into(),
        rows: n,
        task: p.task,
        success: o.success && mine.iter().all(|r| r.error.is_none()),
        rounds: mine.len(),
        misses: o.misses,
        input_tokens: mine.iter().map(|r| r.input_tokens).sum(),
        cached_input_tokens: mine.iter().map(|r| r.cached_input_tokens).sum(),
        cache_write_tokens: mine.iter().map(|r| r.cache_write_tokens).sum(),
        output_tokens: mine.iter().map(|r| r.output_tokens).sum(),
        // Folded from +0: a task with no rows costs 0, not the -0 an empty `sum` gives.
        cost_usd: mine.iter().fold(0.0, |c, r| c + r.cost_usd),
        wire_bytes: mine.iter().map(|r| r.request_bytes).sum(),
        wall_ms: p.wall_ms,
        label: format!(
            "simulated rounds, calls and success; tokens {}; cost derived",
            mine.first()
                .map(|r| r.usage_source.as_str())
                .unwrap_or("none (nothing sent)")
        ),
        policy: p.policy,
        resolver: p.resolver.map(|m| m.name().to_string()).unwrap_or_default(),
        start: "cold provider cache; server shared at this N (receipts only)".into(),
        answer: o.answer,
    }
}
