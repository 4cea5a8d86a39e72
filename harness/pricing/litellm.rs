//! The dated snapshot of LiteLLM's `model_prices_and_context_window` table that price cards
//! read their prices and context windows from (`fixtures/litellm-prices.json`), and its
//! refresh from a newer copy of the table (`toolcost prices update --from FILE`).
//!
//! The snapshot keeps every entry whose figures are usable, each whole, and a
//! `toolcost_snapshot` object saying where the table came from, its LiteLLM version, the date
//! and the filter.
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
    /// The keys by their lower case, made the first time a name is looked up past its exact
    /// spelling.
    folded: std::sync::OnceLock<std::collections::HashMap<String, Vec<String>>>,
}

/// The figures a card reads from one entry, per million tokens; `None` where the entry has no
/// such field.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Entry {
    pub input: Option<f64>,
    pub cached_input: Option<f64>,
    pub cache_write: Option<f64>,
    pub output: Option<f64>,
    pub context_window: Option<u64>,
    /// A cache write that lives longer than the default, priced on its own
    /// (`cache_creation_input_token_cost_above_1hr`, Anthropic's 1-hour TTL, or `..._above_12hr`,
    /// OpenAI's 12-hour retention), with the TTL it names.
    pub cache_write_long: Option<(&'static str, f64)>,
    /// Long-context tiers (`..._above_<N>k_tokens`), by threshold.
    pub tiers: Vec<TierEntry>,
    /// `litellm_provider`.
    pub provider: Option<String>,
    /// `mode` (`chat`, `responses`, `embedding`, ...).
    pub mode: Option<String>,
}

/// One long-context tier of an entry: the rates once a request's input passes `above` tokens
/// (the whole request at these rates, as the providers bill it); `None` where the entry gives
/// no such rate for the tier.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TierEntry {
    pub above: u64,
    pub input: Option<f64>,
    pub cached_input: Option<f64>,
    pub cache_write: Option<f64>,
    pub output: Option<f64>,
    pub cache_write_long: Option<f64>,
}

/// The per-token fields of a standard-tier price, by the names a card uses.
const RATE_FIELDS: [(&str, usize); 4] = [
    ("input_cost_per_token", 0),
    ("cache_read_input_token_cost", 1),
    ("cache_creation_input_token_cost", 2),
    ("output_cost_per_token", 3),
];

/// The long-lived cache writes an entry may price, with the TTL each names.
const LONG_WRITES: [(&str, &str); 2] = [("_above_1hr", "1h"), ("_above_12hr", "12h")];

/// The long-context tiers of an entry: every `<rate>_above_<N>k_tokens` of the standard tier
/// (batch, flex, priority and other service tiers are not this tier), and the long cache write
/// of each (`cache_creation_input_token_cost_above_1hr_above_<N>k_tokens`).
fn tiers(e: &Map<String, Value>) -> Vec<TierEntry> {
    let mut by: std::collections::BTreeMap<u64, TierEntry> = Default::default();
    for (k, v) in e {
        let Some(price) = per_million(v) else {
            continue;
        };
        let Some((head, n)) = k
            .strip_suffix("k_tokens")
            .and_then(|h| h.rsplit_once("_above_"))
        else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        let Some(above) = n.checked_mul(1000) else {
            continue;
        };
        let t = by.entry(above).or_insert(TierEntry {
            above,
            ..TierEntry::default()
        });
        if let Some(&(_, i)) = RATE_FIELDS.iter().find(|(f, _)| *f == head) {
            let slot = match i {
                0 => &mut t.input,
                1 => &mut t.cached_input,
                2 => &mut t.cache_write,
                _ => &mut t.output,
            };
            *slot = Some(price);
        } else if LONG_WRITES
            .iter()
            .any(|(suffix, _)| head == format!("cache_creation_input_token_cost{suffix}"))
        {
            t.cache_write_long = Some(price);
        }
    }
    by.into_values().filter(|t| t.input.is_some()).collect()
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
            folded: std::sync::OnceLock::new(),
        })
    }

    /// The figures of one entry.
    pub fn entry(&self, key: &str) -> Option<Entry> {
        let e = self.entries.get(key)?.as_object()?;
        let text = |k: &str| e.get(k).and_then(Value::as_str).map(str::to_string);
        Some(Entry {
            input: e.get("input_cost_per_token").and_then(per_million),
            cached_input: e.get("cache_read_input_token_cost").and_then(per_million),
            cache_write: e
                .get("cache_creation_input_token_cost")
                .and_then(per_million),
            output: e.get("output_cost_per_token").and_then(per_million),
            context_window: e
                .get("max_input_tokens")
                .and_then(Value::as_u64)
                .filter(|w| *w > 0),
            cache_write_long: LONG_WRITES.iter().find_map(|(suffix, ttl)| {
                e.get(&format!("cache_creation_input_token_cost{suffix}"))
                    .and_then(per_million)
                    .map(|p| (*ttl, p))
            }),
            tiers: tiers(e),
            provider: text("litellm_provider"),
            mode: text("mode"),
        })
    }

    /// Whether the entry is a model a conversation can be priced on: a chat or responses
    /// model with an input and an output price per token.
    pub fn is_chat(&self, key: &str) -> bool {
        self.entry(key).is_some_and(|e| {
            matches!(e.mode.as_deref(), Some("chat" | "responses"))
                && e.input.is_some()
                && e.output.is_some()
        })
    }

    /// The table's key for `id`: the key itself, or else the one key equal to it ignoring case
    /// (None where none is, or where several are: then no spelling is preferred).
    pub fn key_for(&self, id: &str) -> Option<&str> {
        if let Some((k, _)) = self.entries.get_key_value(id) {
            return Some(k);
        }
        let folded = self.folded.get_or_init(|| {
            let mut m: std::collections::HashMap<String, Vec<String>> = Default::default();
            for k in self.entries.keys() {
                m.entry(k.to_ascii_lowercase()).or_default().push(k.clone());
            }
            m
        });
        match folded.get(&id.to_ascii_lowercase()).map(Vec::as_slice) {
            Some([one]) => Some(one),
            _ => None,
        }
    }

    /// Whether some entry of the table is served by `provider` (its `litellm_provider`), or
    /// some key starts with `provider/`.
    pub fn knows_provider(&self, provider: &str) -> bool {
        let prefix = format!("{provider}/");
        self.entries.iter().any(|(k, v)| {
            k.starts_with(&prefix)
                || v.get("litellm_provider").and_then(Value::as_str) == Some(provider)
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
        .map_err(|e| Error::input(format!("price table: {}", crate::json::why_unreadable(&e))))?;
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

/// Why an entry of a new table cannot be priced on: a price that is not a number, negative,
/// or larger than any provider charges, a cache read dearer than plain input, a context window
/// that is not a positive whole number.
fn entry_fault(e: &Map<String, Value>) -> Option<String> {
    for (f, v) in e {
        if !(f.contains("cost_per_token") || f.contains("_token_cost")) {
            continue;
        }
        match v.as_f64() {
            None if v.is_number() => return Some(format!("`{f}` is not a finite number")),
            None => return Some(format!("`{f}` is {v}, not a number")),
            Some(x) if !x.is_finite() || x < 0.0 => {
                return Some(format!("`{f}` is {x}, not a price"))
            }
            Some(x) if x > MAX_PER_TOKEN => {
                return Some(format!(
                    "`{f}` is {x} USD per token, more than {MAX_PER_TOKEN} (absurd)"
                ))
            }
            Some(_) => {}
        }
    }
    let num = |k: &str| e.get(k).and_then(Value::as_f64);
    if let (Some(read), Some(input)) = (
        num("cache_read_input_token_cost"),
        num("input_cost_per_token"),
    ) {
        if read > input {
            return Some(format!(
                "cache reads ({read}) cost more than plain input ({input})"
            ));
        }
    }
    match e.get("max_input_tokens") {
        None => None,
        Some(w) if w.as_u64().is_some_and(|w| w > 0 && w <= MAX_WINDOW) => None,
        Some(w) => Some(format!(
            "`max_input_tokens` is {w}, not a positive whole number up to {MAX_WINDOW}"
        )),
    }
}

/// What makes an entry unusable for a card that prices a model on it, beyond [`entry_fault`]: a
/// chat model that bills input bills its output and its cache reads (a zero there is a slip,
/// not a free tier; other entries of the table may be free), and a one-hour cache write costs
/// at least what a read does.
fn card_fault(e: &Map<String, Value>) -> Option<String> {
    let num = |k: &str| e.get(k).and_then(Value::as_f64);
    if num("input_cost_per_token").is_some_and(|i| i > 0.0) {
        for f in ["output_cost_per_token", "cache_read_input_token_cost"] {
            if num(f) == Some(0.0) {
                return Some(format!("`{f}` is 0 where input is priced"));
            }
        }
    }
    if let (Some(hour), Some(read)) = (
        num("cache_creation_input_token_cost_above_1hr"),
        num("cache_read_input_token_cost"),
    ) {
        if hour < read {
            return Some(format!(
                "a one-hour cache write ({hour}) costs less than a cache read ({read})"
            ));
        }
    }
    None
}

/// The widest context window an entry may state: 100 million tokens, far past any model (an
/// assumed bound, to catch a slip of units or digits).
const MAX_WINDOW: u64 = 100_000_000;

/// The dearest price per token an entry may hold: 0.01 USD, $10,000 per million tokens, far
/// above any model the table lists (an assumed bound, to catch a unit slip).
const MAX_PER_TOKEN: f64 = 0.01;

/// What an update did: the new snapshot's text, the figures that moved for the models named,
/// and the entries left out as unusable (key and reason).
pub struct Updated {
    pub text: String,
    pub changes: Vec<Change>,
    pub left_out: Vec<(String, String)>,
}

/// The new snapshot from a newer LiteLLM table: every entry that can be priced on, each kept
/// whole, with what moved for the models `keys` names. An entry that names a key twice, a key
/// of `keys` that the new table lacks or cannot price, or a table that is not a JSON object of
/// entries refuses the update, so an update never drops or corrupts the prices a report uses;
/// other unusable entries are left out and listed.
pub fn update(
    current: &Snapshot,
    new_table: &[u8],
    keys: &[String],
    meta: Meta,
) -> Result<Updated> {
    let all = match crate::json::parse_unique(new_table)
        .map_err(|e| Error::input(format!("price table: {e}")))?
    {
        Value::Object(m) => m,
        _ => return Err(Error::input("price table is not a JSON object of entries")),
    };
    let mut out = Map::new();
    out.insert(
        META_KEY.into(),
        serde_json::to_value(&meta).map_err(|e| Error::input(e.to_string()))?,
    );
    let mut left_out = Vec::new();
    for (k, v) in all {
        if k == META_KEY {
            continue;
        }
        let fault = match v.as_object() {
            None => Some("not an object".to_string()),
            Some(e) => entry_fault(e),
        };
        match fault {
            Some(why) => left_out.push((k, why)),
            None => {
                out.insert(k, v);
            }
        }
    }
    let mut refused: Vec<String> = Vec::new();
    for k in keys {
        if let Some((_, why)) = left_out.iter().find(|(l, _)| l == k) {
            refused.push(format!("{k} ({why})"));
        } else if let Some(why) = out
            .get(k.as_str())
            .and_then(Value::as_object)
            .map(card_fault)
        {
            if let Some(why) = why {
                refused.push(format!("{k} ({why})"));
            }
        } else {
            refused.push(format!("{k} (no entry)"));
        }
    }
    if !refused.is_empty() {
        return Err(Error::input(format!(
            "the new price table cannot price {}: the snapshot is left as it was",
            refused.join(", ")
        )));
    }
    let text = serde_json::to_string_pretty(&Value::Object(out))
        .map_err(|e| Error::input(e.to_string()))?
        + "\n";
    let next = Snapshot::parse(text.as_bytes())?;
    let mut changes = Vec::new();
    // Every entry of either snapshot, the cards' or not: a price that moved anywhere is said.
    let mut sorted: Vec<String> = next
        .keys()
        .into_iter()
        .chain(current.keys())
        .map(String::from)
        .collect();
    sorted.sort();
    sorted.dedup();
    for k in &sorted {
        let (a, b) = (
            current.entry(k.as_str()).unwrap_or_default(),
            next.entry(k.as_str()).unwrap_or_default(),
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
    Ok(Updated {
        text,
        changes,
        left_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prices that cannot be right are refused: a zero output or cache price where input is
    /// priced, a one-hour write below a read, a window past any model's.
    #[test]
    fn slips_in_an_entry_are_faults() {
        let fault = |v: serde_json::Value| {
            let e = v.as_object().unwrap();
            entry_fault(e).or_else(|| card_fault(e))
        };
        let ok = serde_json::json!({"input_cost_per_token": 3e-6, "output_cost_per_token": 1.5e-5,
            "cache_read_input_token_cost": 3e-7, "max_input_tokens": 200000});
        assert_eq!(fault(ok), None);
        for (bad, why) in [
            (
                serde_json::json!({"input_cost_per_token": 3e-6, "output_cost_per_token": 0.0}),
                "output",
            ),
            (
                serde_json::json!({"input_cost_per_token": 3e-6, "cache_read_input_token_cost": 0.0}),
                "cache_read",
            ),
            (
                serde_json::json!({"input_cost_per_token": 3e-6, "cache_read_input_token_cost": 3e-7,
                "cache_creation_input_token_cost_above_1hr": 1e-7}),
                "one-hour",
            ),
            (
                serde_json::json!({"input_cost_per_token": 3e-6, "max_input_tokens": 10_000_000_000u64}),
                "max_input_tokens",
            ),
        ] {
            let f = fault(bad).unwrap_or_default();
            assert!(f.contains(why), "{f}");
        }
    }

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
        let u = update(
            cur,
            table.to_string().as_bytes(),
            &["gpt-4o".to_string()],
            meta(),
        )
        .unwrap();
        let (text, changes) = (u.text, u.changes);
        let next = Snapshot::parse(text.as_bytes()).unwrap();
        let mut keys = next.keys();
        keys.sort();
        assert_eq!(keys, vec!["gpt-4o", "other"]);
        assert_eq!(next.date, "2027-01-01");
        assert!(changes
            .iter()
            .any(|c| c.key == "gpt-4o" && c.field == "input" && c.new == Some(2.0)));
    }

    #[test]
    fn an_update_missing_a_card_s_entry_or_not_a_table_is_refused() {
        let cur = Snapshot::embedded();
        let e = update(cur, b"{\"x\": {}}", &["gpt-4o".to_string()], meta())
            .err()
            .unwrap();
        assert!(e.to_string().contains("gpt-4o (no entry)"), "{e}");
        assert!(update(cur, b"[1, 2]", &[], meta()).is_err());
        assert!(update(cur, b"not json", &[], meta()).is_err());
    }

    /// Every kind of unusable price leaves its entry out, and refuses the update when a report
    /// uses it; a key named twice refuses it whole.
    #[test]
    fn unusable_prices_are_left_out_or_refuse_the_update() {
        let cur = Snapshot::embedded();
        let ok = r#""input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06"#;
        for bad in [
            r#""input_cost_per_token": -1e-06"#,
            r#""input_cost_per_token": "3e-06""#,
            r#""input_cost_per_token": null"#,
            r#""input_cost_per_token": 1e308"#,
            r#""input_cost_per_token": 1e-06, "cache_read_input_token_cost": 2e-06"#,
            r#""input_cost_per_token": 1e-06, "max_input_tokens": 0"#,
            r#""input_cost_per_token": 1e-06, "max_input_tokens": -5"#,
        ] {
            let table = format!(r#"{{"m": {{{bad}}}, "n": {{{ok}}}}}"#);
            let u = update(cur, table.as_bytes(), &["n".to_string()], meta()).unwrap();
            assert_eq!(u.left_out.len(), 1, "{bad}");
            assert!(!Snapshot::parse(u.text.as_bytes())
                .unwrap()
                .keys()
                .contains(&"m"));
            let e = update(cur, table.as_bytes(), &["m".to_string()], meta())
                .err()
                .unwrap();
            assert!(e.to_string().contains("cannot price m"), "{bad}: {e}");
        }
        let twice = format!(r#"{{"n": {{{ok}}}, "n": {{{ok}}}}}"#);
        let e = update(cur, twice.as_bytes(), &[], meta()).err().unwrap();
        assert!(e.to_string().contains("appears twice"), "{e}");
    }
}
