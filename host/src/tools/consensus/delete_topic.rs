//! `delete_topic_tool`: deletes a topic (its admin key must sign).

use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{TopicDeleteTransaction, TopicId};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct DeleteTopic;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteTopicNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub topic_id: TopicId,
}

impl Tool for DeleteTopic {
    type Normalised = DeleteTopicNormalised;

    const METHOD: &'static str = "delete_topic_tool";
    const NAME: &'static str = "Delete Topic";
    const DESCRIPTION: &'static str = r#"
This tool will delete a given Hedera network topic.

Parameters:
- topicId (str, required): id of topic to delete
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("topicId", "The topic.")
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {"topicId": {"type": "string", "description": "The ID of the topic to delete."}},
            "required": ["topicId"],
            "additionalProperties": false
        })
    }

    fn normalise(
        &self,
        raw: &Value,
        _ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        let topic = raw["topicId"].as_str().unwrap_or_default();
        Ok(DeleteTopicNormalised {
            topic_id: normalise::topic_id("topicId", topic)?,
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
        let mut tx = TopicDeleteTransaction::new();
        tx.topic_id(n.topic_id);
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert("topicId".into(), n.topic_id.to_string().into());
        }
        let built = BuiltTransaction::new(tx, "TopicDeleteTransaction", details);
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        format!(
            "Topic with id {} deleted successfully. Transaction id {}",
            raw.topic_id.as_deref().unwrap_or("undefined"),
            raw.transaction_id
        )
    }
}
