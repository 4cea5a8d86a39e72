//! Where toolcost finds what is installed apart from it (the MiniLM weights, Llama 4's
//! vocabulary): a place an environment variable names, else a default folder under the working
//! folder or one of the executable's.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// What `found` finds at the place `$env` names, else in `default_dir` under the working folder
/// or the executable's folder and its three parents; `missing` says how to install it, given
/// where it was looked for.
pub fn locate(
    env: &str,
    default_dir: &str,
    found: impl Fn(&Path) -> Option<PathBuf>,
    missing: impl Fn(&str) -> Error,
) -> Result<PathBuf> {
    if let Some(p) = std::env::var_os(env).filter(|d| !d.is_empty()) {
        let p = PathBuf::from(p);
        return found(&p).ok_or_else(|| missing(&format!("${env} ({})", p.display())));
    }
    let mut bases = vec![PathBuf::from(".")];
    if let Some(exe) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        bases.extend(exe.ancestors().take(4).map(Path::to_path_buf));
    }
    bases
        .iter()
        .find_map(|b| found(&b.join(default_dir)))
        .ok_or_else(|| missing(default_dir))
}

/// The bytes of an installed file (at most `max`), which must have the SHA-256 `sha256`;
/// otherwise an error that names `what` it should be and the command that installs it.
pub fn read_checked(
    path: &Path,
    max: u64,
    sha256: &str,
    what: &str,
    install: &str,
) -> Result<Vec<u8>> {
    use sha2::{Digest, Sha256};
    let bytes = crate::input::read(path, max)?;
    let hex: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    match hex == sha256 {
        true => Ok(bytes),
        false => Err(Error::input(format!(
            "{} is not {what} (SHA-256 {hex}, expected {sha256}); reinstall it with\n  {install}",
            path.display()
        ))),
    }
}
