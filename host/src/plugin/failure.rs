//! How a plugin failure is classified and worded. A failure always names the plugin and the
//! phase (`describe` or a stage) and carries one cause class.

use serde::Serialize;
use std::fmt;

/// The cause class of a plugin failure, as documented for operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureCause {
    /// The call ran past its wall-clock deadline.
    Deadline,
    /// The instance tried to grow memory past its cap.
    Memory,
    /// The call used up its instruction budget.
    Fuel,
    /// Any other trap: `unreachable`, a Rust panic, stack overflow, a bad host call.
    Trap,
    /// The plugin returned something the host refuses: oversize, not JSON, a replacement that
    /// does not validate, a replacement at an observe-only stage.
    InvalidOutput,
    /// The stage input was larger than the plugin's `max_input_bytes`; the plugin was not called.
    InputTooLarge,
}

impl FailureCause {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureCause::Deadline => "deadline",
            FailureCause::Memory => "memory",
            FailureCause::Fuel => "fuel",
            FailureCause::Trap => "trap",
            FailureCause::InvalidOutput => "invalid-output",
            FailureCause::InputTooLarge => "input-too-large",
        }
    }
}

impl fmt::Display for FailureCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A plugin that failed (as opposed to one that answered `block` or `err`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginFailure {
    /// The operator's name for the plugin (manifest `name`).
    pub plugin: String,
    /// `describe`, `instantiate` or a stage name such as `post_params_normalization`.
    pub phase: String,
    pub cause: FailureCause,
    pub detail: String,
}

impl fmt::Display for PluginFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "plugin {} failed at {}: {} ({})",
            self.plugin, self.phase, self.cause, self.detail
        )
    }
}

impl std::error::Error for PluginFailure {}
