//! The dated snapshot of LiteLLM's `model_prices_and_context_window` table that price cards
//! read their prices and context windows from (`fixtures/litellm-prices.json`), and its
//! refresh from a newer copy of the table (`toolcost prices update --from FILE`).
//!
//! The snapshot keeps only the entries the cards name, each whole, and a `toolcost_snapshot`
//! object saying where the table came from, its LiteLLM version, the date and the filter.
//! LiteLLM prices per token; cards price per million tokens.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The key of the snapshot's own description inside the file.
pub const META_KEY: &str = "toolcost_snapshot";
/// The largest table `prices update` reads (the whole table was 3.4 MB in litellm 1.110.2).
pub const MAX_TABLE_BYTES: u64 = 64 * 1024 * 1024;

const EMBEDDED: &str = include_str!("../../fixtures/litellm-prices.json");

/// Where a snapshot came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// The file and package the table was taken from.
    pub source: String,
    pub litellm_version: String,
    /// The day the table was taken (every cost figure names it).
    pub date: String,
    /// Which entries were kept.
    pub filter: String,
}

/// A snapshot: its description and its entries by LiteLLM key.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub meta: Meta,
    pub date: String,
    entries: Map<String, Value>,
}

/// The figures a card reads from one entry, per million tokens; `None` where the entry has no
/// such field.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Entry {
    pub input: Option<f64>,
    pub cached_input: Option<f64>,
    pub cache_write: Option<f64>,
    pub output: Option<f64>,
    pub context_window: Option<u64>,
}

/// Per token to per million tokens, rounded to a millionth of a dollar (the table's figures
/// are decimal fractions stored as floats: 9.499999999999999e-07 is 0.95).
fn per_million(v: &Value) -> Option<f64> {
    let x = v.as_f64()?;
    (x.is_finite() && x >= 0.0).then(|| (x * 1e12).round() / 1e6)
}

impl Snapshot {
    /// The snapshot built into the binary.
    pub fn embedded() -> &'static Snapshot {
        static SNAP: std::sync::OnceLock<Snapshot> = std::sync::OnceLock::new();
        SNAP.get_or_init(|| {
            Snapshot::parse(EMBEDDED.as_bytes()).expect("fixtures/litellm-prices.json is valid")
        })
    }

    /// Read a snapshot file (a LiteLLM table with a `toolcost_snapshot` object).
    pub fn parse(bytes: &[u8]) -> Result<Snapshot> {
        let mut entries = table(bytes)?;
        let meta = entries
            .remove(META_KEY)
            .ok_or_else(|| Error::input(format!("price snapshot: no `{META_KEY}` object")))?;
        let meta: Meta = serde_json::from_value(meta)
            .map_err(|e| Error::input(format!("price snapshot: `{META_KEY}`: {e}")))?;
        Ok(Snapshot {
            date: meta.date.clone(),
            meta,
            entries,
        })
    }

    /// The figures of one entry.
    pub fn entry(&self, key: &str) -> Option<Entry> {
        let e = self.entries.get(key)?;
        Some(Entry {
            input: e.get("input_cost_per_token").and_then(per_million),
            cached_input: e.get("cache_read_input_token_cost").and_then(per_million),
            cache_write: e
                .get("cache_creation_input_token_cost")
                .and_then(per_million),
            output: e.get("output_cost_per_token").and_then(per_million),
            context_window: e.get("max_input_tokens").and_then(Value::as_u64),
        })
    }

    /// `LiteLLM 1.110.2 price table (snapshot 2026-11-30)`, for card sources.
    pub fn describe(&self) -> String {
        format!(
            "LiteLLM {} price table (snapshot {})",
            self.meta.litellm_version, self.meta.date
        )
    }

    /// The keys the snapshot holds.
    pub fn keys(&self) -> Vec<&str> {
        self.entries.keys().map(String::as_str).collect()
    }
}

/// A JSON object of entries, each an object.
fn table(bytes: &[u8]) -> Result<Map<String, Value>> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| Error::input(format!("price table is not JSON: {e}")))?;
    let Value::Object(map) = v else {
        return Err(Error::input("price table is not a JSON object of entries"));
    };
    Ok(map)
}

/// One figure that differs between the current snapshot and the new one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub key: String,
    pub field: &'static str,
    pub old: Option<f64>,
    pub new: Option<f64>,
}

/// The new snapshot's text and what it changes, from a newer LiteLLM table: the entries
/// `keys` names, each kept whole. A key missing from the new table is an error, so an update
/// never drops a card's prices.
pub fn update(
    current: &Snapshot,
    new_table: &[u8],
    keys: &[String],
    meta: Meta,
) -> Result<(String, Vec<Change>)> {
    let all = table(new_table)?;
    let missing: Vec<&str> = keys
        .iter()
        .filter(|k| !all.get(k.as_str()).is_some_and(Value::is_object))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(Error::input(format!(
            "the new price table has no entry for {}: the snapshot is left as it was",
            missing.join(", ")
        )));
    }
    let mut out = Map::new();
    out.insert(
        META_KEY.into(),
        serde_json::to_value(&meta).map_err(|e| Error::input(e.to_string()))?,
    );
    let mut sorted: Vec<&String> = keys.iter().collect();
    sorted.sort();
    sorted.dedup();
    for k in &sorted {
        out.insert((*k).clone(), all[k.as_str()].clone());
    }
    let text = serde_json::to_string_pretty(&Value::Object(out))
        .map_err(|e| Error::input(e.to_string()))?
        + "\n";
    let next = Snapshot::parse(text.as_bytes())?;
    let mut changes = Vec::new();
    for k in sorted {
        let (a, b) = (
            current.entry(k).unwrap_or_default(),
            next.entry(k).unwrap_or_default(),
        );
        let w = |x: Option<u64>| x.map(|v| v as f64);
        for (field, old, new) in [
            ("input", a.input, b.input),
            ("cached_input", a.cached_input, b.cached_input),
            ("cache_write", a.cache_write, b.cache_write),
            ("output", a.output, b.output),
            ("context_window", w(a.context_window), w(b.context_window)),
        ] {
            if old != new {
                changes.push(Change {
                    key: k.clone(),
                    field,
                    old,
                    new,
                });
            }
        }
    }
    Ok((text, changes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Meta {
        Meta {
            source: "test".into(),
            litellm_version: "9.9.9".into(),
            date: "2027-01-01".into(),
            filter: "test".into(),
        }
    }

    #[test]
    fn per_token_prices_read_as_per_million_without_float_fuzz() {
        assert_eq!(
            per_million(&serde_json::json!(9.499999999999999e-07)),
            Some(0.95)
        );
        assert_eq!(per_million(&serde_json::json!(1.6e-07)), Some(0.16));
        assert_eq!(per_million(&serde_json::json!(-1.0)), None);
        assert_eq!(per_million(&serde_json::json!("3e-06")), None);
    }

    #[test]
    fn an_update_keeps_the_named_entries_and_lists_what_moved() {
        let cur = Snapshot::embedded();
        let table = serde_json::json!({
            "gpt-4o": {"input_cost_per_token": 2.0e-06, "output_cost_per_token": 1e-05,
                       "cache_read_input_token_cost": 1.25e-06, "max_input_tokens": 128000},
            "other": {"input_cost_per_token": 1e-06},
        });
        let (text, changes) = update(
            cur,
            table.to_string().as_bytes(),
            &["gpt-4o".to_string()],
            meta(),
        )
        .unwrap();
        let next = Snapshot::parse(text.as_bytes()).unwrap();
        assert_eq!(next.keys(), vec!["gpt-4o"]);
        assert_eq!(next.date, "2027-01-01");
        assert!(changes
            .iter()
            .any(|c| c.key == "gpt-4o" && c.field == "input" && c.new == Some(2.0)));
    }

    #[test]
    fn an_update_missing_a_card_s_entry_or_not_a_table_is_refused() {
        let cur = Snapshot::embedded();
        let e = update(cur, b"{\"x\": {}}", &["gpt-4o".to_string()], meta()).unwrap_err();
        assert!(e.to_string().contains("no entry for gpt-4o"), "{e}");
        assert!(update(cur, b"[1, 2]", &[], meta()).is_err());
        assert!(update(cur, b"not json", &[], meta()).is_err());
    }
}
