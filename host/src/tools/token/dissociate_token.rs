//! `dissociate_token_tool`: dissociate one or more HTS tokens from an account (the user's by
//! default). The kit drops `transactionMemo` on the way to the transaction; so does hak.

use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, TokenDissociateTransaction, TokenId};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct DissociateToken;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DissociateTokenNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub account_id: AccountId,
    pub token_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
}

impl DissociateTokenNormalised {
    fn parsed_token_ids(&self) -> Result<Vec<TokenId>, ToolError> {
        normalise::token_ids("tokenIds", &self.token_ids)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    account_id: Option<String>,
    token_ids: Vec<String>,
    transaction_memo: Option<String>,
}

impl Tool for DissociateToken {
    type Normalised = DissociateTokenNormalised;

    const METHOD: &'static str = "dissociate_token_tool";
    const NAME: &'static str = "Dissociate Token";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will dissociate one or more HTS tokens from a Hedera account.

Parameters:
- tokenIds (array of strings, required): A list of Hedera token IDs to dissociate from the account. Example: ["0.0.1234", "0.0.5678"]
- accountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}, account from which to dissociate the token(s)
- transactionMemo (str, optional): Optional memo for the transaction

Examples:
- Dissociate a single token: { "tokenIds": ["0.0.1234"] }
- Dissociate multiple tokens from a specific account: { "tokenIds": ["0.0.1234", "0.0.5678"], "accountId": "0.0.4321" }

{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "tokenIds": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "The list of Hedera token IDs (strings) to dissociate. Must provide at least one."},
                "accountId": {"type": "string", "description": "The account ID from which to dissociate the tokens. Defaults to operator account."},
                "transactionMemo": {"type": "string", "description": "Optional memo for the transaction."}
            },
            "required": ["tokenIds"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        let account_id = match raw.account_id.as_deref() {
            Some(id) => normalise::account_id("accountId", id)?,
            None => normalise::default_account(ctx)?,
        };
        let token_ids = normalise::token_ids("tokenIds", &raw.token_ids)?;
        Ok(DissociateTokenNormalised {
            account_id,
            token_ids: token_ids.iter().map(ToString::to_string).collect(),
            transaction_memo: raw.transaction_memo,
        })
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        n.parsed_token_ids().map(drop)
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        n.token_ids.iter().for_each(|t| f.token(t));
        f.with_memo(n.transaction_memo.as_deref(), false)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = TokenDissociateTransaction::new();
        tx.account_id(n.account_id).token_ids(n.parsed_token_ids()?);
        // `transactionMemo` is accepted and shown to plugins but, as in the kit (whose builder
        // passes it to a constructor that ignores it), not put on the transaction: the bodies
        // stay equal to the kit's (tests/all/conformance.rs).
        ctx.pin_nodes(&mut tx);
        let built = BuiltTransaction::new(tx, "TokenDissociateTransaction", serde_json::Map::new());
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "Token(s) successfully dissociated with transaction id {}",
            raw.transaction_id
        )
    }
}
