//! `mint_non_fungible_token_tool`: mint NFTs of a collection, one per URI; each NFT's metadata
//! is its URI's UTF-8 bytes.

use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{TokenId, TokenMintTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct MintNonFungibleToken;

/// The kit's limits on `uris`.
const MAX_URIS: usize = 10;
const MAX_URI_CHARS: usize = 100;

/// Normalised params: the URIs stay text; the metadata is their bytes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MintNonFungibleTokenNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub token_id: TokenId,
    pub uris: Vec<String>,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    token_id: String,
    uris: Vec<String>,
}

impl Tool for MintNonFungibleToken {
    type Normalised = MintNonFungibleTokenNormalised;

    const METHOD: &'static str = "mint_non_fungible_token_tool";
    const NAME: &'static str = "Mint Non-Fungible Token";
    const DESCRIPTION: &'static str = r#"

This tool will mint HTS NFTs with its unique metadata for the class of NFTs (non-fungible tokens) defined by the tokenId on Hedera.
Use this tool when the user provides metadata URI/URIs (ipfs/http links, "metadata", "URI", "URIs") for a Hedera token class id.
If both HTS NFT mint and ERC721 mint appear possible, choose this tool whenever metadata URIs are explicitly provided.

Parameters:
- tokenId (str, required): The id of the token
- uris (array, required): An array of strings (URIs) of maximum size 10 hosting the NFT metadata
{scheduling}

{usage}

Example: "Mint 0.0.6465503 with metadata: ipfs://bafyreiao6ajgsfji6qsgbqwdtjdu5gmul7tv2v3pd6kjgcw5o65b2ogst4/metadata.json" means minting an NFT with the given metadata URI for the class of NFTs defined by the token with id 0.0.6465503.
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "tokenId": {"type": "string", "description": "The id of the NFT class."},
                "uris": {"type": "array", "items": {"type": "string", "maxLength": MAX_URI_CHARS}, "maxItems": MAX_URIS, "description": "An array of URIs hosting NFT metadata."}
            },
            "required": ["tokenId", "uris"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let scheduling = scheduling::raw_from(raw)?;
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        let token_id = normalise::token_id("tokenId", &raw.token_id)?;
        let normalised = MintNonFungibleTokenNormalised {
            token_id,
            uris: raw.uris,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        };
        self.check_normalised(&normalised)?;
        Ok(normalised)
    }

    /// The schema's limits, again for URIs a hook supplied.
    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        if n.uris.len() > MAX_URIS {
            return Err(ToolError::invalid_field(
                "uris",
                format!("Array must contain at most {MAX_URIS} element(s)"),
            ));
        }
        match n
            .uris
            .iter()
            .position(|u| u.chars().count() > MAX_URI_CHARS)
        {
            Some(i) => Err(ToolError::invalid_field(
                &format!("uris[{i}]"),
                format!("String must contain at most {MAX_URI_CHARS} character(s)"),
            )),
            None => Ok(()),
        }
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
        tx.token_id(n.token_id)
            .metadata(n.uris.iter().map(|u| u.as_bytes().to_vec()));
        ctx.pin_nodes(&mut tx);
        let built = n.scheduling_params.wrap(BuiltTransaction::new(
            tx,
            "TokenMintTransaction",
            serde_json::Map::new(),
        ))?;
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        if let Some(schedule) = &raw.schedule_id {
            return format!(
                "Scheduled mint transaction created successfully.\nTransaction ID: {}\nSchedule ID: {schedule}",
                raw.transaction_id
            );
        }
        let serials = if raw.serials.is_empty() {
            "unknown".to_owned()
        } else {
            raw.serials.join(", ")
        };
        format!(
            "Token successfully minted.\nTransaction ID: {}\nToken ID: {}\nSerial(s): {serials}",
            raw.transaction_id,
            raw.token_id.as_deref().unwrap_or("unknown")
        )
    }
}
