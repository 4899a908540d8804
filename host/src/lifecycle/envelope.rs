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

/// The kill switch's block of a call that would change the ledger ([`crate::pause`]), in the
/// kit's block envelope: policy `Kill Switch`, code `PAUSED`, the pause's reason, who and when.
pub fn paused(method: &str, stage: Stage, paused: &crate::pause::Paused) -> Abort {
    Abort::Blocked(Box::new(Block {
        policy: PluginDescription {
            name: "Kill Switch".into(),
            description: "hak is paused: tools that change the ledger are blocked".into(),
            relevant_tools: vec!["*".into()],
            ..Default::default()
        },
        plugin: "kill-switch".into(),
        method: method.to_owned(),
        stage,
        reason: paused.message(),
        reason_code: Some("PAUSED".into()),
        details: serde_json::json!({"by": paused.by, "pausedAt": paused.at, "reason": paused.reason}),
        approval: None,
    }))
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

/// A call's result envelope: the return-bytes result kept typed until someone needs it as a
/// JSON value (a stage-7 plugin, a caller of [`crate::lifecycle::Session::call`]); everything
/// else as its value. Both serialise to the same JSON text (`{"raw":{…},"humanMessage":…}`),
/// so an agent reading the served text cannot tell them apart; the typed one is written
/// straight from its fields, with no map built, hashed and dropped per call.
#[derive(Clone, Debug, PartialEq)]
pub enum Envelope {
    /// A return-bytes result, as the kit's output parser presents it to the agent (its
    /// `humanMessage` is [`BYTES_READY`]).
    Bytes(ReturnBytesResult),
    /// Any other envelope (executed, query, error, or one a hook rewrote).
    Value(Value),
}

/// The JSON shape of [`Envelope::Bytes`]: `raw` first, as the kit writes it.
#[derive(serde::Serialize)]
struct BytesEnvelope<'a> {
    raw: &'a ReturnBytesResult,
    #[serde(rename = "humanMessage")]
    human_message: &'static str,
}

impl serde::Serialize for Envelope {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Envelope::Bytes(raw) => BytesEnvelope {
                raw,
                human_message: BYTES_READY,
            }
            .serialize(serializer),
            Envelope::Value(value) => value.serialize(serializer),
        }
    }
}

impl Envelope {
    /// The envelope as a JSON value (the same value its text parses to).
    pub fn into_value(self) -> Value {
        match self {
            Envelope::Bytes(result) => {
                let mut envelope = serde_json::Map::with_capacity(2);
                envelope.insert("raw".into(), result.into_json());
                envelope.insert("humanMessage".into(), BYTES_READY.into());
                envelope.into()
            }
            Envelope::Value(value) => value,
        }
    }

    /// A string field of `raw` (`transactionId`, `error`, `errorCode`, `status`, …), if the
    /// envelope has it.
    pub fn raw_str(&self, key: &str) -> Option<&str> {
        match self {
            Envelope::Bytes(result) => match key {
                "bytes" => Some(&result.bytes),
                "status" => Some(&result.status),
                "transactionId" => Some(&result.transaction_id),
                "payerAccountId" => Some(&result.payer_account_id),
                "type" => Some(&result.type_name),
                "expiresAt" => Some(&result.expires_at),
                "memo" => Some(&result.memo),
                _ => None,
            },
            Envelope::Value(value) => value["raw"][key].as_str(),
        }
    }

    /// The envelope's JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "null".into())
    }
}

/// The kit's `result.raw.status ??= 'SUCCESS'`.
pub fn default_status(result: &mut Value) {
    if let Some(raw) = result.get_mut("raw").and_then(Value::as_object_mut) {
        raw.entry("status").or_insert_with(|| "SUCCESS".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes() -> ReturnBytesResult {
        ReturnBytesResult {
            bytes: "0x0a1b".into(),
            status: "SUCCESS".into(),
            transaction_id: "0.0.1001@1700000000.000000001".into(),
            payer_account_id: "0.0.1001".into(),
            type_name: "TransferTransaction".into(),
            expires_at: "2023-11-14T22:15:20.000Z".into(),
            memo: "a \"quoted\" memo\n".into(),
        }
    }

    /// The typed envelope and its value are one JSON text, key for key and in the same order:
    /// what `hak serve` writes does not depend on which of the two a call produced.
    #[test]
    fn a_typed_bytes_envelope_writes_the_text_of_its_value() {
        let typed = Envelope::Bytes(bytes());
        let value = typed.clone().into_value();
        assert_eq!(typed.to_json(), value.to_string());
        assert_eq!(
            value,
            json!({"raw": {"bytes": "0x0a1b", "status": "SUCCESS",
                "transactionId": "0.0.1001@1700000000.000000001", "payerAccountId": "0.0.1001",
                "type": "TransferTransaction", "expiresAt": "2023-11-14T22:15:20.000Z",
                "memo": "a \"quoted\" memo\n"}, "humanMessage": BYTES_READY})
        );
        assert!(typed
            .to_json()
            .starts_with("{\"raw\":{\"bytes\":\"0x0a1b\",\"status\""));
        let as_value = Envelope::Value(value);
        for key in [
            "bytes",
            "status",
            "transactionId",
            "payerAccountId",
            "type",
            "expiresAt",
            "memo",
            "error",
        ] {
            assert_eq!(typed.raw_str(key), as_value.raw_str(key), "{key}");
        }
        assert_eq!(typed.raw_str("error"), None);
    }
}
