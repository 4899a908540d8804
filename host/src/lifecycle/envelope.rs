//! The result envelopes an agent receives, worded exactly as the kit words them:
//! success `{raw:{status:"SUCCESS",…}, humanMessage}`, failure `{raw:{status:"ERROR", error,
//! errorCode?, …}, humanMessage}` with `Failed to execute <Tool Name>: …`.

use crate::model::stage::Stage;
use crate::plugin::{PluginDescription, PluginFailure};
use crate::strategy::ReturnBytesResult;
use crate::tools::RawTransactionResponse;
use serde_json::{json, Value};

/// Human message of a return-bytes result (the kit's output parser's wording).
pub const BYTES_READY: &str = "Transaction bytes are ready for signing.";

/// Why a call ended early.
pub enum Abort {
    /// A tool stage, or a plugin that answered `err` (the kit's "throw").
    Error(String),
    /// A tool refused its params: the kit's message, and the param it is about.
    Invalid { message: String, field: String },
    /// The network rejected the transaction.
    Transaction {
        status: String,
        transaction_id: String,
        message: String,
    },
    /// The transaction may have been sent and its outcome is not known.
    Unknown {
        transaction_id: Option<String>,
        message: String,
    },
    /// A policy said block.
    Blocked(Box<Block>),
    /// A plugin failed (trap, deadline, memory, fuel, invalid output).
    Plugin(PluginFailure),
}

pub struct Block {
    pub policy: PluginDescription,
    /// The manifest entry (or native plugin) that blocked: two plugins may describe themselves
    /// alike.
    pub plugin: String,
    pub method: String,
    pub stage: Stage,
    pub reason: String,
    pub reason_code: Option<String>,
    pub details: Value,
    /// When the policy asked for approval: what became of the request (denied, timed out,
    /// nobody to ask), as `policyBlock.approval`.
    pub approval: Option<crate::approvals::Outcome>,
}

fn error_envelope(
    tool_name: &str,
    message: &str,
    extra: impl FnOnce(&mut serde_json::Map<String, Value>),
) -> Value {
    let error = format!("Failed to execute {tool_name}: {message}");
    let mut raw = serde_json::Map::new();
    raw.insert("status".into(), "ERROR".into());
    raw.insert("error".into(), error.clone().into());
    extra(&mut raw);
    json!({ "raw": raw, "humanMessage": error })
}

impl From<crate::tools::ToolError> for Abort {
    fn from(e: crate::tools::ToolError) -> Self {
        match e.field {
            Some(field) => Abort::Invalid {
                message: e.message,
                field,
            },
            None => Abort::Error(e.message),
        }
    }
}

impl Abort {
    pub fn into_envelope(self, tool_name: &str) -> Value {
        match self {
            Abort::Error(message) => error_envelope(tool_name, &message, |_| {}),
            Abort::Invalid { message, field } => error_envelope(tool_name, &message, |raw| {
                raw.insert("field".into(), field.into());
            }),
            Abort::Unknown {
                transaction_id,
                message,
            } => {
                let text = format!(
                    "{message}; the transaction may still apply: check it by its transaction id before trying again"
                );
                error_envelope(tool_name, &text, |raw| {
                    raw.insert("errorCode".into(), "OUTCOME_UNKNOWN".into());
                    if let Some(id) = transaction_id {
                        raw.insert("transactionId".into(), id.into());
                    }
                })
            }
            Abort::Transaction {
                status,
                transaction_id,
                message,
            } => {
                // The kit's `BaseTransactionTool.handleError` for a receipt or precheck
                // failure: `raw.error` is the SDK's own message, only `humanMessage` names the
                // tool.
                error_envelope(tool_name, &message, |raw| {
                    raw.insert("error".into(), message.as_str().into());
                    raw.insert("errorCode".into(), status.into());
                    raw.insert("transactionId".into(), transaction_id.into());
                })
            }
            Abort::Blocked(block) => {
                let Block {
                    policy,
                    plugin,
                    method,
                    stage,
                    reason,
                    reason_code,
                    details,
                    approval,
                } = *block;
                let description = if policy.description.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", policy.description)
                };
                let message = format!(
                    "Action {method} blocked by policy: {}{description}",
                    policy.name
                );
                error_envelope(tool_name, &message, |raw| {
                    raw.insert("errorCode".into(), "POLICY_BLOCKED".into());
                    raw.insert(
                        "policyBlock".into(),
                        json!({
                            "code": "POLICY_BLOCKED",
                            "policyName": policy.name,
                            "plugin": plugin,
                            "toolMethod": method,
                            "stage": stage.as_str(),
                            "description": policy.description,
                            "reason": reason,
                            "reasonCode": reason_code,
                            "details": details,
                        }),
                    );
                    if let (Some(approval), Some(Value::Object(block))) =
                        (approval, raw.get_mut("policyBlock"))
                    {
                        block.insert(
                            "approval".into(),
                            serde_json::to_value(approval).unwrap_or_default(),
                        );
                    }
                })
            }
            Abort::Plugin(failure) => error_envelope(tool_name, &failure.to_string(), |raw| {
                raw.insert("errorCode".into(), "PLUGIN_FAILED".into());
                raw.insert(
                    "pluginFailure".into(),
                    serde_json::to_value(&failure).unwrap_or_default(),
                );
            }),
        }
    }
}

/// `[context] explain_blocks`: a block's envelope gets the policy's reason at the end of its
/// `humanMessage` (`raw.error` keeps the kit's text).
pub fn explain_block(envelope: &mut Value) {
    let reason = envelope["raw"]["policyBlock"]["reason"]
        .as_str()
        .filter(|r| !r.is_empty())
        .map(str::to_owned);
    if let (Some(reason), Some(Value::String(message))) = (reason, envelope.get_mut("humanMessage"))
    {
        message.push_str(" Reason: ");
        message.push_str(&reason);
    }
}

/// An executed transaction: `{raw: RawTransactionResponse, humanMessage}`.
pub fn executed(raw: &RawTransactionResponse, human_message: String) -> Value {
    json!({ "raw": raw, "humanMessage": human_message })
}

/// A return-bytes result, as the kit's output parser presents it to the agent.
pub fn bytes(result: ReturnBytesResult) -> Value {
    let mut envelope = serde_json::Map::with_capacity(2);
    envelope.insert("raw".into(), result.into_json());
    envelope.insert("humanMessage".into(), BYTES_READY.into());
    envelope.into()
}

/// The kit's `result.raw.status ??= 'SUCCESS'`.
pub fn default_status(result: &mut Value) {
    if let Some(raw) = result.get_mut("raw").and_then(Value::as_object_mut) {
        raw.entry("status").or_insert_with(|| "SUCCESS".into());
    }
}
