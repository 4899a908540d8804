//! `transfer_fungible_token_tool`: fungible tokens the sender (default: the user) owns, to one
//! or more recipients; amounts in display units, scaled by the token's decimals from the
//! mirror node. May be scheduled.

use super::transfers::{self, TokenAmount};
use super::units::token_decimals;
use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{TokenId, TransferTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct TransferFungibleToken;

/// Normalised params: recipients' credits, then the sender's debit (base units).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferFungibleTokenNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub token_id: TokenId,
    pub token_transfers: Vec<TokenAmount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    token_id: String,
    sender_account_id: Option<String>,
    transfers: Vec<RawTransfer>,
    transaction_memo: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RawTransfer {
    pub account_id: String,
    pub amount: f64,
}

/// The `transfers` items both fungible transfer tools take.
pub(super) fn transfers_schema() -> Value {
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "accountId": {"type": "string", "description": "Recipient account ID"},
                "amount": {"type": "number", "minimum": 0, "description": "Amount of tokens to transfer, in display units"}
            },
            "required": ["accountId", "amount"],
            "additionalProperties": false
        },
        "minItems": 1,
        "description": "List of token transfers"
    })
}

impl Tool for TransferFungibleToken {
    type Normalised = TransferFungibleTokenNormalised;

    const METHOD: &'static str = "transfer_fungible_token_tool";
    const NAME: &'static str = "Transfer Fungible Token";
    const DESCRIPTION: &'static str = r#"
{context}

Use this tool to transfer HTS fungible tokens that the sender **owns directly** — no allowance is involved.
The sender must hold the tokens in their own account. The tool signs the transfer with the sender's key.

DO NOT use this tool when:
- The user mentions "allowance", "approved", or "on behalf of"
- The user is spending tokens that belong to a different account via a pre-approved allowance

Use transfer_fungible_token_with_allowance_tool instead for allowance-based transfers.

Parameters:
- tokenId (string, required): The token ID to transfer (e.g. "0.0.12345")
- senderAccountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
- transfers (array of objects, required): List of token transfers. Each object should contain:
  - accountId (string, required): Recipient account ID
  - amount (number, required): Amount of tokens to transfer in display unit
- transactionMemo (string, optional): Optional memo for the transaction
{scheduling}

{usage}

Example: Send 25 of my fungible tokens with id 0.0.33333 to 0.0.2002
Example 2: Transfer 50 TKN (token id: '0.0.33333') from my account to 0.0.2002 and 75 TKN to 0.0.3003
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("tokenId", "The token.")
            .typed::<Vec<TokenAmount>>(
                "tokenTransfers",
                "Each movement in base units, the sender's debit last.",
            )
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "tokenId": {"type": "string", "description": "The token ID to transfer"},
                "senderAccountId": {"type": "string", "description": "Sender account ID (defaults to the user's account)"},
                "transfers": transfers_schema(),
                "transactionMemo": {"type": "string", "description": "Optional memo for the transaction"}
            },
            "required": ["tokenId", "transfers"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let scheduling = scheduling::raw_from(raw)?;
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        let sender =
            normalise::resolve_account("senderAccountId", raw.sender_account_id.as_deref(), ctx)?;
        let token_id = normalise::token_id("tokenId", &raw.token_id)?;
        let decimals = token_decimals(ctx, &token_id)?.unwrap_or(0);
        let recipients = raw.transfers.into_iter().map(|t| (t.account_id, t.amount));
        let (mut token_transfers, total) =
            transfers::credits("transfers", recipients, decimals, "Transfer amount")?;
        token_transfers.push(TokenAmount {
            account_id: sender,
            amount: -total,
        });
        Ok(TransferFungibleTokenNormalised {
            token_id,
            token_transfers,
            transaction_memo: raw.transaction_memo,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        })
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        transfers::check_balanced("tokenTransfers", &n.token_transfers)
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = super::transfers::token_credit_facts(&n.token_id, &n.token_transfers);
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
        let moves = n
            .token_transfers
            .iter()
            .map(|t| (t.account_id, t.amount, false));
        transfers::add_token_moves(&mut tx, n.token_id, moves);
        crate::tools::transaction::set_memo(&mut tx, n.transaction_memo.as_deref());
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert("tokenId".into(), n.token_id.to_string().into());
            details.insert(
                "tokenTransfers".into(),
                serde_json::to_value(&n.token_transfers).unwrap_or_default(),
            );
        }
        let built = BuiltTransaction::new(tx, "TransferTransaction", details);
        let built = n.scheduling_params.wrap(built)?;
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        match &raw.schedule_id {
            Some(schedule) => format!(
                "Scheduled fungible token transfer created successfully.\nTransaction ID: {}\nSchedule ID: {schedule}",
                raw.transaction_id
            ),
            None => format!(
                "Fungible tokens successfully transferred.\nTransaction ID: {}",
                raw.transaction_id
            ),
        }
    }

    fn error_hint(&self, error_code: &str) -> Option<&'static str> {
        transfers::association_hint(error_code)
    }
}
