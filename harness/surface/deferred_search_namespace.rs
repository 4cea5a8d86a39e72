//! `deferred-search-namespace`: the per-row definitions grouped into OpenAI Responses
//! namespaces, one per catalogue category (a connector each, as in the name list), every member
//! marked `defer_loading`, plus the hosted `tool_search` tool.
//!
//! Until a search loads a member, the model sees only each namespace's name and description
//! (the providers' documentation; the render model bills it so), where loose deferred functions keep every
//! name and description billed. OpenAI recommends namespaces over loose deferred functions.
//! Namespaces exist only in the Responses API: Anthropic Messages and Chat Completions have no
//! such tool type, and their limits refuse the request as the provider would (400).

use super::deferred_search::{search_tool, SearchMethod, SearchSide, Searcher};
use super::play::Player;
use super::{Built, Context, Endpoint, Surface};
use crate::resolve::Method;
use crate::wire::{Definition, Namespace, ToolEntry};
use serde_json::json;
use std::collections::BTreeMap;

pub struct DeferredSearchNamespace;

impl Surface for DeferredSearchNamespace {
    fn name(&self) -> &'static str {
        "deferred-search-namespace"
    }
    fn about(&self) -> &'static str {
        "every definition deferred inside one Responses namespace per category, plus tool_search (OpenAI Responses only)"
    }
    fn in_all(&self) -> bool {
        false
    }
    fn lacks(&self, format: crate::wire::Format) -> Option<String> {
        use crate::wire::Format;
        match format {
            Format::Gemini => Some(
                "deferred-search-namespace: Gemini has no deferred loading or namespaces".into(),
            ),
            Format::AnthropicMessages | Format::OpenaiChat | Format::OpenaiResponses => None,
        }
    }
    fn headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    fn colour(&self) -> [u8; 3] {
        [219, 112, 147]
    }
    fn build(&self, ctx: &Context) -> Built {
        let format = ctx.client.format;
        let mut tools = vec![search_tool(format, SearchMethod::Bm25, SearchSide::Provider).into()];
        let defs = ctx.catalogue_definitions(true);
        let n = defs.len();
        tools.extend(namespaces(ctx, defs));
        Built {
            request: ctx.request(None, tools),
            definitions_in_context: 0,
            definitions_on_wire: n,
        }
    }
    fn endpoint(&self) -> Option<Endpoint> {
        None
    }
    fn calls_at(&self) -> Option<&'static str> {
        // A loaded member is the per-row tool: its calls go to the per-row endpoint.
        Some(super::per_row_mcp::ENDPOINT.path)
    }
    fn discovery(&self) -> Option<(Method, usize)> {
        // The hosted search runs over the members' names and descriptions exactly as it does
        // over loose deferred functions, so search-eval scores it once, as `deferred-search`;
        // what a miss costs here (a cheaper round) is measured by the driver.
        None
    }
    fn player(&self, _ctx: &Context) -> Box<dyn Player> {
        Box::new(Searcher {
            method: SearchMethod::Bm25,
            side: SearchSide::Provider,
        })
    }
}

/// The catalogue's deferred definitions grouped by category, one namespace each, in name
/// order; rows without a category go into the catalogue server's own namespace.
fn namespaces(ctx: &Context, defs: Vec<ToolEntry>) -> Vec<ToolEntry> {
    let category: BTreeMap<&str, &str> = ctx
        .catalogue
        .rows
        .iter()
        .filter_map(|r| r.category.as_deref().map(|c| (r.key.as_str(), c)))
        .collect();
    let mut groups: BTreeMap<String, Vec<ToolEntry>> = BTreeMap::new();
    for (tool, def) in ctx.catalogue.tools.iter().zip(defs) {
        let group = category
            .get(tool.name.as_str())
            .copied()
            .unwrap_or(ctx.catalogue.server.as_str());
        groups.entry(namespace_name(group)).or_default().push(def);
    }
    groups
        .into_iter()
        .map(|(name, members)| {
            let description = format!(
                "{} {} capabilities of the {} catalogue. Search to load the one you need.",
                members.len(),
                name.replace(['_', '-'], " "),
                ctx.catalogue.server
            );
            let shared: Option<Vec<Definition>> = members
                .iter()
                .map(|m| match m {
                    ToolEntry::Shared(d) => Some(d.clone()),
                    ToolEntry::Json(_) | ToolEntry::Namespace(_) => None,
                })
                .collect();
            match shared {
                Some(members) => ToolEntry::Namespace(Namespace {
                    name,
                    description,
                    members,
                }),
                None => ToolEntry::Json(json!({"type": "namespace", "name": name, "description": description,
                    "tools": members.iter().map(|m| m.as_ref().value().into_owned()).collect::<Vec<_>>()})),
            }
        })
        .collect()
}

/// A namespace name: letters, digits, `_` and `-` only (others become `_`), at most 64
/// characters (the function-name rule, assumed to hold for namespaces too).
fn namespace_name(group: &str) -> String {
    let name: String = group
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '_',
            },
        )
        .take(64)
        .collect();
    match name.is_empty() {
        true => "catalogue".into(),
        false => name,
    }
}

#[cfg(test)]
mod tests {
    use super::namespace_name;

    #[test]
    fn namespace_names_keep_to_the_function_name_alphabet() {
        assert_eq!(namespace_name("billing"), "billing");
        assert_eq!(namespace_name("a b/c"), "a_b_c");
        assert_eq!(namespace_name(""), "catalogue");
        assert_eq!(namespace_name(&"x".repeat(80)).len(), 64);
    }
}
