//! `toolcost search-eval`: how well each resolver finds the right row, and what the misses
//! add on each surface that searches.

use super::{print_bytes, FormatArgs, GeneratorArgs};
use crate::catalogue::generate::check_rows;
use crate::discovery::{eval::Method, report as dr};
use crate::error::Result;
use crate::report;
use clap::Args;
use indicatif::ProgressBar;
use std::path::PathBuf;

/// With neither --catalogue nor --rows: the generated sets at N = 856, 8,560 and 85,600 and
/// the hand-written set over the captures in --captures.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("source").args(["catalogue", "rows", "tasks"])))]
pub struct SearchEvalArgs {
    /// A catalogue file (JSONL, SQLite or a tools/list capture), or a folder of captures whose
    /// query set names each query's capture; needs --queries.
    #[arg(long, value_name = "FILE|DIR", requires = "queries")]
    pub catalogue: Option<PathBuf>,
    /// The labelled query set for --catalogue (JSONL; `generate --queries` writes one).
    #[arg(long, value_name = "FILE", requires = "catalogue")]
    pub queries: Option<PathBuf>,
    /// Or score one task-level set: a folder with `tools.json` (a tools/list capture) and
    /// `queries.jsonl` (`{"query", "relevant": [tool names]}` a line), as LiveMCPBench's.
    #[arg(long, value_name = "DIR")]
    pub tasks: Option<PathBuf>,
    /// Or generate catalogues of these sizes, each with its query set, e.g. 856,8560,85600.
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    pub rows: Vec<usize>,
    /// The folder of real tools/list captures scored with fixtures/queries/real-mcp.jsonl when
    /// no source is given.
    #[arg(long, value_name = "DIR", default_value = "../shared/real-mcp")]
    pub captures: PathBuf,
    /// The LiveMCPBench folder (`tools.json`, `queries.jsonl`) scored as a task-level set when
    /// no source is given.
    #[arg(long, value_name = "DIR", default_value = "../shared/livemcpbench")]
    pub livemcpbench: PathBuf,
    /// A folder of further task-level sets (each a subfolder with `tools.json` and
    /// `queries.jsonl`, named after it), scored as LiveMCPBench when no source is given: the
    /// published benchmarks committed under fixtures/retrieval (MetaTool, ...).
    #[arg(long, value_name = "DIR", default_value = "fixtures/retrieval")]
    pub retrieval: PathBuf,
    #[command(flatten)]
    pub generator: GeneratorArgs,
    /// Rows sampled per catalogue for the query set (two queries each, plus the fixed rows).
    #[arg(long, default_value_t = 200)]
    pub targets: usize,
    /// Comma-separated: substring, bm25, bm25-textbook (the baseline other benchmarks
    /// score), bm25-stem, bm25f, bm25f-wordnet, bm25f-gaps, bm25-tool (the default),
    /// bm25-definitions, bm25f-wordnet-definitions, bm25f-gaps-definitions,
    /// bm25-tool-definitions, regex, and the semantic dense, hybrid and hybrid-definitions (they need the
    /// all-MiniLM-L6-v2 model, installed by one command the error names, and are scored up to
    /// N = 10,000 rows).
    /// Without the flag all of them, the semantic ones left out with a note when the model is
    /// not installed.
    #[arg(long, value_name = "LIST")]
    pub resolver: Option<String>,
    /// Directory for results.csv/json, surfaces.csv/json, misses.md, summary.md and the query
    /// sets. Default: reports/search for the whole run (no --rows or --catalogue), otherwise
    /// target/search-eval, so that a partial run never replaces the committed report.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArgs,
}

impl SearchEvalArgs {
    /// Where the reports go ([`SearchEvalArgs::out`]).
    fn out(&self) -> PathBuf {
        let whole = self.catalogue.is_none() && self.rows.is_empty() && self.tasks.is_none();
        match (&self.out, whole) {
            (Some(out), _) => out.clone(),
            (None, true) => PathBuf::from(WHOLE_OUT),
            (None, false) => PathBuf::from(PARTIAL_OUT),
        }
    }

    fn config(&self) -> Result<dr::Config> {
        let mut methods = match &self.resolver {
            Some(list) => list
                .split(',')
                .map(|m| Method::parse(m.trim()))
                .collect::<Result<Vec<_>>>()?,
            None => Method::ALL.to_vec(),
        };
        if methods.iter().any(|m| m.semantic()) {
            if let Err(e) = crate::embed::Encoder::shared() {
                if self.resolver.is_some() {
                    return Err(e);
                }
                eprintln!(
                    "toolcost search-eval: leaving out dense, hybrid and hybrid-definitions: {e}"
                );
                methods.retain(|m| !m.semantic());
            }
        }
        let generated = |rows: Vec<usize>| -> Result<dr::Source> {
            for &n in &rows {
                check_rows(n)?;
            }
            Ok(dr::Source::Generated {
                profile: self.generator.profile.clone(),
                seed: self.generator.seed,
                rows,
                targets: self.targets,
            })
        };
        let sources = match (&self.catalogue, &self.queries) {
            (Some(c), Some(q)) if c.is_dir() => vec![dr::Source::Captures {
                dir: c.clone(),
                queries: q.clone(),
            }],
            (Some(c), Some(q)) => vec![dr::Source::Files {
                catalogue: c.clone(),
                queries: q.clone(),
            }],
            _ if !self.rows.is_empty() => vec![generated(self.rows.clone())?],
            _ if self.tasks.is_some() => {
                let dir = self.tasks.clone().unwrap_or_default();
                // Named after its folder, never after one of the built-in sets.
                let name = match dir.file_name().and_then(|n| n.to_str()) {
                    Some(n @ ("generated" | "real-mcp" | "file")) => format!("tasks-{n}"),
                    Some(n) => n.to_string(),
                    None => "tasks".to_string(),
                };
                vec![dr::Source::Tasks { name, dir }]
            }
            _ => vec![
                generated(vec![856, 8_560, 85_600])?,
                dr::Source::Captures {
                    dir: self.captures.clone(),
                    queries: dr::REAL_QUERIES.into(),
                },
                dr::Source::Tasks {
                    name: dr::LIVEMCPBENCH.into(),
                    dir: self.livemcpbench.clone(),
                },
            ]
            .into_iter()
            .chain(retrieval_sets(&self.retrieval)?)
            .collect(),
        };
        Ok(dr::Config {
            sources,
            methods,
            out: self.out(),
        })
    }
}

pub(super) fn run(a: SearchEvalArgs) -> Result<i32> {
    let cfg = a.config()?;
    let bar = ProgressBar::new_spinner();
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let written = dr::run(&cfg, &|m| bar.set_message(m.to_string()))?;
    bar.finish_and_clear();
    let format = a.format.format();
    let mut out = report::render(format, &written.scores);
    out.push(b'\n');
    out.extend(report::render(format, &written.costs));
    print_bytes(&out)?;
    eprintln!("toolcost search-eval: wrote {}", cfg.out.display());
    Ok(0)
}

/// Each subfolder of `dir` that holds a task-level set, by name (a missing folder: none).
fn retrieval_sets(dir: &std::path::Path) -> Result<Vec<dr::Source>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut sets: Vec<dr::Source> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("tools.json").is_file() && p.join("queries.jsonl").is_file())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            Some(dr::Source::Tasks { name, dir: p })
        })
        .collect();
    sets.sort_by(|a, b| match (a, b) {
        (dr::Source::Tasks { name: x, .. }, dr::Source::Tasks { name: y, .. }) => x.cmp(y),
        _ => std::cmp::Ordering::Equal,
    });
    Ok(sets)
}

/// The committed report, written by the whole run.
const WHOLE_OUT: &str = "reports/search";
/// Where a partial run writes unless told.
const PARTIAL_OUT: &str = "target/search-eval";

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: SearchEvalArgs,
    }

    fn out(args: &[&str]) -> PathBuf {
        Cli::parse_from(std::iter::once("search-eval").chain(args.iter().copied()))
            .args
            .out()
    }

    /// Only the whole run writes the committed report unless told otherwise.
    #[test]
    fn a_partial_run_does_not_write_the_committed_report() {
        assert_eq!(out(&[]), PathBuf::from("reports/search"));
        assert_eq!(out(&["--rows", "856"]), PathBuf::from("target/search-eval"));
        let files = ["--catalogue", "c.jsonl", "--queries", "q.jsonl"];
        assert_eq!(out(&files), PathBuf::from("target/search-eval"));
        assert_eq!(
            out(&["--rows", "856", "--out", "reports/search"]),
            PathBuf::from("reports/search")
        );
    }
}
