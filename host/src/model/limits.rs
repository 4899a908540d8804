//! Every limit hak puts on a plugin, with its default and its hard ceiling, in one place.
//! Manifest values are checked against the ceilings here; nothing else defines a limit.

use serde::Deserialize;

/// Epoch tick: the granularity of deadlines.
pub const EPOCH_TICK_MS: u64 = 1;
/// Largest linear memory any plugin may be granted (also the pooling allocator's slot size).
pub const MAX_MEMORY_MIB: u32 = 512;
/// Largest deadline an operator may configure for one plugin call.
pub const MAX_DEADLINE_MS: u64 = 60_000;
/// Default wall-clock time all plugins of one tool call may take together, host calls
/// (network capabilities, state) included: `[engine] call_budget_ms`.
pub const DEFAULT_CALL_BUDGET_MS: u64 = 10_000;
/// Largest `[engine] call_budget_ms`.
pub const MAX_CALL_BUDGET_MS: u64 = 600_000;
/// Bytes of compiled functions the process keeps for later compiles to reuse
/// (`runtime::function_cache`): about one component of each toolchain (StarlingMonkey's,
/// CPython's and Go's code); past it, compiles run as without the cache.
pub const FUNCTION_CACHE_BYTES: usize = 256 * 1024 * 1024;
/// Least time instantiating a plugin may take (its start functions and the engine's work for
/// a new instance; 3-40 ms per JS, Go or Python plugin in a debug build): a per-call
/// `deadline_ms` of 100 ms let a loaded machine refuse a new agent context's first call for
/// instantiating slowly. A start function that never returns is still stopped, after 1 s of
/// each new context's first call (bounded, as before, not free).
pub const INSTANTIATE_FLOOR_MS: u64 = 1_000;
/// Component instances the pooling allocator keeps room for (plugins × live agent contexts).
pub const POOL_INSTANCES: u32 = 1_000;
/// Longest a component may take to compile before it is refused.
pub const MAX_COMPILE_SECONDS: u64 = 120;
/// Largest component file hak agrees to load.
pub const MAX_COMPONENT_BYTES: usize = 64 * 1024 * 1024;
/// Wasm stack for guests: deep recursion traps instead of overflowing the host.
pub const MAX_WASM_STACK_BYTES: usize = 1024 * 1024;
/// One `log` message is cut to this many bytes.
pub const MAX_LOG_MESSAGE_BYTES: usize = 4 * 1024;
/// Ceiling of `limits.max_input_bytes` (below the Go guest SDK's 8 MiB input arena).
pub const MAX_INPUT_BYTES: usize = 7 * 1024 * 1024;

/// Ceiling of `limits.max_capability_calls` (network actions in one guest call).
pub const MAX_CAPABILITY_CALLS: u32 = 100;
/// Ceiling of `limits.capability_calls_per_minute` (per agent context).
pub const MAX_CAPABILITY_CALLS_PER_MINUTE: u32 = 6_000;

/// Per-plugin limits from the manifest's `[plugins.limits]`, with safe defaults.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct PluginLimits {
    /// Wall-clock budget of one guest call, excluding time spent in granted host calls.
    pub deadline_ms: u64,
    /// Linear memory cap of the plugin's instance.
    pub memory_mib: u32,
    /// Instruction budget of one guest call (`None`: unlimited; the deadline still applies).
    pub fuel: Option<u64>,
    /// Largest string a plugin may return (a replacement JSON, a block message or details).
    pub max_output_bytes: usize,
    /// Log bytes (including captured stdout/stderr) kept per guest call; the rest is dropped.
    pub max_log_bytes: usize,
    /// Bytes of keys + values the plugin may keep in its per-context scratchpad.
    pub max_state_bytes: usize,
    /// Largest stage input (params JSON) handed to the plugin; a larger one fails the call
    /// before the plugin runs (guests with fixed input arenas, like the Go SDK's 8 MiB, rely on it).
    pub max_input_bytes: usize,
    /// Longest one network capability call (`hedera.*`) may take; it then fails with a
    /// timeout. Its time counts against `deadline_ms` like the plugin's own (one deadline for
    /// everything a plugin does in a stage), so it is also cut to what is left of it.
    pub capability_timeout_ms: u64,
    /// Network capability calls one guest call may make; the next ones fail.
    pub max_capability_calls: u32,
    /// Network capability calls the plugin may make per agent context in any 60 s (a sliding
    /// window: `capabilities::quota::MinuteWindow`).
    pub capability_calls_per_minute: u32,
}

impl Default for PluginLimits {
    fn default() -> Self {
        PluginLimits {
            deadline_ms: 100,
            memory_mib: 64,
            fuel: None,
            max_output_bytes: 1024 * 1024,
            max_log_bytes: 16 * 1024,
            max_state_bytes: 64 * 1024,
            max_input_bytes: 1024 * 1024,
            capability_timeout_ms: 5_000,
            max_capability_calls: 4,
            capability_calls_per_minute: 60,
        }
    }
}

impl PluginLimits {
    /// Check the configured values against the host's ceilings.
    pub fn validate(&self) -> Result<(), String> {
        if self.deadline_ms == 0 || self.deadline_ms > MAX_DEADLINE_MS {
            return Err(format!(
                "limits.deadline_ms must be between 1 and {MAX_DEADLINE_MS}, got {}",
                self.deadline_ms
            ));
        }
        if self.memory_mib == 0 || self.memory_mib > MAX_MEMORY_MIB {
            return Err(format!(
                "limits.memory_mib must be between 1 and {MAX_MEMORY_MIB}, got {}",
                self.memory_mib
            ));
        }
        if self.max_input_bytes == 0 || self.max_input_bytes > MAX_INPUT_BYTES {
            return Err(format!(
                "limits.max_input_bytes must be between 1 and {MAX_INPUT_BYTES}, got {}",
                self.max_input_bytes
            ));
        }
        if self.capability_timeout_ms == 0 || self.capability_timeout_ms > MAX_DEADLINE_MS {
            return Err(format!(
                "limits.capability_timeout_ms must be between 1 and {MAX_DEADLINE_MS}, got {}",
                self.capability_timeout_ms
            ));
        }
        if self.max_capability_calls > MAX_CAPABILITY_CALLS {
            return Err(format!(
                "limits.max_capability_calls must be at most {MAX_CAPABILITY_CALLS}, got {}",
                self.max_capability_calls
            ));
        }
        if self.capability_calls_per_minute > MAX_CAPABILITY_CALLS_PER_MINUTE {
            return Err(format!(
                "limits.capability_calls_per_minute must be at most {MAX_CAPABILITY_CALLS_PER_MINUTE}, got {}",
                self.capability_calls_per_minute
            ));
        }
        if self.fuel == Some(0) {
            return Err("limits.fuel must be positive".into());
        }
        Ok(())
    }

    pub fn memory_bytes(&self) -> usize {
        self.memory_mib as usize * 1024 * 1024
    }

    /// The deadline in epoch ticks (+1 so a call never gets less than its budget).
    pub fn deadline_ticks(&self) -> u64 {
        self.deadline_ms.div_ceil(EPOCH_TICK_MS) + 1
    }

    /// How long instantiating may take: the guest's start functions (a Go or JS runtime's
    /// set-up) and the engine's own work for a new instance, paid once per agent context and
    /// not a call's: `deadline_ms`, but never less than [`INSTANTIATE_FLOOR_MS`].
    pub fn instantiate_ms(&self) -> u64 {
        self.deadline_ms.max(INSTANTIATE_FLOOR_MS)
    }

    /// [`Self::instantiate_ms`] in epoch ticks (+1, as [`Self::deadline_ticks`]).
    pub fn instantiate_ticks(&self) -> u64 {
        self.instantiate_ms().div_ceil(EPOCH_TICK_MS) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instantiating_gets_at_least_the_floor_and_a_longer_deadline_when_set() {
        let mut limits = PluginLimits::default();
        assert_eq!(limits.instantiate_ms(), INSTANTIATE_FLOOR_MS);
        assert!(limits.instantiate_ticks() > limits.deadline_ticks());
        limits.deadline_ms = 5_000;
        assert_eq!(limits.instantiate_ms(), 5_000);
        assert_eq!(limits.instantiate_ticks(), limits.deadline_ticks());
    }
}
