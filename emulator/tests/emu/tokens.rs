//! Tokens, account updates and deletions, topic updates and deletions on the emulator,
//! driven by the real SDK.

use crate::common::{key_of, mirror, start};
use hedera::{
    AccountAllowanceApproveTransaction, AccountCreateTransaction, AccountDeleteTransaction,
    AccountId, AccountUpdateTransaction, Client, ContractCreateTransaction, ContractId, Hbar,
    NftId, PrivateKey, Status, TokenAirdropTransaction, TokenAssociateTransaction,
    TokenCancelAirdropTransaction, TokenClaimAirdropTransaction, TokenCreateTransaction,
    TokenDissociateTransaction, TokenId, TokenMintTransaction, TokenSupplyType, TokenType,
    TopicCreateTransaction, TopicDeleteTransaction, TopicMessageSubmitTransaction,
    TopicUpdateTransaction, TransferTransaction,
};

fn id(n: u64) -> AccountId {
    AccountId::new(0, 0, n)
}

async fn fungible(client: &Client) -> TokenId {
    let operator = client.get_operator_public_key().unwrap();
    run!(
        TokenCreateTransaction::new()
            .name("Hak Dollar")
            .symbol("HAKD")
            .decimals(2)
            .initial_supply(1000)
            .token_supply_type(TokenSupplyType::Finite)
            .max_supply(2000)
            .treasury_account_id(id(1001))
            .supply_key(operator),
        client,
    )
    .unwrap()
    .token_id
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fungible_tokens_create_associate_transfer_mint_and_dissociate() {
    let (emu, client) = start().await;
    let token = fungible(&client).await;
    assert_eq!(token.to_string(), "0.0.1006");
    let (_, info) = mirror(&emu, "/tokens/0.0.1006").await;
    assert_eq!(
        (info["decimals"].as_str(), info["total_supply"].as_str()),
        (Some("2"), Some("1000"))
    );
    assert_eq!(
        (info["type"].as_str(), info["supply_type"].as_str()),
        (Some("FUNGIBLE_COMMON"), Some("FINITE"))
    );
    assert_eq!(info["treasury_account_id"], "0.0.1001");

    // 0.0.1002 has unlimited automatic associations: the transfer associates it.
    run!(
        TransferTransaction::new()
            .token_transfer(token, id(1001), -100)
            .token_transfer(token, id(1002), 100),
        &client
    )
    .unwrap();
    let (_, held) = mirror(&emu, "/accounts/0.0.1002/tokens?token.id=0.0.1006").await;
    assert_eq!(held["tokens"][0]["balance"], 100);
    assert_eq!(held["tokens"][0]["automatic_association"], true);

    // A new account without automatic associations must associate first.
    let key = PrivateKey::generate_ed25519();
    let fresh = run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(key.public_key())
            .initial_balance(Hbar::new(5)),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    let to_fresh = |amount: i64| {
        let mut tx = TransferTransaction::new();
        tx.token_transfer(token, id(1001), -amount)
            .token_transfer(token, fresh, amount);
        tx
    };
    assert_eq!(
        run!(&mut to_fresh(5), &client).unwrap_err(),
        Status::TokenNotAssociatedToAccount
    );
    let mut associate = TokenAssociateTransaction::new();
    associate
        .account_id(fresh)
        .token_ids([token])
        .freeze_with(&client)
        .unwrap()
        .sign(key.clone());
    run!(&mut associate, &client).unwrap();
    run!(&mut to_fresh(5), &client).unwrap();
    assert_eq!(
        run!(&mut to_fresh(10_000), &client).unwrap_err(),
        Status::InsufficientTokenBalance
    );

    // Mint up to the cap.
    let minted = run!(
        TokenMintTransaction::new().token_id(token).amount(500),
        &client
    )
    .unwrap();
    assert_eq!(minted.total_supply, 1500);
    assert_eq!(
        run!(
            TokenMintTransaction::new().token_id(token).amount(501),
            &client
        )
        .unwrap_err(),
        Status::TokenMaxSupplyReached
    );

    // Dissociating needs a zero balance; the treasury can never dissociate.
    let mut dissociate = TokenDissociateTransaction::new();
    dissociate
        .account_id(fresh)
        .token_ids([token])
        .freeze_with(&client)
        .unwrap()
        .sign(key.clone());
    assert_eq!(
        run!(&mut dissociate, &client).unwrap_err(),
        Status::TransactionRequiresZeroTokenBalances
    );
    assert_eq!(
        run!(
            TokenDissociateTransaction::new()
                .account_id(id(1001))
                .token_ids([token]),
            &client
        )
        .unwrap_err(),
        Status::AccountIsTreasury
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nfts_mint_with_serials_and_move_between_owners() {
    let (emu, client) = start().await;
    let operator = client.get_operator_public_key().unwrap();
    let token = run!(
        TokenCreateTransaction::new()
            .name("Hak Art")
            .symbol("HART")
            .token_type(TokenType::NonFungibleUnique)
            .treasury_account_id(id(1001))
            .supply_key(operator),
        &client,
    )
    .unwrap()
    .token_id
    .unwrap();
    let minted = run!(
        TokenMintTransaction::new()
            .token_id(token)
            .metadata([b"ipfs://a".to_vec(), b"ipfs://b".to_vec()]),
        &client
    )
    .unwrap();
    assert_eq!(minted.serials, [1, 2]);
    run!(
        TransferTransaction::new().nft_transfer(
            NftId {
                token_id: token,
                serial: 1
            },
            id(1001),
            id(1002)
        ),
        &client
    )
    .unwrap();
    let err = run!(
        TransferTransaction::new().nft_transfer(
            NftId {
                token_id: token,
                serial: 1
            },
            id(1001),
            id(1003)
        ),
        &client
    )
    .unwrap_err();
    assert_eq!(err, Status::SenderDoesNotOwnNftSerialNo);
    let (_, owned) = mirror(&emu, "/accounts/0.0.1002/nfts").await;
    assert_eq!(owned["nfts"][0]["serial_number"], 1);
    assert_eq!(owned["nfts"][0]["metadata"], "aXBmczovL2E=");
    // An NFT class needs a supply key.
    let err = run!(
        TokenCreateTransaction::new()
            .name("X")
            .symbol("X")
            .token_type(TokenType::NonFungibleUnique)
            .treasury_account_id(id(1001)),
        &client,
    )
    .unwrap_err();
    assert_eq!(err, Status::TokenHasNoSupplyKey);
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_update_with_their_key_and_delete_into_another_account() {
    let (emu, client) = start().await;
    let key = PrivateKey::generate_ecdsa();
    let account = run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(key.public_key())
            .initial_balance(Hbar::new(3)),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    assert_eq!(
        run!(
            AccountUpdateTransaction::new()
                .account_id(account)
                .account_memo("unsigned"),
            &client
        )
        .unwrap_err(),
        Status::InvalidSignature
    );
    let mut update = AccountUpdateTransaction::new();
    update
        .account_id(account)
        .account_memo("signed")
        .freeze_with(&client)
        .unwrap()
        .sign(key.clone());
    run!(&mut update, &client).unwrap();
    let (_, info) = mirror(&emu, &format!("/accounts/{account}")).await;
    assert_eq!(info["memo"], "signed");

    let before = emu.node.ledger().accounts[&1004].balance;
    let mut delete = AccountDeleteTransaction::new();
    delete
        .account_id(account)
        .transfer_account_id(id(1004))
        .freeze_with(&client)
        .unwrap()
        .sign(key);
    run!(&mut delete, &client).unwrap();
    assert_eq!(
        emu.node.ledger().accounts[&1004].balance - before,
        300_000_000
    );
    let err = run!(
        TransferTransaction::new()
            .hbar_transfer(id(1001), Hbar::new(-1))
            .hbar_transfer(account, Hbar::new(1)),
        &client
    )
    .unwrap_err();
    assert_eq!(err, Status::AccountDeleted);
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topics_update_and_delete_with_their_admin_key_only() {
    let (emu, client) = start().await;
    let operator = client.get_operator_public_key().unwrap();
    let managed = run!(
        TopicCreateTransaction::new()
            .admin_key(operator)
            .topic_memo("v1"),
        &client
    )
    .unwrap()
    .topic_id
    .unwrap();
    run!(
        TopicUpdateTransaction::new()
            .topic_id(managed)
            .topic_memo("v2"),
        &client
    )
    .unwrap();
    let (_, info) = mirror(&emu, &format!("/topics/{managed}")).await;
    assert_eq!(info["memo"], "v2");
    run!(TopicDeleteTransaction::new().topic_id(managed), &client).unwrap();
    let err = run!(
        TopicMessageSubmitTransaction::new()
            .topic_id(managed)
            .message(b"late".to_vec()),
        &client
    )
    .unwrap_err();
    assert_eq!(err, Status::InvalidTopicId);

    let immutable = run!(&mut TopicCreateTransaction::new(), &client)
        .unwrap()
        .topic_id
        .unwrap();
    assert_eq!(
        run!(TopicDeleteTransaction::new().topic_id(immutable), &client).unwrap_err(),
        Status::Unauthorized
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowances_let_a_spender_move_hbar_and_tokens_up_to_the_approved_amount() {
    let (emu, client) = start().await;
    let token = fungible(&client).await;
    // 0.0.1001 approves 0.0.1002 for 5 HBAR and 50 token units.
    run!(
        AccountAllowanceApproveTransaction::new()
            .approve_hbar_allowance(id(1001), id(1002), Hbar::new(5))
            .approve_token_allowance(token, id(1001), id(1002), 50),
        &client
    )
    .unwrap();
    let (_, crypto) = mirror(&emu, "/accounts/0.0.1001/allowances/crypto").await;
    assert_eq!(crypto["allowances"][0]["amount"], 500_000_000);
    let (_, tokens) = mirror(
        &emu,
        "/accounts/0.0.1001/allowances/tokens?spender.id=0.0.1002",
    )
    .await;
    assert_eq!(tokens["allowances"][0]["amount"], 50);

    // 0.0.1002 pays and spends the allowance; the owner does not sign.
    let spender = Client::for_network(std::collections::HashMap::from([(
        emu.grpc_addr.to_string(),
        id(3),
    )]))
    .unwrap();
    spender.set_operator(id(1002), key_of(1002));
    let mut spend = TransferTransaction::new();
    spend
        .approved_hbar_transfer(id(1001), Hbar::new(-3))
        .hbar_transfer(id(1004), Hbar::new(3));
    run!(spend, &spender).unwrap();
    let mut too_much = TransferTransaction::new();
    too_much
        .approved_hbar_transfer(id(1001), Hbar::new(-3))
        .hbar_transfer(id(1004), Hbar::new(3));
    assert_eq!(
        run!(too_much, &spender).unwrap_err(),
        Status::AmountExceedsAllowance
    );
    let mut tokens_spend = TransferTransaction::new();
    tokens_spend
        .approved_token_transfer(token, id(1001), -40)
        .token_transfer(token, id(1004), 40);
    run!(tokens_spend, &spender).unwrap();
    // Without an allowance.
    let mut stranger = TransferTransaction::new();
    stranger
        .approved_hbar_transfer(id(1003), Hbar::new(-1))
        .hbar_transfer(id(1004), Hbar::new(1));
    assert_eq!(
        run!(stranger, &spender).unwrap_err(),
        Status::SpenderDoesNotHaveAllowance
    );
    emu.shutdown();
}

/// A contract is an account to the token service: it associates with a token (its admin key
/// signs) and may be an allowance's spender (the JS SDK's own suite approves a `ContractId`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contract_associates_with_its_admin_key_and_may_spend_an_allowance() {
    let (emu, client) = start().await;
    let token = fungible(&client).await;
    let operator = client.get_operator_public_key().unwrap();
    // Constructor returns one STOP byte as the runtime code.
    let contract = |admin: bool| {
        let mut tx = ContractCreateTransaction::new();
        tx.bytecode(hex::decode("600160093d393d6001f300").unwrap())
            .gas(100_000);
        if admin {
            tx.admin_key(operator);
        }
        tx
    };
    let managed = run!(contract(true), &client).unwrap().contract_id.unwrap();
    let immutable = run!(contract(false), &client).unwrap().contract_id.unwrap();
    let as_account = |c: ContractId| AccountId::new(0, 0, c.num);

    let mut associate = TokenAssociateTransaction::new();
    associate.account_id(as_account(managed)).token_ids([token]);
    run!(associate, &client).unwrap();
    let mut again = TokenAssociateTransaction::new();
    again.account_id(as_account(managed)).token_ids([token]);
    assert_eq!(
        run!(again, &client).unwrap_err(),
        Status::TokenAlreadyAssociatedToAccount
    );
    // No admin key: nothing outside the EVM signs for it.
    let mut no_key = TokenAssociateTransaction::new();
    no_key.account_id(as_account(immutable)).token_ids([token]);
    assert_eq!(run!(no_key, &client).unwrap_err(), Status::InvalidSignature);

    run!(
        AccountAllowanceApproveTransaction::new().approve_token_allowance(
            token,
            id(1001),
            as_account(managed),
            100
        ),
        &client
    )
    .unwrap();
    let (_, tokens) = mirror(
        &emu,
        &format!(
            "/accounts/0.0.1001/allowances/tokens?spender.id=0.0.{}",
            managed.num
        ),
    )
    .await;
    assert_eq!(tokens["allowances"][0]["amount"], 100);
    // An id that is neither an account nor a contract is still refused.
    assert_eq!(
        run!(
            AccountAllowanceApproveTransaction::new().approve_token_allowance(
                token,
                id(1001),
                id(999_999),
                1
            ),
            &client
        )
        .unwrap_err(),
        Status::InvalidAllowanceSpenderId
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn airdrops_go_straight_to_takers_and_pend_for_the_others_until_claimed() {
    let (emu, client) = start().await;
    let token = fungible(&client).await;
    // A receiver with no automatic association slots.
    let key = PrivateKey::generate_ed25519();
    let closed = run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(key.public_key())
            .initial_balance(Hbar::new(5))
            .max_automatic_token_associations(0),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    run!(
        TokenAirdropTransaction::new()
            .token_transfer(token, id(1001), -30)
            .token_transfer(token, id(1002), 10)
            .token_transfer(token, closed, 20),
        &client
    )
    .unwrap();
    // 0.0.1002 (unlimited slots) received at once; the closed account has a pending airdrop.
    let (_, direct) = mirror(&emu, "/accounts/0.0.1002/tokens").await;
    assert_eq!(direct["tokens"][0]["balance"], 10);
    let (_, pending) = mirror(&emu, &format!("/accounts/{closed}/airdrops/pending")).await;
    assert_eq!(pending["airdrops"][0]["amount"], 20);
    assert_eq!(pending["airdrops"][0]["sender_id"], "0.0.1001");
    let (_, outstanding) = mirror(&emu, "/accounts/0.0.1001/airdrops/outstanding").await;
    assert_eq!(outstanding["airdrops"].as_array().unwrap().len(), 1);
    // The treasury was debited only for what was delivered.
    assert_eq!(
        emu.node
            .ledger
            .lock()
            .unwrap()
            .rel(1001, token.num)
            .unwrap()
            .balance,
        990
    );

    // The receiver claims (signing), which associates and delivers.
    let pending_id = hedera::PendingAirdropId::new_token_id(id(1001), closed, token);
    let mut claim = TokenClaimAirdropTransaction::new();
    claim
        .add_pending_airdrop_id(pending_id)
        .freeze_with(&client)
        .unwrap()
        .sign(key);
    run!(claim, &client).unwrap();
    assert_eq!(
        emu.node
            .ledger
            .lock()
            .unwrap()
            .rel(closed.num, token.num)
            .unwrap()
            .balance,
        20
    );
    let (_, pending) = mirror(&emu, &format!("/accounts/{closed}/airdrops/pending")).await;
    assert!(pending["airdrops"].as_array().unwrap().is_empty());
    // Claiming again: nothing pending.
    let mut again = TokenClaimAirdropTransaction::new();
    again.add_pending_airdrop_id(pending_id);
    assert_eq!(
        run!(again, &client).unwrap_err(),
        Status::InvalidPendingAirdropId
    );

    // A cancelled airdrop disappears.
    let second = run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(PrivateKey::generate_ed25519().public_key())
            .max_automatic_token_associations(0),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    run!(
        TokenAirdropTransaction::new()
            .token_transfer(token, id(1001), -5)
            .token_transfer(token, second, 5),
        &client
    )
    .unwrap();
    let mut cancel = TokenCancelAirdropTransaction::new();
    cancel.add_pending_airdrop_id(hedera::PendingAirdropId::new_token_id(
        id(1001),
        second,
        token,
    ));
    run!(cancel, &client).unwrap();
    assert!(emu.node.ledger().pending_airdrops.is_empty());
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_updates_need_the_admin_key_and_cannot_add_missing_keys() {
    let (emu, client) = start().await;
    let operator = client.get_operator_public_key().unwrap();
    let managed = run!(
        TokenCreateTransaction::new()
            .name("Old")
            .symbol("OLD")
            .initial_supply(10)
            .treasury_account_id(id(1001))
            .admin_key(operator),
        &client
    )
    .unwrap()
    .token_id
    .unwrap();
    run!(
        hedera::TokenUpdateTransaction::new()
            .token_id(managed)
            .token_name("New")
            .token_memo(Some("renamed".to_owned())),
        &client
    )
    .unwrap();
    let (_, info) = mirror(&emu, &format!("/tokens/{managed}")).await;
    assert_eq!(
        (info["name"].as_str(), info["memo"].as_str()),
        (Some("New"), Some("renamed"))
    );
    let err = run!(
        hedera::TokenUpdateTransaction::new()
            .token_id(managed)
            .kyc_key(operator),
        &client
    )
    .unwrap_err();
    assert_eq!(err, Status::TokenHasNoKycKey);
    let immutable = fungible(&client).await;
    let err = run!(
        hedera::TokenUpdateTransaction::new()
            .token_id(immutable)
            .token_name("X"),
        &client
    )
    .unwrap_err();
    assert_eq!(err, Status::TokenIsImmutable);
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nft_allowances_let_a_spender_move_a_serial_until_deleted() {
    let (emu, client) = start().await;
    let operator = client.get_operator_public_key().unwrap();
    let token = run!(
        TokenCreateTransaction::new()
            .name("Allowed Art")
            .symbol("AA")
            .token_type(TokenType::NonFungibleUnique)
            .treasury_account_id(id(1001))
            .supply_key(operator),
        &client
    )
    .unwrap()
    .token_id
    .unwrap();
    run!(
        TokenMintTransaction::new()
            .token_id(token)
            .metadata([b"1".to_vec(), b"2".to_vec()]),
        &client
    )
    .unwrap();
    let nft = |serial| NftId {
        token_id: token,
        serial,
    };
    run!(
        AccountAllowanceApproveTransaction::new().approve_token_nft_allowance(
            nft(1),
            id(1001),
            id(1002)
        ),
        &client
    )
    .unwrap();
    let (_, owned) = mirror(&emu, "/accounts/0.0.1001/nfts").await;
    assert_eq!(owned["nfts"][0]["spender"], "0.0.1002");

    let spender = Client::for_network(std::collections::HashMap::from([(
        emu.grpc_addr.to_string(),
        id(3),
    )]))
    .unwrap();
    spender.set_operator(id(1002), key_of(1002));
    let mut moved = TransferTransaction::new();
    moved.approved_nft_transfer(nft(1), id(1001), id(1004));
    run!(moved, &spender).unwrap();
    assert_eq!(emu.node.ledger().nfts[&token.num][&1].owner, 1004);
    // Serial 2 was never approved.
    let mut refused = TransferTransaction::new();
    refused.approved_nft_transfer(nft(2), id(1001), id(1004));
    assert_eq!(
        run!(refused, &spender).unwrap_err(),
        Status::SpenderDoesNotHaveAllowance
    );
    // Approve serial 2, then delete the allowance: the spender can no longer move it.
    run!(
        AccountAllowanceApproveTransaction::new().approve_token_nft_allowance(
            nft(2),
            id(1001),
            id(1002)
        ),
        &client
    )
    .unwrap();
    run!(
        hedera::AccountAllowanceDeleteTransaction::new()
            .delete_all_token_nft_allowances(nft(2), id(1001)),
        &client
    )
    .unwrap();
    let mut after_delete = TransferTransaction::new();
    after_delete.approved_nft_transfer(nft(2), id(1001), id(1004));
    assert_eq!(
        run!(after_delete, &spender).unwrap_err(),
        Status::SpenderDoesNotHaveAllowance
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dissociation_succeeds_at_zero_balance_and_a_poor_payer_is_refused_at_precheck() {
    let (emu, client) = start().await;
    let token = fungible(&client).await;
    let mut associate = TokenAssociateTransaction::new();
    associate
        .account_id(id(1004))
        .token_ids([token])
        .freeze_with(&client)
        .unwrap()
        .sign(key_of(1004));
    run!(associate, &client).unwrap();
    let mut dissociate = TokenDissociateTransaction::new();
    dissociate
        .account_id(id(1004))
        .token_ids([token])
        .freeze_with(&client)
        .unwrap()
        .sign(key_of(1004));
    run!(dissociate, &client).unwrap();
    assert!(emu
        .node
        .ledger
        .lock()
        .unwrap()
        .rel(1004, token.num)
        .is_none());

    // An account holding less than a transfer's fee cannot pay for one.
    let key = PrivateKey::generate_ed25519();
    let poor = run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(key.public_key())
            .initial_balance(Hbar::from_tinybars(10)),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    let payer = Client::for_network(std::collections::HashMap::from([(
        emu.grpc_addr.to_string(),
        id(3),
    )]))
    .unwrap();
    payer.set_operator(poor, key);
    let mut tx = TransferTransaction::new();
    tx.hbar_transfer(poor, Hbar::from_tinybars(-1))
        .hbar_transfer(id(1001), Hbar::from_tinybars(1));
    assert_eq!(
        run!(tx, &payer).unwrap_err(),
        Status::InsufficientPayerBalance
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_airdrop_to_an_associated_frozen_account_fails_and_one_needing_signatures_pends() {
    let (emu, client) = start().await;
    let operator = client.get_operator_public_key().unwrap();
    let token = run!(
        TokenCreateTransaction::new()
            .name("Cold")
            .symbol("COLD")
            .initial_supply(100)
            .treasury_account_id(id(1001))
            .freeze_key(operator),
        &client
    )
    .unwrap()
    .token_id
    .unwrap();
    let key = PrivateKey::generate_ed25519();
    let frozen = run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(key.public_key())
            .initial_balance(Hbar::new(1)),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    run!(
        TokenAssociateTransaction::new()
            .account_id(frozen)
            .token_ids([token])
            .freeze_with(&client)
            .unwrap()
            .sign(key),
        &client
    )
    .unwrap();
    run!(
        hedera::TokenFreezeTransaction::new()
            .account_id(frozen)
            .token_id(token),
        &client
    )
    .unwrap();
    // Associated: the airdrop is a transfer, and a frozen account takes none.
    assert_eq!(
        run!(
            TokenAirdropTransaction::new()
                .token_transfer(token, id(1001), -10)
                .token_transfer(token, frozen, 10),
            &client
        )
        .unwrap_err(),
        Status::AccountFrozenForToken
    );
    assert!(emu.node.ledger().pending_airdrops.is_empty());
    // An account that requires receiver signatures gets a pending airdrop instead.
    let guarded_key = PrivateKey::generate_ed25519();
    let guarded = run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(guarded_key.public_key())
            .receiver_signature_required(true)
            .max_automatic_token_associations(-1)
            .freeze_with(&client)
            .unwrap()
            .sign(guarded_key),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    run!(
        TokenAirdropTransaction::new()
            .token_transfer(token, id(1001), -10)
            .token_transfer(token, guarded, 10),
        &client
    )
    .unwrap();
    assert_eq!(emu.node.ledger().pending_airdrops.len(), 1);
    emu.shutdown();
}
