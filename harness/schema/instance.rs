//! Checking arguments against an input schema, as given or normalised: types (one or a
//! list), `const` and `enum`, required names, nested objects and arrays (`items` as one schema
//! or a tuple), `additionalProperties`, numeric, length and count bounds, boolean schemas,
//! `allOf`/`anyOf`/`oneOf`/`not`, and local `$ref`s. The first problem is reported with the
//! JSON pointer of the offending argument. Other keywords (`pattern`, `format`, ...) are not
//! checked.
//!
//! Work is bounded: a hostile schema (refs that loop on one value, combinators nested many
//! times) gets at most [`MAX_STEPS`] schema nodes visited and [`MAX_DEPTH`] nested, and is
//! then refused with a message saying so.

use super::validate::segment;
use serde_json::Value;

/// Schema nodes one check may visit.
pub const MAX_STEPS: usize = 100_000;
/// Schema nodes (followed refs included) one check may nest.
pub const MAX_DEPTH: usize = 128;

/// A problem with an argument value.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgError {
    pub pointer: String,
    pub message: String,
}

/// Check `value` against `schema` (which is also the root its `$ref`s resolve against).
pub fn check(schema: &Value, value: &Value) -> Result<(), ArgError> {
    let mut c = Checker {
        root: schema,
        steps: 0,
        exhausted: false,
    };
    c.node(schema, value, "", 0)
}

fn fail(pointer: &str, message: String) -> Result<(), ArgError> {
    Err(ArgError {
        pointer: if pointer.is_empty() {
            "/".into()
        } else {
            pointer.into()
        },
        message,
    })
}

/// Whether `v` has JSON Schema type `ty` (an unknown type name accepts everything).
pub(crate) fn type_ok(ty: &str, v: &Value) -> bool {
    match ty {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => {
            v.as_i64().is_some()
                || v.as_u64().is_some()
                || v.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => true,
    }
}

struct Checker<'a> {
    root: &'a Value,
    steps: usize,
    /// The budget ran out: every branch that failed after it failed for that reason, so the
    /// check fails as a whole (`anyOf` and `not` must not read it as a branch's answer).
    exhausted: bool,
}

fn count(v: &Value) -> Option<usize> {
    match v {
        Value::String(s) => Some(s.chars().count()),
        Value::Array(a) => Some(a.len()),
        Value::Object(o) => Some(o.len()),
        _ => None,
    }
}

impl Checker<'_> {
    fn node(&mut self, schema: &Value, v: &Value, ptr: &str, depth: usize) -> Result<(), ArgError> {
        self.steps += 1;
        if self.exhausted || self.steps > MAX_STEPS || depth > MAX_DEPTH {
            self.exhausted = true;
            return fail(
                ptr,
                format!("the input schema is too complex to check arguments against (over {MAX_STEPS} steps or {MAX_DEPTH} levels)"),
            );
        }
        let schema = match schema {
            Value::Bool(true) => return Ok(()),
            Value::Bool(false) => return fail(ptr, "no value is accepted here".into()),
            Value::Object(o) => o,
            _ => return Ok(()),
        };
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            if let Some(target) = r.strip_prefix('#').and_then(|p| self.root.pointer(p)) {
                self.node(target, v, ptr, depth + 1)?;
            }
        }
        match schema.get("type") {
            Some(Value::String(ty)) if !type_ok(ty, v) => {
                return fail(ptr, format!("expected {ty}, got {}", kind(v)));
            }
            Some(Value::Array(tys))
                if !tys.iter().filter_map(Value::as_str).any(|t| type_ok(t, v)) =>
            {
                return fail(
                    ptr,
                    format!(
                        "expected one of {}, got {}",
                        Value::Array(tys.clone()),
                        kind(v)
                    ),
                );
            }
            _ => {}
        }
        if let Some(c) = schema.get("const").filter(|c| *c != v) {
            return fail(ptr, format!("{v} is not {c}"));
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            if !options.contains(v) {
                return fail(
                    ptr,
                    format!("{v} is not one of {}", Value::Array(options.clone())),
                );
            }
        }
        if let Some(n) = v.as_f64() {
            let bound = |k: &str| schema.get(k).and_then(Value::as_f64);
            for (broken, what) in [
                (bound("minimum").filter(|m| n < *m), "below the minimum"),
                (bound("maximum").filter(|m| n > *m), "above the maximum"),
                (
                    bound("exclusiveMinimum").filter(|m| n <= *m),
                    "not above the exclusive minimum",
                ),
                (
                    bound("exclusiveMaximum").filter(|m| n >= *m),
                    "not below the exclusive maximum",
                ),
            ] {
                if let Some(m) = broken {
                    return fail(ptr, format!("{n} is {what} {m}"));
                }
            }
        }
        if let Some(len) = count(v) {
            let (min, max) = match v {
                Value::String(_) => ("minLength", "maxLength"),
                Value::Array(_) => ("minItems", "maxItems"),
                _ => ("minProperties", "maxProperties"),
            };
            if let Some(m) = schema
                .get(min)
                .and_then(Value::as_f64)
                .filter(|m| (len as f64) < *m)
            {
                return fail(ptr, format!("has {len}, below `{min}` {m}"));
            }
            if let Some(m) = schema
                .get(max)
                .and_then(Value::as_f64)
                .filter(|m| (len as f64) > *m)
            {
                return fail(ptr, format!("has {len}, above `{max}` {m}"));
            }
        }
        if let Some(obj) = v.as_object() {
            self.object(schema, obj, ptr, depth)?;
        }
        if let Some(arr) = v.as_array() {
            match schema.get("items") {
                Some(Value::Array(tuple)) => {
                    for (i, (item, s)) in arr.iter().zip(tuple).enumerate() {
                        self.node(s, item, &format!("{ptr}/{i}"), depth + 1)?;
                    }
                }
                Some(items) => {
                    for (i, item) in arr.iter().enumerate() {
                        self.node(items, item, &format!("{ptr}/{i}"), depth + 1)?;
                    }
                }
                None => {}
            }
        }
        self.combinators(schema, v, ptr, depth)
    }

    fn object(
        &mut self,
        schema: &serde_json::Map<String, Value>,
        obj: &serde_json::Map<String, Value>,
        ptr: &str,
        depth: usize,
    ) -> Result<(), ArgError> {
        let props = schema.get("properties").and_then(Value::as_object);
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !obj.contains_key(name) {
                return fail(
                    &format!("{ptr}/{}", segment(name)),
                    format!("required argument `{name}` is missing"),
                );
            }
        }
        for (k, child) in obj {
            let p = format!("{ptr}/{}", segment(k));
            match props.and_then(|m| m.get(k)) {
                Some(s) => self.node(s, child, &p, depth + 1)?,
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => return fail(&p, format!("unknown argument `{k}`")),
                    Some(s @ Value::Object(_)) => self.node(s, child, &p, depth + 1)?,
                    _ => {}
                },
            }
        }
        Ok(())
    }

    fn combinators(
        &mut self,
        schema: &serde_json::Map<String, Value>,
        v: &Value,
        ptr: &str,
        depth: usize,
    ) -> Result<(), ArgError> {
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            for s in all {
                self.node(s, v, ptr, depth + 1)?;
            }
        }
        for key in ["anyOf", "oneOf"] {
            let Some(branches) = schema.get(key).and_then(Value::as_array) else {
                continue;
            };
            let mut passed = 0;
            let mut first_error = None;
            for s in branches {
                match self.node(s, v, ptr, depth + 1) {
                    Ok(()) => passed += 1,
                    Err(e) if self.exhausted => return Err(e),
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
                if key == "anyOf" && passed > 0 {
                    break;
                }
            }
            match (key, passed) {
                (_, 0) => {
                    let why = first_error.map_or(String::new(), |e| {
                        format!(" (the first: {} at {})", e.message, e.pointer)
                    });
                    return fail(
                        ptr,
                        format!(
                            "matches none of the {} `{key}` branches{why}",
                            branches.len()
                        ),
                    );
                }
                ("oneOf", n) if n > 1 => {
                    return fail(
                        ptr,
                        format!("matches {n} `oneOf` branches; exactly one must match"),
                    );
                }
                _ => {}
            }
        }
        if let Some(not) = schema.get("not") {
            match self.node(not, v, ptr, depth + 1) {
                Ok(()) => return fail(ptr, "matches the schema under `not`".into()),
                Err(e) if self.exhausted => return Err(e),
                Err(_) => {}
            }
        }
        Ok(())
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_the_first_problem_by_pointer() {
        let s = json!({"type": "object", "properties": {
            "to": {"type": "array", "items": {"type": "string"}},
            "n": {"type": "integer", "minimum": 1},
            "mode": {"type": "string", "enum": ["a", "b"]}
        }, "required": ["to"], "additionalProperties": false});
        assert!(check(&s, &json!({"to": ["x"], "n": 2, "mode": "a"})).is_ok());
        assert_eq!(check(&s, &json!({})).unwrap_err().pointer, "/to");
        assert_eq!(
            check(&s, &json!({"to": ["x", 3]})).unwrap_err().pointer,
            "/to/1"
        );
        assert_eq!(
            check(&s, &json!({"to": [], "n": 0})).unwrap_err().pointer,
            "/n"
        );
        assert_eq!(
            check(&s, &json!({"to": [], "mode": "c"}))
                .unwrap_err()
                .pointer,
            "/mode"
        );
        assert_eq!(
            check(&s, &json!({"to": [], "extra": 1}))
                .unwrap_err()
                .message,
            "unknown argument `extra`"
        );
        assert_eq!(check(&s, &json!([1])).unwrap_err().pointer, "/");
    }
}
