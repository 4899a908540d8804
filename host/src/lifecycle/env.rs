//! What a [`super::Session`] needs from its surroundings, and nothing more: the tools, the
//! current plugin chain, the state store, the call settings, a tool context for a call, the
//! strategy of a mode with what it may use, and where calls are counted and recorded. [`crate::host::Host`] implements it over its
//! network and manifest; the lifecycle's own tests implement it over a plain network and a
//! chain they build, so the 7-stage pipeline runs without a host.

use super::chain::Chain;
use crate::approvals::Approver;
use crate::model::context::{AgentContext, AgentMode};
use crate::observe::decisions::DecisionLog;
use crate::observe::metrics::Metrics;
use crate::state_store::StateBackend;
use crate::strategy::{StrategyEnv, TransactionStrategy};
use crate::tools::{ToolContext, ToolRegistry};
use std::sync::Arc;

pub trait CallEnv: Send + Sync {
    fn tools(&self) -> &ToolRegistry;

    /// The chain calls start on now (an immutable snapshot).
    fn chain(&self) -> Arc<Chain>;

    /// The current chain's version, cheaper than [`Self::chain`] (checked on every call).
    fn chain_version(&self) -> u64;

    /// Where plugin scratchpads and budgets live.
    fn state_backend(&self) -> &Arc<dyn StateBackend>;

    /// The network's name as plugins see it in the stage context (`local`, `testnet`, …).
    fn network_name(&self) -> &'static str;

    /// Whether blocked calls' `humanMessage` ends with the policy's reason, by default.
    fn explain_blocks(&self) -> bool;

    /// What the tool steps (normalise, core action) may use for a call in `context`.
    fn tool_context<'a>(
        &'a self,
        context: &'a AgentContext,
        wants_summary: bool,
    ) -> ToolContext<'a>;

    /// The secondary action of `mode` ([`crate::strategy::for_mode`]).
    fn strategy(&self, mode: AgentMode) -> Result<&dyn TransactionStrategy, String>;

    /// What a strategy may use for a call in `context`.
    fn strategy_env<'a>(&'a self, context: &'a AgentContext) -> StrategyEnv<'a>;

    /// Where calls and plugin steps are counted.
    fn metrics(&self) -> &Arc<Metrics>;

    /// Where each call is recorded, when the manifest asks for a decision log.
    fn decision_log(&self) -> Option<&DecisionLog>;

    /// The wall-clock time all plugins of one call may take together, host calls included
    /// (`[engine] call_budget_ms`).
    fn call_budget(&self) -> std::time::Duration {
        std::time::Duration::from_millis(crate::model::limits::DEFAULT_CALL_BUDGET_MS)
    }

    /// The kill switch's pause in effect, if any: tools that change the ledger are blocked
    /// while it holds ([`crate::pause`]). Checked on every such call: one atomic load.
    fn paused(&self) -> Option<Arc<crate::pause::Paused>> {
        None
    }

    /// Who decides needs-approval verdicts (`hak serve`, `hak mcp`); `None`: nobody can, so
    /// such a verdict blocks (a session may bring its own, [`super::Session::set_approver`]).
    fn approver(&self) -> Option<Arc<dyn Approver>> {
        None
    }
}
