//! Waiting on async network work from synchronous code (tool stages, plugin host calls): one
//! `block_on` that works both outside the tokio runtime and on one of its worker threads.
//! Nothing else lives here; it depends on nothing in the crate.

/// Block on `fut` on `handle`'s runtime, also from inside a (multi-threaded) tokio runtime.
pub fn block_on<F: std::future::Future>(handle: &tokio::runtime::Handle, fut: F) -> F::Output {
    if tokio::runtime::Handle::try_current().is_ok() {
        tokio::task::block_in_place(|| handle.block_on(fut))
    } else {
        handle.block_on(fut)
    }
}
