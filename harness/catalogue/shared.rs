//! The text a catalogue tool's definitions share: its description and input schema, held once
//! however many requests, renderings and surfaces show the tool (the wire format's shared
//! definitions).

use serde_json::Value;
use std::sync::{Arc, Mutex};

/// A tool's description and input schema, as shared by every definition made from it: the
/// description as text and the schema as the compact JSON text serde_json writes for it, so a
/// definition written from these pieces is byte for byte the definition built as a tree.
#[derive(Debug, PartialEq, Eq)]
pub struct DefText {
    description: Box<str>,
    /// Bytes of the description written as JSON.
    description_json_len: usize,
    schema: Arc<str>,
    /// The token counts of the definitions made from this text, each under its rendering's
    /// key ([`DefText::counted`]).
    counts: Counts,
}

/// Token counts kept beside the text they count: a definition is rendered and counted once
/// for each rendering, tokenizer and name, however many surfaces, requests and rounds carry
/// it. A few keys at most (each surface that frames differently, each tokenizer, each name a
/// client gives the tool), held in [`Counts::SLOTS`] slots in place, each key in the slot its
/// value picks, so a text never holds more and nothing is allocated for them. A memo, not part
/// of the text: it takes no part in comparisons.
#[derive(Default)]
struct Counts(Mutex<[Option<(u64, f64)>; Counts::SLOTS]>);

impl Counts {
    const SLOTS: usize = 4;
}

impl PartialEq for Counts {
    fn eq(&self, _: &Counts) -> bool {
        true
    }
}
impl Eq for Counts {}

impl std::fmt::Debug for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Counts")
    }
}

impl DefText {
    /// From a description and a parsed schema.
    pub fn new(description: &str, schema: &Value) -> DefText {
        DefText {
            description: description.into(),
            description_json_len: crate::json::string_len(description),
            schema: crate::json::compact(schema).into(),
            counts: Counts::default(),
        }
    }

    /// From a description and a schema's text, which must be what [`crate::json::compact`]
    /// writes for the schema (the text of a value written by toolcost, never a peer's bytes).
    pub fn from_compact(description: &str, schema: Arc<str>) -> DefText {
        debug_assert!(
            serde_json::from_str::<Value>(&schema)
                .is_ok_and(|v| crate::json::compact(&v) == *schema),
            "not compact JSON as written: {schema}"
        );
        DefText {
            description: description.into(),
            description_json_len: crate::json::string_len(description),
            schema,
            counts: Counts::default(),
        }
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    /// Bytes of the description written as JSON, quotes included.
    pub fn description_json_len(&self) -> usize {
        self.description_json_len
    }

    /// The names the schema's `required` lists, in order ([`super::required_of`]), read
    /// without building the rest of the schema.
    pub fn required(&self) -> Vec<String> {
        #[derive(serde::Deserialize)]
        struct Required {
            #[serde(default)]
            required: Option<Value>,
        }
        // Serde would read a struct from an array too; a text that names `required` twice
        // (the tree keeps the last) is read whole.
        if self.schema.starts_with('{') {
            if let Ok(r) = serde_json::from_str::<Required>(&self.schema) {
                let mut holder = serde_json::Map::new();
                if let Some(v) = r.required {
                    holder.insert("required".into(), v);
                }
                return super::required_of(&Value::Object(holder));
            }
        }
        super::required_of(&serde_json::from_str(&self.schema).unwrap_or(Value::Null))
    }

    /// The schema's compact JSON text.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The count kept under `key` (a rendering of this text under a name, by a tokenizer:
    /// the caller's key says which), or `count()` made and kept, in place of what its slot held.
    /// Two threads asking at once may both count; both get the same figure.
    pub fn counted(&self, key: u64, count: impl FnOnce() -> f64) -> f64 {
        let slot = (key % Counts::SLOTS as u64) as usize;
        if let Some((kept, n)) = crate::sync::lock(&self.counts.0)[slot] {
            if kept == key {
                return n;
            }
        }
        let n = count();
        crate::sync::lock(&self.counts.0)[slot] = Some((key, n));
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept count is given back without counting again; another key is counted, and a key
    /// whose slot another took is counted again, never answered with the other's figure.
    #[test]
    fn counts_are_kept_by_key() {
        let text = DefText::new("reads a file", &serde_json::json!({"type": "object"}));
        let counted = std::cell::Cell::new(0);
        let count = |n: f64| {
            counted.set(counted.get() + 1);
            n
        };
        assert_eq!(text.counted(10, || count(3.0)), 3.0);
        assert_eq!(text.counted(10, || count(99.0)), 3.0);
        assert_eq!(counted.get(), 1);
        // Every key, 0 included, gets its own figure.
        for key in 0..64u64 {
            assert_eq!(text.counted(key, || count(key as f64)), key as f64);
            assert_eq!(text.counted(key, || count(-1.0)), key as f64);
        }
    }
}
