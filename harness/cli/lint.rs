//! `toolcost lint`: tool input schemas against strict-client rules; `--fix` writes the
//! normalised tools/list. Exit 1 when there are violations.

use crate::catalogue::Catalogue;
use crate::error::Result;
use crate::{lint, report};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct LintArgs {
    /// A tools/list capture (JSON), JSONL rows, or a SQLite catalogue.
    pub file: PathBuf,
    /// Write the tools/list with every input schema normalised.
    #[arg(long)]
    pub fix: bool,
    /// Where --fix writes (default: stdout).
    #[arg(short, long, value_name = "OUT", requires = "fix")]
    pub output: Option<PathBuf>,
    /// Print the violations as JSON.
    #[arg(long)]
    pub json: bool,
    /// Check instead what Gemini refuses when a client sends the schemas as `parameters` (its
    /// OpenAPI subset: no `$ref`, `oneOf`, `const`, type lists, ...) and the names it refuses.
    /// Clients that send `parametersJsonSchema` (Gemini CLI) are not refused these.
    #[arg(long, conflicts_with = "fix")]
    pub gemini: bool,
}

pub(super) fn run(a: LintArgs) -> Result<i32> {
    let cat = Catalogue::load(&a.file)?;
    lint::unique_names(cat.rows.iter().map(|r| r.key.as_str()))?;
    if a.gemini {
        let faults = lint::gemini_subset(&cat);
        match a.json {
            true => println!(
                "{}",
                serde_json::to_string_pretty(&faults).expect("serialises")
            ),
            false => {
                let mut text = format!(
                    "{} of {} tools would be refused by Gemini's `parameters` (OpenAPI subset)\n",
                    faults.len(),
                    cat.rows.len()
                );
                for f in &faults {
                    text.push_str(&format!("  {}: {}\n", f.name, f.fault));
                }
                print!("{}", report::fit_to_terminal(&text));
            }
        }
        return Ok(if faults.is_empty() { 0 } else { 1 });
    }
    let reports = lint::lint(&cat);
    if a.fix {
        let fixed = lint::fixed_tools_list(&cat);
        eprint!("{}", report::fit_to_terminal(&lint::text(&cat, &reports)));
        match &a.output {
            Some(path) => {
                report::write_atomic(path, fixed.as_bytes())?;
                eprintln!(
                    "toolcost lint: wrote the normalised tools/list ({} tools, {} bytes) to {}",
                    cat.tools.len(),
                    fixed.len(),
                    path.display()
                );
            }
            None => print!("{fixed}"),
        }
        return Ok(0);
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&reports).expect("serialises")
        );
    } else {
        print!("{}", report::fit_to_terminal(&lint::text(&cat, &reports)));
    }
    Ok(if reports.is_empty() { 0 } else { 1 })
}
