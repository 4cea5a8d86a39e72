//! BM25F over a row's fields (Robertson, Zaragoza & Taylor 2004, "Simple BM25 extension to
//! multiple weighted fields"): each field's term frequency is weighted and normalised by that
//! field's length, the sum is saturated once (k1 = 1.2, b = 0.75 in every field). Terms come
//! from [`super::text::terms`] (identifiers split, Snowball stems), so `list_pull_requests`
//! and "listing pull requests" meet. With expansion, each query term also matches its WordNet
//! neighbours at a fraction of its weight, inside the same saturation.
//!
//! The weights are fixed by principle, not fitted to a query set: the name is the shortest and
//! most specific field (3), the description the reference (1), parameter names say what the
//! row acts on (1), parameter descriptions are long and generic (0.5); an expanded term counts
//! 0.3 of the word the user typed, and a query longer than an intent (a whole task, as tool
//! retrieval benchmarks state them) shares that weight out so that its expansion weighs as
//! much as a six-word intent's.

use super::text::{for_each_term, query_terms};
use super::{searchable, Hit, Resolver};
use crate::catalogue::{Row, RowSchema};
use std::collections::HashMap;

const K1: f32 = 1.2;
const B: f32 = 0.75;
/// What one expanded (WordNet) occurrence counts against one typed word.
pub const EXPANSION_WEIGHT: f32 = 0.3;
/// Query terms up to which expansion is in full: as long as 95% of the intents in the
/// hand-written real set and the generated sets (their 95th percentiles are 7 and 6 content
/// words, medians 4), not fitted to any score.
pub const FULL_EXPANSION_TERMS: usize = 6;

/// Which fields are indexed and how each weighs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fields {
    pub name: f32,
    pub description: f32,
    pub param_names: f32,
    pub param_descriptions: f32,
    /// One field (key, category and docstring together), as plain BM25 does.
    pub single: bool,
    /// Expand query terms with WordNet neighbours.
    pub expand: bool,
}

impl Fields {
    /// Plain BM25 over key, category and docstring, with the new tokenizer.
    pub const STEMMED: Fields = Fields {
        name: 1.0,
        description: 1.0,
        param_names: 0.0,
        param_descriptions: 0.0,
        single: true,
        expand: false,
    };
    /// Name, description and parameter fields, weighted.
    pub const WEIGHTED: Fields = Fields {
        name: 3.0,
        description: 1.0,
        param_names: 1.0,
        param_descriptions: 0.5,
        single: false,
        expand: false,
    };
    /// [`Fields::WEIGHTED`] with WordNet expansion.
    pub const EXPANDED: Fields = Fields {
        expand: true,
        ..Fields::WEIGHTED
    };
}

/// The text of each field of a row: name, description, parameter names, parameter
/// descriptions.
pub fn field_texts(row: &Row) -> [String; 4] {
    let docs: Vec<&str> = row.content.lines().filter(|l| l.starts_with('#')).collect();
    let description = format!(
        "{} {}",
        row.category.as_deref().unwrap_or(""),
        docs.join(" ")
    );
    let mut names = String::new();
    let mut descs = String::new();
    let schema = row.input_schema.as_ref().map(RowSchema::value);
    if let Some(props) = schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.as_object())
    {
        for (k, v) in props {
            names.push_str(k);
            names.push(' ');
            if let Some(d) = v.get("description").and_then(|d| d.as_str()) {
                descs.push_str(d);
                descs.push(' ');
            }
        }
    }
    [row.key.clone(), description, names, descs]
}

/// Term -> `T`, hashed with foldhash rather than SipHash (see the term memo in `text.rs`). Its
/// keys are the catalogue's terms; a query's are only looked up.
type Terms<T> = HashMap<String, T, foldhash::fast::RandomState>;

pub struct Bm25f {
    /// Term -> (doc, weighted length-normalised frequency summed over fields).
    postings: Terms<Vec<(u32, f32)>>,
    ranks: Vec<i64>,
    docs: usize,
    expand: bool,
}

impl Bm25f {
    pub fn new(rows: &[Row], fields: Fields) -> Bm25f {
        let weights = [
            fields.name,
            fields.description,
            fields.param_names,
            fields.param_descriptions,
        ];
        let nf = if fields.single { 1 } else { 4 };
        let w = if fields.single {
            vec![1.0]
        } else {
            weights.to_vec()
        };
        // Terms are numbered as they are first seen, so each row's fields are lists of numbers
        // and a term's text is kept once.
        let mut ids: Terms<u32> = Terms::default();
        let mut field_terms = |text: &str| {
            let mut out = Vec::new();
            for_each_term(text, |t| {
                let next = ids.len() as u32;
                let id = match ids.get(t) {
                    Some(&id) => id,
                    None => *ids.entry(t.to_string()).or_insert(next),
                };
                out.push(id);
            });
            out
        };
        let per_row: Vec<Vec<Vec<u32>>> = rows
            .iter()
            .map(|r| {
                if !r.enabled {
                    return vec![Vec::new()];
                }
                if fields.single {
                    vec![field_terms(&searchable(r))]
                } else {
                    field_texts(r)
                        .iter()
                        .zip(weights)
                        .map(|(t, w)| if w > 0.0 { field_terms(t) } else { Vec::new() })
                        .collect()
                }
            })
            .collect();
        let mut avg = vec![0f32; nf];
        for r in &per_row {
            for (f, t) in r.iter().enumerate() {
                avg[f] += t.len() as f32;
            }
        }
        for a in &mut avg {
            *a = (*a / rows.len().max(1) as f32).max(1.0);
        }
        let mut lists: Vec<Vec<(u32, f32)>> = vec![Vec::new(); ids.len()];
        let mut tf = vec![0f32; ids.len()];
        let mut seen: Vec<u32> = Vec::new();
        // Each row's term lists are let go as its postings are written, so the two are not
        // held in full at once.
        for (doc, r) in per_row.into_iter().enumerate() {
            for (f, t) in r.iter().enumerate() {
                let norm = 1.0 - B + B * t.len() as f32 / avg[f];
                for &term in t {
                    if tf[term as usize] == 0.0 {
                        seen.push(term);
                    }
                    tf[term as usize] += w[f] / norm;
                }
            }
            for &term in &seen {
                lists[term as usize].push((doc as u32, tf[term as usize]));
                tf[term as usize] = 0.0;
            }
            seen.clear();
        }
        let postings: Terms<Vec<(u32, f32)>> = ids
            .into_iter()
            .map(|(term, id)| (term, std::mem::take(&mut lists[id as usize])))
            .collect();
        Bm25f {
            postings,
            ranks: rows.iter().map(|r| r.planner_rank).collect(),
            docs: rows.len(),
            expand: fields.expand,
        }
    }

    fn idf(&self, df: usize) -> f32 {
        let (n, df) = (self.docs as f32, df as f32);
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }
}

impl Resolver for Bm25f {
    fn resolve(&self, query: &str, limit: usize) -> Vec<Hit> {
        let mut q = query_terms(query);
        q.sort();
        q.dedup();
        // Expansion finds the words a short intent did not use; in a long query (a whole task)
        // the typed words already say what is wanted, and every word's neighbours add noise.
        // An intent of up to FULL_EXPANSION_TERMS content words is expanded in full; a longer
        // query's expansion keeps the total weight of one that long.
        let expansion =
            EXPANSION_WEIGHT * (FULL_EXPANSION_TERMS as f32 / q.len().max(1) as f32).min(1.0);
        let mut scores = vec![0f32; self.docs];
        let mut tf = vec![0f32; self.docs];
        let mut touched: Vec<u32> = Vec::new();
        let mut any: Vec<u32> = Vec::new();
        for t in &q {
            let own = self.postings.get(t);
            let mut df = own.map_or(0, Vec::len);
            let mut add = |list: &Vec<(u32, f32)>, weight: f32, touched: &mut Vec<u32>| {
                for &(doc, v) in list {
                    if tf[doc as usize] == 0.0 {
                        touched.push(doc);
                    }
                    tf[doc as usize] += weight * v;
                }
            };
            if let Some(list) = own {
                add(list, 1.0, &mut touched);
            }
            if self.expand {
                for s in super::wordnet::related(t) {
                    if q.contains(s) {
                        continue;
                    }
                    if let Some(list) = self.postings.get(s) {
                        if own.is_none() {
                            df = df.max(list.len());
                        }
                        add(list, expansion, &mut touched);
                    }
                }
            }
            let idf = self.idf(df);
            for &doc in &touched {
                let x = tf[doc as usize];
                if scores[doc as usize] == 0.0 {
                    any.push(doc);
                }
                scores[doc as usize] += idf * x * (K1 + 1.0) / (x + K1);
                tf[doc as usize] = 0.0;
            }
            touched.clear();
        }
        let hits = any
            .into_iter()
            .map(|d| Hit {
                row: d as usize,
                score: scores[d as usize] as f64,
            })
            .collect();
        super::best(hits, &self.ranks, limit)
    }
}
