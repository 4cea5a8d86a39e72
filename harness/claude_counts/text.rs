//! Recorded counts of plain texts, each sent as one user message, beside the exact tokenizer's.

use crate::error::{Error, Result};
use crate::report::{Column, Tabular};
use crate::tokens::claude::{self};
use crate::tokens::claude_exact::Family;
use crate::tokens::Tokenizer;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// The recorded counts of plain texts: a folder with `<set>.jsonl.gz` (one `{"id", "text"}`
/// a line) and `<set>_counts.json` (`{family: {"model", "counts": {id: input_tokens}}}`), each
/// count `count_tokens` of a request of one user message holding the text.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TextRow {
    pub set: String,
    pub model: String,
    /// The exact tokenizer's family.
    pub tokenizer: String,
    pub documents: usize,
    /// Documents counted exactly as recorded.
    pub exact: usize,
    pub exact_pct: f64,
    /// Mean of |estimate - recorded| / recorded, percent.
    pub mape_pct: f64,
    /// The largest |estimate - recorded|, tokens.
    pub worst_tokens: u64,
    /// The same for the estimator toolcost had before (claude-est, or claude-legacy-est on the
    /// v3 family).
    pub before_mape_pct: f64,
}

impl Tabular for TextRow {
    const COLUMNS: &'static [Column] = &[
        Column::field("exact_pct").places(2),
        Column::field("mape_pct").places(3),
        Column::field("before_mape_pct").places(2),
    ];
}

/// The largest text set read, compressed or counted.
const MAX_TEXT_SET_BYTES: u64 = 512 * 1024 * 1024;

/// Count every text of every set in `dir` with its family's exact tokenizer.
pub fn check_texts(dir: &Path) -> Result<Vec<TextRow>> {
    use std::io::Read;
    let mut sets: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix("_counts.json").map(str::to_string)
        })
        .collect();
    sets.sort();
    let mut rows = Vec::new();
    for set in sets {
        let gz = crate::input::read(&dir.join(format!("{set}.jsonl.gz")), MAX_TEXT_SET_BYTES)?;
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(gz.as_slice())
            .take(MAX_TEXT_SET_BYTES + 1)
            .read_to_end(&mut raw)
            .map_err(|e| Error::input(format!("{set}.jsonl.gz: not gzip: {e}")))?;
        if raw.len() as u64 > MAX_TEXT_SET_BYTES {
            return Err(Error::input(format!(
                "{set}.jsonl.gz: more than {MAX_TEXT_SET_BYTES} bytes unpacked"
            )));
        }
        let mut texts: Vec<(String, String)> = Vec::new();
        for (i, line) in raw.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let v: Value = serde_json::from_slice(line).map_err(|e| {
                Error::input(format!("{set}.jsonl.gz line {}: not JSON: {e}", i + 1))
            })?;
            match (v["id"].as_str(), v["text"].as_str()) {
                (Some(id), Some(t)) => texts.push((id.to_string(), t.to_string())),
                _ => {
                    return Err(Error::input(format!(
                        "{set}.jsonl.gz line {}: needs string `id` and `text`",
                        i + 1
                    )))
                }
            }
        }
        let counts: Value = serde_json::from_slice(&crate::input::read(
            &dir.join(format!("{set}_counts.json")),
            MAX_TEXT_SET_BYTES,
        )?)
        .map_err(|e| Error::input(format!("{set}_counts.json: not JSON: {e}")))?;
        let families = counts
            .as_object()
            .ok_or_else(|| Error::input(format!("{set}_counts.json: not an object of families")))?;
        for (key, rec) in families {
            let model = rec["model"].as_str().unwrap_or("").to_string();
            let family = Family::of_model(&model).ok_or_else(|| {
                Error::input(format!(
                    "{set}_counts.json: family `{key}` names model `{model}`, which is no Claude model"
                ))
            })?;
            let tok = Tokenizer::of_claude_family(family);
            let (mut exact, mut n, mut err, mut worst, mut before_err) = (0, 0, 0.0, 0u64, 0.0);
            for (id, text) in &texts {
                let Some(want) = rec["counts"][id.as_str()].as_u64() else {
                    continue;
                };
                if want == 0 {
                    return Err(Error::input(format!(
                        "{set}_counts.json: {key}/{id} is 0 tokens"
                    )));
                }
                let got = family.message_tokens(text) as u64;
                n += 1;
                exact += usize::from(got == want);
                worst = worst.max(got.abs_diff(want));
                err += got.abs_diff(want) as f64 / want as f64;
                let before = match family {
                    Family::V3 => Tokenizer::ClaudeLegacyEst.count(text),
                    Family::V4_7 | Family::V5 => {
                        Tokenizer::ClaudeEst.count(text) + claude::current_framing()
                    }
                };
                before_err += (before.round() - want as f64).abs() / want as f64;
            }
            let n_f = n.max(1) as f64;
            rows.push(TextRow {
                set: set.clone(),
                model,
                tokenizer: tok.name().to_string(),
                documents: n,
                exact,
                exact_pct: 100.0 * exact as f64 / n_f,
                mape_pct: 100.0 * err / n_f,
                worst_tokens: worst,
                before_mape_pct: 100.0 * before_err / n_f,
            });
        }
    }
    Ok(rows)
}
