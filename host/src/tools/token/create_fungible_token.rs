//! `create_fungible_token_tool`: a new HTS fungible token, supplies given in display units.
//!
//! One deliberate difference from the kit: the user's public key is looked up only when
//! `isSupplyKey` is true (the kit fetches the account from the mirror on every call and then
//! discards the key), so return-bytes calls without a supply key need no network.

use super::creation::{check_supply, created_message, js_token_create, set_supply, SupplyType};
use super::units::to_base_units;
use crate::tools::keys::default_public_key;
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::AccountId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct CreateFungibleToken;

/// Normalised params: supplies in base units (decimal strings), the supply key as DER hex.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateFungibleTokenNormalised {
    pub token_name: String,
    pub token_symbol: String,
    pub decimals: u32,
    #[serde(with = "serde_as::amount")]
    #[schemars(with = "String")]
    pub initial_supply: i64,
    pub supply_type: SupplyType,
    /// Present exactly when the supply is finite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(with = "serde_as::option_string")]
    #[schemars(with = "Option<String>")]
    pub max_supply: Option<i64>,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub treasury_account_id: AccountId,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub auto_renew_account_id: AccountId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supply_key: Option<String>,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    token_name: String,
    token_symbol: String,
    initial_supply: Option<f64>,
    supply_type: Option<SupplyType>,
    max_supply: Option<f64>,
    decimals: Option<f64>,
    treasury_account_id: Option<String>,
    is_supply_key: Option<bool>,
}

impl Tool for CreateFungibleToken {
    type Normalised = CreateFungibleTokenNormalised;

    const METHOD: &'static str = "create_fungible_token_tool";
    const NAME: &'static str = "Create Fungible Token";
    const DESCRIPTION: &'static str = r#"
{context}

This tool creates a HTS fungible token on Hedera.

Parameters:
- tokenName (str, required): The name of the token
- tokenSymbol (str, optional): The symbol of the token
- initialSupply (int, optional): The initial supply of the token, defaults to 0. Given in display units, the tool will handle parsing
- supplyType (str, optional): The supply type of the token. Can be "finite" or "infinite". Defaults to "finite"
- maxSupply (int, optional): The maximum supply of the token. Only applicable if supplyType is "finite". Defaults to 1,000,000 if not specified. Given in display units, the tool will handle parsing
- decimals (int, optional): The number of decimals the token supports. Defaults to 0
- treasuryAccountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
- isSupplyKey (boolean, optional): If user wants to set supply key set to true, otherwise false
{scheduling}
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;
    const CONVERTED_INTEGERS: &'static [&'static str] = &["initialSupply", "maxSupply"];

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("tokenName", "The token name.")
            .string("tokenSymbol", "The token symbol.")
            .string(
                "initialSupply",
                "The initial supply in base units, as a decimal string.",
            )
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "tokenName": {"type": "string", "description": "The name of the token."},
                "tokenSymbol": {"type": "string", "description": "The symbol of the token."},
                "initialSupply": {"type": "integer", "default": 0, "description": "The initial supply of the token. Given in display units, the tool will handle parsing"},
                "supplyType": {"type": "string", "enum": ["finite", "infinite"], "default": "finite", "description": "Supply type of the token."},
                "maxSupply": {"type": "integer", "description": "The maximum supply of the token. Given in display units, the tool will handle parsing"},
                "decimals": {"type": "integer", "default": 0, "description": "The number of decimals."},
                "treasuryAccountId": {"type": "string", "description": "The treasury account of the token."},
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
        let decimals = raw.decimals.unwrap_or(0.0);
        if !(0.0..=18.0).contains(&decimals) {
            return Err(ToolError::invalid_field(
                "decimals",
                "Number must be between 0 and 18",
            ));
        }
        let decimals = decimals as u32;
        let default_account = normalise::default_account(ctx)?;
        let treasury_account_id = match raw.treasury_account_id.as_deref() {
            // The kit: `treasuryAccountId ?? default`, and an empty one is missing.
            Some("") => return Err(ToolError::message("Must include treasury account ID")),
            Some(id) => normalise::account_id("treasuryAccountId", id)?,
            None => default_account,
        };
        let initial_supply = to_base_units(
            raw.initial_supply.unwrap_or(0.0),
            decimals,
            "Initial supply",
        )?;
        let supply_type = raw.supply_type.unwrap_or(SupplyType::Finite);
        let max_supply = match supply_type {
            SupplyType::Finite => Some(to_base_units(
                raw.max_supply.unwrap_or(1_000_000.0),
                decimals,
                "Max supply",
            )?),
            SupplyType::Infinite => None,
        };
        let supply_key = match raw.is_supply_key {
            Some(true) => Some(default_public_key(ctx)?.to_string_der()),
            _ => None,
        };
        let normalised = CreateFungibleTokenNormalised {
            token_name: raw.token_name,
            token_symbol: raw.token_symbol,
            decimals,
            initial_supply,
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
        if n.initial_supply < 0 {
            return Err(ToolError::invalid_field(
                "initialSupply",
                "Number must be greater than or equal to 0",
            ));
        }
        check_supply(n.supply_type, n.max_supply)?;
        if let Some(max) = n.max_supply {
            if n.initial_supply > max {
                return Err(ToolError::message(format!(
                    "Initial supply ({}) cannot exceed max supply ({max})",
                    n.initial_supply
                )));
            }
        }
        Ok(())
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = js_token_create();
        tx.name(&n.token_name)
            .symbol(&n.token_symbol)
            .decimals(n.decimals)
            .initial_supply(n.initial_supply as u64)
            .treasury_account_id(n.treasury_account_id)
            .auto_renew_account_id(n.auto_renew_account_id);
        set_supply(&mut tx, n.supply_type, n.max_supply);
        if let Some(der) = &n.supply_key {
            let key: hedera::PublicKey = der.parse().map_err(|_| {
                ToolError::invalid_field("supplyKey", format!("Invalid public key: {der}"))
            })?;
            tx.supply_key(key);
        }
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert("tokenName".into(), n.token_name.clone().into());
            details.insert("tokenSymbol".into(), n.token_symbol.clone().into());
            details.insert("initialSupply".into(), n.initial_supply.to_string().into());
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
