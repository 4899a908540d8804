//! Calls parked on a policy's needs-approval verdict (contract 0.2.0) until a human decides.
//!
//! The lifecycle hands each request to an [`Approver`] and waits for its [`Decision`]; only
//! an approval lets the call go on. [`Approvals`] is the approver of `hak serve` and `hak mcp`:
//! it parks the call under a fresh id, lists it (`GET /v1/approvals`, `hak approvals list`)
//! and wakes it when an approver decides (`POST /v1/approvals/{id}/approve|deny`), when the
//! request times out, or when the server shuts down. Everything but an approval blocks the
//! call: a denial, a timeout, a full queue, a host with no approver. Bounded: at most
//! `max_pending` parked calls, each for at most `max_timeout_seconds`. A parked call gives up
//! its server call slot while it waits ([`CallSlot`]): waiting uses no CPU, and an agent must
//! not be able to take every `[server] max_concurrent_calls` slot by asking for approvals.
//! What must not live here: HTTP (the server's routes call [`Approvals::decide`]), or any
//! knowledge of plugins beyond the request they made.

use crate::model::facts::Facts;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// What a policy asked for, with what the approver needs to judge it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ask {
    /// The manifest entry that asked.
    pub plugin: String,
    /// The policy's own name (`describe`).
    pub policy_name: String,
    pub tool: String,
    pub stage: &'static str,
    /// The policy's message: what the approver is shown.
    pub message: String,
    pub code: Option<String>,
    pub details: Value,
    /// The authenticated agent, when there is one.
    pub agent: Option<String>,
    /// The agent context (scope key).
    pub context: String,
    /// The call's normalised params (absent at pre-tool-execution).
    pub normalised_params: Option<Value>,
    pub facts: Option<Facts>,
    /// What the policy asked for (0: the host's default), before the host's cap.
    #[serde(skip)]
    pub timeout_seconds: u32,
}

/// How an approver answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "decision")]
pub enum Decision {
    /// The call goes on.
    Approved {
        by: String,
        via: &'static str,
        note: Option<String>,
    },
    /// The call is blocked.
    Denied {
        by: String,
        via: &'static str,
        note: Option<String>,
    },
    /// Nobody decided in time: blocked.
    Timeout,
    /// Nobody could be asked (no approver here, too many parked calls, shutting down): blocked.
    Unavailable { reason: String },
}

impl Decision {
    pub fn approved(&self) -> bool {
        matches!(self, Decision::Approved { .. })
    }

    /// `approved`, `denied`, `timeout` or `unavailable` (decision log, metrics).
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Approved { .. } => "approved",
            Decision::Denied { .. } => "denied",
            Decision::Timeout => "timeout",
            Decision::Unavailable { .. } => "unavailable",
        }
    }
}

/// A decision with the id it was asked under (`None` when nothing was parked).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub id: Option<String>,
    #[serde(flatten)]
    pub decision: Decision,
}

/// Who decides a needs-approval verdict. Blocks the calling thread until it knows.
pub trait Approver: Send + Sync {
    fn decide(&self, ask: Ask) -> Outcome;
}

/// `[approvals]` of the manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalSettings {
    /// Used when a policy asks for 0 seconds.
    pub default_timeout_seconds: u32,
    /// No request waits longer.
    pub max_timeout_seconds: u32,
    /// Parked calls at once; one more is refused (blocked) at once.
    pub max_pending: usize,
    /// `hak mcp`: ask the human behind an MCP client that supports elicitation. The client is
    /// trusted to put the question to its user, not to the agent; `false` blocks instead.
    pub mcp_elicitation: bool,
    /// How many distinct approvers must approve a parked call before it goes on; one denial
    /// blocks it at once.
    pub quorum: usize,
    /// Whether the admin token approves (as the approver `admin`); `false`: only
    /// `[[approvers]]` (and an MCP client asked by elicitation) do.
    pub admin_approves: bool,
}

impl Default for ApprovalSettings {
    fn default() -> Self {
        ApprovalSettings {
            default_timeout_seconds: 120,
            max_timeout_seconds: 900,
            max_pending: 256,
            mcp_elicitation: true,
            quorum: 1,
            admin_approves: true,
        }
    }
}

impl ApprovalSettings {
    pub fn validate(&self) -> Result<(), String> {
        if self.max_timeout_seconds == 0 || self.default_timeout_seconds == 0 {
            return Err("[approvals] timeouts must be at least 1 second".into());
        }
        if self.default_timeout_seconds > self.max_timeout_seconds {
            return Err(format!(
                "[approvals] default_timeout_seconds = {} exceeds max_timeout_seconds = {}",
                self.default_timeout_seconds, self.max_timeout_seconds
            ));
        }
        if self.max_pending > 100_000 {
            return Err("[approvals] max_pending may be at most 100000".into());
        }
        if !(1..=16).contains(&self.quorum) {
            return Err(format!(
                "[approvals] quorum must be between 1 and 16, got {}",
                self.quorum
            ));
        }
        Ok(())
    }

    fn timeout(&self, asked: u32) -> Duration {
        let seconds = if asked == 0 {
            self.default_timeout_seconds
        } else {
            asked
        };
        Duration::from_secs(u64::from(seconds.clamp(1, self.max_timeout_seconds.max(1))))
    }
}

/// A parked call as approvers see it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub id: String,
    #[serde(flatten)]
    pub ask: Ask,
    /// RFC 3339.
    pub asked_at: String,
    pub expires_at: String,
    /// How many distinct approvers must approve it.
    pub quorum: usize,
    /// Who approved it so far (fewer than `quorum`).
    pub approved_by: Vec<String>,
}

struct Parked {
    view: Mutex<Pending>,
    decision: Mutex<Option<Decision>>,
    woken: Condvar,
}

impl Parked {
    fn view(&self) -> Pending {
        self.view.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Why a decision was not taken.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecideError {
    #[error("no call is awaiting approval under id {0:?} (decided, timed out or never asked)")]
    Unknown(String),
    #[error("{0} already approved this call; another approver must")]
    AlreadyApproved(String),
}

/// What a decision did.
#[derive(Clone, Debug)]
pub enum Decided {
    /// The call's decision is taken (approved by the quorum, or denied).
    Final(Pending),
    /// One more approval counted; the call still waits for the rest of the quorum.
    Counted(Pending),
}

/// The parked calls of one host.
pub struct Approvals {
    settings: ApprovalSettings,
    parked: Mutex<HashMap<String, Arc<Parked>>>,
    closed: std::sync::atomic::AtomicBool,
}

impl Approvals {
    pub fn new(settings: ApprovalSettings) -> Self {
        Approvals {
            settings,
            parked: Mutex::new(HashMap::new()),
            closed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub fn settings(&self) -> ApprovalSettings {
        self.settings
    }

    /// The calls awaiting a decision, oldest first.
    pub fn pending(&self) -> Vec<Pending> {
        let parked = self.parked.lock().unwrap_or_else(|e| e.into_inner());
        let mut list: Vec<Pending> = parked.values().map(|p| p.view()).collect();
        list.sort_by(|a, b| a.asked_at.cmp(&b.asked_at).then(a.id.cmp(&b.id)));
        list
    }

    /// Approve or deny the call parked under `id`. `by` names the approver (recorded in the
    /// decision log), `via` how they answered (`admin-api`, `mcp-elicitation`). One denial
    /// blocks the call; it goes on once `quorum` distinct approvers approved it (each approver
    /// counts once; the approvers are named in the decision, in the order they approved).
    pub fn decide(
        &self,
        id: &str,
        approve: bool,
        by: &str,
        via: &'static str,
        note: Option<String>,
    ) -> Result<Decided, DecideError> {
        let parked = self
            .parked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
            .ok_or_else(|| DecideError::Unknown(id.to_owned()))?;
        let mut decision = parked.decision.lock().unwrap_or_else(|e| e.into_inner());
        if decision.is_some() {
            return Err(DecideError::Unknown(id.to_owned()));
        }
        let mut view = parked.view.lock().unwrap_or_else(|e| e.into_inner());
        if !approve {
            *decision = Some(Decision::Denied {
                by: by.to_owned(),
                via,
                note,
            });
            parked.woken.notify_all();
            return Ok(Decided::Final(view.clone()));
        }
        if view.approved_by.iter().any(|b| b == by) {
            return Err(DecideError::AlreadyApproved(by.to_owned()));
        }
        view.approved_by.push(by.to_owned());
        if view.approved_by.len() < view.quorum {
            tracing::info!(
                approval = id,
                by,
                "approved ({} of {})",
                view.approved_by.len(),
                view.quorum
            );
            return Ok(Decided::Counted(view.clone()));
        }
        *decision = Some(Decision::Approved {
            by: view.approved_by.join(", "),
            via,
            note,
        });
        parked.woken.notify_all();
        Ok(Decided::Final(view.clone()))
    }

    /// Deny every parked call and every later request (shutdown).
    pub fn close(&self, reason: &str) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        let parked = self.parked.lock().unwrap_or_else(|e| e.into_inner());
        for p in parked.values() {
            let mut decision = p.decision.lock().unwrap_or_else(|e| e.into_inner());
            decision.get_or_insert_with(|| Decision::Unavailable {
                reason: reason.to_owned(),
            });
            p.woken.notify_all();
        }
    }

    /// Park `ask` and wait for its decision. The id is returned in the outcome, and is what
    /// approvers decide by.
    pub fn park(&self, ask: Ask) -> Outcome {
        self.park_with(ask, |_| {})
    }

    /// [`Self::park`], calling `asked` with the id once the call is listed (so a face can tell
    /// an approver, e.g. by MCP elicitation, while it waits).
    pub fn park_with(&self, ask: Ask, asked: impl FnOnce(&Pending)) -> Outcome {
        let timeout = self.settings.timeout(ask.timeout_seconds);
        let id = new_id();
        let now = SystemTime::now();
        let parked = Arc::new(Parked {
            view: Mutex::new(Pending {
                id: id.clone(),
                ask,
                asked_at: rfc3339(now),
                expires_at: rfc3339(now + timeout),
                quorum: self.settings.quorum.max(1),
                approved_by: Vec::new(),
            }),
            decision: Mutex::new(None),
            woken: Condvar::new(),
        });
        {
            let mut all = self.parked.lock().unwrap_or_else(|e| e.into_inner());
            let refused = if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
                Some("the server is shutting down".to_owned())
            } else if all.len() >= self.settings.max_pending {
                Some(format!(
                    "{} calls already await approval (the [approvals] max_pending limit)",
                    all.len()
                ))
            } else {
                None
            };
            if let Some(reason) = refused {
                return Outcome {
                    id: None,
                    decision: Decision::Unavailable { reason },
                };
            }
            all.insert(id.clone(), parked.clone());
        }
        let view = parked.view();
        tracing::info!(
            approval = %id,
            plugin = %view.ask.plugin,
            tool = %view.ask.tool,
            "call awaits approval: {}",
            crate::logging::one_line(&view.ask.message)
        );
        asked(&view);
        CallSlot::release_for_park();
        let deadline = Instant::now() + timeout;
        // Waiting must not hold a server worker thread (`hak serve` runs calls on them).
        let decision = crate::blocking::off_worker(|| {
            let mut decision = parked.decision.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if decision.is_some() {
                    break;
                }
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    *decision = Some(Decision::Timeout);
                    break;
                }
                decision = parked
                    .woken
                    .wait_timeout(decision, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            decision.clone().expect("set above")
        });
        self.parked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        if matches!(decision, Decision::Approved { .. }) {
            CallSlot::retake_after_park();
        }
        Outcome {
            id: Some(id),
            decision,
        }
    }
}

impl Approver for Approvals {
    fn decide(&self, ask: Ask) -> Outcome {
        self.park(ask)
    }
}

/// A face's slot for one running call (a permit of its `max_concurrent_calls` semaphore).
/// The call runs inside [`CallSlot::hold_during`]; a park on that thread hands the slot back
/// while it waits and, if the call is approved, takes one again before the call goes on (a
/// denied or timed-out call just ends).
pub struct CallSlot {
    semaphore: Arc<tokio::sync::Semaphore>,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
    runtime: tokio::runtime::Handle,
}

thread_local! {
    static CALL_SLOT: std::cell::RefCell<Option<CallSlot>> = const { std::cell::RefCell::new(None) };
}

impl CallSlot {
    /// Wait for a slot of `semaphore` (`None` once it is closed: the face is shutting down).
    pub async fn acquire(semaphore: &Arc<tokio::sync::Semaphore>) -> Option<CallSlot> {
        let permit = semaphore.clone().acquire_owned().await.ok()?;
        Some(CallSlot {
            semaphore: semaphore.clone(),
            permit: Some(permit),
            runtime: tokio::runtime::Handle::current(),
        })
    }

    /// Run the call `f` on this thread holding the slot (released when `f` returns).
    pub fn hold_during<R>(self, f: impl FnOnce() -> R) -> R {
        struct Clear;
        impl Drop for Clear {
            fn drop(&mut self) {
                CALL_SLOT.with(|slot| slot.borrow_mut().take());
            }
        }
        CALL_SLOT.with(|slot| *slot.borrow_mut() = Some(self));
        let _clear = Clear;
        f()
    }

    /// Give this thread's slot back while a call is parked.
    fn release_for_park() {
        CALL_SLOT.with(|slot| {
            if let Some(slot) = slot.borrow_mut().as_mut() {
                slot.permit = None;
            }
        });
    }

    /// Take a slot again for a call that goes on (waiting, like any call, for a free one).
    fn retake_after_park() {
        let Some(mut slot) = CALL_SLOT.with(|slot| slot.borrow_mut().take()) else {
            return;
        };
        let semaphore = slot.semaphore.clone();
        slot.permit = crate::blocking::block_on(&slot.runtime, semaphore.acquire_owned()).ok();
        CALL_SLOT.with(|cell| *cell.borrow_mut() = Some(slot));
    }
}

/// 16 random bytes, hex: ids cannot be guessed from one another.
fn new_id() -> String {
    let mut bytes = [0u8; 16];
    rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut bytes);
    hex::encode(bytes)
}

fn rfc3339(t: SystemTime) -> String {
    time::OffsetDateTime::from(t)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(timeout_seconds: u32) -> Ask {
        Ask {
            plugin: "big".into(),
            policy_name: "Big".into(),
            tool: "transfer_hbar_tool".into(),
            stage: "post_params_normalization",
            message: "large".into(),
            code: None,
            details: Value::Null,
            agent: None,
            context: "ctx".into(),
            normalised_params: None,
            facts: None,
            timeout_seconds,
        }
    }

    #[test]
    fn an_approval_wakes_the_parked_call() {
        let approvals = Arc::new(Approvals::new(ApprovalSettings::default()));
        let a = approvals.clone();
        let waiter = std::thread::spawn(move || a.park(ask(30)));
        let id = loop {
            if let Some(p) = approvals.pending().first() {
                break p.id.clone();
            }
            std::thread::yield_now();
        };
        approvals
            .decide(&id, true, "alice", "admin-api", None)
            .unwrap();
        let outcome = waiter.join().unwrap();
        assert_eq!(outcome.id.as_deref(), Some(id.as_str()));
        assert!(outcome.decision.approved());
        assert!(approvals.pending().is_empty());
        assert_eq!(
            approvals
                .decide(&id, false, "bob", "admin-api", None)
                .map(|_| ()),
            Err(DecideError::Unknown(id))
        );
    }

    #[test]
    fn no_decision_in_time_is_a_timeout_and_a_full_queue_refuses() {
        let approvals = Approvals::new(ApprovalSettings {
            default_timeout_seconds: 1,
            max_timeout_seconds: 1,
            max_pending: 0,
            ..ApprovalSettings::default()
        });
        let refused = approvals.park(ask(0));
        assert!(matches!(refused.decision, Decision::Unavailable { .. }));
        let approvals = Approvals::new(ApprovalSettings {
            max_pending: 1,
            max_timeout_seconds: 1,
            ..ApprovalSettings::default()
        });
        // Asked for an hour, capped at a second.
        assert_eq!(approvals.park(ask(3600)).decision, Decision::Timeout);
    }

    #[test]
    fn closing_denies_what_waits() {
        let approvals = Arc::new(Approvals::new(ApprovalSettings::default()));
        let a = approvals.clone();
        let waiter = std::thread::spawn(move || a.park(ask(60)));
        while approvals.pending().is_empty() {
            std::thread::yield_now();
        }
        approvals.close("shutting down");
        assert!(matches!(
            waiter.join().unwrap().decision,
            Decision::Unavailable { .. }
        ));
        assert!(matches!(
            approvals.park(ask(60)).decision,
            Decision::Unavailable { .. }
        ));
    }
}
