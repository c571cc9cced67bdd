//! A bounded capture of a guest's stderr that keeps the most recent bytes.
//!
//! Writes never fail and never block: a guest that floods stderr only
//! overwrites older output, so the tail (a panic message, say) survives.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};
use wasmtime_wasi_io::bytes::Bytes;

/// Largest single write accepted at once (what `check-write` grants).
const WRITE_PERMIT: usize = 64 * 1024;

/// A ring buffer of the last `capacity` bytes written.
#[derive(Debug, Clone)]
pub(crate) struct TailPipe {
    capacity: usize,
    buf: Arc<Mutex<VecDeque<u8>>>,
}

impl TailPipe {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            buf: Arc::new(Mutex::new(VecDeque::with_capacity(capacity.min(4096)))),
        }
    }

    fn push(&self, bytes: &[u8]) {
        let mut buf = self.buf.lock().unwrap_or_else(|p| p.into_inner());
        let keep = bytes.len().min(self.capacity);
        let bytes = &bytes[bytes.len() - keep..];
        let overflow = (buf.len() + bytes.len()).saturating_sub(self.capacity);
        let drop = overflow.min(buf.len());
        buf.drain(..drop);
        buf.extend(bytes);
    }

    /// The captured tail as UTF-8 of at most `capacity` bytes: a character
    /// cut by the ring's start is dropped, invalid bytes the guest wrote
    /// become U+FFFD, and the text is then cut on a character boundary so
    /// that those replacements never make it longer than the capacity.
    pub(crate) fn contents(&self) -> String {
        let buf = self.buf.lock().unwrap_or_else(|p| p.into_inner());
        let (a, b) = buf.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        drop(buf);
        // Continuation bytes at the start belong to a character whose first
        // byte was overwritten (at most three).
        let start = bytes
            .iter()
            .take(3)
            .take_while(|&&b| b & 0xC0 == 0x80)
            .count();
        let text = String::from_utf8_lossy(&bytes[start..]);
        let mut cut = text.len().saturating_sub(self.capacity);
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        text[cut..].to_owned()
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for TailPipe {
    async fn ready(&mut self) {}
}

impl OutputStream for TailPipe {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_PERMIT)
    }
}

impl tokio::io::AsyncWrite for TailPipe {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for TailPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for TailPipe {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_cut_on_a_character_boundary_within_the_capacity() {
        let pipe = TailPipe::new(4096);
        let emoji = "😀".repeat(2000); // 4 bytes each
        pipe.push(emoji.as_bytes());
        pipe.push(b"x"); // shifts the ring off the characters' boundaries
        let tail = pipe.contents();
        assert!(tail.len() <= 4096, "{}", tail.len());
        assert!(!tail.contains('\u{FFFD}'), "no stray replacement");
        assert!(tail.ends_with("😀x"));
        assert_eq!(tail.len(), 4093);
    }

    #[test]
    fn invalid_bytes_never_push_the_tail_over_the_capacity() {
        let pipe = TailPipe::new(16);
        pipe.push(&[0xff; 16]); // each becomes a 3-byte U+FFFD
        let tail = pipe.contents();
        assert!(tail.len() <= 16, "{}", tail.len());
        assert_eq!(tail, "\u{FFFD}".repeat(5));
    }

    #[test]
    fn keeps_the_most_recent_bytes() {
        let pipe = TailPipe::new(8);
        pipe.push(b"hello ");
        pipe.push(b"world!");
        assert_eq!(pipe.contents(), "o world!");
        pipe.push(b"0123456789abc");
        assert_eq!(pipe.contents(), "56789abc");
    }
}
