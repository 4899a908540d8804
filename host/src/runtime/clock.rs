//! `wasi:clocks/monotonic-clock` for plugins, bounded by the call's deadline. The epoch
//! deadline only interrupts guest code; a guest blocked in the host — `wasi:io/poll` on a
//! clock subscription, i.e. any `sleep` — would hold its thread as long as it liked (wasmtime's
//! own implementation sleeps the full duration, or forever). Here a subscription that ends
//! within the current call's budget (its deadline, never past the tool call's plugin budget)
//! waits as asked, and one that would end past it traps at
//! once, reported as the deadline it would have broken. No other pollable a plugin can reach
//! blocks (stdin is empty, stdout/stderr are captured), so no WASI call outlasts the deadline —
//! in `describe`, stage calls and `on-tool-failure` alike.

use super::sandbox::PluginState;
use std::sync::OnceLock;
use std::time::Duration;
use wasmtime::component::Resource;
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock;
use wasmtime_wasi::p2::DynPollable;
use wasmtime_wasi_io::poll::{subscribe, Pollable};

/// The zero of the plugins' monotonic clock: the first time any plugin read it.
fn epoch() -> std::time::Instant {
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    *START.get_or_init(std::time::Instant::now)
}

fn now_nanos() -> u64 {
    epoch().elapsed().as_nanos() as u64
}

/// A clock subscription: ready at `at` (within the call's budget).
struct Wakeup {
    at: tokio::time::Instant,
}

#[wasmtime_wasi::async_trait]
impl Pollable for Wakeup {
    async fn ready(&mut self) {
        tokio::time::sleep_until(self.at).await;
    }
}

impl PluginState {
    /// A subscription `after` from now. One that would end past the call's budget traps at
    /// once as out of time: the guest asked to wait longer than it may run.
    fn wake_within_deadline(&mut self, after: Duration) -> wasmtime::Result<Resource<DynPollable>> {
        let budget_end = self.call_deadline;
        let at = match tokio::time::Instant::now().checked_add(after) {
            Some(at) if at <= budget_end => at,
            _ => return Err(wasmtime::Trap::Interrupt.into()),
        };
        let resource = self.table().push(Wakeup { at })?;
        subscribe(self.table(), resource)
    }
}

impl monotonic_clock::Host for PluginState {
    fn now(&mut self) -> wasmtime::Result<monotonic_clock::Instant> {
        Ok(now_nanos())
    }

    fn resolution(&mut self) -> wasmtime::Result<monotonic_clock::Duration> {
        Ok(1)
    }

    fn subscribe_instant(
        &mut self,
        when: monotonic_clock::Instant,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        self.wake_within_deadline(Duration::from_nanos(when.saturating_sub(now_nanos())))
    }

    fn subscribe_duration(
        &mut self,
        duration: monotonic_clock::Duration,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        self.wake_within_deadline(Duration::from_nanos(duration))
    }
}
