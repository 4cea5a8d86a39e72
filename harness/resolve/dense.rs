//! Semantic resolvers: `dense` ranks rows by the cosine between the query's sentence vector
//! and each row's ([`crate::embed`], all-MiniLM-L6-v2); `hybrid` fuses that ranking with the
//! default lexical one by reciprocal rank (Cormack, Clarke & Buettcher 2009: each list gives a
//! row `1 / (60 + rank)`; 60 is their constant, not fitted here).
//!
//! A row is read as a person reads a tool: its name's words, its description, its parameter
//! names. Row vectors come from the on-disk cache when the same rows were encoded before.

use super::bm25f::{field_texts, Bm25f, Fields};
use super::text::words;
use super::{Hit, Resolver};
use crate::catalogue::Row;
use crate::embed::{cache, minilm::WIDTH, Encoder};
use crate::error::Result;

/// Reciprocal-rank fusion's constant.
const RRF_K: f64 = 60.0;
/// How deep each fused list is read.
const FUSE_DEPTH: usize = 100;

pub struct Dense {
    encoder: &'static Encoder,
    vectors: Vec<f32>,
    enabled: Vec<bool>,
    ranks: Vec<i64>,
}

impl Dense {
    /// The shared encoder over `rows`; an error that says how to install the model if it is
    /// missing.
    pub fn new(rows: &[Row]) -> Result<Dense> {
        let encoder = Encoder::shared()?;
        let texts: Vec<String> = rows.iter().map(text).collect();
        Ok(Dense {
            encoder,
            vectors: cache::vectors(encoder, &texts),
            enabled: rows.iter().map(|r| r.enabled).collect(),
            ranks: rows.iter().map(|r| r.planner_rank).collect(),
        })
    }
}

impl Resolver for Dense {
    fn resolve(&self, query: &str, limit: usize) -> Vec<Hit> {
        let q = self.encoder.encode(query);
        let hits = self
            .vectors
            .chunks_exact(WIDTH)
            .enumerate()
            .filter(|(i, _)| self.enabled[*i])
            .map(|(row, v)| Hit {
                row,
                score: dot(&q, v) as f64,
            })
            .collect();
        super::best(hits, &self.ranks, limit)
    }
}

/// [`Dense`] and the default lexical resolver ([`Fields::TOOL`]), fused by reciprocal rank.
pub struct Hybrid {
    dense: Dense,
    lexical: Bm25f,
}

impl Hybrid {
    pub fn new(rows: &[Row]) -> Result<Hybrid> {
        Ok(Hybrid {
            dense: Dense::new(rows)?,
            lexical: Bm25f::new(rows, Fields::TOOL),
        })
    }
}

impl Resolver for Hybrid {
    fn resolve(&self, query: &str, limit: usize) -> Vec<Hit> {
        fuse(&self.dense, &self.lexical, query, limit)
    }
}

/// The reciprocal-rank fusion of `dense` and a lexical index over the same rows (the server
/// fuses its snapshot's own indexes, so that a hybrid search holds no second copy of them).
pub fn fuse(dense: &Dense, lexical: &dyn Resolver, query: &str, limit: usize) -> Vec<Hit> {
    let mut fused: std::collections::HashMap<usize, f64> = std::collections::HashMap::new();
    for list in [
        dense.resolve(query, FUSE_DEPTH),
        lexical.resolve(query, FUSE_DEPTH),
    ] {
        for (rank, h) in list.into_iter().enumerate() {
            *fused.entry(h.row).or_default() += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let hits = fused
        .into_iter()
        .map(|(row, score)| Hit { row, score })
        .collect();
    super::best(hits, &dense.ranks, limit)
}

/// What the encoder reads for a row: `name words: description. Parameters: a, b`.
pub fn text(row: &Row) -> String {
    let [key, description, params, _] = field_texts(row);
    let description: Vec<&str> = description
        .split_whitespace()
        .filter(|w| !is_marker(w))
        .collect();
    let mut out = format!("{}: {}", words(&key).join(" "), description.join(" "));
    let params: Vec<&str> = params.split_whitespace().collect();
    if !params.is_empty() {
        out.push_str(". Parameters: ");
        out.push_str(&params.join(", "));
    }
    out
}

/// The docstring's line markers (`#`, `WHAT:`, `WHEN_TO_USE:`), which are layout, not meaning.
fn is_marker(w: &str) -> bool {
    w == "#"
        || (w.len() > 1
            && w.ends_with(':')
            && w[..w.len() - 1]
                .chars()
                .all(|c| c.is_ascii_uppercase() || c == '_'))
}

/// The dot product of two equal-length vectors, in eight lanes the compiler keeps in one
/// register.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ac.zip(bc) {
        for ((l, a), b) in lanes.iter_mut().zip(x).zip(y) {
            *l += a * b;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_as_name_description_and_parameters() {
        let row: Row = serde_json::from_value(serde_json::json!({
            "key": "GITHUB_CREATE_ISSUE", "type": "fn", "category": "github",
            "content": "# WHAT: Create an issue.\n# WHEN_TO_USE: filing bugs\nbody",
            "input_schema": {"type": "object", "properties": {"title": {}, "body": {}}}
        }))
        .unwrap();
        assert_eq!(
            text(&row),
            "github create issue: github Create an issue. filing bugs. Parameters: title, body"
        );
        assert_eq!(dot(&[1.0; 11], &[2.0; 11]), 22.0);
    }
}
