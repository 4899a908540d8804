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
//! HBAR may also be capped in US dollars at the network's exchange rate (capability `rates`:
//! the rate the mirror states, kept by the host until it expires): per recipient and per
//! transaction compared exactly (`tinybars × cents` against `limit × hbars × 10^8`), the
//! budget counted in millionths of a cent rounded up (against the spender), each call at the
//! rate of its own time. A rate that cannot be read blocks the call, with why.
//!
//! Config (every cap optional, at least one required; HBAR as a number or decimal string, US
//! dollars as decimal text to the cent):
//! `{"maxHbarPerRecipient": 10, "maxHbarPerTransaction": 25, "dailyHbarBudget": 100,
//!   "maxUsdPerRecipient": "5.00", "maxUsdPerTransaction": "20", "dailyUsdBudget": "250.50",
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
    max_usd_per_recipient: Option<Value>,
    max_usd_per_transaction: Option<Value>,
    daily_usd_budget: Option<Value>,
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
    /// HBAR's caps in US cents.
    usd: Caps,
    tokens: BTreeMap<String, Caps>,
    window_seconds: u32,
}

/// Millionths of a cent: the unit the dollar budget is kept in.
const MICRO_CENTS_PER_CENT: u128 = 1_000_000;
const TINYBARS_PER_HBAR: u128 = 100_000_000;

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

/// US cents as `US$1.05`.
fn usd_text(cents: u128) -> String {
    format!("US${}.{:02}", cents / 100, cents % 100)
}

/// The value of `tinybars` at `rate`, in cents: exactly `tinybars × cents / (hbars × 10^8)`
/// as (numerator, denominator), compared without rounding.
fn usd_value(tinybars: u128, rate: &host::ExchangeRate) -> (u128, u128) {
    (
        tinybars.saturating_mul(u128::from(rate.cent_equivalent)),
        u128::from(rate.hbar_equivalent) * TINYBARS_PER_HBAR,
    )
}

/// Whether `value` (a fraction of cents) is above `limit_cents`.
fn above(value: (u128, u128), limit_cents: u128) -> bool {
    value.0 > limit_cents.saturating_mul(value.1)
}

/// `value` in whole cents, rounded up, and in millionths of a cent, rounded up.
fn cents_up(value: (u128, u128)) -> u128 {
    value.0.div_ceil(value.1)
}
fn micro_cents_up(value: (u128, u128)) -> u128 {
    value
        .0
        .saturating_mul(MICRO_CENTS_PER_CENT)
        .div_ceil(value.1)
}

fn rate_json(rate: &host::ExchangeRate) -> Value {
    json!({"centEquivalent": rate.cent_equivalent, "hbarEquivalent": rate.hbar_equivalent, "expirationSeconds": rate.expiration_seconds})
}

fn rate_text(rate: &host::ExchangeRate) -> String {
    format!("{} ¢ per {} ℏ", rate.cent_equivalent, rate.hbar_equivalent)
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
        let usd = Caps {
            per_recipient: cap("maxUsdPerRecipient", &config.max_usd_per_recipient, 2)?,
            per_transaction: cap("maxUsdPerTransaction", &config.max_usd_per_transaction, 2)?,
            budget: cap("dailyUsdBudget", &config.daily_usd_budget, 2)?,
        };
        if usd
            .budget
            .is_some_and(|b| b.saturating_mul(MICRO_CENTS_PER_CENT) > u128::from(u64::MAX))
        {
            return Err("invalid config: dailyUsdBudget: at most 18446744073709.55 (kept in millionths of a cent)".into());
        }
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
        if !any(&hbar) && !any(&usd) && !tokens.values().any(any) {
            return Err("invalid config: set at least one cap (maxHbarPerRecipient, maxHbarPerTransaction, dailyHbarBudget, maxUsdPerRecipient, maxUsdPerTransaction, dailyUsdBudget or tokens)".into());
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
            usd,
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
        if self.usd.per_recipient.is_some()
            || self.usd.per_transaction.is_some()
            || self.usd.budget.is_some()
        {
            let hbar: Vec<&Movement> = input
                .movements()
                .iter()
                .filter(|m| m.asset == Asset::Hbar && m.amount > 0)
                .collect();
            if !hbar.is_empty() {
                return Ok(self.judge_usd(&hbar));
            }
        }
        Ok(Verdict::Allow)
    }
}

impl SpendLimit {
    /// The dollar caps of this call's HBAR movements, at the network's rate now.
    fn judge_usd(&self, hbar: &[&Movement]) -> Verdict {
        let rate = match host::exchange_rate() {
            Ok(rate) => rate,
            Err(why) => {
                return block_with(
                    format!("the HBAR exchange rate cannot be read, so the US dollar limits cannot be checked: {why}"),
                    "SPEND_LIMIT_RATE_UNAVAILABLE",
                    json!({"asset": "hbar"}),
                )
            }
        };
        let mut total: u128 = 0;
        for m in hbar {
            let amount = u128::from(m.amount);
            total = total.saturating_add(amount);
            let value = usd_value(amount, &rate);
            if let Some(limit) = self.usd.per_recipient.filter(|l| above(value, *l)) {
                let to = m.to.as_deref().unwrap_or("a new account");
                return block_with(
                    format!(
                        "{} (about {} at {}) to {to} exceeds the per-recipient limit of {}",
                        hbar_text(amount),
                        usd_text(cents_up(value)),
                        rate_text(&rate),
                        usd_text(limit)
                    ),
                    "SPEND_LIMIT_USD_RECIPIENT",
                    json!({"asset": "hbar", "recipient": m.to, "amount": amount.to_string(), "usdCents": cents_up(value).to_string(), "limitUsdCents": limit.to_string(), "rate": rate_json(&rate)}),
                );
            }
        }
        let value = usd_value(total, &rate);
        if let Some(limit) = self.usd.per_transaction.filter(|l| above(value, *l)) {
            return block_with(
                format!(
                    "{} (about {} at {}) in one call exceeds the per-transaction limit of {}",
                    hbar_text(total),
                    usd_text(cents_up(value)),
                    rate_text(&rate),
                    usd_text(limit)
                ),
                "SPEND_LIMIT_USD_TRANSACTION",
                json!({"asset": "hbar", "amount": total.to_string(), "usdCents": cents_up(value).to_string(), "limitUsdCents": limit.to_string(), "rate": rate_json(&rate)}),
            );
        }
        if let Some(budget) = self.usd.budget {
            let limit = u64::try_from(budget * MICRO_CENTS_PER_CENT).unwrap_or(u64::MAX);
            let spent_now = micro_cents_up(value);
            let over = |spent: u64| {
                let spent_cents = u128::from(spent).div_ceil(MICRO_CENTS_PER_CENT);
                block_with(
                    format!(
                        "{} (about {} at {}) would exceed the budget of {} per {} s ({} already spent)",
                        hbar_text(total),
                        usd_text(cents_up(value)),
                        rate_text(&rate),
                        usd_text(budget),
                        self.window_seconds,
                        usd_text(spent_cents)
                    ),
                    "SPEND_LIMIT_USD_BUDGET",
                    json!({"asset": "hbar", "amount": total.to_string(), "usdMicroCents": spent_now.to_string(), "spentUsdMicroCents": spent.to_string(), "budgetUsdCents": budget.to_string(), "rate": rate_json(&rate)}),
                )
            };
            let Ok(amount) = u64::try_from(spent_now) else {
                return over(0);
            };
            match host::reserve("spent:usd", amount, limit, self.window_seconds) {
                Ok(_) => {}
                Err(host::ReserveError::OverLimit(spent)) => return over(spent),
                Err(host::ReserveError::Unavailable(why)) => {
                    return block_with(
                        format!("the budget cannot be checked: {why}"),
                        "SPEND_LIMIT_UNAVAILABLE",
                        json!({"asset": "usd"}),
                    )
                }
            }
        }
        Verdict::Allow
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
        assert_eq!(decimal_units("250.50", 2), Some(25_050));
        assert_eq!(decimal_units("0.001", 2), None);
        assert_eq!(usd_text(25_050), "US$250.50");
        assert_eq!(usd_text(5), "US$0.05");
    }

    fn rate(cents: u32, hbars: u32) -> host::ExchangeRate {
        host::ExchangeRate {
            hbar_equivalent: hbars,
            cent_equivalent: cents,
            expiration_seconds: u64::MAX,
        }
    }

    /// Values compare exactly and round up only where they are counted or shown.
    #[test]
    fn dollar_values_are_exact_and_round_against_the_spender() {
        // 12 ¢ per ℏ: 2.5 ℏ = 30 ¢ exactly; one tinybar more is above 30 ¢.
        let twelve = rate(360_000, 30_000);
        assert!(!above(usd_value(250_000_000, &twelve), 30));
        assert!(above(usd_value(250_000_001, &twelve), 30));
        assert_eq!(cents_up(usd_value(250_000_001, &twelve)), 31);
        // One tinybar at 12 ¢ per ℏ is 0.12 millionths of a cent: counted as 1.
        assert_eq!(micro_cents_up(usd_value(1, &twelve)), 1);
        assert_eq!(micro_cents_up(usd_value(100_000_000, &twelve)), 12_000_000);
    }

    fn transfer(tinybars: u64) -> StageInput {
        hak_guest::testing::input("transfer_hbar_tool", Stage::PostParamsNormalization).with_credit(
            Asset::Hbar,
            "0.0.2001",
            tinybars,
        )
    }

    fn blocked_code(verdict: Verdict) -> Option<String> {
        match verdict {
            Verdict::Block(b) => b.code,
            _ => None,
        }
    }

    #[test]
    fn dollar_caps_block_at_the_rate_of_each_call_and_without_a_rate() {
        hak_guest::testing::reset();
        let config = r#"{"maxUsdPerRecipient": "1.00", "dailyUsdBudget": "2"}"#;
        let (plugin, _) = SpendLimit::describe(config).unwrap();
        let judge = |tinybars| {
            plugin
                .should_block_post_params_normalization(&transfer(tinybars))
                .unwrap()
        };
        // No rate: blocked, whatever the amount.
        assert_eq!(
            blocked_code(judge(1)).as_deref(),
            Some("SPEND_LIMIT_RATE_UNAVAILABLE")
        );
        hak_guest::testing::set_exchange_rate(Ok(rate(12, 1)));
        assert_eq!(
            blocked_code(judge(900_000_000)).as_deref(),
            Some("SPEND_LIMIT_USD_RECIPIENT"),
            "9 ℏ at 12 ¢ is US$1.08"
        );
        assert_eq!(judge(800_000_000), Verdict::Allow, "US$0.96");
        assert_eq!(judge(800_000_000), Verdict::Allow, "US$1.92 in all");
        assert_eq!(
            blocked_code(judge(800_000_000)).as_deref(),
            Some("SPEND_LIMIT_USD_BUDGET")
        );
        // HBAR halves: the same 8 ℏ is US$0.48, and the window keeps US$1.92 as spent.
        hak_guest::testing::set_exchange_rate(Ok(rate(6, 1)));
        assert_eq!(
            blocked_code(judge(800_000_000)).as_deref(),
            Some("SPEND_LIMIT_USD_BUDGET")
        );
        assert_eq!(judge(100_000_000), Verdict::Allow, "US$0.06 fits");
        assert_eq!(hak_guest::testing::spent("spent:usd"), 198_000_000);
    }
}
