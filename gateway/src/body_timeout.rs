//! The request body's read timeout, armed only when the body stalls. tower-http's
//! `RequestBodyTimeout` starts a timer at the first read of every body, and the timer wheel's
//! insert and removal (under the driver's lock) were ~1.5% of a call's instructions (callgrind),
//! though nearly every body has already arrived with its headers. Here a read that finds data
//! ready costs no timer; a read that would wait starts one, and a frame that arrives stops it:
//! the same limit on the time between two pieces of a body.

use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::time::Sleep;

/// `body`, failing once it has sent nothing for `limit`.
pub fn with_read_timeout(body: Body, limit: Duration) -> Body {
    Body::new(Timed {
        inner: body,
        limit,
        timer: None,
    })
}

struct Timed {
    inner: Body,
    limit: Duration,
    /// Running while a read waits.
    timer: Option<Pin<Box<Sleep>>>,
}

/// The body did not arrive in time.
#[derive(Debug)]
pub struct BodyTimedOut;

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("request body read timed out (server.body_read_timeout_secs)")
    }
}

impl std::error::Error for BodyTimedOut {}

impl HttpBody for Timed {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            this.timer = None;
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let limit = this.limit;
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(BodyTimedOut.into()))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn a_body_at_hand_is_read_and_a_stalled_one_times_out() {
        let whole = with_read_timeout(Body::from("{}"), Duration::from_millis(50));
        assert_eq!(whole.collect().await.unwrap().to_bytes(), "{}");

        // Two pieces 20 ms apart pass a 50 ms limit (it is per wait, not for the whole body);
        // then nothing more comes.
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(4);
        let stream =
            http_body_util::StreamBody::new(tokio_stream::wrappers::ReceiverStream::new(rx));
        let mut body = with_read_timeout(Body::new(stream), Duration::from_millis(50));
        tokio::spawn(async move {
            for piece in ["{\"a\"", ":1"] {
                tokio::time::sleep(Duration::from_millis(20)).await;
                tx.send(Ok(Frame::data(Bytes::from(piece)))).await.unwrap();
            }
            tokio::time::sleep(Duration::from_secs(5)).await;
            drop(tx);
        });
        let mut got = Vec::new();
        let started = std::time::Instant::now();
        let err = loop {
            match body.frame().await {
                Some(Ok(f)) => got.extend_from_slice(&f.into_data().unwrap()),
                Some(Err(e)) => break e,
                None => panic!("the body ended instead of timing out"),
            }
        };
        assert_eq!(got, b"{\"a\":1");
        assert!(err.to_string().contains("timed out"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
