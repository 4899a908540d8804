//! The `host` interface (log, scratchpad, clock) and the `budget` interface (atomic
//! reservations, since 0.1.2): imports every plugin may call. State goes to the host's state
//! store through the instance's [`StateHandle`](crate::state_store::StateHandle); a store
//! that cannot answer a read traps the guest (a plugin failure, so a policy fails closed).

use super::bindings::imports::{budget, host, types};
use super::bindings::{LogLevel, ReserveError};
use super::sandbox::PluginState;
use crate::state_store::{Reserved, StateError};

impl types::Host for PluginState {}

impl host::Host for PluginState {
    fn log(&mut self, level: LogLevel, message: String) {
        self.emit(level, &message);
    }

    fn state_get(&mut self, key: String) -> wasmtime::Result<Option<String>> {
        self.pad()
            .get(&key)
            .map_err(|e| wasmtime::format_err!("state-get: {e}"))
    }

    fn state_set(&mut self, key: String, value: String) -> Result<(), String> {
        self.pad().set(&key, &value).map_err(|e| e.to_string())
    }

    fn state_delete(&mut self, key: String) -> wasmtime::Result<()> {
        self.pad()
            .delete(&key)
            .map_err(|e| wasmtime::format_err!("state-delete: {e}"))
    }

    fn now_unix_ms(&mut self) -> u64 {
        crate::state_store::now_ms()
    }
}

impl budget::Host for PluginState {
    fn reserve(
        &mut self,
        key: String,
        amount: u64,
        limit: u64,
        window_seconds: u32,
    ) -> Result<u64, ReserveError> {
        match self.pad().reserve(&key, amount, limit, window_seconds) {
            Ok(Reserved::Granted { total, .. }) => Ok(total),
            Ok(Reserved::OverLimit { spent }) => Err(ReserveError::OverLimit(spent)),
            Err(e) => {
                tracing::warn!(plugin = &*self.plugin, "budget.reserve failed: {e}");
                Err(ReserveError::Unavailable(e.to_string()))
            }
        }
    }

    fn spent(&mut self, key: String, window_seconds: u32) -> Result<u64, String> {
        self.pad()
            .spent(&key, window_seconds)
            .map_err(|e: StateError| e.to_string())
    }
}
