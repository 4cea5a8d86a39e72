//! Every result row type declares its table once: the formats and brief columns it names are
//! its own serde fields, and an empty table still has its header.

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
    assert_eq!(
        repro[0],
        "section  figure  recorded  toolcost  difference  label  note\n\
         -------  ------  --------  --------  ----------  -----  ----\n"
    );
}
