//! The sweep's aggregation, in polars: ratios to protocol-only by join, monthly cost by column
//! arithmetic, growth and mean marginal tokens by group-by; and the gateway log's rows summed
//! per task.
//!
//! polars is built with its core and ops only (no lazy engine, no I/O): the lazy engine adds
//! several minutes to a clean build on two cores for frames of a few hundred rows. polars marks
//! the eager group-by aggregations (`sum`, `mean`, `first`) deprecated in favour of the lazy
//! API; they remain supported and are what this build has, hence the `allow` below.
#![allow(deprecated)]

use super::SweepRow;
use crate::error::{Error, Result};
use crate::gateway::log::LogRow;
use crate::measure::MeasureRow;
use crate::surface::SurfaceKind;
use polars::prelude::*;

fn pe(e: PolarsError) -> Error {
    Error::input(format!("aggregation: {e}"))
}

/// `i`: 0..len, to restore row order after joins.
fn index(len: usize) -> Column {
    Column::new("i".into(), (0..len as u64).collect::<Vec<u64>>())
}

fn strings(df: &DataFrame, name: &str) -> Result<Vec<String>> {
    Ok(df
        .column(name)
        .map_err(pe)?
        .str()
        .map_err(pe)?
        .iter()
        .map(|v| v.unwrap_or_default().to_string())
        .collect())
}

fn floats(df: &DataFrame, name: &str) -> Result<Vec<Option<f64>>> {
    let c = df
        .column(name)
        .map_err(pe)?
        .cast(&DataType::Float64)
        .map_err(pe)?;
    Ok(c.f64().map_err(pe)?.iter().collect())
}

fn ints(df: &DataFrame, name: &str) -> Result<Vec<u64>> {
    let c = df
        .column(name)
        .map_err(pe)?
        .cast(&DataType::UInt64)
        .map_err(pe)?;
    Ok(c.u64()
        .map_err(pe)?
        .iter()
        .map(|v| v.unwrap_or(0))
        .collect())
}

/// The measured rows as a frame, with `i` keeping their order through joins.
fn measure_frame(rows: &[MeasureRow]) -> Result<DataFrame> {
    let s = |f: fn(&MeasureRow) -> String| rows.iter().map(f).collect::<Vec<String>>();
    let u = |f: fn(&MeasureRow) -> u64| rows.iter().map(f).collect::<Vec<u64>>();
    DataFrame::new_infer_height(vec![
        index(rows.len()),
        Column::new("surface".into(), s(|r| r.surface.clone())),
        Column::new("client".into(), s(|r| r.client.clone())),
        Column::new("model".into(), s(|r| r.model.clone())),
        Column::new("tokenizer".into(), s(|r| r.tokenizer.clone())),
        Column::new("label".into(), s(|r| r.label.clone())),
        Column::new("warnings".into(), s(|r| r.warnings.join("; "))),
        Column::new("cost_label".into(), s(|r| r.cost_label.clone())),
        Column::new("cache".into(), s(|r| r.cache.clone())),
        Column::new("rows".into(), u(|r| r.rows as u64)),
        Column::new(
            "definitions_in_context".into(),
            u(|r| r.definitions_in_context as u64),
        ),
        Column::new("tools_in_request".into(), u(|r| r.tools_in_request as u64)),
        Column::new("wire_bytes".into(), u(|r| r.wire_bytes as u64)),
        Column::new("input_tokens".into(), u(|r| r.input_tokens)),
        Column::new(
            "marginal".into(),
            rows.iter()
                .map(|r| r.marginal_tokens_per_definition)
                .collect::<Vec<Option<f64>>>(),
        ),
        Column::new(
            "cost_usd".into(),
            rows.iter()
                .map(|r| r.cost_usd)
                .collect::<Vec<Option<f64>>>(),
        ),
        Column::new(
            "cost_usd_cold".into(),
            rows.iter()
                .map(|r| r.cost_usd_cold)
                .collect::<Vec<Option<f64>>>(),
        ),
    ])
    .map_err(pe)
}

const KEYS: [&str; 3] = ["client", "tokenizer", "rows"];

/// Measured rows to sweep rows: each joined to protocol-only's tokens at the same client,
/// tokenizer and N for the ratio, and its warm cost scaled to a month.
pub fn enrich(rows: &[MeasureRow], turns_per_month: u64) -> Result<Vec<SweepRow>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let df = measure_frame(rows)?;
    let is_protocol = df
        .column("surface")
        .map_err(pe)?
        .str()
        .map_err(pe)?
        .equal(SurfaceKind::PROTOCOL_ONLY.name());
    let mut base = df
        .filter(&is_protocol)
        .map_err(pe)?
        .select(["client", "tokenizer", "rows", "input_tokens"])
        .map_err(pe)?;
    base.rename("input_tokens", "protocol_tokens".into())
        .map_err(pe)?;
    let joined = df
        .left_join(&base, KEYS, KEYS)
        .map_err(pe)?
        .sort(["i"], SortMultipleOptions::default())
        .map_err(pe)?;
    let tokens = joined
        .column("input_tokens")
        .map_err(pe)?
        .cast(&DataType::Float64)
        .map_err(pe)?;
    let protocol = joined
        .column("protocol_tokens")
        .map_err(pe)?
        .cast(&DataType::Float64)
        .map_err(pe)?;
    let ratio =
        (tokens.as_materialized_series() / protocol.as_materialized_series()).map_err(pe)?;
    let month = joined
        .column("cost_usd")
        .map_err(pe)?
        .as_materialized_series()
        * turns_per_month as f64;
    let mut out = joined;
    out.with_column(ratio.with_name("ratio".into()).into())
        .map_err(pe)?;
    out.with_column(month.with_name("month".into()).into())
        .map_err(pe)?;

    let surface = strings(&out, "surface")?;
    let client = strings(&out, "client")?;
    let model = strings(&out, "model")?;
    let tokenizer = strings(&out, "tokenizer")?;
    let label = strings(&out, "label")?;
    let warnings = strings(&out, "warnings")?;
    let cost_label = strings(&out, "cost_label")?;
    let cache = strings(&out, "cache")?;

    let n = ints(&out, "rows")?;
    let in_ctx = ints(&out, "definitions_in_context")?;
    let tools = ints(&out, "tools_in_request")?;
    let bytes = ints(&out, "wire_bytes")?;
    let input = ints(&out, "input_tokens")?;
    let ratio = floats(&out, "ratio")?;
    let marginal = floats(&out, "marginal")?;
    let cost = floats(&out, "cost_usd")?;
    let cold = floats(&out, "cost_usd_cold")?;
    let month = floats(&out, "month")?;
    Ok((0..out.height())
        .map(|i| SweepRow {
            surface: surface[i].clone(),
            client: client[i].clone(),
            model: model[i].clone(),
            tokenizer: tokenizer[i].clone(),
            rows: n[i] as usize,
            definitions_in_context: in_ctx[i] as usize,
            tools_in_request: tools[i] as usize,
            wire_bytes: bytes[i],
            input_tokens: input[i],
            ratio_to_protocol_only: ratio[i].filter(|x| x.is_finite()),
            marginal_tokens_per_definition: marginal[i],
            cost_usd: cost[i],
            cost_usd_cold: cold[i],
            cost_per_month_usd: month[i],
            label: label[i].clone(),
            cost_label: cost_label[i].clone(),
            cache: cache[i].clone(),
            refused: !warnings[i].is_empty(),
            warnings: warnings[i].clone(),
        })
        .collect())
}

/// How one surface grows from the smallest positive N to the largest.
#[derive(Debug, Clone, PartialEq)]
pub struct Growth {
    pub surface: String,
    pub client: String,
    pub tokenizer: String,
    pub from_rows: usize,
    pub to_rows: usize,
    pub from_tokens: u64,
    pub to_tokens: u64,
    /// to_tokens / from_tokens.
    pub factor: f64,
    /// Mean of the marginal tokens per definition over every N > 0.
    pub mean_marginal: Option<f64>,
}

/// Growth per surface x client x tokenizer, in the rows' first-seen order.
pub fn growth(rows: &[SweepRow]) -> Result<Vec<Growth>> {
    let positive: Vec<&SweepRow> = rows.iter().filter(|r| r.rows > 0).collect();
    let (Some(lo), Some(hi)) = (
        positive.iter().map(|r| r.rows).min(),
        positive.iter().map(|r| r.rows).max(),
    ) else {
        return Ok(Vec::new());
    };
    let frame = |of: &[&SweepRow]| -> Result<DataFrame> {
        let s = |f: fn(&SweepRow) -> String| of.iter().map(|r| f(r)).collect::<Vec<String>>();
        DataFrame::new_infer_height(vec![
            index(of.len()),
            Column::new("surface".into(), s(|r| r.surface.clone())),
            Column::new("client".into(), s(|r| r.client.clone())),
            Column::new("tokenizer".into(), s(|r| r.tokenizer.clone())),
            Column::new(
                "rows".into(),
                of.iter().map(|r| r.rows as u64).collect::<Vec<_>>(),
            ),
            Column::new(
                "tokens".into(),
                of.iter().map(|r| r.input_tokens).collect::<Vec<_>>(),
            ),
            Column::new(
                "marginal".into(),
                of.iter()
                    .map(|r| r.marginal_tokens_per_definition)
                    .collect::<Vec<Option<f64>>>(),
            ),
        ])
        .map_err(pe)
    };
    let keys = ["surface", "client", "tokenizer"];
    let at = |n: usize, name: &str| -> Result<DataFrame> {
        let of: Vec<&SweepRow> = positive.iter().copied().filter(|r| r.rows == n).collect();
        let mut f = frame(&of)?
            .select(["i", "surface", "client", "tokenizer", "tokens"])
            .map_err(pe)?;
        f.rename("tokens", name.into()).map_err(pe)?;
        Ok(f)
    };
    let from = at(lo, "from")?;
    let mut to = at(hi, "to")?;
    let _ = to.drop_in_place("i").map_err(pe)?;
    let all = frame(&positive)?;
    let mean = all
        .group_by(keys)
        .map_err(pe)?
        .select(["marginal"])
        .mean()
        .map_err(pe)?;
    let g = from
        .inner_join(&to, keys, keys)
        .map_err(pe)?
        .left_join(&mean, keys, keys)
        .map_err(pe)?
        .sort(["i"], SortMultipleOptions::default())
        .map_err(pe)?;
    let surface = strings(&g, "surface")?;
    let client = strings(&g, "client")?;
    let tokenizer = strings(&g, "tokenizer")?;
    let f = ints(&g, "from")?;
    let t = ints(&g, "to")?;
    let m = floats(&g, "marginal_mean")?;
    Ok((0..g.height())
        .map(|i| Growth {
            surface: surface[i].clone(),
            client: client[i].clone(),
            tokenizer: tokenizer[i].clone(),
            from_rows: lo,
            to_rows: hi,
            from_tokens: f[i],
            to_tokens: t[i],
            factor: t[i] as f64 / f[i].max(1) as f64,
            mean_marginal: m[i],
        })
        .collect())
}

/// Gateway log rows summed per run: requests (rounds), tokens, bytes and cost. Rows whose
/// metadata names no surface are grouped under the request's model.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LogSummary {
    pub scenario: String,
    pub surface: String,
    pub rows: usize,
    pub task: String,
    pub requests: usize,
    pub errors: usize,
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub request_bytes: u64,
    pub cost_usd: f64,
    /// The log rows' usage source: `estimated:<tokenizer>` (mock) or `observed` (a provider).
    pub label: String,
}

impl crate::report::Tabular for LogSummary {
    // polars has a `Column` too.
    const COLUMNS: &'static [crate::report::Column] =
        &[crate::report::Column::field("cost_usd").places(8)];
}

/// Sum a gateway log per (scenario, surface, N, task), in first-seen order.
pub fn summarise_log(rows: &[LogRow]) -> Result<Vec<LogSummary>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let df = log_frame(rows)?;
    let keys = ["scenario", "surface", "rows", "task"];
    let sums = df
        .group_by_stable(keys)
        .map_err(pe)?
        .select([
            "errors",
            "input_tokens",
            "cached_input_tokens",
            "output_tokens",
            "request_bytes",
            "cost_usd",
        ])
        .sum()
        .map_err(pe)?;
    let firsts = df
        .group_by_stable(keys)
        .map_err(pe)?
        .select(["i", "label"])
        .first()
        .map_err(pe)?;
    let counts = df
        .group_by_stable(keys)
        .map_err(pe)?
        .select(["i"])
        .count()
        .map_err(pe)?;
    let g = sums
        .inner_join(&firsts, keys, keys)
        .map_err(pe)?
        .inner_join(&counts, keys, keys)
        .map_err(pe)?
        .sort(["i_first"], SortMultipleOptions::default())
        .map_err(pe)?;
    let scenario = strings(&g, "scenario")?;
    let surface = strings(&g, "surface")?;
    let task = strings(&g, "task")?;
    let label = strings(&g, "label_first")?;
    let n = ints(&g, "rows")?;
    let requests = ints(&g, "i_count")?;
    let errors = ints(&g, "errors_sum")?;
    let input = ints(&g, "input_tokens_sum")?;
    let cached = ints(&g, "cached_input_tokens_sum")?;
    let output = ints(&g, "output_tokens_sum")?;
    let bytes = ints(&g, "request_bytes_sum")?;
    let cost = floats(&g, "cost_usd_sum")?;
    Ok((0..g.height())
        .map(|i| LogSummary {
            scenario: scenario[i].clone(),
            surface: surface[i].clone(),
            rows: n[i] as usize,
            task: task[i].clone(),
            requests: requests[i] as usize,
            errors: errors[i] as usize,
            input_tokens: input[i],
            cached_input_tokens: cached[i],
            output_tokens: output[i],
            request_bytes: bytes[i],
            cost_usd: cost[i].unwrap_or(0.0),
            label: label[i].clone(),
        })
        .collect())
}

/// One line per log row: the metadata's keys (requests without metadata grouped by model)
/// beside the row's figures.
fn log_frame(rows: &[LogRow]) -> Result<DataFrame> {
    let meta: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| serde_json::from_str(&r.metadata).unwrap_or(serde_json::Value::Null))
        .collect();
    let text = |f: &dyn Fn(usize) -> String| (0..rows.len()).map(f).collect::<Vec<String>>();
    let m = |i: usize, k: &str| meta[i][k].as_str().map(String::from);
    DataFrame::new_infer_height(vec![
        index(rows.len()),
        Column::new(
            "scenario".into(),
            text(&|i| m(i, "scenario").unwrap_or_default()),
        ),
        Column::new(
            "surface".into(),
            text(&|i| m(i, "surface").unwrap_or_else(|| format!("model:{}", rows[i].model))),
        ),
        Column::new(
            "rows".into(),
            (0..rows.len())
                .map(|i| meta[i]["n"].as_u64().unwrap_or(0))
                .collect::<Vec<u64>>(),
        ),
        Column::new("task".into(), text(&|i| m(i, "task").unwrap_or_default())),
        Column::new("label".into(), text(&|i| rows[i].usage_source.clone())),
        Column::new(
            "errors".into(),
            rows.iter()
                .map(|r| u64::from(r.error.is_some()))
                .collect::<Vec<u64>>(),
        ),
        Column::new(
            "input_tokens".into(),
            rows.iter().map(|r| r.input_tokens).collect::<Vec<_>>(),
        ),
        Column::new(
            "cached_input_tokens".into(),
            rows.iter()
                .map(|r| r.cached_input_tokens)
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "output_tokens".into(),
            rows.iter().map(|r| r.output_tokens).collect::<Vec<_>>(),
        ),
        Column::new(
            "request_bytes".into(),
            rows.iter()
                .map(|r| r.request_bytes as u64)
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "cost_usd".into(),
            rows.iter().map(|r| r.cost_usd).collect::<Vec<_>>(),
        ),
    ])
    .map_err(pe)
}
