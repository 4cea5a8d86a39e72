//! `toolcost gateway`: the LLM-API gateway that logs tokens, bytes and cost per request.

use super::runtime;
use crate::error::{env_secret, Error, Result};
use crate::gateway::{self, Gateway, Upstream};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct GatewayArgs {
    #[arg(long, default_value = "127.0.0.1:8788")]
    pub listen: String,
    /// `mock` (the offline provider-accounting model) or a provider base URL to forward to.
    #[arg(long, default_value = "mock")]
    pub upstream: String,
    /// The env var holding the provider key for forward mode (read once, never written anywhere).
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// SQLite file for the log rows.
    #[arg(long, default_value = "gateway-log.sqlite")]
    pub log: PathBuf,
    /// Idle timeout, in seconds: the longest the upstream may be silent, before it answers or
    /// between two chunks of a stream (a long stream that keeps sending is never cut).
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// The largest upstream answer passed on, in bytes; a larger one is refused (or its
    /// stream cut) with an error in the provider's format.
    #[arg(long, default_value_t = gateway::DEFAULT_MAX_RESPONSE)]
    pub max_response: usize,
    /// A PEM file of root certificates to trust for an https upstream (a private gateway, a
    /// test CA); SSL_CERT_FILE is read too.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// Store each request's body in the log (table `request_body`, keyed by the row's id).
    /// Off by default: a body holds whatever the client sent.
    #[arg(long)]
    pub log_bodies: bool,
    /// Threads that serve requests (1 to 256). Default: one per core. On a machine that also
    /// runs the client and the upstream, one thread can serve more than several: the bench
    /// matches the one worker of the reference proxy it is set beside.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: Option<u16>,
}

impl GatewayArgs {
    fn options(&self) -> Result<gateway::Options> {
        let upstream = match self.upstream.as_str() {
            "mock" => Upstream::Mock,
            url if url.starts_with("http://") || url.starts_with("https://") => {
                Upstream::Url(url.to_string())
            }
            other => {
                return Err(Error::input(format!(
                    "--upstream {other}: expected `mock` or a provider base URL"
                )))
            }
        };
        let api_key = match &self.api_key_env {
            Some(name) => Some(env_secret("--api-key-env", name)?),
            None => None,
        };
        Ok(gateway::Options {
            upstream,
            api_key,
            log: self.log.clone(),
            timeout: Duration::from_secs(self.timeout),
            max_body: gateway::DEFAULT_MAX_BODY,
            max_response: self.max_response,
            ca_cert: self.ca_cert.clone(),
            log_bodies: self.log_bodies,
            body_idle: gateway::BODY_IDLE,
        })
    }
}

pub(super) fn run(a: GatewayArgs) -> Result<i32> {
    let gw = Gateway::new(a.options()?)?;
    let rt = match a.workers {
        None => runtime()?,
        Some(n) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n.into())
            .enable_all()
            .build()
            .map_err(|e| Error::input(format!("could not start the async runtime: {e}")))?,
    };
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&a.listen)
            .await
            .map_err(|e| Error::input(format!("--listen {}: {e}", a.listen)))?;
        eprintln!(
            "toolcost gateway: http://{} -> {}; log {}",
            listener
                .local_addr()
                .map(|x| x.to_string())
                .unwrap_or_default(),
            crate::net::redacted(&a.upstream),
            a.log.display()
        );
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        gateway::run(listener, gw, shutdown)
            .await
            .map_err(|e| Error::input(format!("gateway: {e}")))
    })?;
    Ok(0)
}
