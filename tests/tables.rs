//! Every result row type declares its table once: the formats and brief columns it names are
//! its own serde fields, and an empty table still has its header.

mod common;

use toolcost::report::{check_columns, render, OutputFormat, Tabular};

fn empty<T: Tabular>() -> Vec<String> {
    check_columns::<T>().unwrap();
    let formats = [
        OutputFormat::Table,
        OutputFormat::Csv,
        OutputFormat::Markdown,
    ];
    formats
        .iter()
        .map(|f| String::from_utf8(render::<T>(*f, &[])).unwrap())
        .collect()
}

#[test]
fn every_row_type_declares_only_its_own_fields() {
    empty::<toolcost::driver::TaskResult>();
    empty::<toolcost::weigh::ToolWeight>();
    empty::<toolcost::weigh::Marginal>();
    empty::<toolcost::discovery::eval::Score>();
    empty::<toolcost::discovery::eval::SurfaceCost>();
    empty::<toolcost::sweep::SweepRow>();
    empty::<toolcost::sweep::frame::LogSummary>();
    empty::<toolcost::measure::MeasureRow>();
    empty::<toolcost::calibrate::CalibrationRow>();
    let repro = empty::<toolcost::reproduce::ReproRow>();
    assert_eq!(
        repro[1],
        "section,figure,recorded,toolcost,difference,label,note\n"
    );
    // The section is a heading above each group, not a column.
    assert_eq!(
        repro[0],
        "figure  recorded  toolcost  difference  label  note\n\
         ------  --------  --------  ----------  -----  ----\n"
    );
}

/// `measure`'s rows at 80, 100 and 120 columns: a table whose lines fit, nothing cut, every
/// figure whole; the label shared by every row is printed once above it.
#[test]
fn measure_rows_fit_80_100_and_120_columns_uncut() {
    let cfg = toolcost::measure::Config {
        tokenizers: vec![toolcost::tokens::Tokenizer::O200k],
        client: toolcost::client::Client::named("claude-cli").unwrap(),
        model: toolcost::pricing::PriceCard::named("claude-sonnet-4.5").unwrap(),
        surfaces: toolcost::surface::SurfaceKind::all_for(
            toolcost::wire::Format::AnthropicMessages,
        ),
        turn: toolcost::measure::DEFAULT_TURN.into(),
        output_tokens: toolcost::measure::DEFAULT_OUTPUT_TOKENS,
        endpoint: toolcost::surface::DEFAULT_ENDPOINT.into(),
    };
    let cat = common::seed_catalogue(856);
    let rows = toolcost::measure::measure(&cat, &cfg, &|_| {});
    for width in [80, 100, 120] {
        let text = String::from_utf8(toolcost::report::table_within(&rows, Some(width))).unwrap();
        assert!(!text.contains('…'), "{width}: a cell was cut\n{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= width, "{width}: {line:?}");
        }
        assert!(text.lines().count() <= 40, "{width}: too long\n{text}");
        // A table, not one record per row: one line per surface at least.
        for r in &rows {
            assert!(
                text.lines().any(|l| l.starts_with(&r.surface)),
                "{width}: {} has no line\n{text}",
                r.surface
            );
        }
        assert_eq!(text.matches("label:").count(), 1, "{width}\n{text}");
        let per_row = rows.iter().find(|r| r.surface == "per-row-mcp").unwrap();
        assert!(text.contains(&per_row.input_tokens.to_string()), "{text}");
    }
}
