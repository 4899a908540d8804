//! `create_erc721_tool`: deploy an ERC-721 collection through the kit's ERC-721 factory
//! (`deployToken(name, symbol, baseURI)`, 3,000,000 gas); the caller owns it and alone may
//! mint. After it executes, the new collection's address is read from the transaction record.

use super::abi::Erc721Factory;
use super::call::{self, Factory, FACTORY_GAS};
use crate::model::facts::Facts;
use crate::tools::normalise::serde_as;
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType};
use alloy_sol_types::SolCall;
use hedera::ContractId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

pub struct CreateErc721;

/// Normalised params: the factory to call and what its `deployToken` gets.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateErc721Normalised {
    /// The ERC-721 factory of the network.
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub contract_id: ContractId,
    pub token_name: String,
    pub token_symbol: String,
    #[serde(rename = "baseURI")]
    pub base_uri: String,
    pub gas: u64,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

impl Tool for CreateErc721 {
    type Normalised = CreateErc721Normalised;

    const METHOD: &'static str = "create_erc721_tool";
    const NAME: &'static str = "Create ERC721 Token";
    const DESCRIPTION: &'static str = r#"
{context}

This tool creates an ERC721 token on Hedera by calling the BaseERC721Factory contract. ERC721 is an EVM compatible non fungible token (NFT).

Parameters:
- tokenName (str, required): The name of the token
- tokenSymbol (str, required): The symbol of the token
- baseURI (str, required): The base URI for token metadata
{scheduling}

{usage}
The contractId returned by the tool is the address of the ERC721 Factory contract, the address of the ERC721 token is the erc721Address returned by the tool.
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "tokenName": {"type": "string", "description": "The name of the token."},
                "tokenSymbol": {"type": "string", "description": "The symbol of the token."},
                "baseURI": {"type": "string", "default": "", "description": "The base URI for token metadata."}
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
        let contract_id = call::factory(Factory::Erc721, ctx)?;
        let scheduling = scheduling::raw_from(raw)?;
        let text = |field: &str| raw[field].as_str().unwrap_or_default().to_owned();
        Ok(CreateErc721Normalised {
            contract_id,
            token_name: text("tokenName"),
            token_symbol: text("tokenSymbol"),
            base_uri: text("baseURI"),
            gas: FACTORY_GAS,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        })
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        // Nothing moves; the collection has no id before it exists.
        Facts::default().with_memo(None, n.scheduling_params.is_scheduled)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let data = Erc721Factory::deployTokenCall {
            name_: n.token_name.clone(),
            symbol_: n.token_symbol.clone(),
            baseURI_: n.base_uri.clone(),
        }
        .abi_encode();
        call::deploy(n.contract_id, n.gas, data, &n.scheduling_params, ctx)
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        call::created_message("ERC721", raw)
    }

    fn result_fields(&self, raw: &RawTransactionResponse) -> Map<String, Value> {
        call::created_address_field("erc721Address", raw)
    }
}
