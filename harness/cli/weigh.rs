//! `toolcost weigh`: what a server's tools cost, per tool and per surface.

use super::{print_bytes, FormatArgs, TargetArgs};
use crate::client::Client;
use crate::error::Result;
use crate::pricing::PriceCard;
use crate::tokens::Tokenizer;
use crate::weigh;
use clap::Args;

#[derive(Args, Debug)]
pub struct WeighArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Client profile whose surfaces are priced.
    #[arg(long, default_value = "claude-cli")]
    pub client: String,
    /// The model whose tokens come first (each tool's share of its per-row request, as its
    /// provider bills it) and whose price card the one-turn costs are on. Default: the
    /// client's.
    #[arg(long)]
    pub model: Option<String>,
    /// Comma-separated tokenizers to count each tool's text with beside o200k (o200k, cl100k,
    /// claude-v5, kimi, qwen, ...; as `measure --tokenizer`).
    #[arg(long, value_name = "LIST")]
    pub tokenizer: Option<String>,
    /// Comma-separated models whose marginal tokens per definition are reported beside the
    /// chosen model's (each through the client that speaks its API), e.g.
    /// `gpt-4o,gemini-3.5-flash,kimi-k2.7-code`.
    #[arg(long, value_name = "MODELS")]
    pub compare: Option<String>,
    /// Also list the server at every MCP protocol version toolcost speaks and report the
    /// bytes of each (a row per version; a version the server refuses shows its error).
    #[arg(long)]
    pub each_protocol: bool,
    #[command(flatten)]
    pub format: FormatArgs,
}

pub(super) fn run(a: WeighArgs) -> Result<i32> {
    let client = Client::named(&a.client)?;
    let model = PriceCard::named(a.model.as_deref().unwrap_or(&client.model))?;
    model.tokenizer().ready()?;
    let list = |s: &Option<String>| -> Vec<String> {
        s.iter()
            .flat_map(|s| s.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    let extras = weigh::Extras {
        tokenizers: list(&a.tokenizer)
            .iter()
            .map(|t| Tokenizer::parse(t))
            .collect::<Result<_>>()?,
        compare: list(&a.compare)
            .iter()
            .map(|m| PriceCard::named(m))
            .collect::<Result<_>>()?,
    };
    for t in extras
        .tokenizers
        .iter()
        .copied()
        .chain(extras.compare.iter().map(PriceCard::tokenizer))
    {
        t.ready()?;
    }
    let target = a.target.target()?;
    let fetched = target.load_full()?;
    super::release_freed();
    let mut w = weigh::weigh(&fetched.catalogue, &client, &model, &extras, fetched.notes)?;
    w.protocol = fetched.protocol;
    w.instructions = fetched
        .instructions
        .as_deref()
        .map(|text| weigh::instructions(text, &model));
    if a.each_protocol {
        w.protocols = weigh::each_protocol(&target);
    }
    let format = a.format.format();
    let out = weigh::render(&w, format);
    match format {
        crate::report::OutputFormat::Table => {
            print_bytes(crate::report::fit_to_terminal(&String::from_utf8_lossy(&out)).as_bytes())?
        }
        crate::report::OutputFormat::Json
        | crate::report::OutputFormat::Csv
        | crate::report::OutputFormat::Markdown => print_bytes(&out)?,
    }
    Ok(0)
}
