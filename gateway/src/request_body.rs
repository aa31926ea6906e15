//! How request bodies are read: a read timeout armed only when a body stalls, and an answer
//! that leaves before its request's body was read told to close the connection.
//!
//! *The timeout.* tower-http's `RequestBodyTimeout` starts a timer at the first read of every
//! body, and the timer wheel's insert and removal (under the driver's lock) were ~1.5% of a
//! call's instructions (callgrind), though nearly every body has already arrived with its
//! headers. Here a read that finds data ready costs no timer; a read that would wait starts one,
//! and a frame that arrives stops it: the same limit on the time between two pieces of a body.
//!
//! *The unread body.* An answer given on the headers alone (the 401 an OAuth host gets first,
//! a 413, a refused origin) leaves the body in the socket. hyper then drains what has arrived
//! and, if the body is still coming, closes the connection once the answer is out; but the
//! answer's head is already written and says nothing of it. A client that pools connections
//! (httpx, undici) sends its next request on that socket and gets "Server disconnected without
//! sending a response". Such an answer now says `Connection: close`, which hyper honours too.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use http::header::{HeaderValue, CONNECTION, CONTENT_LENGTH, TRANSFER_ENCODING};
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::time::Sleep;
use tower::{Layer, Service};

/// `body`, failing once it has sent nothing for `limit`; `read` is set once it has been read to
/// its end.
fn timed(body: Body, limit: Duration, read: Option<Arc<AtomicBool>>) -> Body {
    Body::new(Timed {
        inner: body,
        limit,
        timer: None,
        read,
    })
}

struct Timed {
    inner: Body,
    limit: Duration,
    /// Running while a read waits.
    timer: Option<Pin<Box<Sleep>>>,
    /// Set once the body has been read to its end.
    read: Option<Arc<AtomicBool>>,
}

impl Timed {
    fn mark_read(&self) {
        if let Some(read) = &self.read {
            read.store(true, Ordering::Release);
        }
    }
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
            if frame.is_none() || this.inner.is_end_stream() {
                this.mark_read();
            }
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

/// Wraps each request's body in the read timeout, and adds `Connection: close` to an answer
/// that leaves before its request's body was read to its end.
#[derive(Clone, Copy)]
pub struct RequestBodyLayer {
    read_timeout: Duration,
}

impl RequestBodyLayer {
    /// Bodies that send nothing for `read_timeout` fail.
    pub fn new(read_timeout: Duration) -> Self {
        Self { read_timeout }
    }
}

impl<S> Layer<S> for RequestBodyLayer {
    type Service = RequestBodyService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestBodyService {
            inner,
            read_timeout: self.read_timeout,
        }
    }
}

/// The service of [`RequestBodyLayer`].
#[derive(Clone)]
pub struct RequestBodyService<S> {
    inner: S,
    read_timeout: Duration,
}

impl<S> Service<Request> for RequestBodyService<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Answered<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        // A request without a body (most GETs) has nothing left to read: no flag to share.
        let read = has_body(&req).then(|| Arc::new(AtomicBool::new(false)));
        let req = req.map(|body| timed(body, self.read_timeout, read.clone()));
        Answered {
            inner: self.inner.call(req),
            read,
        }
    }
}

/// Whether the request says a body follows.
fn has_body(req: &Request) -> bool {
    let headers = req.headers();
    headers.contains_key(TRANSFER_ENCODING)
        || headers
            .get(CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0")
}

pin_project_lite::pin_project! {
    /// The answer of [`RequestBodyService`].
    pub struct Answered<F> {
        #[pin]
        inner: F,
        read: Option<Arc<AtomicBool>>,
    }
}

impl<F, E> Future for Answered<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut response = std::task::ready!(this.inner.poll(cx))?;
        if this
            .read
            .as_ref()
            .is_some_and(|read| !read.load(Ordering::Acquire))
        {
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
        }
        Poll::Ready(Ok(response))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn a_body_at_hand_is_read_and_a_stalled_one_times_out() {
        let whole = timed(Body::from("{}"), Duration::from_millis(50), None);
        assert_eq!(whole.collect().await.unwrap().to_bytes(), "{}");

        // Two pieces 20 ms apart pass a 50 ms limit (it is per wait, not for the whole body);
        // then nothing more comes.
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(4);
        let stream =
            http_body_util::StreamBody::new(tokio_stream::wrappers::ReceiverStream::new(rx));
        let mut body = timed(Body::new(stream), Duration::from_millis(50), None);
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

    /// An answer that left the body unread says the connection closes; one that read it, or a
    /// request without a body, does not.
    #[tokio::test]
    async fn an_answer_before_the_body_was_read_says_close() {
        use tower::ServiceExt;
        let reads = tower::service_fn(|req: Request| async move {
            let _ = req.into_body().collect().await;
            Ok::<_, std::convert::Infallible>(Response::new(Body::empty()))
        });
        let refuses = tower::service_fn(|_req: Request| async move {
            Ok::<_, std::convert::Infallible>(Response::new(Body::empty()))
        });
        let layer = RequestBodyLayer::new(Duration::from_secs(5));
        let post = || {
            http::Request::post("/mcp")
                .header(CONTENT_LENGTH, "2")
                .body(Body::from("{}"))
                .unwrap()
        };
        let get = || http::Request::get("/healthz").body(Body::empty()).unwrap();
        let close = |r: &Response| r.headers().get(CONNECTION).cloned();

        let r = layer.layer(refuses).oneshot(post()).await.unwrap();
        assert_eq!(close(&r), Some(HeaderValue::from_static("close")));
        let r = layer.layer(reads).oneshot(post()).await.unwrap();
        assert_eq!(close(&r), None);
        let r = layer.layer(refuses).oneshot(get()).await.unwrap();
        assert_eq!(close(&r), None);
    }
}
