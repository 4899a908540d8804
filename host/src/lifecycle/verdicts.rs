//! What a plugin's answer does to the call: a block (with the kit's words), a request for
//! approval (asked of the approver, its decision recorded), a failure (by the plugin's
//! `on_error`), each noted in the decision log and the metrics. What must not live here:
//! running the stages (`stages`).

use super::*;
use crate::approvals::{Ask, Decision as Approval, Outcome as ApprovalOutcome};
use crate::model::facts::Facts;
use crate::model::stage::Stage;
use crate::observe::decisions::Decision;
use crate::observe::metrics::{Answer, StepKind};
use crate::plugin::ChainPlugin;
use crate::plugin::{
    ApprovalRequest, BlockReason, FailureCause, PluginError, PluginFailure, StageCall, Verdict,
};
use crate::tools::DynTool;
use call_state::CallState;
use chain::Plan;
pub use env::CallEnv;
use envelope::{Abort, Block};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

impl Session {
    /// One policy check of chain member `index` (`member`, from the chain the stage runs on:
    /// borrowed, not counted again for every check): allow, or the abort it causes. A shadow
    /// member's (`enforce = false`) block, error, failure or request for approval is recorded
    /// and the call goes on. A request for approval parks the call with the session's
    /// approver: approved, the chain goes on; anything else blocks. `call` holds the parts
    /// of the stage input the member reads (`StageCall::for_reads`); an approver is shown
    /// the call's normalised params and facts from `state`, whatever the member reads
    /// (`tool` reads the facts then, when no plugin of the stage read them; facts that
    /// cannot be read refuse the call).
    pub(super) fn judge(
        &mut self,
        index: usize,
        member: &dyn ChainPlugin,
        call: &StageCall<'_>,
        state: &CallState<'_>,
        tool: &dyn DynTool,
        tool_ctx: &crate::tools::ToolContext<'_>,
    ) -> Result<(), Abort> {
        let enforce = member.enforces();
        let started = self.clock.take().unwrap_or_else(Instant::now);
        let answer = match budget_at(started, self.budget_left, self.call_budget) {
            Some(budget) => self.members[index].policy(&call.within(budget)),
            None => Err(PluginError::Failed(not_run(
                member,
                call.stage.as_str(),
                self.call_budget,
            ))),
        };
        let ended = Instant::now();
        let took = ended.saturating_duration_since(started);
        self.budget_left = self.budget_left.saturating_sub(took);
        if matches!(answer, Ok(Verdict::Allow)) {
            // The stage's next step starts here: only this step's count (and, while a log is
            // open, its record) runs in between.
            self.clock = Some(ended);
        }
        let mut approval = None;
        let (counted, abort) = match answer {
            Ok(Verdict::Allow) => (Answer::Allow, None),
            Ok(Verdict::Block(reason)) => (
                if enforce {
                    Answer::Block
                } else {
                    Answer::WouldBlock
                },
                Some(block(member, call, reason)),
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
                    let facts = match (&state.facts, &state.normalised) {
                        (Some(facts), _) => Some(facts.clone()),
                        // The tool's own reader, as for a plugin that reads them: a
                        // schedule's facts come from the network, and a failure refuses.
                        (None, Some(normalised)) => {
                            Some(stages::guarded(call.method, "stating its facts", || {
                                tool.read_facts(normalised, tool_ctx)
                            })??)
                        }
                        (None, None) => None,
                    };
                    self.ask_approval(member, call, request, state, facts)
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
                        let mut abort = block(member, call, reason);
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
    pub(super) fn ask_approval(
        &mut self,
        member: &dyn ChainPlugin,
        call: &StageCall<'_>,
        request: ApprovalRequest,
        state: &CallState<'_>,
        facts: Option<Facts>,
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
            facts,
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
    pub(super) fn note(
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
    pub(super) fn notify_failure(
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

/// A denied request's block reason: the policy's message and what became of the request.
pub(super) fn denial_reason(message: &str, decision: &Approval) -> String {
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
pub(super) fn details_of(
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
pub(super) fn block(member: &dyn ChainPlugin, call: &StageCall<'_>, info: BlockReason) -> Abort {
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
