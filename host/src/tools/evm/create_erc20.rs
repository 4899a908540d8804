//! `create_erc20_tool`: deploy an ERC-20 through the kit's ERC-20 factory (`deployToken(name,
//! symbol, decimals, initialSupply)`, 3,000,000 gas); the whole initial supply (display
//! units, scaled by the token's decimals in the contract) goes to the caller. After it
//! executes, the new token's address is read from the transaction record.

use super::abi::Erc20Factory;
use super::call::{self, Factory, FACTORY_GAS};
use crate::model::facts::Facts;
use crate::tools::normalise::serde_as;
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType};
use alloy_primitives::U256;
use alloy_sol_types::SolCall;
use hedera::ContractId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

pub struct CreateErc20;

/// Normalised params: the factory to call and what its `deployToken` gets.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateErc20Normalised {
    /// The ERC-20 factory of the network.
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub contract_id: ContractId,
    pub token_name: String,
    pub token_symbol: String,
    pub decimals: u8,
    /// In display units: the factory mints `initialSupply × 10^decimals` base units.
    pub initial_supply: u64,
    pub gas: u64,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

impl CreateErc20Normalised {
    fn call_data(&self) -> Vec<u8> {
        Erc20Factory::deployTokenCall {
            name_: self.token_name.clone(),
            symbol_: self.token_symbol.clone(),
            decimals_: self.decimals,
            initialSupply_: U256::from(self.initial_supply),
        }
        .abi_encode()
    }
}

/// `decimals` and `initialSupply` as the schema lets them be given (JSON integers ≥ 0, in any
/// spelling JavaScript reads as one: `10`, `1e1`, `10.0`, `-0`), or their defaults; `decimals`
/// must fit the ABI's `uint8`.
fn small_integer(raw: &Value, field: &str, default: u64) -> Result<u64, ToolError> {
    match raw.get(field) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_u64()
            .or_else(|| {
                v.as_f64()
                    .filter(|n| n.fract() == 0.0 && *n >= 0.0)
                    .map(|n| n as u64)
            })
            .filter(|n| *n < (1 << 53))
            .ok_or_else(|| ToolError::invalid_field(field, "Expected a safe non-negative integer")),
    }
}

impl Tool for CreateErc20 {
    type Normalised = CreateErc20Normalised;

    const METHOD: &'static str = "create_erc20_tool";
    const NAME: &'static str = "Create ERC20 Token";
    const DESCRIPTION: &'static str = r#"
{context}

This tool creates an ERC20 token on Hedera by calling the BaseERC20Factory contract. ERC20 is an EVM compatible fungible token.

Parameters:
- tokenName (str, required): The name of the token
- tokenSymbol (str, required): The symbol of the token
- decimals (int, optional): The number of decimals the token supports. Defaults to 18
- initialSupply (int, optional): The initial supply of the token, given in display units. Defaults to 0
- {scheduling}

{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "tokenName": {"type": "string", "description": "The name of the token."},
                "tokenSymbol": {"type": "string", "description": "The symbol of the token."},
                "decimals": {"type": "integer", "minimum": 0, "default": 18, "description": "The number of decimals the token supports."},
                "initialSupply": {"type": "integer", "minimum": 0, "default": 0, "description": "The initial supply of the token. Given in display units."}
            },
            "required": ["tokenName", "tokenSymbol"],
            "additionalProperties": false
        })
    }

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("contractId", "The factory called.")
            .string("functionParameters", "The ABI-encoded call, 0x hex.")
            .summary(&Self::schema())
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        call::assert_ecdsa_operator(ctx)?;
        let contract_id = call::factory(Factory::Erc20, ctx)?;
        let scheduling = scheduling::raw_from(raw)?;
        let decimals = small_integer(raw, "decimals", 18)?;
        let decimals = u8::try_from(decimals).map_err(|_| {
            ToolError::invalid_field(
                "decimals",
                "Number must be at most 255 (the factory's uint8)",
            )
        })?;
        Ok(CreateErc20Normalised {
            contract_id,
            token_name: raw["tokenName"].as_str().unwrap_or_default().to_owned(),
            token_symbol: raw["tokenSymbol"].as_str().unwrap_or_default().to_owned(),
            decimals,
            initial_supply: small_integer(raw, "initialSupply", 0)?,
            gas: FACTORY_GAS,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        })
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        // Nothing moves to anyone but the caller; the new token has no id before it exists.
        Facts::default().with_memo(None, n.scheduling_params.is_scheduled)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let data = n.call_data();
        call::deploy(n.contract_id, n.gas, data, &n.scheduling_params, ctx)
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        call::created_message("ERC20", raw)
    }

    fn result_fields(&self, raw: &RawTransactionResponse) -> Map<String, Value> {
        call::created_address_field("erc20Address", raw)
    }
}

#[cfg(test)]
mod tests {
    use super::super::address;
    use super::*;

    #[test]
    fn the_call_is_the_factorys_deploy_token() {
        let n = CreateErc20Normalised {
            contract_id: ContractId::new(0, 0, 1012),
            token_name: "Gold".into(),
            token_symbol: "GLD".into(),
            decimals: 2,
            initial_supply: 1000,
            gas: FACTORY_GAS,
            scheduling_params: Scheduling::default(),
        };
        let data = n.call_data();
        let decoded = Erc20Factory::deployTokenCall::abi_decode(&data).unwrap();
        assert_eq!(decoded.name_, "Gold");
        assert_eq!(decoded.decimals_, 2);
        assert_eq!(decoded.initialSupply_, U256::from(1000));
        assert_eq!(
            address::holder("0x00000000000000000000000000000000000003f4"),
            "0.0.1012"
        );
    }
}
