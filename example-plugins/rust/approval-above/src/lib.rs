//! "Approval Above Policy": a call that moves more HBAR than `approveAboveHbar` to one
//! recipient, or in total, waits for a human (contract 0.2.0 `needs-approval`): the host parks
//! it until an approver approves (the chain goes on) or denies it, or `timeoutSeconds` pass
//! (blocked). Allowances count like transfers; a deleted account's whole balance always asks.
//! Reads only the host's facts (no params JSON).
//!
//! Config: `{"approveAboveHbar": 100, "timeoutSeconds": 300}` (the timeout is optional: 0 or
//! absent uses the host's default; the host caps it).

use hak_guest::facts::{Asset, VALUE_TOOLS};
use hak_guest::serde_json::{json, Value};
use hak_guest::{
    needs_approval_with, parse_config, Plugin, PluginInfo, PolicyOutcome, Stage, StageInput,
    Verdict,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    approve_above_hbar: Value,
    #[serde(default)]
    timeout_seconds: u32,
}

pub struct ApprovalAbove {
    /// Tinybars.
    above: u64,
    timeout_seconds: u32,
}

/// A whole or decimal HBAR amount (at most 8 decimals) in tinybars.
fn tinybars(v: &Value) -> Option<u64> {
    let text = match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().to_owned(),
        _ => return None,
    };
    let (whole, frac) = text.split_once('.').unwrap_or((&text, ""));
    if whole.is_empty()
        || frac.len() > 8
        || !(whole.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let frac: u64 = format!("{frac:0<8}").parse().ok()?;
    whole
        .parse::<u64>()
        .ok()?
        .checked_mul(100_000_000)?
        .checked_add(frac)
}

impl Plugin for ApprovalAbove {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        let above = tinybars(&config.approve_above_hbar).ok_or_else(|| {
            format!(
                "invalid config: approveAboveHbar: {} is not a non-negative HBAR amount with at most 8 decimals",
                config.approve_above_hbar
            )
        })?;
        let info = PluginInfo::policy(
            "Approval Above Policy",
            &format!(
                "Asks a human before moving more than {} HBAR",
                config.approve_above_hbar
            ),
            VALUE_TOOLS,
            [Stage::PostParamsNormalization],
        );
        Ok((
            ApprovalAbove {
                above,
                timeout_seconds: config.timeout_seconds,
            },
            info,
        ))
    }

    fn should_block_post_params_normalization(&self, input: &StageInput) -> PolicyOutcome {
        let mut total: u64 = 0;
        let mut largest: Option<(&str, u64)> = None;
        for m in input.movements().iter().filter(|m| m.asset == Asset::Hbar) {
            total = total.saturating_add(m.amount);
            if largest.is_none_or(|(_, a)| m.amount > a) {
                largest = Some((m.to.as_deref().unwrap_or("a new account"), m.amount));
            }
        }
        if total <= self.above {
            return Ok(Verdict::Allow);
        }
        let (to, amount) = largest.unwrap_or(("a new account", total));
        let shown = |t: u64| {
            if t == u64::MAX {
                "the whole balance".to_owned()
            } else {
                format!("{}.{:08} HBAR", t / 100_000_000, t % 100_000_000)
            }
        };
        Ok(needs_approval_with(
            format!(
                "{} moves {} (largest: {} to {to}), above the {} approval threshold",
                input.method,
                shown(total),
                shown(amount),
                shown(self.above)
            ),
            "APPROVAL_ABOVE_THRESHOLD",
            json!({"totalTinybars": total.to_string(), "thresholdTinybars": self.above.to_string(), "largestRecipient": to}),
            self.timeout_seconds,
        ))
    }
}

hak_guest::export_plugin!(ApprovalAbove);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse_exactly() {
        assert_eq!(tinybars(&json!(100)), Some(10_000_000_000));
        assert_eq!(tinybars(&json!("0.5")), Some(50_000_000));
        assert_eq!(tinybars(&json!("1.000000001")), None);
        assert_eq!(tinybars(&json!(-1)), None);
    }
}
