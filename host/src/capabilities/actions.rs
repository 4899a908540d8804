//! The network actions a granted capability performs (with the operator's account, or a read
//! of the mirror for the exchange rate), as a trait:
//! the sandbox side (`runtime::hedera_api`) never sees the SDK, and the SDK implementation
//! lives with the network it acts on (`network::OperatorActions`). What a plugin may ask for
//! (sizes, ids) is checked here, before any implementation runs; [`CapabilityError`] says why
//! a call was refused or failed.

use hedera::TopicId;
use std::str::FromStr;
use std::time::Duration;

/// Largest HCS message a plugin may submit through the capability (the SDK chunks it).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// Longest topic memo the network accepts.
pub const MAX_MEMO_BYTES: usize = 100;

/// Why a capability call was refused or failed (the guest gets the text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapabilityError {
    #[error("capability {capability} is not granted to plugin {plugin}")]
    NotGranted {
        capability: &'static str,
        plugin: String,
    },
    #[error("no operator account is configured, so hak cannot act on the network")]
    NoOperator,
    #[error("no network is configured, so hak has no exchange rate")]
    NoNetwork,
    /// The mirror gave no rate in force; its words or why its answer was refused.
    #[error("no exchange rate: {0}")]
    NoRate(String),
    #[error(
        "quota: at most {0} network capability calls per plugin call (limits.max_capability_calls)"
    )]
    PerCallQuota(u32),
    #[error("quota: at most {0} network capability calls per minute in this agent context (limits.capability_calls_per_minute)")]
    PerMinuteQuota(u32),
    #[error("no time is left before the plugin's deadline (limits.deadline_ms, within the tool call's [engine] call_budget_ms)")]
    BudgetSpent,
    #[error("invalid topic id {topic_id:?}: {reason}")]
    InvalidTopic { topic_id: String, reason: String },
    #[error("message of {0} bytes exceeds {MAX_MESSAGE_BYTES}")]
    MessageTooLarge(usize),
    #[error("memo of {0} bytes exceeds {MAX_MEMO_BYTES}")]
    MemoTooLong(usize),
    #[error("timed out after {0:?}")]
    TimedOut(Duration),
    /// The network or the SDK failed the action; their words.
    #[error("{0}")]
    Network(String),
}

/// Network actions with the operator's account, each bounded by `timeout`.
pub trait HederaActions: Send + Sync {
    /// Submit a message and wait for its receipt; the transaction id (`0.0.2@s.n`) on success.
    fn submit_topic_message(
        &self,
        topic: TopicId,
        message: &[u8],
        timeout: Duration,
    ) -> Result<String, CapabilityError>;

    /// Create a topic with the operator's key as submit key and the operator as auto-renew
    /// account; its id on success.
    fn create_topic(&self, memo: &str, timeout: Duration) -> Result<String, CapabilityError>;

    /// The network's HBAR exchange rate in force now (kept host-wide, see
    /// [`super::rates`]).
    fn exchange_rate(&self, timeout: Duration) -> Result<super::ExchangeRate, CapabilityError>;
}

/// A plugin's `submit-topic-message` arguments, checked.
pub fn checked_message<'a>(
    topic_id: &str,
    message: &'a str,
) -> Result<(TopicId, &'a [u8]), CapabilityError> {
    let topic = TopicId::from_str(topic_id).map_err(|e| CapabilityError::InvalidTopic {
        topic_id: topic_id.to_owned(),
        reason: e.to_string(),
    })?;
    if message.len() > MAX_MESSAGE_BYTES {
        return Err(CapabilityError::MessageTooLarge(message.len()));
    }
    Ok((topic, message.as_bytes()))
}

/// A plugin's `create-topic` memo, checked.
pub fn checked_memo(memo: &str) -> Result<&str, CapabilityError> {
    if memo.len() > MAX_MEMO_BYTES {
        return Err(CapabilityError::MemoTooLong(memo.len()));
    }
    Ok(memo)
}
