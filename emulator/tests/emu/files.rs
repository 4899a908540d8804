//! The file service and the system files (issue 19), and the mirror's gRPC topic
//! subscription, driven by the Rust SDK: what the network answers for each body, in its order.

use crate::common::start;
use hedera::{
    ContractCreateTransaction, FileAppendTransaction, FileContentsQuery, FileCreateTransaction,
    FileDeleteTransaction, FileId, FileInfoQuery, FileUpdateTransaction, PrivateKey, Status,
    TopicCreateTransaction, TopicMessageQuery, TopicMessageSubmitTransaction,
};
use prost::Message;
use std::time::Duration;
use time::OffsetDateTime;
use tokio_stream::StreamExt;

fn in_days(days: i64) -> OffsetDateTime {
    OffsetDateTime::now_utc() + time::Duration::days(days)
}

/// A constructor that returns an empty runtime: `PUSH1 0 PUSH1 0 RETURN`.
const EMPTY_CONTRACT: &str = "60006000f3";

/// A file holding `EMPTY_CONTRACT` as hex, under the operator's key.
async fn initcode_file(client: &hedera::Client) -> FileId {
    run!(
        FileCreateTransaction::new()
            .keys([client.get_operator_public_key().unwrap()])
            .contents(EMPTY_CONTRACT.as_bytes().to_vec()),
        client
    )
    .unwrap()
    .file_id
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_are_created_appended_read_updated_and_deleted() {
    let (_emu, client) = start().await;
    let (_, operator_key) = _emu.operator();
    let receipt = run!(
        FileCreateTransaction::new()
            .keys([operator_key.public_key()])
            .contents(b"hello".to_vec())
            .file_memo("notes"),
        &client
    )
    .unwrap();
    let file = receipt.file_id.expect("the receipt names the file");
    run!(
        FileAppendTransaction::new()
            .file_id(file)
            .contents(b", world".to_vec()),
        &client
    )
    .unwrap();
    let contents = FileContentsQuery::new()
        .file_id(file)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(contents.contents, b"hello, world");
    let info = FileInfoQuery::new()
        .file_id(file)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.size, 12);
    assert!(!info.is_deleted);
    assert_eq!(info.file_memo, "notes");
    assert_eq!(info.keys.keys.len(), 1);

    run!(
        FileUpdateTransaction::new()
            .file_id(file)
            .contents(b"replaced".to_vec()),
        &client
    )
    .unwrap();
    let contents = FileContentsQuery::new()
        .file_id(file)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(contents.contents, b"replaced");

    run!(FileDeleteTransaction::new().file_id(file), &client).unwrap();
    let info = FileInfoQuery::new()
        .file_id(file)
        .execute(&client)
        .await
        .unwrap();
    assert!(info.is_deleted);
    assert_eq!(info.size, 0, "a deleted file keeps no contents");
    assert_eq!(
        run!(
            FileAppendTransaction::new()
                .file_id(file)
                .contents(b"x".to_vec()),
            &client
        )
        .unwrap_err(),
        Status::FileDeleted
    );
    assert_eq!(
        run!(FileDeleteTransaction::new().file_id(file), &client).unwrap_err(),
        Status::FileDeleted
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_keys_are_required_and_files_without_keys_are_immutable() {
    let (_emu, client) = start().await;
    let other = PrivateKey::generate_ed25519();
    // A file key that did not sign the create.
    assert_eq!(
        run!(
            FileCreateTransaction::new()
                .keys([other.public_key()])
                .contents(b"x".to_vec()),
            &client
        )
        .unwrap_err(),
        Status::InvalidSignature
    );
    // Signed by it: created; then changing it needs that key again.
    let mut create = FileCreateTransaction::new();
    create
        .keys([other.public_key()])
        .contents(b"x".to_vec())
        .freeze_with(&client)
        .unwrap()
        .sign(other.clone());
    let file = run!(create, &client).unwrap().file_id.unwrap();
    assert_eq!(
        run!(
            FileAppendTransaction::new()
                .file_id(file)
                .contents(b"y".to_vec()),
            &client
        )
        .unwrap_err(),
        Status::InvalidSignature
    );
    let mut append = FileAppendTransaction::new();
    append
        .file_id(file)
        .contents(b"y".to_vec())
        .freeze_with(&client)
        .unwrap()
        .sign(other.clone());
    run!(append, &client).unwrap();

    // No keys at all: nothing can change it.
    let immutable = run!(
        FileCreateTransaction::new()
            .keys(Vec::<hedera::Key>::new())
            .contents(b"fixed".to_vec()),
        &client
    )
    .unwrap()
    .file_id
    .unwrap();
    let info = FileInfoQuery::new()
        .file_id(immutable)
        .execute(&client)
        .await
        .unwrap();
    assert!(info.keys.keys.is_empty());
    assert_eq!(
        run!(
            FileAppendTransaction::new()
                .file_id(immutable)
                .contents(b"y".to_vec()),
            &client
        )
        .unwrap_err(),
        Status::Unauthorized
    );
    assert_eq!(
        run!(FileDeleteTransaction::new().file_id(immutable), &client).unwrap_err(),
        Status::Unauthorized
    );
    assert_eq!(
        run!(
            FileUpdateTransaction::new()
                .file_id(immutable)
                .file_memo("new"),
            &client
        )
        .unwrap_err(),
        Status::Unauthorized
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_bodies_are_checked_as_the_network_checks_them() {
    let (_emu, client) = start().await;
    // An expiry beyond the longest lifetime (8,000,001 s).
    assert_eq!(
        run!(
            FileCreateTransaction::new()
                .contents(b"x".to_vec())
                .expiration_time(in_days(365)),
            &client
        )
        .unwrap_err(),
        Status::AutorenewDurationNotInRange
    );
    // No file id: refused at precheck.
    assert_eq!(
        run!(FileDeleteTransaction::new(), &client).unwrap_err(),
        Status::InvalidFileId
    );
    assert_eq!(
        run!(
            FileAppendTransaction::new()
                .file_id(FileId::new(0, 0, 999_999))
                .contents(b"x".to_vec()),
            &client
        )
        .unwrap_err(),
        Status::InvalidFileId
    );
    let missing = FileContentsQuery::new()
        .file_id(FileId::new(0, 0, 999_999))
        .execute(&client)
        .await
        .unwrap_err();
    assert!(
        matches!(
            missing,
            hedera::Error::QueryNoPaymentPreCheckStatus {
                status: Status::InvalidFileId
            } | hedera::Error::QueryPreCheckStatus {
                status: Status::InvalidFileId,
                ..
            }
        ),
        "{missing:?}"
    );
    // System files are not deleted, even by their key's holder.
    assert_eq!(
        run!(
            FileDeleteTransaction::new().file_id(FileId::new(0, 0, 111)),
            &client
        )
        .unwrap_err(),
        Status::InvalidSignature,
        "0.0.111 is signed for by the treasury key, not the operator's"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_files_hold_the_address_book_fee_schedule_and_exchange_rates() {
    let (emu, client) = start().await;
    let book = FileContentsQuery::new()
        .file_id(FileId::new(0, 0, 102))
        .execute(&client)
        .await
        .unwrap();
    let book = hedera_proto::services::NodeAddressBook::decode(book.contents.as_slice()).unwrap();
    assert_eq!(book.node_address.len(), 1);
    let endpoint = &book.node_address[0].service_endpoint[0];
    assert_eq!(endpoint.port, i32::from(emu.grpc_addr.port()));
    assert_eq!(endpoint.ip_address_v4, [127, 0, 0, 1]);

    let fees = FileContentsQuery::new()
        .file_id(FileId::new(0, 0, 111))
        .execute(&client)
        .await
        .unwrap();
    let fees = hedera::FeeSchedules::from_bytes(&fees.contents).unwrap();
    let current = fees.current.expect("a current schedule");
    let transfer = current
        .transaction_fee_schedules
        .iter()
        .find(|s| s.request_type == hedera::RequestType::CryptoTransfer)
        .expect("an entry for CryptoTransfer");
    assert!(transfer.fees[0].node.constant > 0 && transfer.fees[0].network.constant > 0);
    assert!(fees.next.is_some());

    let rates = FileContentsQuery::new()
        .file_id(FileId::new(0, 0, 112))
        .execute(&client)
        .await
        .unwrap();
    let rates = hedera::ExchangeRates::from_bytes(&rates.contents).unwrap();
    assert_eq!(
        (rates.current_rate.hbars, rates.current_rate.cents),
        (30_000, 360_000)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contract_is_created_from_a_file_holding_its_initcode_as_hex() {
    let (_emu, client) = start().await;
    let file = initcode_file(&client).await;
    let receipt = run!(
        ContractCreateTransaction::new()
            .bytecode_file_id(file)
            .gas(100_000),
        &client
    )
    .unwrap();
    assert!(receipt.contract_id.is_some());
    run!(FileDeleteTransaction::new().file_id(file), &client).unwrap();
    assert_eq!(
        run!(
            ContractCreateTransaction::new()
                .bytecode_file_id(file)
                .gas(100_000),
            &client
        )
        .unwrap_err(),
        Status::FileDeleted
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_subscriptions_stream_history_then_new_messages_chunks_reassembled() {
    let (emu, client) = start().await;
    client.set_mirror_network([emu.mirror_grpc_addr.to_string()]);
    let topic = run!(TopicCreateTransaction::new(), &client)
        .unwrap()
        .topic_id
        .unwrap();
    run!(
        TopicMessageSubmitTransaction::new()
            .topic_id(topic)
            .message(b"before".to_vec()),
        &client
    )
    .unwrap();
    let mut query = TopicMessageQuery::new();
    query
        .topic_id(topic)
        .start_time(OffsetDateTime::UNIX_EPOCH)
        // The mirror counts chunks: 1 + 1 + 3.
        .limit(5);
    let mut stream = query.subscribe(&client);
    let first = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("history arrives")
        .unwrap()
        .unwrap();
    assert_eq!(first.contents, b"before");
    assert_eq!(first.sequence_number, 1);
    // After the subscription opened: one short message and one of three chunks.
    run!(
        TopicMessageSubmitTransaction::new()
            .topic_id(topic)
            .message(b"after".to_vec()),
        &client
    )
    .unwrap();
    let long = vec![b'z'; 2500];
    TopicMessageSubmitTransaction::new()
        .topic_id(topic)
        .message(long.clone())
        .execute_all(&client)
        .await
        .unwrap();
    let second = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("a new message arrives")
        .unwrap()
        .unwrap();
    assert_eq!(second.contents, b"after");
    let third = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("the chunked message arrives")
        .unwrap()
        .unwrap();
    assert_eq!(third.contents, long);
    assert_eq!(third.chunks.as_ref().map(Vec::len), Some(3));
    let end = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("the stream ends at its limit");
    assert!(end.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_to_a_missing_topic_fails_and_an_end_time_ends_it() {
    let (emu, client) = start().await;
    client.set_mirror_network([emu.mirror_grpc_addr.to_string()]);
    let topic = run!(TopicCreateTransaction::new(), &client)
        .unwrap()
        .topic_id
        .unwrap();
    for text in ["one", "two"] {
        run!(
            TopicMessageSubmitTransaction::new()
                .topic_id(topic)
                .message(text.as_bytes().to_vec()),
            &client
        )
        .unwrap();
    }
    // An end time in the past: the history up to it, then the stream ends.
    let all = tokio::time::timeout(
        Duration::from_secs(10),
        TopicMessageQuery::new()
            .topic_id(topic)
            .start_time(OffsetDateTime::UNIX_EPOCH)
            .end_time(OffsetDateTime::now_utc())
            .execute(&client),
    )
    .await
    .expect("the stream ends at its end time")
    .unwrap();
    let texts: Vec<_> = all.iter().map(|m| m.contents.clone()).collect();
    assert_eq!(texts, [b"one".to_vec(), b"two".to_vec()]);

    // A topic no entity is: the mirror's NOT_FOUND.
    use hedera_proto::mirror::consensus_service_client::ConsensusServiceClient;
    let mut raw = ConsensusServiceClient::connect(format!("http://{}", emu.mirror_grpc_addr))
        .await
        .unwrap();
    let missing = raw
        .subscribe_topic(hedera_proto::mirror::ConsensusTopicQuery {
            topic_id: Some(hedera_proto::services::TopicId {
                shard_num: 0,
                realm_num: 0,
                topic_num: 999_999,
            }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contracts_are_updated_and_deleted_with_their_admin_key_only() {
    let (_emu, client) = start().await;
    let file = initcode_file(&client).await;
    let admin = run!(
        ContractCreateTransaction::new()
            .bytecode_file_id(file)
            .admin_key(client.get_operator_public_key().unwrap())
            .gas(100_000),
        &client
    )
    .unwrap()
    .contract_id
    .unwrap();
    run!(
        hedera::ContractUpdateTransaction::new()
            .contract_id(admin)
            .contract_memo("renamed"),
        &client
    )
    .unwrap();
    let info = hedera::ContractInfoQuery::new()
        .contract_id(admin)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.contract_memo, "renamed");
    // 0.0.0 removes the auto-renew account.
    run!(
        hedera::ContractUpdateTransaction::new()
            .contract_id(admin)
            .auto_renew_account_id(hedera::AccountId::new(0, 0, 0)),
        &client
    )
    .unwrap();
    let removed = hedera::ContractInfoQuery::new()
        .contract_id(admin)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(
        removed.auto_renew_account_id,
        Some(hedera::AccountId::new(0, 0, 0)),
        "read back as the network answers it"
    );
    run!(
        hedera::ContractDeleteTransaction::new()
            .contract_id(admin)
            .transfer_account_id(hedera::AccountId::new(0, 0, 1001)),
        &client
    )
    .unwrap();
    let deleted = hedera::ContractInfoQuery::new()
        .contract_id(admin)
        .execute(&client)
        .await
        .unwrap_err();
    assert!(
        matches!(
            deleted,
            hedera::Error::QueryNoPaymentPreCheckStatus {
                status: Status::ContractDeleted
            }
        ),
        "{deleted:?}"
    );

    // Without an admin key a contract is immutable; no obtainer or no id: precheck.
    let immutable = run!(
        ContractCreateTransaction::new()
            .bytecode_file_id(file)
            .gas(100_000),
        &client
    )
    .unwrap()
    .contract_id
    .unwrap();
    assert_eq!(
        run!(
            hedera::ContractDeleteTransaction::new()
                .contract_id(immutable)
                .transfer_account_id(hedera::AccountId::new(0, 0, 1001)),
            &client
        )
        .unwrap_err(),
        Status::ModifyingImmutableContract
    );
    assert_eq!(
        run!(
            hedera::ContractUpdateTransaction::new()
                .contract_id(immutable)
                .contract_memo("x"),
            &client
        )
        .unwrap_err(),
        Status::ModifyingImmutableContract
    );
    assert_eq!(
        run!(
            hedera::ContractDeleteTransaction::new()
                .transfer_account_id(hedera::AccountId::new(0, 0, 1001)),
            &client
        )
        .unwrap_err(),
        Status::InvalidContractId
    );
    assert_eq!(
        run!(
            hedera::ContractDeleteTransaction::new().contract_id(immutable),
            &client
        )
        .unwrap_err(),
        Status::ObtainerRequired
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_privileged_payers_submit_transactions_over_6_kib() {
    let (emu, client) = start().await;
    let big = vec![b'x'; 8 * 1024];
    assert_eq!(
        run!(FileCreateTransaction::new().contents(big.clone()), &client).unwrap_err(),
        Status::TransactionOversize
    );
    // The treasury 0.0.2 may (HIP-1300).
    let treasury = hedera::Client::for_network(std::collections::HashMap::from([(
        emu.grpc_addr.to_string(),
        hedera::AccountId::new(0, 0, 3),
    )]))
    .unwrap();
    let key = hak_emu::genesis::treasury_key();
    treasury.set_operator(hedera::AccountId::new(0, 0, 2), key.clone());
    let file = run!(
        FileCreateTransaction::new()
            .keys([key.public_key()])
            .contents(big.clone()),
        &treasury
    )
    .unwrap()
    .file_id
    .unwrap();
    let info = FileInfoQuery::new()
        .file_id(file)
        .execute(&treasury)
        .await
        .unwrap();
    assert_eq!(info.size, big.len() as u64);
    // ~1,300 signatures (130 KB): verified in time, and charged within the SDK's default fee.
    let mut signed = hedera::AccountCreateTransaction::new();
    signed
        .set_key_without_alias(hedera::PrivateKey::generate_ed25519().public_key())
        .freeze_with(&treasury)
        .unwrap();
    for _ in 0..1_270 {
        signed.sign(hedera::PrivateKey::generate_ed25519());
    }
    let response = signed.execute(&treasury).await.unwrap();
    let record = response.get_record(&treasury).await.unwrap();
    assert_eq!(record.receipt.status, Status::Success);
    assert!(record.transaction_fee > hedera::Hbar::from_tinybars(5_000_000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mirror_estimates_gas_for_a_call() {
    let (emu, client) = start().await;
    // No contract at the address: the intrinsic gas of the data (21 000 + 16 a non-zero byte).
    let (status, body) = crate::common::mirror_post(
        &emu,
        "/contracts/call",
        serde_json::json!({"to": format!("0x{:040x}", 999_999), "data": "0x0102", "estimate": true}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["result"], format!("0x{:x}", 21_000 + 32));
    // A contract: the gas its call used, in hex.
    let file = initcode_file(&client).await;
    let contract = run!(
        ContractCreateTransaction::new()
            .bytecode_file_id(file)
            .gas(100_000),
        &client
    )
    .unwrap()
    .contract_id
    .unwrap();
    let (status, body) = crate::common::mirror_post(
        &emu,
        "/contracts/call",
        serde_json::json!({"to": format!("0x{:040x}", contract.num), "data": "0x", "estimate": true}),
    )
    .await;
    assert_eq!(status, 200);
    let gas = u64::from_str_radix(
        body["result"].as_str().unwrap().trim_start_matches("0x"),
        16,
    )
    .unwrap();
    assert!(gas >= 21_000, "{body}");
}

#[test]
fn the_treasury_holds_the_local_nodes_well_known_genesis_key() {
    assert_eq!(
        hak_emu::genesis::treasury_key().to_string_der(),
        "302e020100300506032b65700422042091132178e72057a1d7528025956fe39b0b847f200ab59b2fdd367017f3087137"
    );
}

/// The exchange-rate file 0.0.112 as the network keeps it: only a privileged payer writes it,
/// only with both rates; once written it is the rate the mirror serves, receipts carry and
/// fees are charged at (the same tinycents, so half the tinybars when HBAR doubles).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_exchange_rate_file_sets_the_rate_of_fees_receipts_and_the_mirror() {
    use hedera_proto::services as proto;
    let (emu, client) = start().await;
    let transfer_fee = |client: hedera::Client| async move {
        let record = hedera::TransferTransaction::new()
            .hbar_transfer(
                hedera::AccountId::new(0, 0, 1001),
                hedera::Hbar::from_tinybars(-1),
            )
            .hbar_transfer(
                hedera::AccountId::new(0, 0, 1002),
                hedera::Hbar::from_tinybars(1),
            )
            .execute(&client)
            .await
            .unwrap()
            .get_record(&client)
            .await
            .unwrap();
        (
            record.transaction_fee.to_tinybars(),
            record
                .receipt
                .exchange_rates
                .map(|r| (r.current_rate.hbars, r.current_rate.cents)),
        )
    };
    let (genesis_fee, genesis_rate) = transfer_fee(client.clone()).await;
    assert_eq!(genesis_rate, Some((30_000, 360_000)));

    let now = OffsetDateTime::now_utc().unix_timestamp();
    let rates = |cents: i32, hbars: i32| {
        let rate = |expiry: i64| proto::ExchangeRate {
            hbar_equiv: hbars,
            cent_equiv: cents,
            expiration_time: Some(proto::TimestampSeconds { seconds: expiry }),
        };
        proto::ExchangeRateSet {
            current_rate: Some(rate(now + 3600)),
            next_rate: Some(rate(now + 7200)),
        }
        .encode_to_vec()
    };
    let write = |contents: Vec<u8>| {
        let mut tx = FileUpdateTransaction::new();
        tx.file_id(FileId::new(0, 0, 112)).contents(contents);
        tx
    };
    // An account of no privilege may not, whatever it signs.
    assert_eq!(
        run!(write(rates(24, 1)), &client).unwrap_err(),
        Status::AuthorizationFailed
    );
    let treasury = hedera::Client::for_network(std::collections::HashMap::from([(
        emu.grpc_addr.to_string(),
        hedera::AccountId::new(0, 0, 3),
    )]))
    .unwrap();
    treasury.set_operator(
        hedera::AccountId::new(0, 0, 2),
        hak_emu::genesis::treasury_key(),
    );
    // Not a rate set, or one rate only: refused, the rate unchanged.
    assert_eq!(
        run!(write(b"not rates".to_vec()), &treasury).unwrap_err(),
        Status::InvalidExchangeRateFile
    );
    let mut one = proto::ExchangeRateSet::decode(rates(24, 1).as_slice()).unwrap();
    one.next_rate = None;
    assert_eq!(
        run!(write(one.encode_to_vec()), &treasury).unwrap_err(),
        Status::InvalidExchangeRateFile
    );
    // HBAR at 24 ¢ (twice the genesis 12 ¢), written by the treasury.
    run!(write(rates(24, 1)), &treasury).unwrap();
    let (status, body) = crate::common::mirror(&emu, "/network/exchangerate").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["current_rate"]["cent_equivalent"], 24, "{body}");
    assert_eq!(body["current_rate"]["hbar_equivalent"], 1, "{body}");
    assert_eq!(
        body["current_rate"]["expiration_time"],
        now + 3600,
        "{body}"
    );
    let (fee, rate) = transfer_fee(client.clone()).await;
    assert_eq!(rate, Some((1, 24)));
    assert_eq!(
        fee,
        genesis_fee / 2,
        "the same tinycents at twice the price"
    );
    let file = FileContentsQuery::new()
        .file_id(FileId::new(0, 0, 112))
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(file.contents, rates(24, 1));
}
