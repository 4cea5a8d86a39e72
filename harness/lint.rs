//! `toolcost lint`: strict-schema violations per tool, and the normalised `tools/list`.

use crate::catalogue::Catalogue;
use crate::schema::{self, Change, Violation};
use serde::Serialize;
use serde_json::{json, Value};

/// Violations of one tool (or row).
#[derive(Debug, Clone, Serialize)]
pub struct ToolReport {
    pub name: String,
    pub violations: Vec<Violation>,
    /// Where the normal form (`lint --fix`) accepts other arguments than the schema does,
    /// because the strict rules cannot say what the schema says.
    pub changes: Vec<Change>,
}

/// Two tools with one name are an error everywhere (lint, weigh, check): a client keeps one of
/// them, so whatever is counted for the other is wrong. The error names each repeated name
/// and the positions it occurs at.
pub fn unique_names<'a>(names: impl IntoIterator<Item = &'a str>) -> crate::error::Result<()> {
    let mut at: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for (i, n) in names.into_iter().enumerate() {
        at.entry(n).or_default().push(i + 1);
    }
    let repeated: Vec<String> = at
        .iter()
        .filter(|(_, places)| places.len() > 1)
        .map(|(n, places)| {
            let places: Vec<String> = places.iter().map(ToString::to_string).collect();
            format!("`{n}` (tools {})", places.join(", "))
        })
        .collect();
    if repeated.is_empty() {
        return Ok(());
    }
    Err(crate::error::Error::input(format!(
        "{} name(s) given to more than one tool: {}; a client keeps only one tool per name, so the others would be counted but never seen",
        repeated.len(),
        repeated.join("; ")
    )))
}

/// A row's input schema, or the empty object schema where it has none.
fn input_schema(r: &crate::catalogue::Row) -> Value {
    r.input_schema
        .as_ref()
        .map_or_else(crate::catalogue::empty_schema, |s| s.value())
}

/// What Gemini refuses of one tool sent with `parameters` (its OpenAPI-subset schema): the
/// first fault of its name and of its schema. Clients that send `parametersJsonSchema` (Gemini
/// CLI, toolcost's surfaces) are not refused these.
#[derive(Debug, Clone, Serialize)]
pub struct GeminiFault {
    pub name: String,
    pub fault: String,
}

/// Every tool Gemini's `parameters` would refuse, and why.
pub fn gemini_subset(cat: &Catalogue) -> Vec<GeminiFault> {
    use crate::provider::gemini;
    cat.rows
        .iter()
        .filter_map(|r| {
            let fault = match gemini::valid_name(&r.key) {
                false => Some(format!(
                    "the name is not one Gemini takes: {}",
                    gemini::name_rule()
                )),
                true => gemini::subset_fault(&input_schema(r), "parameters", &mut 100_000),
            };
            fault.map(|fault| GeminiFault {
                name: r.key.clone(),
                fault,
            })
        })
        .collect()
}

/// Lint every tool's input schema; tools without violations are left out.
pub fn lint(cat: &Catalogue) -> Vec<ToolReport> {
    cat.rows
        .iter()
        .filter_map(|r| {
            let schema = input_schema(r);
            let violations = schema::validate(&schema);
            (!violations.is_empty()).then(|| ToolReport {
                name: r.key.clone(),
                violations,
                changes: schema::normalise_reported(&schema).changes,
            })
        })
        .collect()
}

/// Human-readable report: each tool's violations by JSON pointer, then a summary line.
pub fn text(cat: &Catalogue, reports: &[ToolReport]) -> String {
    let mut out = String::new();
    for r in reports {
        out.push_str(&format!(
            "{}: {} violation(s)\n",
            r.name,
            r.violations.len()
        ));
        for v in &r.violations {
            out.push_str(&format!("  {v}\n"));
        }
        if !r.changes.is_empty() {
            out.push_str("  the normal form cannot keep exactly what this schema accepts:\n");
            for c in &r.changes {
                out.push_str(&format!("    {c}\n"));
            }
        }
    }
    let total: usize = reports.iter().map(|r| r.violations.len()).sum();
    out.push_str(&format!(
        "{} of {} tools have strict-schema violations ({total} in all){}\n",
        reports.len(),
        cat.rows.len(),
        if reports.is_empty() {
            ""
        } else {
            "; `toolcost lint --fix -o OUT` writes a normalised tools/list"
        }
    ));
    out
}

/// The `_meta` key under which a normalised tool lists what its normal form changes.
pub const META_NORMALISED: &str = "toolcost/normalised";

/// The catalogue's `tools/list` result with every input schema normalised; other fields kept.
/// A tool whose normal form accepts other arguments than its schema says so in its `_meta`
/// ([`META_NORMALISED`]: pointer, effect and reason of each change), where clients and people
/// can read it and no provider rendering sends it to the model.
pub fn fixed_tools_list(cat: &Catalogue) -> String {
    let tools: Vec<Value> = cat
        .tools
        .iter()
        .map(|t| {
            let mut v = t.parsed().into_owned();
            if let Some(obj) = v.as_object_mut() {
                let r = schema::normalise_reported(
                    obj.get("inputSchema")
                        .unwrap_or(&crate::catalogue::empty_schema()),
                );
                obj.insert("inputSchema".into(), r.schema);
                if !r.changes.is_empty() {
                    let meta = obj.entry("_meta").or_insert_with(|| json!({}));
                    if let Some(meta) = meta.as_object_mut() {
                        meta.insert(META_NORMALISED.into(), json!(r.changes));
                    }
                }
            }
            v
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&json!({ "tools": tools })).expect("serialises");
    s.push('\n');
    s
}
