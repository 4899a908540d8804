//! How much network one plugin instance may still use: its grants, the per-call and
//! per-context-per-minute quotas (`limits.max_capability_calls`,
//! `limits.capability_calls_per_minute`), the timeout of one action (never past the tool
//! call's plugin budget), and the counters every
//! use and refusal lands in. A granted, in-quota call goes to the [`HederaActions`]; anything
//! else is refused with a message naming the limit. No SDK and no sandbox type lives here.

use super::actions::{checked_memo, checked_message, CapabilityError, HederaActions};
use super::Capability;
use crate::model::limits::PluginLimits;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Capability calls made and refused by one plugin (all its instances).
#[derive(Debug, Default)]
pub struct CapabilityCounters {
    pub calls: AtomicU64,
    pub refusals: AtomicU64,
}

/// Network capability calls of one plugin in one agent context within the current minute.
#[derive(Debug, Default)]
pub struct MinuteWindow {
    pub minute: u64,
    pub used: u32,
}

/// The minute (since the Unix epoch) windows count in.
fn current_minute() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 60)
}

/// One plugin's per-context minute windows, shared by every instance serving a context.
#[derive(Debug, Default)]
pub struct QuotaWindows(Mutex<HashMap<String, Arc<Mutex<MinuteWindow>>>>);

impl QuotaWindows {
    /// Contexts tracked before windows of past minutes are dropped.
    const PRUNE_AT: usize = 10_000;

    /// The window of the context `scope`.
    pub fn for_scope(&self, scope: &str) -> Arc<Mutex<MinuteWindow>> {
        let mut windows = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if windows.len() >= Self::PRUNE_AT {
            let minute = current_minute();
            windows.retain(|_, w| w.lock().is_ok_and(|w| w.minute == minute));
        }
        windows.entry(scope.to_owned()).or_default().clone()
    }
}

/// One instance's grants and what is left of its quotas.
pub struct CapabilityQuota {
    actions: Option<Arc<dyn HederaActions>>,
    granted: Arc<[String]>,
    timeout: Duration,
    per_call: u32,
    used_in_call: u32,
    per_minute: u32,
    window: Arc<Mutex<MinuteWindow>>,
    counters: Arc<CapabilityCounters>,
}

impl CapabilityQuota {
    pub fn new(
        actions: Option<Arc<dyn HederaActions>>,
        granted: Arc<[String]>,
        limits: &PluginLimits,
        window: Arc<Mutex<MinuteWindow>>,
        counters: Arc<CapabilityCounters>,
    ) -> Self {
        CapabilityQuota {
            actions,
            granted,
            timeout: Duration::from_millis(limits.capability_timeout_ms),
            per_call: limits.max_capability_calls,
            used_in_call: 0,
            per_minute: limits.capability_calls_per_minute,
            window,
            counters,
        }
    }

    /// A new guest call: its own per-call quota.
    pub fn begin_call(&mut self) {
        self.used_in_call = 0;
    }

    /// `hedera.submit-topic-message` for `plugin`, ending by `until` at the latest.
    pub fn submit_topic_message(
        &mut self,
        plugin: &str,
        topic_id: &str,
        message: &str,
        until: Option<Instant>,
    ) -> Result<String, CapabilityError> {
        let timeout = self.timeout_until(until)?;
        let actions = self.take(Capability::SubmitTopicMessage, plugin)?;
        let (topic, message) = checked_message(topic_id, message)?;
        actions.submit_topic_message(topic, message, timeout)
    }

    /// `hedera.create-topic` for `plugin`, ending by `until` at the latest.
    pub fn create_topic(
        &mut self,
        plugin: &str,
        memo: &str,
        until: Option<Instant>,
    ) -> Result<String, CapabilityError> {
        let timeout = self.timeout_until(until)?;
        let actions = self.take(Capability::CreateTopic, plugin)?;
        actions.create_topic(checked_memo(memo)?, timeout)
    }

    /// The timeout of an action started now: its own (`limits.capability_timeout_ms`), cut
    /// to what is left before `until` (the end of the tool call's plugin budget); refused
    /// when nothing is left.
    fn timeout_until(&self, until: Option<Instant>) -> Result<Duration, CapabilityError> {
        let Some(until) = until else {
            return Ok(self.timeout);
        };
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            self.counters.refusals.fetch_add(1, Ordering::Relaxed);
            return Err(CapabilityError::BudgetSpent);
        }
        Ok(self.timeout.min(left))
    }

    /// Take one call of `capability` from the quotas, or say why not.
    fn take(
        &mut self,
        capability: Capability,
        plugin: &str,
    ) -> Result<Arc<dyn HederaActions>, CapabilityError> {
        if !self.granted.iter().any(|c| c == capability.as_str()) {
            return Err(CapabilityError::NotGranted {
                capability: capability.as_str(),
                plugin: plugin.to_owned(),
            });
        }
        let actions = self.actions.clone().ok_or(CapabilityError::NoOperator)?;
        let refused = |counters: &CapabilityCounters, why: CapabilityError| {
            counters.refusals.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(plugin, "capability call refused: {why}");
            Err(why)
        };
        if self.used_in_call >= self.per_call {
            return refused(&self.counters, CapabilityError::PerCallQuota(self.per_call));
        }
        {
            let mut window = self.window.lock().unwrap_or_else(|e| e.into_inner());
            let minute = current_minute();
            if window.minute != minute {
                *window = MinuteWindow { minute, used: 0 };
            }
            if window.used >= self.per_minute {
                drop(window);
                return refused(
                    &self.counters,
                    CapabilityError::PerMinuteQuota(self.per_minute),
                );
            }
            window.used += 1;
        }
        self.used_in_call += 1;
        self.counters.calls.fetch_add(1, Ordering::Relaxed);
        Ok(actions)
    }
}
