//! `transfer_non_fungible_token_with_allowance_tool`: the spender (the payer) sends an owner's
//! NFTs through an NFT allowance.

use super::transfer_non_fungible_token::recipients_schema;
use super::transfers::{self, NftRecipient};
use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, TokenId, TransferTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct TransferNonFungibleTokenWithAllowance;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferNftWithAllowanceNormalised {
    /// The owner who granted the allowance.
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub source_account_id: AccountId,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub token_id: TokenId,
    pub recipients: Vec<NftRecipient>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
}

impl Tool for TransferNonFungibleTokenWithAllowance {
    type Normalised = TransferNftWithAllowanceNormalised;

    const METHOD: &'static str = "transfer_non_fungible_token_with_allowance_tool";
    const NAME: &'static str = "Transfer Non Fungible Token with Allowance";
    const DESCRIPTION: &'static str = r#"
{context}
This tool will transfer HTS non-fungible tokens (NFTs) using an existing **token allowance**.

Parameters:
- sourceAccountId (string, required): The token owner (allowance granter)
- tokenId (string, required): The NFT token ID to transfer (e.g. "0.0.12345")
- recipients (array, required): List of objects specifying recipients and serial numbers - accepts multiple transfers at once
  - recipientId (string, required): Account to transfer to
  - serialNumber (string, required): NFT serial number to transfer
- transactionMemo (string, optional): Optional memo for the transaction

{usage}

If multiple recipients are specified, the tool will create a single transaction for all transfers - they should be defined in recipients array.
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("tokenId", "The NFT collection.")
            .string("sourceAccountId", "The owner the allowance is spent from.")
            .typed::<Vec<NftRecipient>>("recipients", "Who gets which serial.")
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "sourceAccountId": {"type": "string", "description": "Account ID of the NFT owner (the allowance granter)"},
                "tokenId": {"type": "string", "description": "The NFT token ID to transfer"},
                "recipients": recipients_schema(),
                "transactionMemo": {"type": "string", "description": "Optional memo for the transaction"}
            },
            "required": ["sourceAccountId", "tokenId", "recipients"],
            "additionalProperties": false
        })
    }

    fn normalise(
        &self,
        raw: &Value,
        _ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        let text = |field: &str| raw[field].as_str().unwrap_or_default();
        Ok(TransferNftWithAllowanceNormalised {
            token_id: normalise::token_id("tokenId", text("tokenId"))?,
            recipients: transfers::nft_recipients(raw)?,
            source_account_id: normalise::account_id("sourceAccountId", text("sourceAccountId"))?,
            transaction_memo: raw
                .get("transactionMemo")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        transfers::check_unique_serials(&n.recipients)
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = super::transfers::nft_facts(&n.token_id, &n.source_account_id, &n.recipients);
        f.memo = n.transaction_memo.clone();
        f
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = TransferTransaction::new();
        transfers::add_nft_moves(
            &mut tx,
            n.token_id,
            n.source_account_id,
            &n.recipients,
            true,
        );
        crate::tools::transaction::set_memo(&mut tx, n.transaction_memo.as_deref());
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert("tokenId".into(), n.token_id.to_string().into());
            details.insert(
                "sourceAccountId".into(),
                n.source_account_id.to_string().into(),
            );
            details.insert(
                "recipients".into(),
                serde_json::to_value(&n.recipients).unwrap_or_default(),
            );
        }
        let built = BuiltTransaction::new(tx, "TransferTransaction", details);
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "Non-fungible tokens successfully transferred with allowance. Transaction ID: {}",
            raw.transaction_id
        )
    }

    fn error_hint(&self, error_code: &str) -> Option<&'static str> {
        transfers::association_hint(error_code)
    }
}
