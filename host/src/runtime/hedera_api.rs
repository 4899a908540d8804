//! The `hedera` capability import: network actions a plugin may take with the operator's
//! account, each only when the operator granted its capability in the manifest.

use super::bindings::imports::hedera;
use super::sandbox::PluginState;
use ::hedera::{Client, TopicCreateTransaction, TopicId, TopicMessageSubmitTransaction};
use std::future::Future;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// Capability of `hedera.submit-topic-message`.
pub const SUBMIT_TOPIC_MESSAGE: &str = "hedera:submit-topic-message";
/// Capability of `hedera.create-topic`.
pub const CREATE_TOPIC: &str = "hedera:create-topic";
/// Every capability of the `hedera` import.
pub const HEDERA_CAPABILITIES: [&str; 2] = [SUBMIT_TOPIC_MESSAGE, CREATE_TOPIC];
/// Largest HCS message a plugin may submit through the capability (the SDK chunks it).
const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// Longest topic memo the network accepts.
const MAX_MEMO_BYTES: usize = 100;

/// Executes granted network actions with the operator's client.
pub struct HederaCapability {
    client: Client,
    runtime: tokio::runtime::Handle,
    timeout: Duration,
}

impl HederaCapability {
    pub fn new(client: Client, runtime: tokio::runtime::Handle) -> Self {
        HederaCapability {
            client,
            runtime,
            timeout: Duration::from_secs(30),
        }
    }

    /// Run network work to completion on the host's network runtime, bounded by the timeout.
    fn block_on<T>(&self, work: impl Future<Output = Result<T, String>>) -> Result<T, String> {
        let timed = async { tokio::time::timeout(self.timeout, work).await };
        let result = if tokio::runtime::Handle::try_current().is_ok() {
            tokio::task::block_in_place(|| self.runtime.block_on(timed))
        } else {
            self.runtime.block_on(timed)
        };
        result.map_err(|_| format!("timed out after {:?}", self.timeout))?
    }

    /// Submit a message and wait for its receipt; the transaction id on success.
    pub fn submit_topic_message(&self, topic_id: &str, message: &str) -> Result<String, String> {
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
        self.block_on(async move {
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
    pub fn create_topic(&self, memo: &str) -> Result<String, String> {
        if memo.len() > MAX_MEMO_BYTES {
            return Err(format!(
                "memo of {} bytes exceeds {MAX_MEMO_BYTES}",
                memo.len()
            ));
        }
        let client = self.client.clone();
        let memo = memo.to_owned();
        self.block_on(async move {
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

impl PluginState {
    /// The capability if granted (and an operator exists), else the error the guest gets.
    fn capability(&self, name: &str) -> Result<std::sync::Arc<HederaCapability>, String> {
        if !self.capabilities.iter().any(|c| c == name) {
            return Err(format!(
                "capability {name} is not granted to plugin {}",
                self.plugin
            ));
        }
        self.hedera.clone().ok_or_else(|| {
            "no operator account is configured, so hak cannot act on the network".into()
        })
    }

    /// Run a blocking capability call; its time is not charged to the plugin's deadline.
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
        let capability = self.capability(SUBMIT_TOPIC_MESSAGE)?;
        self.timed(|| capability.submit_topic_message(&topic_id, &message))
    }

    fn create_topic(&mut self, memo: String) -> Result<String, String> {
        let capability = self.capability(CREATE_TOPIC)?;
        self.timed(|| capability.create_topic(&memo))
    }
}
