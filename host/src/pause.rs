//! The kill switch: while paused, every tool that changes the ledger (any tool but a query:
//! value moves and everything that could authorise one later — allowances, keys, schedules)
//! is blocked at once with the pause's reason; queries still answer. The pause is kept in the
//! state store (a pad no plugin can name), so it survives a restart and is shared by the
//! replicas of a shared store (`sqlite`, `redis`), which read it back every
//! [`REFRESH_EVERY`]. Pausing takes effect in this process first, then is recorded (a store
//! that cannot record it leaves this process paused and says so); resuming is recorded first,
//! then takes effect (a store that cannot record it leaves every process paused). A shared
//! store whose pause cannot be read for [`UNKNOWN_AFTER`] counts as paused until it can be:
//! another replica may have paused meanwhile.
//!
//! A call checks the switch with one atomic load. What must not live here: the HTTP routes,
//! the decision log and metrics (the host says who paused), denying parked calls (the
//! approvals').

use crate::state_store::{now_ms, PadKey, StateBackend, StateError};
use arc_swap::ArcSwapOption;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a replica of a shared store reads the pause back.
pub const REFRESH_EVERY: Duration = Duration::from_millis(500);
/// How long a shared store's pause may go unread before this replica counts as paused.
pub const UNKNOWN_AFTER: Duration = Duration::from_secs(5);
/// The longest reason kept, in characters.
pub const MAX_REASON_CHARS: usize = 1024;

/// Where the pause is kept: a scope and plugin name no agent context or plugin has (both
/// start with a colon, which names never do).
fn pad() -> PadKey {
    PadKey {
        scope: ":host".into(),
        plugin: ":kill-switch".into(),
    }
}
const KEY: &str = "paused";
/// The pad's byte cap for the record.
const CAP: usize = 16 * 1024;

/// A pause in effect: why, who, when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Paused {
    pub reason: String,
    /// The admin who paused (`admin` for the admin token), or `hak` for a pause the host
    /// assumed because the store could not be read.
    pub by: String,
    /// RFC 3339.
    pub at: String,
    pub at_ms: u64,
}

impl Paused {
    /// What a blocked call is told.
    pub fn message(&self) -> String {
        format!(
            "hak is paused (kill switch, by {} at {}): {}",
            self.by, self.at, self.reason
        )
    }
}

/// What a change of the switch did.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    /// Paused here, but other replicas of the store do not know it.
    #[error("paused on this process, but the state store did not record it ({0}): other replicas and a restart do not see the pause")]
    PausedHereOnly(StateError),
    /// The store could not record the resume: still paused everywhere.
    #[error("still paused: the state store did not record the resume ({0})")]
    StillPaused(StateError),
}

/// The switch of one host.
pub struct Switch {
    store: Arc<dyn StateBackend>,
    current: ArcSwapOption<Paused>,
    /// Since when (ms) the store's pause could not be read, and why (a shared store's).
    unreadable: Mutex<Option<(u64, String)>>,
    /// A pause in effect here that the store has not recorded yet: written again at every
    /// refresh, and never undone by reading a store that does not have it.
    unrecorded: Mutex<Option<Arc<Paused>>>,
}

impl Switch {
    /// The switch over `store`, as the store has it (a store that cannot be read at start:
    /// paused until it can).
    pub fn open(store: Arc<dyn StateBackend>) -> Self {
        let switch = Switch {
            store,
            current: ArcSwapOption::empty(),
            unreadable: Mutex::new(None),
            unrecorded: Mutex::new(None),
        };
        if let Err(e) = switch.read() {
            switch.assume(e.to_string());
        }
        switch
    }

    /// The pause in effect, if any: one atomic load.
    pub fn current(&self) -> Option<Arc<Paused>> {
        let guard = self.current.load();
        guard.as_ref().map(Arc::clone)
    }

    /// Whether a pause is in effect (cheaper than [`Self::current`]: no reference taken).
    pub fn is_paused(&self) -> bool {
        self.current.load().is_some()
    }

    /// Pause with `reason`, by `by`. Takes effect here at once.
    pub fn pause(&self, reason: &str, by: &str) -> Result<Arc<Paused>, (Arc<Paused>, SwitchError)> {
        let now = now_ms();
        let paused = Arc::new(Paused {
            reason: reason.chars().take(MAX_REASON_CHARS).collect(),
            by: by.to_owned(),
            at: rfc3339(now),
            at_ms: now,
        });
        self.current.store(Some(paused.clone()));
        match self.record(&paused) {
            Ok(()) => Ok(paused),
            Err(e) => {
                *self.unrecorded.lock().unwrap_or_else(|e| e.into_inner()) = Some(paused.clone());
                Err((paused, SwitchError::PausedHereOnly(e)))
            }
        }
    }

    fn record(&self, paused: &Paused) -> Result<(), StateError> {
        let text = serde_json::to_string(paused).unwrap_or_default();
        self.store.set(&pad(), KEY, &text, CAP)
    }

    /// Resume: recorded in the store first, then in effect here.
    pub fn resume(&self) -> Result<(), SwitchError> {
        self.store
            .delete(&pad(), KEY)
            .map_err(SwitchError::StillPaused)?;
        *self.unrecorded.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.current.store(None);
        *self.unreadable.lock().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }

    /// Read the store's pause back (a replica of a shared store, every [`REFRESH_EVERY`]).
    /// Returns the pause in effect when this read paused a process that was running.
    pub fn refresh(&self) -> Option<Arc<Paused>> {
        let was = self.is_paused();
        let unrecorded = self
            .unrecorded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(paused) = unrecorded {
            if self.record(&paused).is_ok() {
                tracing::info!("the pause made while the state store failed is recorded now");
                let mut unrecorded = self.unrecorded.lock().unwrap_or_else(|e| e.into_inner());
                if unrecorded.as_ref().is_some_and(|u| Arc::ptr_eq(u, &paused)) {
                    *unrecorded = None;
                }
            }
        }
        match self.read() {
            Ok(()) => {}
            Err(e) => {
                let now = now_ms();
                let since = {
                    let mut unreadable = self.unreadable.lock().unwrap_or_else(|e| e.into_inner());
                    unreadable.get_or_insert_with(|| (now, e.to_string())).0
                };
                if now.saturating_sub(since) >= UNKNOWN_AFTER.as_millis() as u64 && !was {
                    self.assume(e.to_string());
                }
            }
        }
        let now = self.current();
        if was {
            None
        } else {
            now
        }
    }

    /// The store's pause into `current`.
    fn read(&self) -> Result<(), StateError> {
        let stored = self.store.get(&pad(), KEY)?;
        *self.unreadable.lock().unwrap_or_else(|e| e.into_inner()) = None;
        if stored.is_none()
            && self
                .unrecorded
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_some()
        {
            return Ok(());
        }
        // A record this version cannot read is still a pause.
        let paused = stored.map(|text| {
            Arc::new(serde_json::from_str(&text).unwrap_or_else(|_| Paused {
                reason: "a pause recorded in the state store in a form this hak cannot read".into(),
                by: "unknown".into(),
                at: String::new(),
                at_ms: 0,
            }))
        });
        if self.current.load().as_deref() != paused.as_deref() {
            self.current.store(paused);
        }
        Ok(())
    }

    /// Count as paused because the store's pause cannot be read.
    fn assume(&self, why: String) {
        let now = now_ms();
        self.current.store(Some(Arc::new(Paused {
            reason: format!(
                "the kill switch's state cannot be read from the state store ({why}); calls that change the ledger wait until it can"
            ),
            by: "hak".into(),
            at: rfc3339(now),
            at_ms: now,
        })));
    }
}

fn rfc3339(ms: u64) -> String {
    time::OffsetDateTime::from(std::time::UNIX_EPOCH + Duration::from_millis(ms))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state_store::MemoryBackend;

    /// Two switches over one store stand for two replicas of a shared store (the failures of
    /// a real shared store are `tests/all/kill_switch.rs`'s, on Redis).
    #[test]
    fn a_pause_is_read_back_by_another_switch_of_the_store_and_a_restart_starts_paused() {
        let store: Arc<dyn StateBackend> = Arc::new(MemoryBackend::default());
        let one = Switch::open(store.clone());
        let two = Switch::open(store.clone());
        assert!(!one.is_paused());
        let paused = one.pause("incident 42", "alice").unwrap();
        assert_eq!(one.current().as_deref(), Some(&*paused));
        assert!(!two.is_paused(), "until it reads the store back");
        assert_eq!(two.refresh().as_deref(), Some(&*paused), "newly paused");
        assert!(two.refresh().is_none(), "told once");
        assert_eq!(
            Switch::open(store.clone()).current().as_deref(),
            Some(&*paused),
            "a restart starts paused"
        );
        two.resume().unwrap();
        assert!(!two.is_paused());
        one.refresh();
        assert!(!one.is_paused(), "the resume read back");
        assert!(Switch::open(store).current().is_none());
    }

    #[test]
    fn a_record_this_version_cannot_read_is_a_pause() {
        let store: Arc<dyn StateBackend> = Arc::new(MemoryBackend::default());
        store
            .set(&pad(), KEY, "{\"paused\": \"yes\"}", CAP)
            .unwrap();
        let switch = Switch::open(store);
        assert!(switch.current().unwrap().reason.contains("cannot read"));
    }
}
