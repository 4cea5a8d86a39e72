//! The constants of an Anthropic request counted with Claude's exact tokenizer: the tool-use
//! prompt (fitted) and what each message adds (assumed), and the label a figure that carries
//! the fitted prompt takes.

use super::{RenderModel, CURRENT_CLAUDE_FAMILY};
use crate::tokens::claude_exact::Family;
use crate::tokens::Tokenizer;

/// The claude-5 family's tool-use prompt under the exact tokenizer: the one constant that, with
/// the tools block of [`functions`], makes every recorded tools delta of the 17 fitted servers
/// exact (claude-opus-5, 2026-08; it is exact on the 6 kept out too): calibrated.
pub const CLAUDE_5_TOOL_PROMPT: f64 = 277.0;

/// Tokens each message of an Anthropic request adds beyond its content, counted with the exact
/// tokenizer (its role's turn marker). Assumed: the recorded counts are all of one-message
/// requests, whose whole frame is measured ([`Family::message_frame`]); a request of one message
/// bills that frame exactly, and each further message adds this.
pub const CLAUDE_PER_MESSAGE: f64 = 3.0;

/// Where a request's tool-use prompt comes from, when it is a fitted constant: the figure
/// beside a count that carries it says so (the definitions themselves are counted exactly).
pub fn overhead_label(render: RenderModel, tok: Tokenizer) -> Option<String> {
    let RenderModel::Anthropic { family, .. } = render else {
        return None;
    };
    match (family == CURRENT_CLAUDE_FAMILY, tok.claude_family()) {
        (true, Some(_)) => Some(format!(
            "tool-use prompt calibrated:claude-counts({CLAUDE_5_TOOL_PROMPT}, fitted to 17 recorded tools deltas)"
        )),
        _ => None,
    }
}

/// The tool-use prompt (auto|none, any|tool) and the Claude family of an Anthropic request
/// counted with Claude's exact tokenizer; None for any other tokenizer or provider, whose
/// constants are the render model's own.
pub(super) fn exact_claude(render: RenderModel, tok: Tokenizer) -> Option<(Family, f64, f64)> {
    let RenderModel::Anthropic {
        family, auto, any, ..
    } = render
    else {
        return None;
    };
    let f = tok.claude_family()?;
    Some(match family == CURRENT_CLAUDE_FAMILY {
        true => (f, CLAUDE_5_TOOL_PROMPT, CLAUDE_5_TOOL_PROMPT + 92.0),
        false => (f, auto, any),
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
}
