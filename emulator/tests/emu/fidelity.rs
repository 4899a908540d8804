//! Behaviours of a real network the official SDKs' own tests rely on (issue 19), driven by the
//! Rust SDK: token balances in balance queries, the pending airdrops an airdrop's record
//! lists, claim and cancel lists checked at precheck, exchange rates in receipts.

use crate::common::start;
use hedera::{
    AccountBalanceQuery, AccountCreateTransaction, AccountId, Client, Hbar, PrivateKey, Status,
    TokenAirdropTransaction, TokenCancelAirdropTransaction, TokenClaimAirdropTransaction,
    TokenCreateTransaction, TokenId, TransactionRecordQuery, TransferTransaction,
};

fn id(n: u64) -> AccountId {
    AccountId::new(0, 0, n)
}

async fn token(client: &Client, decimals: u32) -> TokenId {
    run!(
        TokenCreateTransaction::new()
            .name("Fidelity")
            .symbol("FDL")
            .decimals(decimals)
            .initial_supply(1000)
            .treasury_account_id(id(1001)),
        client,
    )
    .unwrap()
    .token_id
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn balance_queries_list_token_balances() {
    let (_emu, client) = start().await;
    let gold = token(&client, 2).await;
    let silver = token(&client, 0).await;
    run!(
        TransferTransaction::new()
            .token_transfer(gold, id(1001), -250)
            .token_transfer(gold, id(1002), 250),
        &client
    )
    .unwrap();
    let treasury = AccountBalanceQuery::new()
        .account_id(id(1001))
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(treasury.tokens.get(&gold), Some(&750));
    assert_eq!(treasury.tokens.get(&silver), Some(&1000));
    let receiver = AccountBalanceQuery::new()
        .account_id(id(1002))
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(receiver.tokens.get(&gold), Some(&250));
    assert_eq!(receiver.tokens.get(&silver), None, "never associated");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_airdrops_record_lists_what_it_left_pending_and_empty_claims_fail_precheck() {
    let (_emu, client) = start().await;
    let gold = token(&client, 2).await;
    let closed = run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(PrivateKey::generate_ed25519().public_key())
            .initial_balance(Hbar::new(1))
            .max_automatic_token_associations(0),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    let response = TokenAirdropTransaction::new()
        .token_transfer(gold, id(1001), -30)
        .token_transfer(gold, id(1002), 10)
        .token_transfer(gold, closed, 20)
        .execute(&client)
        .await
        .unwrap();
    let record = TransactionRecordQuery::new()
        .transaction_id(response.transaction_id)
        .execute(&client)
        .await
        .unwrap();
    let pending = &record.pending_airdrop_records;
    assert_eq!(
        pending.len(),
        1,
        "only the closed account's share pends: {pending:?}"
    );
    assert_eq!(pending[0].pending_airdrop_id.receiver_id, closed);
    assert_eq!(pending[0].pending_airdrop_id.sender_id, id(1001));
    assert_eq!(pending[0].pending_airdrop_id.token_id, Some(gold));
    assert_eq!(pending[0].pending_airdrop_value, Some(20));

    // An empty list never reaches consensus: the node refuses it, as a real one does.
    let empty_claim = TokenClaimAirdropTransaction::new()
        .execute(&client)
        .await
        .unwrap_err();
    assert!(
        matches!(
            empty_claim,
            hedera::Error::TransactionPreCheckStatus {
                status: Status::EmptyPendingAirdropIdList,
                ..
            }
        ),
        "{empty_claim:?}"
    );
    let id_once = pending[0].pending_airdrop_id;
    let mut repeated = TokenCancelAirdropTransaction::new();
    repeated.add_pending_airdrop_id(id_once);
    repeated.add_pending_airdrop_id(id_once);
    assert_eq!(
        run!(repeated, &client).unwrap_err(),
        Status::PendingAirdropIdRepeated
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receipts_carry_the_exchange_rates() {
    let (_emu, client) = start().await;
    let receipt = run!(
        TransferTransaction::new()
            .hbar_transfer(id(1001), Hbar::new(-1))
            .hbar_transfer(id(1002), Hbar::new(1)),
        &client
    )
    .unwrap();
    let rates = receipt.exchange_rates.expect("exchange rates");
    assert_eq!(
        (rates.current_rate.hbars, rates.current_rate.cents),
        (30_000, 360_000)
    );
    let now = time::OffsetDateTime::now_utc();
    let expires = rates.current_rate.expiration_time;
    assert!(
        expires > now && expires - now <= time::Duration::hours(1),
        "{expires}"
    );
    assert_eq!(
        rates.next_rate.expiration_time - expires,
        time::Duration::hours(1)
    );
}
