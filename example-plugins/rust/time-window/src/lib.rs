//! "Time Window Policy": tools may only run on the allowed UTC weekdays and hours, by the host
//! clock. Config: `{"weekdays": ["mon", "tue", "wed", "thu", "fri"], "fromHour": 9,
//! "toHour": 17}` allows 09:00–16:59 UTC on weekdays; `fromHour > toHour` wraps midnight
//! (`22`–`6`); omitted fields allow everything. `relevantTools` (default `["*"]`) narrows it.

use hak_guest::{
    block_with, host, parse_config, serde_json, Plugin, PluginInfo, PolicyOutcome, Stage,
    StageInput, Verdict,
};
use serde::Deserialize;

const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    weekdays: Option<Vec<String>>,
    #[serde(default)]
    from_hour: u32,
    #[serde(default = "day_end")]
    to_hour: u32,
    relevant_tools: Option<Vec<String>>,
}

fn day_end() -> u32 {
    24
}

pub struct TimeWindow {
    /// Allowed days, bit `d` for `DAYS[d]`.
    days: u8,
    from: u32,
    to: u32,
}

impl TimeWindow {
    /// Whether the UTC instant `unix_ms` falls in the window.
    fn allows(&self, unix_ms: u64) -> bool {
        let days_since_epoch = unix_ms / 86_400_000;
        // 1970-01-01 was a Thursday.
        let weekday = ((days_since_epoch + 4) % 7) as u8;
        let hour = ((unix_ms / 3_600_000) % 24) as u32;
        let in_hours = if self.from <= self.to {
            hour >= self.from && hour < self.to
        } else {
            hour >= self.from || hour < self.to
        };
        self.days & (1 << weekday) != 0 && in_hours
    }
}

impl Plugin for TimeWindow {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        let mut days = 0u8;
        match &config.weekdays {
            None => days = 0x7f,
            Some(list) => {
                for (i, d) in list.iter().enumerate() {
                    let at = DAYS
                        .iter()
                        .position(|x| x.eq_ignore_ascii_case(d.get(..3).unwrap_or(d)))
                        .ok_or_else(|| {
                            format!(
                                "invalid config: weekdays.{i}: {d:?} is not a weekday (mon…sun)"
                            )
                        })?;
                    days |= 1 << at;
                }
                if days == 0 {
                    return Err("invalid config: weekdays: list at least one day".into());
                }
            }
        }
        if config.from_hour > 23 {
            return Err(format!(
                "invalid config: fromHour: {} is not an hour (0–23)",
                config.from_hour
            ));
        }
        if config.to_hour > 24 || config.to_hour == config.from_hour {
            return Err(format!(
                "invalid config: toHour: {} must be 0–24 and differ from fromHour",
                config.to_hour
            ));
        }
        let mut info = PluginInfo::policy(
            "Time Window Policy",
            &format!(
                "Tools run only {:02}:00–{:02}:00 UTC on allowed days",
                config.from_hour, config.to_hour
            ),
            ["*"],
            [Stage::PreToolExecution],
        );
        if let Some(tools) = config.relevant_tools {
            info.relevant_tools = tools;
        }
        Ok((
            TimeWindow {
                days,
                from: config.from_hour,
                to: config.to_hour,
            },
            info,
        ))
    }

    fn should_block_pre_tool_execution(&self, input: &StageInput) -> PolicyOutcome {
        let now = host::now_unix_ms();
        if self.allows(now) {
            return Ok(Verdict::Allow);
        }
        Ok(block_with(
            format!("{} is outside the allowed time window", input.method),
            "OUTSIDE_TIME_WINDOW",
            serde_json::json!({ "nowUnixMs": now }),
        ))
    }
}

hak_guest::export_plugin!(TimeWindow);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weekdays_and_hours_in_utc() {
        let weekdays_9_to_17 = TimeWindow {
            days: 0b0111110,
            from: 9,
            to: 17,
        };
        // 2026-11-30 is a Monday.
        let monday_noon = 1_796_040_000_000u64; // 2026-11-30T12:00:00Z
        assert!(weekdays_9_to_17.allows(monday_noon));
        assert!(!weekdays_9_to_17.allows(monday_noon + 6 * 3_600_000)); // 18:00
        assert!(!weekdays_9_to_17.allows(monday_noon - 86_400_000)); // Sunday
        let night = TimeWindow {
            days: 0x7f,
            from: 22,
            to: 6,
        };
        assert!(night.allows(monday_noon + 11 * 3_600_000)); // 23:00
        assert!(!night.allows(monday_noon));
    }
}
