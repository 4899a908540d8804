//! Autonomous mode end to end on the local network inside the host: the example policies
//! allow and block real transfers, results are read back through the mirror API, receipt
//! failures surface as the kit surfaces them, and a granted capability writes to a topic.

use hak_tests::*;
use hedera::{AccountId, Client, TopicCreateTransaction};
use std::collections::HashMap;

/// One HBAR to a genesis account that exists on the local network.
const ONE_HBAR_TO_1002: &str = r#"{"transfers":[{"accountId":"0.0.1002","amount":1}]}"#;

fn example_policies() -> String {
    format!(
        "{LOCAL}{}{}",
        plugin_entry(
            "reject-balance-queries",
            "rust/reject-tool",
            "config = { relevantTools = [\"get_account_query_tool\"] }"
        ),
        plugin_entry(
            "max-recipients",
            "rust/max-recipients",
            "config = { maxRecipients = 2 }"
        ),
    )
}

fn balance(host: &hak_host::Host, account: &str) -> i64 {
    let account = host.mirror_get(&format!("/accounts/{account}")).unwrap();
    account["balance"]["balance"].as_i64().unwrap()
}

#[test]
fn an_allowed_transfer_executes_and_the_mirror_shows_the_new_balance() {
    let (host, _) = start(&example_policies());
    let before = balance(&host, "0.0.1002");
    let out = host
        .default_session()
        .call("transfer_hbar_tool", r#"{"transfers":[{"accountId":"0.0.1002","amount":2.5}],"transactionMemo":"autonomous"}"#)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    let tx_id = out["raw"]["transactionId"].as_str().unwrap();
    assert!(tx_id.starts_with("0.0.1001@"));
    assert_eq!(
        out["humanMessage"],
        format!("HBAR successfully transferred.\nTransaction ID: {tx_id}")
    );
    assert_eq!(balance(&host, "0.0.1002") - before, 250_000_000);
    let tx = host.mirror_get(&format!("/transactions/{tx_id}")).unwrap();
    assert_eq!(tx["transactions"][0]["result"], "SUCCESS");
    assert_eq!(tx["transactions"][0]["memo_base64"], "YXV0b25vbW91cw==");
}

#[test]
fn a_blocked_transfer_never_reaches_the_network() {
    let (host, _) = start(&example_policies());
    let before = host
        .local_network()
        .unwrap()
        .node
        .ledger
        .lock()
        .unwrap()
        .records
        .len();
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(3))
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED");
    let after = host
        .local_network()
        .unwrap()
        .node
        .ledger
        .lock()
        .unwrap()
        .records
        .len();
    assert_eq!(before, after, "no transaction was submitted");
}

#[test]
fn a_query_tool_reads_the_mirror_and_plugins_see_its_type() {
    let manifest = format!(
        "{}{}",
        example_policies(),
        plugin_entry(
            "rec",
            "fixtures/recorder",
            "config = { tag = \"Q\", stages = [\"pre-tool-execution\"], hooksOnly = true }"
        )
    );
    let (host, logs) = start(&manifest);
    let out = host
        .default_session()
        .call("get_hbar_balance_query_tool", r#"{"accountId":"0.0.1003"}"#)
        .unwrap();
    assert_eq!(
        out["raw"],
        serde_json::json!({"accountId": "0.0.1003", "hbarBalance": "1000", "status": "SUCCESS"})
    );
    assert_eq!(
        out["humanMessage"],
        "Account 0.0.1003 has a balance of 1000 HBAR"
    );
    assert_eq!(
        logs.take(),
        ["Q hook pre-tool-execution get_hbar_balance_query_tool query"]
    );
    let out = host
        .default_session()
        .call(
            "get_hbar_balance_query_tool",
            r#"{"accountId":"0.0.424242"}"#,
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Get HBAR Balance: Failed to fetch hbar balance for 0.0.424242: Error: Failed to fetch account 0.0.424242: 404 Not Found"
    );
}

#[test]
fn a_receipt_failure_carries_the_status_and_transaction_id() {
    let (host, _) = start(&example_policies());
    // 0.0.1002 pays, but only the operator signs.
    let out = host
        .default_session()
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.1003","amount":1}],"sourceAccountId":"0.0.1002"}"#,
        )
        .unwrap();
    let raw = &out["raw"];
    assert_eq!(raw["status"], "ERROR");
    assert_eq!(raw["errorCode"], "INVALID_SIGNATURE");
    let tx_id = raw["transactionId"].as_str().unwrap();
    // As the kit's `BaseTransactionTool.handleError`: the SDK's own message in `raw.error`,
    // the tool named in `humanMessage`.
    let sdk = format!("receipt for transaction {tx_id} contained error status INVALID_SIGNATURE");
    assert_eq!(raw["error"], sdk.as_str());
    assert_eq!(
        out["humanMessage"],
        format!("Failed to execute Transfer HBAR: {sdk}")
    );
}

#[test]
fn a_granted_capability_submits_to_a_topic_and_an_ungranted_one_cannot() {
    // Create the audit topic with the SDK, then load a plugin granted the capability.
    let (host, logs) = start(&format!(
        "{LOCAL}{}",
        plugin_entry(
            "auditor",
            "fixtures/recorder",
            "capabilities = [\"hedera:submit-topic-message\"]\nconfig = { tag = \"A\", stages = [\"post-secondary-action\"], hooksOnly = true, auditTopic = \"0.0.1006\" }\n[plugins.limits]\ndeadline_ms = 5000",
        )
    ));
    let emu = host.local_network().unwrap();
    let client = Client::for_network(HashMap::from([(
        emu.grpc_addr.to_string(),
        AccountId::new(0, 0, 3),
    )]))
    .unwrap();
    let (id, key) = emu.operator();
    client.set_operator(id, key);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let topic = runtime.block_on(async {
        TopicCreateTransaction::new()
            .execute(&client)
            .await
            .unwrap()
            .get_receipt(&client)
            .await
            .unwrap()
            .topic_id
            .unwrap()
    });
    assert_eq!(topic.to_string(), "0.0.1006");
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ONE_HBAR_TO_1002)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(logs
        .take()
        .iter()
        .any(|l| l.starts_with("audit submitted: 0.0.1001@")));
    let messages = host.mirror_get("/topics/0.0.1006/messages").unwrap();
    let message = messages["messages"][0]["message"].as_str().unwrap();
    assert_eq!(
        message, "QSBhdWRpdGVkIHRyYW5zZmVyX2hiYXJfdG9vbA==",
        "base64 of 'A audited transfer_hbar_tool'"
    );

    // The same plugin without the grant gets an error, and the tool call is unaffected.
    let (host, logs) = start(&format!(
        "{LOCAL}{}",
        plugin_entry("auditor", "fixtures/recorder", "config = { tag = \"A\", stages = [\"post-secondary-action\"], hooksOnly = true, auditTopic = \"0.0.1006\" }")
    ));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ONE_HBAR_TO_1002)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS");
    let lines: Vec<String> = logs.take();
    assert!(lines.contains(&"audit failed: capability hedera:submit-topic-message is not granted to plugin auditor".to_owned()), "{lines:?}");
}

#[test]
fn a_scheduled_transfer_creates_a_schedule_that_executes_when_signed() {
    let (host, _) = start(&example_policies());
    // The operator both pays and is debited, so the schedule executes at once.
    let params = r#"{"transfers":[{"accountId":"0.0.1003","amount":1}],"schedulingParams":{"isScheduled":true,"adminKey":true}}"#;
    let out = host
        .default_session()
        .call("transfer_hbar_tool", params)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    let schedule = out["raw"]["scheduleId"].as_str().unwrap().to_owned();
    assert_eq!(
        out["humanMessage"],
        format!("Scheduled HBAR transfer created successfully.\nTransaction ID: {}\nSchedule ID: {schedule}", out["raw"]["transactionId"].as_str().unwrap())
    );
    let info = host.mirror_get(&format!("/schedules/{schedule}")).unwrap();
    assert!(info["executed_timestamp"].is_string(), "{info}");
    assert_eq!(info["admin_key"]["_type"], "ED25519");
}
