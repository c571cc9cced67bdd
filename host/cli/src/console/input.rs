//! The lines of a piped console session (input not a terminal), read on
//! their own thread: a line that is not UTF-8, or longer than
//! [`MAX_LINE_BYTES`], is refused alone and the session goes on.

use std::io::{self, BufRead};
use std::sync::mpsc::{Receiver, sync_channel};

/// Longest line accepted, in bytes.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;

/// One read from the input.
#[derive(Debug)]
pub enum Input {
    /// A line, without its `\n` or `\r\n`.
    Line(String),
    /// A line that is not valid UTF-8 (skipped).
    NotUtf8,
    /// A line longer than [`MAX_LINE_BYTES`] (skipped).
    TooLong,
    /// The input ended.
    Eof,
    /// The input could not be read.
    Failed(io::Error),
}

/// At most `limit` more bytes of `reader`.
fn limited<R: BufRead>(reader: &mut R, limit: u64) -> io::Take<&mut R> {
    io::Read::take(reader, limit)
}

/// Reads the next line of `reader`.
pub fn read_line<R: BufRead>(reader: &mut R) -> Input {
    let mut buf = Vec::new();
    let limit = MAX_LINE_BYTES as u64 + 1;
    match limited(reader, limit).read_until(b'\n', &mut buf) {
        Err(e) => return Input::Failed(e),
        Ok(0) => return Input::Eof,
        Ok(_) => {}
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    } else if buf.len() > MAX_LINE_BYTES {
        // Skip to the end of this line.
        loop {
            let mut rest = Vec::new();
            match limited(reader, limit).read_until(b'\n', &mut rest) {
                Err(e) => return Input::Failed(e),
                Ok(0) => break,
                Ok(_) if rest.last() == Some(&b'\n') => break,
                Ok(_) => {}
            }
        }
        return Input::TooLong;
    }
    match String::from_utf8(buf) {
        Ok(line) => Input::Line(line),
        Err(_) => Input::NotUtf8,
    }
}

/// Reads `reader` on a thread, a few lines ahead; the channel ends after
/// [`Input::Eof`] or [`Input::Failed`].
pub fn spawn_reader(mut reader: impl BufRead + Send + 'static) -> Receiver<Input> {
    let (tx, rx) = sync_channel(16);
    std::thread::spawn(move || {
        loop {
            let input = read_line(&mut reader);
            let last = matches!(input, Input::Eof | Input::Failed(_));
            if tx.send(input).is_err() || last {
                break;
            }
        }
    });
    rx
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn lines(bytes: &[u8]) -> Vec<String> {
        let mut reader = io::Cursor::new(bytes.to_vec());
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader) {
                Input::Line(l) => out.push(format!("line {l}")),
                Input::NotUtf8 => out.push("not utf-8".into()),
                Input::TooLong => out.push("too long".into()),
                Input::Eof => return out,
                Input::Failed(e) => panic!("{e}"),
            }
        }
    }

    #[test]
    fn a_bad_line_is_refused_alone() {
        assert_eq!(
            lines(b"first\n\xff\xfe bad\r\nthird\r\nlast"),
            ["line first", "not utf-8", "line third", "line last"]
        );
    }

    #[test]
    fn an_overlong_line_is_skipped_whole() {
        let mut input = b"a\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 3 * MAX_LINE_BYTES));
        input.extend(b"\nb\n");
        assert_eq!(lines(&input), ["line a", "too long", "line b"]);
        let exact = vec![b'y'; MAX_LINE_BYTES];
        assert_eq!(
            lines(&exact),
            [format!("line {}", "y".repeat(MAX_LINE_BYTES))]
        );
    }
}
