//! Every resolver by name ([`Method`]): one index of a catalogue per method, built the same
//! way wherever a method is named (`search-eval`, the server's `?ask=&resolver=`).

use super::dense::{Dense, Hybrid};
use super::{Bm25, Bm25f, Fields, Method, Resolver, Substring};
use crate::catalogue::{Catalogue, Row};
use crate::error::Result;

/// A built index of one catalogue for one method.
pub enum Index {
    Rows(Box<dyn Resolver + Send + Sync>, Vec<String>),
    Regex(Vec<(String, String)>),
}

impl Index {
    pub fn new(method: Method, rows: &[Row], cat: &Catalogue) -> Result<Index> {
        let keys = || rows.iter().map(|r| r.key.clone()).collect::<Vec<_>>();
        Ok(match method.over_definitions() {
            _ if method == Method::Regex => Index::Regex(definitions(cat)),
            Some(own) => {
                let drows = super::definition_rows(&definitions(cat));
                let names = drows.iter().map(|r| r.key.clone()).collect();
                Index::Rows(over_rows(own, &drows)?, names)
            }
            None => Index::Rows(over_rows(method, rows)?, keys()),
        })
    }

    /// The keys of the best `depth` rows for `query`, best first.
    pub fn rank(&self, query: &str, depth: usize) -> Vec<String> {
        self.ranked(query, depth)
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    /// [`Index::rank`] with each row's score (the regex search scores every match 1).
    pub fn ranked(&self, query: &str, depth: usize) -> Vec<(String, f64)> {
        match self {
            Index::Rows(r, keys) => r
                .resolve(query, depth)
                .into_iter()
                .map(|h| (keys[h.row].clone(), h.score))
                .collect(),
            Index::Regex(defs) => {
                let pattern = super::regex_for(query);
                let search = serde_json::json!({ "pattern": pattern });
                super::search_definitions(defs, &search, true)
                    .unwrap_or_default()
                    .into_iter()
                    .take(depth)
                    .map(|k| (k, 1.0))
                    .collect()
            }
        }
    }
}

/// The resolver `method` builds over `rows`. A method over tool definitions builds the method
/// it runs over them (so any rows may be given); the regex search has no row index and is
/// built as plain BM25 here (only [`Index`] and the client search run it as a regex).
pub fn over_rows(method: Method, rows: &[Row]) -> Result<Box<dyn Resolver + Send + Sync>> {
    Ok(match method {
        Method::Substring => Box::new(Substring::new(rows)),
        Method::Bm25 | Method::Bm25Definitions | Method::Regex => Box::new(Bm25::new(rows)),
        Method::Bm25Textbook => Box::new(Bm25::textbook(rows)),
        Method::Bm25Stem => Box::new(Bm25f::new(rows, Fields::STEMMED)),
        Method::Bm25f => Box::new(Bm25f::new(rows, Fields::WEIGHTED)),
        Method::Bm25fWordnet | Method::Bm25fWordnetDefinitions => {
            Box::new(Bm25f::new(rows, Fields::EXPANDED))
        }
        Method::Bm25fGaps | Method::Bm25fGapsDefinitions => {
            Box::new(Bm25f::new(rows, Fields::GAPS))
        }
        Method::Bm25Tool | Method::Bm25ToolDefinitions => Box::new(Bm25f::new(rows, Fields::TOOL)),
        Method::Dense => Box::new(Dense::new(rows)?),
        Method::Hybrid | Method::HybridDefinitions => Box::new(Hybrid::new(rows)?),
    })
}

/// The per-row projection's tool definitions as (name, description): what a client's own
/// search over tool definitions indexes.
pub fn definitions(cat: &Catalogue) -> Vec<(String, String)> {
    cat.tools
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                t.parsed()["description"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}
