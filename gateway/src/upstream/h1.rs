//! HTTP/1 connections to plain `http://` upstreams, each driven by the task that uses it.
//!
//! hyper-util's pooled client ran every connection in a task of its own: a request went to
//! that task through a channel, and the answer came back through another, waking two tasks per
//! call, and the pool's checkout hashed the origin with SipHash every time (about 4% of the
//! gateway's instructions per call by callgrind, plus the wakeups). Here a caller takes an idle
//! connection (or opens one), writes its request and reads the answer on that connection
//! itself; the answer's body keeps driving the connection while it is read (an SSE answer can
//! stream for long) and hands it back to the pool once it has been read to the end. A request
//! that a reused connection could not even send (the upstream had closed it while idle) comes
//! back from hyper and goes once more on a new connection, as hyper-util's client retries it.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::FutureExt;
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// How long an idle connection is kept (as reqwest and hyper-util keep theirs).
const IDLE_FOR: Duration = Duration::from_secs(90);
/// Idle connections kept per origin: more than the concurrent calls of a busy gateway.
const MAX_IDLE: usize = 512;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

type Io = TokioIo<TcpStream>;

/// One connection: the handle requests go through, and the connection's own I/O.
struct Conn {
    send: http1::SendRequest<Full<Bytes>>,
    io: http1::Connection<Io, Full<Bytes>>,
    /// The worker thread that opened it ([`crate::workers::slot`]): its socket is registered
    /// with that thread's runtime, which is woken for its I/O, so it is reused there only.
    slot: usize,
}

impl Conn {
    /// Drives the connection's I/O once; `false` once it has ended (closed or failed), after
    /// which it must not be polled again.
    fn drive(&mut self, cx: &mut Context<'_>) -> bool {
        self.io.poll_unpin(cx).is_pending()
    }

    /// Whether it can take another request now (it is open and idle).
    fn ready(&mut self) -> bool {
        futures::future::poll_fn(|cx| {
            if !self.drive(cx) {
                return Poll::Ready(false);
            }
            self.send.poll_ready(cx).map(|r| r.is_ok())
        })
        .now_or_never()
        .unwrap_or(false)
    }
}

/// The connections to one origin.
pub struct Pool {
    /// `host:port`, as connected to and sent in `Host`.
    authority: String,
    host: http::HeaderValue,
    /// Idle connections by the worker that opened them ([`Conn::slot`]); in each, last in,
    /// first out: the most recently used connection is the likeliest to be open.
    idle: Mutex<Vec<Vec<(Conn, Instant)>>>,
}

/// The pools of every origin, so that all connections to one upstream share one.
#[derive(Default)]
pub struct Pools {
    by_origin: Mutex<HashMap<String, Arc<Pool>>>,
}

impl Pools {
    /// The pool of `uri`'s origin (`None` without a host).
    pub fn pool_for(&self, uri: &http::Uri) -> Option<Arc<Pool>> {
        let authority = uri.authority()?;
        let port = authority.port_u16().unwrap_or(80);
        let key = format!("{}:{port}", authority.host());
        let host = http::HeaderValue::from_str(authority.as_str()).ok()?;
        let mut map = self.by_origin.lock().unwrap();
        Some(
            map.entry(key.clone())
                .or_insert_with(|| {
                    Arc::new(Pool {
                        authority: key,
                        host,
                        idle: Mutex::default(),
                    })
                })
                .clone(),
        )
    }
}

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The connection could not be made.
    #[error("{0}")]
    Connect(String),
    /// The connection failed while the request was sent or answered.
    #[error("{0}")]
    Request(#[source] hyper::Error),
}

impl Pool {
    fn take_idle(&self) -> Option<Conn> {
        let slot = crate::workers::slot();
        loop {
            let (mut conn, since) = self.idle.lock().unwrap().get_mut(slot)?.pop()?;
            if since.elapsed() < IDLE_FOR && conn.ready() {
                return Some(conn);
            }
        }
    }

    fn put_back(&self, mut conn: Conn) {
        if !conn.ready() {
            return;
        }
        let mut slots = self.idle.lock().unwrap();
        if slots.len() <= conn.slot {
            slots.resize_with(conn.slot + 1, Vec::new);
        }
        let idle = &mut slots[conn.slot];
        // The oldest are first: drop those idle too long, and the surplus.
        let stale = idle
            .iter()
            .take_while(|(_, since)| since.elapsed() >= IDLE_FOR)
            .count()
            .max((idle.len() + 1).saturating_sub(MAX_IDLE));
        idle.drain(..stale);
        idle.push((conn, Instant::now()));
    }

    async fn connect(&self) -> Result<Conn, Error> {
        let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&self.authority))
            .await
            .map_err(|_| Error::Connect(format!("connect to {} timed out", self.authority)))?
            .map_err(|e| Error::Connect(format!("tcp connect error: {e}")))?;
        let _ = stream.set_nodelay(true);
        let (send, io) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(Error::Request)?;
        Ok(Conn {
            send,
            io,
            slot: crate::workers::slot(),
        })
    }

    /// Sends `req` (origin-form URI) and waits for the answer's head; its body drives the
    /// connection from then on.
    pub async fn send(
        self: &Arc<Self>,
        mut req: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<Driven>, Error> {
        req.headers_mut()
            .insert(http::header::HOST, self.host.clone());
        if let Some(conn) = self.take_idle() {
            match self.exchange(conn, req).await {
                Ok(resp) => return Ok(resp),
                // hyper hands the request back when the connection ended before it was
                // written (the upstream had closed it while idle): once more on a new one. It
                // was not sent, so it cannot run twice.
                Err(mut e) => match e.take_message() {
                    Some(unsent) => req = unsent,
                    None => return Err(Error::Request(e.into_error())),
                },
            }
        }
        let conn = self.connect().await?;
        self.exchange(conn, req)
            .await
            .map_err(|e| Error::Request(e.into_error()))
    }

    async fn exchange(
        self: &Arc<Self>,
        mut conn: Conn,
        req: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<Driven>, Unsent> {
        let mut open = true;
        let resp = {
            let Conn { send, io, .. } = &mut conn;
            // Queued here; the connection writes it when driven.
            let mut answer = std::pin::pin!(send.try_send_request(req));
            futures::future::poll_fn(|cx| {
                // The connection first: it writes the request and reads the answer, which the
                // answer's future then holds. Once the connection has ended, the answer
                // resolves with its error.
                if open && io.poll_unpin(cx).is_ready() {
                    open = false;
                }
                answer.as_mut().poll(cx)
            })
            .await?
        };
        let (parts, body) = resp.into_parts();
        Ok(http::Response::from_parts(
            parts,
            Driven {
                body,
                conn: open.then_some(conn),
                pool: self.clone(),
            },
        ))
    }
}

/// A failed exchange, with the request when it was never written.
type Unsent = hyper::client::conn::TrySendError<http::Request<Full<Bytes>>>;

/// An answer's body that drives its connection while it is read, and returns the connection
/// to its pool at the end. Dropped before the end, it closes the connection.
pub struct Driven {
    body: Incoming,
    conn: Option<Conn>,
    pool: Arc<Pool>,
}

impl std::fmt::Debug for Driven {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driven")
            .field("body", &self.body)
            .field("connection", &self.conn.is_some())
            .finish()
    }
}

impl Driven {
    fn finish(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.put_back(conn);
        }
    }
}

impl Body for Driven {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = &mut *self;
        if let Some(conn) = &mut this.conn {
            if !conn.drive(cx) {
                this.conn = None;
            }
        }
        let frame = Pin::new(&mut this.body).poll_frame(cx);
        match &frame {
            // A connection that failed mid-answer is not reused.
            Poll::Ready(Some(Err(_))) => this.conn = None,
            Poll::Ready(None) => this.finish(),
            Poll::Ready(Some(Ok(_))) if this.body.is_end_stream() => this.finish(),
            _ => {}
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use http_body_util::BodyExt;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A local HTTP/1 server that counts the connections it accepted. `/close` answers and
    /// closes its connection; `/stream` answers in three chunks, 20 ms apart.
    async fn server() -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let svc =
                        hyper::service::service_fn(|req: http::Request<Incoming>| async move {
                            let path = req.uri().path().to_string();
                            let body = req.into_body().collect().await?.to_bytes();
                            let resp = match path.as_str() {
                                "/stream" => {
                                    let chunks = futures::stream::iter(0..3).then(|i| async move {
                                        tokio::time::sleep(Duration::from_millis(20)).await;
                                        Ok::<_, hyper::Error>(Frame::data(Bytes::from(format!(
                                            "{i};"
                                        ))))
                                    });
                                    http::Response::new(http_body_util::Either::Left(
                                        http_body_util::StreamBody::new(chunks),
                                    ))
                                }
                                _ => {
                                    let mut r = http::Response::new(http_body_util::Either::Right(
                                        Full::new(body),
                                    ));
                                    if path == "/close" {
                                        r.headers_mut()
                                            .insert("connection", "close".parse().unwrap());
                                    }
                                    r
                                }
                            };
                            Ok::<_, hyper::Error>(resp)
                        });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        (format!("http://{addr}"), accepted)
    }

    fn request(path: &str, body: &str) -> http::Request<Full<Bytes>> {
        let mut r = http::Request::new(Full::new(Bytes::from(body.to_string())));
        *r.method_mut() = http::Method::POST;
        *r.uri_mut() = path.parse().unwrap();
        r
    }

    async fn text(pool: &Arc<Pool>, path: &str, body: &str) -> String {
        let resp = pool.send(request(path, body)).await.unwrap();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn answers_read_to_the_end_give_their_connection_back() {
        let (url, accepted) = server().await;
        let pool = Pools::default().pool_for(&url.parse().unwrap()).unwrap();
        for i in 0..5 {
            assert_eq!(
                text(&pool, "/echo", &format!("call {i}")).await,
                format!("call {i}")
            );
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "one connection, reused");
        // Two at once need two connections; both are kept afterwards.
        let (a, b) = tokio::join!(text(&pool, "/stream", ""), text(&pool, "/echo", "b"));
        assert_eq!((a.as_str(), b.as_str()), ("0;1;2;", "b"));
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
        assert_eq!(pool.idle.lock().unwrap()[0].len(), 2);
    }

    /// A connection's socket belongs to the runtime of the worker that opened it: another
    /// worker opens its own instead of taking it, and the opener reuses it.
    #[tokio::test]
    async fn each_worker_reuses_only_the_connections_it_opened() {
        let (url, accepted) = server().await;
        let pool = Pools::default().pool_for(&url.parse().unwrap()).unwrap();
        let workers = crate::workers::Workers::start(2).unwrap();
        let (first, second) = (workers.next().clone(), workers.next().clone());
        for (worker, expected) in [(&first, 1), (&second, 2), (&first, 2), (&second, 2)] {
            let pool = pool.clone();
            let answer = worker
                .spawn(async move { text(&pool, "/echo", "hi").await })
                .await
                .unwrap();
            assert_eq!(answer, "hi");
            assert_eq!(accepted.load(Ordering::SeqCst), expected);
        }
        let idle = pool.idle.lock().unwrap();
        assert_eq!(idle.iter().map(Vec::len).collect::<Vec<_>>(), [0, 1, 1]);
    }

    #[tokio::test]
    async fn closed_and_abandoned_connections_are_not_reused() {
        let (url, accepted) = server().await;
        let pool = Pools::default().pool_for(&url.parse().unwrap()).unwrap();
        // The upstream closes this one after answering: the next call opens a new one.
        assert_eq!(text(&pool, "/close", "x").await, "x");
        assert_eq!(text(&pool, "/echo", "y").await, "y");
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
        // An answer dropped before its end takes its connection with it.
        let resp = pool.send(request("/stream", "")).await.unwrap();
        let mut body = resp.into_body();
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(first, "0;");
        drop(body);
        assert_eq!(text(&pool, "/echo", "z").await, "z");
        assert_eq!(accepted.load(Ordering::SeqCst), 3);
    }

    /// An upstream that answers with keep-alive and then closes the connection anyway: the
    /// next call finds the connection closed when it checks it before reuse, and goes out on a
    /// new one. The name says what is tested: the request hyper hands back unsent when the
    /// close lands between that check and the write is a race this test does not provoke.
    #[tokio::test]
    async fn a_connection_closed_without_notice_is_replaced_once_seen_closed_before_reuse() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                // The request's head and its two-byte body, then one answer and a close.
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") || !buf.ends_with(b"{}") {
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let _ = s
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                    .await;
            }
        });
        let pool = Pools::default().pool_for(&url.parse().unwrap()).unwrap();
        for _ in 0..20 {
            assert_eq!(text(&pool, "/mcp", "{}").await, "ok");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 20);
    }

    #[tokio::test]
    async fn a_refused_connection_is_a_connect_error() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let url: http::Uri = format!("http://127.0.0.1:{port}/mcp").parse().unwrap();
        let pool = Pools::default().pool_for(&url).unwrap();
        match pool.send(request("/mcp", "{}")).await {
            Err(Error::Connect(m)) => assert!(m.contains("refused"), "{m}"),
            other => panic!("expected a connect error, got {other:?}"),
        }
    }
}
