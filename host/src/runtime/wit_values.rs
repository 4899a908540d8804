//! The host's values as the 0.2 world's WIT types and back, for [`super::instance`]: a stage
//! input with its facts lent as borrowed records (no copies of the strings), the call's stage
//! and tool type, a guest's verdict, and the input's size for the input limit. What must not
//! live here: running a guest, limits, failures.

use super::bindings::v0_2;
use crate::model::facts::{Asset, Facts, Via};
use crate::model::stage::Stage;
use crate::model::ToolType;
use crate::plugin::{ApprovalRequest, BlockReason, StageCall, Verdict};

/// What a stage call hands the guest, for the input limit: method, params and facts.
pub(super) fn input_size(call: &StageCall<'_>) -> usize {
    call.method.len() + call.input.len() + call.facts.map_or(0, facts_size)
}

fn facts_size(f: &Facts) -> usize {
    let id = |a: &Asset| match a {
        Asset::Hbar => 0,
        Asset::Token(t) | Asset::Nft(t) => t.len(),
    };
    f.movements
        .iter()
        .map(|m| 16 + id(&m.asset) + m.to.as_ref().map_or(0, String::len))
        .sum::<usize>()
        + f.tokens.iter().map(String::len).sum::<usize>()
        + f.changes
            .iter()
            .map(|c| c.kind.len() + c.id.len())
            .sum::<usize>()
        + f.source.as_ref().map_or(0, String::len)
        + f.memo.as_ref().map_or(0, String::len)
}

/// [`Facts`] as the 0.2 WIT borrows them (the lists it points into).
pub(super) struct WitFacts<'a> {
    movements: Vec<v0_2::hedera::agent_kit::types::Movement<'a>>,
    tokens: Vec<&'a str>,
    changes: Vec<v0_2::hedera::agent_kit::types::Entity<'a>>,
    facts: &'a Facts,
}

impl<'a> WitFacts<'a> {
    pub(super) fn new(facts: &'a Facts) -> Self {
        use v0_2::hedera::agent_kit::types as wit;
        WitFacts {
            movements: facts
                .movements
                .iter()
                .map(|m| wit::Movement {
                    asset: match &m.asset {
                        Asset::Hbar => wit::Asset::Hbar,
                        Asset::Token(t) => wit::Asset::Token(t),
                        Asset::Nft(t) => wit::Asset::Nft(t),
                    },
                    to: m.to.as_deref(),
                    amount: m.amount,
                    via: match m.via {
                        Via::Transfer => wit::Via::Transfer,
                        Via::Allowance => wit::Via::Allowance,
                    },
                })
                .collect(),
            tokens: facts.tokens.iter().map(String::as_str).collect(),
            changes: facts
                .changes
                .iter()
                .map(|c| wit::Entity {
                    kind: c.kind,
                    id: &c.id,
                })
                .collect(),
            facts,
        }
    }

    fn wit(&'a self) -> v0_2::hedera::agent_kit::types::Facts<'a> {
        v0_2::hedera::agent_kit::types::Facts {
            movements: &self.movements,
            source: self.facts.source.as_deref(),
            tokens: &self.tokens,
            changes: &self.changes,
            memo: self.facts.memo.as_deref(),
            scheduled: self.facts.scheduled,
        }
    }
}

pub(super) fn stage_input_0_2<'a>(
    call: &StageCall<'a>,
    facts: Option<&'a WitFacts<'a>>,
) -> v0_2::hedera::agent_kit::types::StageInput<'a> {
    let (stage, tool_type) = wit_stage_and_type(call);
    v0_2::hedera::agent_kit::types::StageInput {
        stage,
        method: call.method,
        tool_type,
        params: call.input,
        facts: facts.map(WitFacts::wit),
    }
}

/// The call's stage and tool type as the 0.2 contract writes them.
pub(super) fn wit_stage_and_type(
    call: &StageCall<'_>,
) -> (
    v0_2::hedera::agent_kit::types::Stage,
    v0_2::hedera::agent_kit::types::ToolType,
) {
    use v0_2::hedera::agent_kit::types::{Stage as S, ToolType as T};
    let stage = match call.stage {
        Stage::PreToolExecution => S::PreToolExecution,
        Stage::PostParamsNormalization => S::PostParamsNormalization,
        Stage::PostCoreAction => S::PostCoreAction,
        Stage::PostSecondaryAction => S::PostSecondaryAction,
    };
    let tool_type = match call.tool_type {
        ToolType::Query => T::Query,
        ToolType::Transaction => T::Transaction,
        ToolType::Other => T::Other,
    };
    (stage, tool_type)
}

/// A 0.2 verdict as the host holds it.
pub(super) fn verdict_0_2(v: v0_2::hedera::agent_kit::types::Verdict) -> Verdict {
    use v0_2::hedera::agent_kit::types::Verdict as V;
    match v {
        V::Allow => Verdict::Allow,
        V::Block(b) => Verdict::Block(BlockReason {
            message: b.message,
            code: b.code,
            details_json: b.details_json,
        }),
        V::NeedsApproval(a) => Verdict::NeedsApproval(ApprovalRequest {
            message: a.message,
            code: a.code,
            details_json: a.details_json,
            timeout_seconds: a.timeout_seconds,
        }),
    }
}
