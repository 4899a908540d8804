//! `hak plugin test`: one plugin on one recorded stage input (a file `hak call --record`
//! writes), its policy and then its hook run as the chain runs them — same instance, same
//! limits, a scratch state store — and what each answered, as JSON. Like `kwctl run`: the
//! loop a policy author iterates in, no network, no host.
//! What must not live here: loading rules (the runtime's) or deciding what a verdict means
//! for a call (the lifecycle's).

use crate::lifecycle::RecordedStage;
use crate::model::stage::Stage;
use crate::model::ToolType;
use crate::plugin::{ChainPlugin, ContextScope, HookAnswer, PluginError, StageCall, Verdict};
use crate::state_store::MemoryBackend;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// A recorded stage input: `{"stage", "method", "toolType", "input"}`.
#[derive(Debug)]
pub struct TrialInput {
    pub stage: Stage,
    pub method: String,
    pub tool_type: ToolType,
    /// The stage params JSON text, as the plugin reads it.
    pub input: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct File {
    stage: String,
    method: String,
    tool_type: ToolType,
    input: Value,
}

impl TrialInput {
    /// Parse a recorded stage file; errors name the field.
    pub fn parse(text: &str) -> Result<Self, String> {
        let file: File = serde_json::from_str(text).map_err(|e| {
            format!("not a recorded stage input ({{\"stage\", \"method\", \"toolType\", \"input\"}}): {e}")
        })?;
        let stage = Stage::parse(&file.stage).ok_or_else(|| {
            format!(
                "stage: {:?} is not one of pre_tool_execution, post_params_normalization, post_core_action, post_secondary_action",
                file.stage
            )
        })?;
        if !file.input.is_object() {
            return Err("input: must be the stage params object".into());
        }
        Ok(TrialInput {
            stage,
            method: file.method,
            tool_type: file.tool_type,
            input: file.input.to_string(),
        })
    }
}

impl From<&RecordedStage> for TrialInput {
    fn from(r: &RecordedStage) -> Self {
        TrialInput {
            stage: r.stage,
            method: r.method.to_owned(),
            tool_type: r.tool_type,
            input: r.input.clone(),
        }
    }
}

/// Run `plugin`'s policy, then its hook, at the input's stage (each only if the plugin
/// declared it there and the tool is relevant to it; the hook only if the policy allowed).
/// The answer:
/// `{"plugin", "stage", "method", "relevant", "policy": {...} | null, "hook": {...} | null}`.
/// `now_ms`: the time the plugin reads (`host.now-unix-ms`) and its budgets count at; the
/// system clock when `None`.
pub fn run(plugin: &dyn ChainPlugin, input: &TrialInput, now_ms: Option<u64>) -> Value {
    let description = plugin.description();
    let relevant = description.applies_to(&input.method);
    let scope = ContextScope {
        scope: "trial".into(),
        state: Arc::new(now_ms.map_or_else(MemoryBackend::default, MemoryBackend::at)),
        reservations: Default::default(),
    };
    let mut session = plugin.open(&scope);
    let facts = facts_of(input);
    let call = StageCall {
        stage: input.stage,
        method: &input.method,
        tool_type: input.tool_type,
        input: &input.input,
        facts: facts.as_ref(),
        budget: None,
    }
    // What the plugin gets in a chain: only the parts it reads for this tool.
    .for_reads(plugin.reads(&input.method));
    let policy = (relevant && description.policy_stages.contains(input.stage)).then(
        || match session.policy(&call) {
            Ok(Verdict::Allow) => json!({"verdict": "allow"}),
            Ok(Verdict::Block(b)) => json!({
                "verdict": "block",
                "reason": b.message,
                "code": b.code,
                "details": b.details_json.as_deref().map(|d| {
                    serde_json::from_str::<Value>(d).unwrap_or_else(|_| Value::String(d.to_owned()))
                }),
            }),
            Ok(Verdict::NeedsApproval(a)) => json!({
                "verdict": "needs-approval",
                "reason": a.message,
                "code": a.code,
                "details": a.details_json.as_deref().map(|d| {
                    serde_json::from_str::<Value>(d).unwrap_or_else(|_| Value::String(d.to_owned()))
                }),
                "timeoutSeconds": a.timeout_seconds,
            }),
            Err(e) => error(e),
        },
    );
    // As in the chain: a policy that did not allow ends the call before the hook.
    let stopped = policy.as_ref().is_some_and(|p| p["verdict"] != "allow");
    let hook = (relevant && !stopped && description.hook_stages.contains(input.stage)).then(|| {
        match session.hook(&call) {
            Ok(HookAnswer::Proceed) => json!({"answer": "proceed"}),
            Ok(HookAnswer::Replace(text)) => json!({
                "answer": "replace",
                "value": serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text)),
            }),
            Err(e) => error(e),
        }
    });
    json!({
        "plugin": plugin.name(),
        "stage": input.stage.as_str(),
        "method": input.method,
        "relevant": relevant,
        "policy": policy,
        "hook": hook,
    })
}

/// The facts the host would hand the plugin: stated by the tool from the input's
/// `normalisedParams` (none at pre-tool-execution, or when the tool refuses them).
fn facts_of(input: &TrialInput) -> Option<crate::model::facts::Facts> {
    if input.stage == crate::model::stage::Stage::PreToolExecution {
        return None;
    }
    let value: Value = serde_json::from_str(&input.input).ok()?;
    let normalised = value.get("normalisedParams")?.to_string();
    crate::tools::ToolRegistry::native().facts_from_json(&input.method, &normalised)
}

/// An RFC 3339 time (`2026-11-30T12:00:00Z`) as ms since the Unix epoch.
pub fn parse_now(text: &str) -> Result<u64, String> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .ok()
        .and_then(|t| u64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok())
        .ok_or_else(|| {
            format!("{text:?} is not an RFC 3339 time after 1970 (2026-11-30T12:00:00Z)")
        })
}

fn error(e: PluginError) -> Value {
    match e {
        PluginError::Answered(message) => json!({"verdict": "error", "message": message}),
        PluginError::Failed(f) => json!({
            "verdict": "failure",
            "cause": f.cause.as_str(),
            "detail": f.detail,
        }),
    }
}

/// What a case expects of the plugin at its stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    Allow,
    Block,
    NeedsApproval,
}

impl Expect {
    fn as_str(self) -> &'static str {
        match self {
            Expect::Allow => "allow",
            Expect::Block => "block",
            Expect::NeedsApproval => "needs-approval",
        }
    }
}

/// One case of a cases file: a stage input, the plugin's config for it (default: the one
/// given on the command line) and what the plugin must answer.
#[derive(Debug)]
pub struct Case {
    pub name: String,
    pub input: TrialInput,
    /// The config as JSON text, when the case sets one.
    pub config: Option<String>,
    pub expect: Expect,
    /// The exact reason a block or needs-approval must give, when set.
    pub reason: Option<String>,
    /// The exact code a block or needs-approval must give, when set.
    pub code: Option<String>,
    /// The time the case runs at (`now`, RFC 3339), in ms since the Unix epoch; the system
    /// clock when unset.
    pub now_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    name: String,
    /// A recorded stage input, inline, or the path of one (relative to the cases file).
    input: Value,
    config: Option<Value>,
    expect: Expect,
    reason: Option<String>,
    code: Option<String>,
    now: Option<String>,
}

/// Parse a cases file (`[{name, input, config?, expect, reason?, code?, now?}]`); errors name the
/// case and field. Paths in `input` are relative to `dir`.
pub fn parse_cases(text: &str, dir: &std::path::Path) -> Result<Vec<Case>, String> {
    let raw: Vec<Value> =
        serde_json::from_str(text).map_err(|e| format!("not a JSON array of cases: {e}"))?;
    let mut cases = Vec::with_capacity(raw.len());
    let mut names = std::collections::HashSet::new();
    for (i, value) in raw.into_iter().enumerate() {
        let at = format!("cases[{i}]");
        let case: CaseFile = serde_json::from_value(value).map_err(|e| format!("{at}: {e}"))?;
        if !names.insert(case.name.clone()) {
            return Err(format!("{at}: duplicate name {:?}", case.name));
        }
        let at = format!("{at} ({})", case.name);
        let input = match &case.input {
            Value::String(path) => {
                let path = dir.join(path);
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("{at}: input: {}: {e}", path.display()))?;
                TrialInput::parse(&text)
            }
            other => TrialInput::parse(&other.to_string()),
        }
        .map_err(|e| format!("{at}: input: {e}"))?;
        if case.expect == Expect::Allow && (case.reason.is_some() || case.code.is_some()) {
            return Err(format!(
                "{at}: reason and code apply to block and needs-approval"
            ));
        }
        let now_ms = case
            .now
            .as_deref()
            .map(parse_now)
            .transpose()
            .map_err(|e| format!("{at}: now: {e}"))?;
        cases.push(Case {
            now_ms,
            name: case.name,
            input,
            config: case.config.map(|c| c.to_string()),
            expect: case.expect,
            reason: case.reason,
            code: case.code,
        });
    }
    Ok(cases)
}

/// Whether `answer` (what [`run`] returned) is what `case` expects; otherwise the difference,
/// as `expected …` / `got …` lines. A plugin that did not judge the input (not relevant, no
/// policy at that stage) allowed it.
pub fn check(case: &Case, answer: &Value) -> Result<(), String> {
    let policy = &answer["policy"];
    let got = policy["verdict"].as_str().unwrap_or("allow");
    let describe = |verdict: &str, reason: Option<&str>, code: Option<&str>| {
        let mut text = verdict.to_owned();
        if let Some(code) = code {
            text += &format!(" [{code:?}]");
        }
        if let Some(reason) = reason {
            text += &format!(" ({reason:?})");
        }
        text
    };
    let got_reason = policy["reason"]
        .as_str()
        .or_else(|| policy["message"].as_str())
        .or_else(|| policy["detail"].as_str());
    let got_code = policy["code"].as_str().or_else(|| policy["cause"].as_str());
    let matches = got == case.expect.as_str()
        && case.reason.as_deref().is_none_or(|r| Some(r) == got_reason)
        && case.code.as_deref().is_none_or(|c| Some(c) == got_code);
    if matches {
        return Ok(());
    }
    let mut got_text = describe(got, got_reason, got_code);
    if policy.is_null() {
        got_text += if answer["relevant"] == false {
            " — the tool is not relevant to the plugin"
        } else {
            " — the plugin has no policy at this stage"
        };
    }
    Err(format!(
        "expected {}\n  got      {got_text}",
        describe(
            case.expect.as_str(),
            case.reason.as_deref(),
            case.code.as_deref()
        )
    ))
}
