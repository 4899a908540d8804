//! What handling leaves behind: receipts (with the exchange rates in force), records with
//! their contract results and logs.

use super::entities::AssessedFee;
use super::entities::PendingAirdrop;
use super::ids::account_id;
use super::ids::contract_id;
use super::ids::file_id;
use super::ids::schedule_id;
use super::ids::token_id;
use super::ids::topic_id;
use super::rates::RateSet;
use super::values::hex_bytes;
use super::values::{Ts, TxId};
use hedera_proto::services as proto;
use serde::{Deserialize, Serialize};

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
    /// The consensus second of the transaction.
    #[serde(default)]
    pub consensus_seconds: i64,
    /// The exchange rates in force at consensus (a journal written without them: the genesis
    /// rates of `consensus_seconds`).
    #[serde(default)]
    pub exchange_rates: Option<RateSet>,
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
            exchange_rate: self
                .exchange_rates
                .or_else(|| {
                    (self.consensus_seconds > 0).then(|| RateSet::genesis(self.consensus_seconds))
                })
                .map(RateSet::to_proto),
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
