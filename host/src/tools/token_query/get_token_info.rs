//! `get_token_info_query_tool`: a token's details from the mirror node.
//!
//! The kit's `tokenId` is optional and goes to the mirror as the text `undefined` when left out
//! (the mirror answers 400); hak does the same, but a given ID must be a token ID, so nothing
//! else reaches the URL.

use crate::model::facts::Facts;
use crate::tools::mirror_text::{key_text, locale_number};
use crate::tools::normalise::{self, serde_as};
use crate::tools::{CoreOutput, Tool, ToolContext, ToolError, ToolType};
use hedera::TokenId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct GetTokenInfo;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetTokenInfoNormalised {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_as::option_string"
    )]
    #[schemars(with = "Option<String>")]
    pub token_id: Option<TokenId>,
}

/// The kit's `formatSupply`: base units shown in display units, en-US formatted.
fn supply_text(supply: &Value, decimals: &Value) -> String {
    let text = match supply {
        // JS truthiness: "0" is shown, 0 and "" are not.
        Value::String(s) if !s.is_empty() => s.clone(),
        Value::Number(n) if n.as_f64() != Some(0.0) => n.to_string(),
        _ => return "N/A".into(),
    };
    let decimals = match decimals {
        Value::String(d) if !d.is_empty() => d.parse::<f64>().unwrap_or(f64::NAN),
        Value::Number(d) => d.as_f64().unwrap_or(0.0),
        _ => 0.0,
    };
    match text.trim().parse::<f64>() {
        Ok(amount) => locale_number(amount / 10f64.powf(decimals)),
        Err(_) => text,
    }
}

fn text_or(v: &Value, fallback: &str) -> String {
    match v {
        Value::String(s) if !s.is_empty() => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Null => fallback.into(),
        Value::String(_) => fallback.into(),
        other => other.to_string(),
    }
}

fn human_message(info: &Value) -> String {
    let supply_type = if info["supply_type"] == "INFINITE" {
        "Infinite"
    } else {
        "Finite"
    };
    let truthy = |v: &Value| v.as_bool().unwrap_or(false);
    let memo = match info["memo"].as_str() {
        Some(m) if !m.is_empty() => format!("**Memo**: {m}"),
        _ => String::new(),
    };
    format!(
        "Here are the details for token **{}**:\n\n- **Token Name**: {}\n- **Token Symbol**: {}\n- **Token Type**: {}\n- **Decimals**: {}\n- **Max Supply**: {}\n- **Current Supply**: {}\n- **Supply Type**: {supply_type}\n- **Treasury Account ID**: {}\n- **Status (Deleted/Active)**: {}\n- **Status (Frozen/Active)**: {}\n\n**Keys**:\n- Admin Key: {}\n- Supply Key: {}\n- Wipe Key: {}\n- KYC Key: {}\n- Freeze Key: {}\n- Fee Schedule Key: {}\n- Pause Key: {}\n- Metadata Key: {}\n\n{memo}\n",
        text_or(&info["token_id"], "undefined"),
        text_or(&info["name"], "undefined"),
        text_or(&info["symbol"], "undefined"),
        text_or(&info["type"], "N/A"),
        text_or(&info["decimals"], "undefined"),
        supply_text(&info["max_supply"], &info["decimals"]),
        supply_text(&info["total_supply"], &info["decimals"]),
        text_or(&info["treasury_account_id"], "N/A"),
        if truthy(&info["deleted"]) { "Deleted" } else { "Active" },
        if truthy(&info["freeze_default"]) { "Frozen" } else { "Active" },
        key_text(&info["admin_key"]),
        key_text(&info["supply_key"]),
        key_text(&info["wipe_key"]),
        key_text(&info["kyc_key"]),
        key_text(&info["freeze_key"]),
        key_text(&info["fee_schedule_key"]),
        key_text(&info["pause_key"]),
        key_text(&info["metadata_key"]),
    )
}

impl Tool for GetTokenInfo {
    type Normalised = GetTokenInfoNormalised;

    const METHOD: &'static str = "get_token_info_query_tool";
    const NAME: &'static str = "Get Token Info";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will return the information for a given Hedera token. Make sure to return token symbol.

Parameters:
- tokenId (str): The token ID to query for.
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Query;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .value("tokenId", serde_json::json!({"type": ["string", "null"], "description": "The token queried."}))
            .value("tokenInfo", crate::tools::shapes::mirror_object("/tokens/{id}"))
            .query()
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {"tokenId": {"type": "string", "description": "The token ID to query."}},
            "additionalProperties": false
        })
    }

    fn normalise(
        &self,
        raw: &Value,
        _ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        let token_id = raw
            .get("tokenId")
            .and_then(Value::as_str)
            .map(|t| normalise::token_id("tokenId", t))
            .transpose()?;
        Ok(GetTokenInfoNormalised { token_id })
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        if let Some(token) = n.token_id {
            f.token(&token);
        }
        f
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let id = n
            .token_id
            .map_or_else(|| "undefined".to_owned(), |t| t.to_string());
        let mut info = ctx.mirror.token(&id)?.0;
        info["token_id"] = id.clone().into();
        let message = human_message(&info);
        let token_id = n.token_id.map(|t| t.to_string());
        Ok(CoreOutput::Query(json!({
            "raw": {"tokenId": token_id, "tokenInfo": info},
            "humanMessage": message,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supplies_show_in_display_units() {
        assert_eq!(supply_text(&json!("100000000"), &json!("2")), "1,000,000");
        assert_eq!(supply_text(&json!("250"), &json!("2")), "2.5");
        assert_eq!(supply_text(&json!("0"), &json!("2")), "0");
        assert_eq!(supply_text(&json!(0), &json!("2")), "N/A");
        assert_eq!(supply_text(&Value::Null, &json!("0")), "N/A");
    }
}
