//! `toolcost calibrate`: observed / estimated input tokens per model from a gateway log, and
//! the correction `measure --calibration` applies.

use super::{emit, FormatArgs};
use crate::calibrate::{self, Calibration};
use crate::error::Result;
use crate::report::{self, write_atomic};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// The gateway's SQLite log, written in forward mode (`--upstream <provider URL>`).
    #[arg(long, value_name = "FILE.sqlite")]
    pub log: PathBuf,
    /// Write the corrections (per model, with n, spread, the log and the date) to this TOML file.
    #[arg(long, value_name = "FILE.toml")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
    /// Write the table here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub(super) fn run(a: CalibrateArgs) -> Result<i32> {
    let (rows, left) = calibrate::calibrate_counting(&a.log)?;
    if left.total() > 0 {
        eprintln!(
            "toolcost calibrate: left out {} row(s): {} without both observed usage and an estimate (failed or mock requests), {} with the two more than {}x apart, {} whose request held media parts the estimate does not count",
            left.total(),
            left.without_both,
            left.out_of_bounds,
            calibrate::MAX_RATIO,
            left.with_media
        );
    }
    emit(
        a.output.as_deref(),
        &report::render(a.format.format(), &rows),
    )?;
    if let Some(out) = &a.out {
        let cal = Calibration::from_rows(&a.log, &rows);
        write_atomic(out, cal.to_toml().as_bytes())?;
        eprintln!(
            "toolcost calibrate: wrote {} model corrections to {} ({})",
            cal.model.len(),
            out.display(),
            calibrate::ESTIMATOR
        );
    }
    Ok(0)
}
