//! `hak replay`: recorded calls (a decision log written with `[decisions] params = "full"`) run
//! again through another host's chain, and every call whose verdict differs is reported —
//! before a new policy enforces, see what it would have decided about yesterday's traffic.
//!
//! Replays cannot touch anything: every call runs in return-bytes mode (nothing is
//! submitted), on a scratch in-memory state store (no budget is spent, no scratchpad
//! written), and the replaying host keeps no decision log of its own. A call is compared by
//! its verdict — allowed, blocked (by which plugin, with which code), plugin failure, error —
//! not by what the network later did with it.
//! What must not live here: building the host (the caller's) or parsing the log's format
//! beyond the fields compared.

use crate::lifecycle::Session;
use crate::model::context::{AgentContext, AgentMode};
use crate::Host;
use hedera::AccountId;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::BufRead;
use std::str::FromStr;

/// What a call's chain decided, as compared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// `allowed`, `blocked`, `plugin_failure` or `error`.
    pub outcome: &'static str,
    /// The plugin that blocked or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// The block's code, or the failure's cause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

impl Verdict {
    /// From a decision-log line.
    fn recorded(line: &Value) -> Self {
        let outcome = match line["outcome"].as_str().unwrap_or_default() {
            "blocked" => "blocked",
            "plugin_failure" => "plugin_failure",
            "error" => "error",
            // success, rejected (by the network), unknown: the chain let it through.
            _ => "allowed",
        };
        let step = |verdict: &str| {
            line["decisions"].as_array().and_then(|steps| {
                steps
                    .iter()
                    .find(|d| d["verdict"] == verdict && d["enforce"] != false)
            })
        };
        let decided = match outcome {
            "blocked" => step("block"),
            "plugin_failure" => step("failure"),
            _ => None,
        };
        Verdict {
            outcome,
            plugin: decided.and_then(|d| d["plugin"].as_str().map(str::to_owned)),
            code: decided.and_then(|d| d["code"].as_str().map(str::to_owned)),
        }
    }

    /// From a result envelope.
    fn of(envelope: &Value) -> Self {
        let raw = &envelope["raw"];
        let text = |v: &Value| v.as_str().map(str::to_owned);
        if raw["errorCode"] == "POLICY_BLOCKED" {
            let block = &raw["policyBlock"];
            Verdict {
                outcome: "blocked",
                plugin: text(&block["plugin"]),
                code: text(&block["reasonCode"]),
            }
        } else if raw["pluginFailure"].is_object() {
            let failure = &raw["pluginFailure"];
            Verdict {
                outcome: "plugin_failure",
                plugin: text(&failure["plugin"]),
                code: text(&failure["cause"]),
            }
        } else if raw.get("error").is_some_and(|e| !e.is_null()) {
            Verdict {
                outcome: "error",
                plugin: None,
                code: None,
            }
        } else {
            Verdict {
                outcome: "allowed",
                plugin: None,
                code: None,
            }
        }
    }
}

/// What a replay found.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    /// Calls replayed.
    pub calls: u64,
    pub same: u64,
    pub changed: u64,
    /// Lines without params (logged with `params = "digest"` or `"none"`).
    pub skipped: u64,
}

/// Replay every line of `log` through `host` (build it with a scratch state store and no
/// decision log); `on_change` gets one JSON object per call whose verdict differs:
/// `{"line", "time", "agent", "tool", "before": verdict, "after": verdict}`. An unreadable
/// line is an error naming it.
pub fn replay(
    host: &Host,
    log: impl BufRead,
    mut on_change: impl FnMut(Value),
) -> Result<Report, String> {
    let mut report = Report::default();
    let mut sessions: HashMap<String, Session> = HashMap::new();
    for (index, line) in log.lines().enumerate() {
        let number = index + 1;
        let line = line.map_err(|e| format!("line {number}: cannot read: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let recorded: Value = serde_json::from_str(&line)
            .map_err(|e| format!("line {number}: not a decision-log line: {e}"))?;
        let Some(params) = recorded.get("params") else {
            report.skipped += 1;
            continue;
        };
        let tool = recorded["tool"]
            .as_str()
            .ok_or_else(|| format!("line {number}: no tool"))?;
        let account_id = match recorded["accountId"].as_str() {
            Some(text) => Some(
                AccountId::from_str(text)
                    .map_err(|e| format!("line {number}: accountId {text:?}: {e}"))?,
            ),
            None => host.default_context().account_id,
        };
        let context = AgentContext {
            account_id,
            mode: AgentMode::ReturnBytes,
        };
        let session = sessions
            .entry(context.scope_key())
            .or_insert_with(|| host.session(context));
        session.set_caller(recorded["agent"].as_str());
        // The params as the agent sent them: a JSON value, or the text of one that was not.
        let params = match params {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let envelope = session
            .call(tool, &params)
            .map_err(|e| format!("line {number}: {e}"))?;
        report.calls += 1;
        let (before, after) = (Verdict::recorded(&recorded), Verdict::of(&envelope));
        if before == after {
            report.same += 1;
        } else {
            report.changed += 1;
            on_change(json!({
                "line": number,
                "time": recorded["time"],
                "agent": recorded["agent"],
                "tool": tool,
                "before": before,
                "after": after,
            }));
        }
    }
    if report.calls == 0 && report.skipped > 0 {
        return Err(format!(
            "none of the {} lines holds its params: replay needs a decision log written with [decisions] params = \"full\"",
            report.skipped
        ));
    }
    Ok(report)
}
