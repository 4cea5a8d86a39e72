//! `toolcost run`: play a scenario's tasks round by round through the gateway against the
//! reference server.

use super::{emit, progress, runtime, FormatArgs};
use crate::driver::{self, scenario::Scenario};
use crate::error::Result;
use crate::report;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file (see scenarios/).
    #[arg(long, value_name = "FILE")]
    pub scenario: PathBuf,
    #[command(flatten)]
    pub format: FormatArgs,
    /// Write the results here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub(super) fn run(a: RunArgs) -> Result<i32> {
    let scenario = Scenario::read(&a.scenario)?;
    let total = (scenario.catalogue.rows.len()
        * scenario.run.surfaces.len()
        * scenario.run.tasks.len()) as u64;
    let bar = progress(total, "playing");
    let results = runtime()?.block_on(driver::run(&scenario, &|id| {
        bar.set_message(id.to_string());
        bar.inc(1);
    }))?;
    bar.finish_and_clear();
    emit(
        a.output.as_deref(),
        &report::render(a.format.format(), &results),
    )?;
    Ok(0)
}
