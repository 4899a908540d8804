//! What a plugin is to the lifecycle, whatever runs it: the [`ChainPlugin`] trait (a member of
//! the chain) and the [`PluginSession`] it opens per agent context, over domain types —
//! [`Verdict`], [`HookAnswer`], [`PluginError`], [`PluginDescription`], [`PluginFailure`].
//!
//! The wasm implementation lives in `runtime::member` (instances, first-use creation, discard
//! on failure, counters, every WIT ↔ domain conversion); trusted in-process plugins implement
//! it through `lifecycle::native`. Nothing here names wasmtime or the WIT bindings, and nothing
//! here runs a plugin: this is the seam between the lifecycle above and the engines below.

mod failure;

pub use failure::{FailureCause, PluginFailure};

use crate::capabilities::Capability;
use crate::manifest::OnError;
use crate::model::facts::Facts;
use crate::model::stage::{Stage, StageSet};
use crate::model::ToolType;
use crate::state_store::{CallReservations, StateBackend};
use serde::Serialize;
use std::any::Any;
use std::sync::Arc;

/// What a plugin says about itself (`describe`), checked.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginDescription {
    pub name: String,
    pub description: String,
    pub relevant_tools: Vec<String>,
    #[serde(skip)]
    pub hook_stages: StageSet,
    #[serde(skip)]
    pub policy_stages: StageSet,
}

impl PluginDescription {
    /// The kit's `appliesToMethod`: `'*'` or an exact method name.
    pub fn applies_to(&self, method: &str) -> bool {
        self.relevant_tools.iter().any(|t| t == "*" || t == method)
    }
}

/// What a plugin reads of a stage input (contract 0.2.1 `inputs`): the stage params JSON, the
/// typed facts. A part it does not read is not rendered, computed or lowered for it: it gets
/// `""` for the params and no facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reads {
    pub params: bool,
    pub facts: bool,
}

impl Reads {
    /// `["params", "facts"]`, the parts read, as `hak plugin inspect` shows them.
    pub fn names(self) -> Vec<&'static str> {
        [(self.params, "params"), (self.facts, "facts")]
            .into_iter()
            .filter_map(|(read, name)| read.then_some(name))
            .collect()
    }

    /// Every part: what a plugin that says nothing (any built before 0.2.1) gets.
    pub const ALL: Reads = Reads {
        params: true,
        facts: true,
    };
}

/// What a plugin reads, per tool: the entry naming the method, else the `"*"` entry, else
/// every part.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadsTable {
    tools: Vec<(String, Reads)>,
    otherwise: Option<Reads>,
}

impl ReadsTable {
    /// Entries in the plugin's order; the first one naming a tool wins, as does the first
    /// `"*"`.
    pub fn new(entries: impl IntoIterator<Item = (String, Reads)>) -> Self {
        let mut table = ReadsTable::default();
        for (tool, reads) in entries {
            if tool == "*" {
                table.otherwise.get_or_insert(reads);
            } else if !table.tools.iter().any(|(t, _)| *t == tool) {
                table.tools.push((tool, reads));
            }
        }
        table
    }

    /// The entries, the `"*"` one last (`"*"` reads everything when the plugin named none).
    pub fn entries(&self) -> impl Iterator<Item = (&str, Reads)> {
        self.tools
            .iter()
            .map(|(tool, reads)| (tool.as_str(), *reads))
            .chain(std::iter::once(("*", self.otherwise.unwrap_or(Reads::ALL))))
    }

    pub fn for_method(&self, method: &str) -> Reads {
        self.tools
            .iter()
            .find(|(tool, _)| tool == method)
            .map(|(_, reads)| *reads)
            .or(self.otherwise)
            .unwrap_or(Reads::ALL)
    }
}

/// Why a policy blocks: its message (the kit's `reason`), an optional machine code and
/// optional details as a JSON text (checked by the lifecycle).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockReason {
    pub message: String,
    pub code: Option<String>,
    pub details_json: Option<String>,
}

/// What a policy asks a human to decide (contract 0.2.0): its message, an optional machine
/// code, optional details as a JSON text, and how long to wait (0: the host's default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalRequest {
    pub message: String,
    pub code: Option<String>,
    pub details_json: Option<String>,
    pub timeout_seconds: u32,
}

/// A policy's answer at one stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Block(BlockReason),
    /// Park the call until an approver decides; denied, timed out or unanswerable: blocked.
    NeedsApproval(ApprovalRequest),
}

/// A hook's answer at one stage: go on, or replace the stage's value with this JSON text
/// (allowed only with the matching capability, and judged again by the stage's policies).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookAnswer {
    Proceed,
    Replace(String),
}

/// Why a plugin gave no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PluginError {
    /// It failed (trap, deadline, memory, fuel, oversized or invalid output): the manifest's
    /// `on_error` decides what that means for the call.
    Failed(PluginFailure),
    /// It answered with an error of its own: the call ends with that message.
    Answered(String),
}

/// One stage call: the stage, the tool, the stage input JSON the plugin reads and, from
/// post-params-normalization on, the call's [`Facts`] (0.2 plugins receive them typed), and
/// what is left of the tool call's plugin time.
#[derive(Clone, Copy, Debug)]
pub struct StageCall<'a> {
    pub stage: Stage,
    pub method: &'a str,
    pub tool_type: ToolType,
    pub input: &'a str,
    pub facts: Option<&'a Facts>,
    /// Until when the plugins of the tool call may still run (`None`: only each guest call's
    /// own deadline bounds it, as in `hak plugin test`).
    pub budget: Option<CallBudget>,
}

/// The wall-clock time all plugins of one tool call may take together (`[engine]
/// call_budget_ms`): guest execution, the host calls it makes (network capabilities, state)
/// and its clock waits all count; waiting for an approver does not. A guest call never runs
/// past `until`, whatever its own deadline, and one that starts after it fails at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallBudget {
    pub until: std::time::Instant,
    /// The whole budget, for messages.
    pub total_ms: u64,
    /// When the guest call this budget bounds began, read once by the caller (or the end of
    /// the stage's step just before it): the plugin's own deadline counts from here, without
    /// a second clock read (a clock read costs tens of nanoseconds on a virtual machine).
    pub started: std::time::Instant,
}

impl CallBudget {
    /// What is left of it at `now` (zero once spent).
    pub fn left(&self, now: std::time::Instant) -> std::time::Duration {
        self.until.saturating_duration_since(now)
    }
}

impl<'a> StageCall<'a> {
    /// This call as a plugin that reads `reads` receives it: the params JSON `""` and no
    /// facts for the parts it does not read.
    pub fn for_reads(&self, reads: Reads) -> StageCall<'a> {
        StageCall {
            input: if reads.params { self.input } else { "" },
            facts: if reads.facts { self.facts } else { None },
            ..*self
        }
    }

    /// This call bounded by `budget`.
    pub fn within(&self, budget: CallBudget) -> StageCall<'a> {
        StageCall {
            budget: Some(budget),
            ..*self
        }
    }
}

/// The agent context a plugin session serves: its scope key (what scratchpads, quotas and
/// circuit breakers are keyed by), the state store, and the current call's budget
/// reservations (settled by the lifecycle when the call ends).
#[derive(Clone)]
pub struct ContextScope {
    pub scope: Arc<str>,
    pub state: Arc<dyn StateBackend>,
    pub reservations: Arc<CallReservations>,
}

/// A member of the plugin chain. Immutable and shared by every session; what one agent
/// context needs of it (an instance, its state) lives in the [`PluginSession`] it opens.
pub trait ChainPlugin: Send + Sync {
    fn description(&self) -> &PluginDescription;

    /// The name blocks and failures are reported under: the manifest entry's name, or a
    /// native plugin's own name.
    fn name(&self) -> &str {
        &self.description().name
    }

    /// Whether the operator granted it `capability` (trusted native plugins: always).
    fn grants(&self, _capability: Capability) -> bool {
        true
    }

    /// What a failure of its hook means for the call (policies always fail closed).
    fn on_error(&self) -> OnError {
        OnError::Block
    }

    /// Whether its answers count (`enforce = true`, the default), or it runs in shadow mode:
    /// called on real calls, its blocks, replacements and failures recorded (decision log,
    /// metrics, `GET /v1/plugins`) but never changing a call.
    fn enforces(&self) -> bool {
        true
    }

    /// What it reads of the stage input when called for `method` (trusted native plugins and
    /// plugins that do not say: everything). Asked when a chain's plan is made, not per call.
    fn reads(&self, _method: &str) -> Reads {
        Reads::ALL
    }

    /// Whether it wants to hear how blocked or failed calls of its tools ended.
    fn observes_failures(&self) -> bool {
        false
    }

    /// Its state for one agent context. Cheap: expensive work (instantiation) waits for the
    /// first call that needs it.
    fn open(&self, scope: &ContextScope) -> Box<dyn PluginSession>;

    /// For the host's listings of its own plugin kinds (counters, sources); never for the
    /// lifecycle to branch on.
    fn as_any(&self) -> &dyn Any;
}

/// One chain member in one agent context.
pub trait PluginSession: Send {
    fn policy(&mut self, call: &StageCall<'_>) -> Result<Verdict, PluginError>;

    fn hook(&mut self, call: &StageCall<'_>) -> Result<HookAnswer, PluginError>;

    /// Tell it how a blocked or failed call ended (a JSON text), within what is left of the
    /// call's `budget`; observe-only.
    fn on_failure(
        &mut self,
        _input_json: &str,
        _budget: Option<CallBudget>,
    ) -> Result<(), PluginFailure> {
        Ok(())
    }

    /// A hook with `on_error = "skip"` that keeps failing in this context is bypassed here
    /// (its circuit is open); other contexts still call it.
    fn bypassed(&self) -> bool {
        false
    }
}
