//! `update_token_tool`: name, symbol, treasury, keys, memo, metadata and auto-renew account of
//! a token (its admin key must sign). Keys take `true` (the user's key) or a public key.
//!
//! Like the kit, it first checks on the mirror node that the token's admin key is the user's
//! and refuses to set a key the token was created without. The kit's schema offers
//! `tokenDesc`, which it never uses; hak accepts and ignores it too.

use crate::model::facts::{Asset, Facts};
use crate::tools::keys::{default_public_key, resolve_key, KeyInput};
use crate::tools::normalise::{self, serde_as};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, PublicKey, TokenId, TokenUpdateTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

pub struct UpdateToken;

/// The eight token keys, by their param names, in the order the kit checks them.
const KEY_FIELDS: [&str; 8] = [
    "adminKey",
    "kycKey",
    "freezeKey",
    "wipeKey",
    "supplyKey",
    "feeScheduleKey",
    "pauseKey",
    "metadataKey",
];

/// The same keys in the order the kit resolves them (its first unreadable key is the one it
/// reports).
const RESOLVE_ORDER: [&str; 8] = [
    "adminKey",
    "supplyKey",
    "wipeKey",
    "freezeKey",
    "kycKey",
    "feeScheduleKey",
    "pauseKey",
    "metadataKey",
];

/// The mirror's name for a key param (`supplyKey` → `supply_key`).
fn mirror_field(param: &str) -> String {
    let mut out = String::with_capacity(param.len() + 2);
    for c in param.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The kit's `checkValidityOfUpdates`: the token's admin key must be the user's, and a key the
/// token was created without cannot be added.
fn check_update_rights(n: &UpdateTokenNormalised, ctx: &ToolContext<'_>) -> Result<(), ToolError> {
    let user_key = default_public_key(ctx)?;
    let id = n.token_id.to_string();
    let token = ctx.mirror.token(id)?;
    if token.admin_key() != Some(user_key.to_string_raw().as_str()) {
        return Err(ToolError::message(
            "You do not have permission to update this token. The adminKey does not match your public key.",
        ));
    }
    for param in KEY_FIELDS {
        if n.keys.contains_key(param) && token.0[mirror_field(param)].is_null() {
            return Err(ToolError::message(format!(
                "Cannot update {param}: token was created without a {param}"
            )));
        }
    }
    Ok(())
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateTokenNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub token_id: TokenId,
    /// New keys (DER hex) by param name (`adminKey`, `supplyKey`, …).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub keys: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_symbol: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_as::option_string"
    )]
    #[schemars(with = "Option<String>")]
    pub treasury_account_id: Option<AccountId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_memo: Option<String>,
    /// UTF-8 text, stored as its bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_as::option_string"
    )]
    #[schemars(with = "Option<String>")]
    pub auto_renew_account_id: Option<AccountId>,
}

fn optional_account(raw: &Value, field: &str) -> Result<Option<AccountId>, ToolError> {
    raw.get(field)
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
        .map(|a| normalise::account_id(field, a))
        .transpose()
}

fn non_empty(raw: &Value, field: &str) -> Option<String> {
    raw.get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn parse_key(field: &str, der: &Value) -> Result<PublicKey, ToolError> {
    der.as_str()
        .and_then(|d| d.parse().ok())
        .ok_or_else(|| ToolError::invalid_field(field, "Invalid public key"))
}

impl Tool for UpdateToken {
    type Normalised = UpdateTokenNormalised;

    const METHOD: &'static str = "update_token_tool";
    const NAME: &'static str = "Update Token";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will update an existing Hedera HTS token. Only the fields provided will be updated.

Key fields (adminKey, kycKey, freezeKey, wipeKey, supplyKey, feeScheduleKey, pauseKey, metadataKey) must contain **Hedera-compatible public keys (as strings) or boolean (true/false)**. You can provide these in one of three ways:

1. **Boolean true** – Set this field to use the user/operator key (e.g. when the user asks for "my key", "my operator key", "my public key", or "use my key"). Injecting of the key will be handled automatically. NEVER set a key field to an account ID string (such as 0.0.x).
2. **Not provided** – The field will not be updated.
3. **String** – Provide a Hedera-compatible public key string (e.g., 302a...) to set a field explicitly.

Parameters:
- tokenId (str, optional): The Hedera account ID or EVM address. If not provided, defaults to the {default_account}
- tokenName (string, optional): New name for the token. Up to 100 characters.
- tokenSymbol (string, optional): New symbol for the token. Up to 100 characters.
- treasuryAccountId (string, optional): New treasury account for the token (Hedera account ID).
- adminKey (boolean|string, optional): New admin key. Pass boolean true to use your key/operator key, or provide a public key string.
- kycKey (boolean|string, optional): New KYC key. Pass boolean true to use your key/operator key, or provide a public key string.
- freezeKey (boolean|string, optional): New freeze key. Pass boolean true to use your key/operator key, or provide a public key string.
- wipeKey (boolean|string, optional): New wipe key. Pass boolean true to use your key/operator key, or provide a public key string.
- supplyKey (boolean|string, optional): New supply key. Pass boolean true to use your key/operator key, or provide a public key string.
- feeScheduleKey (boolean|string, optional): New fee schedule key. Pass boolean true to use your key/operator key, or provide a public key string.
- pauseKey (boolean|string, optional): New pause key. Pass boolean true to use your key/operator key, or provide a public key string.
- metadataKey (boolean|string, optional): New metadata key. Pass boolean true to use your key/operator key, or provide a public key string.
- metadata (string, optional): New metadata for the token, in bytes (hex or base64).
- tokenMemo (string, optional): Short public memo for the token, up to 100 characters.
- autoRenewAccountId (string, optional): Account to automatically pay for renewal.

Examples:
- If the user asks for "my key", "my public key", "my operator key", or any phrase referring to their own key → set the field to `true`. Never use the account ID (e.g. "0.0.1002") for a key field.
- If the user does not mention the key → do not set the field.
- If the user provides a Hedera-compatible public key string → set the field to that string.

IMPORTANT: Key fields NEVER accept account IDs. An account ID like "0.0.1002" is not a valid key value. If the user says "my key" without providing a public key string, always use `true`.

If the user provides multiple fields in a single request, 
combine them into **one tool call** with all parameters together.

{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("tokenId", "The token.")
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        let key = |what: &str| json!({"type": ["boolean", "string"], "description": format!("New {what}. Pass true to use your own public key, or a public key string.")});
        json!({
            "type": "object",
            "properties": {
                "tokenId": {"type": "string", "description": "The ID of the token to update (e.g., 0.0.12345)."},
                "tokenDesc": {"type": "string", "description": "Optional description of the token update operation."},
                "tokenName": {"type": "string", "maxLength": 100, "description": "New name for the token. Up to 100 characters."},
                "tokenSymbol": {"type": "string", "maxLength": 100, "description": "New symbol for the token. Up to 100 characters."},
                "treasuryAccountId": {"type": "string", "description": "New treasury account for the token (Hedera account ID)."},
                "adminKey": key("admin key"),
                "kycKey": key("KYC key"),
                "freezeKey": key("freeze key"),
                "wipeKey": key("wipe key"),
                "supplyKey": key("supply key"),
                "feeScheduleKey": key("fee schedule key"),
                "pauseKey": key("pause key"),
                "metadataKey": key("metadata key"),
                "metadata": {"type": "string", "description": "New metadata for the token, in bytes (as base64 or hex)."},
                "tokenMemo": {"type": "string", "maxLength": 100, "description": "Short public message attached to the token. Up to 100 characters."},
                "autoRenewAccountId": {"type": "string", "description": "Account to automatically pay for token renewal (Hedera account ID)."}
            },
            "required": ["tokenId"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let token_id = normalise::token_id("tokenId", raw["tokenId"].as_str().unwrap_or_default())?;
        let inputs: Vec<(&str, KeyInput)> = RESOLVE_ORDER
            .iter()
            .filter_map(|f| {
                let input = KeyInput::deserialize(raw.get(*f)?).ok()?;
                Some((*f, input))
            })
            .collect();
        let user_key = if inputs.iter().any(|(_, k)| k.means_user_key()) {
            Some(default_public_key(ctx)?)
        } else {
            None
        };
        let mut keys = Map::new();
        for (field, input) in &inputs {
            if let Some(key) = resolve_key(field, Some(input), user_key.as_ref())? {
                keys.insert((*field).to_owned(), key.to_string_der().into());
            }
        }
        Ok(UpdateTokenNormalised {
            token_id,
            keys,
            token_name: non_empty(raw, "tokenName"),
            token_symbol: non_empty(raw, "tokenSymbol"),
            treasury_account_id: optional_account(raw, "treasuryAccountId")?,
            token_memo: non_empty(raw, "tokenMemo"),
            metadata: non_empty(raw, "metadata"),
            auto_renew_account_id: optional_account(raw, "autoRenewAccountId")?,
        })
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        for (field, der) in &n.keys {
            if !KEY_FIELDS.contains(&field.as_str()) {
                return Err(ToolError::message(format!("keys: unknown key {field:?}")));
            }
            parse_key(field, der)?;
        }
        Ok(())
    }

    /// A new treasury receives the old treasury's whole balance of the token (the network
    /// moves it with the update): a movement of all of it, so recipient and value policies
    /// judge the new treasury as they judge any recipient.
    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        f.token(&n.token_id);
        f.changes("token", &n.token_id);
        if let Some(treasury) = n.treasury_account_id {
            f.all_of(Asset::Token(n.token_id.to_string()), &treasury);
        }
        f
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        check_update_rights(n, ctx)?;
        let mut tx = TokenUpdateTransaction::new();
        tx.token_id(n.token_id);
        for (field, der) in &n.keys {
            let key = parse_key(field, der)?;
            match field.as_str() {
                "adminKey" => tx.admin_key(key),
                "supplyKey" => tx.supply_key(key),
                "wipeKey" => tx.wipe_key(key),
                "freezeKey" => tx.freeze_key(key),
                "kycKey" => tx.kyc_key(key),
                "feeScheduleKey" => tx.fee_schedule_key(key),
                "pauseKey" => tx.pause_key(key),
                _ => tx.metadata_key(key),
            };
        }
        if let Some(name) = &n.token_name {
            tx.token_name(name);
        }
        if let Some(symbol) = &n.token_symbol {
            tx.token_symbol(symbol);
        }
        if let Some(treasury) = n.treasury_account_id {
            tx.treasury_account_id(treasury);
        }
        if let Some(memo) = &n.token_memo {
            tx.token_memo(Some(memo.clone()));
        }
        if let Some(metadata) = &n.metadata {
            tx.metadata(metadata.as_bytes().to_vec());
        }
        if let Some(account) = n.auto_renew_account_id {
            tx.auto_renew_account_id(account);
        }
        ctx.pin_nodes(&mut tx);
        let mut details = Map::new();
        if ctx.wants_summary {
            details.insert("tokenId".into(), n.token_id.to_string().into());
        }
        let built = BuiltTransaction::new(tx, "TokenUpdateTransaction", details);
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "Token successfully updated. Transaction ID: {}",
            raw.transaction_id
        )
    }
}
