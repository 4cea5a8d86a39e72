//! `toolcost sweep`: one turn over a grid of N x surface x tokenizer x client, optionally whole
//! tasks, with tables and plots under `reports/<name>/`.

use super::{print_bytes, progress, FormatArgs, GeneratorArgs};
use crate::error::Result;
use crate::report;
use crate::sweep::{self, config::Overrides};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(
    mut_arg("profile", |a| a.help("Catalogue profile (without --scenario): seed-2026-07 or real-mcp")),
    mut_arg("seed", |a| a.help("Generator seed (without --scenario)"))
)]
pub struct SweepArgs {
    /// A scenario file: its [sweep] section (and, with `tasks = true`, its [run] tasks).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Catalogue sizes. Default: 0,10,100,856,8560,85600 (or the scenario's).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    pub rows: Vec<usize>,
    /// `all` or a comma-separated list of surfaces: per-row-mcp, deferred-search,
    /// deferred-search-regex, deferred-search-client, deferred-search-client-regex,
    /// deferred-search-namespace (Responses only), protocol-only, small-mcp, name-list,
    /// code-mode, per-row-mcp-min, and the providers' own tool changes: name-list-native and
    /// programmatic (Anthropic only), allowed-tools and additional-tools (Responses only).
    /// `all` leaves out the deferred-search variants; a surface a client's format lacks is a refused row.
    #[arg(long)]
    pub surface: Option<String>,
    /// Comma-separated tokenizers, each used for the clients whose model it can count. Default:
    /// each client's model's own tokenizer.
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// Comma-separated client profiles: embedded ones by name, profile files
    /// (`toolcost profile --from-log`) by a path ending in .json. Default: claude-cli,openai-agent.
    #[arg(long)]
    pub client: Option<String>,
    /// A client profile file to sweep with, alone (the same as `--client FILE`).
    #[arg(long, value_name = "PROFILE.json", conflicts_with = "client")]
    pub client_profile: Option<std::path::PathBuf>,
    /// Also play these tasks (turn, now, email, aig, orders) through the gateway, comma-separated.
    #[arg(long, value_name = "TASKS")]
    pub tasks: Option<String>,
    /// Catalogue sizes for --tasks. Default: the sweep's sizes from 1 to 8,560.
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    pub task_rows: Vec<usize>,
    /// ORDER_GET lookups in the orders task.
    #[arg(long, default_value_t = 150)]
    pub orders: usize,
    /// Calls per round for --tasks: serial, parallel (up to 16 a round), or both.
    #[arg(long, default_value = "parallel")]
    pub policy: String,
    /// Skip the scenario's tasks even when its [sweep] section asks for them.
    #[arg(long, conflicts_with = "tasks")]
    pub no_tasks: bool,
    /// The resolvers a client's own search tool runs in the tasks (deferred-search-client),
    /// comma-separated, each played beside the others: any name `search-eval` scores
    /// (bm25-textbook, hybrid, ...). Default: the scenario's `client_resolvers`, else the
    /// default resolver.
    #[arg(long, value_name = "LIST")]
    pub client_resolver: Option<String>,
    /// Turns a day in the monthly cost. Default: 200 (the published figure).
    #[arg(long)]
    pub turns_per_day: Option<u64>,
    /// Days in the monthly cost. Default: 30.
    #[arg(long)]
    pub days: Option<u64>,
    #[command(flatten)]
    pub generator: GeneratorArgs,
    /// Report name. Default: the scenario's name, or `sweep`.
    #[arg(long)]
    pub name: Option<String>,
    /// Output directory. Default: reports/<name>.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
}

impl SweepArgs {
    fn overrides(&self) -> Result<Overrides> {
        Ok(Overrides {
            scenario: self.scenario.clone(),
            rows: self.rows.clone(),
            surface: self.surface.clone(),
            tokenizer: self.tokenizer.clone(),
            client: match &self.client_profile {
                Some(p) => Some(p.display().to_string()),
                None => self.client.clone(),
            },
            tasks: self.tasks.clone(),
            task_rows: self.task_rows.clone(),
            orders: self.orders,
            policies: self
                .policy
                .split(',')
                .map(crate::driver::scenario::Policy::parse)
                .collect::<Result<Vec<_>>>()?,
            no_tasks: self.no_tasks,
            client_resolver: self.client_resolver.clone(),
            turns_per_day: self.turns_per_day,
            days: self.days,
            profile: self.generator.profile.clone(),
            seed: self.generator.seed,
            name: self.name.clone(),
            out: self.out.clone(),
        })
    }
}

pub(super) fn run(a: SweepArgs) -> Result<i32> {
    let cfg = sweep::config::resolve(&a.overrides()?)?;
    for what in &cfg.ignored {
        eprintln!("toolcost sweep: not used: {what}");
    }
    let bar = progress(sweep::steps(&cfg), "sweeping");
    bar.enable_steady_tick(std::time::Duration::from_millis(250));
    let outcome = sweep::run(&cfg, &|done, total, what| {
        bar.set_length(total);
        bar.set_position(done);
        bar.set_message(what.to_string());
    })?;
    bar.finish_and_clear();
    print_bytes(&report::render(a.format.format(), &outcome.rows))?;
    eprintln!(
        "toolcost sweep: {} rows{}; wrote {} files to {}",
        outcome.rows.len(),
        if outcome.tasks.is_empty() {
            String::new()
        } else {
            format!(" and {} task runs", outcome.tasks.len())
        },
        outcome.files.len(),
        cfg.out.display()
    );
    Ok(0)
}
