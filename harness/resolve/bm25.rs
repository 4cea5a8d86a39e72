//! Okapi BM25 (k1 = 1.2, b = 0.75) over each row's key words, category and docstring, with
//! lower-casing, a short stop-word list and plural folding; and the textbook baseline
//! ([`Bm25::textbook`]): the same scoring over name, description and parameter names and
//! descriptions as one document, lower-case alphanumeric words, the stop-word list, nothing
//! folded or stemmed.

use super::bm25f::field_texts;
use super::{searchable, Hit, Resolver};
use crate::catalogue::Row;
use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;
const STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "for", "from", "how", "i", "in", "is",
    "it", "me", "my", "of", "on", "or", "the", "to", "what", "when", "with", "you", "your", "we",
    "this", "that", "can", "please",
];

/// Lower-case words, stop words dropped, a trailing plural `s` folded.
pub fn terms(text: &str) -> Vec<String> {
    words(text)
        .map(|w| {
            if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
                w[..w.len() - 1].to_string()
            } else {
                w
            }
        })
        .collect()
}

/// Lower-case alphanumeric words, stop words dropped.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
}

/// The textbook tokenizer: [`words`], nothing folded.
fn plain_terms(text: &str) -> Vec<String> {
    words(text).collect()
}

pub struct Bm25 {
    /// How a text becomes terms (the same for rows and queries).
    tokenize: fn(&str) -> Vec<String>,
    postings: HashMap<String, Vec<(usize, u32)>>,
    lengths: Vec<u32>,
    enabled: Vec<bool>,
    ranks: Vec<i64>,
    avg_len: f64,
}

impl Bm25 {
    pub fn new(rows: &[Row]) -> Bm25 {
        Bm25::over(rows, searchable, terms)
    }

    /// The textbook baseline: name, description, parameter names and descriptions as one
    /// document, lower-case alphanumeric words without stop words, no folding.
    pub fn textbook(rows: &[Row]) -> Bm25 {
        Bm25::over(rows, |r| field_texts(r).join(" "), plain_terms)
    }

    fn over(rows: &[Row], text: fn(&Row) -> String, tokenize: fn(&str) -> Vec<String>) -> Bm25 {
        let mut postings: HashMap<String, Vec<(usize, u32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(rows.len());
        for (i, r) in rows.iter().enumerate() {
            let words = tokenize(&text(r));
            lengths.push(words.len() as u32);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for w in words {
                *tf.entry(w).or_default() += 1;
            }
            for (w, n) in tf {
                postings.entry(w).or_default().push((i, n));
            }
        }
        let avg_len = if lengths.is_empty() {
            1.0
        } else {
            lengths.iter().map(|&l| l as f64).sum::<f64>() / lengths.len() as f64
        };
        Bm25 {
            tokenize,
            postings,
            lengths,
            enabled: rows.iter().map(|r| r.enabled).collect(),
            ranks: rows.iter().map(|r| r.planner_rank).collect(),
            avg_len,
        }
    }
}

impl Resolver for Bm25 {
    fn resolve(&self, query: &str, limit: usize) -> Vec<Hit> {
        let n = self.lengths.len() as f64;
        let mut scores: HashMap<usize, f64> = HashMap::new();
        let mut q = (self.tokenize)(query);
        q.sort();
        q.dedup();
        for t in &q {
            let Some(list) = self.postings.get(t) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(doc, tf) in list {
                if !self.enabled[doc] {
                    continue;
                }
                let tf = tf as f64;
                let norm = K1 * (1.0 - B + B * self.lengths[doc] as f64 / self.avg_len);
                *scores.entry(doc).or_default() += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let hits = scores
            .into_iter()
            .map(|(row, score)| Hit { row, score })
            .collect();
        super::best(hits, &self.ranks, limit)
    }
}
