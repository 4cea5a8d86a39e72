//! The normaliser: any JSON value in, a strict schema out.
//!
//! Local `$ref`s are resolved against the original root (cycles become `{"type":"object"}`),
//! `anyOf`/`oneOf` keep their first non-null branch, `allOf` branches are merged, missing
//! types are inferred from the node's other keywords, and `required` names missing from
//! `properties` are added as strings, so the requirement survives. Descriptions, enums,
//! formats and defaults are kept. The output is a fixed point: normalising it changes nothing.

use serde_json::{json, Map, Value};

/// Deeper nodes than this are cut to their type: it bounds work on hostile input.
const MAX_DEPTH: usize = 32;
const TYPES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];
/// Keywords that carry meaning for a reader but never affect validity.
const ANNOTATIONS: [&str; 5] = ["description", "title", "default", "examples", "format"];

/// Normalise a schema so that it passes [`super::validate`].
pub fn normalise(schema: &Value) -> Value {
    let mut refs = vec!["#".to_string()];
    let node = Normaliser { root: schema }.node(schema, 0, &mut refs);
    let mut obj = into_map(node);
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        let mut props = Map::new();
        props.insert("input".into(), Value::Object(obj));
        obj = Map::new();
        obj.insert("type".into(), json!("object"));
        obj.insert("properties".into(), Value::Object(props));
        obj.insert("required".into(), json!(["input"]));
    }
    if !obj.contains_key("properties") {
        obj.insert("properties".into(), json!({}));
    }
    Value::Object(obj)
}

fn into_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!("node() always returns an object"),
    }
}

struct Normaliser<'a> {
    root: &'a Value,
}

impl Normaliser<'_> {
    fn node(&self, v: &Value, depth: usize, refs: &mut Vec<String>) -> Value {
        let Some(src) = v.as_object() else {
            return json!({"type": "string"});
        };
        let mut obj = src.clone();
        obj.remove("$defs");
        obj.remove("definitions");

        if let Some(r) = obj.remove("$ref") {
            let target = r
                .as_str()
                .filter(|r| !refs.iter().any(|seen| seen == r))
                .and_then(|r| r.strip_prefix('#').map(|p| (r, p)))
                .and_then(|(r, p)| self.root.pointer(p).map(|t| (r.to_string(), t)));
            match target {
                Some((r, t)) => {
                    refs.push(r);
                    let base = self.node(t, depth, refs);
                    refs.pop();
                    let mut merged = into_map(base);
                    for key in ANNOTATIONS {
                        if let Some(val) = obj.get(key) {
                            merged.insert(key.to_string(), val.clone());
                        }
                    }
                    return Value::Object(merged);
                }
                None => {
                    obj.entry("type").or_insert_with(|| json!("object"));
                }
            }
        }

        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = obj.remove(key) {
                let pick = branches
                    .iter()
                    .find(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                    .or(branches.first());
                if let Some(b) = pick {
                    let branch = into_map(self.node(b, depth, refs));
                    for (k, val) in branch {
                        obj.entry(k).or_insert(val);
                    }
                }
            }
        }
        obj.remove("anyOf");
        obj.remove("oneOf");
        if let Some(all) = obj.remove("allOf") {
            for b in all.as_array().into_iter().flatten() {
                let branch = into_map(self.node(b, depth, refs));
                for (k, val) in branch {
                    match (k.as_str(), obj.get_mut(&k), val) {
                        ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                            for (pk, pv) in theirs {
                                mine.entry(pk).or_insert(pv);
                            }
                        }
                        ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                            mine.extend(theirs)
                        }
                        (_, Some(_), _) => {}
                        (_, None, val) => {
                            obj.insert(k, val);
                        }
                    }
                }
            }
        }

        let ty = self.node_type(&obj);
        let mut obj = if obj.contains_key("type") {
            obj.insert("type".into(), json!(ty));
            obj
        } else {
            let mut m = Map::new();
            m.insert("type".into(), json!(ty));
            m.extend(obj);
            m
        };

        if depth >= MAX_DEPTH {
            let mut cut = Map::new();
            cut.insert("type".into(), json!(ty));
            if let Some(d) = obj.get("description") {
                cut.insert("description".into(), d.clone());
            }
            return Value::Object(cut);
        }

        if let Some(p) = obj.get_mut("properties") {
            match p {
                Value::Object(map) => {
                    for child in map.values_mut() {
                        *child = self.node(child, depth + 1, refs);
                    }
                }
                _ => *p = json!({}),
            }
        }
        if let Some(Value::Array(names)) = obj.remove("required") {
            let mut kept: Vec<String> = Vec::new();
            for n in names.iter().filter_map(Value::as_str) {
                if !kept.iter().any(|k| k == n) {
                    kept.push(n.to_string());
                }
            }
            if let Value::Object(map) = obj.entry("properties").or_insert_with(|| json!({})) {
                for n in &kept {
                    map.entry(n.clone())
                        .or_insert_with(|| json!({"type": "string"}));
                }
            }
            obj.insert("required".into(), json!(kept));
        }
        match obj.get("items").cloned() {
            Some(Value::Object(_)) => {
                let items = self.node(&obj["items"], depth + 1, refs);
                obj.insert("items".into(), items);
            }
            Some(Value::Array(tuple)) => {
                let first = tuple
                    .first()
                    .map(|t| self.node(t, depth + 1, refs))
                    .unwrap_or_else(|| json!({"type": "string"}));
                obj.insert("items".into(), first);
            }
            Some(_) => {
                obj.remove("items");
            }
            None => {}
        }
        match obj.get("additionalProperties").cloned() {
            Some(ap @ Value::Object(_)) => {
                let n = self.node(&ap, depth + 1, refs);
                obj.insert("additionalProperties".into(), n);
            }
            Some(Value::Bool(_)) | None => {}
            Some(_) => {
                obj.remove("additionalProperties");
            }
        }
        Value::Object(obj)
    }

    /// The node's type if valid, else one inferred from its other keywords.
    fn node_type(&self, obj: &Map<String, Value>) -> String {
        match obj.get("type") {
            Some(Value::String(t)) if TYPES.contains(&t.as_str()) => return t.clone(),
            Some(Value::Array(ts)) => {
                let valid: Vec<&str> = ts
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|t| TYPES.contains(t))
                    .collect();
                if let Some(t) = valid.iter().find(|t| **t != "null").or(valid.first()) {
                    return t.to_string();
                }
            }
            _ => {}
        }
        if obj.contains_key("properties")
            || obj.contains_key("required")
            || obj.contains_key("additionalProperties")
        {
            return "object".into();
        }
        if obj.contains_key("items") {
            return "array".into();
        }
        let sample = obj.get("const").or_else(|| {
            obj.get("enum")
                .and_then(|e| e.as_array())
                .and_then(|a| a.first())
        });
        match sample {
            Some(Value::Bool(_)) => "boolean",
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => "integer",
            Some(Value::Number(_)) => "number",
            Some(Value::Object(_)) => "object",
            Some(Value::Array(_)) => "array",
            Some(Value::Null) => "null",
            _ => "string",
        }
        .into()
    }
}

#[cfg(test)]
mod tests {
    use super::super::validate;
    use super::*;

    #[test]
    fn resolves_refs_and_picks_branches() {
        let s = json!({
            "type": "object",
            "$defs": {"page": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id", "missing"]}},
            "properties": {
                "parent": {"$ref": "#/$defs/page", "description": "where it goes"},
                "when": {"anyOf": [{"type": "null"}, {"type": "string", "format": "date-time"}], "description": "d"},
                "mode": {"enum": ["a", "b"]},
                "loop": {"$ref": "#"}
            },
            "required": ["parent", "ghost"]
        });
        let n = normalise(&s);
        assert!(validate(&n).is_empty(), "{:?}", validate(&n));
        assert_eq!(n["properties"]["parent"]["description"], "where it goes");
        assert_eq!(
            n["properties"]["parent"]["properties"]["missing"]["type"],
            "string"
        );
        assert_eq!(
            n["properties"]["when"],
            json!({"description": "d", "type": "string", "format": "date-time"})
        );
        assert_eq!(
            n["properties"]["mode"],
            json!({"type": "string", "enum": ["a", "b"]})
        );
        assert_eq!(n["properties"]["loop"]["type"], "object");
        assert_eq!(n["properties"]["ghost"], json!({"type": "string"}));
        assert!(n.get("$defs").is_none());
        assert_eq!(normalise(&n), n);
    }

    #[test]
    fn wraps_a_non_object_root() {
        let n = normalise(&json!({"type": "string"}));
        assert_eq!(
            n,
            json!({"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]})
        );
    }
}
