//! The error type callers match on, and the exit status each kind maps to.

use std::path::PathBuf;

/// Everything that can go wrong inside toolcost, worded for the person at the terminal.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Input that does not have the shape toolcost expects; the message says what to do.
    #[error("{0}")]
    Input(String),
    /// A name (surface, client, profile, tokenizer, model) that toolcost does not know.
    #[error("unknown {kind} `{name}`: expected one of {expected}")]
    Unknown {
        kind: &'static str,
        name: String,
        expected: String,
    },
    /// The SQLite store refused an operation.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

impl Error {
    pub fn input(msg: impl Into<String>) -> Self {
        Error::Input(msg.into())
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub fn unknown(kind: &'static str, name: &str, expected: &[&str]) -> Self {
        Error::Unknown {
            kind,
            name: name.to_string(),
            expected: expected.join(", "),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A secret from the env var a flag names: set and non-empty, or an error that says so.
pub fn env_secret(flag: &str, name: &str) -> Result<String> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            Error::input(format!(
                "{flag} {name}: the variable is not set or empty; export {name}=... first"
            ))
        })
}
