//! JSON as the templates' `tojson` writes it: Python's `json.dumps` with `ensure_ascii=False`
//! (or, as plain `json.dumps` writes it, `True`: every character outside ASCII's printable range
//! as `\uXXXX`, astral ones as a surrogate pair), the separators `", "` and `": "` (or compact ones), keys as sent or sorted, and an indent.
//! Strings and numbers are escaped as Python escapes them, which is as serde_json does
//! (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, other control characters as `\u00XX`).

use serde_json::Value;

/// How `tojson` was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// `", "` and `": "` (Python's default) rather than `","` and `":"`.
    pub spaced: bool,
    pub sorted: bool,
    /// `indent=N`: newlines and N spaces a level (the item separator is then `","`).
    pub indent: Option<usize>,
    /// `ensure_ascii=True`.
    pub ascii: bool,
}

/// `json.dumps(v, ensure_ascii=False)`: spaced, keys as sent.
pub const SPACED: Style = Style {
    spaced: true,
    sorted: false,
    indent: None,
    ascii: false,
};

/// `json.dumps(v)`, Python's defaults: spaced, keys as sent, `ensure_ascii=True`.
pub const PYTHON_DEFAULT: Style = Style {
    ascii: true,
    ..SPACED
};

/// `tojson(separators=(',', ':'))`.
pub const COMPACT: Style = Style {
    spaced: false,
    sorted: false,
    indent: None,
    ascii: false,
};

/// `v` written in `style`.
pub fn dumps(v: &Value, style: Style) -> String {
    let mut out = String::new();
    write(v, style, 0, &mut out);
    out
}

fn write(v: &Value, style: Style, level: usize, out: &mut String) {
    let (item_sep, key_sep) = match (style.indent, style.spaced) {
        (Some(_), _) => (",", ": "),
        (None, true) => (", ", ": "),
        (None, false) => (",", ":"),
    };
    let newline = |out: &mut String, level: usize| {
        if let Some(n) = style.indent {
            out.push('\n');
            out.push_str(&" ".repeat(n * level));
        }
    };
    match v {
        Value::Object(o) if !o.is_empty() => {
            out.push('{');
            let mut keys: Vec<&String> = o.keys().collect();
            if style.sorted {
                keys.sort();
            }
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, level + 1);
                string(k, style.ascii, out);
                out.push_str(key_sep);
                write(&o[k], style, level + 1, out);
            }
            newline(out, level);
            out.push('}');
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, level + 1);
                write(x, style, level + 1, out);
            }
            newline(out, level);
            out.push(']');
        }
        Value::Object(_) => out.push_str("{}"),
        Value::Array(_) => out.push_str("[]"),
        Value::Number(n) => out.push_str(&py_number(n)),
        Value::String(t) => string(t, style.ascii, out),
        other => out.push_str(&serde_json::to_string(other).unwrap_or_default()),
    }
}

/// A string as Python writes it: `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, other control
/// characters as `\u00XX`; with `ascii`, DEL and everything past ASCII as `\uXXXX` too.
fn string(s: &str, ascii: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (ascii && (c as u32) >= 0x7f) => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number as Python writes it: integers as they are, floats with a `.0` where they have
/// no fraction, exponents as `1e-05`.
pub fn py_number(n: &serde_json::Number) -> String {
    if n.is_f64() {
        let f = n.as_f64().unwrap_or(0.0);
        py_float(f)
    } else {
        n.to_string()
    }
}

/// Python's `repr` of a float.
pub fn py_float(f: f64) -> String {
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        // Python: 1e-05, 1.5e+20.
        let s = format!("{f:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let s = format!("{f}");
    match s.contains('.') {
        true => s,
        false => format!("{s}.0"),
    }
}

/// Python's `str` of a value, as Jinja's `string` filter writes it: a string as itself, `True`,
/// `False`, `None`, a number as Python writes it, and a list or a dict as Python's `repr` (keys
/// in order, strings quoted as `repr` quotes them).
pub fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// A value as the templates that write calls and schemas as XML write one (Qwen 3.5's and
/// Qwen3-Coder's): JSON for a list or an object, else Python's `str`.
pub fn template_value(v: &Value) -> String {
    match v {
        Value::Object(_) | Value::Array(_) => dumps(v, SPACED),
        other => py_str(other),
    }
}

fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => py_number(n),
        Value::String(s) => {
            // `repr` quotes with ' unless the text has a ' and no ".
            let q = if s.contains('\'') && !s.contains('"') {
                '"'
            } else {
                '\''
            };
            let mut out = String::with_capacity(s.len() + 2);
            out.push(q);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c == q => {
                        out.push('\\');
                        out.push(c);
                    }
                    c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                        out.push_str(&format!("\\x{:02x}", c as u32))
                    }
                    c => out.push(c),
                }
            }
            out.push(q);
            out
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(py_repr).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", py_repr(&Value::String(k.clone())), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `v` with every object's keys sorted, deeply (Moonshot's `deep_sort_dict`).
pub fn deep_sorted(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), deep_sorted(&o[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(deep_sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn as_python_writes_it() {
        let v = json!({"b": [1, 2.0, "é\n"], "a": {}, "c": {"x": null, "y": true}});
        assert_eq!(
            dumps(&v, SPACED),
            r#"{"b": [1, 2.0, "é\n"], "a": {}, "c": {"x": null, "y": true}}"#
        );
        assert_eq!(
            dumps(
                &v,
                Style {
                    sorted: true,
                    ..COMPACT
                }
            ),
            r#"{"a":{},"b":[1,2.0,"é\n"],"c":{"x":null,"y":true}}"#
        );
        assert_eq!(
            dumps(
                &json!({"a": [1]}),
                Style {
                    indent: Some(4),
                    ..SPACED
                }
            ),
            "{\n    \"a\": [\n        1\n    ]\n}"
        );
        assert_eq!(
            dumps(
                &json!({"k\u{e9}": "a\u{7f}\u{1F600}\"\u{1}"}),
                PYTHON_DEFAULT
            ),
            r#"{"k\u00e9": "a\u007f\ud83d\ude00\"\u0001"}"#
        );
        assert_eq!(py_float(1e-5), "1e-05");
        assert_eq!(py_float(0.5), "0.5");
    }
}
