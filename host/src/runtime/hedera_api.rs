//! The capability imports, bound to the WIT of each contract line (`hedera`; `rates` since
//! 0.2.2): each call goes to the instance's
//! [`CapabilityQuota`](crate::capabilities::CapabilityQuota) (grants, quotas, counters, the
//! actions). One deadline bounds everything a plugin does in a stage: an action's time is the
//! plugin's, its timeout is cut to what is left of the deadline (cancelled there), and a guest
//! call whose action ran into the deadline fails as out of time, whatever it answers after
//! (a policy fails closed). Nothing else lives here.

use super::sandbox::PluginState;
use std::time::Instant;

impl PluginState {
    /// Run a blocking capability call named `what`, within the plugin's deadline.
    fn timed<T>(&mut self, what: &'static str, call: impl FnOnce(&mut Self) -> T) -> T {
        self.context_used = true;
        let result = call(self);
        if Instant::now() >= self.host_call_until() {
            self.deadline_passed.get_or_insert(what);
        }
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
                self.timed("hedera.submit-topic-message", |s| {
                    let until = Some(s.host_call_until());
                    s.capability
                        .submit_topic_message(&s.plugin, &topic_id, &message, until)
                        .map_err(|e| e.to_string())
                })
            }

            fn create_topic(&mut self, memo: String) -> Result<String, String> {
                self.timed("hedera.create-topic", |s| {
                    let until = Some(s.host_call_until());
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

impl super::bindings::v0_2::hedera::agent_kit::rates::Host for PluginState {
    fn current(
        &mut self,
    ) -> Result<super::bindings::v0_2::hedera::agent_kit::rates::ExchangeRate, String> {
        // Not the context's: the rate is the host's, so the instance stays free to move.
        let until = self.host_call_until();
        let rate = self.capability.exchange_rate(&self.plugin, Some(until));
        if Instant::now() >= until {
            self.deadline_passed.get_or_insert("rates.current");
        }
        rate.map(
            |rate| super::bindings::v0_2::hedera::agent_kit::rates::ExchangeRate {
                hbar_equivalent: rate.hbar_equivalent,
                cent_equivalent: rate.cent_equivalent,
                expiration_seconds: rate.expiration_seconds,
            },
        )
        .map_err(|e| e.to_string())
    }
}
