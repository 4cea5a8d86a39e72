//! One MCP tool definition, held as its compact text and parsed only when asked.

use super::{empty_schema, required_of, DefText};
use crate::error::{Error, Result};
use crate::json;
use serde::Deserialize;
use serde_json::Value;

/// One MCP tool definition: its compact JSON text as sent, and the parsed value, made from the
/// text the first time it is asked for. A tool that is only counted, listed or served is never
/// parsed into a tree, which is most of a large catalogue's memory.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: String,
    /// Compact JSON text, byte for byte what the server sent (whitespace removed): a JSON
    /// object, checked by whatever made the tool ([`Tool::raw`]). A tool made from a row
    /// writes it from its name and shared text the first time it is asked for, so a tool that
    /// is only measured never holds it.
    raw: std::sync::OnceLock<String>,
    value: std::sync::OnceLock<Value>,
    /// The description and schema as every definition made from the tool carries them, made
    /// once ([`Tool::def_text`]).
    def: std::sync::OnceLock<std::sync::Arc<DefText>>,
    /// Whether the text is `{"name","description","inputSchema"}` of the name and shared text,
    /// exactly ([`Tool::composed`]).
    composed: bool,
}

impl PartialEq for Tool {
    fn eq(&self, other: &Tool) -> bool {
        // The value is made from the text, so equal texts are equal tools.
        self.name == other.name && self.raw() == other.raw()
    }
}

impl Tool {
    /// Build from a value (a projection): the text is its compact serialisation.
    pub fn from_value(value: Value) -> Result<Tool> {
        let raw = json::compact(&value);
        Self::with_raw(value, raw)
    }

    /// A tool as its name and compact text alone (the text is a JSON object with that name).
    #[cfg(test)]
    pub(crate) fn text(name: String, raw: String) -> Tool {
        Tool {
            name,
            raw: raw.into(),
            value: Default::default(),
            def: Default::default(),
            composed: false,
        }
    }

    /// [`Tool::text`] with its definition's shared text already made (it must be what
    /// [`Tool::def_text`] would make from `raw`).
    pub(crate) fn with_text(name: String, raw: String, text: DefText) -> Tool {
        Tool {
            name,
            raw: raw.into(),
            value: Default::default(),
            def: std::sync::Arc::new(text).into(),
            composed: false,
        }
    }

    /// The tool `{"name","description","inputSchema"}` of its name and shared text, its
    /// compact text written only when asked for ([`Tool::raw`]).
    pub fn composed(name: String, text: DefText) -> Tool {
        Tool {
            name,
            raw: Default::default(),
            value: Default::default(),
            def: std::sync::Arc::new(text).into(),
            composed: true,
        }
    }

    /// Whether `raw` is exactly the text [`Tool::composed`] writes for `name` and `text`.
    pub(crate) fn composes(name: &str, text: &DefText, raw: &str) -> bool {
        let name = json::compact(name);
        let description = json::compact(text.description());
        let pieces = [
            "{\"name\":",
            name.as_str(),
            ",\"description\":",
            description.as_str(),
            ",\"inputSchema\":",
            text.schema(),
            "}",
        ];
        let mut rest = raw;
        pieces.iter().all(|p| match rest.strip_prefix(p) {
            Some(r) => {
                rest = r;
                true
            }
            None => false,
        }) && rest.is_empty()
    }

    /// Whether the tool's text is `{"name","description","inputSchema"}` of its name and
    /// shared text, exactly (a projected row, or a captured tool of just those members).
    pub fn is_composed(&self) -> bool {
        self.composed
    }

    /// The compact JSON text: as the server sent it, or written from the name and shared text
    /// of a tool made from them.
    pub fn raw(&self) -> &str {
        self.raw.get_or_init(|| {
            let text = self
                .def
                .get()
                .expect("a tool without its text has its shared text");
            let mut out = String::with_capacity(self.composed_len(text));
            out.push_str("{\"name\":");
            out.push_str(&json::compact(&self.name));
            out.push_str(",\"description\":");
            out.push_str(&json::compact(text.description()));
            out.push_str(",\"inputSchema\":");
            out.push_str(text.schema());
            out.push('}');
            out
        })
    }

    /// Bytes of the text [`Tool::raw`] writes for a composed tool.
    fn composed_len(&self, text: &DefText) -> usize {
        "{\"name\":,\"description\":,\"inputSchema\":}".len()
            + json::string_len(&self.name)
            + text.description_json_len()
            + text.schema().len()
    }

    /// The description and schema as a definition made from this tool carries them, shared
    /// by every request, rendering and surface that shows it: made from the text the first
    /// time it is asked for ([`Tool::definition_parts`]), unless the tool was made with it.
    pub fn def_text(&self) -> std::sync::Arc<DefText> {
        self.def
            .get_or_init(|| {
                let (description, schema) = self.definition_parts();
                std::sync::Arc::new(DefText::new(&description, &schema))
            })
            .clone()
    }

    /// Build from a parsed definition and its compact text.
    fn with_raw(value: Value, raw: String) -> Result<Tool> {
        let name = value
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::input("a tool definition has no string `name`"))?
            .to_string();
        Ok(Tool {
            name,
            raw: raw.into(),
            value: value.into(),
            def: Default::default(),
            composed: false,
        })
    }

    /// The parsed definition.
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            // `raw` is compact JSON written or checked when the tool was made.
            serde_json::from_str(self.raw()).unwrap_or(Value::Null)
        })
    }

    /// The parsed definition without keeping it: the held value if there is one, else one
    /// parsed from the text for this caller alone. Rendering, weighing, linting and search
    /// read tools through this, so a large catalogue's tools do not keep trees.
    pub fn parsed(&self) -> std::borrow::Cow<'_, Value> {
        match self.value.get() {
            Some(v) => std::borrow::Cow::Borrowed(v),
            // `raw` is compact JSON written or checked when the tool was made.
            None => {
                std::borrow::Cow::Owned(serde_json::from_str(self.raw()).unwrap_or(Value::Null))
            }
        }
    }

    /// The description and input schema, for a definition made from them ([`Tool::parsed`]).
    /// From the text, only these two are built: every other member is skipped unbuilt. A text
    /// that names either twice (the tree keeps the last) is read through the whole tree. The
    /// text is a JSON object checked when the tool was made ([`Tool::raw`]): skipping reads
    /// the other members less strictly than parsing them would.
    pub fn definition_parts(&self) -> (String, Value) {
        /// A member that is there, whatever its value, `null` included.
        #[derive(Default)]
        struct Present(Option<Value>);
        impl<'de> Deserialize<'de> for Present {
            fn deserialize<D: serde::Deserializer<'de>>(
                d: D,
            ) -> std::result::Result<Self, D::Error> {
                Value::deserialize(d).map(|v| Present(Some(v)))
            }
        }
        #[derive(Deserialize)]
        struct Parts {
            #[serde(default)]
            description: Present,
            #[serde(default, rename = "inputSchema")]
            input_schema: Present,
        }
        // Serde would read a struct from an array too; a tool's text is an object.
        if self.value.get().is_none() && self.raw().starts_with('{') {
            if let Ok(p) = serde_json::from_str::<Parts>(self.raw()) {
                return (
                    match p.description.0 {
                        Some(Value::String(d)) => d,
                        _ => String::new(),
                    },
                    p.input_schema.0.unwrap_or_else(empty_schema),
                );
            }
        }
        match self.parsed().into_owned() {
            Value::Object(mut m) => (
                match m.swap_remove("description") {
                    Some(Value::String(d)) => d,
                    _ => String::new(),
                },
                m.swap_remove("inputSchema").unwrap_or_else(empty_schema),
            ),
            _ => (String::new(), empty_schema()),
        }
    }

    pub fn description(&self) -> &str {
        self.value()
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    pub fn input_schema(&self) -> Value {
        self.value()
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(empty_schema)
    }

    /// Names listed in the schema's `required`, in order.
    pub fn required(&self) -> Vec<String> {
        required_of(&self.input_schema())
    }

    /// Compact bytes of this definition (a composed tool's counted without writing it).
    pub fn bytes(&self) -> usize {
        match (self.raw.get(), self.def.get()) {
            (None, Some(text)) => self.composed_len(text),
            _ => self.raw().len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A definition's parts read from its text are the parts of its tree, whatever other
    /// members the text holds and whichever member it repeats.
    #[test]
    fn definition_parts_from_text_are_the_trees() {
        for raw in [
            r#"{"name":"a","description":"d","inputSchema":{"type":"object","properties":{}}}"#,
            r#"{"inputSchema":{"type":"object"},"title":"t","name":"a","annotations":{"x":[1,{"y":null}]},"description":"d"}"#,
            r#"{"name":"a","description":null,"inputSchema":null}"#,
            r#"{"name":"a","description":7}"#,
            r#"{"name":"a"}"#,
            r#"{"name":"a","description":"first","description":"last","inputSchema":{}}"#,
            r#"{"name":"a","inputSchema":{"type":"string"},"inputSchema":{"type":"object"}}"#,
            r#"{"name":"a","description":"\u00e9\n","outputSchema":{"type":"object"}}"#,
        ] {
            let text = Tool::text("a".into(), raw.into());
            let tree = Tool::from_value(serde_json::from_str(raw).unwrap()).unwrap();
            assert!(tree.value.get().is_some());
            assert_eq!(text.definition_parts(), tree.definition_parts(), "{raw}");
        }
        assert_eq!(
            Tool::text(
                "a".into(),
                r#"{"name":"a","description":"first","description":"last"}"#.into()
            )
            .definition_parts()
            .0,
            "last"
        );
        // Serde reads a struct from an array; a text that is not an object has no parts.
        assert_eq!(
            Tool::text("a".into(), r#"["d",{"type":"string"}]"#.into()).definition_parts(),
            (String::new(), empty_schema())
        );
    }
}
