//! "Spend Limit Policy": caps what a call may move (transfers, airdrops, allowances granted,
//! new accounts' initial balances, a deleted account's remaining balance):
//! - per recipient and per transaction, for HBAR and per token (base units);
//! - a rolling budget per agent context (default window 24 h): what the window's calls moved
//!   plus this call must stay within it.
//!
//! Everything runs as one policy after normalisation. The budget is the host's atomic
//! `budget.reserve`: the check and the record are one step, so concurrent calls, `hak call`
//! runs and replicas sharing a state store never pass it. The host commits the reservation
//! when the transaction applied, when its outcome is unknown (no receipt) and when its bytes
//! were handed out (return-bytes modes: the budget counts what the agent was allowed to
//! prepare); it releases it when the transaction certainly did not apply. A state store that
//! cannot answer blocks the call. NFTs are not capped here.
//!
//! Config (every cap optional, at least one required; HBAR as a number or decimal string):
//! `{"maxHbarPerRecipient": 10, "maxHbarPerTransaction": 25, "dailyHbarBudget": 100,
//!   "tokens": {"0.0.5005": {"maxPerRecipient": "1000", "maxPerTransaction": "5000",
//!   "dailyBudget": "20000"}}, "budgetWindowSeconds": 86400}`

use hak_guest::facts::{Asset, Movement, VALUE_TOOLS};
use hak_guest::serde_json::{json, Value};
use hak_guest::{
    block_with, host, parse_config, Plugin, PluginInfo, PolicyOutcome, Stage, StageInput, Verdict,
};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    max_hbar_per_recipient: Option<Value>,
    max_hbar_per_transaction: Option<Value>,
    daily_hbar_budget: Option<Value>,
    #[serde(default)]
    tokens: BTreeMap<String, TokenConfig>,
    #[serde(default = "day")]
    budget_window_seconds: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TokenConfig {
    max_per_recipient: Option<Value>,
    max_per_transaction: Option<Value>,
    daily_budget: Option<Value>,
}

fn day() -> u32 {
    86_400
}

/// The caps of one asset, in its smallest unit.
#[derive(Default, Clone, Copy)]
struct Caps {
    per_recipient: Option<u128>,
    per_transaction: Option<u128>,
    budget: Option<u128>,
}

pub struct SpendLimit {
    hbar: Caps,
    tokens: BTreeMap<String, Caps>,
    window_seconds: u32,
}

/// Decimal text with at most `decimals` places → integer units (`"1.5"`, 8 → 150000000).
fn decimal_units(text: &str, decimals: usize) -> Option<u128> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && frac.is_empty() || frac.len() > decimals {
        return None;
    }
    if !whole
        .bytes()
        .chain(frac.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let frac_units: u128 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    let scale = 10u128.pow(decimals as u32);
    whole
        .checked_mul(scale)?
        .checked_add(frac_units * 10u128.pow((decimals - frac.len()) as u32))
}

fn cap(field: &str, v: &Option<Value>, decimals: usize) -> Result<Option<u128>, String> {
    let Some(v) = v else { return Ok(None) };
    let text = match v {
        Value::String(s) => s.trim().to_owned(),
        Value::Number(n) => n.to_string(),
        other => return Err(format!("invalid config: {field}: {other} is not an amount")),
    };
    decimal_units(&text, decimals).map(Some).ok_or_else(|| {
        format!("invalid config: {field}: {text:?} is not a non-negative amount with at most {decimals} decimals")
    })
}

fn hbar_text(tinybars: u128) -> String {
    let whole = tinybars / 100_000_000;
    let frac = tinybars % 100_000_000;
    if frac == 0 {
        format!("{whole} HBAR")
    } else {
        format!("{whole}.{}", format!("{frac:08}").trim_end_matches('0')) + " HBAR"
    }
}

/// The state-store and caps key of an asset; NFTs are not capped.
fn asset_key(asset: &Asset) -> Option<String> {
    match asset {
        Asset::Hbar => Some("hbar".into()),
        Asset::Token(t) => Some(t.clone()),
        Asset::Nft(_) => None,
    }
}

fn amount_text(asset: &str, units: u128) -> String {
    if asset == "hbar" {
        hbar_text(units)
    } else {
        format!("{units} units of {asset}")
    }
}

impl SpendLimit {
    fn caps(&self, asset: &str) -> Option<&Caps> {
        if asset == "hbar" {
            Some(&self.hbar)
        } else {
            self.tokens.get(asset)
        }
    }

    /// This call's movements per capped asset: (asset key, movements).
    fn by_asset<'a>(&self, ms: &'a [Movement]) -> BTreeMap<String, Vec<&'a Movement>> {
        let mut out: BTreeMap<String, Vec<&Movement>> = BTreeMap::new();
        for m in ms {
            if let Some(key) = asset_key(&m.asset).filter(|k| self.caps(k).is_some()) {
                out.entry(key).or_default().push(m);
            }
        }
        out
    }
}

impl Plugin for SpendLimit {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        let hbar = Caps {
            per_recipient: cap("maxHbarPerRecipient", &config.max_hbar_per_recipient, 8)?,
            per_transaction: cap("maxHbarPerTransaction", &config.max_hbar_per_transaction, 8)?,
            budget: cap("dailyHbarBudget", &config.daily_hbar_budget, 8)?,
        };
        let mut tokens = BTreeMap::new();
        for (id, t) in &config.tokens {
            if !hak_guest::facts::is_entity_id(id) {
                return Err(format!(
                    "invalid config: tokens.{id}: not a token id (0.0.x)"
                ));
            }
            let at = |f: &str| format!("tokens.{id}.{f}");
            let caps = Caps {
                per_recipient: cap(&at("maxPerRecipient"), &t.max_per_recipient, 0)?,
                per_transaction: cap(&at("maxPerTransaction"), &t.max_per_transaction, 0)?,
                budget: cap(&at("dailyBudget"), &t.daily_budget, 0)?,
            };
            tokens.insert(id.clone(), caps);
        }
        let any = |c: &Caps| {
            c.per_recipient.is_some() || c.per_transaction.is_some() || c.budget.is_some()
        };
        if !any(&hbar) && !tokens.values().any(any) {
            return Err("invalid config: set at least one cap (maxHbarPerRecipient, maxHbarPerTransaction, dailyHbarBudget or tokens)".into());
        }
        if config.budget_window_seconds == 0 || config.budget_window_seconds > 366 * 86_400 {
            return Err("invalid config: budgetWindowSeconds: must be 1–31622400".into());
        }
        let info = PluginInfo::policy(
            "Spend Limit Policy",
            "Caps value per recipient, per transaction and per rolling day",
            VALUE_TOOLS,
            [Stage::PostParamsNormalization],
        );
        let plugin = SpendLimit {
            hbar,
            tokens,
            window_seconds: config.budget_window_seconds,
        };
        Ok((plugin, info))
    }

    fn should_block_post_params_normalization(&self, input: &StageInput) -> PolicyOutcome {
        for (asset, ms) in self.by_asset(input.movements()) {
            let caps = *self.caps(&asset).expect("filtered to capped assets");
            let mut total: u128 = 0;
            for m in &ms {
                let amount = u128::from(m.amount);
                total = total.saturating_add(amount);
                if let Some(limit) = caps.per_recipient.filter(|l| amount > *l) {
                    let to = m.to.as_deref().unwrap_or("a new account");
                    return Ok(block_with(
                        format!(
                            "{} to {to} exceeds the per-recipient limit of {}",
                            amount_text(&asset, amount),
                            amount_text(&asset, limit)
                        ),
                        "SPEND_LIMIT_RECIPIENT",
                        json!({"asset": asset, "recipient": m.to, "amount": amount.to_string(), "limit": limit.to_string()}),
                    ));
                }
            }
            if let Some(limit) = caps.per_transaction.filter(|l| total > *l) {
                return Ok(block_with(
                    format!(
                        "{} in one call exceeds the per-transaction limit of {}",
                        amount_text(&asset, total),
                        amount_text(&asset, limit)
                    ),
                    "SPEND_LIMIT_TRANSACTION",
                    json!({"asset": asset, "amount": total.to_string(), "limit": limit.to_string()}),
                ));
            }
            if let Some(budget) = caps.budget {
                let limit = u64::try_from(budget).unwrap_or(u64::MAX);
                let Ok(amount) = u64::try_from(total) else {
                    return Ok(over_budget(
                        &asset,
                        total,
                        budget,
                        self.window_seconds,
                        None,
                    ));
                };
                match host::reserve(
                    &format!("spent:{asset}"),
                    amount,
                    limit,
                    self.window_seconds,
                ) {
                    Ok(_) => {}
                    Err(host::ReserveError::OverLimit(spent)) => {
                        return Ok(over_budget(
                            &asset,
                            total,
                            budget,
                            self.window_seconds,
                            Some(spent),
                        ))
                    }
                    Err(host::ReserveError::Unavailable(why)) => {
                        return Ok(block_with(
                            format!("the budget cannot be checked: {why}"),
                            "SPEND_LIMIT_UNAVAILABLE",
                            json!({"asset": asset}),
                        ))
                    }
                }
            }
        }
        Ok(Verdict::Allow)
    }
}

/// The block of a call that would pass the budget (`spent`: what the window already holds).
fn over_budget(
    asset: &str,
    total: u128,
    budget: u128,
    window_seconds: u32,
    spent: Option<u64>,
) -> Verdict {
    let spent = u128::from(spent.unwrap_or(0));
    block_with(
        format!(
            "{} would exceed the budget of {} per {} s ({} already spent)",
            amount_text(asset, total),
            amount_text(asset, budget),
            window_seconds,
            amount_text(asset, spent)
        ),
        "SPEND_LIMIT_BUDGET",
        json!({"asset": asset, "amount": total.to_string(), "spent": spent.to_string(), "budget": budget.to_string()}),
    )
}

hak_guest::export_plugin!(SpendLimit);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_parse_exactly() {
        assert_eq!(decimal_units("1.5", 8), Some(150_000_000));
        assert_eq!(decimal_units("10", 8), Some(1_000_000_000));
        assert_eq!(decimal_units("0.00000001", 8), Some(1));
        assert_eq!(decimal_units("0.000000001", 8), None);
        assert_eq!(decimal_units("-1", 8), None);
        assert_eq!(decimal_units("1000", 0), Some(1000));
        assert_eq!(decimal_units("1.5", 0), None);
        assert_eq!(hbar_text(150_000_000), "1.5 HBAR");
        assert_eq!(hbar_text(2_000_000_000), "20 HBAR");
    }
}
