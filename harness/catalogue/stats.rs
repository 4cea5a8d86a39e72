//! What a projection is made of: bytes, the composition shares the published measurement reports, the
//! runner mix, and the largest definition.

use super::{Catalogue, Runner};
use crate::json;
use serde::Serialize;
use serde_json::Value;

/// Composition of a per-row projection.
///
/// Shares are measured on Python's spaced serialisation (`json.dumps` defaults), as the
/// published figures were: names and descriptions by character count, input schemas by the
/// length of their spaced JSON, structure as the rest.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Composition {
    pub tools: usize,
    /// Sum of compact definition bytes.
    pub compact_bytes: usize,
    /// Bytes of the compact `tools` array: the definitions, their commas and the brackets
    /// (the published 434,592 is this figure).
    pub compact_array_bytes: usize,
    /// Length of the spaced `tools` array.
    pub spaced_bytes: usize,
    pub name_chars: usize,
    pub description_chars: usize,
    pub schema_chars: usize,
    pub structure_chars: usize,
    /// The largest definition in the spaced serialisation.
    pub largest_spaced: usize,
    pub largest_name: String,
    /// fn, http, flow, agent among projected rows.
    pub runners: [usize; 4],
}

impl Composition {
    pub fn of(cat: &Catalogue) -> Composition {
        let mut c = Composition {
            tools: cat.tools.len(),
            ..Default::default()
        };
        for t in &cat.tools {
            c.compact_bytes += t.bytes();
            let parsed = t.parsed();
            let spaced = json::python_spaced_len(&parsed);
            if spaced > c.largest_spaced {
                c.largest_spaced = spaced;
                c.largest_name = t.name.clone();
            }
            c.spaced_bytes += spaced;
            c.name_chars += t.name.chars().count();
            let description = parsed.get("description").and_then(Value::as_str);
            c.description_chars += description.unwrap_or("").chars().count();
            c.schema_chars += json::python_spaced_len(
                parsed
                    .get("inputSchema")
                    .unwrap_or(&crate::catalogue::empty_schema()),
            );
        }
        // `[` + `]` + `, ` between definitions.
        c.compact_array_bytes = c.compact_bytes + 2 + cat.tools.len().saturating_sub(1);
        if !cat.tools.is_empty() {
            c.spaced_bytes += 2 + 2 * (cat.tools.len() - 1);
        }
        c.structure_chars = c.spaced_bytes - c.name_chars - c.description_chars - c.schema_chars;
        for r in cat.rows.iter().filter(|r| r.projected()) {
            c.runners[Runner::ALL.iter().position(|x| *x == r.runner).unwrap()] += 1;
        }
        c
    }

    fn share(&self, part: usize) -> f64 {
        if self.spaced_bytes == 0 {
            0.0
        } else {
            100.0 * part as f64 / self.spaced_bytes as f64
        }
    }

    /// Percentages of descriptions, input schemas, names and structure.
    pub fn shares(&self) -> [f64; 4] {
        [
            self.share(self.description_chars),
            self.share(self.schema_chars),
            self.share(self.name_chars),
            self.share(self.structure_chars),
        ]
    }

    pub fn mean_compact(&self) -> f64 {
        if self.tools == 0 {
            0.0
        } else {
            self.compact_array_bytes as f64 / self.tools as f64
        }
    }
}
