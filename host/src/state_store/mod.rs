//! Plugin state: the scratchpad behind `state-get` / `state-set` (a small key/value map per
//! plugin per agent context, capped in bytes) and the budgets behind `budget.reserve` (amounts
//! reserved against a limit in a rolling window, checked and recorded in one atomic step).
//!
//! One [`StateBackend`] holds both: in memory (one process, gone at exit), in memory with an
//! append-only journal (durable across runs and restarts, owned by one process at a time: the
//! embedded default), in an SQLite file (durable, shared by processes at once, slower) or on
//! Redis (shared by replicas). Every backend gives the same answers; the
//! bucket arithmetic they share lives in [`window`]. What must not live here: deciding when a
//! reservation is committed (the lifecycle does, from the call's outcome).

pub mod journal;
mod memory;
pub mod redis;
pub mod sqlite;
pub mod window;

pub use memory::{MemoryBackend, Row};

use std::sync::{Arc, Mutex};

/// Whose state: one plugin (by the operator's name) in one agent context.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PadKey {
    pub scope: Arc<str>,
    pub plugin: Arc<str>,
}

/// A reservation, as the backend that made it can find it again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReservationId(pub String);

/// What a reservation's call did with its transaction, recorded (durably, before the
/// transaction leaves the host) so that a reservation its process never settled can be
/// settled later by what the network knows ([`StateBackend::orphans`], `crate::reconcile`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Binding {
    /// Nothing was sent: the call had not reached its secondary action. Safe to release.
    #[default]
    Unbound,
    /// Sent or handed out as this transaction (`id` as the mirror spells it,
    /// `0.0.5-1700000000-000000001`), which no node accepts after `until_ms`.
    Transaction { id: String, until_ms: u64 },
    /// Handed to something hak cannot follow (a custom strategy): never released.
    Opaque,
}

/// A reservation whose process stopped before settling it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Orphan {
    pub id: ReservationId,
    pub binding: Binding,
    pub amount: u64,
    /// Whose budget, for logs: `plugin "spend" in context "…", key "…"`.
    pub budget: String,
    /// The process that made it, as its store names it (empty for a store one process owns).
    pub owner: String,
}

/// What `reserve` answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reserved {
    /// Made: its id and what is spent or reserved in the window, this reservation included.
    Granted { id: ReservationId, total: u64 },
    /// Refused: what is already spent or reserved in the window.
    OverLimit { spent: u64 },
}

/// Why the store could not do what was asked. Policies treat every one as a block.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// A cap would be passed (scratchpad bytes, budget keys).
    #[error("{0}")]
    Full(String),
    /// The store failed or cannot be reached.
    #[error("state store unavailable: {0}")]
    Unavailable(String),
}

/// The most budget keys one plugin may use in one agent context (each a bounded window).
pub const MAX_BUDGET_KEYS: usize = 256;
/// The longest budget key, in bytes (a key names a budget; it is not a place to store data).
pub const MAX_BUDGET_KEY_BYTES: usize = 256;
/// What one stored entry costs beyond its key and value bytes (a scratchpad entry, a budget
/// key): what a store spends on it whatever its size, so a cap in bytes also caps the number
/// of entries (64 KiB holds at most 1,024 empty entries, not 65,536).
pub const ENTRY_OVERHEAD: usize = 64;

/// The bytes a scratchpad entry counts against the caps.
pub fn entry_bytes(key: &str, value: &str) -> usize {
    key.len() + value.len() + ENTRY_OVERHEAD
}

/// Bounds on what the embedded stores (`memory`, `journal`) hold across agent contexts: one
/// plugin (by its manifest name, over every context) and the whole host. A plugin past its
/// quota gets [`StateError::Full`] (its policy blocks); other plugins go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    /// Scratchpad entries and budget keys of one plugin, over all contexts.
    pub plugin_bytes: usize,
    /// Everything the store holds.
    pub total_bytes: usize,
}

impl Default for Quota {
    fn default() -> Self {
        Quota {
            plugin_bytes: 16 << 20,
            total_bytes: 256 << 20,
        }
    }
}
/// How long a process sharing a store (sqlite, redis) may go unseen before its unsettled
/// reservations are orphans, by default (`[state] presumed_stopped_ms`). It says it is alive
/// every sixth of this.
pub const PRESUMED_STOPPED: std::time::Duration = std::time::Duration::from_secs(30);

/// The longest budget window, in seconds (one year).
pub const MAX_WINDOW_SECONDS: u32 = 366 * 86_400;

/// A state store. Implementations must make `reserve` atomic with every other call on the same
/// (pad, key, window), across threads and — for shared backends — processes.
pub trait StateBackend: Send + Sync {
    fn get(&self, pad: &PadKey, key: &str) -> Result<Option<String>, StateError>;
    /// Write `key`, refusing with [`StateError::Full`] when the pad's keys + values would pass `cap` bytes.
    fn set(&self, pad: &PadKey, key: &str, value: &str, cap: usize) -> Result<(), StateError>;
    fn delete(&self, pad: &PadKey, key: &str) -> Result<(), StateError>;
    /// Reserve `amount` under (`pad`, `key`, `window_seconds`) if the window's total stays
    /// within `limit`. Unsettled reservations count like committed ones.
    fn reserve(
        &self,
        pad: &PadKey,
        key: &str,
        amount: u64,
        limit: u64,
        window_seconds: u32,
        now_ms: u64,
    ) -> Result<Reserved, StateError>;
    /// What is spent or reserved under (`pad`, `key`, `window_seconds`) in the window.
    fn spent(
        &self,
        pad: &PadKey,
        key: &str,
        window_seconds: u32,
        now_ms: u64,
    ) -> Result<u64, StateError>;
    /// Commit (`true`: the amounts stay spent) or release (`false`: they are given back).
    fn settle(&self, ids: &[ReservationId], commit: bool) -> Result<(), StateError>;
    /// Record, before the call's transaction leaves the host, what the call does with it.
    /// A reservation no longer held (its window passed, or a reconciler released it) is
    /// refused: the call must not send what no reservation covers.
    fn bind(&self, ids: &[ReservationId], binding: &Binding) -> Result<(), StateError>;
    /// The unsettled reservations of processes that stopped (for the journal: those found
    /// when it was opened), for a reconciler to settle with [`StateBackend::settle`].
    fn orphans(&self) -> Result<Vec<Orphan>, StateError>;
    /// Settle an orphan [`StateBackend::orphans`] listed, only if it is still as listed
    /// (unsettled, same binding): its process, presumed stopped, may have resumed and sent its
    /// transaction since. `Ok(false)`: it changed, and was left alone.
    fn settle_orphan(&self, orphan: &Orphan, commit: bool) -> Result<bool, StateError>;
    /// Whether other processes use the store at once (their orphans can appear at any time,
    /// so a host looks for them periodically), rather than only this one.
    fn shared(&self) -> bool;
    /// Which backend, for logs and the admin API.
    fn describe(&self) -> String;
    /// The time budget windows are counted at and plugins read (`host.now-unix-ms`):
    /// milliseconds since the Unix epoch. The system clock, unless the store is a trial's
    /// ([`MemoryBackend::at`]).
    fn now_ms(&self) -> u64 {
        now_ms()
    }
}

/// The reservations one call made, settled by the lifecycle when the call ends.
#[derive(Default)]
pub struct CallReservations(Mutex<Vec<ReservationId>>);

impl CallReservations {
    pub fn push(&self, id: ReservationId) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(id);
    }

    /// The reservations made so far (they stay listed for settlement).
    pub fn ids(&self) -> Vec<ReservationId> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn take(&self) -> Vec<ReservationId> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// What a plugin instance holds: its pad in the store, its byte cap, and where the current
/// call's reservations are listed.
#[derive(Clone)]
pub struct StateHandle {
    pub backend: Arc<dyn StateBackend>,
    pub pad: PadKey,
    pub cap: usize,
    pub reservations: Arc<CallReservations>,
}

impl StateHandle {
    /// A handle on a private in-memory store (describe-time and standalone instances).
    pub fn scratch(plugin: &str, cap: usize) -> Self {
        StateHandle {
            backend: Arc::new(MemoryBackend::default()),
            pad: PadKey {
                scope: "-".into(),
                plugin: plugin.into(),
            },
            cap,
            reservations: Arc::default(),
        }
    }

    pub fn get(&self, key: &str) -> Result<Option<String>, StateError> {
        self.backend.get(&self.pad, key)
    }

    pub fn set(&self, key: &str, value: &str) -> Result<(), StateError> {
        self.backend.set(&self.pad, key, value, self.cap)
    }

    pub fn delete(&self, key: &str) -> Result<(), StateError> {
        self.backend.delete(&self.pad, key)
    }

    /// Reserve under `key` and list the reservation for this call's settlement.
    pub fn reserve(
        &self,
        key: &str,
        amount: u64,
        limit: u64,
        window_seconds: u32,
    ) -> Result<Reserved, StateError> {
        check_window(window_seconds)?;
        check_budget_key(key)?;
        let reserved =
            self.backend
                .reserve(&self.pad, key, amount, limit, window_seconds, self.now_ms())?;
        if let Reserved::Granted { id, .. } = &reserved {
            self.reservations.push(id.clone());
        }
        Ok(reserved)
    }

    pub fn spent(&self, key: &str, window_seconds: u32) -> Result<u64, StateError> {
        check_window(window_seconds)?;
        check_budget_key(key)?;
        self.backend
            .spent(&self.pad, key, window_seconds, self.now_ms())
    }

    /// The store's time ([`StateBackend::now_ms`]).
    pub fn now_ms(&self) -> u64 {
        self.backend.now_ms()
    }
}

fn check_window(window_seconds: u32) -> Result<(), StateError> {
    if window_seconds == 0 || window_seconds > MAX_WINDOW_SECONDS {
        return Err(StateError::Full(format!(
            "window-seconds must be between 1 and {MAX_WINDOW_SECONDS}, got {window_seconds}"
        )));
    }
    Ok(())
}

fn check_budget_key(key: &str) -> Result<(), StateError> {
    if key.len() > MAX_BUDGET_KEY_BYTES {
        return Err(StateError::Full(format!(
            "a budget key is at most {MAX_BUDGET_KEY_BYTES} bytes, got {}",
            key.len()
        )));
    }
    Ok(())
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
