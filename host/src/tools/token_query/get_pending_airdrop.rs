//! `get_pending_airdrop_tool`: airdrops waiting for an account (default: the user) to claim,
//! from the mirror node, each enriched with its token's symbol and decimals.

use crate::tools::normalise::{self, serde_as};
use crate::tools::{CoreOutput, Tool, ToolContext, ToolError, ToolType};
use hedera::AccountId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct GetPendingAirdrop;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetPendingAirdropNormalised {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_as::option_string"
    )]
    #[schemars(with = "Option<String>")]
    pub account_id: Option<AccountId>,
}

/// BigNumber's `toFixed(decimals)` of `amount / 10^decimals` for an integer amount: the exact
/// decimal with `decimals` places.
fn fixed_units(amount: &Value, decimals: u32) -> String {
    let digits = match amount {
        Value::Number(n) => n.to_string(),
        Value::String(s) if !s.is_empty() => s.clone(),
        _ => "0".into(),
    };
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(rest) => ("-", rest.to_owned()),
        None => ("", digits),
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return digits;
    }
    let d = decimals as usize;
    if d == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = d + 1);
    let (whole, frac) = padded.split_at(padded.len() - d);
    format!("{sign}{whole}.{frac}")
}

/// The kit's `enrichSingleAirdrop`: `decimals` and `symbol` from the token's mirror entry
/// (`UNKNOWN` and 0 when the lookup fails).
fn enrich(airdrop: &mut Value, ctx: &ToolContext<'_>) {
    let (decimals, symbol) = match airdrop["token_id"].as_str().filter(|t| !t.is_empty()) {
        None => (0, Value::from("N/A")),
        Some(token) => match ctx.mirror.token(token) {
            Ok(info) => {
                let decimals = info.decimals().unwrap_or(0);
                let symbol = match info.symbol() {
                    Value::Null => Value::from("N/A"),
                    other => other.clone(),
                };
                (decimals, symbol)
            }
            Err(_) => (0, Value::from("UNKNOWN")),
        },
    };
    if let Some(object) = airdrop.as_object_mut() {
        object.insert("decimals".into(), decimals.into());
        object.insert("symbol".into(), symbol);
    }
}

fn human_message(account: &str, airdrops: &[Value]) -> String {
    if airdrops.is_empty() {
        return format!("No pending airdrops found for account {account}");
    }
    let lines: Vec<String> = airdrops
        .iter()
        .map(|a| {
            let symbol = match &a["symbol"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let serial = &a["serial_number"];
            let has_serial = match serial {
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                _ => false,
            };
            if has_serial {
                format!("- **{symbol}** #{serial}")
            } else {
                let decimals = a["decimals"].as_u64().unwrap_or(0) as u32;
                format!("- {} **{symbol}**", fixed_units(&a["amount"], decimals))
            }
        })
        .collect();
    format!(
        "Here are the pending airdrops for account **{account}** (total: {}):\n\n{}",
        airdrops.len(),
        lines.join("\n")
    )
}

impl Tool for GetPendingAirdrop {
    type Normalised = GetPendingAirdropNormalised;

    const METHOD: &'static str = "get_pending_airdrop_tool";
    const NAME: &'static str = "Get Pending Airdrops";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will return pending airdrops for a given Hedera account.

Parameters:
- accountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Query;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("accountId", "The receiver queried.")
            .value("pendingAirdrops", serde_json::json!({"type": "object", "properties": {"airdrops": {"type": "array", "description": "The mirror's /accounts/{id}/airdrops/pending entries.", "items": {"type": "object"}}}, "required": ["airdrops"], "additionalProperties": false}))
            .query()
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {"accountId": {"type": "string", "description": "The account ID to query (defaults to the user's account)"}},
            "additionalProperties": false
        })
    }

    fn normalise(
        &self,
        raw: &Value,
        _ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        // The kit: `accountId ?? default`, then "required" when that is empty.
        let account_id = match raw.get("accountId").and_then(Value::as_str) {
            Some("") => {
                return Err(ToolError::message(
                    "Account ID is required and was not provided",
                ))
            }
            Some(a) => Some(normalise::account_id("accountId", a)?),
            None => None,
        };
        Ok(GetPendingAirdropNormalised { account_id })
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let account = match n.account_id {
            Some(a) => a,
            None => normalise::default_account(ctx)
                .map_err(|_| ToolError::message("Account ID is required and was not provided"))?,
        };
        let response = ctx.mirror.pending_airdrops(account)?;
        let mut airdrops = match &response["airdrops"] {
            Value::Array(list) => list.clone(),
            _ => Vec::new(),
        };
        for airdrop in &mut airdrops {
            enrich(airdrop, ctx);
        }
        let account = account.to_string();
        let message = human_message(&account, &airdrops);
        Ok(CoreOutput::Query(json!({
            "raw": {"accountId": account, "pendingAirdrops": {"airdrops": airdrops}},
            "humanMessage": message,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_print_with_all_decimal_places() {
        assert_eq!(fixed_units(&json!(12345), 2), "123.45");
        assert_eq!(fixed_units(&json!(5), 3), "0.005");
        assert_eq!(fixed_units(&json!(700), 0), "700");
        assert_eq!(fixed_units(&json!(100), 2), "1.00");
        assert_eq!(fixed_units(&Value::Null, 2), "0.00");
    }

    #[test]
    fn message_lists_fungible_and_nft_airdrops() {
        let airdrops = [
            json!({"amount": 250, "decimals": 2, "symbol": "GLD", "serial_number": null}),
            json!({"amount": 1, "decimals": 0, "symbol": "ART", "serial_number": 7}),
        ];
        assert_eq!(
            human_message("0.0.1001", &airdrops),
            "Here are the pending airdrops for account **0.0.1001** (total: 2):\n\n- 2.50 **GLD**\n- **ART** #7"
        );
        assert_eq!(
            human_message("0.0.9", &[]),
            "No pending airdrops found for account 0.0.9"
        );
    }
}
