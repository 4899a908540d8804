//! `approve_nft_allowance_tool`: the owner (default: the user) lets a spender move given NFT
//! serials of a token, or all of them (`allSerials`).

use crate::model::facts::{Asset, Facts};
use crate::tools::normalise::{self, serde_as};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountAllowanceApproveTransaction, AccountId, NftId, TokenId};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct ApproveNftAllowance;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApproveNftAllowanceNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub owner_account_id: AccountId,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub spender_account_id: AccountId,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub token_id: TokenId,
    /// Every serial, present and future; `serialNumbers` is then empty.
    #[serde(default)]
    pub all_serials: bool,
    #[serde(default)]
    pub serial_numbers: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    owner_account_id: Option<String>,
    spender_account_id: String,
    token_id: String,
    #[serde(default)]
    all_serials: bool,
    #[serde(default, with = "serde_as::js_u64::vec")]
    serial_numbers: Vec<u64>,
    transaction_memo: Option<String>,
}

impl Tool for ApproveNftAllowance {
    type Normalised = ApproveNftAllowanceNormalised;

    const METHOD: &'static str = "approve_nft_allowance_tool";
    const NAME: &'static str = "Approve NFT Allowance";
    const DESCRIPTION: &'static str = r#"
{context}

This tool approves an HTS NFT allowance from the owner to the spender for specific NFT serial numbers of a token, or for all serials in the NFT collection.

Parameters:
- ownerAccountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
- spenderAccountId (string, required): Spender account ID
- tokenId (string, required): The NFT token ID (e.g., 0.0.xxxxx)
- allSerials (boolean, optional): If true, approves allowance for all current and future serials of the NFT. When true, do not provide serialNumbers.
- serialNumbers (number[], conditionally required): Array of NFT serial numbers to approve - accepts multiple serial numbers at once. Required when allSerials is not true.
- transactionMemo (string, optional): Optional memo for the transaction
{usage}

If multiple serial numbers are provided, they should all be included in a single tool call as a list of serial numbers.
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .value("nftApprovals", serde_json::json!({"type": "array", "description": "The allowance granted.", "items": {"type": "object", "properties": {"ownerAccountId": {"type": "string"}, "spenderAccountId": {"type": "string"}, "tokenId": {"type": "string"}, "allSerials": {"type": "boolean"}, "serialNumbers": {"type": "array", "items": {"type": "integer", "format": "uint64"}}}, "required": ["ownerAccountId", "spenderAccountId", "tokenId", "allSerials", "serialNumbers"], "additionalProperties": false}}))
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "ownerAccountId": {"type": "string", "description": "Owner account ID (defaults to the user's account)"},
                "spenderAccountId": {"type": "string", "description": "Spender account ID"},
                "tokenId": {"type": "string", "description": "The NFT token ID"},
                "allSerials": {"type": "boolean", "description": "Approve all serials of the token, present and future"},
                "serialNumbers": {"type": "array", "items": {"type": "integer", "minimum": 0}, "description": "Serial numbers to approve (not with allSerials)"},
                "transactionMemo": {"type": "string", "description": "Optional memo for the transaction"}
            },
            "required": ["spenderAccountId", "tokenId"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        // The kit parses the token first.
        let token_id = normalise::token_id("tokenId", &raw.token_id)?;
        let normalised = ApproveNftAllowanceNormalised {
            owner_account_id: normalise::resolve_account(
                "ownerAccountId",
                raw.owner_account_id.as_deref(),
                ctx,
            )?,
            spender_account_id: normalise::account_id("spenderAccountId", &raw.spender_account_id)?,
            token_id,
            all_serials: raw.all_serials,
            serial_numbers: raw.serial_numbers,
            transaction_memo: raw.transaction_memo,
        };
        self.check_normalised(&normalised)?;
        Ok(normalised)
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        match (n.all_serials, n.serial_numbers.is_empty()) {
            (true, false) => Err(ToolError::message(
                "When approving for all serials (allSerials=true), serialNumbers must not be provided.",
            )),
            (false, true) => Err(ToolError::message(
                "serialNumbers must contain at least one serial",
            )),
            _ => Ok(()),
        }
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        f.from(&n.owner_account_id);
        f.token(&n.token_id);
        let serials = if n.all_serials {
            crate::model::facts::ALL
        } else {
            n.serial_numbers.len() as u64
        };
        f.allowance(
            Asset::Nft(n.token_id.to_string()),
            &n.spender_account_id,
            serials,
        );
        f.with_memo(n.transaction_memo.as_deref(), false)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = AccountAllowanceApproveTransaction::new();
        if n.all_serials {
            tx.approve_token_nft_allowance_all_serials(
                n.token_id,
                n.owner_account_id,
                n.spender_account_id,
            );
        } else {
            for &serial in &n.serial_numbers {
                let nft = NftId {
                    token_id: n.token_id,
                    serial,
                };
                tx.approve_token_nft_allowance(nft, n.owner_account_id, n.spender_account_id);
            }
        }
        crate::tools::transaction::set_memo(&mut tx, n.transaction_memo.as_deref());
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert(
                "nftApprovals".into(),
                json!([{
                    "ownerAccountId": n.owner_account_id.to_string(),
                    "spenderAccountId": n.spender_account_id.to_string(),
                    "tokenId": n.token_id.to_string(),
                    "allSerials": n.all_serials,
                    "serialNumbers": n.serial_numbers,
                }]),
            );
        }
        let built = BuiltTransaction::new(tx, "AccountAllowanceApproveTransaction", details);
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "NFT allowance approved successfully. Transaction ID: {}",
            raw.transaction_id
        )
    }
}
