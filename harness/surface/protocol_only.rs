//! `protocol-only`: zero catalogue definitions; the system prompt names the dispatch
//! endpoint once and the model reaches everything with its built-in shell or fetch tool.

use super::{Built, Context};

/// The endpoint instructions appended to the system prompt.
pub fn instructions(endpoint: &str) -> String {
    format!(
        "# Capabilities over HTTP\n\
Beyond your built-in tools, every capability you can use lives in one catalogue behind {endpoint}. \
Reach it with curl from your shell tool, in four steps:\n\
1. Ask: `GET {endpoint}?ask=<what you need, in plain words>` answers with ranked candidates and a `best` key.\n\
2. Read: `GET {endpoint}?key=<KEY>&format=markdown` answers with the contract: what it does, when to use it, its arguments and an example.\n\
3. Invoke: `POST {endpoint}` with the JSON body `{{\"key\": \"<KEY>\", \"args\": {{...}}}}` and the header `Authorization: Bearer $TOOLCOST_TOKEN`.\n\
4. Confirm: the answer carries a receipt id; `GET {endpoint}?receipt=<id>` shows what ran.\n\
Never guess a key: ask first, and read the contract before the first call to a key."
    )
}

pub fn build(ctx: &Context) -> Built {
    Built {
        request: ctx.request(Some(&instructions(ctx.endpoint)), Vec::new()),
        definitions_in_context: 0,
        definitions_on_wire: 0,
    }
}
