//! `get_exchange_rate_tool`: the network's HBAR/USD exchange rate from the mirror node.

use crate::tools::normalise::js_number;
use crate::tools::{CoreOutput, Tool, ToolContext, ToolError, ToolType};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct GetExchangeRate;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetExchangeRateNormalised {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

fn usd_per_hbar(rate: &Value) -> f64 {
    let cents = rate["cent_equivalent"].as_f64().unwrap_or(0.0);
    let hbars = rate["hbar_equivalent"].as_f64().unwrap_or(1.0);
    cents / 100.0 / hbars
}

fn expiry(rate: &Value) -> String {
    let seconds = rate["expiration_time"].as_i64().unwrap_or(0);
    time::OffsetDateTime::from_unix_timestamp(seconds).map_or_else(
        |_| "Invalid Date".into(),
        crate::tools::normalise::iso_millis,
    )
}

impl Tool for GetExchangeRate {
    type Normalised = GetExchangeRateNormalised;

    const METHOD: &'static str = "get_exchange_rate_tool";
    const NAME: &'static str = "Get Exchange Rate";
    const DESCRIPTION: &'static str = r#"
{context}

This tool returns the Hedera network HBAR exchange rate from the Mirror Node.

Parameters:
- timestamp (str, optional): Historical timestamp to query. Pass seconds or nanos since epoch (e.g., 1726000000.123456789). If omitted, returns the latest rate.
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Query;

    fn core_result_schema() -> Value {
        crate::tools::shapes::query_result(crate::tools::shapes::mirror_object(
            "/network/exchangerate (current_rate, next_rate, timestamp)",
        ))
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {"timestamp": {"type": "string", "description": "Historical timestamp to query (seconds or nanos since epoch)"}},
            "additionalProperties": false
        })
    }

    fn normalise(
        &self,
        raw: &Value,
        _ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        Ok(GetExchangeRateNormalised {
            timestamp: raw
                .get("timestamp")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let timestamp = n.timestamp.as_deref().filter(|t| !t.is_empty());
        let rates = ctx.mirror.exchange_rate(timestamp)?;
        let (current, next) = (&rates["current_rate"], &rates["next_rate"]);
        let message = format!(
            "\n  Details for timestamp: {}\n  \n  Current exchange rate: {}\n  Expires at {})\n  \n  Next exchange rate: {}\n  Expires at {})",
            rates["timestamp"].as_str().unwrap_or("undefined"),
            js_number(usd_per_hbar(current)),
            expiry(current),
            js_number(usd_per_hbar(next)),
            expiry(next),
        );
        Ok(CoreOutput::Query(
            json!({"raw": rates, "humanMessage": message}),
        ))
    }
}
