//! Cutting off peers that stop reading. A response larger than the socket buffers (a whole
//! `tools/list` of a large catalogue, a batch's answer, an event stream nobody drains) blocks
//! its connection's writes while the peer reads nothing, and without a bound such a peer holds
//! a connection slot for as long as it likes. Each connection's writes are wrapped here: a
//! write that makes no progress for the stall limit fails, and the connection closes. Any byte
//! the peer takes restarts the clock (a write going through, or the send queue found shorter
//! when the clock runs out), so a slow but reading client is never cut off.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// How many bytes written to a connection its peer has not taken yet, where the system can
/// say. A write is woken only when a good share of a large send buffer has drained, so a peer
/// reading slowly can go longer than the stall limit between two writes that go through: the
/// queue shrinking in the meantime is what shows it is still reading.
pub trait Queued {
    fn queued(&self) -> Option<usize>;
}

impl Queued for tokio::net::TcpStream {
    #[cfg(target_os = "linux")]
    fn queued(&self) -> Option<usize> {
        use std::os::fd::AsRawFd;
        let mut n: libc::c_int = 0;
        // SAFETY: TIOCOUTQ (SIOCOUTQ on a TCP socket) writes one int: the bytes in the send
        // queue. The descriptor is this stream's own, open for as long as `self` lives.
        let rc = unsafe { libc::ioctl(self.as_raw_fd(), libc::TIOCOUTQ, &mut n) };
        (rc == 0).then(|| usize::try_from(n).unwrap_or(0))
    }
    #[cfg(not(target_os = "linux"))]
    fn queued(&self) -> Option<usize> {
        None
    }
}

impl Queued for tokio::io::DuplexStream {
    fn queued(&self) -> Option<usize> {
        None
    }
}

/// An I/O object whose writes fail once they have been blocked for `stall` with nothing taken
/// by the peer.
pub struct StallGuard<T> {
    io: T,
    stall: Duration,
    /// Running while a write is blocked (it wakes at least once a second to look at the send
    /// queue); dropped when a write goes through.
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// While blocked: when the peer last took bytes, and the send queue then.
    progress: Option<(tokio::time::Instant, Option<usize>)>,
}

/// How often a blocked connection's send queue is looked at.
const LOOK_EVERY: Duration = Duration::from_secs(1);

impl<T: Queued> StallGuard<T> {
    pub fn new(io: T, stall: Duration) -> StallGuard<T> {
        StallGuard {
            io,
            stall,
            timer: None,
            progress: None,
        }
    }

    /// What a write that came back `Pending` turns into: still pending, or the error once the
    /// peer has taken nothing (no write through, the send queue no shorter) for `stall`.
    fn blocked<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        let stall = self.stall;
        let step = stall.min(LOOK_EVERY);
        let now = tokio::time::Instant::now();
        if self.timer.is_none() {
            self.progress = Some((now, self.io.queued()));
        }
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(step)));
        loop {
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let now = tokio::time::Instant::now();
            let queued = self.io.queued();
            let (mut since, before) = self.progress.unwrap_or((now, queued));
            if let (Some(before), Some(q)) = (before, queued) {
                if q < before {
                    // The peer took bytes since the last look: the clock starts again.
                    since = now;
                }
            }
            self.progress = Some((since, queued));
            if now.duration_since(since) >= stall {
                break;
            }
            timer
                .as_mut()
                .reset(now + step.min(stall - now.duration_since(since)));
        }
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the peer read nothing for {} s; connection closed",
                stall.as_secs_f64()
            ),
        )))
    }

    fn progressed<R>(
        &mut self,
        r: Poll<io::Result<R>>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<R>> {
        match r {
            Poll::Ready(r) => {
                self.timer = None;
                self.progress = None;
                Poll::Ready(r)
            }
            Poll::Pending => self.blocked(cx),
        }
    }
}

impl<T: AsyncRead + Unpin + Queued> AsyncRead for StallGuard<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin + Queued> AsyncWrite for StallGuard<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_write(cx, buf);
        this.progressed(r, cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.progressed(r, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_flush(cx);
        this.progressed(r, cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_shutdown(cx);
        this.progressed(r, cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn a_write_nobody_reads_fails_and_a_read_one_goes_through() {
        // The other end stays open and unread.
        let (a, _unread) = tokio::io::duplex(64);
        let mut guarded = StallGuard::new(a, Duration::from_millis(100));
        guarded.write_all(&[1; 64]).await.unwrap();
        let err = guarded.write_all(&[1; 64]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        // A reader that keeps taking bytes, however slowly, is never cut off.
        let (a, mut b2) = tokio::io::duplex(16);
        let reader = tokio::spawn(async move {
            use tokio::io::AsyncReadExt;
            let mut got = 0;
            let mut buf = [0u8; 8];
            while got < 256 {
                tokio::time::sleep(Duration::from_millis(10)).await;
                got += b2.read(&mut buf).await.unwrap();
            }
        });
        let mut guarded = StallGuard::new(a, Duration::from_millis(100));
        guarded.write_all(&[2; 256]).await.unwrap();
        reader.await.unwrap();
    }

    /// A socket that never becomes writable again, whose send queue shrinks at each of the
    /// first `shrinking` looks and then stays: a peer that read slowly, then stopped.
    struct Draining {
        looks: std::cell::Cell<usize>,
        shrinking: usize,
    }

    impl Queued for Draining {
        fn queued(&self) -> Option<usize> {
            let n = self.looks.get();
            self.looks.set(n + 1);
            Some(1_000_000 - n.min(self.shrinking))
        }
    }

    impl AsyncWrite for Draining {
        fn poll_write(
            self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            _buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            Poll::Pending
        }
        fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn a_send_queue_that_shrinks_keeps_a_blocked_write_alive() {
        // Writes are never woken (a large send buffer wakes its writer rarely), but the peer
        // takes bytes at each of the first 8 looks: only after that does the clock run out.
        let mut guarded = StallGuard::new(
            Draining {
                looks: std::cell::Cell::new(0),
                shrinking: 8,
            },
            Duration::from_millis(200),
        );
        let err = tokio::time::timeout(Duration::from_secs(30), guarded.write_all(&[3; 16]))
            .await
            .expect("a peer that stopped reading is cut off")
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(
            guarded.io.looks.get() > 8,
            "cut off while the peer was still reading: {} looks",
            guarded.io.looks.get()
        );
    }
}
