//! The kit's 7-stage tool lifecycle, run for one agent context by a [`Session`]:
//! 1 pre-tool-execution → 2 normalise → 3 post-params-normalization → 4 core action →
//! 5 post-core-action → 6 secondary action → 7 post-tool-execution. At each hookable stage every
//! relevant plugin, in manifest order, gets its policy check then its hook; the first block,
//! error or plugin failure ends the call and later stages do not run.
//! Plugin instances live per session (one per plugin per agent context) and are discarded
//! after any failure; scratchpads are per context.

mod call_state;
pub mod chain;
mod env;
pub mod envelope;
pub mod native;
mod reservations;
mod stages;
mod strict_json;
mod verdicts;

use stages::*;

use crate::approvals::Approver;
use crate::model::context::AgentContext;
use crate::model::stage::Stage;
use crate::observe::decisions::{CallRecord, Decision};
use crate::observe::metrics::{CallMeters, CallOutcome, PluginMeters};
use crate::plugin::{ContextScope, PluginSession};
use crate::state_store::CallReservations;
use crate::tools::DynTool;
use call_state::{CallState, RawParams};
use chain::{Chain, Plan};
pub use env::CallEnv;
use envelope::{Abort, Envelope};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The method is not a tool this host serves.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown tool {0:?}; `hak tools` lists the tools")]
pub struct UnknownTool(pub String);

/// Runs tool calls for one agent context.
pub struct Session {
    env: Arc<dyn CallEnv>,
    context: AgentContext,
    /// `context.scope_key()` (what scratchpads and circuit breakers are keyed by), the state
    /// store and the current call's reservations, as plugin sessions see them.
    scope: ContextScope,
    context_json: String,
    chain: Arc<Chain>,
    /// Each chain member's state in this context, in chain order.
    members: Vec<Box<dyn PluginSession>>,
    /// Each chain member's metric handles, in chain order.
    meters: Vec<PluginMeters>,
    /// The `calls` counters this session has met.
    call_meters: CallMeters,
    /// The current call's plugin steps, kept only while a decision log is open.
    decisions: Vec<Decision>,
    recording: bool,
    /// The authenticated agent calling through this session (for the decision log).
    caller: Option<Arc<str>>,
    /// Every stage input of the calls since recording was turned on (`hak call --record`).
    recorded: Option<Vec<RecordedStage>>,
    buf: String,
    /// The normalised params of the call that just failed, for failure observers.
    failed_normalised: Option<String>,
    /// The budget reservations the current call made (settled when it ends).
    reservations: Arc<CallReservations>,
    /// What became of the current call's transaction (or query).
    outcome: TxOutcome,
    /// Append a block's reason to `humanMessage` ([`envelope::explain_block`]).
    explain_blocks: bool,
    /// Who decides needs-approval verdicts for this session (default: the environment's).
    approver: Option<Arc<dyn Approver>>,
    /// The plugin time of one call (`[engine] call_budget_ms`), and what is left of the
    /// current call's: every guest call's wall-clock time, its host calls included, is taken
    /// from it; waiting for an approver or the network's answer to the tool is not.
    call_budget: Duration,
    budget_left: Duration,
    /// When the plugin step that just ended ended, while nothing but the stage loop's own
    /// dispatch has run since: the next step of the stage starts there, so back-to-back steps
    /// read the clock once each, not twice (a read costs ~20 ns here; five policies read it
    /// ten times before). Cleared at every stage's start and end and after any other work
    /// (an approval, a replacement, a failure), so no step is charged for it.
    clock: Option<Instant>,
}

/// One stage input as a plugin received it (`hak call --record`, `hak plugin test --input`).
#[derive(Clone, Debug)]
pub struct RecordedStage {
    pub stage: Stage,
    pub method: &'static str,
    pub tool_type: crate::model::ToolType,
    /// The stage params JSON text.
    pub input: String,
}

impl RecordedStage {
    /// `{"stage", "method", "toolType", "input"}`, the file format of `hak call --record`.
    pub fn to_json(&self) -> Value {
        json!({
            "stage": self.stage.as_str(),
            "method": self.method,
            "toolType": self.tool_type,
            "input": serde_json::from_str::<Value>(&self.input).unwrap_or(Value::Null),
        })
    }
}

/// What became of a call's transaction, as far as hak can know: the class policies' budgets
/// are settled by and that plugins see as `transactionOutcome`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxOutcome {
    /// It applied (a receipt said SUCCESS), or a query ran.
    Applied,
    /// It certainly did not apply: the call ended before submission, or precheck or the
    /// receipt refused it.
    NotApplied,
    /// Nobody can tell yet: no receipt came back, or its bytes were handed to a wallet.
    Unknown,
}

impl TxOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            TxOutcome::Applied => "applied",
            TxOutcome::NotApplied => "not-applied",
            TxOutcome::Unknown => "unknown",
        }
    }
}

/// The stage input's `context`: the kit's `accountId` and `mode`, the network, and the agent's
/// name when the caller is one of the manifest's `[[agents]]` (`wit/README.md`).
fn context_json(context: &AgentContext, network: &str, agent: Option<&str>) -> String {
    let mut value = json!({
        "accountId": context.account_id.map(|a| a.to_string()),
        "mode": context.mode.as_str(),
        "network": network,
    });
    if let Some(agent) = agent {
        value["agent"] = json!(agent);
    }
    value.to_string()
}

impl Session {
    pub fn new(env: Arc<dyn CallEnv>, context: AgentContext) -> Self {
        let chain = env.chain();
        let context_json = context_json(&context, env.network_name(), None);
        let explain_blocks = env.explain_blocks();
        let reservations = Arc::<CallReservations>::default();
        let scope = ContextScope {
            scope: context.scope_key().into(),
            state: env.state_backend().clone(),
            reservations: reservations.clone(),
        };
        let members = open_members(&chain, &scope);
        let meters = open_meters(&*env, &chain);
        let call_meters = env.metrics().call_meters(context.mode.as_str());
        let recording = env.decision_log().is_some();
        let approver = env.approver();
        let call_budget = env.call_budget();
        Session {
            env,
            scope,
            context,
            context_json,
            chain,
            members,
            meters,
            call_meters,
            decisions: Vec::new(),
            recording,
            caller: None,
            recorded: None,
            buf: String::new(),
            failed_normalised: None,
            reservations,
            outcome: TxOutcome::NotApplied,
            explain_blocks,
            approver,
            call_budget,
            budget_left: call_budget,
            clock: None,
        }
    }

    /// Let `approver` decide this session's needs-approval verdicts (e.g. the MCP client of
    /// the next call, asked by elicitation); `None`: the environment's again.
    pub fn set_approver(&mut self, approver: Option<Arc<dyn Approver>>) {
        self.approver = approver.or_else(|| self.env.approver());
    }

    /// Whether blocked calls' `humanMessage` ends with the policy's reason (default: the
    /// manifest's `[context] explain_blocks`, else off).
    pub fn set_explain_blocks(&mut self, on: bool) {
        self.explain_blocks = on;
    }

    pub fn context(&self) -> &AgentContext {
        &self.context
    }

    /// Keep every stage input the next calls produce (all four stages, whether or not a
    /// plugin runs there), for [`Session::take_recorded`].
    pub fn record_stages(&mut self) {
        self.recorded.get_or_insert_with(Vec::new);
    }

    /// The stage inputs recorded so far (recording goes on).
    pub fn take_recorded(&mut self) -> Vec<RecordedStage> {
        self.recorded
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Name the agent the next calls are made for (the decision log's `agent`); `None` for
    /// callers without an agent entry.
    pub fn set_caller(&mut self, agent: Option<&str>) {
        if self.caller.as_deref() != agent {
            self.caller = agent.map(Arc::from);
            self.context_json = context_json(&self.context, self.env.network_name(), agent);
        }
    }

    /// The version of the chain this session's last (or next) call ran on.
    pub fn chain_version(&self) -> u64 {
        self.chain.version()
    }

    /// Run `method` with the agent's params (a JSON text) and return the result envelope as
    /// a JSON value ([`Session::call_envelope`] without the conversion).
    pub fn call(&mut self, method: &str, params_json: &str) -> Result<Value, UnknownTool> {
        self.call_envelope(method, params_json)
            .map(Envelope::into_value)
    }

    /// Run `method` with the agent's params (a JSON text) and return the result envelope,
    /// typed where nothing needed its value (serialise it with serde for the agent).
    pub fn call_envelope(
        &mut self,
        method: &str,
        params_json: &str,
    ) -> Result<Envelope, UnknownTool> {
        let env = self.env.clone();
        let tool = env
            .tools()
            .get(method)
            .ok_or_else(|| UnknownTool(method.to_owned()))?;
        if self.env.chain_version() != self.chain.version() {
            // A swap happened: this call and the next run on the new chain, with new instances
            // (scratchpads are per context and plugin name, so state carries over).
            self.chain = self.env.chain();
            self.members = open_members(&self.chain, &self.scope);
            self.meters = open_meters(&*env, &self.chain);
        }
        let started = Instant::now();
        let plan = self.chain.plan(method);
        self.failed_normalised = None;
        self.outcome = TxOutcome::NotApplied;
        self.decisions.clear();
        self.budget_left = self.call_budget;
        let (envelope, outcome) = self.outcome_of_run(&*env, tool, &plan, params_json);
        self.settle_reservations();
        self.call_meters.count(tool.spec().method, outcome);
        if let Some(log) = env.decision_log() {
            log.write(&CallRecord {
                agent: self.caller.as_deref(),
                scope: &self.scope.scope,
                account_id: self.context.account_id.map(|a| a.to_string()),
                mode: self.context.mode.as_str(),
                tool: tool.spec().method,
                params: params_json,
                chain_version: self.chain.version(),
                decisions: &self.decisions,
                outcome,
                transaction_outcome: self.outcome.as_str(),
                transaction_id: envelope.raw_str("transactionId"),
                error: envelope.raw_str("error"),
                error_code: envelope.raw_str("errorCode"),
                micros: micros(started.elapsed()),
            });
        }
        Ok(envelope)
    }

    fn outcome_of_run(
        &mut self,
        env: &dyn CallEnv,
        tool: &dyn DynTool,
        plan: &Plan,
        params_json: &str,
    ) -> (Envelope, CallOutcome) {
        let method = tool.spec().method;
        match self.run(env, tool, plan, params_json) {
            Ok(result) => (result, CallOutcome::Success),
            Err(abort) => {
                let outcome = match &abort {
                    Abort::Error(_) | Abort::Invalid { .. } => CallOutcome::Error,
                    Abort::Transaction { .. } => CallOutcome::Rejected,
                    Abort::Unknown { .. } => CallOutcome::Unknown,
                    Abort::Blocked(_) => CallOutcome::Blocked,
                    Abort::Plugin(_) => CallOutcome::PluginFailure,
                };
                let mut envelope = abort.into_envelope(tool.spec().name);
                let hint = envelope["raw"]["errorCode"]
                    .as_str()
                    .and_then(|c| tool.error_hint(c));
                if let (Some(hint), Some(Value::String(message))) =
                    (hint, envelope.get_mut("humanMessage"))
                {
                    message.push(' ');
                    message.push_str(hint);
                }
                if self.explain_blocks {
                    envelope::explain_block(&mut envelope);
                }
                if !plan.failure_observers().is_empty() {
                    self.notify_failure(tool, plan, params_json, &envelope);
                }
                match outcome {
                    CallOutcome::Blocked => {
                        let block = &envelope["raw"]["policyBlock"];
                        tracing::info!(
                            method,
                            plugin = block["plugin"].as_str().unwrap_or_default(),
                            code = block["reasonCode"].as_str().unwrap_or_default(),
                            "call blocked: {}",
                            crate::logging::one_line(block["reason"].as_str().unwrap_or_default())
                        );
                    }
                    _ => tracing::debug!(method, "{}", envelope["raw"]["error"]),
                }
                (Envelope::Value(envelope), outcome)
            }
        }
    }

    fn run(
        &mut self,
        env: &dyn CallEnv,
        tool: &dyn DynTool,
        plan: &Plan,
        params_json: &str,
    ) -> Result<Envelope, Abort> {
        // The kill switch: nothing that changes the ledger runs while it holds.
        if tool.spec().tool_type != crate::tools::ToolType::Query {
            if let Some(paused) = env.paused() {
                return Err(envelope::paused(
                    tool.spec().method,
                    Stage::PreToolExecution,
                    &paused,
                ));
            }
        }
        // Plainly well-formed params go straight into the tool's types; anything else is
        // parsed (refusing repeated keys) for the schema to judge and word.
        if let Some(plain) = tool.read_plain(params_json) {
            return self.run_on(env, tool, plan, params_json, RawParams::plain(plain));
        }
        let raw = strict_json::parse(params_json).map_err(|e| match e {
            strict_json::ParseError::OutOfRange {
                ref field,
                ref written,
            } => Abort::Invalid {
                message: tool
                    .spec()
                    .schema
                    .infinity_refusal(field, written.starts_with('-'))
                    .unwrap_or_else(|| format!("Invalid parameters: {e}")),
                field: field.clone(),
            },
            strict_json::ParseError::Json(e) => Abort::Error(format!(
                "Invalid parameters: the params are not valid JSON: {e}"
            )),
        })?;
        self.run_on(env, tool, plan, params_json, RawParams::Value(raw))
    }

    fn run_on(
        &mut self,
        env: &dyn CallEnv,
        tool: &dyn DynTool,
        plan: &Plan,
        params_json: &str,
        raw: RawParams,
    ) -> Result<Envelope, Abort> {
        let context_json = std::mem::take(&mut self.context_json);
        let mut state = CallState::new(&context_json, raw, params_json);
        let outcome = self.run_stages(env, tool, plan, &mut state);
        if outcome.is_err() && !plan.failure_observers().is_empty() {
            self.failed_normalised = state.normalised.as_ref().map(|n| n.json().to_owned());
        }
        drop(state);
        self.context_json = context_json;
        outcome
    }
}

#[cfg(test)]
mod tests;
