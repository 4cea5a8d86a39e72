//! BM25F over a row's fields (Robertson, Zaragoza & Taylor 2004, "Simple BM25 extension to
//! multiple weighted fields"): each field's term frequency is weighted and normalised by that
//! field's length, the sum is saturated once (k1 = 1.2, b = 0.75 in every field). Terms come
//! from [`super::text::terms`] (identifiers split, Snowball stems), so `list_pull_requests`
//! and "listing pull requests" meet. With expansion, each query term also matches its WordNet
//! neighbours at a fraction of its weight, inside the same saturation: every term
//! ([`Expansion::All`]), or only a term the catalogue never uses ([`Expansion::Gaps`]: a word the
//! catalogue has is taken at its word, and synonyms are looked for only where it has none).
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
    /// The four fields as one document, each term counted `weight` times, normalised by the
    /// document's whole length (BM25 over the textbook's document; the weights then only say
    /// how often a field's words count).
    pub joined: bool,
    /// Which query terms are expanded with their WordNet neighbours.
    pub expand: Expansion,
}

/// Which query terms also match their WordNet neighbours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expansion {
    None,
    /// Every term.
    All,
    /// Only a term no row of the catalogue uses.
    Gaps,
}

impl Fields {
    /// Plain BM25 over key, category and docstring, with the new tokenizer.
    pub const STEMMED: Fields = Fields {
        name: 1.0,
        description: 1.0,
        param_names: 0.0,
        param_descriptions: 0.0,
        single: true,
        joined: false,
        expand: Expansion::None,
    };
    /// Name, description and parameter fields, weighted.
    pub const WEIGHTED: Fields = Fields {
        name: 3.0,
        description: 1.0,
        param_names: 1.0,
        param_descriptions: 0.5,
        single: false,
        joined: false,
        expand: Expansion::None,
    };
    /// [`Fields::WEIGHTED`] with WordNet expansion of every query term.
    pub const EXPANDED: Fields = Fields {
        expand: Expansion::All,
        ..Fields::WEIGHTED
    };
    /// [`Fields::WEIGHTED`] with WordNet expansion of the query terms the catalogue lacks.
    pub const GAPS: Fields = Fields {
        expand: Expansion::Gaps,
        ..Fields::WEIGHTED
    };
    /// The default resolver's: one document of name (counted twice: the shortest and most
    /// specific text), description, parameter names and parameter descriptions, with WordNet
    /// expansion of the query terms the catalogue lacks. Per-field normalisation
    /// ([`Fields::GAPS`]) lets a short field's few words outweigh a whole tool; one document
    /// keeps each tool's words in proportion, as the textbook BM25 does.
    pub const TOOL: Fields = Fields {
        name: 2.0,
        description: 1.0,
        param_names: 1.0,
        param_descriptions: 1.0,
        single: false,
        joined: true,
        expand: Expansion::Gaps,
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
    expand: Expansion,
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
        // A joined document's length is its fields' together (the fields of weight 0 are
        // empty), against the average of that.
        let avg_joined: f32 = avg.iter().sum();
        let mut lists: Vec<Vec<(u32, f32)>> = vec![Vec::new(); ids.len()];
        let mut tf = vec![0f32; ids.len()];
        let mut seen: Vec<u32> = Vec::new();
        // Each row's term lists are let go as its postings are written, so the two are not
        // held in full at once.
        for (doc, r) in per_row.into_iter().enumerate() {
            let whole: usize = r.iter().map(Vec::len).sum();
            for (f, t) in r.iter().enumerate() {
                let norm = match fields.joined {
                    true => 1.0 - B + B * whole as f32 / avg_joined,
                    false => 1.0 - B + B * t.len() as f32 / avg[f],
                };
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
            let expand = match self.expand {
                Expansion::None => false,
                Expansion::All => true,
                Expansion::Gaps => own.is_none(),
            };
            if expand {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Runner;

    fn row(key: &str, what: &str) -> Row {
        Row {
            key: key.into(),
            runner: Runner::Fn,
            target: None,
            auth: None,
            content: format!("# WHAT: {what}"),
            category: None,
            planner_rank: 100,
            enabled: true,
            planner_visible: true,
            input_schema: None,
        }
    }

    fn keys(r: &Bm25f, rows: &[Row], q: &str) -> Vec<String> {
        r.resolve(q, 5)
            .into_iter()
            .map(|h| rows[h.row].key.clone())
            .collect()
    }

    /// Expansion of gaps reaches a synonym only for a word no row uses; a word the catalogue
    /// has is taken at its word, so its rows are not joined by its neighbours'.
    #[test]
    fn gaps_expand_only_the_words_the_catalogue_lacks() {
        let rows = vec![
            row("CALL", "ring a telephone number"),
            row("PHONE_BOOK", "list the phone contacts"),
            row("OTHER", "send an email"),
        ];
        let all = Bm25f::new(&rows, Fields::EXPANDED);
        let gaps = Bm25f::new(&rows, Fields::GAPS);
        // "phone" is in the catalogue: every-word expansion also brings the telephone row.
        assert_eq!(keys(&all, &rows, "phone")[..2], ["PHONE_BOOK", "CALL"]);
        assert_eq!(keys(&gaps, &rows, "phone"), ["PHONE_BOOK"]);
        // Where the catalogue lacks the word typed, its WordNet neighbours find the rows.
        let lacking = Bm25f::new(&rows[1..], Fields::GAPS);
        assert_eq!(keys(&lacking, &rows[1..], "telephone"), ["PHONE_BOOK"]);
    }

    /// One document weighs a tool's words in proportion to the whole tool: the same
    /// description in a tool with a long name counts for less, where per-field normalisation
    /// scores the two descriptions alike (a tie, broken by row order).
    #[test]
    fn a_joined_document_is_normalised_by_its_whole_length() {
        let rows = vec![
            row("ZEBRA_LION_TIGER_BEAR_WOLF", "alpha beta"),
            row("CAT", "alpha beta"),
        ];
        let fields = Bm25f::new(&rows, Fields::GAPS);
        assert_eq!(
            keys(&fields, &rows, "alpha"),
            ["ZEBRA_LION_TIGER_BEAR_WOLF", "CAT"]
        );
        let tool = Bm25f::new(&rows, Fields::TOOL);
        assert_eq!(
            keys(&tool, &rows, "alpha"),
            ["CAT", "ZEBRA_LION_TIGER_BEAR_WOLF"]
        );
        // The name counts twice: a query word in a name beats the same word in a description.
        let rows = vec![row("READ", "fetch it"), row("FETCH_PAGE", "read something")];
        let tool = Bm25f::new(&rows, Fields::TOOL);
        assert_eq!(keys(&tool, &rows, "fetch")[0], "FETCH_PAGE");
    }
}
