//! The bounds of the reference server: every wait, buffer and count a peer could otherwise
//! stretch, with the defaults `serve` uses.

use super::listing;
use std::time::Duration;

/// How receipt ids are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptIds {
    /// Keyed with a secret drawn when the server starts: nobody can guess another caller's id
    /// (and `?confirm` needs no token). What `serve` uses.
    Unguessable,
    /// A hash of what ran and the receipt's place in the store: the same calls give the same
    /// ids, so a measured run's token counts do not drift. What the driver uses.
    Reproducible,
}

/// The bounds that keep a hostile or careless peer from hanging, starving or filling the
/// server. Every one has a default fit for `serve`; tests shrink them.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Outbound (http runner): connecting, each read, and the whole exchange.
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub total_timeout: Duration,
    /// Outbound: largest response body kept.
    pub response_bytes: usize,
    /// Outbound: redirects followed, each to an allowlisted host and port.
    pub max_redirects: usize,
    /// Code-mode programs running at once, and waiting for a slot; past both, "busy".
    pub sandbox_slots: usize,
    pub sandbox_queue: usize,
    /// Dispatches one program may make, and the bytes of arguments and results they move.
    pub program_dispatches: usize,
    pub program_bytes: usize,
    /// Receipts an in-memory store keeps (without `--db`); past it calls are refused.
    pub memory_receipts: u64,
    /// Inbound: reading a request's headers, and its body.
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    /// Inbound: the body of a request without the token, where the headers cannot tell whether
    /// it needs one (an MCP POST under `--token-required-for calls` or `list`), is read within
    /// these bytes and this time. Everything such a caller may send (lists, initialize, ping,
    /// notifications, a batch of them) is small, and a tokenless sender cannot hold a
    /// connection slot for the full `body_timeout`.
    pub open_body: usize,
    pub open_body_timeout: Duration,
    /// A JSON-RPC batch's budget: past this time, or this many bytes of answers, the requests
    /// left are answered "not run" ([`super::batch`]). The bytes bound what one connection can make
    /// the server hold: at most this plus one answer (a whole list at worst), so
    /// `max_connections` batches hold at most that many times over.
    pub batch_time: Duration,
    pub batch_bytes: usize,
    /// The answer budget of a batch sent without a valid token: a few hundred bytes of batch
    /// could otherwise make the server hold `batch_bytes` for each connection that asks and
    /// then does not read.
    pub open_batch_bytes: usize,
    /// Inbound connections served at once; the rest wait in the listen backlog.
    pub max_connections: usize,
    /// Inbound: a connection whose peer reads nothing of the answer for this long is closed
    /// ([`super::stall`]), so a client that asks for a large answer and stops reading cannot hold a
    /// connection slot.
    pub write_stall: Duration,
    pub receipt_ids: ReceiptIds,
    /// Tools per MCP `tools/list` page (0: the whole list in one answer).
    pub tools_page: usize,
    /// Event streams (GET streams and `subscriptions/listen`) open at once. Streams are
    /// long-lived and need no token under the default scope, so they get a share of the
    /// connections well below `max_connections`: past it a new stream is refused with 503
    /// and the server stays reachable for requests.
    pub max_streams: usize,
    /// How long one event stream stays open; the client reconnects after it ends.
    pub stream_lifetime: Duration,
    /// The resolver of `?ask=` without `resolver=`, of `search_directory` and of code mode's
    /// `search()` (`serve --resolver`).
    pub resolver: crate::resolve::Kind,
}

impl Default for Limits {
    fn default() -> Self {
        let slots = std::thread::available_parallelism().map_or(2, |n| n.get() * 2);
        Limits {
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(15),
            total_timeout: Duration::from_secs(30),
            response_bytes: 4 << 20,
            max_redirects: 5,
            sandbox_slots: slots,
            sandbox_queue: slots * 8,
            program_dispatches: 1_000,
            program_bytes: 16 << 20,
            memory_receipts: 200_000,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            open_body: 64 << 10,
            open_body_timeout: Duration::from_secs(5),
            batch_time: Duration::from_secs(30),
            batch_bytes: 4 << 20,
            // About one whole `tools/list` of a thousand rows.
            open_batch_bytes: 512 << 10,
            max_connections: 200,
            write_stall: Duration::from_secs(30),
            receipt_ids: ReceiptIds::Unguessable,
            tools_page: listing::DEFAULT_PAGE_SIZE,
            max_streams: 32,
            stream_lifetime: Duration::from_secs(600),
            resolver: crate::resolve::Kind::DEFAULT,
        }
    }
}

impl Limits {
    /// The defaults with reproducible receipt ids, for measured runs.
    pub fn reproducible() -> Limits {
        Limits {
            receipt_ids: ReceiptIds::Reproducible,
            ..Limits::default()
        }
    }
}
