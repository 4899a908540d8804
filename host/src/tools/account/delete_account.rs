//! `delete_account_tool`: deletes an account, its balance going to `transferAccountId` (else
//! the default account).

use crate::model::facts::{Asset, Facts};
use crate::tools::normalise::{self, serde_as};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountDeleteTransaction, AccountId};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct DeleteAccount;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteAccountNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub account_id: AccountId,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub transfer_account_id: AccountId,
}

impl Tool for DeleteAccount {
    type Normalised = DeleteAccountNormalised;

    const METHOD: &'static str = "delete_account_tool";
    const NAME: &'static str = "Delete Account";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will delete an existing Hedera account. The remaining balance of the account will be transferred to the transferAccountId if provided, otherwise the operator account will be used.

Parameters:
- accountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
- accountId (str, required): The account ID to delete
- transferAccountId (str, optional): The account ID to transfer the remaining balance to. If not provided, the operator account will be used.
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "accountId": {"type": "string", "description": "The account ID to delete."},
                "transferAccountId": {"type": "string", "description": "The account ID to transfer the remaining balance to. If not provided, the operator account will be used."}
            },
            "required": ["accountId"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let account = raw["accountId"].as_str().unwrap_or_default();
        // The kit's `isHederaAddress`: the id must start with "0.".
        if !account.starts_with("0.") {
            return Err(ToolError::message("Account ID must be a Hedera address"));
        }
        let account_id = normalise::account_id("accountId", account)?;
        let transfer = raw.get("transferAccountId").and_then(Value::as_str);
        // The kit: `transferAccountId ?? default`, and an empty one is undetermined.
        if transfer == Some("") {
            return Err(ToolError::message(
                "Could not determine transfer account ID",
            ));
        }
        let transfer_account_id = normalise::resolve_account("transferAccountId", transfer, ctx)?;
        Ok(DeleteAccountNormalised {
            account_id,
            transfer_account_id,
        })
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        f.from(&n.account_id);
        f.all_of(Asset::Hbar, &n.transfer_account_id);
        f.changes("account", &n.account_id);
        f
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = AccountDeleteTransaction::new();
        tx.account_id(n.account_id)
            .transfer_account_id(n.transfer_account_id);
        ctx.pin_nodes(&mut tx);
        let built = BuiltTransaction::new(tx, "AccountDeleteTransaction", serde_json::Map::new());
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "Account successfully deleted. Transaction ID: {}",
            raw.transaction_id
        )
    }
}
