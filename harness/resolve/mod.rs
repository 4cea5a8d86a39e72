//! Resolvers: from a plain-words intent to ranked catalogue rows.
//!
//! `substring` is the published scorer, kept for reproduction (its noise included) and as the
//! baseline; `bm25` is plain Okapi BM25 (the default before the query sets over real servers);
//! `bm25f-wordnet` ([`Kind::DEFAULT`]) is BM25F over name, description and parameter fields
//! with split identifiers, Snowball stems and WordNet expansion. `search-eval` measures each
//! step on its own: `bm25-stem` (tokenizer only), `bm25f` (fields), `bm25f-wordnet`.

mod bm25;
pub mod bm25f;
pub mod dense;
pub mod registry;
mod substring;
pub mod text;
pub mod wordnet;

pub use bm25::{terms as bm25_terms, Bm25};
pub use bm25f::{Bm25f, Fields};
pub use substring::{Substring, DEMOTED_PREFIXES, PINS};

use crate::catalogue::Row;
use crate::error::{Error, Result};

/// How many candidates an `ask` returns.
pub const TOP: usize = 12;

/// One ranked row.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Index into the rows the resolver was built from.
    pub row: usize,
    pub score: f64,
}

/// The best `limit` of `hits`, best first: higher score, then lower planner rank, then
/// earlier row (a total order, so every resolver breaks ties the same way).
pub(crate) fn best(mut hits: Vec<Hit>, ranks: &[i64], limit: usize) -> Vec<Hit> {
    let by = |a: &Hit, b: &Hit| {
        b.score
            .total_cmp(&a.score)
            .then(ranks[a.row].cmp(&ranks[b.row]))
            .then(a.row.cmp(&b.row))
    };
    if hits.len() > limit && limit > 0 {
        hits.select_nth_unstable_by(limit - 1, by);
    }
    hits.truncate(limit);
    hits.sort_by(by);
    hits
}

/// A resolver over a fixed set of rows.
pub trait Resolver {
    fn resolve(&self, query: &str, limit: usize) -> Vec<Hit>;
}

/// Which resolver an `ask` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Substring,
    Bm25,
    Bm25fWordnet,
    /// Sentence vectors ([`dense::Dense`]); needs the model ([`crate::embed::INSTALL`]).
    Dense,
    /// Sentence vectors fused with BM25F-WordNet ([`dense::Hybrid`]); needs the model.
    Hybrid,
}

impl Kind {
    /// What `ask`, `search_directory` and code mode's `search()` use unless told otherwise.
    pub const DEFAULT: Kind = Kind::Bm25fWordnet;

    pub fn parse(s: &str) -> Result<Kind> {
        match s {
            "substring" => Ok(Kind::Substring),
            "bm25" => Ok(Kind::Bm25),
            "bm25f-wordnet" => Ok(Kind::Bm25fWordnet),
            "dense" => Ok(Kind::Dense),
            "hybrid" => Ok(Kind::Hybrid),
            other => Err(Error::unknown(
                "resolver",
                other,
                &["bm25f-wordnet", "bm25", "substring", "dense", "hybrid"],
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Substring => "substring",
            Kind::Bm25 => "bm25",
            Kind::Bm25fWordnet => "bm25f-wordnet",
            Kind::Dense => "dense",
            Kind::Hybrid => "hybrid",
        }
    }

    /// The method search-eval scores for this kind.
    pub fn method(self) -> Method {
        match self {
            Kind::Substring => Method::Substring,
            Kind::Bm25 => Method::Bm25,
            Kind::Bm25fWordnet => Method::Bm25fWordnet,
            Kind::Dense => Method::Dense,
            Kind::Hybrid => Method::Hybrid,
        }
    }

    /// Whether the resolver needs the sentence encoder.
    pub fn semantic(self) -> bool {
        self.method().semantic()
    }
}

/// Search tool definitions (name, description) the way a tool-search tool does: BM25 over
/// `{"query"}`, or a case-insensitive regex (`re.search` semantics, at most 200 characters) over
/// `{"pattern"}`. At most five names come back, best first.
pub fn search_definitions(
    defs: &[(String, String)],
    search: &serde_json::Value,
    regex: bool,
) -> Result<Vec<String>, String> {
    search_definitions_with(defs, search, regex, Kind::Bm25)
}

/// [`search_definitions`] with the keyword search done by `kind`: the provider's BM25 tool is
/// modelled with [`Kind::Bm25`]; a client's own search tool uses [`Kind::DEFAULT`].
pub fn search_definitions_with(
    defs: &[(String, String)],
    search: &serde_json::Value,
    regex: bool,
    kind: Kind,
) -> Result<Vec<String>, String> {
    if regex {
        let pattern = search
            .get("pattern")
            .and_then(|v| v.as_str())
            .ok_or("a regex search needs `pattern`")?;
        if pattern.chars().count() > 200 {
            return Err("regex patterns are limited to 200 characters".into());
        }
        let re = ::regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .build()
            .map_err(|e| format!("bad pattern: {e}"))?;
        return Ok(defs
            .iter()
            .filter(|(n, d)| re.is_match(n) || re.is_match(d))
            .take(5)
            .map(|(n, _)| n.clone())
            .collect());
    }
    let query = search
        .get("query")
        .and_then(|v| v.as_str())
        .ok_or("a BM25 search needs `query`")?;
    let rows = definition_rows(defs);
    let index: Box<dyn Resolver> = match kind {
        Kind::Substring => Box::new(Substring::new(&rows)),
        Kind::Bm25 => Box::new(Bm25::new(&rows)),
        Kind::Bm25fWordnet => Box::new(Bm25f::new(&rows, Fields::EXPANDED)),
        Kind::Dense => Box::new(dense::Dense::new(&rows).map_err(|e| e.to_string())?),
        Kind::Hybrid => Box::new(dense::Hybrid::new(&rows).map_err(|e| e.to_string())?),
    };
    Ok(index
        .resolve(query, 5)
        .into_iter()
        .map(|h| rows[h.row].key.clone())
        .collect())
}

/// The regex a model writes for a plain-words search: its content words (stop words dropped,
/// plurals folded so that the stem still matches) as a case-insensitive alternation.
pub fn regex_for(query: &str) -> String {
    let words: Vec<String> = bm25_terms(query)
        .into_iter()
        .map(|w| ::regex::escape(&w))
        .collect();
    words.join("|")
}

/// Tool definitions as rows a resolver can index: the name's words, then the description.
pub fn definition_rows(defs: &[(String, String)]) -> Vec<Row> {
    defs.iter()
        .map(|(n, d)| Row {
            key: n.clone(),
            runner: crate::catalogue::Runner::Fn,
            target: None,
            auth: None,
            content: format!("# WHAT: {} {d}", n.replace(['_', '-'], " ")),
            category: None,
            planner_rank: 100,
            enabled: true,
            planner_visible: true,
            input_schema: None,
        })
        .collect()
}

/// The text a resolver searches: key, category and the docstring lines.
pub fn searchable(row: &Row) -> String {
    let docs: Vec<&str> = row.content.lines().filter(|l| l.starts_with('#')).collect();
    format!(
        "{} {} {}",
        row.key,
        row.category.as_deref().unwrap_or(""),
        docs.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{generate::generate, profile::Profile};

    fn rows() -> Vec<Row> {
        generate(Profile::named("seed-2026-07").unwrap(), 856, 1)
    }

    #[test]
    fn substring_reproduces_the_published_noise() {
        let rows = rows();
        let hits = Substring::new(&rows).resolve("what time is it", TOP);
        let keys: Vec<&str> = hits.iter().map(|h| rows[h.row].key.as_str()).collect();
        assert_eq!(keys[0], "NOW", "the pin wins");
        assert_eq!(keys.len(), TOP);
        assert!(
            keys.iter()
                .any(|k| k.starts_with("GITHUB") && k.contains("ISSUE")),
            "{keys:?}"
        );
    }

    #[test]
    fn bm25_ranks_by_meaning_words_and_skips_disabled_rows() {
        let mut rows = rows();
        let r = Bm25::new(&rows);
        let best = |r: &Bm25, rows: &[Row], q: &str| rows[r.resolve(q, TOP)[0].row].key.clone();
        assert_eq!(best(&r, &rows, "send an email to a customer"), "EMAIL_SEND");
        assert_eq!(
            best(&r, &rows, "list the AI gateways on my account"),
            "AIG_LIST"
        );
        assert_eq!(best(&r, &rows, "what time is it in Berlin"), "NOW");
        rows.iter_mut().find(|x| x.key == "NOW").unwrap().enabled = false;
        let r = Bm25::new(&rows);
        assert_ne!(best(&r, &rows, "what time is it in Berlin"), "NOW");
    }
}

/// The resolvers a query set can be scored against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// The published substring scorer over rows (`ask?resolver=substring`).
    Substring,
    /// BM25 over rows: `ask`, the small surface's `search_directory`, code mode's `search()`.
    Bm25,
    /// The textbook baseline: plain BM25 over name, description and parameter names and
    /// descriptions, lower-case words, no stemming (as other people's benchmarks score it).
    Bm25Textbook,
    /// Plain BM25 with the shared tokenizer: split identifiers, Snowball stems, stop words.
    Bm25Stem,
    /// BM25F over name, description, parameter names and parameter descriptions.
    Bm25f,
    /// [`Method::Bm25f`] with WordNet query expansion: the default over rows.
    Bm25fWordnet,
    /// BM25 over tool definitions (name and description): the provider's deferred-search tool.
    Bm25Definitions,
    /// The default resolver over tool definitions: a client's own search tool.
    Bm25fWordnetDefinitions,
    /// A case-insensitive alternation of the query's content words over tool definitions,
    /// first five matches in catalogue order: the deferred-search regex tool.
    Regex,
    /// Cosine between sentence vectors (all-MiniLM-L6-v2) over rows.
    Dense,
    /// [`Method::Dense`] and [`Method::Bm25fWordnet`] fused by reciprocal rank, over rows.
    Hybrid,
    /// [`Method::Hybrid`] over tool definitions: a client's own semantic search tool.
    HybridDefinitions,
}

impl Method {
    pub const ALL: [Method; 12] = [
        Method::Substring,
        Method::Bm25,
        Method::Bm25Textbook,
        Method::Bm25Stem,
        Method::Bm25f,
        Method::Bm25fWordnet,
        Method::Bm25Definitions,
        Method::Bm25fWordnetDefinitions,
        Method::Regex,
        Method::Dense,
        Method::Hybrid,
        Method::HybridDefinitions,
    ];
    pub const NAMES: [&'static str; 12] = [
        "substring",
        "bm25",
        "bm25-textbook",
        "bm25-stem",
        "bm25f",
        "bm25f-wordnet",
        "bm25-definitions",
        "bm25f-wordnet-definitions",
        "regex",
        "dense",
        "hybrid",
        "hybrid-definitions",
    ];

    pub fn parse(s: &str) -> crate::error::Result<Method> {
        Method::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| Method::ALL[i])
            .ok_or_else(|| Error::unknown("resolver", s, &Method::NAMES))
    }

    pub fn name(self) -> &'static str {
        Method::NAMES[Method::ALL.iter().position(|m| *m == self).unwrap()]
    }

    /// How many results the resolver ever returns.
    pub fn depth(self) -> usize {
        match self {
            Method::Substring
            | Method::Bm25
            | Method::Bm25Textbook
            | Method::Bm25Stem
            | Method::Bm25f
            | Method::Bm25fWordnet
            | Method::Dense
            | Method::Hybrid => TOP,
            Method::Bm25Definitions
            | Method::Bm25fWordnetDefinitions
            | Method::Regex
            | Method::HybridDefinitions => 5,
        }
    }

    /// Whether the method needs the sentence encoder ([`crate::embed`]).
    pub fn semantic(self) -> bool {
        match self {
            Method::Dense | Method::Hybrid | Method::HybridDefinitions => true,
            Method::Substring
            | Method::Bm25
            | Method::Bm25Textbook
            | Method::Bm25Stem
            | Method::Bm25f
            | Method::Bm25fWordnet
            | Method::Bm25Definitions
            | Method::Bm25fWordnetDefinitions
            | Method::Regex => false,
        }
    }
}
