//! Paid queries (issue 19): a cost that is not zero, a payment the node checks and charges,
//! and cost answers that fail as the answer would (deleted or missing entities).

use crate::common::start;
use hedera::{
    AccountCreateTransaction, AccountDeleteTransaction, AccountId, AccountInfoQuery, Hbar,
    PrivateKey, Status, TopicCreateTransaction, TopicDeleteTransaction, TopicInfoQuery,
};

fn id(n: u64) -> AccountId {
    AccountId::new(0, 0, n)
}

fn balance(emu: &hak_emu::Emulator, num: u64) -> i64 {
    emu.node.ledger().accounts[&num].balance
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_info_query_costs_something_and_its_payment_is_charged() {
    let (emu, client) = start().await;
    let cost = AccountInfoQuery::new()
        .account_id(id(1002))
        .get_cost(&client)
        .await
        .unwrap();
    assert!(cost.to_tinybars() > 0, "a paid query has a price");
    let (payer, node) = (balance(&emu, 1001), balance(&emu, 3));
    AccountInfoQuery::new()
        .account_id(id(1002))
        .execute(&client)
        .await
        .unwrap();
    let transfer_fee = 100_000;
    assert_eq!(
        payer - balance(&emu, 1001),
        cost.to_tinybars() + transfer_fee
    );
    assert_eq!(
        balance(&emu, 3) - node,
        cost.to_tinybars() + transfer_fee / 10
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payment_below_the_cost_is_insufficient_tx_fee() {
    let (emu, client) = start().await;
    let before = balance(&emu, 1001);
    for paid in [Hbar::ZERO, Hbar::from_tinybars(1)] {
        let err = AccountInfoQuery::new()
            .account_id(id(1002))
            .payment_amount(paid)
            .execute(&client)
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                hedera::Error::QueryPaymentPreCheckStatus {
                    status: Status::InsufficientTxFee,
                    ..
                }
            ),
            "{paid}: {err:?}"
        );
    }
    assert_eq!(
        balance(&emu, 1001),
        before,
        "a refused payment is not submitted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cost_of_a_deleted_entity_fails_as_its_answer_does() {
    let (_emu, client) = start().await;
    let key = PrivateKey::generate_ed25519();
    let account = run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(key.public_key())
            .initial_balance(Hbar::new(1)),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    let mut delete = AccountDeleteTransaction::new();
    delete
        .account_id(account)
        .transfer_account_id(id(1001))
        .freeze_with(&client)
        .unwrap()
        .sign(key);
    run!(&mut delete, &client).unwrap();
    let err = AccountInfoQuery::new()
        .account_id(account)
        .get_cost(&client)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            hedera::Error::QueryNoPaymentPreCheckStatus {
                status: Status::AccountDeleted
            }
        ),
        "{err:?}"
    );

    let (_, operator_key) = _emu.operator();
    let topic = run!(
        TopicCreateTransaction::new().admin_key(operator_key.public_key()),
        &client
    )
    .unwrap()
    .topic_id
    .unwrap();
    run!(TopicDeleteTransaction::new().topic_id(topic), &client).unwrap();
    let err = TopicInfoQuery::new()
        .topic_id(topic)
        .get_cost(&client)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            hedera::Error::QueryNoPaymentPreCheckStatus {
                status: Status::InvalidTopicId
            }
        ),
        "{err:?}"
    );
}
