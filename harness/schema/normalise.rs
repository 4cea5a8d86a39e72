//! The normaliser: any JSON value in, a strict schema out.
//!
//! Local `$ref`s are resolved against the original root (cycles become `{"type":"object"}`),
//! `anyOf`/`oneOf` keep their first non-null branch, `allOf` branches are merged, missing
//! types are inferred from the node's other keywords, and `required` names missing from
//! `properties` are added as strings, so the requirement survives. Descriptions, enums,
//! formats and defaults are kept. The output is a fixed point: normalising it changes nothing.
//!
//! Work is bounded on hostile input: nodes deeper than [`MAX_DEPTH`] are cut to their type,
//! a chain of `$ref`s longer than [`MAX_REF_CHAIN`] is not followed, and the bytes inlined by
//! `$ref` expansion are budgeted ([`MAX_EXPANDED_BYTES`]): 40 definitions that each refer
//! twice to the next would otherwise expand to 2^40 nodes. [`normalise`] keeps going past the
//! budget with every further `$ref` left as `{"type": "object"}` (as a cycle is), so `measure`,
//! `weigh` and `lint --fix` always finish; [`normalise_checked`] refuses such a schema and
//! names the `$ref` at which the budget ran out, for the server to answer 422 before it
//! stores a row.

use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};

/// Deeper nodes than this are cut to their type: it bounds work on hostile input.
pub const MAX_DEPTH: usize = 32;
/// `$ref`s followed inside one another (a ref whose target holds a ref ...) at most.
pub const MAX_REF_CHAIN: usize = 64;
/// Bytes of schema text that `$ref` expansion may inline into one schema. Real schemas stay
/// far below it (the largest captured server inlines a few KB).
pub const MAX_EXPANDED_BYTES: usize = 1 << 20;
/// Nested schema nodes of any kind (properties, combinators, followed refs) at most: bounds
/// the normaliser's recursion, so a hostile schema cannot overflow a server thread's stack.
pub const MAX_NESTING: usize = 256;

/// Why [`normalise_checked`] refused a schema: where (a JSON pointer into the schema given)
/// and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exceeded {
    pub pointer: String,
    pub message: String,
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.message)
    }
}
const TYPES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];
/// Keywords that carry meaning for a reader but never affect validity.
const ANNOTATIONS: [&str; 5] = ["description", "title", "default", "examples", "format"];

/// Normalise a schema so that it passes [`super::validate`].
pub fn normalise(schema: &Value) -> Value {
    normalised(schema).into_owned()
}

/// [`normalise`], borrowing a schema already in normal form ([`is_normal`]) rather than
/// copying it: a caller that holds the schema's text can then use that text as it is.
pub fn normalised(schema: &Value) -> Cow<'_, Value> {
    match is_normal(schema) {
        true => Cow::Borrowed(schema),
        false => Cow::Owned(normalise_within(schema).0),
    }
}

/// Normalise a schema, or say where it exceeds the expansion budget.
pub fn normalise_checked(schema: &Value) -> Result<Value, Exceeded> {
    if is_normal(schema) {
        return Ok(schema.clone());
    }
    match normalise_within(schema) {
        (v, None) => Ok(v),
        (_, Some(e)) => Err(e),
    }
}

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

/// [`normalise`] without the fast path: what the fast path is tested against.
#[cfg(test)]
pub(crate) fn normalise_slowly(schema: &Value) -> Value {
    normalise_within(schema).0
}

fn normalise_within(schema: &Value) -> (Value, Option<Exceeded>) {
    let mut refs = vec!["#".to_string()];
    let n = Normaliser {
        root: schema,
        spent: Cell::new(0),
        frames: Cell::new(0),
        exceeded: RefCell::new(None),
    };
    let node = n.node(schema, 0, &mut refs, "");
    (root_object(node), n.exceeded.into_inner())
}

fn root_object(node: Value) -> Value {
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
    /// Bytes inlined by `$ref` expansion so far.
    spent: Cell<usize>,
    /// Nodes being normalised inside one another right now.
    frames: Cell<usize>,
    /// The first place the budget ran out; every later `$ref` is left unexpanded.
    exceeded: RefCell<Option<Exceeded>>,
}

/// A node's size as schema text, roughly (strings and keys by length, 2 per value), counted
/// only up to `cap` so that weighing stays as cheap as the budget it guards.
fn weight(v: &Value, cap: usize) -> usize {
    let mut total = 0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        total += 2;
        match v {
            Value::String(s) => total += s.len(),
            Value::Array(a) => stack.extend(a.iter()),
            Value::Object(m) => {
                for (k, x) in m {
                    total += k.len();
                    stack.push(x);
                }
            }
            Value::Number(_) | Value::Bool(_) | Value::Null => total += 4,
        }
        if total > cap {
            break;
        }
    }
    total
}

impl Normaliser<'_> {
    /// Whether a `$ref` to `target` at `ptr` may still be expanded; records the first refusal.
    fn afford(&self, target: &Value, ptr: &str, chain: usize) -> bool {
        if self.exceeded.borrow().is_some() {
            return false;
        }
        let message = if chain > MAX_REF_CHAIN {
            format!("`$ref`s nest more than {MAX_REF_CHAIN} deep; inline some definitions")
        } else {
            let left = MAX_EXPANDED_BYTES - self.spent.get();
            let w = weight(target, left);
            if w <= left {
                self.spent.set(self.spent.get() + w);
                return true;
            }
            format!(
                "expanding `$ref`s would inline more than {MAX_EXPANDED_BYTES} bytes of schema (definitions that refer to others several times multiply); refer to fewer definitions or inline them"
            )
        };
        *self.exceeded.borrow_mut() = Some(Exceeded {
            pointer: format!("{ptr}/$ref"),
            message,
        });
        false
    }

    fn node(&self, v: &Value, depth: usize, refs: &mut Vec<String>, ptr: &str) -> Value {
        if self.frames.get() >= MAX_NESTING {
            let mut exceeded = self.exceeded.borrow_mut();
            if exceeded.is_none() {
                *exceeded = Some(Exceeded {
                    pointer: ptr.to_string(),
                    message: format!("the schema nests more than {MAX_NESTING} levels deep"),
                });
            }
            let ty = v.as_object().map_or("string".into(), |o| self.node_type(o));
            return json!({ "type": ty });
        }
        self.frames.set(self.frames.get() + 1);
        let out = self.node_inner(v, depth, refs, ptr);
        self.frames.set(self.frames.get() - 1);
        out
    }

    fn node_inner(&self, v: &Value, depth: usize, refs: &mut Vec<String>, ptr: &str) -> Value {
        let Some(src) = v.as_object() else {
            return json!({"type": "string"});
        };
        let mut obj = src.clone();
        obj.remove("$defs");
        obj.remove("definitions");

        if let Some(resolved) = self.resolve_ref(&mut obj, depth, refs, ptr) {
            return resolved;
        }
        self.merge_combinators(&mut obj, depth, refs, ptr);
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

        self.children(&mut obj, depth, refs, ptr);
        Value::Object(obj)
    }

    /// Follow a local `$ref` within the budget: the target's normal form with this node's
    /// annotations on top, or `None` (a ref that cannot be followed becomes an object).
    fn resolve_ref(
        &self,
        obj: &mut Map<String, Value>,
        depth: usize,
        refs: &mut Vec<String>,
        ptr: &str,
    ) -> Option<Value> {
        if let Some(r) = obj.remove("$ref") {
            let target = r
                .as_str()
                .filter(|r| !refs.iter().any(|seen| seen == r))
                .and_then(|r| r.strip_prefix('#').map(|p| (r, p)))
                .and_then(|(r, p)| self.root.pointer(p).map(|t| (r.to_string(), t, p)))
                .filter(|(_, t, _)| self.afford(t, ptr, refs.len()));
            match target {
                Some((r, t, p)) => {
                    refs.push(r);
                    let base = self.node(t, depth, refs, p);
                    refs.pop();
                    let mut merged = into_map(base);
                    for key in ANNOTATIONS {
                        if let Some(val) = obj.get(key) {
                            merged.insert(key.to_string(), val.clone());
                        }
                    }
                    return Some(Value::Object(merged));
                }
                None => {
                    obj.entry("type").or_insert_with(|| json!("object"));
                }
            }
        }

        None
    }

    /// Fold `anyOf`/`oneOf` (the first non-null branch) and `allOf` (every branch) into the node.
    fn merge_combinators(
        &self,
        obj: &mut Map<String, Value>,
        depth: usize,
        refs: &mut Vec<String>,
        ptr: &str,
    ) {
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = obj.remove(key) {
                let pick = branches
                    .iter()
                    .enumerate()
                    .find(|(_, b)| b.get("type").and_then(Value::as_str) != Some("null"))
                    .or(branches.first().map(|b| (0, b)));
                if let Some((i, b)) = pick {
                    let branch = into_map(self.node(b, depth, refs, &format!("{ptr}/{key}/{i}")));
                    for (k, val) in branch {
                        obj.entry(k).or_insert(val);
                    }
                }
            }
        }
        obj.remove("anyOf");
        obj.remove("oneOf");
        if let Some(all) = obj.remove("allOf") {
            for (i, b) in all.as_array().into_iter().flatten().enumerate() {
                let branch = into_map(self.node(b, depth, refs, &format!("{ptr}/allOf/{i}")));
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
    }

    /// Normalise the node's children: properties, required names, items, additional properties.
    fn children(
        &self,
        obj: &mut Map<String, Value>,
        depth: usize,
        refs: &mut Vec<String>,
        ptr: &str,
    ) {
        if let Some(p) = obj.get_mut("properties") {
            match p {
                Value::Object(map) => {
                    for (k, child) in map.iter_mut() {
                        let at = format!("{ptr}/properties/{}", super::validate::segment(k));
                        *child = self.node(child, depth + 1, refs, &at);
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
                let items = self.node(&obj["items"], depth + 1, refs, &format!("{ptr}/items"));
                obj.insert("items".into(), items);
            }
            Some(Value::Array(tuple)) => {
                let first = tuple
                    .first()
                    .map(|t| self.node(t, depth + 1, refs, &format!("{ptr}/items/0")))
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
                let n = self.node(&ap, depth + 1, refs, &format!("{ptr}/additionalProperties"));
                obj.insert("additionalProperties".into(), n);
            }
            Some(Value::Bool(_)) | None => {}
            Some(_) => {
                obj.remove("additionalProperties");
            }
        }
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

    /// The fast path answers `true` only where the normaliser would give the same text back.
    fn agrees(s: &Value) -> bool {
        let fast = is_normal(s);
        if fast {
            assert_eq!(
                crate::json::compact(&normalise_slowly(s)),
                crate::json::compact(s),
                "is_normal said a schema was normal that the normaliser changes"
            );
        }
        fast
    }

    #[test]
    fn the_fast_path_only_takes_fixed_points() {
        // Every schema of the captured servers, and its normal form (which must take the fast
        // path too whenever it has the plain shape the fast path knows).
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real-mcp");
        let mut schemas = Vec::new();
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(text) = std::fs::read_to_string(e.path()) else {
                continue;
            };
            let doc: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            let tools = doc
                .get("tools")
                .or_else(|| doc.pointer("/result/tools"))
                .and_then(Value::as_array);
            for t in tools.into_iter().flatten() {
                schemas.extend(t.get("inputSchema").cloned());
            }
        }
        assert!(schemas.len() > 200, "{}", schemas.len());
        let mut taken = 0;
        for s in &schemas {
            agrees(s);
            taken += usize::from(agrees(&normalise_slowly(s)));
        }
        assert!(taken > 100, "the fast path was taken {taken} times");
        // Shapes it must leave to the normaliser: each of these normalises to something else.
        for s in [
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]}),
            json!({"type": "object", "properties": {}, "required": ["ghost"]}),
            json!({"type": "object", "properties": {}, "required": "a"}),
            json!({"type": "object", "properties": {"a": {"$ref": "#"}}}),
            json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}}),
            json!({"type": "object", "properties": {"a": {"description": "no type"}}}),
            json!({"type": "object", "properties": {"a": {"type": "text"}}}),
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
            json!({"type": "object", "properties": {"a": true}}),
            json!({"type": "object", "properties": []}),
            json!({"type": "object"}),
            json!({"type": "string"}),
            json!({"type": "object", "properties": {}, "$defs": {}}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": [{"type": "string"}]}}}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": 3}}}),
            json!({"type": "object", "properties": {}, "additionalProperties": 3}),
            json!({"type": "object", "properties": {}, "additionalProperties": {"oneOf": []}}),
        ] {
            assert!(!is_normal(&s), "{s}");
            assert_ne!(
                crate::json::compact(&normalise(&s)),
                crate::json::compact(&s),
                "{s}"
            );
        }
        // Deeper than the normaliser keeps: cut, so not taken.
        let mut deep = json!({"type": "string"});
        for _ in 0..MAX_DEPTH + 1 {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        assert!(!is_normal(&deep));
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
