//! `toolcost gemini-counts`: Gemini's recorded token counts beside toolcost's Gemini estimate
//! (the Gemma 3 vocabulary and the Gemini render model); `--out DIR` writes the report.

use super::{emit, FormatArgs};
use crate::error::{Error, Result};
use crate::gemini_counts;
use crate::report::{self, write_atomic};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct GeminiCountsArgs {
    /// A recorded set (JSON, as fixtures/gemini-counts/recorded.json writes it). Default: the
    /// set shipped with toolcost.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Whole recorded requests instead (Developer API and Vertex AI, with function calls and
    /// thought signatures): Google's billed prompt beside toolcost's count, by API and shape.
    /// Default set: the one shipped in fixtures/gemini-requests.
    #[arg(long)]
    pub requests: bool,
    /// A set of recorded requests for --requests: JSON lines (or gzip of them).
    #[arg(long, value_name = "FILE", requires = "requests")]
    pub requests_file: Option<PathBuf>,
    /// Write gemini-counts.md, .csv and .json to this folder (reports/gemini-counts).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
}

pub(super) fn run(a: GeminiCountsArgs) -> Result<i32> {
    if a.requests {
        return requests(&a);
    }
    let text = match &a.file {
        Some(f) => crate::input::read_text(f, 64 << 20)?,
        None => gemini_counts::EMBEDDED.to_string(),
    };
    let rows = gemini_counts::check(&text)?;
    emit(None, &report::render(a.format.format(), &rows))?;
    for api in ["developer", "vertex"] {
        let s = gemini_counts::summary(&rows, api);
        if s.requests == 0 {
            continue;
        }
        let line = format!(
            "toolcost gemini-counts: {api} API, {} recorded requests, {} exact; mean absolute error {:.1}% (worst {:.1}%); with tools ({}): {:.1}%; estimated:gemma3 against recorded, nothing fitted\n",
            s.requests, s.exact, s.mape_pct, s.worst_pct, s.with_tools, s.tools_mape_pct
        );
        eprint!("{}", report::fit_to_terminal(&line));
    }
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        for f in [
            report::OutputFormat::Markdown,
            report::OutputFormat::Csv,
            report::OutputFormat::Json,
        ] {
            let ext = match f {
                report::OutputFormat::Markdown => "md",
                report::OutputFormat::Csv => "csv",
                report::OutputFormat::Json => "json",
                report::OutputFormat::Table => continue,
            };
            write_atomic(
                &dir.join(format!("gemini-counts.{ext}")),
                &report::render(f, &rows),
            )?;
        }
    }
    Ok(0)
}

/// `--requests`: whole recorded requests beside toolcost's count.
fn requests(a: &GeminiCountsArgs) -> Result<i32> {
    use gemini_counts::requests;
    let bytes = match &a.requests_file {
        Some(f) => crate::input::read(f, 256 << 20)?,
        None => requests::EMBEDDED.to_vec(),
    };
    let (rows, summary) = requests::check(&requests::load(&bytes)?)?;
    emit(None, &report::render(a.format.format(), &rows))?;
    for s in &summary {
        let line = format!(
            "toolcost gemini-counts --requests: {}: {} requests, {} exact ({:.1}%), mean absolute error {:.2}%\n",
            s.group, s.requests, s.exact, s.exact_pct, s.mape_pct
        );
        eprint!("{}", report::fit_to_terminal(&line));
    }
    let left = rows.iter().filter(|r| !r.left_out.is_empty()).count();
    eprintln!(
        "toolcost gemini-counts --requests: {left} of {} requests left out (media, or thinking of earlier turns the set does not hold: each row says why); estimated:gemma3 against recorded, nothing fitted",
        rows.len()
    );
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        for (f, ext) in [
            (report::OutputFormat::Markdown, "md"),
            (report::OutputFormat::Csv, "csv"),
            (report::OutputFormat::Json, "json"),
        ] {
            write_atomic(
                &dir.join(format!("gemini-requests.{ext}")),
                &report::render(f, &rows),
            )?;
        }
    }
    Ok(0)
}
