//! `toolcost report`: the tables and plots of a gateway log.

use super::{print_bytes, FormatArgs};
use crate::error::Result;
use crate::report;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The gateway's SQLite log.
    #[arg(long, value_name = "FILE.sqlite")]
    pub log: PathBuf,
    /// Output directory. Default: reports/log-<file stem>.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
}

pub(super) fn run(a: ReportArgs) -> Result<i32> {
    let out = a.out.clone().unwrap_or_else(|| {
        let stem = a
            .log
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "gateway".into());
        PathBuf::from("reports").join(format!("log-{stem}"))
    });
    let (rows, files) = crate::sweep::logs::report_log(&a.log, &out)?;
    print_bytes(&report::render(a.format.format(), &rows))?;
    eprintln!(
        "toolcost report: wrote {} files to {}",
        files.len(),
        out.display()
    );
    Ok(0)
}
