//! The normaliser: any JSON value in, a strict schema out, and a report of every place where
//! the strict form accepts other instances than the schema given.
//!
//! Local `$ref`s are inlined with their siblings applied beside the target (JSON Schema
//! 2020-12, the dialect MCP names), `allOf` branches are intersected keyword by keyword, and
//! `anyOf`/`oneOf` keep one branch unless the branches only list values, which are joined into
//! one `enum`. Missing types are inferred from the node's other keywords, and `required` names
//! missing from `properties` are added, so the requirement survives. Descriptions, enums,
//! formats and defaults are kept. The output is a fixed point: normalising it changes nothing.
//!
//! The strict rules (one type per node, no combinators, no `$ref`) cannot express every schema,
//! so some normal forms accept less (`anyOf` of two objects keeps one) or more (a cycle of
//! `$ref`s becomes an object). [`normalise_reported`] names each such place by JSON pointer
//! with its [`Effect`]; where it names none, the normal form accepts exactly what the input
//! accepts (checked by a property test with [`super::instance::check`]).
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

mod changes;
mod fast;
mod merge;
mod refs;
#[cfg(test)]
mod tests;

pub use changes::{Change, Effect, Reported};
pub use fast::is_normal;

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
        let at = crate::schema::validate::pointer_shown(&self.pointer);
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

/// [`normalise`] without the fast path: what the fast path is tested against.
#[cfg(test)]
pub(crate) fn normalise_slowly(schema: &Value) -> Value {
    normalise_within(schema).0
}

fn normalise_within(schema: &Value) -> (Value, Option<Exceeded>) {
    let (v, _, e) = normalise_full(schema);
    (v, e)
}

fn normalise_full(schema: &Value) -> (Value, Vec<Change>, Option<Exceeded>) {
    let n = Normaliser::new(schema);
    let node = n.node(schema, 0, &mut vec!["#".to_string()], "");
    if node.get("type").and_then(Value::as_str) == Some("object") {
        return n.finish(node);
    }
    // A root that is wrapped as `input` sits one level down in the normal form: normalise it
    // there, so that the depth cut falls where a second pass puts it.
    let n = Normaliser::new(schema);
    let node = n.node(schema, 1, &mut vec!["#".to_string()], "");
    n.finish(node)
}

/// Normalise a schema and say every place where its normal form accepts other instances than
/// it does. Where the list is empty the normal form accepts exactly what the schema accepts.
pub fn normalise_reported(schema: &Value) -> Reported {
    if is_normal(schema) {
        return Reported {
            schema: schema.clone(),
            changes: Vec::new(),
        };
    }
    let (schema, changes, _) = normalise_full(schema);
    Reported { schema, changes }
}

/// Whether a node gets a `type` inferred where it has none.
#[derive(Clone, Copy)]
enum Typing {
    Infer,
    Defer,
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
    /// Where the normal form accepts other instances, in the order found, once each.
    changes: RefCell<Vec<Change>>,
}

/// Keywords holding subschemas that the normaliser keeps as they are.
const KEPT_SUBSCHEMAS: [&str; 13] = [
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "contains",
    "propertyNames",
    "prefixItems",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
];

impl<'a> Normaliser<'a> {
    fn new(root: &'a Value) -> Self {
        Normaliser {
            root,
            spent: Cell::new(0),
            frames: Cell::new(0),
            exceeded: RefCell::new(None),
            changes: RefCell::new(Vec::new()),
        }
    }

    /// The root node as an object schema, and what normalising it found.
    fn finish(self, node: Value) -> (Value, Vec<Change>, Option<Exceeded>) {
        let node = self.root_object(node);
        (node, self.changes.into_inner(), self.exceeded.into_inner())
    }
}

impl Normaliser<'_> {
    fn root_object(&self, node: Value) -> Value {
        let mut obj = into_map(node);
        if obj.get("type").and_then(Value::as_str) != Some("object") {
            let ty = obj.get("type").and_then(Value::as_str).unwrap_or("string");
            self.change(
                "",
                Effect::Changes,
                format!("the root is a `{ty}` schema; strict clients need an object, so the value is wrapped as the required argument `input`"),
            );
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

    fn node(&self, v: &Value, depth: usize, refs: &mut Vec<String>, ptr: &str) -> Value {
        self.node_as(v, depth, refs, ptr, Typing::Infer)
    }

    /// A node that is merged into another (a branch, a `$ref`'s target) leaves its `type`
    /// unset where it has none: the node it joins may set it.
    fn part(&self, v: &Value, depth: usize, refs: &mut Vec<String>, ptr: &str) -> Value {
        self.node_as(v, depth, refs, ptr, Typing::Defer)
    }

    fn node_as(
        &self,
        v: &Value,
        depth: usize,
        refs: &mut Vec<String>,
        ptr: &str,
        typing: Typing,
    ) -> Value {
        if self.frames.get() >= MAX_NESTING {
            let mut exceeded = self.exceeded.borrow_mut();
            if exceeded.is_none() {
                *exceeded = Some(Exceeded {
                    pointer: ptr.to_string(),
                    message: format!("the schema nests more than {MAX_NESTING} levels deep"),
                });
            }
            drop(exceeded);
            self.change(
                ptr,
                Effect::Widens,
                format!("nested more than {MAX_NESTING} levels deep; cut to its type"),
            );
            let ty = v.as_object().map_or("string".into(), |o| self.node_type(o));
            return json!({ "type": ty });
        }
        self.frames.set(self.frames.get() + 1);
        let out = self.node_inner(v, depth, refs, ptr, typing);
        self.frames.set(self.frames.get() - 1);
        out
    }

    fn node_inner(
        &self,
        v: &Value,
        depth: usize,
        refs: &mut Vec<String>,
        ptr: &str,
        typing: Typing,
    ) -> Value {
        let Some(src) = v.as_object() else {
            let (effect, what) = match v {
                Value::Bool(true) => (Effect::Narrows, "`true` (any value)"),
                Value::Bool(false) => (Effect::Widens, "`false` (no value)"),
                _ => (Effect::Changes, "a schema that is not an object"),
            };
            self.change(ptr, effect, format!("{what} is served as a string"));
            return json!({"type": "string"});
        };
        if depth >= MAX_DEPTH {
            return self.cut(src, ptr);
        }
        let mut obj = src.clone();
        obj.remove("$defs");
        obj.remove("definitions");
        let reference = obj.remove("$ref");
        let any_of = obj.remove("anyOf");
        let one_of = obj.remove("oneOf");
        let all_of = obj.remove("allOf");

        // Keywords that hold subschemas the strict form has no rule for are kept as given, not
        // normalised: a `$ref` inside one no longer resolves once `$defs` is gone.
        for key in KEPT_SUBSCHEMAS {
            if obj.contains_key(key) {
                self.change(
                    &format!("{ptr}/{key}"),
                    Effect::Changes,
                    format!("`{key}` is kept as given, not normalised; strict clients may refuse it, and a `$ref` inside it no longer resolves"),
                );
            }
        }
        // The node's own keywords first, so that its annotations win over what it refers to.
        self.fix_type(&mut obj, ptr);
        self.children(&mut obj, depth, refs, ptr);
        if let Some(r) = reference {
            obj = self.with_reference(obj, &r, depth, refs, ptr);
        }
        for (key, branches) in [("anyOf", any_of), ("oneOf", one_of)] {
            if let Some(branch) = branches.and_then(|b| self.fold(key, b, depth, refs, ptr)) {
                obj = self.conjoin(obj, branch, ptr);
            }
        }
        match all_of {
            Some(Value::Array(all)) => {
                for (i, b) in all.iter().enumerate() {
                    let branch = into_map(self.part(b, depth, refs, &format!("{ptr}/allOf/{i}")));
                    obj = self.conjoin(obj, branch, ptr);
                }
            }
            Some(_) => self.change(
                &format!("{ptr}/allOf"),
                Effect::Changes,
                "`allOf` is not a list; dropped".into(),
            ),
            None => {}
        }

        let mut obj = match typing {
            Typing::Infer => self.typed(obj, ptr),
            Typing::Defer => obj,
        };
        self.fix_required(&mut obj, ptr);
        Value::Object(obj)
    }

    /// A node deeper than [`MAX_DEPTH`] as its type and description alone.
    fn cut(&self, src: &Map<String, Value>, ptr: &str) -> Value {
        let mut cut = Map::new();
        cut.insert("type".into(), json!(self.node_type(src)));
        if let Some(d) = src.get("description") {
            cut.insert("description".into(), d.clone());
        }
        if src
            .keys()
            .any(|k| k != "type" && !ANNOTATIONS.contains(&k.as_str()))
            || src
                .get("type")
                .and_then(Value::as_str)
                .is_none_or(|t| !TYPES.contains(&t))
        {
            self.change(
                ptr,
                Effect::Changes,
                format!("deeper than {MAX_DEPTH} levels; cut to its type"),
            );
        }
        Value::Object(cut)
    }

    /// A `type` that is not one valid string is made one before branches are merged.
    fn fix_type(&self, obj: &mut Map<String, Value>, ptr: &str) {
        let at = format!("{ptr}/type");
        match obj.get("type") {
            None => {}
            Some(Value::String(t)) if TYPES.contains(&t.as_str()) => {}
            Some(Value::Array(ts)) => {
                let mut valid: Vec<&str> = ts
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|t| TYPES.contains(t))
                    .collect();
                valid.dedup();
                // `["integer", "number"]`, in either order, is `number`.
                let ty = match valid.contains(&"number")
                    && valid.iter().all(|t| matches!(*t, "integer" | "number"))
                {
                    true => "number".to_string(),
                    false => self.node_type(obj),
                };
                if valid.len() < ts.len() {
                    // An entry that names no type (`"any"`, a number) accepts every value to a
                    // validator that does not know it.
                    self.change(
                        &at,
                        Effect::Changes,
                        format!(
                            "`type` lists entries that are not JSON Schema types; served as `{ty}`"
                        ),
                    );
                }
                // `["integer", "number"]` is `number`.
                let others: Vec<&str> = valid
                    .iter()
                    .copied()
                    .filter(|t| *t != ty && !(ty == "number" && *t == "integer"))
                    .collect();
                if !others.is_empty() || valid.is_empty() {
                    let message = if valid.is_empty() {
                        format!("`type` lists no JSON Schema type; served as `{ty}`")
                    } else {
                        format!(
                            "a strict schema has one type; `{}` no longer accepted",
                            others.join("`, `")
                        )
                    };
                    let effect = match valid.is_empty() {
                        true => Effect::Changes,
                        false => Effect::Narrows,
                    };
                    self.change(&at, effect, message);
                }
                obj.insert("type".into(), json!(ty));
            }
            Some(other) => {
                let ty = self.node_type(obj);
                self.change(
                    &at,
                    Effect::Changes,
                    format!("{other} is not a JSON Schema type; served as `{ty}`"),
                );
                obj.insert("type".into(), json!(ty));
            }
        }
    }

    /// The node with a valid `type`: its own or one inferred (a typeless node accepts every
    /// type, so inferring one narrows it unless its `enum` or `const` already did).
    fn typed(&self, obj: Map<String, Value>, ptr: &str) -> Map<String, Value> {
        if obj.contains_key("type") {
            return obj;
        }
        let ty = self.node_type(&obj);
        let values: Vec<&Value> = match (obj.get("const"), obj.get("enum")) {
            (Some(c), _) => vec![c],
            (None, Some(Value::Array(e))) => e.iter().collect(),
            _ => Vec::new(),
        };
        let exact = !values.is_empty() && values.iter().all(|v| super::instance::type_ok(&ty, v));
        if !exact {
            self.change(
                ptr,
                Effect::Narrows,
                format!("no `type` (any type accepted); a strict schema needs one, so `{ty}`"),
            );
        }
        let mut m = Map::new();
        m.insert("type".into(), json!(ty));
        m.extend(obj);
        m
    }

    /// The node's own children in normal form: properties, items, additional properties.
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
                _ => {
                    self.change(
                        &format!("{ptr}/properties"),
                        Effect::Changes,
                        "`properties` is not an object; served empty".into(),
                    );
                    *p = json!({});
                }
            }
        }
        let items_at = format!("{ptr}/items");
        match obj.get("items").cloned() {
            Some(items @ Value::Object(_)) => {
                let items = self.node(&items, depth + 1, refs, &items_at);
                obj.insert("items".into(), items);
            }
            Some(Value::Array(tuple)) => {
                self.change(
                    &items_at,
                    Effect::Changes,
                    "a list of item schemas (a tuple) is served as its first schema for every item"
                        .into(),
                );
                let first = tuple
                    .first()
                    .map(|t| self.node(t, depth + 1, refs, &format!("{items_at}/0")))
                    .unwrap_or_else(|| json!({"type": "string"}));
                obj.insert("items".into(), first);
            }
            Some(Value::Bool(true)) => {
                obj.remove("items");
            }
            Some(other) => {
                self.change(
                    &items_at,
                    Effect::Changes,
                    format!("`items` {other} is not a schema; dropped"),
                );
                obj.remove("items");
            }
            None => {}
        }
        let ap_at = format!("{ptr}/additionalProperties");
        match obj.get("additionalProperties").cloned() {
            Some(ap @ Value::Object(_)) => {
                let n = self.node(&ap, depth + 1, refs, &ap_at);
                obj.insert("additionalProperties".into(), n);
            }
            Some(Value::Bool(_)) | None => {}
            Some(other) => {
                self.change(
                    &ap_at,
                    Effect::Changes,
                    format!("`additionalProperties` {other} is not a schema; dropped"),
                );
                obj.remove("additionalProperties");
            }
        }
    }

    /// `required` last, each name once and in `properties`: a name `properties` lacks is
    /// added as `additionalProperties` says it may be, else as a string (reported), so the
    /// requirement survives.
    fn fix_required(&self, obj: &mut Map<String, Value>, ptr: &str) {
        let at = format!("{ptr}/required");
        let Some(names) = obj.remove("required") else {
            return;
        };
        let Value::Array(names) = names else {
            self.change(
                &at,
                Effect::Widens,
                "`required` is not a list; dropped".into(),
            );
            return;
        };
        if names.iter().any(|n| !n.is_string()) {
            self.change(
                &at,
                Effect::Changes,
                "names in `required` that are not strings are dropped".into(),
            );
        }
        let mut kept: Vec<String> = Vec::new();
        for n in names.iter().filter_map(Value::as_str) {
            if !kept.iter().any(|k| k == n) {
                kept.push(n.to_string());
            }
        }
        let extra = obj.get("additionalProperties").cloned();
        if let Value::Object(map) = obj.entry("properties").or_insert_with(|| json!({})) {
            for n in &kept {
                if map.contains_key(n) {
                    continue;
                }
                let schema = match &extra {
                    Some(s @ Value::Object(_)) => s.clone(),
                    Some(Value::Bool(false)) => {
                        self.change(
                            &at,
                            Effect::Widens,
                            format!("`{n}` is required but no additional property is allowed, so nothing validates; `{n}` is served as a string"),
                        );
                        json!({"type": "string"})
                    }
                    _ => {
                        self.change(
                            &at,
                            Effect::Narrows,
                            format!("required `{n}` is not in `properties` (any value accepted); served as a string"),
                        );
                        json!({"type": "string"})
                    }
                };
                map.insert(n.clone(), schema);
            }
        }
        obj.insert("required".into(), json!(kept));
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
