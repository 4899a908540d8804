//! `approve_hbar_allowance_tool` and `delete_hbar_allowance_tool` (an approval of 0): the
//! owner (default: the user) lets a spender move HBAR on its behalf.

use crate::model::facts::{Asset, Facts};
use crate::tools::normalise::{self, serde_as};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountAllowanceApproveTransaction, AccountId, Hbar};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HbarApproval {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub owner_account_id: AccountId,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub spender_account_id: AccountId,
    /// Tinybars.
    #[serde(with = "serde_as::amount")]
    #[schemars(with = "String")]
    pub amount: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HbarAllowanceNormalised {
    pub hbar_approvals: Vec<HbarApproval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
}

fn schema(with_amount: bool) -> Value {
    let mut properties = json!({
        "ownerAccountId": {"type": "string", "description": "Owner account ID (defaults to the user's account)"},
        "spenderAccountId": {"type": "string", "description": "Spender account ID"},
        "transactionMemo": {"type": "string", "description": "Memo to include with the transaction"}
    });
    let mut required = vec!["spenderAccountId"];
    if with_amount {
        properties["amount"] =
            json!({"type": "number", "description": "Amount of HBAR to approve as allowance"});
        required.push("amount");
    }
    crate::tools::schema_fragments::memo_last(&mut properties);
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// The kit's `normaliseApproveHbarAllowance` (the delete tool passes an amount of 0).
fn normalise(
    raw: &Value,
    amount: f64,
    ctx: &ToolContext<'_>,
) -> Result<HbarAllowanceNormalised, ToolError> {
    let owner = normalise::resolve_account(
        "ownerAccountId",
        raw.get("ownerAccountId").and_then(Value::as_str),
        ctx,
    )?;
    let spender = normalise::account_id(
        "spenderAccountId",
        raw["spenderAccountId"].as_str().unwrap_or_default(),
    )?;
    let tinybars = normalise::hbar_to_tinybars(amount)?;
    // The kit's `new Hbar(amount).isNegative()`: BigNumber keeps the sign of -0 (named "0").
    if tinybars < 0 || amount.is_sign_negative() {
        return Err(ToolError::message(format!(
            "Invalid allowance amount: {}",
            normalise::js_number(amount)
        )));
    }
    Ok(HbarAllowanceNormalised {
        hbar_approvals: vec![HbarApproval {
            owner_account_id: owner,
            spender_account_id: spender,
            amount: tinybars,
        }],
        transaction_memo: raw
            .get("transactionMemo")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

fn build(n: &HbarAllowanceNormalised, ctx: &ToolContext<'_>) -> Result<CoreOutput, ToolError> {
    let mut tx = AccountAllowanceApproveTransaction::new();
    for a in &n.hbar_approvals {
        if a.amount < 0 {
            return Err(ToolError::message(
                "hbarApprovals amounts must not be negative",
            ));
        }
        tx.approve_hbar_allowance(
            a.owner_account_id,
            a.spender_account_id,
            Hbar::from_tinybars(a.amount),
        );
    }
    crate::tools::transaction::set_memo(&mut tx, n.transaction_memo.as_deref());
    ctx.pin_nodes(&mut tx);
    let mut details = serde_json::Map::new();
    if ctx.wants_summary {
        details.insert(
            "hbarApprovals".into(),
            serde_json::to_value(&n.hbar_approvals).unwrap_or_default(),
        );
    }
    let built = BuiltTransaction::new(tx, "AccountAllowanceApproveTransaction", details);
    Ok(CoreOutput::Transaction(Box::new(built)))
}

pub struct ApproveHbarAllowance;

/// Approving and deleting state the same facts: each spender's allowance (0 removes it).
fn hbar_allowance_facts(n: &HbarAllowanceNormalised) -> Facts {
    let mut f = Facts::default();
    for a in &n.hbar_approvals {
        f.from(&a.owner_account_id);
        f.allowance(Asset::Hbar, &a.spender_account_id, a.amount.max(0) as u64);
    }
    f.with_memo(n.transaction_memo.as_deref(), false)
}

impl Tool for ApproveHbarAllowance {
    type Normalised = HbarAllowanceNormalised;

    const METHOD: &'static str = "approve_hbar_allowance_tool";
    const NAME: &'static str = "Approve HBAR Allowance";
    const DESCRIPTION: &'static str = r#"
{context}

This tool approves an HBAR allowance from the owner to the spender.

Parameters:
- ownerAccountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
- spenderAccountId (string, required): Spender account ID
- amount (number, required): Amount of HBAR to approve (can be decimal, cannot be negative)
- transactionMemo (string, optional): Optional memo for the transaction
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .typed::<Vec<HbarApproval>>("hbarApprovals", "The allowances, in tinybars.")
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        schema(true)
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        normalise(raw, raw["amount"].as_f64().unwrap_or_default(), ctx)
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        hbar_allowance_facts(n)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        build(n, ctx)
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "HBAR allowance approved successfully. Transaction ID: {}",
            raw.transaction_id
        )
    }
}

pub struct DeleteHbarAllowance;

impl Tool for DeleteHbarAllowance {
    type Normalised = HbarAllowanceNormalised;

    const METHOD: &'static str = "delete_hbar_allowance_tool";
    const NAME: &'static str = "Delete HBAR Allowance";
    const DESCRIPTION: &'static str = r#"
{context}

This tool deletes an HBAR allowance from the owner to the spender.

Parameters:
- ownerAccountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
- spenderAccountId (string, required): Spender account ID
- transactionMemo (string, optional): Optional memo for the transaction
{usage}

Example: "Delete HBAR allowance from 0.0.123 to 0.0.456". Spender account ID is 0.0.456 and the owner account ID is 0.0.123.
Example 2: "Delete HBAR allowance for 0.0.123". Spender account ID is 0.0.123 and the owner account ID was not specified.
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .typed::<Vec<HbarApproval>>("hbarApprovals", "The allowances, in tinybars.")
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        schema(false)
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        normalise(raw, 0.0, ctx)
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        hbar_allowance_facts(n)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        build(n, ctx)
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "HBAR allowance deleted successfully. Transaction ID: {}",
            raw.transaction_id
        )
    }
}
