//! `transfer_hbar_with_allowance_tool`: the spender (the payer) moves HBAR out of an owner's
//! account through an allowance the owner approved earlier.
//!
//! The kit's schema offers `schedulingParams` here but its normaliser ignores them, so the
//! transfer is never scheduled; hak does the same.

use super::transfer_hbar::{read_plain_raw, Raw};
use crate::model::facts::{Asset, Facts};
use crate::tools::normalise::{self, serde_as};
use crate::tools::transfer_order::js_hbar_transfer_order;
use crate::tools::PlainParams;
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, Hbar, TransferTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct TransferHbarWithAllowance;

/// One recipient's credit in tinybars.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HbarCredit {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub account_id: AccountId,
    #[serde(with = "serde_as::amount")]
    #[schemars(with = "String")]
    pub amount: i64,
}

/// The owner's approved debit (negative tinybars).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovedDebit {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub owner_account_id: AccountId,
    #[serde(with = "serde_as::amount")]
    #[schemars(with = "String")]
    pub amount: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferHbarWithAllowanceNormalised {
    pub hbar_transfers: Vec<HbarCredit>,
    pub hbar_approved_transfer: ApprovedDebit,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
}

impl Tool for TransferHbarWithAllowance {
    type Normalised = TransferHbarWithAllowanceNormalised;

    const METHOD: &'static str = "transfer_hbar_with_allowance_tool";
    const NAME: &'static str = "Transfer HBAR with allowance";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will transfer HBAR using an existing allowance.

Parameters:
- sourceAccountId (string, required): Account ID of the HBAR owner (the allowance granter)
- transfers (array of objects, required): List of HBAR transfers. Each object should contain:
  - accountId (string, required): Recipient account ID
  - amount (number, required): Amount of HBAR to transfer
- transactionMemo (string, optional): Optional memo for the transfer HBAR with allowance transaction
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .typed::<Vec<HbarCredit>>("hbarTransfers", "The recipients' credits in tinybars.")
            .typed::<ApprovedDebit>(
                "hbarApprovedTransfer",
                "The owner's debit under the allowance.",
            )
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "transfers": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "accountId": {"type": "string", "description": "Recipient account ID"},
                            "amount": {"type": "number", "description": "Amount of HBAR to transfer"}
                        },
                        "required": ["accountId", "amount"],
                        "additionalProperties": false
                    },
                    "minItems": 1,
                    "description": "List of HBAR transfers"
                },
                "sourceAccountId": {"type": "string", "description": "Account ID of the HBAR owner (the allowance granter)"},
                "transactionMemo": {"type": "string", "description": "Optional memo for the transfer HBAR with allowance transaction"}
            },
            "required": ["transfers"],
            "additionalProperties": false
        })
    }

    fn normalise(
        &self,
        raw: &Value,
        _ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        normalise_raw(raw)
    }

    /// `transfer_hbar_tool`'s reader: the same shape (`schedulingParams`, which this tool's
    /// schema offers and its normaliser ignores, goes the general way).
    fn read_plain(&self, text: &str) -> Option<PlainParams> {
        read_plain_raw(text)
    }

    fn normalise_plain(
        &self,
        raw: PlainParams,
        _ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        let raw = raw.into_inner::<Raw>()?;
        normalise_raw(raw)
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        let credits = n
            .hbar_transfers
            .iter()
            .try_fold(0i64, |acc, t| acc.checked_add(t.amount));
        if n.hbar_transfers.is_empty() || credits != n.hbar_approved_transfer.amount.checked_neg() {
            return Err(ToolError::message(
                "hbarTransfers must not be empty and the approved debit must balance them",
            ));
        }
        Ok(())
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        f.from(&n.hbar_approved_transfer.owner_account_id);
        for t in &n.hbar_transfers {
            f.credit(Asset::Hbar, &t.account_id, t.amount);
        }
        f.with_memo(n.transaction_memo.as_deref(), false)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = TransferTransaction::new();
        let debit = &n.hbar_approved_transfer;
        let moves = n
            .hbar_transfers
            .iter()
            .map(|t| (t.account_id, t.amount, false))
            .chain([(debit.owner_account_id, debit.amount, true)]);
        let ordered = js_hbar_transfer_order(moves).into_boxed_slice();
        for &(account, tinybars, approved) in &ordered {
            if approved {
                tx.approved_hbar_transfer(account, Hbar::from_tinybars(tinybars));
            } else {
                tx.hbar_transfer(account, Hbar::from_tinybars(tinybars));
            }
        }
        crate::tools::transaction::set_memo(&mut tx, n.transaction_memo.as_deref());
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert(
                "hbarTransfers".into(),
                serde_json::to_value(&n.hbar_transfers).unwrap_or_default(),
            );
            details.insert(
                "hbarApprovedTransfer".into(),
                serde_json::to_value(debit).unwrap_or_default(),
            );
        }
        let mut built = BuiltTransaction::new(tx, "TransferTransaction", details);
        // The transfers just added, in the SDK's order, are all this transaction moves.
        built.hbar_transfers = Some(ordered);
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "HBAR successfully transferred with allowance. Transaction ID: {}",
            raw.transaction_id
        )
    }
}

/// Stage 2 of either path: `raw` as the schema accepted it → the kit's normalised params.
fn normalise_raw(raw: Raw) -> Result<TransferHbarWithAllowanceNormalised, ToolError> {
    let mut hbar_transfers = Vec::with_capacity(raw.transfers.len());
    let mut total: i64 = 0;
    for (i, t) in raw.transfers.iter().enumerate() {
        let tinybars = normalise::positive_tinybars(t.amount)?;
        total = total
            .checked_add(tinybars)
            .ok_or_else(|| ToolError::message("Total transfer amount is out of range"))?;
        hbar_transfers.push(HbarCredit {
            account_id: normalise::account_id(&format!("transfers.{i}.accountId"), &t.account_id)?,
            amount: tinybars,
        });
    }
    // The kit reads the owner after the amounts: an empty one fails to parse, an absent one
    // reaches the SDK, which throws; hak names the field for that one.
    let owner = match raw.source_account_id.as_deref() {
        Some(owner) => normalise::account_id("sourceAccountId", owner)?,
        None => {
            return Err(ToolError::invalid_field(
                "sourceAccountId",
                "Required: the account that granted the allowance",
            ))
        }
    };
    Ok(TransferHbarWithAllowanceNormalised {
        hbar_transfers,
        hbar_approved_transfer: ApprovedDebit {
            owner_account_id: owner,
            amount: -total,
        },
        transaction_memo: raw.transaction_memo,
    })
}
