//! What Gemini refuses: keywords its OpenAPI-subset `parameters` lacks, names it does not
//! take, and misuse of `functionCallingConfig`.

use super::super::tools::ToolEntry;
use super::MAX_NAME;
use serde_json::Value;

/// The fields of Gemini's OpenAPI-subset `Schema`, the only keywords `parameters` takes: the
/// request is parsed as a protocol buffer, so any other member is an unknown field and the
/// whole request is refused (the 400 names it). From the Developer API's v1beta `Schema`
/// (`@google-ai/generativelanguage` 3.7.0 `ISchema`, read 2026-12-04 through the stored docs
/// corpus): anyOf, default, description, enum, example, format, items, maximum, maxItems,
/// maxLength, maxProperties, minimum, minItems, minLength, minProperties, nullable, pattern,
/// properties, propertyOrdering, required, title, type. Vertex AI's `Schema` adds
/// additionalProperties, defs and ref, which the Developer API does not have: public 400s
/// from it name `additionalProperties` an unknown field, at the top of `parameters` and in
/// `items` (nanbingxyz/5ire issue 42, 2025-01; openswarm-ai/openswarm issue 24; read
/// 2026-12-04 through the stored issues corpus; docs/notes/gemini.md). A protocol-buffer JSON parser takes each field by its
/// original snake_case name as well.
const SUBSET_FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "example",
    "default",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
    "anyOf",
    "min_items",
    "max_items",
    "min_length",
    "max_length",
    "min_properties",
    "max_properties",
    "property_ordering",
    "any_of",
];

/// What the OpenAPI-subset schema at `path` refuses, if anything: a keyword it lacks, a list of
/// types, an enum of something other than strings. Walks at most `budget` nodes.
pub fn subset_fault(schema: &Value, path: &str, budget: &mut usize) -> Option<String> {
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let o = schema.as_object()?;
    if let Some(k) = o.keys().find(|k| !SUBSET_FIELDS.contains(&k.as_str())) {
        return Some(format!(
            "{path}: `{k}` is not a field of Gemini's Schema (send JSON Schema in `parametersJsonSchema` instead)"
        ));
    }
    if o.get("items").is_some_and(Value::is_array) {
        return Some(format!(
            "{path}.items: a list of item schemas is not accepted (one schema for every item)"
        ));
    }
    if o.get("type").is_some_and(Value::is_array) {
        return Some(format!(
            "{path}.type: a list of types is not accepted (use `nullable` or `anyOf`)"
        ));
    }
    if let Some(e) = o.get("enum").and_then(Value::as_array) {
        if e.iter().any(|v| !v.is_string()) {
            return Some(format!("{path}.enum: enum values must be strings"));
        }
    }
    let children = o
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.iter().map(|(k, v)| (format!("properties.{k}"), v)))
        .chain(o.get("items").map(|v| ("items".to_string(), v)))
        .chain(
            o.get("anyOf")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, v)| (format!("anyOf[{i}]"), v)),
        );
    for (k, child) in children {
        if let Some(f) = subset_fault(child, &format!("{path}.{k}"), budget) {
            return Some(f);
        }
    }
    None
}

/// The names Gemini takes, in words (for [`valid_name`]'s refusals).
pub fn name_rule() -> String {
    format!("a letter or `_` first, then letters, digits, `_ . : -`, at most {MAX_NAME} characters")
}

/// Whether a function name is one Gemini takes: a letter or `_` first, then letters, digits,
/// `_ . : -`, at most [`MAX_NAME`] characters.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first
        && name.len() <= MAX_NAME
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
}

/// The modes `functionCallingConfig.mode` takes.
const MODES: &[&str] = &["MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"];

/// What Gemini refuses in a body beyond its shape and its declarations' limits, as the mock
/// answers it (the forward gateway lets Google say): a `functionCallingConfig.mode` it does not
/// have, `allowedFunctionNames` with a mode other than ANY, or naming a function no declaration
/// has (Gemini API reference, `FunctionCallingConfig`, read 2026-12-04: the names "should only
/// be set when the Mode is ANY", and they name declared functions); two declarations with one
/// name. The wording is toolcost's.
pub fn refusals(body: &Value, tools: &[ToolEntry]) -> Result<(), String> {
    let mut names = std::collections::HashSet::new();
    for (i, t) in tools.iter().enumerate() {
        if let Some(n) = t.as_ref().name() {
            if !names.insert(n) {
                return Err(format!(
                    "tools.functionDeclarations[{i}]: `{n}` is declared twice"
                ));
            }
        }
    }
    let Some(fc) = body.pointer("/toolConfig/functionCallingConfig") else {
        return Ok(());
    };
    let mode = fc.get("mode").and_then(Value::as_str).unwrap_or("AUTO");
    if !MODES.contains(&mode) {
        return Err(format!(
            "toolConfig.functionCallingConfig.mode: `{mode}` is not one of AUTO, ANY, NONE, VALIDATED"
        ));
    }
    if let Some(allowed) = fc.get("allowedFunctionNames") {
        let list = allowed
            .as_array()
            .ok_or("toolConfig.functionCallingConfig.allowedFunctionNames must be a list")?;
        if mode != "ANY" && !list.is_empty() {
            return Err(format!(
                "toolConfig.functionCallingConfig.allowedFunctionNames is taken only with mode ANY, not `{mode}`"
            ));
        }
        for n in list {
            let n = n.as_str().unwrap_or("");
            if !names.contains(n) {
                return Err(format!(
                    "toolConfig.functionCallingConfig.allowedFunctionNames: `{n}` is not a declared function"
                ));
            }
        }
    }
    Ok(())
}
