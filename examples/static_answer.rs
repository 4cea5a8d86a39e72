//! The loopback floor for the server bench: reads each POST to `/mcp` whole, as any server
//! must, and answers with one file's bytes (an answer the reference server wrote), doing no
//! other work. Requests per second against it are what the load client, the kernel, hyper and
//! axum reach on this machine with nothing to compute: no server that reads its requests can
//! be timed above them here.
//!
//! `cargo run --release --example static_answer -- ANSWER.json` prints
//! `listening on http://127.0.0.1:PORT` and serves until it is stopped.

use axum::{body::Bytes, routing::post, Router};

// Every core, as the reference server runs.
#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: static_answer ANSWER.json");
    let body = Bytes::from(std::fs::read(&path).expect("the answer file can be read"));
    let app = Router::new().route(
        "/mcp",
        // The request is read whole, as any server must read it, and then ignored.
        post(move |_request: Bytes| {
            let body = body.clone();
            async move { ([("content-type", "application/json")], body) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    println!(
        "listening on http://{}",
        listener.local_addr().expect("bound")
    );
    axum::serve(listener, app).await.expect("serves");
}
