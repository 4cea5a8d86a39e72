//! The fast path: whether a schema is already in normal form, by a read-only walk.

use super::{MAX_DEPTH, TYPES};
use serde_json::Value;

/// Whether normalising `schema` would give it back unchanged, key order included: a cheap
/// read-only walk that lets the common case (every generated schema, many real ones) skip
/// the rebuild. It answers `true` only for the plainest fixed points: objects all the way
/// down with a valid string `type`, no `$ref`, combinator or definitions, `properties` an
/// object, `required` the last key and naming each listed property once, `items` an object
/// and `additionalProperties` a boolean or an object, within [`MAX_DEPTH`]. Anything else,
/// normal or not, goes through the normaliser.
pub fn is_normal(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
        && schema.get("properties").is_some()
        && node_is_normal(schema, 0)
}

fn node_is_normal(v: &Value, depth: usize) -> bool {
    let Some(obj) = v.as_object() else {
        return false;
    };
    if depth >= MAX_DEPTH {
        return false;
    }
    // One pass over the keys, no lookups: this runs for every node of every schema.
    let (mut typed, mut properties, mut required) = (false, None, None);
    for (i, (k, v)) in obj.iter().enumerate() {
        match (k.as_str(), v) {
            ("$defs" | "definitions" | "$ref" | "anyOf" | "oneOf" | "allOf", _) => return false,
            ("type", Value::String(t)) if TYPES.contains(&t.as_str()) => typed = true,
            ("type", _) => return false,
            ("properties", Value::Object(p)) => properties = Some(p),
            ("properties", _) => return false,
            // The normaliser takes `required` out (the last key stays where it is) and puts
            // it back at the end.
            ("required", Value::Array(names)) if i + 1 == obj.len() => required = Some(names),
            ("required", _) => return false,
            ("items", items @ Value::Object(_)) if node_is_normal(items, depth + 1) => {}
            ("items", _) => return false,
            ("additionalProperties", Value::Bool(_)) => {}
            ("additionalProperties", ap @ Value::Object(_)) if node_is_normal(ap, depth + 1) => {}
            ("additionalProperties", _) => return false,
            _ => {}
        }
    }
    if !typed || properties.is_some_and(|p| !p.values().all(|c| node_is_normal(c, depth + 1))) {
        return false;
    }
    match (required, properties) {
        (None, _) => true,
        // Every name a string, listed once, and in `properties`.
        (Some(names), Some(props)) => {
            names.len() <= MAX_REQUIRED_SCAN
                && names.iter().enumerate().all(|(i, n)| {
                    n.as_str().is_some_and(|n| {
                        props.contains_key(n) && !names[..i].iter().any(|m| m.as_str() == Some(n))
                    })
                })
        }
        (Some(_), None) => false,
    }
}

/// Longest `required` list the fast path checks for repeats (pairwise); longer ones go through
/// the normaliser.
const MAX_REQUIRED_SCAN: usize = 64;
