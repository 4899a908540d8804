//! Settling the budget reservations of a process that stopped mid-call (killed, crashed, a
//! replica that never came back), by what the network knows of their transaction. Before a
//! call's transaction leaves the host the lifecycle records its id with the call's
//! reservations ([`Binding`]); a reservation found unsettled later ([`StateBackend::orphans`])
//! is settled here:
//! - not bound: nothing was sent → released;
//! - bound to a transaction the mirror knows: committed if a record says SUCCESS, released if
//!   it reached consensus and failed (as the call itself would have settled it);
//! - bound to a transaction the mirror does not know: released only once no node can accept
//!   it any more (its valid duration has passed) and the mirror has had [`GRACE_MS`] to catch
//!   up; until then, or while the mirror cannot answer, it stays counted;
//! - handed to a custom strategy (opaque): committed, never released.
//!
//! Never releases what may still execute. What must not live here: how a store finds its
//! orphans (each backend knows whose process is gone) or when a live call settles (the
//! lifecycle).

use crate::mirror::Mirror;
use crate::state_store::{Binding, Orphan, StateBackend, StateError};
use std::time::Duration;

/// How long after a transaction's validity ends the mirror may still not show it (its lag
/// behind consensus), before "unknown" means "never executed".
pub const GRACE_MS: u64 = 180_000;
/// How often a running host looks for reservations of stopped processes.
pub const EVERY: Duration = Duration::from_secs(30);

/// What one pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub committed: usize,
    pub released: usize,
    /// Left counted for a later pass (the mirror does not know the transaction yet, or
    /// cannot answer).
    pub waiting: usize,
}

/// Settle what can be settled of `state`'s orphans at `now_ms`.
pub fn reconcile(
    state: &dyn StateBackend,
    mirror: Option<&Mirror>,
    now_ms: u64,
) -> Result<Report, StateError> {
    let mut report = Report::default();
    for orphan in state.orphans()? {
        match decide(&orphan, mirror, now_ms) {
            Some(commit) => {
                if !state.settle_orphan(&orphan, commit)? {
                    continue; // its process came back and moved it on
                }
                tracing::warn!(
                    "budget reservation {} ({} of {}) left by a process that stopped mid-call: {} ({})",
                    orphan.id.0,
                    orphan.amount,
                    orphan.budget,
                    if commit { "committed" } else { "released" },
                    why(&orphan.binding, commit),
                );
                if commit {
                    report.committed += 1;
                } else {
                    report.released += 1;
                }
            }
            None => report.waiting += 1,
        }
    }
    Ok(report)
}

/// `Some(true)` commit, `Some(false)` release, `None` not yet.
fn decide(orphan: &Orphan, mirror: Option<&Mirror>, now_ms: u64) -> Option<bool> {
    match &orphan.binding {
        Binding::Unbound => Some(false),
        Binding::Opaque => Some(true),
        Binding::Transaction { id, until_ms } => match mirror?.transaction_applied(id) {
            Ok(Some(applied)) => Some(applied),
            Ok(None) if now_ms > until_ms.saturating_add(GRACE_MS) => Some(false),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(
                        "budget reservation {}: the mirror cannot say what became of transaction {id} ({e}); it stays counted",
                        orphan.id.0
                    );
                None
            }
        },
    }
}

fn why(binding: &Binding, commit: bool) -> String {
    match (binding, commit) {
        (Binding::Unbound, _) => "its call had sent nothing".into(),
        (Binding::Opaque, _) => "its transaction went to a custom strategy".into(),
        (Binding::Transaction { id, .. }, true) => format!("transaction {id} applied"),
        (Binding::Transaction { id, .. }, false) => {
            format!(
                "transaction {id} did not apply, or never reached the network before it expired"
            )
        }
    }
}
