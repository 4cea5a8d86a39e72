//! Scenario files: everything a run needs, in TOML, so the same file runs on a laptop, in CI and
//! against a real provider by changing the upstream.

use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub about: String,
    pub catalogue: CatalogueSpec,
    #[serde(default)]
    pub client: ClientSpec,
    pub run: RunSpec,
    /// What `toolcost sweep --scenario` measures (the `run` command ignores it).
    #[serde(default)]
    pub sweep: Option<SweepSpec>,
    #[serde(default)]
    pub upstream: UpstreamSpec,
    /// Running servers to use instead of starting them in process.
    #[serde(default)]
    pub endpoints: Endpoints,
}

/// `[endpoints]`: a running `toolcost serve` and/or `toolcost gateway`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoints {
    /// Base URL of a reference server (`http://127.0.0.1:8787`); its catalogue is read from
    /// its `/mcp` tools/list, so `[catalogue].rows` does not apply.
    pub server: Option<String>,
    /// The env var holding that server's token.
    pub token_env: Option<String>,
    /// Base URL of a running gateway.
    pub gateway: Option<String>,
    /// That gateway's log file, which the results are read from (required with `gateway`).
    pub log: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogueSpec {
    #[serde(default = "default_profile")]
    pub profile: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Catalogue sizes to run at.
    pub rows: Vec<usize>,
}

fn default_profile() -> String {
    "seed-2026-07".into()
}
fn default_seed() -> u64 {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientSpec {
    #[serde(default = "default_client")]
    pub name: String,
    /// Overrides the client's model: its price card, and the `model` it sends unless
    /// `wire_model` says otherwise.
    pub model: Option<String>,
    /// Overrides the `model` the client sends (the recorded setup's `@cf/...` id, say).
    pub wire_model: Option<String>,
    /// The client's tool search switch (a client with one: claude-cli); unset, its default.
    pub tool_search: Option<bool>,
    /// Whether the user's session context (memory, environment) the profile models is sent;
    /// unset, it is, at the captured request's own size.
    pub session_context: Option<bool>,
}

impl ClientSpec {
    /// A client profile as this spec sets it: its model, wire model and switches.
    pub fn apply(&self, mut client: crate::client::Client) -> crate::client::Client {
        if let Some(m) = &self.model {
            client.model = m.clone();
            client.wire_model = m.clone();
        }
        if let Some(w) = &self.wire_model {
            client.wire_model = w.clone();
        }
        if let Some(on) = self.tool_search {
            client = client.with_tool_search(on);
        }
        if let Some(on) = self.session_context {
            client = client.with_session(on);
        }
        client
    }
}

fn default_client() -> String {
    "claude-cli".into()
}

impl Default for ClientSpec {
    fn default() -> Self {
        ClientSpec {
            name: default_client(),
            model: None,
            wire_model: None,
            tool_search: None,
            session_context: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    pub surfaces: Vec<String>,
    /// Client profiles every task is played with, in order; empty: the `[client]` one. The
    /// `[client]` model override applies to the client it names.
    #[serde(default)]
    pub clients: Vec<String>,
    /// `turn` (one round, the reproduce table), `now`, `email`, `aig`, `orders`.
    pub tasks: Vec<String>,
    /// How many ORDER_GET lookups the `orders` task makes.
    #[serde(default = "default_orders")]
    pub orders: usize,
    /// Rounds after which a task counts as failed.
    #[serde(default = "default_max_rounds")]
    pub max_rounds: usize,
    /// How the model words its first search: `literal` (the capability's own words, default)
    /// or `paraphrase` (the labelled query set's paraphrase; the literal words become the
    /// reformulation after a miss).
    #[serde(default)]
    pub phrasing: Phrasing,
    /// Capability calls the scripted model makes per round: `serial` (one; a shell loop or a
    /// program makes one call too) or `parallel` (up to `parallel_calls`, as parallel tool
    /// calls, one shell loop or one program). Each task is played under every policy listed.
    #[serde(default = "default_policies")]
    pub policies: Vec<Policy>,
    /// The cap on calls per round under `parallel` (assumed: providers publish no cap).
    #[serde(default = "default_parallel_calls")]
    pub parallel_calls: usize,
    /// The resolvers a client's own search tool runs (`deferred-search-client`), any that
    /// `search-eval` scores, by name; each task on that surface is played once with each.
    /// Empty: the default resolver alone.
    #[serde(default)]
    pub client_resolvers: Vec<String>,
    /// Keep the in-process gateway's logs, one per catalogue size, with every request's body,
    /// in this folder (for `toolcost replay`); unset, they are written to a temporary folder
    /// and removed.
    #[serde(default)]
    pub log_dir: Option<String>,
}

/// How many capability calls the scripted model makes in one round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    Serial,
    Parallel,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Serial => "serial",
            Policy::Parallel => "parallel",
        }
    }

    pub fn parse(s: &str) -> Result<Policy> {
        match s.trim() {
            "serial" => Ok(Policy::Serial),
            "parallel" => Ok(Policy::Parallel),
            other => Err(Error::unknown("policy", other, &["serial", "parallel"])),
        }
    }
}

fn default_policies() -> Vec<Policy> {
    vec![Policy::Parallel]
}
fn default_parallel_calls() -> usize {
    16
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phrasing {
    #[default]
    Literal,
    Paraphrase,
}

fn default_orders() -> usize {
    150
}
fn default_max_rounds() -> usize {
    400
}

/// `mock` (default), or a gateway that forwards to a provider.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamSpec {
    /// `mock`, or a provider base URL the in-process gateway forwards to.
    pub url: Option<String>,
    /// The env var holding the provider key (forward mode).
    pub api_key_env: Option<String>,
}

impl Scenario {
    /// The resolvers `deferred-search-client` is played with ([`RunSpec::client_resolvers`]).
    /// A name and its `-definitions` form run the same search over the definitions: it is
    /// played once, under the first name given. The regex tool is its own surface.
    pub fn client_resolvers(&self) -> Result<Vec<crate::resolve::Method>> {
        use crate::resolve::Method;
        let mut out: Vec<Method> = Vec::new();
        for name in &self.run.client_resolvers {
            let m = Method::parse(name.trim())?;
            if m == Method::Regex {
                return Err(Error::input(
                    "client_resolvers: `regex` is a search of its own: play the \
                     deferred-search-client-regex surface instead",
                ));
            }
            if !out.iter().any(|&o| o.runs() == m.runs()) {
                out.push(m);
            }
        }
        if out.is_empty() {
            out.push(crate::resolve::Kind::DEFAULT.method());
        }
        Ok(out)
    }

    /// The client profiles the tasks are played with: `[run] clients`, or the `[client]` one.
    pub fn client_names(&self) -> Vec<&str> {
        match self.run.clients.is_empty() {
            true => vec![self.client.name.as_str()],
            false => self.run.clients.iter().map(String::as_str).collect(),
        }
    }

    /// A client profile as this scenario plays it (its model overridden where `[client]`
    /// names it with a model).
    pub fn client(&self, name: &str) -> Result<crate::client::Client> {
        let client = crate::client::Client::named(name)?;
        Ok(match self.client.name == client.name {
            true => self.client.apply(client),
            false => client,
        })
    }

    pub fn read(path: &Path) -> Result<Scenario> {
        let text = crate::input::read_text(path, crate::input::SMALL)?;
        let s: Scenario =
            toml::from_str(&text).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
        for t in &s.run.tasks {
            if !super::tasks::NAMES.contains(&t.as_str()) {
                return Err(Error::unknown("task", t, &super::tasks::NAMES));
            }
        }
        for surface in &s.run.surfaces {
            crate::surface::SurfaceKind::parse(surface)?;
        }
        for c in s.client_names() {
            crate::client::Client::named(c)?;
        }
        s.client_resolvers()?;
        if s.run.policies.is_empty() || s.run.parallel_calls == 0 {
            return Err(Error::input(format!(
                "{}: [run] needs at least one policy and parallel_calls of 1 or more",
                path.display()
            )));
        }
        if s.endpoints.gateway.is_some() && s.endpoints.log.is_none() {
            return Err(Error::input(format!(
                "{}: [endpoints] gateway needs `log`, the path of that gateway's log file",
                path.display()
            )));
        }
        Ok(s)
    }
}

/// The `[sweep]` section of a scenario file; every field may be overridden on the command line.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    pub rows: Option<Vec<usize>>,
    /// `all` or a list of surface names.
    pub surfaces: Option<Vec<String>>,
    pub tokenizers: Option<Vec<String>>,
    pub clients: Option<Vec<String>>,
    /// Play the scenario's `[run]` tasks too, at the `[catalogue]` sizes unless `task_rows`
    /// names others.
    #[serde(default)]
    pub tasks: bool,
    pub task_rows: Option<Vec<usize>>,
    pub turns_per_day: Option<u64>,
    pub days: Option<u64>,
}
