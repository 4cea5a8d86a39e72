//! `toolcost generate`: a catalogue of N rows as JSONL (stdout or a file) or a SQLite
//! `directory` table, and optionally its labelled query set.

use super::{progress, GeneratorArgs};
use crate::catalogue::profile::Profile;
use crate::catalogue::{directory, generate::check_rows, generate::Generator, jsonl, Row};
use crate::discovery::queries;
use crate::error::{Error, Result};
use clap::Args;
use indicatif::ProgressBar;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(mut_arg("profile", |a| a.help("Calibrated profile: seed-2026-07 or real-mcp")))]
pub struct GenerateArgs {
    /// Rows in the per-row projection (0 to 1,000,000).
    #[arg(long, value_name = "N")]
    pub rows: usize,
    #[command(flatten)]
    pub generator: GeneratorArgs,
    /// Add the profile's share of disabled, hidden and test-shaped rows after the N projected ones.
    #[arg(long)]
    pub inactive: bool,
    /// Output file: .sqlite or .db writes a `directory` table, anything else JSONL. Default: JSONL on stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the catalogue's labelled query set (JSONL) for `search-eval`.
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,
    /// Replace an output database even though it holds receipts (they are lost).
    #[arg(long)]
    pub discard_receipts: bool,
    /// Rows sampled for --queries (two queries each, plus the fixed rows).
    #[arg(long, default_value_t = 200, requires = "queries")]
    pub targets: usize,
}

pub(super) fn run(a: GenerateArgs) -> Result<i32> {
    check_rows(a.rows)?;
    if a.queries.is_some() && a.inactive {
        return Err(Error::input(
            "--queries labels the projected rows; generate it without --inactive",
        ));
    }
    if let Some(path) = &a.output {
        check_replaceable(path, a.discard_receipts)?;
    }
    let profile = Profile::named(&a.generator.profile)?;
    let gen = Generator::new(profile, a.rows, a.generator.seed, a.inactive);
    let bar = if gen.len() >= 20_000 {
        progress(gen.len() as u64, "generating")
    } else {
        ProgressBar::hidden()
    };
    let rows = gen.inspect(|_| bar.inc(1));
    match &a.output {
        None => write_jsonl(
            BufWriter::new(std::io::stdout().lock()),
            rows,
            Path::new("<stdout>"),
        )?,
        Some(path) if is_sqlite(path) => write_via_temp(path, |tmp| {
            let mut conn = rusqlite::Connection::open(tmp)?;
            directory::stamp(&conn)?;
            directory::write_directory_owned(&mut conn, rows)
        })?,
        Some(path) => write_via_temp(path, |tmp| {
            let f = std::fs::File::create(tmp).map_err(|e| Error::io(tmp, e))?;
            write_jsonl(BufWriter::new(f), rows, tmp)
        })?,
    }
    bar.finish_and_clear();
    if let Some(path) = &a.queries {
        let (_, set) = queries::generate(
            Profile::named(&a.generator.profile)?,
            a.rows,
            a.generator.seed,
            a.targets,
        )?;
        queries::write(path, &set)?;
    }
    Ok(0)
}

/// Refuse to replace an SQLite file that is someone else's, or toolcost's with receipts in it
/// (unless `--discard-receipts`): `-o` renames a new file over it, and what it held is gone.
fn check_replaceable(path: &Path, discard_receipts: bool) -> Result<()> {
    let mut head = [0u8; 16];
    // A path that is there but is no regular file (a FIFO would block the read) is refused.
    if std::fs::symlink_metadata(path).is_ok() {
        crate::input::check_regular(path)?;
    }
    let is_sqlite = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && &head == b"SQLite format 3\0";
    if !is_sqlite {
        return Ok(());
    }
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    if let directory::Identity::Foreign(why) = directory::identity(&conn)? {
        return Err(Error::input(format!(
            "{}: an SQLite database that is not toolcost's ({why}); -o would replace it, so nothing was written. Choose another path",
            path.display()
        )));
    }
    let held = directory::receipts_held(&conn)?;
    if held > 0 && !discard_receipts {
        return Err(Error::input(format!(
            "{}: holds {held} receipts; -o would replace the file and lose them. Choose another path, or pass --discard-receipts",
            path.display()
        )));
    }
    Ok(())
}

fn write_jsonl(mut out: impl Write, rows: impl Iterator<Item = Row>, path: &Path) -> Result<()> {
    for r in rows {
        jsonl::write_row(&mut out, &r)?;
    }
    out.flush().map_err(|e| Error::io(path, e))
}

/// Write through a hidden sibling file renamed over `path` at the end, so a failed run leaves
/// no partial output behind.
fn write_via_temp(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let tmp = temp_sibling(path);
    let result =
        write(&tmp).and_then(|_| std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e)));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn is_sqlite(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("sqlite" | "sqlite3" | "db")
    )
}

fn temp_sibling(path: &Path) -> PathBuf {
    let name = path.file_name().and_then(|f| f.to_str()).unwrap_or("out");
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}
