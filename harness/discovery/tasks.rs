//! A task-level tool-retrieval set in the shape public benchmarks publish (LiveMCPBench's, as
//! `../shared/livemcpbench/` holds it): a `tools.json` capture (`{"tools": [...]}`) and a
//! `queries.jsonl` of `{"query", "relevant": [tool names]}`, each a whole task whose every
//! relevant tool is needed. Scored with the benchmark's own metrics: recall@K as the share of a
//! task's tools in the top K, NDCG@K and all-of-them@K ([`super::eval::Score`]).

use super::queries::{Query, QueryKind};
use crate::catalogue::Catalogue;
use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::Path;

/// Queries read past this many are refused: a set is a file a person can read.
pub const MAX_QUERIES: usize = 100_000;
/// A query file larger than this is refused before it is read.
pub const MAX_BYTES: u64 = 64 << 20;
/// Relevant tools one task may name.
pub const MAX_RELEVANT: usize = 1_000;

/// One line of the file; other fields a benchmark carries (ids, categories) are ignored.
#[derive(Deserialize)]
struct Line {
    query: String,
    relevant: Vec<String>,
}

/// The catalogue and its tasks from a folder holding `tools.json` and `queries.jsonl`. Every
/// relevant tool must be in the catalogue, and every task must name one.
pub fn read(dir: &Path) -> Result<(Catalogue, Vec<Query>)> {
    let tools = dir.join("tools.json");
    let cat = Catalogue::load(&tools)?;
    let qpath = dir.join("queries.jsonl");
    let size = std::fs::metadata(&qpath)
        .map_err(|e| Error::io(&qpath, e))?
        .len();
    if size > MAX_BYTES {
        return Err(Error::input(format!(
            "{}: {size} bytes, over the {MAX_BYTES} a task set may have",
            qpath.display()
        )));
    }
    let text = crate::input::read_text(&qpath, MAX_BYTES)?;
    // The tools a task may name: the catalogue's enabled rows (a disabled one is never found).
    let keys: std::collections::HashSet<&str> = cat
        .rows
        .iter()
        .filter(|r| r.enabled)
        .map(|r| r.key.as_str())
        .collect();
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        if out.len() == MAX_QUERIES {
            return Err(Error::input(format!(
                "{}: more than {MAX_QUERIES} tasks",
                qpath.display()
            )));
        }
        let at = || format!("{} line {}", qpath.display(), i + 1);
        let l: Line =
            serde_json::from_str(line).map_err(|e| Error::input(format!("{}: {e}", at())))?;
        // A tool named twice counts once.
        let mut relevant: Vec<String> = Vec::new();
        for r in l.relevant {
            if !relevant.contains(&r) {
                relevant.push(r);
            }
        }
        if relevant.len() > MAX_RELEVANT {
            return Err(Error::input(format!(
                "{}: more than {MAX_RELEVANT} relevant tools",
                at()
            )));
        }
        let Some(first) = relevant.first().cloned() else {
            return Err(Error::input(format!(
                "{}: the task names no relevant tool",
                at()
            )));
        };
        if let Some(missing) = relevant.iter().find(|r| !keys.contains(r.as_str())) {
            return Err(Error::input(format!(
                "{}: relevant tool `{missing}` is not an enabled tool of {}",
                at(),
                tools.display()
            )));
        }
        out.push(Query {
            text: l.query,
            kind: QueryKind::Task,
            target: first,
            relevant,
            novel_words: 0.0,
            server: None,
        });
    }
    if out.is_empty() {
        return Err(Error::input(format!(
            "{}: the set has no tasks",
            qpath.display()
        )));
    }
    Ok((cat, out))
}
