//! `transfer_erc721_tool`: `transferFrom(from, to, tokenId)` on an ERC-721 contract (100,000
//! gas). `from` defaults to the user; both ends are EVM addresses or Hedera ids looked up
//! for their EVM addresses.

use super::abi::Erc721;
use super::address::{self, Party};
use super::call::{self, TOKEN_GAS};
use crate::model::facts::{Asset, Facts};
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType};
use alloy_primitives::U256;
use alloy_sol_types::SolCall;
use hedera::ContractId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct TransferErc721;

/// Normalised params: the collection, both ends (EVM address and account), the serial.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferErc721Normalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub contract_id: ContractId,
    pub from: Party,
    pub to: Party,
    pub token_id: u64,
    pub gas: u64,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

/// The serial as the ABI takes it: a JSON number that is a non-negative safe integer.
fn serial(raw: &Value) -> Result<u64, ToolError> {
    let n = raw["tokenId"].as_f64().unwrap_or(f64::NAN);
    if n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 {
        Ok(n as u64)
    } else if n >= 0.0 && n.fract() == 0.0 {
        // Named as given (JSON holds it exactly; JavaScript would read another number).
        Err(ToolError::invalid_field(
            "tokenId",
            format!(
                "{} is past 2^53 - 1: a JSON number that large is not read exactly (JavaScript reads {}), so it names no token id safely",
                raw["tokenId"],
                normalise::js_number(n)
            ),
        ))
    } else {
        Err(ToolError::invalid_field(
            "tokenId",
            format!(
                "{} is not a token id (a non-negative integer)",
                normalise::js_number(n)
            ),
        ))
    }
}

impl Tool for TransferErc721 {
    type Normalised = TransferErc721Normalised;

    const METHOD: &'static str = "transfer_erc721_tool";
    const NAME: &'static str = "Transfer ERC721";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will transfer an existing ERC721 token on Hedera. ERC721 is an EVM compatible non fungible token (NFT).

Parameters:
- contractId (str, required): The id of the ERC721 contract
- fromAddress (str, optional): The Hedera account ID or EVM address. If not provided, defaults to the {default_account}
- toAddress (str, required): The address to which the token will be transferred. This can be the EVM address or the Hedera account id.
- tokenId (number, required): The ID of the transferred token
{scheduling}


{usage}

{usage}

Example:
"Transfer ERC721 token 0.0.6486793 with id 0 from 0xd94...580b to 0.0.6486793" transfers token ID 0 from the given EVM address to the given Hedera account.
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "contractId": {"type": "string", "description": "The id of the ERC721 contract."},
                "fromAddress": {"type": "string", "description": "Address from which the token will be transferred."},
                "toAddress": {"type": "string", "description": "Address to which the token will be transferred."},
                "tokenId": {"type": "number", "description": "The ID of the token to transfer."}
            },
            "required": ["contractId", "toAddress", "tokenId"],
            "additionalProperties": false
        })
    }

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("contractId", "The ERC-721 contract called.")
            .string("fromAddress", "The holder (EVM address).")
            .string("toAddress", "Who receives the token (EVM address).")
            .value(
                "tokenId",
                json!({"type": "integer", "description": "The serial moved."}),
            )
            .string("functionParameters", "The ABI-encoded call, 0x hex.")
            .summary(&Self::schema())
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        call::assert_ecdsa_operator(ctx)?;
        let scheduling = scheduling::raw_from(raw)?;
        let from = match raw["fromAddress"].as_str().filter(|s| !s.is_empty()) {
            Some(given) => given.to_owned(),
            None => normalise::default_account(ctx)?.to_string(),
        };
        let from = Party::resolve("fromAddress", &from, ctx)?;
        let to = Party::resolve(
            "toAddress",
            raw["toAddress"].as_str().unwrap_or_default(),
            ctx,
        )?;
        let contract_id = address::contract_id(
            "contractId",
            raw["contractId"].as_str().unwrap_or_default(),
            ctx,
        )?;
        let normalised = TransferErc721Normalised {
            contract_id,
            from,
            to,
            token_id: serial(raw)?,
            gas: TOKEN_GAS,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        };
        self.check_normalised(&normalised)?;
        Ok(normalised)
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        n.from.check("from")?;
        n.to.check("to")
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        f.token(&n.contract_id);
        f.from(&n.from.holder());
        f.credit(Asset::Nft(n.contract_id.to_string()), &n.to.holder(), 1);
        f.with_memo(None, n.scheduling_params.is_scheduled)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let data = Erc721::transferFromCall {
            from: n.from.address("from", ctx)?,
            to: n.to.address("to", ctx)?,
            tokenId: U256::from(n.token_id),
        }
        .abi_encode();
        let built = call::execute(
            n.contract_id,
            n.gas,
            data,
            &n.scheduling_params,
            || {
                vec![
                    ("fromAddress", n.from.evm_address.clone().into()),
                    ("toAddress", n.to.evm_address.clone().into()),
                    ("tokenId", n.token_id.into()),
                ]
            },
            ctx,
        )?;
        Ok(call::output(built))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        call::done_message("transfer of ERC721", "ERC721 token transferred", raw)
    }
}
