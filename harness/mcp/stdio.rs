//! The stdio transport: a child process in its own process group, one JSON message per line.
//! Lines that are not JSON-RPC messages (banners, logs, bytes that are not UTF-8) are counted
//! and skipped; a line longer than the bound is an error. The whole group is stopped at the
//! end, whatever happened (also when the [`Stdio`] is dropped), grandchildren that ignore
//! SIGTERM included: the group is SIGKILLed by its id even after the child was reaped.

use super::{read_line, Channel, Incoming, Line};
use crate::error::{Error, Result};
use serde_json::Value;
use std::process::Stdio as P;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const STDERR_TAIL: usize = 2_000;

/// How a server is started: the variables it gets (on top of toolcost's environment, or, when
/// `clean`, alone) and the folder it runs in (toolcost's when none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Launch {
    pub env: Vec<(String, String)>,
    pub clean: bool,
    pub cwd: Option<std::path::PathBuf>,
}

pub struct Stdio {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    max_line: usize,
    /// The process group the child leads (its pid), kept after the child is reaped.
    pgid: Option<i32>,
    /// Processes the server started, also those that left its group.
    #[cfg(target_os = "linux")]
    descendants: Option<super::descendants::Descendants>,
    noise: Vec<String>,
    noise_count: usize,
    stderr: Arc<Mutex<String>>,
    /// The task reading stderr: it ends at the pipe's end, when all the server wrote is in.
    stderr_read: Option<tokio::task::JoinHandle<()>>,
}

impl Stdio {
    /// Start `argv[0]` with the rest as arguments.
    pub fn spawn(argv: &[String]) -> Result<Stdio> {
        Stdio::spawn_with(argv, &[], super::DEFAULT_MAX_LINE)
    }

    /// The same, with these variables added to its environment and lines on stdout bounded to
    /// `max_line` bytes.
    pub fn spawn_with(argv: &[String], env: &[(String, String)], max_line: usize) -> Result<Stdio> {
        let launch = Launch {
            env: env.to_vec(),
            ..Launch::default()
        };
        Stdio::spawn_in(argv, &launch, max_line)
    }

    /// Start `argv` as `launch` says: in its folder, with its environment.
    pub fn spawn_in(argv: &[String], launch: &Launch, max_line: usize) -> Result<Stdio> {
        let (prog, args) = argv
            .split_first()
            .ok_or_else(|| Error::input("no command given after `--`"))?;
        let mut cmd = Command::new(prog);
        if launch.clean {
            cmd.env_clear();
        }
        cmd.envs(launch.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &launch.cwd {
            // A missing folder fails the spawn with the same error as a missing program: said
            // for what it is.
            if !dir.is_dir() {
                return Err(Error::input(format!(
                    "could not start `{prog}`: its folder {} does not exist or is not a folder",
                    dir.display()
                )));
            }
            cmd.current_dir(dir);
        }
        cmd.args(args)
            .stdin(P::piped())
            .stdout(P::piped())
            .stderr(P::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd.spawn().map_err(|e| {
            Error::input(format!(
                "could not start `{prog}`: {e}; check the command and that it is on PATH"
            ))
        })?;
        let pgid = child.id().map(|p| p as i32);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let tail = Arc::new(Mutex::new(String::new()));
        let sink = tail.clone();
        let stderr_read = tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut t = sink.lock().unwrap();
                t.push_str(&String::from_utf8_lossy(&buf[..n]));
                if t.len() > STDERR_TAIL * 2 {
                    let cut = t.len() - STDERR_TAIL;
                    let cut = (cut..t.len())
                        .find(|i| t.is_char_boundary(*i))
                        .unwrap_or(t.len());
                    t.drain(..cut);
                }
            }
        });
        Ok(Stdio {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            line: Vec::new(),
            max_line,
            pgid,
            #[cfg(target_os = "linux")]
            descendants: pgid.map(super::descendants::Descendants::watch),
            noise: Vec::new(),
            noise_count: 0,
            stderr: tail,
            stderr_read: Some(stderr_read),
        })
    }

    fn stderr_tail(&self) -> String {
        let t = self.stderr.lock().unwrap();
        let t = t.trim();
        let start = t.len().saturating_sub(STDERR_TAIL);
        let start = (start..t.len())
            .find(|i| t.is_char_boundary(*i))
            .unwrap_or(t.len());
        t[start..].to_string()
    }

    /// Signal the whole process group (by its id, so also after the child was reaped).
    pub fn signal_group(&self, sig: i32) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid.filter(|p| *p > 1) {
            // SAFETY: kill(2) with a negative pid signals the group the child leads.
            unsafe {
                libc::kill(-pgid, sig);
            }
        }
        // A SIGKILL ends the session for good: every process the server started goes too,
        // including one that called `setsid` and so left the group.
        #[cfg(target_os = "linux")]
        if sig == libc::SIGKILL {
            if let Some(d) = &self.descendants {
                d.kill_all();
            }
        }
    }
}

impl Channel for Stdio {
    async fn send(&mut self, msg: &Value) -> Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| Error::input("the server's stdin is closed"))?;
        let mut line = serde_json::to_vec(msg).expect("serialises");
        line.push(b'\n');
        let write = async {
            stdin.write_all(&line).await?;
            stdin.flush().await
        };
        match write.await {
            Ok(()) => Ok(()),
            // A server that exited before reading (the write meets a closed pipe) is reported
            // by what it said and how it ended, whichever came first.
            Err(e) => Err(Error::input(format!(
                "the server stopped before reading its request ({e}): {}",
                self.gone().await
            ))),
        }
    }

    async fn recv(&mut self) -> Result<Option<Incoming>> {
        loop {
            if !read_line(&mut self.stdout, &mut self.line, self.max_line).await? {
                return Ok(None);
            }
            match Line::parse(&self.line) {
                Line::Message(m) => return Ok(Some(m)),
                Line::Broken(why) => {
                    return Err(Error::input(format!(
                        "the server wrote a JSON-RPC message that is not valid JSON: {why}"
                    )))
                }
                Line::Noise(n) => {
                    self.noise_count += 1;
                    if self.noise.is_empty() {
                        self.noise.push(n);
                    }
                }
                Line::Blank => {}
            }
        }
    }

    async fn close(&mut self) {
        self.stdin.take();
        self.signal_group(libc::SIGTERM);
        if tokio::time::timeout(Duration::from_millis(500), self.child.wait())
            .await
            .is_err()
        {
            self.signal_group(libc::SIGKILL);
            let _ = self.child.kill().await;
        }
        // Whatever the group left behind goes too.
        self.signal_group(libc::SIGKILL);
    }

    fn notes(&self) -> Vec<String> {
        if self.noise.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "skipped {} line(s) on stdout that were not JSON-RPC, first: {:?}",
            self.noise_count, self.noise[0]
        )]
    }

    async fn gone(&mut self) -> String {
        let status = tokio::time::timeout(Duration::from_millis(500), self.child.wait()).await;
        let status = match status {
            Ok(Ok(s)) => format!("it exited ({s})"),
            _ => "its stdout closed".to_string(),
        };
        // All it wrote on stderr before its end, not what the reader had taken so far.
        if let Some(read) = self.stderr_read.take() {
            let _ = tokio::time::timeout(Duration::from_millis(500), read).await;
        }
        let tail = self.stderr_tail();
        if tail.is_empty() {
            status
        } else {
            format!("{status}; stderr ended with: {tail}")
        }
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        // Whatever ended the session (an error, a panic, a signal), the group goes.
        self.signal_group(libc::SIGKILL);
    }
}
