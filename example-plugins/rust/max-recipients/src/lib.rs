//! "Max Recipients Policy": the kit's `MaxRecipientsPolicy`. At post-params-normalization it
//! counts the recipients in the normalised params (positive amounts only; NFT transfers count
//! one each) and blocks when there are more than `maxRecipients`.
//!
//! Config (the kit's constructor parameters): `{"maxRecipients": 2, "additionalTools": ["my_tool"],
//! "customCounts": {"my_tool": {"field": "payouts", "amountField": "amount"}, "other": {"count": 3}}}`.
//! A custom count overrides the built-in rule, as in the kit. A relevant tool with no rule fails
//! the call with the kit's "Unhandled tool" error. The EVM tools (`transfer_erc20_tool`,
//! `transfer_erc721_tool`, `mint_erc721_tool`) are not among the kit's defaults; listed in
//! `additionalTools` they count the recipients of the host's facts, with no rule needed.

use hak_guest::serde_json::{self, Value};
use hak_guest::{
    block_with, host, reads, scan, Amount, Parts, Plugin, PluginInfo, PolicyOutcome, Stage,
    StageInput, ToolReads, Verdict,
};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The kit's default relevant tools (7, including `transfer_fungible_token_tool`).
const DEFAULT_TOOLS: [&str; 7] = [
    "transfer_hbar_tool",
    "transfer_hbar_with_allowance_tool",
    "airdrop_fungible_token_tool",
    "transfer_fungible_token_tool",
    "transfer_fungible_token_with_allowance_tool",
    "transfer_non_fungible_token_with_allowance_tool",
    "transfer_non_fungible_token_tool",
];

/// Tools counted from the host's facts (their recipients are EVM addresses in an ABI
/// payload, not a list in the params).
const FACT_COUNTED: [&str; 3] = [
    "transfer_erc20_tool",
    "transfer_erc721_tool",
    "mint_erc721_tool",
];

/// A declarative counting rule (the kit takes a function; a sandboxed config takes data).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CountRule {
    /// Count the entries of the array at this dotted path of `normalisedParams`…
    field: Option<String>,
    /// …only those whose value at this key is a positive amount (entries without it count).
    amount_field: Option<String>,
    /// Or: a fixed count.
    count: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    max_recipients: Value,
    #[serde(default)]
    additional_tools: Vec<String>,
    #[serde(default)]
    custom_counts: BTreeMap<String, CountRule>,
}

pub struct MaxRecipients {
    max: u64,
    custom: BTreeMap<String, CountRule>,
}

impl Plugin for MaxRecipients {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = serde_json::from_str(config)
            .map_err(|e| format!("MaxRecipientsPolicy: invalid config: {e}"))?;
        let max = config
            .max_recipients
            .as_u64()
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                format!(
                    "MaxRecipientsPolicy: 'maxRecipients' must be a positive integer. Received: {}",
                    config.max_recipients
                )
            })?;
        for (tool, rule) in &config.custom_counts {
            match (&rule.field, rule.count) {
                (Some(_), None) | (None, Some(_)) => {}
                _ => {
                    return Err(format!(
                        "MaxRecipientsPolicy: customCounts.{tool} needs exactly one of 'field' or 'count'"
                    ))
                }
            }
        }
        let mut tools: Vec<&str> = DEFAULT_TOOLS.to_vec();
        tools.extend(config.additional_tools.iter().map(String::as_str));
        let info = PluginInfo::policy(
            "Max Recipients Policy",
            &format!("Limits the maximum number of recipients to {max}"),
            tools,
            [Stage::PostParamsNormalization],
        );
        Ok((
            MaxRecipients {
                max,
                custom: config.custom_counts,
            },
            info,
        ))
    }

    /// The built-in rules and `field` rules count entries of `normalisedParams`, the EVM tools
    /// count the facts' movements, and a fixed `count` reads nothing: each tool gets only the
    /// part its rule reads.
    fn reads(&self) -> Vec<ToolReads> {
        let mut out: Vec<ToolReads> = self
            .custom
            .iter()
            .map(|(tool, rule)| {
                let parts = if rule.count.is_some() {
                    Parts::empty()
                } else {
                    Parts::PARAMS
                };
                reads(tool, parts)
            })
            .collect();
        out.extend(FACT_COUNTED.iter().map(|tool| reads(tool, Parts::FACTS)));
        out.push(reads("*", Parts::PARAMS));
        out
    }

    fn should_block_post_params_normalization(&self, input: &StageInput) -> PolicyOutcome {
        let count = match self.custom.get(&input.method) {
            Some(rule) => count_with_rule(rule, input)?,
            None if FACT_COUNTED.contains(&input.method.as_str()) => input.movements().len() as u64,
            None => count_builtin(input)?,
        };
        if count > self.max {
            host::warn(&format!(
                "MaxRecipientsPolicy: {} tool call rejected, expected max {} recipients, got {count}",
                input.method, self.max
            ));
            return Ok(block_with(
                format!("{count} recipients exceed the maximum of {}", self.max),
                "MAX_RECIPIENTS_EXCEEDED",
                serde_json::json!({ "recipientCount": count, "maxRecipients": self.max }),
            ));
        }
        Ok(Verdict::Allow)
    }
}

fn count_builtin(input: &StageInput) -> Result<u64, String> {
    let field = match input.method.as_str() {
        "transfer_hbar_tool" | "transfer_hbar_with_allowance_tool" => "hbarTransfers",
        "airdrop_fungible_token_tool"
        | "transfer_fungible_token_tool"
        | "transfer_fungible_token_with_allowance_tool" => "tokenTransfers",
        "transfer_non_fungible_token_tool" | "transfer_non_fungible_token_with_allowance_tool" => {
            "transfers"
        }
        other => {
            return Err(format!(
                "MaxRecipientsPolicy: Unhandled tool '{other}'. Provide a custom strategy in the constructor."
            ))
        }
    };
    let bad = |what: &str| format!("cannot read normalisedParams for {}: {what}", input.method);
    // Only normalisedParams is read (the host writes it first at this stage), and of it only
    // the transfer list's amounts: scanned in place, nothing allocated.
    let normalised = scan::at(&input.params_json, &["normalisedParams"])
        .filter(|n| n.starts_with('{'))
        .ok_or_else(|| {
            format!(
                "cannot read stage params for {}: no normalisedParams",
                input.method
            )
        })?;
    let mut list = match scan::at(normalised, &[field]) {
        None => return Ok(0),
        Some(list) if list.starts_with("null") => return Ok(0),
        Some(list) => scan::items(list).ok_or_else(|| bad(&format!("{field} is not a list")))?,
    };
    let mut count = 0;
    // Each entry is read once: its amount found on the way to its end.
    while let Some(amount) = list.next_field("amount") {
        let amount = amount.map_err(|_| bad(&format!("an entry of {field} is not an object")))?;
        // The kit's `_isRecipient`: no amount (an NFT) counts; otherwise it must be > 0.
        let recipient = match amount {
            None | Some("null") => true,
            Some(raw) => Amount::from_json(raw).map_err(|e| bad(&e))?.is_positive(),
        };
        count += u64::from(recipient);
    }
    Ok(count)
}

fn count_with_rule(rule: &CountRule, input: &StageInput) -> Result<u64, String> {
    if let Some(n) = rule.count {
        return Ok(n);
    }
    let path = rule.field.as_deref().unwrap_or_default();
    let params = input.params_value()?;
    let mut at = params.get("normalisedParams").unwrap_or(&Value::Null);
    for key in path.split('.') {
        at = at.get(key).unwrap_or(&Value::Null);
    }
    let Some(items) = at.as_array() else {
        return Ok(0);
    };
    let Some(amount_field) = &rule.amount_field else {
        return Ok(items.len() as u64);
    };
    Ok(items
        .iter()
        .filter(|item| match item.get(amount_field) {
            None | Some(Value::Null) => true,
            Some(v) => serde_json::from_value::<Amount>(v.clone()).is_ok_and(Amount::is_positive),
        })
        .count() as u64)
}

hak_guest::export_plugin!(MaxRecipients);

#[cfg(test)]
mod tests {
    //! The kit's `max-recipients-policy.unit.test.ts` cases, on the counting rules.
    use super::*;
    use hak_guest::{Stage, ToolType};

    fn input(method: &str, normalised: serde_json::Value) -> StageInput {
        StageInput {
            stage: Stage::PostParamsNormalization,
            method: method.into(),
            tool_type: ToolType::Transaction,
            params_json: serde_json::json!({ "normalisedParams": normalised }).to_string(),
            facts: None,
        }
    }

    fn hbar(amounts: &[i64]) -> serde_json::Value {
        let entries: Vec<_> = amounts
            .iter()
            .map(|a| serde_json::json!({"accountId": "0.0.1", "amount": a.to_string()}))
            .collect();
        serde_json::json!({ "hbarTransfers": entries })
    }

    #[test]
    fn hbar_counts_positive_amounts_only() {
        assert_eq!(
            count_builtin(&input("transfer_hbar_tool", hbar(&[-2, 1, 1]))),
            Ok(2)
        );
        assert_eq!(
            count_builtin(&input("transfer_hbar_tool", hbar(&[-1, 1, 0]))),
            Ok(1)
        );
        assert_eq!(
            count_builtin(&input(
                "transfer_hbar_with_allowance_tool",
                hbar(&[1, 1, 1])
            )),
            Ok(3)
        );
    }

    #[test]
    fn token_transfers_and_airdrops_skip_the_sender() {
        let tokens = |amounts: &[i64]| {
            let entries: Vec<_> = amounts
                .iter()
                .map(|a| serde_json::json!({"tokenId": "0.0.9", "accountId": "0.0.1", "amount": a.to_string()}))
                .collect();
            serde_json::json!({ "tokenTransfers": entries })
        };
        assert_eq!(
            count_builtin(&input(
                "airdrop_fungible_token_tool",
                tokens(&[-50, 25, 25])
            )),
            Ok(2)
        );
        assert_eq!(
            count_builtin(&input(
                "transfer_fungible_token_tool",
                tokens(&[-6, 1, 1, 1, 1, 1, 1])
            )),
            Ok(6)
        );
        // Amounts above 2^53 keep their precision.
        assert_eq!(
            count_builtin(&input(
                "transfer_fungible_token_tool",
                tokens(&[-(1 << 62), 1 << 61, 1 << 61])
            )),
            Ok(2)
        );
    }

    #[test]
    fn nft_transfers_count_one_each() {
        let nfts = serde_json::json!({"transfers": [{"nftId": "0.0.9/1", "receiver": "0.0.2"}, {"nftId": "0.0.9/2", "receiver": "0.0.3"}]});
        assert_eq!(
            count_builtin(&input("transfer_non_fungible_token_tool", nfts)),
            Ok(2)
        );
    }

    #[test]
    fn an_unknown_tool_without_a_rule_is_an_error() {
        let err = count_builtin(&input("unknown_tool", serde_json::json!({}))).unwrap_err();
        assert_eq!(err, "MaxRecipientsPolicy: Unhandled tool 'unknown_tool'. Provide a custom strategy in the constructor.");
    }

    #[test]
    fn custom_rules_count_a_field_or_return_a_constant() {
        let rule = CountRule {
            field: Some("payouts".into()),
            amount_field: Some("amount".into()),
            count: None,
        };
        let params =
            serde_json::json!({"payouts": [{"amount": "5"}, {"amount": "0"}, {"to": "x"}]});
        assert_eq!(
            count_with_rule(&rule, &input("my_custom_tool", params)),
            Ok(2)
        );
        let fixed = CountRule {
            field: None,
            amount_field: None,
            count: Some(2),
        };
        assert_eq!(
            count_with_rule(&fixed, &input("my_custom_tool", serde_json::json!({}))),
            Ok(2)
        );
    }
}
