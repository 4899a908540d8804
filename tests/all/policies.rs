//! The example policies through the real host, as the kit's integration tests use them
//! (agent-kit-semantics §5.4): messages exactly, configs validated at load.

use hak_tests::*;

fn max_recipients(config: &str) -> String {
    format!(
        "{RETURN_BYTES_HEADER}{}",
        plugin_entry(
            "max-recipients",
            "rust/max-recipients",
            &format!("[plugins.config]\n{config}")
        )
    )
}

#[test]
fn max_recipients_blocks_two_recipients_with_max_one() {
    let (host, _) = start(&max_recipients("maxRecipients = 1"));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(2))
        .unwrap();
    let error = out["raw"]["error"].as_str().unwrap();
    assert_eq!(
        error,
        "Failed to execute Transfer HBAR: Action transfer_hbar_tool blocked by policy: Max Recipients Policy (Limits the maximum number of recipients to 1)"
    );
    assert!(error.contains("blocked by policy: Max Recipients Policy"));
    assert_eq!(out["raw"]["policyBlock"]["details"]["recipientCount"], 2);
    assert_eq!(out["raw"]["policyBlock"]["details"]["maxRecipients"], 1);
}

#[test]
fn a_block_names_its_manifest_entry_and_explains_itself_when_asked() {
    let manifest = max_recipients("maxRecipients = 1");
    let (host, _) = start(&manifest);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(2))
        .unwrap();
    let block = &out["raw"]["policyBlock"];
    assert_eq!(block["plugin"], "max-recipients", "{out}");
    let reason = block["reason"].as_str().unwrap();
    assert!(!reason.is_empty(), "{out}");
    // Off by default: the kit's exact text.
    assert_eq!(out["humanMessage"], out["raw"]["error"]);
    assert!(!out["humanMessage"].as_str().unwrap().contains(reason));

    let explaining = manifest.replacen("[context]\n", "[context]\nexplain_blocks = true\n", 1);
    assert_ne!(explaining, manifest, "the header has a [context] section");
    let (host, _) = start(&explaining);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(2))
        .unwrap();
    let error = out["raw"]["error"].as_str().unwrap();
    assert_eq!(
        out["humanMessage"].as_str().unwrap(),
        format!("{error} Reason: {reason}"),
        "{out}"
    );
}

#[test]
fn max_recipients_allows_one_recipient_with_max_ten_and_ignores_the_sender_debit() {
    let (host, _) = start(&max_recipients("maxRecipients = 10"));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS");
    assert!(out["raw"].get("error").is_none());
    // Exactly at the limit passes too (the sender's negative entry is not a recipient).
    let (host, _) = start(&max_recipients("maxRecipients = 2"));
    assert_eq!(
        host.default_session()
            .call("transfer_hbar_tool", &transfer(2))
            .unwrap()["raw"]["status"],
        "SUCCESS"
    );
}

#[test]
fn max_recipients_custom_count_overrides_the_builtin_rule() {
    let (host, _) = start(&max_recipients(
        "maxRecipients = 5\ncustomCounts = { transfer_hbar_tool = { count = 99 } }",
    ));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(out["raw"]["policyBlock"]["details"]["recipientCount"], 99);
    let rule =
        "maxRecipients = 1\ncustomCounts = { transfer_hbar_tool = { field = \"hbarTransfers\" } }";
    let (host, _) = start(&max_recipients(rule));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    // Counting every entry (no amount filter) includes the sender's debit: 2 > 1.
    assert_eq!(out["raw"]["policyBlock"]["details"]["recipientCount"], 2);
}

#[test]
fn max_recipients_bad_configs_fail_at_load_naming_the_plugin() {
    for (config, needle) in [
        (
            "maxRecipients = 1.5",
            "'maxRecipients' must be a positive integer. Received: 1.5",
        ),
        (
            "maxRecipients = 0",
            "'maxRecipients' must be a positive integer. Received: 0",
        ),
        (
            "maxRecipients = -1",
            "'maxRecipients' must be a positive integer. Received: -1",
        ),
        (
            "maxRecipients = \"5\"",
            "'maxRecipients' must be a positive integer. Received: \"5\"",
        ),
        ("maxRecipient = 5", "unknown field `maxRecipient`"),
        (
            "maxRecipients = 2\ncustomCounts = { t = {} }",
            "customCounts.t needs exactly one of 'field' or 'count'",
        ),
    ] {
        let err = match try_start(&max_recipients(config)) {
            Ok(_) => panic!("{config} should be refused"),
            Err(e) => e.to_string(),
        };
        assert!(
            err.starts_with("plugin max-recipients: describe rejected its config"),
            "{err}"
        );
        assert!(err.contains(needle), "{config}: {err}");
    }
}

#[test]
fn max_recipients_lists_additional_tools_as_relevant() {
    let (host, _) = start(&max_recipients(
        "maxRecipients = 1\nadditionalTools = [\"my_custom_tool\"]",
    ));
    let tools = &host.plugins()[0].description.relevant_tools;
    assert!(tools.iter().any(|t| t == "my_custom_tool"));
    assert!(tools.iter().any(|t| t == "transfer_hbar_tool"));
    assert_eq!(tools.len(), 8);
}

#[test]
fn reject_tool_blocks_listed_tools_before_anything_runs_and_ignores_others() {
    let manifest = |tools: &str| {
        format!(
            "{RETURN_BYTES_HEADER}{}",
            plugin_entry(
                "reject",
                "rust/reject-tool",
                &format!("[plugins.config]\nrelevantTools = {tools}")
            )
        )
    };
    let (host, logs) = start(&manifest("[\"transfer_hbar_tool\"]"));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    let expected = "Failed to execute Transfer HBAR: Action transfer_hbar_tool blocked by policy: Reject Tool Call (Stops agent from calling predefined tools)";
    assert_eq!(
        out["raw"],
        serde_json::json!({
            "status": "ERROR",
            "error": expected,
            "errorCode": "POLICY_BLOCKED",
            "policyBlock": {
                "code": "POLICY_BLOCKED", "policyName": "Reject Tool Call", "plugin": "reject", "toolMethod": "transfer_hbar_tool",
                "stage": "pre_tool_execution", "description": "Stops agent from calling predefined tools",
                "reason": "tool transfer_hbar_tool is not allowed", "reasonCode": null, "details": null
            }
        })
    );
    assert_eq!(out["humanMessage"], expected);
    assert_eq!(
        logs.take(),
        ["RejectToolPolicy: tool call rejected - tool not allowed"]
    );

    let (host, logs) = start(&manifest("[\"get_hbar_balance_query_tool\"]"));
    assert_eq!(
        host.default_session()
            .call("transfer_hbar_tool", &transfer(1))
            .unwrap()["raw"]["status"],
        "SUCCESS"
    );
    assert!(logs.take().is_empty());
}

#[test]
fn reject_tool_with_wildcard_rejects_everything() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        plugin_entry(
            "reject",
            "rust/reject-tool",
            "[plugins.config]\nrelevantTools = [\"*\"]"
        )
    );
    let (host, _) = start(&manifest);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED");
}
