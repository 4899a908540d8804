//! The four hookable lifecycle stages and their names on every surface (WIT, JSON, messages).

use serde::Serialize;
use std::fmt;

/// A hookable stage of the kit's 7-stage lifecycle (stages 1, 3, 5 and 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    PreToolExecution,
    PostParamsNormalization,
    PostCoreAction,
    PostSecondaryAction,
}

impl Stage {
    pub const ALL: [Stage; 4] = [
        Stage::PreToolExecution,
        Stage::PostParamsNormalization,
        Stage::PostCoreAction,
        Stage::PostSecondaryAction,
    ];

    /// Position in [`Stage::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The kit's `POLICY_BLOCK_STAGES` spelling, used in `policyBlock.stage` and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::PreToolExecution => "pre_tool_execution",
            Stage::PostParamsNormalization => "post_params_normalization",
            Stage::PostCoreAction => "post_core_action",
            Stage::PostSecondaryAction => "post_secondary_action",
        }
    }

    /// The stage field a hook may replace at this stage (`coreActionResult` never is).
    pub fn replaceable(self) -> &'static str {
        match self {
            Stage::PreToolExecution => "rawParams",
            Stage::PostParamsNormalization => "normalisedParams",
            Stage::PostCoreAction => "coreActionResult",
            Stage::PostSecondaryAction => "toolResult",
        }
    }

    /// A stage from either spelling (`post_params_normalization` or
    /// `post-params-normalization`).
    pub fn parse(text: &str) -> Option<Stage> {
        Stage::ALL
            .into_iter()
            .find(|s| s.as_str() == text || s.wit_name() == text)
    }

    /// The WIT spelling (`pre-tool-execution`, …), as `hak plugin inspect` prints it.
    pub fn wit_name(self) -> &'static str {
        match self {
            Stage::PreToolExecution => "pre-tool-execution",
            Stage::PostParamsNormalization => "post-params-normalization",
            Stage::PostCoreAction => "post-core-action",
            Stage::PostSecondaryAction => "post-secondary-action",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A small set of stages (a bit per stage).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageSet(u8);

impl StageSet {
    pub fn insert(&mut self, stage: Stage) {
        self.0 |= 1 << stage.index();
    }
    pub fn contains(self, stage: Stage) -> bool {
        self.0 & (1 << stage.index()) != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn iter(self) -> impl Iterator<Item = Stage> {
        Stage::ALL.into_iter().filter(move |s| self.contains(*s))
    }
}

impl FromIterator<Stage> for StageSet {
    fn from_iter<I: IntoIterator<Item = Stage>>(iter: I) -> Self {
        let mut set = StageSet::default();
        iter.into_iter().for_each(|s| set.insert(s));
        set
    }
}
