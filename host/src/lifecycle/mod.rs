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
mod strict_json;

use crate::approvals::{Approver, Ask, Decision as Approval, Outcome as ApprovalOutcome};
use crate::capabilities::Capability;
use crate::context::AgentContext;
use crate::decisions::{CallRecord, Decision};
use crate::manifest::OnError;
use crate::metrics::{Answer, CallMeters, CallOutcome, PluginMeters, StepKind};
use crate::plugin::ChainPlugin;
use crate::plugin::{
    ApprovalRequest, BlockReason, CallBudget, ContextScope, FailureCause, HookAnswer, PluginError,
    PluginFailure, PluginSession, Reads, StageCall, Verdict,
};
use crate::stage::Stage;
use crate::state_store::CallReservations;
use crate::strategy::{SecondaryResult, StrategyError};
use crate::tools::{CoreOutput, DynTool, ToolContext, ToolSpec};
use call_state::CallState;
use chain::{Chain, Plan};
pub use env::CallEnv;
use envelope::{Abort, Block};
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
}

/// One stage input as a plugin received it (`hak call --record`, `hak plugin test --input`).
#[derive(Clone, Debug)]
pub struct RecordedStage {
    pub stage: Stage,
    pub method: &'static str,
    pub tool_type: crate::tools::ToolType,
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

impl Session {
    pub fn new(env: Arc<dyn CallEnv>, context: AgentContext) -> Self {
        let chain = env.chain();
        let context_json = json!({
            "accountId": context.account_id.map(|a| a.to_string()),
            "mode": context.mode.as_str(),
            "network": env.network_name(),
        })
        .to_string();
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
        }
    }

    /// The version of the chain this session's last (or next) call ran on.
    pub fn chain_version(&self) -> u64 {
        self.chain.version()
    }

    /// Run `method` with the agent's params (a JSON text) and return the result envelope.
    pub fn call(&mut self, method: &str, params_json: &str) -> Result<Value, UnknownTool> {
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
            let raw = &envelope["raw"];
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
                transaction_id: raw["transactionId"].as_str(),
                error: raw["error"].as_str(),
                error_code: raw["errorCode"].as_str(),
                micros: micros(started.elapsed()),
            });
        }
        Ok(envelope)
    }

    /// Commit the call's budget reservations when its transaction applied or may have (the
    /// spend counts), release them when it certainly did not. A store that cannot settle
    /// leaves them reserved, which counts as spent until the window passes (never fails open).
    fn settle_reservations(&mut self) {
        let ids = self.reservations.take();
        if ids.is_empty() {
            return;
        }
        let commit = self.outcome != TxOutcome::NotApplied;
        if let Err(e) = self.env.state_backend().settle(&ids, commit) {
            tracing::error!(
                context = &*self.scope.scope,
                "budget reservations not settled (they stay counted as spent): {e}"
            );
        }
    }

    /// Before the call's transaction leaves the host: fix its id and record it with the
    /// call's budget reservations, so that if this process stops before the call ends a
    /// reconciler can settle them by what the network knows of it (`crate::reconcile`): an
    /// autonomous or return-bytes call names its transaction; a custom strategy's is opaque
    /// (its reservations are never released). A store that cannot record it refuses the
    /// call, and nothing is sent. Return-bytes bytes leave with the call's answer, after its
    /// reservations are settled, unless a post-tool-execution plugin sees them first: only
    /// then is there anything to record (one write saved per budgeted call otherwise), and
    /// the call's spend is committed before its bytes are put in the answer
    /// ([`Self::commit_before_bytes_leave`]). Returns whether that commit is still owed.
    fn bind_reservations(
        &self,
        env: &dyn CallEnv,
        plan: &Plan,
        built: &mut crate::tools::BuiltTransaction,
        strategy_env: &crate::strategy::StrategyEnv<'_>,
    ) -> Result<bool, Abort> {
        use crate::context::AgentMode;
        use crate::state_store::Binding;
        if self.context.mode == AgentMode::ReturnBytes
            && !plan.has_steps(Stage::PostSecondaryAction)
        {
            return Ok(true);
        }
        let ids = self.reservations.ids();
        if ids.is_empty() {
            return Ok(false);
        }
        let payer = match self.context.mode {
            AgentMode::Autonomous => strategy_env.client.get_operator_account_id(),
            AgentMode::ReturnBytes => self.context.account_id,
            _ => None,
        };
        let binding = match payer {
            Some(payer) => {
                let id = match built.tx.get_transaction_id() {
                    Some(id) => id,
                    None => {
                        let id = crate::tools::transaction::unique_transaction_id(payer);
                        built.tx.transaction_id(id);
                        id
                    }
                };
                let valid = built
                    .tx
                    .get_transaction_valid_duration()
                    .unwrap_or(time::Duration::seconds(120));
                let until = (id.valid_start + valid).unix_timestamp_nanos() / 1_000_000;
                Binding::Transaction {
                    id: crate::mirror::mirror_transaction_id(&id),
                    until_ms: u64::try_from(until).unwrap_or(0),
                }
            }
            None => Binding::Opaque,
        };
        env.state_backend()
            .bind(&ids, &binding)
            .map(|()| false)
            .map_err(|e| {
                Abort::Error(format!(
                "the call's budget reservations could not be recorded with its transaction, so nothing was sent: {e}"
            ))
            })
    }

    /// Commit an unbound return-bytes call's reservations before its bytes go into the
    /// answer: once handed out they may be submitted at any time, and a reservation the
    /// store never recorded as spent would be released after a restart (an unbound orphan
    /// sent nothing, `crate::reconcile`). A store that cannot record the commit refuses the
    /// call: the bytes are not returned (their reservations stay counted here, and an orphan
    /// for the reconciler elsewhere, which releases them: nothing was handed out).
    fn commit_before_bytes_leave(&mut self) -> Result<(), Abort> {
        let ids = self.reservations.take();
        if ids.is_empty() {
            return Ok(());
        }
        match self.env.state_backend().settle(&ids, true) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.outcome = TxOutcome::NotApplied;
                Err(Abort::Error(format!(
                    "the call's budget spend could not be recorded, so its transaction bytes are not returned: {e}"
                )))
            }
        }
    }

    fn outcome_of_run(
        &mut self,
        env: &dyn CallEnv,
        tool: &dyn DynTool,
        plan: &Plan,
        params_json: &str,
    ) -> (Value, CallOutcome) {
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
                (envelope, outcome)
            }
        }
    }

    fn run(
        &mut self,
        env: &dyn CallEnv,
        tool: &dyn DynTool,
        plan: &Plan,
        params_json: &str,
    ) -> Result<Value, Abort> {
        let raw = strict_json::parse(params_json).map_err(|e| match e {
            strict_json::ParseError::OutOfRange { ref field, .. } => Abort::Invalid {
                message: format!("Invalid parameters: {e}"),
                field: field.clone(),
            },
            strict_json::ParseError::Json(e) => Abort::Error(format!(
                "Invalid parameters: the params are not valid JSON: {e}"
            )),
        })?;
        let context_json = std::mem::take(&mut self.context_json);
        // Plugins read rawParams as the kit's hooks see them: a number JavaScript reads as an
        // integer (`1.0`) is written as one, so typed readers (Go, Rust) take it.
        let raw_json = crate::tools::js_number::integral_floats_as_integers(&raw)
            .unwrap_or_else(|| params_json.trim().to_owned());
        let mut state = CallState::new(&context_json, raw, raw_json);
        let outcome = self.run_stages(env, tool, plan, &mut state);
        if outcome.is_err() && !plan.failure_observers().is_empty() {
            self.failed_normalised = state.normalised.as_ref().map(|n| n.json().to_owned());
        }
        drop(state);
        self.context_json = context_json;
        outcome
    }

    fn run_stages(
        &mut self,
        env: &dyn CallEnv,
        tool: &dyn DynTool,
        plan: &Plan,
        state: &mut CallState<'_>,
    ) -> Result<Value, Abort> {
        let context = self.context.clone();
        let recording = self.recorded.is_some();
        let tool_ctx = env.tool_context(
            &context,
            recording
                || plan.has_steps(Stage::PostCoreAction)
                || plan.has_steps(Stage::PostSecondaryAction),
        );

        // 1. pre-tool-execution (sees the agent's unvalidated params)
        self.stage(Stage::PreToolExecution, tool, plan, state, &tool_ctx)?;
        // 2. normalise (validation happens here, as in the kit)
        let method = tool.spec().method;
        state.normalised = Some(
            guarded(method, "normalising its params", || {
                tool.normalise(&state.raw, &tool_ctx)
            })?
            .map_err(Abort::from)?,
        );
        // 3. post-params-normalization
        self.stage(Stage::PostParamsNormalization, tool, plan, state, &tool_ctx)?;
        // 4. core action: build the transaction or run the query
        let normalised = state.normalised.as_ref().expect("set at stage 2");
        let core = guarded(method, "building its transaction or query", || {
            tool.core_action(normalised, &tool_ctx)
        })?
        .map_err(Abort::from)?;
        // The summary is rendered only if a plugin will see it (stages 5 and 7).
        if tool_ctx.wants_summary {
            state.core_json = Some(match &core {
                CoreOutput::Transaction(built) => built.summary_json(),
                CoreOutput::Query(result) => result.to_string(),
            });
        }
        // 5. post-core-action (observe-only)
        self.stage(Stage::PostCoreAction, tool, plan, state, &tool_ctx)?;
        // 6. secondary action: the mode's strategy
        let result = match core {
            CoreOutput::Query(mut result) => {
                self.outcome = TxOutcome::Applied;
                envelope::default_status(&mut result);
                result
            }
            CoreOutput::Transaction(mut built) => {
                let strategy = env.strategy(context.mode).map_err(Abort::Error)?;
                let strategy_env = env.strategy_env(&context);
                let commit_owed = self.bind_reservations(env, plan, &mut built, &strategy_env)?;
                // From here a panic or an error may leave the transaction sent: unknown
                // unless the strategy says otherwise.
                self.outcome = TxOutcome::Unknown;
                let handled = guarded(method, "handing its transaction to the mode", || {
                    strategy.handle(*built, &strategy_env)
                })?;
                self.outcome = match &handled {
                    Ok(SecondaryResult::Executed(_)) => TxOutcome::Applied,
                    Ok(SecondaryResult::Bytes(_)) => TxOutcome::Unknown,
                    Err(StrategyError::Unknown { .. }) => TxOutcome::Unknown,
                    // A custom strategy's plain error may come after it sent the transaction.
                    Err(StrategyError::Tool(_)) if context.mode.is_custom() => TxOutcome::Unknown,
                    Err(StrategyError::Tool(_) | StrategyError::Transaction { .. }) => {
                        TxOutcome::NotApplied
                    }
                };
                match handled {
                    Ok(SecondaryResult::Executed(raw)) => {
                        let message =
                            guarded(method, "wording its result", || tool.post_process(&raw))?;
                        let mut result = envelope::executed(&raw, message);
                        let fields =
                            guarded(method, "wording its result", || tool.result_fields(&raw))?;
                        if let Some(envelope) = result.as_object_mut() {
                            envelope.extend(fields);
                        }
                        envelope::default_status(&mut result);
                        result
                    }
                    Ok(SecondaryResult::Bytes(bytes)) => {
                        if commit_owed {
                            self.commit_before_bytes_leave()?;
                        }
                        // Carries its status already (`ReturnBytesResult::status`).
                        envelope::bytes(bytes)
                    }
                    Err(StrategyError::Tool(e)) => return Err(Abort::Error(e.message)),
                    Err(StrategyError::Unknown {
                        transaction_id,
                        message,
                    }) => {
                        return Err(Abort::Unknown {
                            transaction_id,
                            message,
                        })
                    }
                    Err(StrategyError::Transaction {
                        status,
                        transaction_id,
                        message,
                    }) => {
                        return Err(Abort::Transaction {
                            status,
                            transaction_id,
                            message,
                        })
                    }
                }
            }
        };
        state.outcome = Some(self.outcome.as_str());
        state.set_result(
            result,
            recording || plan.has_steps(Stage::PostSecondaryAction),
        );
        // 7. post-tool-execution
        self.stage(Stage::PostSecondaryAction, tool, plan, state, &tool_ctx)?;
        Ok(state.result.take().expect("set at stage 6"))
    }

    /// Run every step of `stage`: policy check, then hook, plugin by plugin. A replacement by
    /// a hook (only from a plugin granted `params:replace` / `result:replace`) is judged again
    /// by every policy of the stage that already allowed the value it replaced, the replacing
    /// plugin's own included, before the stage goes on: what is built, submitted or returned
    /// is what every policy of the stage approved.
    fn stage(
        &mut self,
        stage: Stage,
        tool: &dyn DynTool,
        plan: &Plan,
        state: &mut CallState<'_>,
        tool_ctx: &ToolContext<'_>,
    ) -> Result<(), Abort> {
        let steps = plan.steps(stage);
        if steps.is_empty() && self.recorded.is_none() {
            return Ok(());
        }
        let spec = tool.spec();
        let chain = self.chain.clone();
        // Policies judge facts: a tool that cannot state them refuses the call, whatever the
        // policies read (an approver is shown them too). Hooks only observe: for them unstated
        // facts are absent, not a refusal, and they are read only for a hook that reads them.
        let judging = steps.iter().any(|s| s.policy);
        if judging || steps.iter().any(|s| s.reads.facts) {
            read_facts(tool, state, tool_ctx, judging)?;
        }
        // The stage JSON is written only when a plugin of the stage reads it (or it is
        // recorded); the others get `""` (contract 0.2.1 `inputs`).
        let render = self.recorded.is_some() || steps.iter().any(|s| s.reads.params);
        let mut buf = std::mem::take(&mut self.buf);
        if render {
            state.render(&mut buf);
        } else {
            buf.clear();
        }
        if let Some(recorded) = &mut self.recorded {
            recorded.push(RecordedStage {
                stage,
                method: spec.method,
                tool_type: spec.tool_type,
                input: buf.clone(),
            });
        }
        let outcome = (|| {
            for (at, step) in steps.iter().enumerate() {
                let member = &chain.members()[step.plugin];
                if step.policy {
                    let call = stage_call(stage, spec, &buf, state);
                    self.judge(step.plugin, &call, step.reads, state)?;
                }
                if !step.hook {
                    continue;
                }
                let session = &mut self.members[step.plugin];
                if session.bypassed() {
                    // This context's circuit is open: a skippable hook that keeps failing
                    // here is bypassed here (other contexts still call it).
                    continue;
                }
                let enforce = member.enforces();
                let started = Instant::now();
                let answer = match budget_at(started, self.budget_left, self.call_budget) {
                    Some(budget) => session.hook(
                        &stage_call(stage, spec, &buf, state)
                            .for_reads(step.reads)
                            .within(budget),
                    ),
                    None => Err(PluginError::Failed(not_run(
                        member.as_ref(),
                        stage.as_str(),
                        self.call_budget,
                    ))),
                };
                let took = started.elapsed();
                self.budget_left = self.budget_left.saturating_sub(took);
                if let Err(PluginError::Failed(f)) = &answer {
                    self.meters[step.plugin].failure(f.cause.as_str());
                }
                let counted = match &answer {
                    Ok(HookAnswer::Proceed) => Answer::Proceed,
                    Ok(HookAnswer::Replace(_)) if enforce => Answer::Replace,
                    Ok(HookAnswer::Replace(_)) => Answer::WouldReplace,
                    Err(PluginError::Failed(_)) => Answer::Failure,
                    Err(PluginError::Answered(_)) => Answer::Error,
                };
                self.note(
                    step.plugin,
                    stage,
                    StepKind::Hook,
                    counted,
                    took,
                    || match &answer {
                        Err(PluginError::Failed(f)) => {
                            (Some(f.cause.as_str().to_owned()), Some(f.detail.clone()))
                        }
                        Err(PluginError::Answered(m)) => (None, Some(m.clone())),
                        _ => (None, None),
                    },
                );
                let json = match (answer, member.on_error()) {
                    (Ok(HookAnswer::Proceed), _) => continue,
                    // A shadow hook's replacement is recorded, never applied.
                    (Ok(HookAnswer::Replace(_)), _) if !enforce => continue,
                    (Ok(HookAnswer::Replace(json)), _) => json,
                    (Err(PluginError::Failed(failure)), OnError::Skip) => {
                        tracing::warn!(
                            "skipping hook after failure (on_error = \"skip\"): {}",
                            crate::logging::one_line(&failure.to_string())
                        );
                        continue;
                    }
                    (Err(_), _) if !enforce => continue,
                    (Err(PluginError::Failed(failure)), OnError::Block) => {
                        return Err(Abort::Plugin(failure))
                    }
                    (Err(PluginError::Answered(message)), _) => return Err(Abort::Error(message)),
                };
                match replace(member.as_ref(), stage, tool, state, json) {
                    Ok(()) => {
                        // Replaced params: their facts, read again, are what is judged.
                        if judging || steps.iter().any(|s| s.reads.facts) {
                            read_facts(tool, state, tool_ctx, judging)?;
                        }
                        if render {
                            state.render(&mut buf);
                        }
                        for earlier in steps[..=at].iter().filter(|s| s.policy) {
                            let call = stage_call(stage, spec, &buf, state);
                            self.judge(earlier.plugin, &call, earlier.reads, state)?;
                        }
                    }
                    Err(detail) => {
                        self.meters[step.plugin].failure(FailureCause::InvalidOutput.as_str());
                        let failure = PluginFailure {
                            plugin: member.name().to_owned(),
                            phase: stage.as_str().into(),
                            cause: FailureCause::InvalidOutput,
                            detail,
                        };
                        if member.on_error() == OnError::Skip {
                            tracing::warn!(
                                "ignoring replacement (on_error = \"skip\"): {}",
                                crate::logging::one_line(&failure.to_string())
                            );
                        } else {
                            return Err(Abort::Plugin(failure));
                        }
                    }
                }
            }
            Ok(())
        })();
        self.buf = buf;
        outcome
    }

    /// One policy check of chain member `index`: allow, or the abort it causes. A shadow
    /// member's (`enforce = false`) block, error, failure or request for approval is recorded
    /// and the call goes on. A request for approval parks the call with the session's
    /// approver: approved, the chain goes on; anything else blocks. The member gets the
    /// parts of `call` it `reads`; an approver is shown the call's normalised params and facts
    /// from `state`, whatever the member reads.
    fn judge(
        &mut self,
        index: usize,
        call: &StageCall<'_>,
        reads: Reads,
        state: &CallState<'_>,
    ) -> Result<(), Abort> {
        let member = self.chain.members()[index].clone();
        let enforce = member.enforces();
        let started = Instant::now();
        let answer = match budget_at(started, self.budget_left, self.call_budget) {
            Some(budget) => self.members[index].policy(&call.for_reads(reads).within(budget)),
            None => Err(PluginError::Failed(not_run(
                member.as_ref(),
                call.stage.as_str(),
                self.call_budget,
            ))),
        };
        let took = started.elapsed();
        self.budget_left = self.budget_left.saturating_sub(took);
        let mut approval = None;
        let (counted, abort) = match answer {
            Ok(Verdict::Allow) => (Answer::Allow, None),
            Ok(Verdict::Block(reason)) => (
                if enforce {
                    Answer::Block
                } else {
                    Answer::WouldBlock
                },
                Some(block(member.as_ref(), call, reason)),
            ),
            Ok(Verdict::NeedsApproval(request)) if !enforce => {
                tracing::info!(
                    plugin = member.name(),
                    method = call.method,
                    "shadow policy would ask for approval: {}",
                    crate::logging::one_line(&request.message)
                );
                (Answer::WouldAsk, None)
            }
            Ok(Verdict::NeedsApproval(request)) => {
                let code = request.code.clone();
                let details_json = request.details_json.clone();
                let message = request.message.clone();
                let outcome = if call.stage == Stage::PreToolExecution {
                    // Nothing the host states exists yet (no normalised params, no facts): an
                    // approver would see only the plugin's own words. Refused, never asked.
                    Ok(ApprovalOutcome {
                        id: None,
                        decision: Approval::Unavailable {
                            reason: "asked at pre_tool_execution, before the host has the call's normalised params and facts, so an approver would decide blind; a policy asks for approval from post_params_normalization on".into(),
                        },
                    })
                } else {
                    self.ask_approval(member.as_ref(), call, request, state)
                };
                match outcome {
                    Ok(outcome) if outcome.decision.approved() => {
                        approval = Some(outcome);
                        (Answer::Approved, None)
                    }
                    Ok(outcome) => {
                        let reason = BlockReason {
                            message: denial_reason(&message, &outcome.decision),
                            code,
                            details_json,
                        };
                        let mut abort = block(member.as_ref(), call, reason);
                        if let Abort::Blocked(b) = &mut abort {
                            b.approval = Some(outcome.clone());
                        }
                        approval = Some(outcome);
                        (Answer::Denied, Some(abort))
                    }
                    Err(failure) => {
                        self.meters[index].failure(failure.cause.as_str());
                        (Answer::Failure, Some(Abort::Plugin(failure)))
                    }
                }
            }
            Err(PluginError::Failed(failure)) => {
                self.meters[index].failure(failure.cause.as_str());
                (Answer::Failure, Some(Abort::Plugin(failure)))
            }
            Err(PluginError::Answered(message)) => (Answer::Error, Some(Abort::Error(message))),
        };
        self.note(
            index,
            call.stage,
            StepKind::Policy,
            counted,
            took,
            || match &abort {
                Some(Abort::Blocked(b)) => (b.reason_code.clone(), Some(b.reason.clone())),
                Some(Abort::Plugin(f)) => {
                    (Some(f.cause.as_str().to_owned()), Some(f.detail.clone()))
                }
                Some(Abort::Error(m)) => (None, Some(m.clone())),
                _ => (None, None),
            },
        );
        if let (Some(approval), Some(decision)) = (approval, self.decisions.last_mut()) {
            decision.approval = Some(approval);
        }
        match abort {
            Some(abort) if enforce => Err(abort),
            Some(Abort::Blocked(b)) => {
                tracing::info!(
                    plugin = member.name(),
                    method = call.method,
                    code = b.reason_code.as_deref().unwrap_or_default(),
                    "shadow policy would block: {}",
                    crate::logging::one_line(&b.reason)
                );
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Hand a needs-approval verdict to the session's approver and wait for its decision.
    /// Invalid details are the plugin's failure (nobody is asked).
    fn ask_approval(
        &mut self,
        member: &dyn ChainPlugin,
        call: &StageCall<'_>,
        request: ApprovalRequest,
        state: &CallState<'_>,
    ) -> Result<ApprovalOutcome, PluginFailure> {
        let details = details_of(
            member,
            call.stage,
            "approval",
            request.details_json.as_deref(),
        )?;
        let ask = Ask {
            plugin: member.name().to_owned(),
            policy_name: member.description().name.clone(),
            tool: call.method.to_owned(),
            stage: call.stage.as_str(),
            message: request.message.clone(),
            code: request.code.clone(),
            details,
            agent: self.caller.as_deref().map(str::to_owned),
            context: self.scope.scope.to_string(),
            normalised_params: state
                .normalised
                .as_ref()
                .and_then(|n| serde_json::from_str::<Value>(n.json()).ok()),
            facts: state.facts.clone(),
            timeout_seconds: request.timeout_seconds,
        };
        let outcome = match &self.approver {
            Some(approver) => approver.decide(ask),
            None => ApprovalOutcome {
                id: None,
                decision: Approval::Unavailable {
                    reason: "no approver here: needs-approval verdicts are decided through `hak serve` or `hak mcp`".into(),
                },
            },
        };
        self.env.metrics().approval(outcome.decision.as_str());
        Ok(outcome)
    }

    /// Count one plugin step and, while a decision log is open, record it (`detail` gives
    /// its code and reason, computed only then).
    fn note(
        &mut self,
        index: usize,
        stage: Stage,
        kind: StepKind,
        answer: Answer,
        took: Duration,
        detail: impl FnOnce() -> (Option<String>, Option<String>),
    ) {
        let meters = &self.meters[index];
        meters.step((stage.index(), stage.as_str()), kind, answer, took);
        if self.recording {
            let (code, reason) = detail();
            self.decisions.push(Decision {
                plugin: meters.name().clone(),
                stage: stage.as_str(),
                kind,
                answer,
                enforce: self.chain.members()[index].enforces(),
                code,
                reason,
                micros: micros(took),
                approval: None,
            });
        }
    }

    /// Tell every failure observer of the tool how the call ended (`events.on-tool-failure`).
    /// Observe-only: their failures are logged and their instances discarded; the agent's
    /// result does not change.
    fn notify_failure(
        &mut self,
        tool: &dyn DynTool,
        plan: &Plan,
        params_json: &str,
        envelope: &Value,
    ) {
        let spec = tool.spec();
        let raw = &envelope["raw"];
        let code = raw["errorCode"].as_str();
        let mut input = serde_json::Map::new();
        input.insert("method".into(), spec.method.into());
        input.insert("toolType".into(), json!(spec.tool_type));
        input.insert(
            "context".into(),
            serde_json::from_str(&self.context_json).unwrap_or(Value::Null),
        );
        input.insert(
            "rawParams".into(),
            serde_json::from_str(params_json).unwrap_or_else(|_| params_json.into()),
        );
        if let Some(n) = self.failed_normalised.take() {
            input.insert(
                "normalisedParams".into(),
                serde_json::from_str(&n).unwrap_or(Value::Null),
            );
        }
        let outcome = if code == Some("POLICY_BLOCKED") {
            "blocked"
        } else {
            "failed"
        };
        input.insert("outcome".into(), outcome.into());
        input.insert("transactionOutcome".into(), self.outcome.as_str().into());
        input.insert("error".into(), raw["error"].clone());
        for key in ["errorCode", "policyBlock", "pluginFailure", "transactionId"] {
            if let Some(v) = raw.get(key) {
                input.insert(key.into(), v.clone());
            }
        }
        let input = Value::Object(input).to_string();
        for &index in plan.failure_observers() {
            let started = Instant::now();
            let Some(budget) = budget_at(started, self.budget_left, self.call_budget) else {
                tracing::warn!(
                    plugin = self.chain.members()[index].name(),
                    "failure notification not delivered: the call's plugin budget is spent"
                );
                continue;
            };
            let delivered = self.members[index].on_failure(&input, Some(budget));
            self.budget_left = self.budget_left.saturating_sub(started.elapsed());
            if let Err(failure) = delivered {
                tracing::warn!(
                    "failure notification not delivered: {}",
                    crate::logging::one_line(&failure.to_string())
                );
            }
        }
    }
}

/// What a plugin is called with at `stage` of a call to `spec`'s tool: the stage input and,
/// from post-params-normalization on, the call's facts.
fn stage_call<'a>(
    stage: Stage,
    spec: &'a ToolSpec,
    input: &'a str,
    state: &'a CallState<'_>,
) -> StageCall<'a> {
    StageCall {
        stage,
        method: spec.method,
        tool_type: spec.tool_type,
        input,
        facts: state.facts.as_ref(),
        budget: None,
    }
}

/// The budget of a guest call starting at `now` with `left` of the call's plugin time
/// (`total`): `None` when nothing is left.
fn budget_at(now: Instant, left: Duration, total: Duration) -> Option<CallBudget> {
    (!left.is_zero()).then(|| CallBudget {
        until: now + left,
        total_ms: total.as_millis() as u64,
    })
}

/// The failure of `member`, not run at `phase` because the plugins before it spent the
/// call's plugin time: fails closed like any deadline (a policy blocks; a hook follows its
/// `on_error`).
fn not_run(member: &dyn ChainPlugin, phase: &str, total: Duration) -> PluginFailure {
    PluginFailure {
        plugin: member.name().to_owned(),
        phase: phase.into(),
        cause: FailureCause::Deadline,
        detail: format!(
            "not run: the plugins before it spent the tool call's {} ms plugin budget ([engine] call_budget_ms)",
            total.as_millis()
        ),
    }
}

/// Every chain member's metric handles, in chain order.
fn open_meters(env: &dyn CallEnv, chain: &Chain) -> Vec<PluginMeters> {
    chain
        .members()
        .iter()
        .map(|m| env.metrics().plugin(m.name()))
        .collect()
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Every chain member's state for the context `scope`, in chain order.
fn open_members(chain: &Chain, scope: &ContextScope) -> Vec<Box<dyn PluginSession>> {
    chain.members().iter().map(|m| m.open(scope)).collect()
}

/// Run one of a tool's own steps so that a panic in it (or in the SDK under it) becomes an
/// error envelope naming the tool, logged as the bug it is, instead of ending the process.
fn guarded<T>(method: &str, doing: &str, step: impl FnOnce() -> T) -> Result<T, Abort> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)).map_err(|payload| {
        let detail = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned());
        tracing::error!(method, "bug: {method} panicked while {doing}: {detail}");
        Abort::Error(format!(
            "internal error in {method} while {doing} (a bug in hak, logged): {detail}"
        ))
    })
}

/// A denied request's block reason: the policy's message and what became of the request.
fn denial_reason(message: &str, decision: &Approval) -> String {
    let what = match decision {
        Approval::Approved { .. } => return message.to_owned(),
        Approval::Denied { by, note, .. } => match note {
            Some(note) => format!("denied by {by}: {note}"),
            None => format!("denied by {by}"),
        },
        Approval::Timeout => "no approval in time".to_owned(),
        Approval::Unavailable { reason } => format!("approval unavailable: {reason}"),
    };
    format!("{message} ({what})")
}

/// A block's or approval request's `details-json`, parsed (`Null` when absent); invalid JSON is
/// the plugin's `invalid-output` failure.
fn details_of(
    member: &dyn ChainPlugin,
    stage: Stage,
    what: &str,
    json: Option<&str>,
) -> Result<Value, PluginFailure> {
    match json.map(serde_json::from_str::<Value>) {
        None => Ok(Value::Null),
        Some(Ok(details)) => Ok(details),
        Some(Err(e)) => Err(PluginFailure {
            plugin: member.name().to_owned(),
            phase: stage.as_str().into(),
            cause: FailureCause::InvalidOutput,
            detail: format!("{what} details-json is not valid JSON: {e}"),
        }),
    }
}

/// A policy's block, with its details JSON checked.
fn block(member: &dyn ChainPlugin, call: &StageCall<'_>, info: BlockReason) -> Abort {
    let stage = call.stage;
    let details = match details_of(member, stage, "block", info.details_json.as_deref()) {
        Ok(details) => details,
        Err(failure) => return Abort::Plugin(failure),
    };
    Abort::Blocked(Box::new(Block {
        policy: member.description().clone(),
        plugin: member.name().to_owned(),
        method: call.method.to_owned(),
        stage,
        reason: info.message,
        reason_code: info.code,
        details,
        approval: None,
    }))
}

/// The call's facts, once it has normalised params and they were not read yet (again after a
/// replacement): what every policy from post-params-normalization on judges. A tool that
/// cannot state them refuses the call when a policy is to judge them (`judging`).
fn read_facts(
    tool: &dyn DynTool,
    state: &mut CallState<'_>,
    tool_ctx: &ToolContext<'_>,
    judging: bool,
) -> Result<(), Abort> {
    if state.facts.is_none() {
        if let Some(normalised) = state.normalised.as_ref() {
            let read = guarded(tool.spec().method, "stating its facts", || {
                tool.read_facts(normalised, tool_ctx)
            })?;
            match read {
                Ok(facts) => state.facts = Some(facts),
                Err(e) if judging => return Err(Abort::from(e)),
                // Only hooks at this stage: they see no facts; a later policy reads again.
                Err(e) => tracing::debug!("facts not stated for hooks: {}", e.message),
            }
        }
    }
    Ok(())
}

/// Apply a hook's replacement to the value its stage owns, re-validated like host-made values.
/// Replacing params needs the `params:replace` capability, replacing the tool result
/// `result:replace`; a result replacement may change `humanMessage` only, never `raw` (the
/// bytes, status, transaction id and every other field describing what happened).
fn replace(
    member: &dyn ChainPlugin,
    stage: Stage,
    tool: &dyn DynTool,
    state: &mut CallState<'_>,
    json: String,
) -> Result<(), String> {
    let needed = match stage {
        Stage::PostCoreAction => {
            return Err(
                "post-core-action is observe-only; coreActionResult cannot be replaced".into(),
            )
        }
        Stage::PostSecondaryAction => Capability::ReplaceResult,
        _ => Capability::ReplaceParams,
    };
    if !member.grants(needed) {
        return Err(format!(
            "replaced the {} without the {} capability (grant it in the plugin's `capabilities`)",
            stage.replaceable(),
            needed.as_str()
        ));
    }
    match stage {
        Stage::PreToolExecution => {
            let value = strict_json::parse(&json)
                .map_err(|e| format!("replacement rawParams are not valid JSON: {e}"))?;
            tool.spec()
                .schema
                .validate(&value)
                .map_err(|e| format!("replacement rawParams do not match the tool schema: {e}"))?;
            state.raw = value;
            state.raw_json = json;
        }
        Stage::PostParamsNormalization => {
            let normalised = tool
                .normalised_from_json(&json)
                .map_err(|e| format!("replacement normalisedParams are invalid: {e}"))?;
            state.facts = None; // read again before the stage's policies judge them
            state.normalised = Some(normalised);
        }
        Stage::PostCoreAction => {
            return Err(
                "post-core-action is observe-only; coreActionResult cannot be replaced".into(),
            )
        }
        Stage::PostSecondaryAction => {
            let value = strict_json::parse(&json)
                .map_err(|e| format!("replacement toolResult is not valid JSON: {e}"))?;
            let current = state.result.as_ref().map(|r| &r["raw"]);
            if value.get("raw") != current {
                return Err(
                    "replacement toolResult changes raw (the bytes, status, transaction id and the rest of what happened); only humanMessage may change".into(),
                );
            }
            if let Some(key) = value.as_object().and_then(|o| {
                o.keys()
                    .find(|k| !matches!(k.as_str(), "raw" | "humanMessage"))
            }) {
                return Err(format!(
                    "replacement toolResult adds {key:?}; only humanMessage may change"
                ));
            }
            state.result_json = Some(json);
            state.result = Some(value);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
