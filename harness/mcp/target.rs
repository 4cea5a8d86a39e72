//! Where a server's tools come from: a file, a Streamable HTTP endpoint or a stdio command.
//! `weigh`, `check`, `measure --server` and the driver's running-server mode all load their
//! catalogue through [`Target`].

use super::{list_tools, Http, Listing, Stdio};
use crate::catalogue::{capture, Catalogue};
use crate::error::{Error, Result};
use std::path::PathBuf;
use std::time::Duration;

/// A server to list tools from, or a file holding them.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A tools/list capture (JSON), JSONL rows or a SQLite catalogue.
    File(PathBuf),
    /// A Streamable HTTP MCP endpoint, with `Name: value` headers sent on every request.
    Http {
        url: String,
        headers: Vec<String>,
        timeout: Duration,
    },
    /// A stdio server to start: the program and its arguments.
    Command {
        argv: Vec<String>,
        timeout: Duration,
    },
}

impl Target {
    /// Load the target's tools, starting a runtime for a live server.
    pub fn load(&self) -> Result<(Catalogue, Vec<String>)> {
        if let Target::File(path) = self {
            return Ok((Catalogue::load(path)?, Vec::new()));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::input(format!("could not start the async runtime: {e}")))?;
        runtime.block_on(self.fetch())
    }

    /// The same, for callers already inside a runtime. The notes say how the listing went.
    pub async fn fetch(&self) -> Result<(Catalogue, Vec<String>)> {
        let (label, listing) = match self {
            Target::File(path) => return Ok((Catalogue::load(path)?, Vec::new())),
            Target::Http {
                url,
                headers,
                timeout,
            } => {
                let mut ch = Http::new(url, headers)?;
                (url.clone(), list_tools(&mut ch, *timeout).await?)
            }
            Target::Command { argv, timeout } => {
                let mut ch = Stdio::spawn(argv)?;
                (argv.join(" "), list_tools(&mut ch, *timeout).await?)
            }
        };
        let notes = notes(&listing);
        let server = server_name(&listing);
        Ok((capture::catalogue(label, server, listing.tools), notes))
    }
}

/// The server's name as a tool-name prefix: anything but `[A-Za-z0-9_-]` becomes `_`.
fn server_name(listing: &Listing) -> String {
    listing
        .server_name
        .as_deref()
        .unwrap_or("server")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn notes(listing: &Listing) -> Vec<String> {
    let mut notes = listing.notes.clone();
    notes.insert(
        0,
        format!(
            "{} page(s) of tools/list, protocol {}",
            listing.pages,
            listing.protocol_version.as_deref().unwrap_or("?")
        ),
    );
    notes
}
