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

// ---------------------------------------------------------------------------------------------
// What the normal form accepts: exactly what its input accepts, wherever no change is reported.

use toolcost::schema::instance::check;
use toolcost::schema::{normalise_reported, Effect};

/// Well-formed schemas of the kinds real servers ship: typed and typeless leaves, enums and
/// consts, bounds, objects with `required` and `additionalProperties`, arrays, type lists,
/// `allOf`/`anyOf`/`oneOf` beside other keywords, and `$ref`s into `$defs` with siblings.
fn schema_node() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        12 => prop::sample::select(vec!["string", "integer", "number", "boolean", "null"])
            .prop_map(|t| json!({"type": t})),
        3 => Just(json!({"type": "string", "enum": ["a", "x"]})),
        2 => Just(json!({"type": "integer", "minimum": 1})),
        1 => Just(json!({})),
        1 => Just(json!({"description": "anything"})),
        1 => Just(json!({"enum": ["a", "b"]})),
        1 => Just(json!({"enum": [1, "a"]})),
        1 => Just(json!({"const": 1})),
        1 => Just(json!({"const": "b"})),
        1 => Just(json!({"type": "integer", "minimum": 1})),
        1 => Just(json!({"type": "number", "maximum": 1.5})),
        1 => Just(json!({"type": ["string", "null"]})),
        1 => Just(json!({"type": ["integer", "number"]})),
        1 => Just(json!({"$ref": "#/$defs/d0"})),
        1 => Just(json!({"$ref": "#/$defs/d1", "description": "see d1"})),
        1 => Just(json!(true)),
    ];
    let names = || prop::sample::subsequence(vec!["a", "b", "c"], 0..=3);
    leaf.prop_recursive(4, 48, 4, move |inner| {
        let props = (names(), prop::collection::vec(inner.clone(), 3)).prop_map(|(ns, vs)| {
            let mut m = Map::new();
            for (n, v) in ns.into_iter().zip(vs) {
                m.insert(n.to_string(), v);
            }
            Value::Object(m)
        });
        let object = (
            prop::bool::weighted(0.85),
            props.clone(),
            prop::sample::subsequence(vec!["a", "b", "d"], 0..=2),
            prop_oneof![
                Just(None),
                Just(Some(json!(false))),
                inner.clone().prop_map(Some)
            ],
        )
            .prop_map(|(typed, p, req, ap)| {
                let mut m = Map::new();
                if typed {
                    m.insert("type".into(), json!("object"));
                }
                m.insert("properties".into(), p);
                if !req.is_empty() {
                    m.insert("required".into(), json!(req));
                }
                if let Some(ap) = ap {
                    m.insert("additionalProperties".into(), ap);
                }
                Value::Object(m)
            });
        let combinator = (
            prop::sample::select(vec!["anyOf", "oneOf", "allOf"]),
            prop::collection::vec(inner.clone(), 1..3),
            prop_oneof![Just(None), props.clone().prop_map(Some)],
        )
            .prop_map(|(k, branches, beside)| {
                let mut m = Map::new();
                if let Some(p) = beside {
                    m.insert("type".into(), json!("object"));
                    m.insert("properties".into(), p);
                }
                m.insert(k.into(), Value::Array(branches));
                Value::Object(m)
            });
        let reference = (
            prop::sample::select(vec!["#/$defs/d0", "#/$defs/d1"]),
            props,
            prop::sample::subsequence(vec!["a", "c"], 0..=2),
        )
            .prop_map(|(r, p, req)| json!({"$ref": r, "properties": p, "required": req}));
        prop_oneof![
            object,
            combinator,
            reference,
            inner.prop_map(|i| json!({"type": "array", "items": i})),
        ]
    })
}

/// A root with two definitions (which may refer to each other or to themselves).
fn rooted_schema() -> impl Strategy<Value = Value> {
    (schema_node(), schema_node(), schema_node()).prop_map(|(body, d0, d1)| {
        let mut root = match body {
            Value::Object(m) => m,
            other => {
                let mut m = Map::new();
                m.insert("allOf".into(), json!([other]));
                m
            }
        };
        root.insert("$defs".into(), json!({"d0": d0, "d1": d1}));
        Value::Object(root)
    })
}

/// Schemas shaped the way servers use combinators: `allOf` of object parts, `anyOf` of value
/// lists or of one branch, `$ref`s to object definitions with sibling properties, `required`
/// naming declared properties. Most can be kept exact, so the property is tested on them.
fn shaped_schema() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        prop::sample::select(vec!["string", "integer", "number", "boolean"])
            .prop_map(|t| json!({"type": t})),
        Just(json!({"type": "string", "enum": ["a", "x"]})),
        Just(json!({"type": "integer", "minimum": 1})),
        Just(json!({"anyOf": [{"const": "a"}, {"enum": ["b", "x"]}]})),
        Just(json!({"oneOf": [{"const": 1}, {"const": 2}]})),
        Just(json!({"anyOf": [{"type": "integer", "minimum": 2}]})),
        Just(json!({"allOf": [{"type": "number"}, {"type": "integer"}, {"maximum": 1.5}]})),
        Just(json!({"$ref": "#/$defs/d0"})),
        Just(json!({"$ref": "#/$defs/d1", "description": "see d1"})),
    ];
    let object = |field: BoxedStrategy<Value>| {
        (
            prop::collection::vec(field, 1..=3),
            prop::sample::subsequence(vec![0usize, 1, 2], 0..=2),
            prop_oneof![3 => Just(None), 1 => Just(Some(json!(false)))],
        )
            .prop_map(|(fields, req, ap)| {
                let names = ["a", "b", "c"];
                let mut props = Map::new();
                for (n, f) in names.iter().zip(&fields) {
                    props.insert(n.to_string(), f.clone());
                }
                let req: Vec<&str> = req
                    .into_iter()
                    .filter(|&i| i < fields.len())
                    .map(|i| names[i])
                    .collect();
                let mut m = Map::new();
                m.insert("type".into(), json!("object"));
                m.insert("properties".into(), Value::Object(props));
                if let Some(ap) = ap {
                    m.insert("additionalProperties".into(), ap);
                }
                m.insert("required".into(), json!(req));
                Value::Object(m)
            })
            .boxed()
    };
    let flat = object(scalar.clone().boxed());
    let part = flat.clone();
    let node = prop_oneof![
        2 => flat.clone(),
        1 => (part.clone(), part.clone()).prop_map(|(x, y)| json!({"type": "object", "allOf": [x, y]})),
        1 => (part.clone(), prop::sample::select(vec!["a", "b"])).prop_map(|(x, r)| {
            json!({"$ref": "#/$defs/d0", "properties": {r: {"type": "string"}, "c": x}, "required": [r], "description": "d0 and more"})
        }),
        1 => (part.clone(), part.clone()).prop_map(|(x, y)| json!({"type": "object", "properties": {"p": x, "q": {"type": "array", "items": y}}})),
    ];
    (node, object(scalar.boxed()), flat).prop_map(|(body, d0, d1)| {
        let mut root = body.as_object().cloned().unwrap_or_default();
        root.insert("$defs".into(), json!({"d0": d0, "d1": d1}));
        Value::Object(root)
    })
}

/// Argument values over a small universe, so that schemas and values meet often.
fn instance() -> impl Strategy<Value = Value> {
    let leaf = prop::sample::select(vec![
        json!(null),
        json!(true),
        json!(0),
        json!(1),
        json!(2),
        json!(-1),
        json!(1.5),
        json!("a"),
        json!("b"),
        json!("x"),
    ]);
    leaf.prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec(
                (prop::sample::select(vec!["a", "b", "c", "d"]), inner),
                0..4
            )
            .prop_map(|kv| {
                let mut m = Map::new();
                for (k, v) in kv {
                    m.insert(k.to_string(), v);
                }
                Value::Object(m)
            }),
        ]
    })
}

/// Where no change is reported, the input and its normal form accept the same instances.
fn assert_same_verdicts(s: &Value, instances: &[Value]) -> Result<(), TestCaseError> {
    let r = normalise_reported(s);
    prop_assert!(validate(&r.schema).is_empty(), "{} -> {}", s, r.schema);
    if !r.changes.is_empty() {
        return Ok(());
    }
    for i in instances {
        let (before, after) = (check(s, i), check(&r.schema, i));
        prop_assert_eq!(
            before.is_ok(),
            after.is_ok(),
            "no change reported, yet {} -> {} judges {} differently: {:?} vs {:?}",
            s,
            r.schema,
            i,
            before,
            after
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn an_unreported_normal_form_accepts_exactly_what_its_input_does(
        s in rooted_schema(),
        instances in prop::collection::vec(instance(), 48),
    ) {
        assert_same_verdicts(&s, &instances)?;
    }

    #[test]
    fn a_shaped_schema_keeps_what_it_accepts(
        s in shaped_schema(),
        instances in prop::collection::vec(instance(), 48),
    ) {
        assert_same_verdicts(&s, &instances)?;
    }

    #[test]
    fn a_reported_normal_form_is_still_a_fixed_point(s in rooted_schema()) {
        let once = normalise_reported(&s).schema;
        let twice = normalise_reported(&once);
        prop_assert_eq!(&twice.schema, &once);
        prop_assert!(twice.changes.is_empty(), "{:?}", twice.changes);
    }
}

/// Each way a strict form can be forced to differ is reported at its pointer; each way it can
/// be kept exact is kept so (both checked on instances that tell them apart).
#[test]
fn combinators_and_ref_siblings_keep_what_they_accept_or_say_where_not() {
    let exact = [
        // `allOf` of objects: the intersection.
        json!({"type": "object", "allOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"a": {"enum": ["x", "y"]}, "b": {"type": "integer", "minimum": 2}}, "required": ["b"]}
        ]}),
        // Properties beside a `$ref` apply with the target.
        json!({"type": "object", "$defs": {"p": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
               "properties": {"page": {"$ref": "#/$defs/p", "properties": {"n": {"type": "integer"}}, "required": ["n"]}},
               "required": ["page"]}),
        // `anyOf` of value lists: one enum.
        json!({"type": "object", "properties": {"m": {"anyOf": [{"const": "a"}, {"enum": ["b", "c"]}]}}}),
        // `allOf` of `anyOf`s that each have one branch.
        json!({"type": "object", "properties": {"m": {"allOf": [{"anyOf": [{"type": "integer"}]}, {"anyOf": [{"minimum": 3}]}]}}}),
    ];
    let probes = [
        json!({}),
        json!({"a": "x", "b": 2}),
        json!({"a": "z", "b": 2}),
        json!({"a": "x", "b": 1}),
        json!({"a": "x"}),
        json!({"page": {"id": "1", "n": 3}}),
        json!({"page": {"id": "1"}}),
        json!({"page": {"id": "1", "n": "3"}}),
        json!({"m": "a"}),
        json!({"m": "c"}),
        json!({"m": "d"}),
        json!({"m": 3}),
        json!({"m": 2}),
        json!({"m": 3.5}),
    ];
    // `["integer", "number"]` is `number`, in either order.
    for ts in [json!(["integer", "number"]), json!(["number", "integer"])] {
        let s = json!({"type": "object", "properties": {"m": {"type": ts}}});
        let r = normalise_reported(&s);
        assert!(r.changes.is_empty(), "{s}: {:?}", r.changes);
        assert_eq!(r.schema["properties"]["m"]["type"], "number");
    }
    for s in &exact {
        let r = normalise_reported(s);
        assert!(r.changes.is_empty(), "{s}: {:?}", r.changes);
        for p in &probes {
            assert_eq!(
                check(s, p).is_ok(),
                check(&r.schema, p).is_ok(),
                "{s} -> {} on {p}",
                r.schema
            );
        }
    }
    // Forced: each reports where and which way.
    for (s, pointer, effect) in [
        (
            json!({"type": "object", "properties": {"w": {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, {"type": "integer"}]}}}),
            "/properties/w/anyOf",
            Effect::Narrows,
        ),
        (
            json!({"type": "object", "properties": {"w": {"allOf": [{"anyOf": [{"type": "string"}, {"type": "integer"}]}]}}}),
            "/properties/w/allOf/0/anyOf",
            Effect::Narrows,
        ),
        (
            json!({"type": "object", "properties": {"w": {"type": ["string", "null"]}}}),
            "/properties/w/type",
            Effect::Narrows,
        ),
        (
            json!({"type": "object", "properties": {"w": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}),
            "/properties/w/oneOf",
            Effect::Changes,
        ),
        (
            json!({"type": "object", "properties": {"w": {"allOf": [{"type": "string"}, {"type": "integer"}]}}}),
            "/properties/w/type",
            Effect::Widens,
        ),
        (
            json!({"type": "object", "properties": {"t": {"$ref": "#"}}}),
            "/properties/t/$ref",
            Effect::Changes,
        ),
        (
            json!({"type": "object", "properties": {}, "required": ["ghost"]}),
            "/required",
            Effect::Narrows,
        ),
        (json!({"type": "string"}), "", Effect::Changes),
        // Found by a hostile review: a kept `not` whose `$ref` loses its target, and a type
        // list naming a type that does not exist.
        (
            json!({"type": "object", "$defs": {"s": {"type": "string"}},
                   "properties": {"a": {"type": "integer", "not": {"$ref": "#/$defs/s"}}}}),
            "/properties/a/not",
            Effect::Changes,
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": ["string", "any"]}}}),
            "/properties/a/type",
            Effect::Changes,
        ),
    ] {
        let r = normalise_reported(&s);
        assert!(
            r.changes
                .iter()
                .any(|c| c.pointer == pointer && c.effect == effect),
            "{s}: expected a change at {pointer} ({effect:?}), got {:?}",
            r.changes
        );
    }
}

/// The property above is not vacuous: a fair share of the generated schemas that use
/// combinators or `$ref` siblings normalise with no change reported, and those schemas and
/// the generated instances tell accepting from refusing on both sides.
#[test]
fn the_equivalence_property_meets_combinators_it_keeps_exact() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha),
    );
    let (mut with_combinators, mut exact, mut accepted, mut refused) = (0, 0, 0, 0);
    for _ in 0..400 {
        let s = shaped_schema().new_tree(&mut runner).unwrap().current();
        let text = s.to_string();
        let body = text
            .replace("\"$ref\":\"#/$defs/d0\"}", "")
            .replace("\"$ref\":\"#/$defs/d1\",\"description\":\"see d1\"}", "");
        if !["anyOf", "oneOf", "allOf", "$ref"]
            .iter()
            .any(|k| body.contains(k))
        {
            continue;
        }
        with_combinators += 1;
        let r = normalise_reported(&s);
        if r.changes.is_empty() {
            exact += 1;
            for _ in 0..16 {
                let i = instance().new_tree(&mut runner).unwrap().current();
                match check(&s, &i) {
                    Ok(()) => accepted += 1,
                    Err(_) => refused += 1,
                }
            }
        }
    }
    eprintln!("{exact} of {with_combinators} schemas with combinators kept exact; instances {accepted} accepted, {refused} refused");
    assert!(
        exact * 3 >= with_combinators,
        "{exact} of {with_combinators}"
    );
    assert!(
        accepted > 20 && refused > 20,
        "{accepted} accepted, {refused} refused"
    );
}

/// A root that is wrapped as `input` is cut where a second pass would cut it: normalising the
/// normal form again changes nothing (found by a hostile review).
#[test]
fn a_wrapped_deep_root_is_a_fixed_point() {
    let mut deep = json!({"type": "integer", "minimum": 3});
    for _ in 0..30 {
        deep = json!({"type": "object", "properties": {"x": deep}});
    }
    let s = json!({"type": "array", "items": deep});
    let once = normalise_reported(&s);
    let twice = normalise_reported(&once.schema);
    assert_eq!(twice.schema, once.schema);
    assert!(twice.changes.is_empty(), "{:?}", twice.changes);
}
