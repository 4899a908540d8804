//! `transfer_non_fungible_token_tool`: NFTs of one token from the user (the kit takes no sender
//! parameter: always the context or operator account) to recipients. May be scheduled.

use super::transfers::{self, NftRecipient};
use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, TokenId, TransferTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct TransferNonFungibleToken;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferNonFungibleTokenNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub sender_account_id: AccountId,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub token_id: TokenId,
    pub recipients: Vec<NftRecipient>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

/// The `recipients` items both NFT transfer tools take.
pub(super) fn recipients_schema() -> Value {
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "recipientId": {"type": "string", "description": "Recipient account ID"},
                "serialNumber": {"type": "integer", "minimum": 1, "description": "Serial number of the NFT to transfer"}
            },
            "required": ["recipientId", "serialNumber"],
            "additionalProperties": false
        },
        "minItems": 1,
        "description": "Array of recipient and serial number pairs"
    })
}

impl Tool for TransferNonFungibleToken {
    type Normalised = TransferNonFungibleTokenNormalised;

    const METHOD: &'static str = "transfer_non_fungible_token_tool";
    const NAME: &'static str = "Transfer Non Fungible Token";
    const DESCRIPTION: &'static str = r#"
{context}
This tool will transfer HTS non-fungible tokens (NFTs) from the operator's account to specified recipients.

Parameters:
- tokenId (string, required): The NFT token ID to transfer (e.g. "0.0.12345")
- recipients (array, required): List of objects specifying recipients and serial numbers - accepts multiple transfers at once
  - recipientId (string, required): Account to transfer to
  - serialNumber (number, required): NFT serial number to transfer
- transactionMemo (string, optional): Optional memo for the transaction
{scheduling}

{usage}
If multiple recipients are specified, the tool will create a single transaction for all transfers - they should be defined in recipients array.
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("tokenId", "The NFT collection.")
            .string("senderAccountId", "The sender.")
            .typed::<Vec<NftRecipient>>("recipients", "Who gets which serial.")
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "tokenId": {"type": "string", "description": "The NFT token ID to transfer"},
                "recipients": recipients_schema(),
                "transactionMemo": {"type": "string", "description": "Optional memo for the transaction"}
            },
            "required": ["tokenId", "recipients"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let scheduling = scheduling::raw_from(raw)?;
        let sender = normalise::default_account(ctx)
            .map_err(|_| ToolError::message("Could not determine sender account ID"))?;
        Ok(TransferNonFungibleTokenNormalised {
            sender_account_id: sender,
            token_id: normalise::token_id("tokenId", raw["tokenId"].as_str().unwrap_or_default())?,
            recipients: transfers::nft_recipients(raw)?,
            transaction_memo: raw
                .get("transactionMemo")
                .and_then(Value::as_str)
                .map(str::to_owned),
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        })
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        transfers::check_unique_serials(&n.recipients)
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = super::transfers::nft_facts(&n.token_id, &n.sender_account_id, &n.recipients);
        f.memo = n.transaction_memo.clone();
        f.scheduled = n.scheduling_params.is_scheduled;
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
            n.sender_account_id,
            &n.recipients,
            false,
        );
        crate::tools::transaction::set_memo(&mut tx, n.transaction_memo.as_deref());
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert("tokenId".into(), n.token_id.to_string().into());
            details.insert(
                "senderAccountId".into(),
                n.sender_account_id.to_string().into(),
            );
            details.insert(
                "recipients".into(),
                serde_json::to_value(&n.recipients).unwrap_or_default(),
            );
        }
        let built = BuiltTransaction::new(tx, "TransferTransaction", details);
        let built = n.scheduling_params.wrap(built)?;
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        match &raw.schedule_id {
            Some(schedule) => format!(
                "Scheduled non-fungible token transfer created successfully.\nTransaction ID: {}\nSchedule ID: {schedule}",
                raw.transaction_id
            ),
            None => format!(
                "Non-fungible tokens successfully transferred. Transaction ID: {}",
                raw.transaction_id
            ),
        }
    }

    fn error_hint(&self, error_code: &str) -> Option<&'static str> {
        transfers::association_hint(error_code)
    }
}
