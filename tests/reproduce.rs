//! The reproduction: a snapshot of the report, the fitted constant, the exact dollar splits.

use toolcost::pricing::PriceCard;
use toolcost::reproduce::{exact_splits, markdown, reproduce};

#[test]
fn reproduce_report_snapshot() {
    let r = reproduce().unwrap();
    insta::assert_snapshot!("reproduce_md", markdown(&r));
}

/// Nothing out of sample depends on a constant fitted to a recorded figure: the only
/// calibrations are the client's text (fitted to the real client's part sizes, not to the
/// recorded turns) and the generator's bytes (kept in their own section); no recorded-setup
/// factor is left anywhere.
#[test]
fn no_out_of_sample_figure_is_fitted() {
    use toolcost::reproduce::Section;
    let r = reproduce().unwrap();
    for x in &r.rows {
        assert!(!x.label.contains("recorded-setup"), "{x:?}");
        let fitted = x
            .label
            .replace("calibrated:claude-cli-2.1.165 parts", "")
            .contains("calibrated");
        assert!(!fitted || x.section == Section::CatalogueBytes, "{x:?}");
    }
    assert!(r.rows.iter().any(|x| x.section == Section::Gap));
    assert!(r.rows.iter().any(|x| x.section == Section::BaseTurn));
    assert!(r.verdict().starts_with("Verdict:"));
}

/// The reproduction from its parts meets the record within the bars the setup was modelled
/// to (none of its constants was fitted to these figures): tokens per definition within 8%, the
/// protocol-only turn within 5%, the per-row turn within 8%, the ratio within 10%.
#[test]
fn the_setup_from_its_parts_meets_the_record() {
    use toolcost::reproduce::Section;
    let r = reproduce().unwrap();
    let diff = |figure: &str| {
        r.rows
            .iter()
            .find(|x| x.section == Section::OutOfSample && x.figure.starts_with(figure))
            .and_then(|x| x.difference_pct)
            .unwrap_or_else(|| panic!("no row {figure}"))
    };
    for (figure, bar) in [
        ("input tokens per definition", 8.0),
        ("input tokens, one turn: protocol-only", 5.0),
        ("input tokens, one turn: per-row MCP", 8.0),
        ("input token ratio", 10.0),
    ] {
        let d = diff(figure);
        assert!(d.abs() <= bar, "{figure}: {d:+.2}% (bar {bar}%)");
    }
}

#[test]
fn published_splits_are_among_the_exact_solutions() {
    for id in ["kimi-k2.7-code", "cloudflare/@cf/moonshotai/kimi-k2.7-code"] {
        let card = PriceCard::named(id).unwrap();
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

/// The route card's 256-token cache blocks rest on the recorded dollars: the protocol-only and
/// deferred turns each have exactly one exact split whose cached count is a whole number of
/// 256-token blocks, and it is the same 11,520 = 45 x 256 for both.
#[test]
fn the_recorded_dollars_split_on_256_token_blocks() {
    let card = PriceCard::named("cloudflare/@cf/moonshotai/kimi-k2.7-code").unwrap();
    assert_eq!(card.cache, "automatic:256:300");
    for (total, usd) in [(14_071, 0.00456265), (14_109, 0.00443075)] {
        let on_blocks: Vec<u64> = exact_splits(&card, total, usd, 2_000)
            .iter()
            .map(|u| u.cached_input)
            .filter(|c| c % 256 == 0)
            .collect();
        assert_eq!(on_blocks, vec![11_520], "{total}");
    }
}
