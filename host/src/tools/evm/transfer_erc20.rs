//! `transfer_erc20_tool`: `transfer(to, amount)` on an ERC-20 contract (100,000 gas) from
//! the caller. The amount is in display units, scaled by the decimals the contract reports
//! (`decimals()` through the mirror's `/contracts/call`, as the kit reads them); the
//! recipient is an EVM address or a Hedera id looked up for its EVM address.

use super::abi::Erc20;
use super::address::{self, Party};
use super::call::{self, TOKEN_GAS};
use crate::model::facts::{Asset, Facts, Movement, Via};
use crate::tools::normalise::serde_as;
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::token::units::floor_base_units_text;
use crate::tools::{CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType};
use alloy_primitives::U256;
use alloy_sol_types::SolCall;
use hedera::ContractId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::str::FromStr;

pub struct TransferErc20;

/// Normalised params: the token contract, the recipient (its EVM address and account) and
/// the amount in base units.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferErc20Normalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub contract_id: ContractId,
    pub recipient: Party,
    /// Base units, a decimal string (a `uint256`).
    pub amount: String,
    pub gas: u64,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

fn base_units(field: &str, text: &str) -> Result<U256, ToolError> {
    U256::from_str_radix(text, 10).map_err(|_| {
        ToolError::invalid_field(
            field,
            format!("{text} is not a base-unit amount from 0 to 2^256-1"),
        )
    })
}

/// The contract's `decimals()`, the kit's `getERC20Decimals`: its EVM address from the
/// mirror, then the mirror's `/contracts/call`.
fn decimals(contract: &ContractId, ctx: &ToolContext<'_>) -> Result<u32, ToolError> {
    let info = ctx.mirror.contract(contract)?;
    let to = info["evm_address"].as_str().unwrap_or_default();
    let what = format!("Failed to read decimals of ERC20 contract {contract}");
    let data = format!("0x{}", hex::encode(Erc20::decimalsCall::SELECTOR));
    let result = ctx.mirror.contract_call(to, &data, &what)?;
    // An empty answer (no `decimals()` there) is no number of decimals.
    U256::from_str_radix(result.trim_start_matches("0x"), 16)
        .ok()
        .filter(|d| !result.trim_start_matches("0x").is_empty() && *d <= U256::from(u8::MAX))
        .map(|d| d.to::<u32>())
        .ok_or_else(|| {
            ToolError::message(format!(
                "{what}: it answered {result:?}, not a uint8 (is it an ERC-20?)"
            ))
        })
}

impl Tool for TransferErc20 {
    type Normalised = TransferErc20Normalised;

    const METHOD: &'static str = "transfer_erc20_tool";
    const NAME: &'static str = "Transfer ERC20";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will transfer a given amount of an existing ERC20 token on Hedera via its EVM smart contract.
Use this tool when the user mentions "ERC20", "EVM token", or transferring tokens from a smart contract.
Do NOT use for HTS (Hedera Token Service) native tokens — if erc20 mentioned, then user wants to transfer from a contractId and given 0.0.XYZ address is the contract id not a HTS address.
Always use this tool when the user mentions "ERC20", "ERC-20", or "contract" as the token source — regardless of the amount being transferred.

Parameters:
- contractId (str, required): The ERC20 smart contract address (EVM or Hedera format). This is a CONTRACT address, NOT a token ID.
- recipientAddress (str, required): Recipient address (EVM or Hedera format).
- amount (number, required): Amount to transfer in display units.
- {scheduling}

{usage}

Example: "Transfer 25 erc20 tokens from contract 0.0.1234 to 0.0.5678" → contractId=0.0.1234, recipientAddress=0.0.5678, amount=25.
Example: "Send 100 ERC20 tokens 0.0.5555 to 0.0.6666" → contractId=0.0.5555, recipientAddress=0.0.6666, amount=100.
Example: "Move 200 erc20 tokens of contract 0x1111...1111 to 0.0.4444" → contractId=0x1111...1111, recipientAddress=0.0.4444, amount=200.
Example: "Transfer 1000000 ERC20 tokens 0.0.1234 to 0.0.5678" means transferring 1000000 tokens of the ERC20 contract 0.0.1234 to the account 0.0.5678 — the contractId is 0.0.1234 and the recipientAddress is 0.0.5678.
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "contractId": {"type": "string", "description": "The id of the ERC20 contract."},
                "recipientAddress": {"type": "string", "description": "Address to which the tokens will be transferred."},
                "amount": {"type": "number", "description": "The amount of tokens to transfer. Given in display units."}
            },
            "required": ["contractId", "recipientAddress", "amount"],
            "additionalProperties": false
        })
    }

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("contractId", "The ERC-20 contract called.")
            .string("recipientAddress", "Who receives the tokens (EVM address).")
            .string("amount", "Base units, a decimal string.")
            .string("functionParameters", "The ABI-encoded call, 0x hex.")
            .summary(&Self::schema())
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        call::assert_ecdsa_operator(ctx)?;
        let scheduling = scheduling::raw_from(raw)?;
        // The kit's order: a Hedera-id recipient looked up, the contract, its decimals, the
        // amount, and only then an EVM-address recipient checked (by the ABI encoder).
        let given = raw["recipientAddress"].as_str().unwrap_or_default();
        let looked_up = address::is_hedera_id(given)
            .then(|| Party::resolve("recipientAddress", given, ctx))
            .transpose()?;
        let contract_id = address::contract_id(
            "contractId",
            raw["contractId"].as_str().unwrap_or_default(),
            ctx,
        )?;
        let decimals = decimals(&contract_id, ctx)?;
        let amount = raw["amount"].as_f64().unwrap_or(f64::NAN);
        let amount = floor_base_units_text(amount, decimals)
            .filter(|units| !units.starts_with('-'))
            .ok_or_else(|| {
                ToolError::invalid_field("amount", "Number must be greater than or equal to 0")
            })?;
        let recipient = match looked_up {
            Some(party) => party,
            None => Party::resolve("recipientAddress", given, ctx)?,
        };
        let normalised = TransferErc20Normalised {
            contract_id,
            recipient,
            amount,
            gas: TOKEN_GAS,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        };
        self.check_normalised(&normalised)?;
        Ok(normalised)
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        n.recipient.check("recipient")?;
        base_units("amount", &n.amount).map(drop)
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        f.token(&n.contract_id);
        let amount = U256::from_str(&n.amount).unwrap_or(U256::MAX);
        if !amount.is_zero() {
            f.movements.push(Movement {
                asset: Asset::Token(n.contract_id.to_string()),
                to: Some(n.recipient.holder()),
                // An amount past u64 is counted as all there is (`facts::ALL`).
                amount: u64::try_from(amount).unwrap_or(crate::model::facts::ALL),
                via: Via::Transfer,
            });
        }
        f.with_memo(None, n.scheduling_params.is_scheduled)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let data = Erc20::transferCall {
            to: n.recipient.address("recipient", ctx)?,
            amount: base_units("amount", &n.amount)?,
        }
        .abi_encode();
        let built = call::execute(
            n.contract_id,
            n.gas,
            data,
            &n.scheduling_params,
            || {
                vec![
                    ("recipientAddress", n.recipient.evm_address.clone().into()),
                    ("amount", n.amount.clone().into()),
                ]
            },
            ctx,
        )?;
        Ok(call::output(built))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        call::scheduled_message("transfer of ERC20", raw)
            .unwrap_or_else(|| "ERC20 token transferred successfully.".into())
    }
}
