//! The real Hedera SDK against the emulator over loopback: transfers, account creation,
//! topics and messages, contracts as entities, precheck and receipt failures, faults, and the mirror API's JSON.

use crate::common::{mirror, start};
use hak_emu::{Emulator, EmulatorConfig};
use hedera::{
    AccountBalanceQuery, AccountCreateTransaction, AccountId, AccountInfoQuery, Client,
    ContractCreateTransaction, FileId, Hbar, PrivateKey, Status, TopicCreateTransaction,
    TopicMessageSubmitTransaction, TransferTransaction,
};
use std::collections::HashMap;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_moves_hbar_charges_the_fee_and_shows_in_the_mirror() {
    let (emu, client) = start().await;
    let before = AccountBalanceQuery::new()
        .account_id(AccountId::new(0, 0, 1002))
        .execute(&client)
        .await
        .unwrap();
    let response = TransferTransaction::new()
        .hbar_transfer(AccountId::new(0, 0, 1001), Hbar::new(-5))
        .hbar_transfer(AccountId::new(0, 0, 1002), Hbar::new(5))
        .transaction_memo("rent")
        .execute(&client)
        .await
        .unwrap();
    let receipt = response.get_receipt(&client).await.unwrap();
    assert_eq!(receipt.status, Status::Success);
    let after = AccountBalanceQuery::new()
        .account_id(AccountId::new(0, 0, 1002))
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(
        after.hbars.to_tinybars() - before.hbars.to_tinybars(),
        500_000_000
    );

    let (status, account) = mirror(&emu, "/accounts/0.0.1002").await;
    assert_eq!(status, 200);
    assert_eq!(account["balance"]["balance"], after.hbars.to_tinybars());
    assert_eq!(account["account"], "0.0.1002");
    assert_eq!(account["key"]["_type"], "ED25519");

    let id = response.transaction_id;
    let path = format!(
        "/transactions/0.0.1001-{}-{:09}",
        id.valid_start.unix_timestamp(),
        id.valid_start.nanosecond()
    );
    let (status, tx) = mirror(&emu, &path).await;
    assert_eq!(status, 200, "{tx}");
    let row = &tx["transactions"][0];
    assert_eq!(row["name"], "CRYPTOTRANSFER");
    assert_eq!(row["result"], "SUCCESS");
    assert_eq!(row["memo_base64"], "cmVudA==");
    assert_eq!(row["charged_tx_fee"], 100_000);
    let legs: i64 = row["transfers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["amount"].as_i64().unwrap())
        .sum();
    assert_eq!(legs, 0, "transfers net to zero, fee legs included");
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_carry_the_real_status_codes() {
    let (emu, client) = start().await;
    let transfer = |from: u64, to: u64, tinybars: i64| {
        let mut tx = TransferTransaction::new();
        tx.hbar_transfer(AccountId::new(0, 0, from), Hbar::from_tinybars(-tinybars))
            .hbar_transfer(AccountId::new(0, 0, to), Hbar::from_tinybars(tinybars));
        tx
    };
    // More than the account holds: handled, receipt INSUFFICIENT_ACCOUNT_BALANCE, fee still charged.
    let mut too_much = transfer(1002, 1001, 100_000 * 100_000_000);
    too_much
        .freeze_with(&client)
        .unwrap()
        .sign(hak_emu::genesis::dev_key(
            hak_emu::genesis::KeyKind::Ed25519,
            0x10,
            0x02,
        ));
    assert_eq!(
        run!(too_much, &client).unwrap_err(),
        Status::InsufficientAccountBalance
    );
    // Debiting someone else without their signature.
    assert_eq!(
        run!(transfer(1002, 1001, 1), &client).unwrap_err(),
        Status::InvalidSignature
    );
    // Amounts that do not net to zero fail at precheck.
    let mut unbalanced = TransferTransaction::new();
    unbalanced
        .hbar_transfer(AccountId::new(0, 0, 1001), Hbar::new(-1))
        .hbar_transfer(AccountId::new(0, 0, 1002), Hbar::new(2));
    assert_eq!(
        run!(unbalanced, &client).unwrap_err(),
        Status::InvalidAccountAmounts
    );
    // An unknown recipient.
    assert_eq!(
        run!(transfer(1001, 999_999, 1), &client).unwrap_err(),
        Status::InvalidAccountId
    );
    // A payer that does not exist.
    let stranger = Client::for_network(HashMap::from([(
        emu.grpc_addr.to_string(),
        AccountId::new(0, 0, 3),
    )]))
    .unwrap();
    stranger.set_operator(
        AccountId::new(0, 0, 777_777),
        PrivateKey::generate_ed25519(),
    );
    assert_eq!(
        run!(transfer(777_777, 1001, 1), &stranger).unwrap_err(),
        Status::PayerAccountNotFound
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_are_created_with_their_key_and_balance() {
    let (emu, client) = start().await;
    let key = PrivateKey::generate_ecdsa();
    let receipt = AccountCreateTransaction::new()
        .set_key_without_alias(key.public_key())
        .initial_balance(Hbar::new(7))
        .account_memo("new")
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap();
    let id = receipt.account_id.unwrap();
    assert_eq!(
        id,
        AccountId::new(0, 0, 1006),
        "the first entity after genesis"
    );
    let info = AccountInfoQuery::new()
        .account_id(id)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.balance, Hbar::new(7));
    assert_eq!(info.key, hedera::Key::Single(key.public_key()));
    assert_eq!(info.account_memo, "new");
    let (_, account) = mirror(&emu, &format!("/accounts/{id}")).await;
    assert_eq!(account["key"]["_type"], "ECDSA_SECP256K1");
    assert_eq!(
        account["key"]["key"],
        hex::encode(key.public_key().to_bytes_raw())
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contracts_are_entities_the_mirror_describes_and_file_initcode_must_be_hex() {
    let (emu, client) = start().await;
    let key = PrivateKey::generate_ed25519();
    let contract = ContractCreateTransaction::new()
        .bytecode(vec![0x60, 0x80])
        .gas(100_000)
        .admin_key(key.public_key())
        .contract_memo("vault")
        .freeze_with(&client)
        .unwrap()
        .sign(key.clone())
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap()
        .contract_id
        .unwrap();
    let (status, info) = mirror(&emu, &format!("/contracts/{contract}")).await;
    assert_eq!(status, 200);
    assert_eq!(info["contract_id"], contract.to_string());
    assert_eq!(info["memo"], "vault");
    assert_eq!(info["bytecode"], "0x6080");
    assert_eq!(info["admin_key"]["_type"], "ED25519");
    let address = info["evm_address"].as_str().unwrap().to_owned();
    assert_eq!(address.len(), 42);
    let (status, by_address) = mirror(&emu, &format!("/contracts/{address}")).await;
    assert_eq!((status, &by_address), (200, &info));
    // Bare, as the SDKs' `populateAccountNum` asks, and by number alone.
    let (status, bare) = mirror(&emu, &format!("/contracts/{}", &address[2..])).await;
    assert_eq!((status, &bare), (200, &info));
    let (status, by_num) = mirror(&emu, &format!("/contracts/{}", contract.num)).await;
    assert_eq!((status, &by_num), (200, &info));
    // The admin key must sign, as on the real network.
    let unsigned = ContractCreateTransaction::new()
        .bytecode(vec![0x60])
        .gas(100_000)
        .admin_key(PrivateKey::generate_ed25519().public_key())
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap_err();
    assert!(
        matches!(
            unsigned,
            hedera::Error::ReceiptStatus {
                status: Status::InvalidSignature,
                ..
            }
        ),
        "{unsigned}"
    );
    // A file's initcode is hex text: the fee schedule file's protobuf is not.
    let from_file = ContractCreateTransaction::new()
        .bytecode_file_id(FileId::new(0, 0, 111))
        .gas(50_000)
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap_err();
    assert!(
        matches!(
            from_file,
            hedera::Error::ReceiptStatus {
                status: Status::ErrorDecodingBytestring,
                ..
            }
        ),
        "{from_file}"
    );
    let (status, _) = mirror(&emu, "/contracts/0.0.999999").await;
    assert_eq!(status, 404);
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topics_take_messages_with_sequence_numbers_and_running_hashes() {
    let (emu, client) = start().await;
    let topic = TopicCreateTransaction::new()
        .topic_memo("audit")
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap()
        .topic_id
        .unwrap();
    for text in ["first", "second"] {
        let receipt = TopicMessageSubmitTransaction::new()
            .topic_id(topic)
            .message(text.as_bytes().to_vec())
            .execute(&client)
            .await
            .unwrap()
            .get_receipt(&client)
            .await
            .unwrap();
        assert_eq!(receipt.topic_running_hash.as_ref().map(Vec::len), Some(48));
    }
    let (status, page) = mirror(
        &emu,
        &format!("/topics/{topic}/messages?order=desc&limit=1"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(page["messages"][0]["sequence_number"], 2);
    assert_eq!(page["messages"][0]["message"], "c2Vjb25k");
    let next = page["links"]["next"]
        .as_str()
        .unwrap()
        .trim_start_matches("/api/v1")
        .to_owned();
    let (_, older) = mirror(&emu, &next).await;
    assert_eq!(older["messages"][0]["sequence_number"], 1);
    assert!(older["links"]["next"].is_null());
    let (_, info) = mirror(&emu, &format!("/topics/{topic}")).await;
    assert_eq!(info["memo"], "audit");
    assert_eq!(info["sequence_number"], 2);
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_after_busy_unavailable_and_unknown_receipts_apply_exactly_once() {
    let (emu, client) = start().await;
    emu.inject(|f| {
        f.precheck = Some((hak_emu::hapi::services::ResponseCodeEnum::Busy, 2));
        f.unavailable = 1;
        f.receipt_unknown = 3;
    });
    let before = AccountBalanceQuery::new()
        .account_id(AccountId::new(0, 0, 1004))
        .execute(&client)
        .await
        .unwrap();
    let receipt = TransferTransaction::new()
        .hbar_transfer(AccountId::new(0, 0, 1001), Hbar::new(-1))
        .hbar_transfer(AccountId::new(0, 0, 1004), Hbar::new(1))
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap();
    assert_eq!(receipt.status, Status::Success);
    let after = AccountBalanceQuery::new()
        .account_id(AccountId::new(0, 0, 1004))
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(
        after.hbars.to_tinybars() - before.hbars.to_tinybars(),
        100_000_000,
        "applied exactly once"
    );
    let transfers = emu
        .node
        .ledger
        .lock()
        .unwrap()
        .records
        .iter()
        .filter(|r| r.name == "CRYPTOTRANSFER")
        .count();
    assert_eq!(transfers, 1);
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mirror_answers_unknown_things_with_its_404_body() {
    let (emu, _client) = start().await;
    for path in [
        "/accounts/0.0.424242",
        "/topics/0.0.5/messages",
        "/transactions/0.0.1001-1-000000001",
        "/no/such/route",
    ] {
        let (status, body) = mirror(&emu, path).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(
            body,
            serde_json::json!({"_status": {"messages": [{"message": "Not found"}]}})
        );
    }
    let (status, body) = mirror(&emu, "/topics/0.0.5/messages?limit=9999").await;
    assert_eq!(
        (status, body["_status"]["messages"][0]["message"].as_str()),
        (400, Some("Invalid parameter: limit"))
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_state_dir_the_ledger_survives_a_restart() {
    let dir = std::env::temp_dir().join(format!("hak-emu-state-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = EmulatorConfig {
        state_dir: Some(dir.clone()),
        ..EmulatorConfig::default()
    };
    let emu = Emulator::start(config.clone()).await.unwrap();
    let client = Client::for_network(HashMap::from([(
        emu.grpc_addr.to_string(),
        AccountId::new(0, 0, 3),
    )]))
    .unwrap();
    let (id, key) = emu.operator();
    client.set_operator(id, key);
    let topic = TopicCreateTransaction::new()
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap()
        .topic_id
        .unwrap();
    let receipt = TransferTransaction::new()
        .hbar_transfer(AccountId::new(0, 0, 1001), Hbar::new(-3))
        .hbar_transfer(AccountId::new(0, 0, 1005), Hbar::new(3))
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap();
    assert_eq!(receipt.status, Status::Success);
    let balance = emu.node.ledger().accounts[&1005].balance;
    emu.shutdown();

    let emu = Emulator::start(config).await.unwrap();
    let client = Client::for_network(HashMap::from([(
        emu.grpc_addr.to_string(),
        AccountId::new(0, 0, 3),
    )]))
    .unwrap();
    let (id, key) = emu.operator();
    client.set_operator(id, key);
    let after = AccountBalanceQuery::new()
        .account_id(AccountId::new(0, 0, 1005))
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(after.hbars.to_tinybars(), balance);
    let (status, _) = mirror(&emu, &format!("/topics/{topic}")).await;
    assert_eq!(status, 200, "the topic survived");
    // Entity numbering continues after the restart.
    let next = TopicCreateTransaction::new()
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap()
        .topic_id
        .unwrap();
    assert_eq!(next.num, topic.num + 1);
    emu.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn precheck_refuses_duplicates_bad_time_boxes_unknown_bodies_and_answers_in_order() {
    let (emu, client) = start().await;
    let transfer = |valid_start: time::OffsetDateTime| {
        let mut tx = TransferTransaction::new();
        tx.hbar_transfer(AccountId::new(0, 0, 1001), Hbar::new(-1))
            .hbar_transfer(AccountId::new(0, 0, 1002), Hbar::new(1))
            .transaction_id(hedera::TransactionId {
                account_id: AccountId::new(0, 0, 1001),
                valid_start,
                nonce: None,
                scheduled: false,
            });
        tx
    };
    let now = time::OffsetDateTime::now_utc();
    let precheck = |e: hedera::Error| match e {
        hedera::Error::TransactionPreCheckStatus { status, .. } => status,
        other => panic!("{other:?}"),
    };
    // A valid start in the future, and one long expired (the id is ours, so the SDK cannot regenerate it).
    let err = transfer(now + time::Duration::seconds(60))
        .execute(&client)
        .await
        .unwrap_err();
    assert_eq!(precheck(err), Status::InvalidTransactionStart);
    let err = transfer(now - time::Duration::seconds(600))
        .execute(&client)
        .await
        .unwrap_err();
    assert_eq!(precheck(err), Status::TransactionExpired);
    // The same transaction twice.
    let mut tx = transfer(now - time::Duration::seconds(5));
    tx.freeze_with(&client).unwrap();
    tx.execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap();
    let err = tx.execute(&client).await.unwrap_err();
    assert_eq!(precheck(err), Status::DuplicateTransaction);
    // Bodies the emulator does not model are NOT_SUPPORTED, never a silent success.
    let err = hedera::PrngTransaction::new()
        .execute(&client)
        .await
        .unwrap_err();
    assert_eq!(precheck(err), Status::NotSupported);
    // An ECDSA-keyed account signs its own debit.
    let mut ecdsa = TransferTransaction::new();
    ecdsa
        .hbar_transfer(AccountId::new(0, 0, 1003), Hbar::new(-1))
        .hbar_transfer(AccountId::new(0, 0, 1001), Hbar::new(1))
        .freeze_with(&client)
        .unwrap()
        .sign(hak_emu::genesis::dev_key(
            hak_emu::genesis::KeyKind::EcdsaSecp256k1,
            0x10,
            0x03,
        ));
    let receipt = ecdsa
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap();
    assert_eq!(receipt.status, Status::Success);
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lagging_mirror_answers_404_until_it_catches_up() {
    let (emu, client) = start().await;
    emu.inject(|f| f.mirror_lag = Duration::from_millis(400));
    let account = AccountCreateTransaction::new()
        .set_key_without_alias(PrivateKey::generate_ed25519().public_key())
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap()
        .account_id
        .unwrap();
    let (status, _) = mirror(&emu, &format!("/accounts/{account}")).await;
    assert_eq!(status, 404, "not yet visible");
    tokio::time::sleep(Duration::from_millis(450)).await;
    let (status, _) = mirror(&emu, &format!("/accounts/{account}")).await;
    assert_eq!(status, 200, "visible after the lag");
    emu.shutdown();
}
