//! The epoch ticker of one engine: the thread that advances wasmtime's epoch, by which every
//! guest call's deadline is counted ([`EPOCH_TICK_MS`] a tick), and what tells it whether
//! any guest of its engine is running. Nothing else lives here: deadlines are set and
//! enforced by `instance`.
//!
//! While guests run it ticks every millisecond, as it always has. An idle host has nothing
//! to interrupt, so after a whole check period ([`CHECK_TICKS`]) in which no guest call
//! started, and none is running, the ticker parks until the next guest call starts: an idle
//! `hak serve` no longer wakes a thousand times a second (1.35 % of a core here).
//!
//! Why it stays correct:
//! - a guest call marks itself on its thread ([`InGuest`]: a plain store to a slot only that
//!   thread writes, the engine it runs in) before the guest runs, then checks the ticker's
//!   state: a read-mostly word, written only at period ends, so a call pays two loads and
//!   two stores, no read-modify-write on a shared line (a shared counter cost every guest call a
//!   contended atomic);
//! - a call that finds the ticker quiet or parked makes it active again with a swap, and
//!   the swap and the ticker's own compare-and-swap to "parked" are ordered: either the
//!   ticker sees the call (and stays) or the call sees the ticker parked (and unparks it);
//! - a call that started while the ticker was active and runs on alone (an infinite loop)
//!   is seen by the ticker in its thread's slot, a period after its store at the earliest,
//!   so the ticker keeps ticking until it ends.

use crate::model::limits::EPOCH_TICK_MS;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Ticks in a check period (~1 s): idle after a whole period without a guest call starting.
const CHECK_TICKS: u64 = 1000;

/// Ticking; a guest call started since the last period end.
const ACTIVE: u8 = 0;
/// Ticking; no guest call has started since the last period end.
const QUIET: u8 = 1;
/// Parked until a guest call starts.
const PARKED: u8 = 2;

/// The ticker of one engine (a handle: clones share it).
#[derive(Clone)]
pub(crate) struct Ticker {
    shared: Arc<Shared>,
}

struct Shared {
    state: AtomicU8,
    stop: AtomicBool,
    thread: std::thread::Thread,
}

impl Ticker {
    /// Start the ticker thread of `engine`.
    pub(crate) fn start(engine: wasmtime::Engine) -> Self {
        let (tx, rx) = std::sync::mpsc::channel::<Arc<Shared>>();
        let handle = std::thread::Builder::new()
            .name("hak-epoch".into())
            .spawn(move || {
                if let Ok(shared) = rx.recv() {
                    tick(&engine, &shared);
                }
            })
            .expect("spawn the epoch ticker thread");
        let shared = Arc::new(Shared {
            state: AtomicU8::new(ACTIVE),
            stop: AtomicBool::new(false),
            thread: handle.thread().clone(),
        });
        let _ = tx.send(shared.clone());
        Ticker { shared }
    }

    /// Mark a guest call of this engine on the current thread until the guard drops, and
    /// wake the ticker if it is parked. Call it before the guest runs.
    #[inline]
    pub(crate) fn enter(&self) -> InGuest {
        let at = Arc::as_ptr(&self.shared).cast_mut();
        // Only this thread writes its slot: a load and a store, no read-modify-write.
        let previous = SLOT.with(|slot| {
            let previous = slot.0.load(Ordering::Relaxed);
            slot.0.store(at, Ordering::Release);
            previous
        });
        // A read of a word written once a period; the swap only when the ticker is quiet.
        if self.shared.state.load(Ordering::SeqCst) != ACTIVE
            && self.shared.state.swap(ACTIVE, Ordering::SeqCst) == PARKED
        {
            self.shared.thread.unpark();
        }
        InGuest { previous }
    }

    /// Whether the ticker is parked (nothing of this engine has run for a check period).
    pub(crate) fn parked(&self) -> bool {
        self.shared.state.load(Ordering::SeqCst) == PARKED
    }

    /// End the thread (the engine is going away).
    pub(crate) fn stop(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.thread.unpark();
    }
}

/// The ticker's loop: a tick a millisecond; at each period's end, active → quiet, or, when
/// quiet for the whole period and no thread is in a guest of this engine, park.
fn tick(engine: &wasmtime::Engine, shared: &Arc<Shared>) {
    let me = Arc::as_ptr(shared).cast_mut();
    let mut ticks = 0u64;
    while !shared.stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(EPOCH_TICK_MS));
        engine.increment_epoch();
        ticks += 1;
        if !ticks.is_multiple_of(CHECK_TICKS) {
            continue;
        }
        let quiet = shared
            .state
            .compare_exchange(ACTIVE, QUIET, Ordering::SeqCst, Ordering::SeqCst)
            .is_err();
        if quiet
            && !in_guest(me)
            && shared
                .state
                .compare_exchange(QUIET, PARKED, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            // Nothing runs: no tick is needed until a guest call starts (it unparks us).
            while shared.state.load(Ordering::SeqCst) == PARKED
                && !shared.stop.load(Ordering::Relaxed)
            {
                std::thread::park();
            }
        }
    }
}

/// Whether any thread is in a guest call of the engine whose ticker is `me`.
fn in_guest(me: *mut Shared) -> bool {
    THREADS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|slot| slot.load(Ordering::SeqCst) == me)
}

/// A guest call in progress on this thread; dropping it ends the mark.
pub(crate) struct InGuest {
    /// What the slot held before (a call nested in another of the same thread keeps the
    /// outer mark when it ends).
    previous: *mut Shared,
}

impl Drop for InGuest {
    fn drop(&mut self) {
        let previous = self.previous;
        SLOT.with(|slot| slot.0.store(previous, Ordering::Release));
    }
}

/// Every thread that has run a guest: its slot (the ticker it is in a guest call of, or
/// null; compared, never dereferenced), registered on its first guest call and removed when
/// the thread ends.
static THREADS: Mutex<Vec<Arc<AtomicPtr<Shared>>>> = Mutex::new(Vec::new());

/// This thread's slot in [`THREADS`].
struct Slot(Arc<AtomicPtr<Shared>>);

impl Slot {
    fn new() -> Self {
        let slot = Arc::new(AtomicPtr::new(std::ptr::null_mut()));
        THREADS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(slot.clone());
        Slot(slot)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        THREADS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|s| !Arc::ptr_eq(s, &self.0));
    }
}

thread_local! {
    static SLOT: Slot = Slot::new();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_is_undone_to_the_outer_one() {
        let engine = wasmtime::Engine::default();
        let ticker = Ticker::start(engine);
        let me = Arc::as_ptr(&ticker.shared).cast_mut();
        {
            let _outer = ticker.enter();
            assert!(in_guest(me));
            {
                let _inner = ticker.enter();
                assert!(in_guest(me));
            }
            assert!(in_guest(me), "the inner call's end ended the outer mark");
        }
        assert!(!in_guest(me));
        ticker.stop();
    }
}
