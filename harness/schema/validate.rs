//! The strict-schema validator.

use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// What rule a schema node breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ViolationKind {
    RootNotObject,
    RequiredNotInProperties,
    MissingType,
    BadType,
    Combinator,
    Ref,
    BadShape,
}

/// One violation: where (a JSON pointer into the schema) and what.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    pub pointer: String,
    pub kind: ViolationKind,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = pointer_shown(&self.pointer);
        write!(f, "{at}: {}", self.message)
    }
}

const TYPES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];

/// Every violation in a schema, in document order.
pub fn validate(schema: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => {}
        Some(other) => push(
            &mut out,
            "",
            ViolationKind::RootNotObject,
            format!("root type is `{other}`, must be `object`"),
        ),
        None => push(
            &mut out,
            "",
            ViolationKind::RootNotObject,
            "root has no `type: object`".into(),
        ),
    }
    node(schema, "", true, &mut out);
    out
}

fn push(out: &mut Vec<Violation>, pointer: &str, kind: ViolationKind, message: String) {
    out.push(Violation {
        pointer: pointer.to_string(),
        kind,
        message,
    });
}

/// A JSON pointer as a reader sees it: the empty pointer (the whole document) as `(root)`.
pub(crate) fn pointer_shown(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(root)"
    } else {
        pointer
    }
}

/// Escape a key for use as a JSON pointer segment (RFC 6901).
pub(crate) fn segment(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn node(v: &Value, ptr: &str, root: bool, out: &mut Vec<Violation>) {
    let Some(obj) = v.as_object() else {
        push(
            out,
            ptr,
            ViolationKind::BadShape,
            "schema node is not an object".into(),
        );
        return;
    };
    for key in ["anyOf", "oneOf", "allOf"] {
        if obj.contains_key(key) {
            push(
                out,
                &format!("{ptr}/{key}"),
                ViolationKind::Combinator,
                format!("`{key}` is not allowed; pick one branch"),
            );
        }
    }
    if obj.contains_key("$ref") {
        push(
            out,
            &format!("{ptr}/$ref"),
            ViolationKind::Ref,
            "`$ref` is not allowed; inline the definition".into(),
        );
    }
    match obj.get("type") {
        None if !root => push(
            out,
            ptr,
            ViolationKind::MissingType,
            "node has no `type`".into(),
        ),
        Some(Value::String(t)) if !TYPES.contains(&t.as_str()) => push(
            out,
            &format!("{ptr}/type"),
            ViolationKind::BadType,
            format!("`{t}` is not a JSON Schema type"),
        ),
        Some(t) if !t.is_string() => push(
            out,
            &format!("{ptr}/type"),
            ViolationKind::BadType,
            "`type` must be one string".into(),
        ),
        _ => {}
    }
    let props = obj.get("properties");
    if let Some(p) = props {
        match p.as_object() {
            Some(map) => {
                for (k, child) in map {
                    node(
                        child,
                        &format!("{ptr}/properties/{}", segment(k)),
                        false,
                        out,
                    );
                }
            }
            None => push(
                out,
                &format!("{ptr}/properties"),
                ViolationKind::BadShape,
                "`properties` is not an object".into(),
            ),
        }
    }
    required(obj, props, ptr, out);
    if let Some(items) = obj.get("items") {
        node(items, &format!("{ptr}/items"), false, out);
    }
    if let Some(ap @ Value::Object(_)) = obj.get("additionalProperties") {
        node(ap, &format!("{ptr}/additionalProperties"), false, out);
    }
    // Strict clients read definitions blocks too (notion ships one in every tool).
    for key in ["$defs", "definitions"] {
        if let Some(defs) = obj.get(key).and_then(Value::as_object) {
            for (k, child) in defs {
                node(child, &format!("{ptr}/{key}/{}", segment(k)), false, out);
            }
        }
    }
}

/// `required` is an array of names that `properties` has.
fn required(
    obj: &serde_json::Map<String, Value>,
    props: Option<&Value>,
    ptr: &str,
    out: &mut Vec<Violation>,
) {
    if let Some(req) = obj.get("required") {
        match req.as_array() {
            Some(names) => {
                for (i, name) in names.iter().enumerate() {
                    let present = name.as_str().is_some_and(|n| {
                        props
                            .and_then(Value::as_object)
                            .is_some_and(|m| m.contains_key(n))
                    });
                    if !present {
                        push(
                            out,
                            &format!("{ptr}/required/{i}"),
                            ViolationKind::RequiredNotInProperties,
                            format!("required name {name} is not in `properties`"),
                        );
                    }
                }
            }
            None => push(
                out,
                &format!("{ptr}/required"),
                ViolationKind::BadShape,
                "`required` is not an array".into(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds(v: Value) -> Vec<(String, ViolationKind)> {
        validate(&v)
            .into_iter()
            .map(|x| (x.pointer, x.kind))
            .collect()
    }

    #[test]
    fn each_rule_is_reported_by_pointer() {
        assert!(kinds(
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
        )
        .is_empty());
        assert_eq!(
            kinds(json!({"$schema": "x"})),
            vec![("".into(), ViolationKind::RootNotObject)]
        );
        assert_eq!(
            kinds(json!({"type": "object", "properties": {}, "required": ["x"]})),
            vec![("/required/0".into(), ViolationKind::RequiredNotInProperties)]
        );
        assert_eq!(
            kinds(json!({"type": "object", "properties": {"a/b": {"description": "no type"}}})),
            vec![("/properties/a~1b".into(), ViolationKind::MissingType)]
        );
        assert_eq!(
            kinds(json!({"type": "object", "properties": {"a": {"type": "string", "anyOf": []}}})),
            vec![("/properties/a/anyOf".into(), ViolationKind::Combinator)]
        );
        assert_eq!(
            kinds(
                json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/x", "type": "object"}}})
            ),
            vec![("/properties/a/$ref".into(), ViolationKind::Ref)]
        );
    }
}
