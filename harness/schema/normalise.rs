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

use serde::Serialize;
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
    let (v, _, e) = normalise_full(schema);
    (v, e)
}

fn normalise_full(schema: &Value) -> (Value, Vec<Change>, Option<Exceeded>) {
    let mut refs = vec!["#".to_string()];
    let n = Normaliser {
        root: schema,
        spent: Cell::new(0),
        frames: Cell::new(0),
        exceeded: RefCell::new(None),
        changes: RefCell::new(Vec::new()),
    };
    let node = n.node(schema, 0, &mut refs, "");
    if node.get("type").and_then(Value::as_str) == Some("object") {
        let node = n.root_object(node);
        return (node, n.changes.into_inner(), n.exceeded.into_inner());
    }
    // A root that is wrapped as `input` sits one level down in the normal form: normalise it
    // there, so that the depth cut falls where a second pass puts it.
    let wrapped = Normaliser {
        root: schema,
        spent: Cell::new(0),
        frames: Cell::new(0),
        exceeded: RefCell::new(None),
        changes: RefCell::new(Vec::new()),
    };
    let mut refs = vec!["#".to_string()];
    let node = wrapped.node(schema, 1, &mut refs, "");
    let node = wrapped.root_object(node);
    (
        node,
        wrapped.changes.into_inner(),
        wrapped.exceeded.into_inner(),
    )
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

/// A normal form and what it changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Reported {
    pub schema: Value,
    pub changes: Vec<Change>,
}

/// What one change does to the set of instances a schema accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    /// The normal form refuses some instances the schema accepts.
    Narrows,
    /// The normal form accepts some instances the schema refuses.
    Widens,
    /// Both, or a different shape altogether.
    Changes,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Narrows => "narrows",
            Effect::Widens => "widens",
            Effect::Changes => "changes",
        }
    }
}

/// One place where the normal form does not accept what the schema accepts: a JSON pointer
/// into the schema given, the effect, and what the strict rules forced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub pointer: String,
    pub effect: Effect,
    pub message: String,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {} ({})", self.message, self.effect.as_str())
    }
}

/// Whether a node gets a `type` inferred where it has none.
#[derive(Clone, Copy)]
enum Typing {
    Infer,
    Defer,
}

/// Changes recorded per schema at most; a hostile schema cannot grow the list without bound.
const MAX_CHANGES: usize = 256;

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

/// Keywords whose conjunction is the larger (`min*`) or smaller (`max*`) bound.
const LOWER_BOUNDS: [&str; 5] = [
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];
const UPPER_BOUNDS: [&str; 5] = [
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];

fn property_names(m: &Map<String, Value>) -> Vec<&str> {
    m.get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

impl Normaliser<'_> {
    fn change(&self, pointer: &str, effect: Effect, message: String) {
        let mut changes = self.changes.borrow_mut();
        if changes.len() >= MAX_CHANGES
            || changes
                .iter()
                .any(|c| c.pointer == pointer && c.message == message)
        {
            return;
        }
        changes.push(Change {
            pointer: pointer.to_string(),
            effect,
            message,
        });
    }

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

    /// The node with a local `$ref` followed within the budget and its siblings applied beside
    /// the target (JSON Schema 2020-12, the MCP default dialect); a ref that cannot be followed
    /// becomes an object.
    fn with_reference(
        &self,
        own: Map<String, Value>,
        r: &Value,
        depth: usize,
        refs: &mut Vec<String>,
        ptr: &str,
    ) -> Map<String, Value> {
        let at = format!("{ptr}/$ref");
        let why_not = match r.as_str() {
            None => Some("is not a string".to_string()),
            Some(r) if refs.iter().any(|seen| seen == r) => {
                Some(format!("`{r}` refers back to itself"))
            }
            Some(r) => match r.strip_prefix('#').map(|p| (p, self.root.pointer(p))) {
                None => Some(format!("`{r}` is not a local reference")),
                Some((_, None)) => Some(format!("`{r}` points at nothing")),
                Some((p, Some(t))) if self.afford(t, ptr, refs.len()) => {
                    refs.push(r.to_string());
                    let target = into_map(self.part(t, depth, refs, p));
                    refs.pop();
                    let annotations: Vec<(String, Value)> = own
                        .iter()
                        .filter(|(k, _)| ANNOTATIONS.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    let mut merged = self.conjoin(target, own, ptr);
                    merged.extend(annotations);
                    return merged;
                }
                Some(_) => Some(format!("`{r}` exceeds the expansion budget")),
            },
        };
        let mut own = own;
        let served = if own.contains_key("type") {
            "its siblings alone"
        } else {
            own.insert("type".into(), json!("object"));
            "an object"
        };
        self.change(
            &at,
            Effect::Changes,
            format!(
                "`$ref` {} and cannot be inlined; served as {served}",
                why_not.unwrap_or_default()
            ),
        );
        own
    }

    /// `anyOf`/`oneOf` as one node: one branch as it is, branches that each list values of
    /// one type as the union of their values, otherwise the first non-null branch (reported).
    fn fold(
        &self,
        key: &str,
        branches: Value,
        depth: usize,
        refs: &mut Vec<String>,
        ptr: &str,
    ) -> Option<Map<String, Value>> {
        let at = format!("{ptr}/{key}");
        let Value::Array(branches) = branches else {
            self.change(
                &at,
                Effect::Changes,
                format!("`{key}` is not a list; dropped"),
            );
            return None;
        };
        let mut normal: Vec<Map<String, Value>> = branches
            .iter()
            .enumerate()
            .map(|(i, b)| into_map(self.part(b, depth, refs, &format!("{at}/{i}"))))
            .collect();
        if normal.is_empty() {
            self.change(
                &at,
                Effect::Widens,
                format!("an empty `{key}` accepts nothing; dropped"),
            );
            return None;
        }
        if normal.len() == 1 || (key == "anyOf" && normal.iter().all(|b| *b == normal[0])) {
            return Some(normal.swap_remove(0));
        }
        if let Some(union) = value_union(&normal, key == "oneOf") {
            return Some(union);
        }
        let non_null: Vec<usize> = (0..normal.len())
            .filter(|&i| normal[i].get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        let pick = non_null.first().copied().unwrap_or(0);
        let (effect, message) = match (non_null.len(), key) {
            (1, _) => (
                Effect::Narrows,
                format!("`{key}` with `null`: a strict schema has one type, so null is no longer accepted"),
            ),
            (_, "anyOf") => (
                Effect::Narrows,
                format!("only branch {pick} of {} `anyOf` branches is kept", normal.len()),
            ),
            _ => (
                Effect::Changes,
                format!("only branch {pick} of {} `{key}` branches is kept", normal.len()),
            ),
        };
        self.change(&at, effect, message);
        Some(normal.swap_remove(pick))
    }

    /// Two normal nodes as one that accepts what both accept: keywords of one node each apply,
    /// so a keyword only one side has is kept as it is, and one both have is intersected where
    /// JSON Schema allows (`properties`, `required`, `type`, `enum`, bounds, `items`,
    /// `additionalProperties`). What cannot be intersected keeps the first side's and is
    /// reported. Annotations keep the first side's.
    fn conjoin(
        &self,
        mut a: Map<String, Value>,
        b: Map<String, Value>,
        ptr: &str,
    ) -> Map<String, Value> {
        // `additionalProperties` reads the `properties` of its own node: a name the other side
        // adds is no longer additional once merged.
        for (x, y) in [(&a, &b), (&b, &a)] {
            if x.get("additionalProperties")
                .is_some_and(|ap| *ap != json!(true))
            {
                let mine = property_names(x);
                let extra: Vec<&str> = property_names(y)
                    .into_iter()
                    .filter(|n| !mine.contains(n))
                    .collect();
                if !extra.is_empty() {
                    self.change(
                        ptr,
                        Effect::Widens,
                        format!(
                            "one merged part limits additional properties and another adds `{}`, which the merged form lets through",
                            extra.join("`, `")
                        ),
                    );
                }
            }
        }
        for (k, bv) in b {
            let Some(av) = a.get_mut(&k) else {
                a.insert(k, bv);
                continue;
            };
            if *av == bv || ANNOTATIONS.contains(&k.as_str()) {
                continue;
            }
            let conflict = match (k.as_str(), &mut *av, bv) {
                ("properties", Value::Object(mine), Value::Object(theirs)) => {
                    for (pk, pv) in theirs {
                        let at = format!("{ptr}/properties/{}", super::validate::segment(&pk));
                        match (mine.get_mut(&pk), pv) {
                            (Some(existing @ Value::Object(_)), Value::Object(pv)) => {
                                let mut merged =
                                    self.conjoin(into_map(existing.take()), pv, &at);
                                self.fix_required(&mut merged, &at);
                                *existing = Value::Object(merged);
                            }
                            (Some(_), _) => {}
                            (None, pv) => {
                                mine.insert(pk, pv);
                            }
                        }
                    }
                    None
                }
                ("required", Value::Array(mine), Value::Array(theirs)) => {
                    for n in theirs {
                        if !mine.contains(&n) {
                            mine.push(n);
                        }
                    }
                    None
                }
                ("type", Value::String(x), Value::String(y)) => match (x.as_str(), y.as_str()) {
                    ("integer", "number") => None,
                    ("number", "integer") => {
                        *av = json!("integer");
                        None
                    }
                    _ => Some(format!(
                        "merged parts disagree on `type` (`{x}`, `{y}`), so no value validates; served as `{x}`"
                    )),
                },
                ("enum", Value::Array(mine), Value::Array(theirs)) => {
                    mine.retain(|v| theirs.contains(v));
                    mine.is_empty()
                        .then(|| "merged `enum`s share no value, so no value validates".into())
                }
                (bound, Value::Number(x), Value::Number(y))
                    if LOWER_BOUNDS.contains(&bound) || UPPER_BOUNDS.contains(&bound) =>
                {
                    let (xf, yf) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                    let take_y = match LOWER_BOUNDS.contains(&bound) {
                        true => yf > xf,
                        false => yf < xf,
                    };
                    if take_y {
                        *av = Value::Number(y);
                    }
                    None
                }
                ("items" | "additionalProperties", Value::Object(_), Value::Object(theirs)) => {
                    let at = format!("{ptr}/{k}");
                    let mut merged = self.conjoin(into_map(av.take()), theirs, &at);
                    self.fix_required(&mut merged, &at);
                    *av = Value::Object(merged);
                    None
                }
                ("additionalProperties", _, Value::Bool(false)) => {
                    *av = json!(false);
                    None
                }
                ("additionalProperties", Value::Bool(false), _) => None,
                ("additionalProperties", Value::Bool(true), theirs) => {
                    *av = theirs;
                    None
                }
                ("additionalProperties", Value::Object(_), Value::Bool(true)) => None,
                (other, _, _) => Some(format!(
                    "merged parts set `{other}` differently; the first is kept"
                )),
            };
            if let Some(message) = conflict {
                self.change(&format!("{ptr}/{k}"), Effect::Widens, message);
            }
        }
        a
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

/// Branches that each only list values (an `enum` or `const`, with a `type` or not) as one
/// node listing every value any branch accepts, when all those values share one type. For
/// `oneOf` the branches must not share a value (one that two branches accept fails `oneOf`).
fn value_union(branches: &[Map<String, Value>], exclusive: bool) -> Option<Map<String, Value>> {
    let mut values: Vec<Value> = Vec::new();
    for b in branches {
        if b.keys().any(|k| {
            !matches!(k.as_str(), "type" | "enum" | "const") && !ANNOTATIONS.contains(&k.as_str())
        }) {
            return None;
        }
        let listed: Vec<&Value> = match (b.get("const"), b.get("enum")) {
            (Some(c), None) => vec![c],
            (None, Some(Value::Array(e))) => e.iter().collect(),
            _ => return None,
        };
        let ty = b.get("type").and_then(Value::as_str);
        for v in listed {
            if ty.is_some_and(|t| !super::instance::type_ok(t, v)) {
                continue;
            }
            match values.contains(v) {
                true if exclusive => return None,
                true => {}
                false => values.push(v.clone()),
            }
        }
    }
    let ty = one_type(&values)?;
    let mut out = Map::new();
    out.insert("type".into(), json!(ty));
    for key in ANNOTATIONS {
        if let Some(v) = branches.iter().find_map(|b| b.get(key)) {
            out.insert(key.into(), v.clone());
        }
    }
    out.insert("enum".into(), Value::Array(values));
    Some(out)
}

/// The one JSON Schema type every value has (`integer` where all are whole, `number` where
/// some are not), or `None`.
fn one_type(values: &[Value]) -> Option<&'static str> {
    let of = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) if super::instance::type_ok("integer", v) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let mut ty = of(values.first()?);
    for v in &values[1..] {
        ty = match (ty, of(v)) {
            (a, b) if a == b => a,
            ("integer" | "number", "integer" | "number") => "number",
            _ => return None,
        };
    }
    Some(ty)
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
