//! The constants of a Claude prompt that no text shows: the tool-use prompt of each model (per
//! `tool_choice`), what each turn adds, and the hidden prompts of structured output and deferred
//! tools. Each was found against the recorded whole requests of `fixtures/claude-requests`
//! (`toolcost claude-counts --requests` re-fits them and prints their leave-one-out error), or,
//! for a model no recording covers, taken from Anthropic's published tool-use prompt sizes.
//!
//! Convention: a tool-use prompt here is what the request bills beyond its rendered text, the
//! tools block's `<functions>` lines excluded (they are counted as text). Anthropic's pricing page
//! gives the prompt with them: for one tool that block costs [`BLOCK_TOKENS`] on the v3 tokenizer, so a
//! published size less 8 is this convention's (4.5: 496 - 8 = 488, fitted 489; 4.6: 497 - 8 = 489,
//! fitted 490).

use super::RenderModel;
use crate::tokens::claude_exact::Family;
use crate::tokens::Tokenizer;

/// claude-opus-5's tool-use prompt: the one constant that, with the tools block of
/// [`super::functions`], makes every recorded tools delta of the 17 fitted servers exact
/// (claude-opus-5, 2026-08; it is exact on the 6 kept out too): calibrated.
pub const CLAUDE_5_TOOL_PROMPT: f64 = 277.0;

/// What the tools block of one definition adds beyond the definition on the v3 tokenizer
/// (`<functions>`, `</functions>` and two newlines): the difference between Anthropic's published
/// prompt sizes and this table's convention.
pub const BLOCK_TOKENS: f64 = 8.0;

/// Where a model's tool-use prompt comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptSource {
    /// Fitted to recorded requests of this model (calibrated; the report gives its error).
    Fitted(&'static str),
    /// Anthropic's published size for the model, less the block's 8 tokens (recorded, then
    /// derived).
    Published,
    /// Another model's, named (assumed).
    As(&'static str),
}

/// The tool-use prompt of one model: the tokens for `tool_choice` auto or none, any, and tool
/// (to which the chosen tool's name is added).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolPrompt {
    pub model: &'static str,
    pub auto: f64,
    pub any: f64,
    pub tool: f64,
    pub source: PromptSource,
}

/// The tool-use prompts, by model (the id without date or provider prefix).
///
/// Fitted on `fixtures/claude-requests` (2026-12-05): each is the count every recorded request of
/// that model and choice agrees on (the mode of recorded less rendered). claude-opus-5's is the
/// one constant that makes the 17 recorded tools deltas of `fixtures/claude-counts` exact
/// (2026-08). Published sizes (Anthropic's tool-use pricing table, as the providers' documentation carries it):
/// Claude 3 Haiku 264/340, Claude 3 Opus 530/281, Claude 3 Sonnet 159/235, Claude 3.5 Sonnet
/// 294/261, Claude 3.5 Haiku 264/340, Claude 3.7 Sonnet and the Claude 4 models 346/313.
pub const TOOL_PROMPTS: &[ToolPrompt] = &[
    p(
        "claude-3-haiku",
        273.0,
        349.0,
        350.0,
        PromptSource::Fitted("any and tool fitted on 13 requests; auto the published 264 plus the 9 by which the fitted any exceeds the published 340"),
    ),
    p("claude-3-sonnet", 151.0, 227.0, 229.0, PromptSource::Published),
    p(
        "claude-3-opus",
        526.0,
        289.0,
        291.0,
        PromptSource::Fitted("auto and any fitted on one request each; tool as any plus 2"),
    ),
    p("claude-3-5-sonnet", 286.0, 253.0, 255.0, PromptSource::Published),
    p("claude-3-5-haiku", 256.0, 332.0, 334.0, PromptSource::Published),
    p("claude-3-7-sonnet", 338.0, 305.0, 307.0, PromptSource::Published),
    p(
        "claude-sonnet-4",
        306.0,
        307.0,
        267.0,
        PromptSource::Fitted("84 requests of claude-sonnet-4-0"),
    ),
    p("claude-opus-4", 306.0, 307.0, 267.0, PromptSource::As("claude-sonnet-4")),
    p("claude-opus-4-1", 306.0, 307.0, 267.0, PromptSource::As("claude-sonnet-4")),
    p(
        "claude-sonnet-4-5",
        489.0,
        581.0,
        583.0,
        PromptSource::Fitted("117 requests of claude-sonnet-4-5"),
    ),
    p(
        "claude-haiku-4-5",
        489.0,
        581.0,
        584.0,
        PromptSource::Fitted("13 requests of claude-haiku-4-5"),
    ),
    p("claude-opus-4-5", 489.0, 581.0, 583.0, PromptSource::As("claude-sonnet-4-5")),
    p(
        "claude-sonnet-4-6",
        490.0,
        582.0,
        584.0,
        PromptSource::Fitted("auto on 9 requests of claude-sonnet-4-6; any and tool as 4.5's plus the 1 by which the published 4.6 sizes exceed 4.5's"),
    ),
    p("claude-opus-4-6", 490.0, 582.0, 584.0, PromptSource::As("claude-sonnet-4-6")),
    p("claude-opus-4-7", 490.0, 582.0, 584.0, PromptSource::As("claude-opus-4-6")),
    p(
        "claude-opus-4-8",
        277.0,
        369.0,
        371.0,
        PromptSource::Fitted("auto on 1 request of claude-opus-4-8 (it agrees with claude-opus-5's); any and tool as auto plus the 92 and 94 by which 4.5's differ"),
    ),
    p(
        "claude-opus-5",
        CLAUDE_5_TOOL_PROMPT,
        CLAUDE_5_TOOL_PROMPT + 92.0,
        CLAUDE_5_TOOL_PROMPT + 94.0,
        PromptSource::Fitted("auto on the 17 recorded tools deltas of claude-opus-5; any and tool as auto plus the 92 and 94 by which 4.5's differ"),
    ),
    p(
        "claude-sonnet-5",
        345.0,
        437.0,
        439.0,
        PromptSource::Fitted("auto on 1 request of claude-sonnet-5 with deferred tools, less the deferred prompt; any and tool as auto plus 92 and 94"),
    ),
    p(
        "claude-fable-5",
        281.0,
        373.0,
        375.0,
        PromptSource::Fitted("auto on 1 request of claude-fable-5 with deferred tools, less the deferred prompt; any and tool as auto plus 92 and 94"),
    ),
    p("claude-opus-5-5", 277.0, 369.0, 371.0, PromptSource::As("claude-opus-5")),
    p("claude-sonnet-5-5", 345.0, 437.0, 439.0, PromptSource::As("claude-sonnet-5")),
    p("claude-haiku-5-5", 345.0, 437.0, 439.0, PromptSource::As("claude-sonnet-5")),
    p("claude-fable-5-1", 281.0, 373.0, 375.0, PromptSource::As("claude-fable-5")),
];

const fn p(
    model: &'static str,
    auto: f64,
    any: f64,
    tool: f64,
    source: PromptSource,
) -> ToolPrompt {
    ToolPrompt {
        model,
        auto,
        any,
        tool,
        source,
    }
}

/// Names the prompts answer to besides their own: the family names toolcost's price cards used
/// before prompts were per model, and the dated ids' undated forms.
const ALIASES: &[(&str, &str)] = &[
    ("claude-4", "claude-sonnet-4"),
    ("claude-4.5", "claude-sonnet-4-5"),
    ("claude-4.6", "claude-sonnet-4-6"),
    ("claude-5", "claude-opus-5"),
    ("claude-haiku-3.5", "claude-3-5-haiku"),
    ("claude-haiku-3-5", "claude-3-5-haiku"),
    ("claude-sonnet-4-0", "claude-sonnet-4"),
    ("claude-opus-4-0", "claude-opus-4"),
    ("claude-sonnet-3-7", "claude-3-7-sonnet"),
    ("claude-sonnet-3-5", "claude-3-5-sonnet"),
];

/// A Claude model id as the table keys it: lower case, without a provider path
/// (`anthropic/`, Bedrock's `anthropic.`, Vertex's `@date`), a date, `-latest` or a Bedrock
/// version, and with dots as dashes (`claude-sonnet-4.5` is `claude-sonnet-4-5`).
pub fn model_key(id: &str) -> String {
    let lower = id.trim().to_ascii_lowercase();
    let mut s = lower.rsplit('/').next().unwrap_or(&lower).to_string();
    if let Some(rest) = s.strip_prefix("anthropic.") {
        s = rest.to_string();
    }
    if let Some(at) = s.find('@') {
        s.truncate(at);
    }
    if let Some(colon) = s.find(':') {
        s.truncate(colon);
    }
    // A family name with a dot is an alias as it is (`claude-4.5`).
    if ALIASES.iter().any(|(a, _)| *a == s) {
        return s;
    }
    s = s.replace('.', "-");
    loop {
        let before = s.len();
        for suffix in ["-latest", "-v1", "-v2"] {
            if let Some(rest) = s.strip_suffix(suffix) {
                s = rest.to_string();
            }
        }
        if let Some((head, tail)) = s.rsplit_once('-') {
            if tail.len() == 8 && tail.bytes().all(|b| b.is_ascii_digit()) {
                s = head.to_string();
            }
        }
        if s.len() == before {
            return s;
        }
    }
}

/// The tool-use prompt of a model, if the table knows it (by its key or an alias).
pub fn tool_prompt(model: &str) -> Option<&'static ToolPrompt> {
    let key = model_key(model);
    let key = ALIASES
        .iter()
        .find(|(a, _)| *a == key)
        .map(|(_, to)| to.to_string())
        .unwrap_or(key);
    TOOL_PROMPTS.iter().find(|t| t.model == key)
}

/// The prompt of a Claude model the table does not name: that of the newest model of its
/// tokenizer family (assumed).
pub fn tool_prompt_of_family(f: Family) -> &'static ToolPrompt {
    let model = match f {
        Family::V3 => "claude-sonnet-4-6",
        Family::V4_7 => "claude-opus-4-7",
        Family::V5 => "claude-opus-5",
    };
    tool_prompt(model).expect("the table holds each family's newest model")
}

/// Tokens each turn after the first adds (its role's turn marker), by family: measured on the
/// recorded multi-turn requests (v3: 3 on every one; v5: 2, and 3 for a system turn). v4.7 has
/// no recorded multi-turn request: 3 is assumed.
pub fn turn_tokens(f: Family, system: bool) -> f64 {
    match (f, system) {
        (_, true) => 3.0,
        (Family::V5, false) => 2.0,
        (Family::V3 | Family::V4_7, false) => 3.0,
    }
}

/// What a request with structured output (`output_format`, or `output_config.format`) bills
/// beyond its schema, which the hidden prompt carries as indented JSON: fitted on 36 recorded
/// requests of claude-sonnet-4-5, claude-haiku-4-5 and claude-opus-4-6 (calibrated; one more with
/// tools, which the prompt joins). Assumed the same on the later families.
pub const STRUCTURED_OUTPUT_PROMPT: f64 = 81.0;

/// What a request with deferred tools bills on the v5 family beyond the tool-use prompt:
/// claude-opus-5's recorded request with one deferred tool, less its prompt fitted on the tools
/// deltas (calibrated, one request). On the v3 family deferred tools add nothing (recorded:
/// claude-sonnet-4-6 and claude-haiku-4-5 bill the same prompt with and without them).
pub const V5_DEFERRED_PROMPT: f64 = 93.0;

/// What a tool call and its result bill on the v5 family against their rendering counted as
/// text: the tags are cheaper there than their letters (calibrated: the same on every recorded
/// v5 request with calls, seven of them on four models).
pub const V5_CALL_ADJUST: f64 = -23.0;

/// Where a request's tool-use prompt comes from, when it is a fitted constant: the figure
/// beside a count that carries it says so (the definitions themselves are counted exactly).
pub fn overhead_label(render: RenderModel, tok: Tokenizer) -> Option<String> {
    let RenderModel::Anthropic { family, .. } = render else {
        return None;
    };
    tok.claude_family()?;
    let prompt = tool_prompt(family)?;
    Some(match prompt.source {
        PromptSource::Fitted(on) => format!(
            "tool-use prompt calibrated:claude-requests({} auto, fitted on {on})",
            prompt.auto
        ),
        PromptSource::Published => format!(
            "tool-use prompt recorded:anthropic-tool-use-pricing({} auto, less its 8-token block)",
            prompt.auto
        ),
        PromptSource::As(other) => format!(
            "tool-use prompt assumed as {other}'s ({} auto)",
            prompt.auto
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{billed_input, RenderModel};
    use super::*;
    use crate::wire::{Format, Request};

    /// A one-message request on the earlier Claude tokenizer's estimate bills that tokenizer's
    /// measured frame, as the exact count does: "hi" is not one token.
    #[test]
    fn the_legacy_estimate_frames_a_request() {
        let req = Request::new(
            Format::AnthropicMessages,
            serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
        );
        let render = RenderModel::parse("anthropic:claude-4.6").unwrap();
        let legacy = billed_input(&req, render, Tokenizer::ClaudeLegacyEst).input_tokens;
        let exact = billed_input(&req, render, Tokenizer::ClaudeV3).input_tokens;
        assert_eq!(exact, Family::V3.message_tokens("hi") as u64);
        assert!(
            legacy >= 7 && legacy.abs_diff(exact) <= 1,
            "{legacy} against {exact}"
        );
    }

    #[test]
    fn model_ids_find_their_prompts() {
        for (id, key) in [
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
            ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
            ("anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4"),
            ("claude-sonnet-4-0", "claude-sonnet-4"),
            ("claude-3-haiku-20240307", "claude-3-haiku"),
            ("claude-3-opus-latest", "claude-3-opus"),
            ("claude-opus-4-1@20250805", "claude-opus-4-1"),
            ("claude-4.6", "claude-sonnet-4-6"),
            ("claude-5", "claude-opus-5"),
            ("claude-sonnet-5-5", "claude-sonnet-5-5"),
        ] {
            assert_eq!(tool_prompt(id).map(|t| t.model), Some(key), "{id}");
        }
        assert!(tool_prompt("claude-instant-1").is_none());
        assert!(tool_prompt("gpt-4o").is_none());
    }

    /// Every model the table names is on a Claude tokenizer family, and every `As` names a model
    /// of the table with the same prompt.
    #[test]
    fn the_table_is_sound() {
        for t in TOOL_PROMPTS {
            assert!(Family::of_model(t.model).is_some(), "{}", t.model);
            assert!(t.auto > 100.0 && t.any > 100.0 && t.tool > 100.0);
            if let PromptSource::As(other) = t.source {
                let o = tool_prompt(other).unwrap_or_else(|| panic!("{other}"));
                assert_eq!(
                    (o.auto, o.any, o.tool),
                    (t.auto, t.any, t.tool),
                    "{}",
                    t.model
                );
            }
        }
    }
}
