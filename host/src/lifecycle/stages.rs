//! The stages of one call: each hookable stage's plugins in manifest order (policy check,
//! then hook), their deadlines and budgets, the facts they read and the params a hook
//! replaces. What must not live here: what a verdict means for the call (`verdicts`).

use super::*;
use crate::capabilities::Capability;
use crate::manifest::OnError;
use crate::model::stage::Stage;
use crate::observe::metrics::{Answer, PluginMeters, StepKind};
use crate::plugin::ChainPlugin;
use crate::plugin::{
    CallBudget, ContextScope, FailureCause, HookAnswer, PluginError, PluginFailure, PluginSession,
    StageCall,
};
use crate::strategy::{SecondaryResult, StrategyError};
use crate::tools::{CoreOutput, DynTool, ToolContext, ToolSpec};
use call_state::CallState;
use chain::{Chain, Plan};
pub use env::CallEnv;
use envelope::{Abort, Envelope};
use std::time::{Duration, Instant};

impl Session {
    pub(super) fn run_stages(
        &mut self,
        env: &dyn CallEnv,
        tool: &dyn DynTool,
        plan: &Plan,
        state: &mut CallState<'_>,
    ) -> Result<Envelope, Abort> {
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
        let plain = match &mut state.raw {
            call_state::RawParams::Plain(params) => params.take(),
            call_state::RawParams::Value(_) => None,
        };
        state.normalised = Some(
            guarded(method, "normalising its params", || {
                match (plain, &state.raw) {
                    (Some(plain), _) => tool.normalise_plain(plain, &tool_ctx),
                    (None, call_state::RawParams::Value(raw)) => tool.normalise(raw, &tool_ctx),
                    (None, call_state::RawParams::Plain(_)) => Err(
                        crate::tools::ToolError::message("internal error: params read twice"),
                    ),
                }
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
                Envelope::Value(result)
            }
            CoreOutput::Transaction(mut built) => {
                // A pause made while this call ran stops it before its transaction leaves.
                if let Some(paused) = env.paused() {
                    return Err(envelope::paused(method, Stage::PostCoreAction, &paused));
                }
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
                        Envelope::Value(result)
                    }
                    Ok(SecondaryResult::Bytes(bytes)) => {
                        if commit_owed {
                            self.commit_before_bytes_leave()?;
                        }
                        // Carries its status already (`ReturnBytesResult::status`).
                        Envelope::Bytes(bytes)
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
    pub(super) fn stage(
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
        // Policies judge facts: a tool that may fail to state them (it reads them from the
        // network) refuses the call when a policy judges, whatever the policies read. The
        // others state them from the params without failing: read only for a plugin that
        // reads them (and for an approver, when a policy asks: `judge`). Hooks only observe:
        // for them unstated facts are absent, not a refusal.
        let judging = steps.iter().any(|s| s.policy);
        let read = steps.iter().any(|s| s.reads.facts) || (judging && tool.facts_from_network());
        if read {
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
        self.clock = None;
        let outcome = (|| {
            for (at, step) in steps.iter().enumerate() {
                let member = &chain.members()[step.plugin];
                if step.policy {
                    let call = stage_call(stage, spec, &buf, state);
                    self.judge(
                        step.plugin,
                        member.as_ref(),
                        &call.for_reads(step.reads),
                        state,
                        tool,
                        tool_ctx,
                    )?;
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
                let started = self.clock.take().unwrap_or_else(Instant::now);
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
                let ended = Instant::now();
                let took = ended.saturating_duration_since(started);
                self.budget_left = self.budget_left.saturating_sub(took);
                if matches!(answer, Ok(HookAnswer::Proceed)) {
                    self.clock = Some(ended);
                }
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
                        if read {
                            read_facts(tool, state, tool_ctx, judging)?;
                        }
                        if render {
                            state.render(&mut buf);
                        }
                        for earlier in steps[..=at].iter().filter(|s| s.policy) {
                            let call = stage_call(stage, spec, &buf, state);
                            self.judge(
                                earlier.plugin,
                                chain.members()[earlier.plugin].as_ref(),
                                &call.for_reads(earlier.reads),
                                state,
                                tool,
                                tool_ctx,
                            )?;
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
        self.clock = None;
        outcome
    }
}

/// What a plugin is called with at `stage` of a call to `spec`'s tool: the stage input and,
/// from post-params-normalization on, the call's facts.
pub(super) fn stage_call<'a>(
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
pub(super) fn budget_at(now: Instant, left: Duration, total: Duration) -> Option<CallBudget> {
    (!left.is_zero()).then(|| CallBudget {
        until: now + left,
        total_ms: total.as_millis() as u64,
        started: now,
    })
}

/// The failure of `member`, not run at `phase` because the plugins before it spent the
/// call's plugin time: fails closed like any deadline (a policy blocks; a hook follows its
/// `on_error`).
pub(super) fn not_run(member: &dyn ChainPlugin, phase: &str, total: Duration) -> PluginFailure {
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
pub(super) fn open_meters(env: &dyn CallEnv, chain: &Chain) -> Vec<PluginMeters> {
    chain
        .members()
        .iter()
        .map(|m| env.metrics().plugin(m.name()))
        .collect()
}

pub(super) fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Every chain member's state for the context `scope`, in chain order.
pub(super) fn open_members(chain: &Chain, scope: &ContextScope) -> Vec<Box<dyn PluginSession>> {
    chain.members().iter().map(|m| m.open(scope)).collect()
}

/// Run one of a tool's own steps so that a panic in it (or in the SDK under it) becomes an
/// error envelope naming the tool, logged as the bug it is, instead of ending the process.
pub(super) fn guarded<T>(method: &str, doing: &str, step: impl FnOnce() -> T) -> Result<T, Abort> {
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

/// The call's facts, once it has normalised params and they were not read yet (again after a
/// replacement): what every policy from post-params-normalization on judges. A tool that
/// cannot state them refuses the call when a policy is to judge them (`judging`).
pub(super) fn read_facts(
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
pub(super) fn replace(
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
            state.replace_raw(value, json);
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
            // A hook's rewrite is rare: the typed result is compared as its value.
            let current = state.result.take().map(Envelope::into_value);
            let unchanged = value.get("raw") == current.as_ref().map(|r| &r["raw"]);
            state.result = current.map(Envelope::Value);
            if !unchanged {
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
            state.result = Some(Envelope::Value(value));
        }
    }
    Ok(())
}
