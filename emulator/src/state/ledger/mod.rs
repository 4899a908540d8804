//! The state of the emulated network: accounts, topics, receipts by transaction id, and the
//! log of handled transactions the mirror API serves. Plain data; the rules live in
//! `ingest` and `handlers`.

mod entities;
mod ids;
mod nodes;
mod rates;
mod records;
mod values;

pub use entities::*;
pub use ids::*;
use nodes::first_registered_node;
pub use nodes::{genesis_nodes, NodeRecord, RegisteredNodeRecord};
pub use rates::{Rate, RateSet, CENT_EQUIVALENT, EXCHANGE_RATE_FILE, HBAR_EQUIVALENT};
pub use records::*;
pub use values::{KeyBytes, Ts, TxId};

use hedera_proto::services as proto;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

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
