//! `sign_schedule_transaction_tool` and `schedule_delete_tool`: act on an existing schedule.

use crate::model::facts::Facts;
use crate::tools::normalise::serde_as;
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{ScheduleDeleteTransaction, ScheduleId, ScheduleSignTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduleRef {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub schedule_id: ScheduleId,
}

fn schema(what: &str) -> Value {
    json!({
        "type": "object",
        "properties": {"scheduleId": {"type": "string", "description": format!("The ID of the scheduled transaction to {what}")}},
        "required": ["scheduleId"],
        "additionalProperties": false
    })
}

fn schedule_ref(raw: &Value) -> Result<ScheduleRef, ToolError> {
    let text = raw["scheduleId"].as_str().unwrap_or_default();
    let (shard, realm, num) =
        crate::tools::normalise::entity_id(text).map_err(|e| e.in_field("scheduleId"))?;
    Ok(ScheduleRef {
        schedule_id: ScheduleId::new(shard, realm, num),
    })
}

fn with_nodes<D>(mut tx: hedera::Transaction<D>, ctx: &ToolContext<'_>) -> hedera::Transaction<D> {
    ctx.pin_nodes(&mut tx);
    tx
}

pub struct SignSchedule;

impl Tool for SignSchedule {
    type Normalised = ScheduleRef;

    const METHOD: &'static str = "sign_schedule_transaction_tool";
    const NAME: &'static str = "Sign Scheduled Transaction";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will sign a scheduled transaction and return the transaction ID.

Parameters:
- scheduleId (string, required): The ID of the scheduled transaction to sign
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        schema("sign")
    }

    fn normalise(&self, raw: &Value, _ctx: &ToolContext<'_>) -> Result<ScheduleRef, ToolError> {
        schedule_ref(raw)
    }

    const FACTS_FROM_NETWORK: bool = true;

    /// The signature may execute the schedule: its facts are what the scheduled body moves,
    /// read from the network when a policy is to judge them.
    fn read_facts(&self, n: &ScheduleRef, ctx: &ToolContext<'_>) -> Result<Facts, ToolError> {
        super::scheduled_body::facts_of_schedule(ctx.mirror, n.schedule_id)
    }

    fn core_action(&self, n: &ScheduleRef, ctx: &ToolContext<'_>) -> Result<CoreOutput, ToolError> {
        let mut tx = ScheduleSignTransaction::new();
        tx.schedule_id(n.schedule_id);
        let built = BuiltTransaction::new(
            with_nodes(tx, ctx),
            "ScheduleSignTransaction",
            serde_json::Map::new(),
        );
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "Transaction successfully signed. Transaction ID: {}",
            raw.transaction_id
        )
    }
}

pub struct DeleteSchedule;

impl Tool for DeleteSchedule {
    type Normalised = ScheduleRef;

    const METHOD: &'static str = "schedule_delete_tool";
    const NAME: &'static str = "Delete Scheduled Transaction";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will delete a scheduled transaction (by admin) so it will not execute.

Parameters:
- scheduleId (string, required): The ID of the scheduled transaction to delete
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        schema("delete")
    }

    fn normalise(&self, raw: &Value, _ctx: &ToolContext<'_>) -> Result<ScheduleRef, ToolError> {
        schedule_ref(raw)
    }

    fn core_action(&self, n: &ScheduleRef, ctx: &ToolContext<'_>) -> Result<CoreOutput, ToolError> {
        let mut tx = ScheduleDeleteTransaction::new();
        tx.schedule_id(n.schedule_id);
        let built = BuiltTransaction::new(
            with_nodes(tx, ctx),
            "ScheduleDeleteTransaction",
            serde_json::Map::new(),
        );
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "Scheduled transaction successfully deleted. Transaction ID: {}",
            raw.transaction_id
        )
    }
}
