//! Labelled query sets: for a sample of a generated catalogue's rows, one query in the row's
//! own words (`lexical`) and one that a user might type without having read the row
//! (`paraphrase`: synonyms for the verb and the resource, the service named as users name it).
//! Each query carries every key that answers it: rows generated from the same verb, resource and
//! service are interchangeable, so any of them counts as found.

use crate::catalogue::fixed;
use crate::catalogue::generate::{Generator, Intent};
use crate::catalogue::profile::Profile;
use crate::catalogue::Row;
use crate::error::Result;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How a query was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum QueryKind {
    /// The row's own verb and resource words.
    Lexical,
    /// Synonyms for both; the words the row uses are avoided where a synonym allows it.
    Paraphrase,
    /// A whole task as a benchmark states it (long, several steps): every one of its relevant
    /// tools is needed, so recall is the share of them found.
    Task,
}

impl QueryKind {
    pub fn name(self) -> &'static str {
        match self {
            QueryKind::Lexical => "lexical",
            QueryKind::Paraphrase => "paraphrase",
            QueryKind::Task => "task",
        }
    }
}

/// One labelled query (a line of a query-set JSONL file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Query {
    pub text: String,
    pub kind: QueryKind,
    /// The row the query was written from.
    pub target: String,
    /// Every key that answers the query (the target included).
    pub relevant: Vec<String>,
    /// Share of the query's content words that appear nowhere in the target row's text.
    #[serde(default)]
    pub novel_words: f64,
    /// For a set written over several captured servers: the capture the query belongs to
    /// (the file name without `.tools.json`); only that capture's tools are searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

/// How users say each verb without the row's word.
const VERB_PARAPHRASES: &[(&str, &[&str])] = &[
    (
        "LIST",
        &[
            "show me all the",
            "enumerate the",
            "browse every one of the",
        ],
    ),
    (
        "GET",
        &[
            "look up a single one of the",
            "retrieve one of the",
            "read one of the",
        ],
    ),
    (
        "CREATE",
        &[
            "make a new one of the",
            "add another of the",
            "open a fresh one of the",
        ],
    ),
    (
        "UPDATE",
        &["change one of the", "edit one of the", "modify one of the"],
    ),
    (
        "DELETE",
        &[
            "remove one of the",
            "erase one of the",
            "get rid of one of the",
        ],
    ),
    ("SEARCH", &["find matching", "look for", "hunt through the"]),
    (
        "SEND",
        &[
            "deliver one of the",
            "post one of the",
            "transmit one of the",
        ],
    ),
    (
        "EXPORT",
        &[
            "download a dump of the",
            "get a copy of all the",
            "back up the",
        ],
    ),
    (
        "SYNC",
        &["mirror the", "reconcile the", "bring up to date the"],
    ),
    (
        "ARCHIVE",
        &[
            "put away one of the",
            "shelve one of the",
            "retire one of the",
        ],
    ),
    ("COUNT", &["how many", "tally the", "give me the number of"]),
    (
        "QUERY",
        &[
            "run a lookup over the",
            "ask a question of the",
            "pull figures from the",
        ],
    ),
];

/// How users name each resource without the row's word.
const RESOURCE_PARAPHRASES: &[(&str, &[&str])] = &[
    ("invoice items", &["billing line entries"]),
    ("invoices", &["bills", "statements"]),
    ("customers", &["clients", "buyers"]),
    ("charges", &["payments", "card transactions"]),
    ("refunds", &["reimbursements", "money returned"]),
    ("subscriptions", &["recurring plans", "memberships"]),
    ("issues", &["bug reports", "tracker entries"]),
    ("pull requests", &["merge requests", "code reviews"]),
    ("repositories", &["codebases", "repos"]),
    ("branches", &["lines of development", "forks"]),
    ("commits", &["changesets", "revisions"]),
    ("workflow runs", &["pipeline executions", "CI builds"]),
    (
        "Workers scripts",
        &["edge functions", "serverless handlers"],
    ),
    ("zones", &["domains", "sites"]),
    ("DNS records", &["name server entries", "domain entries"]),
    ("buckets", &["storage containers", "blob stores"]),
    ("objects", &["stored blobs", "uploaded items"]),
    ("databases", &["datastores", "SQL instances"]),
    ("queries", &["saved lookups", "stored searches"]),
    ("namespaces", &["key spaces", "scopes"]),
    ("channels", &["chat rooms", "conversations spaces"]),
    ("messages", &["chat posts", "notes"]),
    ("threads", &["conversations", "reply chains"]),
    ("pages", &["wiki documents", "notes pages"]),
    ("blocks", &["content sections", "paragraphs"]),
    ("tasks", &["to-dos", "work items"]),
    ("projects", &["initiatives", "workstreams"]),
    ("orders", &["purchases", "sales"]),
    ("products", &["merchandise", "items for sale"]),
    ("contacts", &["people", "address book entries"]),
    ("contact identities", &["linked accounts of people"]),
    ("deals", &["sales opportunities", "prospects"]),
    ("tickets", &["support cases", "help requests"]),
    ("events", &["appointments", "meetings"]),
    ("calendars", &["schedules", "agendas"]),
    ("files", &["documents", "attachments"]),
    ("folders", &["directories", "drives"]),
    ("spreadsheets", &["workbooks", "tables"]),
    ("alerts", &["warnings", "alarms"]),
    ("monitors", &["health checks", "uptime probes"]),
    ("incidents", &["outages", "disruptions"]),
    ("deployments", &["releases", "rollouts"]),
    ("log lines", &["audit trail entries", "console output"]),
    ("metrics", &["measurements", "time series"]),
    ("gateways", &["proxies", "entry points"]),
    ("models", &["LLMs", "neural nets"]),
    ("users", &["accounts", "members"]),
    ("teams", &["groups", "squads"]),
    ("webhooks", &["callbacks", "event subscriptions"]),
    ("reports", &["summaries", "dashboards"]),
    ("drafts", &["unsent versions", "work in progress"]),
    ("labels", &["tags", "categories"]),
    ("records", &["entries", "rows"]),
    ("places", &["locations", "venues"]),
    ("secrets", &["credentials", "API keys"]),
];

fn lookup<'a>(table: &'a [(&str, &'a [&'a str])], key: &str) -> &'a [&'a str] {
    table
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
        .unwrap_or(&[])
}

fn novelty(query: &str, row_text: &str) -> f64 {
    let row: std::collections::HashSet<String> =
        crate::resolve::bm25_terms(row_text).into_iter().collect();
    let words = crate::resolve::bm25_terms(query);
    if words.is_empty() {
        return 0.0;
    }
    words.iter().filter(|w| !row.contains(*w)).count() as f64 / words.len() as f64
}

/// The alternative with the most words the row does not use (the first on a tie).
fn most_novel<'a>(options: &[&'a str], row_text: &str) -> Option<&'a str> {
    let mut best: Option<(&str, f64)> = None;
    for o in options {
        let n = novelty(o, row_text);
        if best.is_none_or(|(_, b)| n > b) {
            best = Some((o, n));
        }
    }
    best.map(|(o, _)| o)
}

/// Generate a catalogue and its query set: `targets` rows sampled evenly (the fixed rows
/// always), two queries each.
pub fn generate(
    profile: Profile,
    rows: usize,
    seed: u64,
    targets: usize,
) -> Result<(Vec<Row>, Vec<Query>)> {
    let mut gen = Generator::new(profile, rows, seed, false);
    let mut out = Vec::with_capacity(rows);
    let mut intents: Vec<Option<Intent>> = Vec::with_capacity(rows);
    while let Some(row) = gen.next() {
        intents.push(gen.last_intent().cloned());
        out.push(row);
    }
    let queries = label(&out, &intents, targets, seed);
    Ok((out, queries))
}

fn label(rows: &[Row], intents: &[Option<Intent>], targets: usize, seed: u64) -> Vec<Query> {
    let mut same: HashMap<&Intent, Vec<String>> = HashMap::new();
    for (row, intent) in rows.iter().zip(intents) {
        if let Some(i) = intent {
            same.entry(i).or_default().push(row.key.clone());
        }
    }
    let text = |r: &Row| crate::resolve::searchable(r);
    let mut queries = Vec::new();
    for (key, lexical, paraphrase) in fixed::QUERIES {
        if let Some(row) = rows.iter().find(|r| r.key == *key) {
            for (kind, q) in [
                (QueryKind::Lexical, *lexical),
                (QueryKind::Paraphrase, *paraphrase),
            ] {
                queries.push(Query {
                    text: q.to_string(),
                    kind,
                    target: key.to_string(),
                    relevant: vec![key.to_string()],
                    novel_words: novelty(q, &text(row)),
                    server: None,
                });
            }
        }
    }
    let generated: Vec<usize> = (0..rows.len()).filter(|&i| intents[i].is_some()).collect();
    let take = targets.min(generated.len());
    let mut rng = Rng::new(seed ^ 0x5157_4e41_4d45_5331);
    for j in 0..take {
        let i = generated[j * generated.len() / take];
        let (row, intent) = (&rows[i], intents[i].as_ref().unwrap());
        let relevant = same[intent].clone();
        let row_text = text(row);
        let lexical = format!(
            "{} {} in {}",
            intent.verb.to_lowercase(),
            intent.resource,
            intent.service
        );
        let verbs = lookup(VERB_PARAPHRASES, intent.verb);
        let nouns = lookup(RESOURCE_PARAPHRASES, intent.resource);
        // Vary the phrasing by seed, then keep the variant that avoids the row's words most.
        let start = rng.below(verbs.len().max(1));
        let rotated: Vec<&str> = verbs
            .iter()
            .cycle()
            .skip(start)
            .take(verbs.len())
            .copied()
            .collect();
        let verb = most_novel(&rotated, &row_text).unwrap_or(intent.verb);
        let noun = most_novel(nouns, &row_text).unwrap_or(intent.resource);
        let paraphrase = format!("{verb} {noun} in {}", intent.service);
        for (kind, q) in [
            (QueryKind::Lexical, lexical),
            (QueryKind::Paraphrase, paraphrase),
        ] {
            let novel_words = novelty(&q, &row_text);
            queries.push(Query {
                text: q,
                kind,
                target: row.key.clone(),
                relevant: relevant.clone(),
                novel_words,
                server: None,
            });
        }
    }
    queries
}

/// Read a query set (JSONL, one [`Query`] per line).
pub fn read(path: &std::path::Path) -> Result<Vec<Query>> {
    let text = crate::input::read_text(path, crate::input::LARGE)?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l).map_err(|e| {
                crate::error::Error::input(format!("{}:{}: {e}", path.display(), n + 1))
            })
        })
        .collect()
}

/// Write a query set as JSONL.
pub fn write(path: &std::path::Path, queries: &[Query]) -> Result<()> {
    let mut text = String::new();
    for q in queries {
        text.push_str(&serde_json::to_string(q).expect("serialises"));
        text.push('\n');
    }
    crate::report::write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verb_and_resource_has_a_paraphrase() {
        for (v, _, _) in crate::catalogue::words::VERBS {
            assert!(!lookup(VERB_PARAPHRASES, v).is_empty(), "{v}");
        }
        for (_, phrase, _) in crate::catalogue::words::RESOURCES {
            assert!(!lookup(RESOURCE_PARAPHRASES, phrase).is_empty(), "{phrase}");
        }
    }

    #[test]
    fn query_sets_are_labelled_and_paraphrases_avoid_the_rows_words() {
        let (rows, qs) = generate(Profile::named("seed-2026-07").unwrap(), 856, 1, 100).unwrap();
        assert_eq!(qs.len(), 2 * (100 + fixed::QUERIES.len()));
        for q in &qs {
            assert!(q.relevant.contains(&q.target));
            assert!(rows.iter().any(|r| r.key == q.target));
        }
        let mean = |k: QueryKind| {
            let v: Vec<f64> = qs
                .iter()
                .filter(|q| q.kind == k)
                .map(|q| q.novel_words)
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        assert!(
            mean(QueryKind::Lexical) < 0.1,
            "{}",
            mean(QueryKind::Lexical)
        );
        assert!(
            mean(QueryKind::Paraphrase) > 0.5,
            "{}",
            mean(QueryKind::Paraphrase)
        );
        // Same inputs, same set.
        let (_, again) = generate(Profile::named("seed-2026-07").unwrap(), 856, 1, 100).unwrap();
        assert_eq!(qs, again);
    }
}
