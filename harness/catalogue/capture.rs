//! MCP `tools/list` captures: a `{"tools": [...]}` result, or a whole JSON-RPC response.
//!
//! Each tool's JSON text is kept as the server wrote it (whitespace removed), because
//! re-serialising through typed structs drops or reorders fields.

use super::{Catalogue, DefText, Row, RowSchema, Runner, Tool};
use crate::json;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

#[derive(Deserialize)]
struct ToolsResult<'a> {
    #[serde(borrow)]
    tools: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    tools: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
}

/// Parse a capture into tools, keeping each one's bytes (and no parsed tree).
pub fn parse(text: &str) -> Result<Vec<Tool>, String> {
    Ok(read(text)?.into_iter().map(|d| d.tool).collect())
}

/// Parse a capture into a catalogue ([`catalogue`]), each tool parsed once.
pub fn parse_catalogue(source: String, server: String, text: &str) -> Result<Catalogue, String> {
    Ok(assemble(source, server, read(text)?))
}

/// [`parse_catalogue`] of a capture read from `reader` as it streams: the tools array is read a
/// batch at a time, each batch parsed on the machine's cores while the next is read, so the
/// capture's whole text is never held beside its tools.
pub fn read_catalogue(
    source: String,
    server: String,
    reader: impl std::io::Read,
) -> Result<Catalogue, String> {
    Ok(assemble(source, server, stream(reader)?))
}

/// The catalogue of parsed tools, each with its row.
fn assemble(source: String, server: String, described: Vec<Described>) -> Catalogue {
    let (tools, rows) = described
        .into_iter()
        .map(|d| {
            let row = row(&server, d.tool.name.clone(), &d.summary, d.schema);
            (d.tool, row)
        })
        .unzip();
    Catalogue {
        source,
        server,
        rows,
        tools,
    }
}

/// One captured tool: its text, and what its row is made of.
struct Described {
    tool: Tool,
    /// The description as docstring lines ([`describe`]).
    summary: String,
    schema: Option<RowSchema>,
}

const HINT: &str = "expected a tools/list result ({\"tools\": [...]}) or a JSON-RPC response whose result has `tools`";

fn read(text: &str) -> Result<Vec<Described>, String> {
    let envelope: Envelope = serde_json::from_str(text)
        .map_err(|e| format!("{}; {HINT}", crate::json::why_unreadable(&e)))?;
    let raws = match (envelope.tools, envelope.result) {
        (Some(tools), _) => tools,
        (None, Some(result)) => {
            let r: ToolsResult = serde_json::from_str(result.get())
                .map_err(|e| format!("`result` is not a tools/list result ({e}); {HINT}"))?;
            r.tools
        }
        (None, None) => return Err(format!("no `tools` array; {HINT}")),
    };
    // Each tool is parsed on its own, on the machine's cores; the first bad one (in order) is
    // the one reported.
    let numbered: Vec<(usize, &RawValue)> = raws.into_iter().enumerate().collect();
    crate::sync::map_on_cores(&numbered, |&(i, raw)| described(i, raw.get()))
        .into_iter()
        .collect()
}

/// Tool `i` of a capture, from its text. The parsed tree gives up its parts and is dropped:
/// the tool keeps its text alone.
fn described(i: usize, raw: &str) -> Result<Described, String> {
    let value: Value = serde_json::from_str(raw)
        .map_err(|e| format!("tool {i}: {}", crate::json::why_unreadable(&e)))?;
    let description = match value.get("description") {
        Some(Value::String(d)) => d.clone(),
        _ => String::new(),
    };
    let (name, summary, schema) = describe(value).map_err(|e| match e {
        Odd::NotAnObject => format!("tool {i} is not an object; {HINT}"),
        Odd::NoName => format!("tool {i}: a tool definition has no string `name`"),
    })?;
    // The schema becomes text here, on the thread that parsed it, so that no tool's tree
    // outlives its own parse: the peak holds the texts, not every tree at once.
    // The definitions made from the tool share the row's schema text (a tool without
    // one is shown with the empty object schema, as `Tool::definition_parts` reads it).
    let schema = schema.as_ref().map(RowSchema::new);
    let shown = match &schema {
        Some(s) => s.shared_text(),
        None => json::compact(&super::empty_schema()).into(),
    };
    let text = DefText::from_compact(&description, shown);
    let minified = json::minify(raw);
    // A text that is exactly `{"name","description","inputSchema"}` of its parts is not
    // kept twice: the tool writes it again from them if it is asked for.
    let tool = match Tool::composes(&name, &text, &minified) {
        true => Tool::composed(name, text),
        false => Tool::with_text(name, minified, text),
    };
    Ok(Described {
        tool,
        summary,
        schema,
    })
}

/// [`read`] of a capture as it streams ([`read_catalogue`]), with the same rules: the
/// envelope's `tools` array where it has one, else its `result`'s; the first bad tool in order
/// is the one reported.
fn stream(reader: impl std::io::Read) -> Result<Vec<Described>, String> {
    use serde::de::DeserializeSeed;
    let mut found = Found::default();
    let mut de =
        serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(1 << 16, reader));
    let parsed = Top(&mut found).deserialize(&mut de).and_then(|()| de.end());
    if let Some(e) = found.failed {
        return Err(e);
    }
    parsed.map_err(|e| match e.io_error_kind() {
        // The reader's own refusal (too large, not UTF-8) says what it is.
        Some(_) => e
            .to_string()
            .split(" at line")
            .next()
            .unwrap_or("")
            .to_string(),
        None => format!("{}; {HINT}", crate::json::why_unreadable(&e)),
    })?;
    match (found.top, found.result) {
        (Some(tools), _) => Ok(tools),
        (None, Some(Ok(tools))) => Ok(tools),
        (None, Some(Err(e))) => Err(format!("`result` is not a tools/list result ({e}); {HINT}")),
        (None, None) => Err(format!("no `tools` array; {HINT}")),
    }
}

/// What a streamed capture held.
#[derive(Default)]
struct Found {
    /// The envelope's own `tools` (`None`: absent or `null`).
    top: Option<Vec<Described>>,
    /// The `result`'s tools, or why it is not a tools/list result (`None`: no `result`, or
    /// `null`).
    result: Option<Result<Vec<Described>, String>>,
    /// The first bad tool read, in either array: reading stops there.
    failed: Option<String>,
}

/// Tools are handed to the cores in batches of at most this many (an assumed size: large enough
/// that starting the threads is nothing beside the parsing, small enough that two batches held
/// at once are a few megabytes).
const STREAM_BATCH: usize = 4096;

/// The capture's top level: an object whose `tools` or `result` holds the tools.
struct Top<'a>(&'a mut Found);

impl<'de> serde::de::DeserializeSeed<'de> for Top<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a tools/list result or a JSON-RPC response")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        use serde::de::Error;
        let (mut tools, mut result) = (false, false);
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "tools" => {
                    if std::mem::replace(&mut tools, true) {
                        return Err(A::Error::duplicate_field("tools"));
                    }
                    let got = map.next_value_seed(Tools(&mut self.0.failed));
                    self.0.top = got?;
                }
                "result" => {
                    if std::mem::replace(&mut result, true) {
                        return Err(A::Error::duplicate_field("result"));
                    }
                    // Beside the envelope's own tools, the result's are not read.
                    self.0.result = match tools {
                        true => map.next_value::<serde::de::IgnoredAny>().map(|_| None)?,
                        false => map.next_value_seed(Result_(&mut self.0.failed))?,
                    };
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A `result` member: `null`, or an object whose `tools` array holds the tools. What is not a
/// tools/list result is read through (it must still be JSON) and said why; a bad tool in its
/// array is put in the `Option` given, and reading stops there.
struct Result_<'a>(&'a mut Option<String>);

impl<'de> serde::de::DeserializeSeed<'de> for Result_<'_> {
    type Value = Option<Result<Vec<Described>, String>>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Result_<'_> {
    type Value = Option<Result<Vec<Described>, String>>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a tools/list result")
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(ResultBody(self.0)).map(Some)
    }
}

/// The value of a `result` that is not `null` ([`Result_`]).
struct ResultBody<'a>(&'a mut Option<String>);

impl<'de> serde::de::Visitor<'de> for ResultBody<'_> {
    type Value = Result<Vec<Described>, String>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a tools/list result")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Option<Result<Vec<Described>, String>> = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key.as_ref() != "tools" {
                map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            }
            if out.is_some() {
                map.next_value::<serde::de::IgnoredAny>()?;
                out = Some(Err("duplicate field `tools`".into()));
                continue;
            }
            out = Some(match map.next_value_seed(Tools(self.0))? {
                Some(tools) => Ok(tools),
                None => Err("`tools` is null".into()),
            });
        }
        Ok(out.unwrap_or_else(|| Err("missing field `tools`".into())))
    }
    // Any other value is read through and named.
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Err("a boolean, not an object".into()))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Err("a number, not an object".into()))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Err("a number, not an object".into()))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Err("a number, not an object".into()))
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Err("a string, not an object".into()))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Err("an array, not an object".into()))
    }
}

/// A `tools` member: `null` (`None`), or an array whose tools are parsed a batch at a time on
/// the machine's cores while the next batch is read. The first bad tool in order is put in the
/// `Option` given, and reading stops there.
struct Tools<'a>(&'a mut Option<String>);

impl<'de> serde::de::DeserializeSeed<'de> for Tools<'_> {
    type Value = Option<Vec<Described>>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Tools<'_> {
    type Value = Option<Vec<Described>>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        use serde::de::Error;
        type Parsed = Vec<Result<Described, String>>;
        let failed = self.0;
        let mut out: Vec<Described> = Vec::new();
        // What a batch's thread gave back: kept in order, stopped at its first bad tool.
        let mut absorb = |parsed: Parsed, failed: &mut Option<String>| -> bool {
            for d in parsed {
                match d {
                    Ok(d) => out.push(d),
                    Err(e) => {
                        *failed = Some(e);
                        return false;
                    }
                }
            }
            true
        };
        std::thread::scope(|s| {
            let mut pending: Option<std::thread::ScopedJoinHandle<Parsed>> = None;
            let mut batch: Vec<(usize, Box<RawValue>)> = Vec::new();
            let mut next = 0usize;
            loop {
                let raw = seq.next_element::<Box<RawValue>>()?;
                let end = raw.is_none();
                if let Some(raw) = raw {
                    batch.push((next, raw));
                    next += 1;
                    if batch.len() < STREAM_BATCH {
                        continue;
                    }
                }
                if let Some(h) = pending.take() {
                    let parsed = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                    if !absorb(parsed, failed) {
                        return Err(A::Error::custom("a tool is not readable"));
                    }
                }
                if !batch.is_empty() {
                    let b = std::mem::take(&mut batch);
                    pending = Some(s.spawn(move || {
                        crate::sync::map_on_cores(&b, |(i, raw)| described(*i, raw.get()))
                    }));
                }
                if end {
                    break;
                }
            }
            if let Some(h) = pending.take() {
                let parsed = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                if !absorb(parsed, failed) {
                    return Err(A::Error::custom("a tool is not readable"));
                }
            }
            Ok(())
        })?;
        Ok(Some(out))
    }
}

/// Why a captured definition is not a tool.
enum Odd {
    NotAnObject,
    NoName,
}

/// A definition's name, its description as docstring lines and its input schema (moved out of
/// the tree, which is then dropped). The first non-blank line is the row's `# WHAT:` (a
/// description that opens with a blank line, common in real servers, keeps its first line of
/// text); the rest, on one line, is `# MORE:`, so that a resolver reads the whole description
/// while the summary stays one line.
fn describe(value: Value) -> Result<(String, String, Option<Value>), Odd> {
    let Value::Object(mut m) = value else {
        return Err(Odd::NotAnObject);
    };
    let name = match m.swap_remove("name") {
        Some(Value::String(n)) => n,
        _ => return Err(Odd::NoName),
    };
    let description = m.get("description").and_then(Value::as_str).unwrap_or("");
    let mut lines = description
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty());
    let mut docs = format!("# WHAT: {}", lines.next().unwrap_or(""));
    let more: Vec<&str> = lines.flat_map(str::split_whitespace).collect();
    if !more.is_empty() {
        docs.push_str("\n# MORE: ");
        docs.push_str(&more.join(" "));
    }
    Ok((name, docs, m.swap_remove("inputSchema")))
}

/// The row that describes a captured tool.
fn row(server: &str, key: String, docs: &str, schema: Option<RowSchema>) -> Row {
    Row {
        key,
        runner: Runner::Fn,
        target: None,
        auth: None,
        content: docs.to_string(),
        category: Some(server.to_string()),
        planner_rank: 100,
        enabled: true,
        planner_visible: true,
        input_schema: schema,
    }
}

/// `owner__server.tools.json` -> `server`.
pub fn server_name_from_file(file: &str) -> String {
    let stem = file.split('.').next().unwrap_or(file);
    stem.rsplit("__").next().unwrap_or(stem).to_string()
}

/// A catalogue whose projection is the captured tools, unchanged, and whose rows describe them.
pub fn catalogue(source: String, server: String, tools: Vec<Tool>) -> Catalogue {
    let rows = crate::sync::map_on_cores(&tools, |t| {
        // A tool's text was checked to be a named object when it was made.
        let value = serde_json::from_str(t.raw()).unwrap_or(Value::Null);
        let (summary, schema) = match describe(value) {
            Ok((_, summary, schema)) => (summary, schema),
            Err(_) => ("# WHAT: ".to_string(), None),
        };
        row(
            &server,
            t.name.clone(),
            &summary,
            schema.as_ref().map(RowSchema::new),
        )
    });
    Catalogue {
        source,
        server,
        rows,
        tools,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_shapes_and_keeps_bytes() {
        let bare = r#"{"tools": [ {"name": "a", "execution": {"taskSupport": "forbidden"}, "inputSchema": {"type": "object"}} ]}"#;
        let rpc = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{bare}}}"#);
        for text in [bare.to_string(), rpc] {
            let tools = parse(&text).unwrap();
            assert_eq!(
                tools[0].raw(),
                r#"{"name":"a","execution":{"taskSupport":"forbidden"},"inputSchema":{"type":"object"}}"#
            );
        }
    }

    /// The rows made from one parse of a capture (a file) are the rows made again from its
    /// tools' text (a live listing), odd definitions included.
    #[test]
    fn both_ways_of_making_a_captures_rows_agree() {
        let text = r#"{"tools": [
            {"name": "a", "description": "first line\nsecond", "inputSchema": {"type": "object", "properties": {"x": {"type": "number", "maximum": 1e2}}}},
            {"name": "b"},
            {"name": "c", "description": 7, "inputSchema": null},
            {"inputSchema": ["x"], "name": "d", "description": "tab\t\u00e9"},
            {"name": "e", "description": "", "inputSchema": "s"}
        ]}"#;
        let once = parse_catalogue("s".into(), "srv".into(), text).unwrap();
        let again = catalogue("s".into(), "srv".into(), parse(text).unwrap());
        assert_eq!(once.rows, again.rows);
        assert_eq!(once.tools, again.tools);
        assert_eq!(once.rows[0].content, "# WHAT: first line\n# MORE: second");
        assert_eq!(once.rows[1].input_schema, None);
        assert_eq!(
            once.rows[3].input_schema.as_ref().map(RowSchema::text),
            Some(r#"["x"]"#)
        );
    }

    #[test]
    fn rejects_what_is_not_a_tools_list() {
        assert!(
            parse(r#"{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}"#)
                .unwrap_err()
                .contains("tools")
        );
        assert!(parse(r#"{"tools": [1]}"#)
            .unwrap_err()
            .contains("not an object"));
        assert!(parse("{nope").unwrap_err().contains("not JSON"));
        assert!(parse(r#"{"tools":[{"description":"x"}]}"#)
            .unwrap_err()
            .contains("name"));
    }

    /// A reader that hands out at most `step` bytes a read, as a pipe or a slow disk may.
    struct Trickle<'a>(&'a [u8], usize);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn streamed(text: &str) -> Result<Catalogue, String> {
        read_catalogue("s".into(), "srv".into(), Trickle(text.as_bytes(), 7))
    }

    /// A capture read as it streams is the capture parsed whole: both envelopes, odd tools,
    /// members in any order, a `null` beside the array that holds the tools, and more tools
    /// than one batch holds.
    #[test]
    fn a_streamed_capture_is_the_capture_parsed_whole() {
        let tools = r#"[
            {"name": "a", "description": "first line\nsecond é", "inputSchema": {"type": "object", "properties": {"x": {"type": "number", "maximum": 1e2}}}},
            {"name": "b"},
            {"name": "c", "description": 7, "inputSchema": null},
            {"inputSchema": ["x"], "name": "d", "description": "tab\t\u00e9 \ud83d\ude00"}
        ]"#;
        let many = format!(
            "[{}]",
            (0..STREAM_BATCH * 2 + 3)
                .map(|i| format!(r#"{{"name":"t{i}","description":"tool {i}","inputSchema":{{"type":"object"}}}}"#))
                .collect::<Vec<_>>()
                .join(",")
        );
        for tools in [tools.to_string(), many] {
            for text in [
                format!(r#"{{"tools": {tools}}}"#),
                format!(
                    r#"{{"nextCursor": null, "tools": {tools}, "_meta": {{"a": [1, {{"b": "]"}}]}}}}"#
                ),
                format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":{tools}}}}}"#),
                format!(r#"{{"result":{{"x":[],"tools":{tools}}},"id":"7","tools":null}}"#),
                format!(r#"{{"result":{{"tools":[{{"name":"lost"}}]}},"tools":{tools}}}"#),
            ] {
                let whole = parse_catalogue("s".into(), "srv".into(), &text).unwrap();
                let stream = streamed(&text).unwrap();
                assert_eq!(stream.tools, whole.tools, "{text:.200}");
                assert_eq!(stream.rows, whole.rows);
            }
        }
    }

    /// What the whole parse refuses, the stream refuses, for the same reason.
    #[test]
    fn a_streamed_capture_refuses_what_the_whole_parse_refuses() {
        for (text, needle) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}"#,
                "tools",
            ),
            (r#"{"result": 5}"#, "not a tools/list result"),
            (r#"{"result": null}"#, "no `tools` array"),
            (r#"{"tools": [{"name":"a"}, 1]}"#, "tool 1 is not an object"),
            (
                r#"{"tools": [{"name":"a"}], "tools": []}"#,
                "duplicate field `tools`",
            ),
            (
                r#"{"result": {"tools": [{"description":"x"}]}}"#,
                "no string `name`",
            ),
            (r#"{"tools": [{"name":"a"}]"#, "not JSON"),
            (r#"{"tools": [{"name":"a"}]} trailing"#, "not JSON"),
            (r#"[{"name":"a"}]"#, "not JSON"),
            ("{nope", "not JSON"),
        ] {
            let whole = parse_catalogue("s".into(), "srv".into(), text).map(|_| ());
            let stream = streamed(text).map(|_| ());
            let (Err(w), Err(s)) = (&whole, &stream) else {
                panic!("{text}: {whole:?} {stream:?}");
            };
            assert!(
                w.contains(needle) && s.contains(needle),
                "{text}: {w} / {s}"
            );
        }
        // A tool past the first batch is named by its place in the array.
        let text = format!(
            "{{\"tools\":[{}{{\"name\":3}}]}}",
            "{\"name\":\"a\"},".repeat(STREAM_BATCH + 5)
        );
        let err = streamed(&text).map(|_| ()).unwrap_err();
        assert!(
            err.contains(&format!("tool {}:", STREAM_BATCH + 5)),
            "{err}"
        );
    }
}
