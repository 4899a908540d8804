//! `delete_non_fungible_token_allowance_tool`: the owner (default: the user) removes every
//! spender's allowance on given NFT serials (an `AccountAllowanceDeleteTransaction`).

use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountAllowanceDeleteTransaction, AccountId, NftId, TokenId};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct DeleteNftAllowance;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteNftAllowanceNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub owner_account_id: AccountId,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub token_id: TokenId,
    pub serial_numbers: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    owner_account_id: Option<String>,
    token_id: String,
    #[serde(with = "serde_as::js_u64::vec")]
    serial_numbers: Vec<u64>,
    transaction_memo: Option<String>,
}

impl Tool for DeleteNftAllowance {
    type Normalised = DeleteNftAllowanceNormalised;

    const METHOD: &'static str = "delete_non_fungible_token_allowance_tool";
    const NAME: &'static str = "Delete Non Fungible Token Allowance";
    const DESCRIPTION: &'static str = r#"
{context}

This tool deletes HTS NFT allowance(s) from the owner. Removing an allowance for a serial number means clearing the currently approved spender.

Parameters:
- ownerAccountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
- tokenId (string, required): The ID of the NFT token.
- serialNumbers (number[], required): Array of serial numbers to remove allowance for.
- transactionMemo (string, optional): Optional memo for the transaction.
{usage}

Example: "Delete allowance for NFT 0.0.123 serials [1, 2]"
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("tokenId", "The NFT collection.")
            .typed::<Vec<u64>>("serialNumbers", "The serials whose allowances are removed.")
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "ownerAccountId": {"type": "string", "description": "Owner account ID (defaults to the user's account)"},
                "tokenId": {"type": "string", "description": "The NFT token ID"},
                "serialNumbers": {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1, "description": "Serial numbers whose allowances are removed"},
                "transactionMemo": {"type": "string", "description": "Optional memo for the transaction"}
            },
            "required": ["tokenId", "serialNumbers"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        Ok(DeleteNftAllowanceNormalised {
            owner_account_id: normalise::resolve_account(
                "ownerAccountId",
                raw.owner_account_id.as_deref(),
                ctx,
            )?,
            token_id: normalise::token_id("tokenId", &raw.token_id)?,
            serial_numbers: raw.serial_numbers,
            transaction_memo: raw.transaction_memo,
        })
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        if n.serial_numbers.is_empty() {
            return Err(ToolError::message("serial_numbers must be provided"));
        }
        Ok(())
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        f.from(&n.owner_account_id);
        f.token(&n.token_id);
        f.with_memo(n.transaction_memo.as_deref(), false)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = AccountAllowanceDeleteTransaction::new();
        for &serial in &n.serial_numbers {
            let nft = NftId {
                token_id: n.token_id,
                serial,
            };
            tx.delete_all_token_nft_allowances(nft, n.owner_account_id);
        }
        crate::tools::transaction::set_memo(&mut tx, n.transaction_memo.as_deref());
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert("tokenId".into(), n.token_id.to_string().into());
            details.insert("serialNumbers".into(), json!(n.serial_numbers));
        }
        let built = BuiltTransaction::new(tx, "AccountAllowanceDeleteTransaction", details);
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "NFT allowance(s) deleted successfully. Transaction ID: {}",
            raw.transaction_id
        )
    }
}
