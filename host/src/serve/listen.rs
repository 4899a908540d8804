//! The HTTP listener of `hak serve` and `hak mcp --listen`: accept, serve each connection
//! with hyper (HTTP/1.1, upgrades), stop accepting on shutdown and wait for the connections
//! to finish. What lives here is only how connections are run; routes, callers and calls
//! belong to the routers handed in.
//!
//! Written here rather than through `axum::serve` for the one thing it cannot be told: a
//! connection's future is polled again at once when it wakes itself while being polled
//! ([`Coalesced`]). hyper does that for every request with a body (the body's channel wakes
//! the connection's own task: the dispatcher and the handler are one task), and tokio
//! answers a task woken during its poll as a yield: back of the queue, and another worker
//! woken to steal it, which finds nothing and parks again — futex calls, an event-fd write
//! and a cross-CPU wake-up per request, which this listener saves. Every connection is also `TCP_NODELAY`, as it was under axum: an
//! answer in two writes (an MCP event stream's event, then the chunked body's end) must not
//! wait for the client's delayed ACK of the first (44 ms a call).

use axum::Router;
use futures_util::task::AtomicWaker;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

/// Serve `app` on `listener` until `shutdown` resolves, then stop accepting and wait for
/// every connection to finish (each ends after the request it is serving, if any).
pub async fn http(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let builder = Builder::new(TokioExecutor::new());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(());
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    accept_error(e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY refused on a connection: {e}");
        }
        let service = TowerToHyperService::new(app.clone());
        let builder = builder.clone();
        let mut stop = stop_rx.clone();
        tokio::spawn(Coalesced::new(async move {
            let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stop.changed() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        }));
    }
    drop(listener);
    drop(stop_rx);
    // Every connection holds a receiver: closed when the last one has ended.
    stop_tx.send_replace(());
    stop_tx.closed().await;
    Ok(())
}

/// An accept that failed: a connection gone before it was accepted is skipped; anything else
/// (out of descriptors) is logged and waited out, as axum does.
async fn accept_error(e: std::io::Error) {
    use std::io::ErrorKind::*;
    if matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    ) {
        return;
    }
    tracing::error!("accepting a connection: {e}");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// How many times in a row [`Coalesced`] polls its future again before it yields as tokio
/// would (other tasks get their turn; hyper loops up to 16 times inside one poll itself).
const REPOLLS: u32 = 4;

/// Being polled (a wake now is answered by polling again at once).
const POLLING: u8 = 1;
/// Woken since the last poll began.
const WOKEN: u8 = 2;

/// A future polled again, up to [`REPOLLS`] times, when it wakes itself during its poll;
/// a wake at any other time wakes the task as usual.
pub struct Coalesced<F> {
    inner: Pin<Box<F>>,
    shared: Arc<Shared>,
    waker: Waker,
}

struct Shared {
    state: AtomicU8,
    task: AtomicWaker,
}

impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.state.fetch_or(WOKEN, Ordering::AcqRel) & POLLING == 0 {
            self.task.wake();
        }
    }
}

impl<F: Future> Coalesced<F> {
    pub fn new(inner: F) -> Self {
        let shared = Arc::new(Shared {
            state: AtomicU8::new(0),
            task: AtomicWaker::new(),
        });
        Coalesced {
            inner: Box::pin(inner),
            waker: Waker::from(shared.clone()),
            shared,
        }
    }
}

impl<F: Future> Future for Coalesced<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        this.shared.task.register(cx.waker());
        let mut inner_cx = Context::from_waker(&this.waker);
        for _ in 0..REPOLLS {
            // A wake before this point is answered by this poll.
            this.shared.state.store(POLLING, Ordering::Release);
            if let Poll::Ready(out) = this.inner.as_mut().poll(&mut inner_cx) {
                this.shared.state.store(0, Ordering::Release);
                return Poll::Ready(out);
            }
            // Not woken meanwhile: leave; a wake from now on wakes the task.
            if this
                .shared
                .state
                .compare_exchange(POLLING, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Poll::Pending;
            }
        }
        // Woken every time: yield, as tokio does for a task that wakes itself.
        this.shared.state.store(0, Ordering::Release);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A waker that counts its wakes.
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counting() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (count.clone(), Waker::from(count))
    }

    /// A future that wakes itself during its first `times` polls and is ready after them.
    fn self_waking(times: u32) -> impl Future<Output = u32> {
        let mut polls = 0;
        std::future::poll_fn(move |cx| {
            polls += 1;
            if polls > times {
                return Poll::Ready(polls);
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        })
    }

    #[test]
    fn a_future_that_wakes_itself_is_polled_again_without_waking_the_task() {
        let (count, waker) = counting();
        let mut future = Coalesced::new(self_waking(2));
        let polled = Pin::new(&mut future).poll(&mut Context::from_waker(&waker));
        assert_eq!(polled, Poll::Ready(3));
        assert_eq!(count.0.load(Ordering::SeqCst), 0, "the task was woken");
    }

    #[test]
    fn a_future_that_always_wakes_itself_yields_after_the_repolls() {
        let (count, waker) = counting();
        let mut future = Coalesced::new(self_waking(u32::MAX));
        let polled = Pin::new(&mut future).poll(&mut Context::from_waker(&waker));
        assert_eq!(polled, Poll::Pending);
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            1,
            "a yield wakes the task once"
        );
    }

    #[test]
    fn a_wake_after_the_poll_wakes_the_task() {
        let (count, waker) = counting();
        let inner_waker = Arc::new(std::sync::Mutex::new(None::<Waker>));
        let keep = inner_waker.clone();
        let mut future = Coalesced::new(std::future::poll_fn(move |cx| {
            *keep.lock().unwrap() = Some(cx.waker().clone());
            Poll::<()>::Pending
        }));
        let polled = Pin::new(&mut future).poll(&mut Context::from_waker(&waker));
        assert_eq!(polled, Poll::Pending);
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        let stored = inner_waker.lock().unwrap().take().unwrap();
        std::thread::spawn(move || stored.wake()).join().unwrap();
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "the wake was lost");
    }
}
