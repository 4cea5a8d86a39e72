//! The rows that check toolcost's inputs against the record rather than measure it: the price
//! card on the recorded dollars (arithmetic on recorded figures alone), and the generated
//! catalogue's bytes beside the recorded projection's (the generator was calibrated to them).

use super::*;

/// Every (cached, uncached, output) split of `total` input tokens that the card prices at
/// exactly `usd`, fewest output tokens first (cached tokens counted inside input tokens).
pub fn exact_splits(card: &PriceCard, total: u64, usd: f64, max_output: u64) -> Vec<Usage> {
    // Prices in cents per million tokens times tokens gives units of 1e-8 dollars: exact integers.
    let p = |x: f64| (x * 100.0).round() as i128;
    let (pin, pcache, pout) = (p(card.input), p(card.cached_input), p(card.output));
    let target = (usd * 1e8).round() as i128;
    let total = total as i128;
    let mut out = Vec::new();
    for o in 0..=max_output as i128 {
        // pcache * c + pin * u + pout * o = target, with c = total - u.
        let rest = target - pcache * total - pout * o;
        let per = pin - pcache;
        if per > 0 && rest >= 0 && rest % per == 0 {
            let u = rest / per;
            if u <= total {
                out.push(Usage {
                    uncached_input: u as u64,
                    cached_input: (total - u) as u64,
                    cache_write: 0,
                    output: o as u64,
                });
            }
        }
    }
    out
}

/// Arithmetic on the recorded figures alone: the card prices each recorded turn exactly.
pub(super) fn price_card_consistency(card: &PriceCard) -> Vec<ReproRow> {
    let mut rows = Vec::new();
    for (figure, total, usd) in [
        (
            "cost, one turn: per-row MCP",
            RECORDED_PER_ROW,
            RECORDED_PER_ROW_USD,
        ),
        (
            "cost, one turn: deferred search",
            RECORDED_DEFERRED,
            RECORDED_DEFERRED_USD,
        ),
        (
            "cost, one turn: protocol-only",
            RECORDED_PROTOCOL,
            RECORDED_PROTOCOL_USD,
        ),
    ] {
        let splits = exact_splits(card, total, usd, 2_000);
        let (check, note) = match splits.first() {
            Some(u) => (
                "priced exactly".to_string(),
                format!(
                    "the {MODEL} card prices the recorded {} tokens at exactly the recorded dollars, with {} cached / {} uncached / {} output (the split with the fewest output tokens of the {} that fit with at most 2,000 output tokens): a check of the card on recorded figures, not a toolcost measurement",
                    thousands(total),
                    thousands(u.cached_input),
                    thousands(u.uncached_input),
                    u.output,
                    splits.len()
                ),
            ),
            None => (
                "no exact split".to_string(),
                "no split reproduces this figure with the price card".to_string(),
            ),
        };
        rows.push(row(
            Section::PriceCardConsistency,
            figure,
            format!("${usd:.8}"),
            check,
            None,
            "derived from recorded figures",
            &note,
        ));
    }
    let month_recorded = (RECORDED_PER_ROW_USD - RECORDED_PROTOCOL_USD) * TURNS_PER_MONTH;
    rows.push(row(
        Section::PriceCardConsistency,
        "money ratio and month per seat, from the recorded dollars",
        "6.25x; $143.75".into(),
        format!(
            "{:.2}x; ${month_recorded:.2}",
            RECORDED_PER_ROW_USD / RECORDED_PROTOCOL_USD
        ),
        None,
        "derived from recorded figures",
        "arithmetic on the recorded dollars: it checks the published derivation, not toolcost",
    ));
    rows
}

/// The generated catalogue's bytes beside the recorded projection's: the seed-2026-07 profile
/// was calibrated to these, so agreement is by construction.
pub(super) fn catalogue_bytes() -> Result<Vec<ReproRow>> {
    let c831 = Composition::of(&Setup::catalogue(831, false)?);
    let label = "calibrated:seed-2026-07 generator";
    let gen_note = "counted on toolcost's generated seed-2026-07 catalogue (seed 1), N=831; the generator's targets are these figures";
    let b = |figure: &str, recorded: &str, ours: String, diff: Option<f64>, note: &str| {
        row(
            Section::CatalogueBytes,
            figure,
            recorded.into(),
            ours,
            diff,
            label,
            note,
        )
    };
    let wrapper = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":}}"#.len();
    let shares = c831.shares();
    let counts = Setup::catalogue(832, true)?;
    let enabled = counts.rows.iter().filter(|r| r.enabled).count();
    let not_test = counts
        .rows
        .iter()
        .filter(|r| r.enabled && !r.key.starts_with("TEST_"))
        .count();
    let small = small_mcp::tools();
    let small_bytes =
        json::compact(&small.iter().map(|t| t.value().clone()).collect::<Vec<_>>()).len();
    Ok(vec![
        b(
            "per-row tools/list payload, 831 tools: compact definitions (bytes)",
            "434,592",
            thousands(c831.compact_array_bytes as u64),
            pct(c831.compact_array_bytes as f64, 434_592.0),
            gen_note,
        ),
        b(
            "per-row tools/list payload, 831 tools: HTTP body (bytes)",
            "434,636",
            thousands((c831.compact_array_bytes + wrapper) as u64),
            pct((c831.compact_array_bytes + wrapper) as f64, 434_636.0),
            &format!("the compact array plus the {wrapper}-byte JSON-RPC wrapper"),
        ),
        b(
            "mean compact bytes per definition",
            "523",
            format!("{:.0}", c831.mean_compact()),
            pct(c831.mean_compact(), 523.0),
            gen_note,
        ),
        b(
            "the same tools, Python json.dumps serialisation (bytes)",
            "451,197",
            thousands(c831.spaced_bytes as u64),
            pct(c831.spaced_bytes as f64, 451_197.0),
            gen_note,
        ),
        b(
            "composition: descriptions / input schemas / names / structure (%)",
            "44.5 / 42.0 / 3.1 / 10.5",
            format!("{:.1} / {:.1} / {:.1} / {:.1}", shares[0], shares[1], shares[2], shares[3]),
            None,
            "names and descriptions by characters, schemas by their Python-serialised length, structure the rest",
        ),
        b(
            "largest definition (bytes, Python serialisation)",
            "6,511",
            thousands(c831.largest_spaced as u64),
            pct(c831.largest_spaced as f64, 6_511.0),
            &format!("{} in toolcost's catalogue", c831.largest_name),
        ),
        b(
            "runner types: fn / http / flow / agent",
            "462 / 301 / 50 / 18",
            c831.runners.map(|r| r.to_string()).join(" / "),
            None,
            "assigned by quota, so exact at N=831",
        ),
        b(
            "table counts: rows / enabled / enabled minus test-shaped / projected",
            "892 / 879 / 877 / 832",
            format!("{} / {enabled} / {not_test} / {}", counts.rows.len(), counts.tools.len()),
            None,
            "`generate --rows 832 --inactive` adds the recorded shares of disabled, hidden and test-shaped rows",
        ),
        row(
            Section::OutOfSample,
            "small MCP surface, tools/list definitions (bytes)",
            "2,165 (7 tools)".into(),
            format!("{} ({} tools)", thousands(small_bytes as u64), small.len()),
            pct(small_bytes as f64, 2_165.0),
            "derived",
            "not fitted: toolcost's small surface is dispatch, search, contract and receipt; the recorded one also exposed d1_query, kv_get and kv_put. Either way the bytes do not change with N",
        ),
    ])
}
