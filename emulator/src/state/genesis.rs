//! The deterministic genesis: system accounts, the operator 0.0.1001 and funded test accounts
//! 0.0.1002–0.0.1005, with fixed, documented development keys. New entities are numbered from
//! 0.0.1006 on, one counter for every entity kind (as on the real network).
//!
//! | account | role | key | balance |
//! |---|---|---|---|
//! | 0.0.2 | treasury | ed25519, the local node's well-known genesis key (`302e…91132178…`) | 50 000 000 000 ℏ minus the grants below |
//! | 0.0.3 | the node | treasury key | 100 ℏ |
//! | 0.0.98 | fee collector | treasury key | 0 |
//! | 0.0.1001 | operator | ed25519, seed `0x10 0x01 …` | 10 000 ℏ |
//! | 0.0.1002 | test | ed25519, seed `0x10 0x02 …` | 1 000 ℏ |
//! | 0.0.1003 | test | ECDSA secp256k1, seed `0x10 0x03 …` | 1 000 ℏ |
//! | 0.0.1004 | test | ed25519, seed `0x10 0x04 …` | 1 000 ℏ |
//! | 0.0.1005 | test | ECDSA secp256k1, seed `0x10 0x05 …` | 1 000 ℏ |
//!
//! These keys are public knowledge: never use them outside a local emulator.
//!
//! Two contracts exist from genesis, at the ids the JS kit's EVM tools use for a local node:
//! the ERC-20 factory 0.0.1012 and the ERC-721 factory 0.0.1013 (`emulator/contracts/`:
//! hak's Solidity over OpenZeppelin, compiled with solc-js; `server::genesis_ledger` runs their
//! constructors in the EVM). Numbering skips them.

use hedera::PrivateKey;

/// Tinybars in one HBAR.
pub const TINYBARS_PER_HBAR: i64 = 100_000_000;
/// The node's account id number (`0.0.3`).
pub const NODE_ACCOUNT: u64 = 3;
/// The treasury (`0.0.2`).
pub const TREASURY_ACCOUNT: u64 = 2;
/// The fee collection account (`0.0.98`).
pub const FEE_COLLECTOR_ACCOUNT: u64 = 98;
/// The operator (`0.0.1001`).
pub const OPERATOR_ACCOUNT: u64 = 1001;
/// The first entity number handed out after genesis.
pub const FIRST_USER_ENTITY: u64 = 1006;

/// The ERC-20 factory the JS kit calls on a local node.
pub const ERC20_FACTORY: u64 = 1012;
/// The ERC-721 factory the JS kit calls on a local node.
pub const ERC721_FACTORY: u64 = 1013;

/// The kind of key a genesis account has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    Ed25519,
    EcdsaSecp256k1,
}

/// One genesis account.
pub struct GenesisAccount {
    pub num: u64,
    pub key: PrivateKey,
    pub kind: KeyKind,
    pub balance: i64,
    pub memo: &'static str,
}

fn seed(a: u8, b: u8) -> [u8; 32] {
    let mut s = [0x42u8; 32];
    s[0] = a;
    s[1] = b;
    s
}

/// The private key of a genesis account with the given seed bytes.
pub fn dev_key(kind: KeyKind, a: u8, b: u8) -> PrivateKey {
    match kind {
        KeyKind::Ed25519 => PrivateKey::from_bytes_ed25519(&seed(a, b)).expect("32-byte seed"),
        KeyKind::EcdsaSecp256k1 => {
            PrivateKey::from_bytes_ecdsa(&seed(a, b)).expect("valid secp256k1 scalar")
        }
    }
}

/// The treasury's key (0.0.2; also 0.0.3 and 0.0.98): the genesis key every Hiero local node
/// publishes, so SDK tests that sign as 0.0.2 with it work here unchanged.
pub fn treasury_key() -> PrivateKey {
    const LOCAL_NODE_GENESIS_SEED: [u8; 32] = [
        0x91, 0x13, 0x21, 0x78, 0xe7, 0x20, 0x57, 0xa1, 0xd7, 0x52, 0x80, 0x25, 0x95, 0x6f, 0xe3,
        0x9b, 0x0b, 0x84, 0x7f, 0x20, 0x0a, 0xb5, 0x9b, 0x2f, 0xdd, 0x36, 0x70, 0x17, 0xf3, 0x08,
        0x71, 0x37,
    ];
    PrivateKey::from_bytes_ed25519(&LOCAL_NODE_GENESIS_SEED).expect("32-byte seed")
}

/// The operator's key (0.0.1001).
pub fn operator_key() -> PrivateKey {
    dev_key(KeyKind::Ed25519, 0x10, 0x01)
}

/// The documented dev key of genesis account `0.0.num`, if it is one.
pub fn dev_key_of(num: u64) -> Option<PrivateKey> {
    accounts().into_iter().find(|a| a.num == num).map(|a| a.key)
}

/// Every genesis account.
pub fn accounts() -> Vec<GenesisAccount> {
    let hbar = TINYBARS_PER_HBAR;
    let treasury_key = treasury_key();
    let mut list = vec![
        GenesisAccount {
            num: NODE_ACCOUNT,
            key: treasury_key.clone(),
            kind: KeyKind::Ed25519,
            balance: 100 * hbar,
            memo: "node",
        },
        GenesisAccount {
            num: FEE_COLLECTOR_ACCOUNT,
            key: treasury_key.clone(),
            kind: KeyKind::Ed25519,
            balance: 0,
            memo: "fee collector",
        },
        GenesisAccount {
            num: OPERATOR_ACCOUNT,
            key: operator_key(),
            kind: KeyKind::Ed25519,
            balance: 10_000 * hbar,
            memo: "operator",
        },
    ];
    for (num, kind) in [
        (1002, KeyKind::Ed25519),
        (1003, KeyKind::EcdsaSecp256k1),
        (1004, KeyKind::Ed25519),
        (1005, KeyKind::EcdsaSecp256k1),
    ] {
        list.push(GenesisAccount {
            num,
            key: dev_key(kind, 0x10, (num - 1000) as u8),
            kind,
            balance: 1_000 * hbar,
            memo: "test",
        });
    }
    let granted: i64 = list.iter().map(|a| a.balance).sum();
    list.insert(
        0,
        GenesisAccount {
            num: TREASURY_ACCOUNT,
            key: treasury_key,
            kind: KeyKind::Ed25519,
            balance: 50_000_000_000 * hbar - granted,
            memo: "treasury",
        },
    );
    list
}

#[cfg(test)]
mod tests {
    #[test]
    fn genesis_is_deterministic_and_conserves_supply() {
        let a = super::accounts();
        let b = super::accounts();
        assert_eq!(a.len(), 8);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.key.to_string_der(), y.key.to_string_der());
        }
        let total: i64 = a.iter().map(|x| x.balance).sum();
        assert_eq!(total, 50_000_000_000 * super::TINYBARS_PER_HBAR);
    }
}
