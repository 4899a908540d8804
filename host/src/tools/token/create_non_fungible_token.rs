//! `create_non_fungible_token_tool`: a new HTS NFT collection; the user's key is always its
//! supply key (NFTs cannot be minted without one), so `isSupplyKey` is accepted and ignored.

use super::creation::{check_supply, created_message, js_token_create, set_supply, SupplyType};
use crate::tools::keys::default_public_key;
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, TokenType};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct CreateNonFungibleToken;

/// The kit's default collection size when the supply is finite.
const DEFAULT_MAX_SUPPLY: i64 = 100;

/// Normalised params: the supply key as DER hex.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateNonFungibleTokenNormalised {
    pub token_name: String,
    pub token_symbol: String,
    pub supply_type: SupplyType,
    /// Present exactly when the supply is finite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_supply: Option<i64>,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub treasury_account_id: AccountId,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub auto_renew_account_id: AccountId,
    pub supply_key: String,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    token_name: String,
    token_symbol: String,
    max_supply: Option<f64>,
    supply_type: Option<SupplyType>,
    treasury_account_id: Option<String>,
}

impl Tool for CreateNonFungibleToken {
    type Normalised = CreateNonFungibleTokenNormalised;

    const METHOD: &'static str = "create_non_fungible_token_tool";
    const NAME: &'static str = "Create Non-Fungible Token";
    const DESCRIPTION: &'static str = r#"
{context}

This tool creates a HTS non-fungible token (NFT) on Hedera.

Parameters:
- tokenName (str, required): Name of the token
- tokenSymbol (str, required): Symbol of the token
- supplyType (str, optional): The supply type of the token. Can be "finite" or "infinite". Defaults to "finite"
- maxSupply (int, optional): Maximum NFT supply. Only applicable if supplyType is "finite". Defaults to 100 if not specified
- isSupplyKey (boolean, optional): If user wants to set supply key set to true, otherwise false
- treasuryAccountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
{scheduling}

For tool call only tokenName and tokenSymbol are optional and if not provided, the tool will use the default values.

{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("tokenName", "The token name.")
            .string("tokenSymbol", "The token symbol.")
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "tokenName": {"type": "string", "description": "The name of the token."},
                "tokenSymbol": {"type": "string", "description": "The symbol of the token."},
                "maxSupply": {"type": "integer", "description": "The maximum supply of the token."},
                "treasuryAccountId": {"type": "string", "description": "The treasury account of the token."},
                "supplyType": {"type": "string", "enum": ["finite", "infinite"], "description": "Supply type of the token."},
                "isSupplyKey": {"type": "boolean", "description": "Determines if the token supply key should be set."}
            },
            "required": ["tokenName", "tokenSymbol"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let scheduling = scheduling::raw_from(raw)?;
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        let default_account = normalise::default_account(ctx)?;
        let treasury_account_id = match raw.treasury_account_id.as_deref() {
            // The kit: `treasuryAccountId ?? default`, and an empty one is missing.
            Some("") => return Err(ToolError::message("Must include treasury account ID")),
            Some(id) => normalise::account_id("treasuryAccountId", id)?,
            None => default_account,
        };
        // An integer (the schema checked) within int64 (the schema checked too).
        let raw_max = raw.max_supply.map(|m| m as i64);
        // A max supply makes the supply finite; otherwise finite unless asked for infinite.
        let finite = raw_max.is_some() || raw.supply_type != Some(SupplyType::Infinite);
        let (supply_type, max_supply) = if finite {
            (
                SupplyType::Finite,
                Some(raw_max.unwrap_or(DEFAULT_MAX_SUPPLY)),
            )
        } else {
            (SupplyType::Infinite, None)
        };
        let supply_key = default_public_key(ctx)
            .map_err(|_| ToolError::message("Could not determine public key for supply key"))?
            .to_string_der();
        let normalised = CreateNonFungibleTokenNormalised {
            token_name: raw.token_name,
            token_symbol: raw.token_symbol,
            supply_type,
            max_supply,
            treasury_account_id,
            auto_renew_account_id: default_account,
            supply_key,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        };
        self.check_normalised(&normalised)?;
        Ok(normalised)
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        check_supply(n.supply_type, n.max_supply)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let supply_key: hedera::PublicKey = n.supply_key.parse().map_err(|_| {
            ToolError::invalid_field("supplyKey", format!("Invalid public key: {}", n.supply_key))
        })?;
        let mut tx = js_token_create();
        tx.name(&n.token_name)
            .symbol(&n.token_symbol)
            .token_type(TokenType::NonFungibleUnique)
            .treasury_account_id(n.treasury_account_id)
            .auto_renew_account_id(n.auto_renew_account_id)
            .supply_key(supply_key);
        set_supply(&mut tx, n.supply_type, n.max_supply);
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert("tokenName".into(), n.token_name.clone().into());
            details.insert("tokenSymbol".into(), n.token_symbol.clone().into());
        }
        let built = n.scheduling_params.wrap(BuiltTransaction::new(
            tx,
            "TokenCreateTransaction",
            details,
        ))?;
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        created_message(raw)
    }
}
