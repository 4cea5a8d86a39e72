//! The reproduction: a snapshot of the report, the fitted constant, the exact dollar splits.

use toolcost::pricing::PriceCard;
use toolcost::reproduce::{exact_splits, markdown, reproduce};
use toolcost::tokens::KIMI_PER_O200K;

#[test]
fn reproduce_report_snapshot() {
    let r = reproduce().unwrap();
    insta::assert_snapshot!("reproduce_md", markdown(&r));
}

#[test]
fn the_kimi_constant_still_fits_the_generator() {
    let r = reproduce().unwrap();
    let drift = (r.fit.kimi_per_o200k - KIMI_PER_O200K).abs() / KIMI_PER_O200K;
    assert!(
        drift < 0.005,
        "re-fit {} vs constant {KIMI_PER_O200K}: update the constant",
        r.fit.kimi_per_o200k
    );
}

#[test]
fn published_splits_are_among_the_exact_solutions() {
    let card = PriceCard::named("kimi-k2.7-code").unwrap();
    let a = exact_splits(&card, 149_187, 0.02852109, 2_000);
    assert_eq!(
        (a[0].cached_input, a[0].uncached_input, a[0].output),
        (143_664, 5_523, 72)
    );
    let b = exact_splits(&card, 14_071, 0.00456265, 2_000);
    assert_eq!(
        (b[0].cached_input, b[0].uncached_input, b[0].output),
        (11_520, 2_551, 74)
    );
    for u in a.iter().chain(&b) {
        let usd = card.cost(u);
        assert!(
            ((usd * 1e8).round()
                - (if u.total_input() == 149_187 {
                    2_852_109.0
                } else {
                    456_265.0
                }))
            .abs()
                < 0.5
        );
    }
}

#[test]
fn the_committed_report_is_what_the_code_makes() {
    let dir = tempfile::tempdir().unwrap();
    let r = reproduce().unwrap();
    toolcost::reproduce::write(&r, dir.path()).unwrap();
    for f in ["reproduce.md", "reproduce.csv", "reproduce.json"] {
        let made = std::fs::read_to_string(dir.path().join(f)).unwrap();
        let committed = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("reports/reproduce")
                .join(f),
        )
        .unwrap();
        assert_eq!(
            made, committed,
            "reports/reproduce/{f} is stale: run `cargo run --release -- reproduce`"
        );
    }
    let rows: Vec<toolcost::reproduce::ReproRow> =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("reproduce.json")).unwrap())
            .unwrap();
    let names = |rows: &[toolcost::reproduce::ReproRow]| {
        rows.iter()
            .map(|x| (x.figure.clone(), x.label.clone(), x.toolcost.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&rows), names(&r.rows));
}

/// In a 100-column terminal the table fits: its notes go below it, numbered, and the
/// closing paragraph wraps; the files keep every note whole.
#[test]
fn the_terminal_table_fits_a_100_column_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("toolcost")
        .unwrap()
        .env("COLUMNS", "100")
        .args(["reproduce", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for l in text.lines() {
        assert!(l.chars().count() <= 100, "{} chars: {l}", l.chars().count());
    }
    assert!(text.contains("\n[1] "), "{text}");
    // The numbered notes are the rows' notes, word for word.
    let r = reproduce().unwrap();
    let first = r.rows.iter().find(|x| !x.note.trim().is_empty()).unwrap();
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        joined.contains(&first.note.split_whitespace().collect::<Vec<_>>().join(" ")),
        "{}",
        first.note
    );
}
