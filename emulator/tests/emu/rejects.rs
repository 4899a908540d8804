//! Token bodies the SDKs' suites use (issue 19): `TokenReject` back to the treasury,
//! `TokenUpdateNfts` with the metadata key, and minting or burning nothing.

use crate::common::start;
use hak_emu::genesis::{dev_key, KeyKind};
use hedera::{
    AccountId, Client, NftId, Status, TokenBurnTransaction, TokenCreateTransaction, TokenId,
    TokenMintTransaction, TokenNftInfoQuery, TokenRejectTransaction, TokenType,
    TokenUpdateNftsTransaction, TransferTransaction,
};

fn id(n: u64) -> AccountId {
    AccountId::new(0, 0, n)
}

async fn token(client: &Client, nft: bool, metadata_key: bool) -> TokenId {
    let operator = client.get_operator_public_key().unwrap();
    let mut create = TokenCreateTransaction::new();
    create
        .name("Reject")
        .symbol("REJ")
        .treasury_account_id(id(1001))
        .supply_key(operator);
    if nft {
        create.token_type(TokenType::NonFungibleUnique);
    } else {
        create.initial_supply(100);
    }
    if metadata_key {
        create.metadata_key(operator);
    }
    run!(create, client).unwrap().token_id.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_rejects_tokens_and_nfts_back_to_the_treasury() {
    let (emu, client) = start().await;
    let coin = token(&client, false, false).await;
    let art = token(&client, true, false).await;
    run!(
        TokenMintTransaction::new()
            .token_id(art)
            .metadata([b"a".to_vec(), b"b".to_vec()]),
        &client
    )
    .unwrap();
    // 0.0.1002 (unlimited automatic associations) receives 30 coins and NFT 1.
    run!(
        TransferTransaction::new()
            .token_transfer(coin, id(1001), -30)
            .token_transfer(coin, id(1002), 30)
            .nft_transfer(NftId::from((art, 1)), id(1001), id(1002)),
        &client
    )
    .unwrap();
    let holder = dev_key(KeyKind::Ed25519, 0x10, 0x02);
    let mut reject = TokenRejectTransaction::new();
    reject
        .owner(id(1002))
        .add_token_id(coin)
        .add_nft_id(NftId::from((art, 1)))
        .freeze_with(&client)
        .unwrap()
        .sign(holder.clone());
    run!(reject, &client).unwrap();
    {
        let ledger = emu.node.ledger();
        assert_eq!(ledger.rel(1002, coin.num).unwrap().balance, 0);
        assert_eq!(ledger.rel(1001, coin.num).unwrap().balance, 100);
        assert_eq!(ledger.nfts[&art.num][&1].owner, 1001);
    }
    // Nothing left, the treasury itself, repeats and an empty list.
    let mut again = TokenRejectTransaction::new();
    again
        .owner(id(1002))
        .add_token_id(coin)
        .freeze_with(&client)
        .unwrap()
        .sign(holder.clone());
    assert_eq!(
        run!(again, &client).unwrap_err(),
        Status::InsufficientTokenBalance
    );
    assert_eq!(
        run!(TokenRejectTransaction::new().add_token_id(coin), &client).unwrap_err(),
        Status::AccountIsTreasury
    );
    assert_eq!(
        run!(
            TokenRejectTransaction::new()
                .add_token_id(coin)
                .add_token_id(coin),
            &client
        )
        .unwrap_err(),
        Status::TokenReferenceRepeated
    );
    assert_eq!(
        run!(TokenRejectTransaction::new().owner(id(1002)), &client).unwrap_err(),
        Status::EmptyTokenReferenceList
    );
    // An NFT someone else holds, named by an account never associated with its class: the
    // network answers with the ownership, not the association.
    let mut not_theirs = TokenRejectTransaction::new();
    not_theirs
        .owner(id(1004))
        .add_nft_id(NftId::from((art, 2)))
        .freeze_with(&client)
        .unwrap()
        .sign(dev_key(KeyKind::Ed25519, 0x10, 0x04));
    assert_eq!(
        run!(not_theirs, &client).unwrap_err(),
        Status::InvalidOwnerId
    );
    // The owner's signature is required.
    assert_eq!(
        run!(
            TokenRejectTransaction::new()
                .owner(id(1002))
                .add_nft_id(NftId::from((art, 2))),
            &client
        )
        .unwrap_err(),
        Status::InvalidSignature
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nft_metadata_is_updated_with_the_metadata_key_only() {
    let (_emu, client) = start().await;
    let art = token(&client, true, true).await;
    run!(
        TokenMintTransaction::new()
            .token_id(art)
            .metadata([b"old".to_vec()]),
        &client
    )
    .unwrap();
    run!(
        TokenUpdateNftsTransaction::new()
            .token_id(art)
            .serials(vec![1])
            .metadata(b"new".to_vec()),
        &client
    )
    .unwrap();
    let info = TokenNftInfoQuery::new()
        .nft_id(NftId::from((art, 1)))
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.metadata, b"new");
    // A class without a metadata key cannot be signed for.
    let plain = token(&client, true, false).await;
    run!(
        TokenMintTransaction::new()
            .token_id(plain)
            .metadata([b"x".to_vec()]),
        &client
    )
    .unwrap();
    assert_eq!(
        run!(
            TokenUpdateNftsTransaction::new()
                .token_id(plain)
                .serials(vec![1])
                .metadata(b"y".to_vec()),
            &client
        )
        .unwrap_err(),
        Status::InvalidSignature
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minting_or_burning_nothing_succeeds_and_nfts_need_metadata() {
    let (_emu, client) = start().await;
    let coin = token(&client, false, false).await;
    let minted = run!(TokenMintTransaction::new().token_id(coin), &client).unwrap();
    assert_eq!(minted.total_supply, 100);
    let burned = run!(TokenBurnTransaction::new().token_id(coin), &client).unwrap();
    assert_eq!(burned.total_supply, 100);
    let art = token(&client, true, false).await;
    assert_eq!(
        run!(TokenMintTransaction::new().token_id(art).amount(1), &client).unwrap_err(),
        Status::InvalidTokenMintMetadata
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limited_automatic_associations_run_out_and_the_record_lists_them() {
    let (_emu, client) = start().await;
    let key = hedera::PrivateKey::generate_ed25519();
    let receiver = run!(
        hedera::AccountCreateTransaction::new()
            .set_key_without_alias(key.public_key())
            .max_automatic_token_associations(1),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    let first = token(&client, false, false).await;
    let second = token(&client, false, false).await;
    let response = TransferTransaction::new()
        .token_transfer(first, id(1001), -1)
        .token_transfer(first, receiver, 1)
        .execute(&client)
        .await
        .unwrap();
    let record = response.get_record(&client).await.unwrap();
    assert_eq!(record.automatic_token_associations.len(), 1);
    assert_eq!(record.automatic_token_associations[0].token_id, first);
    assert_eq!(record.automatic_token_associations[0].account_id, receiver);
    assert_eq!(
        run!(
            TransferTransaction::new()
                .token_transfer(second, id(1001), -1)
                .token_transfer(second, receiver, 1),
            &client
        )
        .unwrap_err(),
        Status::NoRemainingAutomaticAssociations
    );
    let mut update = hedera::AccountUpdateTransaction::new();
    update
        .account_id(receiver)
        .max_automatic_token_associations(-2)
        .freeze_with(&client)
        .unwrap()
        .sign(key);
    assert_eq!(
        run!(update, &client).unwrap_err(),
        Status::InvalidMaxAutoAssociations
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_token_expiry_leaves_no_auto_renew_period() {
    let (_emu, client) = start().await;
    let expiry = time::OffsetDateTime::now_utc() + time::Duration::days(80);
    let token = run!(
        TokenCreateTransaction::new()
            .name("Expiring")
            .symbol("EXP")
            .treasury_account_id(id(1001))
            .expiration_time(expiry),
        &client
    )
    .unwrap()
    .token_id
    .unwrap();
    let info = hedera::TokenInfoQuery::new()
        .token_id(token)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.auto_renew_period, None);
    assert_eq!(
        info.expiration_time.map(|t| t.unix_timestamp()),
        Some(expiry.unix_timestamp())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transfers_check_associations_then_allowances_then_balances() {
    let (_emu, client) = start().await;
    let coin = token(&client, false, false).await;
    // A receiver with no automatic-association slots, never associated.
    let key = hedera::PrivateKey::generate_ed25519();
    let closed = run!(
        hedera::AccountCreateTransaction::new()
            .set_key_without_alias(key.public_key())
            .max_automatic_token_associations(0),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    // 0.0.1002 spends 0.0.1003's coins: no allowance, no balance, receiver not associated.
    let spender = dev_key(KeyKind::Ed25519, 0x10, 0x02);
    let mut tx = TransferTransaction::new();
    tx.approved_token_transfer(coin, id(1003), -5)
        .token_transfer(coin, closed, 5)
        .transaction_id(hedera::TransactionId::generate(id(1002)))
        .freeze_with(&client)
        .unwrap()
        .sign(spender);
    assert_eq!(
        run!(tx, &client).unwrap_err(),
        Status::TokenNotAssociatedToAccount
    );
    // An associated owner holding 1 of the 5: the missing allowance comes first.
    run!(
        TransferTransaction::new()
            .token_transfer(coin, id(1001), -1)
            .token_transfer(coin, id(1002), 1),
        &client
    )
    .unwrap();
    let mut tx = TransferTransaction::new();
    tx.approved_token_transfer(coin, id(1002), -5)
        .token_transfer(coin, id(1001), 5)
        .transaction_id(hedera::TransactionId::generate(id(1004)))
        .freeze_with(&client)
        .unwrap()
        .sign(dev_key(KeyKind::Ed25519, 0x10, 0x04));
    assert_eq!(
        run!(tx, &client).unwrap_err(),
        Status::SpenderDoesNotHaveAllowance
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_tokens_are_not_airdropped_and_kyc_needs_an_account() {
    let (_emu, client) = start().await;
    let operator = client.get_operator_public_key().unwrap();
    let coin = run!(
        TokenCreateTransaction::new()
            .name("Paused")
            .symbol("PSD")
            .initial_supply(100)
            .treasury_account_id(id(1001))
            .pause_key(operator)
            .kyc_key(operator),
        &client
    )
    .unwrap()
    .token_id
    .unwrap();
    run!(hedera::TokenPauseTransaction::new().token_id(coin), &client).unwrap();
    // A receiver without association slots: the airdrop would be pending, yet a paused token
    // is refused.
    let closed = run!(
        hedera::AccountCreateTransaction::new()
            .set_key_without_alias(hedera::PrivateKey::generate_ed25519().public_key())
            .max_automatic_token_associations(0),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    assert_eq!(
        run!(
            hedera::TokenAirdropTransaction::new()
                .token_transfer(coin, id(1001), -10)
                .token_transfer(coin, closed, 10),
            &client
        )
        .unwrap_err(),
        Status::TokenIsPaused
    );
    assert_eq!(
        run!(
            hedera::TokenGrantKycTransaction::new().token_id(coin),
            &client
        )
        .unwrap_err(),
        Status::InvalidAccountId
    );
}
