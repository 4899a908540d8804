//! `associate_token_tool`: associate one or more HTS tokens with an account (the user's by
//! default).

use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, TokenAssociateTransaction, TokenId};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct AssociateToken;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssociateTokenNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub account_id: AccountId,
    pub token_ids: Vec<String>,
}

impl AssociateTokenNormalised {
    fn parsed_token_ids(&self) -> Result<Vec<TokenId>, ToolError> {
        normalise::token_ids("tokenIds", &self.token_ids)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    account_id: Option<String>,
    token_ids: Vec<String>,
}

impl Tool for AssociateToken {
    type Normalised = AssociateTokenNormalised;

    const METHOD: &'static str = "associate_token_tool";
    const NAME: &'static str = "Associate Token(s)";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will associate one or more HTS tokens with a Hedera account.

Parameters:
accountId (str, optional): The Hedera account ID or EVM address. If not provided, defaults to the {default_account}
- tokenIds (string[], required): Array of token IDs to associate
{usage}

Example: "Associate tokens 0.0.123 and 0.0.456 to account 0.0.789".
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "accountId": {"type": "string", "description": "Account ID to associate tokens with (e.g., 0.0.xxxxx). If not provided, operator account ID will be used"},
                "tokenIds": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Array of token IDs to associate"}
            },
            "required": ["tokenIds"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        let account_id = normalise::resolve_account("accountId", raw.account_id.as_deref(), ctx)?;
        let token_ids = normalise::token_ids("tokenIds", &raw.token_ids)?;
        Ok(AssociateTokenNormalised {
            account_id,
            token_ids: token_ids.iter().map(ToString::to_string).collect(),
        })
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        n.parsed_token_ids().map(drop)
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        n.token_ids.iter().for_each(|t| f.token(t));
        f
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = TokenAssociateTransaction::new();
        tx.account_id(n.account_id).token_ids(n.parsed_token_ids()?);
        ctx.pin_nodes(&mut tx);
        let built = BuiltTransaction::new(tx, "TokenAssociateTransaction", serde_json::Map::new());
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "Tokens successfully associated with transaction id {}",
            raw.transaction_id
        )
    }
}
