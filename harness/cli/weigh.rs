//! `toolcost weigh`: what a server's tools cost, per tool and per surface.

use super::{print_bytes, FormatArgs, TargetArgs};
use crate::client::Client;
use crate::error::Result;
use crate::pricing::PriceCard;
use crate::weigh;
use clap::Args;

#[derive(Args, Debug)]
pub struct WeighArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Client profile whose surfaces are priced.
    #[arg(long, default_value = "claude-cli")]
    pub client: String,
    /// Price card for the one-turn costs. Default: the client's.
    #[arg(long)]
    pub model: Option<String>,
    /// Also list the server at every MCP protocol version toolcost speaks and report the
    /// bytes of each (a row per version; a version the server refuses shows its error).
    #[arg(long)]
    pub each_protocol: bool,
    #[command(flatten)]
    pub format: FormatArgs,
}

pub(super) fn run(a: WeighArgs) -> Result<i32> {
    let client = Client::named(&a.client)?;
    let model = PriceCard::named(a.model.as_deref().unwrap_or(&client.model))?;
    model.tokenizer().ready()?;
    let target = a.target.target()?;
    let fetched = target.load_full()?;
    super::release_freed();
    let mut w = weigh::weigh(&fetched.catalogue, &client, &model, fetched.notes)?;
    w.protocol = fetched.protocol;
    if a.each_protocol {
        w.protocols = weigh::each_protocol(&target);
    }
    let format = a.format.format();
    let out = weigh::render(&w, format);
    match format {
        crate::report::OutputFormat::Table => {
            print_bytes(crate::report::fit_to_terminal(&String::from_utf8_lossy(&out)).as_bytes())?
        }
        crate::report::OutputFormat::Json
        | crate::report::OutputFormat::Csv
        | crate::report::OutputFormat::Markdown => print_bytes(&out)?,
    }
    Ok(0)
}
