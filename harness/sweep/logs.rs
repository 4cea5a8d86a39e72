//! `toolcost report --log FILE.sqlite`: the task tables and plots from any gateway log.

use super::frame::{self, LogSummary};
use super::plot::{self, BytesVsTokens};
use crate::driver::TaskResult;
use crate::error::{Error, Result};
use crate::gateway::log;
use crate::report::{self, OutputFormat};
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
    let mut files = vec![
        out.join("log.csv"),
        out.join("log.json"),
        out.join("summary.md"),
    ];
    report::write_atomic(&files[0], &report::render(OutputFormat::Csv, &summaries))?;
    report::write_atomic(&files[1], &report::render(OutputFormat::Json, &summaries))?;
    report::write_atomic(
        &files[2],
        super::summary::log(&log_path.display().to_string(), &summaries).as_bytes(),
    )?;
    // The task charts read task results; a log summary carries the same figures.
    let as_tasks: Vec<TaskResult> = summaries
        .iter()
        .map(|s| TaskResult {
            scenario: s.scenario.clone(),
            surface: s.surface.clone(),
            rows: s.rows,
            task: if s.task.is_empty() {
                "(none)".into()
            } else {
                s.task.clone()
            },
            success: s.errors == 0,
            rounds: s.requests,
            misses: 0,
            input_tokens: s.input_tokens,
            cached_input_tokens: s.cached_input_tokens,
            cache_write_tokens: 0,
            output_tokens: s.output_tokens,
            cost_usd: s.cost_usd,
            wire_bytes: s.request_bytes as usize,
            wall_ms: 0.0,
            label: s.label.clone(),
            answer: String::new(),
        })
        .collect();
    files.extend(plot::task_plots(out, &as_tasks)?);
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
            &plot::Renamed(
                "log-bytes-vs-tokens".into(),
                BytesVsTokens { series },
                "Request bytes vs billed input tokens (first request of each surface and N)".into(),
            ),
        )?);
    }
    Ok((summaries, files))
}
