//! Waiting from synchronous code (tool stages, plugin host calls, a call parked for approval)
//! that may run on a tokio worker thread (`hak serve` runs calls there): [`off_worker`] for
//! any wait, and a `block_on` for async network work that works both outside the tokio
//! runtime and on one of its worker threads. Nothing else lives here; it depends on nothing
//! in the crate.

use tokio::runtime::{Handle, RuntimeFlavor};

/// Run `f`, which may block its thread (a condition variable, a synchronous wait on async
/// work): on a multi-threaded runtime's worker through `block_in_place` (the worker's other
/// tasks move to another thread while it waits), elsewhere directly.
pub fn off_worker<R>(f: impl FnOnce() -> R) -> R {
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// Whether this thread is a worker of a multi-threaded tokio runtime: work that may wait can
/// run here and leave the worker through [`off_worker`] when it must (on a current-thread
/// runtime it would stall every other task, and `block_on` would panic).
pub fn on_multi_thread_worker() -> bool {
    Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread)
}

/// Block on `fut` on `handle`'s runtime, also from a (multi-threaded) tokio runtime's worker.
pub fn block_on<F: std::future::Future>(handle: &Handle, fut: F) -> F::Output {
    off_worker(|| handle.block_on(fut))
}
