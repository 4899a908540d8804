//! `update_topic_tool`: memo, keys, auto-renew settings and expiry of a topic (its admin key
//! must sign). Like the kit, it first checks on the mirror node that the topic has an admin key
//! and that it is the user's, and refuses to set a key the topic was created without.

use crate::model::facts::Facts;
use crate::tools::keys::{default_public_key, resolve_key, KeyInput};
use crate::tools::normalise::{self, serde_as};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, TopicId, TopicUpdateTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use time::OffsetDateTime;

pub struct UpdateTopic;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateTopicNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub topic_id: TopicId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic_memo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_key: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_as::option_string"
    )]
    #[schemars(with = "Option<String>")]
    pub auto_renew_account_id: Option<AccountId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_renew_period: Option<i64>,
    /// ISO 8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiration_time: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    topic_id: String,
    topic_memo: Option<String>,
    admin_key: Option<KeyInput>,
    submit_key: Option<KeyInput>,
    auto_renew_account_id: Option<String>,
    auto_renew_period: Option<f64>,
    expiration_time: Option<String>,
}

fn parse_time(field: &str, text: &str) -> Result<OffsetDateTime, ToolError> {
    crate::tools::normalise::iso_time(field, text)
}

/// The kit's `checkValidityOfUpdates`. (The kit crashes with a TypeError on a topic without an
/// admin key, since the mirror reports it as `null`; hak gives the message it meant.)
fn check_update_rights(n: &UpdateTopicNormalised, ctx: &ToolContext<'_>) -> Result<(), ToolError> {
    let user_key = default_public_key(ctx)?;
    let id = n.topic_id.to_string();
    let topic = ctx.mirror.topic(&id)?;
    let admin = &topic["admin_key"];
    if admin.is_null() {
        return Err(ToolError::message(
            "Topic does not have an admin key. It cannot be updated.",
        ));
    }
    if admin["key"].as_str() != Some(user_key.to_string_raw().as_str()) {
        return Err(ToolError::message(
            "You do not have permission to update this topic. The adminKey does not match your public key.",
        ));
    }
    for (param, field, wanted) in [
        ("adminKey", "admin_key", &n.admin_key),
        ("submitKey", "submit_key", &n.submit_key),
    ] {
        if wanted.is_some() && topic[field].is_null() {
            return Err(ToolError::message(format!(
                "Cannot update {param}: topic was created without a {param}"
            )));
        }
    }
    Ok(())
}

impl Tool for UpdateTopic {
    type Normalised = UpdateTopicNormalised;

    const METHOD: &'static str = "update_topic_tool";
    const NAME: &'static str = "Update Topic";
    const DESCRIPTION: &'static str = r#"
{context}
This tool will update an existing Hedera Consensus Topic. Only the fields provided will be updated.
Key fields (adminKey, submitKey) must contain **Hedera-compatible public keys (as strings) or boolean (true/false)**. You can provide these in one of three ways:
1. **Boolean true** – Set this field to use the user/operator key (e.g. when the user asks for "my key", "my operator key", "my public key", or "use my key"). Injecting of the key will be handled automatically. NEVER set a key field to an account ID string (such as 0.0.x).
2. **Not provided** – The field will not be updated.
3. **String** – Provide a Hedera-compatible public key string (e.g., 302a...) to set a field explicitly.

Parameters:
- topicId (str, optional): The Hedera account ID or EVM address. If not provided, defaults to the {default_account}
- topicMemo (string, optional): New memo for the topic.
- adminKey (boolean|string, optional): New admin key. Pass boolean true to use your key/operator key, or provide a public key string.
- submitKey (boolean|string, optional): New submit key. Pass boolean true to use your key/operator key, or provide a public key string.
- autoRenewAccountId (string, optional): Account to automatically pay for renewal.
- autoRenewPeriod (number, optional): Auto renew period in seconds.
- expirationTime (string|Date, optional): New expiration time for the topic (ISO string or Date).
Examples:
- If the user asks for "my key", "my public key", or "operator key" → set the field to `true`.
- If the user does not mention the key → do not set the field.
- If the user provides a public key string → set the field to the provided public key string.

If the user provides multiple fields in a single request, 
combine them into **one tool call** with all parameters together.
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        let key = |what: &str| json!({"type": ["boolean", "string"], "description": format!("New {what} key. Pass boolean `true` to use the operator/user key, or provide a public key string.")});
        json!({
            "type": "object",
            "properties": {
                "topicId": {"type": "string", "description": "The ID of the topic to update (e.g., 0.0.12345)."},
                "topicMemo": {"type": "string", "description": "Optional new memo for the topic."},
                "adminKey": key("admin"),
                "submitKey": key("submit"),
                "autoRenewAccountId": {"type": "string", "description": "Account to automatically pay for topic renewal (Hedera account ID)."},
                "autoRenewPeriod": {"type": "number", "description": "Auto renew period in seconds."},
                "expirationTime": {"anyOf": [{"type": "string"}, {}], "description": "New expiration time for the topic (ISO string)."}
            },
            "required": ["topicId"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        let wants_user_key =
            |k: &Option<KeyInput>| k.as_ref().is_some_and(KeyInput::means_user_key);
        let user_key = if wants_user_key(&raw.admin_key) || wants_user_key(&raw.submit_key) {
            default_public_key(ctx).ok()
        } else {
            None
        };
        let key = |field: &str, k: &Option<KeyInput>| -> Result<Option<String>, ToolError> {
            Ok(resolve_key(field, k.as_ref(), user_key.as_ref())?.map(|k| k.to_string_der()))
        };
        let expiration_time = match raw.expiration_time.as_deref() {
            Some(t) => Some(crate::tools::normalise::iso_millis(parse_time(
                "expirationTime",
                t,
            )?)),
            None => None,
        };
        Ok(UpdateTopicNormalised {
            topic_id: normalise::topic_id("topicId", &raw.topic_id)?,
            topic_memo: raw.topic_memo.filter(|m| !m.is_empty()),
            admin_key: key("adminKey", &raw.admin_key)?,
            submit_key: key("submitKey", &raw.submit_key)?,
            auto_renew_account_id: raw
                .auto_renew_account_id
                .as_deref()
                .filter(|a| !a.is_empty())
                .map(|a| normalise::account_id("autoRenewAccountId", a))
                .transpose()?,
            auto_renew_period: raw
                .auto_renew_period
                .filter(|p| *p != 0.0)
                .map(|p| p as i64),
            expiration_time,
        })
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        f.changes("topic", &n.topic_id);
        f
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        check_update_rights(n, ctx)?;
        let mut tx = TopicUpdateTransaction::new();
        tx.topic_id(n.topic_id);
        if let Some(memo) = &n.topic_memo {
            tx.topic_memo(memo);
        }
        for (field, der, is_admin) in [
            ("adminKey", &n.admin_key, true),
            ("submitKey", &n.submit_key, false),
        ] {
            if let Some(der) = der {
                let key: hedera::PublicKey = der
                    .parse()
                    .map_err(|_| ToolError::invalid_field(field, "Invalid public key"))?;
                if is_admin {
                    tx.admin_key(key);
                } else {
                    tx.submit_key(key);
                }
            }
        }
        if let Some(account) = n.auto_renew_account_id {
            tx.auto_renew_account_id(account);
        }
        if let Some(period) = n.auto_renew_period {
            tx.auto_renew_period(time::Duration::seconds(period));
        }
        if let Some(at) = &n.expiration_time {
            tx.expiration_time(parse_time("expirationTime", at)?);
        }
        ctx.pin_nodes(&mut tx);
        let built = BuiltTransaction::new(tx, "TopicUpdateTransaction", serde_json::Map::new());
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "Topic successfully updated. Transaction ID: {}",
            raw.transaction_id
        )
    }
}
