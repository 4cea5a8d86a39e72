//! The log's writer: rows are committed in groups. A commit costs the same for one row as for
//! many (a dozen system calls and a page written to the WAL), and it was a third of a forwarding
//! gateway's time under load, so rows that arrive together are written together:
//!
//! - A request that finds itself alone (no other request in flight, nothing queued) writes its
//!   row at once, on its own thread, as a direct write would.
//! - Otherwise its row is queued for the writer thread, which lingers (at most
//!   [`LINGER`]) until about as many rows wait as requests are in flight, then commits them in
//!   one transaction.
//!
//! Either way a request waits for its own row to be committed before its answer is released;
//! a queued one waits without holding its thread.

use super::log::{self, LogRow};
use crate::error::{Error, Result};
use axum::body::Bytes;
use rusqlite::Connection;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The most rows committed in one transaction (an assumed bound, so that the first row of a
/// long queue is not held back by the rest).
const BATCH: usize = 256;
/// The longest the writer waits for more rows once one is queued (an assumed bound: a small
/// part of a forwarded request's own time under load).
pub const LINGER: Duration = Duration::from_micros(500);
/// Rows that may wait at once (an assumed bound); a request that finds the queue full writes its
/// row itself.
const QUEUE: usize = 4096;

/// What to write.
enum Op {
    /// A new row, with the request's body when `--log-bodies` keeps it.
    Insert(Box<LogRow>, Option<Bytes>),
    /// A row written earlier (a stream's, when it began), completed.
    Update(i64, Box<LogRow>),
}

type Outcome = std::result::Result<i64, String>;

/// Where the outcome goes: the request waiting on its task.
enum Reply {
    Task(tokio::sync::oneshot::Sender<Outcome>),
}

impl Reply {
    fn send(self, outcome: Outcome) {
        // A caller that stopped waiting has nothing to be told.
        match self {
            Reply::Task(tx) => {
                let _ = tx.send(outcome);
            }
        }
    }
}

struct Job {
    op: Op,
    reply: Reply,
}

/// Rows waiting for the writer thread, and whether the gateway is closing.
#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    /// When the oldest waiting row was queued.
    since: Option<Instant>,
    closed: bool,
}

/// What the requests and the writer thread share.
struct Shared {
    conn: Mutex<Connection>,
    queue: Mutex<Queue>,
    /// Signalled when a row is queued or the gateway closes.
    queued: Condvar,
    /// Requests the gateway is serving now (the writer lingers for about as many rows).
    inflight: Arc<AtomicUsize>,
}

impl Shared {
    /// The rows the requests in flight will bring, a queued one's included.
    fn expected(&self) -> usize {
        self.inflight.load(Ordering::Relaxed).clamp(1, BATCH)
    }
}

/// The log's writer; its thread ends, after writing what is queued, when this is dropped.
pub struct Writer {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Writer {
    fn drop(&mut self) {
        crate::sync::lock(&self.shared.queue).closed = true;
        self.shared.queued.notify_all();
        // What was queued is written before the writer is gone.
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Writer {
    /// A writer on `conn` (an opened log); `inflight` counts the requests being served.
    pub fn new(conn: Connection, inflight: Arc<AtomicUsize>) -> Result<Writer> {
        let shared = Arc::new(Shared {
            conn: Mutex::new(conn),
            queue: Mutex::default(),
            queued: Condvar::new(),
            inflight,
        });
        let on_thread = shared.clone();
        let thread = std::thread::Builder::new()
            .name("log-writer".into())
            .spawn(move || write_queued(&on_thread))
            .map_err(|e| Error::input(format!("could not start the log writer: {e}")))?;
        Ok(Writer {
            shared,
            thread: Some(thread),
        })
    }

    /// Insert a row (and its body); its id once committed.
    pub async fn insert(&self, row: LogRow, body: Option<Bytes>) -> Result<i64> {
        self.wait(Op::Insert(Box::new(row), body)).await
    }

    /// Complete a row written earlier.
    pub async fn update(&self, id: i64, row: LogRow) -> Result<()> {
        self.wait(Op::Update(id, Box::new(row))).await.map(|_| ())
    }

    /// Write a row now, on this thread, and return once it is committed (its id): for a row
    /// that must be in the log before the caller goes on whatever becomes of its task (a
    /// stream's first row, the row of a request dropped mid-answer). It waits only for a
    /// commit under way, never for rows to gather.
    pub fn write_now(&self, id: Option<i64>, row: LogRow, body: Option<Bytes>) -> Result<i64> {
        let op = match id {
            Some(id) => Op::Update(id, Box::new(row)),
            None => Op::Insert(Box::new(row), body),
        };
        write_one_committed(&crate::sync::lock(&self.shared.conn), &op).map_err(Error::input)
    }

    async fn wait(&self, op: Op) -> Result<i64> {
        // Alone: written now, as a direct write.
        if self.shared.inflight.load(Ordering::Relaxed) <= 1 {
            let idle = crate::sync::lock(&self.shared.queue).jobs.is_empty();
            if idle {
                if let Ok(conn) = self.shared.conn.try_lock() {
                    return write_one_committed(&conn, &op).map_err(Error::input);
                }
            }
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job = Job {
            op,
            reply: Reply::Task(tx),
        };
        if let Err(job) = self.queue(job) {
            // A full queue: written here, at once, so that no wait can lose it.
            return write_one_committed(&crate::sync::lock(&self.shared.conn), &job.op)
                .map_err(Error::input);
        }
        rx.await.map_err(|_| stopped())?.map_err(Error::input)
    }

    /// Queue a job for the writer thread; a full queue gives it back.
    fn queue(&self, job: Job) -> std::result::Result<(), Job> {
        let mut q = crate::sync::lock(&self.shared.queue);
        if q.jobs.len() >= QUEUE {
            return Err(job);
        }
        q.jobs.push(job);
        q.since.get_or_insert_with(Instant::now);
        // The writer waits without a bound only for a first row, and lingers for a count: it
        // is woken for those two, not for every row.
        let wake = q.jobs.len() == 1 || q.jobs.len() >= self.shared.expected();
        drop(q);
        if wake {
            self.shared.queued.notify_one();
        }
        Ok(())
    }
}

/// The writer thread: wait for a queued row, linger until about as many rows wait as requests
/// are in flight (or [`LINGER`] has passed since the first), write them in one transaction, and
/// tell each caller its outcome. Ends when the gateway closes, after writing what is queued.
fn write_queued(shared: &Shared) {
    loop {
        let batch: Vec<Job> = {
            let mut q = crate::sync::lock(&shared.queue);
            loop {
                if q.jobs.is_empty() {
                    if q.closed {
                        return;
                    }
                    q = shared
                        .queued
                        .wait(q)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    continue;
                }
                let waited = q.since.map_or(LINGER, |t| t.elapsed());
                if q.closed || q.jobs.len() >= shared.expected() || waited >= LINGER {
                    break;
                }
                q = shared
                    .queued
                    .wait_timeout(q, LINGER - waited)
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .0;
            }
            let n = q.jobs.len().min(BATCH);
            let batch: Vec<Job> = q.jobs.drain(..n).collect();
            q.since = (!q.jobs.is_empty()).then(Instant::now);
            batch
        };
        write_batch(&crate::sync::lock(&shared.conn), batch);
    }
}

/// One row written and committed on its own.
fn write_one_committed(conn: &Connection, op: &Op) -> Outcome {
    commit(conn, std::iter::once(op)).remove(0)
}

fn stopped() -> Error {
    Error::input("the log writer stopped before the row was written")
}

/// Write `batch` in one transaction, commit, and tell each caller its outcome.
fn write_batch(conn: &Connection, batch: Vec<Job>) {
    let outcomes = commit(conn, batch.iter().map(|j| &j.op));
    for (job, outcome) in batch.into_iter().zip(outcomes) {
        job.reply.send(outcome);
    }
}

/// Write `ops` in one transaction and commit; each one's outcome (all fail if the commit does).
fn commit<'a>(conn: &Connection, ops: impl Iterator<Item = &'a Op>) -> Vec<Outcome> {
    // Prepared once per connection and kept, as the rows' own statements are.
    let run = |sql: &str| {
        conn.prepare_cached(sql)
            .and_then(|mut s| s.execute([]))
            .map(|_| ())
    };
    let began = run("BEGIN IMMEDIATE");
    // A failure SQLite answers by rolling the whole transaction back (a full disk, an I/O
    // error) leaves nothing to commit: the rest are not written, in the transaction or out.
    let mut undone: Option<String> = None;
    let outcomes: Vec<Outcome> = ops
        .map(|op| match (&began, &undone) {
            (Err(e), _) => Err(e.to_string()),
            (Ok(()), Some(why)) => Err(why.clone()),
            (Ok(()), None) => write_one(conn, op).map_err(|e| {
                if conn.is_autocommit() {
                    undone = Some(format!("the log's transaction was rolled back: {e}"));
                }
                e.to_string()
            }),
        })
        .collect();
    if let Some(why) = undone {
        return outcomes.into_iter().map(|_| Err(why.clone())).collect();
    }
    let committed = match began {
        Ok(()) => run("COMMIT").map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    if committed.is_err() {
        let _ = run("ROLLBACK");
    }
    outcomes
        .into_iter()
        .map(|o| match &committed {
            Ok(()) => o,
            Err(e) => Err(format!("the log's commit failed: {e}")),
        })
        .collect()
}

fn write_one(conn: &Connection, op: &Op) -> Result<i64> {
    match op {
        Op::Insert(row, body) => {
            let id = log::insert(conn, row)?;
            if let Some(body) = body {
                log::insert_body(conn, id, body)?;
            }
            Ok(id)
        }
        Op::Update(id, row) => log::update(conn, *id, row).map(|_| *id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(model: &str) -> LogRow {
        LogRow {
            created_at: "2026-12-02T00:00:00Z".into(),
            provider_format: "anthropic-messages".into(),
            model: model.into(),
            path: "/v1/messages".into(),
            usage_source: "observed".into(),
            metadata: "{}".into(),
            ..Default::default()
        }
    }

    /// Rows written side by side each come back with their own id, committed; an update lands
    /// on its row; a blocking write is committed when it returns.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rows_written_side_by_side_are_each_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.sqlite");
        let inflight = Arc::new(AtomicUsize::new(8));
        let w = Arc::new(Writer::new(log::open(&path).unwrap(), inflight.clone()).unwrap());
        let tasks: Vec<_> = (0..200)
            .map(|i| {
                let w = w.clone();
                tokio::spawn(async move { w.insert(row(&format!("m{i}")), None).await.unwrap() })
            })
            .collect();
        let mut ids = Vec::new();
        for t in tasks {
            ids.push(t.await.unwrap());
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 200);
        w.update(ids[0], row("changed")).await.unwrap();
        let w2 = w.clone();
        tokio::task::spawn_blocking(move || w2.write_now(None, row("blocking"), None))
            .await
            .unwrap()
            .unwrap();
        drop(w);
        let rows = log::read_all(&path).unwrap();
        assert_eq!(rows.len(), 201);
        assert!(rows.iter().any(|r| r.model == "changed" && r.id == ids[0]));
        assert!(rows.iter().any(|r| r.model == "blocking"));
    }

    /// A request alone writes its row itself; rows queued behind a lingering writer are
    /// committed within the linger when fewer arrive than requests are in flight.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_lone_row_is_written_at_once_and_a_short_batch_within_the_linger() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.sqlite");
        let inflight = Arc::new(AtomicUsize::new(1));
        let w = Writer::new(log::open(&path).unwrap(), inflight.clone()).unwrap();
        let id = w
            .insert(row("alone"), Some(Bytes::from_static(b"{}")))
            .await
            .unwrap();
        assert_eq!(log::read_all(&path).unwrap().len(), 1);
        // Eight requests in flight, one row: the writer gives up waiting for the rest.
        inflight.store(8, Ordering::Relaxed);
        let started = Instant::now();
        w.update(id, row("updated")).await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(log::read_all(&path).unwrap()[0].model, "updated");
    }
}
