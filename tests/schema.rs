//! The strict-schema normaliser: any schema normalises to a valid one, twice changes nothing,
//! and every real capture normalises; the validator finds the known breakage.

mod common;

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolcost::catalogue::Catalogue;
use toolcost::schema::{normalise, validate, ViolationKind};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z#/$]{0,8}".prop_map(Value::String),
        prop::sample::select(vec![
            "object", "array", "string", "integer", "number", "boolean", "null", "bogus"
        ])
        .prop_map(|t| json!(t)),
        Just(json!("#/$defs/a")),
        Just(json!("#")),
    ]
}

/// JSON values biased toward schema keywords, nested.
fn schemaish() -> impl Strategy<Value = Value> {
    let keys = prop::sample::select(vec![
        "type",
        "properties",
        "required",
        "items",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "enum",
        "description",
        "additionalProperties",
        "a",
        "b",
        "const",
        "format",
    ]);
    leaf().prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..6).prop_map(|kv| {
                let mut m = Map::new();
                for (k, v) in kv {
                    m.insert(k.to_string(), v);
                }
                Value::Object(m)
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_schema_normalises_to_a_valid_one(s in schemaish()) {
        let n = normalise(&s);
        prop_assert!(validate(&n).is_empty(), "{} -> {} : {:?}", s, n, validate(&n));
    }

    #[test]
    fn normalising_twice_changes_nothing(s in schemaish()) {
        let once = normalise(&s);
        prop_assert_eq!(normalise(&once), once);
    }
}

#[test]
fn every_real_capture_normalises_to_valid_schemas() {
    for (name, path) in common::real_mcp_captures() {
        let cat = Catalogue::load(&path).unwrap();
        assert!(!cat.tools.is_empty(), "{name}");
        for t in &cat.tools {
            let n = normalise(&t.input_schema());
            assert!(
                validate(&n).is_empty(),
                "{name}/{}: {:?}",
                t.name,
                validate(&n)
            );
            assert_eq!(normalise(&n), n, "{name}/{}: not idempotent", t.name);
        }
    }
}

#[test]
fn gitlab_and_notion_breakage_is_reported() {
    let dir = common::shared().join("real-mcp");
    let gitlab =
        Catalogue::load(&dir.join("modelcontextprotocol__server-gitlab.tools.json")).unwrap();
    for t in &gitlab.tools {
        let v = validate(&t.input_schema());
        assert!(
            v.iter().any(|x| x.kind == ViolationKind::RootNotObject),
            "gitlab {}: {v:?}",
            t.name
        );
    }
    let notion = Catalogue::load(&dir.join("notionhq__notion-mcp-server.tools.json")).unwrap();
    let refs = notion
        .tools
        .iter()
        .filter(|t| {
            validate(&t.input_schema())
                .iter()
                .any(|x| x.kind == ViolationKind::Ref)
        })
        .count();
    assert!(refs > 0, "notion's $ref blocks are not reported");
}
