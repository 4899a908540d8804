//! The transaction query tool on the local network: a real transfer's record, found by either
//! ID form, and the kit's errors for bad and unknown IDs.

use hak_tests::*;

#[test]
fn a_transfer_record_is_found_by_either_id_form() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let out = session
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.1002","amount":1.5}]}"#,
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    let sdk_form = out["raw"]["transactionId"].as_str().unwrap().to_owned();
    let (payer, start) = sdk_form.split_once('@').unwrap();
    let (secs, nanos) = start.split_once('.').unwrap();
    let mirror_form = format!("{payer}-{secs}-{nanos}");

    for id in [&sdk_form, &mirror_form] {
        let out = session
            .call(
                "get_transaction_record_query_tool",
                &format!(r#"{{"transactionId":"{id}"}}"#),
            )
            .unwrap();
        assert_eq!(out["raw"]["transactionId"], mirror_form.as_str(), "{out}");
        let record = &out["raw"]["transactionRecord"]["transactions"][0];
        assert_eq!(record["name"], "CRYPTOTRANSFER", "{out}");
        let message = out["humanMessage"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "Transaction Details for {mirror_form}\nStatus: SUCCESS\nConsensus Timestamp: "
            )),
            "{message}"
        );
        assert!(
            message.contains("\nType: CRYPTOTRANSFER\nEntity ID: null\nTransfers:\n"),
            "{message}"
        );
        assert!(
            message.contains("  Account: 0.0.1002, Amount: 1.5\u{210F}"),
            "{message}"
        );
    }

    let out = session
        .call(
            "get_transaction_record_query_tool",
            &format!(r#"{{"transactionId":"{mirror_form}","nonce":3}}"#),
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        format!("Failed to execute Get Transaction Record Query: Failed to get transaction record for {mirror_form}: 404 Not Found").as_str(),
        "{out}"
    );
    let out = session
        .call(
            "get_transaction_record_query_tool",
            r#"{"transactionId":"0.0.1001/1700000000"}"#,
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Get Transaction Record Query: Invalid transactionId format: 0.0.1001/1700000000"
    );
}
