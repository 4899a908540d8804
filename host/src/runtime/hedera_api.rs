//! The `hedera` capability import, bound to the WIT of each contract line: each call goes to the instance's
//! [`CapabilityQuota`](crate::capabilities::CapabilityQuota) (grants, quotas, counters, the
//! actions). Time spent blocked in a granted action is not charged to the plugin's deadline
//! (the action has its own timeout), but it is to the tool call's plugin budget: an action
//! never waits past its end. Nothing else lives here.

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

/// The `hedera` import of one contract line, over [`PluginState`].
macro_rules! bind_hedera_import {
    ($line:ident) => {
        impl super::bindings::$line::hedera::agent_kit::hedera::Host for PluginState {
            fn submit_topic_message(
                &mut self,
                topic_id: String,
                message: String,
            ) -> Result<String, String> {
                self.timed(|s| {
                    let until = s.host_call_until();
                    s.capability
                        .submit_topic_message(&s.plugin, &topic_id, &message, until)
                        .map_err(|e| e.to_string())
                })
            }

            fn create_topic(&mut self, memo: String) -> Result<String, String> {
                self.timed(|s| {
                    let until = s.host_call_until();
                    s.capability
                        .create_topic(&s.plugin, &memo, until)
                        .map_err(|e| e.to_string())
                })
            }
        }
    };
}

bind_hedera_import!(v0_1);
bind_hedera_import!(v0_2);
