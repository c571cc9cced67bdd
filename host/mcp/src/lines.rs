//! A watch on a server's stdout counting lines longer than the bound
//! (which the transport drops unread), so a call that lost its answer to
//! the bound can say so instead of only timing out.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// How many over-long lines a server has sent.
#[derive(Debug, Clone, Default)]
pub(crate) struct Oversized(Arc<AtomicU64>);

impl Oversized {
    /// The count so far.
    pub(crate) fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// An `AsyncRead` passing bytes through unchanged while counting lines
/// longer than `limit` bytes.
pub(crate) struct LineWatch<R> {
    inner: R,
    limit: usize,
    /// Bytes since the last newline.
    run: usize,
    /// Whether the current line was already counted.
    counted: bool,
    oversized: Oversized,
}

impl<R> LineWatch<R> {
    pub(crate) fn new(inner: R, limit: usize, oversized: Oversized) -> Self {
        Self {
            inner,
            limit,
            run: 0,
            counted: false,
            oversized,
        }
    }

    fn observe(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|&b| b == b'\n') {
            self.run = self.run.saturating_add(chunk.len());
            if self.run > self.limit.saturating_add(1) && !self.counted {
                self.counted = true;
                self.oversized.0.fetch_add(1, Ordering::Relaxed);
            }
            if chunk.last() == Some(&b'\n') {
                self.run = 0;
                self.counted = false;
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineWatch<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let fresh = buf.filled()[before..].to_vec();
            self.observe(&fresh);
        }
        polled
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_long_line_once_across_reads() {
        let oversized = Oversized::default();
        let mut watch = LineWatch::new(tokio::io::empty(), 4, oversized.clone());
        watch.observe(b"abc\n");
        watch.observe(b"abcdef");
        watch.observe(b"ghij");
        assert_eq!(oversized.count(), 1);
        watch.observe(b"k\nxy\n0123456789\n");
        assert_eq!(oversized.count(), 2);
    }
}
