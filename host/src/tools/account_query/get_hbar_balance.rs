//! `get_hbar_balance_query_tool`: an account's HBAR balance from the mirror node.

use crate::tools::normalise::{self, serde_as};
use crate::tools::{CoreOutput, Tool, ToolContext, ToolError, ToolType};
use hedera::AccountId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct GetHbarBalance;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetHbarBalanceNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub account_id: AccountId,
    /// The EVM address the agent wrote for the account, echoed in the result as the kit does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_as: Option<String>,
}

impl Tool for GetHbarBalance {
    type Normalised = GetHbarBalanceNormalised;

    const METHOD: &'static str = "get_hbar_balance_query_tool";
    const NAME: &'static str = "Get HBAR Balance";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will return the HBAR balance for a given Hedera account.

Parameters:
- accountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Query;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("accountId", "The account queried.")
            .string("hbarBalance", "The balance in HBAR, as the kit writes it.")
            .query()
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "accountId": {"type": "string", "description": "The account ID to query (defaults to the context account)"}
            },
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let provided = raw.get("accountId").and_then(Value::as_str);
        let account_id = normalise::resolve_account("accountId", provided, ctx)?;
        Ok(GetHbarBalanceNormalised {
            account_id,
            written_as: provided.and_then(normalise::written_as_address),
        })
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let shown = normalise::echo_account(&n.account_id, n.written_as.as_deref());
        let id = n.account_id;
        let failed = |detail: String| {
            ToolError::message(format!(
                "Failed to fetch hbar balance for {shown}: Error: {detail}"
            ))
        };
        let account = ctx.mirror.account(id).map_err(|e| failed(e.to_string()))?;
        if !account.exists() {
            return Err(failed(format!("Account {id} not found")));
        }
        let tinybars = account
            .balance_tinybars()
            .ok_or_else(|| failed("the mirror's balance is not an integer".into()))?;
        let hbar = normalise::tinybars_to_hbar_string(tinybars);
        Ok(CoreOutput::Query(json!({
            "humanMessage": format!("Account {shown} has a balance of {hbar} HBAR"),
            "raw": {"accountId": shown, "hbarBalance": hbar},
        })))
    }
}
