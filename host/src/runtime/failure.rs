//! Why a guest call failed, for [`super::instance`]: a wasmtime error classified (memory over
//! its limit, deadline or the tool call's plugin budget, fuel, trap), and the epoch ticks a
//! call's remaining budget allows. What must not live here: running a guest.

use super::sandbox::PluginState;
use crate::model::limits::EPOCH_TICK_MS;
use crate::plugin::{CallBudget, FailureCause, PluginFailure};
use wasmtime::{Store, Trap};

pub(super) fn failure_at_start(plugin: &str, e: &wasmtime::Error) -> PluginFailure {
    PluginFailure {
        plugin: plugin.to_owned(),
        phase: "instantiate".into(),
        cause: FailureCause::Trap,
        detail: format!("{e:#}"),
    }
}

/// Epoch ticks until `left` has passed (+1, as for a deadline: never less than asked).
pub(super) fn budget_ticks(left: std::time::Duration) -> u64 {
    left.as_millis() as u64 / EPOCH_TICK_MS + 1
}

/// Why a guest call stopped (or never started) at the end of the tool call's budget.
pub(super) fn budget_spent(budget: CallBudget) -> String {
    format!(
        "ran out of the tool call's {} ms plugin budget ([engine] call_budget_ms)",
        budget.total_ms
    )
}

/// Turn a wasmtime error into a failure with a cause class.
pub(super) fn classify(
    store: &mut Store<PluginState>,
    plugin: &str,
    phase: &str,
    err: wasmtime::Error,
    deadline_ms: u64,
    fuel: Option<u64>,
) -> PluginFailure {
    let (cause, detail) = if let Some(wanted) = store.data_mut().memory.exceeded.take() {
        (
            FailureCause::Memory,
            format!("tried to grow memory to {wanted} bytes, over its limit"),
        )
    } else {
        match err.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => (
                FailureCause::Deadline,
                match store.data().call_budget {
                    Some(budget) if budget.left(std::time::Instant::now()).is_zero() => {
                        budget_spent(budget)
                    }
                    _ => format!("exceeded its {deadline_ms} ms deadline"),
                },
            ),
            Some(Trap::OutOfFuel) => (
                FailureCause::Fuel,
                format!(
                    "used up its budget of {} instructions",
                    fuel.unwrap_or_default()
                ),
            ),
            Some(Trap::StackOverflow) => (FailureCause::Trap, "stack overflow".into()),
            Some(trap) => (FailureCause::Trap, trap.to_string()),
            None => (FailureCause::Trap, format!("{err:#}")),
        }
    };
    PluginFailure {
        plugin: plugin.to_owned(),
        phase: phase.into(),
        cause,
        detail,
    }
}
