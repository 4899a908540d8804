//! "tx-timing-hook": the minimal hook of the kit's hook-authoring guide. It reads the
//! monotonic clock at pre-tool-execution and logs the call's duration in microseconds at
//! post-tool-execution, tagged `[tx-timing-hook]`: `[tx-timing-hook] transfer_hbar_tool took
//! 812 µs`.
//!
//! The start lives in the instance, not in the context's state: the host gives one call at a
//! time an instance, from its first stage to its last, so concurrent calls of one context
//! (each on its own instance) never overwrite each other's start. A call that ends before
//! post-tool-execution (blocked, failed) logs nothing; the next call on that instance starts
//! afresh. It reads nothing of the params.
//!
//! Config: `{ relevantTools = ["transfer_hbar_tool"] }` (default: every tool).

use hak_guest::serde_json;
use hak_guest::{
    host, reads, HookOutcome, HookResult, Parts, Plugin, PluginInfo, Stage, StageInput, ToolReads,
};
use serde::Deserialize;
use std::sync::Mutex;
use std::time::Instant;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    #[serde(default)]
    relevant_tools: Option<Vec<String>>,
}

pub struct TxTiming {
    /// When the current call's pre-tool-execution ran (this instance serves one call at once).
    started: Mutex<Option<Instant>>,
}

impl Plugin for TxTiming {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config =
            serde_json::from_str(config).map_err(|e| format!("invalid config: {e}"))?;
        let mut info = PluginInfo::hook(
            "tx-timing-hook",
            "Measures each tool call's duration and logs it",
            ["*"],
            [Stage::PreToolExecution, Stage::PostSecondaryAction],
        );
        if let Some(tools) = config.relevant_tools {
            if tools.is_empty() {
                return Err("invalid config: relevantTools: list at least one tool".into());
            }
            info.relevant_tools = tools;
        }
        let plugin = TxTiming {
            started: Mutex::new(None),
        };
        Ok((plugin, info))
    }

    fn reads(&self) -> Vec<ToolReads> {
        vec![reads("*", Parts::empty())]
    }

    fn pre_tool_execution(&self, _input: &StageInput) -> HookOutcome {
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        Ok(HookResult::Proceed)
    }

    fn post_tool_execution(&self, input: &StageInput) -> HookOutcome {
        let started = self
            .started
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(started) = started {
            let micros = started.elapsed().as_micros();
            host::info(&format!(
                "[tx-timing-hook] {} took {micros} µs",
                input.method
            ));
        }
        Ok(HookResult::Proceed)
    }
}

hak_guest::export_plugin!(TxTiming);

#[cfg(test)]
mod tests {
    use super::*;
    use hak_guest::ToolType;

    fn input(stage: Stage) -> StageInput {
        StageInput {
            stage,
            method: "transfer_hbar_tool".into(),
            tool_type: ToolType::Transaction,
            params_json: String::new(),
            facts: None,
        }
    }

    #[test]
    fn a_call_logs_its_duration_once_and_only_after_its_start() {
        let (plugin, info) = TxTiming::describe("{}").unwrap();
        assert_eq!(info.relevant_tools, ["*"]);
        hak_guest::testing::reset();
        plugin
            .post_tool_execution(&input(Stage::PostSecondaryAction))
            .unwrap();
        assert!(hak_guest::testing::logs().is_empty());
        plugin
            .pre_tool_execution(&input(Stage::PreToolExecution))
            .unwrap();
        plugin
            .post_tool_execution(&input(Stage::PostSecondaryAction))
            .unwrap();
        let logs = hak_guest::testing::logs();
        assert_eq!(logs.len(), 1);
        assert!(
            logs[0]
                .1
                .starts_with("[tx-timing-hook] transfer_hbar_tool took ")
                && logs[0].1.ends_with(" µs"),
            "{logs:?}"
        );
        assert!(TxTiming::describe(r#"{"relevantTools": []}"#).is_err());
    }
}
