//! Checking arguments against a (normalised) input schema: types, required names, enums,
//! nested objects and arrays, `additionalProperties: false`, numeric bounds. The first problem
//! is reported with the JSON pointer of the offending argument.

use super::validate::segment;
use serde_json::Value;

/// A problem with an argument value.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgError {
    pub pointer: String,
    pub message: String,
}

/// Check `value` against `schema`.
pub fn check(schema: &Value, value: &Value) -> Result<(), ArgError> {
    node(schema, value, "")
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

fn type_ok(ty: &str, v: &Value) -> bool {
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

fn node(schema: &Value, v: &Value, ptr: &str) -> Result<(), ArgError> {
    if let Some(ty) = schema.get("type").and_then(Value::as_str) {
        if !type_ok(ty, v) {
            return fail(ptr, format!("expected {ty}, got {}", kind(v)));
        }
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
        if let Some(min) = schema
            .get("minimum")
            .and_then(Value::as_f64)
            .filter(|m| n < *m)
        {
            return fail(ptr, format!("{n} is below the minimum {min}"));
        }
        if let Some(max) = schema
            .get("maximum")
            .and_then(Value::as_f64)
            .filter(|m| n > *m)
        {
            return fail(ptr, format!("{n} is above the maximum {max}"));
        }
    }
    if let Some(obj) = v.as_object() {
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
                Some(s) => node(s, child, &p)?,
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => return fail(&p, format!("unknown argument `{k}`")),
                    Some(s @ Value::Object(_)) => node(s, child, &p)?,
                    _ => {}
                },
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, item) in arr.iter().enumerate() {
            node(items, item, &format!("{ptr}/{i}"))?;
        }
    }
    Ok(())
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
