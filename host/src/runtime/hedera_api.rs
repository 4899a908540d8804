//! The `hedera` capability import, bound to the WIT: each call goes to the instance's
//! [`CapabilityQuota`](crate::capabilities::CapabilityQuota) (grants, quotas, counters, the
//! actions). Time spent blocked in a granted action is not charged to the plugin's deadline
//! (the action has its own timeout). Nothing else lives here.

use super::bindings::imports::hedera;
use super::sandbox::PluginState;
use std::time::Instant;

impl PluginState {
    /// Run a blocking capability call; its time is not charged to the plugin's deadline.
    fn timed<T>(&mut self, call: impl FnOnce(&mut Self) -> T) -> T {
        self.context_used = true;
        let started = Instant::now();
        let result = call(self);
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
        self.timed(|s| {
            s.capability
                .submit_topic_message(&s.plugin, &topic_id, &message)
        })
    }

    fn create_topic(&mut self, memo: String) -> Result<String, String> {
        self.timed(|s| s.capability.create_topic(&s.plugin, &memo))
    }
}
