//! "HOL Audit Trail Hook": the kit's `HolAuditTrailHook`. After every successful call to a
//! relevant tool it writes an audit entry as an HCS-1 file and registers it on the session's
//! HCS-2 registry topic; unlike the kit it also records blocked and failed calls
//! (`events.on-tool-failure`, entry `result.outcome`). Per entry:
//! 1. `content` = the entry JSON (`type`, `version`, `source`, `timestamp`, `tool`, `params`,
//!    `result {raw, message}`), its sha256 (hex);
//! 2. brotli (quality 11), base64, `data:application/json;base64,…`, cut into 1008-char chunks;
//! 3. a new topic with memo `<sha256>:brotli:base64` (the operator's key submits), then each
//!    chunk as `{"o":i,"c":"…"}`;
//! 4. `{"p":"hcs-2","op":"register","t_id":"<topic>"}` on the session topic.
//!
//! Its own failures are logged and never fail the call; return-bytes modes are refused before
//! the tool runs, as in the kit.
//!
//! Config: `{"relevantTools": ["transfer_hbar_tool"], "sessionId": "0.0.5005"}` (the session
//! topic, an HCS-2 registry, memo `hcs-2:0:0`).
//! Capabilities: `hedera:create-topic`, `hedera:submit-topic-message`.

use base64::Engine;
use hak_guest::audit::{is_return_bytes, refuse_return_bytes, AuditParams};
use hak_guest::serde_json::{self, Value};
use hak_guest::{
    host, parse_config, HookOutcome, HookResult, Plugin, PluginInfo, Stage, StageInput, ToolFailure,
};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// HCS-1 chunk size: 1024 minus the `{"o":…,"c":…}` envelope.
pub const CHUNK_CHARS: usize = 1024 - 16;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    relevant_tools: Vec<String>,
    session_id: String,
}

pub struct HolAuditTrail {
    session: String,
}

/// ISO 8601 UTC with milliseconds from Unix milliseconds (`2026-11-30T08:05:00.123Z`).
pub fn iso_utc(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// The entry JSON, compact, keys in the kit's order; `params` kept as the host wrote them.
pub fn entry_json(timestamp: &str, tool: &str, params: &str, result: &Value) -> String {
    format!(
        "{{\"type\":\"hedera-agent-kit:audit-entry\",\"version\":\"1.0\",\"source\":\"hak\",\"timestamp\":{},\"tool\":{},\"params\":{params},\"result\":{result}}}",
        Value::from(timestamp),
        Value::from(tool),
    )
}

/// An HCS-1 file: the topic memo and the chunk messages for `content`.
pub fn hcs1_file(content: &str) -> (String, Vec<String>) {
    let hash = hex(&Sha256::digest(content.as_bytes()));
    let mut compressed = Vec::new();
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        ..Default::default()
    };
    // Writing into a Vec cannot fail.
    let _ = brotli::BrotliCompress(&mut content.as_bytes(), &mut compressed, &params);
    let data_uri = format!(
        "data:application/json;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&compressed)
    );
    let chunks = data_uri
        .as_bytes()
        .chunks(CHUNK_CHARS)
        .enumerate()
        .map(|(i, c)| {
            // The data URI is ASCII, so byte chunks are char chunks.
            let c = std::str::from_utf8(c).unwrap_or_default();
            serde_json::json!({"o": i, "c": c}).to_string()
        })
        .collect();
    (format!("{hash}:brotli:base64"), chunks)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl HolAuditTrail {
    /// Write the entry as an HCS-1 file and register it; failures are logged.
    fn write(&self, tool: &str, params: &str, result: &Value) {
        let entry = entry_json(&iso_utc(host::now_unix_ms()), tool, params, result);
        if let Err(e) = self.try_write(&entry) {
            host::warn(&format!(
                "HolAuditTrailHook: Failed to log audit entry for tool {tool}: {e}"
            ));
        }
    }

    fn try_write(&self, entry: &str) -> Result<(), String> {
        let (memo, chunks) = hcs1_file(entry);
        let topic = host::create_topic(&memo)
            .map_err(|e| format!("Failed to create HCS-1 topic for audit entry: {e}"))?;
        for chunk in &chunks {
            host::submit_topic_message(&topic, chunk)?;
        }
        let register = serde_json::json!({"p": "hcs-2", "op": "register", "t_id": topic});
        host::submit_topic_message(&self.session, &register.to_string())?;
        Ok(())
    }
}

impl Plugin for HolAuditTrail {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        let valid = config
            .session_id
            .strip_prefix("0.0.")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !valid {
            return Err("invalid config: sessionId: sessionId must be a valid Hedera topic ID in format 0.0.xxx".into());
        }
        if config.relevant_tools.is_empty() {
            return Err("invalid config: relevantTools: list at least one tool".into());
        }
        let mut info = PluginInfo::hook(
            "HOL Audit Trail Hook",
            "Hook to write HOL (HCS-1 + HCS-2) audit entries. Supported in AgentMode.AUTONOMOUS and AgentMode.CUSTOM_EXECUTE_TX. Blocked in RETURN_BYTES and CUSTOM_RETURN_BYTES modes.",
            [],
            [Stage::PreToolExecution, Stage::PostSecondaryAction],
        );
        info.relevant_tools = config.relevant_tools;
        Ok((
            HolAuditTrail {
                session: config.session_id,
            },
            info,
        ))
    }

    fn pre_tool_execution(&self, input: &StageInput) -> HookOutcome {
        refuse_return_bytes("HolAuditTrailHook", input)
    }

    fn post_tool_execution(&self, input: &StageInput) -> HookOutcome {
        match input.params::<AuditParams>() {
            Ok(p) => {
                let params = p.params_text();
                let result = serde_json::json!({
                    "raw": p.tool_result["raw"],
                    "message": p.tool_result["humanMessage"],
                });
                self.write(&input.method, params, &result);
            }
            Err(e) => host::warn(&format!("HolAuditTrailHook: {e}")),
        }
        Ok(HookResult::Proceed)
    }

    fn on_tool_failure(&self, failure: &ToolFailure) {
        let f = failure.value();
        if is_return_bytes(&f["context"]) {
            return;
        }
        let params = f
            .get("normalisedParams")
            .unwrap_or(&f["rawParams"])
            .to_string();
        let mut raw = serde_json::json!({"status": "ERROR", "error": f["error"]});
        for key in ["errorCode", "policyBlock", "pluginFailure", "transactionId"] {
            if let Some(v) = f.get(key) {
                raw[key] = v.clone();
            }
        }
        let result =
            serde_json::json!({"raw": raw, "message": f["error"], "outcome": f["outcome"]});
        self.write(f["method"].as_str().unwrap_or("unknown"), &params, &result);
    }
}

hak_guest::export_plugin!(HolAuditTrail);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_utc() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_utc(1_796_040_000_123), "2026-11-30T12:00:00.123Z");
        assert_eq!(iso_utc(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn a_file_round_trips_and_is_named_by_its_hash() {
        let entry = entry_json(
            "2026-11-30T12:00:00.000Z",
            "t",
            r#"{"a":"1"}"#,
            &serde_json::json!({"raw": {}, "message": null}),
        );
        let parsed: Value = serde_json::from_str(&entry).unwrap();
        assert_eq!(parsed["type"], "hedera-agent-kit:audit-entry");
        let (memo, chunks) = hcs1_file(&entry);
        assert_eq!(
            memo,
            format!("{}:brotli:base64", hex(&Sha256::digest(entry.as_bytes())))
        );
        let joined: String = chunks
            .iter()
            .map(|c| {
                serde_json::from_str::<Value>(c).unwrap()["c"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        let b64 = joined
            .strip_prefix("data:application/json;base64,")
            .unwrap();
        let compressed = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        let mut out = Vec::new();
        brotli::BrotliDecompress(&mut compressed.as_slice(), &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), entry);
        let big = "x".repeat(5000);
        let (_, chunks) = hcs1_file(&big);
        assert!(chunks.iter().all(|c| c.len() <= 1024));
    }
}
