//! `toolcost claude-counts`: Claude's recorded token counts beside toolcost's estimate, the
//! estimator's re-fit and its leave-one-out error; `--out DIR` writes the report.

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
    /// Write claude-counts.md, .csv and .json to this folder (reports/claude-counts).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
}

pub(super) fn run(a: ClaudeCountsArgs) -> Result<i32> {
    let dir = a.dir.clone().unwrap_or_else(claude_counts::default_dir);
    let set = claude_counts::load(&dir)?;
    let c = claude_counts::compare(&set)?;
    let name = match &a.dir {
        Some(d) => d.display().to_string(),
        None => "fixtures/claude-counts".into(),
    };
    let held_dir = a.heldout.clone().unwrap_or_else(claude_counts::heldout_dir);
    let held = claude_counts::check(&claude_counts::load(&held_dir)?)?;
    let held_name = match &a.heldout {
        Some(d) => d.display().to_string(),
        None => "fixtures/claude-counts-heldout".into(),
    };
    emit(None, &report::render(a.format.format(), &c.rows))?;
    eprintln!(
        "toolcost claude-counts: {} servers; in sample MAPE {:.2}% (worst {:.2}%), leave-one-out MAPE {:.2}% (worst {:.2}%); before claude-est MAPE {:.1}%",
        c.rows.len(),
        c.mape_pct,
        c.worst_pct,
        c.loo_mape_pct,
        c.loo_worst_pct,
        c.before_mape_pct
    );
    eprintln!(
        "toolcost claude-counts: held out ({held_name}), {} servers: MAPE {:.2}% (worst {:.2}%)",
        held.rows.len(),
        held.mape_pct,
        held.worst_pct
    );
    if let Some(out) = &a.out {
        write_atomic(
            &out.join("claude-counts.md"),
            claude_counts::markdown(&c, &name, &held, &held_name).as_bytes(),
        )?;
        report::write_csv_json(out, "claude-counts", &c.rows)?;
        report::write_csv_json(out, "claude-counts-heldout", &held.rows)?;
        eprintln!("toolcost claude-counts: wrote {}", out.display());
    }
    Ok(0)
}
