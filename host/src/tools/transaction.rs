//! A built (not yet submitted) transaction and the shapes the kit reports about transactions:
//! the post-core JSON summary and `RawTransactionResponse`.

use hedera::{AnyTransaction, Hbar, Transaction, TransactionId, TransactionReceipt};
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// A fresh transaction id for `payer`, never one this process handed out before: the SDK's
/// (the clock minus a random 5–8 s, so a node accepts it whatever its clock skew), moved to
/// past the last id of the same payer (and the ids its chunks may use) when it would not be
/// later. Under any concurrency two calls never share an id (`DUPLICATE_TRANSACTION`).
pub fn unique_transaction_id(payer: hedera::AccountId) -> TransactionId {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    // foldhash, not SipHash: this runs on every call; it is seeded per process, so payers an
    // agent names (`hak serve`'s account header) cannot be chosen to collide.
    type Last = HashMap<hedera::AccountId, i128, foldhash::fast::RandomState>;
    static LAST: OnceLock<Mutex<Last>> = OnceLock::new();
    let mut id = TransactionId::generate(payer);
    let mut last = LAST
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let nanos = id.valid_start.unix_timestamp_nanos();
    if last.len() > 100_000 {
        // A fresh id is at most 8 s before now, so payers whose last id is older than 10 s
        // cannot collide with it: forget only those (clearing all could reissue a recent id).
        let horizon = time::OffsetDateTime::now_utc().unix_timestamp_nanos() - 10_000_000_000;
        last.retain(|_, previous| *previous > horizon);
    }
    let previous = last.entry(payer).or_insert(i128::MIN);
    if nanos <= *previous {
        id.valid_start = time::OffsetDateTime::from_unix_timestamp_nanos(*previous + 1)
            .unwrap_or(id.valid_start);
    }
    // A chunked message uses the ids of its next chunks too (+1 ns each, at most 21): keep
    // them free.
    *previous = id.valid_start.unix_timestamp_nanos() + ID_STRIDE_NANOS - 1;
    id
}

/// Nanoseconds between two ids of one payer: room for every chunk of a chunked message.
const ID_STRIDE_NANOS: i128 = 32;

/// A transaction id as the JS SDK prints it (`TransactionId.toString()`): the valid start's
/// nanoseconds padded to 9 digits (`0.0.1001@1796046811.000012345`), then `?scheduled` and
/// `/nonce` when set. The Rust SDK's `Display` does not pad, so every id hak reports goes
/// through here.
pub fn kit_transaction_id(id: &TransactionId) -> String {
    use super::normalise::{push_account, push_padded};
    // Written by hand: every return-bytes call reports one (`write!` cost ~5× more).
    let mut text = String::with_capacity(48);
    push_account(&mut text, &id.account_id);
    text.push('@');
    let seconds = id.valid_start.unix_timestamp();
    if seconds < 0 {
        text.push('-');
    }
    push_padded(&mut text, seconds.unsigned_abs(), 1);
    text.push('.');
    push_padded(&mut text, u64::from(id.valid_start.nanosecond()), 9);
    if id.scheduled {
        text.push_str("?scheduled");
    }
    if let Some(nonce) = id.nonce {
        let _ = write!(text, "/{nonce}");
    }
    text
}

/// What a transaction tool's core action returns: the SDK transaction, its kit type name
/// (`TransferTransaction`, …) and tool-specific summary fields.
pub struct BuiltTransaction {
    pub tx: Box<AnyTransaction>,
    pub type_name: &'static str,
    /// Tool-specific fields of the post-core summary (e.g. `hbarTransfers`).
    pub details: Map<String, Value>,
    /// Whether an executing strategy reads the transaction's record after its receipt, for
    /// the contract call's return value ([`RawTransactionResponse::contract_output`]).
    pub reads_call_result: bool,
    /// All the data of a `TransferTransaction` that moves only HBAR, in the order the SDK
    /// holds it (account, tinybars, approved), stated by the tool that built it: the
    /// return-bytes writer then writes its bytes without the SDK's encoding
    /// (`strategy::transfer_wire`). `None` for every other transaction (scheduling wraps a
    /// transfer in a new one).
    pub hbar_transfers: Option<Box<[crate::tools::transfer_order::HbarMove]>>,
}

impl BuiltTransaction {
    /// Wrap a tool's transaction. Without an explicit max fee it gets the JS SDK's default for
    /// its type, so hak's bytes carry the same `transactionFee` as the kit's.
    pub fn new<D>(tx: Transaction<D>, type_name: &'static str, details: Map<String, Value>) -> Self
    where
        AnyTransaction: From<Transaction<D>>,
    {
        // Boxed once: the SDK's transaction value is ~3 KB, and a built transaction is moved
        // from the tool through scheduling and the lifecycle to the mode's strategy. Written
        // into its box (`Box::new` of the value built it on the stack and copied it).
        let mut tx = Box::write(Box::new_uninit(), AnyTransaction::from(tx));
        if tx.get_max_transaction_fee().is_none() {
            tx.max_transaction_fee(js_default_max_fee(type_name));
        }
        BuiltTransaction {
            tx,
            type_name,
            details,
            reads_call_result: false,
            hbar_transfers: None,
        }
    }

    /// Ask an executing strategy for the contract call's return value (the kit's
    /// `TransactionRecordQuery` after `create_erc20_tool` and `create_erc721_tool`).
    pub fn reading_call_result(mut self) -> Self {
        self.reads_call_result = true;
        self
    }

    /// The JSON summary plugins see as `coreActionResult` at post-core-action:
    /// `{type, memo, maxTransactionFee (tinybars), nodeAccountIds, …details}`.
    pub fn summary_json(&self) -> String {
        let fee = self
            .tx
            .get_max_transaction_fee()
            .unwrap_or_else(|| self.tx.default_max_transaction_fee());
        let nodes: Vec<String> = self
            .tx
            .get_node_account_ids()
            .map(|ids| ids.iter().map(ToString::to_string).collect())
            .unwrap_or_default();
        let mut summary = Map::new();
        summary.insert("type".into(), self.type_name.into());
        summary.insert("memo".into(), self.tx.get_transaction_memo().into());
        summary.insert(
            "maxTransactionFee".into(),
            fee.to_tinybars().to_string().into(),
        );
        summary.insert("nodeAccountIds".into(), nodes.into());
        summary.extend(self.details.iter().map(|(k, v)| (k.clone(), v.clone())));
        Value::Object(summary).to_string()
    }
}

/// The kit's `if (params.transactionMemo) tx.setTransactionMemo(...)`: an empty memo is no memo.
pub fn set_memo<D>(tx: &mut hedera::Transaction<D>, memo: Option<&str>) {
    if let Some(memo) = memo.filter(|m| !m.is_empty()) {
        tx.transaction_memo(memo);
    }
}

/// The JS SDK's `_defaultMaxTransactionFee` per transaction class (2 ℏ unless the class
/// overrides it).
pub fn js_default_max_fee(type_name: &str) -> Hbar {
    match type_name {
        "TransferTransaction" => Hbar::new(1),
        "ScheduleCreateTransaction" | "ScheduleSignTransaction" | "ScheduleDeleteTransaction" => {
            Hbar::new(5)
        }
        "TokenAssociateTransaction" | "TokenDissociateTransaction" => Hbar::new(5),
        "TokenCreateTransaction" => Hbar::new(30),
        "TopicCreateTransaction" => Hbar::new(25),
        _ => Hbar::new(2),
    }
}

/// The kit's `RawTransactionResponse` after an executed transaction.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RawTransactionResponse {
    pub status: String,
    pub account_id: Option<String>,
    pub token_id: Option<String>,
    pub serials: Vec<String>,
    pub transaction_id: String,
    pub topic_id: Option<String>,
    pub schedule_id: Option<String>,
    /// What the executed contract call returned (its record's `contractCallResult`), when the
    /// tool asked for it ([`BuiltTransaction::reading_call_result`]) and the record had one.
    /// Not part of the kit's `raw`.
    #[serde(skip)]
    pub contract_output: Option<Vec<u8>>,
}

impl RawTransactionResponse {
    pub fn from_receipt(receipt: &TransactionReceipt, transaction_id: String) -> Self {
        RawTransactionResponse {
            status: receipt.status.as_str_name().to_owned(),
            account_id: receipt.account_id.map(|v| v.to_string()),
            token_id: receipt.token_id.map(|v| v.to_string()),
            serials: receipt.serials.iter().map(ToString::to_string).collect(),
            transaction_id,
            topic_id: receipt.topic_id.map(|v| v.to_string()),
            schedule_id: receipt.schedule_id.map(|v| v.to_string()),
            contract_output: None,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ten_thousand_concurrent_ids_of_one_payer_are_distinct() {
        let payer = hedera::AccountId::new(0, 0, 1001);
        let ids: Vec<i128> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(move || {
                        (0..1250)
                            .map(|_| {
                                super::unique_transaction_id(payer)
                                    .valid_start
                                    .unix_timestamp_nanos()
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), 10_000);
    }
}
