//! `toolcost prices`: the price cards and the LiteLLM snapshot their prices come from, and the
//! snapshot's refresh from a newer LiteLLM table.

use crate::error::{Error, Result};
use crate::pricing::{self, litellm, PriceCard};
use crate::report::write_atomic;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PricesArgs {
    #[command(subcommand)]
    pub command: PricesCommand,
}

#[derive(Subcommand, Debug)]
pub enum PricesCommand {
    /// Every price card: its prices, window, LiteLLM entry, the snapshot date and what is kept
    /// by hand.
    Show,
    /// Refresh the snapshot from a newer LiteLLM `model_prices_and_context_window` JSON: keep
    /// the entries the cards name, say which figures moved, write the snapshot. Rebuild toolcost
    /// to use it; committed reports then regenerate with the new prices.
    Update(UpdateArgs),
}

#[derive(Args, Debug)]
pub struct UpdateArgs {
    /// The newer LiteLLM table (from the litellm package, or its repository).
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,
    /// The LiteLLM version the table comes from (the JSON does not say).
    #[arg(long, value_name = "VERSION")]
    pub litellm_version: String,
    /// The day the table was taken, YYYY-MM-DD (default today, UTC).
    #[arg(long, value_name = "DATE")]
    pub date: Option<String>,
    /// Where the snapshot is written.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "fixtures/litellm-prices.json"
    )]
    pub out: PathBuf,
}

pub(super) fn run(a: PricesArgs) -> Result<i32> {
    match a.command {
        PricesCommand::Show => {
            let mut out = String::new();
            for c in PriceCard::all() {
                out.push_str(&format!(
                    "{}: input {} / cached {} / cache write {} / output {} USD per million, window {} tokens, prices of {}\n  {}\n",
                    c.id, c.input, c.cached_input, c.cache_write, c.output, c.context_window, c.date, c.source
                ));
            }
            super::print_bytes(out.as_bytes())?;
            Ok(0)
        }
        PricesCommand::Update(u) => update(u),
    }
}

fn update(u: UpdateArgs) -> Result<i32> {
    let date = match u.date {
        Some(d) => d,
        None => crate::clock::now_rfc3339().chars().take(10).collect(),
    };
    if !valid_date(&date) {
        return Err(Error::input(format!(
            "--date `{date}` is not a YYYY-MM-DD date"
        )));
    }
    let len = std::fs::metadata(&u.from)
        .map_err(|e| Error::io(&u.from, e))?
        .len();
    if len > litellm::MAX_TABLE_BYTES {
        return Err(Error::input(format!(
            "{}: {len} bytes is more than a price table ({} at most)",
            u.from.display(),
            litellm::MAX_TABLE_BYTES
        )));
    }
    let bytes = std::fs::read(&u.from).map_err(|e| Error::io(&u.from, e))?;
    let keys = pricing::litellm_keys();
    let meta = litellm::Meta {
        source: format!(
            "{} (litellm {})",
            u.from
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            u.litellm_version
        ),
        litellm_version: u.litellm_version,
        date,
        filter: format!(
            "only the entries the price cards in fixtures/prices.toml name (their `litellm` keys), each kept whole: {} of the table's entries",
            keys.len()
        ),
    };
    let (text, changes) = litellm::update(litellm::Snapshot::embedded(), &bytes, &keys, meta)?;
    write_atomic(&u.out, text.as_bytes())?;
    let f = |v: Option<f64>| v.map_or("none".to_string(), |x| x.to_string());
    let moved: String = changes
        .iter()
        .map(|c| format!("{} {}: {} -> {}\n", c.key, c.field, f(c.old), f(c.new)))
        .collect();
    super::print_bytes(moved.as_bytes())?;
    eprintln!(
        "toolcost prices: wrote {} entries to {}; {} figures moved. Rebuild, then regenerate the committed reports.",
        keys.len(),
        u.out.display(),
        changes.len()
    );
    Ok(0)
}

/// `YYYY-MM-DD` with plausible month and day.
fn valid_date(d: &str) -> bool {
    let b = d.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |s: &str| s.parse::<u32>().ok();
    matches!(
        (num(&d[0..4]), num(&d[5..7]), num(&d[8..10])),
        (Some(_), Some(1..=12), Some(1..=31))
    )
}
