//! The state of the emulated network: accounts, topics, receipts by transaction id, and the
//! log of handled transactions the mirror API serves. Plain data; the rules live in
//! `ingest` and `handlers`.

use hedera_proto::services as proto;
use prost::Message;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// A consensus timestamp.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Ts {
    pub seconds: i64,
    pub nanos: u32,
}

impl Ts {
    pub fn now() -> Self {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Ts {
            seconds: d.as_secs() as i64,
            nanos: d.subsec_nanos(),
        }
    }

    pub fn from_proto(t: &proto::Timestamp) -> Self {
        Ts {
            seconds: t.seconds,
            nanos: t.nanos.max(0) as u32,
        }
    }

    pub fn to_proto(self) -> proto::Timestamp {
        proto::Timestamp {
            seconds: self.seconds,
            nanos: self.nanos as i32,
        }
    }

    /// The next nanosecond.
    pub fn succ(self) -> Self {
        if self.nanos >= 999_999_999 {
            Ts {
                seconds: self.seconds + 1,
                nanos: 0,
            }
        } else {
            Ts {
                seconds: self.seconds,
                nanos: self.nanos + 1,
            }
        }
    }

    pub fn as_nanos(self) -> i128 {
        i128::from(self.seconds) * 1_000_000_000 + i128::from(self.nanos)
    }
}

/// The mirror node's `seconds.nanoseconds` form.
impl fmt::Display for Ts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}", self.seconds, self.nanos)
    }
}

/// A protobuf-encoded `Key`, kept as bytes (hex in the persisted state).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyBytes(#[serde(with = "hex_bytes")] pub Vec<u8>);

impl KeyBytes {
    pub fn from_proto(key: &proto::Key) -> Self {
        KeyBytes(key.encode_to_vec())
    }

    pub fn to_proto(&self) -> proto::Key {
        proto::Key::decode(self.0.as_slice()).unwrap_or_default()
    }
}

mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(v))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        hex::decode(String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

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

/// A transaction id: payer, valid start, scheduled flag, nonce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TxId {
    pub payer: u64,
    pub valid_start: Ts,
    pub scheduled: bool,
    pub nonce: i32,
}

impl TxId {
    pub fn from_proto(id: &proto::TransactionId) -> Option<Self> {
        let payer = account_num(id.account_id.as_ref()?)?;
        let valid_start = Ts::from_proto(id.transaction_valid_start.as_ref()?);
        Some(TxId {
            payer,
            valid_start,
            scheduled: id.scheduled,
            nonce: id.nonce,
        })
    }

    pub fn to_proto(self) -> proto::TransactionId {
        proto::TransactionId {
            transaction_valid_start: Some(self.valid_start.to_proto()),
            account_id: Some(account_id(self.payer)),
            scheduled: self.scheduled,
            nonce: self.nonce,
        }
    }

    /// The mirror's path form, `0.0.1001-1700000000-000000123`.
    pub fn mirror_form(self) -> String {
        format!(
            "0.0.{}-{}-{:09}",
            self.payer, self.valid_start.seconds, self.valid_start.nanos
        )
    }
}

impl fmt::Display for TxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0.0.{}@{}", self.payer, self.valid_start)?;
        if self.scheduled {
            f.write_str("?scheduled")?;
        }
        if self.nonce != 0 {
            write!(f, "/{}", self.nonce)?;
        }
        Ok(())
    }
}

/// What a receipt query answers.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Receipt {
    /// `ResponseCodeEnum` as i32.
    pub status: i32,
    pub account_id: Option<u64>,
    pub topic_id: Option<u64>,
    pub topic_sequence_number: u64,
    #[serde(with = "hex_bytes")]
    pub topic_running_hash: Vec<u8>,
    #[serde(default)]
    pub token_id: Option<u64>,
    #[serde(default)]
    pub new_total_supply: u64,
    #[serde(default)]
    pub serial_numbers: Vec<i64>,
    #[serde(default)]
    pub schedule_id: Option<u64>,
    #[serde(default)]
    pub scheduled_transaction_id: Option<TxId>,
    #[serde(default)]
    pub contract_id: Option<u64>,
    #[serde(default)]
    pub file_id: Option<u64>,
    /// The consensus second of the transaction (the receipt's exchange rates expire at the
    /// hour after it).
    #[serde(default)]
    pub consensus_seconds: i64,
    /// The consensus node a node transaction created or changed.
    #[serde(default)]
    pub node_id: Option<u64>,
    /// The registered node a registered-node transaction created or changed.
    #[serde(default)]
    pub registered_node_id: Option<u64>,
    /// Accounts the transaction created on the way (a credit to an alias): each has a child
    /// receipt.
    #[serde(default)]
    pub created_accounts: Vec<u64>,
}

/// HBAR in US cents the network states: 30,000 ℏ = 360,000 ¢ (12 ¢ per ℏ), as the fee
/// schedule and the mirror's `/network/exchangerate` use.
pub const HBAR_EQUIVALENT: i32 = 30_000;
pub const CENT_EQUIVALENT: i32 = 360_000;

/// The exchange rates in force at `seconds`: the current one expiring at the next hour, the
/// next one the hour after (a real network's receipts carry both).
pub fn exchange_rates(seconds: i64) -> proto::ExchangeRateSet {
    let expiry = (seconds / 3600 + 1) * 3600;
    let rate = |expiration_time: i64| proto::ExchangeRate {
        hbar_equiv: HBAR_EQUIVALENT,
        cent_equiv: CENT_EQUIVALENT,
        expiration_time: Some(proto::TimestampSeconds {
            seconds: expiration_time,
        }),
    };
    proto::ExchangeRateSet {
        current_rate: Some(rate(expiry)),
        next_rate: Some(rate(expiry + 3600)),
    }
}

impl Receipt {
    pub fn to_proto(&self) -> proto::TransactionReceipt {
        proto::TransactionReceipt {
            status: self.status,
            account_id: self.account_id.map(account_id),
            topic_id: self.topic_id.map(topic_id),
            topic_sequence_number: self.topic_sequence_number,
            topic_running_hash: self.topic_running_hash.clone(),
            topic_running_hash_version: if self.topic_running_hash.is_empty() {
                0
            } else {
                3
            },
            token_id: self.token_id.map(token_id),
            new_total_supply: self.new_total_supply,
            serial_numbers: self.serial_numbers.clone(),
            schedule_id: self.schedule_id.map(schedule_id),
            scheduled_transaction_id: self.scheduled_transaction_id.map(TxId::to_proto),
            contract_id: self.contract_id.map(contract_id),
            file_id: self.file_id.map(file_id),
            exchange_rate: (self.consensus_seconds > 0)
                .then(|| exchange_rates(self.consensus_seconds)),
            node_id: self.node_id.unwrap_or(0),
            registered_node_id: self.registered_node_id.unwrap_or(0),
        }
    }
}

/// One handled transaction, as the mirror node reports it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TxRecord {
    pub id: TxId,
    /// The high-volume price multiplier (×1000) the fee was charged at, when it applied.
    #[serde(default)]
    pub high_volume_multiplier: Option<u64>,
    /// Airdrops the transaction left pending.
    #[serde(default)]
    pub new_pending_airdrops: Vec<PendingAirdrop>,
    /// (account, token) associations made automatically.
    #[serde(default)]
    pub automatic_associations: Vec<(u64, u64)>,
    pub consensus: Ts,
    /// The mirror's transaction type name, e.g. `CRYPTOTRANSFER`.
    pub name: String,
    /// The result code name, e.g. `SUCCESS`.
    pub result: String,
    pub charged_fee: i64,
    pub max_fee: u64,
    pub memo: String,
    pub node: u64,
    /// (account, amount) of every HBAR movement, fees included.
    pub transfers: Vec<(u64, i64)>,
    pub entity_id: Option<String>,
    /// (token, account, amount) of fungible token movements.
    #[serde(default)]
    pub token_transfers: Vec<(u64, u64, i64)>,
    /// (token, sender, receiver, serial) of NFT movements (sender 0 for a mint).
    #[serde(default)]
    pub nft_transfers: Vec<(u64, u64, u64, i64)>,
    pub valid_duration_seconds: i64,
    #[serde(with = "hex_bytes")]
    pub hash: Vec<u8>,
    /// What the EVM did, for contract creates and calls.
    #[serde(default)]
    pub contract_result: Option<ContractResult>,
    /// Custom fees the transaction paid.
    #[serde(default)]
    pub assessed_custom_fees: Vec<AssessedFee>,
}

/// The EVM's result of a contract create or call (the record's `ContractFunctionResult`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ContractResult {
    /// The contract called or created.
    pub contract: u64,
    /// The call's return data (a create's: empty), or the revert data.
    #[serde(with = "hex_bytes")]
    pub output: Vec<u8>,
    /// Why it failed ("" on success): the revert reason or the halt.
    pub error: String,
    pub gas_limit: u64,
    pub gas_used: u64,
    /// Tinybars sent with the call.
    pub amount: i64,
    #[serde(with = "hex_bytes")]
    pub function_parameters: Vec<u8>,
    pub logs: Vec<EvmLog>,
    /// Contracts the call created inside the EVM.
    pub created: Vec<u64>,
    /// The caller (an account or a contract).
    pub sender: u64,
}

/// One EVM log.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct EvmLog {
    /// The contract that logged.
    pub contract: u64,
    /// 32-byte topics, hex.
    pub topics: Vec<String>,
    #[serde(with = "hex_bytes")]
    pub data: Vec<u8>,
}

/// A consensus node: its state as a `NodeCreateTransactionBody` (protobuf, so every field
/// the HAPI defines is kept and answered as given), and whether it was deleted.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NodeRecord {
    #[serde(with = "hex_bytes")]
    pub body: Vec<u8>,
    #[serde(default)]
    pub deleted: bool,
}

impl NodeRecord {
    pub fn new(body: &proto::NodeCreateTransactionBody) -> Self {
        use prost::Message;
        NodeRecord {
            body: body.encode_to_vec(),
            deleted: false,
        }
    }

    pub fn state(&self) -> proto::NodeCreateTransactionBody {
        use prost::Message;
        proto::NodeCreateTransactionBody::decode(self.body.as_slice()).unwrap_or_default()
    }
}

/// A registered node: its state as a `RegisteredNodeCreateTransactionBody` (protobuf).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RegisteredNodeRecord {
    #[serde(with = "hex_bytes")]
    pub body: Vec<u8>,
}

impl RegisteredNodeRecord {
    pub fn new(body: &proto::RegisteredNodeCreateTransactionBody) -> Self {
        use prost::Message;
        RegisteredNodeRecord {
            body: body.encode_to_vec(),
        }
    }

    pub fn state(&self) -> proto::RegisteredNodeCreateTransactionBody {
        use prost::Message;
        proto::RegisteredNodeCreateTransactionBody::decode(self.body.as_slice()).unwrap_or_default()
    }
}

/// The genesis address book: node 0 is this node, account 0.0.3, administered by the
/// treasury's key (as a local node's genesis nodes are).
pub fn genesis_nodes() -> BTreeMap<u64, NodeRecord> {
    let admin = crate::keys::proto_key(&crate::genesis::treasury_key().public_key());
    let node = proto::NodeCreateTransactionBody {
        account_id: Some(account_id(crate::genesis::NODE_ACCOUNT)),
        description: "hak-emu".into(),
        admin_key: Some(admin),
        ..Default::default()
    };
    BTreeMap::from([(0, NodeRecord::new(&node))])
}

fn first_registered_node() -> u64 {
    1
}

/// The whole ledger.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ledger {
    pub accounts: BTreeMap<u64, Account>,
    pub topics: BTreeMap<u64, Topic>,
    #[serde(default)]
    pub tokens: BTreeMap<u64, Token>,
    /// Token relationships: account → token → relationship.
    #[serde(default)]
    pub rels: BTreeMap<u64, BTreeMap<u64, TokenRel>>,
    /// NFTs: token → serial → NFT.
    #[serde(default)]
    pub nfts: BTreeMap<u64, BTreeMap<i64, Nft>>,
    #[serde(default)]
    pub pending_airdrops: Vec<PendingAirdrop>,
    #[serde(default)]
    pub schedules: BTreeMap<u64, Schedule>,
    #[serde(default)]
    pub contracts: BTreeMap<u64, Contract>,
    /// Files created by transactions, and system files once a transaction changed them (until
    /// then a system file is its genesis contents: `handlers::file::system_file`).
    #[serde(default)]
    pub files: BTreeMap<u64, File>,
    /// HBAR allowances: owner → spender → tinybars.
    #[serde(default)]
    pub hbar_allowances: BTreeMap<u64, BTreeMap<u64, i64>>,
    /// Fungible token allowances: owner → token → spender → units.
    #[serde(default)]
    pub token_allowances: BTreeMap<u64, BTreeMap<u64, BTreeMap<u64, i64>>>,
    /// NFT "all serials" allowances: owner → token → spenders.
    #[serde(default)]
    pub nft_approvals_for_all: BTreeMap<u64, BTreeMap<u64, std::collections::BTreeSet<u64>>>,
    /// Receipts by transaction id (`TxId` display form).
    pub receipts: HashMap<String, Receipt>,
    pub records: Vec<TxRecord>,
    pub next_entity: u64,
    pub last_consensus: Ts,
    /// Consensus nodes of the address book (HIP-869) by node id; node 0 is this node
    /// (0.0.3). Kept as their NodeCreate bodies state them (see `NodeRecord`).
    #[serde(default = "genesis_nodes")]
    pub nodes: BTreeMap<u64, NodeRecord>,
    /// Registered nodes (block nodes, mirror nodes, relays) by registered node id.
    #[serde(default)]
    pub registered_nodes: BTreeMap<u64, RegisteredNodeRecord>,
    /// The next registered node id (they start at 1).
    #[serde(default = "first_registered_node")]
    pub next_registered_node: u64,
    /// Where the node listens (the address book lists it); set at start, never persisted.
    #[serde(skip)]
    pub node_endpoint: Option<std::net::SocketAddr>,
}

impl Ledger {
    /// The next free entity number (accounts, topics, tokens and schedules share it).
    pub fn allocate(&mut self) -> u64 {
        // Genesis placed some contracts ahead of the counter (the kit's factory ids).
        while self.contracts.contains_key(&self.next_entity)
            || self.accounts.contains_key(&self.next_entity)
        {
            self.next_entity += 1;
        }
        let n = self.next_entity;
        self.next_entity += 1;
        n
    }

    /// The number `allocate` gives next, without taking it.
    pub fn next_free_entity(&self) -> u64 {
        let mut n = self.next_entity;
        while self.contracts.contains_key(&n) || self.accounts.contains_key(&n) {
            n += 1;
        }
        n
    }

    /// A consensus timestamp strictly after every earlier one.
    pub fn next_consensus(&mut self) -> Ts {
        let now = Ts::now();
        let ts = if now > self.last_consensus {
            now
        } else {
            self.last_consensus.succ()
        };
        self.last_consensus = ts;
        ts
    }

    pub fn live_account(&self, num: u64) -> Option<&Account> {
        self.accounts.get(&num).filter(|a| !a.deleted)
    }

    /// A live contract: on the network a contract is an account too (it holds tokens,
    /// associates with them and may be an allowance's spender).
    pub fn live_contract(&self, num: u64) -> Option<&Contract> {
        self.contracts.get(&num).filter(|c| !c.deleted)
    }

    /// The account an id names: `0.0.N`, or an alias — a public key (`Key` protobuf bytes) or
    /// a 20-byte EVM address.
    pub fn resolve_account(&self, id: &proto::AccountId) -> Option<u64> {
        match (&id.shard_num, &id.realm_num, &id.account) {
            (0, 0, Some(proto::account_id::Account::Alias(bytes))) => {
                let text = hex::encode(bytes);
                self.accounts
                    .values()
                    .find(|a| {
                        a.key_alias.as_deref() == Some(text.as_str())
                            || a.evm_address.as_deref() == Some(text.as_str())
                    })
                    .map(|a| a.num)
            }
            _ => account_num(id),
        }
    }

    pub fn rel(&self, account: u64, token: u64) -> Option<&TokenRel> {
        self.rels.get(&account)?.get(&token)
    }

    pub fn rel_mut(&mut self, account: u64, token: u64) -> Option<&mut TokenRel> {
        self.rels.get_mut(&account)?.get_mut(&token)
    }

    /// How many automatic associations the account has used.
    pub fn automatic_associations(&self, account: u64) -> usize {
        self.rels
            .get(&account)
            .map_or(0, |r| r.values().filter(|r| r.automatic).count())
    }
}

/// `0.0.num` as a proto `AccountId`.
pub fn account_id(num: u64) -> proto::AccountId {
    proto::AccountId {
        shard_num: 0,
        realm_num: 0,
        account: Some(proto::account_id::Account::AccountNum(num as i64)),
    }
}

/// `0.0.num` as a proto `TopicId`.
pub fn topic_id(num: u64) -> proto::TopicId {
    proto::TopicId {
        shard_num: 0,
        realm_num: 0,
        topic_num: num as i64,
    }
}

/// The number of a `0.0.num` account id (aliases and other shards are not supported).
pub fn account_num(id: &proto::AccountId) -> Option<u64> {
    match (id.shard_num, id.realm_num, &id.account) {
        (0, 0, Some(proto::account_id::Account::AccountNum(n))) if *n >= 0 => Some(*n as u64),
        _ => None,
    }
}

/// `0.0.num` as a proto `ScheduleId`.
pub fn schedule_id(num: u64) -> proto::ScheduleId {
    proto::ScheduleId {
        shard_num: 0,
        realm_num: 0,
        schedule_num: num as i64,
    }
}

pub fn schedule_num(id: &proto::ScheduleId) -> Option<u64> {
    (id.shard_num == 0 && id.realm_num == 0 && id.schedule_num >= 0)
        .then_some(id.schedule_num as u64)
}

/// `0.0.num` as a proto `TokenId`.
pub fn token_id(num: u64) -> proto::TokenId {
    proto::TokenId {
        shard_num: 0,
        realm_num: 0,
        token_num: num as i64,
    }
}

pub fn contract_id(num: u64) -> proto::ContractId {
    proto::ContractId {
        shard_num: 0,
        realm_num: 0,
        contract: Some(proto::contract_id::Contract::ContractNum(num as i64)),
    }
}

pub fn file_id(num: u64) -> proto::FileId {
    proto::FileId {
        shard_num: 0,
        realm_num: 0,
        file_num: num as i64,
    }
}

/// The number of a `0.0.num` file id.
pub fn file_num(id: &proto::FileId) -> Option<u64> {
    (id.shard_num == 0 && id.realm_num == 0 && id.file_num > 0).then_some(id.file_num as u64)
}

pub fn token_num(id: &proto::TokenId) -> Option<u64> {
    (id.shard_num == 0 && id.realm_num == 0 && id.token_num >= 0).then_some(id.token_num as u64)
}

pub fn topic_num(id: &proto::TopicId) -> Option<u64> {
    (id.shard_num == 0 && id.realm_num == 0 && id.topic_num >= 0).then_some(id.topic_num as u64)
}
