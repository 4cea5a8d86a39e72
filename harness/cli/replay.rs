//! `toolcost replay`: a gateway log's sessions priced as sent and on each way of loading the
//! tools, and the set worth keeping loaded.

use super::{print_bytes, FormatArgs};
use crate::error::Result;
use crate::replay;
use crate::report::{self, OutputFormat};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A gateway log written with `--log-bodies` (SQLite).
    pub log: PathBuf,
    /// Tokens of the search tool's definition, billed on every request while any tool is
    /// deferred (assumed 500).
    #[arg(long, default_value_t = 500)]
    pub search_tokens: u64,
    /// Print the recommended set as a host's configuration instead of the tables:
    /// `anthropic` writes each tool's `defer_loading`.
    #[arg(long, value_enum)]
    pub emit: Option<Emit>,
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum Emit {
    Anthropic,
}

pub(super) fn run(a: ReplayArgs) -> Result<i32> {
    let r = replay::replay(
        &a.log,
        &replay::Options {
            search_tokens: a.search_tokens,
        },
    )?;
    if let Some(Emit::Anthropic) = a.emit {
        let text = serde_json::to_string_pretty(&replay::emit_anthropic(&r)).expect("serialises");
        print_bytes(format!("{text}\n").as_bytes())?;
        return Ok(0);
    }
    let format = a.format.format();
    let mut rows = r.sessions.clone();
    rows.push(r.total.clone());
    let out = match format {
        OutputFormat::Json => {
            let mut v = serde_json::to_vec_pretty(&r).expect("serialises");
            v.push(b'\n');
            v
        }
        OutputFormat::Csv => report::render(OutputFormat::Csv, &rows),
        OutputFormat::Table | OutputFormat::Markdown => {
            let mut text = String::from_utf8(report::render(format, &rows)).expect("utf-8");
            text.push_str(&format!(
                "\nkeep loaded ({}): {}\ndefer ({}): {}\n",
                r.keep_loaded.len(),
                shown(&r.keep_loaded),
                r.defer.len(),
                shown(&r.defer)
            ));
            for n in &r.notes {
                text.push_str(&format!("note: {n}\n"));
            }
            text.into_bytes()
        }
    };
    print_bytes(&out)?;
    Ok(0)
}

/// At most 20 names, then how many more.
fn shown(names: &[String]) -> String {
    match names.len() {
        0 => "none".into(),
        n if n <= 20 => names.join(", "),
        n => format!("{}, and {} more", names[..20].join(", "), n - 20),
    }
}
