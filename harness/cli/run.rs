//! `toolcost run`: play a scenario's tasks round by round through the gateway against the
//! reference server.

use super::{emit, progress, runtime, FormatArgs};
use crate::driver::{
    self,
    scenario::{Policy, Scenario},
};
use crate::error::Result;
use crate::report;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file (see scenarios/).
    #[arg(long, value_name = "FILE")]
    pub scenario: PathBuf,
    #[command(flatten)]
    pub format: FormatArgs,
    /// Write the results here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Calls per round, overriding the scenario's `policies`: `serial` (one capability call a
    /// round on every surface), `parallel` (up to `--parallel-calls` a round: parallel tool
    /// calls, one shell loop, one program), or both, comma-separated.
    #[arg(long, value_name = "POLICY")]
    pub policy: Option<String>,
    /// The cap on calls per round under `parallel`.
    #[arg(long, value_name = "N")]
    pub parallel_calls: Option<usize>,
    /// Client profiles to play every task with, comma-separated (claude-cli, openai-agent,
    /// openai-responses-agent, or a profile file's path ending in .json), overriding the
    /// scenario's.
    #[arg(long, value_name = "CLIENTS")]
    pub client: Option<String>,
    /// A client profile file (`toolcost profile --from-log`) to play every task with (the
    /// same as `--client FILE`).
    #[arg(long, value_name = "PROFILE.json", conflicts_with = "client")]
    pub client_profile: Option<std::path::PathBuf>,
    /// The resolvers a client's own search tool runs (deferred-search-client), comma-separated,
    /// each played beside the others: any name `search-eval` scores (bm25-textbook, hybrid,
    /// ...), overriding the scenario's `client_resolvers`.
    #[arg(long, value_name = "LIST")]
    pub client_resolver: Option<String>,
    /// Keep the gateway's logs (one per catalogue size, `gateway-N.sqlite`) with every
    /// request's body in this folder, for `toolcost replay`.
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
}

pub(super) fn run(a: RunArgs) -> Result<i32> {
    let mut scenario = Scenario::read(&a.scenario)?;
    if let Some(d) = &a.log_dir {
        scenario.run.log_dir = Some(d.display().to_string());
    }
    if let Some(p) = &a.policy {
        scenario.run.policies = p
            .split(',')
            .map(Policy::parse)
            .collect::<Result<Vec<_>>>()?;
    }
    let clients = a
        .client_profile
        .as_ref()
        .map(|p| p.display().to_string())
        .or_else(|| a.client.clone());
    if let Some(list) = &clients {
        scenario.run.clients = list.split(',').map(|c| c.trim().to_string()).collect();
        for c in scenario.client_names() {
            crate::client::Client::named(c)?;
        }
    }
    if let Some(list) = &a.client_resolver {
        scenario.run.client_resolvers = list
            .split(',')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect();
    }
    // deferred-search-client is played once per client resolver (checked here, before the run).
    let resolvers = scenario.client_resolvers()?.len();
    let client_search = crate::surface::SurfaceKind::DEFERRED_SEARCH_CLIENT.name();
    let plays = scenario.run.surfaces.len()
        + match scenario.run.surfaces.iter().any(|s| s == client_search) {
            true => resolvers - 1,
            false => 0,
        };
    if let Some(n) = a.parallel_calls {
        if n == 0 {
            return Err(crate::error::Error::input(
                "--parallel-calls must be 1 or more",
            ));
        }
        scenario.run.parallel_calls = n;
    }
    let total = (scenario.catalogue.rows.len()
        * scenario.client_names().len()
        * plays
        * scenario.run.tasks.len()
        * scenario.run.policies.len()) as u64;
    let bar = progress(total, "playing");
    let results = runtime()?.block_on(driver::run(&scenario, &|id| {
        bar.set_message(id.to_string());
        bar.inc(1);
    }))?;
    bar.finish_and_clear();
    emit(
        a.output.as_deref(),
        &report::render(a.format.format(), &results),
    )?;
    Ok(0)
}
