//! The entities the network keeps: accounts, topics and their messages, files, contracts,
//! tokens with their custom fees and relationships, schedules, pending airdrops and NFTs.

use super::values::hex_bytes;
use super::values::KeyBytes;
use super::values::Ts;
use super::values::TxId;
use hedera_proto::services as proto;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Account {
    pub num: u64,
    pub key: KeyBytes,
    pub balance: i64,
    pub deleted: bool,
    pub memo: String,
    pub receiver_sig_required: bool,
    pub max_automatic_token_associations: i32,
    pub auto_renew_period: i64,
    pub created: Ts,
    pub decline_reward: bool,
    /// The account's EVM address alias, 40 hex digits: a hollow account's (created by value
    /// sent to that address; no key until completed) or one set at creation.
    #[serde(default)]
    pub evm_address: Option<String>,
    /// The public-key alias it was auto-created for (the `Key` protobuf, hex).
    #[serde(default)]
    pub key_alias: Option<String>,
}

impl Contract {
    /// A contract about to be constructed from `initcode`: no code, storage or balance yet,
    /// the 90-day default renewal, no keys.
    pub fn constructing(num: u64, created: Ts, initcode: Vec<u8>) -> Self {
        Contract {
            num,
            memo: String::new(),
            admin_key: None,
            auto_renew_account: None,
            auto_renew_period: 7_776_000,
            max_automatic_token_associations: 0,
            created,
            deleted: false,
            initcode,
            runtime_code: Vec::new(),
            storage: BTreeMap::new(),
            balance: 0,
            nonce: 1,
            evm_address: None,
            expiration: None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TopicMessage {
    pub consensus: Ts,
    #[serde(with = "hex_bytes")]
    pub message: Vec<u8>,
    pub payer: u64,
    #[serde(with = "hex_bytes")]
    pub running_hash: Vec<u8>,
    pub sequence_number: u64,
    /// (initial transaction id as "0.0.x@s.n", number, total) when chunked.
    pub chunk: Option<(TxId, i32, i32)>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Topic {
    pub num: u64,
    pub memo: String,
    pub admin_key: Option<KeyBytes>,
    pub submit_key: Option<KeyBytes>,
    pub auto_renew_account: Option<u64>,
    pub auto_renew_period: i64,
    pub created: Ts,
    pub deleted: bool,
    pub sequence_number: u64,
    #[serde(with = "hex_bytes")]
    pub running_hash: Vec<u8>,
    pub messages: Vec<TopicMessage>,
    /// HIP-991: the key that may change the custom fees.
    #[serde(default)]
    pub fee_schedule_key: Option<KeyBytes>,
    /// HIP-991: fixed fees charged to the payer of every message.
    #[serde(default)]
    pub custom_fees: Vec<CustomFee>,
    /// HIP-991: a message signed by any of these keys pays no custom fee.
    #[serde(default)]
    pub fee_exempt_keys: Vec<KeyBytes>,
}

/// A file of the file service.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct File {
    pub num: u64,
    /// The file's keys as one `Key` holding a `KeyList`; `None` when created without keys
    /// (immutable: no append, update or delete).
    pub keys: Option<KeyBytes>,
    #[serde(with = "hex_bytes")]
    pub contents: Vec<u8>,
    pub memo: String,
    /// Expiration, in seconds since the epoch.
    pub expiration: i64,
    pub deleted: bool,
}

impl File {
    /// The file's key list (empty when it has none).
    pub fn key_list(&self) -> proto::KeyList {
        match self
            .keys
            .as_ref()
            .map(KeyBytes::to_proto)
            .and_then(|k| k.key)
        {
            Some(proto::key::Key::KeyList(list)) => list,
            _ => proto::KeyList::default(),
        }
    }

    /// Whether the file has at least one key (only such files can change).
    pub fn is_mutable(&self) -> bool {
        !self.key_list().keys.is_empty()
    }
}

/// A smart contract entity: its runtime bytecode and storage, as the EVM (`evm`) left them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Contract {
    pub num: u64,
    pub memo: String,
    pub admin_key: Option<KeyBytes>,
    pub auto_renew_account: Option<u64>,
    pub auto_renew_period: i64,
    pub max_automatic_token_associations: i32,
    pub created: Ts,
    pub deleted: bool,
    #[serde(with = "hex_bytes")]
    pub initcode: Vec<u8>,
    /// The code the constructor returned (what calls run).
    #[serde(default, with = "hex_bytes")]
    pub runtime_code: Vec<u8>,
    /// EVM storage: 32-byte slot → value, both as 64 hex digits; zero values are not kept.
    #[serde(default)]
    pub storage: BTreeMap<String, String>,
    /// Tinybars the contract holds.
    #[serde(default)]
    pub balance: i64,
    /// The EVM nonce (contracts it created).
    #[serde(default)]
    pub nonce: u64,
    /// The EVM address of a contract created inside the EVM (`CREATE`/`CREATE2`), 40 hex
    /// digits; a contract created by `ContractCreate` answers to its long-zero address.
    #[serde(default)]
    pub evm_address: Option<String>,
    /// An expiry a `ContractUpdate` set (seconds); otherwise creation plus the auto-renew period.
    #[serde(default)]
    pub expiration: Option<i64>,
}

impl Contract {
    /// When the contract expires, in seconds since the epoch.
    pub fn expiration(&self) -> i64 {
        self.expiration
            .unwrap_or(self.created.seconds + self.auto_renew_period)
    }
}

/// A token (fungible or NFT class).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Token {
    pub num: u64,
    pub name: String,
    pub symbol: String,
    pub decimals: u32,
    pub nft: bool,
    /// `None` for an infinite supply.
    pub max_supply: Option<i64>,
    pub initial_supply: i64,
    pub total_supply: i64,
    pub treasury: u64,
    pub admin_key: Option<KeyBytes>,
    pub kyc_key: Option<KeyBytes>,
    pub freeze_key: Option<KeyBytes>,
    pub wipe_key: Option<KeyBytes>,
    pub supply_key: Option<KeyBytes>,
    pub fee_schedule_key: Option<KeyBytes>,
    pub pause_key: Option<KeyBytes>,
    pub metadata_key: Option<KeyBytes>,
    pub freeze_default: bool,
    pub paused: bool,
    pub deleted: bool,
    pub memo: String,
    #[serde(with = "hex_bytes")]
    pub metadata: Vec<u8>,
    pub auto_renew_account: Option<u64>,
    pub auto_renew_period: i64,
    pub expiry: i64,
    pub created: Ts,
    pub modified: Ts,
    pub next_serial: i64,
    /// The token's custom fees (HIP-18), charged on every transfer of it.
    #[serde(default)]
    pub custom_fees: Vec<CustomFee>,
}

/// A fixed fee: `amount` tinybars, or units of `token`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct FixedFee {
    pub amount: i64,
    /// The denominating token; `None` for HBAR.
    pub token: Option<u64>,
}

/// What a custom fee charges.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub enum FeeKind {
    Fixed(FixedFee),
    /// A fraction of the units transferred, at least `minimum`, at most `maximum` (0: no
    /// maximum); taken from the receivers, or added to the sender's debit when
    /// `net_of_transfers`.
    Fractional {
        numerator: i64,
        denominator: i64,
        minimum: i64,
        maximum: i64,
        net_of_transfers: bool,
    },
    /// A fraction of the fungible value an NFT's sender receives for it; the fallback fee
    /// is charged to the receiver when nothing is exchanged.
    Royalty {
        numerator: i64,
        denominator: i64,
        fallback: Option<FixedFee>,
    },
}

/// One custom fee of a token (HIP-18) or a topic (HIP-991; fixed only).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CustomFee {
    pub kind: FeeKind,
    pub collector: u64,
    /// Collectors of this token's other fees do not pay this one.
    pub all_collectors_exempt: bool,
}

/// A custom fee a transaction paid (the record's `assessed_custom_fees`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct AssessedFee {
    pub amount: i64,
    /// `None` for HBAR.
    pub token: Option<u64>,
    pub collector: u64,
    pub payers: Vec<u64>,
}

/// An account's relationship to a token.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TokenRel {
    /// Units held (fungible) or number of serials owned (NFT).
    pub balance: i64,
    pub frozen: bool,
    pub kyc_granted: bool,
    pub automatic: bool,
    pub created: Ts,
}

/// A scheduled transaction waiting for signatures (or already executed / deleted).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Schedule {
    pub num: u64,
    /// The protobuf `SchedulableTransactionBody`.
    #[serde(with = "hex_bytes")]
    pub body: Vec<u8>,
    pub memo: String,
    pub admin_key: Option<KeyBytes>,
    pub payer: u64,
    pub creator: u64,
    pub created: Ts,
    pub expiration: Ts,
    pub wait_for_expiry: bool,
    /// Raw public keys (hex) whose signatures count for the inner transaction.
    pub signatories: Vec<String>,
    pub executed: Option<Ts>,
    pub deleted: Option<Ts>,
    pub scheduled_id: TxId,
}

/// A pending airdrop: tokens offered to a receiver that must claim them.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct PendingAirdrop {
    pub sender: u64,
    pub receiver: u64,
    pub token: u64,
    /// The NFT serial, or `None` for a fungible amount.
    pub serial: Option<i64>,
    pub amount: i64,
    pub created: Ts,
}

/// One NFT serial.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Nft {
    /// The account allowed to move this serial for its owner.
    #[serde(default)]
    pub spender: Option<u64>,
    pub owner: u64,
    #[serde(with = "hex_bytes")]
    pub metadata: Vec<u8>,
    pub created: Ts,
    pub modified: Ts,
}
