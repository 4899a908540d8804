//! `wasi:io/poll` and `wasi:io/streams` for guests, synchronous, without holding a server
//! thread hostage. wasmtime-wasi's own synchronous bindings run every waiting operation (a
//! resource drop included) through `Handle::block_on`, which panics on a tokio worker thread,
//! so a guest could only run on one inside `block_in_place` — and `hak serve` paid that thread
//! handoff on every call. Here each operation is polled once where it is: captured output,
//! drops, empty stdin and ready pollables finish at once (nearly every operation a plugin
//! makes); only one that must really wait (a clock subscription) leaves the worker through
//! [`crate::blocking::off_worker`] and waits on tokio. The operations themselves are
//! wasmtime-wasi-io's; nothing else lives here.
//!
//! `wasi:filesystem/types` keeps wasmtime-wasi's synchronous binding: with no preopened
//! directory a guest never holds a descriptor, so none of its waiting methods can be called.

use std::future::Future;
use std::task::{Context, Poll, Waker};
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::p2::bindings::sync::io::{poll, streams};
use wasmtime_wasi::p2::{DynPollable, StreamError, StreamResult};
use wasmtime_wasi_io::bindings::wasi::io::poll as async_poll;
use wasmtime_wasi_io::bindings::wasi::io::streams::{
    HostInputStream as AsyncInput, HostOutputStream as AsyncOutput,
};
use wasmtime_wasi_io::streams::{DynInputStream, DynOutputStream};

/// A guest's resource table, seen through the synchronous io bindings.
pub(crate) struct SyncIo<'a>(pub(crate) &'a mut ResourceTable);

/// [`wasmtime::component::HasData`] for [`SyncIo`].
pub(crate) struct HasSyncIo;

impl wasmtime::component::HasData for HasSyncIo {
    type Data<'a> = SyncIo<'a>;
}

/// Finish `f`: at once if it is ready on its first poll, else waiting on tokio off the
/// worker thread (outside any runtime, on wasmtime-wasi's own).
fn wait<F: Future>(f: F) -> F::Output {
    if tokio::runtime::Handle::try_current().is_err() {
        return wasmtime_wasi::runtime::in_tokio(f);
    }
    let mut f = std::pin::pin!(f);
    if let Poll::Ready(out) = f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        return out;
    }
    crate::blocking::off_worker(|| wasmtime_wasi::runtime::in_tokio(f))
}

impl poll::Host for SyncIo<'_> {
    fn poll(&mut self, pollables: Vec<Resource<DynPollable>>) -> wasmtime::Result<Vec<u32>> {
        wait(async_poll::Host::poll(self.0, pollables))
    }
}

impl poll::HostPollable for SyncIo<'_> {
    fn ready(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<bool> {
        wait(async_poll::HostPollable::ready(self.0, pollable))
    }

    fn block(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<()> {
        wait(async_poll::HostPollable::block(self.0, pollable))
    }

    fn drop(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<()> {
        async_poll::HostPollable::drop(self.0, pollable)
    }
}

impl streams::Host for SyncIo<'_> {
    fn convert_stream_error(&mut self, err: StreamError) -> wasmtime::Result<streams::StreamError> {
        streams::Host::convert_stream_error(self.0, err)
    }
}

impl streams::HostOutputStream for SyncIo<'_> {
    fn drop(&mut self, stream: Resource<DynOutputStream>) -> wasmtime::Result<()> {
        wait(AsyncOutput::drop(self.0, stream))
    }

    fn check_write(&mut self, stream: Resource<DynOutputStream>) -> StreamResult<u64> {
        AsyncOutput::check_write(self.0, stream)
    }

    fn write(&mut self, stream: Resource<DynOutputStream>, bytes: Vec<u8>) -> StreamResult<()> {
        AsyncOutput::write(self.0, stream, bytes)
    }

    fn blocking_write_and_flush(
        &mut self,
        stream: Resource<DynOutputStream>,
        bytes: Vec<u8>,
    ) -> StreamResult<()> {
        wait(AsyncOutput::blocking_write_and_flush(self.0, stream, bytes))
    }

    fn blocking_write_zeroes_and_flush(
        &mut self,
        stream: Resource<DynOutputStream>,
        len: u64,
    ) -> StreamResult<()> {
        wait(AsyncOutput::blocking_write_zeroes_and_flush(
            self.0, stream, len,
        ))
    }

    fn subscribe(
        &mut self,
        stream: Resource<DynOutputStream>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        AsyncOutput::subscribe(self.0, stream)
    }

    fn write_zeroes(&mut self, stream: Resource<DynOutputStream>, len: u64) -> StreamResult<()> {
        AsyncOutput::write_zeroes(self.0, stream, len)
    }

    fn flush(&mut self, stream: Resource<DynOutputStream>) -> StreamResult<()> {
        AsyncOutput::flush(self.0, stream)
    }

    fn blocking_flush(&mut self, stream: Resource<DynOutputStream>) -> StreamResult<()> {
        wait(AsyncOutput::blocking_flush(self.0, stream))
    }

    fn splice(
        &mut self,
        dst: Resource<DynOutputStream>,
        src: Resource<DynInputStream>,
        len: u64,
    ) -> StreamResult<u64> {
        AsyncOutput::splice(self.0, dst, src, len)
    }

    fn blocking_splice(
        &mut self,
        dst: Resource<DynOutputStream>,
        src: Resource<DynInputStream>,
        len: u64,
    ) -> StreamResult<u64> {
        wait(AsyncOutput::blocking_splice(self.0, dst, src, len))
    }
}

impl streams::HostInputStream for SyncIo<'_> {
    fn drop(&mut self, stream: Resource<DynInputStream>) -> wasmtime::Result<()> {
        wait(AsyncInput::drop(self.0, stream))
    }

    fn read(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<Vec<u8>> {
        AsyncInput::read(self.0, stream, len)
    }

    fn blocking_read(
        &mut self,
        stream: Resource<DynInputStream>,
        len: u64,
    ) -> StreamResult<Vec<u8>> {
        wait(AsyncInput::blocking_read(self.0, stream, len))
    }

    fn skip(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<u64> {
        AsyncInput::skip(self.0, stream, len)
    }

    fn blocking_skip(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<u64> {
        wait(AsyncInput::blocking_skip(self.0, stream, len))
    }

    fn subscribe(
        &mut self,
        stream: Resource<DynInputStream>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        AsyncInput::subscribe(self.0, stream)
    }
}
