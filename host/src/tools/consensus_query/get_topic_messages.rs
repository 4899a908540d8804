//! `get_topic_messages_query_tool`: a topic's messages from the mirror node, newest first,
//! following `links.next` (at most 100 pages), decoded from base64.

use crate::mirror::TopicMessagesQuery;
use crate::tools::normalise::{self, serde_as};
use crate::tools::{CoreOutput, Tool, ToolContext, ToolError, ToolType};
use base64::Engine;
use hedera::TopicId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct GetTopicMessages;

/// Most mirror pages followed (the kit's limit).
const MAX_PAGES: usize = 100;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetTopicMessagesNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub topic_id: TopicId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
}

/// An ISO 8601 datetime (the kit's `z.string().datetime()`), as `seconds.000000000`.
fn mirror_seconds(field: &str, iso: &str) -> Result<String, ToolError> {
    let at = crate::tools::normalise::zod_datetime(iso)
        .ok_or_else(|| ToolError::invalid_field(field, "Invalid datetime"))?;
    Ok(format!("{}.000000000", at.unix_timestamp()))
}

fn decode(message: &Value) -> String {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(message.as_str().unwrap_or_default())
        .unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl Tool for GetTopicMessages {
    type Normalised = GetTopicMessagesNormalised;

    const METHOD: &'static str = "get_topic_messages_query_tool";
    const NAME: &'static str = "Get Topic Messages";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will return the messages for a given Hedera topic.

Parameters:
- topicId (str, required): The topic ID to query
- startTime (datetime, optional): The start datetime to query. If set, the messages will be returned after this datetime
- endTime (datetime, optional): The end datetime to query. If set, the messages will be returned before this datetime
- limit (int, optional): The limit of messages to query. If set, the number of messages to return
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Query;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("topicId", "The topic queried.")
            .value("messages", serde_json::json!({"type": "array", "description": "The mirror's /topics/{id}/messages entries, oldest first.", "items": {"type": "object"}}))
            .query()
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "topicId": {"type": "string", "description": "The topic ID to query."},
                "startTime": {"type": "string", "format": "date-time", "description": "The start time to query. If set, the messages will be returned after this timestamp."},
                "endTime": {"type": "string", "format": "date-time", "description": "The end time to query. If set, the messages will be returned before this timestamp."},
                "limit": {"type": "number", "description": "The limit of messages to query. If set, the number of messages to return."}
            },
            "required": ["topicId"],
            "additionalProperties": false
        })
    }

    fn normalise(
        &self,
        raw: &Value,
        _ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        let text = |k: &str| raw.get(k).and_then(Value::as_str).map(str::to_owned);
        let normalised = GetTopicMessagesNormalised {
            topic_id: normalise::topic_id("topicId", raw["topicId"].as_str().unwrap_or_default())?,
            start_time: text("startTime"),
            end_time: text("endTime"),
            limit: raw.get("limit").and_then(Value::as_f64),
        };
        self.check_normalised(&normalised)?;
        Ok(normalised)
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        for (field, value) in [("startTime", &n.start_time), ("endTime", &n.end_time)] {
            if let Some(v) = value {
                mirror_seconds(field, v)?;
            }
        }
        Ok(())
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let id = n.topic_id.to_string();
        let query = TopicMessagesQuery {
            from: n
                .start_time
                .as_ref()
                .map(|t| mirror_seconds("startTime", t))
                .transpose()?,
            to: n
                .end_time
                .as_ref()
                .map(|t| mirror_seconds("endTime", t))
                .transpose()?,
            max_pages: MAX_PAGES,
        };
        // `params.limit || 100`: zero, absent or NaN mean 100.
        let limit = n
            .limit
            .filter(|l| *l != 0.0 && !l.is_nan())
            .map_or(100, |l| l.max(0.0) as usize);
        let mut messages = ctx.mirror.topic_messages(&id, &query)?;
        messages.truncate(limit);
        let human = if messages.is_empty() {
            format!("No messages found for topic {id}.")
        } else {
            let lines: Vec<String> = messages
                .iter()
                .map(|m| {
                    format!(
                        "{} - posted at: {}\n",
                        decode(&m["message"]),
                        m["consensus_timestamp"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            // A JS array in a template string joins its items with commas.
            format!(
                "Messages for topic {id}:\n  --- Messages ---\n  {}\n  ",
                lines.join(",")
            )
        };
        for m in &mut messages {
            let text = decode(&m["message"]);
            m["message"] = text.into();
        }
        Ok(CoreOutput::Query(
            json!({"raw": {"topicId": id, "messages": messages}, "humanMessage": human}),
        ))
    }
}
