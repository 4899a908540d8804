//! `approve_token_allowance_tool` and `delete_token_allowance_tool` (approvals of 0): the owner
//! (default: the user) lets a spender move fungible tokens on its behalf. Amounts are display
//! units, scaled by each token's decimals from the mirror node. The kit files both tools under
//! its account plugin, so they live here.

use crate::model::facts::{Asset, Facts};
use crate::tools::normalise::{self, serde_as};
use crate::tools::token::units::{to_base_units, token_decimals};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountAllowanceApproveTransaction, AccountId, TokenId};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenApproval {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub owner_account_id: AccountId,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub spender_account_id: AccountId,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub token_id: TokenId,
    /// Base units.
    #[serde(with = "serde_as::amount")]
    #[schemars(with = "String")]
    pub amount: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenAllowanceNormalised {
    pub token_approvals: Vec<TokenApproval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
}

fn common_properties() -> Value {
    json!({
        "ownerAccountId": {"type": "string", "description": "Owner account ID (defaults to the user's account)"},
        "spenderAccountId": {"type": "string", "description": "Spender account ID"},
        "transactionMemo": {"type": "string", "description": "Optional memo for the transaction"}
    })
}

/// The kit's `normaliseApproveTokenAllowance` over `(tokenId field, tokenId, display amount)`.
fn normalise(
    raw: &Value,
    approvals: &[(String, &str, f64)],
    ctx: &ToolContext<'_>,
) -> Result<TokenAllowanceNormalised, ToolError> {
    // The kit asks the mirror for each token's decimals before it parses the accounts.
    let mut accounts = None;
    let mut token_approvals = Vec::with_capacity(approvals.len());
    for (field, token, amount) in approvals {
        let token_id = normalise::token_id(field, token)?;
        let decimals = token_decimals(ctx, &token_id)?.unwrap_or(0);
        let (owner, spender) = match accounts {
            Some(pair) => pair,
            None => *accounts.insert((
                normalise::resolve_account(
                    "ownerAccountId",
                    raw.get("ownerAccountId").and_then(Value::as_str),
                    ctx,
                )?,
                normalise::account_id(
                    "spenderAccountId",
                    raw["spenderAccountId"].as_str().unwrap_or_default(),
                )?,
            )),
        };
        let label = format!("Allowance amount for token {token}");
        token_approvals.push(TokenApproval {
            owner_account_id: owner,
            spender_account_id: spender,
            token_id,
            amount: to_base_units(*amount, decimals, &label)?,
        });
    }
    Ok(TokenAllowanceNormalised {
        token_approvals,
        transaction_memo: raw
            .get("transactionMemo")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

fn check(n: &TokenAllowanceNormalised) -> Result<(), ToolError> {
    if n.token_approvals.iter().any(|a| a.amount < 0) {
        return Err(ToolError::message(
            "tokenApprovals amounts must not be negative",
        ));
    }
    Ok(())
}

fn build(n: &TokenAllowanceNormalised, ctx: &ToolContext<'_>) -> Result<CoreOutput, ToolError> {
    let mut tx = AccountAllowanceApproveTransaction::new();
    for a in &n.token_approvals {
        tx.approve_token_allowance(
            a.token_id,
            a.owner_account_id,
            a.spender_account_id,
            a.amount as u64,
        );
    }
    crate::tools::transaction::set_memo(&mut tx, n.transaction_memo.as_deref());
    ctx.pin_nodes(&mut tx);
    let mut details = serde_json::Map::new();
    if ctx.wants_summary {
        details.insert(
            "tokenApprovals".into(),
            serde_json::to_value(&n.token_approvals).unwrap_or_default(),
        );
    }
    let built = BuiltTransaction::new(tx, "AccountAllowanceApproveTransaction", details);
    Ok(CoreOutput::Transaction(Box::new(built)))
}

pub struct ApproveTokenAllowance;

/// Approving and deleting state the same facts: each spender's allowance per token.
fn token_allowance_facts(n: &TokenAllowanceNormalised) -> Facts {
    let mut f = Facts::default();
    for a in &n.token_approvals {
        f.from(&a.owner_account_id);
        f.token(&a.token_id);
        f.allowance(
            Asset::Token(a.token_id.to_string()),
            &a.spender_account_id,
            a.amount.max(0) as u64,
        );
    }
    f.with_memo(n.transaction_memo.as_deref(), false)
}

impl Tool for ApproveTokenAllowance {
    type Normalised = TokenAllowanceNormalised;

    const METHOD: &'static str = "approve_token_allowance_tool";
    const NAME: &'static str = "Approve Token Allowance";
    const DESCRIPTION: &'static str = r#"
{context}

This tool approves allowances for one or more fungible HTS tokens from the owner to the spender.

Parameters:
- ownerAccountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
- spenderAccountId (string, required): Spender account ID
- tokenApprovals (array, required): List of approvals. Each item:
  - tokenId (string): Token ID
  - amount (number): Amount of tokens to approve (must be a positive number, can be float or int). Given in display units, the tool will handle parsing.
    IMPORTANT: HTS token amounts are stored as int64 on-chain. The maximum approvable amount in base units is 9,223,372,036,854,775,807. Passing a larger value (e.g. type(uint256).max) will revert. Use a finite, realistic allowance amount.
- transactionMemo (string, optional): Optional memo for the transaction
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .typed::<Vec<TokenApproval>>("tokenApprovals", "The allowances, in base units.")
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        let mut properties = common_properties();
        properties["tokenApprovals"] = json!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "tokenId": {"type": "string", "description": "Token ID"},
                    "amount": {"type": "number", "minimum": 0, "description": "Amount of tokens to approve, in display units"}
                },
                "required": ["tokenId", "amount"],
                "additionalProperties": false
            },
            "minItems": 1,
            "description": "List of token allowances to approve"
        });
        crate::tools::schema_fragments::memo_last(&mut properties);
        json!({"type": "object", "properties": properties, "required": ["spenderAccountId", "tokenApprovals"], "additionalProperties": false})
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let approvals: Vec<(String, &str, f64)> = raw["tokenApprovals"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, a)| {
                (
                    format!("tokenApprovals.{i}.tokenId"),
                    a["tokenId"].as_str().unwrap_or_default(),
                    a["amount"].as_f64().unwrap_or_default(),
                )
            })
            .collect();
        normalise(raw, &approvals, ctx)
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        check(n)
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        token_allowance_facts(n)
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
            "Fungible token allowance(s) approved successfully. Transaction ID: {}",
            raw.transaction_id
        )
    }
}

pub struct DeleteTokenAllowance;

impl Tool for DeleteTokenAllowance {
    type Normalised = TokenAllowanceNormalised;

    const METHOD: &'static str = "delete_token_allowance_tool";
    const NAME: &'static str = "Delete Token Allowance";
    const DESCRIPTION: &'static str = r#"
{context}
This tool deletes HTS token allowance(s) from the owner to the spender.

Parameters:
- ownerAccountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
- spenderAccountId (string, required): Spender account ID
- tokenIds (array, required): List of token IDs whose allowances should be removed
- transactionMemo (string, optional): Optional memo for the transaction
{usage}
Example: "Delete token allowance for account 0.0.123 on token 0.0.456". Means that 0.0.123 is the spenderId, 0.0.456 is the tokenId and the ownerId is taken from context or default operator.
Example 2: "Delete token allowance given from 0.0.1001 to account 0.0.2002 for token 0.0.3003". Means that 0.0.1001 is the ownerId, 0.0.2002 is the spenderId and 0.0.3003 is the tokenId.
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .typed::<Vec<TokenApproval>>("tokenApprovals", "The allowances, in base units.")
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        let mut properties = common_properties();
        properties["tokenIds"] = json!({
            "type": "array",
            "items": {"type": "string"},
            "description": "List of token IDs whose allowances should be removed"
        });
        crate::tools::schema_fragments::memo_last(&mut properties);
        json!({"type": "object", "properties": properties, "required": ["spenderAccountId", "tokenIds"], "additionalProperties": false})
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let approvals: Vec<(String, &str, f64)> = raw["tokenIds"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("tokenIds.{i}"), t.as_str().unwrap_or_default(), 0.0))
            .collect();
        // The kit checks the approvals it built from the ids against its normalised schema.
        if approvals.is_empty() {
            return Err(ToolError::invalid_field(
                "tokenApprovals",
                "Array must contain at least 1 element(s)",
            ));
        }
        normalise(raw, &approvals, ctx)
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        check(n)
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        token_allowance_facts(n)
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
            "Token allowance(s) deleted successfully. Transaction ID: {}",
            raw.transaction_id
        )
    }
}
