//! `toolcost check`: compare a server's tools with a budget (`toolcost.toml`) and a baseline
//! (`toolcost.lock.json`), and say what grew. Exit 0 within budget, 1 over it, 2 on error.

use crate::catalogue::Catalogue;
use crate::error::{Error, Result};
use crate::tokens::Tokenizer;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

mod render;
pub use render::{badge, render};

/// The `[budget]` table of `toolcost.toml`. Every limit is optional.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    pub max_bytes_per_tool: Option<usize>,
    pub max_tokens_per_tool: Option<u64>,
    pub max_total_tokens: Option<u64>,
    /// Largest allowed growth of total tokens over the baseline, in percent.
    pub max_growth_pct: Option<f64>,
    /// Largest allowed growth of any one definition's tokens over its baseline, in percent
    /// (default [`DEFAULT_MAX_TOOL_GROWTH_PCT`]: the per-definition gate is on unless raised).
    pub max_tool_growth_pct: Option<f64>,
    /// Largest allowed growth of any one definition, in tokens (default
    /// [`DEFAULT_MAX_TOOL_GROWTH_TOKENS`]).
    pub max_tool_growth_tokens: Option<u64>,
    /// o200k (default), cl100k, or any tokenizer `count` names (kimi, qwen, claude-v5, ...).
    pub tokenizer: Option<String>,
}

/// The total growth allowed when the budget names none: all tools together may grow by a
/// quarter over the baseline (a renamed or added tool is growth like any other).
pub const DEFAULT_MAX_GROWTH_PCT: f64 = 25.0;

/// The per-definition gate's defaults: a definition may grow by 25% or 200 tokens, whichever
/// it passes first is flagged.
pub const DEFAULT_MAX_TOOL_GROWTH_PCT: f64 = 25.0;
pub const DEFAULT_MAX_TOOL_GROWTH_TOKENS: u64 = 200;

impl Budget {
    /// Percentages must be numbers, zero or more (`nan` or `-5` would pass everything or
    /// nothing without saying so).
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("max_growth_pct", self.max_growth_pct),
            ("max_tool_growth_pct", self.max_tool_growth_pct),
        ] {
            if let Some(v) = v.filter(|v| !v.is_finite() || *v < 0.0) {
                return Err(Error::input(format!(
                    "[budget] {name} = {v}: expected a percentage, 0 or more"
                )));
            }
        }
        Ok(())
    }

    fn tool_growth_pct(&self) -> f64 {
        self.max_tool_growth_pct
            .unwrap_or(DEFAULT_MAX_TOOL_GROWTH_PCT)
    }

    fn tool_growth_tokens(&self) -> u64 {
        self.max_tool_growth_tokens
            .unwrap_or(DEFAULT_MAX_TOOL_GROWTH_TOKENS)
    }
}

/// `toolcost.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub budget: Budget,
    /// What `check` weighs when the command line names nothing.
    #[serde(default)]
    pub source: Option<SourceConfig>,
}

/// `[source]`: `catalogue = "path"`, `url = "..."` or `command = ["node", "server.js"]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceConfig {
    pub catalogue: Option<String>,
    pub url: Option<String>,
    pub command: Option<Vec<String>>,
}

impl Config {
    pub fn read(path: &Path) -> Result<Config> {
        let text = crate::input::read_text(path, crate::input::SMALL)?;
        let config: Config = toml::from_str(&text).map_err(|e| {
            Error::input(format!(
                "{}: {}",
                path.display(),
                crate::input::toml_error(&e, &text)
            ))
        })?;
        config
            .budget
            .validate()
            .map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
        Ok(config)
    }

    pub fn tokenizer(&self) -> Result<Tokenizer> {
        Tokenizer::parse(self.budget.tokenizer.as_deref().unwrap_or("o200k"))
    }
}

/// One tool in the lock file: its bytes, its tokens with the budget's tokenizer, and for the
/// pull-request diff its tokens on each provider whose tokenizer every machine has (Anthropic's
/// current one counted exactly, OpenAI's o200k; Gemini's stand-in is an estimate, so a lock
/// does not depend on it). A lock written before these were kept has none.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
pub struct Weight {
    pub bytes: usize,
    pub tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anthropic: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openai: Option<u64>,
}

/// A provider whose tokens a lock keeps beside the budget's: its name, its tokenizer, and the
/// field that holds them.
pub type ProviderTokens = (&'static str, Tokenizer, fn(&Weight) -> Option<u64>);

/// The providers' tokenizers a lock keeps beside the budget's, in the diff's column order.
pub const PROVIDER_TOKENIZERS: [ProviderTokens; 2] = [
    ("Anthropic", Tokenizer::ClaudeV5, |w| w.anthropic),
    ("OpenAI", Tokenizer::O200k, |w| w.openai),
];

/// How each provider of [`PROVIDER_TOKENIZERS`] bills one definition: its request format, render
/// model and tokenizer (claude-opus-5's tools block; the OpenAI cookbook's walk for gpt-5.4).
pub const PROVIDER_RENDERINGS: [(crate::wire::Format, &str, Tokenizer); 2] = [
    (
        crate::wire::Format::AnthropicMessages,
        "anthropic:claude-opus-5",
        Tokenizer::ClaudeV5,
    ),
    (
        crate::wire::Format::OpenaiChat,
        "openai:gpt-5.4",
        Tokenizer::O200k,
    ),
];

/// What a provider bills for one tool, as `weigh` counts it: the definition in the provider's
/// own rendering, without the request's fixed parts (the tool-use prompt, the functions
/// block's end).
fn billed(t: &crate::catalogue::Tool, how: &(crate::wire::Format, &str, Tokenizer)) -> u64 {
    let (format, render, tok) = *how;
    let render = crate::billing::RenderModel::parse(render).expect("a known render model");
    let bill = |tools: Vec<serde_json::Value>| {
        let mut body =
            serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "."}]});
        if !tools.is_empty() {
            body["tools"] = serde_json::Value::Array(tools);
        }
        let req = crate::wire::Request::new(format, body);
        crate::billing::billed_input(&req, render, tok).tool_tokens
    };
    let def = crate::wire::tool_definition(format, &t.name, t, false);
    // The walk's fixed end is in a set of one as in a set of two: a second copy's share is the
    // tool's own.
    let one = bill(vec![def.clone()]);
    let two = bill(vec![def.clone(), def]);
    two.saturating_sub(one)
}

/// `toolcost.lock.json`: the baseline, per tool.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    pub tokenizer: String,
    pub total_bytes: usize,
    pub total_tokens: u64,
    pub tools: BTreeMap<String, Weight>,
    /// Evidence of the figures: bytes observed (as the server sent them), tokens counted with
    /// the tokenizer (`estimated:o200k`, or another tokenizer's).
    #[serde(default)]
    pub label: String,
    /// `sha256:` of the tokenizer and the tools (compact JSON): a lock edited by hand, cut, or
    /// stripped of its digest is refused on read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

impl Lock {
    /// The lock for a catalogue's tools; two tools with one name are an error.
    pub fn of(cat: &Catalogue, tok: Tokenizer) -> Result<Lock> {
        crate::lint::unique_names(cat.tools.iter().map(|t| t.name.as_str()))?;
        let tools: BTreeMap<String, Weight> = cat
            .tools
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    Weight {
                        bytes: t.bytes(),
                        tokens: tok.count(t.raw()).round() as u64,
                        anthropic: Some(billed(t, &PROVIDER_RENDERINGS[0])),
                        openai: Some(billed(t, &PROVIDER_RENDERINGS[1])),
                    },
                )
            })
            .collect();
        Ok(Lock::new(tok.name(), tools))
    }

    /// A lock over these tools, with its totals and digest.
    pub fn new(tokenizer: &str, tools: BTreeMap<String, Weight>) -> Lock {
        let mut lock = Lock {
            tokenizer: tokenizer.into(),
            total_bytes: tools.values().map(|w| w.bytes).sum(),
            total_tokens: tools.values().map(|w| w.tokens).sum(),
            label: format!(
                "bytes observed; tokens {}",
                Tokenizer::parse(tokenizer)
                    .map(|t| t.label())
                    .unwrap_or_else(|_| format!("estimated:{tokenizer}"))
            ),
            tools,
            digest: None,
        };
        lock.digest = Some(lock.compute_digest());
        lock
    }

    fn compute_digest(&self) -> String {
        use sha2::Digest;
        let body = serde_json::json!({"tokenizer": self.tokenizer, "tools": self.tools});
        let hash = sha2::Sha256::digest(crate::json::compact(&body).as_bytes());
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    }

    /// The totals add up and the digest (when there is one) matches.
    pub fn verify(&self) -> Result<()> {
        let bytes = self
            .tools
            .values()
            .try_fold(0usize, |a, w| a.checked_add(w.bytes));
        let tokens = self
            .tools
            .values()
            .try_fold(0u64, |a, w| a.checked_add(w.tokens));
        if bytes != Some(self.total_bytes) || tokens != Some(self.total_tokens) {
            return Err(Error::input(format!(
                "its totals ({} bytes, {} tokens) are not the sum of its {} tools ({} bytes, {} tokens)",
                self.total_bytes,
                self.total_tokens,
                self.tools.len(),
                bytes.map_or("overflowing".into(), |b| b.to_string()),
                tokens.map_or("overflowing".into(), |t| t.to_string()),
            )));
        }
        match &self.digest {
            None => Err(Error::input(
                "it has no digest, so an edit by hand cannot be told from a measured baseline",
            )),
            Some(d) if *d != self.compute_digest() => Err(Error::input(
                "its digest does not match its tools: it was edited by hand or cut",
            )),
            Some(_) => Ok(()),
        }
    }

    pub fn read(path: &Path) -> Result<Lock> {
        if std::fs::symlink_metadata(path).is_err() {
            return Err(Error::input(format!(
                "{}: no baseline yet; write one with `toolcost check --update`",
                path.display()
            )));
        }
        let text = crate::input::read_text(path, crate::input::LARGE)?;
        // A tool named twice would otherwise keep its last weight without a word.
        let lock: Lock = crate::json::parse_unique(text.as_bytes())
            .and_then(|v| serde_json::from_value(v).map_err(|e| e.to_string()))
            .map_err(|e| {
                Error::input(format!(
                    "{}: not a toolcost lock file ({e})",
                    path.display()
                ))
            })?;
        lock.verify().map_err(|e| {
            Error::input(format!(
                "{}: {e}; rewrite it with `toolcost check --update` from a trusted state",
                path.display()
            ))
        })?;
        Ok(lock)
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("serialises");
        s.push('\n');
        s
    }
}

/// How one tool changed against the baseline.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    Added,
    Removed,
    Grown,
    Shrunk,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ToolChange {
    pub name: String,
    pub change: Change,
    pub before: Option<Weight>,
    pub after: Option<Weight>,
}

/// A budget rule broken.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Violation {
    /// The tool, or empty for a total.
    pub tool: String,
    pub rule: String,
    pub message: String,
}

/// The outcome of one check.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub tokenizer: String,
    pub tools: usize,
    pub total_bytes: usize,
    pub total_tokens: u64,
    pub baseline_total_tokens: u64,
    pub growth_pct: f64,
    pub changes: Vec<ToolChange>,
    pub violations: Vec<Violation>,
    /// Evidence of the figures (the current lock's label); growth is derived from them.
    pub label: String,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Compare the current tools with the baseline under the budget.
pub fn check(current: &Lock, baseline: &Lock, budget: &Budget) -> Result<Outcome> {
    budget.validate()?;
    if current.tokenizer != baseline.tokenizer {
        return Err(Error::input(format!(
            "the lock file counts with {} but the budget says {}; rewrite it with `toolcost check --update`",
            baseline.tokenizer, current.tokenizer
        )));
    }
    let changes = changes(current, baseline);
    let mut violations = tool_violations(current, budget);
    // A server that lists nothing where the baseline had tools has not answered as before
    // (crashed, lost its credentials, listed an error page): that is no saving.
    if current.tools.is_empty() && !baseline.tools.is_empty() {
        violations.push(Violation {
            tool: String::new(),
            rule: "source_empty".into(),
            message: format!(
                "the source lists no tools where the baseline has {}: it did not answer as before; if it really has none, rewrite the baseline with `toolcost check --update`",
                baseline.tools.len()
            ),
        });
    }
    violations.extend(growth_violations(&changes, &current.tokenizer, budget));
    violations.extend(growth_violations(
        &case_renames(&changes),
        &current.tokenizer,
        budget,
    ));
    violations.extend(added_violations(
        &changes,
        baseline,
        &current.tokenizer,
        budget,
    ));
    if let Some(max) = budget
        .max_total_tokens
        .filter(|m| current.total_tokens > *m)
    {
        violations.push(Violation {
            tool: String::new(),
            rule: "max_total_tokens".into(),
            message: format!(
                "all tools together are {} {} tokens, over the budget of {max}",
                current.total_tokens, current.tokenizer
            ),
        });
    }
    // Growth from nothing is unbounded: it passes no finite budget (JSON writes it as null).
    let growth_pct = if baseline.total_tokens == 0 {
        if current.total_tokens == 0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (current.total_tokens as f64 - baseline.total_tokens as f64) / baseline.total_tokens as f64
            * 100.0
    };
    let max_growth = budget.max_growth_pct.unwrap_or(DEFAULT_MAX_GROWTH_PCT);
    if let Some(max) = Some(max_growth).filter(|m| growth_pct > *m) {
        violations.push(Violation {
            tool: String::new(),
            rule: "max_growth_pct".into(),
            message: match growth_pct.is_finite() {
                true => format!(
                    "total tokens grew {growth_pct:.2}% over the baseline ({} -> {}), over the budget of {max}%",
                    baseline.total_tokens, current.total_tokens
                ),
                false => format!(
                    "the baseline holds no tokens and the tools now hold {}: growth from nothing passes no growth budget (if this is the first lock, write it with --update)",
                    current.total_tokens
                ),
            },
        });
    }
    Ok(Outcome {
        tokenizer: current.tokenizer.clone(),
        tools: current.tools.len(),
        total_bytes: current.total_bytes,
        total_tokens: current.total_tokens,
        baseline_total_tokens: baseline.total_tokens,
        growth_pct,
        changes,
        violations,
        label: current.label.clone(),
    })
}

/// Tools added, removed, grown or shrunk since the baseline.
fn changes(current: &Lock, baseline: &Lock) -> Vec<ToolChange> {
    let mut changes = Vec::new();
    for (name, after) in &current.tools {
        match baseline.tools.get(name) {
            None => changes.push(ToolChange {
                name: name.clone(),
                change: Change::Added,
                before: None,
                after: Some(*after),
            }),
            Some(before)
                if after.tokens > before.tokens
                    || (after.tokens == before.tokens && after.bytes > before.bytes) =>
            {
                changes.push(ToolChange {
                    name: name.clone(),
                    change: Change::Grown,
                    before: Some(*before),
                    after: Some(*after),
                })
            }
            Some(before) if after != before => changes.push(ToolChange {
                name: name.clone(),
                change: Change::Shrunk,
                before: Some(*before),
                after: Some(*after),
            }),
            Some(_) => {}
        }
    }
    for (name, before) in &baseline.tools {
        if !current.tools.contains_key(name) {
            changes.push(ToolChange {
                name: name.clone(),
                change: Change::Removed,
                before: Some(*before),
                after: None,
            });
        }
    }
    changes
}

/// Each tool over the per-tool byte or token budget.
fn tool_violations(current: &Lock, budget: &Budget) -> Vec<Violation> {
    let mut violations = Vec::new();
    for (name, w) in &current.tools {
        if let Some(max) = budget.max_bytes_per_tool.filter(|m| w.bytes > *m) {
            violations.push(Violation {
                tool: name.clone(),
                rule: "max_bytes_per_tool".into(),
                message: format!("{name} is {} bytes, over the budget of {max}", w.bytes),
            });
        }
        if let Some(max) = budget.max_tokens_per_tool.filter(|m| w.tokens > *m) {
            violations.push(Violation {
                tool: name.clone(),
                rule: "max_tokens_per_tool".into(),
                message: format!(
                    "{name} is {} {} tokens, over the budget of {max}",
                    w.tokens, current.tokenizer
                ),
            });
        }
    }
    violations
}

/// Each tool that is new (added, or renamed from one the baseline had) and larger than the
/// baseline's largest by more than the per-definition growth budget: a rename resets no
/// definition's history, so a new tool is held to what any one definition may grow to.
fn added_violations(
    changes: &[ToolChange],
    baseline: &Lock,
    tokenizer: &str,
    budget: &Budget,
) -> Vec<Violation> {
    let Some(largest) = baseline.tools.values().map(|w| w.tokens).max() else {
        return Vec::new();
    };
    let by_pct = (largest as f64 * (1.0 + budget.tool_growth_pct() / 100.0)).floor() as u64;
    let bound = by_pct.min(largest.saturating_add(budget.tool_growth_tokens()));
    changes
        .iter()
        .filter(|c| c.change == Change::Added)
        .filter_map(|c| {
            let after = c.after?;
            (after.tokens > bound).then(|| Violation {
                tool: c.name.clone(),
                rule: "max_tool_growth_tokens".into(),
                message: format!(
                    "{} is new at {} {tokenizer} tokens, more than the baseline's largest definition ({largest}) may grow to under the per-definition budget ({bound})",
                    c.name, after.tokens
                ),
            })
        })
        .collect()
}

/// Tools renamed by case alone (`search` removed, `SEARCH` added): one definition with a new
/// spelling, so held to the per-definition budget against the one it replaced, as a grown tool
/// (named `NEW (was OLD)`). Each removed tool pairs with at most one added one.
fn case_renames(changes: &[ToolChange]) -> Vec<ToolChange> {
    let mut removed: Vec<&ToolChange> = changes
        .iter()
        .filter(|c| c.change == Change::Removed)
        .collect();
    let mut out = Vec::new();
    for added in changes.iter().filter(|c| c.change == Change::Added) {
        let key = added.name.to_lowercase();
        if let Some(at) = removed.iter().position(|r| r.name.to_lowercase() == key) {
            let old = removed.swap_remove(at);
            out.push(ToolChange {
                name: format!("{} (was {})", added.name, old.name),
                change: Change::Grown,
                before: old.before,
                after: added.after,
            });
        }
    }
    out
}

/// Each definition that grew past the per-definition budget (a share or a token count).
fn growth_violations(changes: &[ToolChange], tokenizer: &str, budget: &Budget) -> Vec<Violation> {
    let mut violations = Vec::new();
    for c in changes.iter().filter(|c| c.change == Change::Grown) {
        let (Some(before), Some(after)) = (c.before, c.after) else {
            continue;
        };
        let grew = after.tokens.saturating_sub(before.tokens);
        let pct = if before.tokens == 0 {
            if grew == 0 {
                0.0
            } else {
                f64::INFINITY
            }
        } else {
            grew as f64 / before.tokens as f64 * 100.0
        };
        let what = format!(
            "{} grew from {} to {} {} tokens ({} -> {} bytes, +{pct:.1}%)",
            c.name, before.tokens, after.tokens, tokenizer, before.bytes, after.bytes
        );
        let max_pct = budget.tool_growth_pct();
        let max_tokens = budget.tool_growth_tokens();
        if pct > max_pct {
            violations.push(Violation {
                tool: c.name.clone(),
                rule: "max_tool_growth_pct".into(),
                message: format!("{what}, over the per-definition budget of {max_pct}%"),
            });
        } else if grew > max_tokens {
            violations.push(Violation {
                tool: c.name.clone(),
                rule: "max_tool_growth_tokens".into(),
                message: format!("{what}, over the per-definition budget of {max_tokens} tokens"),
            });
        }
    }
    violations
}

/// How `check` prints its outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    /// GitHub Actions workflow commands (`::error` / `::notice`).
    Github,
    /// A pull-request comment in Markdown.
    Markdown,
    Json,
}

impl Format {
    pub fn parse(s: &str) -> Result<Format> {
        match s {
            "table" => Ok(Format::Table),
            "github" => Ok(Format::Github),
            "md" | "markdown" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            other => Err(Error::unknown(
                "format",
                other,
                &["table", "github", "md", "json"],
            )),
        }
    }
}

#[cfg(test)]
mod tests;
