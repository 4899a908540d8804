//! How much network one plugin instance may still use: its grants, the per-call and
//! per-context-per-minute quotas (`limits.max_capability_calls`,
//! `limits.capability_calls_per_minute`), the timeout of one action (never past the plugin's
//! deadline), and the counters every
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

/// Network capability calls of one plugin in one agent context: those of the current minute
/// and of the one before it, which together bound the calls of the last 60 s
/// ([`MinuteWindow::admit`]).
#[derive(Debug, Default)]
pub struct MinuteWindow {
    pub minute: u64,
    pub used: u32,
    /// Calls in the minute before `minute`.
    pub before: u32,
}

const MINUTE_MS: u64 = 60_000;

impl MinuteWindow {
    /// Count one more call at `now_ms` (Unix milliseconds) if the last 60 s leave room for it
    /// under `per_minute`. A sliding window: this minute's calls plus the previous minute's,
    /// weighted by the part of it that lies in the last 60 s (its calls taken as spread
    /// evenly). Counting calendar minutes alone let a plugin make twice its quota within a
    /// second across a minute's end.
    pub fn admit(&mut self, now_ms: u64, per_minute: u32) -> bool {
        let minute = now_ms / MINUTE_MS;
        if minute != self.minute {
            self.before = if minute == self.minute + 1 {
                self.used
            } else {
                0
            };
            self.used = 0;
            self.minute = minute;
        }
        let into = now_ms % MINUTE_MS;
        let last_60s =
            u64::from(self.before) * (MINUTE_MS - into) + (u64::from(self.used) + 1) * MINUTE_MS;
        if last_60s > u64::from(per_minute) * MINUTE_MS {
            return false;
        }
        self.used += 1;
        true
    }
}

/// Unix milliseconds, the clock windows count in.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// One plugin's per-context minute windows, shared by every instance serving a context.
#[derive(Debug, Default)]
pub struct QuotaWindows(Mutex<HashMap<String, Arc<Mutex<MinuteWindow>>>>);

impl QuotaWindows {
    /// Contexts tracked before windows that no longer count are dropped.
    const PRUNE_AT: usize = 10_000;

    /// The window of the context `scope`.
    pub fn for_scope(&self, scope: &str) -> Arc<Mutex<MinuteWindow>> {
        let mut windows = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if windows.len() >= Self::PRUNE_AT {
            // A window last used before the previous minute counts nothing any more.
            let minute = now_ms() / MINUTE_MS;
            windows.retain(|_, w| w.lock().is_ok_and(|w| w.minute + 1 >= minute));
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

    /// `rates.current` for `plugin`, ending by `until` at the latest. A kept rate answers at
    /// once; a read of the mirror is bounded like any action. Not counted against the network
    /// quotas: it reads, and the mirror is asked once for every plugin of the host.
    pub fn exchange_rate(
        &mut self,
        plugin: &str,
        until: Option<Instant>,
    ) -> Result<super::ExchangeRate, CapabilityError> {
        if !self.granted.iter().any(|c| c == Capability::Rates.as_str()) {
            self.counters.refusals.fetch_add(1, Ordering::Relaxed);
            return Err(CapabilityError::NotGranted {
                capability: Capability::Rates.as_str(),
                plugin: plugin.to_owned(),
            });
        }
        let timeout = self.timeout_until(until)?;
        let actions = self.actions.clone().ok_or(CapabilityError::NoNetwork)?;
        self.counters.calls.fetch_add(1, Ordering::Relaxed);
        actions.exchange_rate(timeout)
    }

    /// The timeout of an action started now: its own (`limits.capability_timeout_ms`), cut
    /// to what is left before `until` (the plugin's deadline, within the tool call's plugin
    /// budget); refused when nothing is left.
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
        let admitted = self
            .window
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .admit(now_ms(), self.per_minute);
        if !admitted {
            return refused(
                &self.counters,
                CapabilityError::PerMinuteQuota(self.per_minute),
            );
        }
        self.used_in_call += 1;
        self.counters.calls.fetch_add(1, Ordering::Relaxed);
        Ok(actions)
    }
}

#[cfg(test)]
mod tests {
    use super::{MinuteWindow, MINUTE_MS};

    fn calls(window: &mut MinuteWindow, at_ms: u64, tries: u32, per_minute: u32) -> u32 {
        (0..tries)
            .filter(|_| window.admit(at_ms, per_minute))
            .count() as u32
    }

    /// The attack: the whole quota just before a minute ends, again just after. Calendar
    /// minutes admitted both bursts; the sliding window admits none of the second.
    #[test]
    fn a_burst_across_a_minutes_end_gets_one_quota() {
        let mut window = MinuteWindow::default();
        let end = 1_000 * MINUTE_MS;
        assert_eq!(calls(&mut window, end - 100, 10, 5), 5);
        assert_eq!(calls(&mut window, end + 100, 10, 5), 0);
        // As the previous minute slides out of the last 60 s, room comes back (its 5 calls
        // are taken as spread over it): 1 at 12.1 s in, 5 in all by its end.
        assert_eq!(calls(&mut window, end + 12_100, 10, 5), 1);
        assert_eq!(calls(&mut window, end + MINUTE_MS - 1, 10, 5), 3);
        assert_eq!(window.used, 4);
        // A minute with nothing before it has the whole quota; a gap of minutes forgets.
        assert_eq!(calls(&mut window, end + 3 * MINUTE_MS, 10, 5), 5);
        let mut fresh = MinuteWindow::default();
        assert_eq!(calls(&mut fresh, 7 * MINUTE_MS + 59_999, 10, 5), 5);
    }

    /// Calls a few seconds apart share one quota whether or not a minute ends between them.
    #[test]
    fn calls_seconds_apart_share_the_quota_at_any_offset() {
        for start in (0..MINUTE_MS).step_by(997) {
            let mut window = MinuteWindow::default();
            let at = 500 * MINUTE_MS + start;
            assert_eq!(calls(&mut window, at, 3, 5), 3, "{start}");
            assert_eq!(calls(&mut window, at + 2_000, 3, 5), 2, "{start}");
            assert_eq!(calls(&mut window, at + 4_000, 3, 5), 0, "{start}");
        }
    }
}
