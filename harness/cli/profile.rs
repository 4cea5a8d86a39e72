//! `toolcost profile`: a client profile made from a request the gateway captured, so that
//! `--client-profile FILE` measures the user's own client.

use crate::client::capture;
use crate::error::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ProfileArgs {
    /// A gateway log that kept request bodies (`toolcost gateway --log FILE --log-bodies`).
    #[arg(long, value_name = "LOG.sqlite")]
    pub from_log: PathBuf,
    /// The log row whose request to read; default: the newest row with a body. Make it a
    /// session's first request: the profile keeps its first user message and nothing after.
    #[arg(long, value_name = "ID")]
    pub request_id: Option<i64>,
    /// Where to write the profile (JSON). It holds your own system prompt and tool texts:
    /// nothing of them is printed.
    #[arg(long, value_name = "PROFILE.json")]
    pub out: PathBuf,
    /// The profile's name in reports. Default: `captured-<row id>`.
    #[arg(long)]
    pub name: Option<String>,
}

pub(super) fn run(a: ProfileArgs) -> Result<i32> {
    let (profile, found) = capture::from_log(&a.from_log, a.request_id, a.name.as_deref())?;
    profile.write(&a.out)?;
    println!(
        "wrote {}: client `{}` ({} format, model {}), {} system part(s), {} built-in tool(s){}{}",
        a.out.display(),
        profile.name,
        profile.format.name(),
        profile.model,
        profile.system.len(),
        profile.tools.len(),
        match (&found.server, found.mcp_tools) {
            (Some(s), n) if n > 0 => format!("; {n} MCP tool(s) of server `{s}` left out (they are the catalogue), named mcp__<server>__<tool>"),
            _ => String::new(),
        },
        match found.messages_left_out {
            0 => String::new(),
            n => format!("; {n} later message(s) left out: a profile keeps the first user message"),
        },
    );
    println!(
        "the file holds the client's own text; use it with `toolcost measure --client-profile {}`",
        a.out.display()
    );
    Ok(0)
}
