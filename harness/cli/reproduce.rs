//! `toolcost reproduce`: the published measurement beside toolcost's figures, written under
//! `--out` and printed.

use super::{print_bytes, FormatArgs};
use crate::error::Result;
use crate::report::{self, OutputFormat};
use crate::reproduce;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Directory for reproduce.md, reproduce.csv and reproduce.json.
    #[arg(long, default_value = "reports/reproduce")]
    pub out: PathBuf,
    #[command(flatten)]
    pub format: FormatArgs,
}

pub(super) fn run(a: ReproduceArgs) -> Result<i32> {
    let r = reproduce::reproduce()?;
    reproduce::write(&r, &a.out)?;
    print_bytes(&report::render(a.format.format(), &r.rows))?;
    if a.format.format() == OutputFormat::Table {
        let text = format!("{} Written to {}/", r.verdict(), a.out.display());
        println!();
        match report::terminal_width() {
            Some(w) => report::wrap(&text, w).iter().for_each(|l| println!("{l}")),
            None => println!("{text}"),
        }
    }
    Ok(0)
}
