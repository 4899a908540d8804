//! The fee schedule: what each transaction kind costs, and the schedule file (0.0.111) that
//! says so in the network's own structure (`CurrentAndNextFeeSchedule`).
//!
//! Each kind has a base fee (`Kind::fee`, in tinybars) for a typical body; a transaction
//! pays more as its body grows, as a real network's fees grow with bytes, signatures and
//! work (`transaction_fee`): every signature after the first, every byte past 1 KiB, every
//! HBAR leg past two and every token transfer list of a CryptoTransfer, every message byte
//! past 1 KiB, every NFT minted after the first, every file byte past 1 KiB. A body that
//! asks for the high-volume throttles (HIP-1313) of a creation pays twice (the multiplier
//! the record states, ×1000). The schedule expresses the base fees as the network does:
//! fee components in thousandths of a tinycent, split as the fee is charged (a tenth to the
//! node, the rest to the network), at the genesis exchange rate; what a transaction is charged
//! in tinybars follows the rate in force (`ledger::Rate::charge`).

use crate::kind::Kind;
use crate::state::ledger::{CENT_EQUIVALENT, HBAR_EQUIVALENT};
use hedera_proto::services as proto;

/// Thousandths of a tinycent for `tinybars` at the genesis exchange rate.
fn schedule_units(tinybars: i64) -> i64 {
    tinybars * i64::from(CENT_EQUIVALENT) / i64::from(HBAR_EQUIVALENT) * 1000
}

fn component(tinybars: i64) -> proto::FeeComponents {
    proto::FeeComponents {
        min: 0,
        max: 1_000_000_000_000_000,
        constant: schedule_units(tinybars),
        ..Default::default()
    }
}

/// One kind's entry: the node's tenth, the network's rest, no service part.
fn entry(kind: Kind) -> proto::TransactionFeeSchedule {
    let fee = kind.fee();
    let node = fee / 10;
    proto::TransactionFeeSchedule {
        hedera_functionality: kind.functionality() as i32,
        fees: vec![proto::FeeData {
            nodedata: Some(component(node)),
            networkdata: Some(component(fee - node)),
            servicedata: Some(component(0)),
            sub_type: proto::SubType::Default as i32,
        }],
        ..Default::default()
    }
}

/// The contents of 0.0.111 at `now` (seconds): the current schedule expiring at the next
/// hour and the same one as the next.
pub fn schedule_file(now: i64) -> proto::CurrentAndNextFeeSchedule {
    let schedule = |expiry: i64| proto::FeeSchedule {
        // Not AtomicBatch: the Rust SDK 0.43 panics on a schedule naming it (its
        // `FeeSchedules` parser has `todo!()` for functionalities it predates).
        transaction_fee_schedule: Kind::ALL
            .iter()
            .filter(|k| **k != Kind::AtomicBatch)
            .map(|k| entry(*k))
            .collect(),
        expiry_time: Some(proto::TimestampSeconds { seconds: expiry }),
    };
    let next_hour = (now / 3600 + 1) * 3600;
    proto::CurrentAndNextFeeSchedule {
        current_fee_schedule: Some(schedule(next_hour)),
        next_fee_schedule: Some(schedule(next_hour + 3600)),
    }
}

/// Extra tinybars per signature after the first (about $0.000001), and per transaction
/// byte past `INCLUDED_BYTES` (about $0.00000001): a privileged payer's 130 KB transaction of
/// ~1,300 signatures stays under the SDKs' default max fee.
const PER_EXTRA_SIGNATURE: i64 = 10_000;
const PER_EXTRA_BYTE: i64 = 100;
const INCLUDED_BYTES: usize = 1024;
/// Extra tinybars per HBAR leg past two, and per token transfer list.
const PER_EXTRA_LEG: i64 = 50_000;
const PER_TOKEN_LIST: i64 = 900_000;
/// Extra tinybars per message or file byte past `INCLUDED_BYTES`.
const PER_CONTENT_BYTE: i64 = 1_000;
/// Extra tinybars per NFT minted after the first.
const PER_EXTRA_SERIAL: i64 = 5_000_000;
/// The high-volume price multiplier, scaled by 1000 as records state it.
pub const HIGH_VOLUME_MULTIPLIER: u64 = 2_000;

/// Kinds that may ask for the high-volume throttles (the entity creations).
fn high_volume_kind(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::CryptoCreate
            | Kind::TopicCreate
            | Kind::TokenCreate
            | Kind::ScheduleCreate
            | Kind::FileCreate
            | Kind::ContractCreate
    )
}

/// One priced part of a transaction beyond its kind's base fee: what is counted, how many,
/// how many come with the base fee, and the tinybars of each one past them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extra {
    pub name: &'static str,
    pub count: usize,
    pub included: usize,
    pub per_unit: i64,
}

impl Extra {
    /// How many are paid for.
    pub fn charged(&self) -> usize {
        self.count.saturating_sub(self.included)
    }

    /// Their tinybars.
    pub fn fee(&self) -> i64 {
        self.charged() as i64 * self.per_unit
    }
}

/// What the work of a body is priced by beyond its kind's base fee (legs, token transfer
/// lists, message and file bytes, serials).
pub fn body_extras(data: &proto::transaction_body::Data) -> Vec<Extra> {
    use proto::transaction_body::Data;
    let extra = |name, count, included, per_unit| Extra {
        name,
        count,
        included,
        per_unit,
    };
    let file_bytes = |count| extra("FILE_BYTES", count, INCLUDED_BYTES, PER_CONTENT_BYTE);
    match data {
        Data::CryptoTransfer(body) => vec![
            extra(
                "HBAR_TRANSFERS",
                body.transfers
                    .as_ref()
                    .map_or(0, |t| t.account_amounts.len()),
                2,
                PER_EXTRA_LEG,
            ),
            extra(
                "TOKEN_TRANSFER_LISTS",
                body.token_transfers.len(),
                0,
                PER_TOKEN_LIST,
            ),
        ],
        Data::ConsensusSubmitMessage(body) => vec![extra(
            "MESSAGE_BYTES",
            body.message.len(),
            INCLUDED_BYTES,
            PER_CONTENT_BYTE,
        )],
        Data::TokenMint(body) => vec![extra("SERIALS", body.metadata.len(), 1, PER_EXTRA_SERIAL)],
        Data::FileCreate(body) => vec![file_bytes(body.contents.len())],
        Data::FileAppend(body) => vec![file_bytes(body.contents.len())],
        Data::FileUpdate(body) => vec![file_bytes(body.contents.len())],
        _ => Vec::new(),
    }
}

/// What a submitted transaction's size and signatures add.
pub fn size_extras(bytes: usize, signatures: usize) -> [Extra; 2] {
    [
        Extra {
            name: "SIGNATURES",
            count: signatures,
            included: 1,
            per_unit: PER_EXTRA_SIGNATURE,
        },
        Extra {
            name: "BYTES",
            count: bytes,
            included: INCLUDED_BYTES,
            per_unit: PER_EXTRA_BYTE,
        },
    ]
}

/// What the work of a body adds to its kind's base fee (no bytes or signatures: a
/// scheduled transaction pays this when it executes).
pub fn body_fee(kind: Kind, data: &proto::transaction_body::Data) -> i64 {
    kind.fee() + body_extras(data).iter().map(Extra::fee).sum::<i64>()
}

/// The high-volume multiplier (scaled by 1000) a body pays, when it asks for those
/// throttles and its kind may use them.
pub fn high_volume_multiplier(kind: Kind, body: &proto::TransactionBody) -> Option<u64> {
    (body.high_volume && high_volume_kind(kind)).then_some(HIGH_VOLUME_MULTIPLIER)
}

/// The fee of a submitted transaction: its body's, plus its size and signatures, times the
/// high-volume multiplier when it asks for (and may use) those throttles. `Some(multiplier)`
/// when the multiplier applied.
pub fn transaction_fee(
    kind: Kind,
    body: &proto::TransactionBody,
    data: &proto::transaction_body::Data,
    bytes: usize,
    signatures: usize,
) -> (i64, Option<u64>) {
    let fee = body_fee(kind, data)
        + size_extras(bytes, signatures)
            .iter()
            .map(Extra::fee)
            .sum::<i64>();
    match high_volume_multiplier(kind, body) {
        Some(multiplier) => {
            let multiplied = i128::from(fee) * i128::from(multiplier) / 1000;
            (
                i64::try_from(multiplied).unwrap_or(i64::MAX),
                Some(multiplier),
            )
        }
        None => (fee, None),
    }
}

/// Tinybars for $0.0001 at the emulator's rate (12 cents an HBAR): an info query's price.
const TEN_THOUSANDTH_DOLLAR: u64 = 83_334;

/// What a query costs, in tinybars: a ten-thousandth of a dollar for info, contents and
/// record queries, ten times that for a local contract call (the network's prices, rounded);
/// nothing for the free ones (balance, receipt) and for those the emulator does not model
/// (they answer `NOT_SUPPORTED`).
pub fn query_cost(query: &proto::query::Query) -> u64 {
    use proto::query::Query as Q;
    match query {
        Q::CryptoGetInfo(_)
        | Q::ConsensusGetTopicInfo(_)
        | Q::TokenGetInfo(_)
        | Q::ScheduleGetInfo(_)
        | Q::TransactionGetRecord(_)
        | Q::TokenGetNftInfo(_)
        | Q::FileGetContents(_)
        | Q::FileGetInfo(_)
        | Q::CryptoGetAccountRecords(_)
        | Q::NetworkGetVersionInfo(_)
        | Q::ContractGetInfo(_)
        | Q::ContractGetBytecode(_) => TEN_THOUSANDTH_DOLLAR,
        Q::ContractCallLocal(_) => 10 * TEN_THOUSANDTH_DOLLAR,
        _ => 0,
    }
}
