//! An upstream answer's body that, dropped before its end, is read to the end in passing.
//!
//! The gateway stops reading an SSE answer as soon as the call's answer is in it, and the
//! upstream ends the stream right after (server-everything and the TypeScript SDK's servers
//! send the end a moment later). An HTTP/1 body dropped before its end takes its connection
//! with it: nobody can tell where the next answer would start. That was a new TCP connection
//! per call, and over `https://` a new TLS session too (docs/benchmarks.md, "SSE answers on kept connections").
//! So the rest is read: at once when it is already in, else in a task of its own for at most
//! [`DRAIN_FOR`] and [`DRAIN_BYTES`]; at its end the connection goes back to its pool (hyper's,
//! or [`super::h1`]'s). A body that does not end by then is dropped, closing its connection.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

/// How long, and how much, the rest of a dropped answer is read.
pub const DRAIN_FOR: Duration = Duration::from_millis(500);
pub const DRAIN_BYTES: usize = 64 * 1024;

pub struct Drained<B: Body<Data = Bytes> + Send + Unpin + 'static> {
    /// `None` only once `Drop` has taken it.
    body: Option<B>,
    /// It gave its end (or an error): it must not be read again.
    done: bool,
}

impl<B: Body<Data = Bytes> + Send + Unpin + std::fmt::Debug + 'static> std::fmt::Debug
    for Drained<B>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Drained").field(&self.body).finish()
    }
}

impl<B: Body<Data = Bytes> + Send + Unpin + 'static> Drained<B> {
    pub fn new(body: B) -> Self {
        Self {
            body: Some(body),
            done: false,
        }
    }
}

impl<B: Body<Data = Bytes> + Send + Unpin + 'static> Body for Drained<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let Some(b) = self.body.as_mut() else {
            return Poll::Ready(None);
        };
        let frame = Pin::new(b).poll_frame(cx);
        if matches!(frame, Poll::Ready(None | Some(Err(_)))) {
            self.done = true;
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.as_ref().is_none_or(B::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.body.as_ref().map(B::size_hint).unwrap_or_default()
    }
}

impl<B: Body<Data = Bytes> + Send + Unpin + 'static> Drop for Drained<B> {
    fn drop(&mut self) {
        let Some(mut body) = self
            .body
            .take()
            .filter(|b| !self.done && !b.is_end_stream())
        else {
            return;
        };
        // The end is often in already: then no task is needed.
        let mut cx = Context::from_waker(std::task::Waker::noop());
        for _ in 0..4 {
            match Pin::new(&mut body).poll_frame(&mut cx) {
                Poll::Ready(Some(Ok(_))) if !body.is_end_stream() => {}
                Poll::Pending => break,
                // At its end, or failed.
                _ => return,
            }
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(drain(body));
        }
    }
}

/// Reads `body` to its end, within [`DRAIN_FOR`] and [`DRAIN_BYTES`].
async fn drain<B: Body<Data = Bytes> + Unpin>(mut body: B) {
    use http_body_util::BodyExt;
    let _ = tokio::time::timeout(DRAIN_FOR, async {
        let mut left = DRAIN_BYTES;
        while let Some(Ok(frame)) = body.frame().await {
            let n = frame.data_ref().map_or(0, Bytes::len);
            if n > left {
                return;
            }
            left -= n;
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, StreamBody};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// A body of `n` chunks, `gap` apart, that says when its end was read and when it was
    /// dropped.
    fn chunks(
        n: u64,
        gap: Duration,
        ended: Arc<AtomicBool>,
        dropped: Arc<AtomicBool>,
    ) -> impl Body<Data = Bytes, Error = std::convert::Infallible> + Send + Unpin + 'static {
        struct OnDrop(Arc<AtomicBool>);
        impl Drop for OnDrop {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let guard = OnDrop(dropped);
        let frames = futures::stream::unfold(0u64, move |i| {
            let ended = ended.clone();
            let _keep = &guard;
            async move {
                if i == n {
                    ended.store(true, Ordering::SeqCst);
                    return None;
                }
                if i > 0 {
                    tokio::time::sleep(gap).await;
                }
                Some((Ok(Frame::data(Bytes::from(format!("{i};")))), i + 1))
            }
        });
        StreamBody::new(Box::pin(frames))
    }

    #[tokio::test]
    async fn the_rest_of_a_dropped_answer_is_read_to_its_end() {
        let (ended, dropped) = (Arc::default(), Arc::default());
        let mut body = Drained::new(chunks(
            3,
            Duration::from_millis(20),
            Arc::clone(&ended),
            Arc::clone(&dropped),
        ));
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(first, "0;");
        drop(body);
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(
            ended.load(Ordering::SeqCst),
            "read to the end after the drop"
        );
        assert!(dropped.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn an_answer_that_does_not_end_is_given_up() {
        let (ended, dropped) = (Arc::<AtomicBool>::default(), Arc::<AtomicBool>::default());
        let mut body = Drained::new(chunks(
            u64::MAX,
            Duration::from_millis(50),
            ended.clone(),
            dropped.clone(),
        ));
        body.frame().await.unwrap().unwrap();
        drop(body);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!dropped.load(Ordering::SeqCst), "still being read");
        tokio::time::sleep(DRAIN_FOR).await;
        assert!(
            dropped.load(Ordering::SeqCst),
            "dropped once DRAIN_FOR passed"
        );
        assert!(!ended.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn a_body_read_to_its_end_needs_no_drain() {
        let (ended, dropped) = (Arc::default(), Arc::default());
        let body = Drained::new(chunks(
            2,
            Duration::ZERO,
            Arc::clone(&ended),
            Arc::clone(&dropped),
        ));
        assert_eq!(body.collect().await.unwrap().to_bytes(), "0;1;");
        assert!(ended.load(Ordering::SeqCst) && dropped.load(Ordering::SeqCst));
    }
}
