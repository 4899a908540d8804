//! `transfer_fungible_token_with_allowance_tool`: the spender (the payer) sends an owner's
//! fungible tokens through an allowance; amounts in display units. May be scheduled.

use super::transfer_fungible_token::{transfers_schema, RawTransfer};
use super::transfers::{self, TokenAmount};
use super::units::token_decimals;
use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, TokenId, TransferTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct TransferFungibleTokenWithAllowance;

/// The owner's approved debit (negative base units).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovedTokenDebit {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub owner_account_id: AccountId,
    #[serde(with = "serde_as::amount")]
    #[schemars(with = "String")]
    pub amount: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferFungibleTokenWithAllowanceNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub token_id: TokenId,
    /// The recipients' credits.
    pub token_transfers: Vec<TokenAmount>,
    pub approved_transfer: ApprovedTokenDebit,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    token_id: String,
    source_account_id: String,
    transfers: Vec<RawTransfer>,
    transaction_memo: Option<String>,
}

impl Tool for TransferFungibleTokenWithAllowance {
    type Normalised = TransferFungibleTokenWithAllowanceNormalised;

    const METHOD: &'static str = "transfer_fungible_token_with_allowance_tool";
    const NAME: &'static str = "Transfer Fungible Token with Allowance";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will transfer a HTS (Hedera Token Service) native fungible token using an existing **token allowance**.

IMPORTANT: Do NOT use this tool when:
- The user mentions "ERC20" or "ERC-20" tokens — use transfer_erc20_tool instead
- The user mentions a "contract" as the token source — that is an ERC20 transfer, use transfer_erc20_tool instead
- The user does not explicitly mention an allowance, "spend allowance", or "use allowance" — default to the standard HTS transfer tool in that case
This tool is ONLY for HTS native fungible tokens transferred via an existing allowance mechanism.

Parameters:
- tokenId (string, required): The HTS token ID to transfer (e.g. "0.0.12345")
- sourceAccountId (string, required): Account ID of the token owner (the allowance granter). IMPORTANT: Do NOT infer this from context; it must be explicitly stated by the user.
- transfers (array of objects, required): List of token transfers — accepts multiple recipients at once. Each object should contain:
  - accountId (string, required): Recipient account ID
  - amount (number, required): Amount to transfer in display units
- transactionMemo (string, optional): Optional memo for the transaction
{scheduling}

{usage}

Example: Spend allowance from account 0.0.1002 to send 25 fungible tokens with id 0.0.33333 to 0.0.2002
Example 2: Use allowance from 0.0.1002 to send 50 TKN (HTS Fungible token id: '0.0.33333') to 0.0.2002 and 75 TKN to 0.0.3003

If the user specifies multiple recipients in a single request, include them ALL in one tool call as a single transfers array. Do not split the transfer into multiple tool calls.
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("tokenId", "The token.")
            .typed::<Vec<TokenAmount>>("tokenTransfers", "The recipients' credits in base units.")
            .typed::<ApprovedTokenDebit>(
                "approvedTransfer",
                "The owner's debit under the allowance.",
            )
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "tokenId": {"type": "string", "description": "The HTS token ID to transfer"},
                "sourceAccountId": {"type": "string", "description": "Account ID of the token owner (the allowance granter)"},
                "transfers": transfers_schema(),
                "transactionMemo": {"type": "string", "description": "Optional memo for the transaction"}
            },
            "required": ["tokenId", "sourceAccountId", "transfers"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let scheduling = scheduling::raw_from(raw)?;
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        let token_id = normalise::token_id("tokenId", &raw.token_id)?;
        let owner = normalise::account_id("sourceAccountId", &raw.source_account_id)?;
        let decimals = token_decimals(ctx, &token_id)?.unwrap_or(0);
        let recipients = raw.transfers.into_iter().map(|t| (t.account_id, t.amount));
        let (token_transfers, total) =
            transfers::credits("transfers", recipients, decimals, "Transfer amount")?;
        Ok(TransferFungibleTokenWithAllowanceNormalised {
            token_id,
            token_transfers,
            approved_transfer: ApprovedTokenDebit {
                owner_account_id: owner,
                amount: -total,
            },
            transaction_memo: raw.transaction_memo,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        })
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        let mut all = n.token_transfers.clone();
        all.push(TokenAmount {
            account_id: n.approved_transfer.owner_account_id,
            amount: n.approved_transfer.amount,
        });
        transfers::check_balanced("tokenTransfers with the approved transfer", &all)
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = super::transfers::token_credit_facts(&n.token_id, &n.token_transfers);
        f.from(&n.approved_transfer.owner_account_id);
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
        let debit = &n.approved_transfer;
        // The kit adds the approved debit first.
        let moves = std::iter::once((debit.owner_account_id, debit.amount, true)).chain(
            n.token_transfers
                .iter()
                .map(|t| (t.account_id, t.amount, false)),
        );
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
            details.insert(
                "approvedTransfer".into(),
                serde_json::to_value(debit).unwrap_or_default(),
            );
        }
        let built = BuiltTransaction::new(tx, "TransferTransaction", details);
        let built = n.scheduling_params.wrap(built)?;
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        match &raw.schedule_id {
            Some(schedule) => format!(
                "Scheduled allowance transfer created successfully.\nTransaction ID: {}\nSchedule ID: {schedule}",
                raw.transaction_id
            ),
            None => format!(
                "Fungible tokens successfully transferred with allowance.\nTransaction ID: {}",
                raw.transaction_id
            ),
        }
    }

    fn error_hint(&self, error_code: &str) -> Option<&'static str> {
        transfers::association_hint(error_code)
    }
}
