//! `toolcost sweep`: one user turn measured over a grid (N x surface x tokenizer x client),
//! optionally whole tasks played through the gateway, aggregated into tables and plots under
//! `reports/<name>/`. Result files are created first and rewritten after every catalogue size,
//! so a sweep stopped midway leaves valid, partial files.

pub mod charts;
pub mod config;
pub mod frame;
pub mod logs;
pub mod plot;
pub mod summary;
mod tool_changes;

use crate::catalogue::{generate::Generator, profile::Profile, Catalogue};
use crate::client::Client;
use crate::driver::{self, scenario::Scenario, TaskResult};
use crate::error::{Error, Result};
use crate::measure::{self, MeasureRow};
use crate::pricing::PriceCard;
use crate::report::{self, Column, Tabular};
use crate::surface::{SurfaceKind, DEFAULT_ENDPOINT};
use crate::tokens::Tokenizer;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Turns a day and days a month in the published monthly figure (the published measurement).
pub const TURNS_PER_DAY: u64 = 200;
pub const DAYS: u64 = 30;

/// A validated sweep.
#[derive(Debug, Clone)]
pub struct Config {
    pub name: String,
    pub about: String,
    pub profile: String,
    pub seed: u64,
    pub rows: Vec<usize>,
    pub surfaces: Vec<SurfaceKind>,
    /// The tokenizers each client's rows are counted with (those meaningful for its model);
    /// empty: each model's own.
    pub tokenizers: Vec<Tokenizer>,
    pub clients: Vec<Client>,
    pub turns_per_day: u64,
    pub days: u64,
    /// Whole tasks to play, as a driver scenario.
    pub tasks: Option<Scenario>,
    pub out: PathBuf,
    /// What the scenario asks for that the sweep does not use, each said before it runs.
    pub ignored: Vec<String>,
}

/// One surface x tokenizer x client at one N: the documented row of `results.csv` and
/// `results.json`. Token figures are `estimated:<tokenizer>`; cost, ratio and marginal figures
/// are `derived` from them and the client's price card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepRow {
    pub surface: String,
    pub client: String,
    /// The price card whose render rules and prices apply.
    pub model: String,
    pub tokenizer: String,
    /// Catalogue size N.
    pub rows: usize,
    /// Catalogue definitions the model sees in full.
    pub definitions_in_context: usize,
    /// Entries in the request's tools array, client built-ins included.
    pub tools_in_request: usize,
    /// Bytes of the round-one request body (exact).
    pub wire_bytes: u64,
    /// Billed input tokens of one turn.
    pub input_tokens: u64,
    /// input_tokens / protocol-only's input_tokens at the same N, client and tokenizer.
    pub ratio_to_protocol_only: Option<f64>,
    /// (input_tokens(N) - input_tokens(0)) / N; empty at N = 0.
    pub marginal_tokens_per_definition: Option<f64>,
    /// Dollars per turn with a warm prompt cache; empty when the provider refuses the request.
    pub cost_usd: Option<f64>,
    /// Dollars per turn with nothing cached; empty when refused.
    pub cost_usd_cold: Option<f64>,
    /// cost_usd x turns a day x days; empty when refused.
    pub cost_per_month_usd: Option<f64>,
    /// Evidence label of the token figures.
    pub label: String,
    /// Evidence label of the dollar figures: derived, from which tokens and which price card.
    pub cost_label: String,
    /// The cache rule and where the client puts its marks.
    pub cache: String,
    /// Whether the provider refuses this request (HTTP 400); the reasons are in `warnings`.
    pub refused: bool,
    /// Provider limits this request crosses, `; `-separated.
    pub warnings: String,
}

impl Tabular for SweepRow {
    const COLUMNS: &'static [Column] = &[
        Column::field("ratio_to_protocol_only").places(3),
        Column::field("marginal_tokens_per_definition").places(2),
        Column::field("cost_usd").places(8),
        Column::field("cost_usd_cold").places(8),
        Column::field("cost_per_month_usd").places(2),
        Column::field("refused").flag("REFUSED"),
        Column::field("warnings").title("why refused, or limits crossed"),
    ];
    const BRIEF: &'static [&'static str] = &[
        "surface",
        "client",
        "tokenizer",
        "rows",
        "refused",
        "wire_bytes",
        "input_tokens",
        "ratio_to_protocol_only",
        "marginal_tokens_per_definition",
        "cost_per_month_usd",
        "label",
        "warnings",
    ];
    const NOTES: &'static [&'static str] = &["warnings"];
    const CONTEXT: &'static [&'static str] = &["model"];
}

/// What a sweep produced.
pub struct Outcome {
    pub rows: Vec<SweepRow>,
    pub tasks: Vec<TaskResult>,
    pub files: Vec<PathBuf>,
}

/// Hears each finished step: (steps done, steps in all, what finished).
pub type Progress<'a> = &'a (dyn Fn(u64, u64, &str) + Sync);

/// The grid's step count: one per N x client, plus one per task run.
pub fn steps(cfg: &Config) -> u64 {
    let tasks = cfg
        .tasks
        .as_ref()
        .map(|s| {
            s.catalogue.rows.len()
                * s.client_names().len()
                * s.run.surfaces.len()
                * s.run.tasks.len()
                * s.run.policies.len()
        })
        .unwrap_or(0);
    (cfg.rows.len() * cfg.clients.len() + tasks) as u64
}

/// The tokenizers that mean something for a price card: the Claude estimates and the open
/// families' vocabularies count their own models only, so another family's card (gpt-4o's
/// rendering, say) is not counted with them.
pub fn meaningful_tokenizers(tokenizers: &[Tokenizer], card: &PriceCard) -> Vec<Tokenizer> {
    tokenizers
        .iter()
        .copied()
        .filter(|&t| match t {
            Tokenizer::ClaudeEst
            | Tokenizer::ClaudeLegacyEst
            | Tokenizer::Kimi
            | Tokenizer::Deepseek
            | Tokenizer::Qwen
            | Tokenizer::Glm
            | Tokenizer::Llama3
            | Tokenizer::Llama4
            | Tokenizer::Mistral
            | Tokenizer::MistralSpm1
            | Tokenizer::MistralSpm3
            | Tokenizer::MistralSpm7 => card.tokenizer() == t,
            // A Claude family counts Claude's cards (the family of the card's own model or
            // another's: the same rendering applies).
            Tokenizer::ClaudeV3 | Tokenizer::ClaudeV4_7 | Tokenizer::ClaudeV5 => {
                card.render.starts_with("anthropic")
            }
            // Gemma 3 stands in for Gemini's tokenizer only.
            Tokenizer::Gemma3 => {
                card.render.starts_with("gemini") || card.render.starts_with("vertex")
            }
            Tokenizer::O200k | Tokenizer::Cl100k => true,
        })
        .collect()
}

/// Run the sweep and write every file.
pub fn run(cfg: &Config, progress: Progress) -> Result<Outcome> {
    // Each client's price card, looked up once: it prices the measurements, and its context
    // window and provider limit go on the charts.
    let clients: Vec<charts::ClientLimits> = cfg
        .clients
        .iter()
        .map(|c| {
            Ok(charts::ClientLimits {
                client: c.name.clone(),
                format: c.format,
                card: PriceCard::named(&c.model)?,
            })
        })
        .collect::<Result<_>>()?;
    // A tokenizer installed apart (Llama 4's) is checked before anything is written: the ones
    // named, or else each model's own.
    match cfg.tokenizers.is_empty() {
        true => clients
            .iter()
            .try_for_each(|c| c.card.tokenizer().ready())?,
        false => cfg.tokenizers.iter().try_for_each(|t| t.ready())?,
    }
    std::fs::create_dir_all(&cfg.out).map_err(|e| Error::io(&cfg.out, e))?;
    let total = steps(cfg);
    let mut done = 0u64;
    let mut measured: Vec<MeasureRow> = Vec::new();
    let mut rows: Vec<SweepRow> = Vec::new();
    let results = report::write_csv_json(&cfg.out, "results", &rows)?;
    let mut sorted = cfg.rows.clone();
    sorted.sort_unstable();
    sorted.dedup();
    // Bytes per definition, plotted for N=856 when the sweep has it, else the largest N up to
    // 8,560, else whatever N there is.
    let mut per_def: Option<(usize, Vec<usize>)> = None;
    for &n in &sorted {
        let generated: Vec<_> =
            Generator::new(Profile::named(&cfg.profile)?, n, cfg.seed, false).collect();
        let cat = Catalogue::from_rows(format!("{} N={n}", cfg.profile), generated);
        for (client, limits) in cfg.clients.iter().zip(&clients) {
            let mcfg = measure::Config {
                client: client.clone(),
                model: limits.card.clone(),
                surfaces: cfg.surfaces.clone(),
                tokenizers: match cfg.tokenizers.is_empty() {
                    true => vec![limits.card.tokenizer()],
                    false => meaningful_tokenizers(&cfg.tokenizers, &limits.card),
                },
                turn: measure::DEFAULT_TURN.into(),
                output_tokens: measure::DEFAULT_OUTPUT_TOKENS,
                endpoint: DEFAULT_ENDPOINT.into(),
            };
            measured.extend(measure::measure(&cat, &mcfg, &|_| {}));
            done += 1;
            progress(done, total, &format!("N={n} {}", client.name));
        }
        rows = frame::enrich(&measured, cfg.turns_per_day * cfg.days)?;
        report::write_csv_json(&cfg.out, "results", &rows)?;
        let keep = match &per_def {
            _ if n == 0 => false,
            None => true,
            Some((m, _)) => *m != 856 && (n == 856 || n <= 8_560),
        };
        if keep {
            per_def = Some((n, cat.tools.iter().map(|t| t.bytes()).collect()));
        }
    }
    let mut tasks = Vec::new();
    let mut task_files = Vec::new();
    if let Some(s) = &cfg.tasks {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::input(format!("could not start the async runtime: {e}")))?;
        let counter = std::sync::atomic::AtomicU64::new(done);
        tasks = runtime.block_on(driver::run(s, &|id| {
            let d = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(d, total, id);
        }))?;
        task_files = report::write_csv_json(&cfg.out, "tasks", &tasks)?.to_vec();
    }
    let mut files = results.to_vec();
    files.extend(charts::sweep_plots(
        &cfg.out,
        &rows,
        per_def.as_ref(),
        &tasks,
        &clients,
        (cfg.turns_per_day, cfg.days),
    )?);
    files.extend(task_files);
    let md = summary::sweep(cfg, &rows, &tasks, &clients)?;
    report::write_atomic(&cfg.out.join("summary.md"), md.as_bytes())?;
    files.push(cfg.out.join("summary.md"));
    Ok(Outcome { rows, tasks, files })
}

/// Read a sweep's `results.json` back.
pub fn read_results(path: &Path) -> Result<Vec<SweepRow>> {
    let bytes = crate::input::read(path, crate::input::LARGE)?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::input(format!("{}: not a sweep results file: {e}", path.display())))
}
