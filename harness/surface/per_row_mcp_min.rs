//! `per-row-mcp-min`: the per-row surface with every definition trimmed the way a careful
//! server author would trim it: the description cut to its first sentence, the input schema
//! kept to its structure (types, property names, `required`, enums, items, combinators) with
//! descriptions, titles, examples and defaults dropped. Set beside `per-row-mcp`, it shows what
//! trimming definitions saves against switching surface. Served at `/mcp/min`; calls take the
//! same arguments as the full definitions.

use super::per_row_mcp::{every_definition_in_context, DirectCalls};
use super::play::Player;
use super::{Built, Calls, Context, Endpoint, Listing, Surface};
use crate::catalogue::{Catalogue, Tool};
use crate::resolve::Method;
use serde_json::{Map, Value};

pub struct PerRowMcpMin;

/// Schema keywords that only document: dropped at every level.
const DOCUMENTING: [&str; 7] = [
    "description",
    "title",
    "examples",
    "example",
    "default",
    "$comment",
    "deprecated",
];

/// Keywords whose value is a map from names to schemas: the names are kept.
const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// `/mcp/min`: the trimmed projection.
pub const ENDPOINT: Endpoint = Endpoint {
    path: "/mcp/min",
    server_name: "toolcost-min",
    instructions: "One tool per capability row, each trimmed to its first sentence and its schema's structure. Tools change while you are connected; the server sends notifications/tools/list_changed.",
    calls: Calls::ByKey,
    tools: Listing::Derived(|projection| projection.iter().map(minimise).collect()),
};

impl Surface for PerRowMcpMin {
    fn name(&self) -> &'static str {
        "per-row-mcp-min"
    }
    fn about(&self) -> &'static str {
        "per-row MCP with each definition trimmed: first sentence, schema structure only"
    }
    fn in_all(&self) -> bool {
        true
    }
    fn lacks(&self, _format: crate::wire::Format) -> Option<String> {
        None
    }
    fn headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    fn colour(&self) -> [u8; 3] {
        [227, 119, 194]
    }
    fn build(&self, ctx: &Context) -> Built {
        let trimmed = Catalogue {
            source: ctx.catalogue.source.clone(),
            server: ctx.catalogue.server.clone(),
            rows: Vec::new(),
            tools: crate::sync::map_on_cores(&ctx.catalogue.tools, minimise),
        };
        let defs = Context {
            catalogue: &trimmed,
            ..*ctx
        }
        .catalogue_definitions(false);
        every_definition_in_context(ctx, defs)
    }
    fn endpoint(&self) -> Option<Endpoint> {
        Some(ENDPOINT)
    }
    fn calls_at(&self) -> Option<&'static str> {
        Some(ENDPOINT.path)
    }
    fn discovery(&self) -> Option<(Method, usize)> {
        None
    }
    fn player(&self, _ctx: &Context) -> Box<dyn Player> {
        Box::new(DirectCalls)
    }
}

/// A tool trimmed: name, first sentence of the description, structural schema. Other
/// top-level fields (title, annotations, output schema) are dropped too.
pub fn minimise(tool: &Tool) -> Tool {
    let full = tool.def_text();
    let description = first_sentence(full.description());
    let schema = serde_json::from_str(full.schema()).unwrap_or(Value::Null);
    let schema: std::sync::Arc<str> = crate::json::compact(&structure(&schema)).into();
    // The trimmed schema is compact JSON as written: the definitions' own text, and the
    // tool's when it is asked for.
    let text = crate::catalogue::DefText::from_compact(description, schema);
    Tool::composed(tool.name.clone(), text)
}

/// Up to and including the first sentence end (`.`, `!` or `?` before whitespace or the end),
/// or the first line; the whole text, trimmed, when it has neither.
pub fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let line = text.lines().next().unwrap_or("");
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?') {
            match chars.peek() {
                None => return line,
                Some((_, next)) if next.is_whitespace() => return &line[..i + c.len_utf8()],
                Some(_) => {}
            }
        }
    }
    line.trim_end()
}

/// A schema without its documenting keywords, at every depth.
pub fn structure(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                if DOCUMENTING.contains(&k.as_str()) {
                    continue;
                }
                let kept = if SCHEMA_MAPS.contains(&k.as_str()) {
                    match v {
                        Value::Object(named) => Value::Object(
                            named
                                .iter()
                                .map(|(name, s)| (name.clone(), structure(s)))
                                .collect(),
                        ),
                        other => other.clone(),
                    }
                } else if matches!(k.as_str(), "enum" | "const" | "required") {
                    v.clone()
                } else {
                    structure(v)
                };
                out.insert(k.clone(), kept);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(structure).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn first_sentence_stops_at_a_sentence_end() {
        assert_eq!(first_sentence("Send mail. Then wait."), "Send mail.");
        assert_eq!(
            first_sentence("Version 2.5 of it. More."),
            "Version 2.5 of it."
        );
        assert_eq!(first_sentence("No end here"), "No end here");
        assert_eq!(first_sentence("Line one\nline two. x"), "Line one");
        assert_eq!(first_sentence("Done."), "Done.");
    }

    #[test]
    fn structure_keeps_names_types_required_and_enums() {
        let s = json!({"type": "object", "title": "T", "description": "d",
            "properties": {"description": {"type": "string", "description": "the text", "default": "x"},
                           "mode": {"type": "string", "enum": ["a", "b"], "examples": ["a"]},
                           "tags": {"type": "array", "items": {"type": "string", "title": "tag"}}},
            "required": ["description"]});
        assert_eq!(
            structure(&s),
            json!({"type": "object",
                "properties": {"description": {"type": "string"},
                               "mode": {"type": "string", "enum": ["a", "b"]},
                               "tags": {"type": "array", "items": {"type": "string"}}},
                "required": ["description"]})
        );
    }
}
