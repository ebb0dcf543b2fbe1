//! What a stdio server may write: its standard output read through a guard that ends the
//! stream at the first message Runlet could never read — longer than the transport takes
//! ([`MOST_MESSAGE_BYTES`]) or nested deeper than its JSON parser goes ([`MOST_NESTING`]) — and
//! keeps why. The transport would drop such a message and leave the request it answers waiting
//! for ever; with the stream ended, every call waiting on the server fails at once and says why.
//!
//! The guard only counts: bytes since the last newline, and the brackets open outside strings.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use parking_lot::Mutex;
use tokio::io::{AsyncRead, ReadBuf};

/// The longest message (one line, its newline included) the transport reads; a longer one is
/// dropped by it, so the guard ends the stream there.
pub(crate) const MOST_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// Arrays and objects nested in one message: the JSON parser behind the transport refuses a
/// 128th level and the message with it.
pub(crate) const MOST_NESTING: u32 = 127;

/// Why a server's stream was ended, once it was: shared with the session, which reports it.
pub(crate) type Violation = Arc<Mutex<Option<String>>>;

/// A server's standard output, read through the guard.
pub(crate) struct Guarded<R> {
    inner: R,
    scan: Scan,
    violation: Violation,
    /// Set once a message was refused: the stream ends with it at the next read.
    ended: Option<String>,
}

impl<R> Guarded<R> {
    pub(crate) fn new(inner: R, violation: Violation) -> Guarded<R> {
        Guarded { inner, scan: Scan::default(), violation, ended: None }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Guarded<R> {
    /// Reads on; the whole messages before a refused one are still handed over, and the read
    /// after them ends the stream.
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(why) = &this.ended {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, why.clone())));
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => match this.scan.bytes(&buf.filled()[before..]) {
                Ok(()) => Poll::Ready(Ok(())),
                Err(Refused { why, whole }) => {
                    this.violation.lock().get_or_insert_with(|| why.clone());
                    buf.set_filled(before + whole);
                    let error = io::Error::new(io::ErrorKind::InvalidData, why.clone());
                    this.ended = Some(why);
                    Poll::Ready(if whole == 0 { Err(error) } else { Ok(()) })
                }
            },
            other => other,
        }
    }
}

/// A message the guard refused: why, and how many bytes of the chunk read before it were whole
/// messages.
#[derive(Debug, PartialEq, Eq)]
struct Refused {
    why: String,
    whole: usize,
}

/// Where the guard is in the current message.
#[derive(Debug, Default)]
struct Scan {
    line_bytes: usize,
    depth: u32,
    in_string: bool,
    escaped: bool,
}

impl Scan {
    /// Reads on through `bytes`, a chunk of the stream; the message in it that cannot be read,
    /// if one cannot.
    fn bytes(&mut self, bytes: &[u8]) -> Result<(), Refused> {
        let mut whole = 0;
        for (at, &byte) in bytes.iter().enumerate() {
            self.line_bytes += 1;
            if self.line_bytes > MOST_MESSAGE_BYTES {
                let why = format!("it sent a message longer than {} MiB", MOST_MESSAGE_BYTES >> 20);
                return Err(Refused { why, whole });
            }
            match (byte, self.in_string) {
                (b'\n', _) => {
                    *self = Scan::default();
                    whole = at + 1;
                }
                (_, true) if self.escaped => self.escaped = false,
                (b'\\', true) => self.escaped = true,
                (b'"', in_string) => self.in_string = !in_string,
                (b'[' | b'{', false) => {
                    self.depth += 1;
                    if self.depth > MOST_NESTING {
                        let why = format!("it sent a message nested deeper than {MOST_NESTING} levels");
                        return Err(Refused { why, whole });
                    }
                }
                (b']' | b'}', false) => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanned(parts: &[&[u8]]) -> Result<(), String> {
        let mut scan = Scan::default();
        parts.iter().try_for_each(|part| scan.bytes(part)).map_err(|refused| refused.why)
    }

    /// The whole messages before a refused one in the same chunk are handed over; the next read
    /// ends the stream.
    #[tokio::test]
    async fn the_messages_before_a_refused_one_still_arrive() {
        use tokio::io::AsyncReadExt;
        let chunk = format!("{{\"id\": 1}}\n{}\n", "[".repeat(200));
        let violation = Violation::default();
        let mut guarded = Guarded::new(chunk.as_bytes(), Arc::clone(&violation));
        let mut read = vec![0; 4096];
        let first = guarded.read(&mut read).await.expect("the whole message before");
        assert_eq!(&read[..first], b"{\"id\": 1}\n");
        let ended = guarded.read(&mut read).await.expect_err("then the stream ends");
        assert!(ended.to_string().contains("deeper than 127"), "{ended}");
        assert!(violation.lock().as_deref().is_some_and(|why| why.contains("deeper than 127")));
    }

    #[test]
    fn nesting_is_counted_outside_strings_and_per_message() {
        let deep = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        assert_eq!(scanned(&[deep(127).as_bytes()]), Ok(()));
        assert!(scanned(&[deep(128).as_bytes()]).expect_err("too deep").contains("deeper than 127"));
        let quoted = format!("{{\"a\": \"{}\\\"{}\"}}", "[".repeat(500), "{".repeat(500));
        assert_eq!(scanned(&[quoted.as_bytes()]), Ok(()), "brackets in strings, an escaped quote");
        let lines = format!("{}\n{}", deep(100), deep(100));
        assert_eq!(scanned(&[lines.as_bytes()]), Ok(()), "each message counts from zero");
        let split = deep(128);
        let (first, second) = split.as_bytes().split_at(64);
        assert!(scanned(&[first, second]).is_err(), "a message read in pieces is one message");
    }

    #[test]
    fn a_message_longer_than_the_transport_takes_ends_the_stream() {
        let line = vec![b'x'; MOST_MESSAGE_BYTES];
        assert_eq!(scanned(&[&line[..MOST_MESSAGE_BYTES - 1], b"\n", b"{}\n"]), Ok(()));
        assert!(scanned(&[&line, b"x"]).expect_err("too long").contains("longer than 16 MiB"));
    }
}
