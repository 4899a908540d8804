//! Accounts named by an alias, driven by the Rust SDK: a transfer to a public-key alias
//! creates the account with that key; an account created with an EVM alias is found by it; a
//! debit from an unknown alias is refused. (The Rust SDK cannot write an EVM-address account
//! id; the JS SDK's check, `js_sdk.rs`, pays an EVM address and completes the hollow account.)

use crate::common::start;
use hedera::{
    AccountBalanceQuery, AccountCreateTransaction, AccountId, AccountInfoQuery, Hbar, Key,
    PrivateKey, Status, TransactionId, TransferTransaction,
};

fn id(n: u64) -> AccountId {
    AccountId::new(0, 0, n)
}

fn pay(to: AccountId, hbar: i64) -> TransferTransaction {
    let mut tx = TransferTransaction::new();
    tx.hbar_transfer(id(1001), Hbar::new(-hbar))
        .hbar_transfer(to, Hbar::new(hbar));
    tx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_to_a_key_alias_creates_the_account_with_that_key() {
    let (_emu, client) = start().await;
    let key = PrivateKey::generate_ed25519();
    let alias = key.public_key().to_account_id(0, 0);
    run!(pay(alias, 3), &client).unwrap();
    run!(pay(alias, 2), &client).unwrap();
    let balance = AccountBalanceQuery::new()
        .account_id(alias)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(
        balance.hbars,
        Hbar::new(5),
        "both credits reached one account"
    );
    let info = AccountInfoQuery::new()
        .account_id(alias)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.account_id, id(1006));
    assert_eq!(info.key, Key::Single(key.public_key()));
    assert_eq!(info.account_memo, "auto-created account");
    // Its key signs for it at once: it pays a transfer back.
    let mut back = TransferTransaction::new();
    back.hbar_transfer(id(1006), Hbar::new(-1))
        .hbar_transfer(id(1001), Hbar::new(1))
        .transaction_id(TransactionId::generate(id(1006)));
    let back = back.freeze_with(&client).unwrap().sign(key);
    run!(back, &client).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_created_with_an_evm_alias_is_found_by_it_and_unknown_aliases_cannot_pay() {
    let (emu, client) = start().await;
    let key = PrivateKey::generate_ecdsa();
    let created = run!(
        AccountCreateTransaction::new()
            .set_ecdsa_key_with_alias(key.clone())
            .initial_balance(Hbar::new(1))
            .freeze_with(&client)
            .unwrap()
            .sign(key.clone()),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    let evm = key.public_key().to_evm_address().unwrap();
    let (_, found) = crate::common::mirror(
        &emu,
        &format!("/accounts/0x{}", hex::encode(evm.to_bytes())),
    )
    .await;
    assert_eq!(
        found["account"],
        created.to_string(),
        "the alias names the created account"
    );
    // Without the alias key's signature the alias is not the creator's to take, unless it
    // is the account's own key's address (HIP-583).
    let other = PrivateKey::generate_ecdsa();
    let other_address = other.public_key().to_evm_address().unwrap();
    assert_eq!(
        run!(
            AccountCreateTransaction::new()
                .set_key_without_alias(PrivateKey::generate_ed25519().public_key())
                .alias(other_address),
            &client
        )
        .unwrap_err(),
        Status::InvalidSignature
    );
    run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(other.public_key())
            .alias(other_address),
        &client
    )
    .expect("the account's own key's address needs no extra signature");
    // An account that requires receiver signatures signs its creation.
    let receiver = PrivateKey::generate_ed25519();
    assert_eq!(
        run!(
            AccountCreateTransaction::new()
                .set_key_without_alias(receiver.public_key())
                .receiver_signature_required(true),
            &client
        )
        .unwrap_err(),
        Status::InvalidSignature
    );
    // A debit from an alias no account holds.
    let nobody = PrivateKey::generate_ed25519()
        .public_key()
        .to_account_id(0, 0);
    let mut debit = TransferTransaction::new();
    debit
        .hbar_transfer(nobody, Hbar::new(-1))
        .hbar_transfer(id(1001), Hbar::new(1));
    assert_eq!(run!(debit, &client).unwrap_err(), Status::InvalidAccountId);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_account_an_alias_credit_creates_has_a_child_receipt() {
    let (_emu, client) = start().await;
    let alias = PrivateKey::generate_ed25519()
        .public_key()
        .to_account_id(0, 0);
    let response = pay(alias, 1).execute(&client).await.unwrap();
    let receipt = hedera::TransactionReceiptQuery::new()
        .transaction_id(response.transaction_id)
        .include_children(true)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(receipt.children.len(), 1);
    let created = receipt.children[0].account_id.unwrap();
    let info = AccountInfoQuery::new()
        .account_id(alias)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.account_id, created);
    // Without asking, no children; a second credit creates nothing.
    let plain = response.get_receipt(&client).await.unwrap();
    assert!(plain.children.is_empty());
    let again = pay(alias, 1).execute(&client).await.unwrap();
    let receipt = hedera::TransactionReceiptQuery::new()
        .transaction_id(again.transaction_id)
        .include_children(true)
        .execute(&client)
        .await
        .unwrap();
    assert!(receipt.children.is_empty());
}
