//! `transfer_hbar_tool` in return-bytes mode: real SDK bytes, decoded and checked; the kit's
//! normalisation and messages.

use hak_tests::*;
use hedera::{AccountId, TransferTransaction};
use serde_json::Value;
use std::collections::HashMap;

fn decode(out: &Value) -> TransferTransaction {
    decode_bytes(out).downcast().unwrap()
}

fn id(n: u64) -> AccountId {
    AccountId::new(0, 0, n)
}

#[test]
fn bytes_decode_to_the_transfer_with_payer_memo_nodes_and_sender_debit() {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let params = r#"{"transfers":[{"accountId":"0.0.2001","amount":1.5},{"accountId":"0.0.2002","amount":0.00000001}],"transactionMemo":"rent"}"#;
    let out = host
        .default_session()
        .call("transfer_hbar_tool", params)
        .unwrap();
    let raw = &out["raw"];
    assert_eq!(raw["status"], "SUCCESS");
    assert_eq!(raw["type"], "TransferTransaction");
    assert_eq!(raw["payerAccountId"], "0.0.1001");
    assert_eq!(raw["memo"], "rent");
    assert_eq!(
        out["humanMessage"],
        "Transaction bytes are ready for signing."
    );
    assert!(raw["transactionId"]
        .as_str()
        .unwrap()
        .starts_with("0.0.1001@"));

    let tx = decode(&out);
    let tx_id = tx.get_transaction_id().unwrap();
    assert_eq!(tx_id.account_id, id(1001));
    // The JS SDK's form: nanoseconds padded to 9 digits (the Rust SDK's Display does not pad).
    assert_eq!(
        hak_host::tools::transaction::kit_transaction_id(&tx_id),
        raw["transactionId"]
    );
    let nanos = raw["transactionId"]
        .as_str()
        .unwrap()
        .rsplit('.')
        .next()
        .unwrap();
    assert_eq!(nanos.len(), 9, "{}", raw["transactionId"]);
    assert_eq!(tx.get_transaction_memo(), "rent");
    assert_eq!(tx.get_node_account_ids().unwrap(), [id(3)]);
    // The JS SDK's default max fee for a TransferTransaction, so the bodies match the kit's.
    assert_eq!(tx.get_max_transaction_fee(), Some(hedera::Hbar::new(1)));
    let transfers: HashMap<AccountId, i64> = tx
        .get_hbar_transfers()
        .into_iter()
        .map(|(k, v)| (k, v.to_tinybars()))
        .collect();
    assert_eq!(
        transfers,
        HashMap::from([
            (id(2001), 150_000_000),
            (id(2002), 1),
            (id(1001), -150_000_001)
        ])
    );

    // expiresAt = valid start + 120 s, as an ISO string with milliseconds.
    let expires = raw["expiresAt"].as_str().unwrap();
    assert!(expires.ends_with('Z') && expires.len() == 24, "{expires}");
}

#[test]
fn source_account_pays_instead_of_the_context_account() {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let params =
        r#"{"transfers":[{"accountId":"0.0.2001","amount":2}],"sourceAccountId":"0.0.1500"}"#;
    let out = host
        .default_session()
        .call("transfer_hbar_tool", params)
        .unwrap();
    let tx = decode(&out);
    assert_eq!(
        tx.get_hbar_transfers()[&id(1500)].to_tinybars(),
        -200_000_000
    );
    assert_eq!(
        tx.get_transaction_id().unwrap().account_id,
        id(1001),
        "the context account still pays the fee"
    );
}

#[test]
fn invalid_amounts_fail_with_the_kits_messages() {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let mut session = host.default_session();
    for (amount, message) in [
        ("0", "Invalid transfer amount: 0"),
        ("-1", "Invalid transfer amount: -1"),
        ("0.000000001", "Hbar in tinybars contains decimals"),
    ] {
        let params = format!(r#"{{"transfers":[{{"accountId":"0.0.2001","amount":{amount}}}]}}"#);
        let out = session.call("transfer_hbar_tool", &params).unwrap();
        assert_eq!(
            out["raw"]["error"],
            format!("Failed to execute Transfer HBAR: {message}")
        );
    }
    let out = session
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"bob","amount":1}]}"#,
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Transfer HBAR: failed to parse entity id: bob"
    );
    // The kit's words do not name the param; the envelope does.
    assert_eq!(out["raw"]["field"], "transfers.0.accountId");
    let out = session
        .call("transfer_hbar_tool", r#"{"transfers":[]}"#)
        .unwrap();
    assert_eq!(out["raw"]["error"], "Failed to execute Transfer HBAR: Invalid parameters: Field \"transfers\" - Array must contain at least 1 element(s)");
}

#[test]
fn no_panic_for_any_json_value() {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let mut session = host.default_session();
    for params in [
        "null",
        "1",
        "\"x\"",
        "[]",
        "{}",
        r#"{"transfers":null}"#,
        r#"{"transfers":[null]}"#,
        r#"{"transfers":[{"accountId":"0.0.1","amount":1e308}]}"#,
        r#"{"transfers":[{"accountId":"0.0.1","amount":-0.0}]}"#,
    ] {
        let out = session.call("transfer_hbar_tool", params).unwrap();
        assert_eq!(out["raw"]["status"], "ERROR", "{params}: {out}");
    }
}

#[test]
fn return_bytes_needs_a_context_account() {
    let manifest = RETURN_BYTES_HEADER.replace("account_id = \"0.0.1001\"\n", "");
    let (host, _) = start(&manifest);
    let out = host
        .default_session()
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.2","amount":1}],"sourceAccountId":"0.0.9"}"#,
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Transfer HBAR: Account ID is required in context for RETURN_BYTES mode"
    );
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(out["raw"]["error"], "Failed to execute Transfer HBAR: No account available: neither context.accountId nor operator account");
}

#[test]
fn autonomous_without_an_operator_says_what_is_missing() {
    let manifest = RETURN_BYTES_HEADER.replace("mode = \"returnBytes\"", "mode = \"autonomous\"");
    let (host, _) = start(&manifest);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert!(
        out["raw"]["error"]
            .as_str()
            .unwrap()
            .contains("autonomous mode needs an operator"),
        "{out}"
    );
}

#[test]
fn a_scheduled_transfer_returns_schedule_create_bytes_wrapping_the_transfer() {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let key =
        "302a300506032b6570032100e0c8ec2758a5879ffac226a13c0c516b799e72e35141a0dd828f94d37988a4b7";
    let params = format!(
        r#"{{"transfers":[{{"accountId":"0.0.2001","amount":1}}],"transactionMemo":"later","schedulingParams":{{"isScheduled":true,"adminKey":"{key}","payerAccountId":"0.0.1500","expirationTime":"2030-01-01T00:00:00Z","waitForExpiry":true}}}}"#
    );
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &params)
        .unwrap();
    assert_eq!(out["raw"]["type"], "ScheduleCreateTransaction", "{out}");
    let tx: hedera::ScheduleCreateTransaction = decode_bytes(&out).downcast().unwrap();
    assert_eq!(tx.get_payer_account_id(), Some(AccountId::new(0, 0, 1500)));
    assert!(tx.get_wait_for_expiry());
    assert_eq!(
        tx.get_admin_key(),
        Some(&hedera::Key::Single(key.parse().unwrap()))
    );
    assert_eq!(tx.get_max_transaction_fee(), Some(hedera::Hbar::new(5)));
    // The SDK has no getter for the inner transaction: read it from the protobuf body.
    use hedera_proto::services as proto;
    use prost::Message;
    let hex_text = out["raw"]["bytes"]
        .as_str()
        .unwrap()
        .trim_start_matches("0x");
    let list =
        hedera_proto::sdk::TransactionList::decode(hex::decode(hex_text).unwrap().as_slice())
            .unwrap();
    let signed = proto::SignedTransaction::decode(
        list.transaction_list[0].signed_transaction_bytes.as_slice(),
    )
    .unwrap();
    let body = proto::TransactionBody::decode(signed.body_bytes.as_slice()).unwrap();
    let Some(proto::transaction_body::Data::ScheduleCreate(create)) = body.data else {
        panic!("not a schedule create")
    };
    let inner = create.scheduled_transaction_body.unwrap();
    assert_eq!(inner.memo, "later");
    let Some(proto::schedulable_transaction_body::Data::CryptoTransfer(transfer)) = inner.data
    else {
        panic!("not a transfer")
    };
    let amounts: Vec<i64> = transfer
        .transfers
        .unwrap()
        .account_amounts
        .iter()
        .map(|a| a.amount)
        .collect();
    assert!(
        amounts.contains(&100_000_000) && amounts.contains(&-100_000_000),
        "{amounts:?}"
    );
}
