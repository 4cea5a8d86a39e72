//! JSON serialisations that byte counts depend on.
//!
//! `compact` is what clients put on the wire (no whitespace, keys in insertion order).
//! `python_spaced` mirrors Python's `json.dumps` defaults (`", "` and `": "` separators,
//! non-ASCII escaped as `\uXXXX`): the published composition figures (the published measurement) were
//! measured on that form. `minify` strips insignificant whitespace from JSON text without
//! re-serialising it, so a capture's bytes stay exactly as the server wrote them.

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter, Serializer};
use serde_json::Value;
use std::io::{self, Write};

/// Compact JSON text of a value.
pub fn compact<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("serialising a JSON value cannot fail")
}

/// Length in bytes of the compact JSON text of a value. The members of a long array (a
/// request's definitions) are measured on all cores.
pub fn compact_len(value: &Value) -> usize {
    /// Arrays at least this long are split (an assumed threshold).
    const SPLIT: usize = 1024;
    match value {
        Value::Array(items) if items.len() >= SPLIT => {
            let inner: usize = crate::sync::map_on_cores(items, compact_len)
                .into_iter()
                .sum();
            2 + inner + items.len() - 1
        }
        Value::Object(members)
            if members
                .values()
                .any(|v| matches!(v, Value::Array(a) if a.len() >= SPLIT)) =>
        {
            let inner: usize = members
                .iter()
                .map(|(k, v)| serialised_len(k) + 1 + compact_len(v))
                .sum();
            2 + inner + members.len() - 1
        }
        _ => serialised_len(value),
    }
}

/// Length in bytes of a string written as JSON, quotes included.
pub fn string_len(s: &str) -> usize {
    // Most text needs no escape: its JSON is the text and two quotes.
    match s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        true => s.len() + 2,
        false => serialised_len(s),
    }
}

fn serialised_len<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut counter = ByteCounter(0);
    serde_json::to_writer(&mut counter, value).expect("counting cannot fail");
    counter.0
}

struct ByteCounter(usize);

impl Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where the JSON string whose text begins at `i` (the byte after its opening quote) ends: the
/// index after its closing quote, found with memchr, or `None` where the text ends inside it.
/// A backslash takes the byte after it (a later byte of a longer character is never a quote
/// or a backslash).
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    // An escape that ends the text leaves `i` past its end: `get` finds nothing there.
    while let Some(k) = memchr::memchr2(b'"', b'\\', b.get(i..)?) {
        let at = i + k;
        if b[at] == b'"' {
            return Some(at + 1);
        }
        i = at + 2;
    }
    None
}

/// Python `json.dumps(value)` with default arguments.
pub fn python_spaced(value: &Value) -> String {
    let mut out = Vec::new();
    let mut ser = Serializer::with_formatter(&mut out, PythonFormatter);
    value
        .serialize(&mut ser)
        .expect("serialising a JSON value cannot fail");
    String::from_utf8(out).expect("ASCII output")
}

/// Length of [`python_spaced`]'s text, without writing it.
pub fn python_spaced_len(value: &Value) -> usize {
    let mut counter = ByteCounter(0);
    value
        .serialize(&mut Serializer::with_formatter(
            &mut counter,
            PythonFormatter,
        ))
        .expect("counting cannot fail");
    counter.0
}

/// Length of a string value once Python's `json.dumps` has escaped it, quotes excluded.
pub fn python_string_len(s: &str) -> usize {
    python_spaced(&Value::String(s.to_string())).len() - 2
}

struct PythonFormatter;

impl Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        for c in s.chars() {
            if c.is_ascii() {
                w.write_all(&[c as u8])?;
            } else {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(w, "\\u{u:04x}")?;
                }
            }
        }
        Ok(())
    }
    fn write_char_escape<W: ?Sized + Write>(&mut self, w: &mut W, e: CharEscape) -> io::Result<()> {
        let s: &[u8] = match e {
            CharEscape::Quote => b"\\\"",
            CharEscape::ReverseSolidus => b"\\\\",
            CharEscape::Solidus => b"\\/",
            CharEscape::Backspace => b"\\b",
            CharEscape::FormFeed => b"\\f",
            CharEscape::LineFeed => b"\\n",
            CharEscape::CarriageReturn => b"\\r",
            CharEscape::Tab => b"\\t",
            CharEscape::AsciiControl(b) => return write!(w, "\\u{b:04x}"),
        };
        w.write_all(s)
    }
}

/// Remove whitespace outside strings from JSON text; the bytes of every token stay as written.
/// Runs of bytes are copied whole: strings are skipped to their closing quote (found with
/// memchr), and only whitespace between tokens is left out.
pub fn minify(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    // Bytes from `start` to `i` are kept and not yet copied.
    let (mut start, mut i) = (0, 0);
    while i < b.len() {
        match b[i] {
            // An unterminated string is kept to the end.
            b'"' => i = string_end(b, i + 1).unwrap_or(b.len()),
            b' ' | b'\n' | b'\r' | b'\t' => {
                out.extend_from_slice(&b[start..i]);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    out.extend_from_slice(&b[start..]);
    // Only ASCII whitespace bytes were left out, never part of a longer character.
    String::from_utf8(out).expect("removing ASCII whitespace keeps UTF-8 text valid")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nodes_are_counted_outside_strings_and_the_count_stops_at_its_limit() {
        // Containers, keys and values, less one per non-empty container.
        assert_eq!(nodes_within(b"[1,2,3]", 100), Ok(3));
        assert_eq!(nodes_within(br#"{"a":1,"b":[]}"#, 100), Ok(5));
        assert_eq!(nodes_within(b"{}", 100), Ok(1));
        assert_eq!(nodes_within(b"7", 100), Ok(0));
        // Brackets, commas, colons and escaped quotes inside strings are not nodes.
        assert_eq!(nodes_within(br#"["[{,:}]","a\"[,b","\\",1]"#, 100), Ok(4));
        // An escape or a string that ends the text ends the count without reading past it.
        assert_eq!(nodes_within(br#"["ab\"#, 100), Ok(1));
        assert_eq!(nodes_within(br#"["ab"#, 100), Ok(1));
        assert_eq!(nodes_within(br#"[""#, 100), Ok(1));
        // Past the limit, the count stops there.
        assert_eq!(nodes_within(b"[0,0,0,0]", 4), Ok(4));
        assert_eq!(nodes_within(b"[0,0,0,0,0]", 4), Err(5));
        // On random JSON, the count is what the comment says: the parser's nodes less one,
        // plus one per empty container.
        let mut rng = crate::rng::Rng::new(7);
        for _ in 0..300 {
            let v = random_value(&mut rng, 4);
            let text = compact(&v);
            let (all, empty) = tree_nodes(&v);
            assert_eq!(
                nodes_within(text.as_bytes(), usize::MAX),
                Ok(all - 1 + empty),
                "{text}"
            );
        }
    }

    /// The nodes of a tree (containers, keys and values) and its empty containers.
    fn tree_nodes(v: &Value) -> (usize, usize) {
        let add = |(n, e): (usize, usize), (m, f): (usize, usize)| (n + m, e + f);
        match v {
            Value::Array(a) => a
                .iter()
                .map(tree_nodes)
                .fold((1, usize::from(a.is_empty())), add),
            Value::Object(o) => o
                .values()
                .map(tree_nodes)
                .fold((1 + o.len(), usize::from(o.is_empty())), add),
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => (1, 0),
        }
    }

    fn random_value(rng: &mut crate::rng::Rng, depth: usize) -> Value {
        const PIECES: [&str; 8] = ["a", "[", "{", ",", ":", "\\", "\"", "é"];
        let word = |rng: &mut crate::rng::Rng| -> String {
            (0..rng.below(5))
                .map(|_| PIECES[rng.below(PIECES.len())])
                .collect()
        };
        match (depth, rng.below(6)) {
            (0, _) | (_, 0) => Value::String(word(rng)),
            (_, 1) => json!(rng.below(1000)),
            (_, 2) => Value::Null,
            (_, 3) => Value::Array(
                (0..rng.below(4))
                    .map(|_| random_value(rng, depth - 1))
                    .collect(),
            ),
            _ => Value::Object(
                (0..rng.below(4))
                    .map(|_| (word(rng), random_value(rng, depth - 1)))
                    .collect(),
            ),
        }
    }

    #[test]
    fn a_text_no_longer_than_the_bound_is_not_scanned_and_a_longer_one_is() {
        // Every byte a node: as many bytes as the bound holds at most that many nodes.
        let just = "[".repeat(MAX_NODES);
        assert!(check_nodes(just.as_bytes(), "x").is_ok());
        let over = "[".repeat(MAX_NODES + 1);
        let why = check_nodes(over.as_bytes(), "the text").unwrap_err();
        assert!(
            why.starts_with("the text holds more than 16777216 JSON values"),
            "{why}"
        );
        // A long text of few nodes passes.
        let long = format!("[\"{}\"]", "x".repeat(MAX_NODES));
        assert!(check_nodes(long.as_bytes(), "x").is_ok());
    }

    #[test]
    fn a_split_length_is_the_written_length() {
        let items: Vec<Value> = (0..2500)
            .map(|i| json!({"name": format!("t\"{i}\u{e9}"), "n": i, "x": [1.5, null]}))
            .collect();
        for v in [
            json!({"model": "m", "tools": items.clone(), "q\n": {"a": []}}),
            json!(items),
            json!({"tools": []}),
        ] {
            assert_eq!(compact_len(&v), compact(&v).len());
        }
        // Nested values whose strings and keys need escapes, and numbers of every kind.
        let mut rng = crate::rng::Rng::new(11);
        for _ in 0..300 {
            let v = json!([
                random_value(&mut rng, 5),
                -0.5,
                1e300,
                u64::MAX,
                "\u{1}\u{7f}"
            ]);
            assert_eq!(compact_len(&v), compact(&v).len(), "{v}");
        }
    }

    #[test]
    fn python_spacing_and_ascii_escapes() {
        let v = json!({"a": [1, 2], "d": "x · y"});
        assert_eq!(python_spaced(&v), r#"{"a": [1, 2], "d": "x \u00b7 y"}"#);
        assert_eq!(python_string_len("x · y"), 10);
    }

    #[test]
    fn minify_is_the_character_by_character_rule() {
        // The rule, one character at a time: whitespace outside strings goes, a backslash in
        // a string takes the character after it.
        fn by_chars(text: &str) -> String {
            let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
            for c in text.chars() {
                if in_string {
                    out.push(c);
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        in_string = false;
                    }
                } else if c == '"' {
                    in_string = true;
                    out.push(c);
                } else if !matches!(c, ' ' | '\n' | '\r' | '\t') {
                    out.push(c);
                }
            }
            out
        }
        let alphabet = [
            '"',
            '\\',
            ' ',
            '\n',
            '\t',
            '\r',
            'a',
            '{',
            ':',
            ',',
            '\u{e9}',
            '\u{1f600}',
        ];
        let mut seed = 7u64;
        for len in 0..400 {
            for _ in 0..20 {
                let text: String = (0..len % 40)
                    .map(|_| {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        alphabet[(seed >> 33) as usize % alphabet.len()]
                    })
                    .collect();
                assert_eq!(minify(&text), by_chars(&text), "{text:?}");
            }
        }
    }

    #[test]
    fn minify_keeps_string_whitespace() {
        let text = "{\n  \"a\" : \"b c\\\" d\",\n  \"e\": [1, 2]\n}";
        assert_eq!(minify(text), r#"{"a":"b c\" d","e":[1,2]}"#);
        assert_eq!(
            compact_len(&serde_json::from_str(text).unwrap()),
            minify(text).len()
        );
    }
}

/// Parse JSON text as serde_json does, but refuse an object that names a key twice (serde_json
/// keeps the last one silently): where a file is a record of figures, a second entry under one
/// name is an error to report, not an edit to apply. The answer names the key.
pub fn parse_unique(bytes: &[u8]) -> Result<Value, String> {
    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
    struct Unique;
    impl<'de> DeserializeSeed<'de> for Unique {
        type Value = Value;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Unique {
        type Value = Value;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
        }
        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_string()))
        }
        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_none<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut out = Vec::new();
            while let Some(v) = seq.next_element_seed(Unique)? {
                out.push(v);
            }
            Ok(Value::Array(out))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut out = serde_json::Map::new();
            while let Some(k) = map.next_key::<String>()? {
                let v = map.next_value_seed(Unique)?;
                if out.insert(k.clone(), v).is_some() {
                    return Err(serde::de::Error::custom(format!(
                        "the key `{k}` appears twice in one object"
                    )));
                }
            }
            Ok(Value::Object(out))
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = Unique.deserialize(&mut de).map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(v)
}

#[cfg(test)]
mod unique_tests {
    use super::parse_unique;

    #[test]
    fn a_key_named_twice_is_refused_at_any_depth() {
        assert!(parse_unique(br#"{"a": 1, "b": {"c": [1, 2.5, "x", null, true]}}"#).is_ok());
        let e = parse_unique(br#"{"a": 1, "a": 2}"#).unwrap_err();
        assert!(e.contains("`a` appears twice"), "{e}");
        assert!(parse_unique(br#"{"m": {"p": 1, "p": 1}}"#).is_err());
        assert!(parse_unique(br#"[{"k": 0}, {"k": 0, "k": 1}]"#).is_err());
        assert!(parse_unique(b"{} trailing").is_err());
        assert_eq!(
            parse_unique(br#"{"x": 1e-7}"#).unwrap(),
            serde_json::json!({"x": 1e-7})
        );
    }
}

/// The most values and object members a JSON text from another party may hold before it is
/// parsed into a tree (2^24). A tree costs some 80-110 bytes a node, so a text of tiny nodes
/// (`[{},{},…]`, 3 bytes each) would take about 50 times its size: a 200 MB body made the
/// gateway hold 9.7 GB before this bound (observed on this project's 2-core machine,
/// 2026-12-04). At the bound a tree is at most about 2 GB. Real requests hold far fewer: the
/// 85,600-definition request (46 MB) holds about 2.2 million (assumed margin: 7x that).
pub const MAX_NODES: usize = 1 << 24;

/// How many values and object members `text` holds, counted without parsing it, up to
/// `limit`: `Err(limit + 1)` as soon as it holds more. Each `[`, `{`, `,` and `:` outside a
/// string opens one (a member counts twice, as its key and its value): the figure is the
/// number of containers, keys and values the parser would make, less one, plus one for each
/// empty container. Text that is not JSON is counted as far as
/// it goes; the parser refuses it afterwards.
pub fn nodes_within(text: &[u8], limit: usize) -> Result<usize, usize> {
    let mut n = 0usize;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => match string_end(text, i + 1) {
                Some(end) => {
                    i = end;
                    continue;
                }
                // A string the text ends inside: nothing left to count.
                None => return Ok(n),
            },
            b'[' | b'{' | b',' | b':' => {
                n += 1;
                if n > limit {
                    return Err(limit + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(n)
}

/// Refuse, before parsing, a text from another party that holds more than [`MAX_NODES`]
/// values and members, in words that say so. A text of at most that many bytes cannot, and is
/// not scanned.
pub fn check_nodes(text: &[u8], what: &str) -> Result<(), String> {
    if text.len() <= MAX_NODES {
        return Ok(());
    }
    nodes_within(text, MAX_NODES).map(|_| ()).map_err(|_| {
        format!(
            "{what} holds more than {MAX_NODES} JSON values and members ({} bytes); toolcost \
             does not build a tree that large (it would take some 50 times the text's size)",
            text.len()
        )
    })
}

/// Why text could not be read as JSON, in words: JSON nested deeper than the 128 levels
/// serde_json reads is said to be that (it is JSON, just deeper than toolcost reads), anything
/// else is `not JSON` with the parser's reason.
pub fn why_unreadable(e: &serde_json::Error) -> String {
    match e.to_string().contains("recursion limit") {
        true => format!(
            "JSON nested more than 128 levels deep, which toolcost does not read (line {}, column {})",
            e.line(),
            e.column()
        ),
        false => format!("not JSON: {e}"),
    }
}
