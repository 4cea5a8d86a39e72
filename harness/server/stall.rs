//! Cutting off peers that stop reading. A response larger than the socket buffers (a whole
//! `tools/list` of a large catalogue, a batch's answer, an event stream nobody drains) blocks
//! its connection's writes while the peer reads nothing, and without a bound such a peer holds
//! a connection slot for as long as it likes. Each connection's writes are wrapped here: a
//! write that makes no progress for the stall limit fails, and the connection closes. Any byte
//! the peer takes restarts the clock, so a slow but reading client is never cut off.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// An I/O object whose writes fail once they have been blocked for `stall`.
pub struct StallGuard<T> {
    io: T,
    stall: Duration,
    /// Running while a write is blocked; dropped when one goes through.
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> StallGuard<T> {
    pub fn new(io: T, stall: Duration) -> StallGuard<T> {
        StallGuard {
            io,
            stall,
            timer: None,
        }
    }

    /// What a write that came back `Pending` turns into: still pending, or the error once the
    /// clock ran out.
    fn blocked<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        let stall = self.stall;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(stall)));
        match timer.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the peer read nothing for {} s; connection closed",
                    stall.as_secs_f64()
                ),
            ))),
        }
    }

    fn progressed<R>(
        &mut self,
        r: Poll<io::Result<R>>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<R>> {
        match r {
            Poll::Ready(r) => {
                self.timer = None;
                Poll::Ready(r)
            }
            Poll::Pending => self.blocked(cx),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for StallGuard<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for StallGuard<T> {
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
}
