//! The Gemini format's own rules, body reading and usage, without a gateway.

use super::*;

#[test]
fn snake_case_bodies_read_as_camel_case_and_groups_flatten() {
    let mut body = json!({
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "system_instruction": {"parts": [{"text": "be brief"}]},
        "tools": [{"function_declarations": [{"name": "a", "description": "d",
                    "parameters_json_schema": {"type": "object", "properties": {"snake_case_arg": {"type": "string"}}}}]},
                  {"functionDeclarations": [{"name": "b"}]},
                  {"google_search": {}}],
    });
    Gemini.check_shape(&mut body).unwrap();
    assert!(body.get("systemInstruction").is_some());
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 3);
    assert_eq!(tools[0]["name"], "a");
    // The user's property names keep their spelling.
    assert!(tools[0]["parametersJsonSchema"]["properties"]
        .get("snake_case_arg")
        .is_some());
    assert_eq!(tools[1]["name"], "b");
    assert!(tools[2].get("googleSearch").is_some());
}

#[test]
fn what_googles_parser_takes_is_read_as_the_list_it_stands_for() {
    let mut body = json!({
        "contents": {"role": "user", "parts": {"text": "hi"}},
        "systemInstruction": "be brief",
        "tool_config": {"function_calling_config": {"mode": "ANY", "allowed_function_names": ["a"]}},
    });
    Gemini.check_shape(&mut body).unwrap();
    assert_eq!(body["contents"][0]["parts"][0]["text"], "hi");
    assert_eq!(body["systemInstruction"]["parts"][0]["text"], "be brief");
    assert_eq!(
        body["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"][0],
        "a"
    );
    let mut nameless = json!({"contents": [{"parts": []}], "tools": [{"functionDeclarations": [{"description": "x"}]}]});
    assert!(Gemini
        .check_shape(&mut nameless)
        .unwrap_err()
        .contains("needs a `name`"));
    let mut legacy = json!({"contents": [{"role": "function", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]});
    assert!(Gemini.check_shape(&mut legacy).is_ok());
    // A call's arguments may hold a key named finishReason: not the end of the stream.
    assert!(!Gemini.stream_complete(r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"finishReason":"x"}}}]}}]}"#));
    assert!(Gemini.stream_complete(r#"{"candidates":[{"finishReason":"STOP"}]}"#));
    assert!(!Gemini.stream_complete(r#"{"candidates":[{"finishReason":null}]}"#));
    // A stream without alt=sse is one JSON array; its last usage holds the totals.
    let array = r#"[{"usageMetadata":{"promptTokenCount":3}},{"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}]"#;
    assert_eq!(Gemini.observed_usage(array, false).unwrap().output, 2);
}

#[test]
fn count_tokens_takes_a_whole_request() {
    let mut body = json!({"generateContentRequest": {"model": "models/m",
        "contents": [{"parts": [{"text": "x"}]}], "tools": [{"functionDeclarations": [{"name": "f"}]}]}});
    Gemini.check_shape(&mut body).unwrap();
    assert_eq!(body["tools"][0]["name"], "f");
    assert_eq!(body["contents"][0]["parts"][0]["text"], "x");
}

#[test]
fn bad_shapes_are_refused() {
    for (body, why) in [
        (json!({}), "no `contents`"),
        (json!({"contents": []}), "must not be empty"),
        (
            json!({"contents": [{"role": "assistant", "parts": []}]}),
            "not one of user, model",
        ),
        (
            json!({"contents": [{"role": "user"}]}),
            "needs a `parts` list",
        ),
        (
            json!({"contents": [{"parts": []}], "tools": "search"}),
            "list of Tool objects",
        ),
    ] {
        let mut b = body;
        let e = Gemini.check_shape(&mut b).unwrap_err();
        assert!(e.contains(why), "{e}");
    }
}

/// One Tool object where the list is due is read as a list of one, as the API reads it.
#[test]
fn a_tools_object_is_a_list_of_one() {
    let mut b = json!({"contents": [{"parts": [{"text": "hi"}]}],
        "tools": {"function_declarations": [{"name": "f", "parameters": {"type": "object"}}]}});
    Gemini.check_shape(&mut b).unwrap();
    assert_eq!(b["tools"].as_array().map(Vec::len), Some(1));
    assert_eq!(b["tools"][0]["name"], "f");
}

#[test]
fn routes_read_model_method_and_key() {
    let e = Gemini.endpoints()[0];
    let r = Gemini
        .route(
            e,
            "/v1beta/models/gemini-3.5-flash:streamGenerateContent",
            Some("alt=sse&key=SECRET"),
        )
        .unwrap();
    assert_eq!(r.model.as_deref(), Some("gemini-3.5-flash"));
    assert_eq!(r.stream, Some(true));
    assert!(!r.count_only);
    assert_eq!(
        r.path,
        "/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(r.query_key.as_deref(), Some("SECRET"));
    // A key's name spelled with escapes is still the key, and never stays in the path.
    let r = Gemini
        .route(
            e,
            "/v1beta/models/m:generateContent",
            Some("%6Bey=A%2Bb&alt=sse"),
        )
        .unwrap();
    assert_eq!(r.query_key.as_deref(), Some("A%2Bb"));
    assert_eq!(r.path, "/v1beta/models/m:generateContent?alt=sse");
    let c = Gemini
        .route(e, "/v1/models/gemini-3.5-flash:countTokens", None)
        .unwrap();
    assert!(c.count_only);
    for bad in [
        "/v1beta/models/gemini-3.5-flash",
        "/v1beta/models/m:embedContent",
        "/v1beta/models/:generateContent",
    ] {
        assert!(Gemini.route(e, bad, None).is_err(), "{bad}");
    }
}

#[test]
fn the_subset_schema_refusals_and_names() {
    let mut budget = 100;
    let ok = json!({"type": "OBJECT", "properties": {"a": {"type": "STRING", "enum": ["x"]}}});
    assert_eq!(subset_fault(&ok, "f", &mut budget), None);
    // Every field of the Schema, by either of its names, and a property named like a keyword.
    let all = json!({
        "type": "object", "title": "t", "description": "d", "nullable": false,
        "required": ["$ref"], "minProperties": 0, "max_properties": 3,
        "propertyOrdering": ["$ref"], "example": {"$ref": 1},
        "properties": {
            "$ref": {"type": "string", "format": "date-time", "pattern": "^a", "min_length": 1,
                     "maxLength": 9, "default": "a", "enum": ["a"]},
            "n": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 9}, {"type": "null"}]},
            "l": {"type": "array", "items": {"type": "string"}, "minItems": 0, "max_items": 2}
        }
    });
    assert_eq!(subset_fault(&all, "f", &mut budget), None);
    for (bad, why) in [
        (json!({"type": "object", "$defs": {}}), "`$defs`"),
        (
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
            "list of types",
        ),
        (
            json!({"type": "object", "properties": {"a": {"enum": [1, 2]}}}),
            "must be strings",
        ),
        (json!({"type": "array", "items": {"oneOf": []}}), "`oneOf`"),
        // Any member that is not a field of the Schema, not only the keywords known to be
        // refused.
        (
            json!({"type": "object", "properties": {"a": {"type": "string", "examples": ["x"]}}}),
            "`examples`",
        ),
        (json!({"type": "object", "x-origin": "mcp"}), "`x-origin`"),
        // Vertex AI's, not the Developer API's.
        (
            json!({"type": "object", "additionalProperties": false}),
            "`additionalProperties`",
        ),
        (
            json!({"type": "array", "uniqueItems": true}),
            "`uniqueItems`",
        ),
        (
            json!({"type": "array", "items": [{"type": "string"}]}),
            "list of item schemas",
        ),
    ] {
        let mut budget = 100;
        let f = subset_fault(&bad, "f", &mut budget).unwrap();
        assert!(f.contains(why), "{f}");
    }
    assert!(valid_name("mcp__server__tool.v2:x-y"));
    assert!(!valid_name("9lives"));
    assert!(!valid_name("has space"));
    assert!(!valid_name(&"a".repeat(129)));
}

#[test]
fn function_calling_config_is_checked() {
    let tools: Vec<ToolEntry> = [json!({"name": "a"}), json!({"name": "b"})]
        .into_iter()
        .map(ToolEntry::Json)
        .collect();
    let with = |fc: Value| json!({"toolConfig": {"functionCallingConfig": fc}});
    assert!(refusals(
        &with(json!({"mode": "ANY", "allowedFunctionNames": ["a"]})),
        &tools
    )
    .is_ok());
    assert!(refusals(&with(json!({"mode": "NONE"})), &tools).is_ok());
    for (fc, why) in [
        (json!({"mode": "SOMETIMES"}), "not one of"),
        (
            json!({"mode": "AUTO", "allowedFunctionNames": ["a"]}),
            "only with mode ANY",
        ),
        (
            json!({"mode": "ANY", "allowedFunctionNames": ["c"]}),
            "not a declared",
        ),
    ] {
        let e = refusals(&with(fc), &tools).unwrap_err();
        assert!(e.contains(why), "{e}");
    }
    let twice: Vec<ToolEntry> = [json!({"name": "a"}), json!({"name": "a"})]
        .into_iter()
        .map(ToolEntry::Json)
        .collect();
    assert!(refusals(&json!({}), &twice).unwrap_err().contains("twice"));
}

#[test]
fn usage_reads_cumulative_stream_and_thoughts() {
    let text = "data: {\"candidates\":[],\"usageMetadata\":{\"promptTokenCount\":10}}\n\n\
                data: {\"candidates\":[{\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":10,\"cachedContentTokenCount\":4,\"candidatesTokenCount\":3,\"thoughtsTokenCount\":2,\"toolUsePromptTokenCount\":5}}\n\n";
    let u = Gemini.observed_usage(text, true).unwrap();
    assert_eq!(
        u,
        ObservedUsage {
            input: 15,
            cached: 4,
            written: 0,
            output: 5,
            unreadable: false,
        }
    );
}
