//! `mint_erc721_tool`: `safeMint(to)` on an ERC-721 collection (100,000 gas; only its owner
//! may mint). `to` defaults to the user and is an EVM address or a Hedera id looked up for its
//! EVM address.

use super::abi::Erc721;
use super::address::{self, Party};
use super::call::{self, TOKEN_GAS};
use crate::model::facts::{Asset, Facts};
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType};
use alloy_sol_types::SolCall;
use hedera::ContractId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct MintErc721;

/// Normalised params: the collection and who receives the new token.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MintErc721Normalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub contract_id: ContractId,
    pub to: Party,
    pub gas: u64,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

impl Tool for MintErc721 {
    type Normalised = MintErc721Normalised;

    const METHOD: &'static str = "mint_erc721_tool";
    const NAME: &'static str = "Mint ERC721";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will mint (create a new token from existing contract) a new ERC721 token on Hedera. ERC721 is an EVM compatible non fungible token (NFT).
Use this only for EVM contract-based ERC721 minting.
Do NOT use this tool for HTS NFT mint requests that provide metadata URI/URIs for a Hedera token class (those belong to mint_non_fungible_token_tool).

Parameters:
- contractId (str, required): The id of the ERC721 contract
- toAddress (str, optional): The Hedera account ID or EVM address. If not provided, defaults to the {default_account}
{scheduling}

{usage}

Example: "Mint ERC721 token 0.0.6486793 to 0xd94dc7f82f103757f715514e4a37186be6e4580b" means minting the ERC721 token with contract id 0.0.6486793 to the 0xd94dc7f82f103757f715514e4a37186be6e4580b EVM address.
Example: "Mint ERC721 token 0.0.6486793 to 0.0.6486793" means minting the ERC721 token with contract id 0.0.6486793 to the 0.0.6486793 Hedera account id.

NOTE: the 'toAddress' parameter is optional. If not provided, the minting will be performed to the default account as per the context.
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "contractId": {"type": "string", "description": "The id of the ERC721 contract."},
                "toAddress": {"type": "string", "description": "Address to which the token will be minted."}
            },
            "required": ["contractId"],
            "additionalProperties": false
        })
    }

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("contractId", "The ERC-721 contract called.")
            .string("toAddress", "Who receives the new token (EVM address).")
            .string("functionParameters", "The ABI-encoded call, 0x hex.")
            .summary(&Self::schema())
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        call::assert_ecdsa_operator(ctx)?;
        let scheduling = scheduling::raw_from(raw)?;
        let to = match raw["toAddress"].as_str().filter(|s| !s.is_empty()) {
            Some(given) => given.to_owned(),
            None => normalise::default_account(ctx)?.to_string(),
        };
        let to = Party::resolve("toAddress", &to, ctx)?;
        let contract_id = address::contract_id(
            "contractId",
            raw["contractId"].as_str().unwrap_or_default(),
            ctx,
        )?;
        let normalised = MintErc721Normalised {
            contract_id,
            to,
            gas: TOKEN_GAS,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        };
        self.check_normalised(&normalised)?;
        Ok(normalised)
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        n.to.check("to")
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        f.token(&n.contract_id);
        // A new serial for `to`: who receives what, like any transfer.
        f.credit(Asset::Nft(n.contract_id.to_string()), &n.to.holder(), 1);
        f.with_memo(None, n.scheduling_params.is_scheduled)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let data = Erc721::safeMintCall {
            to: n.to.address("to", ctx)?,
        }
        .abi_encode();
        let built = call::execute(
            n.contract_id,
            n.gas,
            data,
            &n.scheduling_params,
            || vec![("toAddress", n.to.evm_address.clone().into())],
            ctx,
        )?;
        Ok(call::output(built))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        call::done_message("minting of ERC721", "ERC721 token minted", raw)
    }
}
