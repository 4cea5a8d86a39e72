//! The normaliser on hand-picked schemas and on every captured server's.

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
