//! Tool declarations as TypeScript, in the two dialects open models read:
//! - Kimi K2.5+ (`tool_declaration_ts` of Moonshot's tokenizer, applied to the deep-sorted
//!   tools): required properties first then optional ones, each sorted, indented two spaces a
//!   level, comments for descriptions, constraints and defaults, `additionalProperties` as an
//!   index signature, `$defs` as interfaces; a schema it cannot write (`oneOf`, an unknown
//!   `$ref`, a node with no type) makes the whole request fall back to compact JSON.
//! - harmony (gpt-oss): properties in the order sent, no indent at the top, `?` for optional,
//!   a trailing comma on every property, `T[]` arrays, `oneOf` as `|` lines; constraints and
//!   `additionalProperties` not written.

use super::pyjson;
use serde_json::{Map, Value};

// ---------------------------------------------------------------- Kimi K2.5+

/// The tools section Kimi K2.5+ declares (`# Tools` ... `namespace functions {` ... `}`), or
/// `None` where the TypeScript writer refuses a schema (the template then writes JSON).
pub fn kimi(tools: &[Value]) -> Option<String> {
    let mut functions = Vec::new();
    for t in tools {
        let t = pyjson::deep_sorted(t);
        if t["type"] != "function" {
            continue;
        }
        let f = &t["function"];
        if f.as_object().is_none_or(|o| o.is_empty()) {
            continue;
        }
        functions.push(kimi_function(f)?);
    }
    if functions.is_empty() {
        return Some(String::new());
    }
    Some(format!(
        "# Tools\n\n## functions\nnamespace functions {{\n{}\n}}\n",
        functions.join("\n")
    ))
}

const IND: &str = "  ";

fn comment_lines(text: &str, indent: &str) -> String {
    text.split('\n')
        .map(|l| match l.is_empty() {
            true => String::new(),
            false => format!("{indent}// {l}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What `$ref`s may name: the `$defs` met while reading, and whether `#` was named.
#[derive(Default)]
struct Registry {
    defs: Vec<(String, Value)>,
    self_ref: bool,
}

impl Registry {
    fn register(&mut self, schema: &Value) {
        if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
            for (k, v) in defs {
                match self.defs.iter_mut().find(|(n, _)| n == k) {
                    Some(slot) => slot.1 = v.clone(),
                    None => self.defs.push((k.clone(), v.clone())),
                }
            }
        }
    }
}

fn kimi_function(f: &Value) -> Option<String> {
    let mut reg = Registry::default();
    let params = match &f["parameters"] {
        Value::Object(o) if !o.is_empty() => Value::Object(o.clone()),
        _ => Value::Object(Map::new()),
    };
    reg.register(&params);
    let root = object(&params, "", &mut reg)?;
    let mut interfaces = Vec::new();
    let mut root_name = None;
    if reg.self_ref {
        root_name = Some("parameters");
        let props = properties(&params, IND, &mut reg, false)?;
        let body = match props.is_empty() {
            true => String::new(),
            false => format!("\n{}\n", props.join(",\n")),
        };
        interfaces.push(format!("interface parameters {{{body}}}"));
    }
    let defs = reg.defs.clone();
    for (name, schema) in &defs {
        let ts = kimi_type(schema, "", &mut reg)?.ts;
        let desc = schema["description"].as_str().unwrap_or("");
        let head = match desc.is_empty() {
            true => String::new(),
            false => comment_lines(desc, "") + "\n",
        };
        interfaces.push(format!("{head}interface {name} {ts}"));
    }
    let name = f["name"].as_str().unwrap_or("function");
    let type_def = match root_name {
        Some(r) => format!("type {name} = (_: {r}) => any;"),
        None => format!("type {name} = (_: {root}) => any;"),
    };
    let desc = f["description"].as_str().unwrap_or("");
    let parts = [
        interfaces.join("\n"),
        match desc.is_empty() {
            true => String::new(),
            false => comment_lines(desc, ""),
        },
        type_def,
    ];
    Some(
        parts
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// A written type and the comment lines that go above whatever holds it.
struct Ts {
    ts: String,
    doc: String,
}

/// Python's `str()` of a constraint's value.
fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        Value::Number(n) => pyjson::py_number(n),
        other => pyjson::dumps(other, pyjson::SPACED),
    }
}

fn docstring(schema: &Value, constraint_keys: &[&str], indent: &str) -> String {
    let mut lines = Vec::new();
    let desc = schema["description"].as_str().unwrap_or("");
    if !desc.is_empty() {
        lines.push(comment_lines(desc, indent));
    }
    let mut cons: Vec<(&str, &Value)> = constraint_keys
        .iter()
        .filter_map(|k| schema.get(*k).map(|v| (*k, v)))
        .collect();
    cons.sort_by(|a, b| a.0.cmp(b.0));
    if !cons.is_empty() {
        let s: Vec<String> = cons
            .iter()
            .map(|(k, v)| format!("{k}: {}", py_str(v)))
            .collect();
        lines.push(format!("{indent}// {}", s.join(", ")));
    }
    lines.into_iter().map(|l| l + "\n").collect()
}

fn kimi_type(schema: &Value, indent: &str, reg: &mut Registry) -> Option<Ts> {
    let doc = |keys: &[&str]| docstring(schema, keys, indent);
    let o = match schema {
        Value::Bool(true) => {
            return Some(Ts {
                ts: "any".into(),
                doc: String::new(),
            })
        }
        Value::Bool(false) => {
            return Some(Ts {
                ts: "null".into(),
                doc: String::new(),
            })
        }
        Value::Object(o) => o,
        _ => return None,
    };
    if let Some(r) = o.get("$ref") {
        let r = r.as_str()?;
        let name = if r == "#" {
            reg.self_ref = true;
            "parameters".to_string()
        } else {
            let n = r.strip_prefix("#/$defs/")?;
            reg.defs
                .iter()
                .any(|(d, _)| d == n)
                .then(|| n.to_string())?
        };
        return Some(Ts {
            ts: name,
            doc: doc(&[]),
        });
    }
    if let Some(any) = o.get("anyOf") {
        let mut ts = Vec::new();
        for t in any.as_array()? {
            ts.push(kimi_type(t, indent, reg)?.ts);
        }
        return Some(Ts {
            ts: ts.join(" | "),
            doc: doc(&[]),
        });
    }
    if let Some(e) = o.get("enum") {
        let vals: Vec<String> = e
            .as_array()?
            .iter()
            .map(|v| match v {
                Value::String(s) => format!("\"{s}\""),
                other => py_str(other),
            })
            .collect();
        return Some(Ts {
            ts: vals.join(" | "),
            doc: doc(&[]),
        });
    }
    match o.get("type") {
        Some(Value::Array(types)) => {
            let mut ts = Vec::new();
            for t in types {
                ts.push(match t.as_str()? {
                    "string" => "string",
                    "number" | "integer" => "number",
                    "boolean" => "boolean",
                    "null" => "null",
                    "object" => "{}",
                    "array" => "Array<any>",
                    _ => return None,
                });
            }
            Some(Ts {
                ts: ts.join(" | "),
                doc: doc(&[]),
            })
        }
        Some(Value::String(t)) if t == "object" => Some(Ts {
            ts: object(schema, indent, reg)?,
            doc: doc(&[]),
        }),
        Some(Value::String(t)) if t == "array" => {
            let deeper = format!("{indent}{IND}");
            let ts = match o.get("items") {
                // An absent or empty `items` is `any`.
                Some(i)
                    if i.as_object().is_some_and(|m| !m.is_empty()) || i == &Value::Bool(true) =>
                {
                    let item_doc = item_docstring(i, &deeper);
                    match item_doc.is_empty() {
                        true => format!("Array<{}>", kimi_type(i, indent, reg)?.ts),
                        false => format!(
                            "Array<\n{item_doc}{deeper}{}\n{indent}>",
                            kimi_type(i, &deeper, reg)?.ts
                        ),
                    }
                }
                _ => "Array<any>".into(),
            };
            Some(Ts {
                ts,
                doc: doc(&["minItems", "maxItems"]),
            })
        }
        Some(Value::String(t)) => {
            let keys: &[&str] = match t.as_str() {
                "string" => &["maxLength", "minLength", "pattern"],
                "number" | "integer" => &["maximum", "minimum"],
                _ => &[],
            };
            Some(Ts {
                ts: if t == "integer" {
                    "number".into()
                } else {
                    t.clone()
                },
                doc: doc(keys),
            })
        }
        Some(_) => None,
        None if o.is_empty() => Some(Ts {
            ts: "any".into(),
            doc: String::new(),
        }),
        None => None,
    }
}

/// The comments an array's item writes above itself (its description and constraints).
fn item_docstring(item: &Value, indent: &str) -> String {
    let keys: &[&str] = match item["type"].as_str() {
        _ if item.get("$ref").is_some()
            || item.get("anyOf").is_some()
            || item.get("enum").is_some() =>
        {
            &[]
        }
        Some("string") => &["maxLength", "minLength", "pattern"],
        Some("number" | "integer") => &["maximum", "minimum"],
        Some("array") => &["minItems", "maxItems"],
        _ => &[],
    };
    docstring(item, keys, indent)
}

fn properties(schema: &Value, indent: &str, reg: &mut Registry, sort: bool) -> Option<Vec<String>> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Some(Vec::new());
    };
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut names: Vec<(&String, bool)> = props
        .keys()
        .map(|k| (k, !required.contains(&k.as_str())))
        .collect();
    if sort {
        names.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(b.0)));
    }
    let mut out = Vec::new();
    for (name, optional) in names {
        let p = &props[name];
        let t = kimi_type(p, indent, reg)?;
        let mut comments = t.doc;
        if let Some(d) = p.get("default").filter(|d| !d.is_null()) {
            let repr = match d {
                Value::Number(_) | Value::Bool(_) => py_str(d),
                other => pyjson::dumps(other, pyjson::SPACED),
            };
            comments.push_str(&format!("{indent}// Default: {repr}\n"));
        }
        out.push(format!(
            "{comments}{indent}{name}{}: {}",
            if optional { "?" } else { "" },
            t.ts
        ));
    }
    Some(out)
}

fn object(schema: &Value, indent: &str, reg: &mut Registry) -> Option<String> {
    reg.register(schema);
    let inner = format!("{indent}{IND}");
    let mut lines = properties(schema, &inner, reg, true)?;
    match schema.get("additionalProperties") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(true)) => lines.push(format!("{inner}[k: string]: any")),
        Some(Value::Bool(false)) => lines.push(format!("{inner}[k: string]: never")),
        Some(ap @ Value::Object(_)) => {
            let t = kimi_type(ap, &inner, reg)?.ts;
            lines.push(format!("{inner}[k: string]: {t}"));
        }
        Some(_) => return None,
    }
    Some(match lines.is_empty() {
        true => "{}".into(),
        false => format!("{{\n{}\n{indent}}}", lines.join(",\n")),
    })
}

// ---------------------------------------------------------------- harmony

/// The harmony tools section for functions (`# Tools` ... `} // namespace functions`).
pub fn harmony(tools: &[Value]) -> String {
    let mut lines = vec![
        "## functions\n".to_string(),
        "namespace functions {\n".to_string(),
    ];
    for t in tools {
        let f = &t["function"];
        for l in f["description"].as_str().unwrap_or("").lines() {
            lines.push(format!("// {l}"));
        }
        let name = f["name"].as_str().unwrap_or("");
        match &f["parameters"] {
            Value::Null => lines.push(format!("type {name} = () => any;\n")),
            p => lines.push(format!(
                "type {name} = (_: {}) => any;\n",
                harmony_type(p, "")
            )),
        }
    }
    lines.push("} // namespace functions".into());
    format!("# Tools\n\n{}", lines.join("\n"))
}

fn default_comment(v: &Value) -> String {
    match v.get("default") {
        Some(Value::String(s)) if v.get("enum").is_none() => format!("default: \"{s}\""),
        Some(Value::String(s)) => format!("default: {s}"),
        Some(d) => format!("default: {}", crate::json::compact(d)),
        None => String::new(),
    }
}

fn nullable(v: &Value, ts: String) -> String {
    match v["nullable"].as_bool() == Some(true) && !ts.contains("null") {
        true => format!("{ts} | null"),
        false => ts,
    }
}

fn harmony_type(schema: &Value, indent: &str) -> String {
    if let Some(variants) = schema.get("oneOf").and_then(Value::as_array) {
        let mut out = String::new();
        for v in variants {
            out.push_str(&format!("\n{indent} | "));
            out.push_str(&nullable(v, harmony_type(v, &format!("{indent}   "))));
            let mut trailing: Vec<String> = Vec::new();
            if let Some(d) = v["description"].as_str() {
                trailing.push(d.into());
            }
            let dc = default_comment(v);
            if !dc.is_empty() {
                trailing.push(dc);
            }
            if !trailing.is_empty() {
                out.push_str(&format!(" // {}", trailing.join(" ")));
            }
        }
        return out;
    }
    if let Some(types) = schema.get("type").and_then(Value::as_array) {
        let ts: Vec<&str> = types
            .iter()
            .filter_map(Value::as_str)
            .map(|t| if t == "integer" { "number" } else { t })
            .collect();
        if !ts.is_empty() {
            return ts.join(" | ");
        }
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => {
            let mut out = String::new();
            if let Some(d) = schema["description"].as_str() {
                out.push_str(&format!("{indent}// {d}\n"));
            }
            out.push_str("{\n");
            let required: Vec<&str> = schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for (key, val) in schema["properties"].as_object().into_iter().flatten() {
                let opt = if required.contains(&key.as_str()) {
                    ""
                } else {
                    "?"
                };
                if let Some(t) = val["title"].as_str() {
                    out.push_str(&format!("{indent}// {t}\n{indent}//\n"));
                }
                let one_of = val.get("oneOf").and_then(Value::as_array);
                if one_of.is_none() {
                    if let Some(d) = val["description"].as_str() {
                        out.push_str(&format!("{indent}// {d}\n"));
                    }
                }
                if let Some(ex) = val["examples"].as_array().filter(|a| !a.is_empty()) {
                    out.push_str(&format!("{indent}// Examples:\n"));
                    for e in ex.iter().filter_map(Value::as_str) {
                        out.push_str(&format!("{indent}// - \"{e}\"\n"));
                    }
                }
                if let Some(variants) = one_of {
                    let prop_desc = val["description"].as_str();
                    let first_desc = variants.first().and_then(|v| v["description"].as_str());
                    let above = prop_desc.is_some() && prop_desc != first_desc;
                    if let (true, Some(d)) = (above, prop_desc) {
                        out.push_str(&format!("{indent}// {d}\n"));
                    }
                    let dc = default_comment(val);
                    if !dc.is_empty() {
                        out.push_str(&format!("{indent}// {dc}\n"));
                    }
                    out.push_str(&format!("{indent}{key}{opt}:\n"));
                    for (i, v) in variants.iter().enumerate() {
                        out.push_str(&format!("{indent} | "));
                        out.push_str(&nullable(v, harmony_type(v, &format!("{indent}   "))));
                        let mut trailing: Vec<String> = Vec::new();
                        if !(i == 0 && above) {
                            if let Some(d) =
                                v["description"].as_str().filter(|d| Some(*d) != prop_desc)
                            {
                                trailing.push(d.into());
                            }
                        }
                        let dc = default_comment(v);
                        if !dc.is_empty() {
                            trailing.push(dc);
                        }
                        if !trailing.is_empty() {
                            out.push_str(&format!(" // {}", trailing.join(" ")));
                        }
                        out.push('\n');
                    }
                    out.push_str(&format!("{indent},\n"));
                    continue;
                }
                out.push_str(&format!("{indent}{key}{opt}: "));
                out.push_str(&nullable(val, harmony_type(val, &format!("{indent}    "))));
                out.push(',');
                let dc = default_comment(val);
                if !dc.is_empty() {
                    out.push_str(&format!(" // {dc}"));
                }
                out.push('\n');
            }
            out.push_str(&format!("{indent}}}"));
            out
        }
        Some("string") => {
            let e: Vec<String> = schema["enum"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|s| format!("\"{s}\""))
                .collect();
            match e.is_empty() {
                true => "string".into(),
                false => e.join(" | "),
            }
        }
        Some("number" | "integer") => "number".into(),
        Some("boolean") => "boolean".into(),
        Some("array") => match schema.get("items") {
            Some(items) => format!("{}[]", harmony_type(items, indent)),
            None => "Array<any>".into(),
        },
        _ => "any".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn weather() -> Vec<Value> {
        vec![
            json!({"type": "function", "function": {"name": "get_weather",
            "description": "Get the current weather for a city.",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["c", "f"]}},
                "required": ["city"]}}}),
        ]
    }

    /// The declarations of the reference renderers for one tool (Moonshot's
    /// `tool_declaration_ts` and openai-harmony, run on this tool).
    #[test]
    fn one_tool_as_each_reference_writes_it() {
        assert_eq!(
            kimi(&weather()).unwrap(),
            "# Tools\n\n## functions\nnamespace functions {\n// Get the current weather for a city.\ntype get_weather = (_: {\n  // City name\n  city: string,\n  unit?: \"c\" | \"f\"\n}) => any;\n}\n"
        );
        assert_eq!(
            harmony(&weather()),
            "# Tools\n\n## functions\n\nnamespace functions {\n\n// Get the current weather for a city.\ntype get_weather = (_: {\n// City name\ncity: string,\nunit?: \"c\" | \"f\",\n}) => any;\n\n} // namespace functions"
        );
    }

    /// Kimi: constraints, defaults, nested objects, arrays with documented items, refs, and the
    /// refusal a `oneOf` causes.
    #[test]
    fn kimi_writes_constraints_nesting_and_refs() {
        let t = vec![json!({"type": "function", "function": {"name": "f",
            "parameters": {"type": "object", "additionalProperties": false,
                "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}}},
                "properties": {
                    "n": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
                    "tags": {"type": "array", "items": {"type": "string", "description": "a tag"}},
                    "p": {"$ref": "#/$defs/P"},
                    "o": {"type": "object", "properties": {"k": {"type": "boolean"}}, "required": ["k"]}},
                "required": ["p"]}}})];
        assert_eq!(
            kimi(&t).unwrap(),
            "# Tools\n\n## functions\nnamespace functions {\ninterface P {\n  x?: number\n}\ntype f = (_: {\n  p: P,\n  // maximum: 5, minimum: 1\n  // Default: 2\n  n?: number,\n  o?: {\n    k: boolean\n  },\n  tags?: Array<\n    // a tag\n    string\n  >,\n  [k: string]: never\n}) => any;\n}\n"
        );
        let bad = vec![json!({"type": "function", "function": {"name": "g",
            "parameters": {"type": "object", "properties": {"u": {"oneOf": [{"type": "string"}]}}}}})];
        assert_eq!(kimi(&bad), None);
    }
}
