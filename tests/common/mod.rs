//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use toolcost::catalogue::{generate::generate, profile::Profile, Catalogue};

/// `../shared` beside the checkout (CI lays it there), or `TOOLCOST_SHARED`.
pub fn shared() -> PathBuf {
    let dir = std::env::var_os("TOOLCOST_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    assert!(
        dir.join("real-mcp").is_dir(),
        "shared/real-mcp not found at {}; set TOOLCOST_SHARED",
        dir.display()
    );
    dir
}

/// Every capture in shared/real-mcp, as (file name, path).
pub fn real_mcp_captures() -> Vec<(String, PathBuf)> {
    let mut out: Vec<_> = std::fs::read_dir(shared().join("real-mcp"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    out.sort();
    assert_eq!(out.len(), 10, "expected ten captures");
    out
}

/// The texts of the recorded Rosetta Code documents in shared/claude-counts-text, in order.
pub fn rosetta_texts() -> Vec<String> {
    let path = shared().join("claude-counts-text/rosetta.jsonl.gz");
    let f = std::fs::File::open(&path).unwrap();
    let mut s = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(f), &mut s).unwrap();
    s.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["text"].as_str().map(String::from)
        })
        .collect()
}

pub fn seed_catalogue(n: usize) -> Catalogue {
    Catalogue::from_rows(
        "test",
        generate(Profile::named("seed-2026-07").unwrap(), n, 1),
    )
}

/// A `toolcost` child process serving on an address it chose; killed when dropped.
pub struct Serving {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`, as the child printed it.
    pub base: String,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serving {
    /// Kill the child now, as a crash or Ctrl-C would.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

/// Start `toolcost ARGS --listen 127.0.0.1:0` (`serve` or `gateway`) and read the address it
/// bound from the line it prints on start-up, so no port is picked before the child binds it.
pub fn serve(args: &[&str], env: &[(&str, &str)]) -> Serving {
    use std::io::{BufRead, BufReader};
    use std::time::Duration;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    // Reads every line so the child never blocks on a full pipe; the first address goes back.
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
            if !sent {
                if let Some(base) = printed_address(&line) {
                    sent = tx.send(Ok(base)).is_ok();
                } else {
                    let _ = tx.send(Err(line));
                }
            }
        }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(Ok(base)) => return Serving { child, base },
            Ok(Err(line)) => seen.push(line),
            Err(e) => {
                let _ = child.kill();
                panic!("toolcost {args:?} printed no address ({e}); it said: {seen:?}");
            }
        }
    }
}

/// The `http://HOST:PORT` in a start-up line such as `toolcost serve: ... on
/// http://127.0.0.1:4000: /api/dispatch, ...` or `toolcost gateway: http://127.0.0.1:4001 -> mock`.
pub fn printed_address(line: &str) -> Option<String> {
    let at = line.find("http://")?;
    let url = line[at..].split_whitespace().next()?.trim_end_matches(':');
    let addr: std::net::SocketAddr = url["http://".len()..].parse().ok()?;
    (addr.port() != 0).then(|| format!("http://{addr}"))
}

/// Start a third-party peer that takes its port as a setting and cannot say which it bound:
/// `command(port)` with a port the OS just handed out, waiting until it listens. Another
/// process can take that port in between; then the child fails to listen and another port is
/// tried.
pub fn spawn_peer(command: impl Fn(u16) -> std::process::Command) -> (std::process::Child, u16) {
    use std::time::{Duration, Instant};
    for _ in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = command(port).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return (child, port);
            }
            if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    panic!("the peer did not listen on any of five ports");
}

/// A gateway in this process on 127.0.0.1:0, its log in a temporary folder; it stops when
/// dropped.
pub struct TestGateway {
    pub base: String,
    pub log: PathBuf,
    _dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for TestGateway {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

/// Start a gateway in front of `upstream` with the default options, changed by `adjust`.
pub async fn start_gateway(
    upstream: toolcost::gateway::Upstream,
    adjust: impl FnOnce(&mut toolcost::gateway::Options),
) -> TestGateway {
    use toolcost::gateway;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.sqlite");
    let mut opts = gateway::Options {
        upstream,
        api_key: None,
        log: log.clone(),
        timeout: std::time::Duration::from_secs(30),
        max_body: gateway::DEFAULT_MAX_BODY,
        max_response: gateway::DEFAULT_MAX_RESPONSE,
        ca_cert: None,
        log_bodies: false,
        body_idle: gateway::BODY_IDLE,
    };
    adjust(&mut opts);
    let gw = gateway::Gateway::new(opts).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(gateway::run(listener, gw, async move {
        let _ = rx.await;
    }));
    TestGateway {
        base,
        log,
        _dir: dir,
        stop: Some(tx),
    }
}

/// The sentence encoder, if its model is installed; outside CI a missing model skips the test
/// with a note, in CI it is an error (`.ci/run` installs it).
pub fn encoder() -> Option<&'static toolcost::embed::Encoder> {
    match toolcost::embed::Encoder::shared() {
        Ok(e) => Some(e),
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "{e}");
            eprintln!("skipping: {e}");
            None
        }
    }
}

/// The Python the tests' packages are installed for: `.ci/run`'s virtual environment under
/// `target/venv` when it is there (it leaves the machine's own Python as it was), else
/// `python3` on PATH.
#[allow(dead_code)]
pub fn python() -> PathBuf {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/venv/bin/python3");
    match venv.exists() {
        true => venv,
        false => PathBuf::from("python3"),
    }
}

/// Whether the official Python SDKs named (`anthropic`, `openai`) import; outside CI a missing
/// one skips the test with a note, in CI it is an error (`.ci/run` installs them).
pub fn python_sdks(modules: &str) -> bool {
    let ok = std::process::Command::new(python())
        .args(["-c", &format!("import {modules}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "the Python packages {modules} are missing: .ci/run installs them"
        );
        eprintln!("skipping: pip install {modules} to run the SDK test");
    }
    ok
}

/// Run a Python peer script under tests/peers with the gateway's base URL; its JSON output.
pub async fn python_peer(script: &str, base: &str) -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(script);
    let out = tokio::process::Command::new(python())
        .arg(&path)
        .arg(base)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A reference server running in this process on 127.0.0.1:0; dropping it stops it.
pub struct InProcess {
    pub base: String,
    pub addr: std::net::SocketAddr,
    pub state: std::sync::Arc<toolcost::server::state::State>,
    pub http: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

/// Serve `state` on a fresh loopback port; `http` is the client the tests talk through.
pub async fn serve_in_process(
    state: std::sync::Arc<toolcost::server::state::State>,
    max_body: usize,
    http: reqwest::Client,
) -> InProcess {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(toolcost::server::run(
        listener,
        state.clone(),
        max_body,
        async move {
            let _ = rx.await;
        },
    ));
    InProcess {
        base: format!("http://{addr}"),
        addr,
        state,
        http,
        stop: Some(tx),
    }
}

/// Whether the Gemma 3 model file (PyPI maxtext's, the cross-check of the embedded vocabulary)
/// is installed; in CI it must be.
pub fn gemma3_installed() -> bool {
    let ok = toolcost::tokens::gemma3::locate().is_ok();
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "the Gemma 3 vocabulary is missing: .ci/run installs it"
        );
        eprintln!("skipping: install the Gemma 3 vocabulary (see the README) to run this test");
    }
    ok
}

/// Google's sentencepiece package (PyPI) encoding each text with the Gemma 3 model file
/// `model` (tests/peers/gemma3_reference.py): the reference Gemini's offline count is held to.
pub fn sentencepiece_ids(model: &std::path::Path, texts: &[String]) -> Vec<Vec<u32>> {
    use std::io::Write;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers/gemma3_reference.py");
    let mut child = std::process::Command::new(python())
        .arg(&script)
        .arg(model)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(texts).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The pretokenizer pattern of o200k_base, which Llama 4's tokenizer uses too (its
/// `O200K_PATTERN`, in llama-models' `llama4/tokenizer.py`).
pub const O200K_PATTERN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// tiktoken's encoder (the Rust port, tiktoken-rs) over a tiktoken rank file with o200k's
/// pattern: Llama 4's reference, where its `tokenizer.model` is installed.
pub fn tiktoken_of(file: &std::path::Path) -> tiktoken_rs::CoreBPE {
    use base64::Engine;
    let text = std::fs::read_to_string(file).unwrap();
    let ranks = text.lines().filter(|l| !l.is_empty()).map(|l| {
        let (b64, rank) = l.split_once(' ').unwrap();
        (
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap(),
            rank.parse::<u32>().unwrap(),
        )
    });
    tiktoken_rs::CoreBPE::new(ranks.collect(), Default::default(), O200K_PATTERN).unwrap()
}
