//! `submit_topic_message_tool`: a message to an HCS topic.

use super::chunking as wire;
use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{TopicId, TopicMessageSubmitTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct SubmitTopicMessage;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubmitTopicMessageNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub topic_id: TopicId,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    topic_id: String,
    message: String,
    transaction_memo: Option<String>,
}

impl Tool for SubmitTopicMessage {
    type Normalised = SubmitTopicMessageNormalised;

    const METHOD: &'static str = "submit_topic_message_tool";
    const NAME: &'static str = "Submit Topic Message";
    const DESCRIPTION: &'static str = r#"
This tool will submit a message to a topic on the Hedera network.

Parameters:
- topicId (str, required): The ID of the topic to submit the message to
- message (str, required): The message to submit to the topic
- transactionMemo (str, optional): An optional memo to include on the transaction
{scheduling}
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("topicId", "The topic.")
            .typed::<u64>("messageBytes", "The message length in bytes.")
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "topicId": {"type": "string", "description": "The ID of the topic to submit the message to"},
                "message": {"type": "string", "description": "The message to submit to the topic"},
                "transactionMemo": {"type": "string", "description": "An optional memo to include on the submitted transaction (optional)."}
            },
            "required": ["topicId", "message"],
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let scheduling = scheduling::raw_from(raw)?;
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        Ok(SubmitTopicMessageNormalised {
            topic_id: normalise::topic_id("topicId", &raw.topic_id)?,
            message: raw.message,
            transaction_memo: raw.transaction_memo,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        })
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        Facts::default().with_memo(
            n.transaction_memo.as_deref(),
            n.scheduling_params.is_scheduled,
        )
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let len = n.message.len();
        if n.scheduling_params.is_scheduled && len > wire::CHUNK_SIZE {
            // The JS SDK's `schedule()` refusal (the Rust SDK's panics instead).
            return Err(ToolError::message(format!(
                "cannot schedule `TopicMessageSubmitTransaction` with message over {} bytes",
                wire::CHUNK_SIZE
            )));
        }
        if let Some(refusal) = wire::too_many_chunks(len) {
            return Err(ToolError::message(refusal));
        }
        let mut tx = TopicMessageSubmitTransaction::new();
        tx.topic_id(n.topic_id)
            .message(n.message.as_bytes().to_vec());
        if n.scheduling_params.is_scheduled {
            // One chunk whatever the length (checked above): the Rust SDK's schedule asserts
            // that its chunk count, which over-counts an exact multiple, is 1.
            tx.chunk_size(wire::CHUNK_SIZE + 1);
        }
        // Otherwise the SDK's own chunking is never used: it counts one chunk too many for an
        // exact multiple of its chunk size. The strategies lay the chunks out as the JS SDK
        // cuts them (`strategy::wire`): return-bytes in its list, autonomous signed and sent
        // as laid out.
        crate::tools::transaction::set_memo(&mut tx, n.transaction_memo.as_deref());
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert("topicId".into(), n.topic_id.to_string().into());
            details.insert("messageBytes".into(), n.message.len().into());
        }
        let built = BuiltTransaction::new(tx, "TopicMessageSubmitTransaction", details);
        let built = n.scheduling_params.wrap(built)?;
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "Message submitted successfully with transaction id {}",
            raw.transaction_id
        )
    }
}
