//! Bounded reads of what upstreams send: an HTTP answer, an SSE event and a stdio line each stop
//! at `server.max_upstream_message_bytes`, so one huge answer cannot take the gateway's memory.
//! A too-large message becomes a clear error for the call it answers; the connection survives
//! (stdio: the rest of the line is skipped) or, when the call cannot be told, restarts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The error text of a message over the limit.
pub fn too_large(max: usize) -> String {
    format!("the upstream's answer is larger than {max} bytes (server.max_upstream_message_bytes)")
}

/// An SSE byte stream that ends (and sets `over`) when one event grows past `max` bytes.
pub fn limit_events<S, E>(
    stream: S,
    max: usize,
    over: Arc<AtomicBool>,
) -> impl Stream<Item = Result<Bytes, E>>
where
    S: Stream<Item = Result<Bytes, E>>,
{
    // Bytes since the last blank line, and whether the last byte (ignoring CR) was a newline.
    stream.scan((0usize, false), move |(size, newline), item| {
        let item = match item {
            Ok(chunk) => {
                for &b in chunk.iter() {
                    match b {
                        b'\r' => {}
                        b'\n' if *newline => *size = 0,
                        b'\n' => *newline = true,
                        _ => {
                            *newline = false;
                            *size += 1;
                        }
                    }
                }
                if *size > max {
                    over.store(true, Ordering::Relaxed);
                    None
                } else {
                    Some(Ok(chunk))
                }
            }
            Err(e) => Some(Err(e)),
        };
        futures::future::ready(item)
    })
}

/// One line read by [`read_line`].
#[derive(Debug, PartialEq)]
pub enum Line {
    Text(Vec<u8>),
    /// Longer than the limit: the rest was skipped; its first and last bytes are kept (a
    /// JSON-RPC answer names its `id` at one end or the other).
    TooLong {
        head: Vec<u8>,
        tail: Vec<u8>,
    },
    End,
}

const KEEP: usize = 256;

/// Reads one newline-terminated line of at most `max` bytes.
pub async fn read_line<R: AsyncBufRead + Unpin>(r: &mut R, max: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut tail: Vec<u8> = Vec::new();
    let mut over = false;
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match (over, line.is_empty()) {
                (true, _) => Line::TooLong { head: line, tail },
                (false, true) => Line::End,
                (false, false) => Line::Text(line),
            });
        }
        let (part, done) = match memchr(buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if over {
            tail.extend_from_slice(part);
            let cut = tail.len().saturating_sub(KEEP);
            tail.drain(..cut);
        } else if line.len() + part.len() > max {
            over = true;
            line.truncate(KEEP.min(line.len()));
            let take = KEEP.saturating_sub(line.len()).min(part.len());
            line.extend_from_slice(&part[..take]);
            tail.extend_from_slice(&part[part.len().saturating_sub(KEEP)..]);
        } else {
            line.extend_from_slice(part);
        }
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        if done.is_some() {
            return Ok(if over {
                Line::TooLong { head: line, tail }
            } else {
                Line::Text(line)
            });
        }
    }
}

fn memchr(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

/// The request id an oversized JSON-RPC message names at either end (`"id":5`).
pub fn id_in(head: &[u8], tail: &[u8]) -> Option<i64> {
    for part in [head, tail] {
        let text = String::from_utf8_lossy(part);
        let mut rest = text.as_ref();
        while let Some(i) = rest.find("\"id\"") {
            rest = &rest[i + 4..];
            let after = rest.trim_start().strip_prefix(':').map(str::trim_start);
            if let Some(num) = after {
                let digits: String = num.chars().take_while(|c| c.is_ascii_digit()).collect();
                if let Ok(id) = digits.parse() {
                    return Some(id);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_bounded_and_the_stream_goes_on() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"{}\"}}\n",
            "x".repeat(5000)
        );
        let input = format!("short\n{big}after\n");
        let mut r = tokio::io::BufReader::with_capacity(64, input.as_bytes());
        assert_eq!(
            read_line(&mut r, 1000).await.unwrap(),
            Line::Text(b"short".to_vec())
        );
        match read_line(&mut r, 1000).await.unwrap() {
            Line::TooLong { head, tail } => {
                assert!(head.len() <= KEEP && tail.len() <= KEEP);
                assert_eq!(id_in(&head, &tail), Some(7));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            read_line(&mut r, 1000).await.unwrap(),
            Line::Text(b"after".to_vec())
        );
        assert_eq!(read_line(&mut r, 1000).await.unwrap(), Line::End);
    }

    #[test]
    fn ids_at_either_end() {
        assert_eq!(
            id_in(b"{\"result\":{", b"},\"jsonrpc\":\"2.0\",\"id\": 42}"),
            Some(42)
        );
        assert_eq!(id_in(b"{\"jsonrpc\":\"2.0\",\"id\":\"s\"", b""), None);
    }
}
