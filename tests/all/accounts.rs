//! Account tools on the local network: create (with a given key or the operator's), delete,
//! and the schedule tools (sign, delete).

use hak_tests::*;

#[test]
fn accounts_are_created_funded_and_deleted() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let key = hedera::PrivateKey::generate_ecdsa()
        .public_key()
        .to_string_der();
    // How the kit's decoder refuses a key text, and how hak does: whole hex pairs that are no
    // key are refused naming the field; text that is not whole hex pairs in the decoder's own
    // words (it reads two digits at a time, after dropping a leading `0x` as the kit's does).
    let invalid_key = "Failed to execute Create Account: Invalid parameters: Field \"publicKey\" - Invalid public key: ";
    let not_hex = "Failed to execute Create Account: Invalid hex string: ";
    for (text, refusal) in [
        ("302d3007", invalid_key),
        ("302d300", not_hex),
        // A 20-byte EVM address.
        ("0x7f3b1c2d4e5f60718293a4b5c6d7e8f901234567", invalid_key),
        ("0x302d300", not_hex),
    ] {
        let out = session
            .call(
                "create_account_tool",
                &format!(r#"{{"publicKey":"{text}"}}"#),
            )
            .unwrap();
        assert_eq!(out["raw"]["error"], format!("{refusal}{text}"));
    }
    let out = session
        .call(
            "create_account_tool",
            &format!(r#"{{"publicKey":"0x{key}","initialBalance":2.5,"accountMemo":"agent"}}"#),
        )
        .unwrap();
    let raw = ok(&out);
    let account = raw["accountId"].as_str().unwrap().to_owned();
    assert_eq!(
        out["humanMessage"],
        format!(
            "Account created successfully.\nTransaction ID: {}\nNew Account ID: {account}\n",
            raw["transactionId"].as_str().unwrap()
        )
    );
    let mirror = host.mirror_get(&format!("/accounts/{account}")).unwrap();
    assert_eq!(mirror["balance"]["balance"], 250_000_000);
    assert_eq!(mirror["memo"], "agent");
    assert_eq!(mirror["key"]["_type"], "ECDSA_SECP256K1");
    assert_eq!(mirror["max_automatic_token_associations"], -1);

    // Without a key the operator's is used, so the operator can delete it again.
    let mine = ok(&session
        .call("create_account_tool", r#"{"initialBalance":1}"#)
        .unwrap())["accountId"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = session
        .call(
            "delete_account_tool",
            &format!(r#"{{"accountId":"{mine}"}}"#),
        )
        .unwrap();
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("Account successfully deleted. Transaction ID: 0.0.1001@"));
    assert_eq!(
        host.mirror_get(&format!("/accounts/{mine}")).unwrap()["deleted"],
        true
    );
    // Someone else's account cannot be deleted by the operator alone.
    let out = session
        .call(
            "delete_account_tool",
            &format!(r#"{{"accountId":"{account}"}}"#),
        )
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "INVALID_SIGNATURE");
    let out = session
        .call("delete_account_tool", r#"{"accountId":"alice"}"#)
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Delete Account: Account ID must be a Hedera address"
    );
}

#[test]
fn schedule_tools_sign_and_delete_pending_schedules() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    // The schedule's payer (0.0.1002) has not signed: it stays pending.
    let params = r#"{"transfers":[{"accountId":"0.0.1004","amount":1}],"schedulingParams":{"isScheduled":true,"adminKey":true,"payerAccountId":"0.0.1002"}}"#;
    let schedule = ok(&session.call("transfer_hbar_tool", params).unwrap())["scheduleId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        host.mirror_get(&format!("/schedules/{schedule}")).unwrap()["executed_timestamp"].is_null()
    );

    // The operator already signed at creation: nothing new to add.
    let out = session
        .call(
            "sign_schedule_transaction_tool",
            &format!(r#"{{"scheduleId":"{schedule}"}}"#),
        )
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "NO_NEW_VALID_SIGNATURES", "{out}");

    let out = session
        .call(
            "schedule_delete_tool",
            &format!(r#"{{"scheduleId":"{schedule}"}}"#),
        )
        .unwrap();
    assert!(ok(&out)["transactionId"].is_string());
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("Scheduled transaction successfully deleted. Transaction ID: "));
    let out = session
        .call(
            "sign_schedule_transaction_tool",
            &format!(r#"{{"scheduleId":"{schedule}"}}"#),
        )
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "SCHEDULE_ALREADY_DELETED");
    let out = session
        .call("schedule_delete_tool", r#"{"scheduleId":"nope"}"#)
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Delete Scheduled Transaction: failed to parse entity id: nope"
    );
}

#[test]
fn schedule_signing_in_return_bytes_mode_gives_schedule_sign_bytes() {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let out = host
        .default_session()
        .call(
            "sign_schedule_transaction_tool",
            r#"{"scheduleId":"0.0.5005"}"#,
        )
        .unwrap();
    let tx: hedera::ScheduleSignTransaction = decode_bytes(&out).downcast().unwrap();
    assert_eq!(
        tx.get_schedule_id(),
        Some(hedera::ScheduleId::new(0, 0, 5005))
    );
    assert_eq!(tx.get_max_transaction_fee(), Some(hedera::Hbar::new(5)));
}

#[test]
fn account_and_exchange_rate_queries_read_the_mirror() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let out = session
        .call("get_account_query_tool", r#"{"accountId":"0.0.1003"}"#)
        .unwrap();
    let raw = ok(&out);
    assert_eq!(raw["account"]["hbarBalance"], "1000");
    assert_eq!(raw["account"]["balance"]["balance"], "1000");
    let message = out["humanMessage"].as_str().unwrap();
    assert!(
        message.starts_with("Details for 0.0.1003\nBalance: 1000 HBAR\nPublic Key: "),
        "{message}"
    );
    assert!(
        message.ends_with("Memo: test,\nMax automatic token associations: -1,\nDeleted: false,\n"),
        "{message}"
    );
    let out = session
        .call("get_account_query_tool", r#"{"accountId":"0.0.424242"}"#)
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Get Account Query: Failed to fetch account 0.0.424242: 404 Not Found"
    );

    let out = session.call("get_exchange_rate_tool", "{}").unwrap();
    let raw = ok(&out);
    assert_eq!(raw["current_rate"]["cent_equivalent"], 360000);
    let message = out["humanMessage"].as_str().unwrap();
    assert!(
        message.starts_with("\n  Details for timestamp: "),
        "{message}"
    );
    assert!(
        message.contains("\n  Current exchange rate: 0.12\n  Expires at "),
        "{message}"
    );
}

#[test]
fn hbar_allowances_are_approved_and_deleted() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let out = session
        .call(
            "approve_hbar_allowance_tool",
            r#"{"spenderAccountId":"0.0.1002","amount":1.5,"transactionMemo":"pocket money"}"#,
        )
        .unwrap();
    assert!(ok(&out)["transactionId"].is_string());
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("HBAR allowance approved successfully. Transaction ID: "));
    let allowances = host
        .mirror_get("/accounts/0.0.1001/allowances/crypto")
        .unwrap();
    assert_eq!(allowances["allowances"][0]["amount"], 150_000_000);
    assert_eq!(allowances["allowances"][0]["spender"], "0.0.1002");
    let out = session
        .call(
            "delete_hbar_allowance_tool",
            r#"{"spenderAccountId":"0.0.1002"}"#,
        )
        .unwrap();
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("HBAR allowance deleted successfully. Transaction ID: "));
    assert!(host
        .mirror_get("/accounts/0.0.1001/allowances/crypto")
        .unwrap()["allowances"]
        .as_array()
        .unwrap()
        .is_empty());
    let out = session
        .call(
            "approve_hbar_allowance_tool",
            r#"{"spenderAccountId":"0.0.1002","amount":-1}"#,
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Approve HBAR Allowance: Invalid allowance amount: -1"
    );
}

#[test]
fn the_users_account_is_updated() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let out = session
        .call(
            "update_account_tool",
            r#"{"accountMemo":"renamed","maxAutomaticTokenAssociations":5}"#,
        )
        .unwrap();
    assert!(ok(&out)["transactionId"].is_string());
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("Account successfully updated.\nTransaction ID: 0.0.1001@"));
    let account = host.mirror_get("/accounts/0.0.1001").unwrap();
    assert_eq!(
        (
            account["memo"].as_str(),
            account["max_automatic_token_associations"].as_i64()
        ),
        (Some("renamed"), Some(5))
    );
    let out = session
        .call(
            "update_account_tool",
            r#"{"accountId":"0.0.1002","accountMemo":"not mine"}"#,
        )
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "INVALID_SIGNATURE");
    let out = session
        .call(
            "update_account_tool",
            r#"{"maxAutomaticTokenAssociations":1.5}"#,
        )
        .unwrap();
    assert_eq!(out["raw"]["error"], "Failed to execute Update Account: Invalid parameters: Field \"maxAutomaticTokenAssociations\" - Expected integer, received float");
}

/// Another account (0.0.1001) schedules "0.0.1003 → 0.0.1005, 7 HBAR"; the agent 0.0.1003
/// signs it through the tool. A denylist of 0.0.1005 blocks the direct transfer, and must
/// block the signature too: signing executes the scheduled transfer.
#[test]
fn a_schedule_signature_is_judged_by_what_the_schedule_moves() {
    let (scheduler, _) = start(LOCAL);
    let params = r#"{"transfers":[{"accountId":"0.0.1005","amount":7}],"sourceAccountId":"0.0.1003","schedulingParams":{"isScheduled":true}}"#;
    let schedule = ok(&scheduler
        .default_session()
        .call("transfer_hbar_tool", params)
        .unwrap())["scheduleId"]
        .as_str()
        .unwrap()
        .to_owned();
    let agent_header = same_network(&scheduler).replace(
        "[context]\naccount_id = \"0.0.1001\"",
        "[operator]\naccount_id = \"0.0.1003\"\nkey_env = \"HAK_TEST_UNSET_KEY\"\n\n[context]\naccount_id = \"0.0.1003\"",
    );
    let deny = plugin_entry(
        "deny",
        "rust/recipient-denylist",
        "config = { accounts = [\"0.0.1005\"] }",
    );
    let (agent, _) = start(&format!("{agent_header}{deny}"));
    let balance = |host: &hak_host::Host| {
        host.mirror_get("/accounts/0.0.1005").unwrap()["balance"]["balance"]
            .as_i64()
            .unwrap()
    };
    let before = balance(&agent);
    let mut session = agent.default_session();
    let direct = session
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.1005","amount":7}]}"#,
        )
        .unwrap();
    assert_eq!(direct["raw"]["errorCode"], "POLICY_BLOCKED", "{direct}");
    let signed = session
        .call(
            "sign_schedule_transaction_tool",
            &format!(r#"{{"scheduleId":"{schedule}"}}"#),
        )
        .unwrap();
    assert_eq!(signed["raw"]["errorCode"], "POLICY_BLOCKED", "{signed}");
    assert_eq!(
        signed["raw"]["policyBlock"]["reason"], "0.0.1005 is a denylisted recipient",
        "{signed}"
    );
    assert_eq!(balance(&agent), before, "nothing moved");
    assert!(
        agent.mirror_get(&format!("/schedules/{schedule}")).unwrap()["executed_timestamp"]
            .is_null()
    );

    // A schedule nobody can read cannot be judged: refused, with the reason.
    let unknown = session
        .call(
            "sign_schedule_transaction_tool",
            r#"{"scheduleId":"0.0.987654"}"#,
        )
        .unwrap();
    let error = unknown["raw"]["error"].as_str().unwrap();
    assert!(
        error.contains("cannot state what schedule 0.0.987654 moves"),
        "{unknown}"
    );

    // Without the denylist the same signature executes the transfer (what the attack did).
    let (plain, _) = start(&agent_header);
    let out = plain
        .default_session()
        .call(
            "sign_schedule_transaction_tool",
            &format!(r#"{{"scheduleId":"{schedule}"}}"#),
        )
        .unwrap();
    ok(&out);
    assert_eq!(balance(&plain), before + 700_000_000);
}
