//! The reproduction as a Markdown report, and the files it is written to.

use super::*;

/// The Markdown report: provenance, one table per section, and how to read it.
pub fn markdown(r: &Reproduction) -> String {
    let mut tables = String::new();
    for section in Section::ALL {
        let rows: Vec<ReproRow> = r
            .rows
            .iter()
            .filter(|x| x.section == section)
            .cloned()
            .collect();
        if rows.is_empty() {
            continue;
        }
        tables.push_str(&format!("## {}\n\n", section.heading()));
        tables.push_str(
            &String::from_utf8(report::render(report::OutputFormat::Markdown, &rows))
                .expect("utf-8"),
        );
        tables.push('\n');
    }
    format!(
        "# The published measurement, reproduced\n\n\
The recorded figures were published at {PUBLISHED}: one catalogue exposed three ways to \
`@cf/moonshotai/kimi-k2.7-code` through Cloudflare AI Gateway on 2026-07-25, client claude-cli \
2.1.165, read from gateway log rows. toolcost rebuilds that setup from its parts: its own \
`{PROFILE}` catalogue (seed {SEED}); the `{CLIENT}` profile at 2.1.165, each system part and \
built-in tool written here to the size the real client's part measures on Kimi's, o200k's and \
Claude's tokenizers (`calibrated:claude-cli-2.1.165 parts`: fitted to those part sizes, never to \
the recorded turns), with tool search on and the captured session context; and the \
`{MODEL}` card: Kimi's K2.5+ turns with the tools in the `tool_declare` turn as Python's \
`json.dumps` writes them (assumed: Cloudflare does not document its rendering), Workers AI's \
prefix cache in 256-token blocks, counted with Kimi's own tokenizer.\n\n\
Nothing is fitted to the recorded token figures. toolcost counts {:.1} tokens per definition \
where the record bills {RECORDED_PER_DEFINITION:.1} (the record is {:.3}x toolcost's count). The \
base-turn rows set each group of the real client's parts beside toolcost's text for it; the gap \
rows change one part of the setup at a time (the tokenizer, the rendering, the client's \
conversion, the text's density). The catalogue's bytes agree because the generator was \
calibrated to them, and the price card reproduces the recorded dollars exactly.\n\n\
{}\n\n\
{tables}\
How to read it: `recorded` figures were published elsewhere; `estimated:*` figures were counted \
here with the named tokenizer; `calibrated:*` figures depend on a constant fitted to a recorded \
figure (here: the client's text to the real parts' sizes, and the generator to the recorded \
catalogue's bytes); `derived` figures are arithmetic on the others. A difference is toolcost \
minus recorded, as a share of recorded (in points where both figures are shares).\n",
        r.gap.per_definition,
        r.gap.setup_factor,
        r.verdict()
    )
}

/// Write `reproduce.md`, `reproduce.csv` and `reproduce.json` under `dir`.
pub fn write(r: &Reproduction, dir: &Path) -> Result<()> {
    report::write_atomic(&dir.join("reproduce.md"), markdown(r).as_bytes())?;
    report::write_atomic(
        &dir.join("reproduce.csv"),
        &report::render(report::OutputFormat::Csv, &r.rows),
    )?;
    report::write_atomic(
        &dir.join("reproduce.json"),
        &report::render(report::OutputFormat::Json, &r.rows),
    )?;
    Ok(())
}
