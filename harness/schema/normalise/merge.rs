//! Combinators folded into one node: `anyOf`/`oneOf` as one branch or one `enum`, and two
//! nodes joined into one that accepts what both accept.

use super::{into_map, Effect, Normaliser, ANNOTATIONS};
use serde_json::{json, Map, Value};

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
    /// `anyOf`/`oneOf` as one node: one branch as it is, branches that each list values of
    /// one type as the union of their values, otherwise the first non-null branch (reported).
    pub(super) fn fold(
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
    pub(super) fn conjoin(
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
                        let at = format!("{ptr}/properties/{}", crate::schema::validate::segment(&pk));
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
            if ty.is_some_and(|t| !crate::schema::instance::type_ok(t, v)) {
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
        Value::Number(_) if crate::schema::instance::type_ok("integer", v) => "integer",
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
