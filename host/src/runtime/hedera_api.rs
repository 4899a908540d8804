//! The `hedera` capability import: network actions a plugin may take with the operator's
//! account, each only when the operator granted its capability in the manifest, each bounded
//! in time (`limits.capability_timeout_ms`) and in number (`limits.max_capability_calls` per
//! guest call, `limits.capability_calls_per_minute` per agent context), and counted in the
//! plugin's stats.

use super::bindings::imports::hedera;
use super::plugin::{MinuteWindow, PluginStats};
use super::sandbox::PluginState;
use crate::capabilities::Capability;
use crate::limits::PluginLimits;
use ::hedera::{Client, TopicCreateTransaction, TopicId, TopicMessageSubmitTransaction};
use std::future::Future;
use std::str::FromStr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest HCS message a plugin may submit through the capability (the SDK chunks it).
const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// Longest topic memo the network accepts.
const MAX_MEMO_BYTES: usize = 100;

/// Executes granted network actions with the operator's client.
pub struct HederaCapability {
    client: Client,
    runtime: tokio::runtime::Handle,
}

impl HederaCapability {
    pub fn new(client: Client, runtime: tokio::runtime::Handle) -> Self {
        HederaCapability { client, runtime }
    }

    /// Run network work to completion on the host's network runtime, bounded by `timeout`.
    fn block_on<T>(
        &self,
        timeout: Duration,
        work: impl Future<Output = Result<T, String>>,
    ) -> Result<T, String> {
        let timed = async { tokio::time::timeout(timeout, work).await };
        let result = if tokio::runtime::Handle::try_current().is_ok() {
            tokio::task::block_in_place(|| self.runtime.block_on(timed))
        } else {
            self.runtime.block_on(timed)
        };
        result.map_err(|_| format!("timed out after {timeout:?}"))?
    }

    /// Submit a message and wait for its receipt; the transaction id on success.
    pub fn submit_topic_message(
        &self,
        topic_id: &str,
        message: &str,
        timeout: Duration,
    ) -> Result<String, String> {
        let topic = TopicId::from_str(topic_id)
            .map_err(|e| format!("invalid topic id {topic_id:?}: {e}"))?;
        if message.len() > MAX_MESSAGE_BYTES {
            return Err(format!(
                "message of {} bytes exceeds {MAX_MESSAGE_BYTES}",
                message.len()
            ));
        }
        let client = self.client.clone();
        let message = message.as_bytes().to_vec();
        self.block_on(timeout, async move {
            let mut tx = TopicMessageSubmitTransaction::new();
            tx.topic_id(topic).message(message);
            let response = tx.execute(&client).await.map_err(|e| e.to_string())?;
            response
                .get_receipt(&client)
                .await
                .map_err(|e| e.to_string())?;
            Ok(crate::tools::transaction::kit_transaction_id(
                &response.transaction_id,
            ))
        })
    }

    /// Create a topic with the operator's key as submit key and the operator as auto-renew
    /// account; its id on success.
    pub fn create_topic(&self, memo: &str, timeout: Duration) -> Result<String, String> {
        if memo.len() > MAX_MEMO_BYTES {
            return Err(format!(
                "memo of {} bytes exceeds {MAX_MEMO_BYTES}",
                memo.len()
            ));
        }
        let client = self.client.clone();
        let memo = memo.to_owned();
        self.block_on(timeout, async move {
            let operator = client
                .get_operator_account_id()
                .ok_or("no operator account is configured")?;
            let key = client
                .get_operator_public_key()
                .ok_or("no operator key is configured")?;
            let mut tx = TopicCreateTransaction::new();
            tx.topic_memo(memo)
                .submit_key(key)
                .auto_renew_account_id(operator);
            let response = tx.execute(&client).await.map_err(|e| e.to_string())?;
            let receipt = response
                .get_receipt(&client)
                .await
                .map_err(|e| e.to_string())?;
            receipt
                .topic_id
                .map(|t| t.to_string())
                .ok_or_else(|| "the receipt has no topic id".to_owned())
        })
    }
}

/// The minute (since the Unix epoch) capability windows count in.
pub(crate) fn current_minute() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 60)
}

/// How much network one plugin instance may still use: its grants, the per-call and
/// per-context-per-minute quotas, the timeout of one call, and where to count.
pub(crate) struct CapabilityBudget {
    pub(crate) hedera: Option<Arc<HederaCapability>>,
    pub(crate) granted: Arc<[String]>,
    timeout: Duration,
    per_call: u32,
    used_in_call: u32,
    per_minute: u32,
    window: Arc<Mutex<MinuteWindow>>,
    stats: Arc<PluginStats>,
}

impl CapabilityBudget {
    pub(crate) fn new(
        hedera: Option<Arc<HederaCapability>>,
        granted: Arc<[String]>,
        limits: &PluginLimits,
        window: Arc<Mutex<MinuteWindow>>,
        stats: Arc<PluginStats>,
    ) -> Self {
        CapabilityBudget {
            hedera,
            granted,
            timeout: Duration::from_millis(limits.capability_timeout_ms),
            per_call: limits.max_capability_calls,
            used_in_call: 0,
            per_minute: limits.capability_calls_per_minute,
            window,
            stats,
        }
    }

    /// A new guest call: its own per-call quota.
    pub(crate) fn begin_call(&mut self) {
        self.used_in_call = 0;
    }

    /// Take one call of `capability` from the budget, or say why not.
    fn take(
        &mut self,
        capability: Capability,
        plugin: &str,
    ) -> Result<Arc<HederaCapability>, String> {
        if !self.granted.iter().any(|c| c == capability.as_str()) {
            return Err(format!(
                "capability {} is not granted to plugin {plugin}",
                capability.as_str()
            ));
        }
        let hedera = self
            .hedera
            .clone()
            .ok_or("no operator account is configured, so hak cannot act on the network")?;
        let refused = |stats: &PluginStats, why: String| {
            stats.capability_refusals.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(plugin, "capability call refused: {why}");
            Err(why)
        };
        if self.used_in_call >= self.per_call {
            return refused(
                &self.stats,
                format!(
                    "quota: at most {} network capability calls per plugin call (limits.max_capability_calls)",
                    self.per_call
                ),
            );
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
                    &self.stats,
                    format!(
                        "quota: at most {} network capability calls per minute in this agent context (limits.capability_calls_per_minute)",
                        self.per_minute
                    ),
                );
            }
            window.used += 1;
        }
        self.used_in_call += 1;
        self.stats.capability_calls.fetch_add(1, Ordering::Relaxed);
        Ok(hedera)
    }
}

impl PluginState {
    /// Run a blocking capability call; its time is not charged to the plugin's deadline (it
    /// has its own timeout).
    fn timed<T>(&mut self, call: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let result = call();
        self.host_time += started.elapsed();
        result
    }
}

impl hedera::Host for PluginState {
    fn submit_topic_message(
        &mut self,
        topic_id: String,
        message: String,
    ) -> Result<String, String> {
        let capability = self
            .capability
            .take(Capability::SubmitTopicMessage, &self.plugin)?;
        let timeout = self.capability.timeout;
        self.timed(|| capability.submit_topic_message(&topic_id, &message, timeout))
    }

    fn create_topic(&mut self, memo: String) -> Result<String, String> {
        let capability = self
            .capability
            .take(Capability::CreateTopic, &self.plugin)?;
        let timeout = self.capability.timeout;
        self.timed(|| capability.create_topic(&memo, timeout))
    }
}
