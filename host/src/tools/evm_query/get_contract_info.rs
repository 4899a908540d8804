//! `get_contract_info_query_tool`: a smart contract's mirror-node entry (memo, timestamps,
//! entity ids, admin key, EVM address).

use crate::tools::{CoreOutput, Tool, ToolContext, ToolError, ToolType};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::str::FromStr;

pub struct GetContractInfo;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetContractInfoNormalised {
    /// `shard.realm.num` or a 0x-prefixed 20-byte EVM address, as the mirror accepts.
    pub contract_id: String,
}

/// A contract ID the mirror accepts; anything else never reaches the URL.
fn contract_id(text: &str) -> Result<String, ToolError> {
    let text = text.trim();
    let hex = text.strip_prefix("0x").unwrap_or(text);
    if hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(format!("0x{}", hex.to_ascii_lowercase()));
    }
    hedera::ContractId::from_str(text)
        .map(|id| id.to_string())
        .map_err(|_| ToolError::invalid_field("contractId", format!("Invalid contract ID: {text}")))
}

/// JS truthiness of a mirror field, as text (`fallback` when falsy).
fn text_or(v: &Value, fallback: &str) -> String {
    match v {
        Value::String(s) if !s.is_empty() => s.clone(),
        Value::Number(n) if n.as_f64() != Some(0.0) => n.to_string(),
        Value::Bool(true) => "true".into(),
        Value::Array(_) | Value::Object(_) => v.to_string(),
        _ => fallback.into(),
    }
}

/// The kit's `formatKey`: the key's hex when typed, `Present` otherwise, `Not Set` when absent.
fn key_text(key: &Value) -> String {
    match key {
        Value::Null | Value::Bool(false) => "Not Set".into(),
        Value::String(s) if s.is_empty() => "Not Set".into(),
        Value::Object(_) if key["_type"].as_str().is_some_and(|t| !t.is_empty()) => {
            text_or(&key["key"], "Present")
        }
        _ => "Present".into(),
    }
}

/// The kit's `formatTimestamp`: `seconds.nanos` → ISO date of the seconds, then `.nanos`.
fn timestamp_text(ts: &Value) -> String {
    let Some(ts) = ts.as_str().filter(|t| !t.is_empty()) else {
        return "N/A".into();
    };
    let (seconds, nanos) = match ts.split_once('.') {
        Some((s, n)) => (s, Some(n)),
        None => (ts, None),
    };
    let date = seconds
        .parse::<i64>()
        .ok()
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
        .map(crate::tools::normalise::iso_millis);
    let Some(date) = date else {
        // `new Date(NaN).toISOString()` throws in the kit.
        return "Invalid Date".into();
    };
    match nanos.filter(|n| !n.is_empty()) {
        Some(nanos) => format!("{date}.{nanos}"),
        None => date,
    }
}

fn human_message(c: &Value) -> String {
    let yes_no = |v: &Value| {
        if v.as_bool().unwrap_or(false) {
            "Yes"
        } else {
            "No"
        }
    };
    let nonce = match &c["nonce"] {
        Value::Null => "N/A".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    format!(
        "Here are the details for contract **{}**:\n\n- **Memo**: {}\n- **Deleted**: {}\n- **Permanent Removal**: {}\n- **Nonce**: {nonce}\n\n**Timestamps**:\n- Created: {}\n- Expiration: {}\n- Valid From: {}\n- Valid To: {}\n\n**Entity IDs**:\n- Auto Renew Account: {}\n- File ID: {}\n- Obtainer ID: {}\n- Proxy Account ID: {}\n\n**Keys**:\n- Admin Key: {}\n\n**EVM**:\n- Address: {}\n",
        text_or(&c["contract_id"], "N/A"),
        text_or(&c["memo"], "N/A"),
        yes_no(&c["deleted"]),
        yes_no(&c["permanent_removal"]),
        timestamp_text(&c["created_timestamp"]),
        timestamp_text(&c["expiration_timestamp"]),
        text_or(&c["timestamp"]["from"], "N/A"),
        text_or(&c["timestamp"]["to"], "N/A"),
        text_or(&c["auto_renew_account"], "N/A"),
        text_or(&c["file_id"], "N/A"),
        text_or(&c["obtainer_id"], "N/A"),
        text_or(&c["proxy_account_id"], "N/A"),
        key_text(&c["admin_key"]),
        text_or(&c["evm_address"], "N/A"),
    )
}

impl Tool for GetContractInfo {
    type Normalised = GetContractInfoNormalised;

    const METHOD: &'static str = "get_contract_info_query_tool";
    const NAME: &'static str = "Get Contract Info";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will return the information for a given Hedera contract.

Parameters:
- contractId (str): The contract ID to query for.
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Query;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .value("contractId", serde_json::json!({"type": ["string", "null"], "description": "The contract, as the mirror names it."}))
            .value("contractInfo", crate::tools::shapes::mirror_object("/contracts/{id}"))
            .query()
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {"contractId": {"type": "string", "description": "The contract ID to query for."}},
            "required": ["contractId"],
            "additionalProperties": false
        })
    }

    fn normalise(
        &self,
        raw: &Value,
        _ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        Ok(GetContractInfoNormalised {
            contract_id: contract_id(raw["contractId"].as_str().unwrap_or_default())?,
        })
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        contract_id(&n.contract_id).map(drop)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let id = &n.contract_id;
        let info = ctx.mirror.contract(id)?;
        let message = human_message(&info);
        Ok(CoreOutput::Query(json!({
            "raw": {"contractId": info["contract_id"], "contractInfo": info},
            "humanMessage": message,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract_ids_are_checked_before_they_reach_the_url() {
        assert_eq!(contract_id("0.0.1234").unwrap(), "0.0.1234");
        assert_eq!(
            contract_id("0xABCDEFabcdef0123456789abcdef0123456789ab").unwrap(),
            "0xabcdefabcdef0123456789abcdef0123456789ab"
        );
        let err = contract_id("0.0.1/../../accounts").unwrap_err();
        assert!(err.message.contains("Field \"contractId\""), "{err}");
    }

    #[test]
    fn message_renders_the_mirror_entry_like_the_kit() {
        let entry = json!({
            "contract_id": "0.0.1500",
            "memo": "",
            "deleted": false,
            "permanent_removal": null,
            "nonce": 1,
            "created_timestamp": "1700000000.123456789",
            "expiration_timestamp": null,
            "timestamp": {"from": "1700000000.123456789", "to": null},
            "auto_renew_account": "0.0.1001",
            "file_id": "0.0.1499",
            "obtainer_id": null,
            "proxy_account_id": null,
            "admin_key": {"_type": "ED25519", "key": "abcd"},
            "evm_address": "0x00000000000000000000000000000000000005dc"
        });
        let text = human_message(&entry);
        assert!(text.starts_with("Here are the details for contract **0.0.1500**:\n\n- **Memo**: N/A\n- **Deleted**: No\n- **Permanent Removal**: No\n- **Nonce**: 1\n"), "{text}");
        assert!(text.contains("- Created: 2023-11-14T22:13:20.000Z.123456789\n- Expiration: N/A\n- Valid From: 1700000000.123456789\n- Valid To: N/A\n"), "{text}");
        assert!(text.contains("- Admin Key: abcd\n"), "{text}");
        assert!(
            text.ends_with("- Address: 0x00000000000000000000000000000000000005dc\n"),
            "{text}"
        );
        assert_eq!(key_text(&Value::Null), "Not Set");
    }
}
