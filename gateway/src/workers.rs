//! The threads that serve client connections: each runs a single-threaded tokio runtime of its
//! own, and a connection stays on the thread it was given for its whole life, with everything
//! its requests do (the upstream call, the reply, the audit entry's hand-off).
//!
//! tokio's work-stealing runtime moved a call's tasks between its two workers: the other worker
//! was woken to steal (an inter-processor interrupt and a context switch), the task's memory
//! went cold in the other core's cache, and memory freed on the other thread went through
//! mimalloc's cross-thread free list. One thread per core, each with its own connections, is
//! the model of nginx's workers, actix-web's and Pingora's "no steal" runtime. Measured on the
//! fixture bench, it cut the gateway's CPU per call from 58.5 to 50.2 µs (docs/benchmarks.md,
//! "One single-threaded runtime per core").
//!
//! What it gives up: a connection whose requests are slow to compute (a routed `tools/list`
//! embedding its query) delays the other connections on its thread, where a work-stealing
//! runtime would have let another worker take them. Model inference runs on each runtime's
//! blocking pool, so it does not hold a worker; the in-memory search is well under a
//! millisecond.
//!
//! Background work (the audit writer, health checks, registry notifications) stays on the main
//! runtime.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    /// Which worker this thread is: 1 for the first, 0 on any other thread.
    static SLOT: Cell<usize> = const { Cell::new(0) };
}

/// The worker the calling thread is (1-based), or 0 on any other thread: for state kept per
/// thread, such as idle upstream connections, whose sockets belong to the runtime that opened
/// them.
pub fn slot() -> usize {
    SLOT.with(Cell::get)
}

/// The cores this process may use: the default number of workers.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The worker threads, and the next one to hand a connection to.
pub struct Workers {
    handles: Vec<tokio::runtime::Handle>,
    next: AtomicUsize,
    /// Dropped with the workers: each thread's runtime then stops, dropping what it still runs.
    _stop: Vec<tokio::sync::oneshot::Sender<()>>,
}

impl Workers {
    /// Starts `n` workers (at least one).
    pub fn start(n: usize) -> std::io::Result<Self> {
        let mut handles = Vec::new();
        let mut stops = Vec::new();
        for i in 0..n.max(1) {
            let (handle_tx, handle_rx) = std::sync::mpsc::channel();
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            std::thread::Builder::new()
                .name(format!("mcp-worker-{}", i + 1))
                .spawn(move || {
                    SLOT.with(|s| s.set(i + 1));
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build();
                    match runtime {
                        Ok(rt) => {
                            let _ = handle_tx.send(Ok(rt.handle().clone()));
                            let _ = rt.block_on(stopped);
                        }
                        Err(e) => {
                            let _ = handle_tx.send(Err(e));
                        }
                    }
                })?;
            handles.push(
                handle_rx
                    .recv()
                    .map_err(|_| std::io::Error::other("a worker thread ended at start"))??,
            );
            stops.push(stop);
        }
        Ok(Workers {
            handles,
            next: AtomicUsize::new(0),
            _stop: stops,
        })
    }

    /// The runtime of the next worker, in turn.
    pub fn next(&self) -> &tokio::runtime::Handle {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        &self.handles[i % self.handles.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_handed_out_in_turn_to_threads_that_know_their_slot() {
        let workers = Workers::start(2).unwrap();
        let slots: Vec<usize> = (0..4)
            .map(|_| {
                let (tx, rx) = std::sync::mpsc::channel();
                workers
                    .next()
                    .spawn(async move { tx.send(slot()).unwrap() });
                rx.recv().unwrap()
            })
            .collect();
        assert_eq!(slots, [1, 2, 1, 2]);
        assert_eq!(slot(), 0, "not a worker");
    }

    #[test]
    fn dropping_the_workers_stops_their_tasks() {
        let workers = Workers::start(1).unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        workers.next().spawn(async move {
            let _keep = tx;
            std::future::pending::<()>().await;
        });
        drop(workers);
        // The task (and the sender it holds) is dropped with its runtime.
        assert_eq!(
            rx.recv_timeout(std::time::Duration::from_secs(5)),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
        );
    }
}
