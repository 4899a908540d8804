//! HIP-540 token key updates on the emulator, driven by the real Rust SDK: who may replace or
//! remove which key, under full validation and without it.

use crate::common::start;
use hedera::{
    AccountId, Client, Key, KeyList, PrivateKey, PublicKey, Status, TokenCreateTransaction,
    TokenId, TokenInfo, TokenInfoQuery, TokenKeyValidation, TokenUpdateTransaction,
};

fn id(n: u64) -> AccountId {
    AccountId::new(0, 0, n)
}

/// The all-zeros ED25519 key: valid in structure, but nobody can sign with it.
fn unusable() -> Key {
    PublicKey::from_bytes_ed25519(&[0; 32]).unwrap().into()
}

fn removed() -> Key {
    KeyList::new().into()
}

/// A token of 0.0.1001 with a wipe and a supply key, and `admin` as its admin key.
async fn token(
    admin: Option<&PrivateKey>,
    wipe: &PrivateKey,
    supply: &PrivateKey,
    client: &Client,
) -> TokenId {
    let mut tx = TokenCreateTransaction::new();
    tx.name("Keys")
        .symbol("KEY")
        .initial_supply(10)
        .treasury_account_id(id(1001))
        .wipe_key(wipe.public_key())
        .supply_key(supply.public_key());
    if let Some(admin) = admin {
        tx.admin_key(admin.public_key());
        tx.freeze_with(client).unwrap().sign(admin.clone());
    }
    run!(tx, client).unwrap().token_id.unwrap()
}

async fn info(token: TokenId, client: &Client) -> TokenInfo {
    TokenInfoQuery::new()
        .token_id(token)
        .execute(client)
        .await
        .unwrap()
}

/// Replace the wipe key with `new` in `mode`, signed by `signers`.
async fn set_wipe(
    token: TokenId,
    new: Key,
    mode: TokenKeyValidation,
    signers: &[&PrivateKey],
    client: &Client,
) -> Result<(), Status> {
    let mut tx = TokenUpdateTransaction::new();
    tx.token_id(token)
        .wipe_key(new)
        .key_verification_mode(mode)
        .freeze_with(client)
        .unwrap();
    for key in signers {
        tx.sign((*key).clone());
    }
    run!(tx, client).map(|_| ())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lower_privilege_key_replaces_itself_but_only_the_admin_key_removes_keys() {
    use TokenKeyValidation::{FullValidation as Full, NoValidation as Loose};
    let (emu, client) = start().await;
    let (wipe, supply) = (
        PrivateKey::generate_ed25519(),
        PrivateKey::generate_ed25519(),
    );
    let keyless = token(None, &wipe, &supply, &client).await;

    // Without an admin key, the wipe key's holder replaces it; a stranger cannot.
    let stranger = PrivateKey::generate_ed25519();
    let second = PrivateKey::generate_ed25519();
    assert_eq!(
        set_wipe(
            keyless,
            second.public_key().into(),
            Loose,
            &[&stranger],
            &client
        )
        .await,
        Err(Status::InvalidSignature)
    );
    set_wipe(
        keyless,
        second.public_key().into(),
        Loose,
        &[&wipe],
        &client,
    )
    .await
    .unwrap();
    // Full validation: the new key signs too.
    let third = PrivateKey::generate_ed25519();
    assert_eq!(
        set_wipe(
            keyless,
            third.public_key().into(),
            Full,
            &[&second],
            &client
        )
        .await,
        Err(Status::InvalidSignature)
    );
    set_wipe(
        keyless,
        third.public_key().into(),
        Full,
        &[&second, &third],
        &client,
    )
    .await
    .unwrap();
    assert_eq!(
        info(keyless, &client).await.wipe_key,
        Some(third.public_key().into())
    );
    // An unusable key cannot sign, so only a loose update reaches it.
    assert_eq!(
        set_wipe(keyless, unusable(), Full, &[&third], &client).await,
        Err(Status::InvalidSignature)
    );
    set_wipe(keyless, unusable(), Loose, &[&third], &client)
        .await
        .unwrap();
    assert_eq!(info(keyless, &client).await.wipe_key, Some(unusable()));
    // Removing a key is the admin key's alone; this token has none.
    assert_eq!(
        run!(
            TokenUpdateTransaction::new()
                .token_id(keyless)
                .supply_key(removed())
                .key_verification_mode(Loose)
                .freeze_with(&client)
                .unwrap()
                .sign(supply.clone()),
            &client
        )
        .unwrap_err(),
        Status::TokenIsImmutable
    );
    // A key of an invalid structure (2 of 1) is refused whoever signs.
    let invalid = KeyList {
        keys: vec![supply.public_key().into()],
        threshold: Some(2),
    };
    assert_eq!(
        run!(
            TokenUpdateTransaction::new()
                .token_id(keyless)
                .supply_key(invalid)
                .key_verification_mode(Loose)
                .freeze_with(&client)
                .unwrap()
                .sign(supply.clone()),
            &client
        )
        .unwrap_err(),
        Status::InvalidSupplyKey
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_key_changes_every_key_and_can_make_the_token_immutable() {
    let (emu, client) = start().await;
    let admin = PrivateKey::generate_ed25519();
    let (wipe, supply) = (
        PrivateKey::generate_ed25519(),
        PrivateKey::generate_ed25519(),
    );
    let token = token(Some(&admin), &wipe, &supply, &client).await;

    // The admin key alone suffices for lower-privilege keys, even under full validation.
    set_wipe(
        token,
        unusable(),
        TokenKeyValidation::FullValidation,
        &[&admin],
        &client,
    )
    .await
    .unwrap();
    // A new admin key always signs: an unusable one never can.
    assert_eq!(
        run!(
            TokenUpdateTransaction::new()
                .token_id(token)
                .admin_key(unusable())
                .key_verification_mode(TokenKeyValidation::NoValidation)
                .freeze_with(&client)
                .unwrap()
                .sign(admin.clone()),
            &client
        )
        .unwrap_err(),
        Status::InvalidSignature
    );
    // Only the admin key removes keys; removed keys are gone, not empty lists.
    let mut strip = TokenUpdateTransaction::new();
    strip
        .token_id(token)
        .supply_key(removed())
        .freeze_with(&client)
        .unwrap()
        .sign(supply.clone());
    assert_eq!(run!(strip, &client).unwrap_err(), Status::InvalidSignature);
    run!(
        TokenUpdateTransaction::new()
            .token_id(token)
            .admin_key(removed())
            .wipe_key(removed())
            .supply_key(removed())
            .key_verification_mode(TokenKeyValidation::NoValidation)
            .freeze_with(&client)
            .unwrap()
            .sign(admin.clone()),
        &client
    )
    .unwrap();
    let now = info(token, &client).await;
    assert_eq!(
        (now.admin_key, now.wipe_key, now.supply_key),
        (None, None, None)
    );
    let (_, json) = crate::common::mirror(&emu, &format!("/tokens/{token}")).await;
    assert!(json["admin_key"].is_null(), "{json}");
    // Immutable now.
    assert_eq!(
        run!(
            TokenUpdateTransaction::new()
                .token_id(token)
                .token_name("Renamed")
                .freeze_with(&client)
                .unwrap()
                .sign(admin),
            &client
        )
        .unwrap_err(),
        Status::TokenIsImmutable
    );
    emu.shutdown();
}
