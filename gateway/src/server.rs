//! The HTTP/1 server under the router: an accept loop with a connection cap that hands each
//! connection to a worker thread ([`crate::workers`]), hyper's header-read timeout (which also
//! closes idle keep-alive connections) and graceful shutdown. axum's own
//! `serve` sets no timer, so a client that sends half a request keeps its socket forever; enough
//! of them exhaust the file descriptors and the gateway stops answering anyone.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::response::Response;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::{Service, ServiceExt};

use crate::workers::Workers;

/// Connection limits and timeouts (`[server]` in the config).
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Open client connections at most; past it, new ones wait in the kernel's backlog.
    pub max_connections: usize,
    /// A request's headers must arrive within this, counted from the connection's start or the
    /// end of the previous response: an idle keep-alive connection is closed after it too.
    pub header_read_timeout: Duration,
}

/// Raises the open-file limit to its hard maximum, and returns the limit now in force: the
/// connection cap must stay below it, with room for upstreams, the database and files.
pub fn raise_fd_limit() -> Option<u64> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        return Some(hard);
    }
    Some(soft)
}

/// File descriptors kept free of client connections.
const FD_RESERVE: u64 = 256;

/// The connection cap that fits the open-file limit.
pub fn effective_cap(configured: usize, fd_limit: Option<u64>) -> usize {
    match fd_limit {
        Some(limit) if (configured as u64) + FD_RESERVE > limit => {
            let cap = limit.saturating_sub(FD_RESERVE).max(16) as usize;
            tracing::warn!(
                configured,
                fd_limit = limit,
                cap,
                "server.max_connections lowered to fit the open-file limit"
            );
            cap
        }
        _ => configured,
    }
}

/// Serves `app` on `listener` until `shutdown` resolves; then stops accepting and waits for the
/// open connections (the caller bounds that wait).
pub async fn serve<S>(
    listener: TcpListener,
    workers: &Workers,
    app: S,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()>,
) where
    S: Service<axum::extract::Request, Response = Response, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    tokio::pin!(shutdown);
    let mut backoff =
        registry::backoff::Backoff::new(Duration::from_millis(10), Duration::from_secs(1));
    loop {
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => p.expect("the semaphore is never closed"),
            _ = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    // Out of file descriptors (EMFILE/ENFILE) or memory: wait for some to be
                    // released instead of spinning on the same error.
                    let delay = backoff.next_delay();
                    tracing::error!(error = %e, retry_in = ?delay, "accept failed");
                    tokio::time::sleep(delay).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        backoff.reset();
        // Small SSE writes must not wait for the peer's delayed ACK (Nagle): +40 ms per call.
        let _ = stream.set_nodelay(true);
        let svc = app
            .clone()
            .map_request(move |req: hyper::Request<Incoming>| {
                let mut req = req.map(Body::new);
                req.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
                req
            });
        // Its socket moves to the worker's own runtime: left registered with this one, every
        // read and write would be signalled through this thread.
        let stream = match stream.into_std() {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, %peer, "connection dropped: not handed to a worker");
                continue;
            }
        };
        let http = http.clone();
        let watcher = graceful.watcher();
        workers.next().spawn(async move {
            let stream = match tokio::net::TcpStream::from_std(stream) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, %peer, "connection dropped: not registered");
                    return;
                }
            };
            let conn = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc));
            let conn = watcher.watch(conn);
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, %peer, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(
        e.kind(),
        K::ConnectionRefused | K::ConnectionAborted | K::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_fits_the_fd_limit() {
        assert_eq!(effective_cap(10_000, Some(1_048_576)), 10_000);
        assert_eq!(effective_cap(10_000, Some(1024)), 768);
        assert_eq!(effective_cap(100, None), 100);
    }
}
