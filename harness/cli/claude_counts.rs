//! `toolcost claude-counts`: Claude's recorded token counts beside toolcost's: plain texts on
//! each tokenizer family, and tools deltas with the renderings tried, the fitted tool-use
//! prompt and its leave-one-out error; `--out DIR` writes the report.

use super::{emit, FormatArgs};
use crate::claude_counts;
use crate::error::Result;
use crate::report::{self, write_atomic};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ClaudeCountsArgs {
    /// A recorded set: a folder with counts.csv (server, model, claude_tools_delta) and one
    /// <server>.tools.json each. Default: the set shipped in fixtures/claude-counts.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// A second set to check the committed estimate on, out of sample (not fitted to). Default:
    /// the set shipped in fixtures/claude-counts-heldout.
    #[arg(long, value_name = "DIR")]
    pub heldout: Option<PathBuf>,
    /// Recorded counts of plain texts: a folder of <set>.jsonl.gz and <set>_counts.json.
    /// Default: claude-counts-text in the shared folder beside the checkout (TOOLCOST_SHARED),
    /// left out when it is not there.
    #[arg(long, value_name = "DIR")]
    pub texts: Option<PathBuf>,
    /// Whole recorded requests instead: Claude's billed input of each beside toolcost's count,
    /// by tokenizer family and shape, with the leave-one-out error of every fitted constant.
    /// Default set: the one shipped in fixtures/claude-requests.
    #[arg(long)]
    pub requests: bool,
    /// A set of recorded requests for --requests: JSON lines (or gzip of them) of
    /// {row, model, recorded, source, notes, body}.
    #[arg(long, value_name = "FILE", requires = "requests")]
    pub requests_file: Option<PathBuf>,
    /// Write claude-counts.md, .csv and .json to this folder (reports/claude-counts).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
}

pub(super) fn run(a: ClaudeCountsArgs) -> Result<i32> {
    if a.requests {
        return requests(&a);
    }
    let dir = a.dir.clone().unwrap_or_else(claude_counts::default_dir);
    let set = claude_counts::load(&dir)?;
    let name = match &a.dir {
        Some(d) => d.display().to_string(),
        None => "fixtures/claude-counts".into(),
    };
    let held_dir = a.heldout.clone().unwrap_or_else(claude_counts::heldout_dir);
    let held_set = claude_counts::load(&held_dir)?;
    let c = claude_counts::compare(&set, &held_set)?;
    let held = claude_counts::check(&held_set)?;
    let texts_dir = a.texts.clone().or_else(|| {
        let shared = std::env::var_os("TOOLCOST_SHARED").map_or_else(
            || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
            PathBuf::from,
        );
        Some(shared.join("claude-counts-text")).filter(|d| d.is_dir())
    });
    let texts = match &texts_dir {
        Some(d) => Some(claude_counts::check_texts(d)?),
        None => None,
    };
    for r in texts.iter().flatten() {
        say(format!(
            "toolcost claude-counts: {} on {} ({}): {} of {} documents exact ({:.2}%), mean error {:.3}%, worst {} tokens; before {:.2}%",
            r.set, r.model, r.tokenizer, r.exact, r.documents, r.exact_pct, r.mape_pct, r.worst_tokens, r.before_mape_pct
        ));
    }
    let held_name = match &a.heldout {
        Some(d) => d.display().to_string(),
        None => "fixtures/claude-counts-heldout".into(),
    };
    emit(None, &report::render(a.format.format(), &c.rows))?;
    say(format!(
        "toolcost claude-counts: {} servers; tool-use prompt {:.0} (fitted here: {:.1}); in sample MAPE {:.2}% (worst {:.2}%), leave-one-out MAPE {:.2}% (worst {:.2}%); claude-est MAPE {:.2}%",
        c.rows.len(),
        c.committed_tool_prompt,
        c.tool_prompt,
        c.mape_pct,
        c.worst_pct,
        c.loo_mape_pct,
        c.loo_worst_pct,
        c.claude_est_mape_pct
    ));
    say(format!(
        "toolcost claude-counts: held out ({held_name}), {} servers: MAPE {:.2}% (worst {:.2}%)",
        held.rows.len(),
        held.mape_pct,
        held.worst_pct
    ));
    if let Some(out) = &a.out {
        write_atomic(
            &out.join("claude-counts.md"),
            claude_counts::markdown(&c, &name, &held, &held_name, texts.as_deref()).as_bytes(),
        )?;
        report::write_csv_json(out, "claude-counts", &c.rows)?;
        report::write_csv_json(out, "claude-counts-heldout", &held.rows)?;
        if let Some(t) = &texts {
            report::write_csv_json(out, "claude-counts-text", t)?;
        }
        say(format!("toolcost claude-counts: wrote {}", out.display()));
    }
    Ok(0)
}

/// A line for the person running the command, on stderr, fitted to the terminal.
fn say(line: String) {
    eprint!("{}", crate::report::fit_to_terminal(&(line + "\n")));
}

/// `--requests`: whole recorded requests beside toolcost's count.
fn requests(a: &ClaudeCountsArgs) -> Result<i32> {
    use claude_counts::requests;
    let bytes = match &a.requests_file {
        Some(f) => crate::input::read(f, 256 << 20)?,
        None => requests::EMBEDDED.to_vec(),
    };
    let set = requests::load(&bytes)?;
    let (rows, summary) = requests::check(&set)?;
    emit(None, &report::render(a.format.format(), &rows))?;
    let left = rows.iter().filter(|r| !r.left_out.is_empty()).count();
    for s in &summary {
        say(format!(
            "toolcost claude-counts --requests: {}: {} requests, {} exact ({:.1}%), mean absolute error {:.3}% (leave-one-out {:.3}%)",
            s.group, s.requests, s.exact, s.exact_pct, s.mape_pct, s.loo_mape_pct
        ));
    }
    say(format!(
        "toolcost claude-counts --requests: {left} of {} requests left out of the bar (server tools, media, thinking, duplicates: each row says why); estimated:claude-v* against recorded, tool-use and structured-output prompts calibrated",
        rows.len()
    ));
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).map_err(|e| crate::error::Error::io(dir, e))?;
        for (f, ext) in [
            (report::OutputFormat::Markdown, "md"),
            (report::OutputFormat::Csv, "csv"),
            (report::OutputFormat::Json, "json"),
        ] {
            write_atomic(
                &dir.join(format!("claude-requests.{ext}")),
                &report::render(f, &rows),
            )?;
        }
    }
    Ok(0)
}
