//! The published substring scorer (seeds/tooling-as-data.md): every enabled row scores +3 for
//! each query term found in its key, +1 for each term found anywhere in key, category or
//! docstring, +1000 for a hand-pinned canonical match, -6 when demoted. Two-letter terms match
//! inside longer words, which is the noise the article shows ("is" finds GitHub issue rows).

use super::{searchable, Hit, Resolver};
use crate::catalogue::Row;

/// Hand-pinned canonical answers: when the query contains the phrase, the key gets +1000.
pub const PINS: &[(&str, &str)] = &[
    ("what time", "NOW"),
    ("send an email", "EMAIL_SEND"),
    ("ai gateway", "AIG_LIST"),
    ("order total", "ORDER_GET"),
];

/// Rows whose key starts with one of these are demoted (-6).
pub const DEMOTED_PREFIXES: &[&str] = &["TEST_", "LOCAL_", "CLI_"];

pub struct Substring {
    entries: Vec<(String, String, i64, bool)>,
}

impl Substring {
    pub fn new(rows: &[Row]) -> Substring {
        Substring {
            entries: rows
                .iter()
                .map(|r| {
                    (
                        r.key.to_lowercase(),
                        searchable(r).to_lowercase(),
                        r.planner_rank,
                        r.enabled,
                    )
                })
                .collect(),
        }
    }
}

impl Resolver for Substring {
    fn resolve(&self, query: &str, limit: usize) -> Vec<Hit> {
        let q = query.to_lowercase();
        let terms: Vec<&str> = q
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
            .collect();
        let mut hits: Vec<(Hit, i64, &str)> = Vec::new();
        for (i, (key, text, rank, enabled)) in self.entries.iter().enumerate() {
            if !enabled {
                continue;
            }
            let mut score = 0.0;
            for t in &terms {
                if key.contains(t) {
                    score += 3.0;
                }
                if text.contains(t) {
                    score += 1.0;
                }
            }
            for (phrase, pinned) in PINS {
                if q.contains(phrase) && key.eq_ignore_ascii_case(pinned) {
                    score += 1000.0;
                }
            }
            if DEMOTED_PREFIXES
                .iter()
                .any(|p| key.starts_with(&p.to_lowercase()))
            {
                score -= 6.0;
            }
            if score > 0.0 {
                hits.push((Hit { row: i, score }, *rank, key));
            }
        }
        hits.sort_by(|a, b| {
            b.0.score
                .total_cmp(&a.0.score)
                .then(a.1.cmp(&b.1))
                .then(a.2.cmp(b.2))
        });
        hits.into_iter().take(limit).map(|h| h.0).collect()
    }
}
