//! Where a server's tools come from: a file, a Streamable HTTP endpoint or a stdio command.
//! `weigh`, `check`, `measure --server` and the driver's running-server mode all load their
//! catalogue through [`Target`].

use super::{list_tools_with, Http, Listing, Options, Stdio};
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
        opts: Options,
    },
    /// A stdio server to start: the program and its arguments, and how (a host's `env`: passed
    /// on, never printed; the folder it runs in).
    Command {
        argv: Vec<String>,
        launch: super::stdio::Launch,
        timeout: Duration,
        opts: Options,
    },
}

/// What loading a target gave: the tools, notes on how the listing went, and for a live
/// server the protocol version spoken and the bytes of its `tools/list` answers.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub catalogue: Catalogue,
    pub notes: Vec<String>,
    pub protocol: Option<String>,
    pub list_bytes: Option<usize>,
    /// The server's `instructions`, if it gave any (a file has none).
    pub instructions: Option<String>,
}

impl Target {
    /// Load the target's tools, starting a runtime for a live server.
    pub fn load(&self) -> Result<(Catalogue, Vec<String>)> {
        self.load_full().map(|f| (f.catalogue, f.notes))
    }

    /// The same, with the protocol version and list bytes.
    pub fn load_full(&self) -> Result<Fetched> {
        if let Target::File(path) = self {
            return Ok(Fetched::file(Catalogue::load(path)?));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::input(format!("could not start the async runtime: {e}")))?;
        runtime.block_on(self.fetch_full())
    }

    /// The same as [`Target::load`], for callers already inside a runtime. The notes say how
    /// the listing went.
    pub async fn fetch(&self) -> Result<(Catalogue, Vec<String>)> {
        self.fetch_full().await.map(|f| (f.catalogue, f.notes))
    }

    /// This target asking for one protocol version (`None`: the default choice). A file has
    /// no protocol and stays as it is.
    pub fn speaking(&self, protocol: Option<&str>) -> Target {
        let mut t = self.clone();
        match &mut t {
            Target::File(_) => {}
            Target::Http { opts, .. } | Target::Command { opts, .. } => {
                opts.protocol = protocol.map(String::from)
            }
        }
        t
    }

    /// [`Target::fetch`] with the protocol version and list bytes.
    pub async fn fetch_full(&self) -> Result<Fetched> {
        let (label, listing) = match self {
            Target::File(path) => return Ok(Fetched::file(Catalogue::load(path)?)),
            Target::Http {
                url,
                headers,
                timeout,
                opts,
            } => {
                let mut ch = Http::with_options(url, headers, *timeout, opts)?;
                (url.clone(), list_tools_with(&mut ch, *timeout, opts).await?)
            }
            Target::Command {
                argv,
                launch,
                timeout,
                opts,
            } => {
                let mut ch = Stdio::spawn_in(argv, launch, opts.max_line)?;
                (
                    argv.join(" "),
                    listed_or_signalled(&mut ch, *timeout, opts).await?,
                )
            }
        };
        let notes = notes(&listing);
        let server = server_name(&listing);
        Ok(Fetched {
            protocol: listing.protocol_version.clone(),
            list_bytes: Some(listing.list_bytes),
            instructions: listing.instructions.clone(),
            catalogue: capture::catalogue(label, server, listing.tools),
            notes,
        })
    }
}

impl Fetched {
    fn file(catalogue: Catalogue) -> Fetched {
        Fetched {
            catalogue,
            notes: Vec::new(),
            protocol: None,
            list_bytes: None,
            instructions: None,
        }
    }
}

/// List a stdio server's tools; SIGINT, SIGTERM or SIGHUP to toolcost meanwhile is passed on to
/// the server's process group (which does not share toolcost's terminal signals), the group is
/// stopped, and the session ends with an error that names the signal.
async fn listed_or_signalled(ch: &mut Stdio, timeout: Duration, opts: &Options) -> Result<Listing> {
    enum Outcome {
        Done(Result<Listing>),
        Signal(i32, &'static str),
    }
    let outcome = {
        let signalled = signalled();
        let listed = list_tools_with(ch, timeout, opts);
        tokio::select! {
            r = listed => Outcome::Done(r),
            (sig, name) = signalled => Outcome::Signal(sig, name),
        }
    };
    match outcome {
        Outcome::Done(r) => r,
        Outcome::Signal(sig, name) => {
            ch.signal_group(sig);
            let _ = tokio::time::timeout(timeout, super::Channel::close(ch)).await;
            ch.signal_group(libc::SIGKILL);
            Err(Error::input(format!(
                "interrupted by {name}; the server's process group was stopped"
            )))
        }
    }
}

/// The first of SIGINT, SIGTERM, SIGHUP to arrive (never, where they cannot be watched).
async fn signalled() -> (i32, &'static str) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let watch = |k: SignalKind| signal(k).ok();
        let (mut int, mut term, mut hup) = (
            watch(SignalKind::interrupt()),
            watch(SignalKind::terminate()),
            watch(SignalKind::hangup()),
        );
        async fn next(s: &mut Option<tokio::signal::unix::Signal>) {
            match s {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            _ = next(&mut int) => (libc::SIGINT, "SIGINT"),
            _ = next(&mut term) => (libc::SIGTERM, "SIGTERM"),
            _ = next(&mut hup) => (libc::SIGHUP, "SIGHUP"),
        }
    }
    #[cfg(not(unix))]
    std::future::pending().await
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
            "{} page(s) of tools/list ({} bytes as received), protocol {}",
            listing.pages,
            listing.list_bytes,
            listing.protocol_version.as_deref().unwrap_or("?")
        ),
    );
    notes
}
