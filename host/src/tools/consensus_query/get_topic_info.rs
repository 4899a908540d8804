//! `get_topic_info_query_tool`: a topic's details from the mirror node.

use crate::tools::mirror_text::key_text;
use crate::tools::normalise::{self, serde_as};
use crate::tools::{CoreOutput, Tool, ToolContext, ToolError, ToolType};
use hedera::TopicId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct GetTopicInfo;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetTopicInfoNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub topic_id: TopicId,
}

/// `seconds.nanos` → ISO 8601 of the whole seconds, as the kit renders timestamps.
fn format_timestamp(ts: &Value) -> String {
    let seconds = ts
        .as_str()
        .and_then(|t| t.split('.').next())
        .and_then(|s| s.parse::<i64>().ok());
    match seconds.and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok()) {
        Some(at) => crate::tools::normalise::iso_millis(at),
        None => "N/A".into(),
    }
}

/// `value || "N/A"` for strings, `value ?? "N/A"` for numbers, as the kit writes them.
fn or_na(v: &Value) -> String {
    match v {
        Value::String(s) if !s.is_empty() => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => "N/A".into(),
    }
}

impl Tool for GetTopicInfo {
    type Normalised = GetTopicInfoNormalised;

    const METHOD: &'static str = "get_topic_info_query_tool";
    const NAME: &'static str = "Get Topic Info";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will return the information for a given Hedera topic (HCS).

Parameters:
- topicId (str): The topic ID to query for.
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Query;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("topicId", "The topic queried.")
            .value(
                "topicInfo",
                crate::tools::shapes::mirror_object("/topics/{id}"),
            )
            .query()
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {"topicId": {"type": "string", "description": "The topic ID to query."}},
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
        Ok(GetTopicInfoNormalised {
            topic_id: normalise::topic_id("topicId", topic)?,
        })
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let id = n.topic_id.to_string();
        let mut topic = ctx.mirror.topic(&id)?;
        topic["topic_id"] = id.clone().into();
        let deleted = if topic["deleted"].as_bool().unwrap_or(false) {
            "Yes"
        } else {
            "No"
        };
        let message = format!(
            "Here are the details for topic **{}**:\n\n- **Memo**: {}\n- **Deleted**: {deleted}\n- **Sequence Number**: {}\n\n**Timestamps**:\n- Created: {}\n\n**Entity IDs**:\n- Auto Renew Account: {}\n- Auto Renew Period: {}\n\n**Keys**:\n- Admin Key: {}\n- Submit Key: {}\n",
            or_na(&topic["topic_id"]),
            or_na(&topic["memo"]),
            or_na(&topic["sequence_number"]),
            format_timestamp(&topic["created_timestamp"]),
            or_na(&topic["auto_renew_account"]),
            or_na(&topic["auto_renew_period"]),
            key_text(&topic["admin_key"]),
            key_text(&topic["submit_key"]),
        );
        Ok(CoreOutput::Query(
            json!({"raw": {"topicId": id, "topicInfo": topic}, "humanMessage": message}),
        ))
    }
}
