//! Behaviours of a real network the official SDKs' own tests rely on (issue 19), driven by the
//! Rust SDK: token balances in balance queries, the pending airdrops an airdrop's record
//! lists, claim and cancel lists checked at precheck, exchange rates in receipts, and what a
//! token's keys do (freeze, KYC, pause, wipe, burn, delete).

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

/// A fungible token with every key the operator's, and 0.0.1002 holding 100 of it.
async fn keyed_token(client: &Client) -> TokenId {
    let key = client.get_operator_public_key().unwrap();
    let token = run!(
        TokenCreateTransaction::new()
            .name("Keyed")
            .symbol("KEY")
            .initial_supply(1000)
            .treasury_account_id(id(1001))
            .admin_key(key)
            .supply_key(key)
            .freeze_key(key)
            .kyc_key(key)
            .wipe_key(key)
            .pause_key(key),
        client,
    )
    .unwrap()
    .token_id
    .unwrap();
    run!(
        hedera::TokenGrantKycTransaction::new()
            .token_id(token)
            .account_id(id(1002)),
        client
    )
    .unwrap_err(); // not associated yet
    run!(
        hedera::TokenAssociateTransaction::new()
            .account_id(id(1002))
            .token_ids([token])
            .freeze_with(client)
            .unwrap()
            .sign(hak_emu::genesis::dev_key(
                hak_emu::genesis::KeyKind::Ed25519,
                0x10,
                0x02
            )),
        client
    )
    .unwrap();
    run!(
        hedera::TokenGrantKycTransaction::new()
            .token_id(token)
            .account_id(id(1002)),
        client
    )
    .unwrap();
    run!(
        TransferTransaction::new()
            .token_transfer(token, id(1001), -100)
            .token_transfer(token, id(1002), 100),
        client
    )
    .unwrap();
    token
}

fn send(token: TokenId, amount: i64) -> TransferTransaction {
    let mut tx = TransferTransaction::new();
    tx.token_transfer(token, id(1001), -amount)
        .token_transfer(token, id(1002), amount);
    tx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokens_keys_freeze_kyc_pause_wipe_burn_and_delete() {
    let (_emu, client) = start().await;
    let token = keyed_token(&client).await;
    let account = |tx: &mut hedera::TokenFreezeTransaction| {
        tx.token_id(token).account_id(id(1002));
    };
    // Frozen: no transfers to or from the account, until unfrozen.
    let mut freeze = hedera::TokenFreezeTransaction::new();
    account(&mut freeze);
    run!(freeze, &client).unwrap();
    assert_eq!(
        run!(send(token, 1), &client).unwrap_err(),
        Status::AccountFrozenForToken
    );
    run!(
        hedera::TokenUnfreezeTransaction::new()
            .token_id(token)
            .account_id(id(1002)),
        &client
    )
    .unwrap();
    run!(send(token, 1), &client).unwrap();
    // KYC revoked: refused, as the network refuses it.
    run!(
        hedera::TokenRevokeKycTransaction::new()
            .token_id(token)
            .account_id(id(1002)),
        &client
    )
    .unwrap();
    assert_eq!(
        run!(send(token, 1), &client).unwrap_err(),
        Status::AccountKycNotGrantedForToken
    );
    run!(
        hedera::TokenGrantKycTransaction::new()
            .token_id(token)
            .account_id(id(1002)),
        &client
    )
    .unwrap();
    // Paused: nothing moves, nothing is minted or burned.
    run!(
        hedera::TokenPauseTransaction::new().token_id(token),
        &client
    )
    .unwrap();
    assert_eq!(
        run!(send(token, 1), &client).unwrap_err(),
        Status::TokenIsPaused
    );
    assert_eq!(
        run!(
            hedera::TokenBurnTransaction::new()
                .token_id(token)
                .amount(1u64),
            &client
        )
        .unwrap_err(),
        Status::TokenIsPaused
    );
    run!(
        hedera::TokenUnpauseTransaction::new().token_id(token),
        &client
    )
    .unwrap();
    // Wiped from the holder (not from the treasury), burned from the treasury.
    let wiped = run!(
        hedera::TokenWipeTransaction::new()
            .token_id(token)
            .account_id(id(1002))
            .amount(2u64),
        &client
    )
    .unwrap();
    assert_eq!(wiped.total_supply, 998);
    assert_eq!(
        run!(
            hedera::TokenWipeTransaction::new()
                .token_id(token)
                .account_id(id(1001))
                .amount(1u64),
            &client
        )
        .unwrap_err(),
        Status::CannotWipeTokenTreasuryAccount
    );
    assert_eq!(
        run!(
            hedera::TokenWipeTransaction::new()
                .token_id(token)
                .account_id(id(1002))
                .amount(1_000u64),
            &client
        )
        .unwrap_err(),
        Status::InvalidWipingAmount
    );
    let burned = run!(
        hedera::TokenBurnTransaction::new()
            .token_id(token)
            .amount(98u64),
        &client
    )
    .unwrap();
    assert_eq!(burned.total_supply, 900);
    let balances = AccountBalanceQuery::new()
        .account_id(id(1002))
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(
        balances.tokens.get(&token),
        Some(&99),
        "101 received, 2 wiped"
    );
    // Deleted: every later use is refused.
    run!(
        hedera::TokenDeleteTransaction::new().token_id(token),
        &client
    )
    .unwrap();
    assert_eq!(
        run!(send(token, 1), &client).unwrap_err(),
        Status::TokenWasDeleted
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_a_token_lacks_are_named_in_the_status() {
    let (_emu, client) = start().await;
    let plain = token(&client, 0).await;
    assert_eq!(
        run!(
            hedera::TokenPauseTransaction::new().token_id(plain),
            &client
        )
        .unwrap_err(),
        Status::TokenHasNoPauseKey
    );
    assert_eq!(
        run!(
            hedera::TokenBurnTransaction::new()
                .token_id(plain)
                .amount(1u64),
            &client
        )
        .unwrap_err(),
        Status::TokenHasNoSupplyKey
    );
    assert_eq!(
        run!(
            hedera::TokenDeleteTransaction::new().token_id(plain),
            &client
        )
        .unwrap_err(),
        Status::TokenIsImmutable
    );
    assert_eq!(
        run!(
            hedera::TokenFreezeTransaction::new()
                .token_id(plain)
                .account_id(id(1001)),
            &client
        )
        .unwrap_err(),
        Status::TokenHasNoFreezeKey
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nft_info_queries_answer_owner_and_metadata() {
    let (_emu, client) = start().await;
    let key = client.get_operator_public_key().unwrap();
    let art = run!(
        TokenCreateTransaction::new()
            .name("Art")
            .symbol("ART")
            .token_type(hedera::TokenType::NonFungibleUnique)
            .treasury_account_id(id(1001))
            .supply_key(key),
        &client
    )
    .unwrap()
    .token_id
    .unwrap();
    run!(
        hedera::TokenMintTransaction::new()
            .token_id(art)
            .metadata([b"ipfs://one".to_vec()]),
        &client
    )
    .unwrap();
    let info = hedera::TokenNftInfoQuery::new()
        .nft_id(art.nft(1))
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.account_id, id(1001));
    assert_eq!(info.metadata, b"ipfs://one");
    let missing = hedera::TokenNftInfoQuery::new()
        .nft_id(art.nft(2))
        .execute(&client)
        .await
        .unwrap_err();
    assert!(
        matches!(
            missing,
            // The cost query already fails, as on the network.
            hedera::Error::QueryNoPaymentPreCheckStatus {
                status: Status::InvalidNftId
            }
        ),
        "{missing:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_renew_periods_and_schedule_expiries_are_bounded_as_on_the_network() {
    let (_emu, client) = start().await;
    let key = PrivateKey::generate_ed25519().public_key();
    assert_eq!(
        run!(
            AccountCreateTransaction::new()
                .set_key_without_alias(key)
                .auto_renew_period(time::Duration::days(1)),
            &client
        )
        .unwrap_err(),
        Status::AutorenewDurationNotInRange
    );
    run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(key)
            .auto_renew_period(time::Duration::days(90)),
        &client
    )
    .unwrap();
    let mut transfer = TransferTransaction::new();
    transfer
        .hbar_transfer(id(1001), Hbar::new(-1))
        .hbar_transfer(id(1002), Hbar::new(1));
    let far = time::OffsetDateTime::now_utc() + time::Duration::days(365);
    assert_eq!(
        run!(
            hedera::ScheduleCreateTransaction::new()
                .scheduled_transaction(transfer.clone())
                .expiration_time(far),
            &client
        )
        .unwrap_err(),
        Status::ScheduleExpirationTimeTooFarInFuture
    );
    let near = time::OffsetDateTime::now_utc() + time::Duration::days(30);
    run!(
        hedera::ScheduleCreateTransaction::new()
            .scheduled_transaction(transfer)
            .expiration_time(near),
        &client
    )
    .unwrap();
}
