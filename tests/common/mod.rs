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
