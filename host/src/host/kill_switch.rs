//! The host's kill switch ([`crate::pause`]): pausing denies every call parked for approval,
//! and every change is counted, logged and written to the decision log with who made it; a
//! replica of a shared store reads the pause back in the background. What must not live
//! here: where the pause is kept (the switch's), the routes (`serve`).

use super::{Host, HostInner};
use crate::pause::{Paused, SwitchError, REFRESH_EVERY};
use std::sync::{Arc, Weak};

impl Host {
    /// The pause in effect, if any.
    pub fn paused(&self) -> Option<Arc<Paused>> {
        self.inner.pause.current()
    }

    /// Pause every tool that changes the ledger, with `reason`, by `by`. In effect here at
    /// once; the error says when the state store did not record it (other replicas and a
    /// restart do not see it until it does).
    pub fn pause(&self, reason: &str, by: &str) -> Result<Arc<Paused>, (Arc<Paused>, SwitchError)> {
        let done = self.inner.pause.pause(reason, by);
        let paused = match &done {
            Ok(p) | Err((p, _)) => p.clone(),
        };
        paused_here(&self.inner, &paused, "api");
        done
    }

    /// Resume, by `by`: recorded in the state store first (an error leaves hak paused).
    pub fn resume(&self, by: &str) -> Result<(), SwitchError> {
        self.inner.pause.resume()?;
        self.inner.metrics.kill_switch("resumed");
        tracing::warn!(
            by,
            "kill switch off: calls that change the ledger run again"
        );
        if let Some(log) = &self.inner.decisions {
            log.event(serde_json::json!({"event": "resume", "by": by, "source": "api"}));
        }
        Ok(())
    }

    /// Read the pause back from a store shared with other processes, every
    /// [`REFRESH_EVERY`], for as long as the host lives.
    pub(super) fn watch_pause(&self) {
        if !self.inner.state.shared() {
            return;
        }
        let host: Weak<HostInner> = Arc::downgrade(&self.inner);
        let spawned = std::thread::Builder::new()
            .name("hak-kill-switch".into())
            .spawn(move || loop {
                std::thread::sleep(REFRESH_EVERY);
                let Some(inner) = host.upgrade() else { return };
                let was = inner.pause.is_paused();
                if let Some(paused) = inner.pause.refresh() {
                    paused_here(&inner, &paused, "state-store");
                } else if was && !inner.pause.is_paused() {
                    inner.metrics.kill_switch("resumed");
                    tracing::warn!("kill switch off (read from the state store)");
                }
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start reading the kill switch back from the state store: {e}");
        }
    }
}

/// What a pause does in this process beside blocking new calls: parked calls are denied,
/// and the pause is counted, logged and recorded.
fn paused_here(inner: &HostInner, paused: &Paused, source: &'static str) {
    inner.metrics.kill_switch("paused");
    tracing::warn!(by = %paused.by, source, "kill switch on: {}", paused.reason);
    if let Some(approvals) = inner.approvals.get() {
        let message = paused.message();
        for pending in approvals.pending() {
            let _ = approvals.decide(
                &pending.id,
                false,
                &paused.by,
                "kill-switch",
                Some(message.clone()),
            );
        }
    }
    if let Some(log) = &inner.decisions {
        log.event(serde_json::json!({
            "event": "pause",
            "by": paused.by,
            "reason": paused.reason,
            "pausedAt": paused.at,
            "source": source,
        }));
    }
}
