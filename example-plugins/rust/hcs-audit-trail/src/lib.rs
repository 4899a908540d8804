//! "HCS Audit Trail Hook": the kit's `HcsAuditTrailHook`. After every successful call to a
//! relevant tool it submits the kit's plain-text audit message (tool, params, transaction and
//! entity ids) to an existing HCS topic through the `hedera` capability; unlike the kit it also
//! records blocked and failed calls (`events.on-tool-failure`). Its own failures are logged and
//! never fail the call. Return-bytes modes are refused before the tool runs, as in the kit.
//!
//! Config: `{"relevantTools": ["transfer_hbar_tool"], "topicId": "0.0.5005"}`.
//! Capability: `hedera:submit-topic-message`.

use hak_guest::audit::{is_return_bytes, refuse_return_bytes, AuditParams};
use hak_guest::facts::{is_entity_id, pretty_json};
use hak_guest::serde_json::Value;
use hak_guest::{
    host, parse_config, HookOutcome, HookResult, Plugin, PluginInfo, Stage, StageInput, ToolFailure,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    relevant_tools: Vec<String>,
    topic_id: String,
}

pub struct HcsAuditTrail {
    topic: String,
}

/// The kit's `raw.x ?? fallback`.
fn or(v: &Value, fallback: &str) -> String {
    match v {
        Value::Null => fallback.to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The kit's audit message, with its quirks ("on with", 4-space indents, `'N/A '`).
pub fn success_message(method: &str, params: &str, raw: &Value) -> String {
    format!(
        "Agent executed tool {method} on with params {}.\n    Transaction ID: {}\n    Transaction Status: {}\n    Token ID: {}\n    Topic ID: {}\n    Schedule ID: {}\n    Account ID: {}",
        pretty_json(params),
        or(&raw["transactionId"], "N/A (query action)"),
        or(&raw["status"], "N/A (query action)"),
        or(&raw["tokenId"], "N/A"),
        or(&raw["topicId"], "N/A "),
        or(&raw["scheduleId"], "N/A"),
        or(&raw["accountId"], "N/A"),
    )
}

/// hak's record of a blocked or failed call (the kit records none).
pub fn failure_message(f: &Value) -> String {
    let params = f.get("normalisedParams").unwrap_or(&f["rawParams"]);
    format!(
        "Agent tool {} {} with params {}.\n    Error: {}\n    Error Code: {}",
        or(&f["method"], "unknown"),
        if f["outcome"] == "blocked" {
            "was blocked"
        } else {
            "failed"
        },
        pretty_json(&params.to_string()),
        or(&f["error"], "N/A"),
        or(&f["errorCode"], "N/A"),
    )
}

impl HcsAuditTrail {
    fn submit(&self, method: &str, message: &str) {
        if let Err(e) = host::submit_topic_message(&self.topic, message) {
            host::warn(&format!(
                "HcsAuditTrailHook: Failed to log audit entry for tool {method}: {e}"
            ));
        }
    }
}

impl Plugin for HcsAuditTrail {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        if !is_entity_id(&config.topic_id) {
            return Err(format!(
                "invalid config: topicId: {:?} is not a topic id (0.0.x)",
                config.topic_id
            ));
        }
        if config.relevant_tools.is_empty() {
            return Err("invalid config: relevantTools: list at least one tool".into());
        }
        let mut info = PluginInfo::hook(
            "HCS Audit Trail Hook",
            "Hook to add audit trail to HCS messages. Supported in AgentMode.AUTONOMOUS and AgentMode.CUSTOM_EXECUTE_TX. Blocked in RETURN_BYTES and CUSTOM_RETURN_BYTES modes.",
            [],
            [Stage::PreToolExecution, Stage::PostSecondaryAction],
        );
        info.relevant_tools = config.relevant_tools;
        Ok((
            HcsAuditTrail {
                topic: config.topic_id,
            },
            info,
        ))
    }

    fn pre_tool_execution(&self, input: &StageInput) -> HookOutcome {
        refuse_return_bytes("HcsAuditTrailHook", input)
    }

    fn post_tool_execution(&self, input: &StageInput) -> HookOutcome {
        match input.params::<AuditParams>() {
            Ok(p) => {
                let params = p.params_text();
                let message = success_message(&input.method, params, &p.tool_result["raw"]);
                self.submit(&input.method, &message);
            }
            Err(e) => host::warn(&format!("HcsAuditTrailHook: {e}")),
        }
        Ok(HookResult::Proceed)
    }

    fn on_tool_failure(&self, failure: &ToolFailure) {
        let f = failure.value();
        // Its own refusal of return-bytes modes: there is no network client to log with.
        if is_return_bytes(&f["context"]) {
            return;
        }
        let method = or(&f["method"], "unknown");
        self.submit(&method, &failure_message(&f));
    }
}

hak_guest::export_plugin!(HcsAuditTrail);

#[cfg(test)]
mod tests {
    use super::*;
    use hak_guest::serde_json::json;

    #[test]
    fn messages_follow_the_kit_template() {
        let raw = json!({"status": "SUCCESS", "transactionId": "0.0.1001@1.2", "accountId": null, "tokenId": null, "topicId": null, "scheduleId": null});
        assert_eq!(
            success_message("transfer_hbar_tool", r#"{"b":"1","a":[]}"#, &raw),
            "Agent executed tool transfer_hbar_tool on with params {\n  \"b\": \"1\",\n  \"a\": []\n}.\n    Transaction ID: 0.0.1001@1.2\n    Transaction Status: SUCCESS\n    Token ID: N/A\n    Topic ID: N/A \n    Schedule ID: N/A\n    Account ID: N/A"
        );
        let query = success_message("get_hbar_balance_query_tool", "{}", &json!({}));
        assert!(
            query.contains("Transaction ID: N/A (query action)"),
            "{query}"
        );
    }
}
