//! The command line: clap definitions, one validated config per command, exit codes.
//! Exit status: 0 success, 1 findings (lint violations), 2 errors.

use crate::catalogue::capture;
use crate::catalogue::{generate::Generator, jsonl, profile::Profile, Catalogue};
use crate::client::Client;
use crate::error::{Error, Result};
use crate::measure::{self, CatalogueSource};
use crate::pricing::PriceCard;
use crate::report::{self, OutputFormat};
use crate::surface::{SurfaceKind, DEFAULT_ENDPOINT};
use crate::tokens::Tokenizer;
use crate::{check, lint, mcp, reproduce, store, weigh};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "toolcost",
    version,
    about = "Measure what it costs to show a catalogue of tool capabilities to a language model",
    long_about = "Measure what it costs to show a catalogue of tool capabilities to a language model, \
and how that cost grows with the catalogue. toolcost builds the exact request each surface sends \
(per-row MCP, deferred search, protocol-only HTTP, a small MCP surface, a name list, code mode), \
counts its wire bytes and billed input tokens, and prices them.\n\n\
Every figure carries an evidence label: recorded (published elsewhere), observed (returned by a \
real provider or server), estimated:<tokenizer> (counted here), derived (arithmetic on the others)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Generate a catalogue of N rows, deterministically (same inputs, same bytes).
    Generate(GenerateArgs),
    /// Check tool input schemas against strict-client rules; --fix writes a normalised tools/list.
    Lint(LintArgs),
    /// One user turn on each surface: wire bytes, billed input tokens, cost.
    Measure(MeasureArgs),
    /// The published measurement (FACTS.md section 1) beside toolcost's figures.
    Reproduce(ReproduceArgs),
    /// What a server's tools cost: per-tool bytes and tokens, marginal tokens, one turn per surface.
    Weigh(WeighArgs),
    /// Fail CI when tool definitions outgrow the budget in toolcost.toml or the baseline lock.
    Check(CheckArgs),
    /// Run the reference dispatch server: HTTP protocol, per-row MCP, the small MCP surface and code mode.
    Serve(ServeArgs),
    /// Run the LLM-API gateway that logs tokens, bytes and cost per request.
    Gateway(GatewayArgs),
    /// Play a scenario's tasks round by round through the gateway against the reference server.
    Run(RunArgs),
    /// How well each resolver finds the right row: recall@1, recall@5 and MRR on a labelled
    /// query set, and the rounds and tokens misses add on each surface that searches.
    SearchEval(SearchEvalArgs),
    /// One turn over a grid of N x surface x tokenizer x client (and optionally whole tasks):
    /// results.csv/json, summary.md and plots under reports/<name>/.
    Sweep(SweepArgs),
    /// The tables and plots of any gateway log (SQLite, as `toolcost gateway --log` writes it).
    Report(ReportArgs),
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// A scenario file: its [sweep] section (and, with `tasks = true`, its [run] tasks).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Catalogue sizes. Default: 0,10,100,856,8560,85600 (or the scenario's).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    pub rows: Vec<usize>,
    /// `all` or a comma-separated list of surfaces.
    #[arg(long)]
    pub surface: Option<String>,
    /// Comma-separated tokenizers. Default: o200k,cl100k.
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// Comma-separated client profiles. Default: claude-cli,openai-agent.
    #[arg(long)]
    pub client: Option<String>,
    /// Also play these tasks (turn, now, email, aig, orders) through the gateway, comma-separated.
    #[arg(long, value_name = "TASKS")]
    pub tasks: Option<String>,
    /// Catalogue sizes for --tasks. Default: the sweep's sizes from 1 to 8,560.
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    pub task_rows: Vec<usize>,
    /// ORDER_GET lookups in the orders task.
    #[arg(long, default_value_t = 150)]
    pub orders: usize,
    /// Skip the scenario's tasks even when its [sweep] section asks for them.
    #[arg(long, conflicts_with = "tasks")]
    pub no_tasks: bool,
    /// Turns a day in the monthly cost. Default: 200 (the published figure).
    #[arg(long)]
    pub turns_per_day: Option<u64>,
    /// Days in the monthly cost. Default: 30.
    #[arg(long)]
    pub days: Option<u64>,
    /// Catalogue profile (without --scenario): seed-2026-07 or real-mcp.
    #[arg(long, default_value = "seed-2026-07")]
    pub profile: String,
    /// Generator seed (without --scenario).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Report name. Default: the scenario's name, or `sweep`.
    #[arg(long)]
    pub name: Option<String>,
    /// Output directory. Default: reports/<name>.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The gateway's SQLite log.
    #[arg(long, value_name = "FILE.sqlite")]
    pub log: PathBuf,
    /// Output directory. Default: reports/log-<file stem>.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["catalogue", "rows"])))]
pub struct SearchEvalArgs {
    /// A catalogue file (JSONL, SQLite or a tools/list capture); needs --queries.
    #[arg(long, value_name = "FILE", requires = "queries")]
    pub catalogue: Option<PathBuf>,
    /// The labelled query set for --catalogue (JSONL; `generate --queries` writes one).
    #[arg(long, value_name = "FILE", requires = "catalogue")]
    pub queries: Option<PathBuf>,
    /// Or generate catalogues of these sizes, each with its query set, e.g. 856,8560,85600.
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    pub rows: Vec<usize>,
    /// Catalogue profile: seed-2026-07 or real-mcp.
    #[arg(long, default_value = "seed-2026-07")]
    pub profile: String,
    /// Generator seed: the same seed gives the same catalogue, byte for byte.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Rows sampled per catalogue for the query set (two queries each, plus the fixed rows).
    #[arg(long, default_value_t = 200)]
    pub targets: usize,
    /// Comma-separated: substring, bm25, bm25-definitions, regex.
    #[arg(long, default_value = "substring,bm25,bm25-definitions,regex")]
    pub resolver: String,
    /// Directory for results.csv/json, surfaces.csv/json, misses.md, summary.md and the query sets.
    #[arg(long, default_value = "reports/search")]
    pub out: PathBuf,
    #[command(flatten)]
    pub format: FormatArgs,
}

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
}

#[derive(Args, Debug)]
pub struct GatewayArgs {
    #[arg(long, default_value = "127.0.0.1:8788")]
    pub listen: String,
    /// `mock` (the offline provider-accounting model) or a provider base URL to forward to.
    #[arg(long, default_value = "mock")]
    pub upstream: String,
    /// The env var holding the provider key for forward mode (read once, never written anywhere).
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// SQLite file for the log rows.
    #[arg(long, default_value = "gateway-log.sqlite")]
    pub log: PathBuf,
    /// Seconds to wait for the upstream.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Load this catalogue into the directory (JSONL, SQLite or a tools/list capture).
    #[arg(long, value_name = "FILE", conflicts_with = "rows")]
    pub catalogue: Option<PathBuf>,
    /// Or generate N rows.
    #[arg(long, value_name = "N")]
    pub rows: Option<usize>,
    /// Catalogue profile: seed-2026-07 or real-mcp.
    #[arg(long, default_value = "seed-2026-07")]
    pub profile: String,
    /// Generator seed: the same seed gives the same catalogue, byte for byte.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Add the profile's disabled, hidden and test-shaped rows (for the four counts).
    #[arg(long)]
    pub inactive: bool,
    #[arg(long, default_value = "127.0.0.1:8787")]
    pub listen: String,
    /// SQLite file for the directory and the receipts (default: in memory, gone at exit).
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// The env var holding the bearer token; without one, every call that invokes or changes
    /// rows is refused.
    #[arg(long, value_name = "NAME")]
    pub token_env: Option<String>,
    /// A host the http runner may send to (repeatable; none by default).
    #[arg(long, value_name = "HOST")]
    pub allow_host: Vec<String>,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = crate::server::DEFAULT_MAX_BODY)]
    pub max_body: usize,
    /// Speak MCP over stdin/stdout instead of listening.
    #[arg(long)]
    pub stdio: bool,
    /// With --stdio: serve the small surface instead of the per-row one.
    #[arg(long, requires = "stdio", conflicts_with = "code")]
    pub small: bool,
    /// With --stdio: serve code mode (one `execute` tool running JavaScript in the sandbox).
    #[arg(long, requires = "stdio")]
    pub code: bool,
    /// With --stdio: the surface whose MCP endpoint to serve: per-row-mcp, per-row-mcp-min,
    /// small-mcp or code-mode.
    #[arg(long = "surface", requires = "stdio", value_name = "SURFACE", default_value = "per-row-mcp", conflicts_with_all = ["small", "code"])]
    pub stdio_surface: String,
}

/// Where a server's tools come from.
#[derive(Args, Debug, Clone, Default)]
pub struct TargetArgs {
    /// A tools/list capture (JSON), JSONL rows or a SQLite catalogue.
    #[arg(long, alias = "catalogue", value_name = "FILE", conflicts_with_all = ["url", "command"])]
    pub file: Option<PathBuf>,
    /// A Streamable HTTP MCP endpoint (http://host:port/mcp).
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// A header sent with every HTTP request, `Name: value` (repeatable).
    #[arg(long, value_name = "K:V", requires = "url")]
    pub header: Vec<String>,
    /// Seconds the server has to answer initialize and every tools/list page.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// A stdio server to start: everything after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

impl TargetArgs {
    fn given(&self) -> bool {
        self.file.is_some() || self.url.is_some() || !self.command.is_empty()
    }
}

#[derive(Args, Debug)]
pub struct WeighArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Client profile whose surfaces are priced.
    #[arg(long, default_value = "claude-cli")]
    pub client: String,
    /// Price card for the one-turn costs. Default: the client's.
    #[arg(long)]
    pub model: Option<String>,
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Budget file.
    #[arg(long, default_value = "toolcost.toml")]
    pub config: PathBuf,
    /// Baseline lock file.
    #[arg(long, default_value = "toolcost.lock.json")]
    pub lock: PathBuf,
    /// Write the current tools as the new baseline and exit.
    #[arg(long)]
    pub update: bool,
    /// table, github (Actions annotations), md (a PR comment) or json.
    #[arg(long, default_value = "table")]
    pub format: String,
}

#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Rows in the per-row projection (0 to 1,000,000).
    #[arg(long, value_name = "N")]
    pub rows: usize,
    /// Calibrated profile: seed-2026-07 or real-mcp.
    #[arg(long, default_value = "seed-2026-07")]
    pub profile: String,
    /// Generator seed: the same seed gives the same catalogue, byte for byte.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Add the profile's share of disabled, hidden and test-shaped rows after the N projected ones.
    #[arg(long)]
    pub inactive: bool,
    /// Output file: .sqlite or .db writes a `directory` table, anything else JSONL. Default: JSONL on stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the catalogue's labelled query set (JSONL) for `search-eval`.
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,
    /// Rows sampled for --queries (two queries each, plus the fixed rows).
    #[arg(long, default_value_t = 200, requires = "queries")]
    pub targets: usize,
}

#[derive(Args, Debug)]
pub struct LintArgs {
    /// A tools/list capture (JSON), JSONL rows, or a SQLite catalogue.
    pub file: PathBuf,
    /// Write the tools/list with every input schema normalised.
    #[arg(long)]
    pub fix: bool,
    /// Where --fix writes (default: stdout).
    #[arg(short, long, value_name = "OUT", requires = "fix")]
    pub output: Option<PathBuf>,
    /// Print the violations as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
#[group(id = "format", multiple = false)]
pub struct FormatArgs {
    /// JSON: an array of result rows.
    #[arg(long, group = "format")]
    pub json: bool,
    /// CSV with a header row.
    #[arg(long, group = "format")]
    pub csv: bool,
    /// A Markdown table.
    #[arg(long, group = "format")]
    pub md: bool,
}

impl FormatArgs {
    fn format(&self) -> OutputFormat {
        if self.json {
            OutputFormat::Json
        } else if self.csv {
            OutputFormat::Csv
        } else if self.md {
            OutputFormat::Markdown
        } else {
            OutputFormat::Table
        }
    }
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["catalogue", "rows", "server"])))]
pub struct MeasureArgs {
    /// A catalogue file: JSONL rows, a SQLite `directory` table, or a tools/list capture.
    #[arg(long, value_name = "FILE")]
    pub catalogue: Option<PathBuf>,
    /// Generate a catalogue of N rows instead.
    #[arg(long, value_name = "N")]
    pub rows: Option<usize>,
    /// Or measure a live MCP server's projection (Streamable HTTP), e.g. http://127.0.0.1:8787/mcp.
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// A header for --server, `Name: value` (repeatable).
    #[arg(long, value_name = "K:V", requires = "server")]
    pub header: Vec<String>,
    /// Catalogue profile: seed-2026-07 or real-mcp.
    #[arg(long, default_value = "seed-2026-07")]
    pub profile: String,
    /// Generator seed: the same seed gives the same catalogue, byte for byte.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Client profile: claude-cli or openai-agent.
    #[arg(long, default_value = "claude-cli")]
    pub client: String,
    /// Price-card model (render rules, prices, context window). Default: the client's.
    #[arg(long)]
    pub model: Option<String>,
    /// `all` or a comma-separated list of surfaces.
    #[arg(long, default_value = "all")]
    pub surface: String,
    /// Comma-separated tokenizers: o200k, cl100k, kimi-est. Default: the model's, o200k, cl100k.
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// The user's message.
    #[arg(long, default_value = measure::DEFAULT_TURN)]
    pub turn: String,
    /// Output tokens assumed for the turn's cost.
    #[arg(long, default_value_t = measure::DEFAULT_OUTPUT_TOKENS)]
    pub output_tokens: u64,
    /// Dispatch endpoint named in the protocol-only instructions.
    #[arg(long, default_value = DEFAULT_ENDPOINT)]
    pub endpoint: String,
    #[command(flatten)]
    pub format: FormatArgs,
    /// Write the results here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Directory for reproduce.md, reproduce.csv and reproduce.json.
    #[arg(long, default_value = "reports/reproduce")]
    pub out: PathBuf,
    #[command(flatten)]
    pub format: FormatArgs,
}

/// Parse the process arguments, run, and return the exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("toolcost: error: {e}");
            2
        }
    }
}

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Generate(a) => generate(a),
        Command::Lint(a) => run_lint(a),
        Command::Measure(a) => run_measure(a),
        Command::Reproduce(a) => run_reproduce(a),
        Command::Weigh(a) => run_weigh(a),
        Command::Check(a) => run_check(a),
        Command::Serve(a) => run_serve(a),
        Command::Gateway(a) => run_gateway(a),
        Command::Run(a) => run_scenario(a),
        Command::SearchEval(a) => run_search_eval(a),
        Command::Sweep(a) => run_sweep(a),
        Command::Report(a) => run_report(a),
    }
}

fn run_scenario(a: RunArgs) -> Result<i32> {
    let scenario = crate::driver::scenario::Scenario::read(&a.scenario)?;
    let total = (scenario.catalogue.rows.len()
        * scenario.run.surfaces.len()
        * scenario.run.tasks.len()) as u64;
    let bar = progress(total, "playing");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::input(format!("could not start the async runtime: {e}")))?;
    let results = runtime.block_on(crate::driver::run(&scenario, &|id| {
        bar.set_message(id.to_string());
        bar.inc(1);
    }))?;
    bar.finish_and_clear();
    let bytes = report::render(a.format.format(), &results);
    match &a.output {
        Some(path) => report::write_atomic(path, &bytes)?,
        None => std::io::stdout()
            .write_all(&bytes)
            .map_err(|e| Error::io("<stdout>", e))?,
    }
    Ok(0)
}

fn run_report(a: ReportArgs) -> Result<i32> {
    let out = a.out.clone().unwrap_or_else(|| {
        let stem = a
            .log
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "gateway".into());
        PathBuf::from("reports").join(format!("log-{stem}"))
    });
    let (rows, files) = crate::sweep::logs::report_log(&a.log, &out)?;
    std::io::stdout()
        .write_all(&report::render(a.format.format(), &rows))
        .map_err(|e| Error::io("<stdout>", e))?;
    eprintln!(
        "toolcost report: wrote {} files to {}",
        files.len(),
        out.display()
    );
    Ok(0)
}

fn run_sweep(a: SweepArgs) -> Result<i32> {
    let cfg = crate::sweep::config::from_args(&a)?;
    let bar = progress(crate::sweep::steps(&cfg), "sweeping");
    bar.enable_steady_tick(std::time::Duration::from_millis(250));
    let outcome = crate::sweep::run(&cfg, &|done, total, what| {
        bar.set_length(total);
        bar.set_position(done);
        bar.set_message(what.to_string());
    })?;
    bar.finish_and_clear();
    std::io::stdout()
        .write_all(&report::render(a.format.format(), &outcome.rows))
        .map_err(|e| Error::io("<stdout>", e))?;
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

fn run_search_eval(a: SearchEvalArgs) -> Result<i32> {
    use crate::discovery::{eval::Method, report as dr};
    let methods = a
        .resolver
        .split(',')
        .map(|m| Method::parse(m.trim()))
        .collect::<Result<Vec<_>>>()?;
    let source = match (&a.catalogue, &a.queries) {
        (Some(c), Some(q)) => dr::Source::Files {
            catalogue: c.clone(),
            queries: q.clone(),
        },
        _ => {
            for &n in &a.rows {
                crate::error::check_rows(n)?;
            }
            dr::Source::Generated {
                profile: a.profile.clone(),
                seed: a.seed,
                rows: a.rows.clone(),
                targets: a.targets,
            }
        }
    };
    let bar = ProgressBar::new_spinner();
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let written = dr::run(
        &dr::Config {
            source,
            methods,
            out: a.out.clone(),
        },
        &|m| bar.set_message(m.to_string()),
    )?;
    bar.finish_and_clear();
    let mut out = std::io::stdout();
    out.write_all(&report::render(a.format.format(), &written.scores))
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.write_all(&report::render(a.format.format(), &written.costs)))
        .map_err(|e| Error::io("<stdout>", e))?;
    eprintln!("toolcost search-eval: wrote {}", a.out.display());
    Ok(0)
}

fn run_gateway(a: GatewayArgs) -> Result<i32> {
    let upstream = match a.upstream.as_str() {
        "mock" => crate::gateway::Upstream::Mock,
        url if url.starts_with("http://") || url.starts_with("https://") => {
            crate::gateway::Upstream::Url(url.to_string())
        }
        other => {
            return Err(Error::input(format!(
                "--upstream {other}: expected `mock` or a provider base URL"
            )))
        }
    };
    let api_key = match &a.api_key_env {
        Some(name) => Some(crate::error::env_secret("--api-key-env", name)?),
        None => None,
    };
    let gw = crate::gateway::Gateway::new(crate::gateway::Options {
        upstream,
        api_key,
        log: a.log.clone(),
        timeout: std::time::Duration::from_secs(a.timeout),
        max_body: crate::gateway::DEFAULT_MAX_BODY,
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::input(format!("could not start the async runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&a.listen)
            .await
            .map_err(|e| Error::input(format!("--listen {}: {e}", a.listen)))?;
        eprintln!(
            "toolcost gateway: http://{} -> {}; log {}",
            listener
                .local_addr()
                .map(|x| x.to_string())
                .unwrap_or_default(),
            a.upstream,
            a.log.display()
        );
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        crate::gateway::run(listener, gw, shutdown)
            .await
            .map_err(|e| Error::input(format!("gateway: {e}")))
    })?;
    Ok(0)
}

fn run_serve(a: ServeArgs) -> Result<i32> {
    let rows = match (&a.catalogue, a.rows) {
        (Some(path), _) => Some(Catalogue::load(path)?.rows),
        (None, Some(n)) => Some(
            Generator::new(
                Profile::named(&a.profile)?,
                crate::error::check_rows(n)?,
                a.seed,
                a.inactive,
            )
            .collect(),
        ),
        (None, None) if a.db.as_ref().is_some_and(|p| p.exists()) => None,
        (None, None) => {
            return Err(Error::input(
                "give --catalogue FILE, --rows N, or --db FILE holding a directory",
            ))
        }
    };
    let token = match &a.token_env {
        Some(name) => Some(crate::error::env_secret("--token-env", name)?),
        None => None,
    };
    let opts = crate::server::Options {
        rows,
        db: a.db.clone(),
        token,
        allowlist: a.allow_host.clone(),
        max_body: a.max_body,
    };
    let state = crate::server::state(&opts)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::input(format!("could not start the async runtime: {e}")))?;
    runtime.block_on(async move {
        if a.stdio {
            let name = match (a.small, a.code) {
                (true, _) => "small-mcp",
                (_, true) => "code-mode",
                _ => a.stdio_surface.as_str(),
            };
            let surface = SurfaceKind::parse(name)?;
            let endpoint = surface.endpoint().ok_or_else(|| {
                Error::input(format!(
                    "--surface {name}: this surface has no MCP endpoint of its own; serve one of {}",
                    crate::surface::REGISTRY
                        .iter()
                        .filter(|s| s.endpoint().is_some())
                        .map(|s| s.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            return crate::server::run_stdio(state, endpoint).await;
        }
        let listener = tokio::net::TcpListener::bind(&a.listen)
            .await
            .map_err(|e| Error::input(format!("--listen {}: {e}", a.listen)))?;
        let addr = listener.local_addr().map_err(|e| Error::input(e.to_string()))?;
        let snap = state.snapshot();
        eprintln!(
            "toolcost serve: {} rows ({} projected) on http://{addr}: /api/dispatch, {}; store {}; {}",
            snap.rows.len(),
            snap.catalogue.tools.len(),
            crate::server::endpoints().iter().map(|e| e.path).collect::<Vec<_>>().join(", "),
            a.db.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "in memory".into()),
            if state.token.is_some() { "token required for calls" } else { "no token: calls and changes are refused" }
        );
        drop(snap);
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
            eprintln!("toolcost serve: shutting down");
        };
        crate::server::run(listener, state, a.max_body, shutdown).await.map_err(|e| Error::input(format!("server: {e}")))
    })?;
    Ok(0)
}

/// Load a target's tools: from a file, or from a live server over stdio or HTTP.
pub fn load_target(t: &TargetArgs) -> Result<(Catalogue, Vec<String>)> {
    if let Some(path) = &t.file {
        return Ok((Catalogue::load(path)?, Vec::new()));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::input(format!("could not start the async runtime: {e}")))?;
    runtime.block_on(fetch_target(t))
}

/// The live part of [`load_target`], for callers already inside a runtime.
pub async fn fetch_target(t: &TargetArgs) -> Result<(Catalogue, Vec<String>)> {
    if let Some(path) = &t.file {
        return Ok((Catalogue::load(path)?, Vec::new()));
    }
    let timeout = std::time::Duration::from_secs(t.timeout);
    let (label, listing) = if let Some(url) = &t.url {
        let mut ch = mcp::Http::new(url, &t.header)?;
        (url.clone(), mcp::list_tools(&mut ch, timeout).await?)
    } else if !t.command.is_empty() {
        let mut ch = mcp::Stdio::spawn(&t.command)?;
        (
            t.command.join(" "),
            mcp::list_tools(&mut ch, timeout).await?,
        )
    } else {
        return Err(Error::input(
            "name the server: --file FILE, --url URL, or -- COMMAND ARGS...",
        ));
    };
    let server: String = listing
        .server_name
        .as_deref()
        .unwrap_or("server")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut notes = listing.notes.clone();
    notes.insert(
        0,
        format!(
            "{} page(s) of tools/list, protocol {}",
            listing.pages,
            listing.protocol_version.as_deref().unwrap_or("?")
        ),
    );
    Ok((capture::catalogue(label, server, listing.tools), notes))
}

fn run_weigh(a: WeighArgs) -> Result<i32> {
    let client = Client::named(&a.client)?;
    let model = PriceCard::named(a.model.as_deref().unwrap_or(&client.model))?;
    let (cat, notes) = load_target(&a.target)?;
    let w = weigh::weigh(&cat, &client, &model, notes)?;
    std::io::stdout()
        .write_all(&weigh::render(&w, a.format.format()))
        .map_err(|e| Error::io("<stdout>", e))?;
    Ok(0)
}

fn run_check(a: CheckArgs) -> Result<i32> {
    let format = check::Format::parse(&a.format)?;
    let config = if a.config.exists() {
        check::Config::read(&a.config)?
    } else if a.config == Path::new("toolcost.toml") {
        check::Config::default()
    } else {
        return Err(Error::input(format!(
            "{}: no such budget file",
            a.config.display()
        )));
    };
    let tok = config.tokenizer()?;
    let target = if a.target.given() {
        a.target.clone()
    } else {
        let src = config.source.clone().ok_or_else(|| {
            Error::input("name what to check: --catalogue FILE, --url URL or -- COMMAND, or a [source] table in toolcost.toml")
        })?;
        let base = a.config.parent().unwrap_or(Path::new("."));
        TargetArgs {
            file: src.catalogue.map(|c| base.join(c)),
            url: src.url,
            command: src.command.unwrap_or_default(),
            ..a.target.clone()
        }
    };
    let (cat, _) = load_target(&target)?;
    let current = check::Lock::of(&cat, tok);
    if a.update {
        report::write_atomic(&a.lock, current.to_json().as_bytes())?;
        println!(
            "wrote {}: {} tools, {} bytes, {} {} tokens",
            a.lock.display(),
            current.tools.len(),
            current.total_bytes,
            current.total_tokens,
            current.tokenizer
        );
        return Ok(0);
    }
    let baseline = check::Lock::read(&a.lock)?;
    let outcome = check::check(&current, &baseline, &config.budget)?;
    print!("{}", check::render(&outcome, &cat.source, format));
    Ok(if outcome.passed() { 0 } else { 1 })
}

fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({eta})")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

fn generate(a: GenerateArgs) -> Result<i32> {
    crate::error::check_rows(a.rows)?;
    if a.queries.is_some() && a.inactive {
        return Err(Error::input(
            "--queries labels the projected rows; generate it without --inactive",
        ));
    }
    let profile = Profile::named(&a.profile)?;
    let gen = Generator::new(profile, a.rows, a.seed, a.inactive);
    let bar = if gen.len() >= 20_000 {
        progress(gen.len() as u64, "generating")
    } else {
        ProgressBar::hidden()
    };
    let rows = gen.inspect(|_| bar.inc(1));
    match &a.output {
        None => {
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            for r in rows {
                jsonl::write_row(&mut out, &r)?;
            }
            out.flush().map_err(|e| Error::io("<stdout>", e))?;
        }
        Some(path) if is_sqlite(path) => {
            let tmp = temp_sibling(path);
            let result = (|| {
                let mut conn = rusqlite::Connection::open(&tmp)?;
                store::write_directory_owned(&mut conn, rows)?;
                drop(conn);
                std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
            })();
            if result.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            result?;
        }
        Some(path) => {
            let tmp = temp_sibling(path);
            let result = (|| {
                let f = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
                let mut out = BufWriter::new(f);
                for r in rows {
                    jsonl::write_row(&mut out, &r)?;
                }
                out.flush().map_err(|e| Error::io(&tmp, e))?;
                std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
            })();
            if result.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            result?;
        }
    }
    bar.finish_and_clear();
    if let Some(path) = &a.queries {
        let (_, queries) = crate::discovery::queries::generate(
            Profile::named(&a.profile)?,
            a.rows,
            a.seed,
            a.targets,
        )?;
        crate::discovery::queries::write(path, &queries)?;
    }
    Ok(0)
}

fn is_sqlite(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("sqlite" | "sqlite3" | "db")
    )
}

fn temp_sibling(path: &Path) -> PathBuf {
    let name = path.file_name().and_then(|f| f.to_str()).unwrap_or("out");
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

fn run_lint(a: LintArgs) -> Result<i32> {
    let cat = Catalogue::load(&a.file)?;
    let reports = lint::lint(&cat);
    if a.fix {
        let fixed = lint::fixed_tools_list(&cat);
        match &a.output {
            Some(path) => report::write_atomic(path, fixed.as_bytes())?,
            None => print!("{fixed}"),
        }
        eprint!("{}", lint::text(&cat, &reports));
        return Ok(0);
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&reports).expect("serialises")
        );
    } else {
        print!("{}", lint::text(&cat, &reports));
    }
    Ok(if reports.is_empty() { 0 } else { 1 })
}

/// Build the validated measurement config from the arguments.
pub fn measure_config(a: &MeasureArgs) -> Result<(CatalogueSource, measure::Config)> {
    let client = Client::named(&a.client)?;
    let model = PriceCard::named(a.model.as_deref().unwrap_or(&client.model))?;
    let surfaces = SurfaceKind::parse_list(&a.surface)?;
    let tokenizers = match &a.tokenizer {
        Some(list) => list
            .split(',')
            .map(Tokenizer::parse)
            .collect::<Result<Vec<_>>>()?,
        None => {
            let mut t = vec![model.tokenizer()];
            for x in [Tokenizer::O200k, Tokenizer::Cl100k] {
                if !t.contains(&x) {
                    t.push(x);
                }
            }
            t
        }
    };
    let source = match (&a.catalogue, a.rows) {
        _ if a.server.is_some() => CatalogueSource::Server {
            url: a.server.clone().unwrap_or_default(),
            headers: a.header.clone(),
        },
        (Some(path), _) => CatalogueSource::File(path.clone()),
        (None, Some(rows)) => {
            crate::error::check_rows(rows)?;
            Profile::named(&a.profile)?;
            CatalogueSource::Generated {
                rows,
                profile: a.profile.clone(),
                seed: a.seed,
            }
        }
        (None, None) => return Err(Error::input("give --catalogue FILE or --rows N")),
    };
    let cfg = measure::Config {
        client,
        model,
        surfaces,
        tokenizers,
        turn: a.turn.clone(),
        output_tokens: a.output_tokens,
        endpoint: a.endpoint.clone(),
    };
    Ok((source, cfg))
}

fn run_measure(a: MeasureArgs) -> Result<i32> {
    let (source, cfg) = measure_config(&a)?;
    let cat = source.load()?;
    let bar = if cat.tools.len() >= 5_000 {
        progress(cfg.surfaces.len() as u64, "measuring")
    } else {
        ProgressBar::hidden()
    };
    let rows = measure::measure(&cat, &cfg, &|s| {
        bar.set_message(format!("measured {s}"));
        bar.inc(1);
    });
    bar.finish_and_clear();
    let bytes = report::render(a.format.format(), &rows);
    match &a.output {
        Some(path) => report::write_atomic(path, &bytes)?,
        None => std::io::stdout()
            .write_all(&bytes)
            .map_err(|e| Error::io("<stdout>", e))?,
    }
    for w in rows
        .iter()
        .flat_map(|r| r.warnings.iter().map(move |w| (r, w)))
    {
        eprintln!(
            "toolcost: warning: {} ({}): {}",
            w.0.surface, w.0.tokenizer, w.1
        );
    }
    Ok(0)
}

fn run_reproduce(a: ReproduceArgs) -> Result<i32> {
    let r = reproduce::reproduce()?;
    reproduce::write(&r, &a.out)?;
    let bytes = report::render(a.format.format(), &r.rows);
    std::io::stdout()
        .write_all(&bytes)
        .map_err(|e| Error::io("<stdout>", e))?;
    if a.format.format() == OutputFormat::Table {
        println!(
            "\nkimi-est = o200k x {} (fitted from the recorded 157.8 tokens per definition; re-fitted now: {:.4}). Written to {}/",
            crate::tokens::KIMI_PER_O200K,
            r.fit.kimi_per_o200k,
            a.out.display()
        );
    }
    Ok(0)
}
