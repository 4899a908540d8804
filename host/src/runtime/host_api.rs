//! The `host` interface: log, scratchpad and clock imports every plugin may call.

use super::bindings::imports::{host, types};
use super::bindings::LogLevel;
use super::sandbox::PluginState;

impl types::Host for PluginState {}

impl host::Host for PluginState {
    fn log(&mut self, level: LogLevel, message: String) {
        self.emit(level, &message);
    }

    fn state_get(&mut self, key: String) -> Option<String> {
        self.scratchpad
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .map(str::to_owned)
    }

    fn state_set(&mut self, key: String, value: String) -> Result<(), String> {
        self.scratchpad
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .set(key, value)
    }

    fn state_delete(&mut self, key: String) {
        self.scratchpad
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .delete(&key);
    }

    fn now_unix_ms(&mut self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }
}
