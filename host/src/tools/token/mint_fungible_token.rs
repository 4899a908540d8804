//! `mint_fungible_token_tool`: mint more of a fungible token; the amount is in display units,
//! scaled by the token's decimals from the mirror node.

use super::units::{to_base_units, token_decimals};
use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{TokenId, TokenMintTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct MintFungibleToken;

/// Normalised params: the amount in base units (a decimal string).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MintFungibleTokenNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub token_id: TokenId,
    #[serde(with = "serde_as::amount")]
    #[schemars(with = "String")]
    pub amount: i64,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    token_id: String,
    amount: f64,
}

impl Tool for MintFungibleToken {
    type Normalised = MintFungibleTokenNormalised;

    const METHOD: &'static str = "mint_fungible_token_tool";
    const NAME: &'static str = "Mint Fungible Token";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will mint a given amount (supply) of an existing HTS fungible token on Hedera.

Parameters:
- tokenId (str, required): The id of the token
- amount (number, required): The amount to be minted. Given in display units, the tool will handle parsing
{usage}

Example: "Mint 1 of 0.0.6458037" means minting the amount of 1 of the token with id 0.0.6458037.
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string(
                "amount",
                "The amount minted in base units, as a decimal string.",
            )
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "tokenId": {"type": "string", "description": "The id of the token."},
                "amount": {"type": "number", "description": "The amount of tokens to mint. Given in display units, the tool will handle parsing"}
            },
            "required": ["tokenId", "amount"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let scheduling = scheduling::raw_from(raw)?;
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        let token_id: TokenId = normalise::token_id("tokenId", &raw.token_id)?;
        let decimals = token_decimals(ctx, &token_id)?.unwrap_or(0);
        let amount = to_base_units(raw.amount, decimals, "Mint amount")?;
        if raw.amount > 0.0 && amount == 0 {
            // "greater than 0" would contradict the positive amount the user gave.
            return Err(ToolError::invalid_field(
                "amount",
                format!(
                    "{} is less than one base unit of token {token_id} ({decimals} decimals)",
                    normalise::js_number(raw.amount)
                ),
            ));
        }
        let normalised = MintFungibleTokenNormalised {
            token_id,
            amount,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        };
        self.check_normalised(&normalised)?;
        Ok(normalised)
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        if n.amount <= 0 {
            return Err(ToolError::invalid_field(
                "amount",
                "Number must be greater than 0",
            ));
        }
        Ok(())
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        f.token(&n.token_id);
        f.with_memo(None, n.scheduling_params.is_scheduled)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = TokenMintTransaction::new();
        tx.token_id(n.token_id).amount(n.amount as u64);
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert("amount".into(), n.amount.to_string().into());
        }
        let built =
            n.scheduling_params
                .wrap(BuiltTransaction::new(tx, "TokenMintTransaction", details))?;
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        match &raw.schedule_id {
            Some(schedule) => format!(
                "Scheduled mint transaction created successfully.\nTransaction ID: {}\nSchedule ID: {schedule}",
                raw.transaction_id
            ),
            None => format!("Tokens successfully minted.\nTransaction ID: {}", raw.transaction_id),
        }
    }
}
