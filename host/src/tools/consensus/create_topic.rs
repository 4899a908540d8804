//! `create_topic_tool`: a new HCS topic; `adminKey` / `submitKey` `true` mean the user's key.

use crate::tools::keys::{default_public_key, resolve_key, KeyInput};
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, TopicCreateTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct CreateTopic;

/// Normalised params: keys as DER hex, the auto-renew account defaulted to the user's.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateTopicNormalised {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic_memo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub auto_renew_account_id: AccountId,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    submit_key: Option<KeyInput>,
    admin_key: Option<KeyInput>,
    topic_memo: Option<String>,
    transaction_memo: Option<String>,
}

fn parse_key(field: &str, der: &Option<String>) -> Result<Option<hedera::PublicKey>, ToolError> {
    der.as_deref()
        .map(|k| {
            k.parse()
                .map_err(|_| ToolError::invalid_field(field, format!("Invalid public key: {k}")))
        })
        .transpose()
}

impl Tool for CreateTopic {
    type Normalised = CreateTopicNormalised;

    const METHOD: &'static str = "create_topic_tool";
    const NAME: &'static str = "Create Topic";
    const DESCRIPTION: &'static str = r#"
This tool will create a new topic (consensus topic) on the Hedera network (HCS). Use this for any request to: create a topic, open a consensus topic, or start a new communication channel.
All parameters are optional!

Parameters:
- topicMemo (str, optional): A memo stored permanently on the topic itself (not the transaction). It is not required to set a topic memo!
- transactionMemo (str, optional): A memo attached to the transaction (separate from topicMemo). Use this when the user says "transaction memo" or "set the memo on the transaction"
- adminKey (bool or str, optional): Admin key for the topic. ONLY set this if the user wants to be able to UPDATE or DELETE the topic later. Pass boolean value 'true' to use operator key, or string value public key.
- submitKey (bool or str, optional): Submit key for the topic. ONLY set this if the user explicitly says they want to RESTRICT who can submit messages (e.g. "restrict submit access", "require a key to submit"). If the user says "do NOT restrict", "open access", "anyone can submit", or simply omits it — do NOT set this parameter at all, leave it undefined. Pass boolean value 'true' to use operator key, or string value public key.
{scheduling}
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("topicMemo", "The topic memo (\"\" for none).")
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        let key = |what: &str| json!({"type": ["boolean", "string"], "description": format!("The {what} key for the topic. Pass true to use the operator/user key, or a public key string. (optional)")});
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "submitKey": key("submit"),
                "adminKey": key("admin"),
                "topicMemo": {"type": "string", "description": "Memo for the topic (optional)"},
                "transactionMemo": {"type": "string", "description": "An optional memo to include on the submitted transaction (optional)."}
            },
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let scheduling = scheduling::raw_from(raw)?;
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        let auto_renew_account_id = normalise::default_account(ctx)?;
        let wants_key = |k: &Option<KeyInput>| !matches!(k, None | Some(KeyInput::Flag(false)));
        let user_key = if wants_key(&raw.admin_key) || wants_key(&raw.submit_key) {
            default_public_key(ctx).ok()
        } else {
            None
        };
        let admin_key = resolve_key("adminKey", raw.admin_key.as_ref(), user_key.as_ref())?;
        let submit_key = resolve_key("submitKey", raw.submit_key.as_ref(), user_key.as_ref())?;
        Ok(CreateTopicNormalised {
            admin_key: admin_key.map(|k| k.to_string_der()),
            submit_key: submit_key.map(|k| k.to_string_der()),
            topic_memo: raw.topic_memo,
            transaction_memo: raw.transaction_memo,
            auto_renew_account_id,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        })
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = TopicCreateTransaction::new();
        tx.auto_renew_account_id(n.auto_renew_account_id);
        if let Some(memo) = &n.topic_memo {
            tx.topic_memo(memo);
        }
        if let Some(key) = parse_key("adminKey", &n.admin_key)? {
            tx.admin_key(key);
        }
        if let Some(key) = parse_key("submitKey", &n.submit_key)? {
            tx.submit_key(key);
        }
        crate::tools::transaction::set_memo(&mut tx, n.transaction_memo.as_deref());
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert(
                "topicMemo".into(),
                n.topic_memo.clone().unwrap_or_default().into(),
            );
        }
        let built = n.scheduling_params.wrap(BuiltTransaction::new(
            tx,
            "TopicCreateTransaction",
            details,
        ))?;
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "Topic created successfully with topic id {} and transaction id {}",
            raw.topic_id.as_deref().unwrap_or("undefined"),
            raw.transaction_id
        )
    }
}
