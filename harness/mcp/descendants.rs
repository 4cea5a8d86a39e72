//! Every process a stdio server starts, found from `/proc` while it runs, so that closing the
//! server ends them all: also one that left the server's process group and session
//! (`setsid`), which a signal to the group does not reach, and one whose parent has exited.
//!
//! A background task walks the process table every [`POLL`] and records each process whose
//! parent is the server or a process already recorded, with its start time, so that a pid
//! reused by an unrelated process later is never signalled. The record is bounded
//! ([`MAX_TRACKED`]). Outside Linux it records nothing and the process group is all there is.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the process table is walked while the server runs.
pub const POLL: Duration = Duration::from_millis(50);
/// Descendants recorded at most (a fork bomb is the group's to end).
pub const MAX_TRACKED: usize = 4096;

/// The descendants of one process, as seen so far.
pub struct Descendants {
    root: i32,
    /// The root's start time when watching began: once the root is gone and its pid reused,
    /// the new process's children are not the server's.
    root_start: Option<u64>,
    seen: Arc<Mutex<HashMap<i32, u64>>>,
    stop: Arc<AtomicBool>,
}

impl Descendants {
    /// Start recording the descendants of `root` (needs a tokio runtime).
    pub fn watch(root: i32) -> Descendants {
        let root_start = table().get(&root).map(|(_, s)| *s);
        let d = Descendants {
            root,
            root_start,
            seen: Arc::default(),
            stop: Arc::default(),
        };
        let (seen, stop) = (d.seen.clone(), d.stop.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                scan(root, root_start, &seen);
                tokio::time::sleep(POLL).await;
            }
        });
        d
    }

    /// SIGKILL every recorded descendant that is still the process recorded (one last walk
    /// first, for any started since the previous one).
    pub fn kill_all(&self) {
        scan(self.root, self.root_start, &self.seen);
        self.stop.store(true, Ordering::Relaxed);
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let now = table();
        for (pid, start) in seen.iter() {
            if now.get(pid).is_some_and(|(_, s)| s == start) {
                // SAFETY: kill(2) on a pid checked a moment ago to be the process recorded.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
            }
        }
    }
}

impl Drop for Descendants {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Record every process below `root` (while it is still the process that started as
/// `root_start`) or below one already recorded.
fn scan(root: i32, root_start: Option<u64>, seen: &Mutex<HashMap<i32, u64>>) {
    let now = table();
    let root_is_ours = root_start.is_some() && now.get(&root).map(|(_, s)| *s) == root_start;
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    // A recorded pid that now belongs to another process (or none) is dropped.
    seen.retain(|pid, start| now.get(pid).is_some_and(|(_, s)| s == start));
    loop {
        let before = seen.len();
        for (pid, (ppid, start)) in &now {
            if seen.len() >= MAX_TRACKED {
                return;
            }
            if !seen.contains_key(pid)
                && ((*ppid == root && root_is_ours) || seen.contains_key(ppid))
            {
                seen.insert(*pid, *start);
            }
        }
        if seen.len() == before {
            return;
        }
    }
}

/// pid -> (parent pid, start time in clock ticks), from `/proc/<pid>/stat`.
fn table() -> HashMap<i32, (i32, u64)> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if let Some(entry) = parse_stat(&stat) {
            out.insert(pid, entry);
        }
    }
    out
}

/// Parent pid and start time from a `stat` line; the command name may hold spaces and
/// parentheses, so fields are read after the last `)`.
fn parse_stat(stat: &str) -> Option<(i32, u64)> {
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3), ppid (4), ..., starttime (22).
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_stat_line_whose_name_has_spaces_and_parens() {
        let line = "4242 (a (weird) name) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615";
        assert_eq!(parse_stat(line), Some((17, 987654)));
        assert_eq!(parse_stat("garbage"), None);
    }
}
