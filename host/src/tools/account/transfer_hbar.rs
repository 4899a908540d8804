//! `transfer_hbar_tool`: HBAR from the source (or context / operator) account to recipients.

use crate::model::facts::{Asset, Facts};
use crate::tools::normalise::{self, serde_as};
use crate::tools::plain;
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::transfer_order::js_hbar_transfer_order;
use crate::tools::PlainParams;
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, Hbar, TransferTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct TransferHbar;

/// One HBAR movement in tinybars; the sender's debit is negative.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HbarTransfer {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub account_id: AccountId,
    #[serde(with = "serde_as::amount")]
    #[schemars(with = "String")]
    pub amount: i64,
}

/// Normalised params: recipients, then the sender's negative total (the kit's shape).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferHbarNormalised {
    pub hbar_transfers: Vec<HbarTransfer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    transfers: Vec<RawTransfer>,
    source_account_id: Option<String>,
    transaction_memo: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawTransfer {
    account_id: String,
    amount: f64,
}

/// [`Raw`] as the plain reader takes it from the text: the schema's keys only (no
/// `schedulingParams`: such a call takes the general path), no nulls, amounts as written.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Plain {
    transfers: Vec<PlainTransfer>,
    #[serde(default, deserialize_with = "plain::present_string")]
    source_account_id: Option<String>,
    #[serde(default, deserialize_with = "plain::present_string")]
    transaction_memo: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PlainTransfer {
    account_id: String,
    amount: serde_json::Number,
}

impl Tool for TransferHbar {
    type Normalised = TransferHbarNormalised;

    const METHOD: &'static str = "transfer_hbar_tool";
    const NAME: &'static str = "Transfer HBAR";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will transfer HBAR to an account.

Parameters:
- transfers (array of objects, required): List of HBAR transfers to RECIPIENTS ONLY. CRITICAL: Do not include the sender/source account in this array. Each object should contain:
  - accountId (string, required): Recipient account ID (NOT the sender)
  - amount (number, required): Amount of HBAR to transfer
- sourceAccountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account} (Use this parameter for the sender. Do NOT put the sender in the transfers array).
- transactionMemo (string, optional): Optional memo for the transfer HBAR transaction
{scheduling}

{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .typed::<Vec<HbarTransfer>>(
                "hbarTransfers",
                "Each movement in tinybars, the sender's debit last.",
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
                            "accountId": {"type": "string", "description": "Recipient account ID (Required)"},
                            "amount": {"type": "number", "description": "Amount of HBAR to transfer (Required)"}
                        },
                        "required": ["accountId", "amount"],
                        "additionalProperties": false
                    },
                    "minItems": 1,
                    "description": "Array of HBAR transfers to RECIPIENTS. Do NOT include the sender/source account in this array."
                },
                "sourceAccountId": {"type": "string", "description": "Account ID of the sender/owner — the balance will be deducted from this account. Use this INSTEAD of adding a negative transfer."},
                "transactionMemo": {"type": "string", "description": "Memo to include with the transaction"}
            },
            "required": ["transfers"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let scheduling = scheduling::raw_from(raw)?;
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        normalise_raw(raw, scheduling.as_ref(), ctx)
    }

    /// The schema: `transfers` (at least one, each exactly `accountId` string and `amount`
    /// number), optional `sourceAccountId` and `transactionMemo` strings; anything else (a
    /// `schedulingParams`, an unknown key, a null) goes the general way.
    fn read_plain(&self, text: &str) -> Option<PlainParams> {
        let plain: Plain = serde_json::from_str(text).ok()?;
        if plain.transfers.is_empty() {
            return None; // minItems 1: the schema words it
        }
        let mut integral_float = false;
        let transfers = plain
            .transfers
            .into_iter()
            .map(|t| {
                let (amount, integral) = plain::number(&t.amount);
                integral_float |= integral;
                RawTransfer {
                    account_id: t.account_id,
                    amount,
                }
            })
            .collect();
        let raw = Raw {
            transfers,
            source_account_id: plain.source_account_id,
            transaction_memo: plain.transaction_memo,
        };
        Some(PlainParams::new(raw, integral_float))
    }

    fn normalise_plain(
        &self,
        raw: PlainParams,
        ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        let raw = raw
            .into_inner::<Raw>()
            .ok_or_else(|| ToolError::message("internal error: plain params of another tool"))?;
        normalise_raw(raw, None, ctx)
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        if n.hbar_transfers.is_empty() {
            return Err(ToolError::message("hbarTransfers must not be empty"));
        }
        let sum = n
            .hbar_transfers
            .iter()
            .try_fold(0i64, |acc, t| acc.checked_add(t.amount));
        if sum != Some(0) {
            return Err(ToolError::message("hbarTransfers must sum to zero"));
        }
        Ok(())
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        for t in &n.hbar_transfers {
            if t.amount < 0 {
                f.from(&t.account_id);
            }
            f.credit(Asset::Hbar, &t.account_id, t.amount);
        }
        f.with_memo(
            n.transaction_memo.as_deref(),
            n.scheduling_params.is_scheduled,
        )
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = TransferTransaction::new();
        let transfers = n
            .hbar_transfers
            .iter()
            .map(|t| (t.account_id, t.amount, false));
        for (account, tinybars, _) in js_hbar_transfer_order(transfers) {
            tx.hbar_transfer(account, Hbar::from_tinybars(tinybars));
        }
        crate::tools::transaction::set_memo(&mut tx, n.transaction_memo.as_deref());
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            let transfers = serde_json::to_value(&n.hbar_transfers).unwrap_or_default();
            details.insert("hbarTransfers".into(), transfers);
        }
        let built = BuiltTransaction::new(tx, "TransferTransaction", details);
        let built = n.scheduling_params.wrap(built)?;
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        match &raw.schedule_id {
            Some(schedule) => format!(
                "Scheduled HBAR transfer created successfully.\nTransaction ID: {}\nSchedule ID: {schedule}",
                raw.transaction_id
            ),
            None => format!("HBAR successfully transferred.\nTransaction ID: {}", raw.transaction_id),
        }
    }
}

/// Stage 2 of either path: `raw` as the schema accepted it → the kit's normalised params.
fn normalise_raw(
    raw: Raw,
    scheduling: Option<&scheduling::RawScheduling>,
    ctx: &ToolContext<'_>,
) -> Result<TransferHbarNormalised, ToolError> {
    let mut hbar_transfers = Vec::with_capacity(raw.transfers.len() + 1);
    let mut total: i64 = 0;
    for (i, t) in raw.transfers.iter().enumerate() {
        let tinybars = normalise::positive_tinybars(t.amount)?;
        let account_id =
            normalise::account_id_in(|| format!("transfers.{i}.accountId"), &t.account_id)?;
        total = total
            .checked_add(tinybars)
            .ok_or_else(|| ToolError::message("Total transfer amount is out of range"))?;
        hbar_transfers.push(HbarTransfer {
            account_id,
            amount: tinybars,
        });
    }
    // The kit parses the source after checking the amounts.
    let source =
        normalise::resolve_account("sourceAccountId", raw.source_account_id.as_deref(), ctx)?;
    hbar_transfers.push(HbarTransfer {
        account_id: source,
        amount: -total,
    });
    Ok(TransferHbarNormalised {
        hbar_transfers,
        transaction_memo: raw.transaction_memo,
        scheduling_params: Scheduling::normalise(scheduling, ctx)?,
    })
}
