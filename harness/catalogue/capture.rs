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

/// [`parse_catalogue`] of a capture read from `reader` as it streams: the tools arrays'
/// elements are cut from the text as it is read ([`super::split`]) and parsed a batch at a time
/// on the machine's cores while the next batch is read, so the capture's whole text is never
/// held beside its tools. `None` where the capture is not read this way, or not read at all (it
/// is not a tools/list capture, a tool in it is not one): [`parse_catalogue`] of the whole text
/// then gives the catalogue, or says why there is none.
pub fn read_catalogue(
    source: String,
    server: String,
    reader: impl std::io::Read,
) -> Option<Catalogue> {
    Some(assemble(source, server, stream(reader)?))
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
    read_raws(raws)
}

/// Each tool parsed on its own, on the machine's cores; the first bad one (in order) is the one
/// reported.
fn read_raws(raws: Vec<&RawValue>) -> Result<Vec<Described>, String> {
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

/// [`read`] of a capture as it streams ([`read_catalogue`]): the envelope read from the text
/// with its tools arrays emptied, and the tools of the array it names from the elements cut
/// out; `None` wherever anything is not as [`read`] would take it.
fn stream(reader: impl std::io::Read) -> Option<Vec<Described>> {
    type Parsed = Vec<Result<Described, String>>;
    let mut arrays: Vec<Parsed> = Vec::new();
    let split = std::thread::scope(|s| {
        // One batch parsed on the cores while the next is read.
        let mut pending: Option<(usize, std::thread::ScopedJoinHandle<Parsed>)> = None;
        let take =
            |arrays: &mut Vec<Parsed>,
             done: Option<(usize, std::thread::ScopedJoinHandle<Parsed>)>| {
                if let Some((array, h)) = done {
                    let parsed = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                    arrays.resize_with(arrays.len().max(array + 1), Vec::new);
                    arrays[array].extend(parsed);
                }
            };
        let split = super::split::split(reader, STREAM_BATCH, |array, first, batch| {
            take(&mut arrays, pending.take());
            pending = Some((
                array,
                s.spawn(move || {
                    let numbered: Vec<(usize, String)> = (first..).zip(batch).collect();
                    crate::sync::map_on_cores(&numbered, |(i, raw)| described(*i, raw))
                }),
            ));
        });
        take(&mut arrays, pending.take());
        split
    })?;
    // An array with no elements handed none out.
    arrays.resize_with(arrays.len().max(split.arrays.len()), Vec::new);
    // The whole parse reads every array's text, the one it does not take too: an element that
    // does not parse anywhere is left to it to refuse.
    if arrays.iter().flatten().any(Result::is_err) {
        return None;
    }
    let envelope: Envelope = serde_json::from_str(&split.rest).ok()?;
    // The elements of the array cut out as `which`, parsed; or the array's own elements where
    // it was not cut (it must then be in the text kept).
    let cut = |which: super::split::Which| split.arrays.iter().position(|w| *w == which);
    let chosen: Parsed = match (envelope.tools, envelope.result) {
        (Some(tools), _) => match cut(super::split::Which::Top) {
            Some(i) if tools.is_empty() => std::mem::take(arrays.get_mut(i)?),
            Some(_) => return None,
            None => return read_raws(tools).ok(),
        },
        (None, Some(result)) => {
            let r: ToolsResult = serde_json::from_str(result.get()).ok()?;
            match cut(super::split::Which::Result) {
                Some(i) if r.tools.is_empty() => std::mem::take(arrays.get_mut(i)?),
                Some(_) => return None,
                None => return read_raws(r.tools).ok(),
            }
        }
        (None, None) => return None,
    };
    chosen.into_iter().collect::<Result<Vec<_>, _>>().ok()
}

/// Tools are handed to the cores in batches of at most this many (an assumed size: large enough
/// that starting the threads is nothing beside the parsing, small enough that two batches held
/// at once are a few megabytes).
const STREAM_BATCH: usize = 4096;

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

    fn streamed(text: &str) -> Option<Catalogue> {
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
                let stream = streamed(&text).expect("read as it streams");
                assert_eq!(stream.tools, whole.tools, "{text:.200}");
                assert_eq!(stream.rows, whole.rows);
            }
        }
    }

    /// What the whole parse refuses is not read as it streams (the whole parse says why), and
    /// neither is what this reading does not follow: keys written with escapes, arrays cut
    /// wrong.
    #[test]
    fn a_streamed_capture_leaves_what_it_does_not_take_to_the_whole_parse() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}"#,
            r#"{"result": 5}"#,
            r#"{"result": null}"#,
            r#"{"tools": [{"name":"a"}, 1]}"#,
            r#"{"tools": [{"name":"a"}], "tools": []}"#,
            r#"{"result": {"tools": [{"description":"x"}]}}"#,
            r#"{"tools": [{"name":"a"}]"#,
            r#"{"tools": [{"name":"a"}]} trailing"#,
            r#"{"tools": [{"name":"a"},]}"#,
            r#"{"tools": [,{"name":"a"}]}"#,
            r#"{"tools": [{"name":"a"} {"name":"b"}]}"#,
            r#"{"tools": [{"name":"a"]}"#,
            r#"{"tools": ["a"}"#,
            r#"{"tools":[{"name":"a"}],"result":{"tools":[x]}}"#,
            r#"{"result":{"tools":[{,}]},"tools":[{"name":"a"}]}"#,
            r#"[{"name":"a"}]"#,
            "{nope",
        ] {
            assert!(
                parse_catalogue("s".into(), "srv".into(), text).is_err(),
                "{text}"
            );
            assert!(streamed(text).is_none(), "{text}");
        }
        // Read whole, not cut: the same catalogue either way.
        let escaped = r#"{"to\u006fls": [{"name":"a"}]}"#;
        assert!(streamed(escaped).is_none());
        assert_eq!(
            parse_catalogue("s".into(), "srv".into(), escaped)
                .unwrap()
                .tools
                .len(),
            1
        );
    }

    /// Random captures, cut at random read sizes, with blanks between every token and strings
    /// that hold quotes, backslashes and brackets: what is read as it streams is what the whole
    /// parse reads, and nothing the whole parse refuses is read as it streams.
    #[test]
    fn streamed_captures_agree_with_the_whole_parse_at_any_cut() {
        let mut rng = crate::rng::Rng::new(11);
        let strings = [
            r#""plain""#,
            r#""a \"quoted\" ] } word""#,
            r#""back\\slash\\""#,
            r#""\u00e9 é 😀 [{""#,
            r#""""#,
        ];
        let values = [
            "1",
            "-2.5e3",
            "true",
            "null",
            "[]",
            "{}",
            "[1, [2, {\"x\": \"]\"}]]",
        ];
        for round in 0..300 {
            let gap = |rng: &mut crate::rng::Rng| [" ", "", "\n\t", "\r\n  "][rng.below(4)];
            let tool = |rng: &mut crate::rng::Rng, i: usize| {
                let g = gap(rng);
                let desc = strings[rng.below(strings.len())];
                let extra = values[rng.below(values.len())];
                format!(
                    "{{{g}\"name\"{g}:{g}\"t{i}\"{g},{g}\"description\"{g}:{g}{desc}{g},{g}\"x\":{extra},\"inputSchema\":{{\"type\":\"object\"}}{g}}}"
                )
            };
            let n = rng.below(6);
            let tools: Vec<String> = (0..n).map(|i| tool(&mut rng, i)).collect();
            let g = gap(&mut rng);
            let mut array = format!("[{g}{}{g}]", tools.join(&format!("{g},{g}")));
            // Now and then, something the parse refuses.
            match round % 10 {
                7 => array = array.replacen(',', "", 1),
                8 => array.push(','),
                9 => array.insert_str(1, "\"text\","),
                _ => {}
            }
            let text = match rng.below(3) {
                0 => format!("{{{g}\"tools\"{g}:{g}{array}{g}}}"),
                1 => format!(
                    "{{\"jsonrpc\":\"2.0\",{g}\"id\":{},\"result\":{{\"nextCursor\":{},{g}\"tools\":{array}}}}}",
                    values[rng.below(values.len())],
                    strings[rng.below(strings.len())]
                ),
                _ => format!(
                    "{{\"_meta\":{{\"tools\":[{}]}},\"tools\":{array},\"more\":{}}}",
                    strings[rng.below(strings.len())],
                    values[rng.below(values.len())]
                ),
            };
            let whole = parse_catalogue("s".into(), "srv".into(), &text);
            let step = 1 + rng.below(13);
            let stream = read_catalogue("s".into(), "srv".into(), Trickle(text.as_bytes(), step));
            match (&whole, &stream) {
                (Ok(w), Some(s)) => {
                    assert_eq!((&w.tools, &w.rows), (&s.tools, &s.rows), "{text}");
                }
                (Err(_), None) => {}
                (Ok(_), None) => panic!("valid, not read as it streams: {text}"),
                (Err(e), Some(_)) => panic!("refused whole ({e}), read as it streams: {text}"),
            }
        }
    }
}
