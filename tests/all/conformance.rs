//! Conformance with the JS kit 4.1.0: the same calls through hak and through the real kit
//! (`tests/conformance/kit-bytes.mjs`, RETURN_BYTES mode, one node 0.0.3) must give equal
//! transaction bodies — all fields but the transaction ID and the clock-derived token expiry —
//! or the same error. Needs `npm ci` in `tests/conformance` (scripts/test.sh does it).

use hak_tests::*;
use hedera_proto::services as proto;
use prost::Message;
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};

/// Calls that neither side needs a network for.
fn cases() -> Vec<(&'static str, Value)> {
    vec![
        (
            "transfer_hbar_tool",
            json!({"transfers": [{"accountId": "0.0.2001", "amount": 1.5}, {"accountId": "0.0.2002", "amount": 0.00000001}], "transactionMemo": "rent"}),
        ),
        (
            "transfer_hbar_tool",
            json!({"transfers": [{"accountId": "0.0.2001", "amount": 2}], "sourceAccountId": "0.0.1001", "schedulingParams": {"isScheduled": true}}),
        ),
        (
            "transfer_hbar_tool",
            json!({"transfers": [{"accountId": "0.0.2001", "amount": -1}]}),
        ),
        (
            "transfer_hbar_tool",
            json!({"transfers": [{"accountId": "0.0.2002", "amount": 1}, {"accountId": "0.0.98", "amount": 1}, {"accountId": "0.0.2002", "amount": 0.5}]}),
        ),
        (
            "create_account_tool",
            json!({"publicKey": "302a300506032b65700321002921a1c74e399db7f329d6e7b21be2986d3561ceb33c0147e3d785b215207488", "initialBalance": 2.5, "accountMemo": "agent", "maxAutomaticTokenAssociations": 3}),
        ),
        (
            "update_account_tool",
            json!({"accountId": "0.0.1001", "accountMemo": "renamed", "declineStakingReward": true}),
        ),
        (
            "create_fungible_token_tool",
            json!({"tokenName": "Gold", "tokenSymbol": "GLD", "initialSupply": 250, "decimals": 2}),
        ),
        (
            "create_fungible_token_tool",
            json!({"tokenName": "Iron", "tokenSymbol": "FE", "supplyType": "infinite", "initialSupply": 7, "treasuryAccountId": "0.0.2001"}),
        ),
        (
            "create_fungible_token_tool",
            json!({"tokenName": "Tin", "tokenSymbol": "SN", "initialSupply": 20, "maxSupply": 10}),
        ),
        (
            "create_topic_tool",
            json!({"topicMemo": "news", "transactionMemo": "t"}),
        ),
        (
            "submit_topic_message_tool",
            json!({"topicId": "0.0.5005", "message": "hello"}),
        ),
        ("delete_topic_tool", json!({"topicId": "0.0.5005"})),
        (
            "mint_non_fungible_token_tool",
            json!({"tokenId": "0.0.6003", "uris": ["ipfs://a", "ipfs://b"]}),
        ),
        (
            "mint_non_fungible_token_tool",
            json!({"tokenId": "0.0.6003", "uris": ["ipfs://later"], "schedulingParams": {"isScheduled": true, "waitForExpiry": true, "expirationTime": "2027-01-01T00:00:00Z"}}),
        ),
        (
            "associate_token_tool",
            json!({"tokenIds": ["0.0.6001", "0.0.6002"]}),
        ),
        (
            "associate_token_tool",
            json!({"accountId": "0.0.2001", "tokenIds": ["0.0.6001"]}),
        ),
        (
            "dissociate_token_tool",
            json!({"tokenIds": ["0.0.6001"], "transactionMemo": "bye"}),
        ),
        (
            "approve_hbar_allowance_tool",
            json!({"spenderAccountId": "0.0.2002", "amount": 1.25, "transactionMemo": "pocket"}),
        ),
        (
            "delete_hbar_allowance_tool",
            json!({"spenderAccountId": "0.0.2002"}),
        ),
        (
            "delete_account_tool",
            json!({"accountId": "0.0.2003", "transferAccountId": "0.0.1001"}),
        ),
        (
            "sign_schedule_transaction_tool",
            json!({"scheduleId": "0.0.7007"}),
        ),
        ("schedule_delete_tool", json!({"scheduleId": "0.0.7007"})),
    ]
}

fn body_of(hex_text: &str) -> proto::TransactionBody {
    let bytes = hex::decode(hex_text.trim_start_matches("0x")).unwrap();
    let list = hedera_proto::sdk::TransactionList::decode(bytes.as_slice()).unwrap();
    assert_eq!(list.transaction_list.len(), 1, "one node, one transaction");
    let signed = proto::SignedTransaction::decode(
        list.transaction_list[0].signed_transaction_bytes.as_slice(),
    )
    .unwrap();
    proto::TransactionBody::decode(signed.body_bytes.as_slice()).unwrap()
}

/// Drop what differs between any two runs; returns the token expiry (seconds) if there was one.
///
/// One known SDK difference is erased too: the JS SDK gives a one-chunk topic message the
/// trivial chunk info (1 of 1, started by this very transaction), the Rust SDK omits it; the
/// network treats both the same.
fn comparable(mut body: proto::TransactionBody) -> (proto::TransactionBody, Option<i64>) {
    if let Some(proto::transaction_body::Data::ConsensusSubmitMessage(submit)) = &mut body.data {
        let trivial = submit.chunk_info.as_ref().is_some_and(|c| {
            c.total == 1 && c.number == 1 && c.initial_transaction_id == body.transaction_id
        });
        if trivial {
            submit.chunk_info = None;
        }
    }
    body.transaction_id = None;
    let mut expiry = None;
    if let Some(proto::transaction_body::Data::TokenCreation(create)) = &mut body.data {
        expiry = create.expiry.take().map(|t| t.seconds);
    }
    (body, expiry)
}

fn kit_outputs(cases: &[(&str, Value)]) -> Vec<Value> {
    let dir = root().join("tests/conformance");
    assert!(
        dir.join("node_modules/@hashgraph/hedera-agent-kit")
            .is_dir(),
        "the JS kit is not installed: run `npm ci` in {}",
        dir.display()
    );
    let input: Vec<Value> = cases
        .iter()
        .map(|(tool, params)| json!({"tool": tool, "params": params}))
        .collect();
    let mut child = Command::new("node")
        .arg("kit-bytes.mjs")
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("node runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(Value::from(input).to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "kit-bytes.mjs failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn hak_and_the_js_kit_build_equal_bodies_and_errors() {
    let cases = cases();
    let kit = kit_outputs(&cases);
    assert_eq!(kit.len(), cases.len());
    let (host, _) = start(RETURN_BYTES_HEADER);
    let mut session = host.default_session();
    let mut bodies = 0;
    for ((tool, params), kit) in cases.iter().zip(&kit) {
        let ours = session.call(tool, &params.to_string()).unwrap();
        let case = format!("{tool} {params}");
        match kit["bytes"].as_str() {
            Some(kit_hex) => {
                let ours_hex = ours["raw"]["bytes"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{case}: the kit built bytes, hak said {ours}"));
                let (ours_body, ours_expiry) = comparable(body_of(ours_hex));
                let (kit_body, kit_expiry) = comparable(body_of(kit_hex));
                assert_eq!(ours_body, kit_body, "{case}");
                match (ours_expiry, kit_expiry) {
                    (Some(a), Some(b)) => assert!((a - b).abs() <= 60, "{case}: expiry {a} vs {b}"),
                    (a, b) => assert_eq!(a, b, "{case}: expiry"),
                }
                bodies += 1;
            }
            None => assert_eq!(ours["raw"]["error"], kit["error"], "{case}"),
        }
    }
    assert!(
        bodies >= 10,
        "only {bodies} cases built bytes on the kit's side"
    );
}
