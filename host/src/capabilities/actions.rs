//! The network actions a granted capability performs with the operator's account, as a trait:
//! the sandbox side (`runtime::hedera_api`) never sees the SDK, and the SDK implementation
//! lives with the network it acts on (`network::OperatorActions`). What a plugin may ask for
//! (sizes, ids) is checked here, before any implementation runs.

use hedera::TopicId;
use std::str::FromStr;
use std::time::Duration;

/// Largest HCS message a plugin may submit through the capability (the SDK chunks it).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// Longest topic memo the network accepts.
pub const MAX_MEMO_BYTES: usize = 100;

/// Network actions with the operator's account, each bounded by `timeout`.
pub trait HederaActions: Send + Sync {
    /// Submit a message and wait for its receipt; the transaction id (`0.0.2@s.n`) on success.
    fn submit_topic_message(
        &self,
        topic: TopicId,
        message: &[u8],
        timeout: Duration,
    ) -> Result<String, String>;

    /// Create a topic with the operator's key as submit key and the operator as auto-renew
    /// account; its id on success.
    fn create_topic(&self, memo: &str, timeout: Duration) -> Result<String, String>;
}

/// A plugin's `submit-topic-message` arguments, checked.
pub fn checked_message<'a>(
    topic_id: &str,
    message: &'a str,
) -> Result<(TopicId, &'a [u8]), String> {
    let topic =
        TopicId::from_str(topic_id).map_err(|e| format!("invalid topic id {topic_id:?}: {e}"))?;
    if message.len() > MAX_MESSAGE_BYTES {
        return Err(format!(
            "message of {} bytes exceeds {MAX_MESSAGE_BYTES}",
            message.len()
        ));
    }
    Ok((topic, message.as_bytes()))
}

/// A plugin's `create-topic` memo, checked.
pub fn checked_memo(memo: &str) -> Result<&str, String> {
    if memo.len() > MAX_MEMO_BYTES {
        return Err(format!(
            "memo of {} bytes exceeds {MAX_MEMO_BYTES}",
            memo.len()
        ));
    }
    Ok(memo)
}
