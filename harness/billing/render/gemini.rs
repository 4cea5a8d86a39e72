//! What Gemini bills for a request, by model generation and API, found by test against the
//! recorded requests of `fixtures/gemini-requests` (`toolcost gemini-counts --requests`):
//!
//! - **Roles**: the Developer API bills one token for each Content that names a role (the
//!   system instruction's included) on the 2.5 and later models, none on 2.0 and 1.5; Vertex AI
//!   bills none.
//! - **Declarations** (2.5 and later, Developer API): each function declaration as the Gemma 4
//!   chat template writes a tool, `<|tool>declaration:NAME{description:<|"|>...<|"|>,
//!   parameters:{...}}<tool|>`, its schema's keys sorted and its strings between `<|"|>` marks,
//!   each template mark one token and the text between them counted with the Gemma 3
//!   vocabulary; `$ref` schemas expanded first. The 3.x models leave an empty description out
//!   and write the parameters' own description; the 2.5 models keep the empty one. On Vertex AI
//!   a declaration bills its name alone. Before 2.5, declarations bill as one compact JSON
//!   array (the earlier assumption, recorded error in the report).
//! - **Calls and results** (2.5 and later): `<|tool_call>call:NAME{key:value}<tool_call|>` and
//!   `<|tool_response>response:NAME{key:value}<tool_response|>`, keys sorted, strings marked.
//! - **Thinking** (3.x, Developer API): a model turn sent back with a `thoughtSignature` bills
//!   the thinking of the answer it came from again. The request does not say how much: the
//!   gateway knows from the answers it logged; an offline count says how many turns it could
//!   not price ([`resent_thoughts`]).
//!
//! The structured-output schema (`responseSchema`, `responseJsonSchema`) is not billed: recorded
//! requests with and without one bill the same text.

use crate::wire::ToolRef;
use serde_json::{Map, Value};

/// A Gemini model's generation and the API it is reached through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Gemini {
    /// Major and minor version times ten and one (`gemini-2.5-flash`: 25, `gemini-3-pro`: 30).
    pub generation: u8,
    /// Vertex AI rather than the Developer API.
    pub vertex: bool,
}

/// The generation assumed for a model whose id names none.
pub const CURRENT_GENERATION: u8 = 35;

impl Gemini {
    /// The generation of a model id (`gemini-2.5-flash-lite`, `models/gemini-3-pro-preview`).
    pub fn of_model(model: &str, vertex: bool) -> Gemini {
        let id = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        let generation = id
            .strip_prefix("gemini-")
            .and_then(|rest| {
                let version: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                let mut it = version.split('.');
                let major: u8 = it.next()?.parse().ok()?;
                let minor: u8 = it.next().and_then(|m| m.parse().ok()).unwrap_or(0);
                Some(major.saturating_mul(10).saturating_add(minor.min(9)))
            })
            .unwrap_or(CURRENT_GENERATION);
        Gemini { generation, vertex }
    }

    /// Tokens a Content with a role bills.
    pub fn role_tokens(self) -> f64 {
        match !self.vertex && self.generation >= 25 {
            true => 1.0,
            false => 0.0,
        }
    }

    /// Whether declarations, calls and results bill in the template's form.
    pub fn templated(self) -> bool {
        self.generation >= 25
    }

    /// Whether an earlier turn's thinking is billed again when its signature is sent back.
    pub fn resends_thoughts(self) -> bool {
        !self.vertex && self.generation >= 30
    }
}

/// Text in pieces between template marks, each mark one token.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Marked {
    pub texts: Vec<String>,
    pub marks: usize,
    open: String,
}

impl Marked {
    fn text(&mut self, s: &str) {
        self.open.push_str(s);
    }
    fn mark(&mut self) {
        if !self.open.is_empty() {
            self.texts.push(std::mem::take(&mut self.open));
        }
        self.marks += 1;
    }
    fn quoted(&mut self, s: &str) {
        self.mark();
        self.text(s);
        self.mark();
    }
    fn done(mut self) -> Marked {
        if !self.open.is_empty() {
            self.texts.push(std::mem::take(&mut self.open));
        }
        self
    }
}

/// The deepest `$ref` chain expanded, and the most schema nodes an expansion may make.
const MAX_REF_DEPTH: usize = 8;
const MAX_EXPANDED_NODES: usize = 100_000;

/// A schema with its `$ref`s replaced by the definitions they name (`$defs` or
/// `definitions`), the definitions themselves left out; a chain deeper than
/// [`MAX_REF_DEPTH`] or an expansion past [`MAX_EXPANDED_NODES`] stops where it is.
pub fn expand_refs(schema: &Value) -> Value {
    let empty = Map::new();
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut budget = MAX_EXPANDED_NODES;
    expand(schema, defs, 0, &mut budget)
}

fn expand(v: &Value, defs: &Map<String, Value>, depth: usize, budget: &mut usize) -> Value {
    if *budget == 0 {
        return Value::Null;
    }
    *budget -= 1;
    match v {
        Value::Object(o) => {
            if let Some(target) = o
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.rsplit('/').next())
                .and_then(|name| defs.get(name))
                .filter(|_| depth < MAX_REF_DEPTH)
            {
                let mut merged = target.as_object().cloned().unwrap_or_default();
                for (k, x) in o.iter().filter(|(k, _)| *k != "$ref") {
                    merged.insert(k.clone(), x.clone());
                }
                return expand(&Value::Object(merged), defs, depth + 1, budget);
            }
            Value::Object(
                o.iter()
                    .filter(|(k, _)| *k != "$defs" && *k != "definitions")
                    .map(|(k, x)| (k.clone(), expand(x, defs, depth, budget)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| expand(x, defs, depth, budget)).collect()),
        other => other.clone(),
    }
}

/// The keys the template writes itself in a property (every other is left out).
const STANDARD: [&str; 5] = ["description", "type", "properties", "required", "nullable"];

fn upper(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_ascii_uppercase(),
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .next()
            .unwrap_or("")
            .to_ascii_uppercase(),
        _ => String::new(),
    }
}

/// A value as the template writes an argument: strings marked, objects with sorted keys
/// (marked when `marked_keys`), arrays and scalars as JSON.
fn argument(v: &Value, marked_keys: bool, m: &mut Marked) {
    match v {
        Value::String(s) => m.quoted(s),
        Value::Object(o) => {
            m.text("{");
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    m.text(",");
                }
                match marked_keys {
                    true => m.quoted(k),
                    false => m.text(k),
                }
                m.text(":");
                argument(&o[k.as_str()], marked_keys, m);
            }
            m.text("}");
        }
        Value::Array(a) => {
            m.text("[");
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    m.text(",");
                }
                argument(x, marked_keys, m);
            }
            m.text("]");
        }
        Value::Bool(b) => m.text(if *b { "true" } else { "false" }),
        Value::Null => m.text("null"),
        Value::Number(n) => m.text(&n.to_string()),
    }
}

fn required(list: &Value, m: &mut Marked) {
    m.text("required:[");
    for (i, r) in list.as_array().into_iter().flatten().enumerate() {
        if i > 0 {
            m.text(",");
        }
        m.quoted(r.as_str().unwrap_or(""));
    }
    m.text("]");
}

/// A schema's properties as the template writes them.
fn properties(props: &Map<String, Value>, m: &mut Marked) {
    let mut keys: Vec<&String> = props
        .keys()
        .filter(|k| !STANDARD.contains(&k.as_str()))
        .collect();
    keys.sort();
    for (i, key) in keys.into_iter().enumerate() {
        if i > 0 {
            m.text(",");
        }
        let v = &props[key.as_str()];
        m.text(key);
        m.text(":{");
        let mut first = true;
        let mut sep = |m: &mut Marked| {
            if !std::mem::take(&mut first) {
                m.text(",");
            }
        };
        if let Some(d) = v["description"].as_str().filter(|d| !d.is_empty()) {
            sep(m);
            m.text("description:");
            m.quoted(d);
        }
        let ty = upper(&v["type"]);
        if ty == "STRING" {
            if let Some(e) = v.get("enum").filter(|e| !e.is_null()) {
                sep(m);
                m.text("enum:");
                argument(e, true, m);
            }
        } else if ty == "ARRAY" {
            if let Some(items) = v["items"].as_object().filter(|i| !i.is_empty()) {
                sep(m);
                m.text("items:{");
                let mut keys: Vec<&String> = items.keys().collect();
                keys.sort();
                let mut any = false;
                for k in keys {
                    let x = &items[k.as_str()];
                    if x.is_null() {
                        continue;
                    }
                    if std::mem::replace(&mut any, true) {
                        m.text(",");
                    }
                    match k.as_str() {
                        "properties" => {
                            m.text("properties:{");
                            if let Some(p) = x.as_object() {
                                properties(p, m);
                            }
                            m.text("}");
                        }
                        "required" => required(x, m),
                        "type" => {
                            m.text("type:");
                            m.quoted(&upper(x));
                        }
                        other => {
                            m.text(other);
                            m.text(":");
                            argument(x, true, m);
                        }
                    }
                }
                m.text("}");
            }
        }
        if v["nullable"].as_bool() == Some(true) {
            sep(m);
            m.text("nullable:true");
        }
        if ty == "OBJECT" {
            if let Some(p) = v["properties"].as_object() {
                sep(m);
                m.text("properties:{");
                properties(p, m);
                m.text("}");
            }
            if v["required"].as_array().is_some_and(|r| !r.is_empty()) {
                sep(m);
                required(&v["required"], m);
            }
        }
        sep(m);
        m.text("type:");
        m.quoted(&ty);
        m.text("}");
    }
}

/// One declaration as the template writes it, for a generation.
pub fn declaration(d: ToolRef, g: Gemini) -> Marked {
    let mut m = Marked::default();
    let Some(p) = d.parts() else {
        m.mark();
        m.text(&d.text());
        m.mark();
        return m.done();
    };
    m.mark();
    m.text("declaration:");
    m.text(p.name);
    m.text("{");
    let mut parts = 0;
    if !p.description.is_empty() || g.generation < 30 {
        m.text("description:");
        m.quoted(p.description);
        parts += 1;
    }
    let schema = expand_refs(&p.schema.value());
    if schema.as_object().is_some_and(|o| !o.is_empty()) {
        if parts > 0 {
            m.text(",");
        }
        m.text("parameters:{");
        if g.generation >= 30 {
            if let Some(desc) = schema["description"].as_str().filter(|s| !s.is_empty()) {
                m.text("description:");
                m.quoted(desc);
                m.text(",");
            }
        }
        if let Some(props) = schema["properties"].as_object().filter(|o| !o.is_empty()) {
            m.text("properties:{");
            properties(props, &mut m);
            m.text("},");
        }
        if schema["required"].as_array().is_some_and(|r| !r.is_empty()) {
            required(&schema["required"], &mut m);
            m.text(",");
        }
        if !schema["type"].is_null() {
            m.text("type:");
            m.quoted(&upper(&schema["type"]));
        }
        m.text("}");
    }
    m.text("}");
    m.mark();
    m.done()
}

/// A `functionCall` or `functionResponse` part as the template writes it.
pub fn call_or_result(part: &Value) -> Option<Marked> {
    let (call, v) = match (part.get("functionCall"), part.get("functionResponse")) {
        (Some(c), _) => (true, c),
        (None, Some(r)) => (false, r),
        (None, None) => return None,
    };
    let mut m = Marked::default();
    m.mark();
    m.text(if call { "call:" } else { "response:" });
    m.text(v["name"].as_str().unwrap_or(""));
    let payload = match call {
        true => &v["args"],
        false => &v["response"],
    };
    match payload {
        Value::Object(o) => argument(&Value::Object(o.clone()), false, &mut m),
        Value::Null if call => m.text("{}"),
        other => {
            m.text("{value:");
            argument(other, false, &mut m);
            m.text("}");
        }
    }
    m.mark();
    Some(m.done())
}

/// The signature Google's clients send when they have none of Gemini's own (it asks the API to
/// skip validation): it carries no thinking.
const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// The `thoughtSignature`s of a request's model turns that carry a real signature, one per
/// turn (the first of its parts'): each bills the thinking of the answer it came from again
/// on the 3.x models. A turn that sends its thinking back as text (`thought` parts) bills that
/// text instead (recorded: such a request bills its thought text and no more).
pub fn resent_thoughts(contents: &[Value]) -> Vec<&str> {
    contents
        .iter()
        .filter(|c| c["role"] == "model")
        .filter(|c| {
            !c["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["thought"] == true && p["text"].is_string())
        })
        .filter_map(|c| {
            c["parts"]
                .as_array()?
                .iter()
                .filter_map(|p| p["thoughtSignature"].as_str())
                .find(|s| !is_skip(s))
        })
        .collect()
}

fn is_skip(signature: &str) -> bool {
    use base64::Engine;
    // Padding or none: the sentinel's canonical encoding either way.
    signature == SKIP_SIGNATURE
        || base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(signature.trim_end_matches('='))
            .is_ok_and(|d| d == SKIP_SIGNATURE.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flat(m: &Marked) -> (String, usize) {
        (m.texts.join("|"), m.marks)
    }

    #[test]
    fn generations_from_ids() {
        for (id, g) in [
            ("gemini-2.5-flash-lite", 25),
            ("models/gemini-3-pro-preview", 30),
            ("gemini-3.5-flash", 35),
            ("gemini-1.5-flash", 15),
            ("gemini-2.0-flash-exp", 20),
            ("learnlm", CURRENT_GENERATION),
        ] {
            assert_eq!(Gemini::of_model(id, false).generation, g, "{id}");
        }
        assert_eq!(
            Gemini::of_model("gemini-2.5-flash", true).role_tokens(),
            0.0
        );
        assert_eq!(
            Gemini::of_model("gemini-2.0-flash", false).role_tokens(),
            0.0
        );
        assert_eq!(
            Gemini::of_model("gemini-2.5-flash", false).role_tokens(),
            1.0
        );
    }

    #[test]
    fn a_declaration_is_written_as_the_template_writes_it() {
        let d = json!({"name": "get_weather", "description": "Get it.", "parameters":
            {"type": "object", "properties": {"city": {"type": "string", "description": "A city."}},
             "required": ["city"]}});
        let g3 = Gemini::of_model("gemini-3-flash", false);
        let (text, marks) = flat(&declaration(ToolRef::Json(&d), g3));
        assert_eq!(
            text,
            "declaration:get_weather{description:|Get it.|,parameters:{properties:{city:{description:|A city.|,type:|STRING|}},required:[|city|],type:|OBJECT|}}"
        );
        assert_eq!(marks, 2 + 2 + 2 + 2 + 2 + 2);
        let empty = json!({"name": "n", "description": "", "parameters": {"type": "object"}});
        assert!(!flat(&declaration(ToolRef::Json(&empty), g3))
            .0
            .contains("description"));
        let g25 = Gemini::of_model("gemini-2.5-flash", false);
        assert!(flat(&declaration(ToolRef::Json(&empty), g25))
            .0
            .contains("description"));
    }

    #[test]
    fn refs_are_expanded_and_bounded() {
        let s = json!({"$defs": {"A": {"type": "string"}}, "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}}});
        assert_eq!(
            expand_refs(&s),
            json!({"type": "object", "properties": {"a": {"type": "string"}}})
        );
        // A definition that names itself stops at the depth bound.
        let r = json!({"$defs": {"R": {"type": "object", "properties": {"next": {"$ref": "#/$defs/R"}}}},
            "$ref": "#/$defs/R"});
        let e = expand_refs(&r).to_string();
        assert!(e.matches("next").count() <= MAX_REF_DEPTH + 1, "{e}");
    }

    #[test]
    fn calls_and_results() {
        let (t, marks) = flat(
            &call_or_result(&json!({"functionCall": {"name": "f", "args": {"b": 1, "a": "x"}}}))
                .unwrap(),
        );
        assert_eq!((t.as_str(), marks), ("call:f{a:|x|,b:1}", 4));
        let (t, _) = flat(
            &call_or_result(&json!({"functionResponse": {"name": "f", "response": {"ok": true}}}))
                .unwrap(),
        );
        assert_eq!(t, "response:f{ok:true}");
    }

    #[test]
    fn skip_signatures_carry_no_thinking() {
        let contents = json!([
            {"role": "model", "parts": [{"text": "a", "thoughtSignature": "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="}]},
            {"role": "model", "parts": [{"text": "b", "thoughtSignature": "Q2lVQk1..."}]},
            {"role": "user", "parts": [{"text": "c", "thoughtSignature": "x"}]}
        ]);
        assert_eq!(
            resent_thoughts(contents.as_array().unwrap()),
            vec!["Q2lVQk1..."]
        );
    }
}
