//! `airdrop_fungible_token_tool`: a `TokenAirdropTransaction` from the source (default: the
//! user) to recipients; amounts (numbers or numeric strings) in display units. Recipients not
//! associated with the token get a pending airdrop to claim.

use super::transfers::{self, TokenAmount};
use super::units::token_decimals;
use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::transfer_order::js_token_transfer_order;
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{TokenAirdropTransaction, TokenId};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct AirdropFungibleToken;

/// Normalised params: recipients' credits, then the source's debit (base units).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AirdropFungibleTokenNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub token_id: TokenId,
    pub token_transfers: Vec<TokenAmount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
}

/// JavaScript's `Number(x)` for the amount a recipient item carries (number or string).
fn js_to_number(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) => normalise::js_string_to_number(s),
        _ => f64::NAN,
    }
}

fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => normalise::js_number(n.as_f64().unwrap_or(f64::NAN)),
        other => other.to_string(),
    }
}

impl Tool for AirdropFungibleToken {
    type Normalised = AirdropFungibleTokenNormalised;

    const METHOD: &'static str = "airdrop_fungible_token_tool";
    const NAME: &'static str = "Airdrop Fungible Token";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will airdrop a HTS fungible token on Hedera.

Parameters:
- tokenId (str, required): The id of the token
- sourceAccountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
- recipients (array, required): A list of recipient objects (can contian a single recipient), each containing:
  - accountId (string, required): The recipient's account ID (e.g., "0.0.1234")
  - amount (number or string, required): The amount of tokens to send to that recipient (in display units)
- transactionMemo (str, optional): Optional memo for the transaction - not required for the tool call.
{usage}

If the user specifies multiple recipients in a single request, include them all in **one tool call** as a list of recipients.
User might want to airdrop to a single recipient.
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
                "tokenId": {"type": "string", "description": "The id of the token"},
                "sourceAccountId": {"type": "string", "description": "Account ID of the token owner (defaults to the user's account)"},
                "recipients": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "accountId": {"type": "string", "description": "Recipient account ID"},
                            "amount": {"type": ["number", "string"], "description": "Amount in display units"}
                        },
                        "required": ["accountId", "amount"],
                        "additionalProperties": false
                    },
                    "minItems": 1,
                    "description": "Array of recipients"
                },
                "transactionMemo": {"type": "string", "description": "Optional memo for the transaction"}
            },
            "required": ["tokenId", "recipients"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let token_text = raw["tokenId"].as_str().unwrap_or_default();
        let token_id = normalise::token_id("tokenId", token_text)?;
        let decimals = token_decimals(ctx, &token_id)?.ok_or_else(|| {
            ToolError::message(format!("Invalid token decimals for token {token_text}"))
        })?;
        let items = raw["recipients"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut recipients = Vec::with_capacity(items.len());
        for item in items {
            let amount = js_to_number(&item["amount"]);
            // NaN compares false, as in the kit; it fails the base-unit conversion instead.
            if amount <= 0.0 || amount.is_nan() {
                return Err(ToolError::message(format!(
                    "Invalid recipient amount: {}",
                    shown(&item["amount"])
                )));
            }
            let account = item["accountId"].as_str().unwrap_or_default().to_owned();
            recipients.push((account, amount));
        }
        // The kit resolves the source after checking the amounts.
        let source = normalise::resolve_account(
            "sourceAccountId",
            raw.get("sourceAccountId").and_then(Value::as_str),
            ctx,
        )?;
        let (mut token_transfers, total) =
            transfers::credits("recipients", recipients, decimals, "Airdrop amount")?;
        token_transfers.push(TokenAmount {
            account_id: source,
            amount: -total,
        });
        Ok(AirdropFungibleTokenNormalised {
            token_id,
            token_transfers,
            transaction_memo: raw
                .get("transactionMemo")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        transfers::check_balanced("tokenTransfers", &n.token_transfers)
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = super::transfers::token_credit_facts(&n.token_id, &n.token_transfers);
        f.memo = n.transaction_memo.clone();
        f
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = TokenAirdropTransaction::new();
        let moves = n
            .token_transfers
            .iter()
            .map(|t| (n.token_id, t.account_id, t.amount, false));
        for (token, account, amount, _) in js_token_transfer_order(moves) {
            tx.token_transfer(token, account, amount);
        }
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
        let built = BuiltTransaction::new(tx, "TokenAirdropTransaction", details);
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "Token successfully airdropped with transaction id {}",
            raw.transaction_id
        )
    }
}
