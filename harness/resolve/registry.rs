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
        Ok(match method {
            Method::Substring => Index::Rows(Box::new(Substring::new(rows)), keys()),
            Method::Bm25 => Index::Rows(Box::new(Bm25::new(rows)), keys()),
            Method::Bm25Textbook => Index::Rows(Box::new(Bm25::textbook(rows)), keys()),
            Method::Bm25Stem => Index::Rows(Box::new(Bm25f::new(rows, Fields::STEMMED)), keys()),
            Method::Bm25f => Index::Rows(Box::new(Bm25f::new(rows, Fields::WEIGHTED)), keys()),
            Method::Bm25fWordnet => {
                Index::Rows(Box::new(Bm25f::new(rows, Fields::EXPANDED)), keys())
            }
            Method::Dense => Index::Rows(Box::new(Dense::new(rows)?), keys()),
            Method::Hybrid => Index::Rows(Box::new(Hybrid::new(rows)?), keys()),
            Method::Bm25Definitions
            | Method::Bm25fWordnetDefinitions
            | Method::HybridDefinitions => {
                let defs = definitions(cat);
                let drows = super::definition_rows(&defs);
                let names = drows.iter().map(|r| r.key.clone()).collect();
                let index: Box<dyn Resolver + Send + Sync> = match method {
                    Method::Bm25Definitions => Box::new(Bm25::new(&drows)),
                    Method::HybridDefinitions => Box::new(Hybrid::new(&drows)?),
                    _ => Box::new(Bm25f::new(&drows, Fields::EXPANDED)),
                };
                Index::Rows(index, names)
            }
            Method::Regex => Index::Regex(definitions(cat)),
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
