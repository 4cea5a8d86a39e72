//! A request's `tools`, held as entries rather than as one JSON tree: a catalogue definition is
//! carried by reference to text it shares with every other request, rendering and surface that
//! shows the same tool ([`Definition`]), and is written out only where bytes must be (the wire,
//! a log of bodies). Anything else (a client's built-in tool, a provider's server tool, what a
//! client sent through the gateway) stays a JSON value.
//!
//! Readers see every entry through [`ToolRef`], which answers the questions billing, caching and
//! the provider limits ask (name, description, schema, deferred or not, namespace members, the
//! cache mark) without building a tree for a shared definition; [`ToolRef::value`] builds one
//! for the rare reader that needs the whole JSON.

use super::Format;
pub use crate::catalogue::DefText;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::io::Write;
use std::sync::Arc;

/// A catalogue definition in a request: its name as the client presents it, the text it shares
/// ([`DefText`]), whether it is deferred, and any members a surface or client adds after the
/// format's own (`allowed_callers`, a `cache_control` mark). Cloning it copies its name alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    format: Format,
    name: Box<str>,
    text: Arc<DefText>,
    defer: bool,
    extra: Option<Box<Map<String, Value>>>,
}

/// How a format writes a definition around its three parts: the bytes before the name, between
/// name and description, between description and schema, after the schema (before any added
/// member), and the close. The format's `function_definition` builds the same JSON as a tree;
/// a test holds the two to each other.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    pub open: &'static str,
    pub name_to_description: &'static str,
    pub description_to_schema: &'static str,
    pub after_schema: &'static str,
    pub close: &'static str,
    /// The `type` member the format's definitions carry, if any (`function`).
    pub kind: Option<&'static str>,
}

impl Definition {
    pub fn new(format: Format, name: &str, text: Arc<DefText>, defer: bool) -> Definition {
        Definition {
            format,
            name: name.into(),
            text,
            defer,
            extra: None,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn description(&self) -> &str {
        self.text.description()
    }

    /// The schema's compact JSON text.
    pub fn schema(&self) -> &str {
        self.text.schema()
    }

    /// The text it shares with every definition made from the same tool.
    pub fn shared_text(&self) -> &DefText {
        &self.text
    }

    pub fn format(&self) -> Format {
        self.format
    }

    pub fn deferred(&self) -> bool {
        self.defer
    }

    /// A member added after the format's own, if present.
    pub fn extra(&self, key: &str) -> Option<&Value> {
        self.extra.as_ref().and_then(|m| m.get(key))
    }

    /// Whether `key` is one of the members the format writes itself.
    fn own(&self, key: &str) -> bool {
        let frame = self.format.spec().definition_frame();
        key == "defer_loading"
            || (frame.kind.is_some() && key == "type")
            || match self.format {
                Format::AnthropicMessages => {
                    matches!(key, "name" | "description" | "input_schema")
                }
                Format::OpenaiChat => key == "function",
                Format::OpenaiResponses => {
                    matches!(key, "name" | "description" | "parameters" | "strict")
                }
                Format::Gemini => matches!(key, "name" | "description" | "parametersJsonSchema"),
            }
    }

    /// The definition as a JSON tree, exactly as the format builds it.
    pub fn value(&self) -> Value {
        let schema = serde_json::from_str(self.schema()).unwrap_or(Value::Null);
        let mut v = self.format.spec().function_definition(
            &self.name,
            self.description(),
            schema,
            self.defer,
        );
        if let (Some(extra), Value::Object(m)) = (&self.extra, &mut v) {
            for (k, x) in extra.iter() {
                m.insert(k.clone(), x.clone());
            }
        }
        v
    }

    /// Write the definition's compact JSON; `marked`: with its `cache_control` member, if any.
    fn write(&self, out: &mut impl Write, marked: bool) -> std::io::Result<()> {
        let frame = self.format.spec().definition_frame();
        out.write_all(frame.open.as_bytes())?;
        serde_json::to_writer(&mut *out, &*self.name)?;
        out.write_all(frame.name_to_description.as_bytes())?;
        serde_json::to_writer(&mut *out, self.description())?;
        out.write_all(frame.description_to_schema.as_bytes())?;
        out.write_all(self.schema().as_bytes())?;
        out.write_all(frame.after_schema.as_bytes())?;
        if self.defer {
            out.write_all(b",\"defer_loading\":true")?;
        }
        for (k, v) in self.extra.iter().flat_map(|m| m.iter()) {
            if !marked && k == "cache_control" {
                continue;
            }
            out.write_all(b",")?;
            serde_json::to_writer(&mut *out, k)?;
            out.write_all(b":")?;
            serde_json::to_writer(&mut *out, v)?;
        }
        out.write_all(frame.close.as_bytes())
    }

    /// Bytes of the compact JSON, counted without writing it.
    fn len(&self) -> usize {
        let frame = self.format.spec().definition_frame();
        let extra: usize = self
            .extra
            .iter()
            .flat_map(|m| m.iter())
            .map(|(k, v)| 2 + json_len(k) + crate::json::compact_len(v))
            .sum();
        frame.open.len()
            + json_len(&self.name)
            + frame.name_to_description.len()
            + self.text.description_json_len()
            + frame.description_to_schema.len()
            + self.schema().len()
            + frame.after_schema.len()
            + if self.defer { 21 } else { 0 }
            + extra
            + frame.close.len()
    }
}

/// Bytes of a string written as JSON.
fn json_len(s: &str) -> usize {
    crate::json::string_len(s)
}

/// A Responses `namespace` of shared definitions: `{"type":"namespace","name","description",
/// "tools":[...]}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Namespace {
    pub name: String,
    pub description: String,
    pub members: Vec<Definition>,
}

impl Namespace {
    fn value(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), "namespace".into());
        m.insert("name".into(), self.name.clone().into());
        m.insert("description".into(), self.description.clone().into());
        m.insert(
            "tools".into(),
            Value::Array(self.members.iter().map(Definition::value).collect()),
        );
        Value::Object(m)
    }

    fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(b"{\"type\":\"namespace\",\"name\":")?;
        serde_json::to_writer(&mut *out, &self.name)?;
        out.write_all(b",\"description\":")?;
        serde_json::to_writer(&mut *out, &self.description)?;
        out.write_all(b",\"tools\":[")?;
        for (i, d) in self.members.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            d.write(out, true)?;
        }
        out.write_all(b"]}")
    }

    fn len(&self) -> usize {
        let members: usize = self.members.iter().map(Definition::len).sum();
        // {"type":"namespace","name": ,"description": ,"tools":[ ]}
        27 + json_len(&self.name)
            + 15
            + json_len(&self.description)
            + 10
            + members
            + self.members.len().saturating_sub(1)
            + 2
    }
}

/// One entry of a request's `tools` array.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolEntry {
    /// Any tool as JSON: a client's built-in, a provider's server tool, what a client sent.
    Json(Value),
    /// A catalogue definition carried by reference.
    Shared(Definition),
    /// A Responses namespace of catalogue definitions.
    Namespace(Namespace),
}

impl ToolEntry {
    pub fn as_ref(&self) -> ToolRef<'_> {
        match self {
            ToolEntry::Json(v) => ToolRef::Json(v),
            ToolEntry::Shared(d) => ToolRef::Shared(d),
            ToolEntry::Namespace(n) => ToolRef::Namespace(n),
        }
    }

    /// Set a member of the entry's object (a mark, `allowed_callers`): added after the format's
    /// own members of a shared definition; an entry that is not an object is left as it is.
    pub fn set(&mut self, key: &str, value: Value) {
        match self {
            ToolEntry::Json(Value::Object(m)) => {
                m.insert(key.into(), value);
            }
            ToolEntry::Json(_) => {}
            ToolEntry::Shared(d) if !d.own(key) => {
                d.extra
                    .get_or_insert_with(Default::default)
                    .insert(key.into(), value);
            }
            ToolEntry::Shared(_) | ToolEntry::Namespace(_) => {
                // A member the shape writes itself: the entry becomes JSON, changed as asked.
                *self = ToolEntry::Json(self.as_ref().value().into_owned());
                self.set(key, value);
            }
        }
    }
}

impl From<Value> for ToolEntry {
    fn from(v: Value) -> ToolEntry {
        ToolEntry::Json(v)
    }
}

impl From<Definition> for ToolEntry {
    fn from(d: Definition) -> ToolEntry {
        ToolEntry::Shared(d)
    }
}

/// The tools a received body carries, as JSON trees: its entries' (`tools`: where the body has a
/// `tools` array), or the items of the body's own `tools` array, if any.
pub fn tool_values<'a>(body: &'a Value, tools: Option<&'a [ToolEntry]>) -> Vec<Cow<'a, Value>> {
    match tools {
        Some(entries) => entries.iter().map(|t| t.as_ref().value()).collect(),
        None => body
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(Cow::Borrowed)
            .collect(),
    }
}

/// A definition's schema: a JSON tree, or a shared definition's compact text.
#[derive(Debug, Clone, Copy)]
pub enum Schema<'a> {
    Value(&'a Value),
    Text(&'a str),
}

impl<'a> Schema<'a> {
    /// The compact JSON text.
    pub fn text(self) -> Cow<'a, str> {
        match self {
            Schema::Value(v) => crate::json::compact(v).into(),
            Schema::Text(t) => t.into(),
        }
    }

    /// The parsed schema.
    pub fn value(self) -> Cow<'a, Value> {
        match self {
            Schema::Value(v) => Cow::Borrowed(v),
            Schema::Text(t) => Cow::Owned(serde_json::from_str(t).unwrap_or(Value::Null)),
        }
    }
}

/// A function definition's name, description and schema.
#[derive(Debug, Clone, Copy)]
pub struct Parts<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub schema: Schema<'a>,
}

/// A tool entry, or a namespace member, as readers see it.
#[derive(Debug, Clone, Copy)]
pub enum ToolRef<'a> {
    Json(&'a Value),
    Shared(&'a Definition),
    Namespace(&'a Namespace),
}

impl<'a> ToolRef<'a> {
    /// Name, description and schema of a function definition in any format; `None` for a server
    /// tool or a namespace.
    pub fn parts(self) -> Option<Parts<'a>> {
        match self {
            ToolRef::Json(v) => {
                super::definition_parts(v).map(|(name, description, schema)| Parts {
                    name,
                    description,
                    schema: Schema::Value(schema),
                })
            }
            ToolRef::Shared(d) => Some(Parts {
                name: d.name(),
                description: d.description(),
                schema: Schema::Text(d.schema()),
            }),
            ToolRef::Namespace(_) => None,
        }
    }

    /// The entry's `name`, whatever it is (a function's, a server tool's, a namespace's).
    pub fn name(self) -> Option<&'a str> {
        match self {
            ToolRef::Json(v) => v
                .get("name")
                .or_else(|| v.pointer("/function/name"))
                .and_then(Value::as_str),
            ToolRef::Shared(d) => Some(d.name()),
            ToolRef::Namespace(n) => Some(&n.name),
        }
    }

    /// The entry's `type` member, if it has one.
    pub fn kind(self) -> Option<&'a str> {
        match self {
            ToolRef::Json(v) => v.get("type").and_then(Value::as_str),
            ToolRef::Shared(d) => d.format.spec().definition_frame().kind,
            ToolRef::Namespace(_) => Some("namespace"),
        }
    }

    /// Whether it is marked for deferred loading.
    pub fn is_deferred(self) -> bool {
        match self {
            ToolRef::Json(v) => super::is_deferred(v),
            ToolRef::Shared(d) => d.defer,
            ToolRef::Namespace(_) => false,
        }
    }

    /// Whether it is a Responses namespace.
    pub fn is_namespace(self) -> bool {
        match self {
            ToolRef::Json(v) => super::is_namespace(v),
            ToolRef::Shared(_) => false,
            ToolRef::Namespace(_) => true,
        }
    }

    /// A namespace's members (empty for anything else).
    pub fn members(self) -> Vec<ToolRef<'a>> {
        match self {
            ToolRef::Json(v) => super::namespace_members(v)
                .iter()
                .map(ToolRef::Json)
                .collect(),
            ToolRef::Shared(_) => Vec::new(),
            ToolRef::Namespace(n) => n.members.iter().map(ToolRef::Shared).collect(),
        }
    }

    /// The `cache_control` mark on it, if any.
    pub fn mark(self) -> Option<&'a Value> {
        match self {
            ToolRef::Json(v) => v.get("cache_control"),
            ToolRef::Shared(d) => d.extra("cache_control"),
            ToolRef::Namespace(_) => None,
        }
    }

    /// A member of the entry as JSON (built for a shared definition's own members).
    pub fn get(self, key: &str) -> Option<Cow<'a, Value>> {
        match self {
            ToolRef::Json(v) => v.get(key).map(Cow::Borrowed),
            ToolRef::Shared(d) => match d.extra(key) {
                Some(x) => Some(Cow::Borrowed(x)),
                None if d.own(key) => match self.value() {
                    Cow::Owned(Value::Object(mut m)) => m.swap_remove(key).map(Cow::Owned),
                    _ => None,
                },
                None => None,
            },
            // Its own members are answered from the struct; only its tools are built.
            ToolRef::Namespace(n) => match key {
                "type" => Some(Cow::Owned(Value::from("namespace"))),
                "name" => Some(Cow::Owned(Value::from(n.name.as_str()))),
                "description" => Some(Cow::Owned(Value::from(n.description.as_str()))),
                "tools" => match self.value() {
                    Cow::Owned(Value::Object(mut m)) => m.swap_remove(key).map(Cow::Owned),
                    _ => None,
                },
                _ => None,
            },
        }
    }

    /// The entry as a JSON tree: borrowed where it is one, built where it is shared.
    pub fn value(self) -> Cow<'a, Value> {
        match self {
            ToolRef::Json(v) => Cow::Borrowed(v),
            ToolRef::Shared(d) => Cow::Owned(d.value()),
            ToolRef::Namespace(n) => Cow::Owned(n.value()),
        }
    }

    /// Write the compact JSON; `marked` false leaves out the object's own `cache_control`
    /// member (a mark is not part of the prompt), keeping its other members in order.
    pub fn write(self, out: &mut impl Write, marked: bool) -> std::io::Result<()> {
        match self {
            ToolRef::Json(Value::Object(m)) if !marked && m.contains_key("cache_control") => {
                out.write_all(b"{")?;
                let kept = m.iter().filter(|(k, _)| *k != "cache_control");
                for (i, (k, v)) in kept.enumerate() {
                    if i > 0 {
                        out.write_all(b",")?;
                    }
                    serde_json::to_writer(&mut *out, k)?;
                    out.write_all(b":")?;
                    serde_json::to_writer(&mut *out, v)?;
                }
                out.write_all(b"}")
            }
            ToolRef::Json(v) => Ok(serde_json::to_writer(out, v)?),
            ToolRef::Shared(d) => d.write(out, marked),
            ToolRef::Namespace(n) => n.write(out),
        }
    }

    /// The compact JSON text.
    pub fn text(self) -> String {
        let mut out = Vec::new();
        self.write(&mut out, true).expect("writing to memory");
        String::from_utf8(out).expect("JSON text is UTF-8")
    }

    /// Bytes of the compact JSON, counted without writing it.
    pub fn compact_len(self) -> usize {
        match self {
            ToolRef::Json(v) => crate::json::compact_len(v),
            ToolRef::Shared(d) => d.len(),
            ToolRef::Namespace(n) => n.len(),
        }
    }
}

/// A request's `tools` array: shared between clones of a request, cut without copying (a prompt
/// cache prefix that ends among the tools), copied only when changed.
#[derive(Debug, Clone, Default)]
pub struct Tools {
    entries: Arc<Vec<ToolEntry>>,
    /// Where the list is cut, if it is (`None`: every entry).
    cut: Option<usize>,
}

impl PartialEq for Tools {
    fn eq(&self, other: &Tools) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Tools {
    pub fn new(entries: Vec<ToolEntry>) -> Tools {
        Tools {
            entries: Arc::new(entries),
            cut: None,
        }
    }

    pub fn as_slice(&self) -> &[ToolEntry] {
        match self.cut {
            Some(n) => &self.entries[..n.min(self.entries.len())],
            None => &self.entries,
        }
    }

    /// The entries, to change: copied first if another request shares them or the list is cut.
    pub fn make_mut(&mut self) -> &mut Vec<ToolEntry> {
        if let Some(n) = self.cut.take() {
            let kept = self.entries[..n.min(self.entries.len())].to_vec();
            self.entries = Arc::new(kept);
        }
        Arc::make_mut(&mut self.entries)
    }

    /// The first `n` entries.
    pub fn truncate(&mut self, n: usize) {
        self.cut = Some(self.len().min(n));
    }

    pub fn iter(&self) -> impl Iterator<Item = ToolRef<'_>> {
        self.as_slice().iter().map(ToolEntry::as_ref)
    }

    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What Anthropic Messages (and its `count_tokens`) and OpenAI Chat Completions refuse in
/// `tools`, as the mock answers it: a `tools` member that is not a list, an entry that is not
/// an object or has no name (a Chat tool's is `function.name`), and two tools with one name
/// (both APIs require unique names; the wording is toolcost's). `placed`: the body's `tools`
/// was a list, read into `entries`.
pub fn check_listed(body: &Value, entries: &[ToolEntry], placed: bool) -> Result<(), String> {
    if !placed {
        return match body.get("tools") {
            None | Some(Value::Null) => Ok(()),
            Some(_) => Err("`tools` must be a list of tool objects".into()),
        };
    }
    let mut names = std::collections::HashSet::new();
    for (i, e) in entries.iter().enumerate() {
        let t = e.as_ref();
        if let ToolRef::Json(v) = t {
            if !v.is_object() {
                return Err(format!("tools.{i}: a tool must be an object"));
            }
        }
        let name = t
            .name()
            .filter(|n| !n.is_empty())
            .ok_or(format!("tools.{i}: a tool needs a non-empty `name`"))?;
        if !names.insert(name) {
            return Err(format!(
                "tools.{i}: tool names must be unique; `{name}` is named twice"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A shared definition writes, measures and builds exactly what the format's
    /// `function_definition` builds, with escapes, deferral and added members, in every format;
    /// a namespace of them likewise.
    #[test]
    fn shared_definitions_are_the_formats_own_bytes() {
        let schemas = [
            json!({"type": "object", "properties": {}}),
            json!({"type": "object", "properties": {"q": {"type": "string", "enum": ["a\"b", "\u{1f600}"]}, "n": {"type": "number", "minimum": 1.5}}, "required": ["q"]}),
            json!({}),
        ];
        let names = ["plain", "mcp__srv__with\"quote", "tab\there", "é"];
        let descriptions = [
            "",
            "Reads the ledger.",
            "line\nbreak \\ and \u{7}",
            "ünï \u{2028}",
        ];
        for format in Format::ALL {
            for schema in &schemas {
                for (name, description) in names.iter().zip(descriptions) {
                    let text = Arc::new(DefText::new(description, schema));
                    for defer in [false, true] {
                        let tree = format.spec().function_definition(
                            name,
                            description,
                            schema.clone(),
                            defer,
                        );
                        let mut entry =
                            ToolEntry::Shared(Definition::new(format, name, text.clone(), defer));
                        let check = |entry: &ToolEntry, tree: &Value| {
                            let r = entry.as_ref();
                            assert_eq!(r.text(), crate::json::compact(tree), "{format:?}");
                            assert_eq!(r.compact_len(), r.text().len());
                            assert_eq!(r.value().as_ref(), tree);
                            let parts = r.parts().expect("a function");
                            assert_eq!(parts.name, *name);
                            assert_eq!(parts.description, description);
                            assert_eq!(parts.schema.text(), crate::json::compact(schema));
                            assert_eq!(r.is_deferred(), defer);
                        };
                        check(&entry, &tree);
                        let mut tree = tree;
                        for (k, v) in [
                            ("allowed_callers", json!(["code_execution_20260120"])),
                            ("cache_control", json!({"type": "ephemeral"})),
                        ] {
                            entry.set(k, v.clone());
                            tree[k] = v;
                            check(&entry, &tree);
                            assert!(matches!(entry, ToolEntry::Shared(_)));
                        }
                        // A member the shape writes itself turns the entry into JSON.
                        entry.set("defer_loading", json!(false));
                        tree["defer_loading"] = json!(false);
                        assert!(matches!(entry, ToolEntry::Json(_)));
                        assert_eq!(entry.as_ref().text(), crate::json::compact(&tree));
                    }
                }
            }
            let text = Arc::new(DefText::new("d", &schemas[1]));
            let ns = Namespace {
                name: "crm \"x\"".into(),
                description: "Customers.".into(),
                members: vec![
                    Definition::new(format, "a", text.clone(), true),
                    Definition::new(format, "b", text.clone(), false),
                ],
            };
            let r = ToolEntry::Namespace(ns.clone());
            assert_eq!(r.as_ref().compact_len(), r.as_ref().text().len());
            assert_eq!(r.as_ref().text(), crate::json::compact(&ns.value()));
            assert_eq!(r.as_ref().members().len(), 2);
            let empty = ToolEntry::Namespace(Namespace {
                members: Vec::new(),
                ..ns
            });
            assert_eq!(empty.as_ref().compact_len(), empty.as_ref().text().len());
        }
    }

    /// A cut list shares its entries until it is changed; a change copies what the cut keeps,
    /// and leaves the request it was cut from as it was.
    #[test]
    fn a_cut_list_is_copied_when_changed() {
        let entries =
            |v: &[i64]| -> Vec<ToolEntry> { v.iter().map(|i| ToolEntry::Json(json!(i))).collect() };
        let mut t = Tools::new(entries(&[0, 1, 2, 3, 4]));
        let whole = t.clone();
        t.truncate(2);
        assert_eq!(t.len(), 2);
        t.truncate(9);
        assert_eq!(t.len(), 2);
        t.make_mut().push(ToolEntry::Json(json!(9)));
        assert_eq!(t.as_slice(), entries(&[0, 1, 9]).as_slice());
        assert_eq!(whole.as_slice(), entries(&[0, 1, 2, 3, 4]).as_slice());
        let mut e = Tools::default();
        *e.make_mut() = entries(&[1]);
        assert_eq!(e.len(), 1);
    }
}
