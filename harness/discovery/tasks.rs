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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
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
    let text = std::fs::read_to_string(&qpath).map_err(|e| Error::io(&qpath, e))?;
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
        let Some(first) = l.relevant.first() else {
            return Err(Error::input(format!(
                "{}: the task names no relevant tool",
                at()
            )));
        };
        if let Some(missing) = l
            .relevant
            .iter()
            .find(|r| !cat.rows.iter().any(|row| &row.key == *r))
        {
            return Err(Error::input(format!(
                "{}: relevant tool `{missing}` is not in {}",
                at(),
                tools.display()
            )));
        }
        out.push(Query {
            text: l.query,
            kind: QueryKind::Task,
            target: first.clone(),
            relevant: l.relevant,
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
