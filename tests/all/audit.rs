//! The audit hooks of the plugin library on the local network, read back through the mirror:
//! the HCS audit trail's messages and the HOL audit trail's HCS-1 files registered on an HCS-2
//! session topic, for successful, blocked and failed calls (the 0.1.1 failure notification);
//! their refusal of return-bytes modes; a missing capability never failing the call. Also: a
//! plugin built against contract 0.1.0 still loads and runs.

use base64::Engine;
use hak_host::{AgentContext, AgentMode, Host};
use hak_tests::*;
use serde_json::{json, Value};
use sha2::Digest;

/// A host on the network of `base`, with the given plugin entries.
fn host_on(base: &Host, plugins: &str) -> Host {
    start(&format!("{}{plugins}", same_network(base))).0
}

fn topic(base: &Host, memo: &str) -> String {
    let out = base
        .default_session()
        .call("create_topic_tool", &json!({"topicMemo": memo}).to_string())
        .unwrap();
    out["raw"]["topicId"].as_str().unwrap().to_owned()
}

/// The topic's messages as text, in order.
fn messages(host: &Host, topic: &str) -> Vec<String> {
    let page = host
        .mirror_get(&format!("/topics/{topic}/messages"))
        .unwrap();
    page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(m["message"].as_str().unwrap())
                .unwrap();
            String::from_utf8(bytes).unwrap()
        })
        .collect()
}

const TWO: &str =
    r#"{"transfers":[{"accountId":"0.0.1002","amount":1},{"accountId":"0.0.1003","amount":1}]}"#;
const ONE: &str =
    r#"{"transfers":[{"accountId":"0.0.1002","amount":1}],"transactionMemo":"audit me"}"#;
const NOWHERE: &str = r#"{"transfers":[{"accountId":"0.0.999999","amount":1}]}"#;

fn max_one() -> String {
    plugin_entry(
        "max",
        "rust/max-recipients",
        "config = { maxRecipients = 1 }",
    )
}

#[test]
fn hcs_audit_trail_records_successes_blocks_and_failures() {
    let base = start(LOCAL).0;
    let trail = topic(&base, "audit");
    let hook = plugin_entry(
        "audit",
        "rust/hcs-audit-trail",
        &format!("config = {{ relevantTools = [\"transfer_hbar_tool\"], topicId = \"{trail}\" }}\ncapabilities = [\"hedera:submit-topic-message\"]\n[plugins.limits]\ndeadline_ms = 5000"),
    );
    let host = host_on(&base, &format!("{}{hook}", max_one()));
    let mut s = host.default_session();
    let out = s.call("transfer_hbar_tool", ONE).unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    let tx = out["raw"]["transactionId"].as_str().unwrap().to_owned();
    let blocked = s.call("transfer_hbar_tool", TWO).unwrap();
    assert_eq!(blocked["raw"]["errorCode"], "POLICY_BLOCKED", "{blocked}");
    let failed = s.call("transfer_hbar_tool", NOWHERE).unwrap();
    assert_eq!(failed["raw"]["status"], "ERROR", "{failed}");
    // Not relevant: not recorded.
    s.call("get_hbar_balance_query_tool", "{}").unwrap();

    let got = messages(&base, &trail);
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(got[0].starts_with("Agent executed tool transfer_hbar_tool on with params {\n  \"hbarTransfers\": [\n    {\n      \"accountId\": \"0.0.1002\",\n      \"amount\": \"100000000\"\n    },"), "{}", got[0]);
    assert!(
        got[0].contains("\"transactionMemo\": \"audit me\""),
        "{}",
        got[0]
    );
    assert!(got[0].ends_with(&format!("}}.\n    Transaction ID: {tx}\n    Transaction Status: SUCCESS\n    Token ID: N/A\n    Topic ID: N/A \n    Schedule ID: N/A\n    Account ID: N/A")), "{}", got[0]);
    assert!(
        got[1].starts_with("Agent tool transfer_hbar_tool was blocked with params {"),
        "{}",
        got[1]
    );
    assert!(
        got[1].contains("Action transfer_hbar_tool blocked by policy: Max Recipients Policy"),
        "{}",
        got[1]
    );
    assert!(got[1].ends_with("Error Code: POLICY_BLOCKED"), "{}", got[1]);
    assert!(
        got[2].starts_with("Agent tool transfer_hbar_tool failed with params {"),
        "{}",
        got[2]
    );
    assert!(
        got[2].contains(&format!(
            "Error Code: {}",
            failed["raw"]["errorCode"].as_str().unwrap()
        )),
        "{}",
        got[2]
    );

    // Return-bytes modes are refused before the tool runs, and nothing is recorded.
    let mut rb = host.session(AgentContext {
        account_id: Some(hedera::AccountId::new(0, 0, 1001)),
        mode: AgentMode::ReturnBytes,
    });
    let out = rb.call("transfer_hbar_tool", ONE).unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Transfer HBAR: Unsupported hook: HcsAuditTrailHook does not support AgentMode.RETURN_BYTES or AgentMode.CUSTOM_RETURN_BYTES. Stopping the agent execution before tool transfer_hbar_tool is executed."
    );
    assert_eq!(messages(&base, &trail).len(), 3);
}

#[test]
fn an_audit_hook_without_its_capability_never_fails_the_call() {
    let base = start(LOCAL).0;
    let trail = topic(&base, "audit");
    let hook = plugin_entry(
        "audit",
        "rust/hcs-audit-trail",
        &format!("config = {{ relevantTools = [\"transfer_hbar_tool\"], topicId = \"{trail}\" }}"),
    );
    let (host, logs) = start(&format!("{}{hook}", same_network(&base)));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ONE)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    let logged = logs.take().join("\n");
    assert!(
        logged.contains("HcsAuditTrailHook: Failed to log audit entry for tool transfer_hbar_tool: capability hedera:submit-topic-message is not granted to plugin audit"),
        "{logged}"
    );
    assert!(messages(&base, &trail).is_empty());
}

/// Read an HCS-1 file back: (topic memo, content).
fn hcs1_file(host: &Host, topic: &str) -> (String, String) {
    let memo = host.mirror_get(&format!("/topics/{topic}")).unwrap()["memo"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut chunks: Vec<(u64, String)> = messages(host, topic)
        .iter()
        .map(|m| {
            let v: Value = serde_json::from_str(m).unwrap();
            (
                v["o"].as_u64().unwrap(),
                v["c"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    chunks.sort();
    let uri: String = chunks.into_iter().map(|(_, c)| c).collect();
    let b64 = uri.strip_prefix("data:application/json;base64,").unwrap();
    let compressed = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    let mut content = Vec::new();
    brotli::BrotliDecompress(&mut compressed.as_slice(), &mut content).unwrap();
    (memo, String::from_utf8(content).unwrap())
}

#[test]
fn hol_audit_trail_writes_hcs1_files_registered_on_the_session() {
    let base = start(LOCAL).0;
    let session = topic(&base, "hcs-2:0:0");
    let hook = plugin_entry(
        "hol",
        "rust/hol-audit-trail",
        &format!("config = {{ relevantTools = [\"transfer_hbar_tool\"], sessionId = \"{session}\" }}\ncapabilities = [\"hedera:create-topic\", \"hedera:submit-topic-message\"]\n[plugins.limits]\ndeadline_ms = 5000"),
    );
    // Compressing and encoding each file in the guest: more than the default 100 ms on a
    // loaded machine now and then; the deadline is not what this is about.
    let host = host_on(&base, &format!("{}{hook}", max_one()));
    let mut s = host.default_session();
    let out = s.call("transfer_hbar_tool", ONE).unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    let blocked = s.call("transfer_hbar_tool", TWO).unwrap();
    assert_eq!(blocked["raw"]["errorCode"], "POLICY_BLOCKED");

    let registered = messages(&base, &session);
    assert_eq!(registered.len(), 2, "{registered:?}");
    let mut entries = Vec::new();
    for text in &registered {
        let register: Value = serde_json::from_str(text).unwrap();
        assert_eq!(register["p"], "hcs-2");
        assert_eq!(register["op"], "register");
        let file = register["t_id"].as_str().unwrap();
        let (memo, content) = hcs1_file(&base, file);
        let hash = hex::encode(sha2::Sha256::digest(content.as_bytes()));
        assert_eq!(memo, format!("{hash}:brotli:base64"));
        entries.push(serde_json::from_str::<Value>(&content).unwrap());
    }
    let ok = &entries[0];
    assert_eq!(ok["type"], "hedera-agent-kit:audit-entry");
    assert_eq!(ok["version"], "1.0");
    assert_eq!(ok["tool"], "transfer_hbar_tool");
    assert_eq!(ok["params"]["transactionMemo"], "audit me");
    assert_eq!(
        ok["result"]["raw"]["transactionId"],
        out["raw"]["transactionId"]
    );
    assert_eq!(ok["result"]["message"], out["humanMessage"]);
    assert!(ok["timestamp"].as_str().unwrap().ends_with('Z'));
    let no = &entries[1];
    assert_eq!(no["result"]["outcome"], "blocked");
    assert_eq!(no["result"]["raw"]["errorCode"], "POLICY_BLOCKED");
    assert_eq!(no["result"]["message"], blocked["raw"]["error"]);
    assert_eq!(no["params"]["hbarTransfers"].as_array().unwrap().len(), 3);

    let err = try_start(&format!(
        "{RETURN_BYTES_HEADER}{}",
        plugin_entry(
            "hol",
            "rust/hol-audit-trail",
            "config = { relevantTools = [\"x\"], sessionId = \"topic\" }"
        )
    ))
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.contains("sessionId must be a valid Hedera topic ID in format 0.0.xxx"),
        "{err}"
    );
}

#[test]
fn a_plugin_built_for_contract_0_1_0_still_loads_and_decides() {
    let entry = plugin_entry("old", "fixtures/v0-1-0", "");
    let (host, _) = start(&format!("{RETURN_BYTES_HEADER}{entry}"));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ONE)
        .unwrap();
    assert_eq!(
        out["raw"]["policyBlock"]["reason"], "0.1.0 says no",
        "{out}"
    );
    // A failed call: the old plugin has no `events` export and is simply not notified.
    let out = host
        .default_session()
        .call("transfer_hbar_tool", "{}")
        .unwrap();
    assert_eq!(out["raw"]["status"], "ERROR");
}

#[test]
fn a_plugin_built_for_contract_0_1_1_still_loads_decides_and_hears_failures() {
    let entry = plugin_entry("older", "fixtures/v0-1-1", "");
    let (host, logs) = start(&format!("{RETURN_BYTES_HEADER}{entry}"));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ONE)
        .unwrap();
    assert_eq!(
        out["raw"]["policyBlock"]["reason"], "0.1.1 says no",
        "{out}"
    );
    assert_eq!(logs.take(), ["0.1.1 heard the failure"]);
}
