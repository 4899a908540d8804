//! `get_account_token_balances_query_tool`: an account's token balances (all, or one token)
//! from the mirror node, each with its symbol and the balance in display units.

use crate::tools::normalise::{self, serde_as};
use crate::tools::{CoreOutput, Tool, ToolContext, ToolError, ToolType};
use hedera::{AccountId, TokenId};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct GetAccountTokenBalances;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetAccountTokenBalancesNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub account_id: AccountId,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_as::option_string"
    )]
    #[schemars(with = "Option<String>")]
    pub token_id: Option<TokenId>,
}

fn balance_line(token: &Value) -> String {
    let decimals = token["decimals"]
        .as_u64()
        .and_then(|d| u32::try_from(d).ok());
    let balance = match (token["balance"].as_i64(), decimals) {
        (Some(balance), Some(decimals)) => normalise::display_units(balance, decimals),
        _ => "NaN".into(),
    };
    format!(
        " Token: {}, Symbol: {}  Balance: {balance}, Decimals: {}",
        token["token_id"].as_str().unwrap_or("undefined"),
        token["symbol"].as_str().unwrap_or("undefined"),
        token["decimals"],
    )
}

impl Tool for GetAccountTokenBalances {
    type Normalised = GetAccountTokenBalancesNormalised;

    const METHOD: &'static str = "get_account_token_balances_query_tool";
    const NAME: &'static str = "Get Account Token Balances";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will return the token balances for a given Hedera account. The human message will contain parsed balances in display units whereas the extra field will contain the raw token balances response from the mirror node with .

Parameters:
- accountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
- tokenId (str, optional): The token ID to query for. If not provided, all token balances will be returned
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Query;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("accountId", "The account queried.")
            .value(
                "tokenBalances",
                crate::tools::shapes::mirror_object(
                    "/accounts/{id}/tokens response, balances in display units",
                ),
            )
            .query()
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "accountId": {"type": "string", "description": "The account ID to query. If not provided, this accountId will be used."},
                "tokenId": {"type": "string", "description": "The token ID to query."}
            },
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let account = raw.get("accountId").and_then(Value::as_str);
        let account_id = normalise::resolve_account("accountId", account, ctx)?;
        let token_id = raw
            .get("tokenId")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(|t| normalise::token_id("tokenId", t))
            .transpose()?;
        Ok(GetAccountTokenBalancesNormalised {
            account_id,
            token_id,
        })
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let id = n.account_id.to_string();
        let mut balances = ctx.mirror.account_tokens(&id, n.token_id)?;
        // Each balance gets its token's symbol, "UNKNOWN" when the token cannot be read.
        if let Some(tokens) = balances["tokens"].as_array_mut() {
            for token in tokens {
                let token_id = token["token_id"].as_str().unwrap_or_default().to_owned();
                let symbol = ctx
                    .mirror
                    .token(&token_id)
                    .ok()
                    .and_then(|info| info.symbol().as_str().map(str::to_owned))
                    .unwrap_or_else(|| "UNKNOWN".into());
                token["symbol"] = symbol.into();
            }
        }
        let tokens = balances["tokens"].as_array().map_or(&[][..], Vec::as_slice);
        let message = if tokens.is_empty() {
            format!("No token balances found for account {id}")
        } else {
            let lines: Vec<String> = tokens.iter().map(balance_line).collect();
            format!(
                "Details for {id}\n--- Token Balances ---\n{}\n\nThe token balances are returned in display units!\n",
                lines.join("\n")
            )
        };
        Ok(CoreOutput::Query(json!({
            "raw": {"accountId": id, "tokenBalances": balances},
            "humanMessage": message,
        })))
    }
}
