//! The `host` interface (log, scratchpad, clock) and the `budget` interface (atomic
//! reservations, since 0.1.2): imports every plugin may call, bound for each contract line
//! (the same functions under 0.1 and 0.2 names). State goes to the host's state store through
//! the instance's [`StateHandle`](crate::state_store::StateHandle); a store that cannot answer
//! a read traps the guest (a plugin failure, so a policy fails closed).

use super::bindings::LogLevel;
use super::sandbox::PluginState;
use crate::state_store::{Reserved, StateError};

impl PluginState {
    fn state_read(&mut self, key: &str) -> wasmtime::Result<Option<String>> {
        self.pad()
            .get(key)
            .map_err(|e| wasmtime::format_err!("state-get: {e}"))
    }

    fn state_remove(&mut self, key: &str) -> wasmtime::Result<()> {
        self.pad()
            .delete(key)
            .map_err(|e| wasmtime::format_err!("state-delete: {e}"))
    }

    /// `budget.reserve`: Ok(total), or (over the limit) what is spent, or (store failed) why.
    fn budget_reserve(
        &mut self,
        key: &str,
        amount: u64,
        limit: u64,
        window_seconds: u32,
    ) -> Result<u64, Result<u64, String>> {
        match self.pad().reserve(key, amount, limit, window_seconds) {
            Ok(Reserved::Granted { total, .. }) => Ok(total),
            Ok(Reserved::OverLimit { spent }) => Err(Ok(spent)),
            Err(e) => {
                tracing::warn!(plugin = &*self.plugin, "budget.reserve failed: {e}");
                Err(Err(e.to_string()))
            }
        }
    }
}

/// The `types`, `host` and `budget` imports of one contract line, over [`PluginState`].
macro_rules! bind_host_imports {
    ($line:ident) => {
        mod $line {
            use super::super::bindings::$line::hedera::agent_kit::{budget, host, types};
            use super::{LogLevel, PluginState, StateError};

            impl types::Host for PluginState {}

            impl host::Host for PluginState {
                fn log(&mut self, level: types::LogLevel, message: String) {
                    let level = match level {
                        types::LogLevel::Trace => LogLevel::Trace,
                        types::LogLevel::Debug => LogLevel::Debug,
                        types::LogLevel::Info => LogLevel::Info,
                        types::LogLevel::Warn => LogLevel::Warn,
                        types::LogLevel::Error => LogLevel::Error,
                    };
                    self.emit(level, &message);
                }

                fn state_get(&mut self, key: String) -> wasmtime::Result<Option<String>> {
                    self.state_read(&key)
                }

                fn state_set(&mut self, key: String, value: String) -> Result<(), String> {
                    self.pad().set(&key, &value).map_err(|e| e.to_string())
                }

                fn state_delete(&mut self, key: String) -> wasmtime::Result<()> {
                    self.state_remove(&key)
                }

                fn now_unix_ms(&mut self) -> u64 {
                    self.now_ms()
                }
            }

            impl budget::Host for PluginState {
                fn reserve(
                    &mut self,
                    key: String,
                    amount: u64,
                    limit: u64,
                    window_seconds: u32,
                ) -> Result<u64, budget::ReserveError> {
                    self.budget_reserve(&key, amount, limit, window_seconds)
                        .map_err(|e| match e {
                            Ok(spent) => budget::ReserveError::OverLimit(spent),
                            Err(why) => budget::ReserveError::Unavailable(why),
                        })
                }

                fn spent(&mut self, key: String, window_seconds: u32) -> Result<u64, String> {
                    self.pad()
                        .spent(&key, window_seconds)
                        .map_err(|e: StateError| e.to_string())
                }
            }
        }
    };
}

bind_host_imports!(v0_1);
bind_host_imports!(v0_2);
