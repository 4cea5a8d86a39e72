//! A set of tool definitions counted as each provider's tools block carries them: the sum over
//! definitions where the block is one (Claude, OpenAI, Vertex AI), each definition's count kept
//! beside its shared text so that every surface and round that carries it adds the count
//! instead of counting it again; the array or template counted as one text where it is not.

use super::framed::Framed;
use super::{functions, gemini, marked_tokens, open, RenderModel};
use crate::tokens::{Part, Tokenizer};
use crate::wire::ToolRef;
use serde_json::Value;

/// Each definition's tokens in `render`'s tools block, in order: its block alone less the
/// block's own frame (the brackets, headings and closing text a block of any size has, found as
/// twice one definition's block less two copies'). Where a block is the sum of its definitions'
/// counts (Claude, OpenAI, Vertex AI) this is each one's share exactly; where a template counts
/// the block as one text, the joins between neighbours are left out.
pub fn definition_tokens(defs: &[ToolRef], render: RenderModel, tok: Tokenizer) -> Vec<f64> {
    let Some(&first) = defs.first() else {
        return Vec::new();
    };
    let one = |d: ToolRef| defs_tokens(&[d], render, tok);
    let frame = 2.0 * one(first) - defs_tokens(&[first, first], render, tok);
    crate::tokens::on_cores(defs, |d| one(*d) - frame)
}

/// Tokens of a set of definitions, including the per-set constant of the render model. Each
/// definition is counted in parts (its head and its schema), each part once per tokenizer
/// however many requests and renderings carry it, and the Kimi array is assembled from its
/// members with every join counted exactly ([`Tokenizer::count_parts`]).
pub(super) fn defs_tokens(defs: &[ToolRef], render: RenderModel, tok: Tokenizer) -> f64 {
    if defs.is_empty() {
        return 0.0;
    }
    match render {
        // Claude counted exactly: each definition as the tools block renders it, and the
        // newline before it.
        RenderModel::Anthropic { .. } if tok.claude_family().is_some() => {
            let between = tok.count_inline(functions::BETWEEN);
            crate::tokens::on_cores(defs, |d| {
                kept(*d, Rendering::ClaudeFunctions, tok, || {
                    tok.count_inline(&functions::function(*d, tok == Tokenizer::ClaudeV3))
                })
            })
            .into_iter()
            .map(|n| n + between)
            .sum()
        }
        RenderModel::Anthropic { .. } => crate::tokens::on_cores(defs, |d| {
            kept(*d, Rendering::AnthropicJson, tok, || {
                tok.count_parts(Framed::anthropic(*d).parts())
            })
        })
        .into_iter()
        .sum(),
        // Vertex AI bills a declaration's name; the Developer API from 2.5 on, the template's
        // declaration ([`gemini`]).
        RenderModel::Gemini(g) if g.vertex => defs
            .iter()
            .map(|d| tok.count(d.parts().map_or("", |p| p.name)))
            .sum(),
        RenderModel::Gemini(g) if g.templated() => {
            crate::tokens::on_cores(defs, |d| marked_tokens(&gemini::declaration(*d, g), tok))
                .into_iter()
                .sum()
        }
        // The template's tools section alone.
        RenderModel::Open(t) => open::defs_tokens(defs, t, tok),
        RenderModel::Gemini(_) => {
            let framed: Vec<Framed> = crate::sync::map_on_cores(defs, |d| Framed::gemini(*d));
            let members = framed.iter().enumerate().flat_map(|(i, f)| {
                let comma = (i > 0).then_some(Part::Joint(","));
                comma.into_iter().chain(f.parts())
            });
            let parts = std::iter::once(Part::Joint("["))
                .chain(members)
                .chain(std::iter::once(Part::Joint("]")));
            tok.count_parts(parts)
        }
        RenderModel::Openai { func_init } => {
            let n: f64 = crate::tokens::on_cores(defs, |d| {
                kept(*d, Rendering::OpenaiWalk(func_init), tok, || {
                    openai_function_tokens(*d, func_init, tok)
                })
            })
            .into_iter()
            .sum();
            n + 12.0 // func_end
        }
    }
}

/// How one definition is counted on its own, where a request's count is the sum of its
/// definitions' ([`defs_tokens`]): each rendering's count is kept beside the definition's shared
/// text ([`crate::catalogue::DefText::counted`]), so a surface, request or round that carries
/// the same definition under the same name adds its count instead of rendering and counting it
/// again. Renderings whose definitions are counted together (the Kimi and Gemini arrays, whose
/// joins and whole-text tokenizers do not split by definition) are not kept here.
#[derive(Debug, Clone, Copy)]
enum Rendering {
    /// Claude's tools block, counted exactly ([`functions::function`]).
    ClaudeFunctions,
    /// Anthropic's compact JSON, counted with an estimate ([`Framed::anthropic`]).
    AnthropicJson,
    /// The OpenAI cookbook walk with its per-function constant ([`openai_function_tokens`]).
    OpenaiWalk(i64),
}

/// `count()` of a definition under `rendering` and `tok`, kept beside a shared definition's text
/// under a key of the rendering, the tokenizer and the name the request gives it; a definition
/// that is not shared (a tree), or a count made whole ([`crate::tokens::counting_whole`]), is counted
/// as it is.
fn kept(d: ToolRef, rendering: Rendering, tok: Tokenizer, count: impl FnOnce() -> f64) -> f64 {
    match d {
        ToolRef::Shared(def) if !crate::tokens::counting_whole_now() => {
            let mut h = xxhash_rust::xxh3::Xxh3::with_seed(super::super::process_seed());
            let (tag, constant) = match rendering {
                Rendering::ClaudeFunctions => (0u8, 0),
                Rendering::AnthropicJson => (1, 0),
                Rendering::OpenaiWalk(func_init) => (2, func_init),
            };
            h.update(&[tag]);
            h.update(&constant.to_le_bytes());
            h.update(tok.name().as_bytes());
            h.update(&[0]);
            h.update(def.name().as_bytes());
            def.shared_text().counted(h.digest(), count)
        }
        ToolRef::Shared(_) | ToolRef::Json(_) | ToolRef::Namespace(_) => count(),
    }
}

pub(super) fn fixed_defs_tokens(render: RenderModel) -> f64 {
    match render {
        RenderModel::Anthropic { .. } | RenderModel::Open(_) | RenderModel::Gemini(_) => 0.0,
        RenderModel::Openai { .. } => 12.0,
    }
}

/// Tokens of the walk's `name:description` (the description without its final periods), its
/// prose counted as a piece of its own ([`crate::tokens::clean_cuts`]), so the prose several renderings
/// of a definition share is counted once.
fn name_and_description(tok: Tokenizer, name: &str, desc: &str) -> f64 {
    let [first, prose, last] = crate::tokens::clean_cuts(desc.trim_end_matches('.'));
    let head = format!("{name}:{first}");
    let parts = [head.as_str(), prose, last];
    tok.count_parts(parts.into_iter().filter(|p| !p.is_empty()).map(Part::Piece))
}

/// The cookbook walk for one function (gpt-4o constants; enum_init is -3).
fn openai_function_tokens(d: ToolRef, func_init: i64, tok: Tokenizer) -> f64 {
    let Some(p) = d.parts() else {
        return tok.count(&d.text());
    };
    let (name, desc) = (p.name, p.description);
    let schema = p.schema.value();
    let mut n = func_init as f64 + name_and_description(tok, name, desc);
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        if !props.is_empty() {
            n += 3.0; // prop_init
            for (key, p) in props {
                n += 3.0; // prop_key
                if let Some(values) = p.get("enum").and_then(Value::as_array) {
                    n -= 3.0; // enum_init
                    for v in values {
                        n += 3.0
                            + tok.count(
                                &v.as_str()
                                    .map(String::from)
                                    .unwrap_or_else(|| v.to_string()),
                            );
                    }
                }
                let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
                let pd = p
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .trim_end_matches('.');
                n += tok.count(&format!("{key}:{ty}:{pd}"));
            }
        }
    }
    n
}
