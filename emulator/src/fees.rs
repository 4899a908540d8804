//! The fee schedule: what each transaction kind costs, and the schedule file (0.0.111) that
//! says so in the network's own structure (`CurrentAndNextFeeSchedule`).
//!
//! Fees are flat per kind (`Kind::fee`, in tinybars). The schedule expresses each as the
//! network does: fee components in thousandths of a tinycent, split as the fee is charged (a
//! tenth to the node, the rest to the network), at the exchange rate of `ledger::exchange_rates`.

use crate::handlers::Kind;
use crate::ledger::{CENT_EQUIVALENT, HBAR_EQUIVALENT};
use hedera_proto::services as proto;

/// Thousandths of a tinycent for `tinybars` at the emulator's exchange rate.
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
        transaction_fee_schedule: Kind::ALL.iter().map(|k| entry(*k)).collect(),
        expiry_time: Some(proto::TimestampSeconds { seconds: expiry }),
    };
    let next_hour = (now / 3600 + 1) * 3600;
    proto::CurrentAndNextFeeSchedule {
        current_fee_schedule: Some(schedule(next_hour)),
        next_fee_schedule: Some(schedule(next_hour + 3600)),
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
