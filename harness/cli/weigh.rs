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
    #[command(flatten)]
    pub format: FormatArgs,
}

pub(super) fn run(a: WeighArgs) -> Result<i32> {
    let client = Client::named(&a.client)?;
    let model = PriceCard::named(a.model.as_deref().unwrap_or(&client.model))?;
    let (cat, notes) = a.target.target()?.load()?;
    let w = weigh::weigh(&cat, &client, &model, notes)?;
    print_bytes(&weigh::render(&w, a.format.format()))?;
    Ok(0)
}
