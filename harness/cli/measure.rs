//! `toolcost measure`: one user turn on each surface of one catalogue.

use super::{emit, progress, FormatArgs, GeneratorArgs};
use crate::calibrate::Calibration;
use crate::catalogue::generate::check_rows;
use crate::catalogue::profile::Profile;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::measure::{self, CatalogueSource};
use crate::pricing::PriceCard;
use crate::report;
use crate::surface::{SurfaceKind, DEFAULT_ENDPOINT};
use crate::tokens::Tokenizer;
use clap::Args;
use indicatif::ProgressBar;
use std::path::PathBuf;

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
    #[command(flatten)]
    pub generator: GeneratorArgs,
    /// Client profile: claude-cli, gemini-cli, openai-agent or openai-responses-agent.
    /// Default: the one that speaks the --model's API: gemini-cli for Gemini,
    /// openai-responses-agent for OpenAI, else claude-cli.
    #[arg(long, conflicts_with = "client_profile")]
    pub client: Option<String>,
    /// A client profile file (`toolcost profile --from-log`): your own client, as captured.
    /// Its model is the default card, its captured turn the default turn.
    #[arg(long, value_name = "PROFILE.json")]
    pub client_profile: Option<PathBuf>,
    /// Price-card model (render rules, prices, context window). Default: the client's.
    #[arg(long)]
    pub model: Option<String>,
    /// The client's tool search (claude-cli): `on` sends the built-ins it keeps loaded and a
    /// ToolSearch tool and names the rest in a reminder; `off` sends every built-in. Default:
    /// the client's own (on for claude-cli 2.1.165).
    #[arg(long, value_name = "on|off", value_parser = ["on", "off"])]
    pub tool_search: Option<String>,
    /// The user's session context the client sends (claude-cli: auto memory, environment and
    /// git status): `captured` (the captured request's own size, the default) or `none`.
    #[arg(long, value_name = "captured|none", value_parser = ["captured", "none"])]
    pub session_context: Option<String>,
    /// `all` or a comma-separated list of surfaces: per-row-mcp, deferred-search,
    /// deferred-search-regex, deferred-search-client, deferred-search-client-regex,
    /// deferred-search-namespace (Responses only), protocol-only, small-mcp, name-list,
    /// code-mode, per-row-mcp-min, and the providers' own tool changes: name-list-native and
    /// programmatic (Anthropic only), allowed-tools and additional-tools (Responses only).
    /// `all` leaves out the deferred-search variants and the surfaces the client's format lacks.
    #[arg(long, default_value = "all")]
    pub surface: String,
    /// Comma-separated tokenizers: o200k, cl100k, claude-v5, claude-v4.7, claude-v3,
    /// claude-est, claude-legacy-est, gemma3 (Gemini's stand-in, embedded), kimi, deepseek, qwen, glm, llama3, mistral. Default: the model's own, alone
    /// (`--tokenizer claude-v5,o200k` adds o200k's rows beside Claude's).
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// The user's message. Default: a captured profile's own turn, else "what time is it".
    #[arg(long)]
    pub turn: Option<String>,
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
    /// A calibration file (`toolcost calibrate --out`): the input-token figures of rows whose
    /// card and estimate it covers are multiplied by its correction and labelled
    /// `calibrated:<file>(x<c> ±<spread>%, n=<n>)`.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
}

/// The client a command measures with: the one named, else the one that speaks the model's
/// own API (gemini-cli for a Gemini model, openai-responses-agent for an OpenAI one), else
/// claude-cli (Claude, and the open models an Anthropic-compatible endpoint serves, as in the
/// recorded setup).
pub fn default_client(client: Option<&str>, model: Option<&str>) -> String {
    use crate::identity::{identify, Maker};
    if let Some(c) = client {
        return c.to_string();
    }
    match model.and_then(identify).map(|i| i.maker) {
        Some(Maker::Google) => "gemini-cli".into(),
        Some(Maker::Openai) => "openai-responses-agent".into(),
        Some(Maker::Anthropic | Maker::Open(_)) | None => "claude-cli".into(),
    }
}

/// Build the validated measurement config from the arguments.
pub fn measure_config(a: &MeasureArgs) -> Result<(CatalogueSource, measure::Config)> {
    let mut client = match &a.client_profile {
        Some(path) => Client::from_file(path)?,
        None => Client::named(&default_client(a.client.as_deref(), a.model.as_deref()))?,
    };
    if let Some(ts) = &a.tool_search {
        if client.tool_search.is_none() {
            return Err(Error::input(format!(
                "--tool-search: the {} profile has no tool search (claude-cli has one)",
                client.name
            )));
        }
        client = client.with_tool_search(ts == "on");
    }
    if let Some(sc) = &a.session_context {
        client = client.with_session(sc == "captured");
    }
    let model = PriceCard::named(a.model.as_deref().unwrap_or(&client.model))?;
    // `all` is every surface the client's API format has; a named one it lacks is a refused row.
    let surfaces = match a.surface.trim() {
        "all" => SurfaceKind::all_for(client.format),
        list => SurfaceKind::parse_list(list)?,
    };
    let tokenizers = match &a.tokenizer {
        Some(list) => list
            .split(',')
            .map(Tokenizer::parse)
            .collect::<Result<Vec<_>>>()?,
        // The model's own count: another tokenizer's rows priced on this card answer a
        // question nobody asked; `--tokenizer` asks for them.
        None => vec![model.tokenizer()],
    };
    for t in &tokenizers {
        t.ready()?;
    }
    let source = match (&a.catalogue, a.rows) {
        _ if a.server.is_some() => CatalogueSource::Server {
            url: a.server.clone().unwrap_or_default(),
            headers: a.header.clone(),
        },
        (Some(path), _) => CatalogueSource::File(path.clone()),
        (None, Some(rows)) => {
            check_rows(rows)?;
            Profile::named(&a.generator.profile)?;
            CatalogueSource::Generated {
                rows,
                profile: a.generator.profile.clone(),
                seed: a.generator.seed,
            }
        }
        (None, None) => return Err(Error::input("give --catalogue FILE or --rows N")),
    };
    let turn = a
        .turn
        .clone()
        .or_else(|| client.turn.clone())
        .unwrap_or_else(|| measure::DEFAULT_TURN.into());
    let cfg = measure::Config {
        client,
        model,
        surfaces,
        tokenizers,
        turn,
        output_tokens: a.output_tokens,
        endpoint: a.endpoint.clone(),
    };
    Ok((source, cfg))
}

pub(super) fn run(a: MeasureArgs) -> Result<i32> {
    let (source, cfg) = measure_config(&a)?;
    let cat = source.load()?;
    super::release_freed();
    let bar = if cat.tools.len() >= 5_000 {
        progress(cfg.surfaces.len() as u64, "measuring")
    } else {
        ProgressBar::hidden()
    };
    let mut rows = measure::measure(&cat, &cfg, &|s| {
        bar.set_message(format!("measured {s}"));
        bar.inc(1);
    });
    bar.finish_and_clear();
    if let Some(path) = &a.calibration {
        let cal = Calibration::load(path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| path.display().to_string());
        if cal.apply(&name, &mut rows)? == 0 {
            eprintln!(
                "toolcost: warning: {} has no correction for card {} under the tokenizers measured: no figure changed",
                path.display(),
                cfg.model.id
            );
        }
    }
    let mut out = Vec::new();
    // In the text table, a client modelled on a real one's parts says what its base turn is
    // in each position of its tool search.
    if a.format.format() == report::OutputFormat::Table {
        let width = report::terminal_width().unwrap_or(120);
        for line in measure::base_turns(&cfg).unwrap_or_default() {
            let indent = line.len() - line.trim_start().len();
            for (i, l) in report::wrap(line.trim_start(), width.saturating_sub(indent + 2).max(20))
                .into_iter()
                .enumerate()
            {
                let pad = indent + if i > 0 { 2 } else { 0 };
                out.extend_from_slice(format!("{}{l}\n", " ".repeat(pad)).as_bytes());
            }
        }
    }
    out.extend(report::render(a.format.format(), &rows));
    emit(a.output.as_deref(), &out)?;
    for w in rows
        .iter()
        .flat_map(|r| r.warnings.iter().map(move |w| (r, w)))
    {
        eprintln!(
            "toolcost: warning: {} ({}): {}",
            w.0.surface, w.0.tokenizer, w.1
        );
    }
    // The process ends here: the system takes the catalogue back faster than freeing its rows
    // and definitions one by one would.
    std::mem::forget(cat);
    Ok(0)
}
