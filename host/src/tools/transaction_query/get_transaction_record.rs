//! `get_transaction_record_query_tool`: a transaction's records (with its scheduled and child
//! executions) from the mirror node.

use crate::tools::normalise::{js_number, tinybars_to_hbar_string};
use crate::tools::{CoreOutput, Tool, ToolContext, ToolError, ToolType};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct GetTransactionRecord;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetTransactionRecordNormalised {
    /// Mirror form: `0.0.x-sss-nnn`.
    pub transaction_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<f64>,
}

fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// `shard.realm.num`, each part digits.
fn is_entity(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() == 3 && parts.iter().all(|p| all_digits(p))
}

/// `0.0.x-sss-nnn`: the only form that reaches the mirror URL.
fn is_mirror_form(text: &str) -> bool {
    let mut parts = text.splitn(3, '-');
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(entity), Some(secs), Some(nanos)) if is_entity(entity) && all_digits(secs) && all_digits(nanos)
    )
}

/// The kit's normaliser: mirror form as is, `0.0.x@sss.nnn` rewritten to it (digits kept).
fn to_mirror_form(text: &str) -> Option<String> {
    if is_mirror_form(text) {
        return Some(text.to_owned());
    }
    let (entity, start) = text.split_once('@')?;
    let (secs, nanos) = start.split_once('.')?;
    (is_entity(entity) && all_digits(secs) && all_digits(nanos))
        .then(|| format!("{entity}-{secs}-{nanos}"))
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// The kit's `postProcess`: one block per record, transfers in HBAR.
fn human_message(record: &Value, id: &str) -> String {
    let transactions = record["transactions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if transactions.is_empty() {
        return format!("No transaction details found for transaction ID: {id}");
    }
    let blocks: Vec<String> = transactions
        .iter()
        .enumerate()
        .map(|(index, tx)| {
            let transfers = tx["transfers"].as_array().map_or(&[][..], Vec::as_slice);
            let transfers = if transfers.is_empty() {
                String::new()
            } else {
                let lines: Vec<String> = transfers
                    .iter()
                    .map(|t| {
                        let amount = t["amount"]
                            .as_i64()
                            .map_or_else(|| "NaN".into(), tinybars_to_hbar_string);
                        format!("  Account: {}, Amount: {amount}\u{210F}", text(&t["account"]))
                    })
                    .collect();
                format!("\nTransfers:\n{}", lines.join("\n"))
            };
            let header = if transactions.len() > 1 {
                format!("Transaction {} Details for {id}", index + 1)
            } else {
                format!("Transaction Details for {id}")
            };
            format!(
                "{header}\nStatus: {}\nConsensus Timestamp: {}\nTransaction Hash: {}\nTransaction Fee: {}\nType: {}\nEntity ID: {}{transfers}",
                text(&tx["result"]),
                text(&tx["consensus_timestamp"]),
                text(&tx["transaction_hash"]),
                text(&tx["charged_tx_fee"]),
                text(&tx["name"]),
                text(&tx["entity_id"]),
            )
        })
        .collect();
    blocks.join(&format!("\n\n{}\n\n", "=".repeat(50)))
}

impl Tool for GetTransactionRecord {
    type Normalised = GetTransactionRecordNormalised;

    const METHOD: &'static str = "get_transaction_record_query_tool";
    const NAME: &'static str = "Get Transaction Record Query";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will return the transaction record for a given Hedera transaction ID.

Parameters:
- transactionId (str, required): The transaction ID to fetch record for. Should be in format \"shard.realm.num-sss-nnn\" format where sss are seconds and nnn are nanoseconds
- nonce (number, optional): Optional nonce value for the transaction
{usage}

Additional information:
If user provides transaction ID in format 0.0.4177806@1755169980.051721264, parse it to 0.0.4177806-1755169980-051721264 and use it as transaction ID. Do not remove the staring zeros.
"#;
    const TOOL_TYPE: ToolType = ToolType::Query;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("transactionId", "The transaction queried.")
            .value(
                "transactionRecord",
                crate::tools::shapes::mirror_object("/transactions/{id} response"),
            )
            .query()
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "transactionId": {"type": "string", "description": "The transaction ID to fetch details for. Should be in format \"shard.realm.num-sss-nnn\" format where sss are seconds and nnn are nanoseconds"},
                "nonce": {"type": "number", "minimum": 0, "description": "Optional nonnegative nonce value for the transaction"}
            },
            "required": ["transactionId"],
            "additionalProperties": false
        })
    }

    fn normalise(
        &self,
        raw: &Value,
        _ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        let id = raw["transactionId"].as_str().unwrap_or_default();
        if id.is_empty() {
            return Err(ToolError::message("transactionId is required"));
        }
        let transaction_id = to_mirror_form(id)
            .ok_or_else(|| ToolError::message(format!("Invalid transactionId format: {id}")))?;
        Ok(GetTransactionRecordNormalised {
            transaction_id,
            nonce: raw.get("nonce").and_then(Value::as_f64),
        })
    }

    /// A hook's replacement must still be a mirror-form ID: it becomes part of the URL.
    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        if !is_mirror_form(&n.transaction_id) {
            return Err(ToolError::message(format!(
                "Invalid transactionId format: {}",
                n.transaction_id
            )));
        }
        match n.nonce {
            Some(nonce) if !(nonce >= 0.0 && nonce.is_finite()) => Err(ToolError::invalid_field(
                "nonce",
                "Number must be greater than or equal to 0",
            )),
            _ => Ok(()),
        }
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let id = &n.transaction_id;
        let nonce = n.nonce.map(js_number);
        let record = ctx.mirror.transaction(id, nonce.as_deref())?;
        let message = human_message(&record, id);
        Ok(CoreOutput::Query(json!({
            "raw": {"transactionId": id, "transactionRecord": record},
            "humanMessage": message,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_id_forms_normalise_to_the_mirror_form() {
        assert_eq!(
            to_mirror_form("0.0.4177806@1755169980.051721264").as_deref(),
            Some("0.0.4177806-1755169980-051721264")
        );
        assert_eq!(
            to_mirror_form("0.0.5-1700000000-000000007").as_deref(),
            Some("0.0.5-1700000000-000000007")
        );
        for bad in [
            "0.0.5",
            "0.0.5-17-",
            "0.0.5@17",
            "0.0.x-1-2",
            "0.0.5-1-2/../x",
            "0.0.5-1-2-3",
        ] {
            assert_eq!(to_mirror_form(bad), None, "{bad}");
        }
    }

    #[test]
    fn several_records_get_numbered_headers() {
        let record = json!({"transactions": [
            {"result": "SUCCESS", "consensus_timestamp": "1.2", "transaction_hash": "h", "charged_tx_fee": 5, "name": "CRYPTOTRANSFER", "entity_id": null,
             "transfers": [{"account": "0.0.2", "amount": -150000000}, {"account": "0.0.3", "amount": 1}]},
            {"result": "SUCCESS", "consensus_timestamp": "1.3", "transaction_hash": "g", "charged_tx_fee": 0, "name": "SCHEDULECREATE", "entity_id": "0.0.9", "transfers": []}
        ]});
        let message = human_message(&record, "0.0.2-1-2");
        assert!(message.starts_with("Transaction 1 Details for 0.0.2-1-2\nStatus: SUCCESS\n"));
        assert!(message.contains("Entity ID: null\nTransfers:\n  Account: 0.0.2, Amount: -1.5\u{210F}\n  Account: 0.0.3, Amount: 1e-8\u{210F}"));
        assert!(message.contains(&format!("\n\n{}\n\nTransaction 2 Details", "=".repeat(50))));
        assert!(message.ends_with("Entity ID: 0.0.9"));
        assert_eq!(
            human_message(&json!({"transactions": []}), "x"),
            "No transaction details found for transaction ID: x"
        );
    }
}
