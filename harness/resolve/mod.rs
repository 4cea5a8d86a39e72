//! Resolvers: from a plain-words intent to ranked catalogue rows.
//!
//! `substring` is the published scorer, kept for reproduction (its noise included) and as the
//! baseline; `bm25` is plain Okapi BM25 (the default before the query sets over real servers);
//! `bm25f-wordnet` is BM25F over name, description and parameter fields with split
//! identifiers, Snowball stems and WordNet expansion of every query word; `bm25f-gaps`
//! expands only the query words the catalogue never uses; `bm25-tool` ([`Kind::DEFAULT`]) is
//! that tokenizer and expansion over the four fields as one document, the name counted twice.
//! `search-eval` measures each step on its own: `bm25-stem` (tokenizer only), `bm25f`
//! (fields), `bm25f-wordnet`, `bm25f-gaps`, `bm25-tool`, against `bm25-textbook`, the
//! baseline other benchmarks score.

mod bm25;
pub mod bm25f;
pub mod dense;
pub mod registry;
mod substring;
pub mod text;
pub mod wordnet;

pub use bm25::{terms as bm25_terms, Bm25};
pub use bm25f::{Bm25f, Expansion, Fields};
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
    Bm25fGaps,
    Bm25Tool,
    /// Sentence vectors ([`dense::Dense`]); needs the model ([`crate::embed::INSTALL`]).
    Dense,
    /// Sentence vectors fused with the default lexical resolver ([`dense::Hybrid`]); needs the
    /// model.
    Hybrid,
}

impl Kind {
    /// What `ask`, `search_directory` and code mode's `search()` use unless told otherwise.
    pub const DEFAULT: Kind = Kind::Bm25Tool;

    pub fn parse(s: &str) -> Result<Kind> {
        match s {
            "substring" => Ok(Kind::Substring),
            "bm25" => Ok(Kind::Bm25),
            "bm25f-wordnet" => Ok(Kind::Bm25fWordnet),
            "bm25f-gaps" => Ok(Kind::Bm25fGaps),
            "bm25-tool" => Ok(Kind::Bm25Tool),
            "dense" => Ok(Kind::Dense),
            "hybrid" => Ok(Kind::Hybrid),
            other => Err(Error::unknown(
                "resolver",
                other,
                &[
                    "bm25-tool",
                    "bm25f-gaps",
                    "bm25f-wordnet",
                    "bm25",
                    "substring",
                    "dense",
                    "hybrid",
                ],
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Substring => "substring",
            Kind::Bm25 => "bm25",
            Kind::Bm25fWordnet => "bm25f-wordnet",
            Kind::Bm25fGaps => "bm25f-gaps",
            Kind::Bm25Tool => "bm25-tool",
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
            Kind::Bm25fGaps => Method::Bm25fGaps,
            Kind::Bm25Tool => Method::Bm25Tool,
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
    search_definitions_with(defs, search, regex, Method::Bm25)
}

/// [`search_definitions`] with the keyword search done by `method` (any resolver by name, run
/// over the definitions): the provider's BM25 tool is modelled with [`Method::Bm25`]; a
/// client's own search tool uses [`Kind::DEFAULT`] unless a scenario names another.
pub fn search_definitions_with(
    defs: &[(String, String)],
    search: &serde_json::Value,
    regex: bool,
    method: Method,
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
    let index = registry::over_rows(method, &rows).map_err(|e| e.to_string())?;
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
    fn every_method_is_found_by_its_name() {
        for m in Method::ALL {
            assert_eq!(Method::parse(m.name()).unwrap(), m);
        }
        assert_eq!(Method::Regex.depth(), 5);
        assert_eq!(Method::Bm25Tool.depth(), TOP);
        assert_eq!(
            Method::parse(Kind::DEFAULT.name()).unwrap(),
            Kind::DEFAULT.method()
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
    /// Plain BM25 over rows (key, category and docstring), the default before the real sets.
    Bm25,
    /// The textbook baseline: plain BM25 over name, description and parameter names and
    /// descriptions, lower-case words, no stemming (as other people's benchmarks score it).
    Bm25Textbook,
    /// Plain BM25 with the shared tokenizer: split identifiers, Snowball stems, stop words.
    Bm25Stem,
    /// BM25F over name, description, parameter names and parameter descriptions.
    Bm25f,
    /// [`Method::Bm25f`] with WordNet expansion of every query word.
    Bm25fWordnet,
    /// [`Method::Bm25f`] with WordNet expansion of the query words the catalogue lacks.
    Bm25fGaps,
    /// The fields of [`Method::Bm25f`] as one document (the name twice), with the expansion of
    /// [`Method::Bm25fGaps`]: the default over rows.
    Bm25Tool,
    /// BM25 over tool definitions (name and description): the provider's deferred-search tool.
    Bm25Definitions,
    /// [`Method::Bm25fWordnet`] over tool definitions.
    Bm25fWordnetDefinitions,
    /// [`Method::Bm25fGaps`] over tool definitions.
    Bm25fGapsDefinitions,
    /// The default resolver over tool definitions: a client's own search tool.
    Bm25ToolDefinitions,
    /// A case-insensitive alternation of the query's content words over tool definitions,
    /// first five matches in catalogue order: the deferred-search regex tool.
    Regex,
    /// Cosine between sentence vectors (all-MiniLM-L6-v2) over rows.
    Dense,
    /// [`Method::Dense`] and the default lexical resolver fused by reciprocal rank, over rows.
    Hybrid,
    /// [`Method::Hybrid`] over tool definitions: a client's own semantic search tool.
    HybridDefinitions,
}

impl Method {
    pub const ALL: [Method; 16] = [
        Method::Substring,
        Method::Bm25,
        Method::Bm25Textbook,
        Method::Bm25Stem,
        Method::Bm25f,
        Method::Bm25fWordnet,
        Method::Bm25fGaps,
        Method::Bm25Tool,
        Method::Bm25Definitions,
        Method::Bm25fWordnetDefinitions,
        Method::Bm25fGapsDefinitions,
        Method::Bm25ToolDefinitions,
        Method::Regex,
        Method::Dense,
        Method::Hybrid,
        Method::HybridDefinitions,
    ];
    pub const NAMES: [&'static str; 16] = [
        "substring",
        "bm25",
        "bm25-textbook",
        "bm25-stem",
        "bm25f",
        "bm25f-wordnet",
        "bm25f-gaps",
        "bm25-tool",
        "bm25-definitions",
        "bm25f-wordnet-definitions",
        "bm25f-gaps-definitions",
        "bm25-tool-definitions",
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

    /// How many results the resolver ever returns: a search over tool definitions shows five,
    /// as a tool-search tool does; one over rows the whole `ask` list.
    pub fn depth(self) -> usize {
        match self.over_definitions() {
            Some(_) => 5,
            None => TOP,
        }
    }

    /// The search this method runs: a method over tool definitions is the method it runs over
    /// them, so a name and its `-definitions` form are one search.
    pub fn runs(self) -> Method {
        self.over_definitions().unwrap_or(self)
    }

    /// For a method over tool definitions, the method it runs over them.
    pub fn over_definitions(self) -> Option<Method> {
        match self {
            Method::Bm25Definitions | Method::Regex => Some(Method::Bm25),
            Method::Bm25fWordnetDefinitions => Some(Method::Bm25fWordnet),
            Method::Bm25fGapsDefinitions => Some(Method::Bm25fGaps),
            Method::Bm25ToolDefinitions => Some(Method::Bm25Tool),
            Method::HybridDefinitions => Some(Method::Hybrid),
            Method::Substring
            | Method::Bm25
            | Method::Bm25Textbook
            | Method::Bm25Stem
            | Method::Bm25f
            | Method::Bm25fWordnet
            | Method::Bm25fGaps
            | Method::Bm25Tool
            | Method::Dense
            | Method::Hybrid => None,
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
            | Method::Bm25fGaps
            | Method::Bm25Tool
            | Method::Bm25Definitions
            | Method::Bm25fWordnetDefinitions
            | Method::Bm25fGapsDefinitions
            | Method::Bm25ToolDefinitions
            | Method::Regex => false,
        }
    }
}
