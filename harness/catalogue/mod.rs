//! The catalogue: rows (one capability each), their per-row MCP projection, and loaders.
//!
//! A [`Row`] is the directory-row contract of DESIGN.md. A [`Tool`] is one MCP tool definition
//! with its compact JSON text kept verbatim, so byte counts are exact for captures and for
//! projections alike.

pub mod capture;
pub mod directory;
pub mod fixed;
pub mod generate;
pub mod jsonl;
pub mod profile;
mod shared;
mod split;
pub mod stats;
mod tool;
pub(crate) mod words;

use crate::error::{Error, Result};
use crate::json;
use crate::schema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::path::Path;

pub use shared::DefText;
pub use tool::Tool;

/// Which runner executes a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Runner {
    Fn,
    Http,
    Flow,
    Agent,
}

impl Runner {
    pub const ALL: [Runner; 4] = [Runner::Fn, Runner::Http, Runner::Flow, Runner::Agent];

    pub fn as_str(self) -> &'static str {
        match self {
            Runner::Fn => "fn",
            Runner::Http => "http",
            Runner::Flow => "flow",
            Runner::Agent => "agent",
        }
    }
}

/// One capability: the directory-row contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// Primary key and invocation name.
    pub key: String,
    /// The runner that executes it.
    #[serde(rename = "type")]
    pub runner: Runner,
    /// Where the work happens (URL template, function name, flow keys).
    #[serde(default)]
    pub target: Option<String>,
    /// The NAME of the env var holding the credential, never the credential.
    #[serde(default)]
    pub auth: Option<String>,
    /// Docstring lines (`# WHAT:`, `# WHEN_TO_USE:`, `# ARGS:`, `# EX:`) then the payload.
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub category: Option<String>,
    /// Lower ranks sort first.
    #[serde(default = "default_rank")]
    pub planner_rank: i64,
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default = "yes")]
    pub planner_visible: bool,
    /// Optional JSON Schema for the arguments.
    #[serde(default)]
    pub input_schema: Option<RowSchema>,
}

/// A row's input schema, kept as its compact JSON text. A parsed tree costs several times its
/// text, and rows are held by the hundred thousand (the server, a measure, a sweep), so each
/// reader parses what it needs. It reads and writes as the JSON value it is.
#[derive(Debug, Clone, PartialEq)]
pub struct RowSchema {
    /// Shared with the definitions made from the row ([`DefText`]).
    text: std::sync::Arc<str>,
    /// Whether the schema is in the normaliser's normal form ([`schema::is_normal`]), decided
    /// from the tree it was made from, so a definition made from the row can take the text as
    /// it is without parsing it again to ask.
    normal: bool,
}

impl RowSchema {
    /// The schema of a value (its compact text).
    pub fn new(value: &Value) -> RowSchema {
        RowSchema {
            text: json::compact(value).into(),
            normal: schema::is_normal(value),
        }
    }

    /// The compact JSON text, shared.
    pub(crate) fn shared_text(&self) -> std::sync::Arc<str> {
        self.text.clone()
    }

    /// The compact JSON text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The parsed schema. The text was written from a value, so it parses, unless that value
    /// was built in code deeper than JSON is read here (128 levels; every schema read from
    /// outside is within that): such a schema reads as `null`.
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }
}

impl From<Value> for RowSchema {
    fn from(value: Value) -> RowSchema {
        RowSchema::new(&value)
    }
}

impl Serialize for RowSchema {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        serde_json::from_str::<&serde_json::value::RawValue>(&self.text)
            .map_err(serde::ser::Error::custom)?
            .serialize(s)
    }
}

impl<'de> Deserialize<'de> for RowSchema {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<RowSchema, D::Error> {
        Value::deserialize(d).map(|v| RowSchema::new(&v))
    }
}

fn default_rank() -> i64 {
    100
}
fn yes() -> bool {
    true
}

impl Row {
    /// The text of one docstring line (`WHAT`, `WHEN_TO_USE`, `ARGS`, `EX`), if present.
    pub fn doc(&self, field: &str) -> Option<&str> {
        let prefix = format!("# {field}:");
        self.content
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()).map(str::trim))
    }

    /// The first docstring line's text, or the key when the row has none.
    pub fn summary(&self) -> &str {
        self.content
            .lines()
            .find_map(|l| {
                l.strip_prefix('#')
                    .and_then(|r| r.split_once(':'))
                    .map(|(_, t)| t.trim())
            })
            .unwrap_or(&self.key)
    }

    /// Enabled and visible to planners: the rows the per-row MCP surface projects.
    pub fn projected(&self) -> bool {
        self.enabled && self.planner_visible
    }

    /// The MCP tool this row projects to: name = key; description = first doc line plus
    /// `[type · category]`; inputSchema = the row's schema after normalisation.
    pub fn to_tool(&self) -> Tool {
        Tool::from_value(self.tool_value()).expect("a projected row is a valid tool")
    }

    /// [`Row::to_tool`]'s parsed definition alone.
    pub fn tool_value(&self) -> Value {
        self.tool_value_with(self.input_schema.as_ref().map(RowSchema::value).as_ref())
    }

    /// The definition this row projects to with `schema` as its schema.
    pub(crate) fn tool_value_with(&self, schema: Option<&Value>) -> Value {
        let (description, schema) = self.tool_parts_with(schema);
        let mut obj = Map::new();
        obj.insert("name".into(), Value::String(self.key.clone()));
        obj.insert("description".into(), Value::String(description));
        obj.insert("inputSchema".into(), schema);
        Value::Object(obj)
    }

    /// [`Row::to_tool`] as its text alone, the same bytes: its parsed value is made from the
    /// text if it is ever asked for. For a holder that writes tools as their bytes (the
    /// server), which would otherwise make every definition's tree only to free it.
    pub fn to_tool_text(&self) -> Tool {
        let schema: std::sync::Arc<str> = match &self.input_schema {
            // A schema already in normal form is its own text: the row keeps it compact.
            Some(s) if s.normal => s.shared_text(),
            Some(s) => json::compact(&schema::normalise(&s.value())).into(),
            None => json::compact(&empty_schema()).into(),
        };
        let description = self.projected_description();
        // The schema text is compact JSON as written, so it is the definition's own; the
        // tool's text is written from the same parts when it is asked for.
        Tool::composed(
            self.key.clone(),
            DefText::from_compact(&description, schema),
        )
    }

    /// Length of [`json::python_spaced`] text of the definition this row projects to with
    /// `schema` as its schema. The schema is weighed where it lies (normalised first if it is
    /// not in normal form), not copied into a definition: the definition's text is its head
    /// with the schema last.
    pub(crate) fn projected_spaced_len(&self, schema: &Value) -> usize {
        let mut obj = Map::new();
        obj.insert("name".into(), Value::String(self.key.clone()));
        obj.insert("description".into(), self.projected_description().into());
        obj.insert("inputSchema".into(), Value::Object(Map::new()));
        // `{}` stands where the schema goes: two bytes out, the schema's own in.
        json::python_spaced_len(&Value::Object(obj)) - 2
            + json::python_spaced_len(&schema::normalised(schema))
    }

    fn tool_parts_with(&self, schema: Option<&Value>) -> (String, Value) {
        (self.projected_description(), self.projected_schema(schema))
    }

    /// The projected tool's description: the first doc line, then `[type · category]`.
    fn projected_description(&self) -> String {
        let category = self.category.as_deref().unwrap_or("general");
        format!(
            "{} [{} · {}]",
            self.summary(),
            self.runner.as_str(),
            category
        )
    }

    /// The projected tool's schema: the row's, normalised, or an empty object schema.
    fn projected_schema(&self, schema: Option<&Value>) -> Value {
        schema.map_or_else(empty_schema, schema::normalise)
    }
}

/// Names listed in a schema's `required`, in order.
pub fn required_of(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The schema of a tool that declares none.
pub fn empty_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

/// A catalogue: its rows, and the per-row MCP projection of the enabled, visible ones.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    /// Where it came from, for reports (`generated seed-2026-07 N=856 seed=1`, a path).
    pub source: String,
    /// The MCP server name clients see (used for `mcp__<server>__<tool>` renaming).
    pub server: String,
    pub rows: Vec<Row>,
    pub tools: Vec<Tool>,
}

impl Catalogue {
    /// Project rows: tools in `planner_rank`, then key order, as the reference server lists them.
    pub fn from_rows(source: impl Into<String>, rows: Vec<Row>) -> Catalogue {
        let tools = Catalogue::project(&rows);
        Catalogue::with_projection(source, rows, tools)
    }

    /// The per-row projection of `rows`: tools in `planner_rank`, then key order, each as its
    /// text alone ([`Row::to_tool_text`]), made on the machine's cores.
    pub fn project(rows: &[Row]) -> Vec<Tool> {
        crate::sync::map_on_cores(&Self::projected(rows), |r| r.to_tool_text())
    }

    /// The rows the projection shows, in its order.
    fn projected(rows: &[Row]) -> Vec<&Row> {
        let mut visible: Vec<&Row> = rows.iter().filter(|r| r.projected()).collect();
        visible.sort_by(|a, b| {
            a.planner_rank
                .cmp(&b.planner_rank)
                .then_with(|| a.key.cmp(&b.key))
        });
        visible
    }

    /// Rows and the projection [`Catalogue::project`] made of them.
    pub fn with_projection(
        source: impl Into<String>,
        rows: Vec<Row>,
        tools: Vec<Tool>,
    ) -> Catalogue {
        Catalogue {
            source: source.into(),
            server: "toolcost".into(),
            rows,
            tools,
        }
    }

    /// Load a catalogue file: JSONL rows, a SQLite database with a `directory` table, or a
    /// `tools/list` capture (JSON). The extension decides (`.jsonl`, `.json`); otherwise the
    /// content does (a SQLite header, or a first line that is a row object).
    pub fn load(path: &Path) -> Result<Catalogue> {
        Ok(match Loaded::read(path)? {
            Loaded::Rows(label, rows) => Catalogue::from_rows(label, rows),
            Loaded::Capture(cat) => cat,
        })
    }

    /// The rows of a catalogue file ([`Catalogue::load`]), without projecting them: for callers
    /// that build their own projection (the server's snapshot).
    pub fn load_rows(path: &Path) -> Result<Vec<Row>> {
        Ok(match Loaded::read(path)? {
            Loaded::Rows(_, rows) => rows,
            Loaded::Capture(cat) => cat.rows,
        })
    }

    /// Total compact bytes of the projection's definitions.
    pub fn definition_bytes(&self) -> usize {
        self.tools.iter().map(Tool::bytes).sum()
    }
}

/// What a catalogue file holds.
enum Loaded {
    /// Directory rows (JSONL or SQLite), with the file's label.
    Rows(String, Vec<Row>),
    /// A `tools/list` capture, as a catalogue ([`capture::catalogue`]).
    Capture(Catalogue),
}

impl Loaded {
    fn read(path: &Path) -> Result<Loaded> {
        let label = path.display().to_string();
        if path.extension().and_then(|e| e.to_str()) == Some("json") {
            if let Some(cat) = Loaded::stream(path, &label)? {
                return Ok(Loaded::Capture(cat));
            }
        }
        let bytes = crate::input::read(path, crate::input::LARGE)?;
        if bytes.starts_with(b"SQLite format 3\0") {
            let rows = directory::read_directory(path)?;
            return Ok(Loaded::Rows(label, rows));
        }
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| Error::input(format!("{label}: not UTF-8 text; expected JSONL rows, a tools/list JSON capture or a SQLite file")))?;
        // Editors on Windows start UTF-8 files with a byte-order mark; JSON has no place for it.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let trimmed = text.trim_start();
        if trimmed.is_empty() {
            return Ok(Loaded::Rows(label, Vec::new()));
        }
        let is_capture = match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl" | "ndjson") => false,
            Some("json") => true,
            _ => trimmed.starts_with('{') && !looks_like_row(trimmed),
        };
        if is_capture {
            let cat = capture::parse_catalogue(label.clone(), server_of(path), text)
                .map_err(|e| Error::input(format!("{label}: {e}")))?;
            return Ok(Loaded::Capture(cat));
        }
        let rows = jsonl::parse(text).map_err(|e| Error::input(format!("{label}: {e}")))?;
        Ok(Loaded::Rows(label, rows))
    }
}

impl Loaded {
    /// A `.json` capture read as it streams ([`capture::read_catalogue`]), or `None` for a file
    /// that is not read that way (a SQLite database, a text of blanks alone, anything the
    /// streamed reading does not take), which is then read whole.
    fn stream(path: &Path, label: &str) -> Result<Option<Catalogue>> {
        use std::io::Read;
        let (mut file, _) = crate::input::open(path, crate::input::LARGE)?;
        // Enough of the start to tell a database and an empty text from a capture.
        let mut head = Vec::with_capacity(PEEK);
        (&mut file)
            .take(PEEK as u64)
            .read_to_end(&mut head)
            .map_err(|e| Error::io(path, e))?;
        let blank = head
            .strip_prefix(b"\xef\xbb\xbf")
            .unwrap_or(&head)
            .iter()
            .all(u8::is_ascii_whitespace);
        if head.starts_with(b"SQLite format 3\0") || (blank && head.len() < PEEK) {
            return Ok(None);
        }
        let text = crate::input::TextStream::new(
            std::io::Cursor::new(head).chain(file),
            crate::input::LARGE,
        );
        // A capture not read this way is read whole, which says what is wrong with it.
        Ok(capture::read_catalogue(
            label.to_string(),
            server_of(path),
            text,
        ))
    }
}

/// The server a capture file names (`owner__server.tools.json` -> `server`).
fn server_of(path: &Path) -> String {
    path.file_name()
        .and_then(|f| f.to_str())
        .map(capture::server_name_from_file)
        .unwrap_or_else(|| "server".into())
}

/// Bytes read from the start of a `.json` file to tell what it holds ([`Loaded::stream`]).
const PEEK: usize = 64 << 10;

/// A JSONL catalogue's first line is a row object: it has a `key` and no `tools`.
fn looks_like_row(text: &str) -> bool {
    let first = text.lines().next().unwrap_or("");
    match serde_json::from_str::<Value>(first) {
        Ok(Value::Object(m)) => m.contains_key("key") && !m.contains_key("tools"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The projection written as text is the projection, byte for byte, and parses back to
    /// the same value, on generated rows and on rows with text JSON escapes.
    #[test]
    fn a_projection_as_text_is_the_projection() {
        let mut rows = generate::generate(profile::Profile::named("seed-2026-07").unwrap(), 300, 9);
        let mut odd = row("odd\"key\u{0}é");
        odd.content = "# WHAT: tab\t, quote \", line\u{2028}😀".into();
        odd.input_schema = Some(
            json!({"type": "object", "properties": {"n": {"type": "number", "minimum": 0.1, "maximum": 99.92497928518063}}}).into(),
        );
        rows.push(odd);
        // A schema the normaliser rewrites: its text is not the definition's schema.
        let mut refs = row("refs");
        refs.input_schema = Some(
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "string"}}, "required": ["a"]}).into(),
        );
        rows.push(refs);
        for s in rows.iter().filter_map(|r| r.input_schema.as_ref()) {
            assert_eq!(s.normal, schema::is_normal(&s.value()), "{}", s.text());
        }
        assert!(rows
            .iter()
            .any(|r| r.input_schema.as_ref().is_some_and(|s| !s.normal)));
        let values: Vec<Tool> = Catalogue::projected(&rows)
            .iter()
            .map(|r| r.to_tool())
            .collect();
        let texts = Catalogue::project(&rows);
        assert_eq!(values, texts);
        for (v, t) in values.iter().zip(&texts) {
            assert_eq!(v.value(), t.value());
        }
    }

    /// Every generated schema, and its normal form, takes the normaliser's fast path only
    /// where the normaliser would give it back unchanged; most of them take it.
    #[test]
    fn generated_schemas_take_the_fast_path_only_when_normal() {
        let mut taken = 0;
        for profile in ["seed-2026-07", "real-mcp"] {
            let rows = generate::generate(profile::Profile::named(profile).unwrap(), 3000, 7);
            for s in rows.iter().filter_map(|r| r.input_schema.as_ref()) {
                let s = s.value();
                for s in [schema::normalise_slowly(&s), s] {
                    if schema::is_normal(&s) {
                        taken += 1;
                        assert_eq!(
                            json::compact(&schema::normalise_slowly(&s)),
                            json::compact(&s)
                        );
                    }
                }
            }
        }
        assert!(taken > 6000, "{taken}");
    }

    /// The spaced length weighed in place is the length of the definition's spaced text, for
    /// schemas in normal form and not.
    #[test]
    fn a_projection_weighed_in_place_is_the_projection_weighed() {
        let rows = generate::generate(profile::Profile::named("real-mcp").unwrap(), 300, 3);
        let mut normal = 0;
        let odd = json!({"type": "object", "properties": {"q\u{2028}é": {"type": "string"}}});
        let not_normal = json!({"required": ["x"], "properties": {}});
        for r in &rows {
            let own = r.input_schema.as_ref().map(RowSchema::value);
            for s in own.iter().chain([&odd, &not_normal]) {
                normal += usize::from(schema::is_normal(s));
                assert_eq!(
                    r.projected_spaced_len(s),
                    json::python_spaced_len(&r.tool_value_with(Some(s))),
                    "{}: {s}",
                    r.key
                );
            }
        }
        assert!(normal > 300, "{normal}");
    }

    /// A row's schema reads as any JSON value, is kept compact, writes back as the same JSON,
    /// and parses to the value it was read from; `null` is no schema.
    #[test]
    fn a_row_schema_reads_and_writes_as_json() {
        let text = r#"{"key": "A", "type": "fn", "input_schema": { "type" : "object",
            "properties": {"n": {"type": "number", "maximum": 99.92497928518063, "enum": [-0.0, 1e21]},
            "s": {"type": "string", "description": "tab\t\u00e9\u2028"}}}}"#;
        let row: Row = serde_json::from_str(text).unwrap();
        let schema = row.input_schema.as_ref().unwrap();
        let value: Value = serde_json::from_str::<Value>(text).unwrap()["input_schema"].clone();
        assert_eq!(schema.text(), json::compact(&value));
        assert_eq!(schema.value(), value);
        let written = serde_json::to_value(&row).unwrap();
        assert_eq!(written["input_schema"], value);
        assert_eq!(serde_json::from_value::<Row>(written).unwrap(), row);
        let none: Row =
            serde_json::from_str(r#"{"key": "B", "type": "fn", "input_schema": null}"#).unwrap();
        assert_eq!(none.input_schema, None);
    }

    fn row(key: &str) -> Row {
        Row {
            key: key.into(),
            runner: Runner::Http,
            target: Some("GET https://api.example.com/x".into()),
            auth: Some("bearer:EXAMPLE_TOKEN".into()),
            content: "# WHAT: List things\n# ARGS: id\nGET /x".into(),
            category: Some("demo".into()),
            planner_rank: 100,
            enabled: true,
            planner_visible: true,
            input_schema: None,
        }
    }

    #[test]
    fn projection_follows_the_contract() {
        let tool = row("THINGS_LIST").to_tool();
        assert_eq!(
            tool.raw(),
            r#"{"name":"THINGS_LIST","description":"List things [http · demo]","inputSchema":{"type":"object","properties":{}}}"#
        );
    }

    #[test]
    fn hidden_and_disabled_rows_are_not_projected() {
        let mut hidden = row("B");
        hidden.planner_visible = false;
        let mut off = row("C");
        off.enabled = false;
        let cat = Catalogue::from_rows("t", vec![row("A"), hidden, off]);
        assert_eq!(cat.rows.len(), 3);
        assert_eq!(cat.tools.len(), 1);
    }

    /// A `.json` capture is read as it streams: with a byte-order mark or without, blank (no
    /// tools), and refused with its path where it is not UTF-8; the same capture without the
    /// extension, read whole, gives the same catalogue.
    #[test]
    fn json_captures_load_as_they_stream() {
        let dir = tempfile::tempdir().unwrap();
        let capture =
            r#"{"tools":[{"name":"a","description":"é","inputSchema":{"type":"object"}}]}"#;
        let write = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let plain = Catalogue::load(&write("plain.json", capture.as_bytes())).unwrap();
        let whole = Catalogue::load(&write("whole/plain", capture.as_bytes())).unwrap();
        let marked = Catalogue::load(&write(
            "marked/plain.json",
            &[b"\xef\xbb\xbf", capture.as_bytes()].concat(),
        ))
        .unwrap();
        assert_eq!(plain.tools.len(), 1);
        assert_eq!((&plain.tools, &plain.rows), (&whole.tools, &whole.rows));
        assert_eq!((&plain.tools, &plain.rows), (&marked.tools, &marked.rows));
        assert!(Catalogue::load(&write("blank.json", b" \n"))
            .unwrap()
            .tools
            .is_empty());
        let bad = write("bad.json", b"{\"tools\":[{\"name\":\"\xff\"}]}");
        let err = Catalogue::load(&bad).unwrap_err().to_string();
        assert!(
            err.contains("bad.json") && err.contains("not UTF-8"),
            "{err}"
        );
    }
}
