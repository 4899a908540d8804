//! What a plugin's `Store` holds: a deny-by-default WASI context (no preopens, env, args or
//! network; stdout/stderr captured into the log), the memory guard, the per-call log budget,
//! the state handle and the granted capabilities. Host import implementations live in
//! `host_api` / `hedera_api`; nothing here calls the guest.

use super::bindings::LogLevel;
use crate::capabilities::CapabilityQuota;
use crate::model::limits::{PluginLimits, MAX_LOG_MESSAGE_BYTES};
use crate::plugin::CallBudget;
use crate::state_store::StateHandle;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// One log line from a plugin.
pub struct LogRecord<'a> {
    pub plugin: &'a str,
    pub level: LogLevel,
    pub message: &'a str,
}

/// Where plugin logs go. The default forwards to `tracing`; tests collect them.
pub trait LogSink: Send + Sync {
    fn log(&self, record: &LogRecord<'_>);
}

/// Forwards plugin logs to `tracing`, tagged with the plugin name.
pub struct TracingLogSink;

impl LogSink for TracingLogSink {
    fn log(&self, r: &LogRecord<'_>) {
        let (plugin, message) = (r.plugin, crate::logging::one_line(r.message));
        match r.level {
            LogLevel::Trace => tracing::trace!(plugin, "{message}"),
            LogLevel::Debug => tracing::debug!(plugin, "{message}"),
            LogLevel::Info => tracing::info!(plugin, "{message}"),
            LogLevel::Warn => tracing::warn!(plugin, "{message}"),
            LogLevel::Error => tracing::error!(plugin, "{message}"),
        }
    }
}

/// Memory cap of one instance: all its linear memories together (a component may define many;
/// the pooling allocator caps each slot, the on-demand allocator nothing), in every allocator
/// mode. Growing past it traps, and the failure is reported as `memory`.
pub struct MemoryGuard {
    limit_bytes: usize,
    /// Bytes of every memory of the instance, as grown so far.
    used: usize,
    /// `used` before the last growth allowed (restored when that growth fails).
    before_growth: usize,
    pub(crate) exceeded: Option<usize>,
}

impl MemoryGuard {
    pub fn new(limit_bytes: usize) -> Self {
        MemoryGuard {
            limit_bytes,
            used: 0,
            before_growth: 0,
            exceeded: None,
        }
    }
}

impl wasmtime::ResourceLimiter for MemoryGuard {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self.used.saturating_sub(current).saturating_add(desired);
        if total > self.limit_bytes {
            self.exceeded = Some(total);
            wasmtime::bail!(
                "memory limit of {} bytes exceeded (all memories together would hold {total})",
                self.limit_bytes
            );
        }
        self.before_growth = self.used;
        self.used = total;
        Ok(true)
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        // The growth counted above did not happen; the guest sees -1 and may go on.
        self.used = self.before_growth;
        Ok(())
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1_000_000)
    }
}

/// Captured guest stdout/stderr, capped; what does not fit is dropped, never an error.
#[derive(Clone, Default)]
pub struct CapturedOutput(Arc<Captured>);

#[derive(Default)]
struct Captured {
    bytes: Mutex<Vec<u8>>,
    /// Set with the first byte written since the last [`CapturedOutput::take`]: a guest call
    /// that printed nothing (nearly all of them) is settled without taking the lock.
    written: AtomicBool,
}

impl CapturedOutput {
    /// Take what was written since the last call.
    pub fn take(&self) -> Vec<u8> {
        if !self.0.written.swap(false, Ordering::Acquire) {
            return Vec::new();
        }
        std::mem::take(&mut *self.0.bytes.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn push(&self, bytes: &[u8]) {
        let mut buf = self.0.bytes.lock().unwrap_or_else(|e| e.into_inner());
        let room = CAPTURE_CAP.saturating_sub(buf.len());
        buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.0.written.store(true, Ordering::Release);
    }
}

const CAPTURE_CAP: usize = 64 * 1024;

impl IsTerminal for CapturedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for CapturedOutput {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }
    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }
    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(4096)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CapturedOutput {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for CapturedOutput {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        bytes: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.push(bytes);
        std::task::Poll::Ready(Ok(bytes.len()))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// The data of one plugin instance's `Store`.
pub struct PluginState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) memory: MemoryGuard,
    /// The operator's name for the plugin: every log line and failure carries it.
    pub(crate) plugin: Arc<str>,
    pub(crate) sink: Arc<dyn LogSink>,
    /// Log bytes still allowed in the current call.
    pub(crate) log_budget: usize,
    pub(crate) log_dropped: bool,
    pub(crate) output: CapturedOutput,
    /// This plugin's state in this agent context (scratchpad and budgets); read it through
    /// [`PluginState::pad`].
    state: StateHandle,
    /// Whether the guest has read or written its context's state or used a capability (so
    /// this instance cannot be moved to another context: `PluginInstance::rebind`).
    pub(crate) context_used: bool,
    /// The network capabilities granted, and what is left of their quotas.
    pub(crate) capability: CapabilityQuota,
    /// A host call of the current guest call (a network capability) ended at or past the
    /// deadline: the guest call fails as out of time, whatever the guest answers after it.
    pub(crate) deadline_passed: Option<&'static str>,
    pub(crate) max_log_bytes: usize,
    /// The plugin's time budget per call, and when the current call's runs out (clock
    /// subscriptions never outlast it: `runtime::clock`).
    deadline: Duration,
    pub(crate) call_deadline: tokio::time::Instant,
    /// What is left of the tool call's plugin time during the current guest call: host
    /// calls, clock waits and deadline extensions never reach past it.
    pub(crate) call_budget: Option<CallBudget>,
}

impl PluginState {
    pub(crate) fn new(
        plugin: Arc<str>,
        limits: &PluginLimits,
        sink: Arc<dyn LogSink>,
        state: StateHandle,
        capability: CapabilityQuota,
    ) -> Self {
        let output = CapturedOutput::default();
        // Deny by default: no preopened dirs, no env, no args, no TCP, no UDP, no name lookup
        // (wasmtime-wasi's defaults: socket creation itself is refused); stdin is empty;
        // stdout/stderr go to the plugin log.
        let wasi = wasmtime_wasi::WasiCtxBuilder::new()
            .stdout(output.clone())
            .stderr(output.clone())
            .build();
        PluginState {
            wasi,
            table: ResourceTable::new(),
            memory: MemoryGuard::new(limits.memory_bytes()),
            plugin,
            sink,
            log_budget: limits.max_log_bytes,
            log_dropped: false,
            output,
            state,
            context_used: false,
            capability,
            deadline_passed: None,
            max_log_bytes: limits.max_log_bytes,
            deadline: Duration::from_millis(limits.deadline_ms),
            call_deadline: tokio::time::Instant::now(),
            call_budget: None,
        }
    }

    /// The context's state, noting that the guest depends on it.
    /// The time the plugin reads: its state store's ([`StateHandle::now_ms`]); reading it does
    /// not tie the instance to its context.
    pub(crate) fn now_ms(&self) -> u64 {
        self.state.now_ms()
    }

    pub(crate) fn pad(&mut self) -> &mut StateHandle {
        self.context_used = true;
        &mut self.state
    }

    /// Serve another context: its state and capability budget. Only for an instance that has
    /// not touched its own (`context_used`); the caller checks.
    pub(crate) fn move_to(&mut self, state: StateHandle, capability: CapabilityQuota) {
        debug_assert!(!self.context_used);
        self.state = state;
        self.capability = capability;
    }

    pub(crate) fn table(&mut self) -> &mut ResourceTable {
        &mut self.table
    }

    /// Reset per-call accounting before a guest call starting `now`, bounded by the tool
    /// call's `budget`.
    pub(crate) fn begin_call(&mut self, now: std::time::Instant, budget: Option<CallBudget>) {
        self.log_budget = self.max_log_bytes;
        self.log_dropped = false;
        self.deadline_passed = None;
        self.capability.begin_call();
        let mut end = now + self.deadline;
        if let Some(budget) = budget {
            end = end.min(budget.until);
        }
        self.call_deadline = tokio::time::Instant::from_std(end);
        self.call_budget = budget;
    }

    /// The latest a blocking host call made now may end: the plugin's deadline for this
    /// guest call (itself within the tool call's budget). A host call's time is the plugin's.
    pub(crate) fn host_call_until(&self) -> std::time::Instant {
        self.call_deadline.into_std()
    }

    /// Forward captured stdout/stderr to the log after a guest call.
    pub(crate) fn end_call(&mut self) {
        let captured = self.output.take();
        if !captured.is_empty() {
            let text = String::from_utf8_lossy(&captured);
            for line in text.lines().filter(|l| !l.is_empty()) {
                self.emit(LogLevel::Info, line);
            }
        }
    }

    /// Write one log line within the call's budget; lines past the budget are dropped (once
    /// noted), never an error for the guest.
    pub(crate) fn emit(&mut self, level: LogLevel, message: &str) {
        let mut cut = message.len().min(MAX_LOG_MESSAGE_BYTES);
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        let message = &message[..cut];
        if message.len() > self.log_budget {
            if !self.log_dropped {
                self.log_dropped = true;
                let note = "log budget of this call exhausted; further lines dropped";
                self.sink.log(&LogRecord {
                    plugin: &self.plugin,
                    level: LogLevel::Warn,
                    message: note,
                });
            }
            return;
        }
        self.log_budget -= message.len();
        self.sink.log(&LogRecord {
            plugin: &self.plugin,
            level,
            message,
        });
    }
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MemoryGuard;
    use wasmtime::ResourceLimiter;

    #[test]
    fn the_memory_cap_holds_for_all_memories_together() {
        const MIB: usize = 1 << 20;
        let mut guard = MemoryGuard::new(64 * MIB);
        // Ten memories of 48 MiB each were each under the cap alone: 480 MiB in all.
        assert!(guard.memory_growing(0, 48 * MIB, None).unwrap());
        assert!(guard.memory_growing(0, 48 * MIB, None).is_err());
        assert_eq!(guard.exceeded, Some(96 * MIB));
        // Growing one memory counts only the growth; a failed growth gives it back.
        assert!(guard.memory_growing(48 * MIB, 56 * MIB, None).unwrap());
        guard
            .memory_grow_failed(wasmtime::format_err!("mmap"))
            .unwrap();
        assert!(guard.memory_growing(48 * MIB, 64 * MIB, None).unwrap());
        assert!(guard.memory_growing(0, MIB, None).is_err());
    }
}
