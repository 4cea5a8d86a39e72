//! `toolcost count`: the tokens of a text under a model's tokenizer, or the billed input tokens
//! of a whole request in the model's provider format, with what they are made of.

use super::print_bytes;
use crate::billing::billed_input;
use crate::billing::RenderModel;
use crate::error::{Error, Result};
use crate::identity;
use crate::tokens::Tokenizer;
use crate::wire::{Format, Request};
use clap::Args;
use serde_json::{json, Value};
use std::io::Read;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CountArgs {
    /// The model whose tokenizer counts (any model `toolcost prices list` names, or a LiteLLM id:
    /// claude-opus-5, gpt-5.4, gemini-3.5-flash, kimi-k2.7-code, deepseek/deepseek-chat, ...).
    #[arg(long)]
    pub model: String,
    /// The text, or with --request the request body (JSON); `-` or nothing reads stdin. With
    /// several files each is counted on its own: one line per file (`tokens<TAB>file`), or with
    /// --json an array of objects, each with its `file`.
    pub files: Vec<PathBuf>,
    /// Read the input as a request body in the model's provider format (Anthropic Messages,
    /// OpenAI Chat Completions or Responses, Gemini; an open model's as Chat Completions) and
    /// print the input tokens the provider bills for it: system, tools, messages and the
    /// frame (tool-use prompt, role markers, template text).
    #[arg(long)]
    pub request: bool,
    /// Print `{"model", "tokenizer", "tokens", "label"}` (and `breakdown` with --request).
    #[arg(long)]
    pub json: bool,
    /// With --request, print the prompt an open model's chat template renders from the body
    /// (special tokens spelled), to diff against a reference renderer; with --json it is the
    /// `rendered` member. Claude, OpenAI and Gemini bill parts, not a rendered prompt: their
    /// breakdown is what there is.
    #[arg(long, requires = "request")]
    pub render: bool,
}

/// The most bytes read (stdin or a file).
const MAX_INPUT: u64 = 256 << 20;

fn input(file: Option<&PathBuf>) -> Result<Vec<u8>> {
    match file {
        Some(p) if p.as_os_str() != "-" => crate::input::read(p, MAX_INPUT),
        _ => {
            let mut buf = Vec::new();
            std::io::stdin()
                .take(MAX_INPUT + 1)
                .read_to_end(&mut buf)
                .map_err(|e| Error::input(format!("stdin: {e}")))?;
            if buf.len() as u64 > MAX_INPUT {
                return Err(Error::input(format!(
                    "stdin: more than {} MB",
                    MAX_INPUT >> 20
                )));
            }
            Ok(buf)
        }
    }
}

/// The wire format of a request body: what its members say, else the card's provider; a body
/// in a format the model's provider does not take is refused.
fn format_of(body: &Value, card: &Model) -> Result<Format> {
    let chat_shaped = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t.get("function").is_some())
        || body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| matches!(m["role"].as_str(), Some("system" | "tool" | "developer")));
    let anthropic_shaped = body.get("system").is_some()
        || body["messages"].as_array().into_iter().flatten().any(|m| {
            m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|b| matches!(b["type"].as_str(), Some("tool_use" | "tool_result")))
        })
        || body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t.get("input_schema").is_some());
    let provider = card.render_spec.split(':').next().unwrap_or("");
    let format = if body.get("contents").is_some() {
        Format::Gemini
    } else if body.get("input").is_some() && body.get("messages").is_none() {
        Format::OpenaiResponses
    } else if provider == "anthropic" || anthropic_shaped {
        Format::AnthropicMessages
    } else {
        Format::OpenaiChat
    };
    let takes = match provider {
        "anthropic" => format == Format::AnthropicMessages && !chat_shaped,
        "gemini" | "vertex" => format == Format::Gemini,
        "openai" => matches!(format, Format::OpenaiChat | Format::OpenaiResponses),
        // A gateway in front of an open model converts any of them.
        _ => true,
    };
    match takes {
        true => Ok(format),
        false => Err(Error::input(format!(
            "{} takes {} requests; this body reads as {} (write it in the model's own format)",
            card.id,
            match provider {
                "anthropic" => "Anthropic Messages",
                "gemini" | "vertex" => "Gemini generateContent",
                _ => "OpenAI Chat Completions or Responses",
            },
            match (format, chat_shaped) {
                (Format::AnthropicMessages, true) | (Format::OpenaiChat, _) =>
                    "OpenAI Chat Completions",
                (f, _) => f.name(),
            }
        ))),
    }
}

/// The model a count is made for: its id as given and the rules its requests are billed by
/// (its own, from its identity; a price is never needed).
pub(super) struct Model {
    id: String,
    render: RenderModel,
    render_spec: String,
    tok: Tokenizer,
}

impl Model {
    fn of(id: &str) -> Result<Model> {
        let m = identity::resolve(id)?;
        let (render, tok, render_spec) = m.rules();
        Ok(Model {
            id: m.id,
            render,
            render_spec,
            tok,
        })
    }
    fn tokenizer(&self) -> Tokenizer {
        self.tok
    }
    fn render_model(&self) -> RenderModel {
        self.render
    }
}

pub(super) fn run(a: CountArgs) -> Result<i32> {
    let card = Model::of(&a.model)?;
    let tok = card.tokenizer();
    tok.ready()?;
    if a.files.len() <= 1 {
        let v = count_one(&a, &card, input(a.files.first())?)?;
        let out = match a.json {
            true => format!(
                "{}\n",
                serde_json::to_string_pretty(&v).expect("serialises")
            ),
            false => plain(&v, &card),
        };
        print_bytes(out.as_bytes())?;
        return Ok(0);
    }
    // Several files: each counted on its own, in the order given; the first that cannot be
    // read (the read error names it) or counted stops the run with its name.
    if a.files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        return Err(Error::input("`-` (stdin) can be named once"));
    }
    let mut all = Vec::with_capacity(a.files.len());
    for f in &a.files {
        let mut v = count_one(&a, &card, input(Some(f))?)
            .map_err(|e| Error::input(format!("{}: {e}", f.display())))?;
        v["file"] = json!(f.display().to_string());
        all.push(v);
    }
    let out = match a.json {
        true => format!(
            "{}\n",
            serde_json::to_string_pretty(&all).expect("serialises")
        ),
        false => all
            .iter()
            .map(|v| format!("{}\t{}\n", v["tokens"], v["file"].as_str().unwrap_or("")))
            .collect(),
    };
    print_bytes(out.as_bytes())?;
    Ok(0)
}

/// One input's count as `{"model", "tokenizer", "tokens", "label"}` (and `breakdown` for a
/// request).
fn count_one(a: &CountArgs, card: &Model, bytes: Vec<u8>) -> Result<Value> {
    let tok = card.tokenizer();
    let render = card.render_model();
    let (tokens, label, breakdown) = match a.request {
        false => {
            let text =
                String::from_utf8(bytes).map_err(|_| Error::input("the text is not UTF-8"))?;
            (tok.count(&text).round() as u64, tok.label(), None)
        }
        true => {
            // The node bound first: a body built to be costly to parse is refused unparsed.
            crate::json::check_nodes(&bytes, "request body").map_err(Error::input)?;
            let body: Value = serde_json::from_slice(&bytes).map_err(|e| {
                Error::input(format!("request body: {}", crate::json::why_unreadable(&e)))
            })?;
            let format = format_of(&body, card)?;
            // Gemini (and Claude on Vertex AI) name the model in the URL, not the body: --model
            // is that name.
            let routed = body.get("model").is_none().then_some(card.id.as_str());
            let req = Request::parse_routed(format, &bytes, routed)?;
            let b = billed_input(&req, render, tok);
            let mut label = format!("{}; rendered as {}", tok.label(), render.name());
            if let RenderModel::Open(t) = render {
                if let Some(why) = crate::billing::render::open::refusal(&req, t) {
                    label.push_str(&format!(
                        "; the model's template refuses this request (\"{why}\"): a server that renders it answers 400"
                    ));
                }
            }
            if b.thoughts_resent > 0 {
                label.push_str(&format!(
                    "; {} earlier answer(s)' thinking billed again and not counted (a thought signature or reasoning item does not say how many tokens: the gateway adds them from the answers it logged)",
                    b.thoughts_resent
                ));
            }
            let breakdown = json!({
                "format": format.name(),
                "system": b.system_tokens,
                "tools": b.tool_tokens,
                "messages": b.message_tokens,
                "frame": b.overhead_tokens,
                "tools_billed": b.tools_billed,
                "thoughts_not_counted": b.thoughts_resent,
            });
            let mut breakdown = breakdown;
            if a.render {
                let RenderModel::Open(t) = render else {
                    return Err(Error::input(format!(
                        "{} is billed by parts, not a rendered prompt: drop --render and read the breakdown",
                        card.id
                    )));
                };
                breakdown["rendered"] = json!(crate::billing::render::open::render(&req, t).text());
            }
            (b.input_tokens, label, Some(breakdown))
        }
    };
    let mut v = json!({
        "model": card.id,
        "tokenizer": tok.name(),
        "tokens": tokens,
        "label": label,
    });
    if let Some(b) = breakdown {
        v["breakdown"] = b;
    }
    Ok(v)
}

/// One count as text: the number alone, or a request's breakdown.
fn plain(v: &Value, card: &Model) -> String {
    let tokens = &v["tokens"];
    if let Some(text) = v["breakdown"]["rendered"].as_str() {
        return text.to_string();
    }
    match v.get("breakdown") {
        None => format!("{tokens}\n"),
        Some(b) => format!(
            "{tokens} input tokens ({}; {} format; {})\n  system {}\n  tools {} ({} definitions)\n  messages {}\n  frame {}\n",
            card.id,
            b["format"].as_str().unwrap_or(""),
            v["label"].as_str().unwrap_or(""),
            b["system"],
            b["tools"],
            b["tools_billed"],
            b["messages"],
            b["frame"],
        ),
    }
}
