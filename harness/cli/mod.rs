//! The command line: clap definitions, one validated config per command, exit codes.
//! Exit status: 0 success, 1 findings (lint violations), 2 errors.
//!
//! Each command lives in its own file with its arguments and its `run`; the argument groups
//! several commands share (generator profile and seed, output format, the server to list) are
//! declared here once and flattened in. Clap types stay in this folder: each command converts
//! its arguments into the plain config types of the module that does the work.

mod audit;
mod calibrate;
mod check;
mod claude_counts;
mod count;
mod gateway;
mod gemini_counts;
mod generate;
mod lint;
mod measure;
mod prices;
mod profile;
mod replay;
mod report;
mod reproduce;
mod run;
mod search_eval;
mod serve;
mod sweep;
mod weigh;

pub use audit::AuditArgs;
pub use calibrate::CalibrateArgs;
pub use check::CheckArgs;
pub use claude_counts::ClaudeCountsArgs;
pub use gateway::GatewayArgs;
pub use gemini_counts::GeminiCountsArgs;
pub use generate::GenerateArgs;
pub use lint::LintArgs;
pub use measure::{measure_config, MeasureArgs};
pub use prices::PricesArgs;
pub use report::ReportArgs;
pub use reproduce::ReproduceArgs;
pub use run::RunArgs;
pub use search_eval::SearchEvalArgs;
pub use serve::ServeArgs;
pub use sweep::SweepArgs;
pub use weigh::WeighArgs;

use crate::error::{Error, Result};
use crate::mcp::Target;
use crate::report::{write_atomic, OutputFormat};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "toolcost",
    version,
    about = "Measure what it costs to show a catalogue of tool capabilities to a language model",
    long_about = "Measure what it costs to show a catalogue of tool capabilities to a language model, \
and how that cost grows with the catalogue. toolcost builds the exact request each surface sends \
(per-row MCP, per-row MCP with trimmed definitions, deferred search and its namespace form, \
protocol-only HTTP, a small MCP surface, a name list, code mode, and the providers' own tool \
changes: name-list-native, programmatic, allowed-tools, additional-tools), \
counts its wire bytes and billed input tokens, and prices them.\n\n\
Every figure carries an evidence label: recorded (published elsewhere), observed (returned by a \
real provider or server), estimated:<tokenizer> (counted here), calibrated:<fit> (depends on a \
constant fitted to a recorded figure), simulated (decided by the driver's scripted model), derived \
(arithmetic on the others)."
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
    /// A client profile from a request the gateway captured (`--log-bodies`), for
    /// `--client-profile`: your own client's system prompt and built-in tools, measured exactly.
    Profile(profile::ProfileArgs),
    /// The published measurement (one catalogue, three exposures, Kimi K2.7 Code) beside
    /// toolcost's figures, counted with Kimi's own tokenizer and template.
    Reproduce(ReproduceArgs),
    /// The tokens of a text under a model's tokenizer; --request: the billed input tokens of a
    /// request body, with what they are made of.
    Count(count::CountArgs),
    /// What a server's tools cost: per-tool bytes and tokens, marginal tokens, one turn per surface.
    Weigh(WeighArgs),
    /// The MCP servers your hosts are configured with (Claude Code, Claude Desktop, Cursor, VS
    /// Code, Windsurf, Codex, Gemini CLI), weighed per server and tool as each host shows them.
    Audit(AuditArgs),
    /// Fail CI when tool definitions outgrow the budget in toolcost.toml or the baseline lock.
    Check(CheckArgs),
    /// Run the reference dispatch server: HTTP protocol and an MCP endpoint per surface (per-row, trimmed per-row, small, code mode).
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
    /// A gateway log's sessions (`--log-bodies`) priced as sent, with every definition up
    /// front, all deferred, and with the set worth keeping loaded; --emit writes that set.
    Replay(replay::ReplayArgs),
    /// How far toolcost's estimates are from a provider's observed usage, per model, from a
    /// forward-mode gateway log; --out writes the corrections `measure --calibration` applies.
    Calibrate(CalibrateArgs),
    /// The price cards, and `prices update --from FILE`: refresh their LiteLLM price snapshot.
    Prices(PricesArgs),
    /// Claude's recorded token counts of real MCP servers beside toolcost's count with Claude's
    /// own tokenizer (exact where the family's vocabulary is known), the claude-est estimate
    /// and its error; --requests checks whole recorded requests; --out writes the report.
    ClaudeCounts(ClaudeCountsArgs),
    /// Gemini's recorded token counts (Google's docs and samples) beside toolcost's Gemini
    /// estimate (the Gemma 3 vocabulary, embedded); --out writes the report.
    GeminiCounts(GeminiCountsArgs),
}

/// Parse the process arguments, run, and return the exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("toolcost: error: {}", crate::secret::redact(&e.to_string()));
            2
        }
    }
}

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Generate(a) => generate::run(a),
        Command::Lint(a) => lint::run(a),
        Command::Measure(a) => measure::run(a),
        Command::Profile(a) => profile::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Reproduce(a) => reproduce::run(a),
        Command::Count(a) => count::run(a),
        Command::Weigh(a) => weigh::run(a),
        Command::Audit(a) => audit::run(a),
        Command::Check(a) => check::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Gateway(a) => gateway::run(a),
        Command::Run(a) => run::run(a),
        Command::SearchEval(a) => search_eval::run(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Report(a) => report::run(a),
        Command::Calibrate(a) => calibrate::run(a),
        Command::Prices(a) => prices::run(a),
        Command::ClaudeCounts(a) => claude_counts::run(a),
        Command::GeminiCounts(a) => gemini_counts::run(a),
    }
}

/// The generator's profile and seed, for every command that generates a catalogue. (`--rows`
/// stays with each command: one number, an optional one or a list.)
#[derive(Args, Debug, Clone)]
pub struct GeneratorArgs {
    /// Catalogue profile: seed-2026-07 or real-mcp.
    #[arg(long, default_value = "seed-2026-07")]
    pub profile: String,
    /// Generator seed: the same seed gives the same catalogue, byte for byte.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// The output format of a command that prints result rows.
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

/// Where a server's tools come from.
#[derive(Args, Debug, Clone, Default)]
pub struct TargetArgs {
    /// A tools/list capture (JSON), JSONL rows or a SQLite catalogue.
    #[arg(long, alias = "catalogue", value_name = "FILE", conflicts_with_all = ["url", "command"])]
    pub file: Option<PathBuf>,
    /// A Streamable HTTP MCP endpoint (http://host:port/mcp or https://...).
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// A header sent with every HTTP request, `Name: value` (repeatable).
    #[arg(long, value_name = "K:V", requires = "url")]
    pub header: Vec<String>,
    /// Seconds the server has to answer initialize and every tools/list page.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// The longest line a stdio server may print (or HTTP answer it may send), in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::mcp::DEFAULT_MAX_LINE)]
    pub max_line: usize,
    /// The most tools a server may list; more is an error rather than a silent cut.
    #[arg(long, value_name = "N", default_value_t = crate::mcp::DEFAULT_MAX_TOOLS)]
    pub max_tools: usize,
    /// A PEM file of root certificates to trust for an https server (SSL_CERT_FILE is read too).
    #[arg(long, value_name = "FILE", requires = "url")]
    pub ca_cert: Option<PathBuf>,
    /// The MCP protocol version to speak (2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26 or
    /// 2024-11-05). Default: over HTTP the stateless 2026-07-28 when the server answers
    /// server/discover, else the newest initialize settles on; over stdio initialize.
    #[arg(long, value_name = "VERSION")]
    pub protocol: Option<String>,
    /// A stdio server to start: everything after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

impl TargetArgs {
    fn given(&self) -> bool {
        self.file.is_some() || self.url.is_some() || !self.command.is_empty()
    }

    /// The target named: a file first, then a URL, then a command.
    fn target(&self) -> Result<Target> {
        let timeout = Duration::from_secs(self.timeout);
        let opts = crate::mcp::Options {
            max_line: self.max_line,
            max_tools: self.max_tools,
            ca_cert: self.ca_cert.clone(),
            protocol: None,
        }
        .with_protocol(self.protocol.as_deref())?;
        if let Some(path) = &self.file {
            Ok(Target::File(path.clone()))
        } else if let Some(url) = &self.url {
            Ok(Target::Http {
                url: url.clone(),
                headers: self.header.clone(),
                timeout,
                opts,
            })
        } else if !self.command.is_empty() {
            Ok(Target::Command {
                argv: self.command.clone(),
                launch: crate::mcp::Launch::default(),
                timeout,
                opts,
            })
        } else {
            Err(Error::input(
                "name the server: --file FILE, --url URL, or -- COMMAND ARGS...",
            ))
        }
    }
}

/// Hand what loading freed (a file's text, parse trees) back to the system before the work
/// that follows, rather than keep it resident: after loading an 85,600-tool capture, 250 MB
/// resident fell to 190 MB (observed on this project's 2-core machine).
fn release_freed() {
    crate::sync::release_freed();
}

/// A progress bar on stderr for a run of `len` steps.
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

/// A multi-threaded runtime for the commands that serve or play.
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::input(format!("could not start the async runtime: {e}")))
}

/// Write bytes to stdout. A reader that went away (`| head`) ends the output quietly, as
/// Unix tools do.
fn print_bytes(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|e| Error::io("<stdout>", e)),
    }
}

/// Write bytes to `--output FILE` (atomically) or, without one, to stdout.
fn emit(output: Option<&Path>, bytes: &[u8]) -> Result<()> {
    match output {
        Some(path) => write_atomic(path, bytes),
        None => print_bytes(bytes),
    }
}
