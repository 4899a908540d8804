//! Scheduled transactions on the emulator: execution when the signatures are complete (at
//! create or at a later sign), deletion with the admin key, and the mirror's view.

use crate::common::{mirror, start};
use hak_emu::genesis::{dev_key, KeyKind};
use hedera::{
    AccountId, Hbar, ScheduleCreateTransaction, ScheduleDeleteTransaction, ScheduleSignTransaction,
    Status, TransactionReceiptQuery, TransferTransaction,
};

fn id(n: u64) -> AccountId {
    AccountId::new(0, 0, n)
}

fn transfer_from(from: u64, to: u64, hbar: i64) -> hedera::TransferTransaction {
    let mut tx = TransferTransaction::new();
    tx.hbar_transfer(id(from), Hbar::new(-hbar))
        .hbar_transfer(id(to), Hbar::new(hbar));
    tx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_waits_for_the_missing_signature_then_executes_once() {
    let (emu, client) = start().await;
    let before = emu.node.ledger().accounts[&1004].balance;
    // Operator pays; the inner transfer debits 0.0.1002, whose key has not signed yet.
    let created = run!(
        ScheduleCreateTransaction::new()
            .scheduled_transaction(transfer_from(1002, 1004, 2))
            .schedule_memo("pay rent"),
        &client
    )
    .unwrap();
    let schedule = created.schedule_id.unwrap();
    let scheduled_id = created.scheduled_transaction_id.unwrap();
    assert!(scheduled_id.scheduled);
    assert_eq!(
        emu.node.ledger().accounts[&1004].balance,
        before,
        "not executed yet"
    );
    let (_, info) = mirror(&emu, &format!("/schedules/{schedule}")).await;
    assert!(info["executed_timestamp"].is_null());
    assert_eq!(info["memo"], "pay rent");

    let mut sign = ScheduleSignTransaction::new();
    sign.schedule_id(schedule)
        .freeze_with(&client)
        .unwrap()
        .sign(dev_key(KeyKind::Ed25519, 0x10, 0x02));
    let signed = run!(sign, &client).unwrap();
    assert_eq!(signed.scheduled_transaction_id, Some(scheduled_id));
    assert_eq!(
        emu.node.ledger().accounts[&1004].balance - before,
        200_000_000
    );
    let inner = TransactionReceiptQuery::new()
        .transaction_id(scheduled_id)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(inner.status, Status::Success);
    let (_, info) = mirror(&emu, &format!("/schedules/{schedule}")).await;
    assert!(info["executed_timestamp"].is_string());
    // Signing an executed schedule fails.
    let mut again = ScheduleSignTransaction::new();
    again.schedule_id(schedule);
    assert_eq!(
        run!(again, &client).unwrap_err(),
        Status::ScheduleAlreadyExecuted
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_with_all_signatures_executes_at_create_and_identical_ones_are_refused() {
    let (emu, client) = start().await;
    let created = run!(
        ScheduleCreateTransaction::new().scheduled_transaction(transfer_from(1001, 1005, 1)),
        &client
    )
    .unwrap();
    let scheduled_id = created.scheduled_transaction_id.unwrap();
    let inner = TransactionReceiptQuery::new()
        .transaction_id(scheduled_id)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(inner.status, Status::Success);
    // The mirror lists the create and the scheduled execution under the same id.
    let path = format!(
        "/transactions/0.0.1001-{}-{:09}",
        scheduled_id.valid_start.unix_timestamp(),
        scheduled_id.valid_start.nanosecond()
    );
    let (_, rows) = mirror(&emu, &path).await;
    let names: Vec<&str> = rows["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["SCHEDULECREATE", "CRYPTOTRANSFER"]);
    assert_eq!(rows["transactions"][1]["scheduled"], true);

    // Identical pending schedules are refused with the existing schedule's id.
    let first = run!(
        ScheduleCreateTransaction::new().scheduled_transaction(transfer_from(1003, 1005, 1)),
        &client
    )
    .unwrap();
    let err = run!(
        ScheduleCreateTransaction::new().scheduled_transaction(transfer_from(1003, 1005, 1)),
        &client
    )
    .unwrap_err();
    assert_eq!(err, Status::IdenticalScheduleAlreadyCreated);
    assert!(first.schedule_id.is_some());
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_are_deleted_with_their_admin_key_only() {
    let (emu, client) = start().await;
    let operator = client.get_operator_public_key().unwrap();
    let managed = run!(
        ScheduleCreateTransaction::new()
            .scheduled_transaction(transfer_from(1002, 1004, 1))
            .admin_key(operator),
        &client
    )
    .unwrap()
    .schedule_id
    .unwrap();
    run!(
        ScheduleDeleteTransaction::new().schedule_id(managed),
        &client
    )
    .unwrap();
    let mut sign = ScheduleSignTransaction::new();
    sign.schedule_id(managed)
        .freeze_with(&client)
        .unwrap()
        .sign(dev_key(KeyKind::Ed25519, 0x10, 0x02));
    assert_eq!(
        run!(sign, &client).unwrap_err(),
        Status::ScheduleAlreadyDeleted
    );
    let immutable = run!(
        ScheduleCreateTransaction::new().scheduled_transaction(transfer_from(1004, 1002, 1)),
        &client
    )
    .unwrap()
    .schedule_id
    .unwrap();
    assert_eq!(
        run!(
            ScheduleDeleteTransaction::new().schedule_id(immutable),
            &client
        )
        .unwrap_err(),
        Status::ScheduleIsImmutable
    );
    let (_, info) = mirror(&emu, &format!("/schedules/{managed}")).await;
    assert_eq!(info["deleted"], true);
    emu.shutdown();
}
