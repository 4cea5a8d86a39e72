//! The connection loop: a slot per connection (past the cap, new ones wait in the backlog),
//! a seat per peer address ([`super::peers`]), the header timeout and the write-stall guard,
//! and a graceful end that waits for the last connection.

use super::state::State;
use super::{peers, router, stall};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Serve until `shutdown` resolves. Tests bind 127.0.0.1:0 and pass the listener.
pub async fn run(
    listener: tokio::net::TcpListener,
    state: Arc<State>,
    max_body: usize,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    state.set_base_url(format!("http://{addr}"));
    state.set_bound(addr);
    let limits = state.limits.clone();
    let app = router(state, max_body);
    let max = limits.max_connections.max(1);
    let slots = Arc::new(tokio::sync::Semaphore::new(max));
    let peers = Arc::new(peers::Peers::new(max));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // A connection slot first: past the cap, new connections wait in the backlog, and the
        // header timeout frees the slots of clients that connect and send nothing.
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => p.expect("the semaphore is never closed"),
            _ = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(_) => {
                    // Out of descriptors or a connection reset before accept: back off a little.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        // One address may hold only its share of the slots, and the last slots are kept for
        // addresses that hold none: connections that send nothing cannot starve other peers.
        let Some(seat) = peers.seat(peer.ip(), slots.available_permits()) else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let mut stop = stop_rx.clone();
        let header_timeout = limits.header_timeout;
        let stream = stall::StallGuard::new(stream, limits.write_stall);
        tokio::spawn(async move {
            let _permit = permit;
            let _seat = seat;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout);
            let conn = builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    let _ = stop_tx.send(true);
    // Every connection holds a slot until it ends: taking them all waits for the last.
    let _ = slots.acquire_many(max as u32).await;
    Ok(())
}
