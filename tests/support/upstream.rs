//! A scripted HTTP/1.1 peer on 127.0.0.1:0, plain or TLS, for the hostile-client and TLS
//! tests: each request gets the [`Reply`] its handler chooses, including replies no good
//! server sends (cut streams, stalls, huge bodies, hung DELETEs).
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// A request as received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// How a stream ends after its chunks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum End {
    /// The terminating zero chunk: a clean end.
    Clean,
    /// The connection closes inside the body: a cut.
    Cut,
}

/// What the peer answers.
#[derive(Debug, Clone)]
pub enum Reply {
    Whole {
        status: u16,
        content_type: String,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Chunked: a pause before each chunk, then the end.
    Stream {
        status: u16,
        content_type: String,
        chunks: Vec<(Duration, Vec<u8>)>,
        end: End,
    },
    /// Never answer (until the peer closes).
    Hang,
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Reply {
        Reply::Whole {
            status,
            content_type: "application/json".into(),
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
        }
    }
}

type Handler = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

/// Serve plain HTTP; returns the base URL `http://127.0.0.1:PORT`.
pub async fn serve(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handler: Handler = Arc::new(handler);
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            tokio::spawn(connection(sock, handler.clone()));
        }
    });
    format!("http://{addr}")
}

/// Serve TLS with this acceptor; returns the port.
pub async fn serve_tls(
    acceptor: tokio_rustls::TlsAcceptor,
    handler: impl Fn(&Request) -> Reply + Send + Sync + 'static,
) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let handler: Handler = Arc::new(handler);
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let handler = handler.clone();
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(sock).await {
                    connection(tls, handler).await;
                }
            });
        }
    });
    port
}

async fn connection<S: AsyncRead + AsyncWrite + Unpin>(mut s: S, handler: Handler) {
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let Some(req) = read_request(&mut s, &mut buf).await else {
            return;
        };
        let reply = handler(&req);
        if !write_reply(&mut s, reply).await {
            return;
        }
    }
}

async fn read_request<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    buf: &mut Vec<u8>,
) -> Option<Request> {
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        if buf.first().is_some_and(|b| !b.is_ascii_alphabetic()) {
            // Not HTTP (a TLS ClientHello to a plain server): answer as a plain server does.
            let _ = s
                .write_all(
                    b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
            let _ = s.shutdown().await;
            return None;
        }
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = s.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let start = head_end + 4;
    while buf.len() < start + len {
        let n = s.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body = buf[start..start + len].to_vec();
    buf.drain(..start + len);
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}

/// Write a reply; false when the connection must close.
async fn write_reply<S: AsyncWrite + Unpin>(s: &mut S, reply: Reply) -> bool {
    match reply {
        Reply::Whole {
            status,
            content_type,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n",
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            s.write_all(head.as_bytes()).await.is_ok()
                && s.write_all(&body).await.is_ok()
                && s.flush().await.is_ok()
        }
        Reply::Stream {
            status,
            content_type,
            chunks,
            end,
        } => {
            let head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n"
            );
            if s.write_all(head.as_bytes()).await.is_err() || s.flush().await.is_err() {
                return false;
            }
            for (pause, chunk) in chunks {
                tokio::time::sleep(pause).await;
                let framed = [
                    format!("{:x}\r\n", chunk.len()).into_bytes(),
                    chunk,
                    b"\r\n".to_vec(),
                ]
                .concat();
                if s.write_all(&framed).await.is_err() || s.flush().await.is_err() {
                    return false;
                }
            }
            match end {
                End::Clean => s.write_all(b"0\r\n\r\n").await.is_ok() && s.flush().await.is_ok(),
                End::Cut => {
                    let _ = s.shutdown().await;
                    false
                }
            }
        }
        Reply::Hang => {
            // Hold the connection until the peer gives up (bounded by the test's own end).
            tokio::time::sleep(Duration::from_secs(600)).await;
            false
        }
    }
}

/// A test CA and a server certificate it signed for `names`, as PEM and as a TLS acceptor.
pub struct Pki {
    pub ca_pem: String,
    pub acceptor: tokio_rustls::TlsAcceptor,
}

/// A fresh CA and a leaf for `names` (DNS names or IP addresses).
pub fn pki(names: &[&str]) -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "toolcost test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf_params =
        CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            tokio_rustls::rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
        )
        .unwrap();
    Pki {
        ca_pem: ca_cert.pem(),
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
    }
}

/// An Anthropic Messages answer with this usage.
pub fn anthropic_answer(input: u64, output: u64) -> String {
    format!(
        r#"{{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"hi"}}],"stop_reason":"end_turn","stop_sequence":null,"usage":{{"input_tokens":{input},"output_tokens":{output}}}}}"#
    )
}

/// Anthropic stream events, whole, in order.
pub fn anthropic_events(input: u64, output: u64) -> Vec<String> {
    vec![
        format!("event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"usage\":{{\"input_tokens\":{input},\"output_tokens\":1}}}}}}\n\n"),
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n".to_string(),
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\n".to_string(),
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n".to_string(),
        format!("event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\"}},\"usage\":{{\"output_tokens\":{output}}}}}\n\n"),
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_string(),
    ]
}
