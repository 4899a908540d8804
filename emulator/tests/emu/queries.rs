//! Node queries through the real SDK: topic, token and schedule info, transaction records,
//! and NOT_SUPPORTED for queries the emulator does not model.

use crate::common::start;
use hedera::{
    AccountId, Hbar, ScheduleCreateTransaction, ScheduleInfoQuery, Status, TokenCreateTransaction,
    TokenInfoQuery, TopicCreateTransaction, TopicInfoQuery, TopicMessageSubmitTransaction,
    TransactionRecordQuery, TransferTransaction,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_and_record_queries_answer_from_the_ledger() {
    let (emu, client) = start().await;
    let operator = client.get_operator_public_key().unwrap();
    let topic = TopicCreateTransaction::new()
        .topic_memo("q")
        .admin_key(operator)
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap()
        .topic_id
        .unwrap();
    TopicMessageSubmitTransaction::new()
        .topic_id(topic)
        .message(b"m".to_vec())
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap();
    let info = TopicInfoQuery::new()
        .topic_id(topic)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!((info.topic_memo.as_str(), info.sequence_number), ("q", 1));
    assert_eq!(info.admin_key, Some(hedera::Key::Single(operator)));

    let token = TokenCreateTransaction::new()
        .name("Query Coin")
        .symbol("QC")
        .decimals(3)
        .initial_supply(7)
        .treasury_account_id(AccountId::new(0, 0, 1001))
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap()
        .token_id
        .unwrap();
    let info = TokenInfoQuery::new()
        .token_id(token)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(
        (
            info.name.as_str(),
            info.symbol.as_str(),
            info.decimals,
            info.total_supply
        ),
        ("Query Coin", "QC", 3, 7)
    );

    let response = TransferTransaction::new()
        .hbar_transfer(AccountId::new(0, 0, 1001), Hbar::new(-1))
        .hbar_transfer(AccountId::new(0, 0, 1002), Hbar::new(1))
        .transaction_memo("recorded")
        .execute(&client)
        .await
        .unwrap();
    let record = TransactionRecordQuery::new()
        .transaction_id(response.transaction_id)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(record.receipt.status, Status::Success);
    assert_eq!(record.transaction_memo, "recorded");
    let to_1002: i64 = record
        .transfers
        .iter()
        .filter(|t| t.account_id == AccountId::new(0, 0, 1002))
        .map(|t| t.amount.to_tinybars())
        .sum();
    assert_eq!(to_1002, 100_000_000);

    let mut inner = TransferTransaction::new();
    inner
        .hbar_transfer(AccountId::new(0, 0, 1002), Hbar::new(-1))
        .hbar_transfer(AccountId::new(0, 0, 1001), Hbar::new(1));
    let schedule = ScheduleCreateTransaction::new()
        .scheduled_transaction(inner)
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap()
        .schedule_id
        .unwrap();
    let info = ScheduleInfoQuery::new()
        .schedule_id(schedule)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.creator_account_id, AccountId::new(0, 0, 1001));
    assert!(info.executed_at.is_none());

    // A query the network no longer serves (live hashes): NOT_SUPPORTED in its own type.
    use hedera_proto::services as proto;
    let mut raw = proto::crypto_service_client::CryptoServiceClient::connect(format!(
        "http://{}",
        emu.grpc_addr
    ))
    .await
    .unwrap();
    #[allow(deprecated)]
    let answer = raw
        .get_live_hash(proto::Query {
            query: Some(proto::query::Query::CryptoGetLiveHash(
                proto::CryptoGetLiveHashQuery::default(),
            )),
        })
        .await
        .unwrap()
        .into_inner();
    match answer.response {
        Some(proto::response::Response::CryptoGetLiveHash(r)) => assert_eq!(
            r.header.unwrap().node_transaction_precheck_code,
            proto::ResponseCodeEnum::NotSupported as i32
        ),
        other => panic!("{other:?}"),
    }

    // Contract info and bytecode: the genesis ERC-20 factory.
    let info = hedera::ContractInfoQuery::new()
        .contract_id(hedera::ContractId::new(0, 0, 1012))
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.account_id, AccountId::new(0, 0, 1012));
    assert_eq!(info.contract_account_id, format!("{:040x}", 1012));
    let code = hedera::ContractBytecodeQuery::new()
        .contract_id(hedera::ContractId::new(0, 0, 1012))
        .execute(&client)
        .await
        .unwrap();
    assert!(!code.is_empty(), "the factory's runtime bytecode");
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn account_records_list_what_the_account_paid_for_and_version_info_answers() {
    let (emu, client) = start().await;
    for _ in 0..2 {
        run!(
            TransferTransaction::new()
                .hbar_transfer(AccountId::new(0, 0, 1001), Hbar::from_tinybars(-5))
                .hbar_transfer(AccountId::new(0, 0, 1002), Hbar::from_tinybars(5)),
            &client
        )
        .unwrap();
    }
    let records = hedera::AccountRecordsQuery::new()
        .account_id(AccountId::new(0, 0, 1001))
        .execute(&client)
        .await
        .unwrap();
    // The two transfers, and the payments of the queries before this one.
    let transfers = records
        .iter()
        .filter(|r| {
            r.transfers
                .iter()
                .any(|t| t.account_id == AccountId::new(0, 0, 1002) && t.amount.to_tinybars() == 5)
        })
        .count();
    assert_eq!(transfers, 2, "{records:?}");
    assert!(records
        .iter()
        .all(|r| r.transaction_id.account_id == AccountId::new(0, 0, 1001)));
    let none = hedera::AccountRecordsQuery::new()
        .account_id(AccountId::new(0, 0, 1005))
        .execute(&client)
        .await
        .unwrap();
    assert!(none.is_empty(), "0.0.1005 paid for nothing");

    let version = hedera::NetworkVersionInfoQuery::new()
        .execute(&client)
        .await
        .unwrap();
    assert!(version.protobuf_version.minor > 0);
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn account_bodies_without_their_account_id_are_refused_at_precheck() {
    let (_emu, client) = start().await;
    let delete = run!(
        hedera::AccountDeleteTransaction::new().transfer_account_id(AccountId::new(0, 0, 1001)),
        &client
    )
    .unwrap_err();
    assert_eq!(delete, Status::AccountIdDoesNotExist);
    let update = run!(
        hedera::AccountUpdateTransaction::new().account_memo("x"),
        &client
    )
    .unwrap_err();
    assert_eq!(update, Status::AccountIdDoesNotExist);
}
