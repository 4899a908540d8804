//! The kit's lifecycle and dispatch behaviours (agent-kit-semantics §1.4, §5.1), proven with a
//! recording plugin: stage order, policy-before-hook, manifest order, `'*'`, irrelevant tools
//! skipped, tool type, abort on block / error, replacements, per-context state.

use hak_host::{AgentContext, AgentMode};
use hak_tests::*;
use hedera::AccountId;
use serde_json::Value;

fn recorder(tag: &str, extra: &str) -> String {
    plugin_entry(
        &format!("rec-{tag}"),
        "fixtures/recorder",
        &format!("[plugins.config]\ntag = {tag:?}\n{extra}"),
    )
}

#[test]
fn stages_run_in_order_policy_before_hook_and_plugins_in_manifest_order() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}{}",
        recorder("A", ""),
        recorder("B", "")
    );
    let (host, logs) = start(&manifest);
    let result = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(result["raw"]["status"], "SUCCESS", "{result}");
    let mut expected = Vec::new();
    for stage in [
        "pre-tool-execution",
        "post-params-normalization",
        "post-core-action",
        "post-secondary-action",
    ] {
        for tag in ["A", "B"] {
            for kind in ["policy", "hook"] {
                expected.push(format!(
                    "{tag} {kind} {stage} transfer_hbar_tool transaction"
                ));
            }
        }
    }
    assert_eq!(logs.take(), expected);
}

#[test]
fn wildcard_matches_every_tool_and_irrelevant_tools_are_skipped() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}{}",
        recorder(
            "Star",
            "relevantTools = [\"*\"]\nstages = [\"pre-tool-execution\"]"
        ),
        recorder("Other", "relevantTools = [\"get_hbar_balance_query_tool\"]"),
    );
    let (host, logs) = start(&manifest);
    let result = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(result["raw"]["status"], "SUCCESS");
    assert_eq!(
        logs.take(),
        [
            "Star policy pre-tool-execution transfer_hbar_tool transaction",
            "Star hook pre-tool-execution transfer_hbar_tool transaction"
        ]
    );
}

#[test]
fn a_block_stops_the_call_with_the_kits_message_and_later_stages_never_run() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}{}",
        recorder("A", "blockAt = \"post-params-normalization\""),
        recorder("B", ""),
    );
    let (host, logs) = start(&manifest);
    let result = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    let expected =
        "Failed to execute Transfer HBAR: Action transfer_hbar_tool blocked by policy: Recorder A";
    assert_eq!(result["raw"]["status"], "ERROR");
    assert_eq!(result["raw"]["error"], expected);
    assert_eq!(result["humanMessage"], expected);
    assert_eq!(result["raw"]["errorCode"], "POLICY_BLOCKED");
    let block = &result["raw"]["policyBlock"];
    assert_eq!(block["code"], "POLICY_BLOCKED");
    assert_eq!(block["policyName"], "Recorder A");
    assert_eq!(block["toolMethod"], "transfer_hbar_tool");
    assert_eq!(block["stage"], "post_params_normalization");
    assert_eq!(block["reason"], "A blocks at post-params-normalization");
    let seen = logs.take();
    assert_eq!(
        seen.last().unwrap(),
        "A policy post-params-normalization transfer_hbar_tool transaction"
    );
    assert!(
        !seen
            .iter()
            .any(|l| l.starts_with("B") && !l.contains("pre-tool-execution")),
        "{seen:?}"
    );
}

#[test]
fn a_plugin_error_fails_the_call_like_a_throw() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        recorder("A", "failAt = \"post-core-action\"")
    );
    let (host, _) = start(&manifest);
    let result = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(
        result["raw"]["error"],
        "Failed to execute Transfer HBAR: A refuses at post-core-action"
    );
    assert!(result["raw"].get("errorCode").is_none());
}

#[test]
fn the_post_core_stage_sees_a_summary_of_the_built_transaction() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        plugin_entry("peek", "fixtures/recorder", "[plugins.config]\ntag = \"P\"\nstages = [\"post-core-action\"]\nhooksOnly = true\nreplaceAt = \"none\"")
    );
    let (host, logs) = start(&manifest);
    let result = host
        .default_session()
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.5","amount":2}],"transactionMemo":"m"}"#,
        )
        .unwrap();
    assert_eq!(result["raw"]["status"], "SUCCESS");
    assert_eq!(
        logs.take(),
        ["P hook post-core-action transfer_hbar_tool transaction"]
    );
}

#[test]
fn hooks_granted_replacement_may_replace_raw_and_normalised_params_but_not_the_result_raw() {
    let raw = r#"{"transfers":[{"accountId":"0.0.7","amount":3}]}"#;
    let normalised = r#"{"hbarTransfers":[{"accountId":"0.0.8","amount":"5"},{"accountId":"0.0.1001","amount":"-5"}]}"#;
    let result = r#"{"raw":{"status":"SUCCESS","note":"rewritten"},"humanMessage":"rewritten"}"#;
    for (stage, replacement, check) in [
        ("pre-tool-execution", raw, "0.0.7"),
        ("post-params-normalization", normalised, "0.0.8"),
        ("post-secondary-action", result, "changes raw"),
    ] {
        let extra =
            format!("hooksOnly = true\nreplaceAt = {stage:?}\nreplacement = {replacement:?}");
        let entry = recorder("R", &extra).replace(
            "[plugins.config]",
            "capabilities = [\"params:replace\", \"result:replace\"]\n[plugins.config]",
        );
        let (host, _) = start(&format!("{RETURN_BYTES_HEADER}{entry}"));
        let out = host
            .default_session()
            .call("transfer_hbar_tool", &transfer(1))
            .unwrap();
        if check == "changes raw" {
            // A result hook may reword humanMessage only; this one rewrote raw.
            assert_eq!(out["raw"]["errorCode"], "PLUGIN_FAILED", "{out}");
            assert!(
                out["raw"]["error"].as_str().unwrap().contains(check),
                "{out}"
            );
            continue;
        }
        assert_eq!(out["raw"]["status"], "SUCCESS", "{stage}: {out}");
        let tx = decode_bytes(&out);
        let transfer: hedera::TransferTransaction = tx.downcast().unwrap();
        let recipients: Vec<String> = transfer
            .get_hbar_transfers()
            .into_iter()
            .filter(|(_, amount)| amount.to_tinybars() > 0)
            .map(|(id, _)| id.to_string())
            .collect();
        assert_eq!(recipients, [check], "{stage}");
    }
}

#[test]
fn tool_type_reaches_plugins_and_a_read_only_policy_blocks_transactions() {
    // The kit's ReadOnlyPolicy pattern: relevant to '*', blocks when toolType is not query.
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        recorder(
            "RO",
            "stages = [\"pre-tool-execution\"]\nblockAt = \"pre-tool-execution\""
        )
    );
    let (host, logs) = start(&manifest);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(out["raw"]["status"], "ERROR");
    assert!(out["raw"]["error"]
        .as_str()
        .unwrap()
        .contains("blocked by policy: Recorder RO"));
    assert_eq!(
        logs.take(),
        ["RO policy pre-tool-execution transfer_hbar_tool transaction"]
    );
}

#[test]
fn scratchpad_state_accumulates_within_a_context_and_never_crosses_contexts() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        recorder(
            "C",
            "stages = [\"pre-tool-execution\"]\nhooksOnly = false\ncounter = 3"
        )
    );
    let (host, _) = start(&manifest);
    let alice = host.default_context().clone();
    let bob = AgentContext {
        account_id: Some(AccountId::new(0, 0, 1002)),
        mode: AgentMode::ReturnBytes,
    };
    let status = |v: Value| v["raw"]["status"].as_str().unwrap().to_owned();

    let mut session = host.session(alice.clone());
    assert_eq!(
        status(session.call("transfer_hbar_tool", &transfer(1)).unwrap()),
        "SUCCESS"
    );
    assert_eq!(
        status(session.call("transfer_hbar_tool", &transfer(1)).unwrap()),
        "SUCCESS"
    );
    // Bob's context starts from zero.
    let mut other = host.session(bob);
    assert_eq!(
        status(other.call("transfer_hbar_tool", &transfer(1)).unwrap()),
        "SUCCESS"
    );
    // A new session for Alice's context continues Alice's count: the third call blocks.
    let third = host
        .session(alice)
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(
        third["raw"]["policyBlock"]["details"]["count"], 3,
        "{third}"
    );
    assert_eq!(
        status(other.call("transfer_hbar_tool", &transfer(1)).unwrap()),
        "SUCCESS"
    );
}

#[test]
fn unknown_tools_and_invalid_json_are_reported() {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let err = host
        .default_session()
        .call("no_such_tool", "{}")
        .unwrap_err();
    assert!(err.to_string().contains("no_such_tool"));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", "{not json")
        .unwrap();
    assert!(out["raw"]["error"].as_str().unwrap().starts_with(
        "Failed to execute Transfer HBAR: Invalid parameters: the params are not valid JSON"
    ));
}

#[test]
fn stage_params_follow_the_documented_json_shapes() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        recorder("E", "hooksOnly = true\nechoParams = true")
    );
    let (host, logs) = start(&manifest);
    let raw = r#"{"transfers":[{"accountId":"0.0.2001","amount":1.5}],"transactionMemo":"rent"}"#;
    let out = host
        .default_session()
        .call("transfer_hbar_tool", raw)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS");
    let params: Vec<Value> = logs
        .take()
        .iter()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(params.len(), 4, "one params object per stage");
    let context =
        serde_json::json!({"accountId": "0.0.1001", "mode": "returnBytes", "network": "testnet"});
    let raw: Value = serde_json::from_str(raw).unwrap();
    let normalised = serde_json::json!({
        "hbarTransfers": [{"accountId": "0.0.2001", "amount": "150000000"}, {"accountId": "0.0.1001", "amount": "-150000000"}],
        "transactionMemo": "rent",
        "schedulingParams": {"isScheduled": false}
    });
    // Stage 1: context + rawParams only.
    assert_eq!(
        params[0],
        serde_json::json!({"context": context, "rawParams": raw})
    );
    // Stage 3 adds normalisedParams (amounts as tinybar strings, sender debit last).
    assert_eq!(
        params[1],
        serde_json::json!({"context": context, "rawParams": raw, "normalisedParams": normalised})
    );
    // Stage 5 adds the unsigned transaction's summary.
    assert_eq!(
        params[2]["coreActionResult"],
        serde_json::json!({
            "type": "TransferTransaction", "memo": "rent", "maxTransactionFee": "100000000",
            "nodeAccountIds": ["0.0.3"], "hbarTransfers": normalised["hbarTransfers"]
        })
    );
    // Stage 7 adds the result the agent receives.
    assert_eq!(params[3]["toolResult"], out);
    assert_eq!(params[3]["coreActionResult"], params[2]["coreActionResult"]);
}

/// Contract 0.2.1 `inputs`: a plugin gets only the parts of the stage input it says it reads
/// (params `""`, no facts for the others), a plugin that says nothing gets everything, and a
/// policy that reads neither still blocks; the approver and the other plugins are unaffected.
#[test]
fn each_plugin_receives_only_the_parts_of_the_stage_input_it_reads() {
    let stage = "stages = [\"post-params-normalization\"]\nechoReceived = true\n";
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}{}{}{}",
        recorder("All", stage),
        recorder("Facts", &format!("{stage}reads = [\"facts\"]")),
        recorder("Params", &format!("{stage}reads = [\"params\"]")),
        recorder("None", &format!("{stage}reads = []")),
    );
    let (host, logs) = start(&manifest);
    let result = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(result["raw"]["status"], "SUCCESS", "{result}");
    let received: Vec<String> = logs
        .take()
        .into_iter()
        .filter(|l| l.contains(" received "))
        .collect();
    // Policy then hook, each plugin in turn.
    let line = |tag: &str, params: bool, facts: &str| {
        let bytes = if params { "full" } else { "0" };
        format!("{tag} received params={bytes} facts={facts}")
    };
    let normalise = |l: &String| {
        let (head, rest) = l.split_once("params=").unwrap();
        let (bytes, tail) = rest.split_once(' ').unwrap();
        let bytes = if bytes == "0" { "0" } else { "full" };
        format!("{head}params={bytes} {tail}")
    };
    let got: Vec<String> = received.iter().map(normalise).collect();
    let mut expected = Vec::new();
    for (tag, params, facts) in [
        ("All", true, "1"),
        ("Facts", false, "1"),
        ("Params", true, "none"),
        ("None", false, "none"),
    ] {
        expected.push(line(tag, params, facts));
        expected.push(line(tag, params, facts));
    }
    assert_eq!(got, expected, "{received:?}");
    assert!(
        received[0]
            .split("params=")
            .nth(1)
            .unwrap()
            .starts_with(|c: char| c != '0'),
        "{received:?}"
    );

    // One that reads nothing still decides (it blocks on the method alone).
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        recorder(
            "Blind",
            &format!("{stage}reads = []\nblockAt = \"post-params-normalization\"")
        ),
    );
    let (host, _logs) = start(&manifest);
    let result = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(result["raw"]["errorCode"], "POLICY_BLOCKED", "{result}");
}

/// A policy that reads only the params (or nothing) and asks for approval: the host states
/// the call's facts for the approver then, though no plugin of the stage read them (they are
/// stated lazily, only for a plugin that reads them or an approver who is shown them).
#[test]
fn an_approver_is_shown_the_facts_when_the_asking_policy_reads_none() {
    for reads in ["[\"params\"]", "[]"] {
        let manifest = format!(
            "{RETURN_BYTES_HEADER}{}",
            recorder(
                "Ask",
                &format!(
                    "stages = [\"post-params-normalization\"]\nreads = {reads}\naskAt = \"post-params-normalization\""
                )
            ),
        );
        let (host, _logs) = start(&manifest);
        let approvals = host.approvals().clone();
        let out = std::thread::scope(|s| {
            let call = s.spawn(|| {
                host.default_session()
                    .call("transfer_hbar_tool", &transfer(1))
                    .unwrap()
            });
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while approvals.pending().is_empty() && !call.is_finished() {
                assert!(std::time::Instant::now() < deadline, "never asked");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let pending = approvals.pending();
            assert_eq!(pending.len(), 1, "reads {reads}: the call was not parked");
            let ask = &pending[0].ask;
            let facts = ask.facts.as_ref().expect("the approver is shown the facts");
            assert_eq!(facts.movements.len(), 1, "reads {reads}: {facts:?}");
            assert!(ask.normalised_params.is_some(), "reads {reads}");
            approvals
                .decide(&pending[0].id, false, "test", "admin-api", None)
                .unwrap();
            call.join().unwrap()
        });
        assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    }
}
