//! `toolcost report --log FILE.sqlite`: the task tables and plots from any gateway log.

use super::frame::{self, LogSummary};
use super::plot::{self, BytesVsTokens};
use crate::error::{Error, Result};
use crate::gateway::log;
use crate::report;
use std::path::{Path, PathBuf};

/// Summarise `log_path` into `out`; returns the summaries and the files written.
pub fn report_log(log_path: &Path, out: &Path) -> Result<(Vec<LogSummary>, Vec<PathBuf>)> {
    if !log_path.exists() {
        return Err(Error::input(format!(
            "{}: no such gateway log (toolcost gateway --log writes one)",
            log_path.display()
        )));
    }
    let rows = log::read_all(log_path)?;
    if rows.is_empty() {
        return Err(Error::input(format!(
            "{}: the log has no requests yet",
            log_path.display()
        )));
    }
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let summaries = frame::summarise_log(&rows)?;
    let mut files = report::write_csv_json(out, "log", &summaries)?.to_vec();
    let summary = out.join("summary.md");
    report::write_atomic(
        &summary,
        super::summary::log(&log_path.display().to_string(), &summaries).as_bytes(),
    )?;
    files.push(summary);
    let points: Vec<plot::TaskPoint> = summaries
        .iter()
        .map(|s| plot::TaskPoint {
            surface: s.surface.clone(),
            task: if s.task.is_empty() {
                "(none)".into()
            } else {
                s.task.clone()
            },
            rows: s.rows,
            rounds: s.requests,
            input_tokens: s.input_tokens,
            label: s.label.clone(),
        })
        .collect();
    files.extend(plot::task_plots(out, &points)?);
    // Every request: bytes sent against tokens billed, one series per surface.
    let mut series: Vec<plot::BytesSeries> = Vec::new();
    for r in &rows {
        let meta: serde_json::Value = serde_json::from_str(&r.metadata).unwrap_or_default();
        let surface = meta["surface"]
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| format!("model:{}", r.model));
        let n = meta["n"].as_u64().unwrap_or(0) as usize;
        if r.request_bytes == 0 || r.input_tokens == 0 {
            continue;
        }
        let p = (r.request_bytes as f64, r.input_tokens as f64, n);
        match series.iter_mut().find(|(s, _)| *s == surface) {
            Some((_, v)) => {
                if !v.iter().any(|q| q.2 == n) {
                    v.push(p);
                }
            }
            None => series.push((surface, vec![p])),
        }
    }
    for (_, v) in series.iter_mut() {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    if !series.is_empty() {
        files.extend(plot::write(
            out,
            &BytesVsTokens {
                stem: "log-bytes-vs-tokens".into(),
                title: "Request bytes vs billed input tokens (first request of each surface and N)"
                    .into(),
                series,
                token_label: log_label(&rows),
            },
        )?);
    }
    Ok((summaries, files))
}

/// The usage source of a log's rows, for the token axis: one source, or `mixed`.
fn log_label(rows: &[log::LogRow]) -> String {
    let mut sources: Vec<&str> = rows.iter().map(|r| r.usage_source.as_str()).collect();
    sources.sort_unstable();
    sources.dedup();
    match sources.as_slice() {
        [one] => (*one).to_string(),
        _ => "mixed sources: see the usage_source column".to_string(),
    }
}
