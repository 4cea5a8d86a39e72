//! `toolcost check`: fail CI (exit 1) when tool definitions outgrow the budget or the
//! baseline lock; `--update` writes the lock.

use super::TargetArgs;
use crate::check;
use crate::error::{Error, Result};
use crate::mcp::Target;
use crate::report;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Budget file.
    #[arg(long, default_value = "toolcost.toml")]
    pub config: PathBuf,
    /// Baseline lock file.
    #[arg(long, default_value = "toolcost.lock.json")]
    pub lock: PathBuf,
    /// Write the current tools as the new baseline and exit.
    #[arg(long)]
    pub update: bool,
    /// With --update: write the lock even when the source lists no tools.
    #[arg(long, requires = "update")]
    pub allow_empty: bool,
    /// table, github (Actions annotations), md (a PR comment) or json.
    #[arg(long, default_value = "table")]
    pub format: String,
    /// Also write an SVG badge of the total tokens here (green within budget, red over it).
    #[arg(long, value_name = "FILE")]
    pub badge: Option<PathBuf>,
}

pub(super) fn run(a: CheckArgs) -> Result<i32> {
    let format = check::Format::parse(&a.format)?;
    let config = budget(&a.config)?;
    let tok = config.tokenizer()?;
    tok.ready()?;
    let (cat, _) = target(&a, &config)?.load()?;
    let current = check::Lock::of(&cat, tok)?;
    if a.update {
        if current.tools.is_empty() && !a.allow_empty {
            return Err(Error::input(format!(
                "the source lists no tools (a server that failed to start?): {} not written; pass --allow-empty to lock an empty baseline",
                a.lock.display()
            )));
        }
        report::write_atomic(&a.lock, current.to_json().as_bytes())?;
        println!(
            "wrote {}: {} tools, {} bytes, {} {} tokens",
            a.lock.display(),
            current.tools.len(),
            current.total_bytes,
            current.total_tokens,
            current.tokenizer
        );
        return Ok(0);
    }
    let baseline = check::Lock::read(&a.lock)?;
    let outcome = check::check(&current, &baseline, &config.budget)?;
    if let Some(path) = &a.badge {
        report::write_atomic(path, check::badge(&outcome).as_bytes())?;
    }
    let out = check::render(&outcome, &cat.source, format);
    let out = match format {
        check::Format::Table => crate::report::fit_to_terminal(&out),
        check::Format::Json | check::Format::Github | check::Format::Markdown => out,
    };
    super::print_bytes(out.as_bytes())?;
    Ok(if outcome.passed() { 0 } else { 1 })
}

/// The budget file; without one at the default path, the default budget.
fn budget(path: &Path) -> Result<check::Config> {
    if path.exists() {
        check::Config::read(path)
    } else if path == Path::new("toolcost.toml") {
        Ok(check::Config::default())
    } else {
        Err(Error::input(format!(
            "{}: no such budget file",
            path.display()
        )))
    }
}

/// The target on the command line, or else the budget file's `[source]` table (its paths
/// relative to the budget file).
fn target(a: &CheckArgs, config: &check::Config) -> Result<Target> {
    if a.target.given() {
        return a.target.target();
    }
    let src = config.source.clone().ok_or_else(|| {
        Error::input("name what to check: --catalogue FILE, --url URL or -- COMMAND, or a [source] table in toolcost.toml")
    })?;
    let base = a.config.parent().unwrap_or(Path::new("."));
    TargetArgs {
        file: src.catalogue.map(|c| base.join(c)),
        url: src.url,
        command: src.command.unwrap_or_default(),
        ..a.target.clone()
    }
    .target()
}
