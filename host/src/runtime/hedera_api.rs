//! The `hedera` capability import: network actions a plugin may take with the operator's
//! account, only when the operator granted them in the manifest.

use super::bindings::imports::hedera;
use super::sandbox::PluginState;
use ::hedera::{Client, TopicId, TopicMessageSubmitTransaction};
use std::str::FromStr;
use std::time::{Duration, Instant};

/// The capability name in manifests.
pub const SUBMIT_TOPIC_MESSAGE: &str = "hedera:submit-topic-message";
/// Largest HCS message a plugin may submit through the capability (the SDK chunks it).
const MAX_MESSAGE_BYTES: usize = 64 * 1024;

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
        let work = async move {
            let mut tx = TopicMessageSubmitTransaction::new();
            tx.topic_id(topic).message(message);
            let response = tx.execute(&client).await.map_err(|e| e.to_string())?;
            let receipt = response
                .get_receipt(&client)
                .await
                .map_err(|e| e.to_string())?;
            let _ = receipt;
            Ok::<_, String>(response.transaction_id.to_string())
        };
        let timed = async { tokio::time::timeout(self.timeout, work).await };
        let result = if tokio::runtime::Handle::try_current().is_ok() {
            tokio::task::block_in_place(|| self.runtime.block_on(timed))
        } else {
            self.runtime.block_on(timed)
        };
        result.map_err(|_| format!("timed out after {:?}", self.timeout))?
    }
}

impl hedera::Host for PluginState {
    fn submit_topic_message(
        &mut self,
        topic_id: String,
        message: String,
    ) -> Result<String, String> {
        if !self.hedera_granted {
            return Err(format!(
                "capability {SUBMIT_TOPIC_MESSAGE} is not granted to plugin {}",
                self.plugin
            ));
        }
        let Some(capability) = self.hedera.clone() else {
            return Err(
                "no operator account is configured, so hak cannot submit to the network".into(),
            );
        };
        let started = Instant::now();
        let result = capability.submit_topic_message(&topic_id, &message);
        self.host_time += started.elapsed();
        result
    }
}
